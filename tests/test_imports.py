"""No import cycle anywhere in memlab/: every import, at module level or inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "memlab"


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the memlab modules it imports (``from pkg import sub`` names the submodule)."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                edges |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(anchor + ([base] if base else []))
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    edges.add(sub if sub in modules else base)
        graph[name] = {e for e in edges if e in modules and e != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_sees_imports_inside_functions() -> None:
    graph = import_graph()
    assert "memlab.fit.access" in graph["memlab.store.store"]  # loaded inside MemoryStore.fit
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycle_in_memlab() -> None:
    assert cycles(import_graph()) == []


def test_import_memlab_offers_the_starting_names_lazily() -> None:
    import subprocess
    import sys

    code = "import sys, memlab; print(sorted(m for m in sys.modules if m.startswith('memlab')))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert loaded.stdout.strip() == "['memlab']"  # nothing heavy until a name is used
    import memlab

    names = set(memlab.__all__) - {"__version__"}
    assert {"FSRS6", "HeatModel", "Gate", "FSRS6Fitter", "MemoryStore", "load_dataset"} <= names
    assert 10 <= len(names) <= 16
    for name in names:
        assert getattr(memlab, name).__doc__, name
    # the documented paths work after a bare `import memlab`, each subpackage loaded when used
    code = "import memlab; print(memlab.datasets.load_dataset.__name__, memlab.notebook.__name__)"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert loaded.stdout.split() == ["load_dataset", "memlab.notebook"], loaded.stderr
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        memlab.nonexistent  # noqa: B018
