"""The explorers, headless: set widget values, check what they computed and drew."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from nb_helpers import Clock

from memlab.fit.metrics import macro_f1
from memlab.gate import Gate, labels_from_scores
from memlab.models.curves import ExponentialCurve, FSRS6Curve, HeatCurve, curve_table
from memlab.models.fsrs6 import DEFAULT_WEIGHTS
from memlab.models.heat import HEAT_PRESETS
from memlab.notebook.widgets import (
    CurveExplorer,
    GateExplorer,
    StoreBrowser,
    f1_per_class,
    hits_frame,
)
from memlab.store import MemoryStore


# ---------------------------------------------------------------- curve explorer
def test_curve_explorer_recomputes_from_sliders() -> None:
    ex = CurveExplorer(draw=False)
    ex.controls["stability"].value = 30.0
    ex.controls["w20"].value = 0.5
    ex.controls["k"].value = 3.0
    ex.controls["c"].value = 1.0
    ex.controls["u_minutes"].value = 10.0
    ex.controls["strength"].value = 2.0
    weights = list(DEFAULT_WEIGHTS)
    weights[20] = 0.5
    expected = curve_table(
        ex.days,
        {
            "fsrs6": FSRS6Curve(30.0, tuple(weights)),
            "heat": HeatCurve(3.0, 1.0, 10.0),
            "exponential": ExponentialCurve(2.0),
        },
    )
    pd.testing.assert_frame_equal(ex.table, expected)
    # FSRS-6 gives 90 % at t = S whatever w20 is; exponential exp(-1) at t = S.
    assert ex.table.loc[30.0, "fsrs6"] == pytest.approx(0.9)
    assert ex.table.loc[2.0, "exponential"] == pytest.approx(np.exp(-1))
    assert ex.milestones.loc["1 month", "fsrs6"] == pytest.approx(0.9)


def test_curve_explorer_figure_holds_the_table() -> None:
    ex = CurveExplorer().set(stability=3.0, strength=10.0)
    short, full = ex.figure.axes
    assert [line.get_label() for line in short.lines] == ["fsrs6", "heat", "exponential"]
    for line in short.lines:
        x, y = line.get_data()
        assert x.max() <= 30.0
        np.testing.assert_allclose(y, ex.table.loc[x, line.get_label()].to_numpy())
    assert full.get_xscale() == "log" and short.get_xscale() == "linear"
    assert full.lines[0].get_xdata().min() > 0
    assert (
        short.get_xlabel() == "days since last access"
        and short.get_ylabel() == "recall probability"
    )
    assert ex._image.value[:8] == b"\x89PNG\r\n\x1a\n"
    assert "1 week" in ex._milestones_html.value
    assert f"{ex.milestones.loc['1 day', 'heat']:.3f}" in ex._milestones_html.value


def test_curve_explorer_set_rejects_unknown_controls() -> None:
    ex = CurveExplorer(draw=False)
    before = ex.table.copy()
    with pytest.raises(ValueError, match="unknown controls"):
        ex.set(stabilty=3.0)
    pd.testing.assert_frame_equal(ex.table, before)


def test_curve_explorer_displays_as_a_widget() -> None:
    bundle = CurveExplorer(draw=False)._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle


# ---------------------------------------------------------------- macro-F1
def test_macro_f1_matches_hand_computation() -> None:
    true = np.array([0, 0, 1, 1, 2, 2, 2])
    pred = np.array([0, 1, 1, 1, 2, 0, 2])
    # class 0: tp 1 fp 1 fn 1 -> 0.5 ; class 1: tp 2 fp 1 fn 0 -> 0.8 ; class 2: tp 2 fp 0 fn 1 ->
    # 0.8
    np.testing.assert_allclose(f1_per_class(true, pred), [0.5, 0.8, 0.8])
    assert macro_f1(true, pred) == pytest.approx(0.7)
    assert f1_per_class([2, 2], [2, 2]).tolist() == [
        0.0,
        0.0,
        1.0,
    ]  # absent classes score 0 (sklearn)
    assert macro_f1(true, pred) == pytest.approx(f1_per_class(true, pred).mean())


# ---------------------------------------------------------------- gate explorer
@pytest.fixture
def pairs() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    scores = rng.uniform(0, 5, 400)
    sims = np.clip(0.3 + 0.14 * scores + rng.normal(0, 0.05, 400), -1, 1)
    return sims, labels_from_scores(scores)


def test_gate_explorer_scores_the_sliders(pairs: tuple[np.ndarray, np.ndarray]) -> None:
    sims, labels = pairs
    ex = GateExplorer(sims, labels)
    assert ex.gate == Gate(0.92, 0.75, preset="custom")  # the sliders, not the Vestige preset
    ex.controls["reinforce"].value = 0.93
    ex.controls["update"].value = 0.65
    assert ex.gate == Gate(0.93, 0.65, preset="custom")
    pred = Gate(0.93, 0.65).codes(sims)
    np.testing.assert_array_equal(ex.predicted, pred)
    assert ex.macro_f1 == pytest.approx(macro_f1(labels, pred))
    assert ex.confusion.to_numpy().sum() == len(sims)
    assert ex.confusion.loc["create", "create"] == np.sum((labels == 2) & (pred == 2))
    assert f"{ex.macro_f1:.3f}" in ex._score_html.value
    ax = ex.figure.axes[0]
    assert sorted(line.get_xdata()[0] for line in ax.lines) == [0.65, 0.93]
    assert sum(p.get_height() for p in ax.patches) == len(sims)
    assert f"{ex.macro_f1:.3f}" in ax.get_title()


def test_gate_explorer_keeps_update_below_reinforce(pairs: tuple[np.ndarray, np.ndarray]) -> None:
    ex = GateExplorer(*pairs, draw=False)
    ex.controls["update"].value = 0.95
    assert ex.controls["reinforce"].value == pytest.approx(0.95)
    assert ex.gate == Gate(0.95, 0.95, preset="custom")
    ex.controls["reinforce"].value = 0.5
    assert ex.controls["update"].value == pytest.approx(0.5)
    assert ex.gate == Gate(0.5, 0.5, preset="custom")


@pytest.mark.parametrize(
    ("sims", "labels", "match"),
    [
        ([0.1, np.nan], [0, 1], "finite"),
        ([0.1, 0.2], [0, 3], "class codes"),
        ([0.1], [0, 1], "shape"),
        ([], [], "non-empty"),
        ([1.5], [0], "finite"),
        ([0.1, 0.95], [True, False], "class codes"),  # booleans were read as update, reinforce
    ],
)
def test_gate_explorer_rejects_bad_input(sims: list, labels: list, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        GateExplorer(sims, labels, draw=False)


# ---------------------------------------------------------------- store browser
def test_store_browser_searches_on_query_and_shows_score_parts(
    store: MemoryStore, clock: Clock
) -> None:
    before = store.to_dataframe(now=clock.now)["access_count"].sum()
    browser = StoreBrowser(store, k=3)
    browser.query.value = "database backup"
    expected = store.search("database backup", k=3, mark_accessed=False, now=clock.now)
    assert [h.memory.id for h in browser.hits] == [h.memory.id for h in expected]
    assert list(browser.results["id"]) == [h.memory.id for h in expected]
    assert browser.results["score"].to_numpy() == pytest.approx([h.score for h in expected])
    top = browser.results.iloc[0]
    assert "backup" in top["content"]
    assert top["score"] == pytest.approx(top["rrf"] * top["time_factor"] * top["context"])
    assert "backup" in browser._results_html.value
    # browsing is a preview by default: nothing was accessed
    assert store.to_dataframe(now=clock.now)["access_count"].sum() == before


def test_store_browser_project_topics_k_and_testing_effect(
    store: MemoryStore, clock: Clock
) -> None:
    browser = StoreBrowser(store, draw=False)
    browser.project.value = "infra"
    browser.topics.value = "database, backup"
    browser.mark_accessed.value = True
    browser.search("database")
    assert browser.results["project_match"].iloc[0]
    assert browser.results["topic_overlap"].max() == pytest.approx(1.0)
    accessed = store.to_dataframe(now=clock.now).set_index("id")["access_count"]
    # the testing effect reviews the hits that clear the relevance test (the top one here),
    # each once; a hit that does not clear it is returned but not strengthened
    ids = list(browser.results["id"])
    assert accessed[ids[0]] == 1 and all(accessed[i] in (0, 1) for i in ids)
    browser.k.value = 1  # changing k searches again
    assert len(browser.results) == 1


@pytest.mark.parametrize("k", [0, 51, 2.5, "3", True])
def test_store_browser_refuses_a_k_outside_its_slider(store: MemoryStore, k: object) -> None:
    # the slider used to clamp k silently (0 became 1, 51 became 50, 2.5 became 2)
    with pytest.raises(ValueError, match=r"k must be an int in \[1, 50\]"):
        StoreBrowser(store, k=k, draw=False)  # type: ignore[arg-type]


def test_store_browser_state_shares_follow_time(store: MemoryStore, clock: Clock) -> None:
    browser = StoreBrowser(store, now=lambda: clock.now)
    early = browser.state_shares.copy()
    assert early.sum() == pytest.approx(1.0) and list(early.index) == [
        "active",
        "dormant",
        "silent",
        "unavailable",
    ]
    states = store.to_dataframe(now=clock.now)["state"].value_counts(normalize=True)
    assert early[states.index].to_numpy() == pytest.approx(states.to_numpy())
    assert early["dormant"] == pytest.approx(
        1.0
    )  # 3 days after ingest: R ~0.88, accessibility ~0.46
    clock.advance(days=400)
    browser.refresh_states()
    # 400 days later, never used: unavailable (a new memory's single-trace retention is
    # 0.9 ** (400 / 2.3) ~ 1e-8 and it gained no storage strength)
    assert browser.state_shares["unavailable"] == pytest.approx(1.0)
    heights = [p.get_height() for p in browser.figure.axes[0].patches]
    assert heights == pytest.approx(browser.state_shares.to_numpy())


def test_store_browser_bad_query_is_shown_not_raised(store: MemoryStore) -> None:
    browser = StoreBrowser(store, draw=False)
    browser.query.value = "   "  # blank: ignored
    assert browser.error is None and browser.hits == []
    browser.topics.value = "ok"
    browser.k.value = 2
    with pytest.raises(ValueError, match="empty"):
        browser.search("")
    with pytest.raises(TypeError, match="MemoryStore"):
        StoreBrowser("not a store")  # type: ignore[arg-type]
    store.close()  # what typing into the box then does: the message shown, nothing raised
    browser.query.value = "staging again"
    assert "is closed" in browser.error and "is closed" in browser._results_html.value


def test_hits_frame_empty_has_the_columns() -> None:
    frame = hits_frame([])
    assert frame.empty and "score" in frame.columns and frame.index.name == "rank"


def test_empty_store_browser(clock: Clock) -> None:
    with MemoryStore(":memory:", clock=clock) as empty:
        browser = StoreBrowser(empty, draw=False)
        assert (browser.state_shares == 0).all()
        assert browser.search("anything").empty
        assert "no memory matches" in browser._results_html.value


def test_explorer_figure_is_shown_at_its_own_size_with_a_static_fallback() -> None:
    import base64

    from memlab.notebook.widgets import PIXEL_RATIO, SCREEN_DPI, CurveExplorer

    explorer = CurveExplorer(stability=7.0, strength=7.0)
    width = round(explorer.figure.get_figwidth() * SCREEN_DPI)
    assert explorer._image.layout.width == f"{width}px"
    data, metadata = explorer._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in data
    png = base64.b64decode(data["image/png"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    # PNG width (bytes 16-20 of the IHDR chunk): the CSS width times the pixel ratio
    assert int.from_bytes(png[16:20], "big") == width * PIXEL_RATIO
    assert metadata["image/png"]["width"] == width


@pytest.mark.parametrize("preset", sorted(HEAT_PRESETS))
def test_curve_explorer_reaches_every_heat_preset(preset: str) -> None:
    params = HEAT_PRESETS[preset]
    ex = CurveExplorer(k=params["k"], c=params["c"], u_minutes=params["u_minutes"], draw=False)
    assert ex.params["k"] == pytest.approx(params["k"], rel=0.03)  # a log slider's step
    assert ex.params["c"] == pytest.approx(params["c"], abs=0.01)
    # dragging can land on the preset's c: it lies on the slider's grid
    slider = ex.controls["c"]
    steps = (params["c"] - slider.min) / slider.step
    assert steps == pytest.approx(round(steps), abs=1e-6)


def test_curve_explorer_refuses_values_outside_its_sliders() -> None:
    """A value a slider cannot show is refused, at the start and through set(): never clamped."""
    # a string or None is named too (it raised "'<=' not supported between ...")
    for bad in ({"k": 1e9}, {"stability": 0.0}, {"stability": 1e6}, {"w20": 0.9}, {"c": None}):
        with pytest.raises(ValueError, match=f"{next(iter(bad))} must be in"):
            CurveExplorer(**bad, draw=False)
    ex = CurveExplorer(draw=False)
    with pytest.raises(ValueError, match="u_minutes must be in"):
        ex.set(u_minutes=0.0)
    with pytest.raises(ValueError, match="stability must be in"):
        ex.set(stability="7")
    assert ex.params["u_minutes"] == 1.0
