from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fit_helpers import josh_log, write_pyfsrs_csv

from memlab.fit.compare import HeatFitter
from memlab.fit.data import histories, load_reviews, time_split
from memlab.fit.fsrs6 import FSRS6Fitter


def test_small_log_tidy(small_log: Path) -> None:
    data = load_reviews(small_log)
    frame = data.frame
    assert list(frame["card_id"]) == [1, 2, 2, 1, 2, 1, 3, 2]
    assert list(frame["review"]) == [0, 0, 1, 1, 2, 2, 0, 3]
    # 24h convention: 2024-01-01 10:00 -> 2024-01-03 11:00 is 2 days; 10:05 -> 01-04 09:00 is 2 days
    assert np.isnan(frame["elapsed_days"].iloc[0])
    assert frame["elapsed_days"].iloc[2] == 0.0
    assert frame["elapsed_days"].iloc[3] == 2.0
    assert frame["elapsed_days"].iloc[4] == 2.0
    assert data.report.cards == 3 and data.report.single_review_cards == 1
    anki = load_reviews(small_log, convention="anki").frame
    assert anki["elapsed_days"].iloc[4] == 3.0  # calendar days (4 am rollover): Jan 1 -> Jan 4


def test_histories_and_scoreable(small_log: Path) -> None:
    frame = load_reviews(small_log).frame
    h = histories(frame)
    assert list(h.card_ids) == [1, 2, 3]
    assert h.grades.tolist() == [[3, 3, 1, 0], [1, 3, 3, 2], [4, 0, 0, 0]]
    scored = h.scoreable()
    # first reviews and the same-day second review of card 2 are not scored
    assert scored.tolist() == [[False, True, True, False], [False, False, True, True], [False] * 4]
    assert (h.values(frame["grade"].to_numpy(), 0) == h.grades).all()


def test_time_split_is_by_time(small_log: Path) -> None:
    frame = load_reviews(small_log).frame
    test = time_split(frame, 0.25)
    assert test.tolist() == [False] * 6 + [True] * 2
    with pytest.raises(ValueError, match="holdout"):
        time_split(frame, 1.0)


def test_time_split_of_a_subset_holds_out_its_latest_share(small_log: Path) -> None:
    # a tidy frame cut to some cards keeps its global ``order`` values, which skip numbers
    frame = load_reviews(small_log).frame
    subset = frame[frame["card_id"] == 2]
    assert time_split(subset, 0.25).tolist() == [False, False, False, True]


@pytest.mark.parametrize(
    ("column", "row", "value"),
    [("grade", 3, 5), ("grade", 3, 0), ("grade", 3, "3"), ("elapsed_days", 3, np.nan)]
    + [("elapsed_days", 4, -2.0)],
)
def test_fitters_refuse_a_tidy_frame_with_bad_grades_or_days(
    small_log: Path, column: str, row: int, value: object
) -> None:
    frame = load_reviews(small_log).frame.astype({column: object})
    frame.loc[row, column] = value  # rows 3 and 4 are second reviews of cards 1 and 2
    for fitter in (FSRS6Fitter(), HeatFitter()):
        with pytest.raises(ValueError, match="grades must be 1..4 and elapsed_days >= 0"):
            fitter.fit(frame)


def test_frame_out_of_time_order_is_refused(small_log: Path) -> None:
    frame = load_reviews(small_log).frame
    with pytest.raises(ValueError, match="time order"):
        histories(frame.iloc[::-1])
    with pytest.raises(ValueError, match="time order"):
        time_split(frame.iloc[::-1], 0.25)


