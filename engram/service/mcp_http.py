"""`engram mcp --transport http`: the MCP server over streamable HTTP, behind engram API keys.

`KeyGate` wraps the SDK's ASGI app: every HTTP request must carry a key
(``Authorization: Bearer egk_…`` or ``X-API-Key``; an admin key names its user in
``X-Engram-User``); the key's user is left in the ASGI scope, where
`engram.service.mcp_server.CallerMiddleware` reads it for each MCP message. A bad key is a 401
before the MCP layer sees the request. Started with a fixed ``--user`` instead, the server
serves that user without keys and binds to loopback only.
"""

from __future__ import annotations

import json
from typing import Any

from engram.service.access import Gate
from engram.service.errors import ApiError, body
from engram.service.mcp_server import USER_STATE


class KeyGate:
    """ASGI middleware: resolves the caller's user from the request headers, or answers 401/403."""

    def __init__(self, app: Any, gate: Gate) -> None:
        self.app = app
        self.gate = gate

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":  # lifespan: the SDK's session manager starts here
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        try:
            user = self.gate.user_for(headers)
        except ApiError as exc:
            answer = json.dumps(body(exc.type, exc.message)).encode()
            extra = [(b"www-authenticate", b"Bearer")] if exc.status == 401 else []
            await send({"type": "http.response.start", "status": exc.status,
                        "headers": [(b"content-type", b"application/json"),
                                    (b"content-length", str(len(answer)).encode()), *extra]})
            await send({"type": "http.response.body", "body": answer})
            return
        scope.setdefault("state", {})[USER_STATE] = user
        await self.app(scope, receive, send)


def http_app(server: Any, gate: Gate, *, host: str = "127.0.0.1", path: str = "/mcp") -> Any:
    """The MCP server's streamable-HTTP ASGI app behind `KeyGate` (DNS-rebinding protection on
    for loopback hosts, as the SDK sets it)."""
    return KeyGate(server.streamable_http_app(streamable_http_path=path, host=host), gate)

