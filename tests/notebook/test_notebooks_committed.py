"""The committed notebooks are executed, error-free, and in step with their sources in
notebooks/src.

(nbval re-executes them and compares outputs; this cheap check catches a source edited without
rebuilding, a notebook committed without outputs, and stray wall-clock timing metadata.)
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest

nbformat = pytest.importorskip("nbformat")

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
SOURCES = sorted((NOTEBOOKS / "src").glob("[0-9]*.py"))
RESULTS = NOTEBOOKS.parent / "experiments" / "results"


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


#: A figure in prose: a number with two or more decimals ("0.356", "−0.044").
_FIGURE = re.compile(r"(?<![\w.])[−-]?\d+\.\d{2,}(?![\w.])")
#: Constants the prose names, not results of a run: e^-1, Ebbinghaus's k and c, the Vestige
#: reinforce threshold, the step of notebook 03's threshold grid.
_CONSTANTS = {"0.37", "1.84", "1.25", "0.92", "0.01"}


def _outputs(notebook: Any) -> str:
    texts = []
    for cell in notebook.cells:
        for out in cell.get("outputs", []):
            texts.append(str(out.get("text", "")))
            texts += [str(v) for k, v in out.get("data", {}).items() if k.startswith("text/")]
    return "\n".join(texts)


def _figures(text: str) -> set[str]:
    """Every number of ``text`` as written and rounded to each shorter number of decimals
    (prose may round what a cell prints: 0.5436 is stated as 0.54)."""
    out = set()
    for number in re.findall(r"\d+\.\d+", text):
        decimals = len(number.split(".")[1])
        out |= {f"{float(number):.{d}f}" for d in range(2, decimals)} | {number}
    return out


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_every_figure_in_the_prose_is_printed_or_cited(source: Path) -> None:
    """A sentence that states a figure must be true of the run that prints it: every figure of
    a markdown cell is in the notebook's outputs or in a results file the cell names, as printed
    or rounded (the reference lists quote other people's figures and are left out)."""
    notebook = nbformat.read(NOTEBOOKS / f"{source.stem}.ipynb", as_version=4)
    printed = _figures(_outputs(notebook))
    unprinted = []
    for i, cell in enumerate(notebook.cells):
        if cell.cell_type != "markdown" or cell.source.startswith("## References"):
            continue
        cited = _figures(
            "".join(
                (RESULTS / name).read_text(encoding="utf-8")
                for name in re.findall(r"[\w]+\.md", cell.source)
                if (RESULTS / name).is_file()
            )
        )
        for figure in _FIGURE.findall(cell.source):
            bare = figure.replace("−", "-").lstrip("-")
            if bare not in _CONSTANTS | printed | cited:
                unprinted.append(f"cell {i}: {figure}")
    assert not unprinted, f"figures no output prints and no cited results file holds: {unprinted}"
