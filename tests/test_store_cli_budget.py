"""``memlab store sweep --keep ... --keep-by ...``: a budget from the shell."""

from __future__ import annotations

import contextlib
import io
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memlab.cli import main
from memlab.gate import Gate
from memlab.store import MemoryStore

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def _run(db: Path, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["store", args[0], "--db", str(db), *args[1:]])
        except SystemExit as stop:  # argparse refuses a bad option
            code = int(stop.code or 0)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "notes.db"
    with MemoryStore(path, gate=Gate.off()) as s:
        for i, word in enumerate(["harbour", "lantern", "quartz", "meadow", "violin", "copper"]):
            s.ingest(f"note {i} about the {word} " + "and more words " * i, now=T0)
    return path


def test_sweep_with_a_budget_dry_then_applied(db: Path) -> None:
    later = (T0 + timedelta(days=10)).isoformat()
    code, out, _ = _run(db, "sweep", "--keep", "2", "--keep-by", "length", "--json", "--now", later)
    dry = json.loads(out)
    assert code == 0 and dry["dry_run"] and dry["counts"] == {"drop": 4, "keep": 2}
    assert {r["reason"] for r in dry["rows"] if r["action"] == "drop"} == {"budget"}
    with MemoryStore(db) as s:
        assert len(s.memories(include_archived=False)) == 6  # a dry run changed nothing
    code, out, _ = _run(db, "sweep", "--keep", "0.5", "--apply", "--json", "--now", later)
    assert code == 0 and json.loads(out)["applied"] == 3
    with MemoryStore(db) as s:
        assert len(s.memories(include_archived=False)) == 3


@pytest.mark.parametrize("keep", ["half", "0", "1.5"])
def test_a_bad_keep_is_refused(db: Path, keep: str) -> None:
    code, _, err = _run(db, "sweep", "--keep", keep, "--apply")
    assert code != 0 and "keep" in err
    with MemoryStore(db) as s:
        assert len(s.memories(include_archived=False)) == 6
