"""Many fits at once (one per user, deck or setting) on any ``concurrent.futures`` executor.

``fit_many`` only calls ``submit`` and waits on the futures, so a ``ProcessPoolExecutor``, a
``ThreadPoolExecutor`` or a Dask client's ``client.get_executor()`` all work; ``fit_fn`` must be
picklable (a module-level function) for process and distributed executors.
"""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from memlab.progress import progress as progress_bar


def fit_fsrs6_group(reviews: Any, holdout: float | None = None) -> dict[str, Any]:
    """The default ``fit_fn``: FSRS-6 fitted to one group's reviews.

    Returns ``{"weights", "train", "n_reviews"}``, and ``"test"`` metrics with ``holdout`` (the fit
    then uses the first ``1 - holdout`` of the reviews by time).
    """
    from memlab.fit.data import as_frame, time_split
    from memlab.fit.fsrs6 import FSRS6Fitter

    frame = as_frame(reviews)
    test = time_split(frame, holdout) if holdout else np.zeros(len(frame), dtype=bool)
    fitter = FSRS6Fitter().fit(frame, ~test)
    result: dict[str, Any] = {
        "weights": list(fitter.weights_),
        "train": fitter.score(frame, ~test),
        "n_reviews": int(len(frame)),
    }
    if holdout:
        result["test"] = fitter.score(frame, test)
    return result


def _items(groups: Any) -> list[tuple[Hashable, Any]]:
    if isinstance(groups, pd.DataFrame):
        raise TypeError("pass groups as a mapping or as frame.groupby(key), not a whole DataFrame")
    if isinstance(groups, Mapping):
        return list(groups.items())
    iterable = isinstance(groups, Iterable) and not isinstance(groups, str)
    items = list(groups) if iterable else [groups]
    for item in items:
        if not (isinstance(item, tuple) and len(item) == 2):
            raise TypeError(
                f"groups must be a mapping or an iterable of (key, data) pairs: {item!r:.80}"
            )
    return items


def fit_many(
    groups: Mapping[Hashable, Any] | Iterable[tuple[Hashable, Any]],
    fit_fn: Callable[..., Any] = fit_fsrs6_group,
    executor: cf.Executor | Any | None = None,
    progress: bool | None = True,
    errors: str = "raise",
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
    errors : {"raise", "return"}
        Re-raise the first failure (naming its group), or put the exception in its place.

    Returns
    -------
    dict
        Results by key, in the order of ``groups``.
    """
    if errors not in ("raise", "return"):
        raise ValueError(f"errors must be 'raise' or 'return', got {errors!r}")
    if not callable(fit_fn):
        raise TypeError(f"fit_fn must be callable, got {fit_fn!r}")
    if executor is not None and not hasattr(executor, "submit"):
        raise TypeError(
            "executor must have a submit() method (a concurrent.futures.Executor), "
            f"got {executor!r}"
        )
    items = _items(groups)
    keys = [key for key, _ in items]
    if len(set(map(repr, keys))) != len(keys):
        raise ValueError("group keys must be unique")
    results: dict[Hashable, Any] = {}

    def failed(key: Hashable, error: BaseException) -> None:
        if errors == "raise":
            raise RuntimeError(f"fit of group {key!r} failed: {error}") from error
        results[key] = error

    bar = progress_bar(total=len(items), desc="fit_many", unit="fit", enabled=progress)
    try:
        if executor is None:
            for key, data in items:
                try:
                    results[key] = fit_fn(data, **kwargs)
                except Exception as error:  # noqa: BLE001 - reported per group
                    failed(key, error)
                bar.update(1)
        else:
            futures = {executor.submit(fit_fn, data, **kwargs): key for key, data in items}
            for future in cf.as_completed(futures):
                key = futures[future]
                error = future.exception()
                if error is not None:
                    failed(key, error)
                else:
                    results[key] = future.result()
                bar.update(1)
    finally:
        bar.close()
    return {key: results[key] for key in keys}


__all__ = ["fit_fsrs6_group", "fit_many"]
