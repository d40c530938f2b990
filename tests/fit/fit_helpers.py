"""Helpers for the fitting tests (shared data paths, small synthetic histories and logs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from memlab import datasets

#: ``../shared`` beside the repository (CI clones the repo next to a copy of it).
SHARED = Path(__file__).resolve().parents[2].parent / "shared"


def josh_log() -> Path:
    """The py-fsrs ``josh`` review log: the shared folder's copy when present, else the copy
    shipped in ``datasets/`` (the same file), so the tests that read it run on every machine."""
    return datasets.dataset_path("josh_reviews")


def shared_path(*parts: str) -> Path:
    """A path inside the shared folder, skipping the calling test with a reason when it is absent.

    ``../shared`` beside the repository first, then :func:`memlab.datasets.shared_path`
    (``MEMLAB_SHARED``, or ``shared/`` beside the working directory or one of its parents);
    none when ``MEMLAB_NO_SHARED`` hides the shared folder.
    """
    path = SHARED.joinpath(*parts)
    if path.exists() and not datasets.shared_hidden():
        return path
    found = datasets.shared_path(*parts, required=False)
    if found is None:
        pytest.skip(
            f"shared data not available: {'/'.join(parts)} "
            f"(looked in {SHARED} and beside the working directory and its parents)"
        )
    return found


def random_histories(
    rng: np.random.Generator, n_cards: int = 40, width: int = 12, same_day: float = 0.25
):
    """Padded grades/elapsed with every FSRS-6 branch present (all grades, same-day and later)."""
    lengths = rng.integers(1, width + 1, n_cards)
    grades = rng.integers(1, 5, (n_cards, width))
    grades[np.arange(width)[None, :] >= lengths[:, None]] = 0
    elapsed = np.where(
        rng.random((n_cards, width)) < same_day,
        0.0,
        rng.integers(1, 60, (n_cards, width)).astype(float),
    )
    elapsed[:, 0] = np.nan
    elapsed[grades == 0] = np.nan
    return grades, elapsed


def write_pyfsrs_csv(path: Path, rows: list[tuple]) -> Path:
    pd.DataFrame(
        rows, columns=["card_id", "review_rating", "review_time", "review_duration"]
    ).to_csv(path, index=False)
    return path
