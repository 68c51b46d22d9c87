"""One client for every OpenAI-compatible endpoint.

OpenAI, DeepSeek, Qwen/DashScope, Ollama, vLLM and llama.cpp all speak the
same chat-completions and embeddings protocol, so engram has one client for
them instead of one per vendor. Everything an LLM is used for in engram is
optional: every failure surfaces as an `LLMError` subclass so callers can
degrade to the rules, never lose data.

Every request carries ``max_tokens`` from its task (`engram.llm_calls`;
``max_completion_tokens`` once a server asks for that instead).
On a hosted endpoint retries and timeouts are the `openai` SDK's own
(`max_retries`, `timeout`): it retries connection errors, timeouts,
408/409/429 and 5xx with exponential backoff (0.5 s doubling, capped at 8 s)
and honours `Retry-After` between 0 and 120 s. On a local endpoint (loopback,
private network) the client retries the same failures itself, but never a
timeout, and streams the answer: `timeout` is then the whole call's budget in
seconds, and a call stopped early (deadline, an error, the caller giving up)
closes its HTTP request so the server stops generating. There an agent's reply
goes first (`engram.llm_calls.ReplyFirst`).
"""

from __future__ import annotations

import json as jsonlib
import logging
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any, Literal

import numpy as np
import openai
from pydantic import BaseModel, Field, SecretStr, TypeAdapter, ValidationError

from engram.errors import EngramError
from engram.llm_calls import DEFAULT_MAX_TOKENS, REPLY, is_local, max_tokens_for, reply_first_for, retry_delay
from engram.providers.vectors import normalise_rows

log = logging.getLogger("engram.providers.openai_compat")

NO_KEY = "not-needed"  # local servers ignore the key, but the SDK wants one
_JSON_HINT = "Answer with a single JSON value only."


# --- errors -----------------------------------------------------------------
class LLMError(EngramError):
    """The LLM gave no usable answer; callers fall back to rules."""


