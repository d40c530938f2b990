"""Review logs: loaders into one tidy frame, per-card histories, and the time-ordered split.

Layouts: ``"py-fsrs"`` (``card_id, review_rating, review_time[, review_duration]``, ISO times),
``"srs-benchmark"`` (``card_id, day_offset, rating[, elapsed_days]``, CSV or parquet) and
``"anki"`` (:func:`memlab.fit.anki.read_anki`). All become the tidy frame (:data:`TIDY_COLUMNS`),
sorted by time: ``time`` is NaT when the layout has only days, ``day`` counts from the log's first
review, ``elapsed_days`` is NaN at a card's first review, ``review`` indexes within the card and
``order`` is the global time rank.

Bad input: empty files, missing columns, unparseable times, grades outside 1..4 (unless
``invalid_grades="drop"``) and conflicting grades at one time raise ``ValueError``; rows out of
order are sorted and exact duplicates dropped, each counted in :class:`LoadReport`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import NDArray

from memlab.models.days import elapsed_days_by_card

Layout = Literal["auto", "py-fsrs", "srs-benchmark", "anki"]
TIDY_COLUMNS: tuple[str, ...] = (
    "card_id",
    "time",
    "day",
    "grade",
    "elapsed_days",
    "review",
    "order",
    "duration_ms",
)
PYFSRS_COLUMNS: tuple[str, ...] = ("card_id", "review_rating", "review_time")
BENCHMARK_COLUMNS: tuple[str, ...] = ("card_id", "day_offset", "rating")
FORMATS = (
    "a py-fsrs review-log CSV, an srs-benchmark revlog (CSV or parquet), an Anki collection "
    "(collection.anki2 / .anki21), a .colpkg or an .apkg"
)


@dataclass
class LoadReport:
    """What a loader did with its input: counts of everything dropped, moved or kept aside."""

    source: str = ""
    layout: str = ""
    convention: str = ""
    rows_read: int = 0
    reviews: int = 0
    cards: int = 0
    invalid_grade_rows: int = 0
    duplicate_rows: int = 0
    resorted_rows: int = 0
    single_review_cards: int = 0
    dropped_rows: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: Readers of collection files: ``(layout, recognises(path), read(path, **options))``. Each
#: registers itself when its module is imported (:mod:`memlab.fit.anki`, loaded with
#: :mod:`memlab.fit`), so this module depends on none of them.
PACKAGE_READERS: list[tuple[str, Callable[[Path], bool], Callable[..., Any]]] = []


@dataclass
class ReviewData:
    """A tidy review log (see module docs), the report of how it was loaded and the options of
    :func:`load_reviews` it was loaded with (``options``: what a reload in another day
    convention, e.g. the srs-benchmark protocol's, must repeat)."""

    frame: pd.DataFrame
    report: LoadReport
    options: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.frame)


Reviews = ReviewData | pd.DataFrame | str | Path


def _read_table(path: Path) -> pd.DataFrame:
    if not path.exists():
        raise FileNotFoundError(f"review log not found: {path}")
    if path.suffix.lower() in (".parquet", ".pq"):
        try:
            return pd.read_parquet(path)
        except ImportError as error:  # pragma: no cover - depends on pyarrow
            raise ValueError("reading parquet needs pyarrow (pip install pyarrow)") from error
    try:
        return pd.read_csv(path)
    except pd.errors.EmptyDataError as error:
        raise ValueError(f"review log {path} is empty") from error
    except (UnicodeDecodeError, pd.errors.ParserError) as error:
        raise ValueError(f"{path} is not a review log memlab reads; it reads {FORMATS}") from error


def _detect(columns: pd.Index) -> str:
    cols = set(columns)
    if "review_rating" in cols or "review_time" in cols:
        return "py-fsrs"
    if "rating" in cols or "day_offset" in cols:
        return "srs-benchmark"
    raise ValueError(
        "cannot tell the review-log layout from its columns "
        f"{list(columns)}; expected py-fsrs {list(PYFSRS_COLUMNS)} "
        f"or srs-benchmark {list(BENCHMARK_COLUMNS)} (memlab reads {FORMATS})"
    )


