# %% [markdown]
# # 05 · Simulating forgetting policies
#
# Which law should decide what an agent's memory forgets? `memlab.sim` generates a seeded workload
# of an agent's memory traffic — new facts, paraphrases, corrections, queries with Zipf popularity,
# recency, topic drift and bursts, importance flags — and replays it against a store that keeps at
# most a fixed number of memories. Each policy forgets by its own law: FSRS-6 retention, heat risk,
# exponential retention, memlab's default keep score (`memlab.keep`: the posterior need of each
# memory, from its content and its uses), least-recently-used (the simplest honest baseline), or
# nothing (unbounded, the reference).
#
# Small and seeded: 60 days, 5 seeds.

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from memlab.gate import Gate
from memlab.models import FSRS6
from memlab.progress import set_progress
from memlab.sim import Policy, Workload, WorkloadConfig, run_sweep, simulate, t_interval

set_progress(False)
pd.set_option("display.width", 140)
%matplotlib inline
%load_ext memlab

# %% [markdown]
# ## A workload

# %%
config = WorkloadConfig(
    seed=0,
    n_days=60,
    facts_per_day=20.0,
    queries_per_day=100.0,
    corrections_per_day=4.0,
    paraphrases_per_day=8.0,
)
workload = Workload.generate(config)
events = workload.events
print(f"{len(events)} events over {config.n_days} days, {workload.n_facts} facts")
print(
    f"settings: recency_mix {config.recency_mix}, recency_days {config.recency_days:g}, "
    f"paraphrase_similarity {config.paraphrase_similarity}, near_duplicate_share "
    f"{config.near_duplicate_share}, correction_similarity {config.correction_similarity}"
)
events["kind"].value_counts()

# %%
events[events["kind"] != "query"][["day", "kind", "fact_id", "version", "text", "similarity"]].head(
    8
).round(3)

# %%
queries = events[events["kind"] == "query"]
popularity = queries["fact_id"].value_counts()
share_top = popularity.head(int(0.1 * workload.n_facts)).sum() / len(queries)
print(
    f"{len(queries)} queries; the 10 % most asked-about facts get {share_top:.1%} of them; "
    f"{queries['burst'].mean():.1%} of queries come in bursts"
)

# %% [markdown]
# ## One policy, one run
# FSRS-6 keeping at most 300 memories (importance ≥ 0.9 always kept); `k = 5`.

# %%
result = simulate(workload, Policy("fsrs6", max_memories=300))
result

# %% [markdown]
# ## Policies side by side, over seeds
# The same budget (300 memories) for every law, 5 workload seeds. Rates are shares in [0, 1], so
# their 95 % intervals are percentile bootstraps over the seeds (they cannot leave [0, 1]; with 5
# seeds they are rough); the store size gets a Student-t interval.

# %%
laws = ("fsrs6", "heat", "exponential", "memlab")
policies = [Policy(m, max_memories=300, name=m) for m in (*laws, "lru")]
policies.append(Policy("none", name="none (unbounded)"))
sweep = run_sweep(policies, seeds=range(5), base=config, progress=False)
metrics = ["hit_rate", "correct_rate", "stale_rate", "miss_rate", "mean_store_size"]


def rate_interval(values: np.ndarray, n_boot: int = 10_000) -> tuple[float, float, float]:
    """Mean and 95 % percentile-bootstrap interval over seeds (seeded; stays inside [0, 1])."""
    values = np.asarray(values, dtype=float)
    draws = np.random.default_rng(20261130).choice(values, size=(n_boot, len(values)))
    low, high = np.percentile(draws.mean(axis=1), [2.5, 97.5])
    return float(values.mean()), float(low), float(high)


