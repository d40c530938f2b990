"""Anki collections, .colpkg and .apkg read as review logs (memlab.fit.anki): small collections
built here with sqlite3, one test per rule of the loader and one per container."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import zstandard

from memlab.cli import main
from memlab.fit import histories, load_reviews

DAY_MS = 86_400_000
T0 = int(pd.Timestamp("2024-03-01 12:00", tz="UTC").value // 10**6)  # noon UTC
LEARN, REVIEW, RELEARN, FILTERED, MANUAL, RESCHEDULED = range(6)
CONF = {"schedVer": 2, "rollover": 4, "localOffset": 0}
DECKS = {1: "Default", 2: "Lang", 3: "Lang::French", 4: "Other", 5: "Filtered"}


def row(cid: int, day: float, ease: int = 3, kind: int = REVIEW, factor: int = 2500) -> tuple:
    """A revlog row ``day`` days after T0 (ids stay unique: the card id adds milliseconds)."""
    return (T0 + round(day * DAY_MS) + cid, cid, 0, ease, 1, 0, factor, 4000, kind)


def learnt(cid: int, start: float = 0.0) -> list[tuple]:
    """A card learnt (two learning steps on day ``start``) and reviewed one and four days on."""
    return [
        row(cid, start, 1, LEARN, 0),
        row(cid, start + 0.01, 3, LEARN, 0),
        row(cid, start + 1, 3),
        row(cid, start + 5, 3),
    ]


def collection(
    path: Path,
    rows: list[tuple],
    *,
    schema: str = "legacy",
    conf: dict | None = None,
    cards: dict[int, tuple[int, int]] | None = None,
    crt: int = T0 // 1000,
) -> Path:
    """An Anki collection: ``legacy`` (col.conf / col.decks JSON) or ``v18`` (config and decks
    tables, deck names with \\x1f). ``cards`` maps card id -> (did, odid); default deck 1."""
    conf = CONF if conf is None else conf
    cards = cards or {r[1]: (1, 0) for r in rows}
    db = sqlite3.connect(path)
    db.create_collation("unicase", lambda a, b: (a.lower() > b.lower()) - (a.lower() < b.lower()))
    legacy = schema == "legacy"
    db.execute("create table col (id, crt, mod, scm, ver, dty, usn, ls, conf, models, decks)")
    decks = {str(i): {"id": i, "name": n} for i, n in DECKS.items()}
    db.execute(
        "insert into col values (1, ?, 0, 0, ?, 0, 0, 0, ?, '{}', ?)",
        (crt, 11 if legacy else 18, json.dumps(conf) if legacy else "", json.dumps(decks) * legacy),
    )
    db.execute(
        "create table revlog (id integer primary key, cid, usn, ease, ivl, lastIvl, factor, "
        "time, type)"
    )
    db.executemany("insert into revlog values (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    db.execute("create table cards (id integer primary key, nid, did, odid)")
    db.executemany("insert into cards values (?, 0, ?, ?)", [(c, *d) for c, d in cards.items()])
    if not legacy:
        db.execute("create table config (KEY text primary key, usn, mtime_secs, val blob)")
        db.executemany(
            "insert into config values (?, 0, 0, ?)",
            [(k, json.dumps(v).encode()) for k, v in conf.items()],
        )
        db.execute("create table decks (id integer primary key, name text collate unicase)")
        db.execute("create unique index idx_decks_name on decks (name)")
        db.executemany(
            "insert into decks values (?, ?)",
            [(i, n.replace("::", "\x1f")) for i, n in DECKS.items()],
        )
    db.commit()
    db.close()
    return path


def reviews(path: Path, **options) -> pd.DataFrame:
    return load_reviews(path, **options).frame


def card(frame: pd.DataFrame, cid: int) -> tuple[list[int], list[float]]:
    rows = frame[frame["card_id"] == cid]
    return rows["grade"].tolist(), rows["elapsed_days"].fillna(-1).tolist()


# ----------------------------------------------------------------------------------- the rules
def test_preview_rows_in_filtered_decks_are_dropped(tmp_path: Path) -> None:
    rows = learnt(1) + [row(1, 3, 4, FILTERED, 0)]  # preview / cram: no rescheduling
    rows += learnt(2) + [row(2, 3, 4, FILTERED, 2500)]  # filtered deck that rescheduled: kept
    data = load_reviews(collection(tmp_path / "c.anki2", rows))
    assert card(data.frame, 1) == ([1, 3, 3, 3], [-1, 0, 1, 4])
    assert card(data.frame, 2) == ([1, 3, 3, 4, 3], [-1, 0, 1, 2, 2])
    assert data.report.dropped_rows["preview"] == 1


def test_manual_and_rescheduled_rows_are_dropped(tmp_path: Path) -> None:
    rows = learnt(1) + [row(1, 2, 0, MANUAL, 2500), row(1, 3, 0, RESCHEDULED, 2500)]
    rows += [row(1, 4, 0, REVIEW, 2500), row(1, 4.5, 3, MANUAL, 2500)]  # ease 0, or type 4
    data = load_reviews(collection(tmp_path / "c.anki2", rows))
    assert card(data.frame, 1) == ([1, 3, 3, 3], [-1, 0, 1, 4])
    assert data.report.dropped_rows["manual"] == 4


def test_rows_graded_outside_1_to_4_raise_or_drop(tmp_path: Path) -> None:
    rows = learnt(1) + [row(1, 7, 7, REVIEW)]
    path = collection(tmp_path / "c.anki2", rows)
    with pytest.raises(ValueError, match=rf"ids \[{rows[-1][0]}\].*invalid_grades='drop'"):
        load_reviews(path)
    data = load_reviews(path, invalid_grades="drop")
    assert card(data.frame, 1)[0] == [1, 3, 3, 3]
    assert data.report.invalid_grade_rows == data.report.dropped_rows["invalid"] == 1
    # a value no integer can hold (a fraction, NULL) is named as it is
    odd = learnt(2) + [row(2, 7, 2.5, REVIEW), row(2, 8, 3, None)]  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"\(ease, type\) \(2\.5, 1\), \(3, nan\)"):
        load_reviews(collection(tmp_path / "odd.anki2", odd))


def test_forget_drops_the_history_before_the_reset(tmp_path: Path) -> None:
    reset = [row(1, 6, 0, MANUAL, 0)]
    rows = learnt(1) + reset + learnt(1, 10)  # forgotten, then learnt again
    rows += learnt(2) + [row(2, 6, 0, MANUAL, 0), row(2, 8, 3, REVIEW)]  # reset, not relearnt
    data = load_reviews(collection(tmp_path / "c.anki2", rows))
    assert card(data.frame, 1) == ([1, 3, 3, 3], [-1, 0, 1, 4])
    assert data.frame["time"][data.frame["card_id"] == 1].min().value // 10**6 == rows[5][0]
    assert 2 not in set(data.frame["card_id"])
    assert data.report.dropped_rows["before_last_learning"] == 4
    assert data.report.dropped_rows["no_learning"] == 5


def test_history_starts_at_the_last_learning_run(tmp_path: Path) -> None:
    rows = [row(1, 0, 3), row(1, 4, 3)]  # no learning answer (learnt before the log)
    # learnt, reviewed, then learnt again with no reset row (an older Anki's "forget"); a
    # preview row inside the second run does not break it
    rows += learnt(2) + [row(2, 9, 1, LEARN, 0), row(2, 9.01, 3, FILTERED, 0)]
    rows += [row(2, 9.02, 3, LEARN, 0), row(2, 12, 3)]
    data = load_reviews(collection(tmp_path / "c.anki2", rows))
    assert 1 not in set(data.frame["card_id"])
    assert card(data.frame, 2) == ([1, 3, 3], [-1, 0, 3])
    assert data.report.dropped_rows["no_learning"] == 2
    assert data.report.dropped_rows["before_last_learning"] == 4


def test_same_day_reviews_are_kept_but_not_scored(tmp_path: Path) -> None:
    data = load_reviews(collection(tmp_path / "c.anki2", learnt(1)))
    assert card(data.frame, 1) == ([1, 3, 3, 3], [-1, 0, 1, 4])
    assert histories(data.frame).scoreable().tolist() == [[False, False, True, True]]


@pytest.mark.parametrize("schema", ["legacy", "v18"])
def test_rollover_and_utc_offset_of_the_collection(tmp_path: Path, schema: str) -> None:
    # 17:00 and 19:00 UTC: one UTC day; at UTC+10 they are 03:00 and 05:00 local, either side
    # of a 4 am rollover, and both after a 2 am one
    rows = [row(1, 0.2083, 3, LEARN, 0), row(1, 0.2917, 3, LEARN, 0)]

    def elapsed(conf: dict, **options) -> float:
        path = collection(
            tmp_path / f"{len(list(tmp_path.iterdir()))}.anki2", rows, schema=schema, conf=conf
        )
        return card(reviews(path, **options), 1)[1][1]

    assert elapsed(CONF) == 0
    assert elapsed({**CONF, "localOffset": -600}) == 1
    assert elapsed({**CONF, "localOffset": -600, "rollover": 2}) == 0
    assert elapsed({**CONF, "localOffset": -600}, rollover_hour=2) == 0
    assert elapsed({**CONF, "localOffset": -600}, timezone="UTC") == 0
    assert elapsed({**CONF, "localOffset": -600}, convention="24h") == 0
    assert elapsed({"schedVer": 2, "creationOffset": -600}) == 1  # an .apkg's config
    # v1 scheduler: a day starts at the creation time of day (18:00 UTC here)
    v1 = collection(tmp_path / "v1.anki2", rows, schema=schema, conf={}, crt=T0 // 1000 + 6 * 3600)
    assert card(reviews(v1), 1)[1][1] == 1


def test_deck_and_card_filters(tmp_path: Path) -> None:
    rows = learnt(1) + learnt(2) + learnt(3) + learnt(4)
    cards = {1: (2, 0), 2: (3, 0), 3: (5, 3), 4: (4, 0)}  # card 3 is in a filtered deck, from 3
    for schema in ("legacy", "v18"):
        path = collection(tmp_path / f"{schema}.anki2", rows, schema=schema, cards=cards)
        assert set(reviews(path, decks=["lang"])["card_id"]) == {1, 2, 3}
        assert set(reviews(path, decks="lang")["card_id"]) == {1, 2, 3}  # one deck, unlisted
        assert set(reviews(path, cards=4)["card_id"]) == {4}
        assert set(reviews(path, decks=["Lang::French", 4])["card_id"]) == {2, 3, 4}
        assert set(reviews(path, cards=[1, 4], decks=["Lang"])["card_id"]) == {1}
        assert load_reviews(path, decks=["Other"]).report.dropped_rows["filters"] == 12
        # a filtered deck named is the cards in it now, as Anki's deck: search finds them
        assert set(reviews(path, decks="Filtered")["card_id"]) == {3}
    with pytest.raises(ValueError, match="no deck 'Nope'.*Lang::French"):
        load_reviews(path, decks=["Nope"])


def test_benchmark_protocol_keeps_the_deck_filter_of_a_24h_load(tmp_path: Path) -> None:
    # a log loaded in 24-hour days is reloaded in Anki days for the srs-benchmark protocol:
    # with the same deck filter, not the whole collection
    from memlab.fit.protocol import benchmark_frame

    rows = learnt(1) + learnt(2) + learnt(3) + learnt(4)
    cards = {1: (2, 0), 2: (3, 0), 3: (5, 3), 4: (4, 0)}
    path = collection(tmp_path / "c.anki2", rows, cards=cards)
    data = load_reviews(path, decks="Lang", convention="24h")
    assert set(benchmark_frame(data)["card_id"]) == {1, 2, 3}


# ---------------------------------------------------------------------------------- containers
def test_every_container_gives_the_same_reviews(tmp_path: Path) -> None:
    rows = learnt(1) + learnt(2, 3) + [row(2, 20, 0, MANUAL, 0)] + learnt(2, 21)
    legacy = collection(tmp_path / "collection.anki2", rows)
    v18 = collection(tmp_path / "collection.anki21", rows, schema="v18")
    stub = collection(tmp_path / "stub.anki2", learnt(9))  # old Anki's "please update" stub
    colpkg, apkg = tmp_path / "backup.colpkg", tmp_path / "deck.apkg"
    with zipfile.ZipFile(colpkg, "w") as package:
        package.writestr("collection.anki21b", zstandard.compress(v18.read_bytes()))
        package.write(stub, "collection.anki2")
        package.writestr("media", b"\x00")
    with zipfile.ZipFile(apkg, "w") as package:
        package.write(legacy, "collection.anki21")
        package.write(stub, "collection.anki2")
        package.writestr("media", "{}")
    before = hashlib.sha256(legacy.read_bytes()).hexdigest()
    frames = [reviews(p) for p in (legacy, v18, colpkg, apkg)]
    assert hashlib.sha256(legacy.read_bytes()).hexdigest() == before
    assert sorted(set(frames[0]["card_id"])) == [1, 2] and len(frames[0]) == 8
    for frame in frames[1:]:
        pd.testing.assert_frame_equal(frame, frames[0])


def test_changes_still_in_the_write_ahead_log_are_read(tmp_path: Path) -> None:
    path = collection(tmp_path / "collection.anki2", learnt(1))
    open_in_anki = sqlite3.connect(path)  # Anki keeps its collection open in WAL mode
    open_in_anki.execute("pragma journal_mode=wal")
    open_in_anki.execute("pragma wal_autocheckpoint=0")
    open_in_anki.executemany("insert into revlog values (?, ?, ?, ?, ?, ?, ?, ?, ?)", learnt(2))
    open_in_anki.execute("insert into cards values (2, 0, 1, 0)")
    open_in_anki.commit()
    assert Path(f"{path}-wal").stat().st_size > 0
    assert set(reviews(path)["card_id"]) == {1, 2}
    open_in_anki.close()


def test_files_that_are_no_collection(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("create table t (x)").connection.close()
    no_collection = tmp_path / "empty.apkg"
    with zipfile.ZipFile(no_collection, "w") as package:
        package.writestr("media", "{}")
    for path in (other, no_collection):
        with pytest.raises(ValueError, match=r"not an Anki collection.*\.colpkg or an \.apkg"):
            load_reviews(path)
    # a backup cut short inside its zstd collection: the stream's end is missing, not the tables
    payload = zstandard.compress(
        collection(tmp_path / "v18.anki21", learnt(1), schema="v18").read_bytes()
    )
    cut = tmp_path / "cut.colpkg"
    with zipfile.ZipFile(cut, "w") as package:
        package.writestr("collection.anki21b", payload[: len(payload) // 2])
    with pytest.raises(
        ValueError, match=r"cut\.colpkg is not an Anki collection \(unreadable package: .*cut short"
    ):
        load_reviews(cut)
    with pytest.raises(ValueError, match="Anki collections only"):
        load_reviews(pd.DataFrame({"card_id": [1]}), decks=["Lang"])
    # a damaged file named as an Anki file is said to be no collection, not read as a CSV
    for name in ("damaged.colpkg", "damaged.apkg", "collection.anki2", "collection.anki21"):
        (tmp_path / name).write_text("garbage\n1,2\n")
        with pytest.raises(ValueError, match="not an Anki collection .neither an SQLite database"):
            load_reviews(tmp_path / name)


# ------------------------------------------------------------------------------------------ CLI
def test_cli_reads_a_collection(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rng = np.random.default_rng(0)
    rows = [r for cid in range(1, 13) for r in learnt(cid, float(rng.integers(0, 5)))]
    rows = [r[:3] + (int(rng.integers(1, 5)),) + r[4:] if r[8] == REVIEW else r for r in rows]
    rows += [row(1, 30, 0, MANUAL, 2500), row(13, 3, 3, REVIEW)]
    cards = {cid: (3 if cid % 3 else 4, 0) for cid in range(1, 14)}
    path = collection(tmp_path / "collection.anki2", rows, cards=cards)
    assert main(["fit", str(path), "--deck", "Lang", "--holdout", "0.25"]) == 0
    out = capsys.readouterr().out
    assert "32 reviews of 8 cards (anki, days: anki)" in out and "'manual'" in out
    bad = collection(tmp_path / "bad.anki2", rows + [row(2, 40, 9, REVIEW)])
    assert main(["fit", str(bad)]) == 2
    assert "--invalid-grades drop" in capsys.readouterr().err
    assert main(["fit", str(bad), "--invalid-grades", "drop", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["models"]["fsrs6"]["test"]["n"] > 0


def test_cli_unknown_format_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blob = tmp_path / "collection.bin"
    blob.write_bytes(bytes(range(256)) * 4)
    assert main(["fit", str(blob)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "codec" not in err
    assert ".colpkg" in err and ".apkg" in err and "srs-benchmark" in err and "py-fsrs" in err


def test_card_ids_given_as_text_and_filters_that_keep_nothing(tmp_path: Path) -> None:
    path = collection(tmp_path / "c.anki2", learnt(11) + learnt(4))
    # a card id typed as text is that card, not its digits one by one
    assert set(reviews(path, cards="11")["card_id"]) == {11}
    assert set(reviews(path, cards=["11", 4])["card_id"]) == {11, 4}
    with pytest.raises(ValueError, match="cards= takes card ids"):
        load_reviews(path, cards=["eleven"])
    # a filter that keeps nothing says so
    with pytest.raises(ValueError, match="no valid reviews left.*'filters': 8"):
        load_reviews(path, cards=[99])
