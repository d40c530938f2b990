"""`memlab store VERB` end to end through subprocess, and its errors in process."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memlab.cli import main
from memlab.store import MemoryStore

REPO = Path(__file__).resolve().parents[1]
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def at(hours: float) -> str:
    return (T0 + timedelta(hours=hours)).isoformat()


def memlab(db: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "MEMLAB_PROGRESS": "0",
        "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    verb, *rest = args
    return subprocess.run(
        [sys.executable, "-m", "memlab.cli", "store", verb, "--db", str(db), *rest],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def ok_json(done: subprocess.CompletedProcess):
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def inproc(db: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """The same call in this process (``memlab.cli.main``), as a CompletedProcess."""
    verb, *rest = args
    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin or "")
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["store", verb, "--db", str(db), *rest])
    finally:
        sys.stdin = old_stdin
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One shell session (subprocesses): remember (a repetition, a correction), recall, pin, ..."""
    folder = tmp_path_factory.mktemp("store_cli")
    db = folder / "notes.db"
    out: dict = {"db": db, "folder": folder}
    fact = "The staging database listens on port 5432."
    out["a"] = ok_json(memlab(db, "remember", "--json", "--now", at(0), fact))
    out["b"] = ok_json(
        memlab(
            db,
            "remember",
            "--json",
            "--now",
            at(1),
            "--topic",
            "people",
            stdin="Alice prefers green tea in the afternoon.\n",
        )
    )
    out["again"] = ok_json(memlab(db, "remember", "--json", "--now", at(2), stdin=fact))
    out["fixed"] = ok_json(
        memlab(
            db, "remember", "--json", "--now", at(3), "The staging database listens on port 5433."
        )
    )
    new = str(out["fixed"]["memory_id"])  # the correction is a new memory; #1 is its version
    out["versions"] = ok_json(memlab(db, "versions", new, "--json"))
    out["versions_text"] = inproc(db, "versions", "1")
    out["preview"] = memlab(db, "recall", "staging", "port", "--no-mark", "--now", at(4))
    out["old_hit"] = ok_json(
        inproc(db, "recall", "5432", "--include-history", "--no-mark", "--json", "--now", at(4))
    )
    out["after_preview"] = ok_json(memlab(db, "get", new, "--json"))
    out["marked"] = ok_json(memlab(db, "recall", "staging", "port", "--json", "--now", at(5)))
    out["after_mark"] = ok_json(inproc(db, "get", new, "--json"))
    out["pin"] = ok_json(memlab(db, "pin", "2", "--json", "--now", at(6)))
    out["sweep"] = ok_json(memlab(db, "sweep", "--json", "--now", at(24 * 365)))
    out["after_sweep"] = ok_json(inproc(db, "get", new, "--json"))
    out["history"] = ok_json(memlab(db, "history", "1", "--json"))
    out["history_text"] = inproc(db, "history", "1")
    out["stats"] = ok_json(memlab(db, "stats", "--json"))
    export = folder / "notes.jsonl"
    out["export"] = ok_json(memlab(db, "export", str(export), "--json"))
    out["import"] = ok_json(inproc(folder / "copy.db", "import", str(export), "--json"))
    MemoryStore(folder / "empty.db").close()  # an empty store: recall finds nothing (exit 1)
    out["nothing"] = memlab(folder / "empty.db", "recall", "zebra", "crossing")
    out["missing"] = memlab(db, "get", "99")
    out["bad_importance"] = inproc(db, "remember", "--importance", "3", "some text")
    out["empty_stdin"] = inproc(db, "remember", stdin="  \n")
    out["bad_now"] = inproc(db, "stats", "--now", "tomorrow")
    out["no_file"] = inproc(db, "import", str(folder / "absent.jsonl"))
    out["unavailable_model"] = inproc(
        folder / "nomic.db",
        "remember",
        "a note",
        "--embedder",
        "fastembed:nomic-ai/nomic-embed-text-v1.5",
    )
    out["applied"] = ok_json(inproc(db, "sweep", "--apply", "--json", "--now", at(24 * 800)))
    dropped = [r["id"] for r in out["applied"]["rows"] if r["applied"] and r["action"] == "drop"]
    out["dropped"] = dropped
    out["restored"] = [ok_json(inproc(db, "restore", str(i), "--json")) for i in dropped]
    return out


