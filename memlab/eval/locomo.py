"""LoCoMo retrieval evaluation through the memory store.

LoCoMo (Maharana et al., 2024): long two-person conversations in dated sessions, and questions
whose evidence is a set of turns (``dia_id`` such as ``"D3:12"``). One memory per turn, stamped
with its session's date, the speaker as topic and entity; questions are preview searches one
day after the last session. recall@k = share of a question's evidence turns in the top k,
averaged over categories 1-4 (5, adversarial, apart). Configurations are fused from one
full-depth preview per question with the store's own fusion (:func:`fuse`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from memlab.keep import (
    DEFAULT_KEEP,
    KEEP_SCORES,
    KeepInputs,
    access_weight,
    keep_mask,
    keep_scores,
)
from memlab.models._validation import integer, non_negative, unit_interval

ADVERSARIAL = 5
SCORED_CATEGORIES = (1, 2, 3, 4)
_SESSION = re.compile(r"^session_(\d+)$")
_DIA = re.compile(r"^D:?(\d+):(\d+)$")


# --------------------------------------------------------------------------------------- data
@dataclass(frozen=True)
class Turn:
    """One dialogue turn."""

    dia_id: str
    session: int
    speaker: str
    text: str
    caption: str | None
    time: datetime


@dataclass(frozen=True)
class Question:
    """One question with its evidence turn ids (normalised) and category."""

    question: str
    category: int
    evidence: tuple[str, ...]
    answer: str | None = None


@dataclass(frozen=True)
class Conversation:
    """One LoCoMo sample: speakers, turns in order, questions."""

    sample_id: str
    speakers: tuple[str, ...]
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]

    @property
    def end(self) -> datetime:
        """When questions are asked: one day after the last session."""
        return max(t.time for t in self.turns) + timedelta(days=1)


def parse_session_time(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` (LoCoMo's format) or any date pandas reads, as UTC."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"session date must be a non-empty string, got {text!r}")
    try:
        stamp = pd.Timestamp(text.strip().replace(" on ", " "))
    except (ValueError, TypeError) as error:
        raise ValueError(f"cannot read session date {text!r}") from error
    if pd.isna(stamp):
        raise ValueError(f"cannot read session date {text!r}")
    stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
    return stamp.to_pydatetime()


def normalise_evidence(raw: Any, known: set[str]) -> tuple[str, ...]:
    """Evidence turn ids: split ``;``-joined ids, read ``D:11:26`` as ``D11:26``, drop ids the
    conversation does not have (LoCoMo cites a few)."""
    items = raw if isinstance(raw, (list, tuple)) else [raw]
    kept: list[str] = []
    for item in items:
        for part in str(item).split(";"):
            token = part.strip().replace(" ", "")
            m = _DIA.match(token)
            norm = f"D{int(m.group(1))}:{int(m.group(2))}" if m else token
            if norm in known and norm not in kept:
                kept.append(norm)
    return tuple(kept)


def load_locomo(source: str | Path | Sequence[Mapping[str, Any]]) -> list[Conversation]:
    """Read a LoCoMo-format file (a JSON list of samples) or already-parsed samples.

    Each sample needs ``conversation`` (``session_<n>`` lists of turns with ``dia_id``,
    ``speaker``, ``text``, and ``session_<n>_date_time``) and ``qa`` (``question``,
    ``evidence``, ``category``). Sessions without turns are skipped.
    """
    if isinstance(source, (str, Path)):
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"LoCoMo file not found: {path}")
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise ValueError(f"{path} is not valid JSON: {error}") from error
    else:
        data = source
    if isinstance(data, Mapping):
        data = [data]
    if not isinstance(data, Sequence) or not data:
        raise ValueError("a LoCoMo file holds a non-empty JSON list of samples")
    out = []
    for n, sample in enumerate(data):
        if not isinstance(sample, Mapping) or "conversation" not in sample or "qa" not in sample:
            raise ValueError(f"sample {n} lacks 'conversation' or 'qa'")
        out.append(_conversation(sample, n))
    return out


def _conversation(sample: Mapping[str, Any], n: int) -> Conversation:
    conv = sample["conversation"]
    sample_id = str(sample.get("sample_id", f"sample-{n}"))
    speakers = tuple(str(conv[k]) for k in ("speaker_a", "speaker_b") if k in conv)
    sessions = sorted((int(m.group(1)), key) for key in conv if (m := _SESSION.match(key)))
    turns: list[Turn] = []
    for number, key in sessions:
        session_turns = conv[key]
        if not session_turns:
            continue
        date_key = f"{key}_date_time"
        if date_key not in conv:
            raise ValueError(f"{sample_id}: {key} has no {date_key}")
        when = parse_session_time(conv[date_key])
        for i, t in enumerate(session_turns):
            try:
                dia_id, speaker = str(t["dia_id"]), str(t["speaker"])
                text = str(t.get("text") or "")  # null in an image-only turn
            except (KeyError, TypeError) as error:
                raise ValueError(f"{sample_id}: turn {i} of {key} lacks dia_id/speaker") from error
            caption = t.get("blip_caption")
            turns.append(
                Turn(dia_id, number, speaker, text, str(caption) if caption else None, when)
            )
    if not turns:
        raise ValueError(f"{sample_id}: no turns")
    known = {t.dia_id for t in turns}
    if len(known) != len(turns):
        raise ValueError(f"{sample_id}: duplicate dia_id")
    if not speakers:
        speakers = tuple(dict.fromkeys(t.speaker for t in turns))
    questions = []
    for i, q in enumerate(sample["qa"]):
        if not isinstance(q, Mapping) or "question" not in q or "category" not in q:
            raise ValueError(f"{sample_id}: qa item {i} lacks question or category")
        if isinstance(q["category"], bool) or str(q["category"]).strip() not in "1 2 3 4 5".split():
            raise ValueError(f"{sample_id}: qa item {i} has category {q['category']!r}, not 1-5")
        evidence = normalise_evidence(q.get("evidence", []), known)
        answer = q.get("answer", q.get("adversarial_answer"))
        answer = None if answer is None else str(answer)
        questions.append(Question(str(q["question"]), int(q["category"]), evidence, answer))
    return Conversation(sample_id, speakers, tuple(turns), tuple(questions))


# ---------------------------------------------------------------------------- configurations
@dataclass(frozen=True)
class MemoryText:
    """How a turn becomes a memory: its image caption appended, previous turns of its session as
    context.

    ``separate_context``: give the neighbours to the store as ``context=`` (searched with the
    memory; importance and keep scores read the turn's own text); False: part of the content.
    """

    neighbours: int = 0
    separate_context: bool = True

    def parts(self, turns: Sequence[Turn], i: int) -> tuple[str, str | None]:
        """(the turn's own text, the context before it or None)."""
        t = turns[i]
        text = f"{t.speaker}: {t.text}"
        if t.caption:
            text += f" [image: {t.caption}]"
        around = [u for u in turns[max(0, i - self.neighbours) : i] if u.session == t.session]
        context = " ".join(f"{u.speaker}: {u.text}" for u in around) if around else None
        return text, context

    def render(self, turns: Sequence[Turn], i: int) -> str:
        """The memory's content as the store holds it: ``text (context: ...)``."""
        text, context = self.parts(turns, i)
        return text if context is None else f"{text} (context: {context})"


@dataclass(frozen=True)
class Config:
    """One evaluated configuration.

    ``text``: how turns become memories; ``gated``: ingest through the store's default gate;
    ``ranking``: ``"bm25"``, ``"vector"`` or the store's ``"fusion"`` with its weights, over
    the top ``depth`` of each list. ``keep`` < 1 is a forgetting budget by the keep score
    ``keep_by`` (:data:`memlab.keep.KEEP_SCORES`): through the store's ``forget_sweep``, or
    with ``through_store=False`` computed outside it (the reference the store is checked
    against). ``replay``: the agent searches its memory with each turn before a session is
    stored (the testing effect). ``keyword_max_df``: the store's frequent-term cut (``None``:
    every non-stop word; ``"store"``: its default).
    """

    name: str
    text: MemoryText = field(default_factory=MemoryText)
    gated: bool = False
    ranking: str = "fusion"
    keyword_weight: float = 1.0
    vector_weight: float = 1.0
    time_weight: float = 0.0
    topic_weight: float = 0.0
    keep: float = 1.0
    keep_by: str = "memlab"
    depth: int = 50
    replay: bool = False
    keyword_max_df: float | None | str = "store"
    through_store: bool = True

    def __post_init__(self) -> None:
        if self.ranking not in ("bm25", "vector", "fusion"):
            raise ValueError(f"ranking must be bm25, vector or fusion, got {self.ranking!r}")
        if not 0.0 < self.keep <= 1.0:
            raise ValueError(f"keep must be in (0, 1], got {self.keep!r}")
        if self.keep_by not in KEEP_SCORES:
            raise ValueError(f"keep_by must be one of {list(KEEP_SCORES)}, got {self.keep_by!r}")
        for name in ("keyword_weight", "vector_weight", "topic_weight"):
            non_negative(getattr(self, name), name)
        unit_interval(self.time_weight, "time_weight")
        integer(self.depth, "depth", low=1)

    @property
    def build(self) -> tuple[MemoryText, bool, bool, float | None | str]:
        """What the store must hold for this configuration (configs sharing it share a store)."""
        return (self.text, self.gated, self.replay, self.keyword_max_df)


def default_configs() -> list[Config]:
    """The configurations compared side by side: baselines on plain turns, the store's weightings
    one at a time, memlab's default (:data:`DEFAULT`) and its variants, then the forgetting
    budgets of :func:`budget_configs` on the replayed store."""
    plain = MemoryText()
    best = DEFAULT
    out = [
        Config("bm25 (all words)", plain, ranking="bm25", keyword_max_df=None),
        Config("rrf (all words)", plain, keyword_max_df=None),
        Config("bm25", plain, ranking="bm25"),
        Config("vector", plain, ranking="vector"),
        Config("rrf", plain),
        Config("rrf+retention", plain, time_weight=0.5),
        Config("rrf+context", plain, topic_weight=0.5),
        Config("rrf+gate", plain, gated=True),
        Config("rrf+neighbours", best.text),
        best,
        replace(best, name=f"{best.name}+gate", gated=True),
        replace(best, name=f"{best.name} +retention", time_weight=0.5),
        replace(best, name=f"{best.name} keyword x3", keyword_weight=3.0),
        replace(best, name=f"{best.name}+replay", replay=True),
    ]
    out.extend(budget_configs())
    return out


#: The store's default forgetting budget as evaluated: keep 50 % by the default keep score.
DEFAULT_BUDGET_KEEP = 0.5


def budget_configs() -> list[Config]:
    """Forgetting budgets on the replayed default: the default keep score first, then the laws
    and the baselines (every name of :data:`memlab.keep.KEEP_SCORES`)."""
    return [
        replace(
            DEFAULT,
            name=f"{DEFAULT.name}+replay keep{100 * DEFAULT_BUDGET_KEEP:g}%:{name}",
            replay=True,
            keep=DEFAULT_BUDGET_KEEP,
            keep_by=name,
        )
        for name in KEEP_SCORES
    ]


#: memlab's default configuration for conversation memory, chosen on the dev conversations: plain
#: RRF, each turn carrying the two previous turns of its session as context, the speakers a
#: question names as its topics, and no retention weight (LoCoMo's questions reach the whole
#: history evenly, so retention belongs in what a budget keeps, not in the ranking).
DEFAULT = Config("memlab", MemoryText(neighbours=2), topic_weight=0.5, time_weight=0.0)


# --------------------------------------------------------------------------------------- fusion
@dataclass
class Candidates:
    """Ranking components of one question: arrays over the conversation's memories."""

    memory_ids: np.ndarray
    keyword_rank: np.ndarray  # float, inf when not found
    vector_rank: np.ndarray
    retention: np.ndarray
    overlap: np.ndarray


def _rerank(rank: np.ndarray, kept: np.ndarray, depth: float) -> np.ndarray:
    """Ranks 1..depth among the kept memories found (inf for the rest), as the store fuses."""
    out = np.full(rank.shape, np.inf)
    sel = np.flatnonzero(kept & np.isfinite(rank))
    order = sel[np.argsort(rank[sel], kind="stable")]
    out[order] = np.arange(1, len(order) + 1)
    out[out > depth] = np.inf
    return out


def fuse(c: Candidates, cfg: Config, kept: np.ndarray | None = None, k: int = 10) -> np.ndarray:
    """Memory ids of the top ``k`` under ``cfg`` among ``kept``: the store's own fusion
    (:func:`memlab.store.fusion.search_scores`) on the store's rankings."""
    from memlab.store import fusion

    kept = np.ones(len(c.memory_ids), bool) if kept is None else kept
    kw = _rerank(c.keyword_rank, kept, cfg.depth)
    vec = _rerank(c.vector_rank, kept, cfg.depth)
    if cfg.ranking == "bm25":
        score = -kw
    elif cfg.ranking == "vector":
        score = -vec
    else:
        score = fusion.search_scores(
            kw,
            vec,
            c.retention,
            time_weight=cfg.time_weight,
            topic_overlap=c.overlap,
            topic_weight=cfg.topic_weight,
            keyword_weight=cfg.keyword_weight,
            vector_weight=cfg.vector_weight,
        )[0]
    finite = np.isfinite(score) & kept & ((score > 0) if cfg.ranking == "fusion" else True)
    idx = np.flatnonzero(finite)
    return c.memory_ids[idx[fusion.top_k(score[idx], c.memory_ids[idx], k)]]


# --------------------------------------------------------------------------------------- evaluation
def question_topics(question: str, speakers: Sequence[str]) -> list[str]:
    """The conversation's speakers named in the question (first names, case-insensitive)."""
    words = {w.lower() for w in re.findall(r"\w+", question)}
    return [s for s in speakers if s.split()[0].lower() in words]


@dataclass
class LocomoResult:
    """Per-question recall of every configuration; :meth:`table` and :meth:`to_json` summarise."""

    questions: pd.DataFrame
    configs: list[Config]
    default: str
    embedder: str
    #: Active memories each configuration's stores held at question time, summed over the
    #: conversations (one per turn without the gate; fewer when the gate merged turns or a
    #: budget archived them).
    memories: dict[str, int] = field(default_factory=dict)
    #: Turns ingested, summed over the conversations.
    turns: int = 0

    def table(self, adversarial: bool = False) -> pd.DataFrame:
        q = self.questions
        q = q[q["category"].isin([ADVERSARIAL] if adversarial else SCORED_CATEGORIES)]
        names = [c.name for c in self.configs]
        t = q.groupby("config", sort=False)[["recall@5", "recall@10"]].mean()
        t["n"] = q.groupby("config", sort=False)["recall@5"].size()
        return t.reindex(names)

    def by_category(self) -> pd.DataFrame:
        return self.questions.pivot_table(
            index="config", columns="category", values="recall@10", aggfunc="mean"
        ).reindex([c.name for c in self.configs])

    def to_json(self) -> dict[str, Any]:
        def block(t: pd.DataFrame) -> dict[str, Any]:
            return {
                name: {
                    "recall@5": _num(row["recall@5"]),
                    "recall@10": _num(row["recall@10"]),
                    "n": 0 if pd.isna(row["n"]) else int(row["n"]),
                    "memories": self.memories.get(str(name)),
                }
                for name, row in t.iterrows()
            }

        out = {
            "configs": block(self.table()),
            "default": self.default,
            "adversarial": block(self.table(adversarial=True)),
            "embedder": self.embedder,
            "turns": self.turns,
        }
        for c in self.configs:  # the default budget, if evaluated
            if c.keep == DEFAULT_BUDGET_KEEP and c.keep_by == DEFAULT_KEEP and c.replay:
                out["budget"] = {"keep": c.keep, "policy": c.keep_by, "config": c.name}
                out["evidence_kept"] = {n: _num(v) for n, v in self.evidence_kept().items()}
                break
        return out

    def evidence_kept(self) -> pd.Series:
        """Per budget configuration: mean share of a question's evidence turns kept (cat. 1-4)."""
        q = self.questions[self.questions["category"].isin(SCORED_CATEGORIES)]
        budgeted = [c.name for c in self.configs if c.keep < 1.0]
        q = q[q["config"].isin(budgeted)]
        return q.groupby("config", sort=False)["evidence_kept"].mean().reindex(budgeted)


def _num(x: Any) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else round(float(x), 4)


def evaluate(
    source: str | Path | Sequence[Conversation] | Sequence[Mapping[str, Any]],
    *,
    embedder: Any = "hashing",
    model_dir: str | Path | None = None,
    configs: Sequence[Config] | None = None,
    progress: bool = False,
    seed: int = 0,
    cache: str | Path | None = None,
) -> LocomoResult:
    """Evaluate ``configs`` (default :func:`default_configs`) on a LoCoMo-format source.

    Parameters
    ----------
    source : path, or loaded conversations / samples
    embedder : "hashing", "fastembed" or an Embedder
    model_dir : path, optional
        A fastembed-loadable model folder: implies fastembed, loaded offline.
    configs : sequence of Config, optional
        The result's default is :data:`DEFAULT` when it is among them, else the first.
    progress : bool
        A progress bar over questions.
    seed : int
        Seed of the ``random`` forgetting baseline.
    cache : path, optional
        Pickle file of the embedder's vectors kept between runs (trusted files only).
    """
    from memlab.embed import make_embedder
    from memlab.gate import Gate
    from memlab.store import MemoryStore, SearchOptions

    conversations = (
        [c for c in source]
        if isinstance(source, Sequence) and source and isinstance(source[0], Conversation)
        else load_locomo(source)
    )  # type: ignore[arg-type]
    if not any(q.evidence for c in conversations for q in c.questions):
        raise ValueError("no question has evidence turns: nothing to score")
    configs = default_configs() if configs is None else list(configs)
    if not configs:
        raise ValueError("configs is empty: nothing to evaluate")
    if len({c.name for c in configs}) != len(configs):
        raise ValueError("configuration names must be unique")
    default = DEFAULT.name if any(c.name == DEFAULT.name for c in configs) else configs[0].name
    spec = embedder if model_dir is None else "fastembed"
    emb = _CachedEmbedder(make_embedder(spec, model_path=model_dir), cache)
    rng = np.random.default_rng(seed)
    builds: dict[tuple[MemoryText, bool, bool, Any], list[Config]] = {}
    for c in configs:
        builds.setdefault(c.build, []).append(c)
    rows: list[dict[str, Any]] = []
    made: dict[str, int] = dict.fromkeys((c.name for c in configs), 0)
    from memlab.progress import progress as progress_bar

    bar = progress_bar(
        total=sum(bool(q.evidence) for c in conversations for q in c.questions) * len(builds),
        desc="locomo",
        unit="q",
        enabled=None if progress else False,
    )
    for conv in conversations:
        scored = [(i, q) for i, q in enumerate(conv.questions) if q.evidence]
        qvecs = [emb.embed_query(q.question) for _, q in scored]
        for (text, gated, replay, max_df), cfgs in builds.items():
            extra = {} if max_df == "store" else {"search": SearchOptions(keyword_max_df=max_df)}
            store = MemoryStore(
                ":memory:",
                embedder=emb,
                gate=Gate() if gated else Gate.off(),
                secrets="allow",
                **extra,
            )
            turn_of_memory = ingest_conversation(store, conv, text, replay=replay)
            frame = store.to_dataframe(now=conv.end, include_archived=False)
            ids_all = frame["id"].to_numpy()
            topics_of = [question_topics(q.question, conv.speakers) for _, q in scored]
            # budgets through the store: its own sweep archives, its own rankings answer
            swept = {
                cfg.name: sweep_and_rank(
                    store, cfg, conv, [q.question for _, q in scored], qvecs, topics_of, seed
                )
                for cfg in cfgs
                if cfg.keep < 1.0 and cfg.through_store
            }
            outside = [c for c in cfgs if c.keep < 1.0 and not c.through_store]
            scores = (
                _keep_scores(
                    frame,
                    conv.end,
                    rng,
                    _own_texts(frame, turn_of_memory, conv),
                    _use_history(store, frame, conv.end),
                )
                if outside
                else {}
            )
            for cfg in cfgs:  # the memories searched: all, or those a budget kept
                if cfg.name in swept:
                    made[cfg.name] += len(swept[cfg.name][0])
                else:
                    made[cfg.name] += int(_kept(scores, cfg, ids_all).sum())
            for j, (qi, q) in enumerate(scored):
                cand = candidates(store, q.question, qvecs[j], topics_of[j], frame)
                for cfg in cfgs:
                    if cfg.name in swept:
                        kept_ids, per_question = swept[cfg.name]
                        kept = np.isin(ids_all, kept_ids)
                        top = fuse(per_question[j], cfg, None, k=10)
                    else:
                        kept = _kept(scores, cfg, ids_all)
                        top = fuse(cand, cfg, kept, k=10)
                    kept_turns = {d for m in ids_all[kept] for d in turn_of_memory[int(m)]}
                    ranked = dict.fromkeys(d for m in top for d in turn_of_memory[int(m)])
                    rows.append(
                        {
                            "sample_id": conv.sample_id,
                            "question": qi,
                            "category": q.category,
                            "config": cfg.name,
                            "n_evidence": len(q.evidence),
                            "recall@5": _recall_memories(top[:5], turn_of_memory, q.evidence),
                            "recall@10": _recall_memories(top[:10], turn_of_memory, q.evidence),
                            "top10": list(ranked)[:10],
                            "evidence_kept": len(kept_turns & set(q.evidence)) / len(q.evidence),
                        }
                    )
                bar.update()
            store.close()
    bar.close()
    emb.save()
    n_turns = sum(len(c.turns) for c in conversations)
    return LocomoResult(pd.DataFrame(rows), configs, default, emb.name, made, n_turns)


def _recall_memories(
    top: np.ndarray, turn_of_memory: dict[int, list[str]], evidence: tuple[str, ...]
) -> float:
    found = {d for m in top for d in turn_of_memory[int(m)]}
    return len(found & set(evidence)) / len(evidence)


def sweep_and_rank(
    store: Any,
    cfg: Config,
    conv: Conversation,
    questions: Sequence[str],
    qvecs: Sequence[np.ndarray],
    topics: Sequence[list[str]],
    seed: int = 0,
) -> tuple[np.ndarray, list[Candidates]]:
    """A budget through the store: its own sweep at question time archives what ``cfg`` does not
    keep, each question is ranked by the store, then the archived memories are restored.

    Returns (the ids the store kept, each question's candidates among them)."""
    sweep = store.forget_sweep(
        now=conv.end, keep=cfg.keep, keep_by=cfg.keep_by, seed=seed, dry_run=False
    )
    archived = sweep.loc[sweep["action"] == "drop", "id"].to_numpy()
    try:
        kept_frame = store.to_dataframe(now=conv.end, include_archived=False)
        per_question = [
            candidates(store, q, v, t, kept_frame)
            for q, v, t in zip(questions, qvecs, topics, strict=True)
        ]
    finally:
        for m in archived:
            store.restore(int(m), now=conv.end)
    return kept_frame["id"].to_numpy(), per_question


def ingest_conversation(
    store: Any, conv: Conversation, text: MemoryText, *, replay: bool = False
) -> dict[int, list[str]]:
    """Ingest the turns session by session (``now`` = session date); memory id -> turn ids it
    stands for."""
    turn_of_memory: dict[int, list[str]] = {}
    turns = conv.turns
    by_session: dict[int, list[int]] = {}
    for i, t in enumerate(turns):
        by_session.setdefault(t.session, []).append(i)
    for idx in by_session.values():
        items = []
        for i in idx:
            own, context = text.parts(turns, i)
            if not text.separate_context:
                own, context = text.render(turns, i), None
            item = {"content": own, "topics": [turns[i].speaker], "entity": turns[i].speaker}
            if context is not None:
                item["context"] = context  # searched with it; importance reads the own text
            items.append(item)
        now = turns[idx[0]].time
        if replay and len(store):
            for i in idx:
                query = f"{turns[i].speaker}: {turns[i].text}"
                store.search(
                    query,
                    3,
                    mark_accessed=True,
                    now=now,
                    query_vector=store.embedder.embed_query(query),
                )
        results = store.ingest_many(items, now=now)
        for i, r in zip(idx, results, strict=False):
            turn_of_memory.setdefault(int(r.memory_id), []).append(turns[i].dia_id)
    return turn_of_memory


def candidates(
    store: Any, question: str, qvec: np.ndarray, topics: list[str], frame: pd.DataFrame
) -> Candidates:
    """Keyword and vector ranks of every memory (inf when a list does not hold it), retention,
    topic overlap: the lists ``MemoryStore.search`` fuses, taken to full depth."""
    n = len(frame)
    keyword, vector = store.rankings(question, n, query_vector=qvec)
    pos = {int(m): i for i, m in enumerate(frame["id"].to_numpy())}
    kw, vec = np.full(n, np.inf), np.full(n, np.inf)
    for ranks, ranking in ((kw, keyword), (vec, vector)):
        for r, (m, _) in enumerate(ranking, start=1):
            ranks[pos[int(m)]] = r
    topic_set = set(topics)
    overlap = (
        np.array([len(topic_set & set(t)) / len(topic_set) for t in frame["topics"]])
        if topic_set
        else np.zeros(n)
    )
    return Candidates(
        frame["id"].to_numpy(), kw, vec, frame["retention"].to_numpy(dtype=float), overlap
    )


class _CachedEmbedder:
    """An embedder that remembers the vectors it made, kept in the pickle file ``path`` between
    runs (a file written by another embedder is ignored)."""

    def __init__(self, inner: Any, path: str | Path | None = None) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = int(inner.dim)
        self.path = Path(path) if path is not None else None
        self._vectors: dict[tuple[str, str], np.ndarray] = {}
        if self.path is not None and self.path.is_file():
            stored = pd.read_pickle(self.path, compression=None)
            if isinstance(stored, dict) and stored.get("name") == self.name:
                self._vectors = dict(stored["vectors"])

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        missing = list(dict.fromkeys(t for t in texts if ("d", t) not in self._vectors))
        if missing:
            for t, v in zip(missing, self.inner.embed_documents(missing), strict=False):
                self._vectors[("d", t)] = v
        return np.array([self._vectors[("d", t)] for t in texts]).reshape(len(texts), self.dim)

    def embed_query(self, text: str) -> np.ndarray:
        if ("q", text) not in self._vectors:
            self._vectors[("q", text)] = self.inner.embed_query(text)
        return self._vectors[("q", text)]

    def save(self) -> None:
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(self.path.suffix + ".tmp")
            pd.to_pickle({"name": self.name, "vectors": self._vectors}, tmp, compression=None)
            tmp.replace(self.path)


def _own_texts(
    frame: pd.DataFrame, turn_of_memory: dict[int, list[str]], conv: Conversation
) -> list[str]:
    """Each memory's own text: its turn(s) as ``speaker: text [image: caption]``, without the
    retrieval context the configuration appends (neighbouring turns are other memories)."""
    own = MemoryText()
    index = {t.dia_id: i for i, t in enumerate(conv.turns)}
    return [
        " ".join(own.render(conv.turns, index[d]) for d in turn_of_memory[int(m)])
        for m in frame["id"].to_numpy()
    ]


def _use_history(
    store: Any, frame: pd.DataFrame, now: datetime
) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
    """Per memory, the days before ``now`` of each access event and its evidence weight by the
    access's source (:func:`memlab.keep.access_weight`: a search return counts little)."""
    at = pd.Timestamp(now)
    ages: list[np.ndarray] = []
    weights: list[np.ndarray] = []
    for m in frame["id"].to_numpy():
        h = store.history(int(m))
        h = h[h["kind"] == "access"]
        ages.append(np.maximum((at - h["at"]).dt.total_seconds().to_numpy(float) / 86400.0, 0.0))
        weights.append(
            np.array([access_weight((d or {}).get("source")) for d in h["data"]], dtype=float)
        )
    return tuple(ages), tuple(weights)


def _keep_scores(
    frame: pd.DataFrame,
    now: datetime,
    rng: np.random.Generator,
    texts: list[str],
    uses: tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]],
) -> dict[str, np.ndarray]:
    """Keep scores of every memory at question time, by name (:func:`memlab.keep.keep_scores`),
    importance read from each memory's own text; ``uses`` (:func:`_use_history`)."""
    own = frame.drop(columns=["own_chars"], errors="ignore").assign(content=texts)
    inputs = KeepInputs.from_frame(own, now, importance_given=False)
    return keep_scores(replace(inputs, use_ages=uses[0], use_weights=uses[1]), rng=rng)


