"""The store's operations, described once: their arguments, help and store call.

The MCP tools (:mod:`memlab.mcp.server`) and the ``memlab store`` verbs
(:mod:`memlab.shell`) are both generated from :data:`OPS`, so a tool and its verb cannot
disagree on an argument's name, type, default, bounds or help. Each front end adds only what
is its own: the MCP server its typed results and progress, the shell its text output and
spellings (``--no-mark`` for ``mark_accessed=False``). Needs neither ``mcp`` nor pydantic.
"""

from __future__ import annotations

import inspect
import json
import math
import sqlite3
import types
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

from memlab.keep import KEEP_SCORES
from memlab.models.heat import ALTITUDES, LAYERS
from memlab.store.validation import check_now

#: Default of an argument that must be given.
REQUIRED: Any = inspect.Parameter.empty

#: Exceptions a store call may raise (a bad argument, a missing memory, a store file of a
#: newer schema, a file-system or SQLite error): both front ends report the message in one line.
STORE_ERRORS: tuple[type[BaseException], ...] = (
    ValueError,
    TypeError,
    LookupError,
    ArithmeticError,
    OSError,
    RuntimeError,
    sqlite3.Error,
)


def parse_now(text: str | None, name: str = "now", *, naive_utc: bool = False) -> datetime | None:
    """An ISO 8601 ``now`` as a UTC datetime the store holds (a naive one is UTC when
    ``naive_utc``, else refused), checked before any operation starts."""
    if text is None:
        return None
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"{name} must be an ISO 8601 timestamp, got {text!r}") from None
    if naive_utc and when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return check_now(when, name)


def error_message(error: BaseException) -> str:
    """The store's message of an error, without quotes or a traceback."""
    if isinstance(error, KeyError) and error.args:
        return str(error.args[0])
    return str(error) or type(error).__name__


@dataclass(frozen=True)
class Arg:
    """One argument of an operation, with pydantic-style ``bounds`` (``ge``, ``gt``, ``le``,
    ``min_length``) that both front ends check. ``cli`` is the shell's spelling: ``None`` for
    ``--name-with-dashes``, a bare word for a positional argument (``"id"``); a bool flag
    spelled otherwise than its name stores the opposite of its default (``--no-mark`` sets
    ``mark_accessed=False``). ``mcp=False``: the shell's alone.
    """

    name: str
    type: Any
    help: str
    default: Any = REQUIRED
    bounds: dict[str, float] = field(default_factory=dict)
    cli: str | None = None
    nargs: str | None = None
    const: Any = None
    mcp: bool = True

    @property
    def scalar(self) -> Any:
        """The type without ``None`` (``float | None`` -> ``float``)."""
        if get_origin(self.type) in (Union, types.UnionType):
            rest = [t for t in get_args(self.type) if t is not type(None)]
            return rest[0] if len(rest) == 1 else self.type
        return self.type

    @property
    def choices(self) -> tuple[Any, ...] | None:
        """The allowed values of a ``Literal`` type."""
        return get_args(self.scalar) if get_origin(self.scalar) is Literal else None


@dataclass(frozen=True)
class Op:
    """One store operation: MCP tool ``name`` and shell verb ``verb`` (``None``: MCP only).

    ``call(store, now, **arguments)`` runs it (``now`` only when ``takes_now``) and returns
    its result as JSON-ready data: the shell's ``--json`` output and the content of the tool's
    result. ``summary`` is the verb's one-line help, ``help`` the tool's description; ``slow``
    operations run in a worker thread of the MCP server and report progress; ``mcp=False``
    keeps an operation (a file path, a hard delete) off the agent's tools.
    """

    name: str
    verb: str | None
    summary: str
    help: str
    args: tuple[Arg, ...]
    call: Callable[..., Any] | None
    takes_now: bool = True
    read_only: bool = False
    slow: bool = False
    mcp: bool = True

    def mcp_args(self) -> tuple[Arg, ...]:
        return tuple(a for a in self.args if a.mcp)


def check_bounds(op: Op, values: dict[str, Any], spell: Callable[[Arg], str]) -> None:
    """Raise ``ValueError`` naming the argument (as ``spell`` writes it) outside its bounds."""
    tests = {
        "ge": (">=", lambda v, b: v >= b),
        "gt": (">", lambda v, b: v > b),
        "le": ("<=", lambda v, b: v <= b),
    }
    for a in op.args:
        value = values.get(a.name)
        for key, bound in a.bounds.items():
            if key in tests and isinstance(value, int | float) and not tests[key][1](value, bound):
                raise ValueError(f"{spell(a)} must be {tests[key][0]} {bound:g}, got {value:g}")


