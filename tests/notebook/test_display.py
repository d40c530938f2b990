"""Rich display: what the HTML and plain renderers show for each result type."""

from __future__ import annotations

import re

import numpy as np
import pytest
from IPython.core.interactiveshell import InteractiveShell
from nb_helpers import T0, Clock

from memlab.datasets import shared_path
from memlab.gate import Decision
from memlab.notebook import display
from memlab.notebook.display import IngestResults, SearchResults, hits_frame
from memlab.sim import Policy, Workload, simulate
from memlab.store import IngestResult, MemoryStore


def test_store_and_memory(store: MemoryStore, clock: Clock) -> None:
    html = display.html(store)
    assert "MemoryStore" in html and "by status" in html and "hashing" in html
    assert (
        display.text(store)
        == f"MemoryStore(':memory:', {store.embedder.name}, 5 memories: active 5)"
    )
    memory = store.get(1)
    html = display.html(memory)
    assert "Memory #1" in html and "ops/deploy.sh" in html and T0.isoformat() in html
    assert display.text(memory).startswith(
        "Memory #1 [active] 'The deploy script lives in ops/deploy.sh"
    )


def test_content_is_escaped(clock: Clock) -> None:
    with MemoryStore(":memory:", clock=clock) as s:
        result = s.ingest("<script>alert('x')</script> & friends")
        html = display.html(s.get(result.memory_id))
        assert "<script>" not in html and "&lt;script&gt;" in html
        hits = SearchResults(s.search("friends", mark_accessed=False), "<b>friends</b>")
        assert "<script>" not in hits._repr_html_() and "<b>friends</b>" not in hits._repr_html_()


def test_search_results_show_the_score_parts(store: MemoryStore, clock: Clock) -> None:
    hits = store.search("database backup", k=3, mark_accessed=False)
    frame = hits_frame(hits)
    assert list(frame.index) == [1, 2, 3][: len(hits)] and list(frame["id"]) == [
        h.memory.id for h in hits
    ]
    np.testing.assert_allclose(
        frame["score"], frame["rrf"] * frame["time_factor"] * frame["context"]
    )
    results = SearchResults(hits, "database backup")
    html = results._repr_html_()
    assert f"{len(hits)} results for" in html and "keyword rank" in html and "backup" in html
    # one compact renderer: parts fold out, rounded; a ranking that missed shows a dash
    assert html.count("<details>") == len(hits) and "<NA>" not in html and "nan" not in html
    assert f"{hits[0].score:.4f}" in html and f"rrf {hits[0].rrf:.5f}" in html
    from memlab.notebook.display import hit_html, hits_html

    assert hit_html(hits[0]).count("<details>") == 1
    assert "<b>a &lt;b&gt; &amp; c</b>" in hits_html(hits, "a <b> & c")  # the title is text
    assert "&#x27;&lt;i&gt;&#x27;" in SearchResults([], "<i>")._repr_html_()
    # every column but the content has its width, so a fixed table layout (JupyterLab's) gives
    # the content the room
    cols = re.findall(r"<col style='width:([^']+)'>", hits_html(hits))
    assert len(cols) == 4 and cols[2] == "auto" and all(c.endswith("em") for c in cols[:2])
    missed = [h for h in hits if h.keyword_rank is None or h.vector_rank is None]
    if missed:
        assert "rank –" in hits_html(missed)
    lines = repr(results).splitlines()
    assert (
        lines[0] == f"{len(hits)} result(s) for 'database backup'"
        and f"#{hits[0].memory.id}" in lines[1]
    )
    assert "0 results" in SearchResults([], "nothing")._repr_html_()
    assert display.text(hits[0]).startswith(f"SearchHit(#{hits[0].memory.id} score=")


