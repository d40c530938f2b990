"""Rich display of memlab's objects in Jupyter: HTML tables and short plain reprs.

Renderers are registered by fully qualified class name, so this module imports none of the
classes it renders (dependencies point down); :func:`register_formatters` (``%load_ext
memlab``) hands them to IPython, which prefers them over a class's own ``_repr_html_``.

>>> from memlab.notebook.display import text
>>> from memlab.gate import Decision
>>> from memlab.store import IngestResult
>>> text(IngestResult(Decision.CREATE, None, 1))
'IngestResult(create memory #1, similarity –)'
"""

from __future__ import annotations

import html as _html
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

if TYPE_CHECKING:  # pragma: no cover
    from memlab.store import SearchHit

Renderer = Callable[[Any], str]

#: Class name -> (html renderer, text renderer).
_RENDERERS: dict[str, tuple[Renderer, Renderer]] = {}

_STYLE = "font-family: var(--jp-ui-font-family, sans-serif); font-size: 0.9em"
_DECISION_COLOURS = {"create": "#4575b4", "supersede": "#d98b00", "reinforce": "#1a9850"}


def register(qualname: str, html_renderer: Renderer, text_renderer: Renderer | None = None) -> None:
    """Render instances of the class ``qualname`` (``"module.Class"``) with ``obj -> str``
    renderers of HTML and plain text (default: ``repr``)."""
    if not isinstance(qualname, str) or "." not in qualname:
        raise ValueError(f"qualname must be 'module.Class', got {qualname!r}")
    if not callable(html_renderer) or (text_renderer is not None and not callable(text_renderer)):
        raise TypeError("renderers must be callable")
    _RENDERERS[qualname] = (html_renderer, text_renderer or repr)


def _lookup(obj: Any) -> tuple[Renderer, Renderer] | None:
    for cls in type(obj).__mro__:
        found = _RENDERERS.get(f"{cls.__module__}.{cls.__qualname__}")
        if found is not None:
            return found
    return None


def html(obj: Any) -> str:
    """HTML for ``obj``: its registered renderer, else its ``_repr_html_``, else escaped
    ``repr``."""
    found = _lookup(obj)
    if found is not None:
        return found[0](obj)
    method = getattr(obj, "_repr_html_", None)
    if callable(method):
        out = method()
        if out is not None:
            return str(out)
    return f"<pre>{_html.escape(repr(obj))}</pre>"


def text(obj: Any) -> str:
    """Short plain text for ``obj``: its registered renderer, else ``repr``."""
    found = _lookup(obj)
    return found[1](obj) if found is not None else repr(obj)


# --------------------------------------------------------------------------- helpers
def _esc(value: Any) -> str:
    return _html.escape(str(value))


def _fmt(value: Any, digits: int = 4) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}g}"
    if hasattr(value, "isoformat"):
        return value.isoformat(timespec="seconds") if hasattr(value, "hour") else value.isoformat()
    if isinstance(value, (tuple, list)):
        return ", ".join(str(v) for v in value) or "–"
    return str(value)


def _kv_table(title: str, rows: Iterable[tuple[str, Any]]) -> str:
    body = "".join(
        f"<tr><th style='text-align:left;padding-right:1em'>{_esc(k)}</th><td "
        f"style='text-align:left'>{_esc(_fmt(v))}</td></tr>"
        for k, v in rows
    )
    return f"<div style='{_STYLE}'><b>{title}</b><table>{body}</table></div>"


def _frame_html(frame: pd.DataFrame, title: str = "") -> str:
    table = frame.to_html(float_format=lambda v: f"{v:.4g}", na_rep="–", escape=True)
    head = f"<b>{title}</b>" if title else ""
    return f"<div style='{_STYLE}'>{head}{table}</div>"


def _short(content: str, n: int = 80) -> str:
    content = " ".join(content.split())
    return content if len(content) <= n else content[: n - 1] + "…"


