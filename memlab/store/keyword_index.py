"""The keyword index's postings held in memory, ranked by BM25 exactly as FTS5's ``bm25()``.

FTS5 is the keyword index of record: it stores, tokenizes and counts. But its ranking costs
about 2 µs for every memory a query matches (``bm25()`` is called per matching row and looks
the row's size up in ``memories_fts_docsize``), against 0.06 µs to count the same matches: at
100k MiniLM memories the keyword side took 6.54 ms of a 9.29 ms search, the floor of the
store's search latency (``experiments/results/bench_store_minilm_before_keyword_index.md``);
ranked here it takes 0.81 ms (``bench_store_minilm_keyword_index.md``; the keyword side alone
at 100k and 1M texts beside FTS5: ``bench_keyword.md``). :class:`KeywordIndex` mirrors what
FTS5 holds - each row's tokens with their counts, its length, each token's document frequency,
the number of rows and of tokens - in numpy arrays, and ranks a query's matches with FTS5's own
formula
(``fts5_aux.c``, ``fts5Bm25Function``; k1 = 1.2, b = 0.75)::

    idf(q)   = log((N - n(q) + 0.5) / (n(q) + 0.5)), at least 1e-6
    bm25(D)  = -sum over the query's phrases q, in order, of
               idf(q) * f(q,D) * (k1 + 1) / (f(q,D) + k1 * (1 - b + b * |D| / avgdl))

evaluated in the same order of double-precision operations, so a score equals FTS5's to the
last bit and the ranking, ties included (broken by id), is FTS5's (tested against it). It is
written here because no library keeps an inverted index in step with SQLite's: the store's
keyword search must give FTS5's ranking, and only the cost moves.

**What it mirrors, and how it stays in step.** Every change of the FTS5 table goes through
:mod:`memlab.store.fts`, which journals the memory id in ``keyword_changes`` in the same
transaction (schema version 6). :meth:`KeywordIndex.refresh` reads the journal past the last
entry it applied and reads those memories' rows of FTS5's own content table again (present:
indexed with that text; absent: removed), so changes by other processes and connections are
seen as SQLite's snapshot shows them. Changes applied inside a write that rolls back are read
again from the database after the rollback (:meth:`KeywordIndex.rolled_back`). The journal keeps
its newest :data:`JOURNAL_KEEP` entries; an index that fell further behind, or a journal reset
(a rebuilt FTS5 table), builds again from the content table.

**Tokens.** A text of ASCII characters is split as ``unicode61`` splits it (runs of ASCII
letters and digits, folded to lower case); any other text is tokenized by FTS5 itself
(:func:`memlab.store.tokens.tokenize`). The index is used only under a ``unicode61`` tokenizer
without options that change the token characters, and only while its row and token counts
equal the ones in FTS5's averages record (compared after every change it reads; a record that
lags inside a write is told apart by counting ``memories_fts_docsize``); a query term that
FTS5 would split into a phrase is ranked by FTS5 (the index holds no positions).

**Layout.** Rows are numbered by slot in the order they were indexed; a memory's new content
takes a new slot and its old slot is dead. Each slot's distinct tokens and counts are kept in
one flat forward array; the postings (token -> slots) are a CSR built from it, plus a tail of
the slots indexed since, scanned at query time until it outgrows a quarter of the CSR.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from memlab.store.schema import Executor
from memlab.store.tokens import tokenize, tokenizer_spec

#: FTS5's ``bm25()`` constants.
K1 = 1.2
B = 0.75
#: Newest journal entries kept (an index further behind builds again).
JOURNAL_KEEP = 100_000
#: Every this many journal entries, the entries older than :data:`JOURNAL_KEEP` are deleted.
JOURNAL_PRUNE_EVERY = 4096
#: A tail larger than this and than a quarter of the postings is merged into them.
TAIL_MIN = 65_536
#: Rows read from the content table per query while building.
READ_BLOCK = 20_000
#: SQLite's default limit on bound parameters is 32766; stay well below it.
_ID_CHUNK = 900

#: The ``tokenize=`` words under which ASCII text splits as :data:`_ASCII_TOKEN` does.
_PLAIN_OPTIONS = {"unicode61", "remove_diacritics", "0", "1", "2"}
_ASCII_TOKEN = re.compile(r"[0-9a-z]+")


def plain_unicode61(spec: str) -> bool:
    """Whether a ``tokenize=`` spec is ``unicode61`` with at most ``remove_diacritics N``
    (no ``tokenchars``, ``separators`` or ``categories``, no wrapper such as ``porter``)."""
    words = spec.replace("'", " ").replace('"', " ").split()
    return bool(words) and words[0] == "unicode61" and set(words) <= _PLAIN_OPTIONS


def ascii_tokens(text: str) -> list[str] | None:
    """The ``unicode61`` tokens of an ASCII text (None for any other text)."""
    if not text.isascii():
        return None
    return _ASCII_TOKEN.findall(text.lower())


def unicode61_tokens(conn: Executor, texts: Sequence[str]) -> list[list[str]]:
    """The tokens of each text under a plain ``unicode61`` tokenizer (:func:`plain_unicode61`):
    an ASCII text split here (:func:`ascii_tokens`), any other by FTS5 itself
    (:func:`memlab.store.tokens.tokenize`)."""
    split = [ascii_tokens(t) for t in texts]
    other = [i for i, toks in enumerate(split) if toks is None]
    by_fts5 = dict(zip(other, tokenize(conn, [texts[i] for i in other]), strict=True))
    return [by_fts5[i] if toks is None else toks for i, toks in enumerate(split)]


def indexed_rows(conn: Executor) -> int:
    """The number of rows of the keyword index.

    Counted in FTS5's ``memories_fts_docsize`` table, one row per indexed row (FTS5's own
    bookkeeping, with the default ``columnsize=1``): SQLite counts a plain table from its
    b-tree, where ``COUNT(*)`` of the FTS5 table steps through every row (at 10k memories
    4 microseconds against 1.3 ms, per ingest batch); at 1M rows it takes milliseconds.
    """
    return int(conn.execute("SELECT COUNT(*) FROM memories_fts_docsize").fetchone()[0])


def _varints(blob: bytes) -> list[int]:
    """SQLite's big-endian varints, one after the other (FTS5's averages record)."""
    out: list[int] = []
    i = 0
    while i < len(blob):
        value = 0
        for k in range(9):
            byte = blob[i]
            i += 1
            if k == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


def fts_averages(conn: Executor) -> tuple[int, int]:
    """(rows, tokens) of FTS5's averages record: one row read.

    The record is written when a transaction commits: inside a write that changed the table
    its counts lag behind."""
    found = conn.execute("SELECT block FROM memories_fts_data WHERE id = 1").fetchone()
    values = _varints(bytes(found[0])) if found and found[0] else []
    return (values[0] if values else 0), (values[1] if len(values) > 1 else 0)


def fts_totals(conn: Executor) -> tuple[int, int, int]:
    """(:func:`indexed_rows`, rows and tokens in FTS5's averages record)."""
    return (indexed_rows(conn), *fts_averages(conn))


class _Grow:
    """A numpy array that grows by doubling (appends are amortised O(1))."""

    def __init__(self, dtype: Any, capacity: int = 1024) -> None:
        self.data = np.zeros(capacity, dtype=dtype)
        self.size = 0

    def extend(self, values: NDArray[Any]) -> None:
        end = self.size + len(values)
        if end > len(self.data):
            grown = np.zeros(max(end, 2 * len(self.data)), dtype=self.data.dtype)
            grown[: self.size] = self.data[: self.size]
            self.data = grown
        self.data[self.size : end] = values
        self.size = end

    def view(self) -> NDArray[Any]:
        return self.data[: self.size]


class _SlotMap:
    """Memory id -> slot (-1: none): an array for the ids a store numbers (from 1 up), a dict
    for ids given by hand beyond :attr:`ARRAY_IDS` (4 bytes an id instead of ~100)."""

    ARRAY_IDS = 1 << 26

    def __init__(self) -> None:
        self._array = np.full(1024, -1, dtype=np.int64)
        self._large: dict[int, int] = {}

    def set(self, memory_id: int, slot: int) -> None:
        if memory_id >= self.ARRAY_IDS or memory_id < 0:
            self._large[memory_id] = slot
            return
        if memory_id >= len(self._array):
            grown = np.full(max(memory_id + 1, 2 * len(self._array)), -1, dtype=np.int64)
            grown[: len(self._array)] = self._array
            self._array = grown
        self._array[memory_id] = slot

    def pop(self, memory_id: int) -> int:
        """The slot of ``memory_id`` (-1: none), forgotten."""
        if memory_id >= self.ARRAY_IDS or memory_id < 0:
            return self._large.pop(memory_id, -1)
        if memory_id >= len(self._array):
            return -1
        slot = int(self._array[memory_id])
        self._array[memory_id] = -1
        return slot


class KeywordIndex:
    """The rows of ``memories_fts`` in memory: BM25 ranking equal to FTS5's (see the module).

    Built at its first :meth:`refresh` (which the keyword search and the corpus statistics
    call inside their transaction), then kept in step through the ``keyword_changes`` journal.
    """

    def __init__(self) -> None:
        self._reset()
        #: Why the index is not used (None while it is): the tokenizer, or counts unequal to
        #: FTS5's. The store then ranks with FTS5.
        self.unusable: str | None = None
        #: How many times it was built from the content table (1 after the first use).
        self.builds = 0

    def _reset(self) -> None:
        self.built = False
        self._term_id: dict[str, int] = {}
        self._df = _Grow(np.int64)
        # per slot: memory id, length in tokens, alive, first forward entry
        self._slot_doc = _Grow(np.int64)
        self._slot_len = _Grow(np.int32)
        self._slot_alive = _Grow(np.bool_)
        self._slot_start = _Grow(np.int64)
        # forward entries, slot after slot: distinct token ids and their counts
        self._fwd_term = _Grow(np.int32)
        self._fwd_tf = _Grow(np.int32)
        self._slot_of = _SlotMap()
        self.n_rows = 0
        self.n_tokens = 0
        # postings: CSR over the slots below _csr_slots; the slots from there on are the tail
        self._csr_start = np.zeros(1, dtype=np.int64)
        self._csr_slot = np.zeros(0, dtype=np.int32)
        self._csr_tf = np.zeros(0, dtype=np.int32)
        self._csr_slots = 0
        self._csr_entries = 0
        self._last_seq = 0
        self._committed_seq = 0
        self._since_commit: set[int] = set()
        self._stale: set[int] = set()
        self._verified = False
        self._built_since_commit = False

    # -- keeping in step ---------------------------------------------------------------------
    def refresh(self, conn: Executor) -> bool:
        """Bring the index up to the database's journal (inside the caller's transaction);
        returns whether it may be used. Builds it at the first call."""
        if self.unusable is not None:
            return False
        if not self.built:
            spec = tokenizer_spec(conn)
            if not plain_unicode61(spec):
                self.unusable = f"tokenizer {spec!r} is not plain unicode61"
                return False
            self._build(conn)
            return self._verify(conn)
        # MAX and MIN each in a query of its own: SQLite reads one end of the key for a lone
        # MAX() or MIN(), and scans the whole journal for the two in one query
        top = int(conn.execute("SELECT MAX(seq) FROM keyword_changes").fetchone()[0] or 0)
        if top == self._last_seq and not self._stale:
            return self._verified or self._verify(conn)
        bottom = int(conn.execute("SELECT MIN(seq) FROM keyword_changes").fetchone()[0] or 0)
        if top < self._last_seq or (top > self._last_seq and bottom > self._last_seq + 1):
            self._build(conn)  # the journal was reset, or pruned past what was applied
            return self._verify(conn)
        ids: set[int] = set(self._stale)
        if top > self._last_seq:
            changed = conn.execute(
                "SELECT DISTINCT memory_id FROM keyword_changes WHERE seq > ?", (self._last_seq,)
            ).fetchall()
            ids.update(int(r[0]) for r in changed)
            if 0 in ids:  # a reset: the FTS5 table was filled again
                self._build(conn)
                return self._verify(conn)
        if ids:
            self._apply(conn, sorted(ids))
            self._stale = set()
            self._since_commit |= ids
        self._last_seq = max(top, self._last_seq)
        return self._verify(conn)

    def committed(self) -> None:
        """The transaction whose state the index holds has ended well: forget its changes."""
        self._committed_seq = self._last_seq
        self._since_commit = set()
        self._built_since_commit = False

    def rolled_back(self) -> None:
        """The write whose changes the index may hold was rolled back: those memories are read
        again from the database, and the journal again from before the write (an index built
        inside the write is built again)."""
        if self._built_since_commit:
            self._reset()
            return
        self._stale |= self._since_commit
        self._since_commit = set()
        self._last_seq = self._committed_seq

    def _verify(self, conn: Executor) -> bool:
        """Compare the row and token counts with FTS5's averages record (one row read); only
        when they differ are FTS5's rows counted (a walk of its size table) to tell a record
        lagging inside a write that changed the table (checked again at the next refresh) from
        an index out of step: other rows (built again) or other tokens (a tokenizer this index
        does not reproduce: unusable, FTS5 ranks from then on)."""
        avg_rows, avg_tokens = fts_averages(conn)
        if (avg_rows, avg_tokens) == (self.n_rows, self.n_tokens):
            self._verified = True
            return True
        self._verified = False
        rows = indexed_rows(conn)
        if rows != self.n_rows:
            self._build(conn)
            if rows != self.n_rows:
                self.unusable = f"{self.n_rows} rows indexed, FTS5 holds {rows}"
                return False
            avg_rows, avg_tokens = fts_averages(conn)
        if avg_rows == rows and avg_tokens != self.n_tokens:
            self.unusable = f"{self.n_tokens} tokens indexed, FTS5 counts {avg_tokens}"
            return False
        self._verified = avg_rows == rows
        return True

    def _build(self, conn: Executor) -> None:
        self._reset()
        top = conn.execute("SELECT MAX(seq) FROM keyword_changes").fetchone()[0]
        last = 0
        while True:
            rows = conn.execute(
                "SELECT id, c0 FROM memories_fts_content WHERE id > ? ORDER BY id LIMIT ?",
                (last, READ_BLOCK),
            ).fetchall()
            if not rows:
                break
            self._index(conn, [int(r[0]) for r in rows], [r[1] or "" for r in rows])
            last = int(rows[-1][0])
        self._last_seq = self._committed_seq = int(top or 0)
        self.built = True
        self._built_since_commit = True
        self.builds += 1

    def _apply(self, conn: Executor, ids: Sequence[int]) -> None:
        """Read ``ids``' rows of the content table again: index the present, drop the rest."""
        found: dict[int, str] = {}
        for i in range(0, len(ids), _ID_CHUNK):
            part = list(ids[i : i + _ID_CHUNK])
            marks = ",".join("?" for _ in part)
            found.update(
                (int(r[0]), r[1] or "")
                for r in conn.execute(
                    f"SELECT id, c0 FROM memories_fts_content WHERE id IN ({marks})", part
                )
            )
        for memory_id in ids:
            self._drop(memory_id)
        new = sorted(found)
        self._index(conn, new, [found[m] for m in new])

    def _drop(self, memory_id: int) -> None:
        slot = self._slot_of.pop(memory_id)
        if slot < 0:
            return
        alive = self._slot_alive.view()
        alive[slot] = False
        start = int(self._slot_start.view()[slot])
        end = (
            int(self._slot_start.view()[slot + 1])
            if slot + 1 < self._slot_start.size
            else self._fwd_term.size
        )
        self._df.view()[self._fwd_term.view()[start:end]] -= 1
        self.n_rows -= 1
        self.n_tokens -= int(self._slot_len.view()[slot])

    def _index(self, conn: Executor, ids: Sequence[int], texts: Sequence[str]) -> None:
        """Append one slot per text (its distinct tokens, their counts, its length)."""
        if not ids:
            return
        tokens = unicode61_tokens(conn, texts)
        term_id = self._term_id
        flat: list[int] = []
        lengths = np.zeros(len(ids), dtype=np.int64)
        for r, toks in enumerate(tokens):
            lengths[r] = len(toks)
            for tok in toks:
                tid = term_id.get(tok)
                if tid is None:
                    tid = term_id[tok] = len(term_id)
                flat.append(tid)
        n_terms = len(term_id)
        if n_terms > self._df.size:
            self._df.extend(np.zeros(n_terms - self._df.size, dtype=np.int64))
        first_slot = self._slot_doc.size
        row = np.repeat(np.arange(len(ids), dtype=np.int64), lengths)
        pairs = row * n_terms + np.asarray(flat, dtype=np.int64)
        keys, counts = np.unique(pairs, return_counts=True)
        entry_row, entry_term = np.divmod(keys, n_terms)
        per_row = np.bincount(entry_row, minlength=len(ids))
        starts = self._fwd_term.size + np.concatenate(([0], np.cumsum(per_row)[:-1]))
        self._fwd_term.extend(entry_term)
        self._fwd_tf.extend(counts)
        self._slot_start.extend(starts)
        self._slot_doc.extend(np.asarray(ids, dtype=np.int64))
        self._slot_len.extend(lengths)
        self._slot_alive.extend(np.ones(len(ids), dtype=np.bool_))
        np.add.at(self._df.view(), entry_term, 1)
        for offset, memory_id in enumerate(ids):
            self._slot_of.set(int(memory_id), first_slot + offset)
        self.n_rows += len(ids)
        self.n_tokens += int(lengths.sum())

    # -- postings ----------------------------------------------------------------------------
    def _merge_tail(self) -> None:
        """Make the postings CSR of every live slot's forward entries (the tail merged in)."""
        n_slots = self._slot_doc.size
        starts = self._slot_start.view()
        per_slot = np.diff(np.append(starts, self._fwd_term.size))
        entry_slot = np.repeat(np.arange(n_slots, dtype=np.int32), per_slot)
        live = self._slot_alive.view()[entry_slot]
        terms = self._fwd_term.view()[live]
        order = np.argsort(terms, kind="stable")  # by token, slots ascending within one
        self._csr_slot = entry_slot[live][order]
        self._csr_tf = self._fwd_tf.view()[live][order]
        self._csr_start = np.concatenate(
            ([0], np.cumsum(np.bincount(terms, minlength=len(self._term_id))))
        ).astype(np.int64)
        self._csr_slots = n_slots
        self._csr_entries = self._fwd_term.size

    def _postings(self, token: str) -> tuple[NDArray[Any], NDArray[Any]]:
        """(live slots, token counts) of the rows holding ``token``, slots ascending."""
        tid = self._term_id.get(token)
        if tid is None:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
        tail_from = self._csr_entries
        slots: list[NDArray[Any]] = []
        tfs: list[NDArray[Any]] = []
        if tid + 1 < len(self._csr_start):
            a, b = int(self._csr_start[tid]), int(self._csr_start[tid + 1])
            slots.append(self._csr_slot[a:b])
            tfs.append(self._csr_tf[a:b])
        if self._fwd_term.size > tail_from:
            at = np.flatnonzero(self._fwd_term.view()[tail_from:] == tid) + tail_from
            if len(at):
                starts = self._slot_start.view()
                slots.append(np.searchsorted(starts, at, side="right") - 1)
                tfs.append(self._fwd_tf.view()[at])
        if not slots:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int32)
        slot = np.concatenate(slots).astype(np.int64, copy=False)
        tf = np.concatenate(tfs)
        live = self._slot_alive.view()[slot]
        return slot[live], tf[live]

    def _ensure_postings(self) -> None:
        tail = self._fwd_term.size - self._csr_entries
        if tail > max(TAIL_MIN, self._csr_entries // 4):
            self._merge_tail()

    # -- queries -----------------------------------------------------------------------------
    def document_frequencies(self, tokens: Iterable[str]) -> dict[str, int]:
        """The number of rows holding each token (0: none)."""
        df = self._df.view()
        out = {}
        for tok in tokens:
            tid = self._term_id.get(tok)
            out[tok] = 0 if tid is None else int(df[tid])
        return out

    def scored(
        self, tokens: Sequence[str], *, newest: int | None = None
    ) -> tuple[NDArray[np.int64], NDArray[np.float64]]:
        """Every row matching any of ``tokens`` (the query's phrases, in order) with its score
        as FTS5's ``bm25(memories_fts)`` gives it (lower is better), in no order
        (:func:`best_first` ranks them).

        ``newest``: only the ``newest`` matching rows with the highest ids are scored (the
        statistics stay the whole index's). Returns (memory ids, scores).
        """
        self._ensure_postings()
        postings = [self._postings(tok) for tok in tokens]
        found = [s for s, _ in postings if len(s)]
        if not found:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
        if len(found) == 1:
            slots = found[0]  # one posting list: slots ascending, each once
        else:
            slots = np.sort(np.concatenate(found))
            slots = slots[np.concatenate(([True], slots[1:] != slots[:-1]))]
        docs = self._slot_doc.view()[slots]
        if newest is not None and len(slots) > newest:
            keep = np.sort(np.argpartition(-docs, newest - 1)[:newest])
            slots, docs = slots[keep], docs[keep]
        n_rows = self.n_rows
        avgdl = float(self.n_tokens) / float(n_rows)
        length = self._slot_len.view()[slots].astype(np.float64)
        norm = (1 - B) + (B * length) / avgdl  # FTS5: (1 - b + b * D / avgdl)
        score = np.zeros(len(slots), dtype=np.float64)
        df = self.document_frequencies(tokens)
        for tok, (slot, tf) in zip(tokens, postings, strict=True):
            freq = np.zeros(len(slots), dtype=np.float64)
            if len(slot):
                where = np.searchsorted(slots, slot)
                inside = where < len(slots)
                inside[inside] = slots[where[inside]] == slot[inside]
                freq[where[inside]] = tf[inside]
            n_hit = df[tok]
            idf = math.log((n_rows - n_hit + 0.5) / (n_hit + 0.5))
            if idf <= 0.0:
                idf = 1e-6
            score = score + idf * ((freq * (K1 + 1.0)) / (freq + K1 * norm))
        return docs, -1.0 * score

    def info(self) -> dict[str, Any]:
        return {
            "built": self.built,
            "builds": self.builds,
            "rows": self.n_rows,
            "tokens": self.n_tokens,
            "terms": len(self._term_id),
            "slots": self._slot_doc.size,
            "tail": self._fwd_term.size - self._csr_entries,
            "unusable": self.unusable,
        }


def best_first(
    docs: NDArray[np.int64], scores: NDArray[np.float64], k: int
) -> list[tuple[int, float]]:
    """The ``k`` best of ``docs`` by ``scores`` (lowest first, ties by id) as (id, score):
    the order of FTS5's ``ORDER BY score, rowid LIMIT k``."""
    if k <= 0 or not len(docs):
        return []
    if k < len(docs):
        kth = np.partition(scores, k - 1)[k - 1]
        within = np.flatnonzero(scores <= kth)  # the k best, with every tie of the k-th
        docs, scores = docs[within], scores[within]
    order = np.lexsort((docs, scores))[:k]
    return list(zip(docs[order].tolist(), scores[order].tolist(), strict=True))


def journal(conn: Executor, memory_id: int) -> None:
    """Record that ``memory_id``'s row of the FTS5 table changed (inside the write)."""
    cur = conn.execute("INSERT INTO keyword_changes (memory_id) VALUES (?)", (int(memory_id),))
    seq = cur.lastrowid
    if seq is not None and seq % JOURNAL_PRUNE_EVERY == 0:
        conn.execute("DELETE FROM keyword_changes WHERE seq <= ?", (seq - JOURNAL_KEEP,))


__all__ = [
    "JOURNAL_KEEP",
    "best_first",
    "KeywordIndex",
    "ascii_tokens",
    "fts_averages",
    "fts_totals",
    "indexed_rows",
    "journal",
    "plain_unicode61",
    "unicode61_tokens",
]
