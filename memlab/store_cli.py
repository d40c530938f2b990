"""``memlab store VERB``: the memory store from the shell.

Verbs: ``remember`` (ingest; text from the arguments or stdin), ``recall`` (search), ``get``,
``history``, ``versions`` (what superseded what), ``forget`` (archive, or ``--purge`` to
delete for good), ``restore``,
``pin`` (protect from forgetting), ``sweep`` (dry run unless ``--apply``), ``consolidate``,
``stats``, ``export``, ``import`` and ``fit`` (FSRS-6 weights fitted to the store's own
access log by ``MemoryStore.fit``; a report unless ``--apply [always]``). Every verb takes
``--db PATH`` (or ``$MEMLAB_DB``), ``--embedder NAME``,
``--json`` (one JSON document on stdout) and ``--now ISO`` (a simulated clock).

Exit codes: 0 done, 1 nothing found (``recall`` without hits), 2 a bad argument or a store
error (one line on stderr: ``memlab store VERB: error: ...``); nothing is changed then.

    $ echo "The staging database listens on port 5432." | memlab store remember --db notes.db
    create #1
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

#: Environment variable naming the database when ``--db`` is not given.
DB_ENV = "MEMLAB_DB"

#: Exit code of a verb that found nothing (``recall`` without hits).
EXIT_NOTHING = 1
#: Exit code of a bad argument or a store error.
EXIT_ERROR = 2

_MINILM = "sentence-transformers/all-MiniLM-L6-v2"


# ---------------------------------------------------------------- opening the store
def add_store_options(parser: argparse.ArgumentParser) -> None:
    """``--db``, ``--embedder``, ``--model-path``, ``--namespace``, ``--secrets``."""
    parser.add_argument(
        "--db",
        default=os.environ.get(DB_ENV),
        help=f"SQLite file of the store (created if absent; default ${DB_ENV})",
    )
    parser.add_argument(
        "--embedder",
        default="hashing",
        help="hashing (default, no model), fastembed (MiniLM) or fastembed:<model> for any"
        " model fastembed lists, loaded offline",
    )
    parser.add_argument(
        "--model-path",
        default=None,
        help="local folder of the fastembed model (default: the shared MiniLM for MiniLM,"
        " else fastembed's cache)",
    )
    parser.add_argument(
        "--namespace",
        default="default",
        help="hard partition of the file to use: nothing reads or changes another namespace's"
        " memories (default 'default')",
    )
    parser.add_argument(
        "--secrets",
        choices=("redact", "reject", "allow"),
        default="redact",
        help="secret screening of stored text (default redact)",
    )


def open_store(args: argparse.Namespace, clock: Callable[[], datetime] | None = None) -> Any:
    """The MemoryStore the options name (``ValueError`` with a clear message otherwise)."""
    from memlab.store import MemoryStore

    if not args.db:
        raise ValueError(f"no database: give --db PATH or set ${DB_ENV}")
    path = args.db if args.db == ":memory:" else str(Path(args.db).expanduser())
    model_path = args.model_path
    embedder = args.embedder
    if model_path is None and embedder.strip().lower() in ("fastembed", f"fastembed:{_MINILM}"):
        from memlab.datasets import shared_path

        model_path = shared_path("minilm", required=False)
    if model_path is not None and embedder.strip().lower() == "hashing":
        raise ValueError("--model-path applies to fastembed embedders only")
    kwargs: dict[str, Any] = {
        "embedder": embedder,
        "secrets": args.secrets,
        "clock": clock,
        "namespace": args.namespace,
    }
    if model_path is not None:
        from memlab.embed import make_embedder

        kwargs["embedder"] = make_embedder(embedder, model_path=model_path)
    return MemoryStore(path, **kwargs)


def parse_now(text: str | None) -> datetime | None:
    """``--now`` as a timezone-aware datetime (a naive one is taken as UTC)."""
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"--now must be an ISO 8601 timestamp, got {text!r}") from None
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


# ---------------------------------------------------------------- output helpers
def _emit(args: argparse.Namespace, payload: Any, lines: list[str]) -> None:
    if args.json:
        print(json.dumps(payload, default=str, ensure_ascii=False))
    else:
        for line in lines:
            print(line)


def _short(text: str, n: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _decision(result: Any) -> str:
    return str(getattr(result.decision, "value", result.decision)).lower()


def _read_texts(args: argparse.Namespace) -> list[str]:
    if args.text and args.text != ["-"]:
        return [" ".join(args.text)]
    data = sys.stdin.read()
    if args.lines:
        texts = [line.strip() for line in data.splitlines() if line.strip()]
    else:
        texts = [data.strip()]
    if not texts or not any(texts):
        raise ValueError("nothing to remember: give the text as arguments or on stdin")
    return texts


# ---------------------------------------------------------------- verbs
def _remember(store: Any, args: argparse.Namespace, now: datetime | None) -> int:
    texts = _read_texts(args)
    meta: dict[str, Any] = {
        "project": args.project,
        "topics": args.topic or [],
        "layer": args.layer,
        "entity": args.entity,
        "altitude": args.altitude,
    }
    if args.importance is not None:
        meta["importance"] = args.importance
    results = store.ingest_many(texts, now=now, **meta)
    payload = [r.to_dict() for r in results]
    lines = []
    for r in results:
        sim = "-" if r.similarity is None else f"{r.similarity:.3f}"
        rule = getattr(r, "rule", None)
        why = f"similarity {sim}" + (f", rule {rule}" if rule else "")
        of = ""
        if _decision(r) in ("supersede", "related") and r.nearest_id is not None:
            of = f" of #{r.nearest_id}"
        lines.append(f"{_decision(r)} #{r.memory_id}{of} ({why})")
    _emit(args, payload if args.lines else payload[0], lines)
    return 0


def _recall(store: Any, args: argparse.Namespace, now: datetime | None) -> int:
    hits = store.search(
        " ".join(args.query),
        args.k,
        project=args.project,
        topics=args.topic or [],
        mark_accessed=not args.no_mark,
        include_archived=args.include_archived,
        include_history=args.include_history,
        now=now,
    )
    lines = [f"#{h.memory.id}  {h.score:.4f}  {_short(h.memory.content)}" for h in hits]
    _emit(args, [h.to_dict() for h in hits], lines)
    return 0 if hits else EXIT_NOTHING


def _get(store: Any, args: argparse.Namespace, now: datetime | None) -> int:
    m = store.get(args.id)
    lines = [
        f"#{m.id} [{m.status}] {m.layer} importance {m.importance:.2f}"
        f" stability {m.stability:.2f} d, {m.access_count} access(es)",
        m.content,
    ]
    _emit(args, m.to_dict(), lines)
    return 0


def _history(store: Any, args: argparse.Namespace, now: datetime | None) -> int:
    frame = store.history(args.id)
    rows = []
    lines = []
    for r in frame.itertuples(index=False):
        grade = None if r.grade is None or str(r.grade) == "<NA>" else int(r.grade)
        rows.append(
            {
                "at": r.at.isoformat(),
                "kind": r.kind,
                "grade": grade,
                "text": r.text if isinstance(r.text, str) else None,
                "data": r.data if isinstance(r.data, dict) else None,
            }
        )
        extra = f" grade {grade}" if grade is not None else ""
        text = f"  {_short(r.text, 70)}" if isinstance(r.text, str) else ""
        lines.append(f"{r.at.isoformat()}  {r.kind}{extra}{text}")
    _emit(args, rows, lines)
    return 0


def _versions(store: Any, args: argparse.Namespace, now: datetime | None) -> int:
    frame = store.versions(args.id)
    rows = []
    lines = []
    for r in frame.to_dict("records"):
        sim = r["similarity"]
        sim = None if sim is None or sim != sim else float(sim)  # NaN: not gated
        row = {
            "version": int(r["version"]),
            "memory_id": int(r["memory_id"]),
            "content": r["content"],
            "status": r["status"],
            "created_at": r["created_at"].isoformat(),
            "decision": r["decision"],
            "rule": r["rule"],
            "similarity": sim,
            "current": bool(r["current"]),
        }
        rows.append(row)
        how = " ".join(str(x) for x in (row["decision"], row["rule"]) if x)
        lines.append(
            f"v{row['version']} #{row['memory_id']} [{row['status']}]"
            + (f" {how}" if how else "")
            + f"  {_short(row['content'], 70)}"
        )
    _emit(args, rows, lines)
    return 0


def _forget(store: Any, args: argparse.Namespace, now: datetime | None) -> int:
    if args.purge:
        store.purge(args.id)
        _emit(args, {"id": args.id, "purged": True}, [f"purged #{args.id} (deleted for good)"])
        return 0
    store.archive(args.id, now=now)
    m = store.get(args.id)
    _emit(args, m.to_dict(), [f"#{m.id} {m.status}"])
    return 0


def _restore(store: Any, args: argparse.Namespace, now: datetime | None) -> int:
    store.restore(args.id, now=now)
    m = store.get(args.id)
    _emit(args, m.to_dict(), [f"#{m.id} {m.status}"])
    return 0


def _pin(store: Any, args: argparse.Namespace, now: datetime | None) -> int:
    # importance 1 (>= 0.9 is protected from compression and dropping); no neighbour tagging
    store.importance(args.id, 0.0, 0.0, level=1.0, gain=0.0, now=now)
    m = store.get(args.id)
    _emit(args, m.to_dict(), [f"pinned #{m.id} (importance {m.importance:.2f}: protected)"])
    return 0


def _keep_arg(text: str) -> float | int:
    """``--keep``: a share in (0, 1] written with a point (``0.5``) or a count (``500``)."""
    try:
        return float(text) if any(c in text for c in ".eE") else int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--keep must be a share such as 0.5 or a count such as 500, got {text!r}"
        ) from None


def _sweep(store: Any, args: argparse.Namespace, now: datetime | None) -> int:
    frame = store.forget_sweep(
        now=now,
        dry_run=not args.apply,
        keep=getattr(args, "keep", None),
        keep_by=getattr(args, "keep_by", None),
    )
    counts = frame["action"].value_counts().to_dict() if len(frame) else {}
    applied = int(frame["applied"].sum()) if len(frame) else 0
    lines = [
        ("applied " if args.apply else "dry run (nothing changed) ")
        + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        + (f"; {applied} applied" if args.apply else "")
    ]
    for r in frame.to_dict("records"):
        if r["action"] != "keep":
            why = f"  keep score {r['keep_score']:.3f}" if r.get("reason") == "budget" else ""
            lines.append(
                f"#{r['id']}  {r['action']}  heat {r['heat']:.1f} ({r['band']})"
                f"  risk {r['risk']:.1f}  {r['state']}{why}"
            )
    payload = {
        "dry_run": not args.apply,
        "counts": {str(k): int(v) for k, v in counts.items()},
        "applied": applied,
        "rows": json.loads(frame.to_json(orient="records")),
    }
    _emit(args, payload, lines)
    return 0


def _consolidate(store: Any, args: argparse.Namespace, now: datetime | None) -> int:
    created = store.consolidate(now, min_group=args.min_group)
    lines = [f"created {len(created)} summar{'y' if len(created) == 1 else 'ies'}"] + [
        f"#{i}  {_short(store.get(i).content)}" for i in created
    ]
    _emit(args, {"created": [int(i) for i in created]}, lines)
    return 0


def _stats(store: Any, args: argparse.Namespace, now: datetime | None) -> int:
    s = store.stats()
    lines = [f"{k}: {v}" for k, v in s.items()]
    _emit(args, s, lines)
    return 0


def _export(store: Any, args: argparse.Namespace, now: datetime | None) -> int:
    n = store.export_jsonl(args.path)
    _emit(args, {"path": args.path, "memories": n}, [f"exported {n} memories to {args.path}"])
    return 0


def _import(store: Any, args: argparse.Namespace, now: datetime | None) -> int:
    if not Path(args.path).is_file():
        raise FileNotFoundError(f"no such export file: {args.path}")
    mapping = store.import_jsonl(args.path, now=now)
    _emit(
        args,
        {
            "path": args.path,
            "imported": len(mapping),
            "ids": {str(k): v for k, v in mapping.items()},
        },
        [f"imported {len(mapping)} memories from {args.path}"],
    )
    return 0


def _fit(store: Any, args: argparse.Namespace, now: datetime | None) -> int:
    apply = {None: False, "if-better": "if_better", "always": True}[args.apply]
    result = store.fit(
        apply=apply,
        min_reviews=args.min_reviews,
        min_lapses=args.min_lapses,
        holdout=args.holdout,
    )
    ll = result.log_loss
    payload = {
        **result.to_dict(),
        "default_log_loss": ll["default"],
        "fitted_log_loss": ll["fitted"],
    }
    if args.out:
        Path(args.out).write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    lines = [
        f"FSRS-6 fitted to {result.n_reviews} reviews of {result.n_memories} memories"
        f" ({result.n_scored} scored, {result.n_lapses} lapses; held out, the last"
        f" {result.holdout:.0%} by time: {result.n_test} scored)",
        f"held-out log loss: default weights {ll['default']:.4f}, the store's before"
        f" {ll['previous']:.4f}, fitted {ll['fitted']:.4f} (heat curve {ll['heat']:.4f})",
        "weights: " + " ".join(f"{w:.4f}" for w in result.weights),
        "applied: the store runs the fitted weights"
        if result.applied
        else (
            "not applied: the fit does not beat the store's weights on the held-out reviews"
            if args.apply
            else "not applied (a report; --apply keeps the weights if they do better)"
        ),
    ]
    _emit(args, payload, lines)
    return 0


# ---------------------------------------------------------------- the parser
def _common() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    add_store_options(common)
    common.add_argument("--json", action="store_true", help="print one JSON document")
    common.add_argument(
        "--now", default=None, help="simulated time, ISO 8601 (naive = UTC); default: the clock"
    )
    return common


def _meta_options(p: argparse.ArgumentParser) -> None:
    from memlab.models.heat import ALTITUDES, LAYERS

    p.add_argument("--project", default=None, help="project scope")
    p.add_argument("--topic", action="append", help="a topic (repeatable)")
    p.add_argument("--layer", choices=LAYERS, default="context")
    p.add_argument("--entity", default=None, help="what the memory is about")
    p.add_argument("--altitude", choices=ALTITUDES, default="implementation")
    p.add_argument("--importance", type=float, default=None, help="0-1")


def register(subparsers: Any) -> None:
    """Add ``memlab store`` and its verbs."""
    p = subparsers.add_parser(
        "store",
        help="use a memory store from the shell (remember, recall, sweep, ...)",
        description="Use a memlab memory store from the shell. Every verb takes --db PATH (or"
        f" ${DB_ENV}), --embedder, --json and --now; exit codes: 0 done, 1 nothing found,"
        " 2 a bad argument or a store error (one line on stderr, nothing changed).",
    )
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    common = _common()

    def verb(name: str, fn: Callable[..., int], help_: str) -> argparse.ArgumentParser:
        sp = verbs.add_parser(name, parents=[common], help=help_, description=help_)
        sp.set_defaults(func=run, verb_fn=fn, verb=name)
        return sp

    sp = verb("remember", _remember, "store a text (the arguments, or stdin)")
    sp.add_argument("text", nargs="*", help="the text (default: read stdin)")
    sp.add_argument("--lines", action="store_true", help="stdin: one memory per line")
    _meta_options(sp)

    sp = verb("recall", _recall, "search (strengthens the hits unless --no-mark)")
    sp.add_argument("query", nargs="+")
    sp.add_argument("-k", type=int, default=10, help="number of hits (default 10)")
    sp.add_argument("--project", default=None)
    sp.add_argument("--topic", action="append")
    sp.add_argument("--no-mark", action="store_true", help="a preview: strengthen nothing")
    sp.add_argument("--include-archived", action="store_true")
    sp.add_argument(
        "--include-history", action="store_true", help="superseded versions can match too"
    )

    for name, fn, help_ in (
        ("get", _get, "show one memory"),
        ("history", _history, "the events of one memory"),
        ("versions", _versions, "the versions of a memory's fact (what superseded what)"),
        ("restore", _restore, "make an archived memory active again"),
        ("pin", _pin, "protect a memory from forgetting (importance 1)"),
    ):
        verb(name, fn, help_).add_argument("id", type=int)

    sp = verb("forget", _forget, "archive a memory (or --purge: delete it for good)")
    sp.add_argument("id", type=int)
    sp.add_argument("--purge", action="store_true", help="delete it and its history for good")

    sp = verb("sweep", _sweep, "what the heat model would forget (a dry run unless --apply)")
    sp.add_argument("--apply", action="store_true", help="apply compress / drop (archive)")
    sp.add_argument(
        "--keep",
        type=_keep_arg,
        default=None,
        help="a budget: keep this share (0.5) or count (500) of the memories, archive the rest",
    )
    sp.add_argument(
        "--keep-by",
        default=None,
        help="keep score of the budget (memlab, fsrs6, heat, exponential, recency, random,"
        " length, idf; default memlab)",
    )

    sp = verb("consolidate", _consolidate, "merge cold memories into summaries")
    sp.add_argument("--min-group", type=int, default=2)

    verb("stats", _stats, "counts, embedder, index")

    sp = verb("export", _export, "write every memory with its history as JSON lines")
    sp.add_argument("path")
    sp = verb("import", _import, "add the memories of an export")
    sp.add_argument("path")

    sp = verb(
        "fit",
        _fit,
        "fit FSRS-6 weights to the store's own access log (store.fit(); a report unless --apply)",
    )
    sp.add_argument(
        "--apply",
        nargs="?",
        const="if-better",
        choices=("if-better", "always"),
        default=None,
        help="keep the fitted weights: if they beat the store's on the held-out reviews"
        " (--apply), or always (--apply always); default: only report",
    )
    sp.add_argument("--out", default=None, help="write the result as JSON to this file")
    sp.add_argument("--min-reviews", type=int, default=100, help="scored reviews needed")
    sp.add_argument("--min-lapses", type=int, default=5, help="reviews graded Again needed")
    sp.add_argument("--holdout", type=float, default=0.2, help="share held out, last by time")


#: Errors a verb reports as one line with exit code 2.
ERRORS: tuple[type[BaseException], ...] = (
    ValueError,
    TypeError,
    LookupError,
    FileNotFoundError,
    sqlite3.Error,
)


def run(args: argparse.Namespace) -> int:
    """Open the store, run the verb, close the store; errors become one line and exit 2."""
    try:
        now = parse_now(args.now)
        store = open_store(args, clock=(lambda: now) if now is not None else None)
        try:
            return int(args.verb_fn(store, args, now))
        finally:
            store.close()
    except ERRORS as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        print(f"memlab store {args.verb}: error: {message}", file=sys.stderr)
        return EXIT_ERROR


__all__ = [
    "DB_ENV",
    "ERRORS",
    "EXIT_ERROR",
    "EXIT_NOTHING",
    "add_store_options",
    "open_store",
    "parse_now",
    "register",
    "run",
]
