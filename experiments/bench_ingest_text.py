"""Benchmark of the per-text Python work of gated ingest: the reference code against today's.

Times, in texts per second, each pure text function ``MemoryStore.ingest_many`` runs per text,
on the 20,000 seeded texts of ``experiments/bench_store.py`` (``make_texts(20000, seed=20000)``)
and on real LoCoMo turns (the shared dev5 conversations when present, else the shipped conv-30):

- ``embed``: ``HashingEmbedder.embed_documents`` in batches of 1,000, a fresh embedder (cold:
  every word new to it) and the same embedder again (warm: its word cache filled);
- ``judge``: ``Gate.judge`` of each text against its 8 nearest other texts (hashing vectors),
  all memoised features cleared first (cold) and again (warm);
- ``importance``: ``content_importance`` of batches of 1,000 against the texts' document
  frequencies;
- ``term_stats``: ``memlab.store.corpus.term_stats`` of batches of 1,000 against a store holding
  the first 10,000 bench texts (the LoCoMo turns for LoCoMo), SQL look-ups included;
- ``auto importance (all three)``: what ingest runs per batch for ``importance="auto"``:
  ``term_stats``, ``TermStats.add`` of the batch, ``content_importance`` (content words are
  memoised across the three);
- ``screen``: ``memlab.store.secrets.screen`` (redact) of each text;
- the keyword index's row count (``term_stats``'s ``n_docs``) on FTS5 tables of 10k and 100k
  rows;
- end to end: ``MemoryStore.ingest_many`` of the LoCoMo turns and of ``--ingest`` bench texts
  with the whole memlab of the reference revision (``git archive``) and with today's, each in
  a child process; every result and a digest of every stored row must be identical.

The reference is the code of these modules at ``--reference`` (a git revision, default the
commit before the fast paths: ``39549be``), loaded from git into private modules, run in the same
process, alternating with today's code, best of ``--repeats`` runs each. Every output is checked
equal (vectors bit for bit) and the check is printed. Writes
experiments/results/bench_ingest_text.json and .md, with the machine's load average.

Run: ``python experiments/bench_ingest_text.py [--repeats 3] [--reference REV]``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import subprocess
import sys
import time
import types
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

import bench_store  # noqa: E402

from memlab import embed as embed_new  # noqa: E402
from memlab import gate as gate_new  # noqa: E402
from memlab import informativeness as inf_new  # noqa: E402
from memlab.datasets import dataset_path  # noqa: E402
from memlab.eval.locomo import load_locomo  # noqa: E402
from memlab.gate import Gate  # noqa: E402
from memlab.store import MemoryStore  # noqa: E402
from memlab.store import corpus as corpus_new  # noqa: E402
from memlab.store import secrets as secrets_new  # noqa: E402

BATCH = 1000


def git_source(rev: str, path: str) -> str:
    return subprocess.run(
        ["git", "-C", str(REPO), "show", f"{rev}:{path}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def load_module(rev: str, path: str, name: str, deps: dict[str, types.ModuleType]) -> Any:
    """The module at ``path`` as of ``rev``, its memlab imports of ``deps`` bound to those."""
    module = types.ModuleType(name)
    module.__file__ = f"{rev}:{path}"
    saved = {k: sys.modules.get(k) for k in deps}
    sys.modules.update(deps)
    sys.modules[name] = module
    try:
        exec(compile(git_source(rev, path), module.__file__, "exec"), module.__dict__)
    finally:
        for k, v in saved.items():
            if v is None:
                sys.modules.pop(k, None)
            else:
                sys.modules[k] = v
    return module


def reference_modules(rev: str) -> dict[str, Any]:
    inf = load_module(rev, "memlab/informativeness.py", "ref_informativeness", {})
    return {
        "embed": load_module(rev, "memlab/embed.py", "ref_embed", {}),
        "gate": load_module(rev, "memlab/gate.py", "ref_gate", {}),
        "informativeness": inf,
        "secrets": load_module(rev, "memlab/store/secrets.py", "ref_secrets", {}),
        "corpus": load_module(
            rev, "memlab/store/corpus.py", "ref_corpus", {"memlab.informativeness": inf}
        ),
    }


def new_modules() -> dict[str, Any]:
    return {
        "embed": embed_new,
        "gate": gate_new,
        "informativeness": inf_new,
        "secrets": secrets_new,
        "corpus": corpus_new,
    }


def clear_caches(*modules: Any) -> None:
    """Empty every memoised function of the modules (a cold start)."""
    for module in modules:
        for value in vars(module).values():
            if callable(getattr(value, "cache_clear", None)) and value.__module__ == (
                module.__name__
            ):
                value.cache_clear()


def locomo_texts() -> tuple[str, list[str]]:
    path = dataset_path("locomo_dev5", required=False)
    if path is None or not Path(path).exists():
        path = dataset_path("locomo_conv30", source="shipped")
    assert path is not None
    return Path(path).name, [t.text for c in load_locomo(path) for t in c.turns]


def batches(texts: list[str]) -> list[list[str]]:
    return [texts[i : i + BATCH] for i in range(0, len(texts), BATCH)]


def nearest(texts: list[str], k: int = 8) -> list[list[tuple[float, str]]]:
    v = embed_new.HashingEmbedder().embed_documents(texts)
    out: list[list[tuple[float, str]]] = []
    for i in range(0, len(texts), BATCH):
        sims = v[i : i + BATCH] @ v.T
        sims[np.arange(len(sims)), np.arange(i, i + len(sims))] = -2.0
        top = np.argsort(-sims, axis=1, kind="stable")[:, :k]
        out.extend([(float(sims[r, j]), texts[j]) for j in row] for r, row in enumerate(top))
    return out


@contextmanager
def timed(into: list[float]):
    t = time.perf_counter()
    yield
    into.append(time.perf_counter() - t)


def compare(
    label: str,
    n: int,
    runs: dict[str, Callable[[], Any]],
    same: Callable[[Any, Any], bool],
    repeats: int,
) -> dict[str, Any]:
    """Best-of-``repeats`` texts/s of each side (alternating), and whether outputs agree."""
    times: dict[str, list[float]] = {side: [] for side in runs}
    outputs: dict[str, Any] = {}
    for _ in range(repeats):
        for side, run in runs.items():
            with timed(times[side]):
                outputs[side] = run()
    row: dict[str, Any] = {"function": label, "texts": n}
    for side in runs:
        row[f"{side}_per_s"] = round(n / min(times[side]))
    if "reference" in runs:
        row["speedup"] = round(row["new_per_s"] / row["reference_per_s"], 2)
        row["identical"] = bool(same(outputs["reference"], outputs["new"]))
    print(
        f"  {label:<28} "
        + "  ".join(f"{side} {row[f'{side}_per_s']:>8,}/s" for side in runs)
        + (f"  x{row['speedup']:.2f}  identical={row['identical']}" if "reference" in runs else ""),
        flush=True,
    )
    return row


def embed_runs(mods: dict[str, Any], chunks: list[list[str]], warm: bool) -> Callable[[], Any]:
    embedder = mods["embed"].HashingEmbedder()
    if warm:
        for c in chunks:
            embedder.embed_documents(c)

    def run() -> Any:
        e = embedder if warm else mods["embed"].HashingEmbedder()
        return np.concatenate([e.embed_documents(c) for c in chunks])

    return run


def importance_run(mods: dict[str, Any], texts: list[str], chunks) -> Callable[[], Any]:
    full = inf_new.TermStats.from_texts(texts)
    stats = mods["informativeness"].TermStats(full.n_docs, full.df)

    def run() -> Any:
        clear_caches(mods["informativeness"])
        return np.concatenate(
            [mods["informativeness"].content_importance(c, stats) for c in chunks]
        )

    return run


def term_stats_run(mods: dict[str, Any], store: MemoryStore, chunks) -> Callable[[], Any]:
    def run() -> Any:
        clear_caches(mods["informativeness"])
        with store.core.read():
            return [mods["corpus"].term_stats(store.core, c) for c in chunks]

    return run


def auto_importance_run(mods: dict[str, Any], store: MemoryStore, chunks) -> Callable[[], Any]:
    """What ingest does per chunk for ``importance="auto"``: the chunk's document frequencies
    in the index, the chunk counted in, the importance of each text."""
    inf = mods["informativeness"]

    def run() -> Any:
        clear_caches(inf)
        out = []
        with store.core.read():
            for c in chunks:
                stats = mods["corpus"].term_stats(store.core, c).add(c)
                out.append(inf.content_importance(c, inf.TermStats(stats.n_docs, stats.df)))
        return np.concatenate(out)

    return run


def screen_run(mods: dict[str, Any], texts: list[str]) -> Callable[[], Any]:
    def run() -> Any:
        return [
            (
                mods["secrets"].screen(t)[0],
                [(m.kind, m.start, m.end) for m in mods["secrets"].find_secrets(t)],
            )
            for t in texts
        ]

    return run


def bench_corpus(
    name: str, texts: list[str], store_texts: list[str], ref: dict | None, repeats: int
) -> list[dict[str, Any]]:
    print(f"{name}: {len(texts)} texts", flush=True)
    new = new_modules()
    chunks = batches(texts)
    sides = {"reference": ref, "new": new} if ref else {"new": new}
    rows = []
    n = len(texts)
    for warm in (False, True):
        rows.append(
            compare(
                f"embed ({'warm' if warm else 'cold'})",
                n,
                {s: embed_runs(m, chunks, warm) for s, m in sides.items()},
                lambda a, b: a.dtype == b.dtype and np.array_equal(a, b),
                repeats,
            )
        )
    near = nearest(texts)
    for warm in (False, True):
        runs = {}
        for s, m in sides.items():
            g = m["gate"].Gate()
            cands = [[m["gate"].Candidate(x, t) for x, t in row] for row in near]

            def run(m=m, g=g, cands=cands, warm=warm) -> Any:
                if not warm:
                    clear_caches(m["gate"])
                out = []
                for t, c in zip(texts, cands, strict=True):
                    v = g.judge(t, c)
                    out.append((v.decision.value, v.index, v.similarity, v.rule, v.band))
                return out

            if warm:
                run()
            runs[s] = run
        rows.append(
            compare(
                f"judge ({'warm' if warm else 'cold'})",
                n,
                runs,
                lambda a, b: (
                    [x[:4] + (x[4] and x[4].value,) for x in a]
                    == [x[:4] + (x[4] and x[4].value,) for x in b]
                ),
                repeats,
            )
        )
    rows.append(
        compare(
            "content_importance",
            n,
            {s: importance_run(m, texts, chunks) for s, m in sides.items()},
            np.array_equal,
            repeats,
        )
    )
    store = MemoryStore(":memory:", gate=Gate.off())
    store.ingest_many(store_texts, batch_size=BATCH, importance=0.5)
    rows.append(
        compare(
            "term_stats",
            n,
            {s: term_stats_run(m, store, chunks) for s, m in sides.items()},
            lambda a, b: [(x.n_docs, dict(x.df)) for x in a] == [(x.n_docs, dict(x.df)) for x in b],
            repeats,
        )
    )
    rows.append(
        compare(
            "auto importance (all three)",
            n,
            {s: auto_importance_run(m, store, chunks) for s, m in sides.items()},
            np.array_equal,
            repeats,
        )
    )
    rows.append(
        compare(
            "secrets.screen",
            n,
            {s: screen_run(m, texts) for s, m in sides.items()},
            lambda a, b: a == b,
            repeats,
        )
    )
    for r in rows:
        r["corpus"] = name
    return rows


def row_count_timings(texts: list[str], sizes: tuple[int, ...], repeats: int) -> list[dict]:
    """The keyword index's row count as the reference counts it (``COUNT(*)`` of the FTS5
    table) and as today (:func:`memlab.store.corpus.indexed_rows`), on an FTS5 table declared
    as the store's, of ``sizes`` rows (the bench texts, repeated with a row number)."""
    import sqlite3

    out = []
    for size in sizes:
        conn = sqlite3.connect(":memory:")
        conn.execute(
            "CREATE VIRTUAL TABLE memories_fts USING fts5(content, "
            "tokenize = 'unicode61 remove_diacritics 2')"
        )
        conn.executemany(
            "INSERT INTO memories_fts(rowid, content) VALUES (?, ?)",
            ((i + 1, f"{texts[i % len(texts)]} {i}") for i in range(size)),
        )
        best = {"reference": float("inf"), "new": float("inf")}
        counts = {}
        for _ in range(repeats):
            for side in ("reference", "new"):
                t = time.perf_counter()
                if side == "reference":
                    counts[side] = conn.execute("SELECT COUNT(*) FROM memories_fts").fetchone()[0]
                else:
                    counts[side] = corpus_new.indexed_rows(conn)
                best[side] = min(best[side], time.perf_counter() - t)
        assert counts["new"] == size
        row = {
            "rows": size,
            "reference_ms": round(best["reference"] * 1e3, 3),
            "new_ms": round(best["new"] * 1e3, 4),
            "identical": counts["reference"] == counts["new"],
        }
        print(f"  index row count at {size:,} rows: {row}", flush=True)
        out.append(row)
        conn.close()
    return out


