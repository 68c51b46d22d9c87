"""`Memory`: the public API. It validates, orchestrates the pipeline parts, and owns nothing else.

    add ──► extract (rules; LLM when configured) ──► privacy ──► reconcile ──► store
    search ──► retrieve (lexical ∥ dense → fuse → rescore) ──► reinforce

Names follow mem0 where they mean the same thing so users can switch.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from engram.config import Settings
from engram.errors import InvalidInput, NotFound
from engram.extract import extract_candidates
from engram.models import (
    Action,
    Candidate,
    Event,
    Filters,
    HistoryEntry,
    Kind,
    MemoryItem,
    Message,
    SearchResult,
    Source,
    Status,
    as_utc,
    utcnow,
)
from engram.privacy import PrivacyPolicy, apply as apply_privacy, redact
from engram.providers.embedders import Embedder, make_embedder
from engram.reconcile import Decision, decide
from engram.retrieve import Retriever
from engram.store.base import HistoryEvent, Record, Scope, Store
from engram.store.sqlite import SQLiteStore
from engram.text import detect_language, lexical_tokens, normalize

log = logging.getLogger("engram")

_LIVE = [Status.ACTIVE, Status.DISPUTED]
MessagesInput = str | Mapping[str, Any] | Sequence[Mapping[str, Any] | Message]


def content_hash(text: str) -> str:
    return hashlib.blake2b(normalize(text).encode("utf-8"), digest_size=16).hexdigest()


def _scope(user_id: Any, agent_id: Any = None) -> Scope:
    try:
        return Scope(user_id, agent_id)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None


def _messages(messages: MessagesInput) -> list[Message]:
    if isinstance(messages, str):
        items: list[Any] = [{"role": "user", "content": messages}]
    elif isinstance(messages, Mapping):
        items = [messages]
    elif isinstance(messages, Sequence):
        items = list(messages)
    else:
        raise InvalidInput(
            f"messages must be a string or a list of {{'role', 'content'}} dicts, not {type(messages).__name__}"
        )
    try:
        parsed = [m if isinstance(m, Message) else Message.model_validate(m) for m in items]
    except ValidationError as exc:
        raise InvalidInput(f"invalid message: {exc.errors()[0]['msg']}") from None
    if not parsed or not any(m.content.strip() for m in parsed):
        raise InvalidInput("messages contain no text")
    return parsed


def _filters(filters: Filters | Mapping[str, Any] | None) -> Filters:
    if filters is None:
        return Filters()
    if isinstance(filters, Filters):
        return filters
    if not isinstance(filters, Mapping):
        raise InvalidInput(f"filters must be a dict, not {type(filters).__name__}")
    try:
        return Filters.model_validate(dict(filters))
    except ValidationError as exc:
        error = exc.errors()[0]
        raise InvalidInput(f"invalid filter {'.'.join(map(str, error['loc']))}: {error['msg']}") from None


def _metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidInput(f"metadata must be a dict, not {type(metadata).__name__}")
    try:
        json.dumps(metadata)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"metadata must be JSON-serialisable: {exc}") from None
    return dict(metadata)


def _timestamp(timestamp: datetime | None) -> datetime:
    if timestamp is None:
        return utcnow()
    if not isinstance(timestamp, datetime):
        raise InvalidInput(f"timestamp must be a datetime, not {type(timestamp).__name__}")
    return as_utc(timestamp)


class Memory:
    """Long-term memory for agents, scoped per user (and optionally per agent).

    >>> m = Memory(path="/tmp/demo.db")
    >>> m.add("I live in Berlin", user_id="alice")
    >>> m.search("where does she live?", user_id="alice")
    """

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        settings: Settings | None = None,
        embedder: Embedder | None = None,
        store: Store | None = None,
        **overrides: Any,
    ) -> None:
        if settings is None:
            if path is not None:
                overrides["path"] = path
            settings = Settings(**overrides)
        elif path is not None or overrides:
            settings = settings.model_copy(update={**overrides, **({"path": Path(path)} if path else {})})
        self.settings = settings
        self.embedder = embedder or make_embedder(settings)
        self.store: Store = store or SQLiteStore(settings.path, dim=self.embedder.dim)
        self.retriever = Retriever(self.store, self.embedder, settings)
        self.privacy = PrivacyPolicy(**settings.privacy)

    # -- context manager -------------------------------------------------------------
    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.store.close()

    # -- writing ---------------------------------------------------------------------
    def add(
        self,
        messages: MessagesInput,
        *,
        user_id: str,
        agent_id: str | None = None,
        session_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        infer: bool = True,
        timestamp: datetime | None = None,
        idempotency_key: str | None = None,
    ) -> list[Event]:
        """Remember what matters in `messages`; returns what happened to each memory.

        With `infer=False` every message is stored verbatim as a `turn`.
        `timestamp` says when it was said (imports, replays); default now.
        A repeated `idempotency_key` in the same scope returns NOOPs.
        """
        scope = _scope(user_id, agent_id)
        parsed = _messages(messages)
        meta = _metadata(metadata)
        said_at = _timestamp(timestamp)
        if idempotency_key is not None:
            done = self.store.find_by_idempotency_key(scope, idempotency_key)
            if done:
                return [Event(action=Action.NOOP, memory=m, reason="idempotent replay") for m in done]
        if not infer:
            return self._add_turns(scope, parsed, session_id, meta, said_at, idempotency_key)
        events: list[Event] = []
        for message in parsed:
            for candidate in extract_candidates(message.content, role=message.role, now=said_at):
                event = self._add_candidate(
                    scope, candidate, message.content, session_id, meta, said_at, idempotency_key
                )
                if event is not None:
                    events.append(event)
        return events

    def add_many(self, batch: Iterable[Mapping[str, Any]]) -> list[Event]:
        """Bulk ingest of verbatim turns: one embedding batch and one transaction.

        Each entry takes the keyword arguments of `add` plus `messages`;
        entries with `infer=True` go through `add` one by one.
        """
        records: list[Record] = []
        events: list[Event] = []
        for entry in batch:
            entry = dict(entry)
            messages = entry.pop("messages")
            if entry.pop("infer", False):
                events += self.add(messages, **entry)
                continue
            scope = _scope(entry.get("user_id"), entry.get("agent_id"))
            items = self._turn_items(
                scope, _messages(messages), entry.get("session_id"),
                _metadata(entry.get("metadata")), _timestamp(entry.get("timestamp")),
            )
            records += [self._record(i, None, entry.get("idempotency_key")) for i in items]
        self._embed_records(records)
        self.store.write(inserts=records, events=[self._history(r.item, "ADD", None, "bulk ingest") for r in records])
        return events + [Event(action=Action.ADD, memory=r.item, reason="stored verbatim") for r in records]

    def _turn_items(
        self, scope: Scope, messages: list[Message], session_id: str | None,
        metadata: dict[str, Any], said_at: datetime,
    ) -> list[MemoryItem]:
        items = []
        for message in messages:
            filtered = apply_privacy(message.content, self.privacy)
            if filtered.dropped or not filtered.text.strip():
                continue
            items.append(
                MemoryItem(
                    user_id=scope.user_id, agent_id=scope.agent_id, session_id=session_id,
                    content=filtered.text, kind=Kind.TURN, language=detect_language(filtered.text),
                    importance=0.3, confidence=1.0, source=Source.API,
                    metadata={**metadata, "role": message.role}, created_at=said_at,
                    updated_at=utcnow(), valid_from=said_at,
                )
            )
        return items

    def _add_turns(
        self, scope: Scope, messages: list[Message], session_id: str | None,
        metadata: dict[str, Any], said_at: datetime, idempotency_key: str | None,
    ) -> list[Event]:
        records = [
            self._record(item, None, idempotency_key)
            for item in self._turn_items(scope, messages, session_id, metadata, said_at)
        ]
        self._embed_records(records)
        self.store.write(
            inserts=records, events=[self._history(r.item, "ADD", None, "stored verbatim") for r in records]
        )
        return [Event(action=Action.ADD, memory=r.item, reason="stored verbatim") for r in records]

    def _add_candidate(
        self, scope: Scope, candidate: Candidate, said: str, session_id: str | None,
        metadata: dict[str, Any], said_at: datetime, idempotency_key: str | None,
    ) -> Event | None:
        filtered = apply_privacy(candidate.content, self.privacy)
        if filtered.dropped or not filtered.text.strip():
            log.info("privacy policy dropped a %s candidate (%s)", candidate.kind, ", ".join(sorted(filtered.kinds)))
            return None
        candidate = candidate.model_copy(update={"content": filtered.text})
        if candidate.value is not None:
            candidate.value = redact(candidate.value, self.privacy)
        now = utcnow()
        item = MemoryItem(
            user_id=scope.user_id, agent_id=scope.agent_id, session_id=session_id,
            content=candidate.content, kind=candidate.kind, language=candidate.language,
            key=candidate.key, value=candidate.value, importance=candidate.importance,
            confidence=candidate.confidence, source=candidate.source,
            metadata={**metadata, **({"polarity": candidate.polarity} if candidate.polarity else {})},
            entities=candidate.entities, due_at=candidate.due_at, recurrence=candidate.recurrence,
            created_at=said_at, updated_at=now, valid_from=candidate.valid_from or said_at,
        )
        record = self._record(item, None, idempotency_key)
        self._embed_records([record])
        live = Filters(status=_LIVE)
        decision = decide(
            candidate,
            said=said,
            exact=self.store.find_by_hash(scope, record.content_hash, live),
            same_key=self.store.find_by_key(scope, candidate.key, live) if candidate.key else [],
            similar=self._similar(scope, record, live),
            duplicate_similarity=self.settings.duplicate_similarity,
        )
        log.debug("reconcile %s: %s (%s)", candidate.kind, decision.action, decision.reason)
        return self._apply(decision, record, candidate, now)

    def _similar(self, scope: Scope, record: Record, filters: Filters) -> list[tuple[MemoryItem, float]]:
        hits = self.store.dense_search(scope, record.embedding, filters, 3)
        items = {m.id: m for m in self.store.get_many([h[0] for h in hits])}
        return [(items[i], score) for i, score in hits if i in items]

    def _apply(self, decision: Decision, record: Record, candidate: Candidate, now: datetime) -> Event:
        item, target = record.item, decision.target
        if decision.action is Action.ADD:
            self.store.write(inserts=[record], events=[self._history(item, "ADD", None, decision.reason)])
            return Event(action=Action.ADD, memory=item, reason=decision.reason)
        assert target is not None
        if decision.action is Action.NOOP:
            reinforced = target.model_copy(
                update={
                    "strength": target.strength + 1.0,
                    "importance": max(target.importance, candidate.importance),
                    "updated_at": now,
                }
            )
            self.store.write(updates=[self._record(reinforced)])
            return Event(action=Action.NOOP, memory=reinforced, reason=decision.reason)
        if decision.action is Action.SUPERSEDE:
            old = target.model_copy(
                update={"status": Status.SUPERSEDED, "superseded_by": item.id, "valid_to": item.valid_from, "updated_at": now}
            )
            item.supersedes = target.id
            self.store.write(
                inserts=[record],
                updates=[self._record(old)],
                events=[
                    self._history(old, "SUPERSEDE", item.content, decision.reason, old_content=target.content),
                    self._history(item, "ADD", None, f"supersedes {target.id}: {decision.reason}"),
                ],
            )
            return Event(action=Action.SUPERSEDE, memory=item, reason=decision.reason, previous=old)
        # DISPUTE: keep both, both marked until the user settles it
        old = target.model_copy(update={"status": Status.DISPUTED, "updated_at": now})
        item.status = Status.DISPUTED
        item.metadata = {**item.metadata, "disputes": target.id}
        old.metadata = {**old.metadata, "disputes": item.id}
        self.store.write(
            inserts=[record],
            updates=[self._record(old)],
            events=[
                self._history(old, "DISPUTE", item.content, decision.reason, old_content=target.content),
                self._history(item, "DISPUTE", None, decision.reason),
            ],
        )
        return Event(action=Action.DISPUTE, memory=item, reason=decision.reason, previous=old)

    def _record(self, item: MemoryItem, embedding: Any = None, idempotency_key: str | None = None) -> Record:
        return Record(
            item=item,
            embedding=embedding,
            tokens=lexical_tokens(item.content),
            content_hash=content_hash(item.content),
            idempotency_key=idempotency_key,
        )

    def _embed_records(self, records: list[Record]) -> None:
        if not records:
            return
        vectors = self.embedder.embed([r.item.content for r in records])
        for record, vector in zip(records, vectors, strict=True):
            record.embedding = vector
            record.item.embedding_model = self.embedder.name

    @staticmethod
    def _history(
        item: MemoryItem, action: str, new_content: str | None, reason: str,
        *, old_content: str | None = None,
    ) -> HistoryEvent:
        return HistoryEvent(
            memory_id=item.id, user_id=item.user_id, action=action,
            old_content=old_content, new_content=new_content if new_content is not None else (
                item.content if action in ("ADD", "DISPUTE") else None
            ),
            reason=reason, at=utcnow(),
        )

    # -- reading ---------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        user_id: str,
        agent_id: str | None = None,
        limit: int | None = None,
        filters: Filters | Mapping[str, Any] | None = None,
    ) -> list[SearchResult]:
        """The memories most relevant to `query`, best first, each with its score parts."""
        scope = _scope(user_id, agent_id)
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("query must be a non-empty string")
        limit = self.settings.search_limit if limit is None else limit
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise InvalidInput(f"limit must be a positive integer, not {limit!r}")
        now = utcnow()
        results = self.retriever.search(scope, query, _filters(filters), limit, now)
        if self.settings.reinforce and results:
            self.store.record_access([r.memory.id for r in results], now)
        for result in results:
            result.memory = self._shown(result.memory)
        return results

    def _shown(self, item: MemoryItem) -> MemoryItem:
        """Redact again on the way out (memories stored before a policy change)."""
        clean = redact(item.content, self.privacy)
        return item if clean == item.content else item.model_copy(update={"content": clean})

    def get(self, memory_id: str) -> MemoryItem:
        if not isinstance(memory_id, str) or not memory_id:
            raise InvalidInput("memory id must be a non-empty string")
        item = self.store.get(memory_id)
        if item is None:
            raise NotFound(f"no memory with id {memory_id!r}")
        return self._shown(item)

    def get_all(
        self,
        *,
        user_id: str,
        agent_id: str | None = None,
        filters: Filters | Mapping[str, Any] | None = None,
        limit: int | None = 100,
        offset: int = 0,
    ) -> list[MemoryItem]:
        """Memories of a scope, newest first (active only unless `filters` say otherwise)."""
        scope = _scope(user_id, agent_id)
        if limit is not None and (not isinstance(limit, int) or limit < 1):
            raise InvalidInput(f"limit must be a positive integer or None, not {limit!r}")
        items = self.store.list(scope, _filters(filters), limit=limit, offset=offset)
        return [self._shown(i) for i in items]

    def history(self, memory_id: str) -> list[HistoryEntry]:
        if not isinstance(memory_id, str) or not memory_id:
            raise InvalidInput("memory id must be a non-empty string")
        entries = self.store.history(memory_id)
        if not entries and self.store.get(memory_id) is None:
            raise NotFound(f"no memory with id {memory_id!r}")
        return entries

    # -- control ---------------------------------------------------------------------
    def update(
        self, memory_id: str, content: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> Event:
        """Edit a memory's text and/or merge into its metadata; history keeps the old text."""
        if content is None and metadata is None:
            raise InvalidInput("nothing to update: give content and/or metadata")
        if content is not None and (not isinstance(content, str) or not content.strip()):
            raise InvalidInput("content must be a non-empty string")
        meta = _metadata(metadata)
        current = self.store.get(memory_id) if isinstance(memory_id, str) else None
        if current is None:
            raise NotFound(f"no memory with id {memory_id!r}")
        changes: dict[str, Any] = {"updated_at": utcnow()}
        if content is not None:
            filtered = apply_privacy(content, self.privacy)
            if filtered.dropped:
                raise InvalidInput("the new content holds a secret the privacy policy refuses to store")
            changes["content"] = filtered.text
            changes["language"] = detect_language(filtered.text)
        if meta:
            changes["metadata"] = {**current.metadata, **meta}
        updated = current.model_copy(update=changes)
        record = self._record(updated)
        if content is not None:
            self._embed_records([record])
        self.store.write(
            updates=[record],
            events=[self._history(updated, "UPDATE", updated.content, "edited", old_content=current.content)],
        )
        return Event(action=Action.UPDATE, memory=updated, reason="edited", previous=current)

    def delete(self, memory_id: str) -> Event:
        """Delete for real: the text leaves every table and index; history keeps a contentless event."""
        current = self.store.get(memory_id) if isinstance(memory_id, str) else None
        if current is None:
            raise NotFound(f"no memory with id {memory_id!r}")
        self.store.delete([memory_id], [self._history(current, "DELETE", None, "deleted")])
        return Event(action=Action.DELETE, memory=current, reason="deleted")

    def delete_all(self, *, user_id: str, agent_id: str | None = None) -> int:
        """Delete every memory of a scope; returns how many were deleted."""
        return self.store.delete_scope(_scope(user_id, agent_id), utcnow())

    def reset(self) -> None:
        """Delete everything of every user (tests and demos)."""
        self.store.reset()
