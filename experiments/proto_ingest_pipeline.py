"""A prototype of a pipelined ingest on two processes, against the store's own ingest.

One gated ingest uses one core; the second core could take part of a text's work only as a
pipeline. This prototype (not the store's code) tries the split that leaves each side about
half of a text's time at 980k: a helper process (spawned; its own store connection and its
own copy of the IVF cells) embeds the texts of chunk k+1, queries the cells and reads and
re-scores their candidates (``StoreCore.vector_candidates``, as ingest asks), while this
process judges and writes chunk k (the store's own chunk step, ``ingest._ingest_chunk``, given
the helper's candidates). The helper's snapshot of the store does not hold chunk k's memories,
so each text of chunk k+1 also gets the best 8 of those by exact similarity; rows chunk k
changed are read again. It reuses the store's private chunk step because the point is to
measure the split, not to build it.

Both run from a fresh copy of the base store of ``bench_ingest_stages.py`` (gated
``ingest_many`` of the 1M bench corpus, IVF cells), ``--texts`` texts after 1,000 untimed
ones, the two alternating for ``--rounds``. The helper's start-up (its imports, opening the
store, a first query) happens before the clock starts. Reported: texts/s, the seconds this
process waited for the helper, and whether every result (decision, rule, similarity to 6
decimals, memory, nearest) equals the store's own ingest's.

Run: ``python experiments/proto_ingest_pipeline.py [--base 200000] [--texts 6000]
[--rounds 3] [--cache-dir DIR]``. Writes experiments/results/proto_ingest_pipeline.json and
.md.
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing as mp
import os
import shutil
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

RESULTS = Path(__file__).resolve().parents[1] / "experiments" / "results"
#: Texts ingested first, untimed, and the chunk size (the bench's batch).
CHUNK = 1000
#: The columns of a candidate's row the gate reads (as ingest asks).
COLUMNS = "id, status, project, content, entity"


def helper(path: Path, conn: Any, threads: int) -> None:
    """The helper process: for each list of texts received, its vectors and candidates
    (faiss with ``threads`` OpenMP threads)."""
    import faiss
    from bench_ingest_stages import open_store

    from memlab.store.ingest import N_CANDIDATES, N_JUDGED

    faiss.omp_set_num_threads(threads)
    store = open_store(path)
    core = store.core
    while True:
        texts = conn.recv()
        if texts is None:
            break
        vectors = core.embed(texts)
        with core.read():
            core.refresh_index()  # the chunks committed so far
            found = core.vector_candidates(
                vectors, N_CANDIDATES, columns=COLUMNS, rescore=2 * N_JUDGED, near=N_JUDGED
            )
        rows = {m: {k: r[k] for k in r.keys()} for m, r in found.rows.items()}
        conn.send((vectors, found.scored, rows, found.unscored))
    store.close()


def digest(results: list[Any]) -> str:
    """A digest of every result (decision, rule, similarity to 6 decimals, memory, nearest)."""
    h = hashlib.blake2b(digest_size=16)
    for r in results:
        sim = "" if r.similarity is None else f"{r.similarity:.6f}"
        h.update(f"{r.decision.value}|{r.rule}|{sim}|{r.memory_id}|{r.nearest_id}\n".encode())
    return h.hexdigest()


def pipelined(store: Any, texts: list[str], conn: Any) -> tuple[list[Any], float]:
    """Ingest ``texts`` with the helper at ``conn``; (results, seconds waited for it)."""
    from memlab.store import ingest, lifecycle
    from memlab.store.core import CandidateLists
    from memlab.store.ingest import N_JUDGED
    from memlab.store.store import MemoryStore

    core = store.core
    at = core.now(None).timestamp()
    prepared = ingest.prepare(texts, dict(MemoryStore.ingest_defaults()), store.secrets)
    chunks = [prepared[i : i + CHUNK] for i in range(0, len(prepared), CHUNK)]
    results: list[Any] = []
    waited = 0.0
    conn.send([p.text for p in chunks[0]])
    before_ids = np.zeros(0, dtype=np.int64)
    before_vectors = np.zeros((0, core.index.dim), dtype=np.float32)
    touched: set[int] = set()
    for k, chunk in enumerate(chunks):
        start = time.perf_counter()
        vectors, scored, rows, unscored = conn.recv()
        waited += time.perf_counter() - start
        if k + 1 < len(chunks):
            conn.send([p.text for p in chunks[k + 1]])
        if len(before_ids):  # the chunk before's memories, not in the helper's snapshot
            sims = vectors @ before_vectors.T
            best = np.argsort(-sims, axis=1, kind="stable")[:, :N_JUDGED]
            for i in range(len(chunk)):
                merged = dict(scored[i])
                merged.update((int(before_ids[j]), float(sims[i, j])) for j in best[i])
                scored[i] = sorted(merged.items(), key=lambda kv: -kv[1])
        for memory_id in touched:  # read again: the chunk before may have changed them
            rows.pop(memory_id, None)
        found = CandidateLists(scored, rows, unscored)
        core.vector_candidates = lambda *args, given=found, **kwargs: given
        try:
            with core.write():
                core.refresh_index()
                tags = lifecycle.active_tags(core, at)
                out = ingest._ingest_chunk(core, store.gate, chunk, vectors, at, tags)
        finally:
            del core.vector_candidates
        core.maintain_index()
        results.extend(out)
        new = [i for i, r in enumerate(out) if r.decision.value != "reinforce"]
        before_ids = np.array([out[i].memory_id for i in new], dtype=np.int64)
        before_vectors = vectors[new]
        touched = {r.memory_id for r in out} | {r.nearest_id for r in out if r.nearest_id}
    return results, waited


def run(
    mode: str, base: Path, work: Path, texts: list[str], helper_threads: int = 1
) -> dict[str, Any]:
    """One ingest of ``texts`` (after ``CHUNK`` untimed) into a fresh copy of ``base``."""
    from bench_ingest_stages import fresh_copy

    store = fresh_copy(base, work)
    store.ingest_many(texts[:CHUNK], batch_size=CHUNK)
    proc = conn = None
    if mode == "pipelined":
        ctx = mp.get_context("spawn")  # faiss's OpenMP pool does not survive a fork
        conn, there = ctx.Pipe()
        proc = ctx.Process(target=helper, args=(work / "bench.db", there, helper_threads))
        proc.start()
        conn.send(["warm up"])
        conn.recv()
    load = os.getloadavg()[0]
    start = time.perf_counter()
    waited = 0.0
    if conn is None:
        results = store.ingest_many(texts[CHUNK:], batch_size=CHUNK)
    else:
        results, waited = pipelined(store, texts[CHUNK:], conn)
    seconds = time.perf_counter() - start
    if conn is not None and proc is not None:
        conn.send(None)
        proc.join()
    store.close()
    shutil.rmtree(work, ignore_errors=True)
    n = len(texts) - CHUNK
    return {"mode": mode, "per_s": n / seconds, "seconds": seconds, "waited_s": waited,
            "decisions": dict(Counter(r.decision.value for r in results)),
            "digest": digest(results), "load": [load, os.getloadavg()[0]]}  # fmt: skip


def main() -> None:
    from bench_ingest_stages import DEFAULT_CACHE, cached_base, run_record, write_results

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=int, default=200_000)
    parser.add_argument("--texts", type=int, default=6000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=RESULTS / "proto_ingest_pipeline")
    parser.add_argument("--helper-threads", type=int, default=1)
    args = parser.parse_args()
    start = time.perf_counter()
    cache = args.cache_dir or DEFAULT_CACHE
    base, _, texts = cached_base(args.base, cache, CHUNK + args.texts)
    runs = []
    for round_ in range(1, args.rounds + 1):
        for mode in ("pipelined", "store's ingest"):
            r = run(mode, base, cache / "pipeline_work", texts, args.helper_threads)
            r["round"] = round_
            runs.append(r)
            print(f"{mode} (round {round_}): {r['per_s']:.0f}/s, waited {r['waited_s']:.2f} s",
                  flush=True)  # fmt: skip
    ratios = [
        runs[i]["per_s"] / runs[i + 1]["per_s"] for i in range(0, len(runs), 2)
    ]  # pipelined / store's ingest, per round
    out = {
        **run_record(),
        "base": args.base,
        "texts": args.texts,
        "rounds": args.rounds,
        "helper_threads": args.helper_threads,
        "runs": runs,
        "ratios": ratios,
        "median_ratio": statistics.median(ratios),
        "same_results": all(r["digest"] == runs[1]["digest"] for r in runs),
        "total_s": time.perf_counter() - start,
    }
    write_results(out, args.out, write_markdown)


def write_markdown(out: dict[str, Any], path: Path) -> None:
    lines = [
        "# A pipelined ingest on two processes (prototype) against the store's own ingest",
        "",
        f"Run {out['run_at']} on {out['machine']} ({out['cpus']} CPUs), {out['total_s']:.0f} s "
        "in all. Produced by `experiments/proto_ingest_pipeline.py`. "
        f"{out['texts']:,} texts of the 1M bench corpus (after {CHUNK:,} untimed) into a fresh "
        f"copy of a store of {out['base']:,} hashed memories (IVF cells), chunks of "
        f"{CHUNK:,}, the two alternating for {out['rounds']} rounds; faiss in the helper with "
        f"{out.get('helper_threads', 1)} OpenMP thread(s). The 2 cores are shared "
        "with other sessions (load: 1-minute average).",
        "",
        "| round | ingest | texts/s | waited for the helper, s | decisions | load |",
        "|---|---|---|---|---|---|",
    ]
    for r in out["runs"]:
        lines.append(
            f"| {r['round']} | {r['mode']} | {r['per_s']:.0f} | {r['waited_s']:.2f} | "
            f"{r['decisions']} | {r['load'][0]:.1f}-{r['load'][1]:.1f} |"
        )
    ratios = ", ".join(f"{x:.2f}" for x in out["ratios"])
    lines += [
        "",
        f"Pipelined over the store's ingest, per round: {ratios}; median "
        f"{out['median_ratio']:.2f}. Every result equal to the store's ingest's in every "
        f"round: {'yes' if out['same_results'] else 'no'}.",
    ]
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
