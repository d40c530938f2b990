"""Tool-call round trips through the MCP server beside the same calls made in process.

A store of 10k memories (HashingEmbedder; the seeded texts of ``bench_store.py``) in a file.
The same operations are timed three ways, in one run, on the same file:

- ``direct``: ``MemoryStore.ingest`` / ``MemoryStore.search`` called in this process (the
  reference);
- ``mcp_in_memory``: the memlab MCP server object driven by the SDK's ``Client`` in this
  process (tool dispatch, argument validation, pydantic results, the worker thread; no
  transport);
- ``mcp_stdio``: ``memlab mcp --db FILE`` as a subprocess, driven by the SDK's stdio client
  (what an agent's MCP client does: JSON-RPC over pipes).

Operations: ``ingest`` (a new text through the gate), ``search`` (preview,
``mark_accessed=False``) and ``search_marked`` (the hits strengthened). Each is timed on
``--calls`` calls per way (fresh texts and queries, seeded), the three ways interleaved call by
call with a rotating order, so the load of a shared machine drifts over all alike; p50 / p95
in milliseconds and the ratio to the direct p50.

Run: ``python experiments/bench_mcp.py [--size 10000] [--calls 200]``. Writes
experiments/results/bench_mcp.json and .md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import anyio
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import make_queries, make_texts  # noqa: E402

from memlab.store import MemoryStore  # noqa: E402

OPS = ("ingest", "search", "search_marked")
WAYS = ("direct", "mcp_in_memory", "mcp_stdio")


def _pct(seconds: list[float]) -> dict[str, float]:
    ms = np.asarray(seconds) * 1000.0
    return {
        "p50": float(np.percentile(ms, 50)),
        "p95": float(np.percentile(ms, 95)),
        "n": len(ms),
    }


def _workload(seed: int, calls: int, corpus: list[str]) -> dict[str, list[str]]:
    texts = make_texts(calls, seed)
    queries = make_queries(2 * calls, seed + 1, corpus)
    return {"ingest": texts, "search": queries[:calls], "search_marked": queries[calls:]}


def _args(op: str, item: str) -> tuple[str, dict]:
    if op == "ingest":
        return "ingest", {"content": item}
    return "search", {"query": item, "mark_accessed": op == "search_marked"}


def run_interleaved(db: Path, calls: int, corpus: list[str]) -> tuple[dict, float]:
    """Time every way on the same store, interleaved call by call (the order rotates), so that
    the machine's load drifts over all ways alike."""
    from mcp import Client, ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from memlab.mcp.server import build_server

    work = {way: _workload(seed, calls, corpus) for seed, way in enumerate(WAYS, start=1)}
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "MEMLAB_PROGRESS": "0"}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memlab.cli", "mcp", "--db", str(db)], env=env
    )
    times: dict = {way: {op: [] for op in OPS} for way in WAYS}
    started: dict = {}

    async def main() -> None:
        with MemoryStore(db) as store:
            t = time.perf_counter()
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    started["s"] = time.perf_counter() - t
                    async with Client(build_server(store)) as client:
                        tools = {"mcp_in_memory": client.call_tool, "mcp_stdio": session.call_tool}
                        for op in OPS:
                            for i in range(calls):
                                for j in range(len(WAYS)):
                                    way = WAYS[(i + j) % len(WAYS)]
                                    item = work[way][op][i]
                                    t = time.perf_counter()
                                    if way == "direct":
                                        if op == "ingest":
                                            store.ingest(item)
                                        else:
                                            store.search(item, 10, mark_accessed=op != "search")
                                    else:
                                        result = await tools[way](*_args(op, item))
                                        if result.is_error:
                                            raise RuntimeError(f"{op}: {result.content}")
                                    times[way][op].append(time.perf_counter() - t)

    anyio.run(main)
    return {way: {op: _pct(times[way][op]) for op in OPS} for way in WAYS}, started["s"]


def _markdown(report: dict) -> str:
    lines = [
        "# MCP tool-call round trips beside in-process calls",
        "",
        f"Run {report['when']} on {report['machine']}; store of {report['size']:,} memories"
        f" (HashingEmbedder, file), {report['calls']} calls per operation and way,"
        f" load average before / after {report['load_before']} / {report['load_after']}.",
        "",
        "| operation | way | p50 ms | p95 ms | p50 / direct p50 |",
        "|---|---|---:|---:|---:|",
    ]
    for op in OPS:
        ref = report["direct_reference_p50"][op]
        for way in WAYS:
            r = report["ways"][way][op]
            lines.append(
                f"| {op} | {way} | {r['p50']:.2f} | {r['p95']:.2f} | {r['p50'] / ref:.2f} |"
            )
    lines += [
        "",
        f"`memlab mcp` start-up to an initialized session: {report['stdio_startup_s']:.2f} s.",
        "The three ways ran interleaved call by call on the same store (the order rotating),"
        " so load drift hits them alike; `direct` is the reference.",
        f"Store built with `ingest_many` in {report['build_s']:.1f} s.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_mcp")
    args = parser.parse_args()
    os.environ.setdefault("MEMLAB_PROGRESS", "0")
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.db"
        corpus = make_texts(args.size, 20261201)
        t = time.perf_counter()
        with MemoryStore(db) as store:
            store.ingest_many(corpus)
            store.rebuild_index()
        build_s = time.perf_counter() - t
        print(f"built {args.size:,} memories in {build_s:.1f} s")
        ways, startup = run_interleaved(db, args.calls, corpus)
        for way in WAYS:
            print(f"{way:14s}", json.dumps(ways[way]))
    reference = {op: ways["direct"][op]["p50"] for op in OPS}
    report = {
        "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": (
            f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
        ),
        "size": args.size,
        "calls": args.calls,
        "build_s": build_s,
        "stdio_startup_s": startup,
        "load_before": round(load_before, 1),
        "load_after": round(os.getloadavg()[0], 1),
        "ways": ways,
        "direct_reference_p50": reference,
        "ratio_stdio_to_direct_p50": {
            op: ways["mcp_stdio"][op]["p50"] / reference[op] for op in OPS
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    md = _markdown(report)
    args.out.with_suffix(".md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
