"""Keyed vectors in faiss inverted-file cells (memlab.store.ivf_cells)."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("faiss")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from memlab.store.ivf_cells import BOUND_SLACK, IvfCells, KeyedBounds  # noqa: E402


def _unit(rng: np.random.Generator, n: int, dim: int = 16) -> np.ndarray:
    x = rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _clustered(rng: np.random.Generator, n: int, dim: int = 16, centres: int = 20) -> np.ndarray:
    c = _unit(rng, centres, dim)
    x = c[rng.integers(0, centres, n)] + 0.25 * rng.standard_normal((n, dim)).astype(np.float32)
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def _filled(vecs: np.ndarray, *, cells: int = 0, dtype: str = "f32") -> IvfCells:
    store = IvfCells(vecs.shape[1], dtype=dtype)
    if cells:
        store.train(vecs, cells=cells)
    store.add(np.arange(1, len(vecs) + 1, dtype=np.uint64), vecs)
    return store


def test_untrained_cells_search_exactly_by_cosine_and_remove_by_key() -> None:
    rng = np.random.default_rng(0)
    vecs = _unit(rng, 300)
    cells = _filled(vecs * 3.0)  # not unit length: normalised, so the ranking is by cosine
    q = vecs[:5]
    for row, hits in zip(q, cells.search(q, 7, ef=1), strict=True):
        want = (np.argsort(-(vecs @ row), kind="stable")[:7] + 1).tolist()
        assert [k for k, _ in hits] == want
        assert hits[0][1] == pytest.approx(1.0, abs=1e-5)
    cells.remove(1)
    cells.remove(1)  # absent: nothing happens
    cells.remove(10_000)
    assert len(cells) == 299
    assert all(k != 1 for k, _ in cells.search(vecs[:1], 5, ef=1)[0])
    assert cells.search(vecs[:2], 0, ef=1) == [[], []]


@pytest.mark.parametrize("dtype", ["f32", "i8"])
def test_trained_cells_find_the_exact_neighbours_when_every_cell_is_scanned(dtype: str) -> None:
    rng = np.random.default_rng(1)
    vecs = _clustered(rng, 2000)
    cells = _filled(vecs, cells=32, dtype=dtype)
    assert cells.cells == 32 and len(cells) == 2000
    q = _clustered(np.random.default_rng(2), 50)
    exact = [set((np.argsort(-(vecs @ row))[:10] + 1).tolist()) for row in q]
    every = cells.search(q, 50, ef=32)
    # all cells scanned: float32 finds the exact top 10; 8-bit finds it among its top 50
    found = [{k for k, _ in hits[: 10 if dtype == "f32" else 50]} for hits in every]
    assert np.mean([len(f & e) / 10 for f, e in zip(found, exact, strict=True)]) == 1.0
    few = cells.search(q, 50, ef=2)
    recall_few = np.mean([len({k for k, _ in h} & e) / 10 for h, e in zip(few, exact, strict=True)])
    assert recall_few < 1.0  # two cells of 32: some neighbours are in cells not scanned
    cells.remove(5)
    assert len(cells) == 1999
    assert all(k != 5 for k, _ in cells.search(vecs[4:5], 10, ef=32)[0])


def test_training_refuses_held_vectors_bad_counts_and_short_samples() -> None:
    rng = np.random.default_rng(3)
    vecs = _unit(rng, 100)
    with pytest.raises(ValueError, match="empty cells"):
        _filled(vecs).train(vecs, cells=4)
    with pytest.raises(ValueError, match="at least 200 rows"):
        IvfCells(16).train(vecs, cells=200)
    for bad in (0, True, 2.5):
        with pytest.raises(ValueError, match="cells must be"):
            IvfCells(16).train(vecs, cells=bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="dtype"):
        IvfCells(16, dtype="f16")


@pytest.mark.parametrize("cells", [0, 16])
def test_saved_cells_load_with_their_keys(tmp_path: Path, cells: int) -> None:
    rng = np.random.default_rng(4)
    vecs = _clustered(rng, 800)
    saved = _filled(vecs, cells=cells, dtype="i8")
    saved.remove(3)
    saved.save(tmp_path / "c.ivf")
    loaded = IvfCells(16, dtype="i8")
    loaded.load(tmp_path / "c.ivf")
    assert loaded.cells == cells and len(loaded) == 799
    q = vecs[10:20]
    assert loaded.search(q, 10, ef=16) == saved.search(q, 10, ef=16)
    loaded.remove(4)  # removal by key works after a load (flat keys and the cells' map)
    assert len(loaded) == 798
    with pytest.raises(ValueError, match="dimension"):
        IvfCells(8).load(tmp_path / "c.ivf")
    if cells:
        with pytest.raises(ValueError, match="f32"):
            IvfCells(16, dtype="f32").load(tmp_path / "c.ivf")


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), scale=st.floats(0.05, 1.0))
def test_every_score_is_within_its_bound_of_the_exact_cosine(seed: int, scale: float) -> None:
    """|score - cosine of the vector itself| <= the key's bound, for 8-bit cells of any
    spread, every query and every cell scanned; float32 and untrained cells: the slack."""
    rng = np.random.default_rng(seed)
    dim, centres = 16, 12
    c = _unit(rng, centres, dim)
    x = c[rng.integers(0, centres, 600)] + scale * rng.standard_normal((600, dim))
    vecs = (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)
    q = _unit(rng, 20, dim)
    for cells, dtype in ((16, "i8"), (16, "f32"), (0, "i8")):
        held = _filled(vecs, cells=cells, dtype=dtype)
        keys = np.arange(1, 601)
        bounds = held.score_bounds(keys)
        if dtype == "f32" or not cells:
            assert np.all(bounds == np.float32(BOUND_SLACK))
        else:
            assert np.all(bounds > BOUND_SLACK) and np.all(np.isfinite(bounds))
        for row, hits in zip(q, held.search(q, 600, ef=16), strict=True):
            ids = np.array([k for k, _ in hits])
            gap = np.abs(np.array([s for _, s in hits]) - vecs[ids - 1] @ row)
            assert np.all(gap <= bounds[ids - 1])
    assert np.isnan(held.score_bounds(np.array([0, 601, 2**40]))).all()  # not held


def test_bounds_follow_the_keys_held_through_removal_and_load(tmp_path: Path) -> None:
    vecs = _clustered(np.random.default_rng(5), 800)
    cells = _filled(vecs, cells=16, dtype="i8")
    cells.remove(7)
    assert np.isnan(cells.score_bounds(np.array([7])))[0] and len(cells) == 799
    cells.save(tmp_path / "c.ivf")
    loaded = IvfCells(16, dtype="i8")
    loaded.load(tmp_path / "c.ivf")
    bounds = loaded.score_bounds(np.arange(1, 801))
    # the file holds no bounds: unknown (inf) for every key held, NaN for the removed one
    assert np.isnan(bounds[6]) and np.isinf(np.delete(bounds, 6)).all()
    loaded.remove(7)  # not held: nothing happens
    assert len(loaded) == 799
    flat = _filled(vecs[:50], dtype="i8")
    flat.save(tmp_path / "f.ivf")
    flat_loaded = IvfCells(16, dtype="i8")
    flat_loaded.load(tmp_path / "f.ivf")
    assert np.all(flat_loaded.score_bounds(np.arange(1, 51)) == np.float32(BOUND_SLACK))


def test_keyed_bounds_hold_small_and_large_keys() -> None:
    bounds = KeyedBounds()
    bounds.set(np.array([3, 2**40, 5]), np.array([0.1, 0.2, 0.3]))
    got = bounds.get(np.array([3, 2**40, 5, 4, 2**41]))
    assert got[:3] == pytest.approx([0.1, 0.2, 0.3]) and np.isnan(got[3:]).all()
    assert bounds.holds(2**40) and not bounds.holds(4)
    bounds.discard(2**40)
    bounds.discard(3)
    assert not bounds.holds(2**40) and not bounds.holds(3) and bounds.holds(5)


def _search_in_child(cells: IvfCells, q: np.ndarray, out: multiprocessing.Queue) -> None:
    out.put([[k for k, _ in hits] for hits in cells.search(q, 5, ef=8)])


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork")
def test_a_forked_child_searches_cells_its_parent_searched() -> None:
    """faiss's OpenMP pool does not survive fork: without one thread set in the child, its
    first batch of searches (a parallel region, as the gate's) hangs (the join would time
    out)."""
    rng = np.random.default_rng(5)
    vecs = _clustered(rng, 3000)
    cells = _filled(vecs, cells=32, dtype="i8")
    want = [[k for k, _ in hits] for hits in cells.search(vecs[:200], 5, ef=8)]
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    child = ctx.Process(target=_search_in_child, args=(cells, vecs[:200], out))
    child.start()
    child.join(timeout=60)
    if child.is_alive():
        child.kill()
        pytest.fail("the forked child's search hung")
    assert child.exitcode == 0
    assert out.get(timeout=5) == want
