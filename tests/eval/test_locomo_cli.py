"""``memlab eval locomo FILE --json`` prints the documented object."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from locomo_helpers import TINY

from memlab.cli import main


def test_cli_json_shape(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY))
    assert main(["eval", "locomo", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["default"] in out["configs"]
    for row in out["configs"].values():
        assert set(row) == {"recall@5", "recall@10", "n", "memories"} and row["n"] == 3
        assert 1 <= row["memories"] <= out["turns"] == 6
    # the store's default budget is one of the configurations, named in "budget"
    budget = out["budget"]
    assert budget == {"keep": 0.5, "policy": "memlab", "config": budget["config"]}
    assert budget["config"] in out["configs"]
    # with every keep score beside it, and the share of evidence turns each kept
    for name in ("random", "recency", "length", "idf", "fsrs6", "heat", "exponential"):
        assert any(c.endswith(f":{name}") for c in out["evidence_kept"])
    assert all(0.0 <= v <= 1.0 for v in out["evidence_kept"].values())
    assert main(["eval", "locomo", str(tmp_path / "missing.json")]) == 2
