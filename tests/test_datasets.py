"""Finding the shared data folder from any working directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from memlab import datasets


@pytest.fixture
def fake_shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(datasets.ENV_VAR, raising=False)
    monkeypatch.delenv(datasets.NO_SHARED_VAR, raising=False)
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


def test_no_shared_switch_hides_the_shared_folder(
    fake_shared: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(fake_shared / "repo" / "notebooks")
    monkeypatch.setenv(datasets.ENV_VAR, str(fake_shared / "shared"))
    monkeypatch.setenv(datasets.NO_SHARED_VAR, "1")
    assert datasets.shared_dir(required=False) is None
    with pytest.raises(datasets.SharedDataMissing, match="MEMLAB_NO_SHARED"):
        datasets.shared_dir()
    # the review log is shipped too: it resolves to the shipped copy
    assert datasets.dataset_path("josh_reviews") == datasets.shipped_dir() / (
        "reviews/py-fsrs_review_logs_josh.csv"
    )
    with pytest.raises(datasets.SharedDataMissing, match="only in the shared folder"):
        datasets.dataset_path("minilm")
    assert datasets.dataset_path("minilm", required=False) is None
    monkeypatch.setenv(datasets.NO_SHARED_VAR, "0")
    assert datasets.shared_dir() == (fake_shared / "shared").resolve()


def test_shared_copy_is_preferred_when_present(
    fake_shared: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(fake_shared / "repo" / "notebooks")
    assert (
        datasets.dataset_path("josh_reviews")
        == (fake_shared / "shared" / "data" / "reviews" / "py-fsrs_review_logs_josh.csv").resolve()
    )


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(KeyError, match="josh_reviews"):
        datasets.dataset_path("no-such-data")


@pytest.mark.parametrize("name", sorted(n for n, d in datasets.DATASETS.items() if d.shipped))
def test_every_shipped_dataset_loads_and_has_its_licence(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(datasets.NO_SHARED_VAR, "1")
    path = datasets.dataset_path(name)
    assert path is not None and path.is_file()
    assert any(p.name.upper().startswith("LICENSE") for p in path.parent.iterdir())
    data = datasets.load_dataset(name)
    assert len(data) > 0


def test_shipped_data_is_real_and_complete(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(datasets.NO_SHARED_VAR, "1")
    reviews = datasets.load_dataset("josh_reviews").frame
    assert len(reviews) == 12_580 and reviews["card_id"].nunique() == 1_205
    (conv,) = datasets.load_dataset("locomo_conv30")
    assert conv.sample_id == "conv-30" and len(conv.turns) == 369 and len(conv.questions) == 105
    dev = datasets.load_dataset("stsb_dev_sample")
    assert len(dev) == 500 and dev["score"].between(0, 5).all()
    assert set(dev["source"]) <= {"headlines", "images", "track5.en-en"}


def test_source_chooses_the_copy(fake_shared: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(fake_shared / "repo" / "notebooks")
    shipped = datasets.dataset_path("josh_reviews", source="shipped")
    assert shipped == datasets.shipped_dir() / "reviews" / "py-fsrs_review_logs_josh.csv"
    assert datasets.dataset_path("josh_reviews", source="shared").is_relative_to(
        (fake_shared / "shared").resolve()
    )
    with pytest.raises(ValueError, match="not shipped"):
        datasets.dataset_path("minilm", source="shipped")
    with pytest.raises(ValueError, match="source must be"):
        datasets.dataset_path("josh_reviews", source="nearest")


def test_classic_savings_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(datasets.NO_SHARED_VAR, "1")
    ebb = datasets.load_dataset("ebbinghaus1885")
    assert list(ebb["t_minutes"]) == [20, 64, 526, 1440, 2880, 8640, 44640]
    assert (ebb["minutes"] == ebb["t_minutes"] - 1).all()
    assert list(ebb["savings"]) == [58.2, 44.2, 35.8, 33.7, 27.8, 25.4, 21.1]
    assert list(ebb["calculated"]) == [57.0, 46.7, 34.5, 30.4, 28.1, 24.9, 21.2]
    rep = datasets.load_dataset("murre_dros2015")
    assert rep.groupby("subject").size().to_dict() == {"Dros": 7, "Mack": 7, "Seitz": 7}
    dros = rep[rep["subject"] == "Dros"]
    assert list(dros["savings"]) == [47.17, 37.29, 27.64, 31.68, 23.0, 16.82, 4.1]
    assert list(dros["minutes"]) == [20, 60, 540, 1440, 2880, 8640, 44640]
    assert rep["savings"].between(0, 100).all()
