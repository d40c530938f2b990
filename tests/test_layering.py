"""Dependencies point down: notebook/plot/cli -> eval/sim/fit -> store -> models/gate/embed."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

#: The gate and the modules it is made of.
GATE = {"memlab.gate", "memlab.revision", "memlab.words"}

#: For each package, the memlab packages it may load (besides itself and memlab's root).
ALLOWED: dict[str, set[str]] = {
    "memlab.models": {"memlab.models"},
    "memlab.gate": GATE,
    "memlab.informativeness": {"memlab.informativeness"},
    "memlab.keep": {"memlab.keep", "memlab.informativeness", "memlab.models"},
    "memlab.embed": {"memlab.embed", "memlab.progress"},
    # memlab.fit sits above the store but never loads it: MemoryStore.fit loads memlab.fit
    # only when called (memlab.store.fitting), so there is no cycle
    "memlab.fit": {"memlab.fit", "memlab.models", *GATE, "memlab.progress"},
    "memlab.store": {
        "memlab.store",
        "memlab.keep",
        "memlab.models",
        *GATE,
        "memlab.embed",
        "memlab.informativeness",
        "memlab.progress",
    },
}


def _loaded_memlab_modules(module: str) -> set[str]:
    code = (
        f"import sys, json, {module}; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('memlab'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return set(json.loads(out))


@pytest.mark.parametrize("module", sorted(ALLOWED))
def test_lower_layers_import_nothing_above_them(module: str) -> None:
    loaded = _loaded_memlab_modules(module) - {"memlab"}
    outside = {
        m for m in loaded if not any(m == p or m.startswith(p + ".") for p in ALLOWED[module])
    }
    assert not outside, f"{module} loads {sorted(outside)}"


# ------------------------------------------------------------------ inside memlab/store
STORE = Path(__file__).resolve().parents[1] / "memlab" / "store"


def _store_modules() -> dict[str, ast.Module]:
    return {p.stem: ast.parse(p.read_text(), str(p)) for p in sorted(STORE.glob("*.py"))}


def _store_imports(tree: ast.Module) -> set[str]:
    """Modules of memlab.store a module imports (at run time or for type checking)."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "memlab.store":
                out |= {a.name for a in node.names}
            elif node.module.startswith("memlab.store."):
                out.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            out |= {a.name.split(".")[2] for a in node.names if a.name.startswith("memlab.store.")}
    return out


def test_store_import_graph_is_acyclic() -> None:
    modules = _store_modules()
    graph = {name: _store_imports(tree) & set(modules) - {name} for name, tree in modules.items()}
    assert "core" in graph and graph["store"] >= {"core", "ingest", "search", "lifecycle"}
    state: dict[str, int] = {}  # 1 on the current path, 2 done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                raise AssertionError(f"import cycle: {' -> '.join([*path, node, nxt])}")
            if nxt not in state:
                visit(nxt, [*path, node])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [])
    # the package's __init__ is the only importer of the facade
    assert all("store" not in deps for name, deps in graph.items() if name != "__init__")


def test_no_store_module_touches_another_objects_private_members() -> None:
    offences = []
    for name, tree in _store_modules().items():
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
            ):
                offences.append(f"{name}.py:{node.lineno} .{node.attr}")
    assert not offences, offences
