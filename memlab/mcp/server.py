"""The MCP server: a :class:`memlab.store.MemoryStore` as tools and resources for an agent.

Built on the official ``mcp`` SDK (:class:`mcp.server.mcpserver.MCPServer`). Every tool has
typed, documented arguments (the SDK publishes them as a JSON schema) and returns a typed,
structured result (:mod:`memlab.mcp.schemas`). The tools follow the two agent-memory servers
memlab is built from: ``ingest`` (the gate decides create / update / reinforce / ...),
``search`` (hybrid search, ``mark_accessed``), ``context`` (Vestige's signature: query,
project, topics, time_weight, topic_weight), ``importance`` (synaptic tagging), ``use`` (an
explicit use of a memory: an FSRS-6 review), ``get``, ``history``, ``restore``, ``forget``
(archive), ``sweep`` (dry run by default), ``consolidate``
and ``stats``. The memories are resources: ``memlab://memory/{id}`` (one memory as JSON) and
``memlab://memories`` (the active memories, newest first).

Errors are tool errors carrying the store's own message (``is_error=True``), never a stack
trace; the store validates before it writes, so a bad argument changes nothing. Store calls
run one at a time; long ones in a worker thread, so the server keeps answering (and reporting
progress: ``ingest_many`` per batch, ``sweep`` and ``consolidate`` per phase) meanwhile.

>>> from memlab.store import MemoryStore
>>> server = build_server(MemoryStore())            # doctest: +SKIP
>>> server.run("stdio")                              # doctest: +SKIP
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Callable
from datetime import datetime
from typing import Annotated, Any, Literal, TypeVar

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import Resource, ToolAnnotations
from pydantic import Field

from memlab.keep import KEEP_SCORES
from memlab.mcp.schemas import (
    ConsolidateOut,
    HistoryOut,
    HitOut,
    ImportanceOut,
    IngestManyOut,
    IngestOut,
    MemoryOut,
    SearchOut,
    StatsOut,
    StatusOut,
    SweepOut,
    VersionsOut,
)
from memlab.models.heat import ALTITUDES, LAYERS

T = TypeVar("T")

#: Exceptions the store raises for a bad call; they become tool errors with their message.
STORE_ERRORS: tuple[type[BaseException], ...] = (
    ValueError,
    TypeError,
    LookupError,
    FileNotFoundError,
    sqlite3.Error,
)

#: Most memories listed one by one by ``resources/list`` (newest first); all stay readable.
MAX_LISTED_RESOURCES = 500

#: Texts per store call in ``ingest_many`` (progress is reported after each).
INGEST_BATCH = 100

#: Keys an ``ingest_many`` item may carry over MCP (those its schema describes).
ITEM_KEYS = ("content", "project", "topics", "layer", "entity", "altitude", "importance")

Layer = Literal[LAYERS]  # type: ignore[valid-type]
Altitude = Literal[ALTITUDES]  # type: ignore[valid-type]
KeepScoreName = Literal[KEEP_SCORES]  # type: ignore[valid-type]
Now = Annotated[
    str | None,
    Field(
        description="simulated time, ISO 8601 with a timezone (e.g. 2026-01-31T09:00:00+00:00);"
        " default: the server's clock"
    ),
]
MemoryId = Annotated[int, Field(description="id of a stored memory", ge=1)]
Topics = Annotated[list[str], Field(description="topic labels (re-rank search; kept as metadata)")]
HoursBack = Annotated[float, Field(description="window before, in hours", ge=0)]
HoursForward = Annotated[float, Field(description="window after, in hours", ge=0)]
Level = Annotated[float, Field(description="importance set (>= 0.9 protects)", ge=0, le=1)]


def error_message(error: BaseException) -> str:
    """The store's message of an error, without quotes or a traceback."""
    if isinstance(error, KeyError) and error.args:
        return str(error.args[0])
    return str(error) or type(error).__name__


