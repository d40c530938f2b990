"""Where batched ingest's time goes at scale, beside the same ingest without a gate and the
floor of the store's writes, in the same run.

The store benchmark (``bench_store.py``) measures gated ``ingest_many`` from 0 to 1M hashed
memories (353-607 texts/s at 1M before the cheaper gate that ``bench_ingest_ab.py`` measures,
580 after, against a target of 2,000). This script asks what the gate costs and what is left
without it. It builds a store of ``--base`` memories once (gated
``ingest_many`` of the first texts of the 1M bench corpus, ``make_texts(1_000_000,
seed=1_000_000)``, IVF index, batches of 1,000; cached in ``--cache-dir``), then ingests the next
``--texts`` texts of that corpus into a fresh copy of it under each configuration, the
configurations alternating for ``--rounds`` rounds:

- ``gate (default)``: ``ingest_many`` as the bench runs it: the default gate, importance
  estimated from content (``importance="auto"``);
- ``gate off``: ``Gate.off()`` (every text its own memory; ingest still looks up each text's
  nearest memory, whose similarity the result and the event record);
- ``gate off, importance given``: the same with ``importance=0.5`` (no corpus statistics);
- ``writes only``: embedding and ``StoreCore.create`` of each text, 1,000 to a write
  transaction, the index maintained after each: a new memory's row, keyword entry, journals and
  event with none of ingest's reading. No ingest can be faster than this through the store's
  write path.

For each: texts/s, ms per text, and the ms per text of the stages ingest runs (embedding,
candidate search with the re-scoring of the quantised index's candidates and their rows, auto
importance, the scope filter, the judge, the writes of a verdict; ``other``: the rest - the
chunk loop, commits, index upkeep), timed by wrapping those functions. Peak RSS is not measured.

Run: ``python experiments/bench_ingest_stages.py [--base 200000] [--texts 10000] [--rounds 2]``.
Writes experiments/results/bench_ingest_stages.json and .md.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_store import make_texts  # noqa: E402

from memlab.embed import make_embedder  # noqa: E402
from memlab.gate import Gate  # noqa: E402
from memlab.store import MemoryStore, ingest  # noqa: E402
from memlab.store import core as store_core  # noqa: E402

RESULTS = Path(__file__).resolve().parents[1] / "experiments" / "results"
#: The corpus of the 1M run of bench_store.py.
CORPUS = 1_000_000
#: The bench's batch size (texts embedded and written per transaction).
BATCH = 1000
#: The 1M target of issue 14.
TARGET_PER_S = 2000.0
T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
#: The importance of the ``importance given`` and ``writes only`` configurations.
GIVEN_IMPORTANCE = 0.5
CONFIGS = ("gate (default)", "gate off", "gate off, importance given", "writes only")

#: Stage name -> (object, attribute) timed by wrapping.
STAGES: dict[str, tuple[Any, str]] = {
    "embed": (store_core.StoreCore, "embed"),
    "candidates": (store_core.StoreCore, "vector_candidates"),
    "auto importance": (ingest, "with_auto_importance"),
    "scope": (ingest, "in_scope"),
    "judge": (Gate, "judge"),
    "writes": (ingest, "apply"),
    "create": (store_core.StoreCore, "create"),
}


class StageTimer:
    """Seconds spent in each of :data:`STAGES` (outermost calls only: ``apply`` calls
    ``create``, whose time is then counted once, in ``writes``)."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self._depth = 0
        self._originals: dict[str, Any] = {}

    def install(self) -> None:
        for name, (owner, attr) in STAGES.items():
            original = getattr(owner, attr)
            self._originals[name] = original
            setattr(owner, attr, self._timed(name, original))

    def _timed(self, name: str, function: Any) -> Any:
        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            self._depth += 1
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                if self._depth == 1:
                    self.seconds[name] += time.perf_counter() - start
                self._depth -= 1

        return timed

    def uninstall(self) -> None:
        for name, (owner, attr) in STAGES.items():
            setattr(owner, attr, self._originals[name])


#: Where base stores are cached when no ``--cache-dir`` is given.
DEFAULT_CACHE = Path(tempfile.gettempdir()) / "memlab_bench_ingest"


def open_store(path: Path) -> MemoryStore:
    return MemoryStore(path, embedder=make_embedder("hashing"), clock=lambda: T0, index="ivf")


def cached_base(n: int, cache: Path, after: int) -> tuple[Path, dict, list[str]]:
    """The base store of the corpus's first ``n`` texts in ``cache`` (built unless a complete
    one is there), its build record, and the ``after`` texts of the corpus that follow them."""
    corpus = make_texts(CORPUS, seed=CORPUS)
    base = cache / f"base_{n}"
    build = build_base(corpus[:n], base)
    return base, build, corpus[n : n + after]


