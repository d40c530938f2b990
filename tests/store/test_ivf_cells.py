"""Keyed vectors in faiss inverted-file cells (memlab.store.ivf_cells)."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("faiss")

from memlab.store.ivf_cells import HeldKeys, IvfCells  # noqa: E402


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


@pytest.mark.parametrize("cells", [0, 16])
def test_search_arrays_are_the_search_lists_laid_out_by_row(cells: int) -> None:
    """The arrays ingest's candidate search reads: each row the keys and similarities of the
    list ``search`` gives, in its order, then keys of -1 past a short row."""
    rng = np.random.default_rng(3)
    vecs = _clustered(rng, 600)
    store = _filled(vecs, cells=cells, dtype="i8" if cells else "f32")
    q = _clustered(np.random.default_rng(4), 20)
    lists = store.search(q, 12, ef=2)
    keys, sims = store.search_arrays(q, 12, ef=2)
    assert keys.shape == sims.shape == (20, 12) and keys.dtype == np.int64
    for row_keys, row_sims, hits in zip(keys.tolist(), sims.tolist(), lists, strict=True):
        assert list(zip(row_keys[: len(hits)], row_sims[: len(hits)], strict=True)) == hits
        assert all(k == -1 for k in row_keys[len(hits) :])
    few = _filled(vecs[:5])
    keys, _ = few.search_arrays(q[:2], 8, ef=1)
    assert keys.shape == (2, 5) and (keys >= 1).all()  # no more columns than vectors held


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


def test_held_keys_answer_removals_of_keys_not_held_after_add_and_load(tmp_path: Path) -> None:
    """The held keys are tracked through adds, removals, a save and a load of clustered cells,
    small and hand-given large keys alike: a held key is removed, one not held changes nothing
    (new memories' puts ask for it)."""
    vecs = _clustered(np.random.default_rng(6), 800)
    cells = IvfCells(16, dtype="i8")
    cells.train(vecs, cells=16)
    keys = np.arange(1, 801, dtype=np.uint64)
    keys[-1] = 2**40  # an id given by hand, beyond the bitmap
    cells.add(keys, vecs)
    cells.remove(5000)  # not held: nothing happens
    cells.remove(2**41)
    assert len(cells) == 800
    cells.remove(2**40)
    cells.remove(7)
    assert len(cells) == 798
    cells.save(tmp_path / "c.ivf")
    loaded = IvfCells(16, dtype="i8")
    loaded.load(tmp_path / "c.ivf")
    loaded.remove(7)  # removed before the save: not held
    assert len(loaded) == 798
    loaded.remove(8)
    assert len(loaded) == 797 and all(k != 8 for k, _ in loaded.search(vecs[7:8], 5, ef=16)[0])
    held = HeldKeys(np.array([3, 2**40]))
    assert 3 in held and 2**40 in held and 4 not in held and 2**41 not in held