# --------------------------------------------------------------------------- store objects
def store_html(store: Any) -> str:
    """The store: where it is, embedder, memories by status and layer, events, index."""
    s = store.stats()
    index = s.get("index", {})
    overview = [
        ("path", store.path),
        ("embedder", f"{s['embedder']} (dim {s['dim']})"),
        ("memories", s["memories"]),
        ("schema version", s["schema_version"]),
    ]
    parts = [_kv_table("MemoryStore", overview)]
    counts = pd.DataFrame({"memories": pd.Series(s["by_status"], dtype="int64")})
    parts.append(_frame_html(counts.rename_axis("status").T, "by status"))
    for key, name, axis, title in (
        ("by_layer", "memories", "layer", "by layer"),
        ("events", "events", "kind", "events"),
    ):
        if s[key]:
            frame = pd.DataFrame({name: pd.Series(s[key])}).rename_axis(axis)
            parts.append(_frame_html(frame.T, title))
    if isinstance(index, dict) and index:
        parts.append(_kv_table("vector index", sorted(index.items())))
    return "".join(parts)


def store_text(store: Any) -> str:
    s = store.stats()
    status = ", ".join(f"{k} {v}" for k, v in s["by_status"].items() if v)
    tail = f": {status}" if status else ""
    return f"MemoryStore({store.path!r}, {s['embedder']}, {s['memories']} memories{tail})"


def memory_html(memory: Any) -> str:
    """One memory: its content and metadata, FSRS-6 and dual-strength state."""
    rows = [
        ("content", memory.content),
        (
            "status",
            memory.status
            + (f" (into #{memory.consolidated_into})" if memory.consolidated_into else ""),
        ),
        ("project", memory.project),
        ("topics", memory.topics),
        ("layer / altitude", f"{memory.layer} / {memory.altitude}"),
        ("entity", memory.entity),
        ("importance", memory.importance),
        ("stability (days)", memory.stability),
        ("difficulty", memory.difficulty),
        ("storage / retrieval strength", f"{memory.storage:.4g} / {memory.retrieval:.4g}"),
        ("accesses", memory.access_count),
        ("created", memory.created_at),
        ("updated", memory.updated_at),
        ("last access", memory.last_access),
    ]
    return _kv_table(f"Memory #{memory.id}", rows)


def memory_text(memory: Any) -> str:
    project = f", project={memory.project}" if memory.project else ""
    return (
        f"Memory #{memory.id} [{memory.status}] {_short(memory.content, 60)!r} "
        f"(layer={memory.layer}{project}, S={memory.stability:.3g} d, "
        f"accesses={memory.access_count})"
    )


#: Columns of a table of search hits: the score parts of :class:`memlab.store.SearchHit`.
HIT_COLUMNS: tuple[str, ...] = tuple(
    "rank id content score rrf keyword_rank vector_rank similarity retention time_factor"
    " project_match topic_overlap context project topics layer".split()
)


def hits_frame(hits: Sequence[SearchHit], *, max_chars: int | None = None) -> pd.DataFrame:
    """Search hits as a table indexed by rank, one row per hit with its score parts."""
    rows = []
    for rank, hit in enumerate(hits, start=1):
        m = hit.memory
        content = m.content if max_chars is None else _short(m.content, max_chars)
        row = {"rank": rank, "id": m.id, "content": content}
        row.update({c: getattr(hit, c) for c in HIT_COLUMNS[3:13]})  # score .. context
        rows.append({**row, "project": m.project, "topics": ", ".join(m.topics), "layer": m.layer})
    types = {"keyword_rank": "Int64", "vector_rank": "Int64", "similarity": float}
    return pd.DataFrame(rows, columns=list(HIT_COLUMNS)).astype(types).set_index("rank")


#: The score parts ``hits_html`` folds out under each score.
_SCORE_PARTS = tuple(
    "rrf keyword_rank vector_rank similarity retention time_factor context".split()
)


def _part(value: Any, digits: int = 3) -> str:
    """A score part for reading: rounded, ``–`` when absent (never ``<NA>`` or ``nan``)."""
    if value is None or (isinstance(value, float) and value != value):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    return f"{float(value):.{digits}f}"


def _later(hit: Any) -> str:
    """The newer memory that replaced a hit or may have, in words ("" when none)."""
    if getattr(hit, "superseded_by", None) is not None:
        return f"superseded by #{hit.superseded_by}"
    later = getattr(hit, "possibly_outdated_by", None)
    return "" if later is None else f"possibly outdated by #{later}"


