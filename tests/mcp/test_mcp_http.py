"""`memlab mcp --transport http`: 127.0.0.1 only, bearer token required, DNS-rebinding guard on."""

from __future__ import annotations

import json
import socket
import subprocess
import time

import anyio
import pytest

pytest.importorskip("mcp")
httpx2 = pytest.importorskip("httpx2")

from mcp import ClientSession  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from mcp_helpers import at, memlab_command, server_env, structured  # noqa: E402

from memlab.mcp.cli import TOKEN_ENV, given_token  # noqa: E402
from memlab.mcp.http import StaticTokenVerifier, check_token  # noqa: E402
from memlab.store import MAX_CONTENT_BYTES, MemoryStore  # noqa: E402

TOKEN = "test-token-0123456789abcdef"

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
INGEST = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "ingest", "arguments": {"content": "an intruder's note"}},
}
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    db = tmp_path_factory.mktemp("mcp_http") / "http.db"
    MemoryStore(db).close()  # created before the server starts, so it can be inspected
    port = _free_port()
    command, args = memlab_command(
        "mcp", "--db", str(db), "--transport", "http", "--port", str(port)
    )
    proc = subprocess.Popen(
        [command, *args],
        env={**server_env(), TOKEN_ENV: TOKEN},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"server did not start: {proc.stderr.read()}")
            time.sleep(0.2)
    yield f"http://127.0.0.1:{port}/mcp", db, port
    proc.terminate()
    proc.wait(timeout=20)


def _post(url: str, body: dict, **headers: str) -> httpx2.Response:
    return httpx2.post(url, content=json.dumps(body), headers={**HEADERS, **headers}, timeout=10)


def test_requests_without_the_token_are_refused_and_change_nothing(server) -> None:
    url, db, _ = server
    assert _post(url, INITIALIZE).status_code == 401
    assert _post(url, INITIALIZE, Authorization="Bearer wrong-token-wrong-token").status_code == 401
    assert _post(url, INGEST).status_code == 401
    assert _post(url, INGEST, Authorization=TOKEN).status_code == 401  # no "Bearer " scheme
    with MemoryStore(db) as store:
        assert len(store) == 0


def test_dns_rebinding_protection_stays_on(server) -> None:
    url, _, port = server
    bearer = f"Bearer {TOKEN}"
    rebound = _post(url, INITIALIZE, Authorization=bearer, Host=f"evil.example:{port}")
    assert rebound.status_code == 421
    foreign = _post(url, INITIALIZE, Authorization=bearer, Origin="http://evil.example")
    assert foreign.status_code == 403
    assert _post(url, INITIALIZE, Authorization=bearer).status_code == 200


def test_the_sdk_client_with_the_token_uses_the_tools(server) -> None:
    url, db, _ = server
    seen: dict = {}

    async def main() -> None:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    seen["tools"] = {t.name for t in (await session.list_tools()).tools}
                    seen["ingest"] = structured(
                        await session.call_tool(
                            "ingest", {"content": "The VPN gateway is vpn2.", "now": at(0)}
                        )
                    )

    anyio.run(main)
    assert {"ingest", "search", "sweep"} <= seen["tools"]
    assert seen["ingest"]["decision"] == "create"
    with MemoryStore(db) as store:
        assert [m.content for m in store.memories()] == ["The VPN gateway is vpn2."]


def test_token_checks() -> None:
    with pytest.raises(ValueError, match="at least"):
        check_token("short")
    with pytest.raises(ValueError):
        check_token(" " + TOKEN)
    verifier = StaticTokenVerifier(TOKEN)
    assert anyio.run(verifier.verify_token, "x" * len(TOKEN)) is None
    assert anyio.run(verifier.verify_token, TOKEN).client_id == "memlab-local"


def test_http_binds_loopback_only() -> None:
    from memlab.mcp import cli as mcp_cli
    from memlab.mcp.http import HOST

    assert HOST == "127.0.0.1"
    import argparse

    parser = argparse.ArgumentParser()
    mcp_cli.register(parser.add_subparsers())
    with pytest.raises(SystemExit):  # there is no option to bind another interface
        parser.parse_args(["mcp", "--db", "x.db", "--transport", "http", "--host", "0.0.0.0"])


