"""Fit speed and held-out accuracy of memlab's FSRS6Fitter against fsrs-rs and py-fsrs's Optimizer.

Two logs: the shipped josh review log (12,580 real reviews) and a ~100k-review log simulated
from FSRS-6 with the default weights (seeded; ``--sim-cards`` cards). Each is split by time:
fit on the first 80 % of reviews, score the scoreable reviews of the last 20 % (states carried
through the training reviews; 24-hour days on josh). Every fitter's weights are scored by the same
memlab code (log loss, RMSE(bins) with the srs-benchmark's review count, AUC).

Speed: the fitter alone, memlab ``FSRS6Fitter().fit`` against fsrs-rs (``fsrs-rs-python``'s
``compute_parameters`` on the same training reviews as FSRSItems, built beforehand and not
timed), in ``--rounds`` alternating rounds (the order flips each round) after one untimed warm-up
round (numba's compiled-kernel cache load, fsrs-rs's first call). Reported: the median of each,
the ratio of the medians and the median of the per-round ratios, beside the machine load
(``os.getloadavg``) at start and end. Targets: within 3x fsrs-rs on josh, 1.5x on the ~100k log.

Also: the fitter variants (``l2="auto"``, outlier filter, a recency sweep),
py-fsrs 6.3.2 ``Optimizer`` (torch; timed once, ``--skip-pyfsrs`` rescores the weights of the
last saved run instead), and ``fit_many`` over simulated users, one after another, on a
process pool and on a Dask local cluster (users fitted per second).

``fsrs-rs-python`` is a benchmark-only package (``pip install fsrs-rs-python``), not a memlab
dependency. Run: ``python experiments/bench_fit.py [--rounds 7] [--skip-pyfsrs]``. Writes
experiments/results/bench_fit.json and .md.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import json
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from memlab.fit import _fsrs6_kernel
from memlab.fit.data import load_reviews, time_split
from memlab.fit.fsrs6 import FSRS6Fitter, score_fsrs6
from memlab.fit.many import fit_many
from memlab.fit.recovery import simulate_reviews
from memlab.models.fsrs6 import FSRS6

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
JOSH = ROOT.parent / "shared" / "data" / "reviews" / "py-fsrs_review_logs_josh.csv"
REFERENCE = {
    "design_pyfsrs_optimizer_seconds": 39.7,
    "design_fsrs_rs_seconds": [0.016, 0.032],
    "design_test_log_loss": {
        "default": 0.4515,
        "fsrs_rs": [0.4497, 0.4504],
        "pyfsrs_optimizer": 0.4550,
    },
    "issue_fsrs_rs_test_log_loss": 0.44972,
    "targets": {"josh_ratio": 3.0, "sim_ratio": 1.5, "josh_test_log_loss": 0.4499},
}


def _josh_path() -> Path:
    if JOSH.exists():
        return JOSH
    from memlab.datasets import shared_path

    found = shared_path("data", "reviews", "py-fsrs_review_logs_josh.csv", required=False)
    return found if found is not None else JOSH


def _score(weights, frame, test) -> dict:
    return {
        "train": score_fsrs6(FSRS6(weights), frame, ~test),
        "test": score_fsrs6(FSRS6(weights), frame, test),
    }


def run_pyfsrs(frame, test) -> dict:
    try:
        from fsrs import Rating, ReviewLog
        from fsrs.optimizer import Optimizer
    except ImportError as error:  # torch missing
        return {"available": False, "error": f"{type(error).__name__}: {error}"}
    train = frame[~test]
    logs = [
        ReviewLog(
            card_id=int(c),
            rating=Rating(int(g)),
            review_datetime=t.to_pydatetime(),
            review_duration=None,
        )
        for c, g, t in zip(train["card_id"], train["grade"], train["time"], strict=True)
    ]
    start = time.perf_counter()
    try:
        optimizer = Optimizer(logs)
    except ImportError as error:  # fsrs without its torch extra
        return {"available": False, "error": f"{type(error).__name__}: {error}"}
    weights = optimizer.compute_optimal_parameters()
    seconds = time.perf_counter() - start
    return {
        "available": True,
        "seconds": seconds,
        "weights": list(map(float, weights)),
        **_score(weights, frame, test),
    }


def fsrs_rs_items(frame, train) -> list:
    """fsrs-rs training items of the training reviews: one per scored review, its card's history."""
    from fsrs_rs_python import FSRSItem, FSRSReview

    items = []
    for _, card in frame[train].groupby("card_id", sort=False):
        grades = card["grade"].to_numpy()
        elapsed = np.nan_to_num(card["elapsed_days"].to_numpy(), nan=0.0).astype(int)
        reviews = [FSRSReview(int(g), int(t)) for g, t in zip(grades, elapsed, strict=True)]
        for i in range(1, len(reviews)):
            if elapsed[i] >= 1:  # items end at a scored review, as in fsrs-rs's training set
                items.append(FSRSItem(reviews[: i + 1]))
    return items