def test_missing_columns(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    pd.DataFrame({"card_id": [1], "review_rating": [3]}).to_csv(path, index=False)
    with pytest.raises(ValueError, match="missing column.*review_time"):
        load_reviews(path)


def test_unknown_layout(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    pd.DataFrame({"a": [1], "b": [3]}).to_csv(path, index=False)
    with pytest.raises(ValueError, match="layout"):
        load_reviews(path)


def test_empty_file(tmp_path: Path) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(ValueError, match="empty"):
        load_reviews(empty)
    header_only = tmp_path / "header.csv"
    header_only.write_text("card_id,review_rating,review_time,review_duration\n")
    with pytest.raises(ValueError, match="no reviews"):
        load_reviews(header_only)


def test_unknown_grades_raise_or_drop(tmp_path: Path) -> None:
    path = write_pyfsrs_csv(
        tmp_path / "g.csv",
        [
            (1, 3, "2024-01-01T10:00:00Z", 1),
            (1, 5, "2024-01-02T10:00:00Z", 1),
            (1, 0, "2024-01-03T10:00:00Z", 1),
        ],
    )
    with pytest.raises(ValueError, match="grade outside 1..4"):
        load_reviews(path)
    data = load_reviews(path, invalid_grades="drop")
    assert len(data.frame) == 1 and data.report.invalid_grade_rows == 2


def test_unsorted_rows_are_sorted_and_counted(tmp_path: Path) -> None:
    path = write_pyfsrs_csv(
        tmp_path / "u.csv",
        [
            (1, 3, "2024-01-05T10:00:00Z", 1),
            (1, 1, "2024-01-01T10:00:00Z", 1),
            (2, 3, "2024-01-03T10:00:00Z", 1),
        ],
    )
    data = load_reviews(path)
    assert data.frame["grade"].tolist() == [1, 3, 3]
    assert data.frame["elapsed_days"].iloc[2] == 4.0
    assert data.report.resorted_rows == 2  # the rows that come after a later one


def test_duplicate_timestamps(tmp_path: Path) -> None:
    rows = [
        (1, 3, "2024-01-01T10:00:00Z", 1),
        (1, 3, "2024-01-01T10:00:00Z", 1),
        (1, 3, "2024-01-03T10:00:00Z", 1),
    ]
    data = load_reviews(write_pyfsrs_csv(tmp_path / "d.csv", rows))
    assert len(data.frame) == 2 and data.report.duplicate_rows == 1
    rows[1] = (1, 1, "2024-01-01T10:00:00Z", 1)
    with pytest.raises(ValueError, match="different grades at the same time"):
        load_reviews(write_pyfsrs_csv(tmp_path / "c.csv", rows))


def test_srs_benchmark_layout(tmp_path: Path) -> None:
    table = pd.DataFrame(
        {
            "card_id": [7, 7, 8, 7, 8],
            "day_offset": [0, 0, 1, 3, 5],
            "rating": [3, 3, 1, 4, 3],
            "state": [0, 1, 0, 2, 1],
            "elapsed_days": [-1, 0, -1, 3, 4],
            "elapsed_seconds": [-1, 60, -1, 250000, 340000],
        }
    )
    csv = tmp_path / "revlogs.csv"
    table.to_csv(csv, index=False)
    data = load_reviews(csv)
    assert data.report.layout == "srs-benchmark"
    frame = data.frame
    assert frame["grade"].tolist() == [3, 3, 1, 4, 3]
    assert np.isnan(frame["elapsed_days"].iloc[0]) and np.isnan(frame["elapsed_days"].iloc[2])
    assert frame["elapsed_days"].iloc[[1, 3, 4]].tolist() == [0.0, 3.0, 4.0]
    for column, bad, words in (
        ("day_offset", float("inf"), "day_offset is missing or not a finite number in 1 row"),
        ("card_id", None, "card_id is missing in 1 row"),
    ):
        broken = table.astype({column: object})
        broken.loc[2, column] = bad
        broken.to_csv(csv, index=False)
        with pytest.raises(ValueError, match=words):
            load_reviews(csv)


def _benchmark_table() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "card_id": [7, 7, 8],
            "day_offset": [0, 2, 3],
            "rating": [3, 1, 3],
            "elapsed_days": [-1, 2, -1],
        }
    )


def test_srs_benchmark_parquet(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    path = tmp_path / "revlogs.parquet"
    _benchmark_table().to_parquet(path)
    assert load_reviews(path).frame["grade"].tolist() == [3, 1, 3]


def test_parquet_without_engine_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a machine without a parquet engine: importing pyarrow (or fastparquet) fails
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "fastparquet", None)
    path = tmp_path / "revlogs.parquet"
    path.write_bytes(b"PAR1")
    with pytest.raises(ValueError, match="pyarrow") as info:
        load_reviews(path)
    assert "\n" not in str(info.value)  # the command line prints it as its one line


def test_bad_source_type() -> None:
    with pytest.raises(TypeError):
        load_reviews(42)  # type: ignore[arg-type]
    with pytest.raises(FileNotFoundError):
        load_reviews("/nonexistent/reviews.csv")


def test_josh_log() -> None:
    data = load_reviews(josh_log())
    assert data.report.reviews == 12580 and data.report.cards == 1205
    assert data.report.resorted_rows == 0 and data.report.duplicate_rows == 0
    test = time_split(data.frame, 0.2)
    assert test.sum() == 12580 - int(0.8 * 12580)
    # the split is by time: every test review is later than every training review
    assert data.frame["time"][test].min() >= data.frame["time"][~test].max()
