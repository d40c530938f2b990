"""Build the notebooks from their sources and execute them, so they are committed with outputs.

Sources are ``src/NN_name.py`` in the percent format: ``# %%`` starts a code cell,
``# %% [markdown]`` a markdown cell whose lines start with ``# ``. Cell tags follow the header
as ``# %% tags=["nbval-ignore-output"]``; they become the notebook cell's ``metadata.tags``:

* ``nbval-ignore-output`` — nbval runs the cell without comparing (widgets only);
* ``needs-shared`` — the output depends on the shared folder (the MiniLM model, all LoCoMo
  conversations, the full STS-B splits). The committed output is the one with the shared folder;
  without it, ``notebooks/conftest.py`` runs the cell (it must not fail) without comparing, and
  the test summary lists those cells with the reason.

    python notebooks/build.py                 # every notebook
    python notebooks/build.py 01 04           # those whose name starts with 01 or 04
    python notebooks/build.py --format        # ruff-format the sources' code cells, no execution
    python notebooks/build.py --restamp       # copy lint-only source edits into the notebooks

Execution uses nbclient with the working directory ``notebooks/``, as nbval runs them, the
progress bars off, ``HF_HUB_OFFLINE=1`` and ``MPLBACKEND=Agg``; nothing depends on the wall
clock or on dict order, so a rebuild on the same versions gives the same notebooks.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
SOURCES = HERE / "src"
_TAGS = re.compile(r"tags\s*=\s*(\[.*?\])")


def parse(source: str) -> nbformat.NotebookNode:
    """A notebook from percent-format text."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    kind: str | None = None
    tags: list[str] = []
    lines: list[str] = []

    def flush() -> None:
        text = "\n".join(lines).strip("\n")
        if kind == "markdown":
            md = "\n".join(
                line[2:] if line.startswith("# ") else line.lstrip("#")
                for line in text.splitlines()
            )
            nb.cells.append(nbformat.v4.new_markdown_cell(md))
        elif kind == "code" and text:
            cell = nbformat.v4.new_code_cell(text)
            if tags:
                cell.metadata["tags"] = list(tags)
            nb.cells.append(cell)

    for line in source.splitlines():
        if line.startswith("# %%"):
            flush()
            kind, lines = ("markdown" if "[markdown]" in line else "code"), []
            match = _TAGS.search(line)
            tags = json.loads(match.group(1)) if match else []
        elif kind is not None:
            lines.append(line)
    flush()
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:02d}"  # stable ids: clean diffs
    return nb


def render(nb: nbformat.NotebookNode) -> str:
    """Percent-format text of a notebook (the inverse of :func:`parse` for its cells)."""
    blocks = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            body = "\n".join(f"# {line}" if line else "#" for line in cell.source.splitlines())
            blocks.append(f"# %% [markdown]\n{body}")
        elif cell.cell_type == "code":
            tags = cell.metadata.get("tags")
            header = "# %%" + (f" tags={json.dumps(tags)}" if tags else "")
            blocks.append(f"{header}\n{cell.source}")
    return "\n\n".join(blocks) + "\n"


def format_source(src: Path) -> bool:
    """ruff-format the code cells of a source (through a temporary notebook); True if changed."""
    text = src.read_text()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / (src.stem + ".ipynb")
        nbformat.write(parse(text), path)
        ruff = shutil.which("ruff") or "ruff"
        config = ["--config", str(HERE.parent / "pyproject.toml")]
        subprocess.run([ruff, "check", "-q", "--fix", "--select", "I", *config, str(path)])
        subprocess.run([ruff, "format", "-q", *config, str(path)], check=True)
        formatted = render(nbformat.read(path, as_version=4))
    if formatted != text:
        src.write_text(formatted)
        return True
    return False


def build(src: Path) -> Path:
    from nbclient import NotebookClient

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("MPLBACKEND", "Agg")
    nb = parse(src.read_text())
    client = NotebookClient(
        nb,
        timeout=900,
        kernel_name="python3",
        resources={"metadata": {"path": str(HERE)}},
        record_timing=False,
    )
    client.execute()
    out = HERE / (src.stem + ".ipynb")
    nbformat.write(nb, out)
    return out


def restamp(src: Path) -> bool:
    """Copy a source's cell text into its executed notebook, keeping the outputs.

    Only for edits that cannot change what a cell prints (formatting, comments, lint): the cell
    count and kinds must match. Returns True when the notebook changed.
    """
    out = HERE / (src.stem + ".ipynb")
    nb = nbformat.read(out, as_version=4)
    fresh = parse(src.read_text())
    if [c.cell_type for c in nb.cells] != [c.cell_type for c in fresh.cells]:
        raise ValueError(f"{src.name}: cells added or removed; rebuild it instead")
    changed = False
    for old, new in zip(nb.cells, fresh.cells, strict=True):
        tags = new.metadata.get("tags")
        if old.source != new.source or old.metadata.get("tags") != tags:
            old.source = new.source
            old.metadata.pop("tags", None)
            if tags:
                old.metadata["tags"] = tags
            changed = True
    if changed:
        nbformat.write(nb, out)
    return changed


def main(argv: list[str]) -> int:
    sources = sorted(SOURCES.glob("[0-9]*.py"))
    fmt = "--format" in argv
    stamp = "--restamp" in argv
    names = [a for a in argv if a not in ("--format", "--restamp")]
    if names:
        sources = [s for s in sources if any(s.stem.startswith(a) for a in names)]
    for src in sources:
        if fmt:
            print(f"{src.name}: {'formatted' if format_source(src) else 'unchanged'}")
            continue
        if stamp:
            print(f"{src.name}: {'restamped' if restamp(src) else 'unchanged'}")
            continue
        start = time.perf_counter()
        out = build(src)
        print(f"{out.name}: executed in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