def fit_fsrs_rs(items) -> tuple[list[float], float]:
    from fsrs_rs_python import DEFAULT_PARAMETERS, FSRS

    start = time.perf_counter()
    weights = FSRS(list(DEFAULT_PARAMETERS)).compute_parameters(items)
    return list(map(float, weights)), time.perf_counter() - start


def fit_memlab(frame, train, **kwargs) -> tuple[FSRS6Fitter, float]:
    start = time.perf_counter()
    fitter = FSRS6Fitter(**kwargs).fit(frame, train)
    return fitter, time.perf_counter() - start


def race(frame, test, rounds: int) -> dict:
    """memlab vs fsrs-rs on the same training reviews, alternating, after a warm-up round."""
    try:
        items = fsrs_rs_items(frame, ~test)
    except ImportError as error:
        return {"available": False, "error": f"{type(error).__name__}: {error}"}
    load_start = os.getloadavg()
    fit_memlab(frame, ~test)
    fit_fsrs_rs(items)
    memlab_s, rs_s, ratios = [], [], []
    fitter = rs_weights = None
    for k in range(rounds):
        if k % 2 == 0:
            fitter, a = fit_memlab(frame, ~test)
            rs_weights, b = fit_fsrs_rs(items)
        else:
            rs_weights, b = fit_fsrs_rs(items)
            fitter, a = fit_memlab(frame, ~test)
        memlab_s.append(a)
        rs_s.append(b)
        ratios.append(a / b)
    assert fitter is not None and rs_weights is not None
    out = {
        "available": True,
        "rounds": rounds,
        "n_items": len(items),
        "load_avg_start": load_start,
        "load_avg_end": os.getloadavg(),
        "memlab": {
            "seconds": statistics.median(memlab_s),
            "seconds_all": memlab_s,
            "engine": "numba" if _fsrs6_kernel.AVAILABLE else "python",
            "n_iter": fitter.n_iter_,
            "n_evals": fitter.n_evals_,
            "train_loss": fitter.loss_,
            "weights": list(fitter.weights_),
            **_score(fitter.weights_, frame, test),
        },
        "fsrs_rs": {
            "seconds": statistics.median(rs_s),
            "seconds_all": rs_s,
            "weights": rs_weights,
            **_score(rs_weights, frame, test),
        },
        "ratio_of_medians": statistics.median(memlab_s) / statistics.median(rs_s),
        "median_round_ratio": statistics.median(ratios),
        "round_ratios": ratios,
    }
    return out


def simulated_users(n_users: int, n_cards: int, seed: int = 0) -> dict:
    """Simulated users' logs (FSRS-6 default weights, each its own seed) as tidy frames."""
    return {
        f"user{k:03d}": simulate_reviews(n_cards=n_cards, reviews_per_card=8, seed=seed + k).frame
        for k in range(n_users)
    }