def test_search_results_say_which_hits_are_outdated(clock: Clock) -> None:
    with MemoryStore(":memory:", clock=clock) as s:
        old = s.ingest("Backups are kept for 30 days in the cold storage bucket.").memory_id
        clock.advance(days=2)
        new = s.ingest("The cold storage bucket holds backups for 90 days.").memory_id
        s.ingest("The cold storage bucket now holds backups for 120 days.")  # supersedes #2
        hits = s.search("backups kept cold storage", include_history=True, mark_accessed=False)
        shown = {h.memory.id: h for h in hits}
        assert shown[old].possibly_outdated_by is not None and shown[new].superseded_by == 3
        results = SearchResults(hits, "backups")
        for text in (repr(results), results._repr_html_()):
            assert "superseded by #3" in text
            assert f"possibly outdated by #{shown[old].possibly_outdated_by}" in text


def test_ingest_results(store: MemoryStore, clock: Clock) -> None:
    clock.advance(hours=1)
    again = store.ingest(
        "The deploy script lives in ops/deploy.sh and needs the VPN", project="infra"
    )
    assert again.decision is Decision.REINFORCE
    html = display.html(again)
    assert "REINFORCE" in html and f"nearest #{again.nearest_id} at similarity 1.000" in html
    colours = {d: display.html(IngestResult(d, None, 1)).split("color:")[1][:7] for d in Decision}
    shown = {colours[d] for d in ("create", "supersede", "reinforce")}
    assert len(shown) == 3 and all(c.startswith("#") for c in shown)  # each its own colour
    assert (
        display.text(IngestResult(Decision.CREATE, None, 7))
        == "IngestResult(create memory #7, similarity –)"
    )
    many = IngestResults([again, IngestResult(Decision.CREATE, None, 9)])
    assert "2 texts: 1 reinforce, 1 create" in many._repr_html_()
    assert list(many.to_frame()["decision"]) == ["reinforce", "create"]


def test_simulation_results_hide_wall_times() -> None:
    workload = Workload.generate(seed=1, n_days=3, facts_per_day=5, queries_per_day=10)
    result = simulate(workload, Policy("lru", max_memories=8))
    html = display.html(result)
    summary = result.summary()
    assert "lru[cap=8]" in html and f"{summary['hit_rate']:.4g}" in html and "last days" in html
    assert "seconds" not in html and "per_s" not in html
    assert display.text(result).startswith("SimResult(policy='lru[cap=8]', model='lru', days=3,")


def test_review_data() -> None:
    from memlab.fit import load_reviews

    path = shared_path("josh_reviews", required=False)
    if path is None:
        pytest.skip("shared review log not available")
    data = load_reviews(path)
    assert "12580 reviews of 1205 cards" in display.text(data.report)
    assert "first 5 of 12580 reviews" in display.html(data)


def test_registry_and_fallbacks() -> None:
    class Plain:
        def __repr__(self) -> str:
            return "<Plain & simple>"

    assert display.html(Plain()) == "<pre>&lt;Plain &amp; simple&gt;</pre>"
    assert display.text(Plain()) == "<Plain & simple>"
    display.register(
        f"{Plain.__module__}.{Plain.__qualname__}", lambda o: "<i>plain</i>", lambda o: "plain"
    )
    try:
        assert display.html(Plain()) == "<i>plain</i>" and display.text(Plain()) == "plain"
    finally:
        display._RENDERERS.pop(f"{Plain.__module__}.{Plain.__qualname__}")
    with pytest.raises(ValueError, match="module.Class"):
        display.register("NoModule", str)
    with pytest.raises(TypeError, match="callable"):
        display.register("a.B", "not callable")  # type: ignore[arg-type]


def test_register_formatters_on_a_shell(store: MemoryStore) -> None:
    ip = InteractiveShell.instance()
    names = display.register_formatters(ip)
    assert "memlab.store.store.MemoryStore" in names and "memlab.sim.simulator.SimResult" in names
    data, _ = ip.display_formatter.format(store)
    assert data["text/plain"] == display.text(store) and "by status" in data["text/html"]
    data, _ = ip.display_formatter.format(store.get(2))
    assert data["text/plain"].startswith("Memory #2")
