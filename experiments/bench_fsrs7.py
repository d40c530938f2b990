"""FSRS-7 (default and fitted weights) beside FSRS-6 (memlab's fitter, default weights) and
fsrs-rs on the josh review log, all measured in one run, with the srs-benchmark's published
figures quoted beside (theirs, on their 10k users).

Two protocols, both memlab's shared code (:func:`memlab.fit.evaluate_fsrs6`, which takes any
fitter whose model has the FSRS forward pass):

``memlab``
    fit on the first 80 % of reviews by time, score the scoreable reviews of the last 20 %
    (24-hour days, as bench_fit). Also FSRS-7 on fractional days (the log loaded with
    ``convention="continuous"``, the time unit FSRS-7 was designed for) and FSRS-6 given the same
    fractional times, their predictions scored on the very same test rows as the others.
``srs-benchmark``
    Anki days, the outlier filter, 5 time-series folds pooled (:mod:`memlab.fit.protocol`).

fsrs-rs is ``fsrs-rs-python``'s ``compute_parameters`` on the same training reviews (called as in
``bench_fit.py``); its weights are scored by memlab's FSRS-6. A benchmark-only package, not a
memlab dependency.

Run: ``python experiments/bench_fsrs7.py``. Writes experiments/results/bench_fsrs7.json and .md.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_fit import _josh_path, fit_fsrs_rs, fsrs_rs_items  # noqa: E402

from memlab.fit import FSRS6Fitter, FSRS7Fitter, evaluate_fsrs6, load_reviews  # noqa: E402
from memlab.fit.fsrs6 import predict_fsrs6, score_fsrs6  # noqa: E402
from memlab.fit.metrics import score_rows  # noqa: E402
from memlab.models.fsrs6 import DEFAULT_WEIGHTS as FSRS6_DEFAULTS  # noqa: E402
from memlab.models.fsrs6 import FSRS6  # noqa: E402
from memlab.models.fsrs7 import FSRS7  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "experiments" / "results"
#: The srs-benchmark's newest published table (10k users, without same-day reviews), theirs.
PUBLISHED = {
    "source": "srs-benchmark README, 10k users, without same-day reviews (their figures)",
    "FSRS-7": {"log_loss": 0.3401, "rmse_bins": 0.0634, "auc": 0.717},
    "fsrs-rs": {"log_loss": 0.3443},
    "FSRS-6": {"log_loss": 0.3460, "rmse_bins": 0.0653, "auc": 0.703},
    "FSRS-6 default weights": {"log_loss": 0.3664},
}


class DefaultFSRS7:
    """A 'fitter' that keeps FSRS-7's default weights (for the protocol's fold loop)."""

    def __init__(self) -> None:  # the protocol clones fitters by their __init__ arguments
        pass

    def fit(self, frame, train):
        self.model_ = FSRS7()
        return self


class FsrsRs:
    """fsrs-rs's fit of the training reviews, as a fitter for the protocol's fold loop."""

    def __init__(self) -> None:
        pass

    def fit(self, frame, train):
        weights, self.seconds_ = fit_fsrs_rs(fsrs_rs_items(frame, train))
        self.model_ = FSRS6(weights)
        return self


def timed(fitter, frame, train):
    start = time.perf_counter()
    fitter.fit(frame, train)
    return fitter, time.perf_counter() - start


def memlab_protocol(data, continuous) -> dict:
    frame = data.frame
    test = data.split(0.2)

    def both(model, seconds=None, **extra) -> dict:
        out = {"train": score_fsrs6(model, frame, ~test), "test": score_fsrs6(model, frame, test)}
        return {**out, "fit_seconds": seconds, **extra} if seconds is not None else out

    rows = {"FSRS-7 default": both(FSRS7()), "FSRS-6 default": both(FSRS6())}
    f7, s7 = timed(FSRS7Fitter(), frame, ~test)
    rows["FSRS-7 fitted"] = both(f7.model_, s7, n_iter=f7.n_iter_, weights=list(f7.weights_))
    # fractional days: fitted and predicted on the continuous log, scored on the same test rows
    cont = continuous.frame
    fc, sc = timed(FSRS7Fitter(), cont, ~test)
    rows["FSRS-7 fitted, fractional days"] = {
        "train": score_rows(frame, fc.predict(cont), ~test),
        "test": score_rows(frame, fc.predict(cont), test),
        "fit_seconds": sc,
        "n_iter": fc.n_iter_,
        "weights": list(fc.weights_),
    }
    rows["FSRS-7 default, fractional days"] = {
        "test": score_rows(frame, predict_fsrs6(FSRS7(), cont), test)
    }
    f6, s6 = timed(FSRS6Fitter(), frame, ~test)
    rows["FSRS-6 fitted"] = both(f6.model_, s6, weights=list(f6.weights_))
    f6c, s6c = timed(FSRS6Fitter(), cont, ~test)  # FSRS-6 given the same fractional times
    rows["FSRS-6 fitted, fractional days"] = {
        "train": score_rows(frame, f6c.predict(cont), ~test),
        "test": score_rows(frame, f6c.predict(cont), test),
        "fit_seconds": s6c,
        "weights": list(f6c.weights_),
    }
    try:
        rs = FsrsRs().fit(frame, ~test)  # timed: compute_parameters only, as in bench_fit
        rows["fsrs-rs"] = both(rs.model_, rs.seconds_, weights=list(rs.model_.weights))
    except ImportError as error:
        rows["fsrs-rs"] = {"available": False, "error": f"{type(error).__name__}: {error}"}
    return rows


def benchmark_protocol(data) -> dict:
    rows = {}
    for name, kwargs in (
        ("FSRS-7 default", {"fitter": DefaultFSRS7()}),
        ("FSRS-7 fitted", {"fitter": FSRS7Fitter()}),
        ("FSRS-6 default", {"weights": FSRS6_DEFAULTS}),
        ("FSRS-6 fitted", {"fitter": FSRS6Fitter()}),
        ("fsrs-rs", {"fitter": FsrsRs()}),
    ):
        start = time.perf_counter()
        try:
            result = evaluate_fsrs6(data, "srs-benchmark", **kwargs)
        except ImportError as error:
            rows[name] = {"available": False, "error": f"{type(error).__name__}: {error}"}
            continue
        rows[name] = {"test": result.metrics, "seconds": time.perf_counter() - start,
                      "folds": [f["test"] for f in result.folds]}  # fmt: skip
    return rows


def verdict(rows: dict) -> str:
    """Which of fitted FSRS-7 and fitted FSRS-6 has the lower held-out log loss, on the same
    input (whole days; and fractional days where both were run)."""
    scored = {k: v["test"]["log_loss"] for k, v in rows.items() if "test" in v}
    parts = []
    for suffix, label in (("", "same whole days"), (", fractional days", "same fractional days")):
        a, b = scored.get("FSRS-7 fitted" + suffix), scored.get("FSRS-6 fitted" + suffix)
        if a is not None and b is not None:
            winner = "FSRS-6 wins" if b < a else "FSRS-7 wins"
            parts.append(f"{label}: {winner} (fitted FSRS-7 {a:.4f}, fitted FSRS-6 {b:.4f})")
    best = min(scored, key=scored.__getitem__)
    return "; ".join(parts) + f". Lowest held-out log loss: {best}, {scored[best]:.4f}."


def markdown(out: dict) -> str:
    lines = [
        "# FSRS-7 beside FSRS-6 and fsrs-rs on the josh review log",
        "",
        f"{out['created']} · {out['machine']} · {out['reviews']} reviews, {out['cards']} cards. "
        "Generated by `experiments/bench_fsrs7.py`; every row below measured in this run.",
        "",
    ]
    for key, title in (
        ("memlab", "memlab protocol: first 80 % of reviews by time train, last 20 % test "
                   "(24-hour days)"),
        ("srs-benchmark", "srs-benchmark protocol: Anki days, outlier filter, 5 time-series "
                          "folds pooled"),
    ):  # fmt: skip
        rows = out["protocols"][key]
        lines += [f"## {title}", "", out["verdicts"][key], "",
                  "| model | log loss | RMSE(bins) | AUC | n | fit s |",
                  "| --- | ---: | ---: | ---: | ---: | ---: |"]  # fmt: skip
        for name, row in rows.items():
            if "test" not in row:
                lines.append(f"| {name} | not run: {row.get('error')} | | | | |")
                continue
            t = row["test"]
            seconds = row.get("fit_seconds", row.get("seconds"))
            secs = "" if seconds is None else f"{seconds:.2f}"
            lines.append(
                f"| {name} | {t['log_loss']:.4f} | {t['rmse_bins']:.4f} | {t['auc']:.4f} "
                f"| {t['n']} | {secs} |"
            )
        lines.append("")
    pub = out["published"]
    lines += [f"## Published, not measured here: {pub['source']}", "",
              "| model | log loss | RMSE(bins) | AUC |",
              "| --- | ---: | ---: | ---: |"]  # fmt: skip
    for name, row in pub.items():
        if name != "source":
            lines.append(
                f"| {name} (theirs) | {row['log_loss']} | {row.get('rmse_bins', '')} "
                f"| {row.get('auc', '')} |"
            )
    lines += [
        "",
        "Notes: FSRS-7 default weights were trained by the srs-benchmark on fractional days with "
        "same-day reviews; under 24-hour whole days they are miscalibrated. The srs-benchmark "
        "protocol runs FSRS-7 on Anki days here (memlab's protocol code), not on the fractional "
        "times their FSRS-7 row used. fsrs-rs's fit time is its compute_parameters call "
        "alone (one run, no warm-up; bench_fit races the two properly). FSRS7Fitter's gradient "
        "is by central differences (69 weight vectors per evaluation, one batched pass), hence "
        "its fit time; fit times depend on the load of a shared machine.",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    path = _josh_path()
    if not path.exists():
        print(f"josh review log not found at {path}", file=sys.stderr)
        return 1
    data = load_reviews(path)
    continuous = load_reviews(path, convention="continuous")
    protocols = {
        "memlab": memlab_protocol(data, continuous),
        "srs-benchmark": benchmark_protocol(data),
    }
    out = {
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.machine()} {platform.python_version()}",
        "log": path.name,
        "reviews": len(data.frame),
        "cards": int(data.frame["card_id"].nunique()),
        "protocols": protocols,
        "verdicts": {k: verdict(v) for k, v in protocols.items()},
        "published": PUBLISHED,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "bench_fsrs7.json").write_text(json.dumps(out, indent=2) + "\n")
    (RESULTS / "bench_fsrs7.md").write_text(markdown(out))
    print(markdown(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
