"""Knowledge updates through the store: are current facts found first, and are revisions seen?

Implements the protocol of ../shared/data/updates/README.md through the public API: one store on
a simulated clock; every case's ``before`` texts interleaved with 180 LoCoMo filler turns, one
hour apart; 20 days later the ``after`` texts in rounds (round j: the j-th after text of each
case), interleaved with 120 more filler turns, four hours apart; 2 days later each case's query
searched with ``k=5, mark_accessed=False`` (and ``k=50, include_history=True`` for "lost").

Runs the dev set (../shared/data/updates/updates_dev.json) and the project's two other sets
(experiments/data/updates_heldout.json and the blind updates_fresh.json) with MiniLM (fastembed,
offline) and the hashing embedder, for the code before (``--before``, a checkout put first on
PYTHONPATH) and this change, each in its own process; on the dev set with MiniLM also other
similarities at which search pairs two hits as versions (``--thresholds``, to choose the default
on dev only). Without ``--locomo-gate`` the LoCoMo rows of the previous results are kept.
``--locomo-gate`` counts the supersedes the default gate makes over LoCoMo dev5's turns and over
its turns split into statements (sentences that end with a full stop): no LoCoMo text is a
revision of another (filler). Writes experiments/results/updates_dev.{json,md}.

    git archive 9b81874 memlab | tar -x -C /tmp/rule  # the paraphrased-revision rule's code
    git archive 60b9655 memlab | tar -x -C /tmp/noflag  # search flags what the judge calls so
    python experiments/updates_dev.py --before "paraphrase rule=/tmp/rule" \
        --before "no offline flag=/tmp/noflag" --locomo-gate
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
RESULTS = HERE / "results"
HELDOUT = HERE / "data" / "updates_heldout.json"
FRESH = HERE / "data" / "updates_fresh.json"
N_FILLER = (180, 120)
SEED = 0


def fillers(locomo: Path, cases: list[dict], seed: int = SEED) -> list[str]:
    """A seeded choice of LoCoMo turn texts that contain no case's current or stale substring."""
    keys = [s.lower() for c in cases for s in c["current"] + c["stale"]]
    turns = []
    for sample in json.loads(locomo.read_text()):
        conv = sample["conversation"]
        for key in sorted(k for k in conv if k.startswith("session_") and k[8:].isdigit()):
            turns += [t["text"] for t in conv[key] if t.get("text")]
    turns = [t for t in dict.fromkeys(turns) if not any(k in t.lower() for k in keys)]
    return random.Random(seed).sample(turns, sum(N_FILLER))


class Memo:
    """An embedder that embeds each text once (the variants of one process share vectors)."""

    def __init__(self, embedder) -> None:
        self.inner, self.name, self.dim = embedder, embedder.name, embedder.dim
        self.docs: dict[str, object] = {}
        self.queries: dict[str, object] = {}

    def embed_documents(self, texts):
        import numpy as np

        todo = [t for t in dict.fromkeys(texts) if t not in self.docs]
        if todo:
            self.docs.update(zip(todo, self.inner.embed_documents(todo), strict=True))
        return np.stack([self.docs[t] for t in texts]) if texts else self.inner.embed_documents([])

    def embed_query(self, text):
        if text not in self.queries:
            self.queries[text] = self.inner.embed_query(text)
        return self.queries[text]


def make_model(embedder: str, model_dir: str) -> Memo:
    from memlab.embed import make_embedder

    if embedder == "hashing":
        return Memo(make_embedder("hashing"))
    return Memo(make_embedder("fastembed", model_path=model_dir))


