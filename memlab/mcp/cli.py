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

    if args.transport == "stdio":
        from memlab.mcp.server import build_server

        with open_store(args) as store:
            build_server(store).run("stdio")
        return 0
    from memlab.mcp.http import HOST, PATH, check_token, listen, serve_http

    given = given_token(args)
    token = secrets.token_urlsafe(32) if given is None else check_token(given)
    # the port is bound before the store opens and the token is printed
    with listen(args.port) as sock, open_store(args) as store:
        shown = "" if given is not None else f"\nmemlab mcp: bearer token: {token}"
        url = f"http://{HOST}:{args.port}{PATH}"
        print(f"memlab mcp: serving {url} (bearer token required){shown}", file=sys.stderr)
        sys.stderr.flush()
        serve_http(store, token, sock)
    return 0