def parse_now(now: str | None) -> datetime | None:
    """``now`` of a tool call as a datetime (the store rejects naive ones with a clear error)."""
    if now is None:
        return None
    try:
        return datetime.fromisoformat(now)
    except ValueError:
        raise ValueError(
            f"now must be an ISO 8601 timestamp with a timezone, got {now!r}"
        ) from None


class StoreRunner:
    """Runs store calls one at a time, turning store errors into tool errors.

    Quick calls run on the event loop (a hop to a worker thread costs more than a search);
    long ones (:meth:`in_thread`: batch ingest, sweep, consolidation) run in a worker thread,
    so the server keeps answering pings and sending progress meanwhile. An async lock keeps
    every store call of the server in one sequence.
    """

    def __init__(self, store: Any) -> None:
        self.store = store
        self._lock = anyio.Lock()

    async def __call__(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        async with self._lock:
            try:
                return fn(*args, **kwargs)
            except STORE_ERRORS as error:
                raise ToolError(error_message(error)) from error

    async def in_thread(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        async with self._lock:
            try:
                return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kwargs))
            except STORE_ERRORS as error:
                raise ToolError(error_message(error)) from error


class MemlabServer(MCPServer):
    """An MCPServer that also lists each stored memory as a resource."""

    def __init__(self, runner: StoreRunner, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.runner = runner

    async def list_resources(self) -> list[Resource]:
        listed = await super().list_resources()
        memories = await self.runner(self.runner.store.memories, include_archived=False)
        for m in sorted(memories, key=lambda m: -m.id)[:MAX_LISTED_RESOURCES]:
            listed.append(
                Resource(
                    uri=f"memlab://memory/{m.id}",
                    name=f"memory {m.id}",
                    description=m.content[:120],
                    mime_type="application/json",
                )
            )
        return listed


def build_server(store: Any, *, name: str = "memlab", **server_options: Any) -> MemlabServer:
    """An MCP server over ``store`` (a :class:`memlab.store.MemoryStore`).

    Parameters
    ----------
    store : MemoryStore
        The store the tools read and write; the server does not close it.
    name : str
        Server name announced to clients.
    **server_options
        Passed to :class:`mcp.server.mcpserver.MCPServer` (e.g. ``auth`` and
        ``token_verifier``, as :mod:`memlab.mcp.http` does).

    Returns
    -------
    MemlabServer
        Run it with ``server.run("stdio")`` or serve it over HTTP with
        :func:`memlab.mcp.http.serve_http`.
    """
    run = StoreRunner(store)
    server = MemlabServer(
        run,
        name=name,
        **server_options,
        instructions=(
            "Long-term memory that forgets on purpose. ingest stores a fact (the gate reports"
            " whether it was new, a repetition, a correction or related; a correction keeps the"
            " old text as a superseded version, see versions); search or context recall"
            " facts (a recall strengthens what it returns unless mark_accessed is false);"
            " importance flags a fact and the facts encoded around it; sweep shows what the"
            " heat model would forget (dry run by default)."
        ),
    )
    read_only = ToolAnnotations(read_only_hint=True)

    @server.tool(annotations=ToolAnnotations(idempotent_hint=False))
    async def ingest(
        content: Annotated[str, Field(description="the text to remember")],
        project: Annotated[str | None, Field(description="project scope of the memory")] = None,
        topics: Topics = [],  # noqa: B006 - pydantic copies defaults
        layer: Annotated[Layer, Field(description="kind of memory (goal, caveat: protected)")] = (
            "context"
        ),
        entity: Annotated[str | None, Field(description="what the memory is about")] = None,
        altitude: Annotated[Altitude, Field(description="level of abstraction")] = (
            "implementation"
        ),
        importance: Annotated[
            float | None, Field(description="0-1; default: the store's default", ge=0, le=1)
        ] = None,
        now: Now = None,
    ) -> IngestOut:
        """Remember one text. The prediction-error gate compares it with the nearest memory of
        the same project: a repetition reinforces that memory; a correction supersedes it (a
        new memory; the old one is kept as a superseded version, see versions); a related
        fact is a new memory linked to it; anything else creates a new memory. The result
        names the decision and the gate rule that made it. Secrets are screened."""
        kwargs: dict[str, Any] = dict(
            project=project, topics=topics, layer=layer, entity=entity, altitude=altitude
        )
        if importance is not None:
            kwargs["importance"] = importance
        result = await run(store.ingest, content, now=parse_now(now), **kwargs)
        return IngestOut.of(result)

    @server.tool()
    async def ingest_many(
        items: Annotated[
            list[dict[str, Any]],
            Field(
                description="texts to remember, in order: objects with 'content' and any of "
                + ", ".join(ITEM_KEYS[1:])
                + " (importance a number in [0, 1] or 'auto', estimated from the text)",
                min_length=1,
            ),
        ],
        ctx: Context,
        now: Now = None,
    ) -> IngestManyOut:
        """Remember many texts in order, each gated as by ingest. Every item is checked
        before any is stored (one bad item stores nothing); progress is reported per batch."""
        at = parse_now(now)
        await run(_check_items, store, items)
        results: list[IngestOut] = []
        await ctx.report_progress(0, len(items), "ingesting")
        for start in range(0, len(items), INGEST_BATCH):
            batch = items[start : start + INGEST_BATCH]
            try:
                out = await run.in_thread(store.ingest_many, batch, now=at)
            except ToolError as error:
                raise ToolError(
                    f"{error} (items {start}..{start + len(batch) - 1}; the {start} items"
                    " before them were stored)"
                ) from error
            results.extend(IngestOut.of(r) for r in out)
            await ctx.report_progress(len(results), len(items), "ingesting")
        counts: dict[str, int] = {}
        for r in results:
            counts[r.decision] = counts.get(r.decision, 0) + 1
        return IngestManyOut(results=results, counts=counts)

    async def _search(
        query: str,
        k: int,
        project: str | None,
        topics: list[str],
        mark_accessed: bool,
        include_archived: bool,
        include_history: bool,
        now: str | None,
        **weights: float | None,
    ) -> SearchOut:
        hits = await run(
            store.search,
            query,
            k,
            project=project,
            topics=topics,
            mark_accessed=mark_accessed,
            include_archived=include_archived,
            include_history=include_history,
            now=parse_now(now),
            **{key: value for key, value in weights.items() if value is not None},
        )
        return SearchOut(
            query=query, marked_accessed=mark_accessed, hits=[HitOut.of(h) for h in hits]
        )

    @server.tool()
    async def search(
        query: Annotated[str, Field(description="what to recall")],
        k: Annotated[int, Field(description="number of hits", ge=1, le=1000)] = 10,
        project: Annotated[str | None, Field(description="prefer this project")] = None,
        topics: Topics = [],  # noqa: B006
        mark_accessed: Annotated[
            bool,
            Field(description="strengthen the hits (a review, the testing effect); false previews"),
        ] = True,
        include_archived: Annotated[bool, Field(description="also search archived ones")] = False,
        include_history: Annotated[
            bool, Field(description="also search superseded versions (what a fact used to say)")
        ] = False,
        now: Now = None,
    ) -> SearchOut:
        """Hybrid search (BM25 and vectors fused by reciprocal rank fusion, weighted by FSRS-6
        retention and by project/topic match). Each hit carries the parts of its score."""
        return await _search(
            query, k, project, topics, mark_accessed, include_archived, include_history, now
        )

    @server.tool()
    async def context(
        query: Annotated[str, Field(description="what to recall")],
        project: Annotated[str | None, Field(description="the current project")] = None,
        topics: Topics = [],  # noqa: B006
        time_weight: Annotated[
            float | None,
            Field(description="0-1: how much retention (recency of use) weighs", ge=0, le=1),
        ] = None,
        topic_weight: Annotated[
            float | None, Field(description=">= 0: how much topic overlap weighs", ge=0)
        ] = None,
        k: Annotated[int, Field(description="number of hits", ge=1, le=1000)] = 10,
        mark_accessed: Annotated[bool, Field(description="strengthen the hits")] = True,
        now: Now = None,
    ) -> SearchOut:
        """Context-dependent recall (Vestige's signature): search weighted by the current
        project and topics, with the weights of time and topics given per call."""
        return await _search(
            query,
            k,
            project,
            topics,
            mark_accessed,
            False,
            False,
            now,
            time_weight=time_weight,
            topic_weight=topic_weight,
        )

    importance_doc = (
        "Flag a memory important (synaptic tagging): its importance rises to `level` and the"
        " memories encoded within hours_back before and hours_forward after it are"
        " strengthened, more the closer they are (also ones that arrive later in the window)."
    )

    async def importance(
        memory_id: MemoryId,
        event_type: Annotated[
            str | None, Field(description="why it matters (e.g. user_flag, novelty)")
        ] = None,
        hours_back: HoursBack = 9.0,
        hours_forward: HoursForward = 2.0,
        level: Level = 0.95,
        now: Now = None,
    ) -> ImportanceOut:
        frame = await run(
            store.importance,
            memory_id,
            hours_back,
            hours_forward,
            level=level,
            now=parse_now(now),
            event_type=event_type,
        )
        memory = await run(store.get, memory_id)
        tagged = [
            {"id": float(r["id"]), "dt_hours": float(r["dt_hours"]), "weight": float(r["weight"])}
            for r in frame.to_dict("records")
        ]
        return ImportanceOut(memory=MemoryOut.of(memory), tagged=tagged, event_type=event_type)

    server.add_tool(importance, description=importance_doc)

    @server.tool()
    async def use(
        memory_id: MemoryId,
        grade: Annotated[
            int,
            Field(description="how well it served: 1 again, 2 hard, 3 good, 4 easy", ge=1, le=4),
        ] = 3,
        now: Now = None,
    ) -> StatusOut:
        """Record that the agent used a memory (feedback): an FSRS-6 review with this grade,
        a stronger signal than being returned by a search."""
        memory = await run(store.feedback, memory_id, grade, now=parse_now(now))
        return StatusOut(memory=MemoryOut.of(memory))

    @server.tool(annotations=read_only)
    async def get(memory_id: MemoryId) -> MemoryOut:
        """One memory by id (reads only; not an access)."""
        return MemoryOut.of(await run(store.get, memory_id))

    @server.tool(annotations=read_only)
    async def history(memory_id: MemoryId) -> HistoryOut:
        """A memory and every event of it, oldest first: creation, accesses with their grades,
        observations (repetitions), supersessions, links, tags, archive and restore."""
        memory = await run(store.get, memory_id)
        return HistoryOut.of(memory, await run(store.history, memory_id))

    @server.tool(annotations=read_only)
    async def versions(memory_id: MemoryId) -> VersionsOut:
        """The versions of the fact a memory belongs to, oldest first: each one's text, status
        (active = current, superseded = earlier) and the gate decision and rule that made it.
        Works from any version's id."""
        return VersionsOut.of(await run(store.versions, memory_id))

    @server.tool()
    async def forget(memory_id: MemoryId, now: Now = None) -> StatusOut:
        """Archive a memory: it leaves search but nothing is deleted (restore brings it back)."""
        await run(store.archive, memory_id, now=parse_now(now))
        return StatusOut(memory=MemoryOut.of(await run(store.get, memory_id)))

    @server.tool()
    async def restore(memory_id: MemoryId, now: Now = None) -> StatusOut:
        """Make an archived (or superseded) memory active again."""
        await run(store.restore, memory_id, now=parse_now(now))
        return StatusOut(memory=MemoryOut.of(await run(store.get, memory_id)))

    @server.tool()
    async def sweep(
        ctx: Context,
        dry_run: Annotated[
            bool, Field(description="true (default): only report; false: apply the actions")
        ] = True,
        keep: Annotated[
            float | None,
            Field(
                description="a budget: keep this share (0 < keep < 1) or this many memories (a"
                " whole number >= 1), the best by keep_by; the rest are archived. Absent: the"
                " store's own budget, else the heat law",
                gt=0,
            ),
        ] = None,
        keep_by: Annotated[
            KeepScoreName | None,
            Field(description="keep score of the budget (default: memlab, the posterior need)"),
        ] = None,
        now: Now = None,
    ) -> SweepOut:
        """Forget sweep: heat, band, risk, protection and action (keep, compress, drop as
        archive) of every active memory; with keep, a budget that keeps the best memories by a
        named keep score. A dry run by default: nothing changes."""
        await ctx.report_progress(0, 2, "assessing memories")
        count_or_share = int(keep) if keep is not None and keep >= 1 and keep == int(keep) else keep
        frame = await run.in_thread(
            store.forget_sweep,
            now=parse_now(now),
            dry_run=dry_run,
            keep=count_or_share,
            keep_by=keep_by,
        )
        await ctx.report_progress(2, 2, "done")
        return SweepOut.of(frame, dry_run)

    @server.tool()
    async def consolidate(
        ctx: Context,
        min_group: Annotated[int, Field(description="fewest cold memories merged", ge=2)] = 2,
        max_sentences: Annotated[int, Field(description="sentences per summary", ge=1)] = 3,
        now: Now = None,
    ) -> ConsolidateOut:
        """Merge cold unprotected memories of the same entity and layer into summaries (the
        members are archived with a link to their summary, nothing is deleted)."""
        await ctx.report_progress(0, 2, "consolidating")
        created = await run.in_thread(
            store.consolidate, parse_now(now), min_group=min_group, max_sentences=max_sentences
        )
        summaries = [MemoryOut.of(await run(store.get, i)) for i in created]
        await ctx.report_progress(2, 2, "done")
        return ConsolidateOut(created=[int(i) for i in created], summaries=summaries)

    @server.tool(annotations=read_only)
    async def stats() -> StatsOut:
        """Counts by status, layer and event kind; the embedder, schema version and index."""
        return StatsOut(stats=json.loads(json.dumps(await run(store.stats), default=str)))

    @server.resource(
        "memlab://memory/{memory_id}",
        name="memory",
        description="one stored memory as JSON",
        mime_type="application/json",
    )
    async def memory_resource(memory_id: int) -> str:
        try:
            memory = await run(store.get, memory_id)
        except ToolError as error:
            raise ResourceError(str(error)) from error
        return MemoryOut.of(memory).model_dump_json()

    @server.resource(
        "memlab://memories",
        name="memories",
        description="the active memories (id, layer, project, content), newest first",
        mime_type="application/json",
    )
    async def memories_resource() -> str:
        memories = await run(store.memories, include_archived=False)
        rows = [
            {"id": m.id, "layer": m.layer, "project": m.project, "content": m.content}
            for m in sorted(memories, key=lambda m: -m.id)
        ]
        return json.dumps(rows)

    return server


def _check_items(store: Any, items: list[dict[str, Any]]) -> None:
    """Validate and screen every ingest item before any is written, by the store's own check
    (:func:`memlab.store.ingest.prepare` with :meth:`MemoryStore.ingest_defaults`): what it
    accepts here it accepts when the batches are stored (``importance="auto"`` included)."""
    from memlab.store import MemoryStore
    from memlab.store.ingest import prepare

    for i, item in enumerate(items):
        unknown = set(item) - set(ITEM_KEYS)
        if unknown:
            raise ValueError(f"item {i}: unknown keys {sorted(unknown)}; allowed {list(ITEM_KEYS)}")
    prepare(items, MemoryStore.ingest_defaults(), store.secrets, name_items=True)


__all__ = [
    "INGEST_BATCH",
    "ITEM_KEYS",
    "MAX_LISTED_RESOURCES",
    "STORE_ERRORS",
    "MemlabServer",
    "StoreRunner",
    "build_server",
    "error_message",
    "parse_now",
]
