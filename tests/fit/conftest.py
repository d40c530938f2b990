"""Fixtures for the fitting tests: small review logs written to temporary CSV files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

JOSH = ("data", "reviews", "py-fsrs_review_logs_josh.csv")


def random_histories(rng: np.random.Generator, n_cards: int = 40, width: int = 12, same_day: float = 0.25):
    """Padded grades/elapsed with every branch of FSRS-6 present (all grades, same-day and later)."""
    lengths = rng.integers(1, width + 1, n_cards)
    grades = rng.integers(1, 5, (n_cards, width))
    grades[np.arange(width)[None, :] >= lengths[:, None]] = 0
    elapsed = np.where(rng.random((n_cards, width)) < same_day, 0.0, rng.integers(1, 60, (n_cards, width)).astype(float))
    elapsed[:, 0] = np.nan
    elapsed[grades == 0] = np.nan
    return grades, elapsed


def write_pyfsrs_csv(path: Path, rows: list[tuple]) -> Path:
    pd.DataFrame(rows, columns=["card_id", "review_rating", "review_time", "review_duration"]).to_csv(path, index=False)
    return path


@pytest.fixture
def small_log(tmp_path: Path) -> Path:
    rows = [
        (1, 3, "2024-01-01T10:00:00+00:00", 1000),
        (2, 1, "2024-01-01T10:01:00+00:00", 1000),
        (2, 3, "2024-01-01T10:05:00+00:00", 1000),
        (1, 3, "2024-01-03T11:00:00+00:00", 1000),
        (2, 3, "2024-01-04T09:00:00+00:00", 1000),
        (1, 1, "2024-01-10T12:00:00+00:00", 1000),
        (3, 4, "2024-01-10T12:30:00+00:00", 1000),
        (2, 2, "2024-01-12T09:00:00+00:00", 1000),
    ]
    return write_pyfsrs_csv(tmp_path / "small.csv", rows)