class LLMUnavailable(LLMError):
    """Unreachable, timed out, rate-limited or erroring after the bounded retries."""

    def __init__(
        self, message: str, *, status: int | None = None, timed_out: bool = False, retry_after: str | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.timed_out = timed_out
        self.retry_after = retry_after


class LLMBadOutput(LLMError):
    """The server answered, but not with what was asked for (bad body, bad JSON, schema mismatch)."""


class LLMBudgetExceeded(LLMError):
    """The configured call budget is spent; no request was sent."""


# --- settings ---------------------------------------------------------------
class LLMSettings(BaseModel):
    """Chat LLM endpoint; embedded in engram's config. Disabled unless base_url or model is set."""

    base_url: str | None = None
    model: str | None = None
    api_key: SecretStr | None = None
    timeout: float = Field(30.0, gt=0)
    max_retries: int = Field(2, ge=0)
    temperature: float = 0.0
    json_mode: bool = True
    price_per_1k_prompt: float | None = Field(None, ge=0)
    price_per_1k_completion: float | None = Field(None, ge=0)
    call_budget: int | None = Field(None, ge=0)
    max_tokens: dict[str, int] = Field(default_factory=lambda: dict(DEFAULT_MAX_TOKENS))
    stream: Literal["auto", "on", "off"] = "auto"  # auto: stream on local endpoints

    @property
    def enabled(self) -> bool:
        return bool(self.base_url or self.model)


class EmbeddingSettings(BaseModel):
    """Embeddings endpoint; `dimensions` is sent to the server only when set."""

    base_url: str | None = None
    model: str | None = None
    api_key: SecretStr | None = None
    timeout: float = Field(30.0, gt=0)
    max_retries: int = Field(2, ge=0)
    dimensions: int | None = Field(None, gt=0)
    batch_size: int = Field(256, gt=0)

    @property
    def enabled(self) -> bool:
        return bool(self.base_url or self.model)


# --- usage accounting -------------------------------------------------------
@dataclass
class Usage:
    calls: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0


class UsageLedger:
    """Thread-safe counts of calls, failures, tokens and cost, in total and per user."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._total = Usage()
        self._users: dict[str, Usage] = {}

    def _rows(self, user_id: str | None) -> list[Usage]:
        rows = [self._total]
        if user_id is not None:
            rows.append(self._users.setdefault(user_id, Usage()))
        return rows

    def reserve(self, user_id: str | None, budget: int | None) -> None:
        """Count a call before it is sent, refusing it when the budget is spent.

        The budget applies to the user's calls when a user id is given, else to all calls.
        """
        with self._lock:
            if budget is not None:
                if user_id is None:
                    used = self._total.calls
                else:
                    used = self._users[user_id].calls if user_id in self._users else 0
                if used >= budget:
                    who = f"user {user_id!r}" if user_id is not None else "this process"
                    raise LLMBudgetExceeded(f"LLM call budget of {budget} calls spent for {who}")
            for row in self._rows(user_id):
                row.calls += 1

    def record(self, user_id: str | None, prompt_tokens: int, completion_tokens: int, cost: float) -> None:
        with self._lock:
            for row in self._rows(user_id):
                row.prompt_tokens += prompt_tokens
                row.completion_tokens += completion_tokens
                row.cost += cost

    def record_failure(self, user_id: str | None) -> None:
        with self._lock:
            for row in self._rows(user_id):
                row.failures += 1

    def snapshot(self) -> dict[str, Any]:
        """{"total": {...}, "users": {user_id: {...}}} with calls, failures, tokens, cost."""
        with self._lock:
            return {"total": asdict(self._total), "users": {u: asdict(r) for u, r in self._users.items()}}


# --- shared plumbing --------------------------------------------------------
def _make_client(base_url: str | None, api_key: SecretStr | None, timeout: float, max_retries: int) -> openai.OpenAI:
    # The key is passed explicitly so the SDK never picks up OPENAI_API_KEY and
    # sends it to a third-party base_url.
    key = api_key.get_secret_value() if api_key is not None else NO_KEY
    return openai.OpenAI(base_url=base_url, api_key=key or NO_KEY, timeout=timeout, max_retries=max_retries)


@contextmanager
def _translate_errors(what: str, timeout: float) -> Iterator[None]:
    """Turn SDK and transport errors into engram's `LLMError`s (after the SDK's retries)."""
    try:
        yield
    except openai.APITimeoutError as err:
        raise LLMUnavailable(f"{what}: timed out after {timeout:g}s", timed_out=True) from err
    except openai.APIConnectionError as err:
        raise LLMUnavailable(f"{what}: cannot connect ({err})") from err
    except openai.APIResponseValidationError as err:
        raise LLMBadOutput(f"{what}: unexpected response ({err.message})") from err
    except openai.APIStatusError as err:
        raise LLMUnavailable(
            f"{what}: HTTP {err.status_code}: {_error_message(err)}",
            status=err.status_code, retry_after=err.response.headers.get("retry-after"),
        ) from err
    except (openai.OpenAIError, ValueError) as err:  # ValueError: a 200 whose body is not JSON
        raise LLMBadOutput(f"{what}: unreadable response ({type(err).__name__}: {err})") from err


def _error_message(err: openai.APIStatusError) -> str:
    body = err.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return err.message


def _discover_model(client: openai.OpenAI, what: str, timeout: float) -> str:
    """First model the server lists; for single-model servers (llama.cpp, vLLM) configured without one."""
    with _translate_errors(f"{what}: listing models", timeout):
        models = list(client.models.list())
    if not models:
        raise LLMUnavailable(f"{what}: no model configured and the server lists none")
    log.info("%s: no model configured, using %r from the server's list", what, models[0].id)
    return models[0].id


# --- chat -------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class ChatReply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    cost: float
    latency_s: float


class _FormatRejected(Exception):
    """The server refused `response_format`; retry without it."""


class _StreamOptionsRejected(Exception):
    """The server refused `stream_options`; stream without usage from now on."""


class _TokensParamRejected(Exception):
    """The server wants `max_completion_tokens` instead of `max_tokens`."""


class _Preempted(Exception):
    """A task call was stopped for an agent's reply; it is sent again once the reply is done."""


