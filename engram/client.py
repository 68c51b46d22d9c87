"""`MemoryClient`: `Memory`'s methods and return types over HTTP, against `engram serve`.

    from engram import MemoryClient
    memory = MemoryClient("http://127.0.0.1:8420", api_key="egk_…")   # was: Memory()
    memory.add("I live in Berlin", user_id="alice")

Replies are engram's own models, rebuilt from the JSON; the server's errors come back as
engram's (`InvalidInput` for 422, `NotFound` for 404, `RemoteError` for the rest), so code
written against `Memory` keeps working. `AsyncMemoryClient` awaits the same calls (one thread
hop each, as `AsyncMemory` does). httpx loads when a client is made, not on ``import engram``.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter
from pydantic_core import to_jsonable_python

from engram.errors import EngramError, InvalidInput, NotFound
from engram.models import Clarification, Event, Filters, HistoryEntry, Kind, MemoryItem, Message, SearchResult

DEFAULT_URL = "http://127.0.0.1:8420"


class RemoteError(EngramError):
    """The server refused or failed a call (`status` 0: it could not be reached)."""

    def __init__(self, status: int, type_: str, message: str) -> None:
        super().__init__(message)
        self.status, self.type = status, type_


def _parse(model: Any, data: Any) -> Any:
    return TypeAdapter(model).validate_python(data)


def _clean(values: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON body or query: None left out, models and datetimes as JSON."""
    out = {}
    for name, value in values.items():
        if value is None:
            continue
        if isinstance(value, Filters):
            value = value.model_dump(mode="json", exclude_unset=True)
        out[name] = to_jsonable_python(value)
    return out


