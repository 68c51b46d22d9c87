"""`engram mcp`: serve memory to MCP clients (Claude Desktop, Cursor, …) over stdio or HTTP.

The SDK loads only when the command runs (engram.service.mcp_server), never for ``--help``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer

LOOPBACK = ("127.0.0.1", "localhost", "::1")


class Transport(StrEnum):
    stdio = "stdio"
    http = "http"


def mcp(
    user: Annotated[str | None, typer.Option(
        "--user", "-u", envvar="ENGRAM_USER",
        help="whose memory (required for stdio; over HTTP the API key decides unless this is set)")] = None,
    transport: Annotated[Transport, typer.Option("--transport", "-t", help="stdio (a client starts it) or http")] = (
        Transport.stdio),
    host: Annotated[str, typer.Option("--host", help="HTTP: address to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="HTTP: port", min=0, max=65535)] = 8422,
) -> None:
    """Model Context Protocol server: remember, recall, context, forget, list_memories, delete_memory,
    end_session, and the capsule as a resource. Over HTTP (at /mcp) every request needs an engram
    API key (`engram keys create`), unless --user serves one user on loopback."""
    from engram.cli.app import fail, run  # at call time: engram.cli.app does not import this module

    if transport is Transport.stdio and not user:
        fail("--user (or ENGRAM_USER) is required with the stdio transport")
    if transport is Transport.http and user and host not in LOOPBACK:
        fail("--user serves one user without keys: only on a loopback --host (use API keys otherwise)")

    def serve(memory: object) -> None:
        import anyio

        from engram.aio import AsyncMemory
        from engram.service.mcp_server import build_server

        server = build_server(AsyncMemory(memory=memory), user=user)  # type: ignore[arg-type]
        if transport is Transport.stdio:
            anyio.run(server.run_stdio_async)
            return
        from engram.service.access import Gate
        from engram.service.keys import KeyStore
        from engram.service.listen import serve as serve_http
        from engram.service.mcp_http import http_app

        gate = Gate(user=user) if user else Gate(keys=KeyStore(memory.store))  # type: ignore[attr-defined]
        serve_http(http_app(server, gate, host=host), host=host, port=port)

    run(serve)
