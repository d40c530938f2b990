"""The committed notebooks are executed, error-free, and in step with their sources in
notebooks/src.

(nbval re-executes them and compares outputs; this cheap check catches a source edited without
rebuilding, a notebook committed without outputs, and stray wall-clock timing metadata.)
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
SOURCES = sorted((NOTEBOOKS / "src").glob("[0-9]*.py"))


def _builder():  # noqa: ANN202
    spec = importlib.util.spec_from_file_location("memlab_notebook_build", NOTEBOOKS / "build.py")
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def test_every_source_has_its_notebook() -> None:
    assert SOURCES, "no notebook sources found"
    built = {p.stem for p in NOTEBOOKS.glob("[0-9]*.ipynb")}
    assert built == {s.stem for s in SOURCES}


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_notebook_is_executed_and_matches_its_source(source: Path) -> None:
    expected = _builder().parse(source.read_text())
    notebook = nbformat.read(NOTEBOOKS / f"{source.stem}.ipynb", as_version=4)
    assert [(c.cell_type, c.source, c.metadata.get("tags")) for c in notebook.cells] == [
        (c.cell_type, c.source, c.metadata.get("tags")) for c in expected.cells
    ], f"{source.stem}.ipynb is out of date: run `python notebooks/build.py {source.stem[:2]}`"
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code), "committed without running every cell"
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1)), (
        "cells not run once, in order"
    )
    assert any(c.outputs for c in code), "committed without outputs"
    errors = [o for c in code for o in c.outputs if o.output_type == "error"]
    assert not errors, f"error outputs: {[e.ename for e in errors]}"
    streams = [
        o.text for c in code for o in c.outputs if o.output_type == "stream" and o.name == "stderr"
    ]
    assert not streams, f"stderr output (warnings?) in the committed notebook: {streams[:2]}"
    assert all("execution" not in c.metadata for c in code), "timing metadata recorded"


def test_parse_of_percent_format() -> None:
    text = (
        "# %% [markdown]\n# # Title\n#\n# text\n\n# %%\nx = 1\n\n"
        '# %% tags=["nbval-ignore-output", "needs-shared"]\nx\n'
    )
    builder = _builder()
    nb = builder.parse(text)
    assert [c.cell_type for c in nb.cells] == ["markdown", "code", "code"]
    assert nb.cells[0].source == "# Title\n\ntext" and nb.cells[1].source == "x = 1"
    assert nb.cells[2].source == "x" and nb.cells[2].id == "cell-02"
    assert nb.cells[2].metadata["tags"] == ["nbval-ignore-output", "needs-shared"]
    assert "tags" not in nb.cells[1].metadata
    assert builder.render(nb) == text


def test_sources_use_cell_tags_not_nbval_comments() -> None:
    for source in SOURCES:
        assert "NBVAL_" not in source.read_text(), f"{source.name}: use a cell tag"