def run_cases(
    model: Memo, cases: list[dict], locomo: str, versions_at: float | None = None
) -> tuple[list[dict], int]:
    """The protocol on one code version (whatever ``memlab`` imports): per-case outcomes and
    how many filler turns superseded a memory. ``versions_at``: the search's similarity at
    which two hits count as versions of one fact (None: the default)."""
    from memlab.store import MemoryStore

    rng = random.Random(SEED)
    filler = fillers(Path(locomo), cases)
    clock = [datetime(2026, 1, 5, 9, tzinfo=UTC)]
    kwargs: dict = {}
    if versions_at is not None:
        from memlab.store.relevance import SearchOptions

        kwargs["search"] = SearchOptions(versions_at=versions_at)
    store = MemoryStore(":memory:", model, clock=lambda: clock[0], **kwargs)
    owner: dict[int, str] = {}  # memory id -> case id
    steps: dict[str, list[dict]] = {c["id"]: [] for c in cases}
    filler_superseded = [0]  # filler turns that superseded a memory

    def ingest(items: list[tuple[str | None, str]], hours: int) -> None:
        for case_id, text in items:
            result = store.ingest(text)
            if case_id is not None:
                target = result.nearest_id if result.decision.value == "supersede" else None
                steps[case_id].append(
                    {
                        "decision": result.decision.value,
                        "rule": result.rule,
                        "own_target": target is not None and owner.get(target) == case_id,
                        "other_target": target is not None and owner.get(target) != case_id,
                    }
                )
                owner[result.memory_id] = case_id
            elif result.decision.value == "supersede":
                filler_superseded[0] += 1
            clock[0] += timedelta(hours=hours)

    phase1 = [(c["id"], t) for c in cases for t in c["before"]]
    phase1 += [(None, t) for t in filler[: N_FILLER[0]]]
    rng.shuffle(phase1)
    ingest(phase1, 1)
    clock[0] += timedelta(days=20)
    rounds = max(len(c["after"]) for c in cases)
    rest = filler[N_FILLER[0] :]
    for j in range(rounds):
        items = [(c["id"], c["after"][j]) for c in cases if j < len(c["after"])]
        items += [(None, t) for t in rest[j * len(rest) // rounds : (j + 1) * len(rest) // rounds]]
        rng.shuffle(items)
        ingest(items, 4)
    clock[0] += timedelta(days=2)
    out = []
    for c in cases:
        hits = store.search(c["query"], 5, mark_accessed=False)
        top = [h.memory.content.lower() for h in hits]
        flagged = any(  # a stale hit that points to its newer version (this change only)
            getattr(h, "possibly_outdated_by", None) is not None
            and any(s.lower() in h.memory.content.lower() for s in c["stale"])
            for h in hits
        )
        deep = [
            h.memory.content.lower()
            for h in store.search(c["query"], 50, mark_accessed=False, include_history=True)
        ]

        def rank(subs: list[str], texts: list[str]) -> list[int | None]:
            return [next((i for i, t in enumerate(texts) if s.lower() in t), None) for s in subs]

        out.append(
            {
                "id": c["id"],
                "current_ranks": rank(c["current"], top),
                "stale_ranks": rank(c["stale"], top),
                "current_found_deep": [r is not None for r in rank(c["current"], deep)],
                "flagged": flagged,
                "current_flagged": any(  # a hit of a current fact called outdated
                    getattr(h, "possibly_outdated_by", None) is not None
                    and any(s.lower() in h.memory.content.lower() for s in c["current"])
                    for h in hits
                ),
                "steps": steps[c["id"]][len(c["before"]) :],
                "before_superseded_another": sum(
                    s["other_target"] for s in steps[c["id"]][: len(c["before"])]
                ),
            }
        )
    store.close()
    return out, filler_superseded[0]


def figures(cases: list[dict], outcomes: list[dict]) -> dict:
    """The README's figures and the gate's verdicts on the after texts, from per-case outcomes."""
    by_id = {o["id"]: o for o in outcomes}
    found, stale_first, stale_cases, lost = {}, 0, 0, 0
    for c in cases:
        o = by_id[c["id"]]
        cur = o["current_ranks"]
        found[c["id"]] = all(r is not None for r in cur)
        stale = [r for r in o["stale_ranks"] if r is not None]
        if stale:
            stale_cases += 1
            first_current = min((r for r in cur if r is not None), default=99)
            stale_first += min(stale) < first_current
        lost += any(r is None and not d for r, d in zip(cur, o["current_found_deep"], strict=True))

    def share(kinds: tuple[str, ...]) -> float:
        ids = [c["id"] for c in cases if c["kind"] in kinds]
        return round(sum(found[i] for i in ids) / len(ids), 3) if ids else float("nan")

    def revised(pred, flagged: bool = False) -> list[int]:
        sel = [c for c in cases if pred(c)]
        seen = [
            any(s["own_target"] for s in by_id[c["id"]]["steps"])
            or (flagged and by_id[c["id"]].get("flagged", False))
            for c in sel
        ]
        return [sum(seen), len(sel)]

    steps = [(c, s) for c in cases for s in by_id[c["id"]]["steps"]]
    chain_steps = [s for c, s in steps if c["kind"] in ("chain", "revert")]
    return {
        "n_cases": len(cases),
        "current_in_top5": share(("replace", "additive", "distinct", "chain", "revert", "multi")),
        "stale_first": round(stale_first / stale_cases, 3) if stale_cases else 0.0,
        "stale_cases": stale_cases,
        "additive_both": share(("additive",)),
        "distinct_both": share(("distinct",)),
        "multi_both": share(("multi",)),
        "lost": lost,
        "paraphrased_superseded": revised(
            lambda c: c["kind"] == "replace" and c["note"].startswith("paraphrase")
        ),
        "paraphrased_superseded_or_flagged": revised(
            lambda c: c["kind"] == "replace" and c["note"].startswith("paraphrase"), True
        ),
        "wrongly_flagged": sum(
            by_id[c["id"]].get("current_flagged", False)
            for c in cases
            if c["kind"] in ("additive", "distinct")
        ),
        "explicit_superseded": revised(
            lambda c: c["kind"] == "replace" and c["note"].startswith("explicit")
        ),
        "chain_revert_steps_superseded": [
            sum(s["own_target"] for s in chain_steps),
            len(chain_steps),
        ],
        "additive_distinct_wrongly_superseded": sum(
            s["decision"] == "supersede"
            for c, s in steps
            if c["kind"] in ("additive", "distinct", "multi")
        ),
        "superseded_another_cases_or_filler": sum(s["other_target"] for _, s in steps)
        + sum(o["before_superseded_another"] for o in outcomes),
        "stale_first_of_all": [stale_first, sum(bool(c["stale"]) for c in cases)],
        "current_at_rank1": round(
            sum(0 in by_id[c["id"]]["current_ranks"] for c in cases) / len(cases), 3
        ),
        "decisions": {
            kind: _count(s["decision"] + ":" + s["rule"] for c, s in steps if c["kind"] == kind)
            for kind in ("replace", "additive", "distinct", "chain", "revert", "multi")
        },
    }


def _count(items) -> dict[str, int]:
    out: dict[str, int] = {}
    for x in items:
        out[x] = out.get(x, 0) + 1
    return dict(sorted(out.items()))


def locomo_texts(locomo: str) -> dict[str, list[list[str]]]:
    """LoCoMo dev5's turn texts per conversation, and the same turns split into statements
    (sentences ending with a full stop, of at least four words, each once)."""
    from memlab.eval.locomo import load_locomo

    turns = [[t.text for t in conv.turns if t.text] for conv in load_locomo(locomo)]
    statements = []
    for conv in turns:
        split = (x for t in conv for x in re.split(r"(?<=[.!?])\s+", t))
        statements.append(
            list(dict.fromkeys(x for x in split if x.endswith(".") and len(x.split()) > 3))
        )
    return {"turns": turns, "statements": statements}


def locomo_decisions(model_dir: str, locomo: str) -> dict[str, dict[str, int]]:
    """The default gate's decisions (decision:rule) over LoCoMo dev5's turns and statements,
    each conversation ingested into its own store in order, and its supersedes (``examples``:
    old -> new)."""
    from memlab.store import MemoryStore

    model = make_model("minilm", model_dir)
    out: dict[str, dict] = {}
    for unit, convs in locomo_texts(locomo).items():
        counts: dict[str, int] = {}
        examples = []
        for texts in convs:
            store = MemoryStore(":memory:", embedder=model, secrets="allow")
            for text in texts:
                r = store.ingest(text)
                key = f"{r.decision.value}:{r.rule}"
                counts[key] = counts.get(key, 0) + 1
                if r.decision.value == "supersede":
                    examples.append([store.get(r.nearest_id).content, text])
            store.close()
        out[f"{unit}, default gate"] = {
            "decisions": dict(sorted(counts.items())),
            "examples": examples,
        }
    return out


def worker(args: argparse.Namespace) -> None:
    import memlab

    if args.locomo_gate:
        counts = locomo_decisions(args.model_dir, args.locomo)
        json.dump({"memlab": memlab.__file__, "locomo_gate": counts}, sys.stdout)
        return

    cases = json.loads(Path(args.cases).read_text())
    model = make_model(args.embedder, args.model_dir)
    runs = []
    for t in args.versions_at.split(","):
        outcomes, filler = run_cases(
            model, cases, args.locomo, None if t == "default" else float(t)
        )
        runs.append({"outcomes": outcomes, "filler_superseded": filler})
    json.dump({"memlab": memlab.__file__, "runs": runs}, sys.stdout)


def spawn(code: Path, args: argparse.Namespace, *extra: str) -> dict:
    """Run the worker with ``code`` first on PYTHONPATH; its JSON answer."""
    env = dict(os.environ, PYTHONPATH=str(code), HF_HUB_OFFLINE="1")
    cmd = [sys.executable, __file__, "--worker", "--model-dir", args.model_dir]
    cmd += ["--locomo", args.locomo, *extra]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"worker failed ({code}, {extra}):\n{done.stderr[-3000:]}")
    return json.loads(done.stdout)


def main() -> None:
    shared = Path(os.environ.get("MEMLAB_SHARED", ROOT.parent / "shared"))
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--before",
        action="append",
        help="LABEL=PATH: a checkout of code to compare with (at least one; repeatable)",
    )
    ap.add_argument("--embedders", default="minilm,hashing")
    ap.add_argument("--dev", default=str(shared / "data/updates/updates_dev.json"))
    ap.add_argument("--heldout", nargs="+", default=[str(HELDOUT), str(FRESH)])
    ap.add_argument("--model-dir", default=str(shared / "models/all-MiniLM-L6-v2-onnx"))
    ap.add_argument("--locomo", default=str(shared / "data/locomo/locomo_dev5.json"))
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--embedder", default="minilm", help=argparse.SUPPRESS)
    ap.add_argument("--cases", help=argparse.SUPPRESS)
    ap.add_argument("--versions-at", default="default", help=argparse.SUPPRESS)
    ap.add_argument(
        "--thresholds",
        default="0.35,0.4,0.5,1.0",
        help="other similarities at which search pairs two hits as versions (dev, MiniLM)",
    )
    ap.add_argument(
        "--locomo-gate",
        action="store_true",
        help="also count the gate's decisions on LoCoMo dev5's turns and statements (MiniLM)",
    )
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return
    if not args.before or not all("=" in b for b in args.before):
        ap.error("--before LABEL=PATH (a checkout of code to compare with) is required")
    before = [(label, Path(path)) for label, path in (b.split("=", 1) for b in args.before)]
    results = []
    sets = [("dev", Path(args.dev))]
    sets += [(Path(p).stem.removeprefix("updates_"), Path(p)) for p in args.heldout]
    for set_name, path in sets:
        cases = json.loads(path.read_text())
        for embedder in args.embedders.split(","):
            variants = [(label, path, ["default"]) for label, path in before]
            variants.append(("this change", ROOT, ["default"]))
            if set_name == "dev" and embedder == "minilm":
                variants[-1][2].extend(args.thresholds.split(","))
            for label, code, thresholds in variants:
                extra = ["--embedder", embedder, "--cases", str(path)]
                run = spawn(code, args, *extra, "--versions-at", ",".join(thresholds))
                for t, one in zip(thresholds, run["runs"], strict=True):
                    name = label if t == "default" else f"versions_at {t}"
                    fig = figures(cases, one["outcomes"])
                    fig["filler_superseded"] = one["filler_superseded"]
                    fig["memlab"] = run["memlab"]
                    results.append({"set": set_name, "embedder": embedder, "code": name, **fig})
                    print(set_name, embedder, name, {k: fig[k] for k in list(fig)[:10]}, flush=True)
    if not args.locomo_gate and (args.out / "updates_dev.json").exists():  # kept from before
        old = json.loads((args.out / "updates_dev.json").read_text())
        results += [r for r in old if r["set"] == "locomo_dev5"]
    if args.locomo_gate:
        run = spawn(ROOT, args, "--locomo-gate")
        for name, r in run["locomo_gate"].items():
            results.append({"set": "locomo_dev5", "code": name, **r})
            print("locomo", name, r["decisions"], len(r["examples"]), flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "updates_dev.json").write_text(json.dumps(results, indent=1) + "\n")
    (args.out / "updates_dev.md").write_text(report(results, args))


