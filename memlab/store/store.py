"""MemoryStore: the small public facade over the store core and its modules.

The core (:mod:`memlab.store.core`) owns the connection, transactions, clock, embedding, rows,
events and indexes; :mod:`~memlab.store.ingest`, :mod:`~memlab.store.search`,
:mod:`~memlab.store.lifecycle` and :mod:`~memlab.store.transfer` are functions over it. This
class holds the settings (gate, secrets mode, search weights) and delegates.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from memlab.embed import Embedder
from memlab.gate import Gate
from memlab.keep import DEFAULT_KEEP
from memlab.models.fsrs6 import Rating
from memlab.store import fitting, ingest, lifecycle, search, transfer, versions
from memlab.store.budget import Budget
from memlab.store.core import EmbedderMismatchError, StoreCore
from memlab.store.dynamics import Dynamics, days_between
from memlab.store.fusion import RRF_K
from memlab.store.index import IndexFile, IndexOptions
from memlab.store.ingest import IngestMeta
from memlab.store.records import MEMORY_FIELDS, IngestResult, Memory, SearchHit, to_datetime
from memlab.store.schema import SCHEMA_VERSION, STATUSES, Durability
from memlab.store.search import SearchOptions
from memlab.store.secrets import SECRET_MODES, find_secrets
from memlab.store.validation import (
    MAX_RESULTS,
    check_content,
    check_count,
    check_id,
    check_namespace,
)

if TYPE_CHECKING:
    from memlab.fit.access import AccessFit


class MemoryStore:
    """A persistent memory store in which the models decide what is strong and what fades.

    Parameters
    ----------
    path : str or Path
        SQLite file (created if absent) or ``":memory:"``; a file store keeps its vector index
        beside it (``<path>.<kind>`` and a manifest).
    embedder : {"hashing", "fastembed"} or Embedder
        How texts become vectors (a local model: ``FastEmbedEmbedder(model_path=...)``). Its
        name and dimension are recorded; reopening with another raises
        :class:`EmbedderMismatchError`.
    clock : callable returning a tz-aware datetime, optional
        Time source of operations called without ``now=`` (simulated time); UTC by default.
    gate : Gate, optional
        Prediction-error gate of ingest. Persisted with the store, as are the dynamics and the
        forgetting :attr:`budget`: a store opened without one runs the stored one.
    namespace : str
        Hard partition of the file this store sees (a non-empty name of at most 200
        characters). No search, gate decision, sweep, version, link, export or count reads or
        changes a memory of another namespace; an id of another namespace is as absent as one
        never given. The gate, embedder, dynamics and indexes are the file's.
    secrets : {"redact", "reject", "allow"}
        Secret screening of ingested text (:mod:`memlab.store.secrets`).
    dynamics : Dynamics, optional
        FSRS-6 weights, dual-strength and heat parameters.
    search : SearchOptions, optional
        Candidate depth, context weights, similarity floor, keyword cost limits and the review
        policy of search hits.
    index : IndexOptions or {"annoy", "exact", "ivf"}
        The vector index (:class:`~memlab.store.index.IndexOptions`; a kind for its defaults).
    durability : Durability, optional
        Lock wait, SQLite ``synchronous`` and the checks on opening.

    Notes
    -----
    Every operation runs in one SQLite transaction (WAL mode, so readers never block) and
    takes an optional ``now=`` (a timezone-aware datetime; naive ones raise ``ValueError``).
    A store may be shared by threads (they are serialised) and by processes; see the README's
    "What the store guarantees".
    """

    def __init__(
        self,
        path: str | Path = ":memory:",
        embedder: str | Embedder = "hashing",
        *,
        clock: Callable[[], datetime] | None = None,
        gate: Gate | None = None,
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
        if gate is not None and not isinstance(gate, Gate):
            raise TypeError(f"gate must be a memlab.gate.Gate, got {type(gate).__name__}")
        for name, value, kind in (
            ("search", search, SearchOptions),
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
        self.core = StoreCore(
            path,
            embedder,
            clock=clock,
            dynamics=dynamics,
            namespace=namespace,
            index=IndexOptions(kind=index) if isinstance(index, str) else index,
            durability=durability or Durability(),
        )
        stored_dynamics = self.core.meta("dynamics")
        if dynamics is None and stored_dynamics is not None:
            self.core.set_dynamics(Dynamics.from_dict(json.loads(stored_dynamics)))
        else:
            with self.core.write():
                self.core.set_meta("dynamics", json.dumps(self.core.dynamics.to_dict()))
        stored = self.core.meta("gate")
        if gate is None and stored is not None:
            self._gate = Gate.from_dict(json.loads(stored))
        else:
            self.gate = gate or Gate()
        raw = json.loads(self.core.meta("budget") or "null")
        self._budget = None if raw is None else Budget.from_dict(raw)

    @property
    def namespace(self) -> str:
        """The namespace (hard partition of the file) this store reads and writes."""
        return self.core.namespace

    @property
    def gate(self) -> Gate:
        """The gate ingest runs, persisted with the store (reopening keeps it)."""
        return self._gate

    @gate.setter
    def gate(self, gate: Gate) -> None:
        if not isinstance(gate, Gate):
            raise TypeError(f"gate must be a memlab.gate.Gate, got {type(gate).__name__}")
        with self.core.write():
            self.core.set_meta("gate", json.dumps(gate.to_dict()))
        self._gate = gate

    @property
    def budget(self) -> Budget | None:
        """The forgetting budget :meth:`forget_sweep` applies by default, e.g.
        ``Budget(keep=0.5)`` (None: the heat law decides); persisted with the store."""
        return self._budget

    @budget.setter
    def budget(self, budget: Budget | None) -> None:
        if budget is not None and not isinstance(budget, Budget):
            raise TypeError(
                f"budget must be a memlab.store.Budget or None, got {type(budget).__name__}"
            )
        with self.core.write():
            self.core.set_meta("budget", json.dumps(None if budget is None else budget.to_dict()))
        self._budget = budget

    @property
    def path(self) -> str:
        return self.core.path

    @property
    def embedder(self) -> Embedder:
        return self.core.embedder

    @property
    def dynamics(self) -> Dynamics:
        """FSRS-6 weights, dual-strength and heat constants, persisted with the store;
        assigning runs and stores new ones; :meth:`fit` fits them to the access log."""
        return self.core.dynamics

    @dynamics.setter
    def dynamics(self, dynamics: Dynamics) -> None:
        fitting.set_dynamics(self.core, dynamics)

    @property
    def clock(self) -> Callable[[], datetime] | None:
        return self.core.clock

    @clock.setter
    def clock(self, clock: Callable[[], datetime] | None) -> None:
        if clock is not None and not callable(clock):
            raise TypeError("clock must be a callable returning a timezone-aware datetime")
        self.core.clock = clock

    @property
    def index(self) -> IndexFile:
        return self.core.index

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

    def _repr_html_(self) -> str:
        s = self.stats()
        rows = "".join(
            f"<tr><th style='text-align:left'>{k}</th><td>{v}</td></tr>" for k, v in s.items()
        )
        return f"<b>MemoryStore</b><table>{rows}</table>"

    # ------------------------------------------------------------------ reading
    def get(self, memory_id: int) -> Memory:
        """The memory with this id (``KeyError`` if there is none)."""
        memory_id = check_id(memory_id)
        with self.core.read():
            return Memory.from_row(self.core.row(memory_id))

    def memories(self, *, include_archived: bool = True) -> list[Memory]:
        sql = (
            "SELECT * FROM memories WHERE namespace = ?"
            + ("" if include_archived else " AND status = 'active'")
            + " ORDER BY id"
        )
        with self.core.read():
            return [
                Memory.from_row(r)
                for r in self.core.execute(sql, (self.core.namespace,)).fetchall()
            ]

    def history(self, memory_id: int) -> pd.DataFrame:
        """Events of one memory, oldest first: at, kind, grade, text, data."""
        memory_id = check_id(memory_id)
        with self.core.read():
            self.core.row(memory_id)
            rows = self.core.events(memory_id)
        return pd.DataFrame(
            {
                "event_id": [r["id"] for r in rows],
                "at": pd.to_datetime([r["at"] for r in rows], unit="s", utc=True),
                "kind": [r["kind"] for r in rows],
                "grade": pd.array([r["grade"] for r in rows], dtype="Int64"),
                "text": [r["text"] for r in rows],
                "data": [None if r["data"] is None else json.loads(r["data"]) for r in rows],
            }
        )

    def to_dataframe(
        self, *, now: datetime | None = None, include_archived: bool = True
    ) -> pd.DataFrame:
        """One row per memory: stored fields and, at ``now``, retention, accessibility, state."""
        at = self.core.now(now).timestamp()
        sql = (
            "SELECT * FROM memories WHERE namespace = ?"
            + ("" if include_archived else " AND status = 'active'")
            + " ORDER BY id"
        )
        with self.core.read():
            rows = self.core.execute(sql, (self.core.namespace,)).fetchall()
        columns = list(MEMORY_FIELDS)
        df = pd.DataFrame([{c: r[c] for c in columns} for r in rows], columns=columns)
        df["topics"] = [json.loads(t) for t in df["topics"]]
        for c in ("created_at", "updated_at", "last_access"):
            df[c] = pd.to_datetime(df[c].astype(float), unit="s", utc=True)
        if len(df):
            t = days_between(at, [r["last_access"] for r in rows])
            r, acc, state = self.dynamics.accessibility(
                t, df["stability"], df["retrieval"], df["storage"]
            )
            df["elapsed_days"] = t
            df["retention"] = r
            df["accessibility"] = acc
            df["state"] = state
        else:
            for c in ("elapsed_days", "retention", "accessibility", "state"):
                df[c] = pd.Series(dtype=float if c != "state" else object)
        return df

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
                "dim": self.core.dim,
                "schema_version": c.schema_version(),
                "index": c.index.info(),
                "gate": self.gate.to_dict(),
            }

    # ------------------------------------------------------------------ ingest (ingest.py)
    def ingest(
        self, content: str, *, now: datetime | None = None, **meta: Unpack[IngestMeta]
    ) -> IngestResult:
        """Store one text, judged against the nearest active memories of the same project.

        The gate (:meth:`memlab.gate.Gate.judge`) compares the text with its nearest *active*
        memories in the same project scope (``project=None`` compares with memories without a
        project) and decides, losslessly (:mod:`memlab.store.ingest`):

        - REINFORCE, the same fact again: an access of the memory (FSRS-6 review with grade
          Good, dual-strength access), the text kept as an observation (found with
          ``include_history``), metadata merged upward (importance, protected layer, altitude,
          topics; never lowered);
        - SUPERSEDE, a revision (a changed number, date, price, version or negation, or a
          revision marker with a small change; or ``supersedes=memory_id``): a new memory; the
          old one ``superseded``, out of default search, one of :meth:`versions`;
        - RELATED, similar but another fact: a new memory linked to its neighbour;
        - CREATE, novel.

        ``importance`` is a number in [0, 1] (given: it wins) or ``"auto"`` (the default): an
        informativeness score of the text against the store's own corpus
        (:mod:`memlab.store.corpus`: IDF mass from the keyword index's document frequencies,
        rare words, names and numbers; below 0.8, so content alone never protects). The memory
        records which (``Memory.importance_auto``); sweeps and keep scores estimate an auto
        importance again against the corpus as it is then.

        ``context`` is text that helps find the memory but is not its own (e.g. the turns before
        a turn of a conversation): the content becomes ``"<text> (context: <context>)"``, all of
        it searched and embedded, while importance from content and the keep scores read the
        memory's own text (``Memory.own_text``).

        Secrets are screened first (``secrets=``).

        Returns
        -------
        IngestResult
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
        """Ingest many texts in order, each gated as by :meth:`ingest`; one transaction per
        batch of ``batch_size`` (other processes' writers wait at most one batch).

        ``items`` are strings or mappings with ``content`` and any keys of
        :class:`~memlab.store.ingest.IngestMeta`, overriding the keyword defaults; a call
        supersedes each memory at most once. Every item is validated (and screened) before
        anything is written: one bad item raises and stores nothing. Texts are embedded in
        batches of ``batch_size`` (no lock held while embedding); each is gated against the
        index, the exact tail and the texts before it. An error while writing a batch (a full
        disk, :class:`~memlab.store.schema.StoreBusy`) rolls that batch back and raises; the
        batches before it stay stored. ``progress=True`` shows a bar (:mod:`memlab.progress`).
        """
        return ingest.ingest_many(
            self.core,
            self.gate,
            items,
            ingest.ingest_meta(defaults),
            secrets=self.secrets,
            now=now,
            batch_size=batch_size,
            progress=progress,
        )

    @staticmethod
    def ingest_defaults() -> dict[str, Any]:
        """The metadata an ingest item takes when it does not say
        (:data:`memlab.store.ingest.INGEST_DEFAULTS`)."""
        return dict(ingest.INGEST_DEFAULTS)

    # ------------------------------------------------------------------ search (search.py)
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
        query_vector: NDArray[np.floating] | None = None,
        time_weight: float | None = None,
        topic_weight: float | None = None,
        project_weight: float | None = None,
    ) -> list[SearchHit]:
        """Hybrid search: BM25 and vector rankings fused by RRF, weighted by retention and context.

        ``rrf = sum over rankings of 1 / (60 + rank)`` (ranks from 1, top ``max(candidates, 5k)``
        of each ranking; :mod:`memlab.store.fusion`). The score is ``rrf * time_factor * context``
        with ``time_factor = (1 - time_weight) + time_weight * R`` (R the FSRS-6 retention now) and
        ``context = 1 + project_weight * [memory.project == project] + topic_weight * overlap``,
        ``overlap`` the share of the query's ``topics`` the memory carries (Tulving's encoding
        specificity: a cue matching the encoding context helps recall). Project and topics
        re-rank; they do not filter.

        The returned memories that clear the store's relevance test (``options.review``, a
        :class:`~memlab.store.relevance.ReviewPolicy`: rank, score relative to the top hit, a
        keyword match or a cosine floor) are accessed (FSRS-6 review with a grade from the
        match strength, dual-strength access, an access event with source ``"search"``); an
        irrelevant hit is left unchanged, and ``mark_accessed=False`` is a preview that writes
        nothing. An explicit use is recorded with :meth:`feedback`. Hits carry the memory as it
        was when ranked. Superseded and archived memories are excluded unless
        ``include_archived=True``; ``include_history=True`` searches them too and the texts of
        every memory's history (the observations REINFORCE kept, contents replaced by
        compression), so every text ever given to the store can be found. ``query_vector``
        skips embedding the query (it must be the embedder's vector of ``query``).
        """
        settings = self.options.override(time_weight, topic_weight, project_weight)
        return search.search(
            self.core,
            settings,
            query,
            k,
            project=project,
            topics=topics,
            mark_accessed=mark_accessed,
            include_archived=include_archived,
            include_history=include_history,
            now=now,
            query_vector=query_vector,
            secrets=self.secrets,
        )

    def rankings(
        self,
        query: str,
        n: int = 50,
        *,
        query_vector: NDArray[np.floating] | None = None,
        include_archived: bool = False,
        include_history: bool = False,
    ) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
        """The two rankings :meth:`search` fuses, without fusing them; reads only.

        Returns ``(keyword, vector)``: up to ``n`` ``(memory id, bm25)`` from FTS5 (lower bm25 is
        better) and up to ``n`` ``(memory id, cosine)`` from the vector index (cosine above
        ``min_similarity``), each best first, among active memories (all with
        ``include_archived``).
        """
        search.check_query(query)
        return search.rankings(
            self.core,
            self.options,
            query,
            check_count(n, "n", maximum=MAX_RESULTS),
            query_vector=query_vector,
            include_archived=include_archived,
            include_history=include_history,
        )

    def access(
        self, memory_id: int, grade: int = Rating.Good, *, now: datetime | None = None
    ) -> Memory:
        """Record one access (retrieval) of a memory, as a search hit does; returns it after.

        An FSRS-6 review with ``grade`` (a :class:`~memlab.models.fsrs6.Rating` or 1-4: Again,
        Hard, Good, Easy) at the elapsed days since the last access, a dual-strength access and
        an access event, in one transaction.
        """
        return self._record_access(memory_id, grade, now, "api")

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
        at = self.core.now(now).timestamp()
        with self.core.write():
            self.core.review(self.core.row(memory_id), at, source=source, grade=Rating(int(grade)))
        return self.get(memory_id)

    def feedback(
        self, memory_id: int, grade: int = Rating.Good, *, now: datetime | None = None
    ) -> Memory:
        """Record an explicit use of a memory by the agent; returns it after.

        The stronger signal than a search return: an FSRS-6 review with ``grade`` (1-4), a
        dual-strength access and an access event with source ``"feedback"``, which the keep
        scores (:mod:`memlab.keep`) count as a full use where a search return counts 0.1.
        """
        return self._record_access(memory_id, grade, now, "feedback")

    def nearest(
        self, text: str, n: int = 5, *, include_archived: bool = False
    ) -> list[tuple[int, float]]:
        """The ``n`` memories most similar to ``text`` by vector (id, cosine); reads only."""
        text = check_content(text, "text")
        n = check_count(n, "n", maximum=MAX_RESULTS)
        return search.nearest(self.core, text, n, include_archived=include_archived)

    # ------------------------------------------------------------------ fitting (fitting.py)
    def access_log(self) -> pd.DataFrame:
        """Creations and accesses of this namespace's memories, oldest first: ``memory_id,
        event_id, at, kind, source, grade`` (see :func:`memlab.store.fitting.access_log`)."""
        return fitting.access_log(self.core)

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
        """Fit FSRS-6 to the store's own access log and keep the result when it earns it.

        The access log becomes reviews by the rule of :mod:`memlab.fit.access` (a creation is a
        first review graded Good; every access is a review with the grade the store applied:
        relevant search hits, ``feedback``, ``access``, REINFORCE; previews are not reviews;
        ``sources=`` keeps only some). The weights are compared on a time split (fitted on the
        first ``1 - holdout`` of reviews, scored on the rest) with the default weights and the
        store's current ones, by log loss; the heat curve is fitted beside them as a recall curve
        and reported, not applied (the store's heat is a band scale). ``apply="if_better"`` (the
        default) then runs and persists the weights fitted on every review when the held-out
        log loss of the fit beats the store's current weights' (``result.improved``);
        ``apply=True`` always, ``apply=False`` never (a report). Applied weights are kept on
        reopening; heat reads stability against the new memory's, ``w2``. The dynamics are the
        file's, shared by its namespaces (as the gate); the log read is this namespace's. A log with
        fewer than ``min_reviews`` scored reviews or ``min_lapses`` lapses (grade Again, which
        only :meth:`feedback` / :meth:`access` record) raises
        :class:`~memlab.fit.access.NotEnoughReviewsError` and changes nothing.

        Returns
        -------
        memlab.fit.access.AccessFit
            Fitted weights, held-out log losses (``default``, ``previous``, ``fitted``,
            ``heat``), counts of reviews, memories, lapses; ``applied``.
        """
        return fitting.fit_dynamics(
            self.core,
            apply=apply,
            min_reviews=min_reviews,
            min_lapses=min_lapses,
            l2=l2,
            holdout=holdout,
            sources=sources,
        )

    # ------------------------------------------------------------------ versions (versions.py)
    def versions(self, memory_id: int) -> pd.DataFrame:
        """The versions of the fact ``memory_id`` belongs to, oldest first: memory id, content,
        status, creation time, and the decision, rule and similarity that made each one."""
        return versions.versions(self.core, memory_id)

    def revert(self, memory_id: int, version: int, *, now: datetime | None = None) -> Memory:
        """Make ``version`` (1 = oldest) of ``memory_id``'s fact current again; returns it."""
        return self.get(versions.revert(self.core, memory_id, version, now=now))

    def supersede(
        self, old_id: int, new_text: str, *, now: datetime | None = None, **meta: Any
    ) -> IngestResult:
        """Replace the fact ``old_id`` by ``new_text``: an explicit SUPERSEDE (the old memory
        becomes a version). Metadata defaults to the old memory's; ``meta`` overrides it."""
        old = self.get(check_id(old_id))
        fields = {
            "project": old.project,
            "topics": old.topics,
            "layer": old.layer,
            "entity": old.entity,
            "altitude": old.altitude,
            "importance": old.importance,
            **meta,
        }
        return self.ingest(new_text, supersedes=old.id, now=now, **fields)

    def links(self, memory_id: int) -> pd.DataFrame:
        """Links from and to a memory (``supersedes``, ``related``)."""
        return versions.links(self.core, memory_id)

    # ------------------------------------------------------------------ index
    def rebuild_index(self) -> None:
        """Rebuild the vector index from SQLite now (written to a new file, renamed into place)."""
        self.core.rebuild_index()

    # ------------------------------------------------------------------ lifecycle (lifecycle.py)
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

        See :func:`memlab.store.lifecycle.flag_importance`. Returns the strengthened memories
        with their weights. The event is (``memory_id``, ``event_type``): flagging the same
        event again tags nobody (no stacking); one event never lifts a neighbour to protection.
        """
        return lifecycle.flag_importance(
            self.core,
            memory_id,
            hours_back=hours_back,
            hours_forward=hours_forward,
            level=level,
            gain=gain,
            now=now,
            event_type=event_type,
        )

    def forget_sweep(
        self,
        now: datetime | None = None,
        dry_run: bool = True,
        *,
        keep: float | int | None = None,
        keep_by: str | None = None,
        seed: int = 0,
    ) -> pd.DataFrame:
        """Heat, band, risk, protection, keep score, action and state of every active memory.

        Applies the actions unless ``dry_run`` (see :func:`memlab.store.lifecycle.forget_sweep`).
        Without ``keep`` the store's :attr:`budget` applies, and without one the heat law
        (risk: keep, compress, drop as archive). ``keep`` (a share in (0, 1] as a float, or a
        count >= 1 as an int) keeps that many of the active memories, the best by the keep score
        ``keep_by`` (a name of :data:`memlab.keep.KEEP_SCORES`; default the budget's, else
        ``"memlab"``, the posterior need), and archives the rest (action ``drop``, reason
        ``budget``; :meth:`restore` undoes it). Protected memories are always kept and count
        toward the budget. ``seed`` seeds the ``random`` baseline. Bad arguments raise before
        anything is read or written.
        """
        budget = self._sweep_budget(keep, keep_by)
        return lifecycle.forget_sweep(self.core, now=now, dry_run=dry_run, budget=budget, seed=seed)

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
        self, now: datetime | None = None, *, min_group: int = 2, max_sentences: int = 3
    ) -> list[int]:
        """Merge cold unprotected memories by (entity, layer) into learning-layer summaries.

        Returns the ids of the new summaries.
        """
        return lifecycle.consolidate(
            self.core, now=now, min_group=min_group, max_sentences=max_sentences
        )

    def purge(self, memory_id: int) -> None:
        """Delete a memory and its history for good: the only hard delete."""
        lifecycle.purge(self.core, memory_id)

    def archive(self, memory_id: int, now: datetime | None = None) -> None:
        """Take an active memory out of default search (``include_archived=True`` still finds
        it); nothing is deleted, :meth:`restore` undoes it."""
        lifecycle.archive(self.core, memory_id, now=now)

    def restore(self, memory_id: int, now: datetime | None = None) -> None:
        """Make an archived (or superseded) memory active again."""
        lifecycle.restore(self.core, memory_id, now=now)

    # ------------------------------------------------------------------ export / import
    def export_jsonl(self, path: str | Path) -> int:
        """Write every memory with its full event history as JSON lines; returns the count.

        Written to a temporary file beside ``path`` and renamed into place (a failed or killed
        export leaves ``path`` as it was). ``path`` may not be a SQLite database nor one of the
        store's own files (database, WAL, index): ``ValueError``.
        """
        return transfer.export_jsonl(self.core, path)

    def import_jsonl(self, path: str | Path, now: datetime | None = None) -> dict[int, int]:
        """Add the memories of an export (re-embedded, events kept); returns old id -> new id."""
        return transfer.import_jsonl(self.core, path, now=now, secrets=self.secrets)


__all__ = [
    "Budget",
    "EmbedderMismatchError",
    "MemoryStore",
    "RRF_K",
    "SCHEMA_VERSION",
    "to_datetime",
]
