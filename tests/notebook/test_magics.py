"""The magics through a real IPython InteractiveShell, on a fixed notebook clock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from memlab.gate import Decision
from memlab.models.heat import HeatModel
from memlab.notebook import magics
from memlab.notebook.display import IngestResults, SearchResults
from memlab.store import IngestResult, MemoryStore

matplotlib.use("Agg")
T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@pytest.fixture
def ip() -> Iterator[InteractiveShell]:
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "memlab")
    magics._STATE.clock = magics.NotebookClock(T0)
    yield shell
    if magics._STATE.store is not None:
        magics._STATE.store.close()
    magics.use_store(None, shell=shell)
    magics._STATE.opened = None
    magics._STATE.clock = magics.NotebookClock()


def run(ip: InteractiveShell, cell: str):  # noqa: ANN201
    """Run a cell as a notebook would; return its value, re-raising its error."""
    result = ip.run_cell(cell, store_history=False, silent=False)
    if result.error_before_exec is not None:
        raise result.error_before_exec
    if result.error_in_exec is not None:
        raise result.error_in_exec
    return result.result


def test_open_remember_recall_through_cells(ip: InteractiveShell, tmp_path: Path) -> None:
    db = tmp_path / "notes.db"
    store = run(ip, f"%memlab open {db}")
    assert isinstance(store, MemoryStore) and store is magics.current_store()
    assert ip.user_ns["memlab_store"] is store and db.exists()
    first = run(
        ip,
        "%%remember --project infra --topics deploy,vpn --importance 0.8 --layer "
        "caveat\n"
        "The deploy script lives in ops/deploy.sh and needs the VPN\n",
    )
    assert isinstance(first, IngestResult) and first.decision is Decision.CREATE
    m = store.get(first.memory_id)
    assert (m.project, m.topics, m.importance, m.layer) == (
        "infra",
        ("deploy", "vpn"),
        0.8,
        "caveat",
    )
    assert m.created_at == T0  # the notebook clock, not the wall clock
    again = run(
        ip, "%%remember --project infra\nThe deploy script lives in ops/deploy.sh and needs the VPN"
    )
    assert again.decision is Decision.REINFORCE and again.memory_id == first.memory_id
    run(
        ip,
        "%%remember --lines --project data\nUse pandas for the exports\n\nThe backup runs at "
        "02:00 UTC\n",
    )
    assert len(store) == 3
    hits = run(ip, "%recall deploy script VPN -k 2 --preview")
    assert isinstance(hits, SearchResults) and hits.query == "deploy script VPN"
    assert hits[0].memory.id == first.memory_id and len(hits) <= 2
    assert (
        store.get(first.memory_id).access_count == 1
    )  # the reinforce only: --preview wrote nothing
    run(ip, "%recall deploy script -k 1")
    assert store.get(first.memory_id).access_count == 2  # testing effect
    html = hits._repr_html_()
    assert "deploy.sh" in html and "rrf" in html and "retention" in html


def test_memlab_now_and_advance_drive_the_store(ip: InteractiveShell) -> None:
    run(ip, "%memlab open :memory:")
    when = run(ip, "%memlab now 2026-03-01T12:00Z")
    assert when == datetime(2026, 3, 1, 12, tzinfo=UTC)
    result = run(ip, "%%remember\nA fact learnt on the first of March")
    store = magics.current_store()
    assert store.get(result.memory_id).created_at == when
    assert run(ip, "%memlab advance 1d 6h") == when + timedelta(days=1, hours=6)
    stats = run(ip, "%memlab stats")
    assert stats["memories"] == 1 and stats["by_status"]["active"] == 1
    assert sum(stats["states"].values()) == pytest.approx(1.0)
    frame = store.to_dataframe()
    assert frame["elapsed_days"].iloc[0] == pytest.approx(1.25)
    assert "MemoryStore" in stats._repr_html_() and "states now" in stats._repr_html_()
    assert run(ip, "%memlab now wall") is not None and magics._STATE.clock.fixed is None
    with pytest.raises(UsageError, match="wall clock"):
        run(ip, "%memlab advance 1d")


def test_remember_estimates_importance_unless_given(ip: InteractiveShell) -> None:
    run(ip, "%memlab open :memory:")
    run(ip, "%%remember\nThe staging database runs on port 5432 behind pgbouncer.")
    run(ip, "%%remember --importance auto\nok thanks")
    run(ip, "%%remember --importance 0.7\nAlice owns the billing service.")
    frame = magics.current_store().to_dataframe().set_index("id")
    assert list(frame["importance_auto"]) == [True, True, False]
    assert frame.loc[3, "importance"] == pytest.approx(0.7)
    assert 0.0 < frame.loc[2, "importance"] < frame.loc[1, "importance"] < 0.8
    with pytest.raises(UsageError, match="number or 'auto'"):
        run(ip, "%%remember --importance high\nsome text")


def test_sweep_is_a_dry_run_unless_applied(
    ip: InteractiveShell, capsys: pytest.CaptureFixture[str]
) -> None:
    run(ip, "%memlab open :memory:")
    run(ip, "%%remember --importance 0.05\nan unimportant detail nobody will ask for")
    run(ip, "%%remember --layer caveat --importance 0.05\nnever run the migration on a Friday")
    run(ip, "%memlab advance 400d")
    table = run(ip, "%memlab sweep")
    assert list(table["action"]) == ["drop", "keep"]
    assert list(table.columns) == list(magics.SWEEP_COLUMNS) and len(table.columns) <= 8
    assert "dry run over 2 active memories: 1 keep, 0 compress, 1 drop" in capsys.readouterr().out
    store = magics.current_store()
    assert store.stats()["by_status"]["active"] == 2  # nothing changed
    run(ip, "%memlab sweep --apply")
    assert store.stats()["by_status"]["active"] == 1
    assert "sweep applied" in capsys.readouterr().out


def test_curves_returns_the_table_and_draws_it(ip: InteractiveShell) -> None:
    import matplotlib.pyplot as plt

    plt.close("all")
    table = run(ip, "%memlab curves --stability 10")
    assert list(table.columns) == ["fsrs6 (S=10d)", "heat/100", "exponential (S=10d)"]
    assert table.loc["1 day", "exponential (S=10d)"] == pytest.approx(np.exp(-0.1), abs=1e-4)
    # the calibrated heat stays hot (>= 70) for about a day after an access
    assert table.loc["1 hour", "heat/100"] == pytest.approx(
        HeatModel().heat(elapsed_days=1 / 24) / 100, abs=1e-4
    )
    assert table.loc["1 hour", "heat/100"] > 0.7
    short, full = plt.gcf().axes
    assert [line.get_label() for line in short.lines] == list(table.columns)
    x, y = full.lines[0].get_data()
    assert full.get_xscale() == "log" and x.max() == pytest.approx(365.0)
    assert y[np.argmin(np.abs(x - 10.0))] == pytest.approx(0.9, abs=0.01)  # R(S, S) = 0.9
    plt.close("all")


def test_usage_errors_are_clear_and_change_nothing(ip: InteractiveShell) -> None:
    with pytest.raises(UsageError, match="no memlab store is open"):
        run(ip, "%recall anything")
    with pytest.raises(UsageError, match="no memlab store is open"):
        run(ip, "%%remember\ntext")
    run(ip, "%memlab open :memory:")
    store = magics.current_store()
    with pytest.raises(UsageError, match="importance"):
        run(ip, "%%remember --importance 7\nsome text")
    with pytest.raises(UsageError, match="no text"):
        run(ip, "%%remember\n   \n")
    with pytest.raises(UsageError, match="no timezone"):
        run(ip, "%memlab now 2026-01-05T09:00")
    with pytest.raises(UsageError, match="not a duration"):
        run(ip, "%memlab advance soon")
    with pytest.raises(UsageError, match="usage: %memlab open"):
        run(ip, "%memlab open")
    with pytest.raises(UsageError):
        run(ip, "%memlab frobnicate")
    # an unbalanced quote used to escape as a bare ValueError from the argument splitter
    for cell in ('%recall "deploy script', "%%remember --project 'infra\ntext", "%memlab now '"):
        with pytest.raises(UsageError, match="No closing quotation"):
            run(ip, cell)
    assert len(store) == 0 and magics._STATE.clock.fixed == T0


def test_help_and_python_access(ip: InteractiveShell) -> None:
    doc = ip.find_line_magic("memlab").__doc__
    assert "open PATH" in doc and "--embedder" in doc and "--apply" in doc
    assert "--preview" in ip.find_line_magic("recall").__doc__
    assert "--topics" in ip.find_cell_magic("remember").__doc__
    with MemoryStore(":memory:") as mine:
        magics.use_store(mine, shell=ip)
        assert magics.current_store() is mine and ip.user_ns["memlab_store"] is mine
        magics.use_store(None, shell=ip)
        with pytest.raises(RuntimeError, match="%memlab open"):
            magics.current_store()
    with pytest.raises(TypeError, match="MemoryStore"):
        magics.use_store("notes.db")  # type: ignore[arg-type]


def test_rich_display_is_registered(ip: InteractiveShell) -> None:
    run(ip, "%memlab open :memory:")
    result = run(ip, "%%remember --project p\nthe capital of France is Paris")
    data, _ = ip.display_formatter.format(result)
    assert "CREATE" in data["text/html"] and data["text/plain"].startswith(
        "IngestResult(create memory #1"
    )
    data, _ = ip.display_formatter.format(magics.current_store().get(result.memory_id))
    assert (
        "Memory #1" in data["text/html"] and "the capital of France is Paris" in data["text/html"]
    )
    data, _ = ip.display_formatter.format(magics.current_store())
    assert "by status" in data["text/html"] and "1 memories" in data["text/plain"]
    many = run(ip, "%%remember --lines\nfirst line\nsecond line")
    assert isinstance(many, IngestResults) and len(many) == 2
    assert "2 texts" in many._repr_html_()


def test_parse_helpers() -> None:
    assert magics.parse_duration("1d6h") == timedelta(days=1, hours=6)
    assert magics.parse_duration("2w 30m") == timedelta(weeks=2, minutes=30)
    assert magics.parse_duration("1.5d") == timedelta(hours=36)
    assert magics.parse_time("2026-01-05T10:00+01:00") == T0
    with pytest.raises(UsageError):
        magics.parse_duration("3 days ago")
    clock = magics.NotebookClock()
    with pytest.raises(ValueError, match="naive"):
        clock.set(datetime(2026, 1, 1))
    clock.set(T0)
    with pytest.raises(ValueError, match="forward"):
        clock.advance(timedelta(days=-1))
    assert clock() == T0 and isinstance(pd.Timestamp(clock()), pd.Timestamp)


def test_unload_closes_and_forgets_the_store(ip: InteractiveShell) -> None:
    store = run(ip, "%memlab open :memory:")
    magics.unload_ipython_extension(ip)
    assert "memlab_store" not in ip.user_ns
    with pytest.raises(RuntimeError, match="no memlab store"):
        magics.current_store()
    with pytest.raises(Exception, match="closed"):
        len(store)


def test_open_with_fastembed_uses_the_shared_minilm(
    ip: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memlab.datasets import shared_path

    if shared_path("minilm", required=False) is None:
        pytest.skip("shared MiniLM model not available")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    store = run(ip, "%memlab open :memory: --embedder fastembed")
    assert store.embedder.dim == 384 and "MiniLM" in store.embedder.name
    run(ip, "%%remember\nThe nightly backup runs at 02:00 UTC.")
    again = run(ip, "%%remember\nThe nightly backup now runs at 03:00 UTC.")
    # MiniLM alone cannot see the changed hour (similarity above 0.92); the gate's guard sees the
    # number change, so the correction supersedes the fact (the old memory kept as a version)
    assert again.similarity > 0.92 and again.decision is Decision.SUPERSEDE
    assert "03:00" in store.get(again.memory_id).content


def test_open_names_embedders_as_the_api_does(ip: InteractiveShell, tmp_path: Path) -> None:
    # a named fastembed model that is not on the machine: one UsageError that says how to get it
    line = f"%memlab open {tmp_path / 'm.db'} --embedder fastembed:nomic-ai/nomic-embed-text-v1.5"
    with pytest.raises(UsageError, match="memlab models pull nomic-ai/nomic-embed-text-v1.5"):
        run(ip, line)
    with pytest.raises(UsageError, match="unknown embedder"):
        run(ip, f"%memlab open {tmp_path / 'n.db'} --embedder word2vec")


@pytest.mark.parametrize("line", ["", "-h", "--help"])
def test_bare_memlab_and_dash_h_print_the_help(
    ip: InteractiveShell, capsys: pytest.CaptureFixture[str], line: str
) -> None:
    assert run(ip, f"%memlab {line}") is None
    out = capsys.readouterr().out
    assert "advance" in out and "sweep" in out and "--embedder" in out
    assert "fastembed:NAME" in out and "memlab models pull" in out


@pytest.mark.parametrize(
    ("text", "hours"),
    [("3 days", 72.0), ("3d", 72.0), ("1 week", 168.0), ("2 hours 30 min", 2.5), ("1d 6h", 30.0)],
)
def test_durations_in_words_are_accepted(ip: InteractiveShell, text: str, hours: float) -> None:
    before = magics._STATE.clock()
    after = run(ip, f"%memlab advance {text}")
    assert after - before == timedelta(hours=hours)


def test_a_bad_duration_is_a_usage_error(ip: InteractiveShell) -> None:
    before = magics._STATE.clock()
    with pytest.raises(UsageError, match="not a duration"):
        run(ip, "%memlab advance 3 fortnights")
    with pytest.raises(UsageError, match="time only moves forward: '-1d'"):
        run(ip, "%memlab advance -1d")
    # a time no store holds is refused when set, not at the next magic
    with pytest.raises(UsageError, match="outside the times a store holds"):
        run(ip, "%memlab now 9999-01-01T00:00Z")
    assert magics._STATE.clock() == before
    # nor can advancing reach one (a huge duration used to raise a bare OverflowError)
    for far in ("87600d", "100000w", "9000000d", "99999999999d"):
        with pytest.raises(UsageError, match="times a store holds"):
            run(ip, f"%memlab advance {far}")
    assert magics._STATE.clock() == before


def test_open_closes_only_the_stores_the_magics_opened(
    ip: InteractiveShell, tmp_path: Path
) -> None:
    mine = MemoryStore(tmp_path / "mine.db")
    mine.ingest("kiwis are ripe in May")
    magics.use_store(mine, shell=ip)
    other = run(ip, f"%memlab open {tmp_path / 'other.db'}")
    assert [h.memory.content for h in mine.search("kiwis")] == ["kiwis are ripe in May"]
    run(ip, "%memlab open :memory:")  # the store the magics opened is closed
    with pytest.raises(RuntimeError, match="is closed"):
        len(other)
    magics.unload_ipython_extension(ip)
    assert len(mine) == 1
    mine.close()


def test_open_rejects_a_non_sqlite_file_or_a_missing_folder(
    ip: InteractiveShell, tmp_path: Path
) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("not a database, just notes\n")
    with pytest.raises(UsageError, match="not a SQLite database"):
        run(ip, f"%memlab open {text}")
    assert text.read_text() == "not a database, just notes\n"
    with pytest.raises(UsageError, match="does not exist"):
        run(ip, f"%memlab open {tmp_path / 'no-such-folder' / 'notes.db'}")
    with pytest.raises(UsageError, match="is a directory"):
        run(ip, f"%memlab open {tmp_path}")
    assert magics._STATE.store is None
    # an existing SQLite file and a new one both open
    assert isinstance(run(ip, f"%memlab open {tmp_path / 'new.db'}"), MemoryStore)
