"""Gated ingest (memlab.store.ingest): candidates re-scored only as far as a decision needs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("faiss")

from memlab.datasets import load_dataset  # noqa: E402
from memlab.store import MemoryStore, ingest  # noqa: E402
from memlab.store.ivf import IvfIndex  # noqa: E402
from memlab.store.records import IngestResult  # noqa: E402


def _sentences() -> tuple[list[str], list[str]]:
    """The STS-B sample's pairs (shipped): each second sentence a paraphrase, a near copy or a
    revision of the first, the first ones ingested before."""
    pairs = load_dataset("stsb_train_sample").to_dict("records")
    pairs += load_dataset("stsb_dev_sample").to_dict("records")
    return [p["sentence1"] for p in pairs], [p["sentence2"] for p in pairs]


def _items(first: list[str], second: list[str]) -> list[dict]:
    """Every text, a tenth of them in another project; the seconds after the firsts."""
    texts = first + second + [t + " again" for t in first[:150]]
    return [
        {"content": t, "project": "other" if i % 10 == 3 else None} for i, t in enumerate(texts)
    ]


def _summary(results: list[IngestResult]) -> list[tuple]:
    return [(r.decision.value, r.memory_id, r.nearest_id, r.rule) for r in results]


def _ingest(path: Path, items: list[dict], *, bounded: bool, mp: pytest.MonkeyPatch) -> tuple:
    calls = {"bounded": 0}
    real = ingest.bounded_scope

    def counted(*args: object, **kwargs: object) -> list[tuple[int, float]]:
        calls["bounded"] += 1
        return real(*args, **kwargs)  # type: ignore[arg-type]

    with mp.context() as m:
        m.setattr(ingest, "bounded_scope", counted)
        if not bounded:  # the structure gives no bounds: every candidate re-scored
            m.setattr(IvfIndex, "score_bounds", lambda self, keys: None)
        with MemoryStore(path, index="ivf") as store:
            results = store.ingest_many(items, batch_size=100)
            explicit = store.ingest_many(
                ["a revised caption"], supersedes=results[5].memory_id, batch_size=100
            )
            cells = store.core.index.info()["cells"]
    return results + explicit, calls["bounded"], cells


def test_bounded_re_scoring_decides_exactly_as_re_scoring_every_candidate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same decisions, memories, nearest, rules and similarities on real paraphrases whether
    the 8-bit cells' candidates are all re-scored or only those whose bound can matter."""
    monkeypatch.setattr(IvfIndex, "TRAIN_MIN", 300)
    items = _items(*_sentences())
    full, full_calls, _ = _ingest(tmp_path / "full.db", items, bounded=False, mp=monkeypatch)
    part, part_calls, cells = _ingest(tmp_path / "part.db", items, bounded=True, mp=monkeypatch)
    assert cells > 0 and full_calls == 0 and part_calls > len(items) // 2
    assert _summary(part) == _summary(full)
    sims = [(a.similarity, b.similarity) for a, b in zip(part, full, strict=True)]
    assert all((a is None) == (b is None) for a, b in sims)
    assert np.allclose([a for a, _ in sims if a is not None], [b for _, b in sims if b is not None],
                       atol=1e-6, rtol=0)  # fmt: skip
    decisions = {r.decision.value for r in full}
    assert decisions >= {"create", "reinforce", "related", "supersede"}


def test_a_second_namespace_in_the_file_falls_back_to_re_scoring_every_candidate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Candidates of another namespace share the cells: those texts' candidates are fetched
    again and re-scored as before, with the same decisions as a store that bounds nothing."""
    monkeypatch.setattr(IvfIndex, "TRAIN_MIN", 300)
    first, second = _sentences()
    items = _items(first, second)
    out = {}
    for bounded in (True, False):
        path = tmp_path / f"{bounded}.db"
        with monkeypatch.context() as m:
            if not bounded:
                m.setattr(IvfIndex, "score_bounds", lambda self, keys: None)
            with MemoryStore(path, index="ivf", namespace="theirs") as theirs:
                theirs.ingest_many(first[:400] + second[:200], batch_size=100)
            with MemoryStore(path, index="ivf", namespace="mine") as mine:
                out[bounded] = mine.ingest_many(items, batch_size=100)
    assert _summary(out[True]) == _summary(out[False])
