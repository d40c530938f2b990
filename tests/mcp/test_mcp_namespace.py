"""`memlab mcp --namespace`: an agent served one namespace of a file never sees, merges with,
strengthens or sweeps a memory of another one (the mcp SDK's client over stdio)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp_helpers import at, error_text, memlab_command, server_env, structured  # noqa: E402

from memlab.store import MemoryStore  # noqa: E402

FACT = "The staging database listens on port 5432."
OTHER = "Alice prefers green tea in the afternoon."


def _alpha(db: Path) -> list[tuple]:
    with MemoryStore(db, namespace="alpha") as s:
        return [
            (m.id, m.content, m.status, m.importance, m.stability, m.access_count, m.last_access)
            for m in s.memories()
        ] + [tuple(s.history(m.id)["event_id"]) for m in s.memories()]


def test_an_agent_on_one_namespace_cannot_reach_another(tmp_path: Path) -> None:
    db = tmp_path / "shared.db"
    with MemoryStore(db, namespace="alpha") as s:
        t0 = datetime.fromisoformat(at(0))
        alpha_ids = [s.ingest(t, now=t0).memory_id for t in (FACT, OTHER)]
    before = _alpha(db)
    command, args = memlab_command("mcp", "--db", str(db), "--namespace", "beta")
    params = StdioServerParameters(command=command, args=args, env=server_env())
    seen: dict = {}

    async def main() -> None:
        with open(tmp_path / "err.log", "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    seen["empty"] = structured(
                        await s.call_tool("search", {"query": "staging database port"})
                    )
                    seen["ingest"] = structured(
                        await s.call_tool("ingest", {"content": FACT, "now": at(1)})
                    )
                    seen["again"] = structured(
                        await s.call_tool("ingest", {"content": FACT, "now": at(2)})
                    )
                    seen["search"] = structured(
                        await s.call_tool("search", {"query": "staging port", "now": at(3)})
                    )
                    seen["errors"] = [
                        error_text(await s.call_tool("get", {"memory_id": alpha_ids[0]})),
                        error_text(await s.call_tool("history", {"memory_id": alpha_ids[0]})),
                        error_text(
                            await s.call_tool(
                                "importance", {"memory_id": alpha_ids[1], "now": at(3)}
                            )
                        ),
                    ]
                    seen["sweep"] = structured(
                        await s.call_tool("sweep", {"now": at(24 * 365), "dry_run": False})
                    )
                    seen["stats"] = structured(await s.call_tool("stats", {}))
                    listed = (await s.list_resources()).resources
                    seen["resources"] = [str(r.uri) for r in listed]

    anyio.run(main)
    mine = seen["ingest"]["memory_id"]
    assert seen["empty"]["hits"] == []  # alpha's identical fact is not found
    assert seen["ingest"]["decision"] == "create" and mine not in alpha_ids
    assert seen["again"]["decision"] == "reinforce" and seen["again"]["memory_id"] == mine
    assert [h["memory_id"] for h in seen["search"]["hits"]] == [mine]
    assert all("no memory" in e for e in seen["errors"])
    assert {r["id"] for r in seen["sweep"]["rows"]} == {mine}
    assert seen["stats"]["stats"]["memories"] == 1
    assert not any(uri.endswith(f"/{m}") for uri in seen["resources"] for m in alpha_ids)
    assert _alpha(db) == before  # alpha untouched by every call above
