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


def test_store_tour_runs_the_gate_search_testing_effect_and_sweep(tmp_path: Path) -> None:
    from memlab.demo import store_tour

    tour = store_tour(tmp_path / "tour.db")
    assert tour["ingest"]["decision"].tolist() == [
        "create",
        "create",
        "create",
        "reinforce",
        "supersede",
        "create",
    ]
    assert tour["search"]["id"].iloc[0] == 4  # the corrected port fact answers the port question
    assert "5433" in tour["search"]["content"].iloc[0]
    effect = tour["testing_effect"]
    assert (effect["stability_after"] > effect["stability_before"]).all()
    sweep = tour["sweep"].set_index("id")
    assert sweep.loc[3, "protected"] and sweep.loc[3, "action"] == "keep"  # the caveat is protected
    # running the tour again on the same file starts afresh: the demo is reproducible
    again = store_tour(tmp_path / "tour.db")
    assert again["ingest"].equals(tour["ingest"])