def _kept(scores: dict[str, np.ndarray], cfg: Config, ids_all: np.ndarray) -> np.ndarray:
    if cfg.keep >= 1.0:
        return np.ones(len(ids_all), bool)
    # highest score first; ties: newest memory first
    return keep_mask(scores[cfg.keep_by], cfg.keep, ids_all)


# ------------------------------------------------------------------------------ command line
def add_parser(subparsers: Any) -> Any:
    """Add ``locomo`` to the ``memlab eval`` group."""
    p = subparsers.add_parser(
        "locomo",
        help="recall@5/10 of LoCoMo evidence turns through the memory store",
        description="Evaluate retrieval configurations of the memory store on a LoCoMo-format"
        " file: one memory per turn, questions after the last session, recall@5/10 of evidence"
        " turns (categories 1-4; 5 apart).",
    )
    p.add_argument("file", help="LoCoMo-format JSON file")
    p.add_argument(
        "--model-dir", help="folder of a fastembed-loadable model (default: HashingEmbedder)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--progress", action="store_true", help="show a progress bar")
    p.set_defaults(func=run_cli)
    return p


def run_cli(args: Any) -> int:
    """Run ``memlab eval locomo``; prints a table, or JSON with ``--json``."""
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    result = evaluate(
        args.file, model_dir=args.model_dir, progress=bool(getattr(args, "progress", False))
    )
    if args.json:
        print(json.dumps(result.to_json()))
    else:
        print(f"LoCoMo recall ({result.embedder}); categories 1-4; default = {result.default}")
        print(result.table().round(3).to_string())
        print("\ncategory 5 (adversarial):")
        print(result.table(adversarial=True).round(3).to_string())
    return 0
