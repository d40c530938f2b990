"""Build ``anki/anki_sim.colpkg``: a small SIMULATED Anki collection (CC0), seeded.

    python datasets/make_anki_sim.py            # rewrites datasets/anki/anki_sim.colpkg

One simulated learner studies 400 cards in two decks (``Lang::Spanish``, ``Geo``) through 2024,
remembering and forgetting exactly as FSRS-6 with :data:`WEIGHTS` (not the defaults) says. The
revlog is written as current Anki writes it, so that loading it exercises every rule of
:func:`memlab.fit.anki.read_anki`:

* new cards go through learning steps (1 min, 10 min; Easy graduates at once), answers of type 0
  with factor 0; a lapse (Again in review) is followed by a relearning step (type 2, 10 min);
* each review comes at the FSRS-6 interval for 90 % retention (fuzzed, sometimes late), is
  recalled with the true retrievability and graded Hard / Good / Easy, else Again;
* memory moves with every answer, same-day ones included (elapsed 0 days), counted in Anki's
  days: the collection's rollover is 4 am at UTC+1 (``localOffset`` -60), and sessions run from
  7 am to 1:30 am local time, so late-night answers belong to the day before;
* a few rows are no answers: "set due date" (type 4, ease 0) moves a card's next review, and
  "Forget" (type 4, ease 0, factor 0) resets a card, which is then learnt again from scratch;
* a few cards were learnt before the log begins (reviews with no learning answer), a cram
  session in a filtered deck leaves preview rows (type 3, factor 0; the simulated memory
  ignores them), and some Geo cards sit in that filtered deck now (``odid`` is Geo).

The container is a ``.colpkg`` as Anki exports it: a zip holding ``collection.anki21b`` (the
collection in schema 18 — ``config`` and ``decks`` tables —, zstd-compressed). Only the tables
the loader reads are there (``col``, ``config``, ``decks``, ``cards``, ``revlog``; no notes or
media). The build is deterministic: same seed, same rows; with the same SQLite and zstd
versions, the same zip bytes (fixed member dates).
"""

from __future__ import annotations

import json
import sqlite3
import sys
import tempfile
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import zstandard

from memlab.models.fsrs6 import FSRS6

HERE = Path(__file__).resolve().parent
TARGET = HERE / "anki" / "anki_sim.colpkg"
SEED = 20241231
#: FSRS-6 weights of the simulated learner (defaults changed: faster first forgetting, steeper
#: decay, larger gains on recall).
WEIGHTS = (
    0.4, 1.1, 3.2, 12.0, 6.8, 0.6, 2.4, 0.02, 1.6, 0.25, 0.9,
    1.7, 0.08, 0.35, 1.4, 0.5, 2.2, 0.6, 0.15, 0.1, 0.35,
)  # fmt: skip
DAY, MINUTE = 86_400_000, 60_000
START = 19_730  # 2024-01-08, days since the epoch; the log ends (is exported) at END
END = 20_089  # 2024-12-31
ROLLOVER, UTC_OFFSET_H = 4, 1
#: deck id -> (name, is a filtered deck)
DECKS = {
    1: ("Default", False),
    1704700800001: ("Lang", False),
    1704700800002: ("Lang::Spanish", False),
    1704700800003: ("Geo", False),
    1704700800004: ("Cram", True),
}
SPANISH, GEO, CRAM = 1704700800002, 1704700800003, 1704700800004
LEARN, REVIEW, RELEARN, FILTERED, MANUAL = range(5)


