"""Finding the shared data folder from any working directory."""

from __future__ import annotations

import importlib.util
import sqlite3
import zipfile
from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest
import zstandard

from memlab import datasets
from memlab.fit import load_reviews


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
    assert datasets.dataset_path("josh_reviews").is_relative_to((fake_shared / "shared").resolve())
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


# ------------------------------------------------------------------ the simulated Anki collection
def _anki_builder() -> ModuleType:
    """``datasets/make_anki_sim.py`` (shipped beside the data), loaded from its file."""
    path = datasets.shipped_dir() / "make_anki_sim.py"
    spec = importlib.util.spec_from_file_location("make_anki_sim", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tables(path: Path, folder: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The revlog and cards tables of a .colpkg, read with sqlite3 (not with memlab's loader)."""
    database = folder / f"{path.stem}.db"
    with zipfile.ZipFile(path) as package:
        database.write_bytes(zstandard.decompress(package.read("collection.anki21b")))
    with sqlite3.connect(database) as db:
        revlog = pd.read_sql_query("select * from revlog order by id", db)
        cards = pd.read_sql_query("select id, did, odid from cards order by id", db)
    return revlog, cards


def test_simulated_collection_exercises_the_loader_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(datasets.NO_SHARED_VAR, "1")
    path = datasets.dataset_path("anki_sim")
    assert path is not None and path.suffix == ".colpkg" and path.stat().st_size < 300_000
    data = datasets.load_dataset("anki_sim")
    revlog, cards = _tables(path, tmp_path)
    report, frame = data.report, data.frame
    dropped = report.dropped_rows
    assert report.layout == "anki" and report.rows_read == len(revlog)
    assert "days start at 4 h UTC+1 (localOffset)" in report.notes
    # manual rows (set due date, forget) and previews dropped, counted from the raw table
    manual = revlog["type"] == 4
    assert dropped["manual"] == manual.sum() > 0 and (revlog["ease"][manual] == 0).all()
    assert dropped["preview"] == ((revlog["type"] == 3) & (revlog["factor"] == 0)).sum() > 0
    # "Forget": every answer before a card's reset is dropped, its history restarts after it
    answers = ~manual & (revlog["type"] != 3)
    reset_at = revlog[manual & (revlog["factor"] == 0)].groupby("cid")["id"].max()
    learnt = set(revlog["cid"][revlog["type"] == 0])
    before = answers & revlog["cid"].map(reset_at).gt(revlog["id"]) & revlog["cid"].isin(learnt)
    assert dropped["before_last_learning"] == before.sum() > 0
    first = frame.groupby("card_id")["time"].min().reindex(reset_at.index).dropna()
    assert (first > pd.to_datetime(reset_at[first.index], unit="ms", utc=True)).all()
    # cards learnt before the log began (no learning answer) are dropped whole
    assert dropped["no_learning"] == (answers & ~revlog["cid"].isin(learnt)).sum() > 0
    assert set(frame["card_id"]) <= learnt
    assert len(frame) == answers.sum() - dropped["before_last_learning"] - dropped["no_learning"]
    # some answers fall after midnight but before the 4 am rollover (UTC+1): the day before's
    local_hour = (frame["time"] + pd.Timedelta(hours=1)).dt.hour
    assert (local_hour < 4).any()
    # the deck filter finds cards now in the filtered deck through their home deck (odid)
    geo = load_reviews(path, decks=["Geo"])
    home = cards["odid"].where(cards["odid"] != 0, cards["did"])
    geo_cards = set(cards["id"][home == cards["did"].max() - 1])  # Geo; Cram is the last deck
    assert set(geo.frame["card_id"]) == geo_cards & set(frame["card_id"])
    assert (cards["odid"] != 0).any() and geo.report.dropped_rows["filters"] > 0


def test_simulated_collection_is_rebuilt_by_its_builder(tmp_path: Path) -> None:
    builder = _anki_builder()
    first, second = builder.build(tmp_path / "a.colpkg"), builder.build(tmp_path / "b.colpkg")
    assert first.read_bytes() == second.read_bytes()  # deterministic, zip dates included
    shipped = datasets.shipped_dir() / datasets.DATASETS["anki_sim"].shipped
    for ours, theirs in zip(_tables(first, tmp_path), _tables(shipped, tmp_path), strict=True):
        pd.testing.assert_frame_equal(ours, theirs)
    pd.testing.assert_frame_equal(load_reviews(first).frame, load_reviews(shipped).frame)
