"""What the LoCoMo experiments share: their paths and command-line options.

``locomo_dev5.py`` and ``locomo_budget.py`` read the same shared LoCoMo file with the same
embedder choice and write to the same results folder; :func:`locomo_parser` builds that common
command line (``--file``, ``--model-dir``, ``--hashing``, ``--out``, ``--cache``) and
:func:`model_dir` turns the parsed options into the ``model_dir`` of
:func:`memlab.eval.locomo.evaluate` (None: the HashingEmbedder).
"""

from __future__ import annotations

import argparse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"
RESULTS = ROOT / "experiments" / "results"
LOCOMO_DEV5 = SHARED / "data" / "locomo" / "locomo_dev5.json"
MINILM = SHARED / "models" / "all-MiniLM-L6-v2-onnx"


def locomo_parser(
    doc: str | None, *, hashing_help: str, cache_help: str
) -> argparse.ArgumentParser:
    """The options every LoCoMo experiment takes; add a script's own options to it.

    Parameters
    ----------
    doc : str or None
        The script's docstring (the ``--help`` description, shown as written).
    hashing_help, cache_help : str
        Help texts of ``--hashing`` and ``--cache`` (each script words them its own way).
    """
    ap = argparse.ArgumentParser(
        description=doc, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--file", type=Path, default=LOCOMO_DEV5)
    ap.add_argument("--model-dir", type=Path, default=MINILM)
    ap.add_argument("--hashing", action="store_true", help=hashing_help)
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--cache", type=Path, default=None, help=cache_help)
    return ap


def model_dir(args: argparse.Namespace) -> Path | None:
    """The MiniLM folder to embed with, or None for the HashingEmbedder (``--hashing``, or no
    model at ``--model-dir``)."""
    return None if args.hashing or not args.model_dir.is_dir() else args.model_dir