def test_remember_reports_the_gate_decision(session) -> None:
    a, b, again, fixed = (session[k] for k in ("a", "b", "again", "fixed"))
    assert a["decision"] == "create" and a["memory_id"] == 1 and a["similarity"] is None
    assert b["decision"] == "create" and b["memory_id"] == 2
    assert again["decision"] == "reinforce" and again["memory_id"] == 1
    assert fixed["decision"] == "supersede" and fixed["nearest_id"] == 1
    assert fixed["memory_id"] == 3 and fixed["rule"]  # a new memory, and the rule that decided


def test_versions_keep_the_superseded_fact(session) -> None:
    new = session["fixed"]["memory_id"]
    rows = session["versions"]
    assert [(r["memory_id"], r["status"], r["current"]) for r in rows] == [
        (1, "superseded", False),
        (new, "active", True),
    ]
    assert "5432" in rows[0]["content"] and "5433" in rows[1]["content"]
    assert rows[1]["decision"] == "supersede" and rows[1]["rule"] == session["fixed"]["rule"]
    text = session["versions_text"]  # the same chain, asked from the old memory
    assert text.returncode == 0 and len(text.stdout.splitlines()) == 2
    assert "[superseded]" in text.stdout.splitlines()[0]
    # the superseded text stays findable with --include-history
    assert any(h["memory_id"] == 1 and "5432" in h["content"] for h in session["old_hit"])


def test_recall_preview_and_marked(session) -> None:
    preview = session["preview"]
    assert preview.returncode == 0 and "5433" in preview.stdout.splitlines()[0]
    marked = session["marked"]
    assert "5433" in marked[0]["content"] and marked[0]["rrf"] > 0
    before, after = session["after_preview"], session["after_mark"]
    assert after["access_count"] == before["access_count"] + 1
    assert before["last_access"] == at(3) and after["last_access"] == at(5)


def test_pin_protects_and_dry_sweep_changes_nothing(session) -> None:
    assert session["pin"]["importance"] == 1.0
    sweep = session["sweep"]
    assert sweep["dry_run"] is True and sweep["applied"] == 0
    pinned = next(r for r in sweep["rows"] if r["id"] == 2)
    assert pinned["protected"] is True and pinned["action"] == "keep"
    new = session["fixed"]["memory_id"]
    assert next(r for r in sweep["rows"] if r["id"] == new)["action"] != "keep"
    assert session["after_sweep"] == session["after_mark"]


def test_history_keeps_the_corrected_text(session) -> None:
    kinds = [e["kind"] for e in session["history"]]
    assert kinds[0] == "create" and "observation" in kinds and "access" in kinds
    assert "5432" in " ".join(e["text"] or "" for e in session["history"])
    text = session["history_text"].stdout
    assert session["history_text"].returncode == 0 and "observation" in text


def test_stats_export_import(session) -> None:
    # two current facts and the superseded version of one of them, all exported and imported
    assert session["stats"]["memories"] == 3
    assert session["stats"]["by_status"]["active"] == 2
    assert session["stats"]["by_status"]["superseded"] == 1
    assert session["export"]["memories"] == 3
    assert session["import"]["imported"] == 3
    with MemoryStore(session["folder"] / "copy.db") as copy:
        current = [m for m in copy.memories() if m.status == "active"]
        assert sorted(m.content for m in current) == sorted(
            [
                "Alice prefers green tea in the afternoon.",
                "The staging database listens on port 5433.",
            ]
        )
        fixed = next(m for m in current if "5433" in m.content)
        assert list(copy.versions(fixed.id)["content"]) == [
            "The staging database listens on port 5432.",
            "The staging database listens on port 5433.",
        ]


def test_exit_codes_and_one_line_errors(session) -> None:
    assert session["nothing"].returncode == 1 and session["nothing"].stdout == ""
    for key, words in (
        ("missing", "no memory with id 99"),
        ("bad_importance", "importance"),
        ("empty_stdin", "nothing to remember"),
        ("bad_now", "--now"),
        ("no_file", "no such export file"),
        ("unavailable_model", "not available offline"),
    ):
        done = session[key]
        assert done.returncode == 2, key
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and words in lines[0], (key, done.stderr)
        assert lines[0].startswith("memlab store ")


