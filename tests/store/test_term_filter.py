"""The frequent-term filter sees query words as the keyword index's tokenizer does.

Stored text is indexed by FTS5's ``unicode61 remove_diacritics 2``: ``café`` becomes ``cafe``,
``Müller`` becomes ``muller``, ``max_connections`` the two tokens ``max`` and ``connections``.
A filter that looked raw query words up in the vocabulary silently dropped all three.
"""

from __future__ import annotations

import sqlite3
import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from store_helpers import Clock

from memlab.store import MemoryStore
from memlab.store.fts import (
    frequent_terms_dropped,
    keyword_search,
    query_terms,
    token_frequencies,
)
from memlab.store.tokens import index_tokens, tokenize

FILLER = [f"routine note {i} about the weekly report and the budget" for i in range(30)]
SPECIAL = {
    "café": "Lunch at the café near the station on Friday",
    "Müller": "Call Frau Müller about the contract renewal",
    "max_connections": "Raise max_connections to 400 in postgresql.conf",
    "naïve": "The naïve baseline beat the tuned model on held-out weeks",
    "ÉCOLE": "Pick up the forms at the ÉCOLE office",
}


@pytest.fixture
def store_with_words() -> tuple[MemoryStore, dict[str, int]]:
    store = MemoryStore(":memory:", clock=Clock())
    store.ingest_many(FILLER)
    ids = {word: store.ingest(text).memory_id for word, text in SPECIAL.items()}
    yield store, ids
    store.close()


@pytest.mark.parametrize("word", list(SPECIAL))
def test_keyword_search_finds_word(store_with_words, word: str) -> None:
    store, ids = store_with_words
    keyword, _ = store.rankings(word)
    assert keyword and keyword[0][0] == ids[word]
    assert ids[word] in [h.memory.id for h in store.search(word, mark_accessed=False)][:3]


@pytest.mark.parametrize("query", ["cafe", "CAFÉ", "muller", "MAX_CONNECTIONS", "naive"])
def test_folded_spellings_also_found(store_with_words, query: str) -> None:
    store, ids = store_with_words
    keyword, _ = store.rankings(query)
    assert keyword, query


def _conn(docs: list[str], tokenizer: str = "unicode61 remove_diacritics 2") -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute("CREATE TABLE memories (id INTEGER PRIMARY KEY, status TEXT)")
    conn.execute(f"CREATE VIRTUAL TABLE memories_fts USING fts5(content, tokenize = '{tokenizer}')")
    conn.execute("CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab(memories_fts, 'row')")
    for i, d in enumerate(docs, 1):
        conn.execute("INSERT INTO memories (id, status) VALUES (?, 'active')", (i,))
        conn.execute("INSERT INTO memories_fts (rowid, content) VALUES (?, ?)", (i, d))
    return conn


def test_filter_keeps_tokenized_terms_and_drops_frequent_ones() -> None:
    conn = _conn([*FILLER, *SPECIAL.values()])
    terms = query_terms("café Müller max_connections weekly zebra")
    kept = frequent_terms_dropped(conn, terms, max_df=0.1)[0]
    # weekly is in 30 of 35 memories (too frequent), zebra in none
    assert kept == ["café", "müller", "max_connections"]
    hits = keyword_search(conn, "max_connections", 5, max_df=0.1)
    assert [h for h, _ in hits] == [len(FILLER) + 3]


def test_phrase_term_frequency_is_its_rarest_token() -> None:
    docs = ["max value"] * 8 + ["connections pool"] * 2 + ["max_connections 10"]
    conn = _conn(docs)  # max in 9 of 11 documents, connections in 3
    assert frequent_terms_dropped(conn, ["max_connections", "max"], max_df=0.3)[0] == [
        "max_connections"
    ]
    assert frequent_terms_dropped(conn, ["max_connections", "max"], max_df=0.2)[0] == [
        "max_connections"
    ]  # both too frequent: the rarer one is kept


def test_tokenize_matches_the_index() -> None:
    conn = _conn(["x"])
    assert tokenize(conn, ["café", "Müller", "max_connections", "Ørsted"]) == [
        ["cafe"],
        ["muller"],
        ["max", "connections"],
        ["ørsted"],
    ]
    assert tokenize(conn, []) == []


