"""The MCP server over streamable HTTP: it binds ``127.0.0.1`` only; every request must carry
``Authorization: Bearer <token>`` (checked in constant time by :class:`StaticTokenVerifier`, else
401); the SDK's DNS-rebinding protection stays on (Host and Origin must name the loopback)."""

from __future__ import annotations

import hmac
import socket
from typing import Any

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from starlette.applications import Starlette

from memlab.mcp.server import build_server

#: The only interface the HTTP transport binds.
HOST = "127.0.0.1"
#: Path of the MCP endpoint.
PATH = "/mcp"
#: Shortest token accepted (characters).
MIN_TOKEN_CHARS = 16


class StaticTokenVerifier:
    """The SDK's ``TokenVerifier`` for one shared secret, compared in constant time."""

    def __init__(self, token: str) -> None:
        check_token(token)
        self._token = token.encode("utf-8")

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode("utf-8"), self._token):
            return AccessToken(token=token, client_id="memlab-local", scopes=[])
        return None


def check_token(token: Any) -> str:
    """``token`` if it is a usable bearer token, else ``ValueError``."""
    if not isinstance(token, str) or len(token) < MIN_TOKEN_CHARS or token.strip() != token:
        raise ValueError(
            f"the bearer token must be a string of at least {MIN_TOKEN_CHARS} characters"
            " without surrounding spaces"
        )
    return token


def http_app(store: Any, token: str, *, port: int) -> Starlette:
    """The ASGI app: the MCP server over ``store`` at ``/mcp``, requiring ``token``; ``port``
    names this server as the token's issuer."""
    server = build_server(
        store,
        token_verifier=StaticTokenVerifier(token),
        auth=AuthSettings(issuer_url=f"http://{HOST}:{port}", resource_server_url=None),
    )
    # host=127.0.0.1 and no transport_security: the SDK turns DNS-rebinding protection on
    return server.streamable_http_app(streamable_http_path=PATH, host=HOST)


def listen(port: int) -> socket.socket:
    """A socket bound to ``127.0.0.1:<port>``: a bad or taken port fails before anything starts."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 < port < 65536:
        raise ValueError(f"port must be an integer in 1..65535, got {port!r}")
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as error:
        sock.close()
        raise OSError(f"cannot serve on {HOST}:{port}: {error.strerror}") from None
    return sock


def serve_http(store: Any, token: str, sock: socket.socket, *, log_level: str = "warning") -> None:
    """Serve :func:`http_app` at ``/mcp`` on ``sock`` (from :func:`listen`) until interrupted."""
    import uvicorn

    port = sock.getsockname()[1]
    app = http_app(store, token, port=port)
    uvicorn.Server(uvicorn.Config(app, host=HOST, port=port, log_level=log_level)).run([sock])
