"""End to end: `memlab mcp` as a subprocess, driven by the mcp SDK's own client over stdio."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

mcp = pytest.importorskip("mcp")

from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402
from mcp_helpers import at, error_text, memlab_command, server_env, snapshot, structured  # noqa: E402

from memlab.store import MemoryStore  # noqa: E402

FACT = "The staging database listens on port 5432."
OTHER = "Alice prefers green tea in the afternoon."
CORRECTION = "The staging database listens on port 5433."

REQUIRED_TOOLS = {
    "ingest",
    "ingest_many",
    "search",
    "context",
    "importance",
    "use",
    "get",
    "history",
    "restore",
    "sweep",
    "consolidate",
    "stats",
    "versions",
}


def _scenario(db: Path, errlog_path: Path) -> dict:
    """Drive the server through the scenario; returns what the checks below need."""
    command, args = memlab_command("mcp", "--db", str(db))
    params = StdioServerParameters(command=command, args=args, env=server_env())
    seen: dict = {}

    async def main() -> None:
        with open(errlog_path, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    await drive(session)

    async def drive(s: ClientSession) -> None:
        tools = (await s.list_tools()).tools
        seen["tools"] = {t.name: t for t in tools}

        a = structured(await s.call_tool("ingest", {"content": FACT, "now": at(0)}))
        b = structured(await s.call_tool("ingest", {"content": OTHER, "now": at(1)}))
        again = structured(await s.call_tool("ingest", {"content": FACT, "now": at(2)}))
        fixed = structured(await s.call_tool("ingest", {"content": CORRECTION, "now": at(3)}))
        seen["ingest"] = (a, b, again, fixed)

        before = structured(await s.call_tool("get", {"memory_id": fixed["memory_id"]}))
        preview = structured(
            await s.call_tool(
                "search",
                {"query": "staging database port", "mark_accessed": False, "now": at(4)},
            )
        )
        after_preview = structured(await s.call_tool("get", {"memory_id": fixed["memory_id"]}))
        marked = structured(
            await s.call_tool("search", {"query": "staging database port", "now": at(5)})
        )
        after_mark = structured(await s.call_tool("get", {"memory_id": fixed["memory_id"]}))
        seen["search"] = (before, preview, after_preview, marked, after_mark)

        seen["importance"] = structured(
            await s.call_tool("importance", {"memory_id": b["memory_id"], "now": at(6)})
        )

        progress: list[tuple] = []

        async def on_progress(p: float, total: float | None, message: str | None) -> None:
            progress.append((p, total, message))

        seen["sweep_db_before"] = snapshot(db)
        seen["sweep"] = structured(
            await s.call_tool("sweep", {"now": at(24 * 365)}, progress_callback=on_progress)
        )
        seen["sweep_db_after"] = snapshot(db)
        seen["sweep_progress"] = progress

        seen["history"] = structured(await s.call_tool("history", {"memory_id": a["memory_id"]}))
        seen["versions"] = structured(await s.call_tool("versions", {"memory_id": a["memory_id"]}))
        seen["old_hit"] = structured(
            await s.call_tool(
                "search",
                {"query": "port 5432", "mark_accessed": False, "include_history": True},
            )
        )

        # errors: the store's message, no trace, nothing changed
        seen["errors_db_before"] = snapshot(db)
        seen["errors"] = [
            error_text(await s.call_tool("get", {"memory_id": 999})),
            error_text(await s.call_tool("ingest", {"content": "", "now": at(7)})),
            error_text(
                await s.call_tool("ingest", {"content": "x", "importance": 2.0, "now": at(7)})
            ),
            error_text(await s.call_tool("ingest", {"content": "y", "now": "2026-03-02"})),
            error_text(await s.call_tool("importance", {"memory_id": 999, "now": at(7)})),
            error_text(
                await s.call_tool(
                    "ingest_many",
                    {"items": [{"content": "a fine text"}, {"content": ""}], "now": at(7)},
                )
            ),
        ]
        seen["errors_db_after"] = snapshot(db)

        listed = (await s.list_resources()).resources
        seen["resources"] = [str(r.uri) for r in listed]
        read = await s.read_resource(f"memlab://memory/{b['memory_id']}")
        seen["resource"] = json.loads(read.contents[0].text)

    anyio.run(main)
    return seen


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path, Path]:
    folder = tmp_path_factory.mktemp("mcp_stdio")
    db, errlog = folder / "agent.db", folder / "server.err"
    return _scenario(db, errlog), db, errlog


def test_lists_typed_documented_tools(run) -> None:
    seen, _, _ = run
    tools = seen["tools"]
    assert REQUIRED_TOOLS <= set(tools)
    for name in REQUIRED_TOOLS:
        tool = tools[name]
        assert tool.description and len(tool.description) > 20, name
        assert tool.input_schema["type"] == "object"
        assert tool.output_schema is not None, name  # structured results
    props = tools["ingest"].input_schema["properties"]
    assert props["content"]["type"] == "string" and props["content"]["description"]
    assert tools["ingest"].input_schema["required"] == ["content"]
    assert set(tools["context"].input_schema["properties"]) >= {
        "query",
        "project",
        "topics",
        "time_weight",
        "topic_weight",
    }
    assert tools["sweep"].input_schema["properties"]["dry_run"]["default"] is True
    assert tools["search"].input_schema["properties"]["mark_accessed"]["default"] is True


def test_gate_decisions_of_new_repeated_and_corrected_facts(run) -> None:
    seen, _, _ = run
    a, b, again, fixed = seen["ingest"]
    assert a["decision"] == "create" and a["similarity"] is None
    assert b["decision"] == "create" and b["memory_id"] != a["memory_id"]
    assert again["decision"] == "reinforce" and again["memory_id"] == a["memory_id"]
    assert again["similarity"] == pytest.approx(1.0, abs=1e-6)
    # a correction supersedes: a new memory, the old one kept as a version; the rule is named
    assert fixed["decision"] == "supersede" and fixed["rule"]
    assert fixed["nearest_id"] == a["memory_id"] and fixed["memory_id"] not in (
        a["memory_id"],
        b["memory_id"],
    )
    assert 0.75 < fixed["similarity"] < 1.0


def test_search_preview_writes_nothing_and_marked_search_strengthens(run) -> None:
    seen, _, _ = run
    before, preview, after_preview, marked, after_mark = seen["search"]
    assert preview["marked_accessed"] is False
    top = preview["hits"][0]
    assert "5433" in top["content"]
    parts = ("rrf", "keyword_rank", "vector_rank", "similarity", "retention", "time_factor")
    assert all(key in top for key in parts)
    assert top["score"] == pytest.approx(top["rrf"] * top["time_factor"] * top["context"])
    assert after_preview == before  # the preview changed nothing
    assert marked["hits"][0]["memory_id"] == top["memory_id"]
    assert after_mark["access_count"] == before["access_count"] + 1
    assert after_mark["last_access"] == at(5) != before["last_access"]


def test_importance_flag_tags_the_neighbour(run) -> None:
    seen, _, _ = run
    a, b, _, fixed = seen["ingest"]
    flagged = seen["importance"]
    assert flagged["memory"]["id"] == b["memory_id"]
    assert flagged["memory"]["importance"] >= 0.95
    # the fact's current version, encoded two hours after the flagged one, is inside the
    # [-9 h, +2 h] window; its superseded version (an hour before) is not current: not tagged
    tagged = {int(t["id"]): t["weight"] for t in flagged["tagged"]}
    assert fixed["memory_id"] in tagged and 0 < tagged[fixed["memory_id"]] <= 1
    assert a["memory_id"] not in tagged


def test_dry_sweep_reports_and_changes_nothing(run) -> None:
    seen, _, _ = run
    sweep = seen["sweep"]
    assert sweep["dry_run"] is True and sweep["applied"] == 0
    ids = {r["id"] for r in sweep["rows"]}
    # every current memory is scored; superseded versions are history, not swept
    current = {m[0] for m in seen["sweep_db_before"]["memories"] if m[2] == "active"}
    assert ids == current and len(current) == 2
    flagged = seen["importance"]["memory"]["id"]
    assert next(r for r in sweep["rows"] if r["id"] == flagged)["protected"] is True
    # a year later the unflagged facts are cold: the heat model would act on them
    assert any(r["action"] != "keep" for r in sweep["rows"])
    assert seen["sweep_db_after"] == seen["sweep_db_before"]
    assert seen["sweep_progress"] and seen["sweep_progress"][-1][0] == seen["sweep_progress"][-1][1]


def test_history_keeps_every_text(run) -> None:
    seen, _, _ = run
    events = seen["history"]["events"]
    kinds = [e["kind"] for e in events]
    assert kinds[0] == "create" and "observation" in kinds
    texts = " ".join(e["text"] or "" for e in events)
    assert "5432" in texts  # the corrected text is not lost
    assert [e["event_id"] for e in events] == sorted(e["event_id"] for e in events)


def test_versions_keep_the_superseded_fact(run) -> None:
    seen, _, _ = run
    a, _, _, fixed = seen["ingest"]
    versions = seen["versions"]["versions"]
    assert [(v["memory_id"], v["status"], v["current"]) for v in versions] == [
        (a["memory_id"], "superseded", False),
        (fixed["memory_id"], "active", True),
    ]
    assert versions[0]["content"] == FACT and versions[1]["content"] == CORRECTION
    assert versions[1]["decision"] == "supersede" and versions[1]["rule"] == fixed["rule"]
    # the old text left plain search but is found when history is asked for
    assert any(h["memory_id"] == a["memory_id"] for h in seen["old_hit"]["hits"])


def test_errors_are_clear_tool_errors_and_change_nothing(run) -> None:
    seen, _, errlog = run
    missing, empty, importance, naive, flag_missing, batch = seen["errors"]
    assert "no memory with id 999" in missing
    assert "content is empty" in empty
    assert "importance" in importance
    assert "timezone" in naive
    assert "999" in flag_missing
    assert "item 1" in batch and "empty" in batch
    assert seen["errors_db_after"] == seen["errors_db_before"]
    assert "Traceback" not in errlog.read_text()


def test_memories_are_resources(run) -> None:
    seen, _, _ = run
    _, b, _, _ = seen["ingest"]
    assert "memlab://memories" in seen["resources"]
    assert f"memlab://memory/{b['memory_id']}" in seen["resources"]
    assert seen["resource"]["id"] == b["memory_id"]
    assert seen["resource"]["content"] == OTHER


def test_database_afterwards(run) -> None:
    seen, db, _ = run
    a, b, _, fixed = seen["ingest"]
    with MemoryStore(db) as store:
        active = [m for m in store.memories() if m.status == "active"]
        assert sum("5433" in m.content for m in active) == 1
        assert not any("5432" in m.content for m in active)  # the old value left search
        assert store.get(b["memory_id"]).importance >= 0.95
        events = store.stats()["events"]
        assert events["observation"] == 1  # the repetition, kept as an observation
        hist = store.history(a["memory_id"])
        assert "5432" in " ".join(t for t in hist["text"] if isinstance(t, str))
        sources = [d.get("source") for d in hist["data"] if isinstance(d, dict)]
        assert "reinforce" in sources
        hits = store.search("staging database port", mark_accessed=False)
        assert hits[0].memory.id == fixed["memory_id"]
