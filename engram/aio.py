"""`AsyncMemory`: the same engine for asyncio code, one thread hop per call.

There is one implementation (the sync `Memory`); every method here runs it in a worker thread
so an event loop is never blocked. The methods are generated from `Memory`'s signatures by
scripts/gen_aio.py (do not edit them by hand), so IDEs and type checkers see the real ones.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any, TypeVar

from engram import lifecycle, portability, reminders
from engram.capsule import Capsule, Context, Delta
from engram.config import Settings
from engram.memory import Memory
from engram.models import Clarification, Event, Filters, HistoryEntry, Kind, MemoryItem, SearchResult
from engram.session import Session
from engram.validate import MessagesInput

T = TypeVar("T")


async def _hop(call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    return await asyncio.to_thread(call, *args, **kwargs)


class AsyncSession:
    """`async with amem.session("alice") as s:` — a `Session` whose calls are awaited;
    leaving the block ends the session (its delta), as the sync one does."""

    def __init__(self, session: Session) -> None:
        self.sync = session
        self.user_id, self.agent_id, self.session_id = session.user_id, session.agent_id, session.session_id

    async def add(self, messages: MessagesInput, **kwargs: Any) -> list[Event]:
        return await _hop(self.sync.add, messages, **kwargs)

    async def context(self, query: str, **kwargs: Any) -> Context:
        return await _hop(self.sync.context, query, **kwargs)

    async def turns(self) -> list[Any]:
        return await _hop(self.sync.turns)

    async def end(self, reason: str = "explicit") -> Delta:
        return await _hop(self.sync.end, reason)

    async def __aenter__(self) -> AsyncSession:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.end()


class AsyncMemory:
    """Async facade: ``await AsyncMemory().add(...)``; attributes mirror `Memory`."""

    def __init__(self, *args: Any, memory: Memory | None = None, **kwargs: Any) -> None:
        self.sync = memory or Memory(*args, **kwargs)

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> AsyncMemory:
        """mem0's ``from_config`` shape (see `Memory.from_config`)."""
        return cls(memory=Memory.from_config(config))

    def __getattr__(self, name: str) -> Any:  # settings, store, privacy, … pass through
        return getattr(self.sync, name)

    def session(self, user_id: str, session_id: str | None = None, *, agent_id: str | None = None) -> AsyncSession:
        """Use as ``async with amem.session(user_id) as s``; opening reads the store (fast, no thread hop)."""
        return AsyncSession(self.sync.session(user_id, session_id, agent_id=agent_id))

    async def close(self) -> None:
        await _hop(self.sync.close)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def add(
        self, messages: MessagesInput, *, user_id: str, agent_id: str | None = None,
        session_id: str | None = None, metadata: Mapping[str, Any] | None = None, infer: bool = True,
        timestamp: datetime | None = None, idempotency_key: str | None = None, background: bool = False,
        run_id: str | None = None,
    ) -> list[Event]:
        """Remember what matters in `messages`; returns what happened to each memory."""
        return await _hop(
            self.sync.add, messages, user_id=user_id, agent_id=agent_id, session_id=session_id, metadata=metadata, infer=infer, timestamp=timestamp, idempotency_key=idempotency_key, background=background, run_id=run_id,
        )

    async def flush(self, timeout: float | None = None) -> bool:
        """Wait for background work: queued adds and batched LLM extraction (waiting turns are"""
        return await _hop(self.sync.flush, timeout)

    async def llm_usage(self) -> dict[str, Any]:
        """LLM calls, failures, tokens and cost (total, per user) and what each task did."""
        return await _hop(self.sync.llm_usage)

    async def add_many(self, batch: Iterable[Mapping[str, Any]]) -> list[Event]:
        """Bulk ingest of verbatim turns: one embedding batch and one transaction."""
        return await _hop(self.sync.add_many, batch)

    async def search(
        self, query: str, *, user_id: str, agent_id: str | None = None, limit: int | None = None,
        filters: Filters | Mapping[str, Any] | None = None, now: datetime | None = None,
        threshold: float | None = None, top_k: int | None = None,
    ) -> list[SearchResult]:
        """The memories most relevant to `query`, best first, each with its score parts."""
        return await _hop(
            self.sync.search, query, user_id=user_id, agent_id=agent_id, limit=limit, filters=filters, now=now, threshold=threshold, top_k=top_k,
        )

    async def get(self, memory_id: str) -> MemoryItem:
        """`Memory.get`, awaited."""
        return await _hop(self.sync.get, memory_id)

    async def get_all(
        self, *, user_id: str, agent_id: str | None = None,
        filters: Filters | Mapping[str, Any] | None = None, limit: int | None = 100, offset: int = 0,
    ) -> list[MemoryItem]:
        """Memories of a scope, newest first: live ones (active and disputed) unless `filters`"""
        return await _hop(
            self.sync.get_all, user_id=user_id, agent_id=agent_id, filters=filters, limit=limit, offset=offset,
        )

    async def count(
        self, *, user_id: str, agent_id: str | None = None, filters: Filters | Mapping[str, Any] | None = None
    ) -> int:
        """How many memories `get_all` would list with no limit."""
        return await _hop(self.sync.count, user_id=user_id, agent_id=agent_id, filters=filters)

    async def history(self, memory_id: str) -> list[HistoryEntry]:
        """`Memory.history`, awaited."""
        return await _hop(self.sync.history, memory_id)

    async def update(
        self, memory_id: str, content: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> Event:
        """Edit a memory's text and/or merge into its metadata; history keeps the old text."""
        return await _hop(self.sync.update, memory_id, content, metadata)

    async def delete(self, memory_id: str) -> Event:
        """Delete for real: the text leaves every table and index; history keeps a contentless event."""
        return await _hop(self.sync.delete, memory_id)

    async def delete_all(self, *, user_id: str, agent_id: str | None = None) -> int:
        """Delete every memory of a scope; returns how many were deleted."""
        return await _hop(self.sync.delete_all, user_id=user_id, agent_id=agent_id)

    async def reset(self) -> None:
        """Delete everything of every user (tests and demos)."""
        return await _hop(self.sync.reset)

    async def end_session(
        self, user_id: str, session_id: str, *, agent_id: str | None = None, reason: str = "explicit"
    ) -> Delta:
        """End a session and compress its memories into a delta; safe to call twice or concurrently."""
        return await _hop(self.sync.end_session, user_id, session_id, agent_id=agent_id, reason=reason)

    async def compress(self, user_id: str, *, agent_id: str | None = None) -> Delta:
        """One delta of everything written since the last one (``compression = "task"``: call when a task is done)."""
        return await _hop(self.sync.compress, user_id, agent_id=agent_id)

    async def capsule(
        self, user_id: str, *, agent_id: str | None = None, budget: int | None = None,
        language: str | None = None,
    ) -> Capsule:
        """The user's long-term memory as a compact block within `budget` tokens (cached)."""
        return await _hop(self.sync.capsule, user_id, agent_id=agent_id, budget=budget, language=language)

    async def context(
        self, query: str, *, user_id: str, agent_id: str | None = None, session_id: str | None = None,
        budget: int | None = None, limit: int | None = None, turns: bool = False, language: str | None = None,
    ) -> Context:
        """What to put in front of the LLM for this turn: capsule + relevant memories (+ turns)."""
        return await _hop(
            self.sync.context, query, user_id=user_id, agent_id=agent_id, session_id=session_id, budget=budget, limit=limit, turns=turns, language=language,
        )

    async def clarifications(
        self, *, user_id: str, agent_id: str | None = None, limit: int | None = None
    ) -> list[Clarification]:
        """Open questions about contradicting (disputed) memories, newest first."""
        return await _hop(self.sync.clarifications, user_id=user_id, agent_id=agent_id, limit=limit)

    async def resolve(self, memory_id: str, keep: str = "this") -> list[Event]:
        """Settle a dispute: keep "this" (= `memory_id`), "newer", "older", "both", "neither"""
        return await _hop(self.sync.resolve, memory_id, keep)

    async def maintain(
        self, user_id: str | None = None, *, now: datetime | None = None,
        progress: lifecycle.Progress | None = None,
    ) -> lifecycle.MaintenanceReport:
        """Archive decayed memories, enforce capacity, merge near-duplicates (one user or all)."""
        return await _hop(self.sync.maintain, user_id, now=now, progress=progress)

    async def restore(self, memory_id: str) -> list[Event]:
        """Bring an archived memory back (for a merge: every source back, the summary gone)."""
        return await _hop(self.sync.restore, memory_id)

    async def pause(self, user_id: str) -> None:
        """Stop remembering for this user (persisted): `add` stores nothing until `resume`."""
        return await _hop(self.sync.pause, user_id)

    async def resume(self, user_id: str) -> None:
        """`Memory.resume`, awaited."""
        return await _hop(self.sync.resume, user_id)

    async def is_paused(self, user_id: str) -> bool:
        """`Memory.is_paused`, awaited."""
        return await _hop(self.sync.is_paused, user_id)

    async def set_timezone(self, user_id: str, tz: str | None) -> None:
        """The user's IANA time zone ("Asia/Shanghai"), persisted: their days for "yesterday"""
        return await _hop(self.sync.set_timezone, user_id, tz)

    async def timezone(self, user_id: str) -> tzinfo:
        """The user's time zone: their own (`set_timezone`), else the `timezone` setting, else the"""
        return await _hop(self.sync.timezone, user_id)

    async def view(self, *, user_id: str, agent_id: str | None = None) -> dict[Kind, list[MemoryItem]]:
        """What is remembered about a user, grouped by kind (live memories, newest first)."""
        return await _hop(self.sync.view, user_id=user_id, agent_id=agent_id)

    async def forget(
        self, about: str, *, user_id: str, agent_id: str | None = None, dry_run: bool = False
    ) -> list[Any]:
        """Delete exactly the memories about `about` (every status), for real; one DELETE"""
        return await _hop(self.sync.forget, about, user_id=user_id, agent_id=agent_id, dry_run=dry_run)

    async def delete_by_kind(self, kind: Kind | str, *, user_id: str, agent_id: str | None = None) -> list[Event]:
        """Delete every memory of one kind (every status), for real."""
        return await _hop(self.sync.delete_by_kind, kind, user_id=user_id, agent_id=agent_id)

    async def export(
        self, *, user_id: str, agent_id: str | None = None, format: str = "engram", history: bool = False,
        path: str | Path | None = None,
    ) -> dict[str, Any] | list[dict[str, Any]]:
        """A user's memories as engram JSON (lossless; `history` adds the audit trail) or an"""
        return await _hop(
            self.sync.export, user_id=user_id, agent_id=agent_id, format=format, history=history, path=path,
        )

    async def import_(
        self, source: str | Path | Mapping[str, Any] | Sequence[Any], *, user_id: str | None = None,
        agent_id: str | None = None, on_conflict: str = "skip", progress: Any = None,
    ) -> portability.ImportReport:
        """Load an engram export or an OptMem file (a path, JSON text or parsed data);"""
        return await _hop(
            self.sync.import_, source, user_id=user_id, agent_id=agent_id, on_conflict=on_conflict, progress=progress,
        )

    async def reminders(
        self, *, user_id: str, agent_id: str | None = None, now: datetime | None = None,
        horizon: timedelta | None = None, tz: Any = None,
    ) -> list[reminders.Reminder]:
        """Tasks due (or overdue) at `now` within `horizon` (default reminder_horizon_hours)."""
        return await _hop(self.sync.reminders, user_id=user_id, agent_id=agent_id, now=now, horizon=horizon, tz=tz)

    async def complete(self, memory_id: str, *, now: datetime | None = None, tz: Any = None) -> Event:
        """Mark a task done (a recurring task: this occurrence; `tz`: default the user's zone)."""
        return await _hop(self.sync.complete, memory_id, now=now, tz=tz)
