"""Build the notebooks from their sources and execute them, so they are committed with outputs.

Sources are ``src/NN_name.py`` in the percent format: ``# %%`` starts a code cell,
``# %% [markdown]`` a markdown cell whose lines start with ``# ``. A code cell whose output
is not deterministic starts with ``# NBVAL_IGNORE_OUTPUT`` (nbval then runs it without
comparing).

    python notebooks/build.py                 # every notebook
    python notebooks/build.py 01 04           # those whose name starts with 01 or 04

Execution uses nbclient (``pip install nbclient``) with the working directory ``notebooks/``,
as nbval runs them. CI does not build: it checks the committed outputs with
``pytest --nbval notebooks/ --nbval-sanitize-with notebooks/sanitize.cfg``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "src"


def parse(source: str) -> nbformat.NotebookNode:
    """A notebook from percent-format text."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    kind, lines = None, []

    def flush() -> None:
        text = "\n".join(lines).strip("\n")
        if kind == "markdown":
            md = "\n".join(line[2:] if line.startswith("# ") else line.lstrip("#") for line in text.splitlines())
            nb.cells.append(nbformat.v4.new_markdown_cell(md))
        elif kind == "code" and text:
            nb.cells.append(nbformat.v4.new_code_cell(text))

    for line in source.splitlines():
        if line.startswith("# %%"):
            flush()
            kind, lines = ("markdown" if "[markdown]" in line else "code"), []
        elif kind is not None:
            lines.append(line)
    flush()
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:02d}"  # stable ids: clean diffs
    return nb


def build(src: Path) -> Path:
    from nbclient import NotebookClient

    nb = parse(src.read_text())
    client = NotebookClient(
        nb, timeout=900, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}, record_timing=False
    )
    client.execute()
    out = HERE / (src.stem + ".ipynb")
    nbformat.write(nb, out)
    return out


def main(argv: list[str]) -> int:
    sources = sorted(SOURCES.glob("[0-9]*.py"))
    if argv:
        sources = [s for s in sources if any(s.stem.startswith(a) for a in argv)]
    for src in sources:
        start = time.perf_counter()
        out = build(src)
        print(f"{out.name}: executed in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