MAX_PREEMPTIONS = 3


class OpenAICompatLLM:
    """Chat client for an OpenAI-compatible endpoint; thread-safe to share."""

    def __init__(self, settings: LLMSettings) -> None:
        self.settings = settings
        self.ledger = UsageLedger()
        self.local = is_local(settings.base_url)
        self.streaming = settings.stream == "on" or (settings.stream == "auto" and self.local)
        # on a local endpoint `_attempts` retries (never after a timeout); elsewhere the SDK does
        retries = 0 if self.local else settings.max_retries
        self._client = _make_client(settings.base_url, settings.api_key, settings.timeout, retries)
        self._model = settings.model
        self._model_lock = threading.Lock()
        self._response_format_ok = settings.json_mode
        self._usage_in_stream = True
        self._tokens_param = "max_tokens"
        self.reply_first = reply_first_for(settings.base_url)  # shared by every client of this server

    def __repr__(self) -> str:
        return f"OpenAICompatLLM(base_url={self.settings.base_url!r}, model={self._model!r})"

    @property
    def model(self) -> str:
        if self._model is None:
            with self._model_lock:
                if self._model is None:
                    self._model = _discover_model(self._client, "chat", self.settings.timeout)
        return self._model

    def chat(
        self, messages: list[dict[str, Any]], *, json: bool = False, user_id: str | None = None, task: str = REPLY
    ) -> ChatReply:
        """One chat completion; `json=True` asks for a JSON object (response_format when allowed).

        `task` ("reply", "extract", "judge", "compress") sets ``max_tokens``; on a
        local endpoint a reply goes before the other tasks.
        """
        self.ledger.reserve(user_id, self.settings.call_budget)
        try:
            if task == REPLY and self.local:
                with self.reply_first.reply():
                    reply = self._attempts(messages, json, task)
            else:
                reply = self._attempts(messages, json, task)
        except LLMError:
            self.ledger.record_failure(user_id)
            raise
        self.ledger.record(user_id, reply.prompt_tokens, reply.completion_tokens, reply.cost)
        log.debug(
            "chat %s: %d+%d tokens, %.3fs, cost %.6f",
            self._model, reply.prompt_tokens, reply.completion_tokens, reply.latency_s, reply.cost,
        )
        return reply

    def chat_json(
        self,
        messages: list[dict[str, Any]],
        *,
        schema: Any = None,
        user_id: str | None = None,
        task: str = REPLY,
    ) -> Any:
        """Chat and parse the reply as JSON, validated by `schema` (a model class or e.g. `list[Model]`)."""
        reply = self.chat(messages, json=True, user_id=user_id, task=task)
        try:
            data = parse_json_text(reply.text)
            if schema is not None:
                data = _adapter(schema).validate_python(data)
        except (ValueError, ValidationError) as err:
            self.ledger.record_failure(user_id)
            raise LLMBadOutput(f"chat_json: {err}; reply began {reply.text[:120]!r}") from err
        return data

    def _attempts(self, messages: list[dict[str, Any]], want_json: bool, task: str) -> ChatReply:
        """The call, sent again after a retryable failure on a local endpoint or a preemption."""
        attempt = preempted = 0
        while True:
            since = None  # a reply, or a call to a hosted endpoint: never stopped for a reply
            if task != REPLY and self.local:
                since = self.reply_first.wait(self.settings.timeout * MAX_PREEMPTIONS)
                if since is None:
                    raise LLMUnavailable(
                        f"chat: replies kept the server busy for {self.settings.timeout * MAX_PREEMPTIONS:g}s")
            try:
                return self._complete(messages, want_json, task, since)
            except _Preempted:
                preempted += 1
                if preempted > MAX_PREEMPTIONS:
                    raise LLMUnavailable(f"chat: stopped {preempted} times for replies") from None
                log.debug("chat: %s call stopped for a reply; sending it again after the reply", task)
            except LLMUnavailable as err:
                wait = retry_delay(
                    status=err.status, timed_out=err.timed_out, local=True, attempt=attempt,
                    retry_after=err.retry_after,
                ) if self.local and attempt < self.settings.max_retries else None
                if wait is None:
                    raise
                attempt += 1
                log.debug("chat: %s; retry %d in %.2fs", err, attempt, wait)
                time.sleep(wait)

    def _complete(
        self, messages: list[dict[str, Any]], want_json: bool, task: str, since: int | None = None
    ) -> ChatReply:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": messages,
            "temperature": self.settings.temperature,
            self._tokens_param: max_tokens_for(task, self.settings.max_tokens),
        }
        if want_json and self._response_format_ok:
            kwargs["response_format"] = {"type": "json_object"}
            if not any("json" in str(m.get("content", "")).lower() for m in messages):
                kwargs["messages"] = _with_json_hint(messages)
        start = time.perf_counter()
        for _ in range(2):  # each refused parameter is adapted once, then remembered
            try:
                text, prompt, done = self._send(kwargs, since)
                break
            except _FormatRejected:
                self._response_format_ok = False
                log.warning("server rejected response_format; asking for JSON without it from now on")
                kwargs.pop("response_format")
            except _TokensParamRejected:
                self._tokens_param = "max_completion_tokens"
                log.info("server wants max_completion_tokens instead of max_tokens; using it from now on")
                kwargs["max_completion_tokens"] = kwargs.pop("max_tokens")
        else:
            text, prompt, done = self._send(kwargs, since)
        latency = time.perf_counter() - start
        return ChatReply(text, prompt, done, self._cost(prompt, done), latency)

    def _send(self, kwargs: dict[str, Any], since: int | None) -> tuple[str, int, int]:
        """(text, prompt tokens, completion tokens) of one request, streamed or not; a streamed
        one stops for a reply begun after `since` (None: it does not stop)."""
        if self.streaming:
            try:
                return self._stream(kwargs, since)
            except _StreamOptionsRejected:
                self._usage_in_stream = False
                log.info("server rejected stream_options; streaming without usage counts from now on")
                return self._stream(kwargs, since)
        completion = self._create(kwargs)
        usage = getattr(completion, "usage", None)
        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
        done = int(getattr(usage, "completion_tokens", 0) or 0)
        return _reply_text(completion), prompt, done

    def _create(self, kwargs: dict[str, Any]) -> Any:
        # _FormatRejected is no SDK error, so _translate_errors lets it through.
        with _translate_errors("chat", self.settings.timeout):
            try:
                return self._client.chat.completions.create(**kwargs)
            except (openai.BadRequestError, openai.UnprocessableEntityError) as err:  # 400, 422
                said = f"{err} {err.body}".lower()
                if "response_format" in kwargs and "response_format" in said:
                    raise _FormatRejected from err
                if "stream_options" in kwargs and "stream_options" in said:
                    raise _StreamOptionsRejected from err
                if "max_tokens" in kwargs and "max_completion_tokens" in said:  # OpenAI's reasoning models
                    raise _TokensParamRejected from err
                raise

    def _stream(self, kwargs: dict[str, Any], since: int | None) -> tuple[str, int, int]:
        """A streamed call within the `timeout` budget; closed (the server stops) when it ends early."""
        budget = self.settings.timeout
        deadline = time.monotonic() + budget
        kwargs = {**kwargs, "stream": True}
        if self._usage_in_stream:
            kwargs["stream_options"] = {"include_usage": True}
        stream = self._create(kwargs)
        parts: list[str] = []
        prompt = done = chunks = 0
        try:
            with _translate_errors("chat", budget):
                for chunk in stream:
                    chunks += 1
                    usage = getattr(chunk, "usage", None)
                    if usage is not None:
                        prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
                        done = int(getattr(usage, "completion_tokens", 0) or 0)
                    for choice in getattr(chunk, "choices", None) or []:
                        piece = getattr(choice.delta, "content", None)
                        if piece:
                            parts.append(piece)
                    if time.monotonic() > deadline:
                        raise LLMUnavailable(
                            f"chat: stopped after {budget:g}s ({len(parts)} chunks, still generating)",
                            timed_out=True,
                        )
                    if since is not None and self.reply_first.interrupted(since):
                        raise _Preempted
        finally:
            stream.close()  # an unfinished response: the connection closes and the server stops
        text = "".join(parts)
        if not text:
            raise LLMBadOutput("chat: empty streamed reply")
        return text, prompt, done or chunks

    def _cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        prompt_price = self.settings.price_per_1k_prompt or 0.0
        completion_price = self.settings.price_per_1k_completion or 0.0
        return (prompt_tokens * prompt_price + completion_tokens * completion_price) / 1000


