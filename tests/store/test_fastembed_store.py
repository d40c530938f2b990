"""The store on the shared MiniLM model (skipped cleanly when ../shared is absent)."""

from __future__ import annotations

import os

from store_helpers import Clock

from memlab.embed import FastEmbedEmbedder
from memlab.gate import Decision
from memlab.store import MemoryStore


def test_minilm_store(minilm_dir, tmp_path, clock: Clock) -> None:
    os.environ["HF_HUB_OFFLINE"] = "1"
    path = tmp_path / "mini.db"
    s = MemoryStore(path, embedder=FastEmbedEmbedder(model_path=minilm_dir), clock=clock)
    a = s.ingest("The quarterly report is due on Friday.")
    assert s.ingest("The quarterly report is due on Friday!").decision is Decision.REINFORCE
    s.ingest("My sister adopted a grey kitten.")
    hits = s.search("when must the financial summary be submitted", k=1, mark_accessed=False)
    assert hits[0].memory.id == a.memory_id and hits[0].vector_rank == 1
    s.close()
    reopened = MemoryStore(path, embedder=FastEmbedEmbedder(model_path=minilm_dir), clock=clock)
    assert len(reopened) == 2
    reopened.close()
