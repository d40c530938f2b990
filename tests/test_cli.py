from __future__ import annotations

from pathlib import Path

import pytest

from memlab.cli import main
from memlab.demo import heat_sweep_table, side_by_side_table


def test_demo_prints_the_side_by_side_table_and_writes_the_figure(tmp_path: Path, capsys) -> None:
    assert main(["demo", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "fsrs6 (S=7d)" in out and "heat/100" in out and "exponential (S=7d)" in out
    assert (tmp_path / "curves.png").stat().st_size > 10_000


def test_demo_tables_are_computed_not_canned() -> None:
    table = side_by_side_table(stability=7.0)
    assert table.loc[7.0, "fsrs6 (S=7d)"] == pytest.approx(0.9)
    sweep = heat_sweep_table()
    protected = sweep[sweep["protected"]]
    assert set(protected["memory"]) == {"old mission", "old caveat"}
    assert (protected["action"] == "keep").all()
    assert "drop" in set(sweep["action"])


def test_unknown_command_is_an_argparse_error() -> None:
    with pytest.raises(SystemExit):
        main(["no-such-command"])
