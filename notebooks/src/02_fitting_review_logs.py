# %% [markdown]
# # 02 · Fitting FSRS-6, heat and exponential to a real review log
#
# 12,580 real Anki reviews of one learner (1,205 cards; the py-fsrs project's `josh` log). Each law is
# fitted on the first 80 % of the reviews by time and scored on the last 20 %, predicting whether each
# review is recalled (grade ≥ 2) from the time since the card's previous review:
#
# * **FSRS-6**: all 21 weights by L-BFGS-B with exact gradients (`memlab.fit.FSRS6Fitter`), states
#   carried through every card's history;
# * **heat**: Ebbinghaus's `k`, `c`, `u` with recall = heat/100 (`HeatFitter`);
# * **exponential**: `R = exp(-t/S)` with `S = S0 + gain · prior successes` (MemoryBank's rule, `ExponentialFitter`).
#
# Metrics are the srs-benchmark's: log loss, RMSE over bins, AUC.

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from memlab.datasets import dataset_path
from memlab.fit import load_reviews
from memlab.fit.curves import evaluate_models
from memlab.fit.metrics import calibration_table
from memlab.fit.plotting import plot_calibration
from memlab.models.curves import ExponentialCurve, FSRS6Curve, HeatCurve, curve_table
from memlab.models.heat import HEAT_PRESETS
from memlab.plot import plot_curves
from memlab.progress import set_progress

set_progress(False)
pd.set_option("display.width", 140)
%matplotlib inline
%load_ext memlab

# %%
# the whole log ships with memlab (datasets/reviews, MIT); the shared folder's copy is identical
LOG = dataset_path("josh_reviews", source="shipped")
print("review log:", LOG.name)
data = load_reviews(LOG)
data

# %%
frame = data.frame
per_card = frame.groupby("card_id").size()
print(
    f"{len(frame)} reviews of {frame['card_id'].nunique()} cards, "
    f"{per_card.median():.0f} reviews per card (median), "
    f"from {frame['time'].min():%Y-%m-%d} to {frame['time'].max():%Y-%m-%d}"
)
print("grades:", frame["grade"].value_counts().sort_index().to_dict())
later = frame["elapsed_days"].dropna()
print(
    "days since the previous review: "
    + ", ".join(f"{q:.0%} ≤ {later.quantile(q):g}" for q in (0.25, 0.5, 0.75, 0.95))
)

# %% [markdown]
# ## Fit on the first 80 %, score the last 20 %

# %%
evaluation = evaluate_models(data, holdout=0.2)
table = evaluation.table()
table.round(3)

# %% [markdown]
# Side by side with the reference figures for the same split (held-out log loss), as measured in
# `experiments/results/bench_fit.md` (fsrs-rs and memlab in one run; the project's design gives
# fsrs-rs 0.4497–0.4504): default weights 0.4515, fsrs-rs (Rust) 0.4504, py-fsrs's torch optimizer
# 0.4550.

# %%
test = table.xs("test", level="split")
reference = pd.Series(
    {"fsrs6_default": 0.4515, "fsrs6 (fsrs-rs)": 0.4504, "fsrs6 (py-fsrs optimizer)": 0.4550}
)
side = pd.DataFrame({"test log loss": pd.concat([test["log_loss"], reference])})
side["source"] = ["memlab"] * len(test) + ["reference"] * len(reference)
side.round(3)

# %%
fsrs = evaluation.results["fsrs6"]
weights = pd.DataFrame(
    {
        "default": evaluation.results["fsrs6_default"].params["weights"],
        "fitted": fsrs.params["weights"],
    },
    index=[f"w{i}" for i in range(21)],
)
weights["change"] = weights["fitted"] - weights["default"]
weights.round(3)

# %%
heat_params = evaluation.results["heat"].params
exp_params = evaluation.results["exponential"].params
# The heat fit is ill-conditioned: k and u trade off along a ridge (huge k, tiny u), so their
# digits move with numpy/scipy builds. The curve they draw is well determined: report that.
probe = [1, 7, 30, 90, 365]
heat_curve = HeatCurve(**heat_params)
ridge = heat_params["k"] > 1e3 and heat_params["u_minutes"] < 1e-2
print(
    "heat fitted: ill-conditioned, "
    + ("k >> 1 and u << 1 minute along a ridge" if ridge else "see the parameters")
    + " (Ebbinghaus: k = 1.84, c = 1.25, u = 1 min); the curve it draws is well determined:"
)
print(
    "  heat/100 at "
    + ", ".join(
        f"{d} d: {v:.2f}"
        for d, v in zip(probe, curve_table(probe, {"h": heat_curve})["h"], strict=True)
    )
)
print("exponential fitted: " + ", ".join(f"{k} = {v:.3g}" for k, v in exp_params.items()))