def _with_json_hint(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI refuses json_object mode unless the prompt mentions JSON; say so in the system
    message, at the front, where every chat template accepts it."""
    first = messages[0] if messages else None
    if first is not None and first.get("role") == "system" and isinstance(first.get("content"), str):
        return [{**first, "content": f"{first['content']}\n{_JSON_HINT}"}, *messages[1:]]
    return [{"role": "system", "content": _JSON_HINT}, *messages]


def _reply_text(completion: Any) -> str:
    # With a non-JSON content type the SDK returns the body as a str instead of raising.
    choices = getattr(completion, "choices", None)
    if not choices:
        raise LLMBadOutput(f"chat: response has no choices ({str(completion)[:120]!r})")
    message = choices[0].message
    if message.content is None:
        refusal = getattr(message, "refusal", None)
        raise LLMBadOutput(f"chat: empty reply{f' (refusal: {refusal})' if refusal else ''}")
    return message.content


def _adapter(schema: Any) -> TypeAdapter[Any]:
    try:
        return _cached_adapter(schema)
    except TypeError:  # unhashable schema (e.g. Annotated with a dict)
        return TypeAdapter(schema)


@lru_cache(maxsize=64)
def _cached_adapter(schema: Any) -> TypeAdapter[Any]:
    return TypeAdapter(schema)


# --- JSON from model output -------------------------------------------------
_FENCE = re.compile(r"```[ \t]*(?:json[c5]?|JSON)?[ \t]*\r?\n?(.*?)```", re.DOTALL)
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def parse_json_text(text: str) -> Any:
    """The JSON value in a model's reply.

    Accepts code fences, prose around the value and reasoning blocks; repairs
    trailing commas and single-quoted strings, but only outside double-quoted
    strings and only when the result then parses. Raises ValueError otherwise.
    """
    text = _THINK.sub("", text).strip()
    fenced = _FENCE.search(text)
    if fenced:
        text = fenced.group(1).strip()
    try:
        return jsonlib.loads(text)
    except ValueError:
        pass
    for span in _candidate_spans(text):
        for attempt in (span, _repair(span)):
            try:
                return jsonlib.loads(attempt)
            except ValueError:
                continue
    raise ValueError("no JSON object or array found in the reply")


def _candidate_spans(text: str, limit: int = 20) -> Iterator[str]:
    """Balanced {...} / [...] spans, outermost first, in order of their opening bracket."""
    tried = 0
    pos = 0
    while tried < limit:
        starts = [i for i in (text.find("{", pos), text.find("[", pos)) if i >= 0]
        if not starts:
            return
        start = min(starts)
        end = _matching_close(text, start)
        if end is not None:
            tried += 1
            yield text[start : end + 1]
        pos = start + 1


def _matching_close(text: str, start: int) -> int | None:
    depth = 0
    quote: str | None = None
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return i
    return None


def _repair(span: str) -> str:
    """Single-quoted strings to double-quoted, trailing commas dropped; double-quoted text untouched."""
    out: list[str] = []
    i, n = 0, len(span)
    while i < n:
        ch = span[i]
        if ch == '"':  # copy a JSON string verbatim
            j = i + 1
            while j < n and span[j] != '"':
                j += 2 if span[j] == "\\" else 1
            out.append(span[i : j + 1])
            i = j + 1
        elif ch == "'":  # 'text' -> "text"
            buf = ['"']
            j = i + 1
            while j < n and span[j] != "'":
                if span[j] == "\\" and j + 1 < n:
                    nxt = span[j + 1]
                    buf.append("'" if nxt == "'" else "\\" + nxt)
                    j += 2
                    continue
                buf.append('\\"' if span[j] == '"' else span[j])
                j += 1
            buf.append('"')
            out.append("".join(buf))
            i = j + 1
        elif ch == ",":
            j = i + 1
            while j < n and span[j].isspace():
                j += 1
            if j < n and span[j] in "}]":
                i += 1  # trailing comma
                continue
            out.append(ch)
            i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


# --- embeddings -------------------------------------------------------------
class OpenAICompatEmbedder:
    """Embedder over an OpenAI-compatible /embeddings endpoint; rows are float32, L2-normalised."""

    languages: frozenset[str] | None = None  # hosted models are multilingual

    def __init__(self, settings: EmbeddingSettings) -> None:
        self.settings = settings
        self._client = _make_client(settings.base_url, settings.api_key, settings.timeout, settings.max_retries)
        self._model = settings.model
        self._dim = settings.dimensions
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"OpenAICompatEmbedder(base_url={self.settings.base_url!r}, model={self._model!r})"

    @property
    def model(self) -> str:
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = _discover_model(self._client, "embeddings", self.settings.timeout)
        return self._model

    @property
    def name(self) -> str:
        """Stable id stored with each vector, so a model change is detectable."""
        suffix = f"@{self.settings.dimensions}" if self.settings.dimensions else ""
        return f"openai-compat:{self.model}{suffix}"

    @property
    def dim(self) -> int:
        """Vector size; asks the server once (a one-text probe) when not configured or seen yet."""
        if self._dim is None:
            self.embed(["dimension probe"])
        assert self._dim is not None
        return self._dim

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        size = self.settings.batch_size
        parts = [self._embed_batch(texts[i : i + size]) for i in range(0, len(texts), size)]
        return np.vstack(parts)

    def _embed_batch(self, batch: list[str]) -> np.ndarray:
        kwargs: dict[str, Any] = {
            "model": self.model,
            # The API refuses empty strings; a space embeds as "nothing".
            "input": [t if t.strip() else " " for t in batch],
            # "float" rather than the SDK's default base64: every compatible server supports it.
            "encoding_format": "float",
        }
        if self.settings.dimensions:
            kwargs["dimensions"] = self.settings.dimensions
        with _translate_errors("embeddings", self.settings.timeout):
            response = self._client.embeddings.create(**kwargs)
        data = getattr(response, "data", None)
        if not isinstance(data, list) or len(data) != len(batch):
            got = len(data) if isinstance(data, list) else "no"
            raise LLMBadOutput(f"embeddings: asked for {len(batch)} vectors, got {got}")
        rows = sorted(data, key=lambda d: d.index)
        try:
            matrix = np.asarray([r.embedding for r in rows], dtype=np.float32)
        except (TypeError, ValueError) as err:
            raise LLMBadOutput(f"embeddings: vectors are not numeric arrays of one size ({err})") from err
        if matrix.ndim != 2 or matrix.shape[1] == 0:
            raise LLMBadOutput(f"embeddings: unexpected shape {matrix.shape}")
        with self._lock:
            if self._dim is None:
                self._dim = int(matrix.shape[1])
            elif matrix.shape[1] != self._dim:
                raise LLMBadOutput(f"embeddings: got dimension {matrix.shape[1]}, expected {self._dim}")
        return normalise_rows(matrix)
