"""nbval and the shared folder: cells tagged ``needs-shared`` are compared only when it is present.

The committed notebooks are executed with the shared folder (MiniLM, all LoCoMo conversations,
the full STS-B splits). Every other cell computes on the data shipped in ``datasets/`` and prints
the same output with or without the shared folder, so nbval compares it strictly both ways. A
cell tagged ``needs-shared`` (see ``build.py``) prints what only the shared data can give; when
the shared folder is absent (or hidden by ``MEMLAB_NO_SHARED=1``) the notebook falls back (the
hashing embedder, the shipped conversation) and says so: the cell is still executed and must not
fail, but its output is not compared. The summary lists those cells and the reason.
"""

from __future__ import annotations

import pytest

from memlab.datasets import KNOWN, shared_path

TAG = "needs-shared"
_unchecked: list[str] = []


def _shared_complete() -> bool:
    return all(shared_path(name, required=False) is not None for name in KNOWN)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _shared_complete():
        return
    for item in items:
        cell = getattr(item, "cell", None)
        options = getattr(item, "options", None)
        if cell is None or options is None or TAG not in cell.metadata.get("tags", []):
            continue
        options["check"] = False
        _unchecked.append(item.nodeid)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:  # noqa: ANN001
    if _unchecked:
        terminalreporter.write_sep(
            "-",
            f"{len(_unchecked)} notebook cells executed without output comparison: "
            "the shared folder (MiniLM model, full LoCoMo / STS-B) is absent",
        )
        for nodeid in _unchecked:
            terminalreporter.write_line(f"  {nodeid}")
