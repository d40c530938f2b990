"""Shared test fixtures: where the shared data lives, and seeded randomness."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, settings

from memlab.datasets import NO_SHARED_VAR, dataset_path, shared_hidden

# Nothing downloads at test time: fastembed and huggingface_hub stay offline.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("MPLBACKEND", "Agg")

REPO = Path(__file__).resolve().parents[1]
#: ``../shared`` beside the repository (CI clones the repo next to a copy of it).
SHARED = REPO.parent / "shared"
#: ``MEMLAB_NO_SHARED=1`` hides it (memlab.datasets honours the same switch).
HIDDEN = shared_hidden()

settings.register_profile(
    "memlab",
    max_examples=100,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.load_profile("memlab")


def shared_path(*parts: str) -> Path:
    """A path inside ../shared, skipping the calling test with a reason when it is absent."""
    path = SHARED.joinpath(*parts)
    if HIDDEN:
        pytest.skip(f"shared data hidden by ${NO_SHARED_VAR}: {path}")
    if not path.exists():
        pytest.skip(f"shared data not available: {path}")
    return path


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261130)


@pytest.fixture
def josh_reviews_path() -> Path:
    """The py-fsrs josh review log: the shared copy when present, else the one shipped in
    ``datasets/`` (the same file), so its tests run with and without the shared folder."""
    path = dataset_path("josh_reviews")
    assert path is not None
    return path


@pytest.fixture
def minilm_dir() -> Path:
    return shared_path("models", "all-MiniLM-L6-v2-onnx")
