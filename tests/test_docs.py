"""The documentation: its shell transcript runs as printed, and the API reference covers every
public name, each with a docstring."""

from __future__ import annotations

import importlib
import inspect
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"

#: The modules whose ``__all__`` is memlab's public API.
PUBLIC = (
    "memlab",
    "memlab.models",
    "memlab.fit",
    "memlab.gate",
    "memlab.store",
    "memlab.sim",
    "memlab.datasets",
    "memlab.plot",
    "memlab.ops",
)


def test_the_agents_transcript_runs_as_printed(tmp_path: Path) -> None:
    block = re.search(r"```console\n(.*?)```", (DOCS / "agents.md").read_text(), re.S)
    assert block is not None
    lines = block.group(1).splitlines()
    commands = [line[2:] for line in lines if line.startswith("$ ")]
    expected = [line for line in lines if not line.startswith("$ ")]
    script = "\n".join(["exec 2>&1", *commands])
    env = {**os.environ, "MEMLAB_NO_SHARED": "1", "HF_HUB_OFFLINE": "1"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    run = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert run.stdout.splitlines() == expected


@pytest.mark.parametrize("module", PUBLIC)
def test_every_public_name_has_a_docstring(module: str) -> None:
    mod = importlib.import_module(module)
    assert mod.__doc__, module
    for name in mod.__all__:
        value = getattr(mod, name)
        if inspect.isclass(value) or inspect.isfunction(value):
            assert inspect.getdoc(value), f"{module}.{name} has no docstring"


def test_every_public_module_is_in_the_reference() -> None:
    reference = "\n".join(p.read_text() for p in (DOCS / "api").glob("*.md"))
    documented = set(re.findall(r"^::: ([\w.]+)", reference, re.M))
    assert set(PUBLIC) - {"memlab"} <= documented
    overview = (DOCS / "api" / "index.md").read_text()
    import memlab

    for name in set(memlab.__all__) - {"__version__"}:
        assert f"memlab.{name}`" in overview, f"memlab.{name} is not in the API overview"


def test_the_reference_shows_every_public_name_of_the_modules_it_documents() -> None:
    """mkdocstrings leaves out a member without a docstring; a constant's is its ``#:`` comment,
    read by the site's griffe extension. Every ``__all__`` name of a documented module has one."""
    griffe = pytest.importorskip("griffe")
    hook = "docs/hooks/comments.py:CommentDocstrings"
    assert hook in (DOCS.parent / "mkdocs.yml").read_text()
    extensions = griffe.load_extensions(str(DOCS.parent / hook))
    root = griffe.load("memlab", search_paths=[str(DOCS.parent)], extensions=extensions)
    reference = "\n".join(p.read_text() for p in (DOCS / "api").glob("*.md"))
    modules = set(re.findall(r"^::: ([\w.]+)", reference, re.M)) - {"memlab.store.MemoryStore"}
    for module in sorted(modules):
        names = importlib.import_module(module).__dict__.get("__all__", [])
        loaded = root[module.removeprefix("memlab.")]
        missing = [name for name in names if loaded[name].docstring is None]
        assert not missing, f"{module}: {missing} have no docstring or #: comment"


@pytest.mark.parametrize(
    "page", ["index.md", "concepts/laws.md", "store.md", "fitting.md", "simulation.md"]
)
def test_the_python_examples_run(page: str, tmp_path: Path, monkeypatch) -> None:
    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / page).read_text(), re.S)
    assert blocks, page
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, str(DOCS / page), "exec"), namespace)  # noqa: S102
    assert list(tmp_path.iterdir()) == []