class MemoryClient:
    """A remote `Memory`. `api_key` defaults to $ENGRAM_API_KEY, `base_url` to $ENGRAM_URL
    (else http://127.0.0.1:8420). `transport`: an httpx transport (tests, proxies)."""

    def __init__(self, base_url: str | None = None, *, api_key: str | None = None, timeout: float = 60.0,
                 transport: Any = None) -> None:
        import httpx

        key = api_key if api_key is not None else os.environ.get("ENGRAM_API_KEY")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self.base_url = (base_url or os.environ.get("ENGRAM_URL") or DEFAULT_URL).rstrip("/")
        self._http = httpx.Client(base_url=self.base_url, headers=headers, timeout=timeout, transport=transport)
        self._transport_error = httpx.TransportError

    # -- the one request/response mapping ------------------------------------------------
    def _call(self, method: str, path: str, *, body: Mapping[str, Any] | None = None,
              query: Mapping[str, Any] | None = None) -> Any:
        try:
            reply = self._http.request(method, path, json=None if body is None else _clean(body),
                                       params=None if query is None else _clean(query))
        except self._transport_error as exc:
            raise RemoteError(0, "unreachable", f"cannot reach {self.base_url}: {exc}") from None
        if reply.status_code < 400:
            return reply.json()
        try:
            error = reply.json()["error"]
            type_, message = error["type"], error["message"]
        except (ValueError, KeyError, TypeError):
            type_, message = "http_error", reply.text[:500] or reply.reason_phrase
        if reply.status_code == 422:
            raise InvalidInput(message)
        if reply.status_code == 404:
            raise NotFound(message)
        raise RemoteError(reply.status_code, type_, message)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> MemoryClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- writing and reading -------------------------------------------------------------
    def add(self, messages: Any, *, user_id: str, agent_id: str | None = None, session_id: str | None = None,
            metadata: Mapping[str, Any] | None = None, infer: bool = True, timestamp: datetime | None = None,
            idempotency_key: str | None = None, background: bool = False, run_id: str | None = None) -> list[Event]:
        body = dict(messages=messages, user_id=user_id, agent_id=agent_id, session_id=session_id, metadata=metadata,
                    infer=infer, timestamp=timestamp, idempotency_key=idempotency_key, background=background,
                    run_id=run_id)
        return _parse(list[Event], self._call("POST", "/v1/memories", body=body))

    def add_many(self, batch: Any) -> list[Event]:
        """Bulk ingest of verbatim turns (see `Memory.add_many`)."""
        items = [_clean(entry) for entry in batch]
        return _parse(list[Event], self._call("POST", "/v1/memories/batch", body={"items": items}))

    def flush(self, timeout: float | None = None) -> bool:
        """Wait for the server's queued background adds (at most 60 s a call)."""
        return self._call("POST", "/v1/memories/flush", body={"timeout": 60.0 if timeout is None else min(timeout, 60.0)})["done"]

    def search(self, query: str, *, user_id: str, agent_id: str | None = None, limit: int | None = None,
               filters: Filters | Mapping[str, Any] | None = None, now: datetime | None = None,
               threshold: float | None = None, top_k: int | None = None) -> list[SearchResult]:
        body = dict(query=query, user_id=user_id, agent_id=agent_id, limit=limit, filters=filters, now=now,
                    threshold=threshold, top_k=top_k)
        return _parse(list[SearchResult], self._call("POST", "/v1/memories/search", body=body))

    def get(self, memory_id: str) -> MemoryItem:
        return _parse(MemoryItem, self._call("GET", f"/v1/memories/{_segment(memory_id)}"))

    def get_all(self, *, user_id: str, agent_id: str | None = None, filters: Filters | Mapping[str, Any] | None = None,
                limit: int | None = 100, offset: int = 0) -> list[MemoryItem]:
        body = {**_clean(dict(user_id=user_id, agent_id=agent_id, filters=filters, offset=offset)),
                "limit": limit}  # None means "all" here, so it is sent
        return _parse(list[MemoryItem], self._call("POST", "/v1/memories/list", body=body))

    def count(self, *, user_id: str, agent_id: str | None = None,
              filters: Filters | Mapping[str, Any] | None = None) -> int:
        body = dict(user_id=user_id, agent_id=agent_id, filters=filters)
        return self._call("POST", "/v1/memories/count", body=body)["count"]

    def history(self, memory_id: str) -> list[HistoryEntry]:
        return _parse(list[HistoryEntry], self._call("GET", f"/v1/memories/{_segment(memory_id)}/history"))

    def provenance(self, memory_id: str) -> list[MemoryItem]:
        return _parse(list[MemoryItem], self._call("GET", f"/v1/memories/{_segment(memory_id)}/provenance"))

    def view(self, *, user_id: str, agent_id: str | None = None) -> dict[Kind, list[MemoryItem]]:
        items = self.get_all(user_id=user_id, agent_id=agent_id, limit=None)
        grouped = {kind: [i for i in items if i.kind is kind] for kind in Kind}
        return {kind: chosen for kind, chosen in grouped.items() if chosen}

    # -- control -------------------------------------------------------------------------
    def update(self, memory_id: str, content: str | None = None, metadata: Mapping[str, Any] | None = None) -> Event:
        body = dict(content=content, metadata=metadata)
        return _parse(Event, self._call("PATCH", f"/v1/memories/{_segment(memory_id)}", body=body))

    def delete(self, memory_id: str) -> Event:
        return _parse(Event, self._call("DELETE", f"/v1/memories/{_segment(memory_id)}"))

    def delete_all(self, *, user_id: str, agent_id: str | None = None) -> int:
        return self._call("DELETE", "/v1/memories", query=dict(user_id=user_id, agent_id=agent_id))["deleted"]

    def delete_by_kind(self, kind: Kind | str, *, user_id: str, agent_id: str | None = None) -> list[Event]:
        kind = kind.value if isinstance(kind, Kind) else kind
        return _parse(list[Event], self._call("DELETE", f"/v1/memories/kind/{_segment(kind)}",
                                              query=dict(user_id=user_id, agent_id=agent_id)))

    def forget(self, about: str, *, user_id: str, agent_id: str | None = None, dry_run: bool = False) -> list[Any]:
        found = self._call("POST", "/v1/forget", body=dict(about=about, user_id=user_id, agent_id=agent_id,
                                                            dry_run=dry_run))
        return _parse(list[MemoryItem] if dry_run else list[Event], found)

    def resolve(self, memory_id: str, keep: str = "this") -> list[Event]:
        return _parse(list[Event], self._call("POST", f"/v1/memories/{_segment(memory_id)}/resolve",
                                              body=dict(keep=keep)))

    def restore(self, memory_id: str) -> list[Event]:
        return _parse(list[Event], self._call("POST", f"/v1/memories/{_segment(memory_id)}/restore"))

    def complete(self, memory_id: str, *, now: datetime | None = None, tz: Any = None) -> Event:
        return _parse(Event, self._call("POST", f"/v1/memories/{_segment(memory_id)}/complete",
                                        body=dict(now=now, tz=_zone_name(tz))))

    def clarifications(self, *, user_id: str, agent_id: str | None = None,
                       limit: int | None = None) -> list[Clarification]:
        return _parse(list[Clarification], self._call("GET", "/v1/clarifications",
                                                      query=dict(user_id=user_id, agent_id=agent_id, limit=limit)))

    def pause(self, user_id: str) -> None:
        self._call("POST", "/v1/pause", body=dict(user_id=user_id))

    def resume(self, user_id: str) -> None:
        self._call("POST", "/v1/resume", body=dict(user_id=user_id))

    def is_paused(self, user_id: str) -> bool:
        return self._call("GET", "/v1/paused", query=dict(user_id=user_id))["paused"]

    def set_timezone(self, user_id: str, tz: str | None) -> None:
        self._call("PUT", "/v1/timezone", body={"user_id": user_id, "tz": tz})

    def timezone(self, user_id: str) -> Any:
        from engram.models import as_zone

        return as_zone(self._call("GET", "/v1/timezone", query={"user_id": user_id})["tz"])

    def maintain(self, user_id: str | None = None, *, now: datetime | None = None, progress: Any = None) -> Any:
        from engram.lifecycle import MaintenanceReport

        return _parse(MaintenanceReport, self._call("POST", "/v1/maintain", body=dict(user_id=user_id, now=now)))

    def reminders(self, *, user_id: str, agent_id: str | None = None, now: datetime | None = None,
                  horizon: timedelta | None = None, tz: Any = None) -> list[Any]:
        from engram.reminders import Reminder

        hours = None if horizon is None else horizon.total_seconds() / 3600
        query = dict(user_id=user_id, agent_id=agent_id, now=now, horizon_hours=hours, tz=_zone_name(tz))
        return _parse(list[Reminder], self._call("GET", "/v1/reminders", query=query))

    def export(self, *, user_id: str, agent_id: str | None = None, format: str = "engram", history: bool = False,
               path: str | Path | None = None, progress: Any = None) -> Any:
        data = self._call("POST", "/v1/export", body=dict(user_id=user_id, agent_id=agent_id, format=format,
                                                           history=history))
        if path is not None:
            Path(path).expanduser().write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        return data

    def import_(self, source: Any, *, user_id: str | None = None, agent_id: str | None = None,
                on_conflict: str = "skip", progress: Any = None) -> Any:
        from engram.portability import ImportReport, load

        body = dict(data=load(source), user_id=user_id, agent_id=agent_id, on_conflict=on_conflict)
        return _parse(ImportReport, self._call("POST", "/v1/import", body=body))

    def graph(self, user_id: str) -> Any:
        from engram.graph.view import UserGraph

        return _parse(UserGraph, self._call("GET", "/v1/graph", query=dict(user_id=user_id)))

    # -- sessions, capsule, context ------------------------------------------------------
    def capsule(self, user_id: str, *, agent_id: str | None = None, budget: int | None = None,
                language: str | None = None) -> Any:
        from engram.capsule import Capsule

        query = dict(user_id=user_id, agent_id=agent_id, budget=budget, language=language)
        return _parse(Capsule, self._call("GET", "/v1/capsule", query=query))

    def context(self, query: str, *, user_id: str, agent_id: str | None = None, session_id: str | None = None,
                budget: int | None = None, limit: int | None = None, turns: bool = False,
                language: str | None = None) -> Any:
        from engram.capsule import Context

        body = dict(query=query, user_id=user_id, agent_id=agent_id, session_id=session_id, budget=budget,
                    limit=limit, turns=turns, language=language)
        return _parse(Context, self._call("POST", "/v1/context", body=body))

    def compress(self, user_id: str, *, agent_id: str | None = None) -> Any:
        from engram.capsule import Delta

        return _parse(Delta, self._call("POST", "/v1/compress", body=dict(user_id=user_id, agent_id=agent_id)))

    def session(self, user_id: str, session_id: str | None = None, *, agent_id: str | None = None) -> RemoteSession:
        found = self._call("POST", "/v1/sessions", body=dict(user_id=user_id, session_id=session_id,
                                                              agent_id=agent_id))
        return RemoteSession(self, found["user_id"], found["session_id"], found.get("agent_id"))

    def end_session(self, user_id: str, session_id: str, *, agent_id: str | None = None,
                    reason: str = "explicit") -> Any:
        from engram.capsule import Delta

        body = dict(user_id=user_id, agent_id=agent_id, reason=reason)
        return _parse(Delta, self._call("POST", f"/v1/sessions/{_segment(session_id)}/end", body=body))

    def session_turns(self, user_id: str, session_id: str, *, agent_id: str | None = None) -> list[Message]:
        query = dict(user_id=user_id, agent_id=agent_id)
        return _parse(list[Message], self._call("GET", f"/v1/sessions/{_segment(session_id)}/turns", query=query))