def test_applied_sweep_and_restore(session) -> None:
    assert session["applied"]["dry_run"] is False and session["dropped"]
    assert all(r["status"] == "active" for r in session["restored"])


def test_database_afterwards(session) -> None:
    with MemoryStore(session["db"]) as store:
        memories = {m.id: m for m in store.memories()}
        new = session["fixed"]["memory_id"]
        assert set(memories) == {1, 2, new}
        assert memories[1].status == "superseded" and "5432" in memories[1].content
        assert "5433" in memories[new].content and memories[2].importance == 1.0
        assert memories[2].topics == ("people",)
        events = store.stats()["events"]
        assert events["observation"] == 1 and events["supersede"] >= 1  # recorded, not rewritten
        # the preview wrote nothing, the marked recall wrote one search access
        sources = [d.get("source") for d in store.history(new)["data"] if isinstance(d, dict)]
        assert sources.count("search") == 1


def test_bad_input_in_process_changes_nothing(tmp_path: Path, capsys) -> None:
    db = tmp_path / "p.db"
    assert main(["store", "remember", "--db", str(db), "a first note"]) == 0
    with MemoryStore(db) as store:
        before = [(m.id, m.content, m.access_count) for m in store.memories()]
    assert main(["store", "remember", "--db", str(db), "--importance", "-1", "x"]) == 2
    assert main(["store", "pin", "--db", str(db), "7"]) == 2
    assert main(["store", "forget", "--db", str(db), "7", "--purge"]) == 2
    assert main(["store", "stats", "--db", str(db), "--model-path", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 4
    with MemoryStore(db) as store:
        assert [(m.id, m.content, m.access_count) for m in store.memories()] == before


def test_forget_archives_then_purge_deletes(tmp_path: Path, capsys) -> None:
    db = tmp_path / "f.db"
    assert main(["store", "remember", "--db", str(db), "a note to forget"]) == 0
    assert main(["store", "forget", "--db", str(db), "1"]) == 0
    with MemoryStore(db) as store:
        assert store.get(1).status == "archived" and store.get(1).content == "a note to forget"
        store.restore(1)
        store.ingest("a note to forget, corrected", supersedes=1)
    capsys.readouterr()
    assert main(["store", "forget", "--db", str(db), "2", "--purge"]) == 0
    assert capsys.readouterr().out.strip() == "purged #1 #2 (deleted for good)"  # both versions
    with MemoryStore(db) as store:
        assert len(store) == 0


def test_fit_needs_enough_history_then_fits(tmp_path: Path, capsys) -> None:
    db = tmp_path / "fit.db"
    assert main(["store", "remember", "--db", str(db), "one lonely note"]) == 0
    assert main(["store", "fit", "--db", str(db)]) == 2
    assert "fitting needs" in capsys.readouterr().err
    # a real access log: 40 memories, reviewed on a spaced schedule with varying grades
    import numpy as np

    rng = np.random.default_rng(7)
    with MemoryStore(db) as store:
        for i in range(40):
            store.ingest(f"fact {i}: {rng.integers(10**6)} unique words w{i} v{i * 3}", now=T0)
        for day in (1, 3, 8, 20, 45):
            for i in range(2, 42):
                grade = int(rng.choice([1, 2, 3, 4], p=[0.15, 0.15, 0.5, 0.2]))
                store.access(i, grade, now=T0 + timedelta(days=day, hours=i % 5))
    out = tmp_path / "weights.json"
    assert main(["store", "fit", "--db", str(db), "--json", "--out", str(out)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["memories"] == 41 and len(result["weights"]) == 21
    assert result["reviews"] == 41 + 40 * 5
    assert json.loads(out.read_text())["weights"] == result["weights"]
    assert np.isfinite([result["default_log_loss"], result["fitted_log_loss"]]).all()
    assert result["applied"] is False  # a report: the store still runs its weights
    with MemoryStore(db) as store:
        assert store.dynamics.fsrs.weights == tuple(result["previous_weights"])
    assert main(["store", "fit", "--db", str(db), "--apply"]) == 0  # kept if it does better
    kept = result["log_loss"]["fitted"] < result["log_loss"]["previous"]
    assert ("applied: the store runs" in capsys.readouterr().out) == kept
    assert main(["store", "fit", "--db", str(db), "--apply", "always"]) == 0
    assert "applied: the store runs" in capsys.readouterr().out
    with MemoryStore(db) as store:  # the same log fits the same weights, now the store's
        assert store.dynamics.fsrs.weights == pytest.approx(result["weights"])


def test_namespaces_partition_the_file_through_the_cli(tmp_path: Path) -> None:
    db = tmp_path / "ns.db"
    fact = "The staging database listens on port 5432."
    a = ok_json(memlab(db, "remember", "--namespace", "team-a", "--json", "--now", at(0), fact))
    b = ok_json(memlab(db, "remember", "--namespace", "team-b", "--json", "--now", at(0), fact))
    assert a["decision"] == b["decision"] == "create"  # not a reinforcement of team-a's
    a_id, b_id = a["memory_id"], b["memory_id"]
    assert a_id != b_id
    hits = ok_json(memlab(db, "recall", "staging", "port", "--namespace", "team-b", "--json"))
    assert [h["memory_id"] for h in hits] == [b_id]
    foreign = memlab(db, "get", str(a_id), "--namespace", "team-b", "--json")
    assert foreign.returncode == 2 and "no memory" in foreign.stderr
    assert "Traceback" not in foreign.stderr
    assert memlab(db, "recall", "staging", "--json").returncode == 1  # 'default' holds nothing
    stats = ok_json(memlab(db, "stats", "--namespace", "team-a", "--json"))
    assert stats["memories"] == 1
    bad = memlab(db, "stats", "--namespace", "", "--json")
    assert bad.returncode == 2 and "namespace" in bad.stderr


def test_verbs_are_the_store_operations(tmp_path: Path, capsys) -> None:
    from memlab.cli import build_parser
    from memlab.ops import OPS

    verbs = build_parser()._subparsers._group_actions[0].choices["store"]  # type: ignore[union-attr]
    offered = verbs._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert set(offered) == {op.verb for op in OPS if op.verb}
    db = str(tmp_path / "v.db")
    assert (
        main(["store", "remember", "--db", str(db), "--now", at(0), "the boiler is serviced"]) == 0
    )
    assert (
        main(["store", "use", "--db", str(db), "1", "--grade", "4", "--json", "--now", at(5)]) == 0
    )
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["access_count"] == 1
    assert main(["store", "context", "--db", db, "boiler", "--topic-weight", "2"]) == 0
    assert main(["store", "use", "--db", db, "1", "--grade", "5"]) == 2
    assert main(["store", "recall", "--db", db, "boiler", "-k", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [
        "memlab store use: error: --grade must be <= 4, got 5",
        "memlab store recall: error: -k must be >= 1, got 0",
    ]


def test_recall_of_nothing_that_matches_exits_1(tmp_path: Path) -> None:
    db = str(tmp_path / "n.db")
    assert main(["store", "remember", "--db", db, "The staging database listens on 5432."]) == 0
    assert main(["store", "remember", "--db", db, "Alice prefers green tea."]) == 0
    # the vector ranking returns something for every query; nothing here matches it
    assert main(["store", "recall", "--db", db, "--no-mark", "nonexistentzzz"]) == 1
    assert main(["store", "recall", "--db", db, "--no-mark", "staging", "database"]) == 0


def test_remember_says_when_it_redacted_a_secret(tmp_path) -> None:
    """The plain output names the redaction, not only --json's count."""
    db = tmp_path / "m.db"
    done = inproc(db, "remember", "--now", at(0), "The deploy key is ghp_" + "a1B2c3D4e5" * 4)
    assert done.returncode == 0, done.stderr
    assert (
        done.stdout.startswith("create #1 (similarity -")
        and ", 1 secret(s) redacted)" in done.stdout
    )
    plain = inproc(db, "remember", "--now", at(1), "The deploy runs on Fridays.")
    assert "redacted" not in plain.stdout
