"""How one LLM call is bounded: output size per task, retries, priority of replies.

Small local models (llama.cpp, Ollama, vLLM on 127.0.0.1) loop until their
context is full, take tens of seconds per call on a CPU, and serve one request
at a time. So, with no I/O here, only the policy the client applies:

- `max_tokens_for`: every request carries ``max_tokens`` chosen by its task;
- `is_local`: a loopback or private host; there a timed-out call is never
  sent again (the model would only loop again) and calls are streamed, so the
  client can stop one at its deadline and the server stops generating;
- `retry_delay`: which failures are retried and after how long;
- `ReplyFirst`: while an agent's reply is being written, task calls (extraction,
  judge, compression) to the same local server wait, and one in flight is
  stopped and sent again afterwards, so a chat reply never queues behind them.
"""

from __future__ import annotations

import ipaddress
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import urlsplit

__all__ = ["DEFAULT_MAX_TOKENS", "ReplyFirst", "is_local", "max_tokens_for", "reply_first_for", "retry_delay"]

# completion tokens per task: an extraction answer of a few memories, a one-line
# judgement, a compressed delta (its JSON), an agent's chat reply
DEFAULT_MAX_TOKENS: dict[str, int] = {"extract": 512, "judge": 160, "compress": 700, "reply": 600}
REPLY = "reply"
_LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "host.docker.internal"})


def max_tokens_for(task: str, table: dict[str, int]) -> int:
    """The completion budget of `task` (an unknown task gets the reply's)."""
    return table.get(task) or table.get(REPLY) or DEFAULT_MAX_TOKENS[REPLY]


def is_local(base_url: str | None) -> bool:
    """A server on this machine or the private network (loopback, RFC 1918, link-local, ``*.local``).

    No base URL means OpenAI's hosted API: not local.
    """
    if not base_url:
        return False
    host = (urlsplit(base_url if "//" in base_url else f"//{base_url}").hostname or "").lower()
    if host in _LOCAL_NAMES or host.endswith((".local", ".localhost", ".internal", ".lan")):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def retry_delay(
    *, status: int | None, timed_out: bool, local: bool, attempt: int, retry_after: str | None = None
) -> float | None:
    """Seconds to wait before sending a failed call again, or None: do not.

    Retried: connection errors, 408/409/429 and 5xx, with exponential backoff
    (0.5 s doubling, at most 8 s) or the server's Retry-After when below 120 s.
    Never retried: a timeout on a local endpoint, any other status.
    """
    if timed_out and local:
        return None
    if status is not None and status not in (408, 409, 429) and status < 500:
        return None
    if retry_after:
        try:
            wait = float(retry_after)
        except ValueError:
            wait = -1.0
        if 0 <= wait < 120:
            return wait
    return min(8.0, 0.5 * 2**attempt)


class ReplyFirst:
    """Replies before tasks on a server that answers one request at a time (see the module docstring)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._replies = 0
        self._started = 0  # replies begun so far: a task call compares it with what it saw at its start

    def interrupted(self, since: int) -> bool:
        """A reply began (or is running) after a task call saw `since`: the task call should stop."""
        return self._started != since

    @contextmanager
    def reply(self) -> Iterator[None]:
        """Mark a reply in progress for its duration."""
        with self._cond:
            self._replies += 1
            self._started += 1
        try:
            yield
        finally:
            with self._cond:
                self._replies -= 1
                self._cond.notify_all()

    def wait(self, timeout: float) -> int | None:
        """Wait until no reply is in progress: then the count of replies begun (for
        `interrupted`); None when `timeout` seconds ran out first."""
        with self._cond:
            return self._started if self._cond.wait_for(lambda: self._replies == 0, timeout) else None


_SERVERS: dict[str, ReplyFirst] = {}
_SERVERS_LOCK = threading.Lock()


def reply_first_for(base_url: str | None) -> ReplyFirst:
    """The one `ReplyFirst` of a server in this process: clients of one server (an agent's chat
    model and the memory's extraction model) take turns there even when they are different objects."""
    key = (base_url or "").rstrip("/").lower()
    with _SERVERS_LOCK:
        return _SERVERS.setdefault(key, ReplyFirst())
