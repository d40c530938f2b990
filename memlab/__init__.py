"""memlab: memory that forgets on purpose.

FSRS-6 power-law forgetting, Ebbinghaus heat with forgetting risk and similarity
gating on ingest, side by side: fitted to real data, simulated on agent workloads
and run for real in a persistent memory store, from Jupyter.
"""

from __future__ import annotations

__version__ = "0.1.0"


def load_ipython_extension(ipython: object) -> None:  # pragma: no cover - thin delegate
    """Register memlab's IPython magics (``%load_ext memlab``)."""
    from memlab.notebook.magics import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython: object) -> None:  # pragma: no cover - thin delegate
    """Remove memlab's IPython magics and formatters (``%unload_ext memlab``)."""
    from memlab.notebook.magics import unload_ipython_extension as _unload

    _unload(ipython)


__all__ = ["__version__", "load_ipython_extension", "unload_ipython_extension"]
