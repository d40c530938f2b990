"""memlab eval: benchmarks on real data (gate and locomo)."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``eval`` group with its ``gate`` and ``locomo`` subcommands."""
    from memlab.eval import gate_cli, locomo

    parser = subparsers.add_parser(
        "eval", help="benchmarks on real data", description=__doc__.splitlines()[0]
    )
    inner = parser.add_subparsers(dest="eval_command", metavar="BENCHMARK")
    inner.required = True
    gate_cli.add_parser(inner)
    locomo.add_parser(inner)
    return parser