def fresh_copy(base: Path, work: Path) -> MemoryStore:
    """A fresh copy of the base store in ``work``, open, its keyword index built (as in the
    bench, whose first batch is large enough to build it)."""
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(base, work, ignore=shutil.ignore_patterns("build.json"))
    store = open_store(work / "bench.db")
    with store.core.read():
        store.core.keywords.refresh(store.core)
    return store


def run_record() -> dict[str, Any]:
    """When and where a run ran: its start (UTC), the platform and the CPU count."""
    return {
        "run_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": platform.platform(),
        "cpus": os.cpu_count(),
    }


def write_results(out: dict[str, Any], path: Path, markdown: Any) -> None:
    """``out`` as ``path``.json and, by ``markdown(out, file)``, ``path``.md; the .md printed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.with_suffix(".json").write_text(json.dumps(out, indent=1) + "\n")
    markdown(out, path.with_suffix(".md"))
    print(path.with_suffix(".md").read_text())


def build_base(texts: list[str], folder: Path) -> dict:
    """The base store in ``folder`` (built unless a complete one is there); its build record."""
    record = folder / "build.json"
    if record.exists():
        return json.loads(record.read_text())
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    store = open_store(folder / "bench.db")
    start = time.perf_counter()
    slices = []
    step = 50_000
    for i in range(0, len(texts), step):
        s = time.perf_counter()
        store.ingest_many(texts[i : i + step], batch_size=BATCH)
        part = texts[i : i + step]
        slices.append({"up_to": i + len(part), "per_s": len(part) / (time.perf_counter() - s)})
        print(f"  base: {i + len(part):,} ingested, {slices[-1]['per_s']:.0f}/s", flush=True)
    store.close()
    out = {"n": len(texts), "seconds": time.perf_counter() - start, "slices": slices}
    record.write_text(json.dumps(out))
    return out


def writes_only(store: MemoryStore, texts: list[str]) -> Counter:
    """Embed and create each text (no candidates, no gate), ``BATCH`` per write, with the
    metadata ``ingest_many``'s defaults give and the importance the ``importance given``
    configuration gives."""
    core = store.core
    at = T0.timestamp()
    defaults = MemoryStore.ingest_defaults()
    meta = {k: defaults[k] for k in ("project", "topics", "layer", "entity", "altitude")}
    meta["importance"] = GIVEN_IMPORTANCE
    for i in range(0, len(texts), BATCH):
        chunk = texts[i : i + BATCH]
        vectors = core.embed(chunk)
        with core.write():
            core.refresh_index()
            for text, vector in zip(chunk, vectors, strict=True):
                core.create(text, meta, vector, at, decision="create", rule="bulk")
        core.maintain_index()
    return Counter({"create": len(texts)})


def run_config(config: str, base: Path, work: Path, texts: list[str]) -> dict:
    """Ingest ``texts`` into a copy of the base store under ``config``; its figures."""
    store = fresh_copy(base, work)
    if config != "gate (default)":
        store.gate = Gate.off()
    warm, timed = texts[:BATCH], texts[BATCH:]
    given = {"importance": GIVEN_IMPORTANCE} if config == "gate off, importance given" else {}
    if config == "writes only":
        writes_only(store, warm)
    else:
        store.ingest_many(warm, batch_size=BATCH, **given)
    timer = StageTimer()
    timer.install()
    load = os.getloadavg()[0]
    start = time.perf_counter()
    try:
        if config == "writes only":
            decisions = writes_only(store, timed)
        else:
            results = store.ingest_many(timed, batch_size=BATCH, **given)
            decisions = Counter(r.decision.value for r in results)
    finally:
        elapsed = time.perf_counter() - start
        timer.uninstall()
    store.close()
    shutil.rmtree(work, ignore_errors=True)
    n = len(timed)
    stages = {name: secs / n * 1e3 for name, secs in timer.seconds.items()}
    stages["other"] = elapsed / n * 1e3 - sum(stages.values())
    return {
        "config": config,
        "texts": n,
        "per_s": n / elapsed,
        "ms_per_text": elapsed / n * 1e3,
        "stages_ms": stages,
        "decisions": dict(decisions),
        "load": [load, os.getloadavg()[0]],
    }


def write_markdown(out: dict, path: Path) -> None:
    lines = [
        "# Where batched ingest's time goes, against no gate and the store's write floor",
        "",
        f"Run {out['run_at']} on {out['machine']} ({out['cpus']} CPUs), {out['total_s']:.0f} s "
        "in all. Produced by `experiments/bench_ingest_stages.py`. A store of "
        f"{out['base']:,} hashed memories (IVF index; built in {out['build']['seconds']:.0f} s "
        f"by gated `ingest_many`) takes the next {out['texts']:,} texts of the 1M bench corpus "
        f"(after {BATCH:,} warm-up texts) under each configuration, from a fresh copy each "
        f"time, the configurations alternating for {out['rounds']} rounds; batches of "
        f"{BATCH:,}. The 2 cores are shared with other sessions (load: 1-minute average)."
        + (f" The base store: {out['build']['note']}." if out["build"].get("note") else ""),
        "",
        "| configuration | round | texts/s | ms per text | "
        + " | ".join(out["stages"])
        + " | load |",
        "|---|---|---|---|" + "---|" * len(out["stages"]) + "---|",
    ]
    for r in out["runs"]:
        cells = [f"{r['stages_ms'].get(s, 0.0):.3f}" for s in out["stages"]]
        load = "-".join(f"{x:.1f}" for x in r["load"])
        lines.append(
            f"| {r['config']} | {r['round']} | {r['per_s']:.0f} | {r['ms_per_text']:.3f} | "
            + " | ".join(cells)
            + f" | {load} |"
        )
    lines += ["", "Median over the rounds:", ""]
    for config, s in out["summary"].items():
        lines.append(
            f"- {config}: {s['per_s']:.0f} texts/s ({s['ms_per_text']:.3f} ms a text), "
            f"{s['per_s'] / TARGET_PER_S:.2f} of the 2,000/s target; decisions {s['decisions']}"
        )
    gate, off = out["summary"]["gate (default)"], out["summary"]["gate off"]
    floor = out["summary"]["writes only"]
    lines += [
        "",
        "## Reading",
        "",
        f"- The gate (judge, scope filter and what they read) costs "
        f"{gate['ms_per_text'] - off['ms_per_text']:.3f} ms a text here: without it ingest runs "
        f"at {off['per_s']:.0f}/s against {gate['per_s']:.0f}/s with it.",
        f"- Writing alone (embedding, the memory's row, keyword entry, journals and event; no "
        f"candidate search) runs at {floor['per_s']:.0f}/s: "
        + (
            "below the 2,000/s target, so no gate, however cheap, brings the store's per-row "
            "write path to it on this machine."
            if floor["per_s"] < TARGET_PER_S
            else "above the 2,000/s target: the gap is in ingest's reading and deciding."
        ),
        "- Stages are timed by wrapping the functions named in the script "
        f"(`{', '.join(STAGES)}`); `writes` is `ingest.apply` (a verdict's writes) and, for "
        "`writes only`, `create`.",
    ]
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=int, default=200_000)
    parser.add_argument("--texts", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--cache-dir", type=Path, default=None)
    parser.add_argument("--out", type=Path, default=RESULTS / "bench_ingest_stages")
    args = parser.parse_args()
    if args.base + args.texts + BATCH > CORPUS:
        parser.error(f"--base + --texts + {BATCH} must not exceed {CORPUS:,}")
    start = time.perf_counter()
    cache = args.cache_dir or DEFAULT_CACHE
    base, build, texts = cached_base(args.base, cache, BATCH + args.texts)
    runs = []
    for round_ in range(1, args.rounds + 1):
        for config in CONFIGS:
            r = run_config(config, base, cache / "work", texts)
            r["round"] = round_
            runs.append(r)
            print(
                f"{config} (round {round_}): {r['per_s']:.0f}/s, {r['ms_per_text']:.3f} ms a "
                f"text, load {r['load'][0]:.2f}",
                flush=True,
            )
    stages = [*STAGES, "other"]
    summary = {}
    for config in CONFIGS:
        mine = [r for r in runs if r["config"] == config]
        summary[config] = {
            "per_s": statistics.median([r["per_s"] for r in mine]),
            "ms_per_text": statistics.median([r["ms_per_text"] for r in mine]),
            "decisions": mine[0]["decisions"],
            "same_decisions_every_round": all(r["decisions"] == mine[0]["decisions"] for r in mine),
        }
    out = {
        **run_record(),
        "base": args.base,
        "texts": args.texts,
        "rounds": args.rounds,
        "build": build,
        "stages": stages,
        "runs": runs,
        "summary": summary,
        "total_s": time.perf_counter() - start,
    }
    write_results(out, args.out, write_markdown)


if __name__ == "__main__":
    main()
