"""The MCP server: a :class:`memlab.store.MemoryStore` as tools and resources for an agent.

The tools are generated from :data:`memlab.ops.OPS` (which the ``memlab store`` verbs share),
with typed results (:mod:`memlab.mcp.schemas`) kept within :data:`RESULT_BYTES`. The memories
are resources: ``memlab://memory/{id}`` and ``memlab://memories``. Errors are tool errors in
plain words; store calls run one at a time, long ones in a worker thread.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections import Counter
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import anyio
import anyio.to_thread
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError, ToolError
from mcp.types import CallToolResult, Resource, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

from memlab.mcp import schemas as out
from memlab.ops import ITEM_KEYS, OPS, STORE_ERRORS, Arg, Op, error_message, parse_now

T = TypeVar("T")

#: Most memories listed one by one by ``resources/list`` (newest first); all stay readable.
MAX_LISTED_RESOURCES = 500

#: Texts per store call in ``ingest_many`` (progress is reported after each).
INGEST_BATCH = 100
#: Largest result (JSON bytes): under the official client's 1 MiB limit on one server-sent event.
RESULT_BYTES = 900_000
#: Largest result the text block repeats (a larger one is only structured content).
TEXT_COPY_BYTES = 16_384

NOW = Arg(
    "now",
    str | None,
    "simulated time, ISO 8601 with a timezone (e.g."
    " 2026-01-31T09:00:00+00:00); default: the server's clock",
    None,
)

INSTRUCTIONS = (
    "Long-term memory that forgets on purpose. ingest stores a fact (the gate reports whether it"
    " was new, a repetition, a correction or related; a correction keeps the old text as a"
    " superseded version, see versions); search or context recall facts (a recall strengthens"
    " what it returns unless mark_accessed is false); importance flags a fact and the facts"
    " encoded around it; sweep shows what the heat model would forget (dry run by default)."
)


def plain_words(error: ValidationError) -> str:
    """A pydantic validation error as one sentence per argument, without links or codes."""
    parts = []
    for e in error.errors(include_url=False):
        where = ".".join(str(x) for x in e["loc"]) or "arguments"
        if e["type"] == "missing":
            parts.append(f"{where} is required")
        else:
            parts.append(f"{where}: {e['msg'][:1].lower()}{e['msg'][1:]}, got {e['input']!r}")
    return "; ".join(parts)


class StoreRunner:
    """Runs store calls one at a time (an async lock), turning store errors into tool errors:
    quick ones on the event loop, long ones (``thread=True``) in a worker thread."""

    def __init__(self, store: Any) -> None:
        self.store = store
        self._lock = anyio.Lock()

    async def __call__(
        self, fn: Callable[..., T], *args: Any, thread: bool = False, **kw: Any
    ) -> T:
        async with self._lock:
            try:
                if thread:
                    return await anyio.to_thread.run_sync(functools.partial(fn, *args, **kw))
                return fn(*args, **kw)
            except STORE_ERRORS as error:
                raise ToolError(error_message(error)) from error


class MemlabServer(MCPServer):
    """An MCPServer that lists each stored memory as a resource and words bad arguments plainly."""

    def __init__(self, runner: StoreRunner, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.runner = runner

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Run a tool; its errors read ``tool: message`` (a bad argument: which and why; an
        unknown one is refused, never dropped)."""
        takes = {t.name: set(t.input_schema.get("properties", {})) for t in await self.list_tools()}
        unknown = sorted(set(arguments or {}) - takes.get(name, set(arguments or {})))
        if unknown:
            raise ToolError(f"{name}: unknown argument(s) {unknown}; takes {sorted(takes[name])}")
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as error:
            cause, prefix = error.__cause__, f"Error executing tool {name}: "
            if isinstance(cause, ValidationError):
                raise ToolError(f"{name}: {plain_words(cause)}") from None
            if str(error).startswith(prefix):
                raise ToolError(f"{name}: {str(error)[len(prefix) :]}") from None
            raise

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


def _hits(store: Any, hits: Any, kw: dict[str, Any]) -> dict[str, Any]:
    return {"query": kw["query"], "marked_accessed": kw["mark_accessed"], "hits": hits}


def _memory(store: Any, memory: Any, kw: dict[str, Any]) -> dict[str, Any]:
    return {"memory": memory}


def _same(store: Any, result: Any, kw: dict[str, Any]) -> Any:
    return result


