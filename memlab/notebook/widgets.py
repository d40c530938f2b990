"""ipywidgets explorers: forgetting curves, gate thresholds, and a store browser.

Each explorer keeps what it computed as attributes (``table``, ``macro_f1``, ``results``...),
recomputed when a control changes, so it can be driven and checked without a browser. Figures
are matplotlib ``Figure`` objects shown as PNG at their own size, with a static PNG in the
display for viewers without widgets.

>>> from memlab.notebook.widgets import CurveExplorer
>>> ex = CurveExplorer(draw=False)
>>> ex.controls["stability"].value = 30.0
>>> round(float(ex.table.loc[30.0, "fsrs6"]), 3)
0.9
"""

from __future__ import annotations

import contextlib
import html as _html
import io
from collections.abc import Callable, Iterator
from datetime import datetime
from numbers import Real
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray

from memlab.fit.metrics import confusion_matrix, f1_per_class, macro_f1
from memlab.gate import DECISIONS, Gate
from memlab.models.curves import ExponentialCurve, FSRS6Curve, HeatCurve, curve_table
from memlab.models.fsrs6 import DEFAULT_WEIGHTS, LOWER_BOUNDS, UPPER_BOUNDS
from memlab.models.heat import HEAT_PRESETS
from memlab.models.strength import STATES
from memlab.notebook.display import hits_frame, hits_html
from memlab.ops import STORE_ERRORS, error_message

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.figure import Figure

    from memlab.store import MemoryStore, SearchHit  # noqa: F401

#: Times (days) of the retention tables of ``%memlab curves`` and the curve explorer.
CURVE_TIMES: dict[str, float] = {
    "20 minutes": 20 / 1440,
    "1 hour": 1 / 24,
    "1 day": 1.0,
    "1 week": 7.0,
    "1 month": 30.0,
    "1 year": 365.0,
}
#: The times the curve explorer reports next to its figure.
MILESTONES = {k: v for k, v in CURVE_TIMES.items() if k != "20 minutes"}


def _widgets() -> Any:
    try:
        import ipywidgets
    except ImportError as error:  # pragma: no cover - ipywidgets is in the notebook extra
        raise ImportError(
            "memlab's explorers need ipywidgets: pip install 'memlab[notebook]'"
        ) from error
    return ipywidgets


def _figure(ncols: int = 1, width: float = 6.0, height: float = 3.6) -> Figure:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width * ncols, height), layout="constrained")
    fig.subplots(1, ncols)
    return fig


#: Characters of content the store browser shows per hit.
BROWSER_CHARS = 120
#: Bins of the gate explorer's similarity histogram.
HISTOGRAM_BINS = 40
#: Screen pixels per figure inch: a figure is shown at ``figsize * SCREEN_DPI`` CSS pixels.
SCREEN_DPI = 96

#: Slider ranges of the heat constants: a decade around every preset's value on each side (``k``
#: on a log scale), so every preset, the default included, can be shown and left.
_HEAT_RANGES: dict[str, tuple[float, float]] = {
    "k": (
        min(p["k"] for p in HEAT_PRESETS.values()) / 10,
        max(p["k"] for p in HEAT_PRESETS.values()) * 10,
    ),
    "c": (0.1, 2 * max(p["c"] for p in HEAT_PRESETS.values())),
}
#: Device pixels per CSS pixel in the PNG (2: sharp on high-density screens, not stretched).
PIXEL_RATIO = 2


def _png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=SCREEN_DPI * PIXEL_RATIO)
    return buffer.getvalue()


def _table_html(frame: pd.DataFrame, digits: int | None = None) -> str:
    """A small table for an ``ipywidgets.HTML`` in JupyterLab's style, numbers to ``digits``."""
    formatter = None if digits is None else (lambda v: f"{v:.{digits}f}")
    if frame.index.name is not None and frame.columns.name is None:
        # the index's name in the header's corner, not on a header row of its own
        frame = frame.rename_axis(index=None, columns=frame.index.name)
    table = frame.to_html(float_format=formatter, border=0)
    return f'<div class="jp-RenderedHTMLCommon">{table}</div>'


