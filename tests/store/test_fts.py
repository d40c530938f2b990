"""FTS5 query building: any user text is a safe query; stop words dropped."""

from __future__ import annotations

import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from memlab.informativeness import STOP_WORDS
from memlab.store.fts import (
    MAX_DF,
    MAX_POSTINGS,
    fts_insert,
    keyword_search,
    match_query,
    query_terms,
)
from memlab.store.schema import KEYWORD_TABLES
from memlab.store.tokens import tokenize


def _conn() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE memories (id INTEGER PRIMARY KEY, status TEXT)")
    conn.execute("CREATE VIRTUAL TABLE memories_fts USING fts5(content)")
    docs = [
        "the cat sat",
        "NEAR the door",
        "AND then OR not",
        'quoted "words" here',
        "café au lait",
    ]
    for i, d in enumerate(docs, start=1):
        conn.execute("INSERT INTO memories VALUES (?, 'active')", (i,))
        fts_insert(conn, i, d)
    return conn


CONN = _conn()


def test_terms_drop_stop_words_and_operators_become_words() -> None:
    assert query_terms("What is THE cat eating?") == ["cat", "eating"]
    assert query_terms("the of and") == ["the", "of", "and"]  # only stop words: keep them
    assert match_query('"AND OR NOT (* ^ NEAR(') == '"near"'
    assert match_query("!!! ???") is None
    assert "the" in STOP_WORDS


def test_search_results() -> None:
    assert [i for i, _ in keyword_search(CONN, "cat?", 5)] == [1]
    assert [i for i, _ in keyword_search(CONN, "NEAR(door", 5)] == [2]
    assert [i for i, _ in keyword_search(CONN, "cafe", 5)] == [5]  # unicode61 folds diacritics
    assert keyword_search(CONN, "((((", 5) == []


@settings(max_examples=300)
@given(st.text())
def test_any_text_is_a_valid_query(text: str) -> None:
    keyword_search(CONN, text, 5)  # never raises sqlite3.OperationalError


def test_terms_the_index_keeps_apart_both_stay_in_the_query() -> None:
    """Python's case folding joins terms the index keeps apart (``ß``/``ss``, ligatures):
    each stays; case variants the index folds together are one term."""
    assert query_terms("strasse Straße") == ["strasse", "straße"]
    assert query_terms("file ﬁle") == ["file", "ﬁle"]
    assert query_terms("Café CAFÉ café") == ["café"]
    conn = _conn()
    fts_insert(conn, 6, "Straße im Zentrum")
    conn.execute("INSERT INTO memories VALUES (6, 'active')")
    assert [i for i, _ in keyword_search(conn, "strasse Straße", 5)] == [6]


def test_frequent_terms_dropped(clock) -> None:
    from store_helpers import VecEmbedder

    from memlab.gate import Gate
    from memlab.store import MemoryStore
    from memlab.store.fts import frequent_terms_dropped

    s = MemoryStore(clock=clock, embedder=VecEmbedder(), gate=Gate.off())  # 30 memories
    s.ingest_many([f"common word and rare{i} token{i % 3}" for i in range(30)])
    conn = s.core
    assert frequent_terms_dropped(conn, ["common", "rare7", "token1"], 0.1)[0] == ["rare7"]
    assert frequent_terms_dropped(conn, ["common", "token1"], 0.1)[0] == ["token1"]  # rarest kept
    assert frequent_terms_dropped(conn, ["common", "absent"], 0.5)[0] == ["common"]
    assert frequent_terms_dropped(conn, ["absent"], 0.1)[0] == []
    assert frequent_terms_dropped(conn, ["common", "absent"], None)[0] == ["common", "absent"]
    assert [i for i, _ in keyword_search(conn, "common rare7", 5, max_df=0.1)] == [8]
    assert len(keyword_search(conn, "common rare7", 50, max_df=None)) == len(s)
    assert s.rankings("common rare7", 5)[0][0][0] == 8


def test_a_small_store_searches_every_word_of_a_query(clock) -> None:
    """Under ``1 / max_df`` memories any present word is in more than ``max_df`` of them:
    a word of one memory only still stays in the query."""
    from store_helpers import VecEmbedder

    from memlab.gate import Gate
    from memlab.store import MemoryStore

    with MemoryStore(clock=clock, embedder=VecEmbedder(), gate=Gate.off()) as s:
        ids = [r.memory_id for r in s.ingest_many(["Alice drinks green tea", "Bob moved to Porto"])]
        s.ingest_many([f"plain note {i}" for i in range(4)])
        assert sorted(i for i, _ in s.rankings("tea Porto", 5)[0]) == ids