def bench_fit_many(n_users: int, n_cards: int, workers: int) -> dict:
    """Users fitted per second by ``fit_many``: here, on threads, on a process pool, and on a
    Dask cluster."""
    users = simulated_users(n_users, n_cards, seed=1000)
    reviews = sum(len(f) for f in users.values())
    out: dict = {"users": n_users, "reviews": reviews, "workers": workers}

    def timed(executor) -> dict:
        # warm-up: one fit per worker (process start, numba cache load), not timed
        warm = dict(list(users.items())[:workers])
        fit_many(warm, executor=executor, progress=False)
        load = os.getloadavg()
        start = time.perf_counter()
        results = fit_many(users, executor=executor, progress=False)
        seconds = time.perf_counter() - start
        assert len(results) == n_users
        return {"seconds": seconds, "users_per_second": n_users / seconds, "load_avg": load}

    out["sequential"] = timed(None)
    # the compiled kernel releases the GIL (nogil), but the optimiser's Python loop around it
    # does not: measured beside the process pool, threads gave no speed-up (2026-12-01)
    with cf.ThreadPoolExecutor(workers) as pool:
        out["thread_pool"] = timed(pool)
    with cf.ProcessPoolExecutor(workers) as pool:
        out["process_pool"] = timed(pool)
    try:
        from dask.distributed import Client, LocalCluster
    except ImportError as error:
        out["dask"] = {"available": False, "error": str(error)}
    else:
        with (
            LocalCluster(
                n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None
            ) as cluster,
            Client(cluster) as client,
        ):
            out["dask"] = timed(client.get_executor())
    for name in ("sequential", "thread_pool", "process_pool", "dask"):
        if "users_per_second" in out.get(name, {}):
            print(
                f"fit_many {name:12s}: {out[name]['users_per_second']:.1f} users/s "
                f"({n_users} users, {reviews} reviews, {out[name]['seconds']:.2f} s)"
            )
    return out


def variants(frame, test) -> dict:
    out = {}
    for name, kwargs in (
        ("memlab_plain (l2 0, recency 0)", {"l2": 0.0, "recency": 0.0}),
        ("memlab_filter_outliers", {"filter_outliers": True}),
        ("memlab_l2_auto", {"l2": "auto"}),
        ("memlab_recency_0", {"recency": 0.0}),
        ("memlab_recency_3", {"recency": 3.0}),
    ):
        fitter, seconds = fit_memlab(frame, ~test, **kwargs)
        out[name] = {
            "seconds": seconds,
            "params": {k: str(v) for k, v in kwargs.items()},
            "l2": fitter.l2_,
            "l2_validation": {str(k): v for k, v in fitter.l2_scores_.items()},
            "n_evals": fitter.n_evals_,
            "train_loss": fitter.loss_,
            "weights": list(fitter.weights_),
            **_score(fitter.weights_, frame, test),
        }
        print(f"  {name:20s} {seconds:.3f} s  test log loss {out[name]['test']['log_loss']:.4f}")
    return out


DEFAULT_GRID = {
    "filter_outliers": (False, True),
    "l2": (0.0, 0.003, 0.01, 0.03),
    "recency": (0.0, 1.0, 2.0, 3.0),
}


def _tss_validation(sub, setting: dict, n_splits: int = 5) -> float:
    """Pooled log loss of 5 time-series folds of the scored training reviews (fit before each)."""
    from memlab.fit.metrics import log_loss, scoreable_rows
    from memlab.fit.protocol import time_series_folds

    scored = np.flatnonzero(scoreable_rows(sub))
    y_all = (sub["grade"].to_numpy() >= 2).astype(float)
    ys, ps = [], []
    for a, b in time_series_folds(len(scored), n_splits):
        fitter = FSRS6Fitter(**setting).fit(sub, np.arange(len(sub)) < scored[a])
        p = fitter.predict(sub)
        ys.append(y_all[scored[a:b]])
        ps.append(p[scored[a:b]])
    return log_loss(np.concatenate(ys), np.concatenate(ps))