class RemoteSession:
    """`Memory.session(...)`'s handle, over HTTP: add, context, turns, end."""

    def __init__(self, client: MemoryClient, user_id: str, session_id: str, agent_id: str | None) -> None:
        self.client, self.user_id, self.session_id, self.agent_id = client, user_id, session_id, agent_id

    def __repr__(self) -> str:
        return f"RemoteSession(user_id={self.user_id!r}, session_id={self.session_id!r})"

    def add(self, messages: Any, **kwargs: Any) -> list[Event]:
        return self.client.add(messages, user_id=self.user_id, agent_id=self.agent_id, session_id=self.session_id,
                               **kwargs)

    def context(self, query: str, **kwargs: Any) -> Any:
        return self.client.context(query, user_id=self.user_id, agent_id=self.agent_id, session_id=self.session_id,
                                   **kwargs)

    def turns(self) -> list[Message]:
        return self.client.session_turns(self.user_id, self.session_id, agent_id=self.agent_id)

    def end(self, reason: str = "explicit") -> Any:
        return self.client.end_session(self.user_id, self.session_id, agent_id=self.agent_id, reason=reason)

    def __enter__(self) -> RemoteSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.end()


class Awaited:
    """Any sync object of this module with its methods awaited (one thread hop per call);
    a `RemoteSession` a call returns comes back awaited too. ``async with`` leaves as the
    sync ``with`` does (a client closes, a session ends)."""

    def __init__(self, sync: Any) -> None:
        self.sync = sync

    def __getattr__(self, name: str) -> Any:
        target = getattr(self.sync, name)
        if not callable(target) or name.startswith("_"):
            return target

        async def call(*args: Any, **kwargs: Any) -> Any:
            result = await asyncio.to_thread(target, *args, **kwargs)
            return Awaited(result) if isinstance(result, RemoteSession) else result

        call.__name__, call.__doc__ = name, target.__doc__
        return call

    async def __aenter__(self) -> Any:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.to_thread(self.sync.__exit__, *exc)


class AsyncMemoryClient(Awaited):
    """``await AsyncMemoryClient(url, api_key=…).search(…)``: every `MemoryClient` method,
    awaited (the sync client runs in a worker thread; one request/response mapping)."""

    def __init__(self, base_url: str | None = None, **kwargs: Any) -> None:
        super().__init__(MemoryClient(base_url, **kwargs))


def _segment(value: Any) -> str:
    """A path segment: an id as given, quoted (a '/' in it cannot reach another route)."""
    from urllib.parse import quote

    if not isinstance(value, str) or not value:
        raise InvalidInput(f"an id must be a non-empty string, not {value!r}")
    return quote(value, safe="")


def _zone_name(tz: Any) -> str | None:
    if tz is None or isinstance(tz, str):
        return tz
    return getattr(tz, "key", None) or str(tz)


__all__ = ["AsyncMemoryClient", "Awaited", "MemoryClient", "RemoteError", "RemoteSession"]
