"""Crash safety and concurrency with real processes: SIGKILL mid-ingest, two writers on one file."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memlab.store import MemoryStore

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

WRITER = r"""
import sys, random
from datetime import datetime, timedelta, timezone
from memlab.store import IndexOptions, MemoryStore
path, tag, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(tag)
vocab = [f"{tag}w{i}" for i in range(3000)]
store = MemoryStore(path, index=IndexOptions(switch_at=25, n_trees=5))
i = 0
while count < 0 or i < count:
    text = f"{tag} item {i}: " + " ".join(rng.sample(vocab, 8))
    r = store.ingest(text, project=tag)
    print(r.memory_id, r.decision.value, text, flush=True)
    i += 1
store.close()
"""


def _spawn(path: Path, tag: str, count: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), tag, str(count)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )


def _recoverable(path: Path) -> set[str]:
    conn = sqlite3.connect(path)
    try:
        texts = {r[0] for r in conn.execute("SELECT content FROM memories")}
        texts |= {
            r[0]
            for r in conn.execute(
                "SELECT text FROM events WHERE kind IN ('observation', 'version')"
            )
        }
    finally:
        conn.close()
    return texts


def test_sigkill_mid_ingest_loses_nothing_returned(tmp_path: Path) -> None:
    path = tmp_path / "crash.db"
    proc = _spawn(path, "k", -1)
    assert proc.stdout is not None
    returned: list[tuple[int, str]] = []
    deadline = time.monotonic() + 120
    while len(returned) < 60 and time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        mid, _decision, text = line.rstrip("\n").split(" ", 2)
        returned.append((int(mid), text))
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert len(returned) == 60, proc.stderr.read() if proc.stderr else ""
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    ids = {r[0] for r in conn.execute("SELECT id FROM memories")}
    conn.close()
    assert {mid for mid, _ in returned} <= ids
    assert {text for _, text in returned} <= _recoverable(path)
    # the store opens again (index checked or rebuilt) and finds the last returned memory
    with MemoryStore(path) as s:
        last_id, last_text = returned[-1]
        assert s.search(last_text, k=3, mark_accessed=False)[0].memory.id == last_id
        assert s.rankings(last_text, 1)[1][0][0] == last_id


def test_two_writers_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "shared.db"
    MemoryStore(path).close()  # create the schema once
    procs = [_spawn(path, tag, 40) for tag in ("a", "b")]
    outputs = [p.communicate(timeout=300) for p in procs]
    for p, (_, err) in zip(procs, outputs, strict=True):
        assert p.returncode == 0, err
    lines = [line.split(" ", 2) for out, _ in outputs for line in out.splitlines()]
    assert len(lines) == 80
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()
    assert {text for _, _, text in lines} <= _recoverable(path)
    with MemoryStore(path) as s:
        assert len(s) == len({int(mid) for mid, _, _ in lines})
        for mid, _, text in lines[::9]:
            assert s.rankings(text, 1)[1][0][0] == int(mid)