def count_or_share(keep: float | None) -> float | int | None:
    """A sweep budget: a number in (0, 1) is a share, a whole number >= 2 a count of memories
    (1 is refused: a share of all and a count of one, it would mean opposite things)."""
    if keep is None or 0 < keep < 1:
        return keep
    if not math.isfinite(keep) or keep < 2 or keep != int(keep):
        raise ValueError(f"keep must be a share in (0, 1) or a whole count >= 2, got {keep:g}")
    return int(keep)


MEMORY_ID = Arg("memory_id", int, "id of a stored memory", bounds={"ge": 1}, cli="id")
QUERY = Arg("query", str, "what to recall", cli="query", nargs="+")
K = Arg("k", int, "number of hits", 10, {"ge": 1, "le": 1000}, cli="-k")
TOPICS = Arg(
    "topics", list[str], "topic labels (re-rank search; kept as metadata)", (), cli="--topic"
)
MARK = Arg(
    "mark_accessed",
    bool,
    "strengthen the hits (a review, the testing effect); false: a preview that writes nothing",
    True,
    cli="--no-mark",
)

OBSERVED_AT = Arg(
    "observed_at",
    str | None,
    "when the text's fact began to hold (ISO 8601 with a timezone; default: now)",
    None,
)

#: The metadata a text is stored with (also the keys of an ``ingest_many`` item).
METADATA = (
    Arg("project", str | None, "project scope of the memory", None),
    TOPICS,
    Arg("layer", Literal[LAYERS], "kind of memory (goal, caveat: protected)", "context"),  # type: ignore[valid-type]
    Arg("entity", str | None, "what the memory is about", None),
    Arg("altitude", Literal[ALTITUDES], "level of abstraction", "implementation"),  # type: ignore[valid-type]
    Arg(
        "importance",
        float | None,
        "0-1; default: estimated from the text",
        None,
        {"ge": 0, "le": 1},
    ),
)


# ---------------------------------------------------------------- results as JSON
def _num(value: Any) -> float | None:
    """A JSON-safe float (None for missing / NaN)."""
    return None if value is None or value != value else float(value)


def _memory_after(store: Any, memory_id: int) -> dict[str, Any]:
    return store.get(memory_id).to_dict()


def _hit_json(hit: Any) -> dict[str, Any]:
    """A search hit: the parts of its score and the memory's text, scope and status."""
    m = hit.memory
    return {
        **hit.to_dict(),
        "similarity": _num(hit.similarity),
        "project": m.project,
        "topics": list(m.topics),
        "layer": m.layer,
        "status": m.status,
        "valid_from": m.to_dict()["valid_from"],
    }


def _event_rows(frame: Any) -> list[dict[str, Any]]:
    """A memory's history, oldest first."""
    return [
        {
            "event_id": int(r.event_id),
            "at": r.at.isoformat(),
            "kind": str(r.kind),
            "grade": None if r.grade is None or str(r.grade) == "<NA>" else int(r.grade),
            "text": r.text if isinstance(r.text, str) else None,
            "data": r.data if isinstance(r.data, dict) else None,
        }
        for r in frame.itertuples(index=False)
    ]


def _version_rows(frame: Any) -> list[dict[str, Any]]:
    """The versions of a fact, oldest first (similarity None where no gate decided)."""
    return [
        {
            **{k: r[k] for k in ("content", "status", "decision", "rule")},
            "version": int(r["version"]),
            "memory_id": int(r["memory_id"]),
            "created_at": r["created_at"].isoformat(),
            "similarity": _num(r["similarity"]),
            **{
                k: None if r[k] is None else r[k].isoformat() for k in ("valid_from", "valid_until")
            },
            "current": bool(r["current"]),
        }
        for r in frame.to_dict("records")
    ]


#: The columns of a sweep's rows.
SWEEP_COLUMNS = (
    "id layer heat band risk protected action reason keep_score state retention applied".split()
)


