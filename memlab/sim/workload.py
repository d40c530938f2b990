"""Seeded, reproducible workloads: an agent's memory traffic over simulated days.

A workload is a time-ordered table of events, each with its ground truth: ``fact`` (a new
fact, ``"<entity>'s <attribute> is <value>."``, version 0), ``paraphrase`` (the current
version told again, or a near-duplicate: a store should REINFORCE), ``correction`` (a new
value, version + 1: a store should UPDATE; the old value is then a stale answer), ``query``
(``version`` is the right answer at that moment) and ``importance`` (a later flag, 0.95).

Who asks what: Pareto popularity per fact (Zipf ranks) times a recency term times the weight
of the fact's topic under a drifting von Mises focus; some days a burst asks one fact many
times. ``similarity`` is a latent similarity of a paraphrase or correction to the stored text,
which the pure simulator's gate thresholds (NaN for other events).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np
import pandas as pd

from memlab.models._validation import integer

#: Event kinds, in the order they are generated within one timestamp (ties never occur in practice).
KINDS: tuple[str, ...] = ("fact", "paraphrase", "correction", "query", "importance")

#: Topics with their attributes and a pool of values ("|"-separated); entities are shared across
#: topics.
_VOCAB = {
    "work": (
        "manager|office|project|deadline|team",
        "Orion|Atlas|Borealis|Kestrel|Lighthouse|Monday|Friday|room 4B|Berlin office|"
        "platform team|data team|Q3 launch|Harper|Nguyen|Okafor",
    ),
    "health": (
        "doctor|allergy|medication|blood type|gym",
        "Dr. Patel|Dr. Moreau|peanuts|penicillin|pollen|ibuprofen|metformin|O negative|"
        "A positive|FitHub|CityGym|shellfish|lactose|Dr. Silva|vitamin D",
    ),
    "travel": (
        "destination|airline|hotel|seat preference|passport expiry",
        "Lisbon|Kyoto|Reykjavik|Nairobi|Lufthansa|KLM|Hilton Garden|aisle|window|"
        "March 2029|June 2031|Marriott|Qantas|Oslo|Cusco",
    ),
    "food": (
        "favourite dish|diet|coffee order|restaurant|dislike",
        "ramen|paella|vegan|keto|flat white|oat latte|Luigi's|Sakura Bar|cilantro|"
        "olives|pho|tacos|espresso|Casa Nova|mushrooms",
    ),
    "tech": (
        "laptop|editor|language|os|phone",
        "ThinkPad X1|MacBook Air|vim|VS Code|emacs|Rust|Python|Haskell|Fedora|Debian|"
        "Pixel 8|iPhone 15|Go|Arch Linux|Zed",
    ),
    "family": (
        "partner|child|birthday|hometown|pet",
        "Sam|Alex|Mia|Leo|12 April|3 October|Porto|Leeds|a beagle|a tabby cat|Jordan|"
        "Noor|29 July|Ghent|a parrot",
    ),
    "finance": (
        "bank|budget|savings goal|accountant|card",
        "Monzo|ING|2000 euros|1500 dollars|a house|a sabbatical|Ms. Ortega|Mr. Kim|Visa|"
        "Amex|Revolut|a new car|Ms. Berg|3000 euros|Mastercard",
    ),
    "hobby": (
        "instrument|sport|book|club|game",
        "cello|guitar|climbing|rowing|Dune|Middlemarch|chess club|choir|Go|Catan|piano|"
        "tennis|Beloved|hiking club|bridge",
    ),
}
VOCAB: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    topic: (tuple(attrs.split("|")), tuple(values.split("|")))
    for topic, (attrs, values) in _VOCAB.items()
}
TOPICS: tuple[str, ...] = tuple(VOCAB)
_FIRST = tuple(
    "Alice Bruno Chen Dara Elif Farah Goran Hana Ivo Jonas Kemi Lars Mira Nils Oona Pavel Quinn"
    " Rosa Sven Tariq Uma Vera Wen Yusuf".split()
)
_LAST = tuple("Berg Costa Dube Evans Fischer Garcia Horvat Ito Jensen Kowalski".split())
#: 240 people: with 40 attributes, 9,600 distinct facts are possible.
ENTITIES: tuple[str, ...] = tuple(f"{first} {last}" for last in _LAST for first in _FIRST)

FACT_TEMPLATE = "{entity}'s {attribute} is {value}."
PARAPHRASE_TEMPLATES: tuple[str, ...] = (
    "For {entity}, the {attribute} is {value}.",
    "Remember that the {attribute} of {entity} is {value}.",
    "{entity} mentioned their {attribute}: {value}.",
    "Note: {entity} has {value} as {attribute}.",
)
NEAR_DUPLICATE_TEMPLATE = "{entity}'s {attribute} is {value}!"
CORRECTION_TEMPLATES: tuple[str, ...] = (
    "Correction: {entity}'s {attribute} is now {value}.",
    "Update: the {attribute} of {entity} changed to {value}.",
)
QUERY_TEMPLATE = "What is {entity}'s {attribute}?"
IMPORTANT = 0.95

COLUMNS: tuple[str, ...] = tuple(
    "event day kind fact_id version supersedes topic entity attribute value text importance"
    " similarity burst".split()
)


@dataclass(frozen=True)
class WorkloadConfig:
    """Parameters of a workload; the same config (seed included) always gives the same events.

    Parameters
    ----------
    seed : int
        Seed of the numpy Generator.
    n_days : int
        Simulated days.
    facts_per_day : float
        Mean new facts per day (Poisson).
    paraphrases_per_day : float
        Mean paraphrases of known facts per day.
    near_duplicate_share : float
        Share of paraphrases that are near-verbatim repeats (latent similarity ~0.97).
    corrections_per_day : float
        Mean corrections (new versions of known facts) per day.
    queries_per_day : float
        Mean queries per day (bursts come on top).
    zipf_alpha : float
        Pareto shape of fact popularity (smaller = more skewed; ranked popularity ~
        rank**(-1/alpha)).
    recency_days, recency_mix : float
        Query weight of a fact of age a is ``popularity * ((1 - mix) + mix * exp(-a /
        recency_days))``.
    topic_drift : float
        Day-to-day standard deviation of the topic focus (in topics) on the circle of topics.
    topic_concentration : float
        von Mises concentration of the topic focus (0 = no topical preference).
    burst_prob, burst_size : float, int
        Probability that a day has a burst, and the extra queries of one fact in it.
    important_share : float
        Share of new facts flagged important on arrival.
    flags_per_day : float
        Mean later importance flags per day.
    paraphrase_similarity, correction_similarity : tuple[float, float]
        Mean and standard deviation of the latent similarity of paraphrases / corrections to the
        stored text.
    """

    seed: int = 0
    n_days: int = 60
    facts_per_day: float = 20.0
    paraphrases_per_day: float = 8.0
    near_duplicate_share: float = 0.3
    corrections_per_day: float = 3.0
    queries_per_day: float = 100.0
    zipf_alpha: float = 1.5
    recency_days: float = 7.0
    recency_mix: float = 0.5
    topic_drift: float = 0.3
    topic_concentration: float = 1.0
    burst_prob: float = 0.1
    burst_size: int = 20
    important_share: float = 0.05
    flags_per_day: float = 0.5
    paraphrase_similarity: tuple[float, float] = (0.88, 0.05)
    correction_similarity: tuple[float, float] = (0.82, 0.05)

    def __post_init__(self) -> None:
        for name in ("seed", "n_days", "burst_size"):  # kept as int: to_dict() is JSON
            value = integer(getattr(self, name), name, low=1 if name == "n_days" else 0)
            object.__setattr__(self, name, value)
        for name in ("paraphrases_per_day", "corrections_per_day", "queries_per_day"):
            _check_number(getattr(self, name), name, low=0.0)
        for name in ("topic_drift", "topic_concentration", "flags_per_day"):
            _check_number(getattr(self, name), name, low=0.0)
        for name in ("near_duplicate_share", "recency_mix", "burst_prob", "important_share"):
            _check_number(getattr(self, name), name, low=0.0, high=1.0)
        for name in ("facts_per_day", "zipf_alpha", "recency_days"):
            _check_number(getattr(self, name), name, low=0.0, strict=True)
        for name in ("paraphrase_similarity", "correction_similarity"):
            pair = getattr(self, name)
            ok = isinstance(pair, tuple | list) and len(pair) == 2
            ok = ok and all(isinstance(x, int | float) and not isinstance(x, bool) for x in pair)
            if not ok or not -1 <= pair[0] <= 1 or not 0 <= pair[1] < np.inf:
                raise ValueError(f"{name} must be (mean in [-1, 1], finite sd >= 0), got {pair!r}")

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for name in ("paraphrase_similarity", "correction_similarity"):
            out[name] = list(out[name])
        return out

    @classmethod
    def from_dict(cls, source: dict[str, Any]) -> WorkloadConfig:
        known = {f.name for f in fields(cls)}
        unknown = set(source) - known
        if unknown:
            raise TypeError(f"unknown WorkloadConfig keys: {sorted(unknown)}")
        values = dict(source)
        for name in ("paraphrase_similarity", "correction_similarity"):
            if name in values:
                values[name] = tuple(values[name])
        return cls(**values)


def _check_number(
    value: Any, name: str, *, low: float, high: float | None = None, strict: bool = False
) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    if (
        not np.isfinite(value)
        or value < low
        or (strict and value == low)
        or (high is not None and value > high)
    ):
        bound = (
            f"in [{low}, {high}]" if high is not None else (f"> {low}" if strict else f">= {low}")
        )
        raise ValueError(f"{name} must be {bound}, got {value!r}")


@dataclass(frozen=True)
class Workload:
    """A generated workload: its config and its events (a tidy DataFrame, one row per event).

    Columns: ``event`` (0..n-1, time order), ``day`` (float days since the start), ``kind``,
    ``fact_id``, ``version`` (for a query, the version current when asked), ``supersedes``,
    ``topic``, ``entity``, ``attribute``, ``value``, ``text``, ``importance`` (facts and flags;
    NaN otherwise), ``similarity`` (latent, paraphrases and corrections; NaN otherwise),
    ``burst`` (query belongs to a burst).
    """

    config: WorkloadConfig
    events: pd.DataFrame

    @classmethod
    def generate(cls, config: WorkloadConfig | None = None, **overrides: Any) -> Workload:
        """Generate the workload of ``config`` (``WorkloadConfig(**overrides)`` if omitted)."""
        if config is None:
            config = WorkloadConfig(**overrides)
        elif not isinstance(config, WorkloadConfig):
            raise TypeError(f"config must be a WorkloadConfig, got {type(config).__name__}")
        elif overrides:
            config = WorkloadConfig.from_dict({**config.to_dict(), **overrides})
        return cls(config, _generate(config))

    @property
    def n_facts(self) -> int:
        return int((self.events["kind"] == "fact").sum())


# --------------------------------------------------------------------------------------- generation
def _topic_weights(focus: float, concentration: float) -> np.ndarray:
    n = len(TOPICS)
    angle = 2 * np.pi * (np.arange(n) - focus) / n
    w = np.exp(concentration * np.cos(angle))
    return w / w.sum()


def _generate(cfg: WorkloadConfig) -> pd.DataFrame:
    rng = np.random.default_rng(cfg.seed)
    n_topics = len(TOPICS)
    rows: list[tuple[Any, ...]] = []
    # per-fact state (python lists, grown as facts arrive)
    f_topic: list[int] = []
    f_entity: list[str] = []
    f_attr: list[str] = []
    f_value: list[str] = []
    f_version: list[int] = []
    f_created: list[float] = []
    f_pop: list[float] = []
    used: set[tuple[str, str]] = set()
    focus = rng.uniform(0, n_topics)

    def pick_facts(n: int, before: np.ndarray, topic_w: np.ndarray, day: int) -> np.ndarray:
        """Fact ids for ``n`` draws, each among the facts created before its time (-1 if none).

        Facts are numbered in creation order, so the eligible facts of a draw are a prefix;
        recency is measured from the middle of the day.
        """
        if n == 0 or not f_created:
            return np.full(n, -1, dtype=np.int64)
        created = np.asarray(f_created)
        age = np.maximum(day + 0.5 - created, 0.0)
        w = np.asarray(f_pop) * topic_w[np.asarray(f_topic, dtype=int)]
        w = w * ((1 - cfg.recency_mix) + cfg.recency_mix * np.exp(-age / cfg.recency_days))
        cum = np.cumsum(w)
        n_ok = np.searchsorted(created, before, side="left")
        u = rng.uniform(size=n)
        out = np.full(n, -1, dtype=np.int64)
        ok = n_ok > 0
        target = u[ok] * cum[n_ok[ok] - 1]
        out[ok] = np.minimum(np.searchsorted(cum, target, side="right"), n_ok[ok] - 1)
        return out

    for day in range(cfg.n_days):
        focus = (focus + rng.normal(0.0, cfg.topic_drift)) % n_topics
        topic_w = _topic_weights(focus, cfg.topic_concentration)

        # new facts
        n_new = rng.poisson(cfg.facts_per_day)
        times = day + np.sort(rng.uniform(0, 1, n_new))
        for t in times:
            for _ in range(50):
                topic = int(rng.choice(n_topics, p=topic_w))
                entity = ENTITIES[rng.integers(len(ENTITIES))]
                attrs, values = VOCAB[TOPICS[topic]]
                attr = attrs[rng.integers(len(attrs))]
                if (entity, attr) not in used:
                    break
            else:  # the (entity, attribute) space of the focus is exhausted: take any free pair
                free = [
                    (e, a, ti)
                    for ti, tn in enumerate(TOPICS)
                    for a in VOCAB[tn][0]
                    for e in ENTITIES
                    if (e, a) not in used
                ]
                if not free:
                    raise ValueError(
                        "workload too large: every (entity, attribute) pair is already a fact"
                    )
                entity, attr, topic = free[rng.integers(len(free))]
                values = VOCAB[TOPICS[topic]][1]
            used.add((entity, attr))
            value = values[rng.integers(len(values))]
            fid = len(f_topic)
            f_topic.append(topic)
            f_entity.append(entity)
            f_attr.append(attr)
            f_value.append(value)
            f_version.append(0)
            f_created.append(float(t))
            f_pop.append(float((1.0 - rng.uniform()) ** (-1.0 / cfg.zipf_alpha)))
            importance = (
                IMPORTANT
                if rng.uniform() < cfg.important_share
                else float(np.round(rng.uniform(0.1, 0.8), 3))
            )
            text = FACT_TEMPLATE.format(entity=entity, attribute=attr, value=value)
            head = (float(t), "fact", fid, 0, False, topic, entity, attr)
            rows.append((*head, value, text, importance, np.nan, False))

        # events about known facts, each at its own time in the day (only facts that exist by then)
        n_para = rng.poisson(cfg.paraphrases_per_day)
        n_corr = rng.poisson(cfg.corrections_per_day)
        n_query = rng.poisson(cfg.queries_per_day)
        n_flag = rng.poisson(cfg.flags_per_day)
        burst = rng.uniform() < cfg.burst_prob
        n_burst = cfg.burst_size if burst else 0
        kinds = np.array(
            ["paraphrase"] * n_para
            + ["correction"] * n_corr
            + ["query"] * n_query
            + ["importance"] * n_flag
            + ["burst"] * n_burst
        )
        times = day + rng.uniform(0, 1, len(kinds))
        order = np.argsort(times, kind="stable")
        kinds, times = kinds[order], times[order]
        is_burst = kinds == "burst"
        if n_burst:
            burst_fact = pick_facts(1, np.array([day + 1.0]), topic_w, day)[0]
            burst_start = day + rng.uniform(0, 0.5)
            times[is_burst] = np.sort(burst_start + rng.uniform(0, 0.5, n_burst))
        ids = pick_facts(len(kinds), times, topic_w, day)
        if n_burst and burst_fact >= 0:  # no fact exists yet on this day: the burst has no target
            ids[is_burst] = np.where(
                np.asarray(f_created)[burst_fact] < times[is_burst], burst_fact, -1
            )
        near = rng.uniform(size=len(kinds)) < cfg.near_duplicate_share
        noise = rng.normal(size=len(kinds))
        template_pick = rng.integers(0, 1 << 30, size=len(kinds))
        # apply in time order, interleaved with the new facts (a correction changes later queries'
        # version)
        pending = sorted(range(len(kinds)), key=lambda i: times[i])
        for i in pending:
            fid = int(ids[i])
            if fid < 0:
                continue
            t = float(times[i])
            kind = str(kinds[i])
            topic, entity, attr = f_topic[fid], f_entity[fid], f_attr[fid]
            # what differs between the kinds; the rest of the row is the fact as it is now
            supersedes, importance, sim, is_burst_query = False, np.nan, np.nan, False
            if kind in ("correction", "paraphrase"):  # a text of the fact's (new) value
                if kind == "correction":
                    values = VOCAB[TOPICS[topic]][1]
                    choices = [v for v in values if v != f_value[fid]]
                    f_value[fid] = choices[template_pick[i] % len(choices)]
                    f_version[fid] += 1
                    supersedes = True
                    (mean, sd), templates = cfg.correction_similarity, CORRECTION_TEMPLATES
                elif near[i]:
                    (mean, sd), templates = (0.97, 0.015), (NEAR_DUPLICATE_TEMPLATE,)
                else:
                    (mean, sd), templates = cfg.paraphrase_similarity, PARAPHRASE_TEMPLATES
                sim = float(np.clip(mean + sd * noise[i], -1.0, 1.0))
                tmpl = templates[template_pick[i] % len(templates)]
                text = tmpl.format(entity=entity, attribute=attr, value=f_value[fid])
            elif kind == "importance":
                importance = IMPORTANT
                text = f"Important: keep {entity}'s {attr}."
            else:  # query or burst query
                is_burst_query = kind == "burst"
                kind = "query"
                text = QUERY_TEMPLATE.format(entity=entity, attribute=attr)
            head = (t, kind, fid, f_version[fid], supersedes, topic, entity, attr)
            rows.append((*head, f_value[fid], text, importance, sim, is_burst_query))

    cols = [c for c in COLUMNS if c != "event"]
    df = pd.DataFrame(rows, columns=cols)
    kind_order = {k: i for i, k in enumerate(KINDS)}
    df["_k"] = df["kind"].map(kind_order)
    df = df.sort_values(["day", "_k"], kind="stable").drop(columns="_k").reset_index(drop=True)
    df.insert(0, "event", np.arange(len(df), dtype=np.int64))
    df["fact_id"] = df["fact_id"].astype(np.int64)
    df["version"] = df["version"].astype(np.int64)
    df["topic"] = pd.Categorical.from_codes(df["topic"].astype(int), categories=list(TOPICS))
    df["kind"] = pd.Categorical(df["kind"], categories=list(KINDS))
    return df
