"""The store's corpus statistics on ingest, against which importance is estimated from content.

Document frequencies come from the keyword index itself (FTS5's ``memories_fts_vocab``, kept up
to date by FTS5), so the store keeps no second copy of its vocabulary. The corpus is what the
keyword index holds: every memory of the file that is not superseded (every namespace: a
frequency is a statistic, as BM25's are; no text of another namespace is read). A word's
frequency is that of its rarest token as the index's tokenizer splits and folds it (0 when a
token is absent). Sweeps estimate auto importance again, exactly, against the own texts of
the active memories (:func:`memlab.store.sweep.corpus_stats`).
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
    """The number of rows of the keyword index (counted in its ``docsize`` table: a plain
    table's ``COUNT(*)`` reads its b-tree; the FTS5 table's steps through every row)."""
    return int(conn.execute("SELECT COUNT(*) FROM memories_fts_docsize").fetchone()[0])


def term_stats(conn: Executor, texts: Sequence[str]) -> TermStats:
    """Document frequencies, in the keyword index, of the content words of ``texts``
    (``n_docs``: the index's rows)."""
    words = sorted({w for t in texts for w in content_words(t)})
    tokens = dict(zip(words, fts.index_tokens(conn, words), strict=True))
    wanted = sorted({tok for toks in tokens.values() for tok in toks})
    found = _document_frequencies(conn, wanted) if wanted else {}
    n_rows = indexed_rows(conn)
    df: Counter[str] = Counter()
    for w, toks in tokens.items():
        df[w] = min((found.get(tok, 0) for tok in toks), default=0)
    return TermStats(n_rows, +df)


__all__ = ["indexed_rows", "term_stats"]
