"""IPython magics: ``%load_ext memlab`` then ``%memlab``, ``%%remember`` and ``%recall``.

>>> # in a notebook (a magic's line takes no comment: all of it is arguments)
>>> %load_ext memlab
>>> %memlab open notes.db
>>> %memlab now 2026-01-05T09:00Z
>>> %%remember --project infra --topics deploy,vpn --importance 0.8
... The deploy script needs the VPN.
>>> %recall deploy script -k 3 --preview

``%memlab open`` takes a file or ``:memory:`` (``--embedder fastembed`` for a real model);
``%memlab now`` fixes a simulated clock and ``%memlab advance 3d`` moves it; ``%memlab stats``,
``%memlab sweep`` (a dry run; ``--apply``) and ``%memlab curves`` look after the store.

The store in use is :func:`current_store` (``memlab_store`` in the notebook's namespace);
``%memlab?`` shows the options. User errors raise IPython's ``UsageError`` with the store's
message, and change nothing.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import pandas as pd
from IPython import get_ipython
from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from memlab.notebook.display import IngestResults, SearchResults, register_formatters, store_html
from memlab.notebook.widgets import CURVE_TIMES, _curve_panels, default_days, state_shares
from memlab.store.validation import check_now

if TYPE_CHECKING:  # pragma: no cover
    from memlab.store import MemoryStore

#: Name of the current store in the notebook's namespace.
NAMESPACE_NAME = "memlab_store"


class NotebookClock:
    """The time of the magics' store: the UTC wall clock, or a fixed instant (:meth:`set`;
    ``None``: the wall clock again) moved by hand (:meth:`advance`)."""

    def __init__(self, fixed: datetime | None = None) -> None:
        self.fixed: datetime | None = None
        self.set(fixed)

    def __call__(self) -> datetime:
        return self.fixed if self.fixed is not None else datetime.now(UTC)

    def set(self, when: datetime | None) -> None:
        """Fix the clock at ``when`` (a time a store holds), or follow the wall clock (None)."""
        self.fixed = None if when is None else check_now(when, "the clock's time")

    def advance(self, delta: timedelta) -> datetime:
        if self.fixed is None:
            raise ValueError("the clock follows the wall clock; fix it first with %memlab now TIME")
        if delta < timedelta(0):
            raise ValueError("time only moves forward: the duration must be >= 0")
        self.set(self.fixed + delta)  # refused outside the times a store holds
        return self.fixed


class _State:
    store: MemoryStore | None = None
    opened: MemoryStore | None = None  # the store `%memlab open` opened (the magics close it)
    clock: NotebookClock = NotebookClock()


_STATE = _State()


def current_store() -> MemoryStore:
    """The store the magics use (opened by ``%memlab open`` or set by :func:`use_store`)."""
    if _STATE.store is None:
        raise RuntimeError(
            "no memlab store is open: run `%memlab open PATH` (or :memory:), or use_store(store)"
        )
    return _STATE.store


def use_store(store: MemoryStore | None, *, shell: Any = None) -> MemoryStore | None:
    """Make ``store`` the one the magics use and the notebook's ``memlab_store`` (``None``
    forgets it; the old one is not closed)."""
    from memlab.store import MemoryStore

    if store is not None and not isinstance(store, MemoryStore):
        raise TypeError(f"use_store takes a memlab.store.MemoryStore, got {type(store).__name__}")
    _STATE.store = store
    shell = shell if shell is not None else get_ipython()
    if shell is not None:
        if store is None:
            shell.user_ns.pop(NAMESPACE_NAME, None)
        else:
            shell.push({NAMESPACE_NAME: store})
    return store


# --------------------------------------------------------------------------- parsing
def parse_time(text: str) -> datetime:
    """An ISO 8601 time with a timezone (``2026-01-05T09:00Z``, ``2026-01-05 09:00+01:00``)."""
    try:
        when = datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageError(f"not an ISO 8601 time: {text!r} (e.g. 2026-01-05T09:00Z)") from None
    if when.tzinfo is None:
        raise UsageError(f"time {text!r} has no timezone: add Z or +00:00 (the store keeps UTC)")
    return when.astimezone(UTC)


_DURATION = re.compile(
    r"(\d+(?:\.\d*)?|\.\d+)\s*(weeks?|w|days?|d|hours?|hrs?|h|minutes?|mins?|m|seconds?|secs?|s)"
    r"(?![a-z])",
    re.IGNORECASE,
)
_UNIT_SECONDS = {"w": 604800.0, "d": 86400.0, "h": 3600.0, "m": 60.0, "s": 1.0}


def _unit_seconds(unit: str) -> float:
    unit = unit.lower()
    return _UNIT_SECONDS["m" if unit.startswith("min") else unit[0]]


def parse_duration(text: str) -> timedelta:
    """``3d``, ``12h``, ``30m``, ``2w``, ``1.5d``, ``1d 6h``, ``3 days``, ``2 hours 30 min``."""
    compact = text.strip().lower()
    if compact.startswith("-"):
        raise UsageError(f"time only moves forward: {text!r} is negative (use e.g. 3d)")
    leftover = _DURATION.sub("", compact).replace(",", " ").replace("and", " ").strip()
    if not compact or leftover:
        raise UsageError(f"not a duration: {text!r} (use e.g. 3d, 12h, 30m, 2w, 1d6h or '3 days')")
    seconds = sum(float(n) * _unit_seconds(u) for n, u in _DURATION.findall(compact))
    return timedelta(seconds=seconds)


def _topics(text: str | None) -> list[str]:
    return [] if not text else [t.strip() for t in text.split(",") if t.strip()]


def _importance(text: str) -> float | str:
    """``--importance``: ``auto`` (estimated from the text by the store) or a number."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"importance must be a number or 'auto', got {text!r}"
        ) from None