def hits_html(hits: Sequence[Any], title: str = "", *, max_chars: int | None = 160) -> str:
    """The one compact renderer of search hits (``%recall``, the store browser, ``SearchHit``):
    rank, id, content and score, the score parts folding out under the score; ``title`` is text."""
    cell = "padding:2px 8px;vertical-align:top;border-bottom:1px solid #ddd"
    rows = []
    for rank, hit in enumerate(hits, start=1):
        m = hit.memory
        content = m.content if max_chars is None else _short(m.content, max_chars)
        meta = ", ".join(x for x in (m.project, ", ".join(m.topics), m.layer, _later(hit)) if x)
        detail = "<br>".join(
            f"{name.replace('_', ' ')} {_part(getattr(hit, name), 5 if name == 'rrf' else 3)}"
            for name in _SCORE_PARTS
        )
        rows.append(
            f"<tr><td style='{cell};text-align:right'>{rank}</td>"
            f"<td style='{cell};text-align:right'>#{m.id}</td>"
            f"<td style='{cell};text-align:left;width:100%'>{_esc(content)}"
            f"<div style='color:#666;font-size:90%'>{_esc(meta)}</div></td>"
            f"<td style='{cell};text-align:left;white-space:nowrap'><details><summary>"
            f"{_part(hit.score, 4)}</summary><small>{detail}</small></details></td></tr>"
        )
    head = (
        f"<tr><th style='{cell}'>rank</th><th style='{cell}'>id</th>"
        f"<th style='{cell};text-align:left'>content</th><th style='{cell};text-align:left'>"
        "score</th></tr>"
    )
    caption = f"<b>{_esc(title)}</b>" if title else ""
    # JupyterLab lays tables out with fixed column widths: every narrow column gets one, and
    # the content takes the rest
    cols = "".join(f"<col style='width:{w}'>" for w in ("3.5em", "4.5em", "auto", "7em"))
    return (
        f"<div style='{_STYLE}'>{caption}<table style='width:100%;border-collapse:collapse'>"
        f"<colgroup>{cols}</colgroup>{head}{''.join(rows)}</table></div>"
    )


def hit_html(hit: Any) -> str:
    return hits_html([hit], f"SearchHit: memory #{hit.memory.id}")


def hit_text(hit: Any) -> str:
    return f"SearchHit(#{hit.memory.id} score={hit.score:.4g} {_short(hit.memory.content, 50)!r})"


class SearchResults(list):  # type: ignore[type-arg]
    """The :class:`memlab.store.SearchHit` list ``%recall`` returns for ``query``, shown as a
    table."""

    def __init__(self, hits: Iterable[Any] = (), query: str = "") -> None:
        super().__init__(hits)
        self.query = query

    def _repr_html_(self) -> str:
        title = f"{len(self)} result{'s' if len(self) != 1 else ''} for {self.query!r}"
        if not self:
            return f"<div style='{_STYLE}'><b>{_esc(title)}</b></div>"
        return hits_html(self, title, max_chars=100)

    def __repr__(self) -> str:
        lines = [f"{len(self)} result(s) for {self.query!r}"]
        for rank, hit in enumerate(self, start=1):
            later, content = _later(hit), _short(hit.memory.content, 70)
            note = f"  ({later})" if later else ""
            lines.append(f"{rank:>3}. #{hit.memory.id:<5} {hit.score:.4f}  {content}{note}")
        return "\n".join(lines)


def ingest_html(result: Any) -> str:
    decision = result.decision.value
    colour = _DECISION_COLOURS.get(decision, "black")
    sim = "–" if result.similarity is None else f"{result.similarity:.3f}"
    extra = []
    if result.nearest_id is not None:
        extra.append(f"nearest #{result.nearest_id} at similarity {sim}")
    if result.redacted:
        extra.append(f"{result.redacted} secret(s) redacted")
    if result.tagged:
        extra.append(f"tagged by #{', #'.join(str(t) for t in result.tagged)}")
    tail = f" ({'; '.join(extra)})" if extra else ""
    return (
        f"<div style='{_STYLE}'><b style='color:{colour}'>{_esc(decision.upper())}</b> "
        f"memory #{result.memory_id}{_esc(tail)}</div>"
    )


