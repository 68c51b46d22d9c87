"""`engram proxy`: an OpenAI-compatible endpoint that gives any agent long-term memory.

An agent changes its base URL to the proxy and keeps its code. For each
``POST /v1/chat/completions`` the proxy finds the user (the key decides, see
engram.service.access), puts ``Memory.context(last user message)`` into the system message,
forwards the request to the upstream model, passes the answer back unchanged (server-sent
events byte for byte when ``stream`` is true) and, once the answer is out, records the turn
(last user message + the assistant's reply) in the background. ``/v1/models`` is passed through.
Upstream errors come back with the upstream's status and body.

Keys (engram.service.access): the engram key travels in ``Authorization: Bearer egk_…`` (what
the `openai` client sends as its api_key) or in ``X-API-Key``. The upstream's key comes from
``--upstream-key`` (``ENGRAM_PROXY_UPSTREAM_KEY``), or, when the engram key came in
``X-API-Key``, from the client's own Authorization header, passed through. The engram key is
never sent upstream. Errors have engram's one shape, ``{"error": {"type", "message"}}``, which
OpenAI clients read too.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx
from fastapi import FastAPI, Request
from fastapi.responses import Response, StreamingResponse
from starlette.background import BackgroundTask

from engram.errors import EngramError
from engram.service import errors
from engram.service.access import Gate
from engram.service.errors import ApiError

if TYPE_CHECKING:  # pragma: no cover
    from engram.aio import AsyncMemory

log = logging.getLogger("engram.proxy")

MAX_BODY = 8 * 1024 * 1024  # bytes of a chat request
SYSTEM_ROLES = ("system", "developer")


def text_of(content: Any) -> str:
    """A message's text: a string, or the text parts of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


def last_user_text(messages: list[Any]) -> str:
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return text_of(message.get("content")).strip()
    return ""


def with_memory(messages: list[Any], block: str) -> list[Any]:
    """`messages` with `block` at the start of the system message (one is inserted when there is none)."""
    first = messages[0] if messages else None
    if isinstance(first, dict) and first.get("role") in SYSTEM_ROLES:
        content = first.get("content")
        if isinstance(content, list):
            merged: Any = [{"type": "text", "text": block}, *content]
        else:
            merged = f"{block}\n\n{content}" if content else block
        return [{**first, "content": merged}, *messages[1:]]
    return [{"role": "system", "content": block}, *messages]


@dataclass
class StreamedText:
    """The assistant's text assembled from the SSE chunks as they pass through (choice 0)."""

    parts: list[str] = field(default_factory=list)
    # The reply is whole once the upstream says so ([DONE], or choice 0's finish_reason), not only when
    # the bytes run out: a client that hangs up right after [DONE] must not cost the turn its record.
    complete: bool = False
    _pending: bytes = b""

    def feed(self, chunk: bytes) -> None:
        self._pending += chunk
        *lines, self._pending = self._pending.split(b"\n")
        for line in lines:
            line = line.strip()
            if not line.startswith(b"data:"):
                continue
            payload = line[5:].strip()
            if payload == b"[DONE]":
                self.complete = True
                continue
            try:
                event = json.loads(payload)
                for choice in event.get("choices") or []:
                    if choice.get("index", 0) != 0:
                        continue
                    if isinstance((choice.get("delta") or {}).get("content"), str):
                        self.parts.append(choice["delta"]["content"])
                    if choice.get("finish_reason"):
                        self.complete = True
            except (ValueError, AttributeError, TypeError):
                continue  # not ours to judge: the client gets the bytes unchanged

    @property
    def text(self) -> str:
        return "".join(self.parts)


def reply_text(body: bytes) -> str:
    """The assistant's text of a non-streamed chat completion ("" when there is none)."""
    try:
        choice = json.loads(body)["choices"][0]
        return text_of(choice["message"].get("content"))
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        return ""


