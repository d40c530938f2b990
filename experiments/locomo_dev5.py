"""LoCoMo dev5 retrieval through the memory store: baselines, memlab's default, gating, budgets.

Runs :func:`memlab.eval.locomo.evaluate` with the shared MiniLM (fastembed, offline) when
../shared/models/all-MiniLM-L6-v2-onnx exists, else the HashingEmbedder, and writes
experiments/results/locomo_dev5.{json,md} with the reference figures of DESIGN.md side by side.

    python experiments/locomo_dev5.py [--file PATH] [--model-dir DIR | --hashing]
"""

from __future__ import annotations

import json
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from locomo_common import locomo_parser  # noqa: E402
from locomo_common import model_dir as chosen_model_dir  # noqa: E402

from memlab.eval.locomo import evaluate  # noqa: E402

#: DESIGN.md, "Reference figures": LoCoMo dev5, categories 1-4, R@10.
REFERENCE = {
    "bm25 (all words)": 0.528,
    "bm25": 0.528,
    "vector": 0.493,
    "rrf (all words)": 0.589,
    "rrf": 0.589,
}


def main() -> None:
    ap = locomo_parser(
        __doc__,
        hashing_help="use the HashingEmbedder even if MiniLM is present",
        cache_help="pickle file caching embeddings between runs",
    )
    args = ap.parse_args()
    model_dir = chosen_model_dir(args)
    t0 = time.perf_counter()
    result = evaluate(args.file, model_dir=model_dir, progress=True, cache=args.cache)
    wall = time.perf_counter() - t0
    out = result.to_json()
    out["reference_r10"] = REFERENCE if model_dir else None
    out["seconds"] = round(wall, 1)
    out["by_category_r10"] = {str(k): v for k, v in result.by_category().round(4).to_dict().items()}
    tag = "minilm" if model_dir else "hashing"
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"locomo_dev5_{tag}.json").write_text(json.dumps(out, indent=2))
    table = result.table()
    adv = result.table(adversarial=True)
    cats = result.by_category()
    lines = [
        f"# LoCoMo dev5 retrieval through the memory store ({result.embedder})",
        "",
        f"{args.file.name}: one memory per turn (speaker: text [image: caption]), stamped with "
        "its session date; "
        "questions after the last session, preview searches; recall of evidence turns. "
        f"Default configuration: **{result.default}**. Wall time {wall:.0f} s (2 shared cores).",
        "",
        "| configuration | R@5 | R@10 | n | memories | DESIGN ref R@10 | ratio | cat5 R@10 | "
        + " | ".join(f"cat{c} R@10" for c in cats.columns if c != 5)
        + " |",
        "|---|---|---|---|---|---|---|---|" + "---|" * sum(1 for c in cats.columns if c != 5),
    ]
    for name, row in table.iterrows():
        ref = REFERENCE.get(str(name)) if model_dir else None  # DESIGN's figures are MiniLM's
        ref_s = f"{ref:.3f}" if ref else ""
        ratio = f"{row['recall@10'] / ref:.2f}" if ref else ""
        per_cat = " | ".join(f"{cats.loc[name, c]:.3f}" for c in cats.columns if c != 5)
        lines.append(
            f"| {name} | {row['recall@5']:.3f} | {row['recall@10']:.3f} | {int(row['n'])} | "
            f"{result.memories.get(str(name), '')} | {ref_s} | {ratio} | "
            f"{adv.loc[name, 'recall@10']:.3f} | {per_cat} |"
        )
    lines += [
        "",
        "Configurations: `bm25` / `vector` - one of the store's two lists alone; `rrf` - the "
        "store's fusion with no "
        "retention or context weight; `(all words)` - the keyword query keeps every non-stop word "
        "(DESIGN's "
        "OR-of-words protocol; the store by default drops terms found in more than 10 % of "
        "memories); `+retention` - time weight 0.5 (FSRS-6 retention at question time); "
        "`+context` - "
        "the speakers a question names as topics (turns carry their speaker as topic), topic "
        "weight 0.5; `+gate` - "
        "ingest through the store's default gate (Vestige thresholds 0.92/0.75 with the lossless "
        "decisions: a turn "
        "that restates a memory REINFORCEs it and counts as found when that memory is, a revision "
        "SUPERSEDEs, a "
        "similar but different turn is a RELATED new memory); `memories` - memories the five "
        "stores held "
        f"({result.turns} turns); "
        "`rrf+neighbours` - each memory also holds the two previous turns of its session; "
        "`memlab` - the default: "
        "topic weight 0.5 and no retention weight on memories with that context; `+retention` - "
        "time weight 0.5 (the store's search default); "
        "`keyword x3` - keyword list weighted 3:1 in the RRF (not a store option; computed from "
        "`rankings()`); "
        "`+replay` - before each session is stored the agent searches its memory with each of its "
        "turns (k = 3, "
        "accessed); `keep50%:M` - after replay, only the half of the memories ranked highest by "
        "keep score M "
        "(memlab.keep: `memlab` the default; the laws FSRS-6 retention, heat risk, exponential "
        "retention; the baselines "
        "recency, random - one seeded draw -, length and IDF mass of the memory's own text) is "
        "searched: through the store - its `forget_sweep(keep=0.5, keep_by=M, dry_run=False)` "
        "archives the other half, its own rankings (archived excluded) answer, then everything "
        "is restored; each turn is stored with its two previous turns as `context=` (searched), "
        "so importance and keep scores read the turn's own text. Budget rows show how much "
        "evidence each forgetting model keeps when questions span the whole history.",
    ]
    text = "\n".join(lines) + "\n"
    (args.out / f"locomo_dev5_{tag}.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