def _grades(
    values: pd.Series, invalid: str, report: LoadReport
) -> tuple[NDArray[np.int64], NDArray[np.bool_]]:
    numeric = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    ok = np.isfinite(numeric) & (numeric == np.round(numeric)) & (numeric >= 1) & (numeric <= 4)
    if not ok.all():
        bad = values[~ok]
        if invalid != "drop":
            raise ValueError(
                f"{int((~ok).sum())} review(s) have a grade outside 1..4 "
                f"(e.g. {list(bad.head(3))} at row(s) {list(bad.index[:3])}); "
                "pass invalid_grades='drop' (memlab fit --invalid-grades drop) to skip them"
            )
        report.invalid_grade_rows = int((~ok).sum())
        report.notes.append(
            f"dropped {report.invalid_grade_rows} review(s) with a grade outside 1..4"
        )
    return np.where(ok, numeric, 0).astype(np.int64), ok


def load_reviews(
    source: str | Path | pd.DataFrame,
    layout: Layout = "auto",
    *,
    convention: Literal["24h", "anki", "continuous"] | None = None,
    rollover_hour: float | None = None,
    timezone: str | None = None,
    invalid_grades: Literal["raise", "drop"] = "raise",
    decks: str | int | Iterable[str | int] | None = None,
    cards: int | Iterable[int] | None = None,
) -> ReviewData:
    """Load a review log into the tidy frame (see the module docs for layouts and the bad-input
    policy).

    Parameters
    ----------
    source : path or DataFrame
        A CSV (or parquet, for the srs-benchmark layout) file, an Anki collection, ``.colpkg`` or
        ``.apkg`` (:func:`memlab.fit.anki.read_anki`), or a frame with the CSV columns.
    layout : {"auto", "py-fsrs", "srs-benchmark", "anki"}
        Layout; "auto" tells Anki files by their content and the others by their columns.
    convention : {"24h", "anki", "continuous"}, optional
        Day convention for elapsed days computed from timestamps (not the srs-benchmark layout,
        whose days are given); "continuous" keeps fractional days, as the memory store runs
        FSRS-6. Default: "anki" for Anki files, "24h" (py-fsrs) otherwise.
    rollover_hour, timezone
        Options of the "anki" convention (see :func:`memlab.models.days.elapsed_days`); for Anki
        files they default to the collection's own.
    invalid_grades : {"raise", "drop"}
        What to do with grades outside 1..4.
    decks, cards
        Anki files only: keep the cards of these decks (names or ids, subdecks included) or
        these card ids (one, or a list).

    Returns
    -------
    ReviewData
        ``.frame`` (tidy, sorted by time) and ``.report`` (:class:`LoadReport`).
    """
    if invalid_grades not in ("raise", "drop"):
        raise ValueError(f"invalid_grades must be 'raise' or 'drop', got {invalid_grades!r}")
    package = next(
        (
            reader
            for name, recognises, reader in PACKAGE_READERS
            if isinstance(source, (str, Path))
            and (layout == name or (layout == "auto" and recognises(Path(source))))
        ),
        None,
    )
    if package is not None:
        frame, report = package(
            Path(source),
            decks=decks,
            cards=cards,
            convention=convention or "anki",
            rollover_hour=rollover_hour,
            timezone=timezone,
            invalid_grades=invalid_grades,
        )
    elif decks is not None or cards is not None:
        raise ValueError("decks= and cards= (memlab fit --deck) select from Anki collections only")
    else:
        rollover = 4 if rollover_hour is None else rollover_hour
        frame, report = _load_table(
            source, layout, convention or "24h", rollover, timezone, invalid_grades
        )
    if len(frame) == 0:
        dropped = {rule: n for rule, n in report.dropped_rows.items() if n}
        why = f" (rows dropped by rule: {dropped})" if dropped else ""
        raise ValueError(f"review log {report.source} has no valid reviews left{why}")
    counts = frame.groupby("card_id", sort=False)["grade"].size()
    report.reviews = len(frame)
    report.cards = int(len(counts))
    report.single_review_cards = int((counts == 1).sum())
    options = {
        "layout": layout,
        "rollover_hour": rollover_hour,
        "timezone": timezone,
        "invalid_grades": invalid_grades,
        "decks": decks,
        "cards": cards,
    }
    return ReviewData(frame, report, options)