#: Each tool's result type, and how an operation's JSON (with the call's arguments) fills it.
RESULTS: dict[str, tuple[type, Callable[[Any, Any, dict[str, Any]], Any]]] = {
    "ingest": (out.IngestOut, _same),
    "search": (out.SearchOut, _hits),
    "context": (out.SearchOut, _hits),
    "importance": (out.ImportanceOut, _same),
    "use": (out.StatusOut, _memory),
    "get": (out.MemoryOut, _same),
    "history": (
        out.HistoryOut,
        lambda s, rows, kw: {"memory": s.get(kw["memory_id"]).to_dict(), "events": rows},
    ),
    "versions": (out.VersionsOut, lambda s, rows, kw: {"versions": rows}),
    "forget": (out.StatusOut, _memory),
    "restore": (out.StatusOut, _memory),
    "sweep": (out.SweepOut, _same),
    "consolidate": (out.ConsolidateOut, _same),
    "stats": (out.StatsOut, lambda s, stats, kw: {"stats": stats}),
}


def _size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False).encode("utf-8", "surrogatepass"))


def _texts(value: Any) -> list[tuple[dict[str, Any], str]]:
    """Where the long texts of a result are: (dict, key) of every ``content`` and ``text``."""
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    if not isinstance(value, dict):
        return []
    own = [(value, k) for k in ("content", "text") if isinstance(value.get(k), str)]
    return own + [t for v in value.values() for t in _texts(v)]


def _largest(fits: Callable[[int], bool], high: int) -> int:
    """The largest ``n`` in ``0..high`` with ``fits(n)``, for a ``fits`` true up to some ``n``."""
    low = 0
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if fits(mid) else (low, mid - 1)
    return low


def fit_result(data: dict[str, Any], limit: int = RESULT_BYTES) -> dict[str, Any]:
    """``data`` within ``limit`` JSON bytes: the longest texts of its lists are cut to one length
    (found by bisection), each saying so; if the rest still passes it (thousands of events or
    sweep rows), the longest list keeps its first items that fit (:func:`tool_result` says so)."""
    size = _size(data)
    if size <= limit:
        return data
    texts = [t for key, v in data.items() if key != "memory" for t in _texts(v)]
    sizes = [_size(h[k]) for h, k in texts]
    low = _largest(
        lambda cap: size - sum(max(0, n - cap - 80) for n in sizes) <= limit, max(sizes, default=0)
    )
    for (holder, key), n in zip(texts, sizes, strict=True):
        text, keep = holder[key], low
        while keep and n > low and _size(text[:keep]) > low:
            keep = keep * low // _size(text[:keep])
        if n > low:
            holder[key] = f"{text[:keep]} [shortened from {len(text)} characters to fit]"
    lists = [k for k, v in data.items() if isinstance(v, list)]
    if lists and _size(data) > limit:  # the fixed fields alone pass it
        key = max(lists, key=lambda k: _size(data[k]))
        items = data[key]
        shown = _largest(lambda n: _size({**data, key: items[:n]}) <= limit, len(items))
        data[key] = items[:shown]
    return data


def tool_result(model: Any) -> CallToolResult:
    """``model`` as a tool result: structured content, repeated as text only when small."""
    full = model.model_dump(mode="json")
    lengths = {k: len(v) for k, v in full.items() if isinstance(v, list)}
    data = fit_result(full)
    size = _size(data)
    text = (
        json.dumps(data, ensure_ascii=False)
        if size <= TEXT_COPY_BYTES
        else (f"a result of {size} bytes, in structuredContent")
    )
    cut = [f"{k}: the first {len(data[k])} of {n}" for k, n in lengths.items() if len(data[k]) < n]
    text = f"too big for one result, shown only {', '.join(cut)}; {text}" if cut else text
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _parameter(arg: Arg) -> inspect.Parameter:
    """``arg`` as a keyword parameter whose annotation the SDK turns into a JSON schema."""
    default = list(arg.default) if isinstance(arg.default, tuple) else arg.default
    strict = {"strict": True} if arg.type in (bool, int, float, float | None) else {}  # true != 1
    annotation = Annotated[arg.type, Field(description=arg.help, **strict, **arg.bounds)]
    return inspect.Parameter(
        arg.name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
    )


