"""The keyword index held in memory (memlab.store.keyword_index): FTS5's ranking, in step."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memlab.gate import Gate
from memlab.store import MemoryStore, keyword_index
from memlab.store.keyword_index import (
    KeywordIndex,
    ascii_tokens,
    best_first,
    fts_totals,
    plain_unicode61,
)
from memlab.store.schema import rebuild_keyword_index

WORDS = [
    "alpha", "beta", "gamma", "delta", "port", "staging", "database", "café", "Müller",
    "Ørsted", "5432", "v2", "max_connections", "naïve", "the", "on", "x",
]  # fmt: skip

OPEN = Gate(1.0, 1.0, lexical=False)  # every text its own memory (the gate off)


def _text(rng: np.random.Generator) -> str:
    n = int(rng.integers(1, 12))
    return " ".join(rng.choice(WORDS, size=n)) + rng.choice([".", "!", "", ", ok"])


def _both(store: MemoryStore, query: str, **limits: object) -> tuple[list, list]:
    """The keyword side ranked by the index held in memory and by FTS5, in one read."""
    core = store.core
    held = core.keywords
    with core.read():
        got = core.keyword_search(query, 20, **limits)  # type: ignore[arg-type]
        core.keywords = None
        try:
            ref = core.keyword_search(query, 20, **limits)  # type: ignore[arg-type]
        finally:
            core.keywords = held
    return got, ref


def _fts_scores(store: MemoryStore, tokens: list[str]) -> dict[int, float]:
    query = " OR ".join(f'"{t}"' for t in tokens)
    rows = store.core.execute(
        "SELECT rowid, bm25(memories_fts) FROM memories_fts WHERE memories_fts MATCH ?", (query,)
    ).fetchall()
    return {int(r[0]): float(r[1]) for r in rows}


def _in_step(store: MemoryStore) -> None:
    """The index's counts are FTS5's, and its scores FTS5's to the last bit."""
    core = store.core
    assert core.keywords is not None
    with core.read():
        assert core.keywords.refresh(core)
        rows, avg_rows, avg_tokens = fts_totals(core)
        assert (core.keywords.n_rows, core.keywords.n_tokens) == (rows, avg_tokens)
        assert avg_rows == rows
        tokens = ["alpha", "cafe", "5432", "muller", "the"]
        docs, scores = core.keywords.scored(tokens)
        assert dict(zip(docs.tolist(), scores.tolist(), strict=True)) == _fts_scores(store, tokens)


@given(
    seed=st.integers(0, 2**31 - 1),
    n=st.integers(1, 60),
    query=st.lists(st.sampled_from(WORDS + ["absent", "o'brien", "MAX"]), min_size=1, max_size=5),
    budget=st.sampled_from([None, 3, 10, 5000]),
    max_df=st.sampled_from([None, 0.1, 0.5]),
)
def test_the_ranking_and_scores_are_fts5s(
    seed: int, n: int, query: list[str], budget: int | None, max_df: float | None
) -> None:
    """Any corpus, any query, any limits: the same hits with the same scores, in the same
    order (ties by id), as FTS5 ranks them; the window of a term over the budget included."""
    rng = np.random.default_rng(seed)
    with MemoryStore(gate=OPEN) as store:
        store.ingest_many([_text(rng) for _ in range(n)])
        got, ref = _both(store, " ".join(query), max_postings=budget, max_df=max_df)
        assert got == ref
        _in_step(store)


def test_scores_equal_fts5_bm25_to_the_last_bit_on_real_text() -> None:
    """A few thousand varied texts: every score of several queries is FTS5's own double."""
    from memlab.datasets import dataset_path
    from memlab.eval.locomo import load_locomo

    conv = load_locomo(dataset_path("locomo_conv30"))
    texts = [t.text for c in conv for t in c.turns]
    with MemoryStore(gate=OPEN) as store:
        store.ingest_many(texts)
        for query in ["what did Jon say about dancing", "Gina store opening", "the studio"]:
            got, ref = _both(store, query, max_postings=None, max_df=None)
            assert got == ref and got
            tokens = ascii_tokens(query) or []
            docs, scores = store.core.keywords.scored(tokens)  # type: ignore[union-attr]
            ours = dict(zip(docs.tolist(), scores.tolist(), strict=True))
            assert ours == _fts_scores(store, tokens)


