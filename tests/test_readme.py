"""The README's python blocks run as printed, on one simulated clock, leaving no stray files."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from memlab.store import MemoryStore

README = Path(__file__).resolve().parents[1] / "README.md"


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)


def test_readme_has_its_tour() -> None:
    assert len(_python_blocks()) >= 3


def test_readme_python_blocks_run_on_the_simulated_clock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    namespace: dict[str, object] = {}
    for block in _python_blocks():
        exec(compile(block, str(README), "exec"), namespace)  # noqa: S102
    printed = capsys.readouterr().out
    assert "update The staging database now runs on port 5433." in printed
    assert "fsrs6" in printed and "log_loss" in printed
    assert list(tmp_path.iterdir()) == [], "the README tour wrote into the working directory"
    # every stored time is simulated: none fell back to the wall clock (months after `now`)
    now = namespace["now"]
    with MemoryStore(Path(namespace["folder"]) / "agent.db", clock=lambda: now) as store:  # type: ignore[arg-type]
        frame = store.to_dataframe()
    assert len(frame) == 2  # the correction UPDATEd the first memory
    for column in ("created_at", "updated_at", "last_access"):
        assert (pd.to_datetime(frame[column], utc=True) <= pd.Timestamp(now)).all(), column
