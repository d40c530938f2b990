"""Dependencies point down: notebook/plot/cli -> eval/sim/fit -> store -> models/gate/embed."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: For each package, the memlab packages it may load (besides itself and memlab's root).
ALLOWED: dict[str, set[str]] = {
    "memlab.models": {"memlab.models"},
    "memlab.gate": {"memlab.gate"},
    "memlab.embed": {"memlab.embed", "memlab.progress"},
    "memlab.store": {
        "memlab.store",
        "memlab.models",
        "memlab.gate",
        "memlab.embed",
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