class Proxy:
    """The proxy's state: the memory, the upstream, and how callers are told apart."""

    def __init__(
        self, memory: AsyncMemory, upstream: str, gate: Gate, *, upstream_key: str | None = None,
        timeout: float = 600.0,
    ) -> None:
        self.memory = memory
        self.upstream = upstream.rstrip("/")
        self.gate = gate
        self.upstream_key = upstream_key
        self.timeout = httpx.Timeout(timeout, connect=10.0)
        self._client: httpx.AsyncClient | None = None

    @property
    def client(self) -> httpx.AsyncClient:
        if self._client is None:  # lazily: the app may be mounted in another, whose lifespan we do not get
            self._client = httpx.AsyncClient(timeout=self.timeout)
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    def upstream_headers(self, request: Request) -> dict[str, str]:
        headers = {"Accept": request.headers.get("accept", "application/json")}
        if self.upstream_key:
            headers["Authorization"] = f"Bearer {self.upstream_key}"
        elif request.headers.get("authorization") and not self.gate.key_in_authorization(request.headers):
            headers["Authorization"] = request.headers["authorization"]  # the client's own upstream key
        return headers

    async def send(self, request: Request, method: str, path: str, body: Any = None) -> httpx.Response:
        """The upstream's answer, its body not read yet; 502/504 (`ApiError`) when it cannot be had."""
        try:
            return await self.client.send(self.client.build_request(
                method, f"{self.upstream}{path}", json=body, headers=self.upstream_headers(request)), stream=True)
        except httpx.TimeoutException:
            raise ApiError(504, "upstream_timeout", "the upstream model did not answer in time") from None
        except httpx.HTTPError as exc:
            raise ApiError(502, "upstream_error", f"the upstream model is unreachable: {type(exc).__name__}") from None

    @staticmethod
    async def read(upstream: httpx.Response) -> bytes:
        try:
            return await upstream.aread()
        except httpx.HTTPError as exc:
            raise ApiError(502, "upstream_error", f"the upstream answer broke off: {type(exc).__name__}") from None
        finally:
            await upstream.aclose()

    async def context_block(self, query: str, user: str, session: str | None) -> str:
        """What is remembered that matters for `query`; "" when nothing (or when memory fails:
        the chat goes on without it)."""
        if not query:
            return ""
        query = query[: self.memory.settings.max_query_chars]
        try:
            found = await self.memory.context(query, user_id=user, session_id=session)
        except EngramError as exc:
            log.warning("no memory context for this request: %s", exc)
            return ""
        return found.text

    async def record(self, user: str, session: str | None, said: str, reply: Any) -> None:
        """Queue the turn for remembering (durable, background); never fails the request."""
        if isinstance(reply, StreamedText) and not reply.complete:
            return
        answer = reply.text if isinstance(reply, StreamedText) else reply
        if not said or not answer:
            return
        try:
            await self.memory.add(
                [{"role": "user", "content": said}, {"role": "assistant", "content": answer}],
                user_id=user, session_id=session, background=True,
            )
        except EngramError as exc:
            log.warning("the turn was not recorded: %s", exc)


def create_proxy_app(proxy: Proxy) -> FastAPI:
    """The proxy as a FastAPI app (mountable in another app)."""
    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        await proxy.aclose()

    app = FastAPI(title="engram memory proxy", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)
    errors.install(app)  # refusals (ApiError) and anything unexpected answer in engram's one shape

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request) -> Response:
        if int(request.headers.get("content-length") or 0) > MAX_BODY:
            return errors.response(413, "too_large", f"request body over {MAX_BODY} bytes")
        raw = await request.body()
        if len(raw) > MAX_BODY:
            return errors.response(413, "too_large", f"request body over {MAX_BODY} bytes")
        try:
            body = json.loads(raw)
        except ValueError:
            return errors.response(400, "bad_request", "the request body is not JSON")
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            return errors.response(400, "bad_request", "expected a JSON object with a `messages` list")
        named = body.get("user") if isinstance(body.get("user"), str) else None
        user = proxy.gate.user_for(request.headers, named)
        session = request.headers.get("x-engram-session") or None
        said = last_user_text(body["messages"])
        block = await proxy.context_block(said, user, session)
        if block:
            body["messages"] = with_memory(body["messages"], block)
        return await forward(request, body, user, session, said)

    async def forward(request: Request, body: dict[str, Any], user: str, session: str | None, said: str) -> Response:
        upstream = await proxy.send(request, "POST", "/chat/completions", body)
        kind = upstream.headers.get("content-type", "application/json")
        if upstream.status_code >= 400 or not kind.startswith("text/event-stream"):
            content = await proxy.read(upstream)
            task = None
            if upstream.status_code < 400:
                task = BackgroundTask(proxy.record, user, session, said, reply_text(content))
            return Response(content, status_code=upstream.status_code, media_type=kind, background=task)
        streamed = StreamedText()

        async def relay() -> Any:
            try:
                async for chunk in upstream.aiter_raw():
                    streamed.feed(chunk)
                    yield chunk
                streamed.complete = True
            except httpx.HTTPError as exc:
                log.warning("the upstream stream broke off: %s", exc)
            finally:
                await upstream.aclose()  # a client that hangs up stops the upstream too

        return StreamingResponse(relay(), status_code=upstream.status_code, media_type=kind,
                                 headers={"Cache-Control": "no-cache"},
                                 background=BackgroundTask(proxy.record, user, session, said, streamed))

    @app.get("/v1/models")
    @app.get("/v1/models/{model:path}")
    async def models(request: Request, model: str | None = None) -> Response:
        proxy.gate.caller(request.headers)  # any live key: the models reach no user's memory
        upstream = await proxy.send(request, "GET", "/models" + (f"/{model}" if model else ""))
        return Response(await proxy.read(upstream), status_code=upstream.status_code,
                        media_type=upstream.headers.get("content-type", "application/json"))

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    return app