class Collection:
    """The revlog and cards of one simulated learner."""

    def __init__(self, seed: int = SEED) -> None:
        self.rng = np.random.default_rng(seed)
        self.model = FSRS6(WEIGHTS)
        self.rows: list[tuple] = []  # id, cid, usn, ease, ivl, lastIvl, factor, time, type
        self.session = (
            (START + np.arange(END - START + 1)) * DAY
            + (ROLLOVER - UTC_OFFSET_H) * 3_600_000
            + self.rng.integers(3 * 60, 21 * 60 + 30, END - START + 1) * MINUTE
        )  # each day's session start (UTC ms), 7:00 to 1:30 local

    def log(self, ms: int, cid: int, ease: int, kind: int, ivl: int, last: int, factor: int) -> int:
        """One revlog row at the first free millisecond from ``ms`` (ids are unique)."""
        taken = {row[0] for row in self.rows[-50:]}
        while ms in taken:
            ms += 1
        duration = int(min(60_000, self.rng.lognormal(np.log(6_000), 0.6)))
        self.rows.append((ms, cid, 0, ease, ivl, last, factor, duration * (ease > 0), kind))
        return ms

    def answer(self, s: float, d: float, t: float, recall_p: float, kind: int) -> tuple:
        """A graded answer drawn from the learner, and the memory state after it: (grade, S, D)."""
        if self.rng.random() < recall_p:
            grade = int(self.rng.choice([2, 3, 4], p=[0.12, 0.78, 0.10]))
        else:
            grade = 1
        s, d = self.model.review(stability=s, difficulty=d, elapsed_days=t, grade=grade)
        return grade, float(s), float(d)

    def learn(self, cid: int, ms: int, kind: int, s: float, d: float, last: int) -> tuple:
        """Learning steps of a new card (``s`` NaN) or relearning steps after a lapse, all on
        one day (elapsed 0 days): the card's state at graduation."""
        steps, step, wait = ([1, 10] if kind == LEARN else [10]), 0, 10
        for _ in range(6):
            if np.isnan(s):  # a new card's first answer: the learner's first impression
                grade = int(self.rng.choice([1, 2, 3, 4], p=[0.3, 0.1, 0.5, 0.1]))
                new = dict(stability=np.nan, difficulty=np.nan, elapsed_days=0.0)
                s, d = (float(x) for x in self.model.review(**new, grade=grade))
            else:
                p = float(self.model.retrievability(elapsed_days=wait / 1440, stability=s))
                grade, s, d = self.answer(s, d, 0.0, p, kind)
            step = 0 if grade == 1 else step + (grade >= 3) + len(steps) * (grade == 4)
            if step >= len(steps):  # graduates: ivl is the first interval, in days
                ivl = max(1, round(float(self.model.interval(stability=s, desired_retention=0.9))))
                self.log(ms, cid, grade, kind, ivl, last, 0 if kind == LEARN else 2500)
                break
            wait = steps[step]
            ms = self.log(ms, cid, grade, kind, -60 * wait, last, 0 if kind == LEARN else 2500)
            ms += wait * MINUTE
        return s, d

    def card(self, cid: int, introduced: int, known: bool, resets: bool, moved: bool) -> None:
        """The whole history of one card from day ``introduced`` to the end of the log."""
        rng, model = self.rng, self.model
        day, last_ivl = introduced, 0
        if known:  # learnt before the log begins: some prior state, no learning answers
            s, d = 5.0 + 20 * rng.random(), 4.0 + 3 * rng.random()
        else:
            s, d = self.learn(cid, self.start(day), LEARN, np.nan, np.nan, 0)
        reset_day = day + int(rng.integers(60, 200)) if resets else END + 1
        manual_day = day + int(rng.integers(20, 150)) if moved else END + 1
        while True:
            ivl = float(model.interval(stability=s, desired_retention=0.9))
            ivl = max(1, round(ivl * rng.lognormal(0, 0.25)))
            late = int(rng.geometric(0.12)) - 1 if rng.random() < 0.3 else 0
            due = day + ivl + late
            if manual_day <= min(due, reset_day):  # "set due date": the learner moves the card
                if manual_day > END:
                    return
                ivl = int(rng.integers(1, 15))
                self.log(self.start(manual_day), cid, 0, MANUAL, ivl, last_ivl, 2500)
                due, manual_day = manual_day + ivl, END + 1
            if reset_day <= due:  # "Forget": new again, learnt afresh one to four days on
                if reset_day > END:
                    return
                self.log(self.start(reset_day), cid, 0, MANUAL, 0, last_ivl, 0)
                day, reset_day, last_ivl = reset_day + int(rng.integers(1, 5)), END + 1, 0
                if day > END:
                    return
                s, d = self.learn(cid, self.start(day), LEARN, np.nan, np.nan, 0)
                continue
            if due > END:
                return
            t, day = due - day, due
            ms = self.start(day)
            r = float(model.retrievability(elapsed_days=t, stability=s))
            grade, s_new, d_new = self.answer(s, d, t, r, REVIEW)
            self.log(ms, cid, grade, REVIEW, ivl if grade > 1 else -600, last_ivl, 2500)
            s, d, last_ivl = s_new, d_new, ivl
            if grade == 1:  # a lapse: relearning steps the same day
                s, d = self.learn(cid, ms + 10 * MINUTE, RELEARN, s, d, ivl)

    def start(self, day: int) -> int:
        """A time (UTC ms) in the day's session."""
        return int(self.session[day - START] + self.rng.integers(0, 40 * MINUTE))

    def cram(self, cids: list[int], day: int) -> None:
        """A preview session in a filtered deck: answers that reschedule nothing (factor 0)."""
        for cid in cids:
            self.log(self.start(day), cid, int(self.rng.choice([1, 3])), FILTERED, 0, 0, 0)


