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
    lines = printed.splitlines()
    assert "supersede" in lines  # the correction was gated as a correction, losslessly
    versions = lines[lines.index("supersede") + 1 : lines.index("supersede") + 4]
    assert "superseded" in versions[1] and "port 5432" in versions[1], versions
    assert "active" in versions[2] and "now runs on port 5433" in versions[2], versions
    assert "fsrs6" in printed and "log_loss" in printed
    assert list(tmp_path.iterdir()) == [], "the README tour wrote into the working directory"
    # every stored time is simulated: none fell back to the wall clock (months after `now`)
    now = namespace["now"]
    with MemoryStore(Path(namespace["folder"]) / "agent.db", clock=lambda: now) as store:  # type: ignore[arg-type]
        frame = store.to_dataframe()
    # the correction made a new memory; the first is kept as its superseded version
    assert sorted(zip(frame["content"], frame["status"], strict=True)) == [
        ("Alice owns the billing service.", "active"),
        ("The staging database now runs on port 5433.", "active"),
        ("The staging database runs on port 5432.", "superseded"),
    ]
    for column in ("created_at", "updated_at", "last_access"):
        assert (pd.to_datetime(frame[column], utc=True) <= pd.Timestamp(now)).all(), column


def test_readme_results_are_those_of_their_files() -> None:
    """Every figure of the results table is in the results file its row names (no typed figure)."""
    text = README.read_text(encoding="utf-8")
    table = text.split("## Results", 1)[1].split("\n## ", 1)[0]
    rows = [r for r in table.splitlines() if r.startswith("| ") and "`" in r]
    assert len(rows) >= 6
    results = README.parent / "experiments" / "results"
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        source = (results / cells[-1].strip("`")).read_text(encoding="utf-8")
        numbers = [float(x) for x in re.findall(r"\d+(?:\.\d+)?", source)]
        for figure in re.findall(r"\d+(?:\.\d+)?", " ".join(cells[1:-1])):
            digits = len(figure.partition(".")[2])
            close = [x for x in numbers if abs(x - float(figure)) <= 0.5 * 10**-digits + 1e-12]
            assert close, f"{figure} is not in {cells[-1]} ({cells[0]})"
