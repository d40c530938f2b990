"""Anki's own files as review logs: a collection (``collection.anki2`` / ``.anki21``), a
``.colpkg`` (with the zstd-compressed ``collection.anki21b`` of current Anki) or an ``.apkg``.

The ``revlog`` table holds one row per answer and per manual change: ``id`` (answer time, ms
since the epoch), ``cid`` (card), ``ease`` (button 1-4; 0 for manual rows), ``factor`` (ease
factor; 0 in filtered-deck previews and resets), ``time`` (answer duration, ms) and ``type``
(0 learning, 1 review, 2 relearning, 3 filtered deck, 4 manual, 5 rescheduled). The user's file is
never opened: the database is copied (or unpacked) into a temporary folder and read from there.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import tempfile
import zipfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from memlab.fit.data import FORMATS, PACKAGE_READERS, LoadReport, _timed

SQLITE_MAGIC = b"SQLite format 3\x00"
ZIP_MAGIC = b"PK\x03\x04"
#: Collection files in a package, newest first (a package with a newer one holds a stub in the
#: older names, telling old Anki versions to update).
PACKAGE_MEMBERS = ("collection.anki21b", "collection.anki21", "collection.anki2")
LEARNING, FILTERED, MANUAL, RESCHEDULED = 0, 3, 4, 5
_CONFIG_KEYS = ("rollover", "localOffset", "creationOffset", "schedVer")


def _head(path: Path) -> bytes:
    with open(path, "rb") as file:
        return file.read(16)


def is_package(path: Path) -> bool:
    """True when ``path`` is an SQLite database or a zip file (Anki's containers), or is named as
    an Anki file (then a damaged one is said to be no collection rather than read as a CSV)."""
    suffix = path.suffix.lower() in {".anki2", ".anki21", ".colpkg", ".apkg"}
    return path.is_file() and (suffix or _head(path).startswith((SQLITE_MAGIC, ZIP_MAGIC)))


def _not_collection(path: Path, why: str) -> ValueError:
    return ValueError(f"{path} is not an Anki collection ({why}); memlab reads {FORMATS}")


def _copy_database(path: Path, folder: Path) -> Path:
    """The collection database copied or unpacked into ``folder``."""
    target, head = folder / "collection.db", _head(path)
    if not head.startswith((SQLITE_MAGIC, ZIP_MAGIC)):
        raise _not_collection(path, "neither an SQLite database nor a zip package")
    if head.startswith(SQLITE_MAGIC):
        shutil.copyfile(path, target)
        wal = path.with_name(path.name + "-wal")  # changes Anki has not yet checkpointed
        if wal.is_file():
            shutil.copyfile(wal, folder / "collection.db-wal")
        return target
    import zstandard

    try:
        with zipfile.ZipFile(path) as package:
            names = set(package.namelist())
            member = next((m for m in PACKAGE_MEMBERS if m in names), None)
            if member is None:
                raise _not_collection(path, f"a zip file holding none of {list(PACKAGE_MEMBERS)}")
            with package.open(member) as source, open(target, "wb") as out:
                if member.endswith("b"):  # one zstd frame: a cut-short one is no database
                    stream = zstandard.ZstdDecompressor().decompressobj()
                    for chunk in iter(lambda: source.read(1 << 20), b""):
                        out.write(stream.decompress(chunk))
                    if not stream.eof:
                        raise zstandard.ZstdError(f"{member} is cut short")
                else:
                    shutil.copyfileobj(source, out)
    except (zipfile.BadZipFile, zstandard.ZstdError) as error:
        raise _not_collection(path, f"unreadable package: {error}") from error
    return target


def _read(db: sqlite3.Connection) -> tuple[pd.DataFrame, pd.DataFrame, dict[int, str], dict]:
    """Revlog, cards, deck names and the scheduling config of either schema generation."""
    tables = {row[0] for row in db.execute("select name from sqlite_master where type='table'")}
    if not {"revlog", "cards", "col"} <= tables:
        raise sqlite3.DatabaseError(
            "an SQLite database without Anki's revlog, cards and col tables"
        )
    columns = ["id", "cid", "ease", "factor", "time", "type"]
    rows = db.execute(f"select {', '.join(columns)} from revlog order by cid, id").fetchall()
    table = np.array(rows, dtype=float).reshape(-1, len(columns))  # NULL -> NaN; ids < 2**53
    revlog = pd.DataFrame(table, columns=columns).astype({"id": np.int64, "cid": np.int64})
    cards = pd.read_sql_query("select id, did, odid from cards", db)
    conf_json, decks_json, crt = db.execute("select conf, decks, crt from col").fetchone()
    if "config" in tables:  # schema 18: one row per key, JSON values
        rows = db.execute("select key, val from config")
        conf = {key: json.loads(value) for key, value in rows if key in _CONFIG_KEYS}
    else:
        conf = json.loads(conf_json or "{}")
    if "decks" in tables:  # schema 18 stores "Parent::Child" as "Parent\x1fChild"
        rows = db.execute("select id, name from decks")
    else:
        rows = ((int(i), deck["name"]) for i, deck in json.loads(decks_json or "{}").items())
    decks = {i: name.replace("\x1f", "::") for i, name in rows}
    conf["crt"] = crt
    return revlog, cards, decks, conf


def _unicase(a: str, b: str) -> int:
    a, b = a.casefold(), b.casefold()
    return (a > b) - (a < b)


def _deck_ids(decks: dict[int, str], wanted: Iterable[str | int]) -> set[int]:
    """Ids of the named (or numbered) decks and all their subdecks; an unknown deck raises."""
    folded = {i: name.casefold() for i, name in decks.items()}
    chosen: set[int] = set()
    for want in wanted:
        roots = {n for i, n in folded.items() if str(want).casefold() in (n, str(i))}
        if not roots:
            raise ValueError(f"no deck {want!r} in the collection; it has {sorted(decks.values())}")
        chosen |= {
            i for i, n in folded.items() if any(n == r or n.startswith(r + "::") for r in roots)
        }
    return chosen


def _timing(
    conf: dict[str, Any], rollover_hour: float | None, timezone: str | None, notes: list[str]
) -> tuple[float, float]:
    """Rollover hour and UTC offset (hours) of the collection's days, as Anki counts them."""
    v1 = conf.get("schedVer", 1) == 1  # the v1 scheduler's day starts at the creation time, UTC
    rollover = (conf["crt"] % 86_400) / 3_600 if v1 else float(conf.get("rollover", 4))
    rollover = rollover if rollover_hour is None else rollover_hour
    key = next((k for k in ("localOffset", "creationOffset") if k in conf and not v1), None)
    offset = -int(conf[key]) / 60 if key else 0.0  # stored in minutes west of UTC
    why = "v1 scheduler" if v1 else key or "no offset stored"
    notes.append(f"days start at {rollover:g} h " + (timezone or f"UTC{offset:+g} ({why})"))
    return rollover, offset


def read_anki(
    path: Path,
    *,
    decks: str | int | Iterable[str | int] | None = None,
    cards: int | Iterable[int] | None = None,
    convention: str = "anki",
    rollover_hour: float | None = None,
    timezone: str | None = None,
    invalid_grades: str = "raise",
) -> tuple[pd.DataFrame, LoadReport]:
    """The reviews of an Anki file as a tidy frame, with the rules the FSRS optimizer applies
    (Anki's ``reviews_for_fsrs`` in rslib ``scheduler/fsrs/params.rs``, and fsrs-rs's reader).

    Called by :func:`memlab.fit.data.load_reviews`, which documents the parameters. Each dropped
    row is counted in ``report.dropped_rows`` under the first rule that drops it:

    ``filters``
        ``decks=`` keeps the cards of the named or numbered decks and their subdecks (a card in
        a filtered deck in both its decks, as Anki's search); ``cards=`` keeps these ids. Without a
        filter, reviews of deleted cards are kept, as Anki's whole-collection optimisation does.
    ``preview``
        Filtered-deck answers with ``factor`` 0: previews that did not reschedule the card.
    ``manual``
        ``type`` 4 (set due date, forget), ``type`` 5 (rescheduled) or ``ease`` 0: no answer.
    ``invalid``
        Neither an answer graded 1-4 of ``type`` 0-3 nor a manual row: ``ValueError``, or dropped
        with ``invalid_grades="drop"``.
    ``before_last_learning``
        A card's history starts at its last run of learning answers: what came before belongs to
        a card that was reset and learnt again.
    ``no_learning``
        Cards with no learning answer (learnt before the log, or imported) or reset after it are
        dropped whole: their state at the first answer kept is unknown.

    Same-day reviews are kept (0 elapsed days: they shape the state but are not scored). Days
    start at the collection's rollover hour (default 4; the creation time of day for the v1
    scheduler) at the UTC offset ``localOffset`` of the device that last opened it (an
    ``.apkg``'s ``creationOffset``), as Anki's optimizer counts the whole history; pass
    ``timezone=`` (IANA) for wall-clock days with daylight saving instead. A deck preset's
    "ignore cards reviewed before" date is not applied (use ``decks=``).
    """
    report = LoadReport(source=str(path), layout="anki", convention=convention)
    decks = [decks] if isinstance(decks, str | int) else decks  # one deck, by name or id
    cards = [cards] if isinstance(cards, int | str) else cards  # one card id, or an iterable
    if cards is not None:
        try:
            cards = {int(c) for c in cards}
        except (TypeError, ValueError) as error:
            raise ValueError(f"cards= takes card ids (integers), got {cards!r}") from error
    with tempfile.TemporaryDirectory() as folder:
        target = _copy_database(path, Path(folder))
        db = sqlite3.connect(f"{target.as_uri()}?mode=ro", uri=True)
        db.create_collation("unicase", _unicase)  # schema 18 sorts deck names with it
        try:
            revlog, card_table, deck_names, conf = _read(db)
        except (sqlite3.DatabaseError, pd.errors.DatabaseError, ValueError, TypeError) as error:
            raise _not_collection(path, str(error)) from error
        finally:
            db.close()
    report.rows_read = len(revlog)
    dropped = report.dropped_rows
    if cards is not None or decks is not None:
        chosen = set(card_table["id"]) if cards is None else cards
        if decks is not None:
            in_decks = card_table[["did", "odid"]].isin(_deck_ids(deck_names, decks)).any(axis=1)
            chosen &= set(card_table["id"][in_decks])
        inside = revlog["cid"].isin(chosen)
        dropped["filters"] = int((~inside).sum())
        revlog = revlog[inside]
    ease, kind, factor = (revlog[c].to_numpy(dtype=float) for c in ("ease", "type", "factor"))
    preview = (kind == FILTERED) & (factor == 0)
    manual = ~preview & (np.isin(kind, (MANUAL, RESCHEDULED)) | (ease == 0))
    graded = np.isin(ease, (1, 2, 3, 4)) & np.isin(kind, (0, 1, 2, 3))
    invalid = ~preview & ~manual & ~graded
    if invalid.any():
        bad = revlog[invalid]
        shown = ", ".join(f"({e:g}, {t:g})" for e, t in bad[["ease", "type"]][:3].to_numpy())
        if invalid_grades != "drop":
            raise ValueError(
                f"{len(bad)} revlog row(s) are neither answers graded 1..4 nor manual rows "
                f"(e.g. ids {list(bad['id'][:3])} with (ease, type) {shown}); pass "
                "invalid_grades='drop' (memlab fit --invalid-grades drop) to skip them"
            )
    dropped["invalid"] = report.invalid_grade_rows = int(invalid.sum())
    dropped["preview"], dropped["manual"] = int(preview.sum()), int(manual.sum())
    scanned = ~preview & ~invalid  # Anki's backward scan skips previews
    scan, answer = revlog[scanned], ~manual[scanned]
    learning = (scan["type"] == LEARNING).to_numpy() & answer
    reset = ((scan["type"] == MANUAL) & (scan["factor"] == 0)).to_numpy()
    by_card = scan["cid"].to_numpy()
    other = pd.Series((~learning).astype(np.int64))
    before = (other.groupby(by_card).cumsum() - other).to_numpy()  # non-learning rows before
    ids = pd.Series(scan["id"].to_numpy())
    last_learning = ids.where(learning).groupby(by_card).transform("max").to_numpy()
    last_reset = ids.where(reset).groupby(by_card).transform("max").to_numpy()
    run = pd.Series(np.where(ids == last_learning, before, -1)).groupby(by_card).transform("max")
    started = ~np.isnan(last_learning) & ~(last_reset > last_learning)
    from_start = started & (before >= run.to_numpy())
    dropped["before_last_learning"] = int((answer & started & ~from_start).sum())
    dropped["no_learning"] = int((answer & ~started).sum())
    for rule, rows in dropped.items():
        if rows:
            report.notes.append(f"dropped {rows} revlog row(s) by the rule {rule!r}")
    kept = scan[answer & from_start].sort_values("id")
    rollover, offset = _timing(conf, rollover_hour, timezone, report.notes)
    frame = pd.DataFrame(
        {
            "card_id": kept["cid"].to_numpy(),
            "time": pd.to_datetime(kept["id"].to_numpy(), unit="ms", utc=True),
            "grade": kept["ease"].to_numpy(dtype=np.int64),
            "duration_ms": kept["time"].to_numpy(dtype=float),
        }
    )
    return _timed(frame, convention, rollover, timezone, offset), report


PACKAGE_READERS.append(("anki", is_package, read_anki))