def validate_defaults(frame, test) -> dict:
    """Choose the fitter's defaults inside the training reviews only (never on the test split).

    Validation: the scored training reviews in time order are cut into 5 time-series folds
    (the srs-benchmark's ``TimeSeriesSplit``, :func:`memlab.fit.protocol.time_series_folds`);
    each fold is predicted by a fit on every training review before it, and the pooled log loss
    ranks the settings of :data:`DEFAULT_GRID`. Shown beside it, for information only: one
    time-ordered block (fit on the first 80 % of the training reviews, score the last 20 %) and
    the test log loss of a fit on all training reviews.
    """
    sub = frame[~test].reset_index(drop=True)
    sub = sub.assign(order=np.arange(len(sub), dtype=np.int64))
    val = time_split(sub, 0.2)
    rows = []
    for flt in DEFAULT_GRID["filter_outliers"]:
        for l2 in DEFAULT_GRID["l2"]:
            for recency in DEFAULT_GRID["recency"]:
                setting = {"filter_outliers": flt, "l2": l2, "recency": recency}
                block = FSRS6Fitter(**setting).fit(sub, ~val).score(sub, val)["log_loss"]
                outer = FSRS6Fitter(**setting).fit(frame, ~test).score(frame, test)["log_loss"]
                rows.append(
                    {
                        **setting,
                        "validation_log_loss": _tss_validation(sub, setting),
                        "single_block_log_loss": block,
                        "test_log_loss": outer,
                    }
                )
    best = min(rows, key=lambda r: r["validation_log_loss"])
    default = FSRS6Fitter()
    keys = ("filter_outliers", "l2", "recency")
    chosen = {k: best[k] for k in keys}
    defaults = {k: getattr(default, k) for k in keys}
    block_best = min(rows, key=lambda r: r["single_block_log_loss"])
    out = {
        "grid": rows,
        "chosen": chosen,
        "chosen_by_single_block": {k: block_best[k] for k in keys},
        "fitter_defaults": defaults,
        "defaults_are_chosen": chosen == defaults,
        "validation": "5 time-series folds of the training reviews, pooled log loss",
    }
    print("  defaults by validation inside the training reviews (test shown for information):")
    for r in rows:
        mark = " <- chosen" if r is best else ""
        print(
            f"    filter={r['filter_outliers']!s:5s} l2={r['l2']:<5} recency={r['recency']:<3} "
            f"5-fold {r['validation_log_loss']:.5f}  block {r['single_block_log_loss']:.5f}  "
            f"test {r['test_log_loss']:.5f}{mark}"
        )
    print(f"  FSRS6Fitter defaults {defaults}: chosen by validation = {out['defaults_are_chosen']}")
    return out


def _load(values) -> str:
    return "/".join(f"{v:.2f}" for v in values) if values else "-"


def _row(name: str, entry: dict) -> str:
    t = entry["test"]
    seconds = f"{entry['seconds']:.3f}" if "seconds" in entry else "-"
    return (
        f"| {name} | {seconds} | {t['log_loss']:.4f} | {t['rmse_bins']:.4f} "
        f"| {t['auc']:.4f} | {t['n']} |"
    )


