"""A request body size limit, enforced before any route reads the body: 413 in the one
error shape, whether the client declared the length or streams more than it said."""

from __future__ import annotations

import json
from typing import Any

from engram.service.errors import body

Scope = dict[str, Any]


class BodyLimit:
    """Pure ASGI middleware: refuse bodies over `limit` bytes."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None:
            try:
                too_big = int(declared) > self.limit
            except ValueError:
                too_big = True
            if too_big:
                await _refuse(send, self.limit)
                return
        seen = 0
        refused = False

        async def counted() -> dict[str, Any]:
            nonlocal seen, refused
            if refused:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:  # answer now; the app sees the client gone
                    refused = True
                    await _refuse(send, self.limit)
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: dict[str, Any]) -> None:
            if not refused:  # after a refusal the app's own answer is dropped
                await send(message)

        try:
            await self.app(scope, counted, guarded_send)
        except Exception:
            if not refused:
                raise


async def _refuse(send: Any, limit: int) -> None:
    payload = json.dumps(body("too_large", f"the request body is over {limit:,} bytes")).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": payload})
