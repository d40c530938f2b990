"""memlab: memory that forgets on purpose.

The laws of forgetting side by side (FSRS-6 and the field's other models, Ebbinghaus heat with
forgetting risk, similarity gating on ingest): fitted to real review logs, simulated on agent
workloads and run in a persistent memory store, from Jupyter.

The names a newcomer starts from are here; each is loaded when first used::

    import memlab
    store = memlab.MemoryStore()                          # SQLite, hashing embedder
    fsrs = memlab.FSRS6()                                  # the FSRS-6 power law
    reviews = memlab.load_dataset("josh_reviews")          # 12,580 real Anki reviews
    memlab.compare_models(reviews, models=["fsrs6", "hlr", "avg"])
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

#: Public name -> the module that defines it.
_NAMES: dict[str, str] = {
    "FSRS6": "memlab.models",
    "FSRS7": "memlab.models",
    "HeatModel": "memlab.models",
    "DualStrength": "memlab.models",
    "Gate": "memlab.gate",
    "MemoryStore": "memlab.store",
    "load_reviews": "memlab.fit",
    "FSRS6Fitter": "memlab.fit",
    "compare_models": "memlab.fit",
    "simulate": "memlab.sim",
    "load_dataset": "memlab.datasets",
    "plot_curves": "memlab.plot",
}

#: Subpackages and modules reached as attributes (``memlab.fit.load_reviews``), loaded when used.
_MODULES = frozenset("datasets embed eval fit gate mcp models notebook plot sim store".split())


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        return importlib.import_module(f"memlab.{name}")
    if name in _NAMES:
        value = getattr(importlib.import_module(_NAMES[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'memlab' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_NAMES])


def load_ipython_extension(ipython: object) -> None:  # pragma: no cover - thin delegate
    """Register memlab's IPython magics (``%load_ext memlab``)."""
    from memlab.notebook.magics import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython: object) -> None:  # pragma: no cover - thin delegate
    """Remove memlab's IPython magics and formatters (``%unload_ext memlab``)."""
    from memlab.notebook.magics import unload_ipython_extension as _unload

    _unload(ipython)


__all__ = ["__version__", *_NAMES, "load_ipython_extension", "unload_ipython_extension"]
