from __future__ import annotations

import json
from pathlib import Path

import pytest
from fit_helpers import josh_log

from memlab.cli import main
from memlab.datasets import dataset_path
from memlab.fit import load_reviews
from memlab.fit.compare import compare_models

METRICS = {"log_loss", "rmse_bins", "auc", "n"}


def test_fit_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fit", str(josh_log()), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert set(payload) == {"models", "seconds", "timings"}
    # load and fit times reported apart (values not asserted: tests never assert times)
    assert {"load", "fsrs6_fit", "heat_fit", "exponential_fit", "total"} <= set(payload["timings"])
    assert set(payload["models"]) == {"fsrs6_default", "fsrs6", "heat", "exponential"}
    for model in payload["models"].values():
        assert set(model) == {"params", "train", "test"}
        assert set(model["train"]) == METRICS and set(model["test"]) == METRICS
    assert payload["models"]["fsrs6_default"]["test"]["log_loss"] == pytest.approx(0.4515, abs=5e-5)
    assert payload["models"]["fsrs6"]["test"]["log_loss"] < 0.4515
    assert len(payload["models"]["fsrs6"]["params"]["weights"]) == 21
    assert set(payload["models"]["heat"]["params"]) == {"k", "c", "u_minutes"}


def test_fit_srs_benchmark_protocol(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["fit", str(josh_log()), "--protocol", "srs-benchmark", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    bench = payload["srs_benchmark"]
    assert set(bench) == {"fsrs6_default", "fsrs6"}
    assert len(bench["fsrs6"]["folds"]) == 5 and bench["fsrs6"]["rows"]["outlier_cards"] > 0
    assert bench["fsrs6"]["metrics"]["n"] == bench["fsrs6_default"]["metrics"]["n"]
    assert bench["fsrs6"]["metrics"]["log_loss"] < bench["fsrs6_default"]["metrics"]["log_loss"]


def test_fit_text_and_errors(
    small_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["fit", str(small_log), "--holdout", "0.25"]) == 0
    out = capsys.readouterr().out
    assert "fsrs6_default" in out and "exponential" in out and "8 reviews of 3 cards" in out
    # too small for the srs-benchmark's folds: said, and the 80/20 table still printed
    assert main(["fit", str(small_log), "--protocol", "srs-benchmark"]) == 0
    out = capsys.readouterr().out
    assert "fsrs6_default" in out and "srs-benchmark protocol not run" in out
    assert "outlier rule left out" in out and "too few for 5 time-series folds" in out
    bad = tmp_path / "bad.csv"
    bad.write_text("card_id,review_rating\n1,3\n")
    assert main(["fit", str(bad)]) == 2
    assert "missing column" in capsys.readouterr().err
    assert main(["fit", str(tmp_path / "nope.csv")]) == 2
    assert main(["fit", str(small_log), "--deck", "Lang"]) == 2  # the option named as it is spelt
    assert "--deck" in capsys.readouterr().err
    with pytest.raises(SystemExit):  # argparse's usage error, in plain words
        main(["fit", str(small_log), "--l2", "abc"])
    assert "argument --l2: must be a number or 'auto', got 'abc'" in capsys.readouterr().err
    # one review leaves nothing to train on: a clear error, not numpy's broadcasting message
    one = tmp_path / "one.csv"
    one.write_text(
        "card_id,review_rating,review_time,review_duration\n1,3,2024-01-01T10:00:00Z,1000\n"
    )
    capsys.readouterr()
    assert main(["fit", str(one)]) == 2
    assert "no scoreable review" in capsys.readouterr().err
    with pytest.raises(ValueError, match="no scoreable review"):
        compare_models(load_reviews(one), models=["fsrs6", "hlr", "avg"])
    # a test part with nothing to score is an error, not a table of NaN (fsrs6_default too)
    rows = [f"{c},3,2024-0{1 + d}-01T10:00:00Z,1000" for c in range(1, 9) for d in range(3)]
    rows += [f"{c},3,2024-06-01T1{h}:00:00Z,1000" for c in range(20, 26) for h in (0, 1)]
    late = tmp_path / "late.csv"
    late.write_text("card_id,review_rating,review_time,review_duration\n" + "\n".join(rows))
    assert main(["fit", str(late), "--models", "fsrs6_default,avg"]) == 2
    assert "nothing to test on; try a larger holdout" in capsys.readouterr().err


def test_fit_chosen_models_on_the_simulated_collection(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = dataset_path("anki_sim")
    models = ["fsrs6", "hlr", "avg", "sm2"]
    assert main(["fit", str(path), "--models", ",".join(models), "--deck", "Geo"]) == 0
    out = capsys.readouterr().out
    table = compare_models(load_reviews(path, decks=["Geo"]), models=models).round(4)
    assert table.to_string() in out  # the compare_models table, printed whole
    assert "heat" not in out and "exponential" not in out and "  sm2:" not in out
    assert main(["fit", str(path), "--models", "fsrs6,nope"]) == 2
    err = capsys.readouterr().err
    assert "unknown model 'nope'" in err and "moving-avg" in err


def test_eval_gate_json_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the STS-B samples shipped in datasets/ (with or without the shared folder), thinned to
    # small files of the same format (the command accepts any STS-B-format file)
    train = dataset_path("stsb_train_sample")
    test = dataset_path("stsb_dev_sample")
    small_train, small_test = tmp_path / "train.csv", tmp_path / "test.csv"
    small_train.write_text(
        "".join(train.read_text(encoding="utf-8").splitlines(keepends=True)[::2]), encoding="utf-8"
    )
    small_test.write_text(
        "".join(test.read_text(encoding="utf-8").splitlines(keepends=True)[::2]), encoding="utf-8"
    )
    assert main(["eval", "gate", str(small_train), str(small_test), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert set(payload) == {"default", "fitted", "learned"}
    assert len(payload["fitted"]["thresholds"]) == 2
    for name in payload:
        assert 0.0 <= payload[name]["macro_f1"] <= 1.0
    assert main(["eval", "gate", str(small_train), str(small_test)]) == 0
    out = capsys.readouterr().out
    assert "macro-F1" in out and "reinforce" in out


def test_fit_continuous_convention(capsys: pytest.CaptureFixture[str]) -> None:
    # FSRS-7 is made for fractional days (memlab.fit.fsrs7): the command line offers them too
    assert main(["fit", str(josh_log()), "--convention", "continuous", "--models", "avg"]) == 0
    assert "days: continuous" in capsys.readouterr().out


def test_fit_refuses_fsrs6_options_when_no_fsrs6_fit_runs(
    small_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # --l2 and --recency shape the FSRS-6 fit only: without fsrs6 they would be silently ignored
    for option in (["--l2", "5"], ["--recency", "1"]):
        assert main(["fit", str(small_log), "--models", "heat,avg", *option]) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and "add fsrs6 to --models" in captured.err
        assert len(captured.err.splitlines()) == 1
    # the srs-benchmark protocol fits FSRS-6 with them, so they apply there
    args = ["fit", str(small_log), "--models", "avg", "--l2", "5", "--protocol", "srs-benchmark"]
    assert main(args) == 0


def test_fit_with_nothing_fitted_prints_no_empty_sections(
    small_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["fit", str(small_log), "--models", "fsrs6_default", "--holdout", "0.25"]) == 0
    out = capsys.readouterr().out
    assert "fsrs6_default" in out and "parameters:" not in out and "fit ;" not in out
    assert "fit " not in out.splitlines()[-1]


def test_fit_split_heading_does_not_round_a_small_holdout_away(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["fit", str(josh_log()), "--models", "avg", "--holdout", "0.001"]) == 0
    assert "first 99.9% of reviews train, last 0.1% test" in capsys.readouterr().out
    assert main(["fit", str(josh_log()), "--models", "avg", "--holdout", "0.3"]) == 0
    assert "first 70% of reviews train, last 30% test" in capsys.readouterr().out


def test_fit_refuses_a_day_convention_an_srs_benchmark_log_cannot_take(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # its day_offset already counts Anki days: a 24h or continuous convention would be ignored
    rows = [f"{card},{day},{3 if day % 4 else 1}" for card in range(6) for day in range(0, 40, 3)]
    log = tmp_path / "revlog.csv"
    log.write_text("card_id,day_offset,rating\n" + "\n".join(rows) + "\n")
    for convention in ("24h", "continuous"):
        assert main(["fit", str(log), "--models", "avg", "--convention", convention]) == 2
        captured = capsys.readouterr()
        assert captured.out == "" and "--convention" in captured.err
        assert "an srs-benchmark log is in Anki days" in captured.err
    assert main(["fit", str(log), "--models", "avg", "--convention", "anki"]) == 0
    assert "days: anki (day_offset)" in capsys.readouterr().out