def ingest_text(result: Any) -> str:
    sim = "–" if result.similarity is None else f"{result.similarity:.3f}"
    return f"IngestResult({result.decision.value} memory #{result.memory_id}, similarity {sim})"


class IngestResults(list):  # type: ignore[type-arg]
    """A list of :class:`memlab.store.IngestResult` shown as a table (``%%remember --lines``)."""

    def to_frame(self) -> pd.DataFrame:
        return pd.DataFrame([r.to_dict() for r in self])

    def _repr_html_(self) -> str:
        counts = pd.Series([r.decision.value for r in self]).value_counts()
        title = f"{len(self)} texts: " + ", ".join(f"{n} {d}" for d, n in counts.items())
        return _frame_html(self.to_frame(), title)

    def __repr__(self) -> str:
        return "\n".join(ingest_text(r) for r in self)


# --------------------------------------------------------------------------- simulation, fitting
def sim_result_html(result: Any) -> str:
    # wall and CPU times differ from run to run: not shown
    summary = {
        k: v
        for k, v in result.summary().items()
        if "seconds" not in k and not k.endswith(("_per_s", "_per_cpu_s"))
    }
    title = f"SimResult: policy {_esc(summary.get('policy'))} over {len(result.daily)} days"
    tail = result.daily.tail(5)
    last = _frame_html(tail.set_index("day") if "day" in tail else tail, "last days")
    return _kv_table(title, summary.items()) + last


def sim_result_text(result: Any) -> str:
    s = result.summary()
    return (
        f"SimResult(policy={s['policy']!r}, model={s['model']!r}, days={len(result.daily)}, "
        f"hit_rate={s['hit_rate']:.3f}, correct_rate={s['correct_rate']:.3f}, "
        f"final_store_size={s['final_store_size']})"
    )


def load_report_html(report: Any) -> str:
    rows = [(k, v) for k, v in report.to_dict().items() if k != "notes"]
    notes = "".join(f"<li>{_esc(n)}</li>" for n in report.notes)
    return _kv_table("LoadReport", rows) + (f"<ul>{notes}</ul>" if notes else "")


def load_report_text(report: Any) -> str:
    return (
        f"LoadReport({report.layout}, {report.reviews} reviews of {report.cards} cards, "
        f"{report.invalid_grade_rows} invalid grades, {report.duplicate_rows} duplicates "
        "dropped)"
    )


def review_data_html(data: Any) -> str:
    return load_report_html(data.report) + _frame_html(
        data.frame.head(5), f"first 5 of {len(data.frame)} reviews"
    )


def review_data_text(data: Any) -> str:
    return f"ReviewData({len(data.frame)} reviews; {load_report_text(data.report)})"


for _name, _html_fn, _text_fn in (
    ("memlab.store.store.MemoryStore", store_html, store_text),
    ("memlab.store.records.Memory", memory_html, memory_text),
    ("memlab.store.records.SearchHit", hit_html, hit_text),
    ("memlab.store.records.IngestResult", ingest_html, ingest_text),
    ("memlab.sim.simulator.SimResult", sim_result_html, sim_result_text),
    ("memlab.fit.data.LoadReport", load_report_html, load_report_text),
    ("memlab.fit.data.ReviewData", review_data_html, review_data_text),
):
    register(_name, _html_fn, _text_fn)


# --------------------------------------------------------------------------- IPython
def register_formatters(ip: Any = None) -> list[str]:
    """Register the renderers as IPython ``text/html`` and ``text/plain`` formatters (by name,
    importing nothing); returns the names registered, ``[]`` with no IPython running."""
    if ip is None:
        try:
            from IPython import get_ipython
        except ImportError:  # pragma: no cover
            return []
        ip = get_ipython()
    if ip is None:
        return []
    formatters = ip.display_formatter.formatters
    for qualname, (html_fn, text_fn) in _RENDERERS.items():
        module, _, name = qualname.rpartition(".")
        formatters["text/html"].for_type_by_name(module, name, html_fn)
        formatters["text/plain"].for_type_by_name(module, name, _pretty(text_fn))
    return list(_RENDERERS)


def _pretty(text_fn: Renderer) -> Callable[[Any, Any, bool], None]:
    def printer(obj: Any, p: Any, cycle: bool) -> None:
        p.text(text_fn(obj))

    return printer
