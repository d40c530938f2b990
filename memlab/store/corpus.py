"""The store's corpus statistics on ingest, against which importance is estimated from content.

Document frequencies come from the keyword index itself (``memories_fts_vocab``): every memory
of the file that is not superseded, in every namespace (a statistic, as BM25's are). A word's
frequency is that of its rarest token as the index's tokenizer splits it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from memlab.informativeness import TermStats, content_words
from memlab.store import fts
from memlab.store.schema import Executor

#: SQLite's default limit on bound parameters is 32766; stay well below it.
_CHUNK = 900


def _document_frequencies(conn: Executor, terms: Sequence[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for i in range(0, len(terms), _CHUNK):
        part = list(terms[i : i + _CHUNK])
        marks = ",".join("?" for _ in part)
        out.update(
            (str(t), int(d))
            for t, d in conn.execute(
                f"SELECT term, doc FROM memories_fts_vocab WHERE term IN ({marks})", part
            )
        )
    return out


def indexed_rows(conn: Executor) -> int:
    """The keyword index's rows, counted in its ``docsize`` table (fast, unlike the FTS5 table)."""
    return int(conn.execute("SELECT COUNT(*) FROM memories_fts_docsize").fetchone()[0])


def term_stats(conn: Executor, texts: Sequence[str]) -> TermStats:
    """Document frequencies in the keyword index of the content words of ``texts``."""
    words = sorted({w for t in texts for w in content_words(t)})
    tokens = dict(zip(words, fts.index_tokens(conn, words), strict=True))
    wanted = sorted({tok for toks in tokens.values() for tok in toks})
    found = _document_frequencies(conn, wanted) if wanted else {}
    n_rows = indexed_rows(conn)
    df: Counter[str] = Counter()
    for w, toks in tokens.items():
        df[w] = min((found.get(tok, 0) for tok in toks), default=0)
    return TermStats(n_rows, +df)
