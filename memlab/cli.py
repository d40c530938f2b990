"""The ``memlab`` command.

Each subcommand lives in its own module exposing ``register(subparsers)``, which adds
an argparse sub-parser whose ``func`` default runs it and returns the exit code.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

#: Modules that contribute subcommands, in the order ``memlab --help`` lists them.
_SUBCOMMAND_MODULES: tuple[str, ...] = (
    "memlab.demo",
    "memlab.fit.cli",
    "memlab.eval.cli",
    "memlab.store_cli",
    "memlab.mcp.cli",
)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="memlab",
        description="memlab: memory that forgets on purpose (FSRS-6, Ebbinghaus heat, similarity gating).",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for module_name in _SUBCOMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``memlab`` command line; returns the process exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (ValueError, TypeError, FileNotFoundError) as error:
        print(f"memlab {args.command}: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