def _tool(op: Op, body: Callable[..., Any], result: type) -> Callable[..., Any]:
    """``body`` as the tool function of ``op``: a signature built from its arguments."""
    args = [*op.mcp_args(), NOW] if op.takes_now else list(op.mcp_args())
    params = [_parameter(a) for a in args]
    if op.slow:
        params.insert(
            0, inspect.Parameter("ctx", inspect.Parameter.KEYWORD_ONLY, annotation=Context)
        )
    returns = Annotated[CallToolResult, result]
    body.__name__ = op.name
    body.__signature__ = inspect.Signature(params, return_annotation=returns)  # type: ignore[attr-defined]
    body.__annotations__ = {p.name: p.annotation for p in params} | {"return": returns}
    return body


def build_server(store: Any, *, name: str = "memlab", **server_options: Any) -> MemlabServer:
    """An MCP server over ``store`` (not closed by the server), announced as ``name``.

    ``server_options`` go to :class:`mcp.server.mcpserver.MCPServer` (e.g. ``auth`` and
    ``token_verifier``, as :mod:`memlab.mcp.http` does). Run the result with
    ``server.run("stdio")`` or serve it with :func:`memlab.mcp.http.serve_http`.
    """
    run = StoreRunner(store)
    server = MemlabServer(run, name=name, instructions=INSTRUCTIONS, **server_options)

    def body_of(op: Op) -> Callable[..., Any]:
        kind, convert = RESULTS[op.name]

        def call(now: str | None = None, **kw: Any) -> Any:
            given = {"now": parse_now(now)} if op.takes_now else {}
            done = kind.model_validate(convert(store, op.call(store, **given, **kw), kw))  # type: ignore[misc]
            return tool_result(done)

        async def body(ctx: Context | None = None, **kw: Any) -> Any:
            if ctx is None:
                return await run(call, **kw)
            await ctx.report_progress(0, 1, op.name)
            done = await run(call, thread=True, **kw)
            await ctx.report_progress(1, 1, "done")
            return done

        return body

    async def ingest_many(ctx: Context, items: list[dict[str, Any]], now: str | None = None) -> Any:
        at = await run(parse_now, now)  # a bad `now` is the call's error, before any item
        items = await run(_check_items, store, items)
        results: list[out.IngestOut] = []
        await ctx.report_progress(0, len(items), "ingesting")
        for start in range(0, len(items), INGEST_BATCH):
            batch = items[start : start + INGEST_BATCH]
            try:
                done = await run(store.ingest_many, batch, thread=True, now=at)
            except ToolError as error:
                raise ToolError(
                    f"{error} (items {start}..{start + len(batch) - 1}; the {start}"
                    " items before them were stored)"
                ) from error
            results.extend(out.IngestOut.model_validate(r.to_dict()) for r in done)
            await ctx.report_progress(len(results), len(items), "ingesting")
        counts = Counter(r.decision for r in results)
        return tool_result(out.IngestManyOut(results=results, counts=counts))

    for op in OPS:
        if not op.mcp:
            continue
        if op.name == "ingest_many":
            fn = _tool(op, ingest_many, out.IngestManyOut)
        else:
            fn = _tool(op, body_of(op), RESULTS[op.name][0])
        hints = ToolAnnotations(read_only_hint=True) if op.read_only else None
        server.add_tool(fn, description=op.help, annotations=hints)

    @server.resource(
        "memlab://memory/{memory_id}",
        name="memory",
        description="one stored memory as JSON",
        mime_type="application/json",
    )
    async def memory_resource(memory_id: str) -> str:
        key = int(memory_id) if memory_id.lstrip("-").isdigit() else memory_id  # else refused
        try:
            memory = await run(store.get, key)
        except ToolError as error:
            raise ResourceError(str(error)) from error
        return out.MemoryOut.model_validate(memory.to_dict()).model_dump_json()

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
        return json.dumps(fit_result({"rows": rows})["rows"])

    return server


def _check_items(store: Any, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The items with ``observed_at`` read as a time, all checked by the store's own
    :func:`memlab.store.ingest.prepare` before any batch is written."""
    from memlab.store.ingest import INGEST_DEFAULTS, prepare

    for i, item in enumerate(items):
        unknown = set(item) - set(ITEM_KEYS)
        if unknown:
            raise ValueError(f"item {i}: unknown keys {sorted(unknown)}; allowed {list(ITEM_KEYS)}")
    items = [{k: v for k, v in item.items() if v is not None} for item in items]  # as ingest
    for i, item in enumerate(items):
        if isinstance(item.get("observed_at"), str):
            item["observed_at"] = parse_now(item["observed_at"], f"item {i}: observed_at")
    prepare(items, INGEST_DEFAULTS, store.secrets, name_items=True)
    return items
