"""Benchmark of the keyword side alone (BM25 with the keyword budget) at 100k and 1M texts.

The store benchmark (``bench_store.py``) measures whole searches; at 1M memories its gated
ingest takes more than an hour, so this script measures the keyword side on its own on the
same texts and queries: an SQLite file holding only what ``memlab.store.fts.keyword_search``
reads (the ``memories`` ids and statuses, the ``memories_fts`` table in the store's
tokenizer, and its ``fts5vocab`` table), built directly from ``make_texts(n, seed=n)``. FTS5
ranks the keyword side (``bm25()``); the budget is the query-side cost control weighed here.

For each size and each ``keyword_max_postings`` budget (and without one, the reference in the
same run): the p50, p95 and mean time of a keyword query over the 200 bench queries, the top 10
against the unbudgeted top 10 of the same queries (recall@10), and the known-item hit@10 of
the keyword side alone (``bench_store.keyword_budget_curve``).

Run: ``python experiments/bench_keyword.py [--sizes 100000 1000000]``. Writes
experiments/results/bench_keyword.json and .md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sqlite3
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import (  # noqa: E402
    KEYWORD_BUDGETS,
    keyword_budget_curve,
    known_item_queries,
    make_queries,
    make_texts,
)

from memlab.store import fts  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "experiments" / "results"
#: Keyword candidates a store search takes (``SearchSettings.candidates``).
DEPTH = 50


def build(path: Path, texts: list[str]) -> float:
    """Write the keyword tables of ``texts`` (ids from 1, all active); the seconds it took."""
    start = time.perf_counter()
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE memories (id INTEGER PRIMARY KEY, status TEXT NOT NULL)")
    conn.execute(
        "CREATE VIRTUAL TABLE memories_fts USING fts5(content,"
        " tokenize = 'unicode61 remove_diacritics 2')"
    )
    conn.execute("CREATE VIRTUAL TABLE memories_fts_vocab USING fts5vocab(memories_fts, 'row')")
    conn.executemany(
        "INSERT INTO memories (id, status) VALUES (?, 'active')",
        ((i,) for i in range(1, len(texts) + 1)),
    )
    conn.executemany(
        "INSERT INTO memories_fts (rowid, content) VALUES (?, ?)",
        ((i, t) for i, t in enumerate(texts, start=1)),
    )
    conn.commit()
    conn.close()
    return time.perf_counter() - start


def run(n: int, n_queries: int, tmp: Path) -> dict:
    load_start = os.getloadavg()[0]
    texts = make_texts(n, seed=n)
    queries = make_queries(n_queries, seed=7, texts=texts)
    pairs = known_item_queries(texts, n_queries, seed=11)
    path = tmp / f"keyword_{n}.db"
    build_s = build(path, texts)
    conn = sqlite3.connect(path)

    def search(query: str, budget: int | None) -> list[int]:
        return [m for m, _ in fts.keyword_search(conn, query, DEPTH, max_df=fts.MAX_DF,
                                                 max_postings=budget)]  # fmt: skip

    def contents(ids: list[int]) -> list[str]:
        return [texts[m - 1] for m in ids]

    for q in queries[:20]:  # warm the page cache and the postings
        search(q, fts.MAX_POSTINGS)
    curve = keyword_budget_curve(search, contents, queries, pairs)
    conn.close()
    path.unlink()
    return {"n": n, "queries": len(queries), "build_s": build_s, "curve": curve,
            "loadavg_1min": [load_start, os.getloadavg()[0]]}  # fmt: skip


def markdown(report: dict) -> str:
    lines = [
        "# Keyword side benchmark",
        "",
        f"Run {report['run_at']} on {report['machine']} ({report['cpus']} CPUs), "
        f"{report['total_s']:.0f} s in all. Produced by `experiments/bench_keyword.py`: FTS5 "
        "BM25 with the keyword budget (`keyword_max_postings`) on the texts and queries of "
        "`bench_store.py`, in a file holding only the keyword tables. 'none' is the reference "
        "(every match scored), measured in the same run. recall@10: the budgeted top 10 "
        "against the unbudgeted top 10 of the same query. Known-item: the verb, adjective and "
        "object of a stored text as the query, its text as the answer (keyword side alone).",
        "",
        "| n | budget | p50 ms | p95 ms | mean ms | recall@10 vs none | known-item hit@10 | load |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in report["runs"]:
        load = "-".join(f"{x:.1f}" for x in r["loadavg_1min"])
        for c in r["curve"]:
            recall = c["recall_at_10_vs_no_budget"]
            lines.append(
                f"| {r['n']:,} | {c['max_postings'] or 'none'} "
                f"| {c['keyword_ms_p50']:.2f} | {c['keyword_ms_p95']:.2f} "
                f"| {c['keyword_ms_mean']:.2f} | {'-' if recall is None else f'{recall:.3f}'} "
                f"| {c['known_item_hit_at_10']:.3f} | {load} |"
            )
    lines += [
        "",
        "The keyword tables written by SQLite (FTS5): "
        + ", ".join(f"{r['n']:,} texts {r['build_s']:.0f} s" for r in report["runs"])
        + ".",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_keyword")
    args = parser.parse_args()
    start = time.perf_counter()
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.sizes:
            res = run(n, args.queries, Path(tmp))
            runs.append(res)
            for c in res["curve"]:
                print(
                    f"n={n:,} budget {c['max_postings']}: p50 {c['keyword_ms_p50']:.2f} ms, mean "
                    f"{c['keyword_ms_mean']:.2f} ms, recall@10 vs none "
                    f"{c['recall_at_10_vs_no_budget']}, known-item {c['known_item_hit_at_10']}",
                    flush=True,
                )
    report = {
        "run_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": platform.platform(),
        "cpus": os.cpu_count(),
        "total_s": time.perf_counter() - start,
        "budgets": list(KEYWORD_BUDGETS),
        "runs": runs,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(report, indent=1))
    args.out.with_suffix(".md").write_text(markdown(report))
    print(f"wrote {args.out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
