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


def indexed_rows(conn: Executor) -> int:
    """The keyword index's rows, counted in its ``docsize`` table (fast, unlike the FTS5 table)."""
    return int(conn.execute("SELECT COUNT(*) FROM memories_fts_docsize").fetchone()[0])


def term_stats(conn: Executor, texts: Sequence[str]) -> TermStats:
    """Document frequencies in the keyword index of the content words of ``texts``."""
    words = sorted({w for t in texts for w in content_words(t)})
    tokens = dict(zip(words, fts.index_tokens(conn, words), strict=True))
    wanted = sorted({tok for toks in tokens.values() for tok in toks})
    found = fts.token_frequencies(conn, wanted)
    df = Counter({w: min((found[t] for t in toks), default=0) for w, toks in tokens.items()})
    return TermStats(indexed_rows(conn), +df)