def test_every_change_of_the_keyword_table_is_followed(tmp_path: Path) -> None:
    """Supersede (out of FTS5), restore (back), archive, purge, consolidation, import: after
    each the index equals FTS5."""
    rng = np.random.default_rng(3)
    path = tmp_path / "s.db"
    t0 = datetime(2026, 1, 5, tzinfo=timezone.utc)
    with MemoryStore(path) as store:
        texts = [_text(rng) for _ in range(40)]
        ids = [r.memory_id for r in store.ingest_many(texts, now=t0)]
        _in_step(store)
        first = store.ingest("The staging database runs on port 5432.", now=t0)
        second = store.ingest("The staging database now runs on port 5433.", now=t0)
        assert second.decision.value == "supersede"
        _in_step(store)
        store.restore(first.memory_id)
        _in_step(store)
        store.purge(ids[0])
        _in_step(store)
        store.archive(ids[1])
        _in_step(store)
        store.ingest_many(
            [
                "Alice leads the data team. She likes short meetings.",
                "Alice prefers written updates. She works from Lisbon.",
                "Alice reviews the data pipeline. She approves schema changes.",
            ],
            entity="alice",
            now=t0,
        )
        assert store.consolidate(now=t0 + timedelta(days=90))  # a summary, members archived
        _in_step(store)
        export = tmp_path / "e.jsonl"
        store.export_jsonl(export)
    with MemoryStore(tmp_path / "t.db") as other:
        other.ingest("gamma delta café")
        other.search("gamma", mark_accessed=False)  # builds the index
        other.import_jsonl(export)
        _in_step(other)