def markdown(out: dict) -> str:
    """The results as a Markdown report."""
    lines = [
        "# FSRS-6 fitting: speed against fsrs-rs, held-out accuracy (first 80 % of reviews by "
        "time train, last 20 % test)",
        "",
        f"Run {out['when']}; {out['machine']['cpus']} CPUs, load average (1/5/15 min) "
        f"{_load(out['machine']['load_avg'])} at start, "
        f"{_load(out['machine'].get('load_avg_end'))} "
        f"at end. memlab engine: {out['machine']['engine']}.",
        "RMSE(bins) uses the srs-benchmark's review count (same-day reviews not counted).",
    ]
    for log in ("josh", "sim"):
        block = out.get(log)
        if not block:
            continue
        race_ = block["race"]
        lines += [
            "",
            f"## {block['title']}",
            "",
            f"{block['train_reviews']} training and {block['test_reviews']} test reviews.",
            "",
        ]
        if race_.get("available"):
            lines += [
                f"Fitter alone, {race_['rounds']} alternating rounds after a warm-up (median "
                "seconds): "
                f"memlab {race_['memlab']['seconds']:.4f} s, fsrs-rs "
                f"{race_['fsrs_rs']['seconds']:.4f} s; "
                f"ratio of medians **{race_['ratio_of_medians']:.2f}x**, median of the "
                "per-round ratios "
                f"{race_['median_round_ratio']:.2f}x (target <= {block['target']}x). "
                f"Load average {_load(race_['load_avg_start'])} -> {_load(race_['load_avg_end'])}.",
                "",
            ]
        lines += [
            "| fitter | fit seconds | test log loss | test RMSE(bins) | test AUC | n |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
            _row("default weights", block["default"]),
        ]
        if race_.get("available"):
            lines += [_row("memlab (default)", race_["memlab"]), _row("fsrs-rs", race_["fsrs_rs"])]
        for name, entry in block.get("variants", {}).items():
            lines.append(_row(name, entry))
        py = block.get("pyfsrs_optimizer", {})
        if "test" in py:
            lines.append(
                _row("py-fsrs Optimizer" + (" (rescored)" if py.get("rescored") else ""), py)
            )
        if py.get("rescored"):
            lines += [
                "",
                "py-fsrs's Optimizer needs torch (not installed here): its weights from the "
                "run of "
                f"{py.get('rescored_from_run')} are rescored; its seconds are from that run.",
            ]
        if "defaults" in block:
            d = block["defaults"]
            lines += [
                "",
                f"Defaults chosen inside the training reviews only ({d['validation']}; the test "
                f"split is never used): {d['chosen']}; FSRS6Fitter's defaults "
                f"{d['fitter_defaults']} "
                f"({'the chosen ones' if d['defaults_are_chosen'] else 'NOT the chosen ones'}). "
                f"A single time-ordered block (last 20 % of the training reviews) would choose "
                f"{d['chosen_by_single_block']}.",
                "",
                "| filter_outliers | l2 | recency | 5-fold validation | single block | test "
                "(information only) |",
                "| --- | ---: | ---: | ---: | ---: | ---: |",
            ]
            for r in d["grid"]:
                lines.append(
                    f"| {r['filter_outliers']} | {r['l2']} | {r['recency']} | "
                    f"{r['validation_log_loss']:.5f} "
                    f"| {r['single_block_log_loss']:.5f} | {r['test_log_loss']:.5f} |"
                )
    many = out.get("fit_many")
    if many:
        lines += [
            "",
            f"## fit_many: {many['users']} simulated users ({many['reviews']} reviews), "
            f"{many['workers']} workers",
            "",
            "| executor | seconds | users / s | load average |",
            "| --- | ---: | ---: | --- |",
        ]
        for name in ("sequential", "thread_pool", "process_pool", "dask"):
            entry = many.get(name, {})
            if "users_per_second" in entry:
                lines.append(
                    f"| {name} | {entry['seconds']:.2f} | {entry['users_per_second']:.1f} | "
                    f"{_load(entry['load_avg'])} |"
                )
    lines += [
        "",
        "The variant rows differ from the default fitter in the one setting named; only the "
        "defaults",
        "were chosen by validation (above).",
        "Reference (DESIGN.md): default 0.4515, fsrs-rs 0.4497-0.4504, py-fsrs Optimizer 0.4550; "
        "py-fsrs 39.7 s, fsrs-rs 0.016-0.032 s.",
    ]
    return "\n".join(lines) + "\n"