def test_results_fit_the_official_clients_event_limit(server) -> None:
    """A memory at the content limit (of the characters JSON escapes most) reads back through
    get, search and history; one over it is a tool error in plain words; a search over several
    big memories is shortened to fit, never a transport failure."""
    url, _, _ = server
    big = ("x\x01" * MAX_CONTENT_BYTES)[: MAX_CONTENT_BYTES - 20] + " kite anchor"
    seen: dict = {}

    async def main() -> None:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
            async with streamable_http_client(url, http_client=http) as (read, write):
                async with ClientSession(read, write) as s:
                    await s.initialize()
                    first = structured(await s.call_tool("ingest", {"content": big}))
                    seen["get"] = structured(
                        await s.call_tool("get", {"memory_id": first["memory_id"]})
                    )
                    seen["history"] = structured(
                        await s.call_tool("history", {"memory_id": first["memory_id"]})
                    )
                    for i in range(7):
                        other = big.replace("kite", f"kite{i} {'q' * i}", 1)
                        structured(await s.call_tool("ingest", {"content": other}))
                    seen["search"] = structured(
                        await s.call_tool("search", {"query": "kite", "k": 10})
                    )
                    seen["refused"] = await s.call_tool("ingest", {"content": big + "x" * 30})

    anyio.run(main)  # fmt: skip
    assert seen["get"]["content"] == big
    assert seen["history"]["memory"]["content"] == big
    hits = seen["search"]["hits"]
    assert len(hits) >= 2 and any("shortened" in h["content"] for h in hits)
    refused = seen["refused"]
    assert refused.is_error and "maximum" in refused.content[0].text
    assert "Traceback" not in refused.content[0].text


def test_the_token_from_a_file_or_the_environment(tmp_path, monkeypatch, capsys) -> None:
    import argparse

    (tmp_path / "token").write_text(TOKEN + "\n")
    monkeypatch.setenv(TOKEN_ENV, "from-the-environment-0123")
    args = argparse.Namespace(token=None, token_file=str(tmp_path / "token"))
    assert given_token(args) == TOKEN
    assert given_token(argparse.Namespace(token=None, token_file=None)).startswith("from-the")
    assert "warning" not in capsys.readouterr().err
    monkeypatch.delenv(TOKEN_ENV)
    assert given_token(argparse.Namespace(token=TOKEN, token_file=None)) == TOKEN
    assert "visible to every local user" in capsys.readouterr().err


@pytest.mark.parametrize("port", ["0", "65536"])
def test_a_port_out_of_range_is_refused_before_the_store_opens(tmp_path, capsys, port) -> None:
    """The port is checked first: no store file made, no token printed, no 'serving' line."""
    from memlab.cli import main

    db = tmp_path / "new.db"
    assert main(["mcp", "--db", str(db), "--transport", "http", "--port", port]) == 2
    err = capsys.readouterr().err
    assert err == f"memlab mcp: error: port must be an integer in 1..65535, got {port}\n"
    assert list(tmp_path.iterdir()) == []


def test_a_taken_port_is_refused_before_the_store_opens(tmp_path, capsys) -> None:
    """A port another server holds fails in one line and leaves no empty store file behind."""
    from memlab.cli import main

    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        db = tmp_path / "new.db"
        assert main(["mcp", "--db", str(db), "--transport", "http", "--port", str(port)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"memlab mcp: error: cannot serve on 127.0.0.1:{port}: ")
    assert err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


def test_a_generated_token_is_printed_once_and_is_the_one_served(tmp_path, capsys, monkeypatch):
    """Without a given token the server makes one, prints it after the URL, and requires it."""
    import memlab.mcp.http as http
    from memlab.cli import main

    served = {}
    monkeypatch.delenv(TOKEN_ENV, raising=False)
    monkeypatch.setattr(http, "serve_http", lambda store, token, sock: served.update(token=token))
    port = _free_port()
    assert (
        main(["mcp", "--db", str(tmp_path / "m.db"), "--transport", "http", "--port", str(port)])
        == 0
    )
    url, token = capsys.readouterr().err.splitlines()
    assert url == f"memlab mcp: serving http://127.0.0.1:{port}/mcp (bearer token required)"
    assert token == f"memlab mcp: bearer token: {served['token']}"
    assert len(served["token"]) >= 32