def with_ci(summary: pd.DataFrame) -> pd.DataFrame:
    """Means over seeds with 95 % intervals: bootstrap for rates, Student-t for the store size."""
    out = {}
    for policy, runs in summary.groupby("policy", sort=False):
        row = {}
        for m in metrics:
            if m == "mean_store_size":
                mean, low, high = t_interval(runs[m].to_numpy())
                row[m] = f"{mean:.0f} [{low:.0f}, {high:.0f}]"
            else:
                mean, low, high = rate_interval(runs[m].to_numpy())
                row[m] = f"{mean:.3f} [{low:.3f}, {high:.3f}]"
        out[policy] = row
    return pd.DataFrame.from_dict(out, orient="index").rename_axis("policy")


print(f"{sweep.summary['seed'].nunique()} seeds per policy; rates: mean [95 % bootstrap interval]")
with_ci(sweep.summary)

# %%
budgeted = sweep.summary[sweep.summary["policy"] != "none (unbounded)"]
wide = budgeted.pivot(index="seed", columns="policy", values="hit_rate")
print("paired difference of hit@5 against LRU on the same workloads, mean [95 % t-interval]:")
forest = {}
for p in laws:
    forest[p] = t_interval((wide[p] - wide["lru"]).to_numpy())
    m, lo, hi = forest[p]
    print(f"  {p:<12} {m:+.3f} [{lo:+.3f}, {hi:+.3f}]")
fig, ax = plt.subplots(figsize=(6, 2.8), layout="constrained")
names = list(forest)
means = np.array([forest[p][0] for p in names])
err = np.array([[forest[p][0] - forest[p][1], forest[p][2] - forest[p][0]] for p in names]).T
ax.errorbar(means, np.arange(len(names)), xerr=err, fmt="o", capsize=4)
ax.axvline(0, color="grey", lw=0.8, ls="--")
ax.set_yticks(np.arange(len(names)), names)
ax.invert_yaxis()
ax.set(xlabel="hit@5 minus LRU's (paired by seed, 95 % CI)", title="Each policy against LRU")
print("forest plot rows:", [(p, round(float(m), 3)) for p, m in zip(names, means, strict=True)])
side = {
    p: "above" if lo > 0 else "below" if hi < 0 else "level with"
    for p, (_, lo, hi) in forest.items()
}
for verdict in ("above", "level with", "below"):
    sided = ", ".join(p for p in names if side[p] == verdict) or "none"
    print(f"  {verdict} LRU (interval): {sided}")

# %%
fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4), layout="constrained")
daily = sweep.daily.groupby(["policy", "day"])["hit_rate"].mean().unstack(0)
daily.rolling(7, min_periods=1).mean().plot(ax=ax1)
ax1.set(xlabel="day", ylabel="hit@5 (7-day mean over seeds)", title="Hit rate over time")
order = list(dict.fromkeys(sweep.summary["policy"]))
x = np.arange(len(order))
for j, (m, label) in enumerate([("hit_rate", "hit@5"), ("stale_rate", "stale answers")]):
    ci = np.array(
        [rate_interval(sweep.summary.loc[sweep.summary["policy"] == p, m]) for p in order]
    )
    err = np.vstack([ci[:, 0] - ci[:, 1], ci[:, 2] - ci[:, 0]])
    ax2.bar(x + (j - 0.5) * 0.4, ci[:, 0], 0.4, yerr=err, capsize=3, label=label)
ax2.set_xticks(x, order, rotation=20)
ax2.set(ylabel="rate (95 % bootstrap CI over seeds)", title="At a budget of 300 memories")
ax2.legend()
last_week = daily.tail(7).mean()
print("hit@5 over the last week (mean over seeds):", last_week.round(3).to_dict())

