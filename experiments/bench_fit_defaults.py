"""Fitter defaults on data they were not tuned on: memlab's FSRS-6 fit against fsrs-rs's.

For the josh log and simulated collections (each drawn from its own FSRS-6 weights: two sets
of ten to choose the defaults, a third set of ten to check the choice), every fit sees the
first 80 % of the reviews by time and is scored on the last 20 % (states carried through all
reviews; the scored reviews are those at least a day after the card's previous one):

* fsrs-rs (``fsrs-rs-python``, ``FSRS.compute_parameters``) on the same training reviews, in
  this process;
* memlab's ``FSRS6Fitter`` with its defaults, and with each candidate setting below;
* FSRS-6's default weights, unfitted (the floor), and for a simulated log the weights it was
  drawn from (what a fit could at best recover).

memlab's candidates include fsrs-rs's own prior (its ``PARAMS_STDDEV`` scaling, divided by the
number of reviews; see ``fsrs_rs_prior``) put in place of the fitter's pull for the run.

The simulated collections stand in for other users: each draws its weights around FSRS-6's
defaults (py-fsrs 6.3.2) the way the srs-benchmark's users spread around them: every weight
times a log-normal factor ``exp(N(0, 0.4))``, the four first-review stabilities then sorted
(a harder first grade never gives a longer stability), the decay ``w20`` log-uniform in
[0.1, 0.8] (the srs-benchmark's users fit w20 well above and below the default 0.1542), all
clipped to the fsrs bounds. Sizes and habits vary too: 1,500-3,000 cards, 7-10 scheduled
reviews a card (about 10k-30k reviews with same-day relearning), desired retention 0.80-0.95,
new cards introduced over 180-720 days. Seeded (``--seed``).

The fit time ratio memlab / fsrs-rs on josh is the median of alternating rounds after a
warm-up (as ``bench_fit.py`` times it).

    python experiments/bench_fit_defaults.py            # writes results/bench_fit_defaults.*
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_fit import _josh_path, fit_fsrs_rs, fsrs_rs_items  # noqa: E402

from memlab.fit import _fsrs6_kernel  # noqa: E402
from memlab.fit import fsrs6 as fsrs6_module  # noqa: E402
from memlab.fit.data import as_frame, histories, load_reviews, time_split  # noqa: E402
from memlab.fit.fsrs6 import FSRS6Fitter, initial_stabilities, score_fsrs6  # noqa: E402
from memlab.fit.recovery import simulate_reviews  # noqa: E402
from memlab.models.fsrs6 import DEFAULT_WEIGHTS, FSRS6, LOWER_BOUNDS, UPPER_BOUNDS  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
#: Held-out log loss by which memlab may trail fsrs-rs and still count as "no worse".
TOLERANCE = 0.0005
#: Candidate settings (keyword arguments of FSRS6Fitter on top of its defaults): the fitter's
#: pull toward the default weights (``l2``) by recency weighting, the inner validation of l2;
#: and, under ``"prior": "fsrs-rs"``, fsrs-rs's prior in place of the fitter's pull (see
#: fsrs_rs_prior), its ``l2`` being fsrs-rs's ``gamma`` (1 in fsrs-rs).
CANDIDATES: dict[str, dict] = {
    **{
        f"l2={l2:g} recency={rec:g}": {"l2": l2, "recency": rec}
        for l2 in (0.0, 0.003, 0.005, 0.01)
        for rec in (0.0, 0.5)
    },
    "l2=0.01 recency=2": {"l2": 0.01, "recency": 2.0},
    "l2=auto recency=0": {"l2": "auto", "recency": 0.0},
    **{
        f"prior gamma={g:g} recency=0": {"l2": g, "recency": 0.0, "prior": "fsrs-rs"}
        for g in (0.1, 0.3, 1.0, 2.0, 3.0, 5.0, 10.0, 30.0)
    },
    **{
        f"prior gamma={g:g} recency=0.5": {"l2": g, "recency": 0.5, "prior": "fsrs-rs"}
        for g in (1.0, 3.0)
    },
    "prior gamma=1 recency=0 filter_outliers": {
        "l2": 1.0,
        "recency": 0.0,
        "filter_outliers": True,
        "prior": "fsrs-rs",
    },
}
#: FSRS6Fitter's defaults before bench_fit_defaults first chose them (kept for comparison).
PREVIOUS_DEFAULTS = "l2=0.01 recency=2"
#: fsrs-rs's prior at fsrs-rs's own strength (gamma 1), reported in the finding.
FSRS_RS_PRIOR = "prior gamma=1 recency=0"
#: Settings that cannot be a default: l2="auto" fits eight times (the 3x time budget).
NOT_ELIGIBLE = ("l2=auto recency=0",)
DEFAULT_KEYS = ("l2", "recency", "init", "filter_outliers")
#: The spread of each FSRS-6 weight across users by which fsrs-rs scales its prior
#: (``PARAMS_STDDEV`` in fsrs-rs's training code).
PARAMS_SD = np.array(
    [6.43, 9.66, 17.58, 27.85, 0.57, 0.28, 0.6, 0.12, 0.39, 0.18, 0.33]
    + [0.3, 0.09, 0.16, 0.57, 0.25, 1.03, 0.31, 0.32, 0.14, 0.27]
)


def fsrs_rs_prior(frame, train, fitter: FSRS6Fitter):
    """fsrs-rs's pull, written for FSRS6Fitter's per-review objective, as a replacement of the
    fitter's ``_penalty(w, l2)``: ``l2 * sum(((w - w_init) / PARAMS_SD) ** 2) / n``.

    fsrs-rs adds ``gamma * sum(((w - w_init) / PARAMS_STDDEV) ** 2)`` to each batch's summed
    log loss in proportion to the batch's share of the training reviews, so over an epoch the
    prior weighs as much as ``gamma`` reviews' worth of squared standard scores: it fades as
    the log grows. ``w_init`` are its starting weights (the defaults with w0..w3 fitted from
    the data, as the fitter's ``init="data"`` does); ``n`` is the fitter's (weighted) count of
    scored training reviews, the divisor of its mean log loss.
    """
    frame = as_frame(frame)
    if fitter.filter_outliers:
        train = fsrs6_module._without_outlier_cards(frame, train)[0]
    h = histories(frame, train)
    scored = h.scoreable()
    weight = np.ones(scored.shape)
    if fitter.recency:  # the fitter's recency weights (FSRS6Fitter.fit)
        pos = h.values(frame["order"].to_numpy(dtype=float), np.nan)
        span = max(float(np.nanmax(pos) - np.nanmin(pos)), 1.0)
        weight = np.exp(fitter.recency * ((pos - np.nanmin(pos)) / span - 1.0))
    n = float(np.nansum(np.where(scored, weight, 0.0)))
    center = np.array(DEFAULT_WEIGHTS)
    center[:4] = initial_stabilities(h, fitter.min_init_reviews)
    coef_unit = 1.0 / (n * PARAMS_SD**2)

    def penalty(w, l2):
        coef = l2 * coef_unit
        return float(coef @ (w - center) ** 2), 2.0 * coef * (w - center), 2.0 * coef

    return penalty


def fit_memlab(frame, train, kwargs: dict) -> FSRS6Fitter:
    """FSRS6Fitter(**kwargs) fitted; with ``"prior": "fsrs-rs"`` under :func:`fsrs_rs_prior`."""
    kwargs = dict(kwargs)
    prior = kwargs.pop("prior", None)
    fitter = FSRS6Fitter(**kwargs)
    if prior is None:
        return fitter.fit(frame, train)
    saved = fsrs6_module._penalty
    fsrs6_module._penalty = fsrs_rs_prior(frame, train, fitter)
    try:
        return fitter.fit(frame, train)
    finally:
        fsrs6_module._penalty = saved


def draw_weights(rng: np.random.Generator) -> np.ndarray:
    """One simulated user's FSRS-6 weights (module docs)."""
    w = np.array(DEFAULT_WEIGHTS) * np.exp(rng.normal(0.0, 0.4, len(DEFAULT_WEIGHTS)))
    w[:4] = np.sort(w[:4])
    w[20] = np.exp(rng.uniform(np.log(0.1), np.log(0.8)))
    return np.clip(w, LOWER_BOUNDS, UPPER_BOUNDS)


def collections(n: int, seed: int, prefix: str = "sim") -> dict:
    rng = np.random.default_rng(seed)
    out = {}
    for k in range(n):
        weights = draw_weights(rng)
        params = {
            "n_cards": int(rng.integers(1500, 3001)),
            "reviews_per_card": int(rng.integers(7, 11)),
            "desired_retention": float(rng.uniform(0.80, 0.95)),
            "start_days": int(rng.integers(180, 721)),
        }
        frame = simulate_reviews(tuple(map(float, weights)), seed=seed * 1000 + k, **params).frame
        out[f"{prefix}{k:02d}"] = {"frame": frame, "weights": weights.tolist(), "params": params}
    return out


def held_out(weights, frame, test) -> float:
    return float(score_fsrs6(FSRS6(tuple(weights)), frame, test)["log_loss"])


def evaluate(frame, settings: dict[str, dict], true_weights=None) -> dict:
    """Held-out log loss (and fit seconds) of fsrs-rs, default weights, each memlab setting and
    (for a simulated log) the weights it was drawn from."""
    test = time_split(frame, 0.2)
    items = fsrs_rs_items(frame, ~test)
    rs_weights, rs_seconds = fit_fsrs_rs(items)
    row = {
        "n_reviews": len(frame),
        "n_cards": int(frame["card_id"].nunique()),
        "n_test_scored": int(score_fsrs6(FSRS6(), frame, test)["n"]),
        "default_weights": held_out(DEFAULT_WEIGHTS, frame, test),
        "fsrs_rs": held_out(rs_weights, frame, test),
        "fsrs_rs_seconds": rs_seconds,
        "true_weights": None if true_weights is None else held_out(true_weights, frame, test),
        "memlab": {},
        "memlab_seconds": {},
    }
    for name, kwargs in settings.items():
        start = time.perf_counter()
        fitter = fit_memlab(frame, ~test, kwargs)
        row["memlab_seconds"][name] = time.perf_counter() - start
        row["memlab"][name] = held_out(fitter.weights_, frame, test)
    return row


def time_ratio(frame, rounds: int) -> dict:
    """memlab (defaults) vs fsrs-rs fit seconds on the same training reviews, alternating."""
    test = time_split(frame, 0.2)
    items = fsrs_rs_items(frame, ~test)
    FSRS6Fitter().fit(frame, ~test)
    fit_fsrs_rs(items)
    ours, theirs = [], []
    for k in range(rounds):
        order = (0, 1) if k % 2 == 0 else (1, 0)
        for which in order:
            start = time.perf_counter()
            if which == 0:
                FSRS6Fitter().fit(frame, ~test)
                ours.append(time.perf_counter() - start)
            else:
                fit_fsrs_rs(items)
                theirs.append(time.perf_counter() - start)
    return {
        "rounds": rounds,
        "memlab_seconds": statistics.median(ours),
        "fsrs_rs_seconds": statistics.median(theirs),
        "ratio_of_medians": statistics.median(ours) / statistics.median(theirs),
        "memlab_all": ours,
        "fsrs_rs_all": theirs,
    }


def summarise(logs: dict, names: list[str]) -> dict:
    """Per setting: worst excess over fsrs-rs, logs within the tolerance, mean held-out loss."""
    out = {}
    for name in names:
        excess = [row["memlab"][name] - row["fsrs_rs"] for row in logs.values()]
        out[name] = {
            "max_excess_over_fsrs_rs": max(excess),
            "logs_no_worse": sum(e <= 0 for e in excess),
            "logs_within_tolerance": sum(e <= TOLERANCE for e in excess),
            "mean_excess": float(np.mean(excess)),
            "mean_log_loss": float(np.mean([row["memlab"][name] for row in logs.values()])),
        }
    return out


def choose(summary: dict, n_logs: int) -> tuple[str, bool]:
    """Among the eligible settings, the one within the tolerance of fsrs-rs on the most logs,
    ties broken by the lower mean held-out log loss; and whether it is within it on all
    ``n_logs``."""
    eligible = [n for n in CANDIDATES if n in summary and n not in NOT_ELIGIBLE]
    best = min(
        eligible,
        key=lambda n: (-summary[n]["logs_within_tolerance"], summary[n]["mean_log_loss"]),
    )
    return best, summary[best]["logs_within_tolerance"] == n_logs


def finding(out: dict) -> str:
    """What the run says, from its own figures."""
    sel, conf, logs = out["summary"], out["summary_confirmation"], out["logs"]
    n_sel, n_conf = len(out["selection_logs"]), len(out["confirmation_logs"])
    chosen, meets = out["chosen"], out["chosen_meets"]
    d, c = sel["defaults"], sel[chosen]
    all_ok = [n for n, v in sel.items() if v["logs_within_tolerance"] == n_sel]
    short = {
        k: round(logs[k]["memlab"][chosen] - logs[k]["fsrs_rs"], 4)
        for k in out["selection_logs"]
        if logs[k]["memlab"][chosen] - logs[k]["fsrs_rs"] > TOLERANCE
    }
    josh, prev = logs["josh"], sel[PREVIOUS_DEFAULTS]
    text = [
        f"Selection logs (josh and {n_sel - 1} simulated): the fitter's defaults "
        f"(`{out['defaults']}`) are within {TOLERANCE} of fsrs-rs on "
        f"{d['logs_within_tolerance']} of {n_sel} (worst excess "
        f"{d['max_excess_over_fsrs_rs']:+.4f}, mean held-out log loss {d['mean_log_loss']:.5f}).",
        f"The previous defaults (`{PREVIOUS_DEFAULTS}`): within it on "
        f"{prev['logs_within_tolerance']} of {n_sel}, worst {prev['max_excess_over_fsrs_rs']:+.4f}"
        f", mean {prev['mean_log_loss']:.5f}; on the fresh logs "
        f"{conf[PREVIOUS_DEFAULTS]['logs_within_tolerance']} of {n_conf}, worst "
        f"{conf[PREVIOUS_DEFAULTS]['max_excess_over_fsrs_rs']:+.4f}; on josh "
        f"{josh['memlab'][PREVIOUS_DEFAULTS]:.4f}.",
        "Settings within the tolerance on every selection log: "
        + (", ".join(f"`{n}`" for n in all_ok) if all_ok else "none")
        + ".",
        f"Chosen by the rule (the eligible setting within the tolerance on the most selection "
        f"logs, ties by the lower mean): `{chosen}`, within it on "
        f"{c['logs_within_tolerance']} of {n_sel}, worst excess "
        f"{c['max_excess_over_fsrs_rs']:+.4f}, mean {c['mean_log_loss']:.5f}; so it "
        + ("meets" if meets else "does not meet")
        + " the target"
        + (f" (beyond the tolerance on {short})." if short else ".")
        + (
            " It is FSRS6Fitter's default setting."
            if out["candidates"][chosen] == out["candidates"]["defaults"]
            else " It is not FSRS6Fitter's default setting."
        ),
        f"On josh: fsrs-rs {josh['fsrs_rs']:.4f}, memlab defaults "
        f"{josh['memlab']['defaults']:.4f}, `{chosen}` {josh['memlab'][chosen]:.4f}, default "
        f"weights {josh['default_weights']:.4f}; fit time "
        f"{out['josh_time']['ratio_of_medians']:.2f}x fsrs-rs's (defaults).",
        f"Fresh collections ({n_conf}, a third seed, not used to choose): the defaults are "
        f"within the tolerance on {conf['defaults']['logs_within_tolerance']} of {n_conf} (worst "
        f"{conf['defaults']['max_excess_over_fsrs_rs']:+.4f}, mean "
        f"{conf['defaults']['mean_log_loss']:.5f}), `{chosen}` on "
        f"{conf[chosen]['logs_within_tolerance']} of {n_conf} (worst "
        f"{conf[chosen]['max_excess_over_fsrs_rs']:+.4f}, "
        f"mean {conf[chosen]['mean_log_loss']:.5f}).",
    ]
    lost = [k for k in short if logs[k]["true_weights"] is not None]
    if lost:
        text.append(
            "Held-out log loss of the weights those collections were drawn from, beside fsrs-rs "
            f"and `{chosen}`: "
            + "; ".join(
                f"{k} {logs[k]['true_weights']:.4f}, {logs[k]['fsrs_rs']:.4f}, "
                f"{logs[k]['memlab'][chosen]:.4f}"
                for k in lost
            )
            + "."
        )
    prior = FSRS_RS_PRIOR
    if prior in sel:
        sp, cp = sel[prior], conf[prior]
        text.append(
            f"fsrs-rs's prior in place of the fitter's pull, at fsrs-rs's strength (`{prior}`): "
            f"within the tolerance on {sp['logs_within_tolerance']} of {n_sel} selection logs "
            f"(worst {sp['max_excess_over_fsrs_rs']:+.4f}, mean {sp['mean_log_loss']:.5f}) and "
            f"{cp['logs_within_tolerance']} of {n_conf} fresh ones (worst "
            f"{cp['max_excess_over_fsrs_rs']:+.4f}); on josh {josh['memlab'][prior]:.4f}."
        )
    return " ".join(text)


NOTES = """\
How the defaults were chosen (three attempts). First attempt: a coarser grid (l2 from 0 to 0.1
by recency from 0 to 3, l2="auto", init="default", the outlier filter) chosen on josh and the
first ten simulated collections only; its pick (no penalty, no recency weighting) then lost
clearly to fsrs-rs on one of ten further collections, so a choice made on eleven logs did not
hold. Second attempt: the grid refined around the better settings, early stopping and the
L-BFGS-B solver added (neither helped), the choice made on all 21 logs and checked on ten fresh
ones; it chose the fitter's pull at `l2=0.005 recency=0`, beyond the tolerance on simA00 only.
Third attempt (this run): fsrs-rs's own prior in place of the fitter's pull, as the diagnosis of
simA00 suggested (fsrs-rs pulls each weight toward its starting value in units of that weight's
spread across users, the sum divided by the number of reviews, where the fitter uses one
strength for all weights scaled by their bounds), at strengths 0.1 to 30 times fsrs-rs's, with
recency 0.5 and with the outlier filter, beside the fitter's pull in the same run and chosen by
the same rule. The tie-break (equal counts of logs within the tolerance) is the lower mean
held-out log loss.

What the figures say:

* fsrs-rs's prior does not close the gap. At recency 0 it is beyond the tolerance on josh at
  every strength, and simA00 is lost by every prior setting. At fsrs-rs's strength with recency
  0.5 it is within the tolerance on josh and on 20 of 21 selection logs, as the fitter's pull
  is, at a higher mean held-out log loss, so the rule keeps the fitter's pull. On the fresh set
  the prior at strengths 1 to 5 is within the tolerance on all ten and the fitter's pull on
  nine: the one it misses (fresh07) is missed by less than 0.0001, the same order as the
  prior's margin there, so the fresh set does not separate the two methods either. The fitter
  keeps its pull; the prior stays in this script (``fsrs_rs_prior``) as the measured
  alternative.
* simA00 is where the fit's error is largest, not where it fails to optimise: the weights it was
  drawn from score well below both fits (see the finding), and on most simulated logs both
  fits score above their generating weights. Which fit is closer differs by log: fsrs-rs loses
  to memlab by more on simB02, simB07, fresh01 and fresh06 than memlab loses on simA00. "No
  worse than fsrs-rs on every log" asks that every log's estimation error favour memlab; no
  setting or prior tried here does that, and none is within the tolerance on every selection
  log.
* Recency weighting helps only the real log: josh is best with it, the simulated learners (whose
  weights do not change over time) gain nothing from it on average and lose with strong
  weighting, and issue 41 reports a held-out real log of 93k reviews that scored worse with
  weighting on than off. The defaults weigh all reviews the same.
* Within the top settings the differences are of the order of the tolerance itself: the choice
  between a pull of 0.005 and 0.01, a recency of 0 and 0.5, or the fitter's pull and fsrs-rs's
  prior, is not resolved by these logs.
"""


def markdown(out: dict) -> str:
    logs = out["logs"]
    lines = [
        "# FSRS6Fitter defaults on unseen data (bench_fit_defaults)",
        "",
        f"Run {out['when']} on {out['machine']['cpus']} cores (load "
        f"{'/'.join(f'{v:.1f}' for v in out['machine']['load_avg'])}), engine "
        f"{out['machine']['engine']}, fsrs-rs-python {out['machine']['fsrs_rs_python']}; "
        f"`python experiments/bench_fit_defaults.py --seed {out['seed']}`.",
        "",
        "Every fit sees the first 80 % of a log's reviews by time; the figures are the log loss "
        "on the last 20 % (lower is better). fsrs-rs is fitted on the same training reviews in "
        f'the same process. Tolerance for "no worse than fsrs-rs": {TOLERANCE}. The simulated '
        "collections and the candidate settings are described in the script's docstring.",
        "",
        f"FSRS6Fitter defaults in this run: `{out['defaults']}`.",
        "",
        "## Held-out log loss per log",
        "",
        "Every setting's figure per log is in the .json; here the weights a simulated log was "
        "drawn from, fsrs-rs, the defaults, the "
        f"previous defaults (`{PREVIOUS_DEFAULTS}`) and the best memlab setting of each log.",
        "",
        "| log | reviews | cards | default weights | generating weights | fsrs-rs | "
        "memlab defaults | previous defaults | best memlab setting |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for log, row in logs.items():
        best = min(row["memlab"], key=row["memlab"].__getitem__)
        lines.append(
            f"| {log} | {row['n_reviews']:,} | {row['n_cards']:,} | {row['default_weights']:.4f} "
            f"| {'-' if row['true_weights'] is None else format(row['true_weights'], '.4f')} "
            f"| {row['fsrs_rs']:.4f} | {row['memlab']['defaults']:.4f} | "
            f"{row['memlab'][PREVIOUS_DEFAULTS]:.4f} | {best}: {row['memlab'][best]:.4f} |"
        )
    for title, key, group in (
        ("selection logs (josh and two simulated sets)", "summary", "selection_logs"),
        ("fresh simulated logs (not used to choose)", "summary_confirmation", "confirmation_logs"),
    ):
        lines += [
            "",
            f"## Each setting against fsrs-rs: {len(out[group])} {title}",
            "",
            "| setting | worst excess over fsrs-rs | logs no worse | logs within "
            f"{TOLERANCE} | mean excess | mean log loss |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for name, s in out[key].items():
            lines.append(
                f"| {name} | {s['max_excess_over_fsrs_rs']:+.4f} | {s['logs_no_worse']} | "
                f"{s['logs_within_tolerance']} | {s['mean_excess']:+.5f} | "
                f"{s['mean_log_loss']:.5f} |"
            )
    t = out["josh_time"]
    lines += [
        "",
        "## Fit time on josh",
        "",
        f"memlab (defaults) {t['memlab_seconds']:.4f} s, fsrs-rs {t['fsrs_rs_seconds']:.4f} s: "
        f"ratio {t['ratio_of_medians']:.2f} (median of {t['rounds']} alternating rounds; "
        "target within 3).",
        "",
        "## Simulated collections",
        "",
        "| log | cards | reviews a card | desired retention | days of new cards | w20 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for log, sim in out["simulated"].items():
        p = sim["params"]
        lines.append(
            f"| {log} | {p['n_cards']:,} | {p['reviews_per_card']} | "
            f"{p['desired_retention']:.3f} | {p['start_days']} | {sim['weights'][20]:.3f} |"
        )
    lines += ["", "## Finding", "", out["finding"], "", "## Notes", "", NOTES]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--collections", type=int, default=10, help="per selection seed (two)")
    parser.add_argument("--confirm", type=int, default=10, help="fresh logs not used to choose")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_fit_defaults.json")
    parser.add_argument("--only", nargs="*", help="candidate names to run (default: all)")
    parser.add_argument(
        "--markdown-only", action="store_true", help="rewrite the .md from the saved .json"
    )
    args = parser.parse_args(argv)
    if args.markdown_only:  # the choice and the finding recomputed from the saved figures
        out = json.loads(args.out.read_text())
        out["chosen"], out["chosen_meets"] = choose(out["summary"], len(out["selection_logs"]))
        out["finding"] = finding(out)
        args.out.write_text(json.dumps(out, indent=2) + "\n")
        args.out.with_suffix(".md").write_text(markdown(out))
        return 0
    from importlib.metadata import version

    defaults = {k: getattr(FSRS6Fitter(), k) for k in DEFAULT_KEYS}
    candidates = {k: v for k, v in CANDIDATES.items() if not args.only or k in args.only}
    settings = {"defaults": {}, **candidates}
    out: dict = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "seed": args.seed,
        "tolerance": TOLERANCE,
        "defaults": defaults,
        "candidates": {k: {**defaults, **v} for k, v in settings.items()},
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_avg": os.getloadavg(),
            "engine": "numba" if _fsrs6_kernel.AVAILABLE else "numpy",
            "fsrs_rs_python": version("fsrs-rs-python"),
        },
        "logs": {},
    }
    start = time.perf_counter()
    josh = load_reviews(_josh_path()).frame
    out["josh_time"] = time_ratio(josh, args.rounds)
    print(f"josh fit time ratio {out['josh_time']['ratio_of_medians']:.2f}", flush=True)
    sims = collections(args.collections, args.seed, "simA")
    sims.update(collections(args.collections, args.seed + 1, "simB"))
    fresh = collections(args.confirm, args.seed + 2, "fresh")
    out["selection_logs"] = ["josh", *sims]
    out["confirmation_logs"] = list(fresh)
    sims.update(fresh)
    out["simulated"] = {
        k: {"weights": v["weights"], "params": v["params"]} for k, v in sims.items()
    }
    runs = [("josh", josh, None)] + [(k, v["frame"], v["weights"]) for k, v in sims.items()]
    for name, frame, true_weights in runs:
        row = out["logs"][name] = evaluate(frame, settings, true_weights)
        best = min(row["memlab"], key=row["memlab"].__getitem__)
        print(
            f"{name}: {row['n_reviews']} reviews, default weights {row['default_weights']:.4f}, "
            f"fsrs-rs {row['fsrs_rs']:.4f}, memlab defaults {row['memlab']['defaults']:.4f}, "
            f"best {best} {row['memlab'][best]:.4f} ({time.perf_counter() - start:.0f} s)",
            flush=True,
        )
    groups = (("summary", "selection_logs"), ("summary_confirmation", "confirmation_logs"))
    for key, group in groups:
        out[key] = summarise({k: out["logs"][k] for k in out[group]}, list(settings))
    out["chosen"], out["chosen_meets"] = choose(out["summary"], len(out["selection_logs"]))
    out["finding"] = finding(out)
    out["seconds"] = time.perf_counter() - start
    out["machine"]["load_avg_end"] = os.getloadavg()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    args.out.with_suffix(".md").write_text(markdown(out))
    for name, s in out["summary"].items():
        c = out["summary_confirmation"][name]
        print(
            f"  {name:22s} selection: worst {s['max_excess_over_fsrs_rs']:+.4f}, "
            f"within {s['logs_within_tolerance']}, mean {s['mean_log_loss']:.5f}; "
            f"confirmation: worst {c['max_excess_over_fsrs_rs']:+.4f}, "
            f"within {c['logs_within_tolerance']}, mean {c['mean_log_loss']:.5f}"
        )
    print(out["finding"])
    print(f"wrote {args.out} in {out['seconds']:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