def _load_table(
    source: Any,
    layout: str,
    convention: str,
    rollover_hour: float,
    timezone: str | None,
    invalid: str,
) -> tuple[pd.DataFrame, LoadReport]:
    """A CSV / parquet file or a frame in the py-fsrs or srs-benchmark layout."""
    if isinstance(source, pd.DataFrame):
        table, name = source.copy(), "<DataFrame>"
    elif isinstance(source, (str, Path)):
        table, name = _read_table(Path(source)), str(source)
    else:
        raise TypeError(f"source must be a path or a pandas DataFrame, got {type(source).__name__}")
    if len(table.columns) == 0:
        raise ValueError(f"review log {name} is empty (no columns)")
    if layout == "auto":
        layout = _detect(table.columns)
    if layout not in ("py-fsrs", "srs-benchmark"):
        raise ValueError(
            f"unknown layout {layout!r}; expected 'auto', 'py-fsrs', 'srs-benchmark' or 'anki'"
        )
    report = LoadReport(source=name, layout=layout, rows_read=len(table))
    required = PYFSRS_COLUMNS if layout == "py-fsrs" else BENCHMARK_COLUMNS
    missing = [c for c in required if c not in table.columns]
    if missing:
        raise ValueError(
            f"{layout} review log is missing column(s) {missing}; found {list(table.columns)}"
        )
    if len(table) == 0:
        raise ValueError(f"review log {name} has no reviews")
    if table["card_id"].isna().any():
        raise ValueError(f"card_id is missing in {int(table['card_id'].isna().sum())} row(s)")
    if layout == "py-fsrs":
        return _tidy_pyfsrs(table, report, convention, rollover_hour, timezone, invalid), report
    return _tidy_benchmark(table, report, invalid), report


def _finish(frame: pd.DataFrame) -> pd.DataFrame:
    """Add review index and global order; frame already sorted by time."""
    frame = frame.reset_index(drop=True)
    frame["review"] = frame.groupby("card_id", sort=False).cumcount().astype(np.int64)
    frame["order"] = np.arange(len(frame), dtype=np.int64)
    return frame[list(TIDY_COLUMNS)]


def _tidy_pyfsrs(
    table: pd.DataFrame,
    report: LoadReport,
    convention: str,
    rollover_hour: float,
    timezone: str | None,
    invalid: str,
) -> pd.DataFrame:
    report.convention = convention
    grades, ok = _grades(table["review_rating"], invalid, report)
    try:
        times = pd.to_datetime(table["review_time"], utc=True, format="ISO8601")
    except (TypeError, ValueError) as error:
        raise ValueError(f"review_time must be ISO timestamps: {error}") from error
    if times.isna().any():
        raise ValueError(f"review_time is missing in {int(times.isna().sum())} row(s)")
    duration = (
        pd.to_numeric(table["review_duration"], errors="coerce").to_numpy(dtype=float)
        if "review_duration" in table.columns
        else np.full(len(table), np.nan)
    )
    frame = pd.DataFrame(
        {
            "card_id": table["card_id"].to_numpy(),
            "time": times.array,
            "grade": grades,
            "duration_ms": duration,
        }
    )
    frame = _sorted(frame[ok], frame["time"].astype("int64").to_numpy()[ok], "review_time", report)
    frame = _drop_duplicates(frame, ["card_id", "time"], report)
    return _timed(frame, convention, rollover_hour, timezone)


def _sorted(frame: pd.DataFrame, key: Any, column: str, report: LoadReport) -> pd.DataFrame:
    """The rows in time order (stable), counting in ``report`` the rows that were out of it."""
    position = np.argsort(key, kind="stable")
    report.resorted_rows = int((key < np.maximum.accumulate(key)).sum())  # behind an earlier
    if report.resorted_rows:
        report.notes.append(
            f"sorted the log by {column} ({report.resorted_rows} row(s) were out of order)"
        )
    return frame.iloc[position]


def _timed(
    frame: pd.DataFrame,
    convention: str,
    rollover_hour: float,
    timezone: str | None,
    utc_offset_hours: float = 0.0,
) -> pd.DataFrame:
    """Elapsed days in ``convention`` and days since the first review, for a time-sorted frame."""
    frame = frame.reset_index(drop=True)
    frame["elapsed_days"] = elapsed_days_by_card(
        frame["card_id"].to_numpy(),
        frame["time"],
        convention=convention,  # type: ignore[arg-type]
        rollover_hour=rollover_hour,
        utc_offset_hours=utc_offset_hours,
        timezone=timezone,
    )
    start = frame["time"].iloc[0] if len(frame) else pd.Timestamp(0, tz="UTC")
    frame["day"] = (frame["time"] - start) / pd.Timedelta(days=1)
    return _finish(frame)


