"""`engram proxy --upstream URL`: an OpenAI-compatible endpoint that adds memory to any agent.

FastAPI and httpx load only when the command runs (engram.service.proxy).
"""

from __future__ import annotations

from typing import Annotated

import typer

from engram.cli.mcp_cmd import LOOPBACK


def proxy(
    upstream: Annotated[str, typer.Option("--upstream", help="the model's OpenAI-compatible base URL, e.g. "
                                          "http://127.0.0.1:11434/v1")],
    host: Annotated[str, typer.Option("--host", help="address to bind")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="port", min=0, max=65535)] = 8421,
    user: Annotated[str | None, typer.Option(
        "--user", "-u", help="serve this one user without API keys (loopback only)")] = None,
    upstream_key: Annotated[str | None, typer.Option(
        "--upstream-key", envvar="ENGRAM_PROXY_UPSTREAM_KEY", show_default=False,
        help="the upstream's API key (default: the client's own Authorization, when the engram key "
             "comes in X-API-Key)")] = None,
    timeout: Annotated[float, typer.Option("--timeout", min=1, help="seconds to wait for the upstream")] = 600.0,
) -> None:
    """Memory proxy: POST /v1/chat/completions gets the user's memory in its system message, goes to
    --upstream, streams back unchanged; the turn is remembered afterwards. Point an agent's base URL
    at http://HOST:PORT/v1 and use an engram API key (`engram keys create`) as its api_key."""
    from engram.cli.app import fail, run  # at call time: engram.cli.app does not import this module

    if not upstream.startswith(("http://", "https://")):
        fail(f"--upstream {upstream}: expected an http:// or https:// URL")
    if user and host not in LOOPBACK:
        fail("--user serves one user without keys: only on a loopback --host (use API keys otherwise)")

    def serve(memory: object) -> None:
        from engram.aio import AsyncMemory
        from engram.service.listen import serve as serve_http
        from engram.service.proxy import Proxy, create_proxy_app

        from engram.service.access import Gate
        from engram.service.keys import KeyStore

        gate = Gate(user=user) if user else Gate(keys=KeyStore(memory.store))  # type: ignore[attr-defined]
        app = create_proxy_app(Proxy(AsyncMemory(memory=memory), upstream, gate,  # type: ignore[arg-type]
                                     upstream_key=upstream_key, timeout=timeout))
        serve_http(app, host=host, port=port)

    run(serve)
