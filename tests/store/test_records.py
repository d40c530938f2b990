"""Records: plain dictionaries out."""

from __future__ import annotations

from memlab.gate import Decision
from memlab.store import IngestResult


def test_records_to_dict(store) -> None:
    r = store.ingest("a note about herons", topics=["birds"])
    assert r.to_dict()["decision"] == "create"
    d = store.get(r.memory_id).to_dict()
    assert d["topics"] == ["birds"] and d["created_at"].endswith("+00:00")
    hit = store.search("herons", mark_accessed=False)[0].to_dict()
    assert hit["memory_id"] == r.memory_id and hit["content"] == "a note about herons"
    assert IngestResult(Decision.UPDATE, 0.8, 3, 3, 0, (1,)).to_dict()["tagged"] == [1]
