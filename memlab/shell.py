"""``memlab store VERB``: the memory store from the shell.

One verb per operation of :data:`memlab.ops.OPS` (which the MCP tools share). Every verb takes
``--db PATH`` (or ``$MEMLAB_DB``), ``--embedder NAME``, ``--json`` (one JSON document on stdout)
and ``--now ISO`` (a simulated clock). Exit codes: 0 done, 1 nothing found (``recall`` without
hits), 2 any error (one line on stderr, see :func:`memlab.cli.main`); nothing is changed then.

    $ echo "The staging database listens on port 5432." | memlab store remember --db notes.db
    create #1
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import re
import sys
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, get_origin

from memlab.ops import OPS, Arg, Op, check_bounds, parse_now
from memlab.store.validation import MAX_CONTENT_BYTES

#: Environment variable naming the database when ``--db`` is not given.
DB_ENV = "MEMLAB_DB"

#: Exit code of a verb that found nothing (``recall`` without hits).
EXIT_NOTHING = 1
#: Most characters read from stdin (``remember --lines`` of a long file; beyond: an error).
STDIN_LIMIT = 64 * MAX_CONTENT_BYTES


def add_store_options(parser: argparse.ArgumentParser) -> None:
    """``--db``, ``--embedder``, ``--model-path``, ``--namespace``, ``--secrets``."""
    parser.add_argument(
        "--db",
        default=os.environ.get(DB_ENV),
        help=f"SQLite file of the store (created if absent; default ${DB_ENV})",
    )
    parser.add_argument(
        "--embedder",
        help="hashing (no model), fastembed (MiniLM) or fastembed:<model> for any model"
        " fastembed lists, loaded offline (default: the store's own, hashing for a new one)",
    )
    parser.add_argument(
        "--model-path",
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
        "--judge",
        metavar="MODULE:FUNCTION",
        help="a custom judge of the gate, judge(text, candidates) -> decision (e.g. a language"
        " or NLI model; memlab.gate.Gate judged_by); default: the offline rules",
    )
    parser.add_argument(
        "--secrets",
        choices=("redact", "reject", "allow"),
        default="redact",
        help="secret screening of stored text (default redact)",
    )


def open_store(args: argparse.Namespace, clock: Callable[[], datetime] | None = None) -> Any:
    """The MemoryStore the options name (``ValueError`` with a clear message otherwise)."""
    from memlab.embed import embedder_from_options
    from memlab.store import MemoryStore

    if not args.db:
        raise ValueError(f"no database: give --db PATH or set ${DB_ENV}")
    path = args.db if args.db == ":memory:" else str(Path(args.db).expanduser())
    embedder = embedder_from_options(args.embedder, args.model_path)
    judge = None  # a judge runs over the stored gate's settings
    if getattr(args, "judge", None):
        module, _, name = args.judge.partition(":")
        try:
            judge = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError, ValueError) as error:
            raise ValueError(
                f"--judge must name MODULE:FUNCTION, got {args.judge!r}: {error}"
            ) from None
    return MemoryStore(
        path,
        embedder=embedder,
        secrets=args.secrets,
        namespace=args.namespace,
        clock=clock,
        gate=judge,
    )


def _short(text: str, n: int = 100) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _read_texts(args: argparse.Namespace) -> list[str]:
    if args.content and args.content != ["-"]:
        return [" ".join(args.content)]
    if sys.stdin is None or sys.stdin.closed:
        raise ValueError("stdin is closed: give the text as arguments")
    data = sys.stdin.read(STDIN_LIMIT + 1)
    if len(data) > STDIN_LIMIT:
        raise ValueError(f"stdin holds more than {STDIN_LIMIT} characters; split the input")
    texts = [t.strip() for t in data.splitlines() if t.strip()] if args.lines else [data.strip()]
    if not any(texts):
        raise ValueError("nothing to remember: give the text as arguments or on stdin")
    return texts


def _remember(results: Any, args: Any) -> list[str]:
    lines = []
    for r in results if isinstance(results, list) else [results]:
        sim = "-" if r["similarity"] is None else f"{r['similarity']:.3f}"
        why = f"similarity {sim}" + (f", rule {r['rule']}" if r.get("rule") else "")
        why += f", {r['redacted']} secret(s) redacted" if r["redacted"] else ""
        of = ""
        if r["decision"] in ("supersede", "related") and r["nearest_id"] is not None:
            of = f" of #{r['nearest_id']}"
        lines.append(f"{r['decision']} #{r['memory_id']}{of} ({why})")
    return lines


def _details(m: dict[str, Any]) -> list[str]:
    return [
        f"#{m['id']} [{m['status']}] {m['layer']} importance {m['importance']:.2f}"
        f" stability {m['stability']:.2f} d, {m['access_count']} access(es)",
        m["content"],
    ]


def _history(rows: Any, args: Any) -> list[str]:
    return [
        f"{r['at']}  {r['kind']}"
        + (f" grade {r['grade']}" if r["grade"] is not None else "")
        + (f"  {_short(r['text'], 70)}" if r["text"] else "")
        for r in rows
    ]


def _versions(rows: Any, args: Any) -> list[str]:
    lines = []
    for r in rows:
        how = " ".join(str(x) for x in (r["decision"], r["rule"]) if x)
        lines.append(
            f"v{r['version']} #{r['memory_id']} [{r['status']}]"
            + (f" {how}" if how else "")
            + f"  {_short(r['content'], 70)}"
        )
    return lines


def _sweep(s: Any, args: Any) -> list[str]:
    apply = not s["dry_run"]
    lines = [
        ("applied " if apply else "dry run (nothing changed) ")
        + ", ".join(f"{k} {v}" for k, v in sorted(s["counts"].items()))
        + (f"; {s['applied']} applied" if apply else "")
    ]
    for r in s["rows"]:
        if r["action"] != "keep":
            why = f"  keep score {r['keep_score']:.3f}" if r["reason"] == "budget" else ""
            lines.append(
                f"#{r['id']}  {r['action']}  heat {r['heat']:.1f} ({r['band']})"
                f"  risk {r['risk']:.1f}  {r['state']}{why}"
            )
    return lines


def _fit(fit: Any, args: Any) -> list[str]:
    if args.out:
        Path(args.out).write_text(json.dumps(fit, indent=2) + "\n", encoding="utf-8")
    ll = fit["log_loss"]
    return [
        f"FSRS-6 fitted to {fit['reviews']} reviews of {fit['memories']} memories"
        f" ({fit['scored']} scored, {fit['lapses']} lapses; held out, the last"
        f" {fit['holdout']:.0%} by time: {fit['held_out']} scored)",
        f"held-out log loss: default weights {ll['default']:.4f}, the store's before"
        f" {ll['previous']:.4f}, fitted {ll['fitted']:.4f} (heat curve {ll['heat']:.4f})",
        "weights: " + " ".join(f"{w:.4f}" for w in fit["weights"]),
        "applied: the store runs the fitted weights"
        if fit["applied"]
        else "not applied: the fit does not beat the store's weights on the held-out reviews"
        if args.apply
        else "not applied (a report; --apply keeps the weights if they do better)",
    ]


def _hits(hits: Any, args: Any) -> list[str]:
    def note(h: dict[str, Any]) -> str:
        if h.get("superseded_by"):
            return f"  (superseded by #{h['superseded_by']})"
        later = h.get("possibly_outdated_by")
        return f"  (possibly outdated by #{later})" if later else ""

    return [f"#{h['memory_id']}  {h['score']:.4f}  {_short(h['content'])}{note(h)}" for h in hits]


#: How each verb shows an operation's JSON as text lines.
SHOW: dict[str, Callable[[Any, Any], list[str]]] = {
    "ingest": _remember,
    "search": _hits,
    "context": _hits,
    "importance": lambda r, args: [*_details(r["memory"]), f"tagged {len(r['tagged'])}"],
    "pin": lambda m, args: [f"pinned #{m['id']} (importance {m['importance']:.2f}: protected)"],
    "use": lambda m, args: _details(m),
    "get": lambda m, args: _details(m),
    "history": _history,
    "versions": _versions,
    "forget": lambda m, args: [
        f"purged {' '.join(f'#{i}' for i in m['purged'])} (deleted for good)"
        if m.get("purged")
        else f"#{m['id']} {m['status']}"
    ],
    "restore": lambda m, args: [f"#{m['id']} {m['status']}"],
    "sweep": _sweep,
    "consolidate": lambda r, args: [
        f"created {len(r['created'])} summar{'y' if len(r['created']) == 1 else 'ies'}",
        *(f"#{m['id']}  {_short(m['content'])}" for m in r["summaries"]),
    ],
    "stats": lambda s, args: [f"{k}: {v}" for k, v in s.items()],
    "export": lambda r, args: [f"exported {r['memories']} memories to {r['path']}"],
    "import": lambda r, args: [f"imported {r['imported']} memories from {r['path']}"],
    "fit": _fit,
}


def _flag(arg: Arg) -> str:
    """How the shell spells ``arg`` (``--include-history``, ``--no-mark``, ``id``)."""
    return arg.cli or "--" + arg.name.replace("_", "-")


def _add(parser: argparse.ArgumentParser, arg: Arg) -> None:
    """``arg`` as an argparse argument (its value lands under ``arg.name``)."""
    flag, kind = _flag(arg), arg.scalar
    if not flag.startswith("-"):
        parser.add_argument(arg.name, metavar=flag, type=kind, nargs=arg.nargs, help=arg.help)
    elif kind is bool:  # a flag spelled as its opposite (--apply, --no-mark) clears a default True
        action = "store_false" if arg.default else "store_true"
        parser.add_argument(flag, dest=arg.name, action=action, help=arg.help)
    elif get_origin(kind) is list:
        parser.add_argument(
            flag,
            dest=arg.name,
            action="append",
            default=[],  # argparse appends to a copy
            metavar=flag[2:].upper(),
            help=f"{arg.help} (repeatable)",
        )
    else:
        shown = "" if arg.default is None else f" (default {arg.default})"
        parser.add_argument(
            flag,
            dest=arg.name,
            type=None if arg.choices else kind,
            choices=arg.choices,
            default=arg.default,
            nargs=arg.nargs,
            const=arg.const,
            help=arg.help + shown,
        )


#: Options of the shell alone (how a verb reads or writes, not what the store does).
SHELL_OPTIONS: dict[str, tuple[tuple[str, dict[str, Any]], ...]] = {
    "ingest": (("--lines", {"action": "store_true", "help": "stdin: one memory per line"}),),
    "fit": (("--out", {"help": "write the result as JSON to this file"}),),
}


def register(subparsers: Any) -> None:
    """Add ``memlab store`` and a verb for each operation of :data:`memlab.ops.OPS`."""
    p = subparsers.add_parser(
        "store",
        help="use a memory store from the shell (remember, recall, sweep, ...)",
        description="Use a memlab memory store from the shell. Every verb takes --db PATH (or"
        f" ${DB_ENV}), --embedder, --json and --now; exit codes: 0 done, 1 nothing found,"
        " 2 an error (one line on stderr, nothing changed).",
    )
    verbs = p.add_subparsers(dest="verb", metavar="VERB")
    verbs.required = True
    common = argparse.ArgumentParser(add_help=False)
    add_store_options(common)
    common.add_argument("--json", action="store_true", help="print one JSON document")
    common.add_argument("--now", help="simulated time, ISO 8601 (naive = UTC)")
    for op in OPS:
        if op.verb is None:
            continue
        sp = verbs.add_parser(op.verb, parents=[common], help=op.summary, description=op.help)
        sp.set_defaults(func=run, op=op, verb=op.verb)
        for arg in op.args:
            _add(sp, arg)
        for flag, options in SHELL_OPTIONS.get(op.name, ()):
            sp.add_argument(flag, **options)


def _check_utf8(name: str, value: Any) -> None:
    """Python hands bytes of argv and stdin that are not UTF-8 on as U+DC80-U+DCFF."""
    for text in value if isinstance(value, list) else [value]:
        bad = re.search("[\udc80-\udcff]", text) if isinstance(text, str) else None
        if bad is not None:
            raise ValueError(
                f"{name}: not UTF-8 (byte {ord(bad.group()) - 0xDC00:#04x} at character"
                f" {bad.start()}); convert the input to UTF-8, e.g. with iconv"
            )


def _arguments(op: Op, args: argparse.Namespace) -> dict[str, Any]:
    kw = {a.name: getattr(args, a.name) for a in op.args}
    if op.name == "ingest":
        texts = _read_texts(args)
        kw["content"] = texts if args.lines else texts[0]
    for a in op.args:
        _check_utf8(_flag(a), kw[a.name])
    check_bounds(op, kw, _flag)
    return kw


def run(args: argparse.Namespace) -> int:
    """Open the store, run the verb, close the store (errors: :func:`memlab.cli.main`)."""
    op: Op = args.op
    now = parse_now(args.now, "--now", naive_utc=True)
    kw = _arguments(op, args)
    new = bool(args.db) and args.db != ":memory:" and not Path(args.db).expanduser().exists()
    if new and op.name not in ("ingest", "import"):
        raise ValueError(f"no store at {args.db} (remember or import creates one)")
    store = open_store(args, clock=(lambda: now) if now is not None else None)
    try:
        try:
            result = op.call(store, now, **kw) if op.takes_now else op.call(store, **kw)  # type: ignore[misc]
        except BaseException:
            if new:  # a refused first write (one transaction, rolled back) leaves no file
                store.close()
                for file in store.core.database_files():
                    file.unlink(missing_ok=True)
            raise
        if op.name in ("search", "context"):  # what matched the query, not just came back
            review = store.options.review
            parts = ("keyword_rank", "similarity")
            result = [h for h in result if review.matches(**{k: h[k] for k in parts})]
        lines = SHOW[op.name](result, args)
    finally:
        store.close()
    if args.json:
        print(json.dumps(result, default=str, ensure_ascii=False))
    else:
        for line in lines:
            print(line)
    return EXIT_NOTHING if op.name in ("search", "context") and not result else 0


__all__ = [
    "DB_ENV",
    "EXIT_NOTHING",
    "STDIN_LIMIT",
    "add_store_options",
    "open_store",
    "register",
    "run",
]
