"""A scripted OpenAI-compatible server on 127.0.0.1 for tests.

Tests of LLM code run the real `openai` SDK end to end against this server
instead of mocking it, so retries, timeouts and response parsing are the
SDK's own. Standard library only.

Usage::

    with FakeLLM() as llm:
        llm.reply("hello")                      # next chat reply
        llm.fail(429, retry_after=0.01)         # next request gets a 429
        llm.loop()                              # next chat streams forever (a looping model)
        ...  # point a client at llm.base_url
        assert llm.requests[-1]["model"] == "m"

A request with ``"stream": true`` is answered as server-sent events, as
llama.cpp, Ollama and vLLM do; ``aborted`` counts the streams a client closed
before their end (the point where a real server stops generating).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import math
import random
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT = "chat"
EMBEDDINGS = "embeddings"
ANY = "any"


@dataclass
class _Step:
    """One scripted answer, consumed by the next request to `endpoint`."""

    kind: str  # "text" | "fail" | "malformed" | "loop"
    endpoint: str = CHAT
    text: str = ""
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    when: Callable[[dict[str, Any]], bool] | None = None  # only a request this accepts takes the step


def _default_responder(request: dict[str, Any]) -> str:
    return "ok"


def _count_tokens(text: str) -> int:
    """Rough, deterministic token count: ~4 chars a token, CJK one each."""
    cjk = sum(1 for ch in text if "\u3000" <= ch <= "\u9fff")
    return cjk + math.ceil((len(text) - cjk) / 4)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def hash_vector(text: str, dim: int = 64) -> list[float]:
    """Deterministic unit vector for `text`: equal texts give equal vectors."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")
    rng = random.Random(seed)
    vec = [rng.gauss(0.0, 1.0) for _ in range(dim)]
    norm = math.sqrt(sum(v * v for v in vec)) or 1.0
    return [v / norm for v in vec]


class FakeLLM:
    """Scripted OpenAI-compatible HTTP server (chat completions, embeddings, models)."""

    def __init__(self, *, model: str = "fake-model", dim: int = 64) -> None:
        self.model = model
        self.dim = dim
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.headers: list[dict[str, str]] = []
        self.responder: Callable[[dict[str, Any]], str] = _default_responder
        self.aborted = 0  # streams the client closed before their end
        self.chunk_interval = 0.0  # seconds between streamed chunks
        self._steps: list[_Step] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------
    def start(self) -> FakeLLM:
        handler = type("_Handler", (_Handler,), {"fake": self})
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._server.daemon_threads = True
        # A short poll interval keeps stop() (which waits for the loop to notice) fast.
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes any delayed replies
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> FakeLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._server is not None, "FakeLLM not started"
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting ---------------------------------------------------------
    def _push(self, step: _Step, times: int = 1) -> FakeLLM:
        with self._lock:
            self._steps.extend(_Step(**{**step.__dict__, "headers": dict(step.headers)}) for _ in range(times))
        return self

    def reply(self, text: str, *, times: int = 1) -> FakeLLM:
        """Queue an assistant message with this content."""
        return self._push(_Step("text", text=text), times)

    def reply_json(self, obj: Any, *, times: int = 1) -> FakeLLM:
        """Queue an assistant message whose content is `obj` as JSON."""
        return self.reply(json.dumps(obj, ensure_ascii=False), times=times)

    def fail(
        self,
        status: int,
        body: Any = None,
        *,
        times: int = 1,
        retry_after: float | None = None,
        headers: dict[str, str] | None = None,
        endpoint: str = ANY,
    ) -> FakeLLM:
        """Queue an HTTP error; `body` defaults to an OpenAI-style error object."""
        if body is None:
            body = {"error": {"message": f"scripted failure {status}", "type": "fake_error", "code": status}}
        hdrs = dict(headers or {})
        if retry_after is not None:
            hdrs["Retry-After"] = f"{retry_after:g}"
        return self._push(_Step("fail", endpoint=endpoint, status=status, body=body, headers=hdrs), times)

    def delay(self, seconds: float, text: str | None = None, *, times: int = 1, endpoint: str = CHAT) -> FakeLLM:
        """Queue a reply sent only after `seconds` (to trigger client timeouts)."""
        kind = "text" if text is not None else "responder"
        return self._push(_Step(kind, endpoint=endpoint, text=text or "", delay=seconds), times)

    def loop(
        self, text: str = "la ", *, interval: float = 0.01, times: int = 1,
        when: Callable[[dict[str, Any]], bool] | None = None,
    ) -> FakeLLM:
        """Queue a looping model: `text` streamed again and again (a non-streamed request
        waits instead) until the client hangs up or the server stops; `when` picks the request."""
        return self._push(_Step("loop", text=text, delay=interval, when=when), times)

    def malformed(self, *, times: int = 1, endpoint: str = CHAT) -> FakeLLM:
        """Queue a 200 whose body, labelled JSON, is not JSON."""
        return self._push(_Step("malformed", endpoint=endpoint), times)

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._steps)

    def _next_step(self, endpoint: str, request: dict[str, Any]) -> _Step | None:
        with self._lock:
            for i, step in enumerate(self._steps):
                if step.endpoint in (endpoint, ANY) and (step.when is None or step.when(request)):
                    return self._steps.pop(i)
        return None

    # -- answers -----------------------------------------------------------
    def _chat_body(self, request: dict[str, Any], text: str) -> dict[str, Any]:
        prompt = sum(_count_tokens(_content_text(m.get("content"))) + 4 for m in request.get("messages", []))
        completion = _count_tokens(text)
        return {
            "id": f"chatcmpl-fake-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.get("model") or self.model,
            "system_fingerprint": "fp_fake",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }

    def _embeddings_body(self, request: dict[str, Any]) -> dict[str, Any]:
        inputs = request.get("input", [])
        if isinstance(inputs, str):
            inputs = [inputs]
        dim = int(request.get("dimensions") or self.dim)
        data = []
        for i, text in enumerate(inputs):
            vec = hash_vector(str(text), dim)
            if request.get("encoding_format") == "base64":
                emb: Any = base64.b64encode(struct.pack(f"<{dim}f", *vec)).decode("ascii")
            else:
                emb = vec
            data.append({"object": "embedding", "index": i, "embedding": emb})
        tokens = sum(_count_tokens(str(t)) for t in inputs)
        return {
            "object": "list",
            "data": data,
            "model": request.get("model") or self.model,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }


class _Handler(BaseHTTPRequestHandler):
    fake: FakeLLM  # set on the per-server subclass

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        pass  # keep test output clean

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout); nothing to tell it

    def _send_json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj, ensure_ascii=False).encode("utf-8"), headers)

    def do_GET(self) -> None:
        fake = self.fake
        if self.path.rstrip("/").endswith("/models"):
            models = [{"id": fake.model, "object": "model", "owned_by": "fake"}]
            self._send_json(200, {"object": "list", "data": models})
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})

    def do_POST(self) -> None:
        fake = self.fake
        path = self.path.split("?", 1)[0].rstrip("/")
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            request = json.loads(raw.decode("utf-8")) if raw else {}
        except ValueError:
            self._send_json(400, {"error": {"message": "request body is not JSON"}})
            return
        if path in ("/v1/chat/completions", "/chat/completions"):
            endpoint = CHAT
        elif path in ("/v1/embeddings", "/embeddings"):
            endpoint = EMBEDDINGS
        else:
            self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            return
        with fake._lock:
            fake.requests.append(request)
            fake.paths.append(path)
            fake.headers.append({k.lower(): v for k, v in self.headers.items()})

        step = fake._next_step(endpoint, request)
        if step is not None and step.kind != "loop" and step.delay and fake._stopping.wait(step.delay):
            return  # server stopping
        if step is not None and step.kind == "fail":
            body = step.body if isinstance(step.body, (dict, list)) else None
            if body is not None:
                self._send_json(step.status, body, step.headers)
            else:
                self._send(step.status, str(step.body).encode("utf-8"), step.headers)
            return
        if step is not None and step.kind == "malformed":
            self._send(200, b'{"id": "chatcmpl-broken", "choices": [ this is not json')
            return
        if endpoint == EMBEDDINGS:
            self._send_json(200, fake._embeddings_body(request))
            return
        if step is not None and step.kind == "loop":
            self._loop(request, step)
            return
        text = step.text if step is not None and step.kind == "text" else fake.responder(request)
        if request.get("stream"):
            self._stream(request, text)
        else:
            self._send_json(200, fake._chat_body(request, text))

    # -- server-sent events ------------------------------------------------------
    def _event(self, request: dict[str, Any], content: str | None, finish: str | None = None) -> bytes:
        chunk = {
            "id": "chatcmpl-fake-stream", "object": "chat.completion.chunk", "created": int(time.time()),
            "model": request.get("model") or self.fake.model,
            "choices": [{"index": 0, "delta": {} if content is None else {"content": content},
                         "finish_reason": finish}],
        }
        return b"data: " + json.dumps(chunk, ensure_ascii=False).encode("utf-8") + b"\n\n"

    def _open_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.end_headers()

    def _write(self, data: bytes) -> bool:
        """Write and flush; False (counted in `aborted`) when the client has hung up."""
        try:
            self.wfile.write(data)
            self.wfile.flush()
            return True
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            with self.fake._lock:
                self.fake.aborted += 1
            return False

    def _stream(self, request: dict[str, Any], text: str) -> None:
        fake = self.fake
        self._open_stream()
        pieces = [text[i : i + 8] for i in range(0, len(text), 8)] or [""]
        for piece in pieces:
            if not self._write(self._event(request, piece)):
                return
            if fake.chunk_interval and fake._stopping.wait(fake.chunk_interval):
                return
        tail = self._event(request, None, "stop")
        if (request.get("stream_options") or {}).get("include_usage"):
            usage = fake._chat_body(request, text)["usage"]
            body = {"id": "chatcmpl-fake-stream", "object": "chat.completion.chunk", "created": int(time.time()),
                    "model": request.get("model") or fake.model, "choices": [], "usage": usage}
            tail += b"data: " + json.dumps(body).encode("utf-8") + b"\n\n"
        self._write(tail + b"data: [DONE]\n\n")

    def _loop(self, request: dict[str, Any], step: _Step) -> None:
        fake = self.fake
        if not request.get("stream"):  # a non-streamed loop: nothing comes until the server stops
            fake._stopping.wait(600)
            return
        self._open_stream()
        while not fake._stopping.is_set():
            if not self._write(self._event(request, step.text)):
                return
            fake._stopping.wait(step.delay)