def log_block(title: str, frame, rounds: int, target: float, with_variants: bool) -> dict:
    test = time_split(frame, 0.2)
    block = {
        "title": title,
        "target": target,
        "reviews": len(frame),
        "train_reviews": int((~test).sum()),
        "test_reviews": int(test.sum()),
        "default": _score(None, frame, test),
    }
    print(f"\n{title}: {len(frame)} reviews")
    print(f"  default weights test log loss {block['default']['test']['log_loss']:.4f}")
    block["race"] = race(frame, test, rounds)
    r = block["race"]
    if r.get("available"):
        print(
            f"  fitter alone: memlab {r['memlab']['seconds']:.4f} s, fsrs-rs "
            f"{r['fsrs_rs']['seconds']:.4f} s "
            f"-> {r['ratio_of_medians']:.2f}x (median round ratio "
            f"{r['median_round_ratio']:.2f}x; target <= {target}x)"
        )
        print(
            f"  test log loss memlab {r['memlab']['test']['log_loss']:.5f}, fsrs-rs "
            f"{r['fsrs_rs']['test']['log_loss']:.5f}"
        )
    else:
        print(f"  fsrs-rs not available: {r.get('error')}")
    if with_variants:
        block["defaults"] = validate_defaults(frame, test)
        block["variants"] = variants(frame, test)
    return block, test


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--sim-cards", type=int, default=9000)
    parser.add_argument("--users", type=int, default=24)
    parser.add_argument("--user-cards", type=int, default=300)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--skip-pyfsrs", action="store_true")
    parser.add_argument("--skip-many", action="store_true")
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_fit.json")
    parser.add_argument(
        "--markdown-only", action="store_true", help="rewrite the .md from the saved .json"
    )
    args = parser.parse_args(argv)
    if args.markdown_only:
        args.out.with_suffix(".md").write_text(markdown(json.loads(args.out.read_text())))
        return 0
    josh = _josh_path()
    if not josh.exists():
        print(f"josh review log not found at {josh}", file=sys.stderr)
        return 1
    previous = json.loads(args.out.read_text()) if args.out.exists() else {}
    out: dict = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_avg": os.getloadavg(),
            "engine": "numba" if _fsrs6_kernel.AVAILABLE else "python",
        },
        "reference": REFERENCE,
    }
    frame = load_reviews(josh).frame
    out["josh"], test = log_block(
        "josh review log (12,580 real reviews, 24-hour days)", frame, args.rounds, 3.0, True
    )
    if not args.skip_pyfsrs:
        out["josh"]["pyfsrs_optimizer"] = run_pyfsrs(frame, test)
    if args.skip_pyfsrs or not out["josh"]["pyfsrs_optimizer"].get("available"):
        old = previous.get("josh", {}).get("pyfsrs_optimizer") or previous.get("pyfsrs_optimizer")
        if old and old.get("weights"):
            out["josh"]["pyfsrs_optimizer"] = {
                "rescored": True,
                "weights": old["weights"],
                "seconds": old.get("seconds"),
                "rescored_from_run": old.get("rescored_from_run") or previous.get("when"),
                **_score(old["weights"], frame, test),
            }
    py = out["josh"].get("pyfsrs_optimizer", {})
    if py.get("seconds") and not py.get("rescored") and out["josh"]["race"].get("available"):
        out["josh"]["speedup_vs_pyfsrs"] = py["seconds"] / out["josh"]["race"]["memlab"]["seconds"]
        print(
            f"  py-fsrs Optimizer {py['seconds']:.1f} s: memlab "
            f"{out['josh']['speedup_vs_pyfsrs']:.0f}x faster"
        )
    sim = simulate_reviews(n_cards=args.sim_cards, reviews_per_card=10, seed=14).frame
    out["sim"], _ = log_block(
        f"simulated log (FSRS-6 default weights, {args.sim_cards} cards, seed 14)",
        sim,
        args.rounds,
        1.5,
        False,
    )
    if not args.skip_many:
        out["fit_many"] = bench_fit_many(args.users, args.user_cards, args.workers)
    out["machine"]["load_avg_end"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    args.out.with_suffix(".md").write_text(markdown(out))
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
