"""``memlab eval``: benchmark subcommands on real data (``gate`` and ``locomo``).

Each module of :data:`EVAL_COMMANDS` has ``add_parser(subparsers)``, adding one subcommand.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any

#: Modules contributing ``memlab eval`` subcommands, in ``--help`` order.
EVAL_COMMANDS: tuple[str, ...] = ("memlab.eval.gate_cli", "memlab.eval.locomo")


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``eval`` group with every subcommand of :data:`EVAL_COMMANDS`."""
    parser = subparsers.add_parser(
        "eval", help="benchmarks on real data", description=__doc__.splitlines()[0]
    )
    inner = parser.add_subparsers(dest="eval_command", metavar="BENCHMARK")
    inner.required = True
    for module_name in EVAL_COMMANDS:
        importlib.import_module(module_name).add_parser(inner)
    return parser
