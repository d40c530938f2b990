"""Would a 4-bit fast-scan index find ingest's gate candidates cheaper than the store's 8-bit
cells, and as well?

At 980k hashed memories the cells' query is the largest single part of a gated ingest's time
(``bench_ingest_stages.py``: "candidates" holds it with the re-scoring reads). faiss's
fast-scan product quantiser (``IndexIVFPQFastScan``: 4-bit codes scanned in SIMD registers)
scans a cell's codes several times faster than 8-bit scalar codes; its coarser scores need a
re-ranking of a shortlist by finer codes (``IndexRefine`` with 8-bit codes of every vector).
This probe measures both on the same vectors and queries, in one run:

- the reference: the store's own cells file (``<db>.ivf``: 8-bit codes, the store's centroids)
  queried as ingest queries it (``IvfIndex.CANDIDATE_EF`` cells, ``N_CANDIDATES`` hits);
- fast-scan with the same centroids, ``M`` 4-bit sub-quantisers, re-ranked by 8-bit codes from
  ``k_factor`` x ``N_CANDIDATES`` hits.

For each: ms per 1,000 queries with faiss's two threads and with one (min-max of three
passes), how many of each query's exact best 8 of the whole store are among its hits (the
candidates' recall; exact search by numpy), and for how many queries the best 8 of its first
16 hits by exact cosine (what ingest judges) equal the reference's. The base store is the
one ``bench_ingest_stages.py`` builds and caches (the 1M bench corpus, gated ``ingest_many``);
the queries are the corpus's next texts.

Run: ``python experiments/probe_ivf_fastscan.py [--base 980000] [--queries 2000]
[--cache-dir DIR]``. Writes experiments/results/probe_ivf_fastscan.json and .md.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_ingest_stages import (  # noqa: E402
    DEFAULT_CACHE,
    cached_base,
    run_record,
    write_results,
)

from memlab.embed import make_embedder  # noqa: E402
from memlab.store.ingest import N_CANDIDATES, N_JUDGED  # noqa: E402
from memlab.store.ivf import IvfIndex  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "experiments" / "results"
#: Sub-quantisers of the fast-scan codes (48: 24 bytes a vector; 96: 48) and re-ranking depths.
FAST_SCAN_M = (48, 96)
K_FACTORS = (4, 8)
#: Vectors the product quantiser is trained on (at most; a smaller store: all of them).
TRAIN_SAMPLE = 200_000
#: The hits of a text ingest re-scores up front (``N_RESCORED``).
FIRST = 2 * N_JUDGED


def stored_vectors(db: Path) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    """Every memory's id and unit vector, by id, read from the store's database."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    ids, blobs = [], []
    for memory_id, blob in con.execute("SELECT id, embedding FROM memories ORDER BY id"):
        ids.append(memory_id)
        blobs.append(blob)
    con.close()
    x = np.frombuffer(b"".join(blobs), dtype="<f4").reshape(len(blobs), -1).astype(np.float32)
    x /= np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)
    return np.asarray(ids, dtype=np.int64), x


def exact_best(q: NDArray[np.float32], x: NDArray[np.float32], k: int) -> NDArray[np.int64]:
    """Row positions of each query's ``k`` most similar vectors (unordered), by numpy."""
    best = np.zeros((len(q), 0), dtype=np.int64)
    best_sims = np.zeros((len(q), 0), dtype=np.float32)
    for start in range(0, len(x), 50_000):
        sims = q @ x[start : start + 50_000].T
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k]
        cand = np.concatenate([best, top + start], axis=1)
        cand_sims = np.concatenate([best_sims, np.take_along_axis(sims, top, axis=1)], axis=1)
        keep = np.argpartition(-cand_sims, k - 1, axis=1)[:, :k]
        best = np.take_along_axis(cand, keep, axis=1)
        best_sims = np.take_along_axis(cand_sims, keep, axis=1)
    return best