def _drop_duplicates(frame: pd.DataFrame, keys: list[str], report: LoadReport) -> pd.DataFrame:
    same_time = frame.duplicated(keys, keep=False)
    if not same_time.any():
        return frame
    exact = frame.duplicated([*keys, "grade"], keep="first")
    conflicting = frame[same_time & ~frame.duplicated([*keys, "grade"], keep=False)]
    if len(conflicting):
        first = conflicting.iloc[0]
        raise ValueError(
            f"card {first['card_id']} has reviews with different grades at the same time "
            f"({', '.join(f'{k}={first[k]}' for k in keys[1:])}); cannot order them"
        )
    report.duplicate_rows = int(exact.sum())
    report.notes.append(
        f"dropped {report.duplicate_rows} duplicate review row(s) (same card, time and grade)"
    )
    return frame[~exact]


def _tidy_benchmark(table: pd.DataFrame, report: LoadReport, invalid: str) -> pd.DataFrame:
    report.convention = "anki (day_offset)"
    grades, ok = _grades(table["rating"], invalid, report)
    day = pd.to_numeric(table["day_offset"], errors="coerce").to_numpy(dtype=float)
    if not np.isfinite(day).all():
        raise ValueError(
            f"day_offset is missing or not a finite number in {int((~np.isfinite(day)).sum())}"
            " row(s)"
        )
    frame = pd.DataFrame({"card_id": table["card_id"].to_numpy(), "day": day, "grade": grades})
    if "elapsed_days" in table.columns:
        frame["given"] = pd.to_numeric(table["elapsed_days"], errors="coerce").to_numpy(dtype=float)
    frame["duration_ms"] = (
        pd.to_numeric(table["duration"], errors="coerce").to_numpy(dtype=float)
        if "duration" in table.columns
        else np.nan
    )
    frame = _sorted(frame[ok], frame["day"].to_numpy()[ok], "day_offset", report)
    frame = frame.reset_index(drop=True)
    previous_day = frame.groupby("card_id", sort=False)["day"].shift(1).to_numpy()
    derived = frame["day"].to_numpy() - previous_day
    if "given" in frame.columns:
        given = frame["given"].to_numpy()
        first = np.isnan(previous_day)
        elapsed = np.where(first | (given < 0) | np.isnan(given), derived, given)
        mismatch = ~first & ~np.isnan(given) & (given >= 0) & (given != derived)
        if mismatch.any():
            report.notes.append(
                f"{int(mismatch.sum())} row(s): elapsed_days differs from the day_offset "
                "difference; used elapsed_days"
            )
    else:
        elapsed = derived
    frame["elapsed_days"] = np.where(np.isnan(previous_day), np.nan, elapsed)
    frame["time"] = pd.Series(pd.NaT, index=frame.index, dtype="datetime64[ns, UTC]")
    frame["day"] = frame["day"] - frame["day"].min()
    return _finish(frame)


@dataclass(frozen=True)
class Histories:
    """Per-card padded arrays, rows = cards (``card_ids``), columns = review index: ``grades``
    (0 in the padding), ``elapsed_days`` (NaN at column 0 and in the padding) and ``rows``, each
    cell's frame row (-1 in the padding).
    """

    card_ids: NDArray[Any]
    grades: NDArray[np.intp]
    elapsed_days: NDArray[np.float64]
    rows: NDArray[np.int64]

    def scoreable(self) -> NDArray[np.bool_]:
        """Reviews that are scored: a day or more after the card's previous one (``elapsed_days``
        is NaN at first reviews and in the padding)."""
        return np.nan_to_num(self.elapsed_days, nan=-1.0) >= 1.0

    def to_rows(self, cells: NDArray[np.float64], n_rows: int) -> NDArray[np.float64]:
        """Values laid out like ``grades`` back on the ``n_rows`` frame rows (NaN elsewhere)."""
        out = np.full((n_rows, *cells.shape[2:]), np.nan)
        real = self.rows >= 0
        out[self.rows[real]] = cells[real]
        return out

    def values(self, column: NDArray[Any], fill: Any = np.nan) -> NDArray[Any]:
        """A per-row frame column laid out like ``grades`` (``fill`` in the padding)."""
        column = np.asarray(column)
        out = np.full(
            self.rows.shape, fill, dtype=np.result_type(column.dtype, np.asarray(fill).dtype)
        )
        real = self.rows >= 0
        out[real] = column[self.rows[real]]
        return out


