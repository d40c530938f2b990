"""``memlab mcp``: serve a memory store to an agent over MCP (stdio, or HTTP on 127.0.0.1)."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

#: Environment variable read for the HTTP bearer token when ``--token`` is not given.
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
    p.add_argument(
        "--token",
        default=None,
        help=f"HTTP bearer token (default ${TOKEN_ENV}, else a new one printed to stderr)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from memlab.shell import open_store

    token = None
    if args.transport == "http":
        from memlab.mcp.http import check_token, new_token

        token = args.token or os.environ.get(TOKEN_ENV)
        token = check_token(token) if token else new_token()
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
            if not (args.token or os.environ.get(TOKEN_ENV)):
                print(f"memlab mcp: bearer token: {token}", file=sys.stderr)
            sys.stderr.flush()
            assert token is not None
            serve_http(store, token, port=args.port)
    finally:
        store.close()
    return 0
