"""Where the shared data lives (review logs, LoCoMo, STS-B, the MiniLM model).

The data is not part of the package: it sits in a ``shared/`` folder beside the
repository (``<repo>/../shared``). :func:`shared_dir` finds it from a notebook, a
script or a test, whatever the working directory:

1. the environment variable ``MEMLAB_SHARED``, when set (it must exist);
2. ``shared/`` beside the current working directory or any of its parents
   (so ``notebooks/`` -> ``<repo>/..`` -> ``shared``);
3. ``shared/`` beside the folder that holds the installed ``memlab`` package's repository.

>>> from memlab.datasets import shared_path
>>> shared_path("data", "reviews", "py-fsrs_review_logs_josh.csv", required=False)  # doctest: +SKIP
"""

from __future__ import annotations

import os
from pathlib import Path

#: Environment variable that names the shared folder explicitly.
ENV_VAR = "MEMLAB_SHARED"

#: Files of the shared folder by short name (relative paths inside it).
KNOWN = {
    "josh_reviews": ("data", "reviews", "py-fsrs_review_logs_josh.csv"),
    "locomo_dev5": ("data", "locomo", "locomo_dev5.json"),
    "stsb_train": ("data", "stsb", "sts-train.csv"),
    "stsb_dev": ("data", "stsb", "sts-dev.csv"),
    "minilm": ("models", "all-MiniLM-L6-v2-onnx"),
}


class SharedDataMissing(FileNotFoundError):
    """The shared data folder (or a file in it) is not where memlab looked."""


def _candidates(start: Path | None = None) -> list[Path]:
    here = (start or Path.cwd()).resolve()
    found = [p / "shared" for p in (here, *here.parents)]
    package_repo = Path(__file__).resolve().parents[1]  # <repo>/memlab/datasets.py -> <repo>
    found.append(package_repo.parent / "shared")
    return found


def shared_dir(start: str | Path | None = None, *, required: bool = True) -> Path | None:
    """The shared data folder.

    Parameters
    ----------
    start : path, optional
        Where to start looking upwards (default: the current working directory).
    required : bool
        Raise :class:`SharedDataMissing` when nothing is found (default); otherwise return None.
    """
    env = os.environ.get(ENV_VAR)
    if env:
        path = Path(env).expanduser()
        if path.is_dir():
            return path.resolve()
        if required:
            raise SharedDataMissing(f"${ENV_VAR} is {env!r}, which is not a folder")
        return None
    for candidate in _candidates(None if start is None else Path(start)):
        if candidate.is_dir() and (candidate / "data").is_dir():
            return candidate.resolve()
    if required:
        raise SharedDataMissing(
            "shared data folder not found: set $MEMLAB_SHARED or put shared/ beside the repository "
            f"(looked in {[str(c) for c in _candidates(None if start is None else Path(start))][:3]}...)"
        )
    return None


def shared_path(*parts: str, required: bool = True) -> Path | None:
    """A path inside the shared folder; a single known short name (see ``KNOWN``) also works.

    Returns None instead of raising when ``required=False`` and the folder or file is absent.
    """
    if not parts:
        raise ValueError("shared_path needs at least one path part or a known name")
    if len(parts) == 1 and parts[0] in KNOWN:
        parts = KNOWN[parts[0]]
    root = shared_dir(required=required)
    if root is None:
        return None
    path = root.joinpath(*parts)
    if not path.exists():
        if required:
            raise SharedDataMissing(f"{'/'.join(parts)} is not in the shared folder {root}")
        return None
    return path


__all__ = ["ENV_VAR", "KNOWN", "SharedDataMissing", "shared_dir", "shared_path"]
