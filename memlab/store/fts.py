"""FTS5 keyword search: user text to a safe MATCH query, BM25 ranking.

User queries are free text: quotes, ``AND``/``OR``/``NOT``/``NEAR``, ``*``, ``^``, column
filters and brackets must never reach FTS5 as syntax. :func:`match_query` keeps the query's
terms (runs of the characters the index keeps), drops English stop words and duplicates,
quotes each term as an FTS5 string (which FTS5 tokenizes as the index does) and joins them
with ``OR``. Stop words matter for speed as well as ranking: a word in most documents ("the")
makes FTS5 score every match.
"""

from __future__ import annotations

import functools
import math
import unicodedata

from memlab.informativeness import STOP_WORDS  # one English stop-word list for the package
from memlab.store.schema import Executor, fts_text
from memlab.store.scope import first_in_scope
from memlab.store.tokens import index_tokens

#: At most this many distinct terms go into one MATCH query.
MAX_TERMS = 32
#: Tokens looked up per query (SQLite's default limit on bound parameters is 32766).
_CHUNK = 900


@functools.lru_cache(maxsize=65536)
def _in_term(ch: str) -> bool:
    """Whether ``ch`` belongs to a query term: a character the index keeps
    (:data:`~memlab.store.schema.TOKENIZER`, and code points unassigned in Python's Unicode,
    which SQLite's may know) or drops inside a word (``_``, combining marks: the term is then a
    phrase of the index's tokens). A term never splits a token of the index."""
    cat = unicodedata.category(ch)
    return ch == "_" or cat[0] in "LNM" or cat in ("Co", "Cn") or cat[0] == "S" and not ch.isascii()


def query_terms(text: str) -> list[str]:
    """Distinct terms of ``text`` without stop words, in order of appearance.

    ASCII letters are lower-cased; other case folding is the index tokenizer's, which keeps
    ``ss`` and ``ß`` apart (unlike Python's ``casefold``). If every term is a stop word, the stop
    words are kept; the result is empty only when the text has no term characters.
    """
    spaced = "".join(ch if _in_term(ch) else " " for ch in fts_text(text))
    terms = ["".join(c.lower() if c.isascii() else c for c in t) for t in spaced.split()]
    kept = [t for t in terms if t.lower() not in STOP_WORDS] or terms
    seen: dict[str, str] = {}
    for t in kept:
        seen.setdefault(t.lower(), t)
    return list(seen.values())[:MAX_TERMS]


def match_query(text: str) -> str | None:
    """A safe FTS5 MATCH expression: ``"t1" OR "t2" ...`` (None when nothing to search)."""
    terms = query_terms(text)
    return _or_query(terms) if terms else None


def _or_query(terms: list[str]) -> str:
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


def fts_insert(conn: Executor, memory_id: int, content: str) -> None:
    conn.execute(
        "INSERT INTO memories_fts(rowid, content) VALUES (?, ?)", (memory_id, fts_text(content))
    )


def fts_delete(conn: Executor, memory_id: int) -> None:
    conn.execute("DELETE FROM memories_fts WHERE rowid = ?", (memory_id,))


#: A ranking's fetch window grows (x4) up to this many matches; past it every match is ranked
#: (in one query joined with the scope).
_SCOPE_BLOCK = 8192

#: Default cap on a query term's document frequency (share of memories containing it).
MAX_DF = 0.1
#: Default budget of the keyword query: the postings (term occurrences in memories) FTS5 scores.
MAX_POSTINGS = 5000


def frequent_terms_dropped(
    conn: Executor, terms: list[str], max_df: float | None = MAX_DF, max_postings: int | None = None
) -> tuple[list[str], dict[str, int]]:
    """``terms`` without those in more than ``max_df`` of the memories, and within a budget
    of ``max_postings`` scored postings; with the document frequency of every term (exact for
    the terms kept, at most the cap for the others; empty when no limit is given).

    Stop words measured on the data: a term in most documents has almost no BM25 weight but
    makes FTS5 score every document it is in. A term's document frequency is that of its rarest
    token as the index splits and folds it (``max_connections``: the phrase ``max connections``).
    A term of one memory is never too frequent (in a store of under ``1 / max_df`` memories).
    Absent terms are dropped; if every present term is too frequent, the rarest is kept. Then
    the kept terms are taken rarest first while their frequencies sum to at most
    ``max_postings`` (the cost FTS5 pays per matching memory; the rarest is always kept).
    """
    if (max_df is None and max_postings is None) or not terms:
        return terms, {}
    tokens = index_tokens(conn, terms)
    distinct = sorted({tok for toks in tokens for tok in toks})
    bound = math.inf  # max_df as a number of memories (counted by the highest id), at least 1
    if max_df is not None:
        n = conn.execute("SELECT MAX(id) FROM memories").fetchone()[0] or 1
        bound = max(1.0, max_df * n)
    # A frequency above both limits only matters when such a term would be returned: counted
    # up to the cap first (a cost bounded by the cap, not by the store's size), then exactly
    # for the tokens at the cap if a term at the cap is returned (the same terms either way).
    cap = int(min(math.inf if max_postings is None else max_postings, bound))
    df_token = token_frequencies(conn, distinct, cap=cap + 1)
    df = _term_frequencies(terms, tokens, df_token)
    kept = _within_limits(terms, df, bound, max_postings)
    if any(df[t] > cap for t in kept):  # a term at the cap is kept: count exactly
        capped = sorted({tok for tok, d in df_token.items() if d > cap})
        df_token.update(token_frequencies(conn, capped))
        df = _term_frequencies(terms, tokens, df_token)
        kept = _within_limits(terms, df, bound, max_postings)
    return kept, df