class _Explorer:
    """Shared plumbing: a root widget, display in Jupyter, PNG figure refresh."""

    widget: Any
    figure: Figure | None
    _image: Any
    #: True while the explorer itself moves its controls (their observers then do nothing).
    _quiet = False

    @contextlib.contextmanager
    def _silenced(self) -> Iterator[None]:
        self._quiet = True
        try:
            yield
        finally:
            self._quiet = False

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The live widget, plus a static PNG of the figure for viewers without widget state."""
        bundle = self.widget._repr_mimebundle_(**kwargs)
        data, metadata = bundle if isinstance(bundle, tuple) else (bundle, {})
        data = dict(data or {})
        if self.figure is not None:
            import base64

            data.setdefault("image/png", base64.b64encode(_png(self.figure)).decode("ascii"))
            metadata = {
                **(metadata or {}),
                "image/png": {"width": round(self.figure.get_figwidth() * SCREEN_DPI)},
            }
        return (data, metadata) if metadata else data

    def _show_figure(self) -> None:
        """Redraw the figure into the image widget at its own size (no stretching)."""
        if self.figure is not None:
            self._image.value = _png(self.figure)
            self._image.layout.width = f"{round(self.figure.get_figwidth() * SCREEN_DPI)}px"
            self._image.layout.height = "auto"


# --------------------------------------------------------------------------- forgetting curves
def default_days(max_days: float = 365.0) -> NDArray[np.float64]:
    """Time grid of the curve figures: 0-30 days linearly, 1 minute to ``max_days`` in log steps."""
    return np.unique(
        np.concatenate(
            [np.linspace(0.0, min(30.0, max_days), 121), np.geomspace(1 / 1440, max_days, 161)]
        )
    )


def _curve_panels(table: pd.DataFrame, short: Any, full: Any, long_title: str) -> None:
    """The first 30 days of a curve table on a linear axis, the whole of it on a log axis."""
    from memlab.plot import plot_curves

    short.clear()
    full.clear()
    plot_curves(table[table.index <= 30.0], ax=short)
    short.set_title("first 30 days")
    plot_curves(table, log_x=True, ax=full)
    full.set_title(long_title)


class CurveExplorer(_Explorer):
    """Forgetting curves side by side, with a slider per parameter.

    Every change recomputes :attr:`table` (a :func:`memlab.models.curves.curve_table` over
    :func:`default_days`) and :attr:`milestones`, and redraws the figure.

    Parameters
    ----------
    stability, w20, k, c, u_minutes, strength : float
        Starting values (FSRS-6 defaults ``w20 = 0.1542``; Ebbinghaus's k, c, u).
    draw : bool
        Draw the figure (turn off for fast headless use; :attr:`table` is computed anyway).
    """

    def __init__(
        self,
        *,
        stability: float = 7.0,
        w20: float = DEFAULT_WEIGHTS[20],
        k: float = 1.84,
        c: float = 1.25,
        u_minutes: float = 1.0,
        strength: float = 7.0,
        draw: bool = True,
    ) -> None:
        w = _widgets()
        self.days = default_days()
        self.draw = bool(draw)
        common = {
            "style": {"description_width": "9em"},
            "layout": w.Layout(width="26em"),
            "continuous_update": False,
        }

        def log_slider(desc: str, value: float, lo: float, hi: float) -> Any:
            lo, hi = np.log10(lo), np.log10(hi)
            return w.FloatLogSlider(
                value, min=lo, max=hi, step=0.02, description=desc, readout_format=".3g", **common
            )

        def lin_slider(desc: str, value: float, lo: float, hi: float, step: float) -> Any:
            return w.FloatSlider(
                value, min=lo, max=hi, step=step, description=desc, readout_format=".4g", **common
            )

        self.controls: dict[str, Any] = {
            "stability": log_slider("FSRS-6 S (days)", stability, 0.01, 3650.0),
            "w20": lin_slider("FSRS-6 w20", w20, LOWER_BOUNDS[20], UPPER_BOUNDS[20], 0.001),
            "k": log_slider("heat k", k, *_HEAT_RANGES["k"]),
            "c": lin_slider("heat c", c, *_HEAT_RANGES["c"], 0.001),
            "u_minutes": log_slider("heat u (min)", u_minutes, 0.01, 1440.0),
            "strength": log_slider("exp. S (days)", strength, 0.01, 3650.0),
        }
        self._check(stability=stability, w20=w20, k=k, c=c, u_minutes=u_minutes, strength=strength)
        self._image = w.Image(format="png")
        self._milestones_html = w.HTML()
        self.figure = _figure(2) if self.draw else None
        left = w.VBox([self.controls[n] for n in ("stability", "w20", "strength")])
        right = w.VBox([self.controls[n] for n in ("k", "c", "u_minutes")])
        self.widget = w.VBox([w.HBox([left, right]), self._image, self._milestones_html])
        for control in self.controls.values():
            control.observe(self._on_change, names="value")
        self.update()

    @property
    def params(self) -> dict[str, float]:
        """Current slider values."""
        return {name: float(control.value) for name, control in self.controls.items()}

    def curves(self) -> dict[str, Any]:
        """The three curves for the current slider values, keyed by column name."""
        p = self.params
        weights = (*DEFAULT_WEIGHTS[:20], p["w20"])
        return {
            "fsrs6": FSRS6Curve(stability=p["stability"], weights=weights),
            "heat": HeatCurve(k=p["k"], c=p["c"], u_minutes=p["u_minutes"]),
            "exponential": ExponentialCurve(strength=p["strength"]),
        }

    def set(self, **values: float) -> CurveExplorer:
        """Set several sliders (by the keys of :attr:`controls`) and recompute once."""
        self._check(**values)
        with self._silenced():
            for name, value in values.items():
                self.controls[name].value = value
        self.update()
        return self

    def _check(self, **values: float) -> None:
        """Refuse an unknown control or a value outside its slider (never clamp it silently)."""
        unknown = set(values) - set(self.controls)
        if unknown:
            raise ValueError(
                f"unknown controls {sorted(unknown)}; available {sorted(self.controls)}"
            )
        for name, value in values.items():
            c = self.controls[name]
            lo, hi = (10**c.min, 10**c.max) if "Log" in type(c).__name__ else (c.min, c.max)
            if not isinstance(value, Real) or not lo * (1 - 1e-9) <= value <= hi * (1 + 1e-9):
                raise ValueError(f"{name} must be in [{lo:.4g}, {hi:.4g}], got {value!r}")

    def _on_change(self, change: dict[str, Any]) -> None:
        if not self._quiet:
            self.update()

    def update(self) -> None:
        """Recompute :attr:`table` and :attr:`milestones` and redraw."""
        named = self.curves()
        self.table: pd.DataFrame = curve_table(self.days, named)
        self.milestones: pd.DataFrame = curve_table(list(MILESTONES.values()), named)
        self.milestones.index = pd.Index(list(MILESTONES), name="since access")
        self._milestones_html.value = _table_html(self.milestones, 3)
        if self.figure is not None:
            _curve_panels(self.table, *self.figure.axes, "one minute to one year (log time)")
            self._show_figure()


# --------------------------------------------------------------------------- gate thresholds
class GateExplorer(_Explorer):
    """Gate thresholds over a similarity histogram of labelled pairs, with live macro-F1.

    Parameters
    ----------
    similarities : array_like
        Cosine similarity of each pair (finite, in [-1, 1]).
    labels : array_like of int
        True gate class of each pair: 0 reinforce, 1 update, 2 create (see
        :func:`memlab.gate.labels_from_scores`).
    reinforce, update : float
        Starting thresholds (the gate's defaults 0.92 / 0.75).
    draw : bool
        Draw the histogram.

    Notes
    -----
    Every slider change recomputes ``gate``, ``predicted``, ``confusion`` (rows true class,
    columns predicted), ``f1`` (per class) and ``macro_f1``.
    """

    def __init__(
        self,
        similarities: ArrayLike,
        labels: ArrayLike,
        *,
        reinforce: float = 0.92,
        update: float = 0.75,
        draw: bool = True,
    ) -> None:
        w = _widgets()
        sims = np.asarray(similarities, dtype=float)
        y = np.asarray(labels)
        if sims.ndim != 1 or sims.size == 0:
            raise ValueError(f"similarities must be a non-empty 1-d array, got shape {sims.shape}")
        if y.shape != sims.shape:
            raise ValueError(
                f"labels must have the shape of similarities {sims.shape}, got {y.shape}"
            )
        if not np.isfinite(sims).all() or (np.abs(sims) > 1.0 + 1e-6).any():
            raise ValueError("similarities must be finite and in [-1, 1]")
        if y.dtype.kind not in "iuf" or not np.isin(y, (0, 1, 2)).all():  # True is not 1
            raise ValueError(
                "labels must be gate class codes 0 (reinforce), 1 (update) or 2 (create)"
            )
        Gate(reinforce, update)  # validates the starting thresholds
        self.similarities = np.clip(sims, -1.0, 1.0)
        self.labels = y.astype(np.int64)
        common = {
            "style": {"description_width": "8em"},
            "layout": w.Layout(width="30em"),
            "continuous_update": False,
            "readout_format": ".3f",
            "min": float(np.floor(min(self.similarities.min(), update) * 100) / 100),
        }
        self.controls: dict[str, Any] = {
            name: w.FloatSlider(value, max=1.0, step=0.005, description=f"{name} >", **common)
            for name, value in (("reinforce", reinforce), ("update", update))
        }
        self._score_html = w.HTML()
        self._image = w.Image(format="png")
        self.figure = _figure(1, width=7.0) if draw else None
        self.widget = w.VBox(
            [self.controls["reinforce"], self.controls["update"], self._score_html, self._image]
        )
        for name in self.controls:
            self.controls[name].observe(
                lambda change, moved=name: self._on_threshold(moved, change["new"]), names="value"
            )
        self.update()

    def _on_threshold(self, moved: str, value: float) -> None:
        """The gate needs update <= reinforce: moving one slider past the other drags it along."""
        if self._quiet:
            return
        other = "update" if moved == "reinforce" else "reinforce"
        control = self.controls[other]
        if (control.value > value) if other == "update" else (control.value < value):
            with self._silenced():
                control.value = value
        self.update()

    def update(self) -> None:
        """Recompute the predictions, confusion matrix and F1 scores, and redraw."""
        names = [d.value for d in DECISIONS]
        reinforce, update = (float(self.controls[k].value) for k in ("reinforce", "update"))
        self.gate = Gate(reinforce, update, preset="custom")  # set by hand, not Vestige's
        self.predicted = self.gate.codes(self.similarities)
        self.confusion = pd.DataFrame(
            confusion_matrix(self.labels, self.predicted, 3),
            index=pd.Index(names, name="true"),
            columns=pd.Index(names, name="predicted"),
        )
        self.f1 = pd.Series(f1_per_class(self.labels, self.predicted), index=names, name="F1")
        self.macro_f1 = macro_f1(self.labels, self.predicted)
        self.accuracy = float(np.mean(self.labels == self.predicted))
        self._score_html.value = (
            f"<b>macro-F1 {self.macro_f1:.3f}</b> (accuracy {self.accuracy:.3f}, "
            f"{len(self.labels)} pairs) · "
            + " · ".join(f"F1 {n} {v:.3f}" for n, v in self.f1.items())
            + _table_html(self.confusion)
        )
        if self.figure is not None:
            self._draw()

    def _draw(self) -> None:
        assert self.figure is not None
        ax = self.figure.axes[0]
        ax.clear()
        edges = np.linspace(min(self.similarities.min(), 0.0), 1.0, HISTOGRAM_BINS + 1)
        colours = {"reinforce": "#1a9850", "update": "#fdae61", "create": "#4575b4"}
        for code, decision in enumerate(DECISIONS):
            ax.hist(
                self.similarities[self.labels == code],
                bins=list(edges),
                alpha=0.55,
                label=f"true {decision.value}",
                color=colours[decision.value],
            )
        for name, ls in (("reinforce", "-"), ("update", "--")):
            at = getattr(self.gate, name)
            ax.axvline(at, color="black", ls=ls, lw=1.5, label=f"{name} > {at:.3f}")
        ax.set_xlabel("cosine similarity of the pair")
        ax.set_ylabel("pairs")
        ax.set_title(f"Gate thresholds: macro-F1 {self.macro_f1:.3f}")
        ax.legend(fontsize="small", loc="upper left")
        self._show_figure()


# --------------------------------------------------------------------------- store browser
def state_shares(store: MemoryStore, *, now: datetime | None = None) -> pd.Series:
    """Share of active memories in each state (active, dormant, silent, unavailable) at ``now``."""
    return _shares(store.to_dataframe(now=now, include_archived=False))


def _shares(frame: pd.DataFrame) -> pd.Series:
    if frame.empty:
        return pd.Series(0.0, index=pd.Index(list(STATES), name="state"), name="share")
    counts = frame["state"].value_counts(normalize=True).reindex(list(STATES), fill_value=0.0)
    counts.index.name = "state"
    return counts.rename("share")


class StoreBrowser(_Explorer):
    """Search a :class:`memlab.store.MemoryStore` from a query box; see why each hit ranked.

    Parameters
    ----------
    store : MemoryStore
    k : int
        Number of results (a slider, 1-50).
    now : datetime or callable, optional
        Time of the searches and state shares (or a callable giving it; default: the store's).
    mark_accessed : bool
        Whether searches count as accesses (the testing effect); off: browsing writes nothing.
    draw : bool
        Draw the state-share bars.

    Notes
    -----
    A search sets ``hits``, ``results`` (:func:`hits_frame`), ``state_shares`` and ``error``
    (the message of the last rejected query, else None).
    """

    def __init__(
        self,
        store: MemoryStore,
        *,
        k: int = 10,
        now: datetime | Callable[[], datetime] | None = None,
        mark_accessed: bool = False,
        draw: bool = True,
    ) -> None:
        w = _widgets()
        from memlab.store import MemoryStore

        if not isinstance(store, MemoryStore):
            raise TypeError(f"store must be a memlab.store.MemoryStore, got {type(store).__name__}")
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 50:  # never clamped
            raise ValueError(f"k must be an int in [1, 50] (the slider's range), got {k!r}")
        if now is not None and not callable(now) and not isinstance(now, datetime):
            raise TypeError("now must be a timezone-aware datetime or a callable returning one")
        self.store = store
        self._now = now
        self.query = w.Text(
            placeholder="query (Enter to search)",
            description="query",
            continuous_update=False,
            layout=w.Layout(width="40em"),
        )
        self.k = w.IntSlider(value=k, min=1, max=50, description="k", continuous_update=False)
        self.project = w.Text(description="project", placeholder="(any)", continuous_update=False)
        self.topics = w.Text(
            description="topics", placeholder="comma separated", continuous_update=False
        )
        self.mark_accessed = w.Checkbox(
            value=mark_accessed,
            description="count as access (testing effect)",
            style={"description_width": "initial"},
            indent=False,
        )
        self.button = w.Button(description="search", button_style="primary")
        self._results_html = w.HTML()
        self._shares_html = w.HTML()
        self._image = w.Image(format="png")
        self.figure = _figure(1, width=4.5, height=2.6) if draw else None
        self.widget = w.VBox(
            [
                w.HBox([self.query, self.button]),
                w.HBox([self.k, self.project, self.topics]),
                self.mark_accessed,
                self._results_html,
                w.HBox([self._image, self._shares_html]),
            ]
        )
        self.hits: list[SearchHit] = []
        self.results = hits_frame([])
        self.error: str | None = None
        self.query.observe(lambda change: self._search_from_widget(), names="value")
        self.k.observe(lambda change: self._search_from_widget(), names="value")
        self.button.on_click(lambda _: self._search_from_widget())
        self.refresh_states()

    def now(self) -> datetime | None:
        return self._now() if callable(self._now) else self._now

    def _search_from_widget(self) -> None:
        if self._quiet or not self.query.value.strip():
            return
        try:
            self.search()
        except STORE_ERRORS as error:  # a closed or busy store too: shown, never raised
            self.error = error_message(error)
            self._results_html.value = f"<p style='color:#b00'>{_html.escape(self.error)}</p>"

    def search(self, query: str | None = None) -> pd.DataFrame:
        """Search with the widgets' values (``query`` replaces the query box's text first) and
        return :attr:`results`. Bad input raises here (in the widget it is shown instead)."""
        if query is not None:
            with self._silenced():
                self.query.value = query
        topics = [t.strip() for t in self.topics.value.split(",") if t.strip()]
        self.hits = self.store.search(
            self.query.value,
            k=int(self.k.value),
            project=self.project.value.strip() or None,
            topics=topics,
            mark_accessed=bool(self.mark_accessed.value),
            now=self.now(),
        )
        self.error = None
        self.results = hits_frame(self.hits, max_chars=BROWSER_CHARS)
        if self.results.empty:
            self._results_html.value = f"<p>no memory matches {_html.escape(self.query.value)}</p>"
        else:
            self._results_html.value = hits_html(self.hits, max_chars=BROWSER_CHARS)
        self.refresh_states()
        return self.results

    def refresh_states(self) -> None:
        """Recompute :attr:`state_shares` (and redraw the bars)."""
        frame = self.store.to_dataframe(now=self.now(), include_archived=False)
        self.state_shares = _shares(frame)
        self._shares_html.value = f"<b>{len(frame)} active memories</b>" + _table_html(
            self.state_shares.to_frame(), 2
        )
        if self.figure is not None:
            from memlab.plot import plot_state_shares

            ax = self.figure.axes[0]
            ax.clear()
            plot_state_shares(list(frame["state"]), ax=ax)
            ax.set_title(f"Memory states ({len(frame)} active)")
            self._show_figure()