def report(results: list[dict], args: argparse.Namespace) -> str:
    lines = [
        "# Knowledge updates: current facts first, revisions recognised",
        "",
        "Protocol of ../shared/data/updates/README.md through the public API (experiments/"
        "updates_dev.py). The code compared: "
        + "; ".join(f"`{b.split('=', 1)[0]}` at {b.split('=', 1)[1]}" for b in args.before)
        + "; `this change` the code beside this script (a revision in other words is RELATED "
        "and stays in search; among the top k, the newer of two hits that are linked or at least "
        "`versions_at` = 0.3 similar ranks just ahead of the older, and the older carries "
        "`possibly_outdated_by` when `memlab.revision.outdates` reads the newer as another "
        "value of it; on dev with MiniLM also other `versions_at`); all run here, each in its "
        "own process. "
        "dev: updates_dev.json (60 cases); fresh: experiments/data/updates_fresh.json (100 "
        "cases written blind to memlab's rules and first run after them: the one held-out "
        "measurement; multi_both: the untouched fact and the new value of a two-fact text both "
        "in the top 5); heldout: experiments/data/updates_heldout.json "
        "(30 cases written by the project, CC0, after the rule's first version; not fully held "
        "out: fixes to the rule came from its cases). "
        "`superseded` counts cases whose after text "
        "superseded the case's own "
        "earlier memory. stale_first is the README's figure (among cases with a stale fact in "
        "the top 5: a superseded fact leaves the top 5, so the denominator shrinks as the gate "
        "improves); `stale first / all` counts the same cases over every case that has a stale "
        "fact. `current first` is the share of cases with a current fact at rank 1; "
        "`superseded or flagged` adds the cases whose stale hit carries possibly_outdated_by. "
        "`wrong supersedes` counts additive/distinct/multi after texts that superseded anything, "
        "`wrong flags` additive/distinct cases whose current fact's hit carries "
        "possibly_outdated_by, "
        "and `cross supersedes` any case text that superseded another case's or a filler's "
        "memory.",
        "",
        "| set | embedder | code | current_in_top5 | stale_first | stale first / all | "
        "current first | additive_both | distinct_both | multi_both | lost | paraphrased "
        "superseded or flagged | explicit superseded | "
        "chain/revert steps | wrong supersedes | wrong flags | cross supersedes | filler turns "
        "superseding |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in (r for r in results if r["set"] != "locomo_dev5"):
        p, e, s = (
            r["paraphrased_superseded_or_flagged"],
            r["explicit_superseded"],
            r["chain_revert_steps_superseded"],
        )
        lines.append(
            f"| {r['set']} | {r['embedder']} | {r['code']} | {r['current_in_top5']:.2f} | "
            f"{r['stale_first']:.2f} (of {r['stale_cases']}) | "
            f"{r['stale_first_of_all'][0]} / {r['stale_first_of_all'][1]} | "
            f"{r['current_at_rank1']:.2f} | "
            f"{r['additive_both']:.2f} | "
            f"{r['distinct_both']:.2f} | {r['multi_both']:.2f} | {r['lost']} | "
            f"{p[0]} / {p[1]} | {e[0]} / {e[1]} | "
            f"{s[0]} / {s[1]} | {r['additive_distinct_wrongly_superseded']} | "
            f"{r['wrongly_flagged']} | "
            f"{r['superseded_another_cases_or_filler']} | "
            f"{r['filler_superseded']} |"
        )
    lines += ["", "Decisions (decision:rule) on the after texts by kind: updates_dev.json.", ""]
    locomo = [r for r in results if r["set"] == "locomo_dev5"]
    if locomo:
        lines += [
            "## The gate on LoCoMo dev5 (MiniLM, this change)",
            "",
            "Decisions (decision:rule) of the default gate on the turns and on the statements "
            "they split into (sentences ending with a full stop, four words or more), each "
            "conversation in its own store. No LoCoMo text is a revision of another, so every "
            "supersede is a false one (it hides the older text from default search; "
            "`include_history=True` still finds it).",
            "",
            "| texts, gate | decisions | supersedes |",
            "|---|---|---|",
        ]
        for r in locomo:
            counts = ", ".join(f"{k} {v}" for k, v in r["decisions"].items())
            lines.append(f"| {r['code']} | {counts} | {len(r['examples'])} |")
        examples = [e for r in locomo for e in r["examples"]]
        if examples:
            lines += ["", "Superseded (old -> new):", ""]
            lines += [f"- {old!r} -> {new!r}" for old, new in examples]
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
