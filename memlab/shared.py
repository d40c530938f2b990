"""Where the optional shared data folder is (the full research data and the MiniLM model).

:func:`shared_dir` looks, in order: nowhere when ``MEMLAB_NO_SHARED`` is true (as on a
machine without it); ``$MEMLAB_SHARED``; ``shared/`` beside the working directory or any of
its parents; ``shared/`` beside the repository holding the package. A leaf module.
"""

from __future__ import annotations

import os
from pathlib import Path

#: Environment variable that names the shared folder explicitly.
ENV_VAR = "MEMLAB_SHARED"
#: Environment variable that hides the shared folder (any of ``1 true yes on``).
NO_SHARED_VAR = "MEMLAB_NO_SHARED"

#: The MiniLM ONNX folder inside the shared folder.
MINILM: tuple[str, ...] = ("models", "all-MiniLM-L6-v2-onnx")

_PACKAGE = Path(__file__).resolve().parent


class SharedDataMissing(FileNotFoundError):
    """The shared data folder (or a file in it) is not where memlab looked."""


def shared_hidden() -> bool:
    """True when ``$MEMLAB_NO_SHARED`` hides the shared folder."""
    return os.environ.get(NO_SHARED_VAR, "").strip().lower() in {"1", "true", "yes", "on"}


def shared_dir(*, required: bool = True) -> Path | None:
    """The shared data folder; when it is not found, :class:`SharedDataMissing` unless not
    ``required`` (then None)."""
    if shared_hidden():
        if required:
            raise SharedDataMissing(f"the shared data folder is hidden by ${NO_SHARED_VAR}")
        return None
    env = os.environ.get(ENV_VAR)
    if env:
        path = Path(env).expanduser()
        if path.is_dir():
            return path.resolve()
        if required:
            raise SharedDataMissing(f"${ENV_VAR} is {env!r}, which is not a folder")
        return None
    here = Path.cwd().resolve()
    candidates = [p / "shared" for p in (here, *here.parents)]
    candidates.append(_PACKAGE.parent.parent / "shared")  # <repo>/memlab -> <repo>/../shared
    for candidate in candidates:
        if candidate.is_dir() and (candidate / "data").is_dir():
            return candidate.resolve()
    if required:
        raise SharedDataMissing(
            "shared data folder not found: set $MEMLAB_SHARED or put shared/ beside the "
            f"repository (looked in {[str(c) for c in candidates][:3]}...)"
        )
    return None
