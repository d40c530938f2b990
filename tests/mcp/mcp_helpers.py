"""Helpers of the MCP tests: the server's environment, tool-call results, database snapshots."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]

#: Simulated start time of the scenarios (every call passes ``now`` from here on).
T0 = "2026-03-02T09:00:00+00:00"


def at(hours: float) -> str:
    """``T0`` plus some hours, ISO 8601."""
    from datetime import datetime, timedelta

    return (datetime.fromisoformat(T0) + timedelta(hours=hours)).isoformat()


def server_env() -> dict[str, str]:
    """Environment of a server subprocess: offline, no progress bars, this checkout first."""
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG", "TMPDIR")}
    env.update(
        HF_HUB_OFFLINE="1",
        MEMLAB_PROGRESS="0",
        PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
    )
    return env


def memlab_command(*args: str) -> tuple[str, list[str]]:
    """The command that runs ``memlab ARGS`` with this interpreter."""
    return sys.executable, ["-m", "memlab.cli", *args]


def structured(result: Any) -> dict[str, Any]:
    """The structured content of a successful tool call (fails the test on a tool error)."""
    assert not result.is_error, result.content
    assert result.structured_content is not None
    return result.structured_content


def error_text(result: Any) -> str:
    """The text of a tool error (fails the test if the call succeeded)."""
    assert result.is_error, result.structured_content
    text = " ".join(c.text for c in result.content if getattr(c, "type", "") == "text")
    assert "Traceback" not in text and 'File "' not in text
    return text


def snapshot(path: Path) -> dict[str, Any]:
    """Everything a tool call could change in a store file: its memories and event counts."""
    from memlab.store import MemoryStore

    with MemoryStore(path) as store:
        memories = [
            (m.id, m.content, m.status, m.importance, m.stability, m.access_count, m.last_access)
            for m in store.memories()
        ]
        events = dict(store.stats()["events"])
    return {"memories": memories, "events": events}


def decoded(text: str) -> Any:
    return json.loads(text)
