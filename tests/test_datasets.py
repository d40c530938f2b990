"""Finding the shared data folder from any working directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from memlab import datasets


@pytest.fixture
def fake_shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(datasets.ENV_VAR, raising=False)
    (tmp_path / "shared" / "data" / "reviews").mkdir(parents=True)
    (tmp_path / "shared" / "data" / "reviews" / "py-fsrs_review_logs_josh.csv").write_text(
        "card_id\n"
    )
    (tmp_path / "repo" / "notebooks").mkdir(parents=True)
    return tmp_path


def test_found_upwards_from_a_notebook_folder(
    fake_shared: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(fake_shared / "repo" / "notebooks")
    assert datasets.shared_dir() == (fake_shared / "shared").resolve()
    assert (
        datasets.shared_path("josh_reviews")
        == (fake_shared / "shared" / "data" / "reviews" / "py-fsrs_review_logs_josh.csv").resolve()
    )


def test_env_var_wins_and_must_exist(
    fake_shared: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    other = tmp_path / "elsewhere"
    (other / "data").mkdir(parents=True)
    monkeypatch.setenv(datasets.ENV_VAR, str(other))
    monkeypatch.chdir(fake_shared / "repo" / "notebooks")
    assert datasets.shared_dir() == other.resolve()
    monkeypatch.setenv(datasets.ENV_VAR, str(tmp_path / "missing"))
    with pytest.raises(datasets.SharedDataMissing, match="MEMLAB_SHARED"):
        datasets.shared_dir()
    assert datasets.shared_dir(required=False) is None


def test_missing_file_raises_or_returns_none(
    fake_shared: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(fake_shared / "repo")
    with pytest.raises(datasets.SharedDataMissing, match="locomo"):
        datasets.shared_path("locomo_dev5")
    assert datasets.shared_path("locomo_dev5", required=False) is None
    with pytest.raises(ValueError, match="at least one"):
        datasets.shared_path()
