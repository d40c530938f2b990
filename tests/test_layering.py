"""Dependencies point down: notebook/plot/cli -> eval/sim/fit -> store ->
models/gate/embed/secrets."""

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
    "memlab.secrets": {"memlab.secrets"},
    # memlab.fit sits above the store but never loads it: MemoryStore.fit loads memlab.fit
    # only when called (memlab.store.store), so there is no cycle
    "memlab.fit": {"memlab.fit", "memlab.models", *GATE, "memlab.progress"},
    "memlab.store": {
        "memlab.store",
        "memlab.keep",
        "memlab.models",
        *GATE,
        "memlab.embed",
        "memlab.informativeness",
        "memlab.progress",
        "memlab.secrets",
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


def test_only_the_package_imports_the_store_facade() -> None:
    """The store's facade sits on its modules, and only ``memlab.store`` imports it (import cycles
    anywhere in memlab are tests/test_imports.py's)."""
    from test_imports import import_graph

    graph = import_graph()
    parts = {f"memlab.store.{m}" for m in ("core", "ingest", "lifecycle", "sweep")}
    assert graph["memlab.store.store"] >= parts
    assert {m for m, deps in graph.items() if "memlab.store.store" in deps} == {"memlab.store"}


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
