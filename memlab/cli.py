"""The ``memlab`` command: each subcommand's module exposes ``register(subparsers)``, which adds
a sub-parser whose ``func`` default runs it and returns the exit code."""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import NoReturn

from memlab.ops import STORE_ERRORS, error_message

#: Modules that contribute subcommands, in the order ``memlab --help`` lists them.
_SUBCOMMAND_MODULES: tuple[str, ...] = (
    "memlab.demo",
    "memlab.fit.cli",
    "memlab.eval.cli",
    "memlab.shell",
    "memlab.mcp.cli",
)


class _Parser(argparse.ArgumentParser):
    """A usage error is one line on stderr and exit code 2, as every other error is."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every subcommand registered."""
    parser = _Parser(
        prog="memlab",
        description="memlab: memory that forgets on purpose (FSRS-6, Ebbinghaus heat, similarity "
        "gating).",
    )
    try:
        installed = version("memlab")
    except PackageNotFoundError:  # pragma: no cover - running from an uninstalled tree
        installed = "unknown"
    parser.add_argument("--version", action="version", version=f"memlab {installed}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for module_name in _SUBCOMMAND_MODULES:
        importlib.import_module(module_name).register(subparsers)
    _register_models(subparsers)
    return parser


def _register_models(subparsers: argparse._SubParsersAction) -> None:
    """``memlab models list`` / ``memlab models pull NAME``: real embedding models, explicitly."""
    models = subparsers.add_parser(
        "models",
        help="embedding models: what fastembed offers and what is here; download one",
        description="Real embedding models for the store. Nothing in memlab downloads except "
        "`memlab models pull`.",
    )
    verbs = models.add_subparsers(dest="models_command", metavar="VERB")
    verbs.required = True
    listing = verbs.add_parser("list", help="the models fastembed offers, and which are here")
    pull = verbs.add_parser("pull", help="download one model into fastembed's cache")
    pull.add_argument("name", help="a model name from `memlab models list`")
    for verb in (listing, pull):
        verb.add_argument("--cache-dir", help="fastembed's cache folder (default: its own)")
    listing.set_defaults(func=_models_list)
    pull.set_defaults(func=_models_pull)


def _models_list(args: argparse.Namespace) -> int:
    from memlab.embed import DEFAULT_FASTEMBED_MODEL, _shared_copy, cached_models, fastembed_models

    here = set(cached_models(args.cache_dir))
    print(f"{'model':<52} {'dim':>5}  here")
    for name, dim in sorted(fastembed_models().items()):
        mark = "yes" if name in here else "shared" if _shared_copy(name, args.cache_dir) else ""
        default = "  (default)" if name == DEFAULT_FASTEMBED_MODEL else ""
        print(f"{name:<52} {dim:>5}  {mark}{default}")
    return 0


def _models_pull(args: argparse.Namespace) -> int:
    from memlab.embed import pull_model

    folder = pull_model(args.name, args.cache_dir)
    print(f"{args.name} is in {folder}; use it with embedder='fastembed:{args.name}'")
    return 0


def command_name(args: argparse.Namespace) -> str:
    """``memlab eval gate``: the subcommand path that ran (for error prefixes)."""
    parts = [args.command] + [
        value
        for key, value in vars(args).items()
        if key != "command"
        and (key.endswith("_command") or key == "verb")
        and isinstance(value, str)
    ]
    return " ".join(["memlab", *parts])


def check_model_dir(path: str | None) -> None:
    """A ``--model-dir`` must be a folder holding an ONNX model (one line, not a traceback)."""
    if path is None:
        return
    folder = Path(path)
    if not folder.is_dir():
        raise FileNotFoundError(f"--model-dir {path}: not a folder")
    if not any(folder.glob("*.onnx")) and not any(folder.glob("onnx/*.onnx")):
        raise FileNotFoundError(
            f"--model-dir {path}: no ONNX model (*.onnx) in that folder; give a fastembed "
            "model folder such as the shared all-MiniLM-L6-v2-onnx"
        )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``memlab`` command line; returns the process exit code.

    Every error a command raises (a bad argument, a store error, a store file of a newer
    schema, a full disk, a closed output pipe, memory exhausted, a missing optional dependency)
    is one line on stderr and exit code 2; exit code 1 stays "nothing found".
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    name = command_name(args)
    # benchmarks run for minutes: show their progress when a person watches a terminal
    if getattr(args, "progress", None) is False and sys.stderr.isatty():
        args.progress = True
    try:
        check_model_dir(getattr(args, "model_dir", None))
        return int(args.func(args) or 0)
    except BrokenPipeError:  # the reader left (``| head``): stop writing, quietly at exit too
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        print(f"{name}: error: the output was closed", file=sys.stderr)
    except (*STORE_ERRORS, MemoryError, ImportError) as error:
        print(f"{name}: error: {error_message(error)}", file=sys.stderr)
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