def simulate(seed: int = SEED) -> tuple[list[tuple], list[tuple]]:
    """Revlog rows and card rows (id, did, odid, reps, lapses) of the collection."""
    sim = Collection(seed)
    decks = [SPANISH] * 240 + [GEO] * 160
    introduced = np.sort(sim.rng.integers(START, START + 200, len(decks)))
    cards = []
    for i, (deck, day) in enumerate(zip(decks, introduced, strict=True)):
        cid = START * DAY + 1000 * i  # creation time (ms), as Anki numbers cards
        known, resets, moved = i % 37 == 5, i % 23 == 7, i % 19 == 3
        sim.card(cid, int(day), known, resets, moved)
        home = deck
        did, odid = (CRAM, home) if deck == GEO and i % 10 == 0 else (home, 0)
        cards.append((cid, did, odid))
    sim.cram([c[0] for c in cards if c[1] == CRAM], START + 250)
    rows = sorted(sim.rows)
    reps = Counter(r[1] for r in rows if r[3] > 0)
    lapses = Counter(r[1] for r in rows if r[3] == 1 and r[8] == REVIEW)
    return rows, [(*c, reps[c[0]], lapses[c[0]]) for c in cards]


def write_collection(path: Path, rows: list[tuple], cards: list[tuple]) -> None:
    """An Anki schema-18 collection database holding the loader's tables."""
    db = sqlite3.connect(path)
    db.create_collation(
        "unicase", lambda a, b: (a.casefold() > b.casefold()) - (a.casefold() < b.casefold())
    )
    crt = START * 86_400 + (ROLLOVER - UTC_OFFSET_H) * 3_600
    db.executescript(
        """
        create table col (id integer primary key, crt integer not null, mod integer not null,
          scm integer not null, ver integer not null, dty integer not null, usn integer not null,
          ls integer not null, conf text not null, models text not null, decks text not null,
          dconf text not null, tags text not null);
        create table config (KEY text not null primary key, usn integer not null,
          mtime_secs integer not null, val blob not null) without rowid;
        create table decks (id integer primary key not null, name text not null collate unicase,
          mtime_secs integer not null, usn integer not null, common blob not null,
          kind blob not null);
        create unique index idx_decks_name on decks (name);
        create table cards (id integer primary key, nid integer not null, did integer not null,
          ord integer not null, mod integer not null, usn integer not null, type integer not null,
          queue integer not null, due integer not null, ivl integer not null,
          factor integer not null, reps integer not null, lapses integer not null,
          left integer not null, odue integer not null, odid integer not null,
          flags integer not null, data text not null);
        create table revlog (id integer primary key, cid integer not null, usn integer not null,
          ease integer not null, ivl integer not null, lastIvl integer not null,
          factor integer not null, time integer not null, type integer not null);
        """
    )
    mod = END * 86_400
    db.execute(
        "insert into col values (1, ?, ?, ?, 18, 0, 0, 0, '', '', '', '', '')", (crt, mod, mod)
    )
    conf = {"schedVer": 2, "rollover": ROLLOVER, "localOffset": -60 * UTC_OFFSET_H,
            "creationOffset": -60 * UTC_OFFSET_H, "fsrs": True}  # fmt: skip
    db.executemany(
        "insert into config values (?, 0, ?, ?)",
        [(k, mod, json.dumps(v).encode()) for k, v in sorted(conf.items())],
    )
    db.executemany(
        "insert into decks values (?, ?, ?, 0, x'', ?)",
        [(i, n.replace("::", "\x1f"), mod, b"\x01" if f else b"") for i, (n, f) in DECKS.items()],
    )
    db.executemany(
        "insert into cards values (?, ?, ?, 0, ?, 0, 2, 2, 0, 0, 0, ?, ?, 0, 0, ?, 0, '{}')",
        [(cid, cid, did, mod, reps, lapses, odid) for cid, did, odid, reps, lapses in cards],
    )
    db.executemany("insert into revlog values (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    db.commit()
    db.execute("vacuum")
    db.close()


def build(target: Path = TARGET, seed: int = SEED) -> Path:
    """Write the ``.colpkg`` to ``target`` (deterministic for a given seed)."""
    rows, cards = simulate(seed)
    with tempfile.TemporaryDirectory() as folder:
        database = Path(folder) / "collection.anki21b"
        write_collection(database, rows, cards)
        packed = zstandard.ZstdCompressor(level=19).compress(database.read_bytes())
    target.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(target, "w") as package:
        for name, data in (("collection.anki21b", packed), ("media", b"")):
            package.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)
    return target


if __name__ == "__main__":
    path = build(Path(sys.argv[1]) if len(sys.argv) > 1 else TARGET)
    print(f"wrote {path} ({path.stat().st_size:,} bytes)")