def histories(frame: pd.DataFrame, mask: NDArray[np.bool_] | None = None) -> Histories:
    """Padded per-card arrays of a tidy frame (rows in time order), optionally only rows where
    ``mask``.
    """
    _check_tidy(frame)
    rows = np.flatnonzero(train_mask(frame, mask)).astype(np.int64)
    ids = frame["card_id"].to_numpy()[rows]
    cards, inverse = (
        np.unique(ids, return_inverse=True) if len(ids) else (ids, np.zeros(0, dtype=np.intp))
    )
    counts = np.bincount(inverse, minlength=len(cards))
    order = np.argsort(inverse, kind="stable")  # by card, time order kept within a card
    starts = (np.cumsum(counts) - counts).astype(np.int64)
    col = np.arange(len(rows)) - np.repeat(starts, counts)
    width = int(counts.max()) if len(counts) else 0
    cell_rows = np.full((len(cards), width), -1, dtype=np.int64)
    cell_rows[inverse[order], col] = rows[order]
    real = cell_rows >= 0
    grades = np.zeros(cell_rows.shape, dtype=np.intp)
    grades[real] = frame["grade"].to_numpy()[cell_rows[real]]
    elapsed = np.full(cell_rows.shape, np.nan)
    elapsed[real] = frame["elapsed_days"].to_numpy(dtype=float)[cell_rows[real]]
    elapsed[:, :1] = np.nan
    return Histories(cards, grades, elapsed, cell_rows)


def train_mask(frame: pd.DataFrame, mask: Any) -> NDArray[np.bool_]:
    """The training rows: all, or those where ``mask`` (one entry per review) is true."""
    if mask is None:
        return np.ones(len(frame), dtype=bool)
    mask = np.asarray(mask, dtype=bool)
    if mask.shape != (len(frame),):
        raise ValueError(
            f"mask must have one entry per review ({len(frame)}), got shape {mask.shape}"
        )
    return mask


def time_split(frame: pd.DataFrame, holdout: float = 0.2) -> NDArray[np.bool_]:
    """Test mask of the time-ordered split: the first ``floor((1 - holdout) * n)`` reviews (by
    position, the frame being in time order) train, the rest test.
    """
    _check_tidy(frame)
    if (
        isinstance(holdout, bool)
        or not isinstance(holdout, (int, float))
        or not 0.0 < holdout < 1.0
    ):
        raise ValueError(f"holdout must be a number strictly between 0 and 1, got {holdout!r}")
    n = len(frame)
    n_train = int(np.floor((1.0 - holdout) * n + 1e-9))
    return np.arange(n) >= n_train


def _check_tidy(frame: pd.DataFrame) -> None:
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(
            f"expected a tidy review frame (pandas DataFrame), got {type(frame).__name__}"
        )
    missing = [c for c in ("card_id", "grade", "elapsed_days", "order") if c not in frame.columns]
    if missing:
        raise ValueError(f"not a tidy review frame (use load_reviews): missing column(s) {missing}")
    if (np.diff(frame["order"].to_numpy()) < 0).any():
        raise ValueError("tidy frame rows are not in time order: sort them by 'order' first")
    bad_days = frame["card_id"].duplicated() & ~(frame["elapsed_days"].astype(float) >= 0)
    if bad_days.any() or not frame["grade"].isin((1, 2, 3, 4)).all():
        raise ValueError(
            "not a tidy review frame (use load_reviews): grades must be 1..4 and elapsed_days >= 0"
            " at every review but each card's first"
        )


def as_frame(reviews: Reviews) -> pd.DataFrame:
    """The tidy frame of ``reviews`` (a :class:`ReviewData`, a tidy frame, or a path to load)."""
    if isinstance(reviews, ReviewData):
        return reviews.frame
    if isinstance(reviews, (str, Path)):
        return load_reviews(reviews).frame
    _check_tidy(reviews)
    return reviews
