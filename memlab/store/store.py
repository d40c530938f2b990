"""MemoryStore: the store's operations over its database layer (:mod:`memlab.store.core`)."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from memlab.embed import Embedder
from memlab.gate import Candidate, Decision, Gate, JudgeResult
from memlab.keep import DEFAULT_KEEP
from memlab.models.fsrs6 import FSRS6, Rating
from memlab.revision import outdates
from memlab.secrets import SECRET_MODES, find_secrets, screen_query
from memlab.store import fusion, ingest, lifecycle, sweep, transfer
from memlab.store.budget import Budget
from memlab.store.core import StoreCore
from memlab.store.dynamics import Dynamics, days_between
from memlab.store.index import IndexFile, IndexOptions
from memlab.store.ingest import IngestMeta
from memlab.store.records import MEMORY_FIELDS, IngestResult, Memory, SearchHit
from memlab.store.relevance import SearchOptions
from memlab.store.schema import STATUSES, Durability
from memlab.store.validation import (
    MAX_CONTENT_BYTES,
    MAX_RESULTS,
    check_content,
    check_count,
    check_id,
    check_items,
    check_namespace,
    check_non_negative,
    check_now,
    check_number,
    check_optional_str,
    check_topics,
    check_unit,
)

if TYPE_CHECKING:
    from memlab.fit.access import AccessFit

#: The cosine from which search trusts :func:`memlab.revision.outdates` to flag a hit.
OUTDATED_AT = 0.45
#: Columns of :meth:`MemoryStore.versions`.
VERSION_COLUMNS = (
    "version memory_id content status created_at valid_from valid_until decision rule"
    " similarity current".split()
)


def _merge(
    a: list[tuple[int, float]], b: list[tuple[int, float]], n: int, *, lower_first: bool
) -> list[tuple[int, float]]:
    """One ranking from two: each memory at its best score, best first, top ``n``."""
    best: dict[int, float] = {}
    for m, v in [*a, *b]:
        if m not in best or (v < best[m] if lower_first else v > best[m]):
            best[m] = v
    return sorted(best.items(), key=lambda kv: (kv[1] if lower_first else -kv[1], kv[0]))[:n]


def _events_frame(rows: list[Any], columns: dict[str, str]) -> pd.DataFrame:
    """A frame of event or link rows (``columns``: column -> row key), ``data`` decoded."""
    frame = {c: [r[k] for r in rows] for c, k in columns.items()}
    frame["at"] = pd.to_datetime(frame["at"], unit="s", utc=True)
    if "grade" in frame:
        frame["grade"] = pd.array(frame["grade"], dtype="Int64")
    frame["data"] = [None if d is None else json.loads(d) for d in frame["data"]]
    return pd.DataFrame(frame)


class MemoryStore:
    """A persistent memory store in which the models decide what is strong and what fades.

    Parameters
    ----------
    path : str or Path
        SQLite file (created if absent; its vector index beside it) or ``":memory:"``.
    embedder : {"hashing", "fastembed", "fastembed:<model>"} or Embedder, optional
        How texts become vectors: by default the fastembed model the file was written with, else
        hashing; reopening with another raises :class:`EmbedderMismatchError`.
    clock : callable returning a tz-aware datetime, optional
        Time source of operations called without ``now=``; UTC by default.
    gate : Gate or callable, optional
        Prediction-error gate of ingest. Persisted with the store, as are the dynamics and the
        :attr:`budget`: a store opened without one runs the stored one. A callable is a judge
        (``Gate(judged_by=...)``) that runs over the stored gate's settings.
    namespace : str
        Hard partition of the file: no operation reads or changes a memory of another
        namespace (its ids are as absent as unknown ones). The gate, embedder, dynamics and
        indexes are the file's.
    secrets : {"redact", "reject", "allow"}
        Secret screening of ingested text (:mod:`memlab.secrets`).
    dynamics : Dynamics, optional
        FSRS-6 weights, dual-strength and heat parameters.
    search : SearchOptions, optional
        Candidate depth, weights, similarity floor and review policy of search.
    index : IndexOptions or {"annoy", "exact", "ivf"}
        The vector index (a kind for its defaults).
    durability : Durability, optional
        Lock wait, SQLite ``synchronous`` and the checks on opening.

    Notes
    -----
    Every operation runs in one SQLite transaction and takes an optional timezone-aware
    ``now=``. Threads and processes may share a store (docs/store.md, "What the store
    guarantees"); SQL runs through :attr:`core`.
    """

    def __init__(
        self,
        path: str | Path = ":memory:",
        embedder: str | Embedder | None = None,
        *,
        clock: Callable[[], datetime] | None = None,
        gate: Gate | Callable[[str, Sequence[Candidate]], JudgeResult] | None = None,
        namespace: str = "default",
        secrets: str = "redact",
        dynamics: Dynamics | None = None,
        search: SearchOptions | None = None,
        index: IndexOptions | str = "annoy",
        durability: Durability | None = None,
    ) -> None:
        check_namespace(namespace)  # before any file is opened
        if secrets not in SECRET_MODES:
            raise ValueError(f"secrets must be one of {SECRET_MODES}, got {secrets!r}")
        if clock is not None and not callable(clock):
            raise TypeError("clock must be a callable returning a timezone-aware datetime")
        index = IndexOptions(kind=index) if isinstance(index, str) else index
        if gate is not None and not isinstance(gate, Gate) and not callable(gate):
            raise TypeError(f"gate must be a Gate or a judge, got {type(gate).__name__}")
        for name, value, kind in (
            ("search", search, SearchOptions),
            ("index", index, IndexOptions),
            ("durability", durability, Durability),
        ):
            if value is not None and not isinstance(value, kind):
                raise TypeError(f"{name} must be a {kind.__name__}, got {type(value).__name__}")
        #: The search options (:class:`SearchOptions`).
        self.options = search or SearchOptions()
        self.secrets = secrets
        if secrets != "allow":
            # load the detectors now, in one thread: the first screening may otherwise run
            # their (lazy) imports in several threads at once
            find_secrets("password = Warm-up-1234567890")
        #: The database layer: connection, transactions (``read()``, ``write()``), ``execute``.
        self.core = StoreCore(
            path,
            embedder,
            clock=clock,
            dynamics=dynamics,
            namespace=namespace,
            index=index,
            durability=durability or Durability(),
        )
        #: The namespace, file, embedder and vector index of the store (:attr:`core`'s).
        self.namespace, self.path = self.core.namespace, self.core.path
        self.embedder: Embedder = self.core.embedder
        self.index: IndexFile = self.core.index
        stored_dynamics = self.core.meta("dynamics")
        if dynamics is None and stored_dynamics is not None:
            self.core.set_dynamics(Dynamics.from_dict(json.loads(stored_dynamics)))
        else:
            self.dynamics = self.core.dynamics
        stored = self.core.meta("gate")
        if isinstance(gate, Gate) or stored is None:
            self.gate = gate if isinstance(gate, Gate) else Gate(judged_by=gate)
        elif gate is None:  # opening a store does not write to it
            self._gate = Gate.from_dict(json.loads(stored))
        else:
            self.gate = Gate.from_dict(json.loads(stored), judged_by=gate)
        raw = json.loads(self.core.meta("budget") or "null")
        self._budget = None if raw is None else Budget.from_dict(raw)

    def _persist(self, key: str, value: Any) -> None:
        with self.core.write():
            self.core.set_meta(key, json.dumps(value))

    @property
    def gate(self) -> Gate:
        """The gate ingest runs, persisted with the store."""
        return self._gate

    @gate.setter
    def gate(self, gate: Gate) -> None:
        if not isinstance(gate, Gate):
            raise TypeError(f"gate must be a memlab.gate.Gate, got {type(gate).__name__}")
        self._persist("gate", gate.to_dict())
        self._gate = gate

    @property
    def budget(self) -> Budget | None:
        """The :class:`Budget` :meth:`forget_sweep` applies by default (None: the heat law)."""
        return self._budget

    @budget.setter
    def budget(self, budget: Budget | None) -> None:
        if budget is not None and not isinstance(budget, Budget):
            raise TypeError(
                f"budget must be a memlab.store.Budget or None, got {type(budget).__name__}"
            )
        self._persist("budget", None if budget is None else budget.to_dict())
        self._budget = budget

    @property
    def dynamics(self) -> Dynamics:
        """FSRS-6, dual-strength and heat parameters, persisted with the store."""
        return self.core.dynamics

    @dynamics.setter
    def dynamics(self, dynamics: Dynamics) -> None:
        if not isinstance(dynamics, Dynamics):
            raise TypeError(f"dynamics must be a Dynamics, got {type(dynamics).__name__}")
        self._persist("dynamics", dynamics.to_dict())
        self.core.set_dynamics(dynamics)

    @property
    def clock(self) -> Callable[[], datetime] | None:
        """The time source of operations called without ``now=`` (None: UTC wall clock)."""
        return self.core.clock

    @clock.setter
    def clock(self, clock: Callable[[], datetime] | None) -> None:
        if clock is not None and not callable(clock):
            raise TypeError("clock must be a callable returning a timezone-aware datetime")
        self.core.clock = clock

    def _at(self, now: datetime | None) -> float:
        return self.core.now(now).timestamp()

    # ------------------------------------------------------------------ setup
    def close(self) -> None:
        """Close the database and unload the index."""
        self.core.close()

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        with self.core.read():
            return self.core.count()

    def __repr__(self) -> str:
        name = self.embedder.name
        return f"MemoryStore(path={self.path!r}, embedder={name!r}, memories={len(self)})"

    # ------------------------------------------------------------------ reading
    def get(self, memory_id: int) -> Memory:
        """The memory with this id (``KeyError`` if there is none)."""
        memory_id = check_id(memory_id)
        with self.core.read():
            return Memory.from_row(self.core.row(memory_id))

    def _select(self, include_archived: bool) -> list[Any]:
        with self.core.read():
            return self.core.select("" if include_archived else "status = 'active'")

    def memories(self, *, include_archived: bool = True) -> list[Memory]:
        """Every memory of the namespace (only the active ones unless ``include_archived``)."""
        return [Memory.from_row(r) for r in self._select(include_archived)]

    def history(self, memory_id: int) -> pd.DataFrame:
        """Events of one memory, oldest first: at, kind, grade, text, data."""
        memory_id = check_id(memory_id)
        with self.core.read():
            self.core.row(memory_id)
            rows = self.core.events(memory_id)
        keys = ("event_id", "at", "kind", "grade", "text", "data")
        return _events_frame(rows, {c: "id" if c == "event_id" else c for c in keys})

    def to_dataframe(
        self, *, now: datetime | None = None, include_archived: bool = True
    ) -> pd.DataFrame:
        """One row per memory: stored fields and, at ``now``, retention, accessibility, state."""
        at = self._at(now)
        rows = self._select(include_archived)
        df = pd.DataFrame([tuple(r[c] for c in MEMORY_FIELDS) for r in rows], columns=MEMORY_FIELDS)
        df["topics"] = [json.loads(t) for t in df["topics"]]
        for c in ("created_at", "updated_at", "last_access", "valid_from", "valid_until"):
            df[c] = pd.to_datetime(df[c].astype(float), unit="s", utc=True)
        t = days_between(at, [r["last_access"] for r in rows])
        r, acc, state = self.dynamics.accessibility(
            t, df["stability"], df["retrieval"], df["storage"]
        )
        return df.assign(
            elapsed_days=t, retention=r, accessibility=acc, state=pd.Series(state, dtype=object)
        )

    def stats(self) -> dict[str, Any]:
        """Counts by status and layer, events, index state, embedder and schema version."""
        c = self.core
        with c.read():
            ns = (c.namespace,)
            where = " FROM memories WHERE namespace = ?"
            by_status = dict(c.execute(f"SELECT status, COUNT(*){where} GROUP BY status", ns))
            by_layer = dict(c.execute(f"SELECT layer, COUNT(*){where} GROUP BY layer", ns))
            by_event = dict(
                c.execute(
                    "SELECT e.kind, COUNT(*) FROM events e JOIN memories m ON m.id = e.memory_id"
                    " WHERE m.namespace = ? GROUP BY e.kind",
                    ns,
                )
            )
            return {
                "memories": c.count(),
                "by_status": {s: int(by_status.get(s, 0)) for s in STATUSES},
                "by_layer": by_layer,
                "events": by_event,
                "embedder": self.embedder.name,
                "dim": c.dim,
                "schema_version": c.schema_version(),
                "index": c.index.info(),
                "gate": self.gate.to_dict(),
            }

    # ------------------------------------------------------------------ ingest
    def ingest(
        self, content: str, *, now: datetime | None = None, **meta: Unpack[IngestMeta]
    ) -> IngestResult:
        """Store one text, gated against the nearest active memories of the same project.

        The gate (:meth:`memlab.gate.Gate.judge`) decides, losslessly: REINFORCE (an access,
        the text kept as an observation), SUPERSEDE (a new memory, the old one a version; also
        ``supersedes=id``), RELATED (a new memory linked to its neighbour) or CREATE.
        ``importance`` is in [0, 1] or ``"auto"`` (from content, below protection); ``context``
        is stored as ``"<text> (context: <context>)"`` but is not ``Memory.own_text``. Secrets
        are screened first.
        """
        return self.ingest_many([content], now=now, **meta)[0]

    def ingest_many(
        self,
        items: Iterable[str | Mapping[str, Any]],
        *,
        now: datetime | None = None,
        batch_size: int = 100,
        progress: bool = False,
        **defaults: Unpack[IngestMeta],
    ) -> list[IngestResult]:
        """Ingest many texts in order, each gated as by :meth:`ingest`, one transaction per
        batch of ``batch_size``.

        ``items`` are strings or mappings with ``content`` and any keys of
        :class:`~memlab.store.ingest.IngestMeta` (overriding ``defaults``). Every item is checked
        and screened before anything is written; an error rolls back its batch only.
        """
        from memlab.progress import progress as progress_bar

        core = self.core
        if isinstance(items, (str, bytes, Mapping)):
            check_items(items)  # raises the TypeError naming the fix
        at = self._at(now)
        batch_size = check_count(batch_size, "batch_size")
        prepared = ingest.prepare(items, ingest.ingest_meta(defaults), self.secrets)
        ingest.check_supersedes(core, prepared, at)
        results: list[IngestResult] = []
        if not prepared:
            return results
        with progress_bar(total=len(prepared), desc="ingest", unit="text", enabled=progress) as bar:
            for i in range(0, len(prepared), batch_size):
                chunk = prepared[i : i + batch_size]
                vectors = core.embed([p.text for p in chunk])  # outside the transaction
                with core.write():
                    core.index.refresh(core)
                    results += ingest.ingest_chunk(core, self.gate, chunk, vectors, at)
                bar.update(len(chunk))
                core.maintain_index()
        return results

    # ------------------------------------------------------------------ search
    def search(
        self,
        query: str,
        k: int = 10,
        *,
        project: str | None = None,
        topics: Iterable[str] = (),
        mark_accessed: bool = True,
        include_archived: bool = False,
        include_history: bool = False,
        now: datetime | None = None,
        as_of: datetime | None = None,
        query_vector: NDArray[np.floating] | None = None,
        time_weight: float | None = None,
        topic_weight: float | None = None,
        project_weight: float | None = None,
    ) -> list[SearchHit]:
        """Hybrid search: BM25 and vector rankings fused by RRF, weighted by retention and context.

        ``score = rrf * time_factor * context`` over the top ``max(candidates, 5 k)`` of each
        ranking (:mod:`memlab.store.fusion`): ``time_factor`` follows the FSRS-6 retention now,
        ``context`` rewards a memory of ``project`` and the share of ``topics`` it carries
        (they re-rank, not filter). The hits that clear the relevance test (``options.review``)
        get an FSRS-6 review and an access event unless ``mark_accessed=False``.

        ``include_archived`` finds superseded and archived memories, ``include_history`` also
        every text of every memory's history; ``query_vector`` skips embedding the query. Among
        the top ``k`` the newer of two versions of one fact ranks just ahead of the older
        (:func:`~memlab.store.fusion.current_first`). ``as_of`` keeps the memories valid then
        (``valid_from <= as_of < valid_until``), superseded ones included, and ones archived
        or consolidated after ``as_of``. docs/store.md explains each step.
        """
        options = self.options.override(time_weight, topic_weight, project_weight)
        check_content(query, "query")
        k = check_count(k, "k", maximum=MAX_RESULTS)
        project = check_optional_str(project, "project")
        topic_set = set(check_topics(topics))
        at = self._at(now)
        then = None if as_of is None else check_now(as_of, "as_of").timestamp()
        core = self.core
        qvec = core.query_vector(query, query_vector)  # outside the lock
        with core.read():
            keyword, vector = self._rankings(
                options,
                query,
                qvec,
                max(options.candidates, 5 * k),
                include_archived,
                include_history or then is not None,
            )
            if then is not None:
                keyword, vector = self._valid_at(then, include_archived, keyword, vector)
            keyword_rank = {mid: r for r, (mid, _) in enumerate(keyword, start=1)}
            vector_rank = {mid: r for r, (mid, _) in enumerate(vector, start=1)}
            similarity = dict(vector)
            rows = core.rows(
                set(keyword_rank) | set(vector_rank), "id, project, topics, stability, last_access"
            )
            ids = sorted(rows)
            if not ids:
                return []
            elapsed = days_between(at, [rows[m]["last_access"] for m in ids])
            retention = np.clip(
                self.dynamics.retention(elapsed, [rows[m]["stability"] for m in ids]), 0.0, 1.0
            )
            shared = [len(topic_set.intersection(json.loads(rows[m]["topics"]))) for m in ids]
            overlap = np.array(shared, dtype=float) / max(len(topic_set), 1)
            pmatch = np.array([project is not None and rows[m]["project"] == project for m in ids])
            score, rrf, time_factor, context = fusion.search_scores(
                [keyword_rank.get(m, np.inf) for m in ids],
                [vector_rank.get(m, np.inf) for m in ids],
                retention,
                time_weight=options.time_weight,
                topic_overlap=overlap,
                topic_weight=options.topic_weight,
                project_match=pmatch,
                project_weight=options.project_weight,
            )
            top = fusion.top_k(score, ids, k)
            pointers, order = self._versions_among([ids[j] for j in top], options.versions_at)
            position = {m: j for j, m in enumerate(ids)}
            top = [position[m] for m in order]
            full = {m: Memory.from_row(r) for m, r in core.rows(order).items()}
        hits = [
            SearchHit(
                memory=full[ids[j]],
                score=float(score[j]),
                rrf=float(rrf[j]),
                keyword_rank=keyword_rank.get(ids[j]),
                vector_rank=vector_rank.get(ids[j]),
                similarity=similarity.get(ids[j]),
                retention=float(retention[j]),
                time_factor=float(time_factor[j]),
                project_match=bool(pmatch[j]),
                topic_overlap=float(overlap[j]),
                context=float(context[j]),
                **pointers.get(ids[j], {}),
            )
            for j in top
        ]
        grades = options.review.grades(hits)
        if mark_accessed and any(g is not None for g in grades):
            kept_query = screen_query(query[:200], self.secrets)
            with core.write():  # short: k rows reviewed, after the ranking read has ended
                current = core.rows([h.memory.id for h in hits])
                for rank, (hit, grade) in enumerate(zip(hits, grades, strict=True), start=1):
                    row = current.get(hit.memory.id)
                    # a memory created after ``now`` (a simulated clock behind it) has no
                    # access to record then
                    if row is not None and grade is not None and row["created_at"] <= at:
                        core.review(
                            row, at, source="search", grade=grade, query=kept_query, rank=rank
                        )
        return hits

    def _valid_at(
        self, then: float, include_archived: bool, *rankings: list[tuple[int, float]]
    ) -> tuple[list[tuple[int, float]], ...]:
        """The rankings without the memories not valid at ``then`` (nor ones archived by
        ``then`` unless ``include_archived``: one archived or consolidated later was in search
        then)."""
        ids = {m for r in rankings for m, _ in r}
        rows = self.core.rows(ids, "id, status, valid_from, valid_until")
        archived = [m for m, r in rows.items() if r["status"] == "archived"]
        archived_at: dict[int, float] = {}
        if archived and not include_archived:
            archived_at = dict(
                self.core.execute(
                    "SELECT memory_id, MAX(at) FROM events WHERE kind IN ('archive',"
                    f" 'consolidation') AND memory_id IN ({','.join('?' * len(archived))})"
                    " GROUP BY memory_id",
                    archived,
                ).fetchall()
            )
        valid = {
            m
            for m, r in rows.items()
            if r["valid_from"] <= then
            and (r["valid_until"] is None or then < r["valid_until"])
            and (
                include_archived
                or r["status"] != "archived"
                or then < archived_at.get(m, float("-inf"))
            )
        }
        return tuple([(m, v) for m, v in r if m in valid] for r in rankings)

    def _versions_among(
        self, ids: list[int], versions_at: float
    ) -> tuple[dict[int, dict[str, int]], list[int]]:
        """The hits ``ids`` with the newer version of a fact first, and each hit's pointers:
        ``superseded_by`` (its successor), ``possibly_outdated_by`` (a newer linked memory or
        version among the hits that the gate's judge, or else :func:`memlab.revision.outdates`,
        finds revises it)."""
        core = self.core
        links = core.execute(
            f"SELECT source, target, kind FROM links WHERE source IN ({','.join('?' * len(ids))})"
            f" OR target IN ({','.join('?' * len(ids))})",
            [*ids, *ids],
        ).fetchall()
        pairs = {(int(a), int(b)) for a, b, _ in links}
        rows = core.rows(set(ids) | {m for pair in pairs for m in pair})
        vec = {m: core.vector_of(r) for m, r in rows.items()}
        pairs |= {
            (a, b)
            for i, a in enumerate(ids)
            for b in ids[i + 1 :]
            if float(vec[a] @ vec[b]) >= versions_at
        }
        pairs = {  # facts stated at the same time are not versions of each other in time
            (a, b)
            for a, b in pairs
            if a in rows and b in rows and rows[a]["valid_from"] != rows[b]["valid_from"]
        }

        def newer(a: int, b: int) -> bool:
            return (rows[a]["valid_from"], a) > (rows[b]["valid_from"], b)

        pointers: dict[int, dict[str, int]] = {}
        for a, b, kind in links:
            if kind == "supersedes" and b in ids:
                pointers.setdefault(b, {})["superseded_by"] = a
        for a, b in sorted(pairs):
            new, old = (a, b) if newer(a, b) else (b, a)
            if old not in ids or new not in ids or pointers.get(old):  # both hits, old unmarked
                continue
            sim = float(vec[new] @ vec[old])
            r = rows[old]
            verdict = self.gate.judge(
                rows[new]["content"],
                [Candidate(sim, r["content"], r["entity"], old)],
                entity=rows[new]["entity"],
            )
            offline = not verdict.rule.startswith("judge:")  # a judge's answer stands
            maybe = offline and sim >= OUTDATED_AT and outdates(rows[new]["content"], r["content"])
            if verdict.decision is Decision.SUPERSEDE or maybe:
                pointers.setdefault(old, {})["possibly_outdated_by"] = new
        return pointers, fusion.current_first(ids, pairs, newer)

    def _rankings(
        self,
        options: SearchOptions,
        query: str,
        qvec: NDArray[np.float32],
        n: int,
        include_archived: bool,
        include_history: bool,
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        include_history = include_history or include_archived
        statuses = STATUSES if include_history else ("active",)
        core = self.core
        with core.read():
            keyword = core.keyword_search(
                query,
                n,
                statuses=statuses,
                max_df=options.keyword_max_df,
                max_postings=options.keyword_max_postings,
            )
            floor = options.min_similarity
            vector = core.vector_search(qvec, n, statuses=statuses, min_similarity=floor)
            if include_history:
                past_keyword = core.history_keyword_search(query, n)
                keyword = _merge(keyword, past_keyword, n, lower_first=True)
                past = [(m, c) for m, c in core.history_vector_search(qvec, n) if c > floor]
                vector = _merge(vector, past, n, lower_first=False)
        return keyword, vector

    def rankings(
        self,
        query: str,
        k: int = 50,
        *,
        query_vector: NDArray[np.floating] | None = None,
        include_archived: bool = False,
        include_history: bool = False,
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        """The two rankings :meth:`search` fuses, unfused, best first; reads only.

        Returns ``(keyword, vector)``: up to ``k`` ``(memory id, bm25)`` (lower is better) and
        ``(memory id, cosine)`` (above ``min_similarity``); with ``include_history`` a memory
        ranks at its best match among its content and its history's texts.
        """
        check_content(query, "query")
        k = check_count(k, "k", maximum=MAX_RESULTS)
        qvec = self.core.query_vector(query, query_vector)
        return self._rankings(self.options, query, qvec, k, include_archived, include_history)

    def access(
        self, memory_id: int, grade: int = Rating.Good, *, now: datetime | None = None
    ) -> Memory:
        """Record one access of a memory, as a search hit does: an FSRS-6 review with
        ``grade`` (1-4, :class:`~memlab.models.fsrs6.Rating`), a dual-strength access and an
        access event. Returns the memory after."""
        return self._record_access(memory_id, grade, now, "api")

    def feedback(
        self, memory_id: int, grade: int = Rating.Good, *, now: datetime | None = None
    ) -> Memory:
        """Record an explicit use of a memory by the agent, as :meth:`access` with source
        ``"feedback"``: the keep scores (:mod:`memlab.keep`) count it as a full use where a
        search return counts 0.1."""
        return self._record_access(memory_id, grade, now, "feedback")

    def _record_access(
        self, memory_id: int, grade: int, now: datetime | None, source: str
    ) -> Memory:
        memory_id = check_id(memory_id)
        if (
            isinstance(grade, bool)
            or not isinstance(grade, (int, np.integer))
            or not 1 <= grade <= 4
        ):
            raise ValueError(f"grade must be an integer 1-4, got {grade!r}")
        at = self._at(now)
        with self.core.write():
            row = self._row_at(memory_id, at)
            self.core.review(row, at, source=source, grade=Rating(int(grade)))
        return self.get(memory_id)

    def _row_at(self, memory_id: int, at: float) -> Any:
        """The memory's row; an operation at ``at`` before its creation is refused."""
        row = self.core.row(memory_id)
        if at < row["created_at"]:
            when = datetime.fromtimestamp(at, UTC).isoformat()
            created = Memory.from_row(row).created_at.isoformat()
            raise ValueError(f"now ({when}) is before memory {memory_id} was created ({created})")
        return row

    # ------------------------------------------------------------------ fitting
    def access_log(self) -> pd.DataFrame:
        """Creations and accesses of this namespace's memories, oldest first: ``memory_id,
        event_id, at, kind`` (``create`` / ``access``), ``source`` (of an access) and ``grade``
        (NA at creation)."""
        with self.core.read():
            rows = self.core.execute(
                "SELECT e.memory_id, e.id, e.at, e.kind, json_extract(e.data, '$.source'), e.grade"
                " FROM events e JOIN memories m ON m.id = e.memory_id"
                " WHERE m.namespace = ? AND e.kind IN ('create', 'access') ORDER BY e.at, e.id",
                (self.namespace,),
            ).fetchall()
        columns = ["memory_id", "event_id", "at", "kind", "source", "grade"]
        frame = pd.DataFrame([tuple(r) for r in rows], columns=columns)
        frame = frame.astype({"memory_id": "int64", "event_id": "int64"})
        frame["at"] = pd.to_datetime(frame["at"].astype(float), unit="s", utc=True)
        frame["source"] = frame["source"].astype(object).where(frame["kind"] == "access", None)
        frame["grade"] = pd.array(frame["grade"], dtype="Int64")
        return frame

    def fit(
        self,
        *,
        apply: bool | str = "if_better",
        min_reviews: int = 100,
        min_lapses: int = 5,
        l2: float | str = "auto",
        holdout: float = 0.2,
        sources: Iterable[str] | None = None,
    ) -> AccessFit:
        """Fit FSRS-6 to this namespace's access log (:mod:`memlab.fit.access`).

        Scored by log loss on the last ``holdout`` of reviews; ``apply="if_better"`` persists
        the weights fitted on every review when they beat the current ones (``True``: always,
        ``False``: never). Too few reviews or lapses raise ``NotEnoughReviewsError``.
        """
        if apply not in (True, False, "if_better") or not isinstance(apply, (bool, str)):
            raise TypeError(f"apply must be True, False or 'if_better', got {apply!r}")
        from memlab.fit.access import fit_access_log  # memlab.fit sits above the store

        current = self.dynamics
        result = fit_access_log(
            self.access_log(),
            current.fsrs,
            sources=sources,
            min_reviews=min_reviews,
            min_lapses=min_lapses,
            l2=l2,
            holdout=holdout,
        )
        if apply is True or (apply == "if_better" and result.improved):
            fsrs = FSRS6(tuple(result.weights))
            heat = current.heat  # keeps its bands; reads stability against the new w2
            if heat.reference_stability == current.fsrs.weights[2]:
                heat = replace(heat, reference_stability=fsrs.weights[2])
            self.dynamics = replace(current, fsrs=fsrs, heat=heat)
            result.applied = True
        return result

    # ------------------------------------------------------------------ versions
    def _chain(self, memory_id: int) -> list[int]:
        """Ids of the memories ``supersedes`` links to ``memory_id`` (itself too), oldest first."""
        self.core.row(memory_id)
        seen, todo = {memory_id}, [memory_id]
        while todo:
            for r in self.core.links(todo.pop()):
                for other in (int(r["source"]), int(r["target"])):
                    if r["kind"] == "supersedes" and other not in seen:
                        seen.add(other)
                        todo.append(other)
        rows = self.core.rows(seen, "id, created_at")
        return sorted(rows, key=lambda m: (rows[m]["created_at"], m))

    def versions(self, memory_id: int) -> pd.DataFrame:
        """The versions of ``memory_id``'s fact, oldest first (:data:`VERSION_COLUMNS`), with
        the gate's decision, rule and similarity that made each one."""
        memory_id = check_id(memory_id)
        out = []
        with self.core.read():
            ids = self._chain(memory_id)
            rows = self.core.rows(ids)
            for v, m in enumerate(ids, start=1):
                mem = Memory.from_row(rows[m])
                created = self.core.events(m, ("create",))
                why = json.loads(created[0]["data"] or "{}") if created else {}
                fields = [mem.content, mem.status, mem.created_at, mem.valid_from, mem.valid_until]
                gate = [why.get(k) for k in ("decision", "rule", "similarity")]
                out.append([v, m, *fields, *gate, mem.status == "active"])
        return pd.DataFrame(out, columns=VERSION_COLUMNS)

    def links(self, memory_id: int) -> pd.DataFrame:
        """Links from and to a memory: source, target, kind, at, data."""
        memory_id = check_id(memory_id)
        with self.core.read():
            self.core.row(memory_id)
            rows = self.core.links(memory_id)
        return _events_frame(rows, {c: c for c in ("source", "target", "kind", "at", "data")})

    def rebuild_index(self) -> None:
        """Rebuild the vector index from SQLite (a new file renamed into place)."""
        with self.core.read():
            self.core.index.rebuild(self.core)

    # ------------------------------------------------------------------ lifecycle
    def importance(
        self,
        memory_id: int,
        hours_back: float = 9.0,
        hours_forward: float = 2.0,
        *,
        level: float = 0.95,
        gain: float = 0.5,
        now: datetime | None = None,
        event_type: str | None = None,
    ) -> pd.DataFrame:
        """Flag a memory important and strengthen the memories encoded around it (synaptic tagging).

        Its importance rises to ``level``; the memories encoded from ``hours_back`` before to
        ``hours_forward`` after it, later arrivals included, are tagged
        (:mod:`memlab.store.lifecycle`). Returns the tagged (id, dt_hours, weight); flagging
        the same (``memory_id``, ``event_type``) again tags nobody.
        """
        memory_id = check_id(memory_id)
        event_type = check_optional_str(event_type, "event_type")
        hours_back = check_non_negative(hours_back, "hours_back")
        hours_forward = check_non_negative(hours_forward, "hours_forward")
        level = check_unit(level, "level")
        gain = check_unit(gain, "gain")
        at = self._at(now)
        core = self.core
        out = []
        with core.write():
            row = self._row_at(memory_id, at)
            center = float(row["created_at"])
            repeated = any(
                json.loads(e["data"] or "{}").get("event_type") == event_type
                for e in core.events(memory_id, ("importance",))
            )
            core.execute(
                "UPDATE memories SET importance = MAX(importance, ?), importance_auto = 0"
                " WHERE id = ?",
                (level, memory_id),
            )
            data = {"importance_before": row["importance"], "level": level}
            data |= {"hours_back": hours_back, "hours_forward": hours_forward}
            data |= {"event_type": event_type, "repeated": repeated}
            core.event(memory_id, at, "importance", data=data)
            if not repeated:
                lo, hi = center - hours_back * 3600.0, center + hours_forward * 3600.0
                rows = core.select(
                    "created_at BETWEEN ? AND ? AND id != ? AND status = 'active'",
                    (lo, min(hi, at), memory_id),  # the memories that exist at ``at``
                )
                dt = (np.array([r["created_at"] for r in rows]) - center) / 3600.0
                weights = lifecycle.tag_weight(dt, hours_back, hours_forward)
                for r, w, d in zip(rows, weights, dt, strict=True):
                    if w > 0:
                        lifecycle.boost(core, r, float(w), gain, at, memory_id)
                        out.append({"id": int(r["id"]), "dt_hours": float(d), "weight": float(w)})
                if at < hi and hours_forward > 0:
                    core.execute(
                        "INSERT INTO pending_tags (source_id, center, until, hours_forward, gain)"
                        " VALUES (?, ?, ?, ?, ?)",
                        (memory_id, center, hi, hours_forward, gain),
                    )
        return pd.DataFrame(out, columns=["id", "dt_hours", "weight"])

    def forget_sweep(
        self,
        *,
        now: datetime | None = None,
        dry_run: bool = True,
        keep: float | int | None = None,
        keep_by: str | None = None,
        seed: int = 0,
    ) -> pd.DataFrame:
        """Heat, band, risk, protection, keep score, action and state of each memory active at
        ``now`` (:data:`~memlab.store.sweep.SWEEP_COLUMNS`); applies the actions unless ``dry_run``.

        ``keep`` and ``keep_by`` make a :class:`Budget` (default: :attr:`budget`): the best
        ``keep`` stay, the rest are archived. Without one the heat law acts: ``compress`` keeps
        the leading sentences (the full text a ``version`` event), ``drop`` archives. Protected
        memories are always kept. ``seed`` seeds the ``random`` keep score.
        """
        budget = self._sweep_budget(keep, keep_by)
        if not isinstance(dry_run, bool):
            raise TypeError("dry_run must be True or False")
        seed = check_number(seed, "seed", integer=True)
        at = self._at(now)
        core = self.core
        # applying: no other writer may change a row between its scoring and its compression
        with core.read() if dry_run else core.write():
            rows = core.select("status = 'active' AND created_at <= ?", (at,))
            df = sweep.assess(core, rows, at, budget, seed)
            for i, r in enumerate(rows if not dry_run else []):
                action, memory_id = df.at[i, "action"], int(r["id"])
                if df.at[i, "protected"] or action == "keep":
                    continue
                if action == "compress":
                    short = lifecycle.compress_text(r["content"])
                    if short == r["content"]:
                        continue
                    data = {"reason": "compress", "risk": float(df.at[i, "risk"])}
                    event_id = core.event(memory_id, at, "version", text=r["content"], data=data)
                    core.add_history(event_id, memory_id, r["content"], core.vector_of(r))
                    core.set_content(memory_id, short, None, at)
                else:  # drop
                    data = {"reason": "forget_sweep drop", "risk": float(df.at[i, "risk"])}
                    if budget is not None:
                        data |= {"reason": "budget", "keep_by": budget.keep_by}
                        data |= {"keep_score": float(df.at[i, "keep_score"]), "keep": budget.keep}
                    core.update(memory_id, status="archived")
                    core.event(memory_id, at, "archive", data={"status_before": "active", **data})
                df.at[i, "applied"] = True
        return df

    def _sweep_budget(self, keep: float | int | None, keep_by: str | None) -> Budget | None:
        if keep is None:
            if keep_by is None:
                return self.budget
            if self.budget is None:
                raise ValueError("keep_by needs keep= (or a store budget): how many to keep")
            return Budget(self.budget.keep, keep_by)
        default_by = self.budget.keep_by if self.budget is not None else DEFAULT_KEEP
        return Budget(keep, default_by if keep_by is None else keep_by)

    def consolidate(
        self, *, now: datetime | None = None, min_group: int = 2, max_sentences: int = 3
    ) -> list[int]:
        """Merge cold and frozen unprotected memories by (entity, layer) into learning-layer
        summaries of their ``max_sentences`` most central sentences; returns their ids.

        Only members whose every sentence is in the summary merge (at least ``min_group`` of a
        group): they are archived, ``consolidated_into`` the summary; the others stay active.
        """
        min_group = check_count(min_group, "min_group")
        max_sentences = check_count(max_sentences, "max_sentences")
        at = self._at(now)
        core = self.core
        created: list[int] = []
        with core.write():  # no other writer between the read of a member and its archiving
            rows = core.select("status = 'active' AND entity IS NOT NULL")
            df = sweep.assess(core, rows, at, None)
            groups: dict[tuple[str, str], list[Any]] = defaultdict(list)
            for r, band, protected in zip(rows, df["band"], df["protected"], strict=True):
                if band in ("cold", "frozen") and not protected:
                    groups[(r["entity"], r["layer"])].append(r)
            for (entity, _layer), members in sorted(groups.items()):
                if len(members) < min_group:
                    continue
                summary, members = lifecycle.summary(core, members, max_sentences)
                if len(members) < min_group or len(summary.encode()) > MAX_CONTENT_BYTES:
                    continue
                projects = {m["project"] for m in members}
                meta = {
                    "project": projects.pop() if len(projects) == 1 else None,
                    "topics": list(
                        dict.fromkeys(t for m in members for t in json.loads(m["topics"]))
                    ),
                    "layer": "learning",
                    "entity": entity,
                    "altitude": Counter(m["altitude"] for m in members).most_common(1)[0][0],
                    "importance": max(float(m["importance"]) for m in members),
                }
                new_id = core.create(summary, meta, core.embed([summary])[0], at)
                ids = [m["id"] for m in members]
                core.event(new_id, at, "consolidation", data={"members": ids})
                for m in members:
                    core.update(m["id"], status="archived", consolidated_into=new_id)
                    core.event(m["id"], at, "consolidation", data={"summary_id": new_id})
                created.append(new_id)
        return created

    def purge(self, memory_id: int) -> list[int]:
        """Delete a memory and its :meth:`versions` for good, with every text they left (the
        only hard delete; docs/store.md, "What the store guarantees"); returns the purged ids.
        """
        memory_id = check_id(memory_id)
        with self.core.write():
            ids = self._chain(memory_id)
            self.core.purge(ids)
        with self.core.read():
            self.core.index.save(self.core)
        self.core.checkpoint()
        return ids

    def archive(self, memory_id: int, *, now: datetime | None = None) -> None:
        """Take an active memory out of default search (a superseded one stays superseded);
        :meth:`restore` undoes it."""
        self._set_status(memory_id, now, "archived", "archive", reason="archive")

    def restore(self, memory_id: int, *, now: datetime | None = None) -> None:
        """Make an archived (or superseded) memory active again."""
        self._set_status(memory_id, now, "active", "restore")

    def _set_status(
        self, memory_id: int, now: datetime | None, status: str, kind: str, **data: Any
    ) -> None:
        memory_id = check_id(memory_id)
        at = self._at(now)
        with self.core.write():
            before = self._row_at(memory_id, at)["status"]
            if before != status and (status == "active" or before == "active"):
                self.core.set_status(memory_id, status, at, kind, **data)

    # ------------------------------------------------------------------ export / import
    def export_jsonl(self, path: str | Path) -> int:
        """Write every memory with its full event history as JSON lines; returns the count.

        Written atomically; ``path`` may not be a SQLite database nor one of the store's files.
        """
        return transfer.export_jsonl(self.core, path)

    def import_jsonl(self, path: str | Path, *, now: datetime | None = None) -> dict[int, int]:
        """Add the memories of an export (re-embedded, events kept); returns old id -> new id."""
        return transfer.import_jsonl(self.core, path, now=now, secrets=self.secrets)
