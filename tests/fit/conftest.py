"""Fixtures for the fitting tests: small review logs written to temporary CSV files."""

from __future__ import annotations

from pathlib import Path

import pytest
from fit_helpers import write_pyfsrs_csv


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
