"""``memlab mcp``: serve a memory store to an agent over MCP (stdio, or HTTP on 127.0.0.1)."""

from __future__ import annotations

import argparse
import os
import secrets
import sys
from pathlib import Path
from typing import Any

#: Environment variable read for the HTTP bearer token.
TOKEN_ENV = "MEMLAB_MCP_TOKEN"


def register(subparsers: Any) -> None:
    """Add the ``mcp`` subcommand."""
    from memlab.shell import add_store_options

    p = subparsers.add_parser(
        "mcp",
        help="serve a memory store to an agent over the Model Context Protocol",
        description="Serve a memlab store as MCP tools and resources: over stdio (default, for"
        " an MCP client that starts the server) or streamable HTTP on 127.0.0.1 with a bearer"
        " token.",
    )
    add_store_options(p)
    p.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio (default) or streamable HTTP on 127.0.0.1",
    )
    p.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765)")
    p.add_argument("--token-file", help="file holding the HTTP bearer token (its first line)")
    p.add_argument(
        "--token",
        help=f"HTTP bearer token (visible to every local"
        f" user in ps: prefer ${TOKEN_ENV} or --token-file; default: a new one"
        " printed to stderr)",
    )
    p.set_defaults(func=run)


def given_token(args: argparse.Namespace) -> str | None:
    """The token of ``--token-file``, ``$MEMLAB_MCP_TOKEN`` or ``--token`` (with a warning: the
    command line shows in ``ps``), in that order; ``None`` when none is given."""
    if args.token is not None:
        print(
            "memlab mcp: warning: --token is visible to every local user (ps); use"
            f" ${TOKEN_ENV} or --token-file",
            file=sys.stderr,
        )
    if args.token_file is not None:
        lines = Path(args.token_file).read_text(encoding="utf-8").splitlines()
        return lines[0].strip() if lines else ""
    return os.environ.get(TOKEN_ENV) or args.token


def run(args: argparse.Namespace) -> int:
    from memlab.shell import open_store

    token, generated = None, False
    if args.transport == "http":
        from memlab.mcp.http import check_token

        token = given_token(args)
        generated = token is None
        token = secrets.token_urlsafe(32) if token is None else check_token(token)
        if not 0 < args.port < 65536:  # before the store opens and the token is printed
            raise ValueError(f"--port must be in 1..65535, got {args.port}")
    store = open_store(args)
    try:
        if args.transport == "stdio":
            from memlab.mcp.server import build_server

            build_server(store).run("stdio")
        else:
            from memlab.mcp.http import HOST, PATH, serve_http

            print(
                f"memlab mcp: serving http://{HOST}:{args.port}{PATH} (bearer token required)",
                file=sys.stderr,
            )
            if generated:
                print(f"memlab mcp: bearer token: {token}", file=sys.stderr)
            sys.stderr.flush()
            assert token is not None
            serve_http(store, token, port=args.port)
    finally:
        store.close()
    return 0