#: The columns ``%memlab sweep`` shows (indexed by memory id).
SWEEP_COLUMNS: tuple[str, ...] = ("band", "heat", "risk", "keep_score", "state", "action", "reason")


def _call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run a store operation or parse a magic's line (an unbalanced quote is a ValueError),
    turning bad input into a UsageError with its message."""
    try:
        return fn(*args, **kwargs)
    except (ValueError, TypeError, KeyError, FileNotFoundError) as error:
        raise UsageError(f"memlab: {error}") from error


class StoreStats(dict):  # type: ignore[type-arg]
    """``%memlab stats``: the store's counts plus the shares of memory states now."""

    def __init__(self, store: MemoryStore) -> None:
        super().__init__(store.stats())
        self["states"] = {k: float(v) for k, v in state_shares(store).items()}
        self._store = store

    def _repr_html_(self) -> str:
        shares = pd.DataFrame({"share of active memories": pd.Series(self["states"])}).T
        return (
            store_html(self._store)
            + "<b>states now</b>"
            + shares.to_html(float_format=lambda v: f"{v:.2f}")
        )


# --------------------------------------------------------------------------- magics
_COMMANDS = ("open", "stats", "sweep", "curves", "now", "advance")


@magics_class
class MemlabMagics(Magics):
    """memlab's magics: ``%memlab``, ``%%remember``, ``%recall``."""

    @magic_arguments()
    @argument(
        "command",
        choices=_COMMANDS,
        help="open PATH | stats | sweep [--apply] | curves [--stability S] | now "
        "[TIME|wall] | advance DURATION",
    )
    @argument(
        "args",
        nargs="*",
        help="PATH for open (or :memory:), TIME for now (ISO, with a timezone), DURATION for "
        "advance (3d, 12h)",
    )
    @argument(
        "--embedder",
        help="open: 'hashing' (no model), 'fastembed' (MiniLM) or 'fastembed:NAME' (any model "
        "`memlab models list` shows; `memlab models pull NAME` downloads one); default: the "
        "store's own, hashing for a new one",
    )
    @argument(
        "--model-path",
        help="open: a local fastembed model folder (default: fastembed's cache, then the "
        "shared MiniLM)",
    )
    @argument(
        "--apply",
        action="store_true",
        help="sweep: apply compress/drop actions (default: dry run, changes nothing)",
    )
    @argument(
        "--stability",
        type=float,
        default=7.0,
        help="curves: FSRS-6 stability and exponential strength (days)",
    )
    @line_magic
    def memlab(self, line: str) -> Any:
        """Open a memlab store and look after it: %memlab
        open|stats|sweep|curves|now|advance."""
        if line.strip() in ("", "-h", "--help", "help"):
            print(self.memlab.parser.format_help())
            return None
        command, _, rest = line.strip().partition(" ")
        if command == "advance":  # "-1d" is a (negative) duration, not an option
            line = f"advance -- {rest}"
        args = _call(parse_argstring, self.memlab, line)
        handler = getattr(self, f"_cmd_{args.command}")
        return handler(args)

    # -- %memlab subcommands
    def _cmd_open(self, args: Any) -> MemoryStore:
        from memlab.store import MemoryStore

        if len(args.args) != 1:
            raise UsageError(
                "usage: %memlab open PATH  (a SQLite file, created if absent, or :memory:)"
            )
        path = args.args[0]  # the store refuses a folder, a foreign file or a missing folder
        from memlab.embed import embedder_from_options

        embedder = _call(embedder_from_options, args.embedder, args.model_path)
        store = _call(MemoryStore, path, embedder=embedder, clock=_STATE.clock)
        if _STATE.opened is not None:  # a store given to use_store() stays open: it is yours
            _STATE.opened.close()
        _STATE.opened = store
        use_store(store, shell=self.shell)
        return store

    def _store(self) -> MemoryStore:
        try:
            return current_store()
        except RuntimeError as error:
            raise UsageError(str(error)) from None

    def _cmd_stats(self, args: Any) -> StoreStats:
        return _call(StoreStats, self._store())

    def _cmd_sweep(self, args: Any) -> pd.DataFrame:
        table = _call(self._store().forget_sweep, dry_run=not args.apply)
        counts = table["action"].value_counts() if len(table) else pd.Series(dtype=int)
        summary = ", ".join(f"{int(counts.get(a, 0))} {a}" for a in ("keep", "compress", "drop"))
        if args.apply:
            print(f"sweep applied to {len(table)} active memories: {summary}")
        else:
            print(
                f"dry run over {len(table)} active memories: {summary} (nothing changed; --apply "
                "to apply)"
            )
        # the columns that say what happens and why; store.forget_sweep() gives every column
        return table.set_index("id")[list(SWEEP_COLUMNS)].round(3)

    def _cmd_curves(self, args: Any) -> pd.DataFrame:
        import matplotlib.pyplot as plt
        import numpy as np

        from memlab.models.curves import ExponentialCurve, FSRS6Curve, HeatCurve, curve_table

        s = args.stability
        if not np.isfinite(s) or s <= 0:
            raise UsageError("--stability must be a positive number of days")
        curves: dict[str, Any] = {
            f"fsrs6 (S={s:g}d)": FSRS6Curve(stability=s),
            "heat/100": HeatCurve(),
            f"exponential (S={s:g}d)": ExponentialCurve(strength=s),
        }
        _, axes = plt.subplots(1, 2, figsize=(12, 4), layout="constrained")
        _curve_panels(
            curve_table(default_days(), curves), *axes, "one minute to 365 days (log time)"
        )
        out = curve_table(list(CURVE_TIMES.values()), curves)
        out.index = pd.Index(list(CURVE_TIMES), name="since access")
        return out.round(4)

    def _cmd_now(self, args: Any) -> datetime | None:
        clock = _STATE.clock
        if len(args.args) > 1:
            raise UsageError("usage: %memlab now [TIME|wall]")
        if args.args:
            value = args.args[0]
            _call(clock.set, None if value.lower() == "wall" else parse_time(value))
        if _STATE.store is not None:
            _STATE.store.clock = clock
        return clock.fixed if clock.fixed is not None else clock()

    def _cmd_advance(self, args: Any) -> datetime:
        if len(args.args) == 0:
            raise UsageError("usage: %memlab advance DURATION  (e.g. 3d, 12h, 1d6h)")
        try:
            when = _STATE.clock.advance(parse_duration(" ".join(args.args)))
        except OverflowError:
            raise UsageError("memlab: that duration leaves the times a store holds") from None
        except ValueError as error:
            raise UsageError(str(error)) from None
        if _STATE.store is not None:
            _STATE.store.clock = _STATE.clock
        return when

    # -- %%remember
    @magic_arguments()
    @argument("--project", help="project of the memory")
    @argument("--topics", help="comma-separated topics")
    @argument(
        "--importance",
        type=_importance,
        default="auto",
        help="importance in [0, 1] (>= 0.9 is protected); default auto: from the text",
    )
    @argument(
        "--layer",
        default="context",
        help="goal, context, emotion, implementation, caveat or learning",
    )
    @argument("--entity", help="entity the memory is about (consolidation groups by it)")
    @argument(
        "--altitude",
        default="implementation",
        help="mission, strategy, architecture or implementation",
    )
    @argument("--lines", action="store_true", help="remember each non-empty line as its own memory")
    @cell_magic
    def remember(self, line: str, cell: str) -> Any:
        """Remember the cell's text in the current store (gated: create, update or reinforce)."""
        args = _call(parse_argstring, self.remember, line)
        store = self._store()
        names = ("project", "importance", "layer", "entity", "altitude")
        meta = {k: getattr(args, k) for k in names} | {"topics": _topics(args.topics)}
        if args.lines:
            texts = [t.strip() for t in cell.splitlines() if t.strip()]
            if not texts:
                raise UsageError("%%remember --lines: the cell has no text")
            return IngestResults(_call(store.ingest_many, texts, **meta))
        if not cell.strip():
            raise UsageError("%%remember: the cell has no text")
        return _call(store.ingest, cell.strip(), **meta)

    # -- %recall
    @magic_arguments()
    @argument("query", nargs="+", help="what to look for")
    @argument("-k", type=int, default=5, help="number of results (default 5)")
    @argument(
        "--preview",
        action="store_true",
        help="do not count the results as accesses (no testing effect)",
    )
    @argument("--project", help="current project: memories of it rank higher")
    @argument(
        "--topics", help="comma-separated topics of the context: matching memories rank higher"
    )
    @argument("--archived", action="store_true", help="include superseded and archived memories")
    @line_magic
    def recall(self, line: str) -> SearchResults:
        """Search the current store (hybrid BM25 + vectors, weighted by retention and context)."""
        args = _call(parse_argstring, self.recall, line)
        store = self._store()
        query = " ".join(args.query)
        hits = _call(
            store.search,
            query,
            k=args.k,
            project=args.project,
            topics=_topics(args.topics),
            mark_accessed=not args.preview,
            include_archived=args.archived,
        )
        return SearchResults(hits, query)


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext memlab``: register the magics and the rich display of memlab's objects."""
    ipython.register_magics(MemlabMagics)
    register_formatters(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """``%unload_ext memlab``: forget the current store (closed if ``%memlab open`` opened it)."""
    if _STATE.opened is not None:
        _STATE.opened.close()
    _STATE.opened = None
    use_store(None, shell=ipython)
