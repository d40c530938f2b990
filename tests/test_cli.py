from __future__ import annotations

import sys
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
    # the answer clears the relevance test and is strengthened; weaker hits are returned as is
    assert effect["stability_after"].iloc[0] > effect["stability_before"].iloc[0]
    assert (effect["stability_after"] >= effect["stability_before"]).all()
    sweep = tour["sweep"].set_index("id")
    assert sweep.loc[3, "protected"] and sweep.loc[3, "action"] == "keep"  # the caveat is protected
    # running the tour again on the same file starts afresh: the demo is reproducible
    again = store_tour(tmp_path / "tour.db")
    assert again["ingest"].equals(tour["ingest"])


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"memlab {version('memlab')}"


def test_demo_help_describes_the_demo(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["demo", "--help"])
    out = capsys.readouterr().out
    assert "forgetting laws side by side" in out and "LoCoMo" in out
    # the demo replaces its own files in --out on every run: the help says so
    assert "replacing" in out and "tour.db" in out and "curves.png" in out


def test_error_prefix_names_the_subcommand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = str(tmp_path / "missing.csv")
    assert main(["eval", "gate", missing, missing]) == 2
    err = capsys.readouterr().err
    assert err.startswith("memlab eval gate: error: ") and "missing.csv" in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("make_folder", [True, False], ids=["no-model-inside", "not-a-folder"])
def test_model_dir_without_a_model_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make_folder: bool
) -> None:
    from memlab.datasets import dataset_path

    folder = tmp_path / "empty-model"
    if make_folder:
        folder.mkdir()
        (folder / "config.json").write_text("{}")
    train, dev = dataset_path("stsb_train_sample"), dataset_path("stsb_dev_sample")
    code = main(["eval", "gate", str(train), str(dev), "--model-dir", str(folder)])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("memlab eval gate: error: --model-dir ") and len(err.splitlines()) == 1


def test_demo_uses_the_shipped_locomo_conversation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from memlab.demo import _locomo_section

    monkeypatch.setenv("MEMLAB_NO_SHARED", "1")
    _locomo_section()
    out = capsys.readouterr().out
    assert "locomo_conv-30.json" in out and "recall@10" in out


def test_eval_gate_progress_embeds_the_same_vectors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from memlab.datasets import dataset_path

    files = []
    for name in ("stsb_train_sample", "stsb_dev_sample"):
        # texts of their own, so no vector cached by an earlier test hides the embedding
        rows = dataset_path(name).read_text(encoding="utf-8").splitlines()
        target = tmp_path / f"{name}.csv"
        target.write_text(
            "".join(
                "\t".join([*f[:5], f[5] + " (progress)", f[6] + " (progress)", *f[7:]]) + "\n"
                for f in (row.split("\t") for row in rows)
            ),
            encoding="utf-8",
        )
        files.append(str(target))
    assert main(["eval", "gate", *files, "--json", "--progress"]) == 0
    captured = capsys.readouterr()
    assert "embedding" in captured.err  # the bar, on stderr
    assert main(["eval", "gate", *files, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(captured.out)


def test_demo_checks_its_options_before_printing_or_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a bad --stability: one line on stderr, no half-printed tables, no output folder
    assert main(["demo", "--out", str(tmp_path / "out"), "--stability", "0"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "stability must be a finite number > 0" in captured.err
    assert not (tmp_path / "out").exists()
    # an --out that is a file: named as such, before anything is printed
    taken = tmp_path / "taken"
    taken.write_text("mine")
    assert main(["demo", "--out", str(taken), "--no-plot"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and f"--out {taken}: not a folder" in captured.err
    assert taken.read_text() == "mine"


def test_a_missing_optional_dependency_is_a_one_line_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # a base install has no fastembed (the embed extra): its commands say so, no traceback
    monkeypatch.setitem(sys.modules, "fastembed", None)
    assert main(["models", "list"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("memlab models list: error: ") and "fastembed" in err
    assert len(err.splitlines()) == 1