def test_another_connections_writes_are_seen(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    rng = np.random.default_rng(5)
    with MemoryStore(path, gate=OPEN) as a, MemoryStore(path, gate=OPEN) as b:
        a.ingest_many([_text(rng) for _ in range(30)])
        a.search("alpha", mark_accessed=False)
        builds = a.core.keywords.builds  # type: ignore[union-attr]
        new = b.ingest_many(
            ["alpha alpha zeta", "the Müller zeta", *[_text(rng) for _ in range(20)]]
        )
        b.purge(1)
        got, ref = _both(a, "zeta alpha muller")
        assert got == ref and {m for m, _ in got} >= {new[0].memory_id, new[1].memory_id}
        assert a.core.keywords.builds == builds  # type: ignore[union-attr]  # read the journal
        _in_step(a)


def test_a_rolled_back_write_leaves_the_index_as_the_database(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with MemoryStore(path, gate=OPEN) as store:
        store.ingest_many(["alpha beta", "beta gamma", "gamma delta"])
        store.search("beta", mark_accessed=False)
        core = store.core
        with pytest.raises(RuntimeError), core.write():
            store.ingest("beta beta beta epsilon")
            store.purge(1)
            assert core.keywords is not None and core.keywords.refresh(core)  # sees its own
            assert core.keywords.document_frequencies(["epsilon"]) == {"epsilon": 1}
            raise RuntimeError("roll back")
        _in_step(store)
        assert core.keywords.document_frequencies(["epsilon", "alpha"]) == {
            "epsilon": 0,
            "alpha": 1,
        }
        store.ingest("epsilon zeta")  # the journal's rolled-back numbers are taken again
        got, ref = _both(store, "epsilon alpha")
        assert got == ref and [m for m, _ in got][0] != 1
        _in_step(store)


def test_an_index_built_inside_a_rolled_back_write_is_built_again(tmp_path: Path) -> None:
    """Built from rows a write then rolled back, the index is dropped: the journal numbers of
    the rolled-back rows are taken again by the next writer, so it could not tell."""
    path = tmp_path / "s.db"
    rng = np.random.default_rng(13)
    with MemoryStore(path, gate=OPEN, keyword_index=False) as other:
        other.ingest_many([_text(rng) for _ in range(12)])
    with MemoryStore(path, gate=OPEN) as store, MemoryStore(path, gate=OPEN) as writer:
        core = store.core
        with pytest.raises(RuntimeError), core.write():
            store.ingest("gamma omega")  # too small a batch to build the index
            assert core.keywords is not None and not core.keywords.built
            assert store.search("omega", mark_accessed=False)  # built here, with the new row
            raise RuntimeError("roll back")
        writer.ingest("epsilon zeta")  # takes the rolled-back journal number
        got, ref = _both(store, "omega zeta")
        assert got == ref and len(got) == 1
        _in_step(store)


def test_an_index_behind_the_kept_journal_or_a_refilled_table_builds_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(keyword_index, "JOURNAL_KEEP", 8)
    monkeypatch.setattr(keyword_index, "JOURNAL_PRUNE_EVERY", 4)
    path = tmp_path / "s.db"
    rng = np.random.default_rng(9)
    with MemoryStore(path, gate=OPEN) as a, MemoryStore(path, gate=OPEN) as b:
        a.ingest_many([_text(rng) for _ in range(10)])
        a.search("alpha", mark_accessed=False)
        assert a.core.keywords.builds == 1  # type: ignore[union-attr]
        b.ingest_many([_text(rng) for _ in range(30)])  # the journal keeps only the last 8
        kept = b.core.execute("SELECT COUNT(*) FROM keyword_changes").fetchone()[0]
        assert kept < 30
        got, ref = _both(a, "alpha café delta")
        assert got == ref
        assert a.core.keywords.builds == 2  # type: ignore[union-attr]
        _in_step(a)
        conn = sqlite3.connect(path)
        rebuild_keyword_index(conn)  # the repair fills FTS5 again: a reset for every reader
        conn.close()
        got, ref = _both(a, "alpha café delta")
        assert got == ref and a.core.keywords.builds == 3  # type: ignore[union-attr]


def test_the_tail_is_merged_into_the_postings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keyword_index, "TAIL_MIN", 16)
    rng = np.random.default_rng(11)
    with MemoryStore(gate=OPEN) as store:
        store.ingest_many([_text(rng) for _ in range(20)])
        for _ in range(6):  # searches between batches: tails merged, queried before merging
            store.ingest_many([_text(rng) for _ in range(15)])
            store.archive(int(rng.integers(1, 20)))  # archived: still in FTS5
            for q in ["alpha beta", "café 5432", "Ørsted the"]:
                got, ref = _both(store, q)
                assert got == ref
        assert store.core.keywords.info()["tail"] < 200  # type: ignore[union-attr]
        _in_step(store)


def test_a_phrase_term_or_another_tokenizer_is_ranked_by_fts5() -> None:
    with MemoryStore(gate=OPEN) as store:
        store.ingest_many(["max connections is 100", "the max_connections setting", "max"])
        got, ref = _both(store, "max_connections")  # FTS5: the phrase "max connections"
        assert got == ref and len(got) == 2
    assert plain_unicode61("unicode61 remove_diacritics 2") and plain_unicode61("unicode61")
    assert not plain_unicode61("porter unicode61")
    assert not plain_unicode61("unicode61 tokenchars '_'")
    assert not plain_unicode61("trigram")
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE memories_fts USING fts5(content, tokenize = 'porter')")
    conn.execute("CREATE TABLE keyword_changes (seq INTEGER PRIMARY KEY, memory_id INTEGER)")
    index = KeywordIndex()
    assert not index.refresh(conn) and "porter" in str(index.unusable)


def test_an_index_whose_counts_differ_from_fts5s_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A tokenization that FTS5 does not share (simulated) is caught by the token count, in a
    build and in a change read from the journal; the store then ranks with FTS5."""
    path = tmp_path / "s.db"
    with MemoryStore(path, gate=OPEN) as store:
        store.ingest_many(["alpha beta gamma", "beta delta"])
    with monkeypatch.context() as patch:
        patch.setattr(keyword_index, "ascii_tokens", lambda text: text.lower().split()[:1])
        with MemoryStore(path, gate=OPEN) as store:
            got, ref = _both(store, "beta")
            assert got == ref and len(got) == 2
            assert "tokens indexed" in str(store.core.keywords.unusable)  # type: ignore[union-attr]
    with MemoryStore(gate=OPEN) as store:
        store.ingest("alpha beta gamma")  # built while the store was empty: 0 = 0
        assert store.core.keywords.built  # type: ignore[union-attr]
        with monkeypatch.context() as patch:
            patch.setattr(keyword_index, "ascii_tokens", lambda text: text.lower().split()[:1])
            store.ingest("beta delta")
            got, ref = _both(store, "beta")
        assert got == ref and len(got) == 2
        assert "tokens indexed" in str(store.core.keywords.unusable)  # type: ignore[union-attr]


def test_ascii_tokens_are_unicode61s() -> None:
    conn = sqlite3.connect(":memory:")
    from memlab.store.tokens import tokenize

    conn.execute(
        "CREATE VIRTUAL TABLE memories_fts USING fts5(content,"
        " tokenize = 'unicode61 remove_diacritics 2')"
    )
    texts = ["It's port 5432, v2.1 (x_y) -- A/B; e-mail: a@b.org", "MiXeD CaSe99 __ 'q'"]
    assert [ascii_tokens(t) for t in texts] == tokenize(conn, texts)
    assert ascii_tokens("café") is None


def test_best_first_is_order_by_score_then_id() -> None:
    docs = np.array([5, 3, 9, 1, 7], dtype=np.int64)
    scores = np.array([-1.0, -2.0, -1.0, -1.0, -3.0])
    assert best_first(docs, scores, 3) == [(7, -3.0), (3, -2.0), (1, -1.0)]
    assert best_first(docs, scores, 10) == [(7, -3.0), (3, -2.0), (1, -1.0), (5, -1.0), (9, -1.0)]
    assert best_first(docs, scores, 0) == []


def test_a_store_without_it_ranks_with_fts5() -> None:
    with MemoryStore(keyword_index=False) as store:
        assert store.core.keywords is None
        store.ingest("alpha beta")
        assert store.search("alpha", mark_accessed=False)[0].memory.content == "alpha beta"
    with pytest.raises(TypeError, match="keyword_index"):
        MemoryStore(keyword_index="yes")  # type: ignore[arg-type]