# %% [markdown]
# Under this budget the store holds less than half of what the unbounded store does, and every law
# loses a fifth to a quarter of the hits (FSRS-6 a little more: 0.736 against 0.995); among the laws
# the differences are a few points, and FSRS-6 is last. memlab's default keep score is the only
# policy above LRU on average, by a margin these 5 seeds barely resolve (the 20-seed, 90-day run of
# `experiments/results/sim_policies.md`: +0.013 [+0.009, +0.018] hit@5 over LRU); where each law
# stands against LRU is printed above the plot. The exponential's hit@5 stays close to LRU's, but it
# answers with stale values far more often than any other policy (its stale rate in the table). A
# likely reason for FSRS-6's place: FSRS-6 forgets by retention, and a new memory (stability ≈ 2.3
# days, printed below) loses retention faster than an often-used old one, while this
# workload's queries favour recent facts (its settings, printed above: a share `recency_mix` = 0.5 of a
# fact's query weight decays with a time constant of `recency_days` = 7 days). If so, the gap should
# shrink when queries follow popularity only:

# %%
flat = run_sweep(
    [p for p in policies if p.name in ("fsrs6", "lru")],
    seeds=range(5),
    base=config,
    grid={"recency_mix": [0.0]},
    progress=False,
)
flat_wide = flat.summary.pivot(index="seed", columns="policy", values="hit_rate")
m, lo, hi = t_interval((flat_wide["fsrs6"] - flat_wide["lru"]).to_numpy())
print(f"a new memory's FSRS-6 stability: {float(FSRS6().initial_stability(3)):.2f} days")
print(f"queries by popularity only: fsrs6 - lru hit@5 {m:+.4f} [{lo:+.4f}, {hi:+.4f}]")
with_ci(flat.summary)

# %% [markdown]
# Without the recency bias the gap to LRU shrinks by more than half (−4.4 → −1.9 points of hit@5)
# but does not close: recency explains part of FSRS-6's deficit here, not all of it.

# %% [markdown]
# ## The gate decides duplicates and stale answers
# The workload draws the latent similarity to what is stored around set means (its settings are
# printed with it above): 0.88 for paraphrases (`paraphrase_similarity`), about 0.97 for the
# near-verbatim repeats among them (`near_duplicate_share` = 30 %; the generator fixes that mean),
# 0.82 for corrections (`correction_similarity`); the first rows of its events show a few.
# A strict gate creates duplicates; a loose one merges corrections as reinforcements and answers
# with the old value.

# %%
gates = {
    "strict 0.97/0.90": Gate(0.97, 0.90),
    "default 0.92/0.75": Gate(0.92, 0.75),
    "loose 0.80/0.60": Gate(0.80, 0.60),
}
rows = []
for name, gate in gates.items():
    s = simulate(workload, Policy("none", gate=gate)).summary()
    rows.append(
        {
            "gate": name,
            **{
                k: s[k]
                for k in ("correct_rate", "stale_rate", "duplicate_rate", "final_store_size")
            },
        }
    )
pd.DataFrame(rows).set_index("gate").round(3)

# %% [markdown]
# ## References
#
# * **FSRS**: J. Ye, J. Su and Y. Cao, *A Stochastic Shortest Path Algorithm for Optimizing Spaced Repetition Scheduling*, KDD 2022; FSRS-6 weights and bounds from py-fsrs 6.3.2 (https://github.com/open-spaced-repetition/py-fsrs).
# * **Ebbinghaus**: H. Ebbinghaus, *Über das Gedächtnis*, Leipzig: Duncker & Humblot, 1885 (trans. *Memory: A Contribution to Experimental Psychology*, 1913); savings fitted as `100k / ((log10 t)^c + k)` with k = 1.84, c = 1.25, t in minutes.
# * **MemoryBank**: W. Zhong, L. Guo, Q. Gao, H. Ye and Y. Wang, *MemoryBank: Enhancing Large Language Models with Long-Term Memory*, AAAI 2024 (arXiv:2305.10250): the exponential rule `R = exp(-t/S)`, S growing with each recall.
# * **Intervals**: B. Efron, *Bootstrap methods: another look at the jackknife*, Annals of Statistics 7(1), 1979, 1–26 (the rates' percentile bootstrap); Student's t for store sizes and paired differences.
# * The agent-memory servers whose ideas memlab runs: Vestige (FSRS-6, the 0.92 / 0.75 gate) and Linksee Memory (heat bands, forgetting risk, protection rules).
