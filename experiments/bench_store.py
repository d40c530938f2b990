"""Benchmark of the MemoryStore at 1k, 10k, 100k and 1M memories, annoy and HNSW side by side.

Measures, for the HashingEmbedder (and fastembed + the shared MiniLM where present, at the
smaller sizes), on synthetic but realistic short agent-memory texts (seeded):

- ingest rate through the gate (``ingest_many``: batch embedding, gating against annoy + tail),
- annoy index build time (a full rebuild from SQLite),
- search latency p50/p95 without query embedding (vector given) and with it, as a preview
  (``mark_accessed=False``) and with the access write (``mark_accessed=True``),
- annoy recall@10 against exact search, over a grid of ``search_k``, and exact numpy search
  latency as the reference measured in the same run,
- peak RSS of the process (each configuration runs in its own subprocess).

Configurations (each in its own subprocess, so its peak RSS is its own):

- ``store``: the whole store, gated ``ingest_many`` (batches of 1,000), with ``index="annoy"``
  (the default: trees + exact tail), ``index="hnsw"`` (usearch graph; ``--indexes hnsw32``:
  of degree 32, ``hnsw_connectivity=32``) or ``index="ivf"`` (faiss inverted-file cells, their
  search breadth the cells scanned, ``--probes``); a single-text
  ``ingest`` rate on a small sample after it; search latency with the vector given, with query
  embedding and with the testing effect on; recall@10 of the vector index against exact search
  over a grid (annoy: trees x search_k; HNSW: search breadth ef), the smallest setting reaching
  0.95 chosen for the latencies; exact numpy search of the same vectors in the same run
  (computed after the store's peak RSS is read);
- ``index``: the vector index alone (``HnswIndex.put`` of every vector, then queries), for
  sizes whose gated ingest does not fit the run (``--index-only-sizes``, e.g. 1M); the exact
  reference is computed in blocks from a memory-mapped ``.npy`` so it adds little to the RSS.

MiniLM vectors (``--minilm-sizes``) are embedded once per run and cached in a temporary
``.npy`` (an embedder that looks the cached vectors up under MiniLM's own name).

Run: ``python experiments/bench_store.py [--sizes 1000 10000 100000] [--quick]``. Writes
experiments/results/bench_store.json and .md (and bench_store_recall.png).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
MINILM = ROOT.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
#: Gate decisions counted during ingest, in the order the report lists them.
DECISIONS = ("create", "update", "reinforce", "supersede", "related")
TARGETS = {
    "hashing_1m": {
        "search_p50_ms": 20.0,
        "recall_at_10": 0.95,
        "rss_mb": 2000.0,
        "ingest_per_s": 2000.0,
    },
    "minilm_100k": {"search_p50_ms": 5.0, "recall_at_10": 0.95, "rss_mb": 800.0},
    "recall_at_10": 0.95,
}
REFERENCE = {
    "vestige_claim": "< 1 s per search, ~1 GB at 100k memories",
    "design_annoy_100k_minilm": "10 trees recall@10 0.84 at 0.08 ms; 50 trees 0.96 at 0.16 ms",
    "design_exact_numpy_100k_ms": "5-16",
}

THINGS = [
    "dark mode",
    "vim keybindings",
    "short meetings",
    "written updates",
    "green tea",
    "espresso",
    "tabs",
    "spaces",
    "type hints",
    "small pull requests",
    "pair programming",
    "async standups",
    "morning focus time",
    "the staging cluster",
    "postgres",
    "sqlite",
    "rust",
    "python",
    "pandas",
    "polars",
    "notebooks",
    "emacs",
]
REASONS = [
    "a missing environment variable",
    "an expired certificate",
    "a schema migration lock",
    "disk pressure",
    "a flaky integration test",
    "a rate limit at the provider",
    "an out-of-memory kill",
    "a DNS timeout",
    "a bad feature flag",
    "clock skew between nodes",
    "a stale cache entry",
    "a circular import",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
TOPICS = [
    "the roadmap",
    "hiring",
    "the budget",
    "on-call rotation",
    "the data model",
    "latency",
    "pricing",
    "the release plan",
    "security review",
    "documentation",
    "test coverage",
    "the API design",
]
ACTIONS = [
    "ship it behind a flag",
    "postpone to next sprint",
    "write a design doc",
    "add more tests",
    "split the service",
    "ask the customer",
    "roll back",
    "pin the dependency",
    "benchmark first",
]


def _lexicon(rng: np.random.Generator, n: int) -> list[str]:
    """``n`` distinct pronounceable pseudo-words (project names, people, tools of a large org)."""
    syllables = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"]
    # 2-3 syllables make 518,400 words at most; a larger lexicon takes words of up to 4
    # (the smaller ones are unchanged: the same draws as before)
    words: set[str] = set()
    if n > 400_000:  # drawn in blocks (the draws of one word at a time take minutes at 1M)
        table = np.array(syllables + [""])
        while len(words) < n:
            sizes = rng.integers(2, 5, size=n)
            picks = rng.integers(0, len(syllables), size=(n, 4))
            picks[np.arange(4)[None, :] >= sizes[:, None]] = len(syllables)
            parts = table[picks]
            words.update(np.char.add(np.char.add(parts[:, 0], parts[:, 1]),
                                     np.char.add(parts[:, 2], parts[:, 3])).tolist())  # fmt: skip
        return sorted(words)[:n] if len(words) > n else sorted(words)
    while len(words) < n:
        words.add("".join(rng.choice(syllables, size=int(rng.integers(2, 4)))))
    return sorted(words)


VERBS = [
    "prefers",
    "reviewed",
    "deployed",
    "rewrote",
    "benchmarked",
    "broke",
    "fixed",
    "owns",
    "wants",
    "documented",
    "migrated",
    "profiled",
    "cancelled",
    "approved",
    "rejected",
    "scheduled",
    "tested",
    "archived",
    "renamed",
    "forked",
    "pinned",
    "monitors",
    "questioned",
    "simplified",
    "shipped",
]
ADJECTIVES = [
    "new",
    "old",
    "flaky",
    "slow",
    "shared",
    "internal",
    "legacy",
    "nightly",
    "primary",
    "secondary",
    "experimental",
    "broken",
    "cached",
    "public",
    "private",
    "remote",
    "local",
    "weekly",
    "urgent",
]
PREPOSITIONS = ["for", "in", "with", "after", "before", "under", "near", "during"]


def make_texts(n: int, seed: int) -> list[str]:
    """``n`` short agent-memory style texts over a large lexicon (seeded).

    A person, a verb, an object and a place, then often a reason, a day, a preference or a
    decision: few words are shared between unrelated texts, as in a real agent's log, and
    about 3 % of texts repeat an earlier one (the gate's REINFORCE path) while others share
    most words with an earlier text (UPDATE).
    """
    rng = np.random.default_rng(seed)
    lex = _lexicon(rng, max(3000, n))

    def pick(xs: list[str]) -> str:
        return xs[int(rng.integers(len(xs)))]

    out: list[str] = []
    for _ in range(n):
        u = rng.random()
        if out and u < 0.03:  # said again
            out.append(out[int(rng.integers(len(out)))])
            continue
        if out and u < 0.05:  # a revision of an earlier memory
            words = out[int(rng.integers(len(out)))].rstrip(".").split()
            words[int(rng.integers(len(words)))] = pick(lex)
            out.append(" ".join(words) + ".")
            continue
        who, verb, adj = pick(lex).capitalize(), pick(VERBS), pick(ADJECTIVES)
        t = f"{who} {verb} the {adj} {pick(lex)} {pick(PREPOSITIONS)} {pick(lex)}"
        extra = int(rng.integers(4))
        if extra == 0:
            t += f" because of {pick(REASONS)}"
        elif extra == 1:
            t += f" on {pick(DAYS)}, ticket {int(rng.integers(100, 99999))}"
        elif extra == 2:
            t += f"; {pick(lex).capitalize()} prefers {pick(THINGS)}"
        else:
            t += f"; decided to {pick(ACTIONS)} about {pick(TOPICS)}"
        out.append(t + ".")
    return out


def make_queries(n: int, seed: int, texts: list[str]) -> list[str]:
    """Queries in the memories' vocabulary: a template question about a word of a stored text."""
    rng = np.random.default_rng(seed)
    lex = sorted(
        {
            w.strip(".,;:").lower()
            for t in texts[:: max(1, len(texts) // 2000)]
            for w in t.split()
            if w.isalpha() and len(w) > 3
        }
    )
    people = [w.capitalize() for w in lex]

    def pick(xs: list[str]) -> str:
        return xs[int(rng.integers(len(xs)))]

    forms = [
        lambda: f"what does {pick(people)} prefer",
        lambda: f"who {pick(VERBS)} the {pick(lex)}",
        lambda: f"decision about {pick(TOPICS)}",
        lambda: f"{pick(lex)} problems because of {pick(REASONS)}",
        lambda: f"who owns {pick(TOPICS)}",
    ]
    return [forms[int(rng.integers(len(forms)))]() for _ in range(n)]


def known_item_queries(texts: list[str], n: int, seed: int) -> list[tuple[str, str]]:
    """``n`` (query, text) pairs: the verb, adjective and object of a stored text ("deployed
    flaky kakigi"), whose answer is that text (known-item search: a labelled check that a
    search setting still finds what it should)."""
    rng = np.random.default_rng(seed)
    out = []
    for i in rng.choice(len(texts), size=min(n, len(texts)), replace=False):
        words = [w.strip(".,;") for w in texts[int(i)].split()]
        out.append((" ".join([words[1], words[3], words[4]]), texts[int(i)]))
    return out


def known_item_hits(store, pairs: list[tuple[str, str]]) -> tuple[float, list[float]]:
    """Share of ``pairs`` whose text is among the top 10 of ``store.search`` (query embedded
    first, then searched with the vector given), and the search times."""
    found, times = 0, []
    for query, text in pairs:
        vec = store.embedder.embed_query(query)
        s = time.perf_counter()
        hits = store.search(query, k=10, query_vector=vec, mark_accessed=False)
        times.append(time.perf_counter() - s)
        found += any(h.memory.content == text for h in hits)
    return found / len(pairs), times


#: Keyword budgets (``keyword_max_postings``) of the keyword-side curve, beside no budget.
KEYWORD_BUDGETS = (20_000, 5_000, 2_000, 1_000)


def keyword_budget_curve(
    search, contents, queries: list[str], pairs: list[tuple[str, str]], budgets=KEYWORD_BUDGETS
) -> list[dict]:
    """The keyword side alone at each budget and without one (``None``, the reference).

    ``search(query, budget)`` gives the keyword ranking's ids, best first; ``contents(ids)`` the
    texts of those ids. For each budget: the p50, p95 and mean time of ``search`` over
    ``queries``; its top 10 against the unbudgeted top 10 of the same queries (recall@10: how far
    the budget moves BM25's own ranking); the known-item hit@10 of the keyword side alone on
    ``pairs``. Reads only.
    """
    reference = [set(search(q, None)[:10]) for q in queries]
    out = []
    for budget in (None, *budgets):
        times, recall = [], []
        for q, ref in zip(queries, reference, strict=True):
            s = time.perf_counter()
            got = search(q, budget)
            times.append(time.perf_counter() - s)
            if ref:
                recall.append(len(ref & set(got[:10])) / len(ref))
        found = sum(text in contents(search(query, budget)[:10]) for query, text in pairs)
        out.append(
            {"max_postings": budget, "keyword_ms_p50": _pct(times, 50),
             "keyword_ms_p95": _pct(times, 95), "keyword_ms_mean": _pct(times, None),
             "recall_at_10_vs_no_budget": float(np.mean(recall)) if recall else None,
             "known_item_hit_at_10": found / len(pairs)}
        )  # fmt: skip
    return out


def store_keyword_curve(store, queries: list[str], pairs: list[tuple[str, str]]) -> list[dict]:
    """:func:`keyword_budget_curve` of a store's keyword side (its candidate depth)."""
    core, depth = store.core, max(store.settings.candidates, 50)

    def search(query: str, budget: int | None) -> list[int]:
        return [m for m, _ in core.keyword_search(query, depth, max_postings=budget)]

    def contents(ids: list[int]) -> list[str]:
        return [r["content"] for r in core.rows(ids, "id, content").values()]

    with core.read():
        return keyword_budget_curve(search, contents, queries, pairs)


def _pct(xs: list[float], q: float | None) -> float:
    """The ``q``-th percentile of ``xs`` (seconds) in ms; ``q=None``: the mean."""
    ms = np.asarray(xs) * 1000.0
    return float(ms.mean() if q is None else np.percentile(ms, q))


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


class CachedEmbedder:
    """An embedder answering from precomputed vectors (same name and dimension as the model
    that computed them), so a benchmark embeds a corpus once. Unknown texts go to ``base``.

    The vectors are read from their ``.npy`` file with positioned reads (``os.pread``), not
    memory-mapped: pages of a mapping stay resident and would count in the store's peak RSS.
    """

    def __init__(self, base, texts: list[str], cache: Path) -> None:
        self.base = base
        self.name = base.name
        self.dim = base.dim
        self.table = {t: i for i, t in enumerate(texts)}
        with open(cache, "rb") as fh:
            np.lib.format.read_magic(fh)
            np.lib.format.read_array_header_1_0(fh)
            self.offset = fh.tell()
        self.fd = os.open(cache, os.O_RDONLY)
        self.row_bytes = self.dim * 4

    def _rows(self, start: int, count: int) -> np.ndarray:
        data = os.pread(self.fd, count * self.row_bytes, self.offset + start * self.row_bytes)
        return np.frombuffer(data, dtype="<f4").reshape(count, self.dim)

    def embed_documents(self, texts):
        idx = [self.table.get(t, -1) for t in texts]
        if not idx or min(idx) < 0:
            return self.base.embed_documents(texts)
        if idx == list(range(idx[0], idx[0] + len(idx))):  # a run of the corpus: one read
            return self._rows(idx[0], len(idx)).copy()
        return np.concatenate([self._rows(i, 1) for i in idx])

    def embed_query(self, text):
        return self.base.embed_query(text)


#: Rounds of the timed searches (vector given), each one pass of the queries overlapped and
#: one serial: the p50s pool every round, so one pass disturbed by the shared machine does not
#: decide a figure (the same search's p50 moved by 1-2 ms from one pass to the next).
SEARCH_ROUNDS = 3

#: Sizes above this skip timing a full index rebuild (at 1M an HNSW rebuild repeats the whole
#: graph construction: tens of minutes on 2 cores).
REBUILD_MAX = 300_000

#: The MiniLM runs take the first n texts of one corpus of this size (embedded once, cached).
MINILM_CORPUS = 100_000


def minilm_vectors(texts: list[str], cache: Path) -> np.ndarray:
    """MiniLM document vectors of ``texts``, embedded once and cached in ``cache`` (.npy).

    A cache holding at least ``len(texts)`` rows, the first ones all embedded (non-zero), is
    used for its first ``len(texts)`` rows (the texts are a prefix of the cached corpus).
    """
    from memlab.embed import make_embedder

    if cache.exists():
        vecs = np.load(cache, mmap_mode="r")
        if vecs.shape[0] >= len(texts) and np.all(
            np.abs(np.asarray(vecs[: len(texts)])).sum(axis=1) > 0
        ):
            return vecs[: len(texts)]
    emb = make_embedder("fastembed", model_path=MINILM)
    partial = cache.with_name(cache.stem + ".partial.npy")  # renamed once complete
    out = np.lib.format.open_memmap(
        partial, mode="w+", dtype=np.float32, shape=(len(texts), emb.dim)
    )
    for i in range(0, len(texts), 2000):
        out[i : i + 2000] = emb.embed_documents(texts[i : i + 2000])
    out.flush()
    del out
    os.replace(partial, cache)
    return np.load(cache, mmap_mode="r")


#: ann-benchmarks' allowance for ties (its ``knn`` recall): a returned neighbour counts when its
#: distance is at most the k-th exact distance plus this (in cosine units here).
TIE_EPSILON = 1e-3


def exact_top10_sims(qmat: np.ndarray, blocks) -> tuple[list[set[int]], np.ndarray]:
    """Exact top-10 ids per query over (ids, matrix) blocks (streamed: small memory), and
    their cosines best first (one row of 10 per query)."""
    best_sims = np.full((len(qmat), 10), -np.inf)
    best_ids = np.zeros((len(qmat), 10), dtype=np.int64)
    for ids, mat in blocks:
        sims = qmat @ np.asarray(mat, dtype=np.float32).T
        all_sims = np.concatenate([best_sims, sims], axis=1)
        all_ids = np.concatenate([best_ids, np.broadcast_to(ids, sims.shape)], axis=1)
        top = np.argsort(-all_sims, axis=1, kind="stable")[:, :10]
        best_sims = np.take_along_axis(all_sims, top, axis=1)
        best_ids = np.take_along_axis(all_ids, top, axis=1)
    return [set(row.tolist()) for row in best_ids], best_sims


def recall_at_10(got: list[set[int]], exact: list[set[int]]) -> float:
    """The share of the exact top 10's ids found (a tie at the 10th place broken by id)."""
    return float(np.mean([len(a & b) / 10 for a, b in zip(got, exact, strict=True)]))


def tie_recall_at_10(
    got_sims: list[list[float]], exact_sims: np.ndarray, epsilon: float = TIE_EPSILON
) -> float:
    """ann-benchmarks' recall@10 (its ``knn`` metric, written from its definition): the share
    of the 10 returned whose exact cosine is at least the exact 10th cosine less ``epsilon``.

    ``got_sims``: the exact cosines of what a search returned (at most 10 per query), so a
    memory as similar as the 10th exact neighbour counts whatever its id.
    """
    kth = exact_sims[:, 9] - epsilon
    counted = [sum(s >= t for s in sims[:10]) / 10 for sims, t in zip(got_sims, kth, strict=True)]
    return float(np.mean(counted))


def choose(curve: list[dict], target: float) -> dict:
    """The fastest setting of ``curve`` reaching ``target`` recall (else the best recall)."""
    ok = [c for c in curve if c["recall_at_10"] >= target]
    if ok:
        return min(ok, key=lambda c: c["query_ms_p50"])
    return max(curve, key=lambda c: (c["recall_at_10"], -c["query_ms_p50"]))


def _db_blocks(conn, block: int = 2000):
    cur = conn.execute("SELECT id, embedding FROM memories")
    while rows := cur.fetchmany(block):
        ids = np.array([r[0] for r in rows])
        yield ids, np.frombuffer(b"".join(r[1] for r in rows), dtype="<f4").reshape(len(rows), -1)


#: Vectors per batched add of an index-only run (the store's ingest chunk in the bench).
INDEX_ADD_BLOCK = 1000


#: Candidates an index-only run takes from the graph and re-scores, as the store's search
#: fetches them for a search of k=10 (``max(candidates, 50)``).
INDEX_DEPTH = 50


def _time_queries(index, qvecs, n: int = 10) -> tuple[list[list[int]], list[float]]:
    """The ids of each query's ``n`` hits from ``index`` (its own order) and their times."""
    got, times = [], []
    for v in qvecs:
        s = time.perf_counter()
        hits = index.query(v, n)
        times.append(time.perf_counter() - s)
        got.append([m for m, _ in hits])
    return got, times


GRAPH_KIND = re.compile(
    r"hnsw(?P<degree>\d+)?(?:x(?P<expansion>\d+))?(?:s(?P<shards>\d+))?(?:-(?P<dtype>\w+))?"
)


def graph_options(kind: str) -> dict:
    """``HnswIndex`` arguments of a graph kind of the bench: ``hnsw`` (the default graph),
    ``hnsw<M>`` (degree M, e.g. ``hnsw32``), ``hnsw<M>x<E>`` (degree M, construction breadth E,
    e.g. ``hnsw32x64``; else 4 x M), any of them with ``s<S>`` (S shards, e.g. ``hnsw32s1``,
    ``hnsws4``) and with ``-<dtype>`` (e.g. ``hnsw-f16``)."""
    from memlab.store.hnsw import HnswIndex

    match = GRAPH_KIND.fullmatch(kind)
    if match is None:
        raise ValueError(
            f"unknown index kind {kind!r} (annoy, hnsw, hnsw<degree>, hnsw<degree>x<breadth>, "
            "any hnsw one with s<shards> and -<dtype>)"
        )
    options: dict = {}
    if match["degree"]:
        options["connectivity"] = int(match["degree"])
    if match["expansion"]:
        if not match["degree"]:
            raise ValueError(f"{kind!r}: a construction breadth needs a degree (hnsw<M>x<E>)")
        options["expansion_add"] = int(match["expansion"])
    if match["shards"]:
        options["shards"] = int(match["shards"])
    if match["dtype"]:
        if match["dtype"] not in HnswIndex.DTYPES:
            raise ValueError(
                f"unknown graph dtype {match['dtype']!r} in {kind!r} {HnswIndex.DTYPES}"
            )
        options["dtype"] = match["dtype"]
    return options


def index_options(kind: str) -> dict:
    """``MemoryStore`` arguments of an index kind of the bench: ``annoy``, or a graph kind of
    :func:`graph_options` without a construction breadth (the store's graph takes 4 x its
    degree)."""
    if kind in ("annoy", "ivf"):
        return {"index": kind}
    graph = graph_options(kind)
    if "expansion_add" in graph:
        raise ValueError(f"{kind!r}: a construction breadth is for index-only runs")
    options: dict = {"index": "hnsw"}
    if "connectivity" in graph:
        options["hnsw_connectivity"] = graph["connectivity"]
    if "dtype" in graph:
        options["hnsw_dtype"] = graph["dtype"]
    if "shards" in graph:
        options["hnsw_shards"] = graph["shards"]
    return options


def _time_vector_side(store, qvecs, depth: int) -> tuple[list[set[int]], list[float]]:
    """The store's vector side as a search runs it (the index's candidates, the scope
    filter, the re-scoring of a quantised graph): its top 10 of ``depth`` and its times."""
    got, times = [], []
    with store.core.read():
        for v in qvecs:
            s = time.perf_counter()
            hits = store.core.vector_search(v, depth)
            times.append(time.perf_counter() - s)
            got.append({m for m, _ in hits[:10]})
    return got, times


def _time_searches(store, queries, qvecs) -> list[float]:
    """The time of a search (k=10, vector given, no access recorded) of each query."""
    times = []
    for q, v in zip(queries, qvecs, strict=True):
        s = time.perf_counter()
        store.search(q, k=10, query_vector=v, mark_accessed=False)
        times.append(time.perf_counter() - s)
    return times


def _stored_sims(store, qvecs, got: list[set[int]]) -> list[list[float]]:
    """The exact cosines of each query's returned ids, from the stored float32 vectors."""
    with store.core.read():
        return [
            [c for _, c in store.core.exact_similarities(v, sorted(ids))]
            for v, ids in zip(qvecs, got, strict=True)
        ]


def run_store(
    embedder: str, n: int, index_kind: str, trees: list[int], search_k: list[int],
    efs: list[int], n_queries: int, cache_dir: Path, keyword_max_postings: int | None = None,
) -> dict:  # fmt: skip
    """One store configuration, in this process (called in a subprocess by main);
    ``keyword_max_postings`` None: the store's default keyword budget."""
    from memlab.embed import make_embedder
    from memlab.store import MemoryStore

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    load_start = os.getloadavg()[0]
    if embedder == "fastembed":
        texts = make_texts(max(n, MINILM_CORPUS), seed=max(n, MINILM_CORPUS))[:n]
    else:
        texts = make_texts(n, seed=n)
    queries = make_queries(n_queries, seed=7, texts=texts)
    embed_s = None
    if embedder == "fastembed":
        s0 = time.perf_counter()
        cache = cache_dir / f"minilm_{max(n, MINILM_CORPUS)}.npy"
        minilm_vectors(texts, cache)  # embeds the corpus unless it is cached
        embed_s = time.perf_counter() - s0
        emb = CachedEmbedder(make_embedder("fastembed", model_path=MINILM), texts, cache)
    else:
        emb = make_embedder("hashing")
    sample = make_texts(200, seed=n + 1)
    with tempfile.TemporaryDirectory(dir=cache_dir) as tmp:
        path = Path(tmp) / "bench.db"
        t0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
        options = index_options(index_kind)
        if keyword_max_postings is not None:
            options["keyword_max_postings"] = keyword_max_postings
        store = MemoryStore(path, embedder=emb, clock=lambda: t0, **options)
        start = time.perf_counter()
        decisions: dict[str, int] = dict.fromkeys(DECISIONS, 0)
        progress = os.environ.get("MEMLAB_BENCH_PROGRESS")
        step = 100_000 if n > 100_000 else n  # slices of one gated, batched ingest_many
        for i in range(0, n, step):
            # counted per slice: a list of every result would weigh in the peak RSS (about
            # 0.2 KB a text), which is the store's to report
            for r in store.ingest_many(texts[i : i + step], batch_size=1000):
                decisions[r.decision.value] += 1
            if progress:  # a line per slice: what a run cut short still tells
                with open(progress, "a") as fh:
                    el = time.perf_counter() - start
                    fh.write(json.dumps({"config": f"{embedder} {index_kind} {n}",
                        "ingested": i + step, "seconds": el, "per_s": (i + step) / el,
                        "rss_mb": _rss_mb(), "load": os.getloadavg()[0]}) + "\n")  # fmt: skip
        ingest_s = time.perf_counter() - start
        start = time.perf_counter()
        for t in sample:
            store.ingest(t)
        single_per_s = len(sample) / (time.perf_counter() - start)
        rebuilds_during_ingest = store.core.index.rebuilds
        build_s = None  # a full rebuild is timed up to REBUILD_MAX memories
        if n <= REBUILD_MAX:
            start = time.perf_counter()
            store.rebuild_index()
            build_s = time.perf_counter() - start
        store.close()
        start = time.perf_counter()
        store = MemoryStore(path, embedder=emb, clock=lambda: t0, **options)
        open_s = time.perf_counter() - start
        index = store.core.index
        last_load = index.last_load
        sizes = {
            p.name.split(".", 1)[1] if "." in p.name else "db": p.stat().st_size / 1e6
            for p in Path(tmp).iterdir()
            if p.is_file()
        }

        keywords = store.core.keywords  # the keyword index held in memory, built now
        with store.core.read():
            start = time.perf_counter()
            keywords.refresh(store.core)
            keyword_build_s = time.perf_counter() - start

        start = time.perf_counter()
        qvecs = [store.embedder.embed_query(q) for q in queries]
        embed_query_ms = (time.perf_counter() - start) / len(queries) * 1000
        qmat = np.stack(qvecs)
        with store.core.read():
            exact, exact_sims = exact_top10_sims(qmat, _db_blocks(store.core))

        curve = []
        # the search's vector side: its depth (candidates) as a search of k=10 asks for it
        depth = max(store.settings.candidates, 50)

        def point() -> dict:
            """Recall@10 and p50 of the store's vector side, and of the index query alone."""
            got, t_side = _time_vector_side(store, qvecs, depth)
            got_index, t_index = _time_queries(index, qvecs)
            got_index = [set(ids) for ids in got_index]
            ties = tie_recall_at_10(_stored_sims(store, qvecs, got), exact_sims)
            index_ties = tie_recall_at_10(_stored_sims(store, qvecs, got_index), exact_sims)
            return {"recall_at_10": recall_at_10(got, exact), "query_ms_p50": _pct(t_side, 50),
                    "recall_at_10_ties": ties,
                    "index_recall_at_10": recall_at_10(got_index, exact),
                    "index_recall_at_10_ties": index_ties,
                    "index_ms_p50": _pct(t_index, 50)}  # fmt: skip

        if index_kind == "annoy":
            for nt in trees:
                index.n_trees = nt
                s0 = time.perf_counter()
                store.rebuild_index()
                tb = time.perf_counter() - s0
                for sk in search_k:
                    index.search_k = sk
                    curve.append({"n_trees": nt, "search_k": sk, "build_s": tb, **point()})
            best = choose(curve, TARGETS["recall_at_10"])
            if index.n_trees != best["n_trees"]:
                index.n_trees = best["n_trees"]
                store.rebuild_index()
            index.search_k = best["search_k"]
        else:
            for ef in efs:
                index.search_k = ef
                named = {"ef": ef, "nprobe": ef} if index_kind == "ivf" else {"ef": ef}
                curve.append({**named, **point()})
            best = choose(curve, TARGETS["recall_at_10"])
            index.search_k = best["ef"]

        # warm-up: one pass of other queries than the timed ones (pages, code paths)
        for q in make_queries(n_queries, seed=8, texts=texts):
            store.search(q, query_vector=store.embedder.embed_query(q), mark_accessed=False)
        lat_no_embed, lat_serial, lat_embed, lat_marked, lat_fts = [], [], [], [], []
        search_rounds = []  # each round: every query as a search runs it, then serially
        for _ in range(SEARCH_ROUNDS):
            overlapped = _time_searches(store, queries, qvecs)
            store.core.overlap_search = False  # reference: the vector side after the keyword
            serial = _time_searches(store, queries, qvecs)  # side, in this thread
            store.core.overlap_search = True
            store.core.keywords = None  # reference: FTS5 ranks the keyword side
            fts_ranked = _time_searches(store, queries, qvecs)
            store.core.keywords = keywords
            lat_no_embed += overlapped
            lat_serial += serial
            lat_fts += fts_ranked
            search_rounds.append({"p50": _pct(overlapped, 50), "serial_p50": _pct(serial, 50),
                                  "fts5_p50": _pct(fts_ranked, 50)})  # fmt: skip
        for q in queries:
            s = time.perf_counter()
            store.search(q, k=10, mark_accessed=False)
            lat_embed.append(time.perf_counter() - s)
        keyword_t = []  # the keyword side alone (the vector side is the curve's query time), timed
        # before the searches that write (accesses) as the whole searches above
        keyword_fts_t, same_ranking = [], 0  # the same side ranked by FTS5 (the reference)
        with store.core.read():
            for q in queries:
                s = time.perf_counter()
                got = store.core.keyword_search(q, max(store.settings.candidates, 50))
                keyword_t.append(time.perf_counter() - s)
                store.core.keywords = None
                s = time.perf_counter()
                ref = store.core.keyword_search(q, max(store.settings.candidates, 50))
                keyword_fts_t.append(time.perf_counter() - s)
                store.core.keywords = keywords
                same_ranking += got == ref
        pairs = known_item_queries(texts, n_queries, seed=11)
        budget_curve = store_keyword_curve(store, queries, pairs)
        for q, v in zip(queries[: n_queries // 2], qvecs, strict=False):
            s = time.perf_counter()
            store.search(q, k=10, query_vector=v, mark_accessed=True)
            lat_marked.append(time.perf_counter() - s)
        rss_store = _rss_mb()

        # the keyword budget against no budget, on the same memories: known-item hit@10 and
        # search latency (the unbudgeted store is opened after the peak RSS was read)
        budget = store_budget = store.keyword_max_postings
        known_default, _ = known_item_hits(store, pairs)
        ef = index.search_k
        info = index.info()
        graph = {
            k: info[k]
            for k in ("connectivity", "dtype", "shards", "cells", "trained_on")
            if k in info
        }
        store.close()
        store = MemoryStore(
            path, embedder=emb, clock=lambda: t0,
            **{**options, "keyword_max_postings": None},
        )  # fmt: skip
        store.core.index.search_k = ef
        known_none, _ = known_item_hits(store, pairs)
        lat_none = _time_searches(store, queries, qvecs)
        keyword_budget = {
            "max_postings": budget,
            "known_item_hit_at_10": known_default,
            "known_item_hit_at_10_no_budget": known_none,
            "search_ms_no_budget": {"p50": _pct(lat_none, 50), "p95": _pct(lat_none, 95)},
            "keyword_side_curve": budget_curve,
        }

        # reference in the same run: exact numpy search over every vector held in one matrix
        # (loaded only now, after the store's peak RSS was read)
        with store.core.read():
            mat = np.concatenate([m for _, m in _db_blocks(store.core)])
        exact_t = []
        for v in qvecs[:50]:
            s = time.perf_counter()
            sims = mat @ v
            np.argpartition(-sims, 10)[:10]
            exact_t.append(time.perf_counter() - s)
        del mat
        store.close()
    return {
        "kind": "store", "embedder": embedder, "index": index_kind, "n": n, "graph": graph,
        "keyword_max_postings": store_budget,
        "decisions": decisions, "embed_once_s": embed_s,
        "ingest_s": ingest_s, "ingest_per_s": n / ingest_s, "single_ingest_per_s": single_per_s,
        "rebuilds_during_ingest": rebuilds_during_ingest, "index_build_s": build_s,
        "open_s": open_s, "open_index": last_load, "files_mb": sizes,
        "embed_query_ms": embed_query_ms, "keyword_budget": keyword_budget,
        "search_ms_no_embed": {"p50": _pct(lat_no_embed, 50), "p95": _pct(lat_no_embed, 95)},
        "search_ms_with_embed": {"p50": _pct(lat_embed, 50), "p95": _pct(lat_embed, 95)},
        "search_ms_marked": {"p50": _pct(lat_marked, 50), "p95": _pct(lat_marked, 95)},
        "keyword_search_ms": {"p50": _pct(keyword_t, 50), "p95": _pct(keyword_t, 95)},
        "keyword_search_fts5_ms": {"p50": _pct(keyword_fts_t, 50),
                                   "p95": _pct(keyword_fts_t, 95)},
        "keyword_index": {"build_s": keyword_build_s, "same_as_fts5": same_ranking,
                          "queries": len(queries), **keywords.info()},
        "search_ms_fts5": {"p50": _pct(lat_fts, 50), "p95": _pct(lat_fts, 95)},
        "search_ms_serial": {"p50": _pct(lat_serial, 50), "p95": _pct(lat_serial, 95)},
        "search_rounds": search_rounds,
        "exact_numpy_ms": {"p50": _pct(exact_t, 50), "p95": _pct(exact_t, 95)},
        "curve": curve, "chosen": best, "peak_rss_mb": rss_store,
        "peak_rss_mb_with_exact_reference": _rss_mb(),
        "loadavg_1min": [load_start, os.getloadavg()[0]],
    }  # fmt: skip


def run_index(
    n: int,
    efs: list[int],
    n_queries: int,
    cache_dir: Path,
    kind: str = "hnsw",
    depths: Sequence[int] = (INDEX_DEPTH,),
) -> dict:
    """The HNSW index alone at ``n`` hashed vectors (no SQLite): add rate, recall, latency.

    ``kind`` is a graph kind of :func:`graph_options`. The vectors are added a block of
    :data:`INDEX_ADD_BLOCK` at a time, each block one batched add of the graph (as the store's
    ingest chunks add them); the add rate counts those adds. A query takes the graph's
    :data:`INDEX_DEPTH` best candidates (timed), and its top 10 is theirs re-scored from the
    float32 vectors, as the store's vector side does (``recall_at_10``; the graph's own first
    10: ``recall_at_10_graph_order``). ``depths``: further numbers of candidates re-scored,
    each point's ``recall_at_10_by_depth`` (the graph queried once for the largest)."""
    from memlab.store.hnsw import HnswIndex

    from memlab.embed import make_embedder

    load_start = os.getloadavg()[0]
    emb = make_embedder("hashing")
    texts = make_texts(n, seed=n)
    queries = make_queries(n_queries, seed=7, texts=texts)
    vec_path = cache_dir / f"hashing_{n}.npy"
    vecs = np.lib.format.open_memmap(vec_path, mode="w+", dtype=np.float32, shape=(n, emb.dim))
    index = HnswIndex(emb.dim, emb.name, **graph_options(kind))
    embed_s = add_s = 0.0
    for i in range(0, n, 10_000):
        s0 = time.perf_counter()
        block = emb.embed_documents(texts[i : i + 10_000])
        embed_s += time.perf_counter() - s0
        vecs[i : i + len(block)] = block
        s0 = time.perf_counter()
        for j, v in enumerate(block):
            index.put(i + j + 1, v, i + j + 1)
            if (j + 1) % INDEX_ADD_BLOCK == 0 or j + 1 == len(block):
                index.committed()  # the graph's batched add of the block
        add_s += time.perf_counter() - s0
    vecs.flush()
    del texts
    qvecs = [emb.embed_query(q) for q in queries]
    curve = []
    got_by_ef = {}
    fetched = max(INDEX_DEPTH, *depths)
    for ef in efs:
        index.search_k = ef
        for v in qvecs[:5]:
            index.query(v, fetched)
        got, t = _time_queries(index, qvecs, fetched)
        got_by_ef[ef] = got
        curve.append({"ef": ef, "query_ms_p50": _pct(t, 50), "query_ms_p95": _pct(t, 95)})
    rss = _rss_mb()
    graph = {"connectivity": index.connectivity, "expansion_add": index.expansion_add,
             "dtype": index.dtype, "shards": index.shards}  # fmt: skip
    index.close()
    del index
    mm = np.load(vec_path, mmap_mode="r")
    qmat = np.stack(qvecs)
    exact, exact_sims = exact_top10_sims(
        qmat,
        ((np.arange(i, min(i + 20_000, n)) + 1, mm[i : i + 20_000]) for i in range(0, n, 20_000)),
    )

    def rescored(lists: list[list[int]]) -> tuple[list[set[int]], list[list[float]]]:
        """Each list's top 10 re-scored from the float32 vectors, and their cosines."""
        top10, sims = [], []
        for v, ids in zip(qvecs, lists, strict=True):
            ids_array = np.array(ids, dtype=np.int64)
            scores = mm[ids_array - 1] @ v
            order = np.argsort(-scores, kind="stable")[:10]
            top10.append(set(ids_array[order].tolist()))
            sims.append(scores[order].tolist())
        return top10, sims

    for c in curve:  # the graph's candidates re-scored from the float32 vectors, as the store
        lists = got_by_ef[c["ef"]]
        by_depth = {d: rescored([h[:d] for h in lists]) for d in {INDEX_DEPTH, *depths}}
        top10, sims = by_depth[INDEX_DEPTH]
        c["recall_at_10"] = recall_at_10(top10, exact)
        c["recall_at_10_ties"] = tie_recall_at_10(sims, exact_sims)
        c["recall_at_10_graph_order"] = recall_at_10([set(h[:10]) for h in lists], exact)
        c["recall_at_10_by_depth"] = {str(d): recall_at_10(by_depth[d][0], exact) for d in depths}
    exact_t = []
    for v in qvecs[:10]:  # exact search streamed from the memory-mapped matrix (page cache)
        s = time.perf_counter()
        sims = np.concatenate([mm[i : i + 100_000] @ v for i in range(0, n, 100_000)])
        np.argpartition(-sims, 10)[:10]
        exact_t.append(time.perf_counter() - s)
    vec_path.unlink()
    best = choose(curve, TARGETS["recall_at_10"])
    return {
        "kind": "index", "embedder": "hashing", "index": kind, "n": n,
        "graph": graph,
        "embed_per_s": n / embed_s, "add_per_s": n / add_s, "curve": curve, "chosen": best,
        "exact_numpy_ms": {"p50": _pct(exact_t, 50), "p95": _pct(exact_t, 95)},
        "peak_rss_mb": rss, "peak_rss_mb_with_exact_reference": _rss_mb(),
        "loadavg_1min": [load_start, os.getloadavg()[0]],
    }  # fmt: skip


def _num(x: float | None) -> str:
    return "not timed" if x is None else f"{x:.2f}"


def _label(r: dict) -> str:
    from memlab.store.fts import MAX_POSTINGS

    budget = r.get("keyword_max_postings", MAX_POSTINGS)
    graph = r.get("graph") or {}
    return (
        f"{r['embedder']} {r['index']} {r['n']:,}"
        + (f" ({graph['dtype']}, {graph['cells']:,} cells)" if "cells" in graph else "")
        + (
            f" (degree {graph['connectivity']}"
            + (f", breadth {graph['expansion_add']}" if "expansion_add" in graph else "")
            + f", {graph['dtype']}"
            + (f", {graph['shards']} shards" if graph.get("shards", 1) > 1 else "")
            + ")"
            if "connectivity" in graph
            else ""
        )
        + ("" if budget == MAX_POSTINGS else f" (keyword budget {budget})")
        + (" (index only)" if r["kind"] == "index" else "")
    )


def _setting(c: dict) -> str:
    if "nprobe" in c:
        return f"nprobe={c['nprobe']}"
    return f"ef={c['ef']}" if "ef" in c else f"trees={c['n_trees']} search_k={c['search_k']}"


def _markdown(report: dict) -> str:
    lines = [
        "# MemoryStore benchmark",
        "",
        f"Run {report['run_at']} on {report['machine']} ({report['cpus']} CPUs), "
        f"{report['total_s']:.0f} s in all, BLAS threads: {report['blas_threads']}. "
        "Produced by `experiments/bench_store.py`"
        + (" (--quick)" if report.get("quick") else "")
        + ". The 2 cores are shared with other sessions: the load column is the 1-minute load "
        "average at the start and end of each configuration.",
        "",
        "| embedder | index | n | ingest/s batched (single) | index build s | open s "
        "| search p50/p95 ms (vector given) | with embedding p50 | +testing effect p50 "
        "| exact numpy p50 ms | recall@10 (setting) | peak RSS MB | db / index MB | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in report["runs"]:
        c = r["chosen"]
        load = f"{r['loadavg_1min'][0]:.1f}-{r['loadavg_1min'][1]:.1f}"
        if r["kind"] == "index":
            lines.append(
                f"| {r['embedder']} | {r['index']} (index only) | {r['n']:,} "
                f"| {r['add_per_s']:.0f} adds/s (embed {r['embed_per_s']:.0f}/s) | - | - "
                f"| {c['query_ms_p50']:.2f} / {c['query_ms_p95']:.2f} (index query) | - | - "
                f"| {r['exact_numpy_ms']['p50']:.1f} | {c['recall_at_10']:.3f} ({_setting(c)}) "
                f"| {r['peak_rss_mb']:.0f} | - | {load} |"
            )
            continue
        f = r["files_mb"]
        idx_mb = sum(v for k, v in f.items() if k in ("db.annoy", "db.hnsw", "db.ivf"))
        db_mb = f.get("db", 0.0) + f.get("db-wal", 0.0)
        lines.append(
            f"| {r['embedder']} | {r['index']} | {r['n']:,} "
            f"| {r['ingest_per_s']:.0f} ({r['single_ingest_per_s']:.0f}) "
            f"| {_num(r['index_build_s'])} | {r['open_s']:.2f} "
            f"| {r['search_ms_no_embed']['p50']:.2f} / {r['search_ms_no_embed']['p95']:.2f} "
            f"| {r['search_ms_with_embed']['p50']:.2f} | {r['search_ms_marked']['p50']:.2f} "
            f"| {r['exact_numpy_ms']['p50']:.2f} | {c['recall_at_10']:.3f} ({_setting(c)}) "
            f"| {r['peak_rss_mb']:.0f} | {db_mb:.0f} / {idx_mb:.0f} | {load} |"
        )
    lines += [
        "",
        "## Recall@10 against exact search, by setting (query ms p50)",
        "",
        "Store rows: the store's vector side as a search runs it (the index's candidates, the "
        "scope filter, and the re-scoring of a quantised graph from the stored vectors: its top "
        "10 of 50); in brackets the index's own top 10 and query time, alone. Each recall is "
        "given twice, by id / with ann-benchmarks' allowance for ties (its `knn` recall: a "
        f"memory counts when its exact cosine is within {TIE_EPSILON:g} of the exact 10th's); "
        "the setting is chosen by the first, the stricter.",
        "",
    ]
    for r in report["runs"]:
        cells = ", ".join(
            f"{_setting(c)}: {c['recall_at_10']:.3f}"
            + (f" / {c['recall_at_10_ties']:.3f}" if "recall_at_10_ties" in c else "")
            + f" ({c['query_ms_p50']:.2f} ms"
            + (
                f"; index {c['index_recall_at_10']:.3f}"
                + (
                    f" / {c['index_recall_at_10_ties']:.3f}"
                    if "index_recall_at_10_ties" in c
                    else ""
                )
                + f", {c['index_ms_p50']:.2f} ms)"
                if "index_ms_p50" in c
                else ")"
            )
            + (
                " [re-scoring "
                + ", ".join(f"{d}: {v:.3f}" for d, v in c["recall_at_10_by_depth"].items())
                + "]"
                if len(c.get("recall_at_10_by_depth", {})) > 1
                else ""
            )
            for c in r["curve"]
        )
        lines.append(f"- {_label(r)}: {cells}")
    budgets = [r for r in report["runs"] if "keyword_budget" in r]
    if budgets:
        lines += [
            "",
            "## Keyword budget (the default `keyword_max_postings`) against no budget",
            "",
            "Known-item search: the verb, adjective and object of a stored text as the query, "
            "its text as the answer (hit@10), on the same memories, vector given.",
            "",
            "| run | budget | known-item hit@10 | without budget | search p50 ms | "
            "without budget p50 / p95 ms |",
            "|---|---|---|---|---|---|",
        ]
        for r in budgets:
            kb = r["keyword_budget"]
            none = kb["search_ms_no_budget"]
            lines.append(
                f"| {_label(r)} | {kb['max_postings']} | {kb['known_item_hit_at_10']:.3f} "
                f"| {kb['known_item_hit_at_10_no_budget']:.3f} "
                f"| {r['search_ms_no_embed']['p50']:.2f} "
                f"| {none['p50']:.2f} / {none['p95']:.2f} |"
            )
    curves = [r for r in budgets if "keyword_side_curve" in r["keyword_budget"]]
    if curves:
        lines += [
            "",
            "## The keyword side alone, by budget",
            "",
            "The FTS5 keyword side (no vector side, no fusion) at each `keyword_max_postings`: "
            "its p50 time over the bench queries; its top 10 against the unbudgeted top 10 of "
            "the same queries (recall@10, how far the budget moves BM25's own ranking); and its "
            "known-item hit@10 (the queries above).",
            "",
            "| run | budget | keyword side p50 ms | recall@10 vs no budget | known-item hit@10 |",
            "|---|---|---|---|---|",
        ]
        for r in curves:
            for c in r["keyword_budget"]["keyword_side_curve"]:
                recall = c["recall_at_10_vs_no_budget"]
                lines.append(
                    f"| {_label(r)} | {c['max_postings'] or 'none'} | {c['keyword_ms_p50']:.2f} "
                    f"| {'-' if recall is None else f'{recall:.3f}'} "
                    f"| {c['known_item_hit_at_10']:.3f} |"
                )
    stages = [r for r in report["runs"] if "keyword_search_ms" in r]
    if stages:
        lines += [
            "",
            "## Where a search's time goes (vector given, p50 ms)",
            "",
            "The keyword side (with the budget; ranked by the keyword index held in memory, "
            "and by FTS5 as the reference) and the vector side at the chosen setting "
            "(the index query, the scope filter and any re-scoring; the index query alone "
            "beside it), each timed alone; a search runs the index query in the core's worker "
            "thread beside the keyword side, then filters, fuses and reads the hits. The "
            "references in the same run: the two sides one after the other, and the keyword "
            "side ranked by FTS5.",
            "",
            "| run | keyword side (FTS5) | vector side (index query alone) | whole search "
            "| sides one after the other | keyword side ranked by FTS5 "
            "| keyword index: build s, rankings equal to FTS5's |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in stages:
            kw, ix = r["keyword_search_ms"]["p50"], r["chosen"]["query_ms_p50"]
            alone = r["chosen"].get("index_ms_p50")
            serial = r.get("search_ms_serial", {}).get("p50")
            kw_fts = r.get("keyword_search_fts5_ms", {}).get("p50")
            fts_search = r.get("search_ms_fts5", {}).get("p50")
            ki = r.get("keyword_index")
            built = (
                "-"
                if ki is None
                else f"{ki['build_s']:.2f} s, {ki['same_as_fts5']}/{ki['queries']}"
            )
            lines.append(
                f"| {_label(r)} | {kw:.2f} ({_num(kw_fts)}) | {ix:.2f} ({_num(alone)}) "
                f"| {r['search_ms_no_embed']['p50']:.2f} | {_num(serial)} | {_num(fts_search)} "
                f"| {built} |"
            )
        rounds = [r for r in stages if r.get("search_rounds")]
        if rounds:
            lines += [
                "",
                "The whole search's p50 pools its rounds (each a pass of the queries as a search "
                "runs them, then one pass with the two sides one after the other, then one with "
                "the keyword side ranked by FTS5); each round's p50, overlapped (serial; FTS5):",
                "",
            ]
            lines += [
                f"- {_label(r)}: "
                + ", ".join(
                    f"{x['p50']:.2f} ({x['serial_p50']:.2f}; {_num(x.get('fts5_p50'))})"
                    for x in r["search_rounds"]
                )
                for r in rounds
            ]
    lines += [
        "",
        "The setting used for the search latencies is the fastest of the grid reaching recall "
        "0.95 (else the best recall). Peak RSS is the configuration's own (its own subprocess; "
        "ru_maxrss read before the exact-search reference loads the vectors into one matrix). "
        "'index only' rows time the HNSW index alone (no SQLite, no gate, no keyword search): "
        "its add rate is not the store's ingest rate.",
        "",
        "## Targets",
        "",
    ]
    for k, v in report["targets_met"].items():
        lines.append(f"- {k}: {'met' if v else 'NOT met'}")
    lines += [
        "",
        "Gate decisions during ingest: "
        + "; ".join(f"{_label(r)}: {r['decisions']}" for r in report["runs"] if "decisions" in r),
    ]
    return "\n".join(lines) + "\n"


def targets_met(runs: list[dict]) -> dict[str, bool]:
    """Each target of the issue against the run that measures it (absent runs: not listed)."""
    out: dict[str, bool] = {}
    for r in runs:
        c, n = r["chosen"], r["n"]
        if r["embedder"] == "hashing" and n >= 1_000_000:
            p50 = c["query_ms_p50"] if r["kind"] == "index" else r["search_ms_no_embed"]["p50"]
            what = "index query" if r["kind"] == "index" else "search"
            out[f"{_label(r)}: {what} p50 {p50:.2f} ms <= 20"] = p50 <= 20
            out[f"{_label(r)}: recall@10 {c['recall_at_10']:.3f} >= 0.95"] = (
                c["recall_at_10"] >= 0.95
            )
            if r["kind"] == "index":  # the graph alone: not the store's RSS, not an ingest
                continue
            out[f"{_label(r)}: peak RSS {r['peak_rss_mb']:.0f} MB <= 2000"] = (
                r["peak_rss_mb"] <= 2000
            )
            rate = r["ingest_per_s"]
            out[f"{_label(r)}: batched ingest {rate:.0f}/s >= 2000"] = rate >= 2000
        if r["embedder"] == "fastembed" and n == 100_000:
            p50 = r["search_ms_no_embed"]["p50"]
            out[f"{_label(r)}: search p50 {p50:.2f} ms <= 5"] = p50 <= 5
            out[f"{_label(r)}: recall@10 {c['recall_at_10']:.3f} >= 0.95"] = (
                c["recall_at_10"] >= 0.95
            )
            out[f"{_label(r)}: peak RSS {r['peak_rss_mb']:.0f} MB <= 800"] = r["peak_rss_mb"] <= 800
    return out


def plot_curves(report: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for r in report["runs"]:
        c = sorted(r["curve"], key=lambda c: c["query_ms_p50"])
        ax.plot(
            [x["query_ms_p50"] for x in c], [x["recall_at_10"] for x in c], "o-", label=_label(r)
        )
    ax.axhline(TARGETS["recall_at_10"], color="grey", ls=":")
    ax.set_xscale("log")
    ax.set_xlabel("vector query p50 (ms)")
    ax.set_ylabel("recall@10 vs exact")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[1000, 10_000, 100_000])
    parser.add_argument("--indexes", nargs="+", default=["annoy", "hnsw"])
    parser.add_argument("--minilm-sizes", type=int, nargs="*", default=[100_000])
    parser.add_argument("--index-only-sizes", type=int, nargs="*", default=[1_000_000])
    parser.add_argument(
        "--index-only-kinds", nargs="+", default=["hnsw"], help="graph kinds of the index-only runs"
    )
    parser.add_argument(
        "--index-depths", type=int, nargs="+", default=[INDEX_DEPTH],
        help="candidates re-scored in the index-only runs (recall by depth)",
    )  # fmt: skip
    parser.add_argument("--trees", type=int, nargs="+", default=[25, 50, 100])
    parser.add_argument("--search-k", type=int, nargs="+", default=[2000, 10000, 40000, 100000])
    parser.add_argument("--ef", type=int, nargs="+", default=[32, 64, 128, 256, 512, 1024, 2048])
    parser.add_argument(
        "--probes", type=int, nargs="+", default=[16, 32, 64, 128, 192, 256, 384],
        help="cells scanned by the ivf index (its curve)",
    )  # fmt: skip
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="small sizes and grids (a smoke run)")
    parser.add_argument("--blas-threads", type=int, default=1)
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--one", nargs=4, metavar=("KIND", "EMBEDDER", "INDEX", "N"),
                        help=argparse.SUPPRESS)  # fmt: skip
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_store")
    parser.add_argument(
        "--keyword-max-postings", type=int, default=None, help="the stores' keyword budget"
    )
    args = parser.parse_args()
    if args.quick:
        args.sizes, args.minilm_sizes, args.index_only_sizes = [500, 2000], [], [3000]
        args.trees, args.search_k, args.ef, args.queries = [10, 50], [500, 5000], [32, 256], 30
        args.probes = [4, 16]
    cache = args.cache_dir or Path(tempfile.gettempdir()) / "memlab_bench_store"
    cache.mkdir(parents=True, exist_ok=True)
    if args.one:
        kind, embedder, index, n = args.one
        if kind == "index":
            res = run_index(int(n), args.ef, args.queries, cache, index, args.index_depths)
        else:
            breadths = args.probes if index == "ivf" else args.ef
            res = run_store(
                embedder, int(n), index, args.trees, args.search_k, breadths, args.queries, cache,
                args.keyword_max_postings,
            )  # fmt: skip
        print(json.dumps(res))
        return

    configs = [("store", "hashing", ix, n) for n in args.sizes for ix in args.indexes]
    if MINILM.is_dir():
        configs += [("store", "fastembed", ix, n) for n in args.minilm_sizes for ix in args.indexes]
    elif args.minilm_sizes:
        print(f"MiniLM runs skipped: {MINILM} not found")
    configs += [
        ("index", "hashing", ix, n) for n in args.index_only_sizes for ix in args.index_only_kinds
    ]
    child_env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    if args.blas_threads:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            child_env[var] = str(args.blas_threads)
    print(f"load average at start: {os.getloadavg()}", flush=True)
    start = time.perf_counter()
    runs = []
    grid = ["--trees", *map(str, args.trees), "--search-k", *map(str, args.search_k),
            "--ef", *map(str, args.ef), "--probes", *map(str, args.probes),
            "--queries", str(args.queries),
            "--cache-dir", str(cache),
            "--index-depths", *map(str, args.index_depths)]  # fmt: skip
    if args.keyword_max_postings is not None:
        grid += ["--keyword-max-postings", str(args.keyword_max_postings)]
    for kind, embedder, index, n in configs:
        cmd = [sys.executable, __file__, "--one", kind, embedder, index, str(n), *grid]
        env = child_env
        if index == "ivf":  # faiss's OpenMP threads are the index's own, as usearch's are
            env = {k: v for k, v in child_env.items() if k != "OMP_NUM_THREADS"}
        out = subprocess.run(cmd, capture_output=True, text=True, env=env)
        if out.returncode:
            print(f"{kind} {embedder} {index} {n:,} failed:\n{out.stderr[-3000:]}", flush=True)
            continue
        res = json.loads(out.stdout.strip().splitlines()[-1])
        runs.append(res)
        _write(args, runs, start)  # after each configuration: a cut-short run keeps its results
        c = res["chosen"]
        rate = res.get("ingest_per_s", res.get("add_per_s"))
        p50 = res["search_ms_no_embed"]["p50"] if kind == "store" else c["query_ms_p50"]
        print(
            f"{_label(res):40s} ingest/add {rate:7.0f}/s  search p50 {p50:.2f} ms  "
            f"exact {res['exact_numpy_ms']['p50']:.2f} ms  recall@10 {c['recall_at_10']:.3f} "
            f"({_setting(c)})  peak RSS {res['peak_rss_mb']:.0f} MB  "
            f"load {res['loadavg_1min'][0]:.1f}-{res['loadavg_1min'][1]:.1f}",
            flush=True,
        )
    print(_markdown(_write(args, runs, start)))


def _write(args: argparse.Namespace, runs: list[dict], start: float) -> dict:
    """Write the report of the configurations run so far (json, md, recall plot)."""
    report = {
        "run_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": platform.platform(),
        "cpus": os.cpu_count(),
        "blas_threads": args.blas_threads or "default",
        "quick": args.quick,
        "configurations_run": len(runs),
        "total_s": time.perf_counter() - start,
        "targets": TARGETS,
        "reference": REFERENCE,
        "targets_met": targets_met(runs),
        "runs": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(report, indent=1))
    args.out.with_suffix(".md").write_text(_markdown(report))
    if runs:
        plot_curves(report, args.out.with_name(args.out.name + "_recall.png"))
    return report


if __name__ == "__main__":
    main()