def _sweep_json(frame: Any, dry_run: bool) -> dict[str, Any]:
    rows = [{k: r.get(k) for k in SWEEP_COLUMNS} for r in frame.to_dict("records")]
    for r in rows:
        r.update(
            id=int(r["id"]),
            protected=bool(r["protected"]),
            applied=bool(r["applied"]),
            reason=str(r["reason"] or ""),
            keep_score=_num(r["keep_score"]),
        )
    counts = dict(Counter(r["action"] for r in rows))
    applied = sum(r["applied"] for r in rows)
    return {"dry_run": dry_run, "counts": counts, "applied": applied, "rows": rows}


# ---------------------------------------------------------------- the store calls
def _ingest(
    store: Any,
    now: Any,
    content: Any,
    importance: float | None = None,
    observed_at: str | None = None,
    **meta: Any,
) -> Any:
    """One text (``store.ingest``), or a list of texts in one ``store.ingest_many``."""
    given: dict[str, Any] = {} if importance is None else {"importance": importance}
    if observed_at is not None:
        given["observed_at"] = parse_now(observed_at, "observed_at")
    if isinstance(content, list):
        return [r.to_dict() for r in store.ingest_many(content, now=now, **meta, **given)]
    return store.ingest(content, now=now, **meta, **given).to_dict()


def _search(store: Any, now: Any, query: Any, k: int, **options: Any) -> list[dict[str, Any]]:
    text = " ".join(query) if isinstance(query, list) else query
    given = {key: v for key, v in options.items() if v is not None}
    if "as_of" in given:
        given["as_of"] = parse_now(given["as_of"], "as_of")
    return [_hit_json(h) for h in store.search(text, k, now=now, **given)]


def _importance(store: Any, now: Any, memory_id: int, **options: Any) -> dict[str, Any]:
    frame = store.importance(memory_id, now=now, **options)
    tagged = [
        {k: float(r[k]) for k in ("id", "dt_hours", "weight")} for r in frame.to_dict("records")
    ]
    memory = _memory_after(store, memory_id)
    return {"memory": memory, "tagged": tagged, "event_type": options["event_type"]}


def _pin(store: Any, now: Any, memory_id: int) -> dict[str, Any]:
    store.importance(memory_id, 0.0, 0.0, level=1.0, gain=0.0, now=now)
    return _memory_after(store, memory_id)


def _forget(store: Any, now: Any, memory_id: int, purge: bool = False) -> dict[str, Any]:
    if purge:
        return {"id": memory_id, "purged": store.purge(memory_id)}
    store.archive(memory_id, now=now)
    return _memory_after(store, memory_id)


def _restore(store: Any, now: Any, memory_id: int) -> dict[str, Any]:
    store.restore(memory_id, now=now)
    return _memory_after(store, memory_id)


def _sweep(store: Any, now: Any, dry_run: bool, keep: float | None, keep_by: str | None) -> Any:
    frame = store.forget_sweep(now=now, dry_run=dry_run, keep=count_or_share(keep), keep_by=keep_by)
    return _sweep_json(frame, dry_run)


def _consolidate(store: Any, now: Any, **options: Any) -> dict[str, Any]:
    created = [int(i) for i in store.consolidate(now=now, **options)]
    return {"created": created, "summaries": [_memory_after(store, i) for i in created]}


def _import(store: Any, now: Any, path: str) -> dict[str, Any]:
    if not Path(path).is_file():
        raise FileNotFoundError(f"no such export file: {path}")
    mapping = store.import_jsonl(path, now=now)
    return {"path": path, "imported": len(mapping), "ids": {str(k): v for k, v in mapping.items()}}


def _fit(store: Any, apply: str | None, **options: Any) -> dict[str, Any]:
    mode = {None: False, "if-better": "if_better", "always": True}[apply]
    fit = store.fit(apply=mode, **options).to_dict()
    ll = fit["log_loss"]
    return {**fit, "default_log_loss": ll["default"], "fitted_log_loss": ll["fitted"]}