def token_frequencies(
    conn: Executor, tokens: list[str], *, cap: int | None = None
) -> dict[str, int]:
    """The number of memories of the keyword index holding each token (0: none): exact from
    ``fts5vocab`` (``cap=None``), else ``min(count, cap)`` by a ``MATCH`` that stops at ``cap``
    (a cost bounded by it)."""
    if cap is None:
        found: dict[str, int] = {}
        for i in range(0, len(tokens), _CHUNK):
            part = tokens[i : i + _CHUNK]
            marks = ",".join("?" for _ in part)
            sql = f"SELECT term, doc FROM memories_fts_vocab WHERE term IN ({marks})"
            found.update(conn.execute(sql, part))
        return {tok: int(found.get(tok, 0)) for tok in tokens}
    return {
        tok: int(
            conn.execute(
                "SELECT count(*) FROM (SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?"
                " LIMIT ?)",
                (_or_query([tok]), cap),
            ).fetchone()[0]
        )
        for tok in tokens
    }


def _term_frequencies(
    terms: list[str], tokens: list[list[str]], df_token: dict[str, int]
) -> dict[str, int]:
    """Each term's document frequency: that of its rarest token (terms of no token: none)."""
    return {
        t: min(df_token.get(tok, 0) for tok in toks)
        for t, toks in zip(terms, tokens, strict=True)
        if toks
    }


def _within_limits(
    terms: list[str], df: dict[str, int], bound: float, max_postings: int | None
) -> list[str]:
    """The terms :func:`frequent_terms_dropped` keeps, given their frequencies."""
    present = [t for t in terms if df.get(t, 0) > 0]
    if not present:
        return []
    kept = [t for t in present if df[t] <= bound] or [min(present, key=lambda t: df[t])]
    if max_postings is None or sum(df[t] for t in kept) <= max_postings:
        return kept
    within: set[str] = set()
    total = 0
    for t in sorted(kept, key=lambda t: (df[t], t)):
        if within and total + df[t] > max_postings:
            break
        within.add(t)
        total += df[t]
    return [t for t in kept if t in within]


def keyword_search(
    conn: Executor,
    text: str,
    limit: int,
    *,
    statuses: tuple[str, ...] = ("active",),
    max_df: float | None = None,
    namespace: str | None = None,
    max_postings: int | None = None,
) -> list[tuple[int, float]]:
    """Top ``limit`` (memory id, bm25) for ``text`` among memories of the given statuses in
    ``namespace`` (None: any), best first (lower BM25 is better), ties by id.

    ``max_df`` and ``max_postings`` drop terms first (:func:`frequent_terms_dropped`). When the
    one term left matches more memories than ``max_postings``, only its ``max_postings`` newest
    matches are scored (unless fewer than ``limit`` of them are in scope; BM25's statistics stay
    the whole index's).
    """
    if limit <= 0:
        return []
    terms, df = frequent_terms_dropped(conn, query_terms(text), max_df, max_postings)
    if not terms:
        return []
    in_ns = m_ns = ""
    ns: tuple[str, ...] = ()
    if namespace is not None:
        in_ns, m_ns, ns = " AND +namespace = ?", " AND +m.namespace = ?", (namespace,)

    def in_scope(ids: list[int]) -> set[int]:
        marks = ",".join("?" for _ in ids)
        return {
            int(r[0])
            for r in conn.execute(
                f"SELECT id, status FROM memories WHERE id IN ({marks}){in_ns}", (*ids, *ns)
            )
            if r[1] in statuses
        }

    query = _or_query(terms)

    window: tuple[int, ...] = ()  # (lowest rowid scored,) when the budget cuts the matches
    if max_postings is not None and len(terms) == 1 and df[terms[0]] > max_postings:
        # only one term can be left over the budget: the rarest, when it alone matches more
        # memories than the budget (others join only within it); its newest matches are scored
        # (a phrase may match fewer memories than its rarest token: then there is no edge)
        edge = conn.execute(
            "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?"
            " ORDER BY rowid DESC LIMIT 1 OFFSET ?",
            (query, int(max_postings)),
        ).fetchone()
        window = () if edge is None else (int(edge[0]) + 1,)
    fetch = max(2 * int(limit), 20)
    while fetch <= _SCOPE_BLOCK:
        rows = conn.execute(
            "SELECT rowid, bm25(memories_fts) AS score FROM memories_fts"
            " WHERE memories_fts MATCH ?"
            + (" AND rowid >= ?" if window else "")
            + " ORDER BY score, rowid LIMIT ?",
            (query, *window, fetch),
        ).fetchall()
        hits = first_in_scope([(int(r[0]), float(r[1])) for r in rows], limit, in_scope)
        if len(hits) >= limit:
            return hits[:limit]
        if len(rows) < fetch:
            if not window:
                return hits
            # the window holds too few memories in scope (e.g. of a small namespace beside a
            # large one): every match is scored, as without a budget
            window = ()
            continue
        fetch *= 4
    smarks = ",".join("?" for _ in statuses)
    rows = conn.execute(
        f"""SELECT f.rowid, bm25(memories_fts) AS score FROM memories_fts f
            JOIN memories m ON m.id = f.rowid
            WHERE memories_fts MATCH ? AND m.status IN ({smarks}){m_ns}
            ORDER BY score, f.rowid LIMIT ?""",
        (query, *statuses, *ns, int(limit)),
    ).fetchall()
    return [(int(r[0]), float(r[1])) for r in rows]
