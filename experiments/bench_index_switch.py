"""Where the store's vector index should switch from exact search to annoy trees.

For each size, hashed 384-d vectors of seeded texts are searched by memlab.store.index's
ExactIndex (one float32 matrix product, the baseline) and AnnoyIndex with trees over every vector
(the store's default trees; hits with exact cosines) at several search_k: query time p50 of
single queries, k=10, and annoy's recall@10 against exact. The switch point is the smallest size
at which some search_k gives annoy recall@10 >= 0.95 at a lower p50 than exact search.
Writes experiments/results/bench_index_switch.json + .md.

    python experiments/bench_index_switch.py [--sizes 2000 10000 30000 100000] [--queries 100]
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np

from memlab.embed import HashingEmbedder
from memlab.store.index import AnnoyIndex, ExactIndex, IndexOptions

OUT = Path(__file__).parent / "results" / "bench_index_switch"
#: annoy search_k values measured (-1: annoy's default, n_trees * k).
SEARCH_K = [-1, 5_000, 20_000, 80_000]


def texts(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(20_000)]
    return [" ".join(rng.choice(words, size=10)) for _ in range(n)]


def p50_ms(index: ExactIndex | AnnoyIndex, queries: np.ndarray) -> tuple[float, list[list[int]]]:
    times, found = [], []
    for q in queries:
        t = time.perf_counter()
        ids, _ = index.query(q, 10)
        times.append(time.perf_counter() - t)
        found.append(ids.tolist())
    return 1000 * float(np.median(times)), found


def run(sizes: list[int], n_queries: int) -> dict:
    emb = HashingEmbedder()
    opts = IndexOptions()
    rows = []
    for n in sizes:
        vecs = emb.embed_documents(texts(n, seed=n)).astype(np.float32)
        queries = emb.embed_documents(texts(n_queries, seed=10**9 + n)).astype(np.float32)
        ids = np.arange(1, n + 1, dtype=np.int64)
        exact = ExactIndex(emb.dim)
        exact.add(ids, vecs)
        annoy = AnnoyIndex(emb.dim, opts.n_trees, opts.search_k, switch_at=1)
        t = time.perf_counter()
        annoy.add(ids, vecs)
        annoy.maintain(lambda ids=ids, vecs=vecs: [(ids, vecs)])
        build_s = time.perf_counter() - t
        exact_ms, truth = p50_ms(exact, queries)
        for search_k in SEARCH_K:
            annoy.search_k = search_k
            annoy_ms, got = p50_ms(annoy, queries)
            hit = [len(set(a) & set(b)) / 10 for a, b in zip(truth, got, strict=True)]
            rows.append(
                {
                    "n": n,
                    "search_k": search_k,
                    "exact_p50_ms": exact_ms,
                    "annoy_p50_ms": annoy_ms,
                    "annoy_recall@10": float(np.mean(hit)),
                    "annoy_build_s": build_s,
                }  # fmt: skip
            )
            print(rows[-1], flush=True)
    good = [
        r for r in rows if r["annoy_recall@10"] >= 0.95 and r["annoy_p50_ms"] < r["exact_p50_ms"]
    ]
    return {
        "what": "single-query p50 (k=10), exact float32 matrix product vs annoy trees",
        "embedder": emb.name,
        "dim": emb.dim,
        "n_trees": opts.n_trees,
        "search_k": opts.search_k,
        "queries": n_queries,
        "machine": f"{platform.machine()} {platform.python_version()}",
        "rows": rows,
        "switch_at": min((r["n"] for r in good), default=None),
    }


def write(result: dict) -> None:
    OUT.parent.mkdir(exist_ok=True)
    OUT.with_suffix(".json").write_text(json.dumps(result, indent=1))
    lines = [
        "# Exact search vs annoy: where the index switches",
        "",
        f"{result['what']}; {result['embedder']} ({result['dim']}-d), "
        f"{result['n_trees']} trees, search_k {result['search_k']}, {result['queries']} queries.",
        "",
        "| vectors | search_k | exact p50 ms | annoy p50 ms | annoy recall@10 | annoy build s |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['n']:,} | {r['search_k']} | {r['exact_p50_ms']:.2f} | {r['annoy_p50_ms']:.2f} "
            f"| {r['annoy_recall@10']:.3f} | {r['annoy_build_s']:.1f} |"
        )
    lines += [
        "",
        f"Smallest size where annoy at recall@10 >= 0.95 beats exact: {result['switch_at']}",
    ]
    OUT.with_suffix(".md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 10_000, 30_000, 100_000])
    ap.add_argument("--queries", type=int, default=100)
    args = ap.parse_args()
    write(run(args.sizes, args.queries))