#: The store's operations: the shell's verbs and the MCP server's tools are made from them.
OPS: tuple[Op, ...] = (
    Op(
        "ingest",
        "remember",
        "store a text (the arguments, or stdin)",
        "Remember one text. The prediction-error gate compares it with the nearest memory of the"
        " same project: a repetition reinforces that memory; a correction supersedes it (a new"
        " memory; the old one is kept as a superseded version, see versions); a related fact is"
        " a new memory linked to it; anything else creates a new memory. The result names the"
        " decision and the gate rule that made it. Secrets are screened.",
        (
            Arg("content", str, "the text to remember", cli="text", nargs="*"),
            *METADATA,
            OBSERVED_AT,
        ),
        _ingest,
    ),
    Op(
        "ingest_many",
        None,
        "",
        "Remember many texts in order, each gated as by ingest. Every"
        " item is checked before any is stored (one bad item stores nothing); progress is"
        " reported per batch.",
        (
            Arg(
                "items",
                list[dict[str, Any]],
                "texts to remember, in order: objects with 'content'"
                " and any of " + ", ".join(a.name for a in METADATA) + " (importance a number in"
                " [0, 1] or 'auto', estimated from the text) and observed_at (ISO 8601)",
                bounds={"min_length": 1},
            ),
        ),
        None,
        slow=True,
    ),
    Op(
        "search",
        "recall",
        "search (strengthens the hits unless --no-mark)",
        "Hybrid search (BM25 and vectors fused by reciprocal rank fusion, weighted by FSRS-6"
        " retention and by project/topic match). Each hit carries the parts of its score, and"
        " possibly_outdated_by when a newer hit may revise it (the newer ranks first).",
        (
            QUERY,
            K,
            Arg("project", str | None, "prefer this project", None),
            TOPICS,
            MARK,
            Arg("include_archived", bool, "also search archived memories", False),
            Arg(
                "include_history",
                bool,
                "also search superseded versions (what a fact used to say)",
                False,
            ),
            Arg(
                "as_of",
                str | None,
                "answer as of this time (ISO 8601 with a timezone): only the"
                " memories valid then, superseded versions included",
                None,
            ),
        ),
        _search,
    ),
    Op(
        "context",
        "context",
        "search weighted by the current project and topics",
        "Context-dependent recall (encoding specificity): search weighted by the current project"
        " and topics, with the weights of time and topics given per call.",
        (
            QUERY,
            Arg("project", str | None, "the current project", None),
            TOPICS,
            Arg(
                "time_weight",
                float | None,
                "0-1: how much retention (recency of use) weighs",
                None,
                {"ge": 0, "le": 1},
            ),
            Arg(
                "topic_weight", float | None, ">= 0: how much topic overlap weighs", None, {"ge": 0}
            ),
            K,
            MARK,
        ),
        _search,
    ),
    Op(
        "importance",
        "importance",
        "flag a memory important and tag its neighbours",
        "Flag a memory important (synaptic tagging): its importance rises to level and the"
        " memories encoded within hours_back before and hours_forward after it are strengthened,"
        " more the closer they are (also ones that arrive later in the window).",
        (
            MEMORY_ID,
            Arg("event_type", str | None, "why it matters (e.g. user_flag, novelty)", None),
            Arg("hours_back", float, "window before, in hours", 9.0, {"ge": 0}),
            Arg("hours_forward", float, "window after, in hours", 2.0, {"ge": 0}),
            Arg("level", float, "importance set (>= 0.9 protects)", 0.95, {"ge": 0, "le": 1}),
        ),
        _importance,
    ),
    Op(
        "pin",
        "pin",
        "protect a memory from forgetting (importance 1)",
        "Protect a memory from forgetting: importance 1, no neighbour tagged.",
        (MEMORY_ID,),
        _pin,
        mcp=False,
    ),
    Op(
        "use",
        "use",
        "record that a memory served (an FSRS-6 review)",
        "Record that the agent used a memory (feedback): an FSRS-6 review with this grade, a"
        " stronger signal than being returned by a search.",
        (
            MEMORY_ID,
            Arg(
                "grade",
                int,
                "how well it served: 1 again, 2 hard, 3 good, 4 easy",
                3,
                {"ge": 1, "le": 4},
            ),
        ),
        lambda store, now, memory_id, grade: store.feedback(memory_id, grade, now=now).to_dict(),
    ),
    Op(
        "get",
        "get",
        "show one memory",
        "One memory by id (reads only; not an access).",
        (MEMORY_ID,),
        _memory_after,
        takes_now=False,
        read_only=True,
    ),
    Op(
        "history",
        "history",
        "the events of one memory",
        "A memory and every event of it, oldest first: creation, accesses with their grades,"
        " observations (repetitions), supersessions, links, tags, archive and restore.",
        (MEMORY_ID,),
        lambda store, memory_id: _event_rows(store.history(memory_id)),
        takes_now=False,
        read_only=True,
    ),
    Op(
        "versions",
        "versions",
        "the versions of a memory's fact (what superseded what)",
        "The versions of the fact a memory belongs to, oldest first: each one's text, status"
        " (active = current, superseded = earlier) and the gate decision and rule that made it."
        " Works from any version's id.",
        (MEMORY_ID,),
        lambda store, memory_id: _version_rows(store.versions(memory_id)),
        takes_now=False,
        read_only=True,
    ),
    Op(
        "forget",
        "forget",
        "archive a memory (or --purge: delete it for good)",
        "Archive a memory: it leaves search but nothing is deleted (restore brings it back).",
        (MEMORY_ID, Arg("purge", bool, "delete it and its history for good", False, mcp=False)),
        _forget,
    ),
    Op(
        "restore",
        "restore",
        "make an archived memory active again",
        "Make an archived (or superseded) memory active again.",
        (MEMORY_ID,),
        _restore,
    ),
    Op(
        "sweep",
        "sweep",
        "what the heat model would forget (a dry run unless --apply)",
        "Forget sweep: heat, band, risk, protection and action (keep, compress, drop as archive)"
        " of every active memory; with keep, a budget that keeps the best memories by a named"
        " keep score. A dry run by default: nothing changes.",
        (
            Arg(
                "dry_run",
                bool,
                "only report (the default); false: apply the actions (compress, drop as archive)",
                True,
                cli="--apply",
            ),
            Arg(
                "keep",
                float | None,
                "a budget: keep this share (0 < keep < 1) or this many"
                " memories (a whole number >= 2), the best by keep_by; the rest are archived."
                " Absent: the store's own budget, else the heat law",
                None,
                {"gt": 0},
            ),
            Arg(
                "keep_by",
                Literal[KEEP_SCORES] | None,
                "keep score of the budget (default:"  # type: ignore[valid-type]
                " memlab, the posterior need)",
                None,
            ),
        ),
        _sweep,
        slow=True,
    ),
    Op(
        "consolidate",
        "consolidate",
        "merge cold memories into summaries",
        "Merge cold unprotected memories of the same entity and layer into summaries (the"
        " members a summary holds whole are archived with a link to it, the others stay"
        " active; nothing is deleted).",
        (
            Arg("min_group", int, "fewest cold memories merged", 2, {"ge": 2}),
            Arg("max_sentences", int, "sentences per summary", 3, {"ge": 1}),
        ),
        _consolidate,
        slow=True,
    ),
    Op(
        "stats",
        "stats",
        "counts, embedder, index",
        "Counts by status, layer and event kind; the embedder, schema version and index.",
        (),
        lambda store: json.loads(json.dumps(store.stats(), default=str)),
        takes_now=False,
        read_only=True,
    ),
    Op(
        "export",
        "export",
        "write every memory with its history as JSON lines",
        "Write every memory with its history to a JSON-lines file.",
        (Arg("path", str, "the file to write", cli="path"),),
        lambda store, path: {"path": path, "memories": store.export_jsonl(path)},
        takes_now=False,
        mcp=False,
    ),
    Op(
        "import",
        "import",
        "add the memories of an export",
        "Add the memories of a JSON-lines export.",
        (Arg("path", str, "the export file", cli="path"),),
        _import,
        mcp=False,
    ),
    Op(
        "fit",
        "fit",
        "fit FSRS-6 weights to the store's own access log (a report unless --apply)",
        "Fit FSRS-6 weights to the store's own access log (MemoryStore.fit); a report unless"
        " applied.",
        (
            Arg(
                "apply",
                Literal["if-better", "always"] | None,
                "keep the fitted weights: if-better (they beat the store's on the held-out"
                " reviews) or always; default: only report",
                None,
                nargs="?",
                const="if-better",
            ),
            Arg("min_reviews", int, "scored reviews needed", 100, {"ge": 1}),
            Arg("min_lapses", int, "reviews graded Again needed", 5, {"ge": 0}),
            Arg("holdout", float, "share held out, last by time", 0.2, {"gt": 0, "le": 1}),
        ),
        _fit,
        takes_now=False,
        mcp=False,
    ),
)

#: The operations by MCP tool name.
BY_NAME: dict[str, Op] = {op.name: op for op in OPS}

#: Keys an ``ingest_many`` item may carry.
ITEM_KEYS: tuple[str, ...] = ("content", *(a.name for a in METADATA), "observed_at")

__all__ = [
    "BY_NAME",
    "ITEM_KEYS",
    "METADATA",
    "OPS",
    "REQUIRED",
    "STORE_ERRORS",
    "Arg",
    "Op",
    "check_bounds",
    "count_or_share",
    "error_message",
    "parse_now",
]