def _tied_corpus(seed: int = 3) -> sqlite3.Connection:
    """2,000 short texts over 40 words (many equal BM25 scores), a fifth of them archived."""
    import random

    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(40)]
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE memories (id INTEGER PRIMARY KEY, status TEXT)")
    conn.execute("CREATE VIRTUAL TABLE memories_fts USING fts5(content)")
    for i in range(1, 2001):
        status = "archived" if rng.random() < 0.2 else "active"
        text = " ".join(rng.choice(vocab) for _ in range(rng.randint(2, 6)))
        conn.execute("INSERT INTO memories VALUES (?, ?)", (i, status))
        conn.execute("INSERT INTO memories_fts(rowid, content) VALUES (?, ?)", (i, text))
    return conn


TIED = _tied_corpus()


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(0, 39), min_size=1, max_size=4),
    st.integers(1, 120),
    st.sampled_from([("active",), ("active", "archived")]),
)
def test_keyword_ranking_is_fts5s_rank_order_ties_by_id(
    words: list[int], limit: int, statuses: tuple[str, ...]
) -> None:
    """The ranking equals FTS5's own ``ORDER BY rank`` (BM25), ties broken by ascending id."""
    text = " ".join(f"w{i}" for i in words)
    got = keyword_search(TIED, text, limit, statuses=statuses)
    reference = [
        (rowid, score)
        for rowid, score, status in TIED.execute(
            "SELECT f.rowid, f.rank, m.status FROM memories_fts f JOIN memories m"
            " ON m.id = f.rowid WHERE memories_fts MATCH ? ORDER BY f.rank",
            (match_query(text),),
        )
        if status in statuses
    ][:limit]
    assert got == reference
    pairs = zip(got, got[1:], strict=False)
    assert all(a < b or (a == b and i < j) for (i, a), (j, b) in pairs)


def _symbol_conn(docs: list[str]) -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute("CREATE TABLE memories (id INTEGER PRIMARY KEY, status TEXT)")
    for sql in KEYWORD_TABLES.values():
        conn.execute(sql)
    for i, d in enumerate(docs, start=1):
        conn.execute("INSERT INTO memories VALUES (?, 'active')", (i,))
        fts_insert(conn, i, d)
    return conn


SYMBOLS = {
    "🚀": "Shipped the release 🚀 on Friday",
    "🐛": "Found a 🐛 in the parser",
    "™": "Memlab ™ is a trade mark",
    "€": "The licence costs 40 € a year",
    "✓": "Backups ✓ and restores ✓ tested",
    "東京": "Meeting in 東京 next week",
    "→": "Flow: ingest → gate → store",
}


def test_symbols_are_found_by_keyword_search(clock) -> None:
    from store_helpers import VecEmbedder

    from memlab.gate import Gate
    from memlab.store import MemoryStore

    with MemoryStore(clock=clock, embedder=VecEmbedder(), gate=Gate.off()) as s:
        s.ingest_many(FILLER := [f"plain note {i} about the weekly report" for i in range(20)])
        ids = {sym: s.ingest(text).memory_id for sym, text in SYMBOLS.items()}
        for sym, memory_id in ids.items():
            keyword, _ = s.rankings(sym, 5)
            assert [i for i, _ in keyword] == [memory_id], sym
        assert len(s.rankings("weekly", 50)[0]) == len(FILLER)
        # ASCII symbols stay separators: words beside them are found as before
        found = s.ingest("Set $HOME and x=1 in <div> with `ruff`").memory_id
        for word in ("home", "div", "ruff"):
            assert s.rankings(word, 5)[0][0][0] == found, word
        # a symbol stuck to a word is a token of its own: the word and the symbol both find it
        stuck = s.ingest("Paid €250 for Zyxware™ licences, done✅").memory_id
        for term in ("250", "€", "zyxware", "™", "done", "✅"):
            assert stuck in [i for i, _ in s.rankings(term, 5)[0]], term


#: Arbitrary text: every code point a string can hold (no lone surrogates).
ANY_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40)


@settings(max_examples=300, deadline=None)
@given(ANY_TEXT)
def test_every_stored_token_is_found_by_searching_it(text: str) -> None:
    """Each token the index makes of a text, typed as a query, finds that text (the store's
    default term limits; fillers make the other rows)."""
    conn = _symbol_conn([text] + ["filler words here"] * 20)
    for token in tokenize(conn, [text])[0]:
        hits = keyword_search(conn, token, 25, max_df=MAX_DF, max_postings=MAX_POSTINGS)
        assert 1 in [i for i, _ in hits], (text, token)
