"""Embedders by name: dimension, load time, embedding rate and LoCoMo dev5 R@10.

For each embedder name (``hashing``, ``fastembed:<model>`` for models fastembed lists; MiniLM
from the shared folder, the others from fastembed's cache, always offline), in one run:

- load time (construction and model load, ``dim`` known),
- document embedding rate on the 2,760 LoCoMo dev5 turns (texts per second, one batch call),
- query latency (``embed_query`` on 200 questions, p50 ms),
- LoCoMo dev5 R@10 (categories 1-4) of the dense ranking alone (``vector``) and of the store's
  default retrieval (``memlab``), beside BM25 (``bm25``, no embedder: the baseline measured in
  the same run).

A model that is not on the machine is reported as "not available offline" (nothing is
downloaded). Run: ``python experiments/bench_embedders.py [NAME ...]``. Writes
experiments/results/bench_embedders.json and .md.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "experiments" / "results"
MINILM = "fastembed:sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_NAMES = ["hashing", MINILM, "fastembed:nomic-ai/nomic-embed-text-v1.5"]


def measure(
    name: str, conversations: list, texts: list[str], questions: list[str], locomo: bool = True
) -> dict:
    from memlab.datasets import shared_path
    from memlab.embed import ModelNotAvailableError, make_embedder
    from memlab.eval.locomo import default_configs, evaluate

    kwargs = {}
    if name == MINILM:
        kwargs["model_path"] = shared_path("minilm", required=False)
    row: dict = {"embedder": name}
    t = time.perf_counter()
    try:
        emb = make_embedder(name, **{k: v for k, v in kwargs.items() if v is not None})
        row["dim"] = int(emb.dim)
    except ModelNotAvailableError as error:
        row["available"] = False
        row["error"] = str(error)
        return row
    row["available"] = True
    row["load_s"] = time.perf_counter() - t
    t = time.perf_counter()
    emb.embed_documents(texts)
    row["docs_per_s"] = len(texts) / (time.perf_counter() - t)
    lat = []
    for q in questions:
        t = time.perf_counter()
        emb.embed_query(q)
        lat.append(time.perf_counter() - t)
    row["query_p50_ms"] = float(np.percentile(np.asarray(lat) * 1000, 50))
    if not locomo:
        return row
    configs = [c for c in default_configs() if c.name in ("bm25", "vector", "memlab")]
    t = time.perf_counter()
    result = evaluate(conversations, embedder=emb, configs=configs)
    row["locomo_s"] = time.perf_counter() - t
    table = result.to_json()["configs"]
    row["recall@10"] = {k: v["recall@10"] for k, v in table.items()}
    row["n_questions"] = table["memlab"]["n"]
    return row


def _markdown(report: dict) -> str:
    lines = [
        "# Embedders by name: dimension, load, rate, LoCoMo dev5 R@10",
        "",
        f"Run {report['when']}, 2 shared cores (load average {report['load']}; each row records"
        " its own time and load in the JSON file); LoCoMo dev5: 2,760 turns, questions of"
        " categories 1-4. `bm25` needs no embedder: the baseline of the same run.",
        "",
        "| embedder | dim | load s | docs/s | query p50 ms | R@10 vector | R@10 memlab |"
        " R@10 bm25 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in report["rows"]:
        if not r["available"]:
            lines.append(f"| `{r['embedder']}` | {r.get('dim', '')} | not available offline |||||")
            continue
        rc = r.get("recall@10")
        recall = (
            f" {rc['vector']:.3f} | {rc['memlab']:.3f} | {rc['bm25']:.3f} |"
            if rc
            else " not run | not run | not run |"
        )
        lines.append(
            f"| `{r['embedder']}` | {r['dim']} | {r['load_s']:.2f} | {r['docs_per_s']:.0f} |"
            f" {r['query_p50_ms']:.2f} |" + recall
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=DEFAULT_NAMES)
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_embedders")
    parser.add_argument(
        "--no-locomo", action="store_true", help="skip the LoCoMo evaluation (slow on big models)"
    )
    parser.add_argument(
        "--append",
        action="store_true",
        help="keep the rows of other embedders already in the results file",
    )
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("MEMLAB_PROGRESS", "0")
    from memlab.datasets import shared_path
    from memlab.eval.locomo import load_locomo

    conversations = load_locomo(shared_path("locomo_dev5"))
    texts = [t.text for c in conversations for t in c.turns]
    questions = [q.question for c in conversations for q in c.questions][:200]
    rows = []
    old = args.out.with_suffix(".json")
    if args.append and old.is_file():
        rows = [r for r in json.loads(old.read_text())["rows"] if r["embedder"] not in args.names]
    for name in args.names:
        row = measure(name, conversations, texts, questions, locomo=not args.no_locomo)
        row["when"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        row["load"] = round(os.getloadavg()[0], 1)
        print(json.dumps(row))
        rows.append(row)
    report = {
        "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "load": round(os.getloadavg()[0], 1),
        "appended": bool(args.append),
        "rows": rows,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.with_suffix(".json").write_text(json.dumps(report, indent=2) + "\n")
    md = _markdown(report)
    args.out.with_suffix(".md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
