"""memlab.ops: one description of each store operation, for the MCP tools and the shell verbs;
every operation returns JSON-ready data."""

from __future__ import annotations

import inspect
import json

import pytest

from memlab.ops import BY_NAME, ITEM_KEYS, OPS, REQUIRED, check_bounds, count_or_share
from memlab.store import MemoryStore
from memlab.store.ingest import INGEST_KEYS


def test_every_operation_calls_a_store_method_with_its_arguments() -> None:
    for op in OPS:
        if op.call is None:  # ingest_many: the MCP server's batches call store.ingest_many
            continue
        params = list(inspect.signature(op.call).parameters.values())
        names = [p.name for p in params]
        assert names[0] == "store" and ("now" in names[1:2]) == op.takes_now, op.name
        given = {a.name for a in op.args}
        takes_any = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)
        assert takes_any or given == set(names[1 + op.takes_now :]), op.name


def test_arguments_are_named_once_with_help() -> None:
    for op in OPS:
        names = [a.name for a in op.args]
        assert len(names) == len(set(names)), op.name
        assert op.help and "\n" not in op.help and all(a.help for a in op.args)
        for a in op.args:
            if a.default is not REQUIRED and a.choices and a.default is not None:
                assert a.default in a.choices, (op.name, a.name)
    verbs = [op.verb for op in OPS if op.verb]
    assert len(verbs) == len(set(verbs))


def test_item_keys_are_the_ingest_metadata_the_store_takes() -> None:
    assert ITEM_KEYS[0] == "content"
    assert set(ITEM_KEYS) <= INGEST_KEYS
    assert {a.name for a in BY_NAME["ingest"].args} == set(ITEM_KEYS)


def test_check_bounds_names_the_argument() -> None:
    spell = lambda a: "--" + a.name  # noqa: E731
    check_bounds(BY_NAME["use"], {"memory_id": 1, "grade": 4}, spell)
    with pytest.raises(ValueError, match="--grade must be <= 4, got 5"):
        check_bounds(BY_NAME["use"], {"memory_id": 1, "grade": 5}, spell)
    with pytest.raises(ValueError, match="--keep must be > 0, got 0"):
        check_bounds(BY_NAME["sweep"], {"keep": 0.0}, spell)
    check_bounds(BY_NAME["sweep"], {"keep": None}, spell)  # absent: nothing to check


def test_count_or_share() -> None:
    assert count_or_share(None) is None and count_or_share(0.5) == 0.5
    assert count_or_share(2.0) == 2 and isinstance(count_or_share(2.0), int)
    # 1 would be a share of all and a count of one: the shell and MCP cannot tell 1 from 1.0,
    # and archiving all but one memory is not what "keep 1.0" asks for
    for bad in (1.0, 1, 1.5, float("inf"), float("nan")):
        with pytest.raises(ValueError, match="share in \\(0, 1\\) or a whole count >= 2"):
            count_or_share(bad)


def test_operations_run_against_a_store() -> None:
    with MemoryStore() as store:
        made = BY_NAME["ingest"].call(store, None, content="the boiler is serviced in May",
                                      importance=None, project=None, topics=[])  # fmt: skip
        hits = BY_NAME["search"].call(store, None, query=["boiler", "serviced"], k=5,
                                      mark_accessed=False)  # fmt: skip
        assert [h["memory_id"] for h in hits] == [made["memory_id"]]
        assert hits[0]["status"] == "active" and hits[0]["score"] > 0
        gone = BY_NAME["forget"].call(store, None, memory_id=made["memory_id"])
        assert gone["status"] == store.get(made["memory_id"]).status == "archived"
        BY_NAME["restore"].call(store, None, memory_id=made["memory_id"])
        assert BY_NAME["get"].call(store, memory_id=made["memory_id"])["status"] == "active"
        json.dumps(BY_NAME["sweep"].call(store, None, dry_run=True, keep=None, keep_by=None))