def test_tokenize_on_a_read_only_connection(tmp_path) -> None:
    path = tmp_path / "ro.db"
    conn = _conn(["x"])
    conn.execute(f"VACUUM INTO '{path}'")
    ro = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    assert tokenize(ro, ["Müller"]) == [["muller"]]
    assert frequent_terms_dropped(ro, ["x"])[0] == ["x"]


# Latin letters with and without diacritics, digits, underscores
words = st.text(
    alphabet=st.sampled_from(list(string.ascii_letters + string.digits + "_éèêüïøçñåÉÜÖÅŁłőű")),
    min_size=1,
    max_size=12,
)


@settings(max_examples=60, deadline=None)
@given(st.lists(words, min_size=1, max_size=4, unique=True))
def test_every_stored_word_survives_the_filter(stored: list[str]) -> None:
    conn = _conn([" ".join(stored)] + ["filler text"] * 20)
    for w in stored:
        terms = query_terms(w)
        if not terms or not any(tokenize(conn, terms)):
            continue  # nothing the tokenizer keeps (e.g. only underscores)
        assert frequent_terms_dropped(conn, terms, max_df=0.1)[0] == terms


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(words, words.map(str.lower)), min_size=1, max_size=6))
def test_index_tokens_are_the_tokenizers(terms: list[str]) -> None:
    # plain words skip the scratch table; every term still gets the index's own tokens
    for tokenizer in ("unicode61 remove_diacritics 2", "unicode61"):
        conn = _conn(["x"], tokenizer)
        assert index_tokens(conn, terms) == tokenize(conn, terms)


def test_index_tokens_of_a_stemming_index_are_stemmed() -> None:
    conn = _conn(["x"], "porter unicode61")
    assert index_tokens(conn, ["connections", "running", "café"]) == [
        ["connect"],
        ["run"],
        ["cafe"],
    ]
    assert tokenize(conn, ["connections"]) == [["connect"]]


VOCAB = ["w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7", "max_w1", "café"]


def _exact_reference(conn, terms, max_df, max_postings):
    """The filter as it was before counting at a cap: every frequency exact (fts5vocab)."""
    tokens = tokenize(conn, terms)
    df_token = token_frequencies(conn, sorted({t for toks in tokens for t in toks}))
    df = {t: min(df_token[k] for k in toks) for t, toks in zip(terms, tokens, strict=True) if toks}
    present = [t for t in terms if df.get(t, 0) > 0]
    if not present:
        return []
    n_docs = conn.execute("SELECT COALESCE(MAX(id), 0) FROM memories").fetchone()[0] or 1
    kept = [t for t in present if max_df is None or df[t] <= max(1.0, max_df * n_docs)]
    kept = kept or [min(present, key=lambda t: df[t])]
    if max_postings is None or sum(df[t] for t in kept) <= max_postings:
        return kept
    within, total = set(), 0
    for t in sorted(kept, key=lambda t: (df[t], t)):
        if within and total + df[t] > max_postings:
            break
        within.add(t)
        total += df[t]
    return [t for t in kept if t in within]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.lists(st.integers(0, 7), min_size=1, max_size=5), min_size=1, max_size=40),
    st.lists(st.sampled_from([*VOCAB, "absent"]), min_size=1, max_size=5, unique=True),
    st.one_of(st.none(), st.floats(0.01, 1.0)),
    st.one_of(st.none(), st.integers(1, 40)),
)
def test_counting_at_a_cap_keeps_the_same_terms(
    docs: list[list[int]], terms: list[str], max_df: float | None, max_postings: int | None
) -> None:
    # skewed frequencies: low word numbers are common, so the caps bind and the exact
    # fallback runs (a term at the cap kept as the rarest)
    conn = _conn([" ".join(f"w{min(i, j)}" for j in d) + " max w1 cafe" * (i % 3 == 0)
                  for i, d in enumerate(docs)])  # fmt: skip
    if max_df is None and max_postings is None:
        return
    got = frequent_terms_dropped(conn, terms, max_df=max_df, max_postings=max_postings)[0]
    assert got == _exact_reference(conn, terms, max_df, max_postings)


def test_frequencies_at_a_cap() -> None:
    conn = _conn(["alpha beta"] * 7 + ["beta"] * 3)
    assert token_frequencies(conn, ["alpha", "beta", "zulu"]) == {"alpha": 7, "beta": 10, "zulu": 0}
    assert token_frequencies(conn, ["alpha", "beta", "zulu"], cap=5) == {
        "alpha": 5,
        "beta": 5,
        "zulu": 0,
    }
