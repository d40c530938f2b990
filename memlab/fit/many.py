"""Many fits at once (one per user, deck or setting) on any ``concurrent.futures`` executor.

``fit_many`` only calls ``submit`` and waits on the futures, so a ``ProcessPoolExecutor``, a
``ThreadPoolExecutor`` or a Dask client's ``client.get_executor()`` all work; ``fit_fn`` must be
picklable (a module-level function) for process and distributed executors.
"""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

import pandas as pd

from memlab.progress import progress as progress_bar


def fit_fsrs6_group(reviews: Any) -> dict[str, Any]:
    """The default ``fit_fn``: FSRS-6 fitted to one group's reviews (``weights``, ``train``
    metrics, ``n_reviews``)."""
    from memlab.fit.data import as_frame
    from memlab.fit.fsrs6 import FSRS6Fitter

    frame = as_frame(reviews)
    fitter = FSRS6Fitter().fit(frame)
    return {"weights": list(fitter.weights_), "train": fitter.score(frame), "n_reviews": len(frame)}


def _failed(key: Hashable, error: BaseException) -> RuntimeError:
    return RuntimeError(f"fit of group {key!r} failed: {error}")


def fit_many(
    groups: Mapping[Hashable, Any] | Iterable[tuple[Hashable, Any]],
    fit_fn: Callable[..., Any] = fit_fsrs6_group,
    executor: cf.Executor | Any | None = None,
    progress: bool | None = True,
    **kwargs: Any,
) -> dict[Hashable, Any]:
    """Run ``fit_fn(data, **kwargs)`` for every group, in parallel when an executor is given.

    Parameters
    ----------
    groups : mapping or iterable of (key, data)
        E.g. ``{"alice": frame_a, "bob": frame_b}`` or ``frame.groupby("user")``.
    fit_fn : callable
        Called as ``fit_fn(data, **kwargs)``; default :func:`fit_fsrs6_group`.
    executor : concurrent.futures.Executor, optional
        Anything with ``submit`` returning futures; ``None`` runs the fits here, in turn.
    progress : bool, optional
        Show a bar of finished fits (``None`` follows :func:`memlab.progress.set_progress`).

    Returns
    -------
    dict
        Results by key, in the order of ``groups``. The first failure is re-raised, naming its
        group.
    """
    if isinstance(groups, pd.DataFrame):
        raise TypeError("pass groups as a mapping or as frame.groupby(key), not a whole DataFrame")
    items = list(groups.items()) if isinstance(groups, Mapping) else list(groups)
    if not all(isinstance(item, tuple) and len(item) == 2 for item in items):
        raise TypeError("groups must be a mapping or an iterable of (key, data) pairs")
    if executor is not None and not hasattr(executor, "submit"):
        raise TypeError(f"executor must have a submit() method, got {executor!r}")
    keys = [key for key, _ in items]
    if len(set(map(repr, keys))) != len(keys):
        raise ValueError("group keys must be unique")
    results: dict[Hashable, Any] = {}
    bar = progress_bar(total=len(items), desc="fit_many", unit="fit", enabled=progress)
    try:
        if executor is None:
            for key, data in items:
                try:
                    results[key] = fit_fn(data, **kwargs)
                except Exception as error:
                    raise _failed(key, error) from error
                bar.update(1)
        else:
            futures = {executor.submit(fit_fn, data, **kwargs): key for key, data in items}
            for future in cf.as_completed(futures):
                try:
                    results[futures[future]] = future.result()
                except Exception as error:
                    raise _failed(futures[future], error) from error
                bar.update(1)
    finally:
        bar.close()
    return {key: results[key] for key in keys}
