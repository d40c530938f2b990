from __future__ import annotations

from concurrent.futures import ProcessPoolExecutor

import numpy as np
import pandas as pd
import pytest

from memlab.fit.data import load_reviews
from memlab.fit.many import fit_fsrs6_group, fit_many


def _square(x: int, offset: int = 0) -> int:
    return x * x + offset


def _fail_on_three(x: int) -> int:
    if x == 3:
        raise ValueError("three")
    return x


def _groups(small_log) -> dict[str, pd.DataFrame]:
    frame = load_reviews(small_log).frame
    return {"a": frame, "b": frame.copy()}


def test_serial_and_order() -> None:
    assert fit_many({"x": 2, "y": 3}, fit_fn=_square, progress=False, offset=1) == {"x": 5, "y": 10}
    assert list(fit_many([(3, 1), (1, 2)], fit_fn=_square, progress=False)) == [3, 1]


def test_errors() -> None:
    with pytest.raises(RuntimeError, match="group 'c' failed: three"):
        fit_many({"a": 1, "c": 3}, fit_fn=_fail_on_three, progress=False)
    with pytest.raises(TypeError):
        fit_many(5, fit_fn=_square)
    with pytest.raises(TypeError):
        fit_many({"a": 1}, fit_fn=_square, executor=object())


def test_process_pool(small_log) -> None:
    groups = _groups(small_log)
    with ProcessPoolExecutor(max_workers=2) as pool:
        results = fit_many(groups, executor=pool, progress=False)
    serial = fit_many(groups, progress=False)
    assert list(results) == ["a", "b"]
    np.testing.assert_allclose(results["a"]["weights"], serial["a"]["weights"])
    assert results["a"]["n_reviews"] == 8
    with ProcessPoolExecutor(max_workers=2) as pool:
        assert fit_many(
            {k: k for k in range(5)}, fit_fn=_square, executor=pool, progress=False
        ) == {k: k * k for k in range(5)}


def test_dask_local_cluster(small_log) -> None:
    distributed = pytest.importorskip("dask.distributed")
    groups = _groups(small_log)
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        results = fit_many(groups, executor=client.get_executor(), progress=False)
    assert set(results) == {"a", "b"}
    np.testing.assert_allclose(results["a"]["weights"], fit_fsrs6_group(groups["a"])["weights"])