def timed(fn: Callable[[], Any], passes: int = 3) -> tuple[Any, float, float]:
    """``fn()``'s result and the fastest and slowest of ``passes`` calls, in seconds."""
    seconds, out = [], None
    for _ in range(passes):
        start = time.perf_counter()
        out = fn()
        seconds.append(time.perf_counter() - start)
    return out, min(seconds), max(seconds)


def judged(positions: NDArray[np.int64], sims: NDArray[np.float32]) -> list[frozenset[int]]:
    """Per query, the best :data:`N_JUDGED` of its first :data:`FIRST` hits by exact cosine."""
    head, head_sims = positions[:, :FIRST], np.where(positions[:, :FIRST] >= 0, sims[:, :FIRST], -2)
    order = np.argsort(-head_sims, axis=1, kind="stable")[:, :N_JUDGED]
    return [frozenset(row.tolist()) for row in np.take_along_axis(head, order, axis=1)]


def score(
    positions: NDArray[np.int64],
    q: NDArray[np.float32],
    x: NDArray[np.float32],
    truth: NDArray[np.int64],
) -> tuple[float, list[frozenset[int]]]:
    """(mean share of the exact best 8 among the hits, the judged best 8 of each query)."""
    shares = [
        len(set(t.tolist()) & set(p.tolist())) / len(t)
        for t, p in zip(truth, positions, strict=True)
    ]
    sims = np.einsum("ij,ikj->ik", q, x[np.maximum(positions, 0)])
    return float(np.mean(shares)), judged(positions, sims)


def main() -> None:
    import faiss

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=int, default=980_000)
    parser.add_argument("--queries", type=int, default=2000)
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=RESULTS / "probe_ivf_fastscan")
    args = parser.parse_args()
    start = time.perf_counter()
    base, _, texts = cached_base(args.base, args.cache_dir or DEFAULT_CACHE, args.queries)
    ids, x = stored_vectors(base / "bench.db")
    position = np.full(int(ids.max()) + 1, -1, dtype=np.int64)
    position[ids] = np.arange(len(ids))
    q = make_embedder("hashing").embed_documents(texts).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    truth = exact_best(q, x, N_JUDGED)
    per_1000 = 1000 / len(q) * 1e3  # seconds of all the queries -> ms per 1,000

    rows: list[dict[str, Any]] = []
    cells = faiss.read_index(str(base / "bench.db.ivf"))
    cells.nprobe = IvfIndex.CANDIDATE_EF
    times = {}
    for threads in (2, 1):
        faiss.omp_set_num_threads(threads)
        (_, keys), lo, hi = timed(lambda: cells.search(q, N_CANDIDATES))
        times[threads] = [lo * per_1000, hi * per_1000]
    faiss.omp_set_num_threads(2)
    reference = np.where(keys >= 0, position[np.maximum(keys, 0)], -1)
    found, reference_judged = score(reference, q, x, truth)
    rows.append({"index": "store's cells (8-bit)", "code_bytes": cells.code_size,
                 "ms_2_threads": times[2], "ms_1_thread": times[1], "exact_best_8_found": found,
                 "judged_equal": 1.0})  # fmt: skip

    quantizer = faiss.downcast_index(cells.quantizer)
    centroids = quantizer.reconstruct_n(0, quantizer.ntotal)
    size = min(len(x), TRAIN_SAMPLE)
    sample = x[np.sort(np.random.default_rng(1).choice(len(x), size, replace=False))]
    refine = faiss.IndexScalarQuantizer(
        x.shape[1], faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT
    )
    refine.train(sample)
    refine.add(x)
    for m in FAST_SCAN_M:
        coarse = faiss.IndexFlatIP(x.shape[1])
        coarse.add(centroids)
        fast = faiss.IndexIVFPQFastScan(
            coarse, x.shape[1], cells.nlist, m, 4, faiss.METRIC_INNER_PRODUCT
        )
        fast.train(sample)
        fast.add(x)
        for k_factor in K_FACTORS:
            index = faiss.IndexRefine(fast, refine)
            params = faiss.IndexRefineSearchParameters(
                k_factor=k_factor,
                base_index_params=faiss.SearchParametersIVF(nprobe=IvfIndex.CANDIDATE_EF),
            )
            times = {}
            for threads in (2, 1):
                faiss.omp_set_num_threads(threads)
                (_, hits), lo, hi = timed(
                    lambda i=index, p=params: i.search(q, N_CANDIDATES, params=p)
                )
                times[threads] = [lo * per_1000, hi * per_1000]
            faiss.omp_set_num_threads(2)
            found, mine = score(hits, q, x, truth)
            equal = float(np.mean([a == b for a, b in zip(mine, reference_judged, strict=True)]))
            name = f"fast-scan PQ{m}x4, re-ranked from {k_factor} x {N_CANDIDATES} by 8-bit codes"
            rows.append({"index": name,
                         "code_bytes": fast.code_size, "ms_2_threads": times[2],
                         "ms_1_thread": times[1], "exact_best_8_found": found,
                         "judged_equal": equal})  # fmt: skip
            print(rows[-1], flush=True)
    out = {
        **run_record(),
        "faiss": faiss.__version__,
        "base_texts": args.base,
        "memories": len(ids),
        "queries": len(q),
        "cells": cells.nlist,
        "nprobe": IvfIndex.CANDIDATE_EF,
        "rows": rows,
        "total_s": time.perf_counter() - start,
    }
    write_results(out, args.out, write_markdown)