# %% [markdown]
# ## What the fitted laws say
# Recall after each delay for a card reviewed once and recalled (FSRS-6: its fitted initial stability
# for grade Good; exponential: one prior success), and for heat.

# %%
w = fsrs.params["weights"]
s_good = w[2]
fitted_curves = {
    f"fsrs6 fitted (S={s_good:.2f}d)": FSRS6Curve(s_good, tuple(w)),
    "heat fitted": HeatCurve(**heat_params),
    "exponential fitted": ExponentialCurve(
        exp_params["initial_strength"] + exp_params["strength_gain"]
    ),
    "heat (Ebbinghaus 1885)": HeatCurve(**HEAT_PRESETS["ebbinghaus1885"]),
}
days = np.geomspace(1 / 1440, 365, 300)
fitted = curve_table(days, fitted_curves)
fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.5), layout="constrained")
plot_curves(fitted, log_x=True, ax=left)
left.set_title("fitted forgetting curves (log time)")
plot_calibration(evaluation, ax=right, split="test")
right.set_title("calibration on the held-out reviews")
curve_table([1, 7, 30, 90], fitted_curves).round(3)

# %%
y, predictions = evaluation.outcomes("test")
print(f"held-out reviews scored: {len(y)}, observed recall {y.mean():.3f}")
for name, p in predictions.items():
    cal = calibration_table(y, p, bins=10)
    cal = cal[cal["n"] >= 5]
    gap = np.average(np.abs(cal["observed"] - cal["predicted"]), weights=cal["n"])
    print(
        f"  {name:<14} mean predicted {np.mean(p):.3f}, "
        f"mean |observed - predicted| over bins {gap:.3f}"
    )

# %% [markdown]
# Calibration of the fitted FSRS-6 on the held-out reviews, bin by bin (equal-width bins of the
# predicted recall, empty bins left out): `n` is the number of reviews in each bin, so the few
# reviews predicted below 0.5 say little.

# %%
calibration_table(y, predictions["fsrs6"], bins=10).round(3)

# %% [markdown]
# ## What this shows
# * Fitted FSRS-6 improves the held-out log loss only a little over its default weights (which were
#   themselves fitted on millions of reviews), in line with fsrs-rs and better than py-fsrs's optimizer;
#   it gains much more on the training reviews, and its held-out calibration is a bit worse than the
#   defaults': with 4k training reviews, 21 weights overfit somewhat (`FSRS6Fitter(l2=...)` pulls
#   toward the defaults).
# * Heat and exponential trail on every metric, and their held-out AUC is *below 0.5*. In a scheduled
#   log, long intervals go to cards the learner knows well, so a law of elapsed time alone ranks the
#   held-out reviews backwards; FSRS-6's per-card stability is what turns time into a useful predictor.
# * The fitted heat curve is degenerate (huge `k`, tiny `u`): with recall = heat/100 the best the
#   three parameters can do is a nearly flat line near the mean recall. Ebbinghaus's savings curve
#   describes relearning nonsense syllables, not recall of reviewed cards.

# %% [markdown]
# ## References
#
# * **FSRS**: J. Ye, J. Su and Y. Cao, *A Stochastic Shortest Path Algorithm for Optimizing Spaced Repetition Scheduling*, KDD 2022; FSRS-6 weights and bounds from py-fsrs 6.3.2 (https://github.com/open-spaced-repetition/py-fsrs).
# * **srs-benchmark** (https://github.com/open-spaced-repetition/srs-benchmark): 10k users, 350 M reviews; FSRS-6 log loss 0.346, RMSE(bins) 0.065, AUC 0.703. Its RMSE(bins) binning is the one `memlab.fit.metrics` uses.
# * **Ebbinghaus**: H. Ebbinghaus, *Über das Gedächtnis*, Leipzig: Duncker & Humblot, 1885 (trans. *Memory: A Contribution to Experimental Psychology*, 1913); savings fitted as `100k / ((log10 t)^c + k)` with k = 1.84, c = 1.25, t in minutes.
# * **MemoryBank**: W. Zhong, L. Guo, Q. Gao, H. Ye and Y. Wang, *MemoryBank: Enhancing Large Language Models with Long-Term Memory*, AAAI 2024 (arXiv:2305.10250): the exponential rule `R = exp(-t/S)`, S growing with each recall.