#: Run in a child process with ``memlab`` imported from a given source tree: gated ingest of
#: the LoCoMo turns and of bench texts into fresh stores; prints the results and a digest of the
#: stored rows (id, content, importance, vector bytes) as JSON.
_INGEST_CHILD = """
import hashlib, json, sys, time
from datetime import datetime, timezone
import memlab
from memlab.store import MemoryStore
sets = json.loads(sys.stdin.read())
out = {"memlab": memlab.__file__}
for name, texts in sets.items():
    s = MemoryStore(":memory:")
    t = time.perf_counter()
    res = s.ingest_many(texts, batch_size=1000, now=datetime(2026, 1, 1, tzinfo=timezone.utc))
    seconds = time.perf_counter() - t
    h = hashlib.sha256()
    for r in s.core.execute("SELECT id, content, importance, embedding FROM memories ORDER BY id"):
        h.update(repr((r[0], r[1], r[2])).encode())
        h.update(bytes(r[3] or b""))
    out[name] = {
        "results": [[r.decision.value, r.similarity, r.memory_id, r.nearest_id, r.rule]
                    for r in res],
        "rows_sha256": h.hexdigest(),
        "per_s": len(texts) / seconds,
    }
print(json.dumps(out))
"""


def end_to_end(rev: str, sets: dict[str, list[str]]) -> list[dict[str, Any]]:
    """``ingest_many`` of each set with the whole memlab at ``rev`` and with today's, each in a
    child process: ingest rates, and whether every result and every stored row is identical."""
    import tarfile
    import tempfile

    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", rev, "memlab"], capture_output=True, check=True
        ).stdout
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(tmp, filter="data")
        for side, root in (("reference", tmp), ("new", str(REPO))):
            child = subprocess.run(
                [sys.executable, "-c", _INGEST_CHILD],
                input=json.dumps(sets),
                capture_output=True,
                text=True,
                check=True,
                cwd=root,
                env={**os.environ, "PYTHONPATH": root},
            )
            runs[side] = json.loads(child.stdout)
            assert runs[side]["memlab"].startswith(root), runs[side]["memlab"]
    rows = []
    for name, texts in sets.items():
        ref, new = runs["reference"][name], runs["new"][name]
        row = {
            "corpus": name,
            "texts": len(texts),
            "reference_per_s": round(ref["per_s"]),
            "new_per_s": round(new["per_s"]),
            "speedup": round(new["per_s"] / ref["per_s"], 2),
            "identical": ref["results"] == new["results"]
            and ref["rows_sha256"] == new["rows_sha256"],
        }
        print(f"  ingest_many {name}: {row}", flush=True)
        rows.append(row)
    return rows


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# Per-text work of gated ingest: reference code against today's",
        "",
        f"Reference: the modules at git revision `{report['reference']}` (run in the same "
        f"process, alternating, best of {report['repeats']}); batches of {BATCH}. "
        f"Load average (1 min) {report['loadavg_1min'][0]:.2f} at start, "
        f"{report['loadavg_1min'][1]:.2f} at the end, on {report['machine']}.",
        "",
        "| corpus | function | texts | reference texts/s | new texts/s | speed-up | identical |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for r in report["rows"]:
        lines.append(
            f"| {r['corpus']} | {r['function']} | {r['texts']:,} | "
            f"{r.get('reference_per_s', float('nan')):,} | {r['new_per_s']:,} | "
            f"x{r.get('speedup', float('nan')):.2f} | {r.get('identical', '-')} |"
        )
    lines += [
        "",
        "The keyword index's row count (`term_stats`'s `n_docs`, once per ingest batch), on an "
        "FTS5 table declared as the store's:",
        "",
        "| rows | reference COUNT(*) of the FTS5 table, ms | new count of its docsize table, ms "
        "| identical |",
        "|---:|---:|---:|---|",
    ]
    for r in report["row_count"]:
        lines.append(f"| {r['rows']:,} | {r['reference_ms']} | {r['new_ms']} | {r['identical']} |")
    if report.get("ingest"):
        lines += [
            "",
            "Gated `MemoryStore.ingest_many` (batches of 1,000, fresh in-memory store, default "
            "gate and auto importance) with the whole memlab at the reference revision and with "
            "today's, each in its own process (the store's side included, so this is the whole "
            "ingest rate at a small size, not the per-text work alone):",
            "",
            "| texts | n | reference texts/s | new texts/s | speed-up | identical |",
            "|---|---:|---:|---:|---:|---|",
        ]
        for r in report["ingest"]:
            lines.append(
                f"| {r['corpus']} | {r['texts']:,} | {r['reference_per_s']:,} | "
                f"{r['new_per_s']:,} | x{r['speedup']:.2f} | {r['identical']} |"
            )
    lines += [
        "",
        "Identical: vectors equal bit for bit (`np.array_equal`, float32), gate verdicts "
        "(decision, candidate, similarity, rule, band), importances (`np.array_equal`), "
        "`term_stats` (row count and every document frequency), screened texts and secret spans.",
        "Cold: a fresh embedder / all memoised text features cleared before the run; warm: the "
        "same run again with the caches filled. `term_stats` includes its SQL look-ups in the "
        "store's keyword index (10,000 bench texts, or the LoCoMo turns): the document "
        "frequencies read through `fts5vocab` (which walks each term's list of rows) are the "
        "same SQL in both and bound `term_stats` and the auto-importance sequence, so their "
        "ratio is the machine's noise apart from the row count, whose gain grows with the "
        "store's size (second table).",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reference", default="39549be", help="git revision of the reference")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--n", type=int, default=20000, help="bench texts")
    parser.add_argument(
        "--ingest", type=int, default=6000, help="bench texts ingested end to end (0: none)"
    )
    args = parser.parse_args()
    load_start = os.getloadavg()[0]
    print(f"load average at start: {os.getloadavg()}", flush=True)
    try:
        ref = reference_modules(args.reference)
    except (subprocess.CalledProcessError, FileNotFoundError) as error:
        print(f"no reference (git revision {args.reference} unavailable: {error})", flush=True)
        ref = None
    bench = bench_store.make_texts(args.n, seed=20000)
    locomo_name, turns = locomo_texts()
    rows = bench_corpus(
        "bench_store texts (seed 20000)", bench, bench[: args.n // 2], ref, args.repeats
    )
    rows += bench_corpus(f"LoCoMo {locomo_name} turns", turns, turns, ref, args.repeats)
    row_count = row_count_timings(bench, (10_000, 100_000), args.repeats)
    ingest = []
    if ref is not None and args.ingest:
        print("end to end:", flush=True)
        ingest = end_to_end(
            args.reference, {"LoCoMo turns": turns, "bench texts": bench[: args.ingest]}
        )
    report = {
        "reference": args.reference if ref else None,
        "repeats": args.repeats,
        "batch": BATCH,
        "loadavg_1min": [load_start, os.getloadavg()[0]],
        "machine": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "rows": rows,
        "row_count": row_count,
        "ingest": ingest,
    }
    out = HERE / "results"
    out.mkdir(exist_ok=True)
    (out / "bench_ingest_text.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "bench_ingest_text.md").write_text(markdown(report))
    print(f"wrote {out / 'bench_ingest_text.md'}", flush=True)


if __name__ == "__main__":
    main()