def write_markdown(out: dict[str, Any], path: Path) -> None:
    ref = out["rows"][0]
    lines = [
        "# Ingest's gate candidates from 4-bit fast-scan codes against the store's 8-bit cells",
        "",
        f"Run {out['run_at']} on {out['machine']} ({out['cpus']} CPUs), faiss {out['faiss']}, "
        f"{out['total_s']:.0f} s in all. Produced by `experiments/probe_ivf_fastscan.py`. The "
        f"store of `bench_ingest_stages.py` after {out['base_texts']:,} texts of the 1M bench "
        f"corpus ({out['memories']:,} memories, {out['cells']:,} cells); {out['queries']:,} "
        f"queries: the corpus's next texts, {out['nprobe']} cells and {N_CANDIDATES} hits each "
        "as ingest asks. Times: ms per 1,000 queries, fastest-slowest of three passes. "
        "'Exact best 8 found': the share of each query's 8 most similar memories of the whole "
        "store (numpy) among its hits. 'Judged equal': the share of queries whose best 8 of "
        f"their first {FIRST} hits by exact cosine (what ingest judges) equal the store's cells'.",
        "",
        "| index | bytes a vector | ms, 2 threads | ms, 1 thread | exact best 8 found "
        "| judged equal |",
        "|---|---|---|---|---|---|",
    ]
    for r in out["rows"]:
        lines.append(
            f"| {r['index']} | {r['code_bytes']} | {r['ms_2_threads'][0]:.0f}-"
            f"{r['ms_2_threads'][1]:.0f} | {r['ms_1_thread'][0]:.0f}-{r['ms_1_thread'][1]:.0f} | "
            f"{r['exact_best_8_found']:.3f} | {r['judged_equal']:.3f} |"
        )
    best = min(out["rows"][1:], key=lambda r: (r["judged_equal"] < 0.97, r["ms_2_threads"][0]))
    saved = (ref["ms_2_threads"][0] - best["ms_2_threads"][0]) / 1000
    lines += [
        "",
        "## Reading",
        "",
        f"- The fastest fast-scan setting whose judged candidates equal the cells' for at least "
        f"97 % of the queries, if any ({best['index']}: {best['judged_equal']:.3f}), saves "
        f"{saved:.3f} ms a text against the cells' query with two threads "
        f"({ref['ms_2_threads'][0]:.0f} against {best['ms_2_threads'][0]:.0f} ms per 1,000).",
        "- It would change some texts' candidates, so some decisions, and faiss's `IndexRefine` "
        "does not remove vectors by id, which the store needs when a memory's text changes "
        "or it is purged.",
    ]
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
