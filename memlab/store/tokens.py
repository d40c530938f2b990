"""The tokens the keyword index makes of texts and query terms, by FTS5 itself (a scratch
table with the index's tokenizer); shared by :mod:`memlab.store.fts` and the corpus statistics.
"""

from __future__ import annotations

import re

from memlab.store.schema import Executor, fts_text

_TOKENIZE_SPEC = re.compile(r"""tokenize\s*=\s*(?:'((?:[^']|'')*)'|"((?:[^"]|"")*)")""", re.I)


def tokenizer_spec(conn: Executor) -> str:
    """The ``tokenize=`` option of ``memories_fts`` as declared in the schema."""
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'memories_fts'").fetchone()
    m = _TOKENIZE_SPEC.search(row[0]) if row and row[0] else None
    if m is None:
        return "unicode61"
    return m.group(1).replace("''", "'") if m.group(1) is not None else m.group(2)


def tokenize(conn: Executor, texts: list[str]) -> list[list[str]]:
    """The tokens the keyword index makes of each text, by a scratch FTS5 table in the
    connection's ``temp`` schema (never in the database file; works on a read-only one)."""
    if not texts:
        return []
    quoted = tokenizer_spec(conn).replace("'", "''")
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.memlab_tokenizer"
        f" USING fts5(t, tokenize = '{quoted}')"
    )
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.memlab_tokenizer_vocab "
        "USING fts5vocab(temp, memlab_tokenizer, 'instance')"
    )
    conn.execute("DELETE FROM temp.memlab_tokenizer")
    for i, t in enumerate(texts, 1):
        conn.execute("INSERT INTO temp.memlab_tokenizer(rowid, t) VALUES (?, ?)", (i, fts_text(t)))
    rows = conn.execute(
        "SELECT doc, term FROM temp.memlab_tokenizer_vocab ORDER BY doc, col, offset"
    ).fetchall()
    conn.execute("DELETE FROM temp.memlab_tokenizer")
    out: list[list[str]] = [[] for _ in texts]
    for doc, term in rows:
        out[int(doc) - 1].append(term)
    return out


#: A lower-case ASCII word or number: one token, itself, under every ``unicode61`` tokenizer.
_PLAIN = re.compile(r"^[a-z0-9]+$")


def index_tokens(conn: Executor, terms: list[str]) -> list[list[str]]:
    """:func:`tokenize` of each term; under ``unicode61`` a lower-case ASCII word or number is
    its own token and skips the scratch table."""
    if tokenizer_spec(conn).split()[:1] != ["unicode61"]:
        return tokenize(conn, terms)
    other = [t for t in terms if not _PLAIN.match(t)]
    folded = dict(zip(other, tokenize(conn, other), strict=True))
    return [folded[t] if t in folded else [t] for t in terms]
