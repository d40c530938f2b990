"""The MCP tools in process (the SDK's Client connected to the server object)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import anyio
import pytest

pytest.importorskip("mcp")

from mcp import Client  # noqa: E402
from mcp_helpers import at, error_text, structured  # noqa: E402

from memlab.mcp.server import INGEST_BATCH, build_server  # noqa: E402
from memlab.ops import parse_now  # noqa: E402
from memlab.store import MemoryStore  # noqa: E402


def _call(store: MemoryStore, calls):
    """Run ``calls(client)`` (a coroutine function) against a server over ``store``."""
    out: dict = {}

    async def main() -> None:
        async with Client(build_server(store)) as client:
            out["value"] = await calls(client)

    anyio.run(main)
    return out["value"]


def _state(store: MemoryStore) -> tuple:
    return (
        [(m.id, m.content, m.status, m.importance, m.access_count) for m in store.memories()],
        dict(store.stats()["events"]),
    )


@pytest.fixture
def store(tmp_path):
    with MemoryStore(tmp_path / "tools.db") as s:
        yield s


def test_context_weights_change_the_ranking_and_use_is_a_review(store) -> None:
    async def calls(c):
        await c.call_tool(
            "ingest",
            {"content": "deploy runbook for the api", "topics": ["ops"], "now": at(0)},
        )
        await c.call_tool(
            "ingest",
            {"content": "deploy checklist for the web app", "topics": ["web"], "now": at(0)},
        )
        plain = structured(
            await c.call_tool("context", {"query": "deploy", "mark_accessed": False, "now": at(1)})
        )
        web = structured(
            await c.call_tool(
                "context",
                {
                    "query": "deploy",
                    "topics": ["web"],
                    "topic_weight": 5.0,
                    "mark_accessed": False,
                    "now": at(1),
                },
            )
        )
        used = structured(await c.call_tool("use", {"memory_id": 1, "grade": 4, "now": at(30)}))
        bad = error_text(await c.call_tool("use", {"memory_id": 1, "grade": 5}))
        bad_weight = error_text(
            await c.call_tool("context", {"query": "deploy", "time_weight": 2.0})
        )
        return plain, web, used, bad, bad_weight

    before = store.get(1) if len(store) else None
    plain, web, used, bad, bad_weight = _call(store, calls)
    assert before is None
    web_hit = next(h for h in web["hits"] if "web app" in h["content"])
    assert web_hit["topic_overlap"] == 1.0 and web_hit["context"] == pytest.approx(6.0)
    assert web["hits"][0]["content"] == "deploy checklist for the web app"
    assert {h["memory_id"] for h in plain["hits"]} == {1, 2}
    assert used["memory"]["access_count"] == 1
    assert used["memory"]["stability"] > store.dynamics.initial()[0]
    assert "grade" in bad and "time_weight" in bad_weight
    grades = store.history(1)["grade"].dropna().tolist()
    assert grades == [4]  # the explicit use, with its grade


def test_ingest_many_reports_progress_and_is_all_or_nothing(store) -> None:
    n = INGEST_BATCH + 30
    items = [{"content": f"note {i}: the value of parameter p{i} is {i * 7}"} for i in range(n)]

    async def calls(c):
        progress: list = []

        async def on_progress(p, total, message):
            progress.append((p, total))

        bad = [*items[:5], {"content": "ok", "layer": "nonsense"}]
        error = error_text(await c.call_tool("ingest_many", {"items": bad, "now": at(0)}))
        state_after_error = _state(store)
        result = structured(
            await c.call_tool(
                "ingest_many", {"items": items, "now": at(0)}, progress_callback=on_progress
            )
        )
        return error, state_after_error, result, progress

    empty = _state(store)
    error, after_error, result, progress = _call(store, calls)
    assert "item 5" in error and "layer" in error
    assert after_error == empty
    assert len(result["results"]) == n == sum(result["counts"].values())
    counts = result["counts"]
    # lossless gate: every decision but REINFORCE writes one new memory (SUPERSEDE and RELATED
    # keep the neighbour as it was); most are new facts, the rest were gated
    written = sum(v for k, v in counts.items() if k != "reinforce")
    assert len(store) == written and counts["create"] > INGEST_BATCH
    assert counts["create"] < n
    status = {m.status for m in store.memories()}
    assert status <= {"active", "superseded"}
    assert sum(m.status == "superseded" for m in store.memories()) == counts.get("supersede", 0)
    assert [r["memory_id"] for r in result["results"][:3]] == [1, 2, 3]
    assert progress[0] == (0, n) and progress[-1] == (n, n)
    assert len(progress) == 1 + -(-n // INGEST_BATCH)


def test_ingest_many_items_accept_what_the_store_accepts(store) -> None:
    # importance "auto" (the store's default) is estimated from the text; a given one is kept
    items = [
        {
            "content": "The invoice service retries failed payments at 02:00 UTC.",
            "importance": "auto",
        },
        {"content": "Deploys freeze on the last Friday of the quarter.", "importance": 0.8},
        {"content": "Meeting notes.", "importance": "high"},
    ]

    async def calls(c):
        bad = error_text(await c.call_tool("ingest_many", {"items": items, "now": at(0)}))
        state = _state(store)
        unknown = error_text(
            await c.call_tool("ingest_many", {"items": [{"content": "x", "context": "y"}]})
        )
        first_bad = error_text(
            await c.call_tool("ingest_many", {"items": [{"content": "x", "altitude": "sky"}]})
        )
        good = structured(await c.call_tool("ingest_many", {"items": items[:2], "now": at(0)}))
        # null is "not given", as in ingest: importance estimated, observed_at the call's time
        nulls = {"importance": None, "observed_at": None, "project": None}
        null = structured(
            await c.call_tool(
                "ingest_many", {"items": [{"content": "Backups run nightly.", **nulls}]}
            )
        )
        no_text = error_text(await c.call_tool("ingest_many", {"items": [{"content": None}]}))
        return bad, state, unknown, first_bad, good, null, no_text

    bad, after_bad, unknown, first_bad, good, null, no_text = _call(store, calls)
    assert 0.0 < store.get(null["results"][0]["memory_id"]).importance < 1.0
    assert "item 0" in no_text and "content" in no_text
    assert "item 2" in bad and "'auto'" in bad and after_bad == _state(MemoryStore())
    assert "item 0: unknown keys ['context']" in unknown
    assert "item 0: altitude" in first_bad
    auto, given = (store.get(r["memory_id"]) for r in good["results"])
    assert given.importance == 0.8
    assert 0.0 < auto.importance < 1.0 and auto.importance != 0.5


def test_sweep_applied_then_restore_and_consolidate(store) -> None:
    # three cold notes about one entity (consolidated), one cold note that the sweep drops
    for i, text in enumerate(
        [
            "Bob moved to Lisbon in May.",
            "Bob works on the billing service.",
            "Bob's team meets on Thursdays.",
        ]
    ):
        store.ingest(text, entity="bob", now=datetime(2026, 1, 1, 9, i, tzinfo=UTC))

    async def calls(c):
        progress: list = []

        async def on_progress(p, total, message):
            progress.append((p, total, message))

        late = at(24 * 400)
        dry = structured(await c.call_tool("sweep", {"now": late}))
        state_after_dry = _state(store)
        merged = structured(
            await c.call_tool("consolidate", {"now": late}, progress_callback=on_progress)
        )
        return dry, state_after_dry, merged, progress

    before = _state(store)
    dry, after_dry, merged, progress = _call(store, calls)
    assert dry["dry_run"] and after_dry == before
    assert merged["created"] and merged["summaries"][0]["layer"] == "learning"
    members = [m for m in store.memories() if m.consolidated_into == merged["created"][0]]
    assert len(members) == 3 and all(m.status == "archived" for m in members)
    assert progress[-1][0] == progress[-1][1]

    async def apply_and_restore(c):
        applied = structured(await c.call_tool("sweep", {"dry_run": False, "now": at(24 * 800)}))
        dropped = [r["id"] for r in applied["rows"] if r["applied"] and r["action"] == "drop"]
        restored = [
            structured(await c.call_tool("restore", {"memory_id": i, "now": at(24 * 801)}))
            for i in dropped
        ]
        return applied, dropped, restored

    applied, dropped, restored = _call(store, apply_and_restore)
    assert applied["dry_run"] is False and dropped
    assert all(r["memory"]["status"] == "active" for r in restored)
    kinds = store.history(dropped[0])["kind"].tolist()
    assert kinds[-2:] == ["archive", "restore"]


def test_sweep_with_a_budget_keeps_the_best_by_the_keep_score(store) -> None:
    texts = [
        "ok",
        "The staging database runs on port 5432 behind pgbouncer.",
        "thanks",
        "Alice Moreau owns the billing service and its Stripe webhooks.",
    ]
    for i, text in enumerate(texts):
        store.ingest(text, now=datetime(2026, 1, 1, 9, i, tzinfo=UTC))
    expected = store.forget_sweep(keep=2, keep_by="memlab", now=datetime(2026, 1, 2, tzinfo=UTC))

    async def calls(c):
        dry = structured(
            await c.call_tool("sweep", {"keep": 2, "keep_by": "memlab", "now": at(24)})
        )
        bad = error_text(await c.call_tool("sweep", {"keep": 2, "keep_by": "nonsense"}))
        applied = structured(
            await c.call_tool("sweep", {"keep": 0.5, "dry_run": False, "now": at(24)})
        )
        return dry, bad, applied

    before = _state(store)
    dry, bad, applied = _call(store, calls)
    dropped = {r["id"] for r in dry["rows"] if r["action"] == "drop"}
    assert dropped == set(expected.loc[expected["action"] == "drop", "id"])
    assert len(dropped) == 2 and all(
        r["reason"] == "budget" for r in dry["rows"] if r["id"] in dropped
    )
    assert all(r["keep_score"] is not None for r in dry["rows"])
    assert "keep_by" in bad
    archived = {r["id"] for r in applied["rows"] if r["applied"]}
    assert archived == dropped
    assert {m.id for m in store.memories() if m.status == "archived"} == dropped
    assert before != _state(store)


def test_bad_arguments_change_nothing(store) -> None:
    store.ingest("The cache TTL is 300 seconds.", now=datetime(2026, 1, 1, tzinfo=UTC))
    bad_calls = [
        ("ingest", {"content": "   "}),
        ("ingest", {"content": "ok", "layer": "nonsense"}),
        ("ingest", {"content": "ok", "topics": "not-a-list"}),
        ("ingest", {"content": "ok", "now": "yesterday"}),
        ("search", {"query": ""}),
        ("search", {"query": "cache", "k": 0}),
        ("importance", {"memory_id": 1, "hours_back": -1}),
        ("importance", {"memory_id": 0}),
        ("get", {"memory_id": 42}),
        ("history", {"memory_id": 42}),
        ("restore", {"memory_id": 42}),
        ("sweep", {"dry_run": "maybe"}),
        ("consolidate", {"min_group": 1}),
        ("ingest_many", {"items": []}),
        ("no_such_tool", {}),
        # an unknown argument is refused, not dropped: the call would do what was not asked
        ("search", {"query": "cache", "mark_access": False}),
        ("forget", {"memory_id": 1, "purge": True}),
        ("ingest", {"content": "Deploys happen on Fridays.", "projcet": "infra"}),
        ("sweep", {"keep": "Infinity", "dry_run": False}),
        # strict types: JSON true is not the number 1, nor "false" the flag false
        ("ingest", {"content": "Deploys happen on Fridays.", "importance": True}),
        ("search", {"query": "cache", "k": "5"}),
        ("search", {"query": "cache", "mark_accessed": "false"}),
    ]

    async def calls(c):
        return [await c.call_tool(name, args) for name, args in bad_calls]

    before = _state(store)
    results = _call(store, calls)
    assert all(r.is_error for r in results)
    for r in results:
        error_text(r)
    assert _state(store) == before


def test_resources_list_and_read(store) -> None:
    for text in ("first fact", "second fact"):
        store.ingest(text)

    async def calls(c):
        listed = [str(r.uri) for r in (await c.list_resources()).resources]
        templates = [t.uri_template for t in (await c.list_resource_templates()).resource_templates]
        all_rows = json.loads((await c.read_resource("memlab://memories")).contents[0].text)
        one = json.loads((await c.read_resource("memlab://memory/2")).contents[0].text)
        missing = []
        for uri in ("memlab://memory/9", "memlab://memory/abc"):
            try:
                await c.read_resource(uri)
            except Exception as error:  # the SDK raises the server's error to the caller
                missing.append(str(error))
        return listed, templates, all_rows, one, missing

    listed, templates, rows, one, (missing, not_an_id) = _call(store, calls)
    assert "memory_id must be an integer, got str" in not_an_id
    assert {"memlab://memory/1", "memlab://memory/2", "memlab://memories"} <= set(listed)
    assert "memlab://memory/{memory_id}" in templates
    assert [r["id"] for r in rows] == [2, 1]
    assert one["content"] == "second fact" and one["status"] == "active"
    assert missing is not None and "no memory with id 9" in missing


def test_stats_and_tool_set_follow_the_store(store) -> None:
    async def calls(c):
        names = {t.name for t in (await c.list_tools()).tools}
        stats = structured(await c.call_tool("stats", {}))
        importance = next(t for t in (await c.list_tools()).tools if t.name == "importance")
        return names, stats, importance

    names, stats, importance = _call(store, calls)
    assert stats["stats"]["embedder"] == store.embedder.name
    # forget (archive) is offered only when the store can archive one memory
    assert ("forget" in names) == callable(getattr(store, "archive", None))
    takes = "event_type" in __import__("inspect").signature(store.importance).parameters
    assert ("event_type" in importance.input_schema["properties"]) == takes


def test_parse_now() -> None:
    assert parse_now(None) is None
    assert parse_now("2026-01-01T00:00:00+00:00") == datetime(2026, 1, 1, tzinfo=UTC)
    with pytest.raises(ValueError, match="ISO 8601"):
        parse_now("next tuesday")


def test_forget_archives_and_restore_brings_back(store) -> None:
    async def calls(c):
        made = structured(
            await c.call_tool("ingest", {"content": "the fire drill is on friday", "now": at(0)})
        )
        gone = structured(await c.call_tool("forget", {"memory_id": made["memory_id"]}))
        found = structured(
            await c.call_tool("search", {"query": "fire drill", "mark_accessed": False})
        )
        back = structured(await c.call_tool("restore", {"memory_id": made["memory_id"]}))
        return made, gone, found, back

    made, gone, found, back = _call(store, calls)
    assert gone["memory"]["status"] == "archived"
    assert made["memory_id"] not in [h["memory"]["id"] for h in found["hits"]]
    assert back["memory"]["status"] == "active"
    assert store.get(made["memory_id"]).content == "the fire drill is on friday"


def test_tools_are_the_store_operations_with_clean_descriptions(store) -> None:
    from memlab.ops import OPS

    async def calls(c):
        return {t.name: t for t in (await c.list_tools()).tools}

    tools = _call(store, calls)
    offered = {op.name: op for op in OPS if op.mcp}
    assert set(tools) == set(offered)
    for name, tool in tools.items():
        op = offered[name]
        assert tool.description == op.help and "\n" not in tool.description
        props = tool.input_schema["properties"]
        expected = {a.name for a in op.mcp_args()} | ({"now"} if op.takes_now else set())
        assert set(props) == expected, name
        for arg in op.mcp_args():
            assert props[arg.name]["description"] == arg.help
    assert tools["get"].annotations.read_only_hint is True
    assert tools["importance"].input_schema["properties"]["level"]["maximum"] == 1


@pytest.mark.parametrize(
    ("name", "args", "words"),
    [
        (
            "use",
            {"memory_id": 1, "grade": 5},
            "use: grade: input should be less than or equal to 4",
        ),
        ("search", {"query": "x", "k": 0}, "search: k: input should be greater than or equal to 1"),
        ("ingest", {"content": "ok", "layer": "nonsense"}, "ingest: layer: input should be 'goal'"),
        ("ingest", {}, "ingest: content is required"),
        ("sweep", {"keep": -1}, "sweep: keep: input should be greater than 0, got -1"),
        ("get", {"memory_id": 7}, "get: no memory with id 7"),
        ("search", {"query": "x", "mark_access": False}, "search: unknown argument(s) ['mark_"),
        ("sweep", {"keep": "Infinity"}, "sweep: keep: input should be a valid number, got 'Inf"),
        ("sweep", {"keep": "0.5"}, "sweep: keep: input should be a valid number, got '0.5'"),
        ("search", {"query": "x", "k": True}, "search: k: input should be a valid integer, got"),
        ("sweep", {"keep": 1.0, "dry_run": False}, "sweep: keep must be a share in (0, 1) or a"),
    ],
)
def test_a_bad_argument_comes_back_in_plain_words(store, name, args, words) -> None:
    async def calls(c):
        return error_text(await c.call_tool(name, args))

    text = _call(store, calls)
    assert text == words or text.startswith(words), text
    assert "pydantic" not in text and "http" not in text and "validation error" not in text


def test_as_of_observed_at_and_version_pointers(store) -> None:
    async def calls(c):
        old = structured(
            await c.call_tool(
                "ingest",
                {"content": "The backup runs at 02:00 UTC.", "observed_at": at(-48), "now": at(0)},
            )
        )
        new = structured(
            await c.call_tool("ingest", {"content": "The backup runs at 03:00 UTC.", "now": at(5)})
        )
        then = structured(
            await c.call_tool(
                "search", {"query": "backup runs", "as_of": at(1), "mark_accessed": False}
            )
        )
        both = structured(
            await c.call_tool(
                "search", {"query": "backup runs", "include_history": True, "mark_accessed": False}
            )
        )
        items = [{"content": "The pool opens in May.", "observed_at": "May"}]
        bad = error_text(await c.call_tool("ingest_many", {"items": items}))
        naive = error_text(
            await c.call_tool("search", {"query": "backup", "as_of": "2026-01-01T00:00:00"})
        )
        return old, new, then, both, bad, naive

    old, new, then, both, bad, naive = _call(store, calls)
    assert new["decision"] == "supersede"
    assert [h["memory_id"] for h in then["hits"]] == [old["memory_id"]]
    assert then["hits"][0]["valid_from"] == at(-48)
    hits = both["hits"]
    assert [h["memory_id"] for h in hits] == [new["memory_id"], old["memory_id"]]
    assert hits[1]["superseded_by"] == new["memory_id"]
    assert "item 0: observed_at" in bad and "as_of" in naive
    assert len(store) == 2


def test_a_naive_now_is_refused_before_any_item(store) -> None:
    async def calls(c):
        items = [{"content": "a first note"}]
        return [
            error_text(await c.call_tool("ingest_many", {"items": items, "now": now}))
            for now in ("2026-03-05T09:00", "yesterday")
        ]

    before = _state(store)
    naive, unreadable = _call(store, calls)
    assert naive == (
        "ingest_many: now is a naive datetime; give a timezone-aware one (an offset such as +00:00)"
    )  # the call's own argument, not a failed batch ("the 0 items before them were stored")
    assert unreadable == "ingest_many: now must be an ISO 8601 timestamp, got 'yesterday'"
    assert _state(store) == before


def test_a_result_too_big_for_its_texts_to_fit_is_returned_not_looped_on() -> None:
    """The history of a memory accessed thousands of times: its events' fixed fields alone pass
    the limit, so no cut of the texts makes it fit; the texts are cut to their note and the
    result comes back with the first events that fit (the server must not loop forever)."""
    from memlab.mcp.server import fit_result

    events = [{"event_id": i, "kind": "access", "text": None} for i in range(100)]
    events[0]["text"] = "The cache TTL is 300 seconds."
    done = fit_result({"memory": {"content": "The cache TTL"}, "events": events}, limit=1000)
    assert 0 < len(done["events"]) < 100 and len(json.dumps(done)) <= 1000
    assert "[shortened from 29 characters to fit]" in done["events"][0]["text"]
    assert done["memory"]["content"] == "The cache TTL"


def test_a_list_too_long_for_one_result_keeps_its_first_items_and_says_so() -> None:
    """A sweep of thousands of memories passes the limit with no text to cut: its rows keep the
    first ones that fit and the text names the cut, never a transport failure (or a crash on a
    result with no texts)."""
    from memlab.mcp.schemas import SweepOut
    from memlab.mcp.server import RESULT_BYTES, fit_result, tool_result

    row = {"id": 0, "layer": "semantic", "heat": 0.5, "band": "warm", "risk": 1.25}
    row |= {"protected": False, "action": "keep", "reason": "", "keep_score": None}
    row |= {"state": "active", "retention": 0.9, "applied": False}
    rows = [{**row, "id": i} for i in range(1, 6001)]
    out = SweepOut(dry_run=True, counts={"keep": 6000}, applied=0, rows=rows)
    result = tool_result(out)
    data = result.structured_content
    shown = len(data["rows"])
    assert 0 < shown < 6000 and data["rows"] == rows[:shown] and data["counts"] == {"keep": 6000}
    assert len(json.dumps(data).encode()) <= RESULT_BYTES
    assert len(json.dumps({**data, "rows": rows[: shown + 1]}).encode()) > RESULT_BYTES
    assert result.content[0].text.startswith(
        f"too big for one result, shown only rows: the first {shown} of 6000;"
    )
    small = fit_result({"dry_run": True, "rows": rows[:10]}, limit=400)
    assert 0 < len(small["rows"]) < 10 and len(json.dumps(small)) <= 400
