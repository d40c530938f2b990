"""Data by name: the small real datasets shipped with memlab, and the larger shared folder.

*Shipped* data (``datasets/``, installed as ``memlab/_datasets/``) is always there: the py-fsrs
``josh`` review log, a simulated Anki collection, one LoCoMo conversation, STS-B samples and
the savings tables of Ebbinghaus (1885) and its replications, each with its licence. The
optional *shared* folder (:func:`memlab.shared.shared_dir`) holds the full data and MiniLM.
:func:`dataset_path` resolves a name of :data:`DATASETS` (the shared copy when present, else
the shipped file); :func:`load_dataset` reads it.

>>> from memlab.datasets import dataset_path
>>> dataset_path("josh_reviews").name
'py-fsrs_review_logs_josh.csv'
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memlab.shared import (
    ENV_VAR,
    MINILM,
    NO_SHARED_VAR,
    SharedDataMissing,
    shared_dir,
    shared_hidden,
)

_PACKAGE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Dataset:
    """Where a named dataset lives (path parts inside the shared folder, a path inside
    ``datasets/``; None when absent), its loader (``kind``: ``"reviews"``, ``"locomo"``,
    ``"stsb"``, ``"savings"`` or ``"model"``), what it is and its licence."""

    name: str
    kind: str
    shared: tuple[str, ...] | None
    shipped: str | None
    description: str


#: Every dataset memlab knows by name.
DATASETS: dict[str, Dataset] = {
    d.name: d
    for d in (
        Dataset(
            "josh_reviews",
            "reviews",
            ("data", "reviews", "py-fsrs_review_logs_josh.csv"),
            "reviews/py-fsrs_review_logs_josh.csv",
            "12,580 Anki reviews of one learner (py-fsrs josh log, MIT); shipped whole",
        ),
        Dataset(
            "anki_sim",
            "reviews",
            None,
            "anki/anki_sim.colpkg",
            "simulated Anki collection (.colpkg): 400 cards, 2 decks, FSRS-6 learner (CC0)",
        ),
        Dataset(
            "locomo_conv30",
            "locomo",
            None,
            "locomo/locomo_conv-30.json",
            "LoCoMo conversation conv-30: 369 turns, 105 questions (CC BY-NC 4.0)",
        ),
        Dataset(
            "locomo_dev5",
            "locomo",
            ("data", "locomo", "locomo_dev5.json"),
            None,
            "5 LoCoMo dev conversations, 999 questions (CC BY-NC 4.0); shared folder only",
        ),
        Dataset(
            "stsb_train_sample",
            "stsb",
            None,
            "stsb/sts-train-sample.csv",
            "500 STS-B train pairs from redistributable sources (CC BY-SA)",
        ),
        Dataset(
            "stsb_dev_sample",
            "stsb",
            None,
            "stsb/sts-dev-sample.csv",
            "500 STS-B dev pairs from redistributable sources (CC BY-SA)",
        ),
        Dataset(
            "stsb_train",
            "stsb",
            ("data", "stsb", "sts-train.csv"),
            None,
            "STS-B train split, 5,749 pairs; shared folder only",
        ),
        Dataset(
            "stsb_dev",
            "stsb",
            ("data", "stsb", "sts-dev.csv"),
            None,
            "STS-B dev split, 1,500 pairs; shared folder only",
        ),
        Dataset(
            "ebbinghaus1885",
            "savings",
            None,
            "savings/ebbinghaus1885.csv",
            "Ebbinghaus's 1885 savings table, observed and his calculated column (public domain)",
        ),
        Dataset(
            "murre_dros2015",
            "savings",
            None,
            "savings/murre_dros2015.csv",
            "savings of Dros, Mack and Seitz, Murre & Dros 2015 Table 3 (CC BY 4.0)",
        ),
        Dataset(
            "minilm",
            "model",
            MINILM,
            None,
            "all-MiniLM-L6-v2 ONNX folder for fastembed (Apache-2.0); shared folder only",
        ),
    )
}

#: Files of the shared folder by short name (relative paths inside it).
KNOWN: dict[str, tuple[str, ...]] = {
    name: d.shared for name, d in DATASETS.items() if d.shared is not None
}


def shipped_dir() -> Path:
    """The folder of the shipped datasets (inside the installed package, else the repository's)."""
    installed = _PACKAGE / "_datasets"
    if installed.is_dir():
        return installed
    source = _PACKAGE.parent / "datasets"
    if source.is_dir():
        return source
    raise FileNotFoundError(
        f"memlab's shipped datasets are missing: neither {installed} nor {source} exists "
        "(a broken install? reinstall memlab)"
    )


def shared_path(*parts: str, required: bool = True) -> Path | None:
    """A path inside the shared folder, or a known short name's (``KNOWN``); when absent,
    :class:`SharedDataMissing` unless not ``required`` (then None)."""
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


def _dataset(name: str) -> Dataset:
    try:
        return DATASETS[name]
    except KeyError:
        raise KeyError(f"unknown dataset {name!r}; known: {', '.join(sorted(DATASETS))}") from None


def dataset_path(name: str, *, required: bool = True, source: str = "auto") -> Path | None:
    """The file (or folder) of a dataset of :data:`DATASETS`: the shared copy when present,
    else the shipped one (``source="shipped"``: the shipped one, the same on every install).
    A shared-only dataset that is absent raises :class:`SharedDataMissing` unless not
    ``required`` (then None)."""
    data = _dataset(name)
    if source not in ("auto", "shipped"):
        raise ValueError(f"source must be 'auto' or 'shipped', got {source!r}")
    if source == "shipped" and data.shipped is None:
        raise ValueError(f"dataset {name!r} is not shipped with memlab: {data.description}")
    if data.shared is not None and source == "auto":
        path = shared_path(*data.shared, required=False)
        if path is not None:
            return path
    if data.shipped is not None:
        return shipped_dir() / data.shipped
    if required:
        where = "hidden by $" + NO_SHARED_VAR if shared_hidden() else "not found"
        raise SharedDataMissing(
            f"dataset {name!r} is only in the shared folder ({where}): {data.description}"
        )
    return None


def load_dataset(name: str) -> Any:
    """Read a named dataset with the loader of its kind: ``reviews`` -> ReviewData, ``locomo``
    -> conversations, ``stsb`` and ``savings`` (``minutes``, ``savings`` in percent) ->
    DataFrames, ``model`` -> its folder."""
    data = _dataset(name)
    path = dataset_path(name)
    assert path is not None
    if data.kind == "reviews":
        from memlab.fit import load_reviews

        return load_reviews(path)
    if data.kind == "locomo":
        from memlab.eval.locomo import load_locomo

        return load_locomo(path)
    if data.kind == "stsb":
        from memlab.fit.gating import load_stsb

        return load_stsb(path)
    if data.kind == "savings":
        import pandas as pd

        return pd.read_csv(path)
    return path


__all__ = [
    "DATASETS",
    "ENV_VAR",
    "KNOWN",
    "NO_SHARED_VAR",
    "Dataset",
    "SharedDataMissing",
    "dataset_path",
    "load_dataset",
    "shared_dir",
    "shared_hidden",
    "shared_path",
    "shipped_dir",
]
