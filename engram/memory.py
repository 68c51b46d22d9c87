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
from datetime import UTC, datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from engram.config import Settings
from engram.errors import InvalidInput, NotFound
from engram.extract import extract_candidates
from engram.models import (
    Action,
    Candidate,
    Clarification,
    Command,
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
    as_zone,
    utcnow,
)
from engram.capsule import Capsule, CapsuleEngine, Context, Delta, promotion
from engram import control, disputes, lifecycle, portability, reminders, when
from engram.privacy import PrivacyPolicy, apply as apply_privacy, redact
from engram.sanitize import redact_identifier, redact_json, safe_candidate
from engram.providers.embedders import Embedder, make_embedder
from engram.reconcile import Decision, decide, same_statement, signals_change
from engram.retrieve import Retriever
from engram.llm import LLMTasks
from engram.queue import JobQueue
from engram.session import Session, SessionManager
from engram.store.base import HistoryEvent, Record, Scope, Store, Transition
from engram.store.sqlite import SQLiteStore
from engram.text import content_words, detect_language, lexical_tokens, normalize

log = logging.getLogger("engram")

_LIVE = [Status.ACTIVE, Status.DISPUTED]
_LIVE_FILTERS = Filters(status=_LIVE)  # what a new statement is reconciled against (never mutated)
_CLEAN_VERSIONS_KEPT = 100_000
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


_LIVE_DEFAULT = Filters(status=[Status.ACTIVE, Status.DISPUTED])


def _live(filters: Filters) -> Filters:
    """Reads default to live memories: active and disputed (a disputed memory comes back
    with its clarifying question). "As of" a moment, superseded versions count too."""
    if not filters.model_fields_set:  # no filters at all: the shared default
        return _LIVE_DEFAULT
    if "status" in filters.model_fields_set:
        return filters
    live = [Status.ACTIVE, Status.DISPUTED]
    if filters.as_of is not None:
        live.append(Status.SUPERSEDED)
    return filters.model_copy(update={"status": live})


def _job_text(payload: str) -> str:
    """The words a queued job holds (its messages), for matching what is being forgotten."""
    try:
        data = json.loads(payload)
    except ValueError:
        return payload
    messages = data.get("messages", []) if isinstance(data, dict) else []
    return " ".join(m.get("content", "") for m in messages if isinstance(m, dict))


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
        llm: Any = None,
        **overrides: Any,
    ) -> None:
        """`llm`: an `OpenAICompatLLM` to use instead of the configured one (``llm_*`` settings)."""
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
        # (id, updated_at) of memory versions that redaction leaves as they are: each
        # version is scanned once, not on every read (a search shows ~5-20 of them)
        self._clean_versions: set[tuple[str, datetime]] = set()
        self.capsules = CapsuleEngine(self)
        self.sessions = SessionManager(self)  # `memory.sessions.clock` is injectable
        self.llm_tasks = LLMTasks(self, llm)  # no client (nor openai import) unless configured
        self.queue = JobQueue(self)  # background jobs; resumes what a crashed process left
        self.queue.resume()

    # -- context manager -------------------------------------------------------------
    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop background workers (queued jobs stay on disk for the next open) and close the store."""
        self.queue.close()
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
        background: bool = False,
    ) -> list[Event]:
        """Remember what matters in `messages`; returns what happened to each memory.

        With `infer=False` every message is stored verbatim as a `turn`.
        `timestamp` says when it was said (imports, replays); default now.
        A repeated `idempotency_key` in the same scope returns NOOPs.
        `background=True` validates, queues the work durably (a crash cannot lose
        it) and returns ``[]`` at once; a worker thread does the rest, `flush()` waits.
        """
        scope = _scope(user_id, agent_id)
        parsed = _messages(messages)
        meta = _metadata(metadata)
        said_at = _timestamp(timestamp)
        if session_id is not None and (not isinstance(session_id, str) or not session_id.strip()):
            raise InvalidInput("session_id must be a non-empty string when given")
        session_id = redact_identifier(session_id, self.privacy, scope.user_id)  # stored, queued and compared
        idempotency_key = redact_identifier(idempotency_key, self.privacy, scope.user_id)
        if background and self.queue.supported:
            self.queue.submit_add(scope, session_id, {
                "messages": self._queued(parsed), "user_id": scope.user_id,
                "agent_id": scope.agent_id, "session_id": session_id,
                "metadata": redact_json(meta, self.privacy), "infer": infer,
                "timestamp": said_at.isoformat(), "idempotency_key": idempotency_key,
            })
            return []
        if idempotency_key is not None:
            done = self.store.find_by_idempotency_key(scope, idempotency_key)
            if done:
                return [Event(action=Action.NOOP, memory=m, reason="idempotent replay") for m in done]
        self.sessions.before_add(scope, session_id)
        meta = redact_json(meta, self.privacy)
        paused = self.is_paused(scope.user_id)
        if not infer:
            if paused:
                log.debug("memory paused for a user: %d verbatim messages not stored", len(parsed))
                return []
            events = self._add_turns(scope, parsed, session_id, meta, said_at, idempotency_key)
            return self.sessions.after_add(scope, parsed, session_id, events)
        # control commands ("forget what I said about X", "暂停记忆"…) run first and are
        # never stored; while paused nothing is extracted and working memory keeps nothing
        commanded: list[Event] = []
        kept: list[Message] = []
        events: list[Event] = []
        rules: list[Candidate] = []
        local: datetime | None = None  # when it was said on the user's clock, read once needed
        for message in parsed:
            text = message.content
            if message.role == "user":
                commands, text = control.split_commands(text)
                for command in commands:
                    commanded += self._command(scope, command, session_id)
                    if command.name in ("pause", "resume"):
                        paused = command.name == "pause"
            if paused or not text.strip():
                continue
            kept.append(message if text == message.content else Message(role=message.role, content=text))
            if local is None:
                local = self._local(scope.user_id, timestamp if timestamp is not None else said_at)
            found = extract_candidates(text, role=message.role, now=local)
            rules += found
            for candidate in found:
                event = self._add_candidate(
                    scope, candidate, text, session_id, meta, said_at, idempotency_key
                )
                if event is not None:
                    events.append(event)
        if kept:  # the LLM (when configured): this turn now, or its batch when full
            events += self._llm_extract(scope, kept, rules, session_id, meta, said_at, idempotency_key)
        if paused and not kept and not commanded:
            log.debug("memory paused for a user: %d messages not stored", len(parsed))
            return []
        return commanded + self.sessions.after_add(scope, kept, session_id, events)

    def _llm_extract(
        self, scope: Scope, kept: list[Message], rules: list[Candidate], session_id: str | None,
        meta: dict[str, Any], said_at: datetime, idempotency_key: str | None,
    ) -> list[Event]:
        """LLM extraction of one turn (``llm_extraction``): per turn now, or batched (engram.queue)."""
        mode = self.llm_tasks.mode
        if mode == "batch" and not self.queue.supported:
            mode = "per_turn"  # a store without a jobs table cannot hold turns for a batch
        if mode == "per_turn":
            said = " ".join(m.content for m in kept if m.role == "user")
            found = self.llm_tasks.extract(scope, [kept], [said_at], rules)
            events = [
                self._add_candidate(scope, candidate, said, session_id, meta, said_at, idempotency_key)
                for candidate, _ in found
            ]
            return [e for e in events if e is not None]
        if mode == "batch" and self.queue.supported:
            self.queue.buffer_turn(scope, session_id, {
                "messages": self._queued(kept), "said_at": said_at.isoformat(), "metadata": meta,
            })
            job_id = self.queue.gather(scope, session_id, self.settings.llm_batch_turns)
            return self.queue.run_now(job_id) if job_id is not None else []
        return []

    def _queued(self, messages: Sequence[Message]) -> list[dict[str, Any]]:
        """Messages as a queued job keeps them: redacted, since the queue is in the database."""
        return [{"role": m.role, "content": redact(m.content, self.privacy)} for m in messages]

    def _run_add_job(self, payload: dict[str, Any]) -> list[Event]:
        """A background `add` (engram.queue), as it was queued."""
        args = dict(payload)
        args["timestamp"] = datetime.fromisoformat(args["timestamp"])
        return self.add(args.pop("messages"), **args)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait for background work: queued adds and batched LLM extraction (waiting turns are
        extracted now). True when all done, False when `timeout` seconds ran out first."""
        return self.queue.flush(timeout)

    @property
    def llm(self) -> Any:
        """The configured chat client (`OpenAICompatLLM`), or None: engram then runs on rules."""
        return self.llm_tasks.client

    def llm_usage(self) -> dict[str, Any]:
        """LLM calls, failures, tokens and cost (total, per user) and what each task did."""
        return self.llm_tasks.usage()

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
            if self.is_paused(scope.user_id):
                continue  # as `add`: nothing is stored while paused
            items = self._turn_items(
                scope, _messages(messages), redact_identifier(entry.get("session_id"), self.privacy, scope.user_id),
                redact_json(_metadata(entry.get("metadata")), self.privacy), _timestamp(entry.get("timestamp")),
            )
            key = redact_identifier(entry.get("idempotency_key"), self.privacy, scope.user_id)
            records += [self._record(i, None, key) for i in items]
        self._embed_records(records)
        self.store.write(inserts=records, events=[HistoryEvent.of(r.item, "ADD", None, "bulk ingest") for r in records])
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
            inserts=records, events=[HistoryEvent.of(r.item, "ADD", None, "stored verbatim") for r in records]
        )
        return [Event(action=Action.ADD, memory=r.item, reason="stored verbatim") for r in records]

    def _add_candidate(
        self, scope: Scope, candidate: Candidate, said: str, session_id: str | None,
        metadata: dict[str, Any], said_at: datetime, idempotency_key: str | None,
    ) -> Event | None:
        safe = safe_candidate(candidate, said, self.privacy)  # engram.sanitize: no secret gets through
        if safe is None:
            return None
        candidate = safe
        said = redact(said, self.privacy)  # it only feeds the reason recorded in history
        now = utcnow()
        item = MemoryItem(
            user_id=scope.user_id, agent_id=scope.agent_id, session_id=session_id,
            content=candidate.content, kind=candidate.kind, language=candidate.language,
            key=candidate.key, value=candidate.value, importance=candidate.importance,
            confidence=candidate.confidence, source=candidate.source,
            metadata={**metadata, **({"polarity": candidate.polarity} if candidate.polarity else {})},
            entities=candidate.entities, due_at=candidate.due_at, recurrence=candidate.recurrence,
            created_at=said_at, updated_at=now, valid_from=candidate.valid_from or said_at,
            embedding_model=self.embedder.name,  # embedded below unless it is a restatement
        )
        record = self._record(item, None, idempotency_key)
        live = _LIVE_FILTERS

        def similar() -> list[tuple[MemoryItem, float]]:
            self._embed_records([record])
            return self._similar(scope, candidate, record, live)

        decision = decide(
            candidate,
            said=said,
            exact=self.store.find_by_hash(scope, record.content_hash, live),
            same_key=lambda: self.store.find_by_key(scope, candidate.key, live),
            similar=similar,
            duplicate_similarity=self.settings.duplicate_similarity,
            judge=self.llm_tasks.judge(scope),
            grey_zone=self.settings.llm_grey_zone,
            overlap=self.settings.merge_overlap,
        )
        if record.embedding is None and decision.action is not Action.NOOP:
            self._embed_records([record])  # it is stored (a NOOP only reinforces the old one)
        log.debug("reconcile %s: %s (%s)", candidate.kind, decision.action, decision.reason)
        event = self._apply(decision, record, candidate, now, session_id)
        target = decision.target
        if (
            decision.action is Action.NOOP and target is not None and target.status is Status.DISPUTED
            and signals_change(said)
        ):  # "I don't like coffee anymore" restates one side of a dispute: the user settled it
            settled = disputes.resolve(self, target.id, keep=target.id)
            kept = next((e.memory for e in settled if e.action is Action.RESOLVE), event.memory)
            return Event(action=Action.RESOLVE, memory=kept, reason=f"dispute settled by a restatement: {decision.reason}")
        return event

    def _similar(
        self, scope: Scope, candidate: Candidate, record: Record, filters: Filters
    ) -> list[tuple[MemoryItem, float]]:
        """Close neighbours of a candidate: near-duplicates, and for the LLM judge (when one
        is configured) its grey zone. Only those are materialised."""
        floor = self.settings.duplicate_similarity
        if self.llm is not None and self.settings.llm_reconcile:
            # the judge also weighs close meanings in other words: every vector is read
            floor = min(floor, self.settings.llm_grey_zone)
            hits = self.store.dense_search(scope, record.embedding, filters, 3)
        else:  # a near-duplicate restates the words too (engram.text.restates)
            hits = self.store.restatements(scope, record.embedding, record.tokens, filters, 3)
            close = [i for i, score in hits if score >= floor]
            if close:  # checked on (kind, content) first: most close rows say something else
                words = content_words(candidate.content)
                texts = self.store.texts(close)
                hits = [
                    (i, score) for i, score in hits
                    if i in texts and same_statement(candidate, words, *texts[i], self.settings.merge_overlap)
                ]
        hits = [h for h in hits if h[1] >= floor]
        items = {m.id: m for m in self.store.get_many([h[0] for h in hits])}
        return [(items[i], score) for i, score in hits if i in items]

    def _apply(
        self, decision: Decision, record: Record, candidate: Candidate, now: datetime, session_id: str | None
    ) -> Event:
        item, target = record.item, decision.target
        if decision.action is Action.ADD:
            item, promoting = self._promoted(Action.ADD, item, None, session_id)
            record.item = item
            self.store.write(
                inserts=[record], events=[HistoryEvent.of(item, "ADD", None, decision.reason), *promoting]
            )
            return Event(action=Action.ADD, memory=item, reason=decision.reason)
        assert target is not None
        if decision.action is Action.UPDATE:  # refines the target (the LLM judge): same id, new text
            return self._refine(decision, target, candidate, now, session_id)
        if decision.action is Action.NOOP:
            reinforced = target.model_copy(
                update={
                    "strength": target.strength + 1.0,
                    "importance": max(target.importance, candidate.importance),
                    "updated_at": now,
                    "last_accessed": now,  # said again: a use (engram.lifecycle decay)
                }
            )
            reinforced, promoting = self._promoted(Action.NOOP, reinforced, None, session_id)
            self.store.write(updates=[self._record(reinforced)], events=promoting)
            return Event(action=Action.NOOP, memory=reinforced, reason=decision.reason)
        if decision.action is Action.SUPERSEDE:
            old = target.model_copy(
                update={"status": Status.SUPERSEDED, "superseded_by": item.id, "valid_to": item.valid_from, "updated_at": now}
            )
            item.supersedes = target.id
            item, promoting = self._promoted(Action.SUPERSEDE, item, target, session_id)
            record.item = item
            # superseding one side of a dispute settles it: the other side goes too
            partners = [
                p.model_copy(update={
                    "status": Status.SUPERSEDED, "superseded_by": item.id, "valid_to": item.valid_from,
                    "updated_at": now, "metadata": {k: v for k, v in p.metadata.items() if k != "disputes"},
                })
                for p in (disputes.dispute_group(self.store, target) if target.status is Status.DISPUTED else [])
                if p.id != target.id
            ]
            if partners:
                old.metadata = {k: v for k, v in old.metadata.items() if k != "disputes"}
            self.store.write(
                inserts=[record],
                updates=[self._record(old)] + [self._record(p) for p in partners],
                events=[
                    HistoryEvent.of(old, "SUPERSEDE", item.content, decision.reason, old_content=target.content,
                                  related_id=item.id),
                    HistoryEvent.of(item, "ADD", None, f"supersedes {target.id}: {decision.reason}",
                                  related_id=target.id),
                    *promoting,
                ] + [
                    HistoryEvent.of(p, "SUPERSEDE", None, "dispute settled by a later statement", related_id=item.id)
                    for p in partners
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
                HistoryEvent.of(old, "DISPUTE", item.content, decision.reason, old_content=target.content,
                              related_id=item.id),
                HistoryEvent.of(item, "DISPUTE", None, decision.reason, related_id=target.id),
            ],
        )
        return Event(action=Action.DISPUTE, memory=item, reason=decision.reason, previous=old)

    def _refine(
        self, decision: Decision, target: MemoryItem, candidate: Candidate, now: datetime, session_id: str | None
    ) -> Event:
        filtered = apply_privacy(decision.content or candidate.content, self.privacy)
        content = filtered.text if not filtered.dropped and filtered.text else target.content
        updated = target.model_copy(update={
            "content": content, "language": detect_language(content), "updated_at": now,
            "importance": max(target.importance, candidate.importance),
            "strength": target.strength + 1.0, "last_accessed": now,
        })
        updated, promoting = self._promoted(Action.UPDATE, updated, target, session_id)
        record = self._record(updated)
        self._embed_records([record])
        self.store.write(
            updates=[record],
            events=[HistoryEvent.of(updated, "UPDATE", content, decision.reason, old_content=target.content),
                    *promoting],
        )
        return Event(action=Action.UPDATE, memory=updated, reason=decision.reason, previous=target)

    def _promoted(
        self, action: Action, item: MemoryItem, previous: MemoryItem | None, session_id: str | None
    ) -> tuple[MemoryItem, list[HistoryEvent]]:
        """`item` as it is written: long-term when `engram.capsule.promotion` says so, with
        the PROMOTE history row to write in the same transaction."""
        found = promotion(action, item, previous, session_id)
        if found is None:
            return item, []
        promoted, reason = found
        log.debug("promoted %s to long_term: %s", promoted.id, reason)
        return promoted, [HistoryEvent.of(promoted, "PROMOTE", None, reason)]

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
        name = self.embedder.name
        for record, vector in zip(records, vectors, strict=True):
            record.embedding = vector
            if record.item.embedding_model != name:  # (a validated assignment)
                record.item.embedding_model = name

    # -- reading ---------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        user_id: str,
        agent_id: str | None = None,
        limit: int | None = None,
        filters: Filters | Mapping[str, Any] | None = None,
        now: datetime | None = None,
    ) -> list[SearchResult]:
        """The memories most relevant to `query`, best first, each with its score parts.

        Live memories by default (active and disputed); a disputed one comes with a
        `clarification`: the question to ask before relying on it (`resolve` settles it).
        While the user's memory is paused, searching writes nothing (no access counts).
        A query that names a time ("last May", "去年") favours memories said then
        (`add(..., timestamp=...)`); `now` is the moment relative dates in the query are
        read against; default: now.
        """
        scope = _scope(user_id, agent_id)
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("query must be a non-empty string")
        limit = self.settings.search_limit if limit is None else limit
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise InvalidInput(f"limit must be a positive integer, not {limit!r}")
        if now is not None and not isinstance(now, datetime):
            raise InvalidInput(f"now must be a datetime, not {now!r}")
        at = utcnow()
        reference = at if now is None else as_utc(now)
        if when.mentions_time(query):  # its days are the user's ("yesterday" in Shanghai)
            reference = self._local(scope.user_id, at if now is None else now)
        results = self.retriever.search(scope, query, _live(_filters(filters)), limit, at, reference)
        if self.settings.reinforce and results and not self.is_paused(scope.user_id):
            self.store.record_access([r.memory.id for r in results], at)
        for result in results:
            if result.memory.status is Status.DISPUTED:
                result.clarification = self._shown_clarification(
                    disputes.clarification_for(self.store, result.memory)
                )
            result.memory = self._shown(result.memory)
        return results

    def _shown_clarification(self, clar: Clarification | None) -> Clarification | None:
        if clar is None:
            return None
        return clar.model_copy(update={
            "question": redact(clar.question, self.privacy),
            "contents": [redact(c, self.privacy) for c in clar.contents],
        })

    def _shown(self, item: MemoryItem) -> MemoryItem:
        """Redact again on the way out (memories stored before a policy change)."""
        version = (item.id, item.updated_at)
        if version in self._clean_versions:
            return item
        changes: dict[str, Any] = {}
        clean = redact(item.content, self.privacy)
        if clean != item.content:
            changes["content"] = clean
        if item.value and (value := redact(item.value, self.privacy)) != item.value:
            changes["value"] = value
        if item.metadata and (meta := redact_json(item.metadata, self.privacy)) != item.metadata:
            changes["metadata"] = meta
        if item.entities and (entities := redact_json(item.entities, self.privacy)) != item.entities:
            changes["entities"] = entities
        if changes:
            return item.model_copy(update=changes)
        if len(self._clean_versions) >= _CLEAN_VERSIONS_KEPT:
            self._clean_versions.clear()
        self._clean_versions.add(version)
        return item

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
        """Memories of a scope, newest first: live ones (active and disputed) unless `filters`
        say otherwise (``{"status": []}``: every status; ``as_of`` adds superseded versions)."""
        scope = _scope(user_id, agent_id)
        if limit is not None and (not isinstance(limit, int) or limit < 1):
            raise InvalidInput(f"limit must be a positive integer or None, not {limit!r}")
        items = self.store.list(scope, _live(_filters(filters)), limit=limit, offset=offset)
        return [self._shown(i) for i in items]

    def history(self, memory_id: str) -> list[HistoryEntry]:
        if not isinstance(memory_id, str) or not memory_id:
            raise InvalidInput("memory id must be a non-empty string")
        entries = self.store.history(memory_id)
        if not entries and self.store.get(memory_id) is None:
            raise NotFound(f"no memory with id {memory_id!r}")
        return [
            e.model_copy(update={
                "old_content": redact(e.old_content, self.privacy) if e.old_content else e.old_content,
                "new_content": redact(e.new_content, self.privacy) if e.new_content else e.new_content,
                "reason": redact(e.reason, self.privacy),
            })
            for e in entries
        ]

    # -- control ---------------------------------------------------------------------
    def update(
        self, memory_id: str, content: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> Event:
        """Edit a memory's text and/or merge into its metadata; history keeps the old text."""
        if content is None and metadata is None:
            raise InvalidInput("nothing to update: give content and/or metadata")
        if content is not None and (not isinstance(content, str) or not content.strip()):
            raise InvalidInput("content must be a non-empty string")
        meta = redact_json(_metadata(metadata), self.privacy)
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
            events=[HistoryEvent.of(updated, "UPDATE", updated.content, "edited", old_content=current.content)],
        )
        return Event(action=Action.UPDATE, memory=updated, reason="edited", previous=current)

    def delete(self, memory_id: str) -> Event:
        """Delete for real: the text leaves every table and index; history keeps a contentless event."""
        current = self.store.get(memory_id) if isinstance(memory_id, str) else None
        if current is None:
            raise NotFound(f"no memory with id {memory_id!r}")
        scope = Scope(current.user_id, current.agent_id)
        events = self._delete_items(scope, [current], reason="deleted", cascade=True)
        return next(e for e in events if e.memory is not None and e.memory.id == memory_id)

    def delete_all(self, *, user_id: str, agent_id: str | None = None) -> int:
        """Delete every memory of a scope; returns how many were deleted."""
        return self.store.delete_scope(_scope(user_id, agent_id), utcnow())

    def reset(self) -> None:
        """Delete everything of every user (tests and demos)."""
        self.store.reset()

    # -- sessions, capsule, context (engram.session / engram.capsule) -----------------
    def session(self, user_id: str, session_id: str | None = None, *, agent_id: str | None = None) -> Session:
        """A conversation: resume `session_id`, else the user's open session, else a new one."""
        scope = _scope(user_id, agent_id)
        return self.sessions.open(scope, redact_identifier(session_id, self.privacy, scope.user_id))

    def end_session(
        self, user_id: str, session_id: str, *, agent_id: str | None = None, reason: str = "explicit"
    ) -> Delta:
        """End a session and compress its memories into a delta; safe to call twice or concurrently."""
        scope = _scope(user_id, agent_id)
        return self.sessions.end(scope, redact_identifier(session_id, self.privacy, scope.user_id), reason=reason)

    def compress(self, user_id: str, *, agent_id: str | None = None) -> Delta:
        """One delta of everything written since the last one (``compression = "task"``: call when a task is done)."""
        return self.capsules.compress_user(_scope(user_id, agent_id), reason="requested")

    def capsule(
        self, user_id: str, *, agent_id: str | None = None, budget: int | None = None,
        language: str | None = None,
    ) -> Capsule:
        """The user's long-term memory as a compact block within `budget` tokens (cached)."""
        scope = _scope(user_id, agent_id)
        self.sessions.expire_idle(scope)
        return self.capsules.capsule(scope, budget=budget, language=language)

    def context(
        self,
        query: str,
        *,
        user_id: str,
        agent_id: str | None = None,
        session_id: str | None = None,
        budget: int | None = None,
        limit: int | None = None,
        turns: bool = False,
        language: str | None = None,
    ) -> Context:
        """What to put in front of the LLM for this turn: capsule + relevant memories (+ turns)."""
        scope = _scope(user_id, agent_id)
        session_id = redact_identifier(session_id, self.privacy, scope.user_id)
        self.sessions.expire_idle(scope)
        if session_id is not None:
            self.sessions.activity(scope, session_id)
        return self.capsules.context(
            scope, query, session_id=session_id, budget=budget, limit=limit, turns=turns, language=language
        )

    # -- lifecycle and user control (engram.lifecycle, disputes, control, portability,
    #    reminders) -------------------------------------------------------------------
    def clarifications(
        self, *, user_id: str, agent_id: str | None = None, limit: int | None = None
    ) -> list[Clarification]:
        """Open questions about contradicting (disputed) memories, newest first."""
        scope = _scope(user_id, agent_id)
        found = disputes.clarifications(self.store, scope, limit=limit)
        return [c for c in (self._shown_clarification(x) for x in found) if c is not None]

    def resolve(self, memory_id: str, keep: str = "this") -> list[Event]:
        """Settle a dispute: keep "this" (= `memory_id`), "newer", "older", "both", "neither"
        or a memory id of the group; the others are superseded (history keeps all)."""
        return disputes.resolve(self, memory_id, keep)

    def maintain(
        self,
        user_id: str | None = None,
        *,
        now: datetime | None = None,
        progress: lifecycle.Progress | None = None,
    ) -> lifecycle.MaintenanceReport:
        """Archive decayed memories, enforce capacity, merge near-duplicates (one user or all)."""
        if user_id is not None:
            _scope(user_id)
        return lifecycle.maintain(self, user_id=user_id, now=None if now is None else _timestamp(now),
                                  progress=progress)

    def restore(self, memory_id: str) -> list[Event]:
        """Bring an archived memory back (for a merge: every source back, the summary gone)."""
        return lifecycle.restore(self, memory_id)

    def pause(self, user_id: str) -> None:
        """Stop remembering for this user (persisted): `add` stores nothing until `resume`."""
        scope = _scope(user_id)
        self.store.set_state(scope.user_id, "paused", utcnow().isoformat(), utcnow())
        log.debug("memory paused for a user")

    def resume(self, user_id: str) -> None:
        scope = _scope(user_id)
        self.store.set_state(scope.user_id, "paused", None, utcnow())
        log.debug("memory resumed for a user")

    def is_paused(self, user_id: str) -> bool:
        return self.store.get_state(_scope(user_id).user_id, "paused") is not None

    def set_timezone(self, user_id: str, tz: str | None) -> None:
        """The user's IANA time zone ("Asia/Shanghai"), persisted: their days for "yesterday"
        and "上周" in searches, "Friday" in what they say, and reminders. None: back to the
        `timezone` setting."""
        scope = _scope(user_id)
        if tz is not None:
            if not isinstance(tz, str):
                raise InvalidInput(f"a time zone is an IANA name such as 'Asia/Shanghai', not {tz!r}")
            as_zone(tz)  # an unknown name: InvalidInput, nothing stored
        self.store.set_state(scope.user_id, "timezone", tz, utcnow())

    def timezone(self, user_id: str) -> tzinfo:
        """The user's time zone: their own (`set_timezone`), else the `timezone` setting, else UTC."""
        return as_zone(self._zone_name(user_id))

    def _zone_name(self, user_id: str) -> str | None:
        return self.store.get_state(_scope(user_id).user_id, "timezone") or self.settings.timezone

    def _local(self, user_id: str, moment: datetime) -> datetime:
        """`moment` on the user's clock: in their zone when one is set (`set_timezone` or the
        setting), else in the zone `moment` came with (UTC when naive)."""
        name = self._zone_name(user_id)
        if name is not None:
            return as_utc(moment).astimezone(as_zone(name))
        return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)

    def view(self, *, user_id: str, agent_id: str | None = None) -> dict[Kind, list[MemoryItem]]:
        """What is remembered about a user, grouped by kind (live memories, newest first)."""
        items = self.get_all(user_id=user_id, agent_id=agent_id, limit=None)
        grouped: dict[Kind, list[MemoryItem]] = {}
        for kind in Kind:
            chosen = [i for i in items if i.kind is kind]
            if chosen:
                grouped[kind] = chosen
        return grouped

    def forget(
        self, about: str, *, user_id: str, agent_id: str | None = None
    ) -> list[Event]:
        """Delete exactly the memories about `about` (every status), for real; one DELETE
        event per memory deleted ("forget what I said about X")."""
        scope = _scope(user_id, agent_id)
        if not isinstance(about, str) or not about.strip():
            raise InvalidInput("say what to forget: a non-empty topic")
        return self._delete_items(
            scope, self._about(scope, about), reason="forgotten on request", cascade=False, topic=about
        )

    def _about(self, scope: Scope, topic: str) -> list[MemoryItem]:
        everything = Filters(status=[])
        found = self.retriever.candidates(scope, topic, everything, max(200, self.settings.candidates))
        items = self.store.get_many(list(found))
        keys = [c.key for c in extract_candidates(topic, now=utcnow()) if c.key]
        if not keys and not topic.lower().startswith(("i ", "my ")) and not topic.startswith("我"):
            keys = [c.key for c in extract_candidates("I " + topic if topic.isascii() else "我" + topic) if c.key]
        for key in keys:
            items += self.store.find_by_key(scope, key, everything)
        unique = list({i.id: i for i in items}.values())
        return control.matching(unique, topic, self.settings.forget_min_overlap, keys)

    def delete_by_kind(self, kind: Kind | str, *, user_id: str, agent_id: str | None = None) -> list[Event]:
        """Delete every memory of one kind (every status), for real."""
        scope = _scope(user_id, agent_id)
        try:
            kind = Kind(kind)
        except ValueError:
            raise InvalidInput(f"unknown kind {kind!r}; expected one of {', '.join(k.value for k in Kind)}") from None
        items = self.store.list(scope, Filters(status=[], kind=[kind]))
        return self._delete_items(scope, items, reason=f"deleted: all {kind.value}", cascade=False)

    def _delete_items(
        self, scope: Scope, items: Sequence[MemoryItem], *, reason: str, cascade: bool,
        topic: str | None = None, undo: bool = False,
    ) -> list[Event]:
        """Delete `items` and every copy of their text (summaries that quote them, working-
        memory turns that say them); a dispute partner left alone becomes active again; with
        `undo` the versions they superseded come back."""
        if not items:
            return []
        store, now = self.store, utcnow()
        ids, restore_sources = lifecycle.deletion_plan(store, scope, [i.id for i in items], cascade_summaries=cascade)
        doomed = {i.id: i for i in items}
        for extra in store.get_many([i for i in ids if i not in doomed]):
            doomed[extra.id] = extra
        gone = set(doomed)
        revive: list[Transition] = lifecycle.restore_transitions(restore_sources, now)
        for item in doomed.values():
            if item.status is Status.DISPUTED:
                for partner in disputes.dispute_group(store, item):
                    others = [m for m in disputes.dispute_group(store, partner) if m.id not in gone]
                    if partner.id not in gone and len(others) < 2:
                        revive.append(Transition(
                            memory_id=partner.id, status=Status.ACTIVE.value, action="RESOLVE",
                            reason="the statement it contradicted was deleted", at=now,
                            from_status=(Status.DISPUTED.value,), metadata={"disputes": None},
                        ))
            if undo and item.supersedes and item.supersedes not in gone:
                revive.append(Transition(
                    memory_id=item.supersedes, status=Status.ACTIVE.value, action="RESTORE",
                    reason="the statement that replaced it was withdrawn", at=now,
                    from_status=(Status.SUPERSEDED.value,), fields={"valid_to": None, "superseded_by": None},
                ))
        # working-memory turns that say it, and pending work that would say it again (a queued
        # background add, a turn waiting for batched LLM extraction), go first; `delete`
        # then compacts the file
        topics = [i.content for i in doomed.values()] + ([topic] if topic else [])
        threshold = self.settings.forget_min_overlap
        turn_ids = control.turns_matching(store.turns_rows(scope), topics, threshold)
        store.turns_delete(scope, turn_ids)
        jobs_list = getattr(store, "jobs_list", None)
        if jobs_list is not None:
            pending = [
                (job.id, "", _job_text(job.payload))
                for job in jobs_list(["queued", "waiting", "failed"], user_id=scope.user_id)
            ]
            for job_id in control.turns_matching(pending, topics, threshold):
                store.jobs_finish(job_id)  # type: ignore[attr-defined]
        store.delete(list(gone), [
            HistoryEvent(i, doomed[i].user_id, "DELETE", None, None, reason, now) for i in gone
        ])
        if revive:
            store.transition(revive)
        log.debug("deleted %d memories and %d working-memory turns (%s)", len(gone), len(turn_ids),
                 "forget" if topic else reason.split(":")[0])
        ordered = [doomed[i.id] for i in items] + [m for k, m in doomed.items() if k not in {i.id for i in items}]
        return [Event(action=Action.DELETE, memory=self._shown(m), reason=reason) for m in ordered]

    def _command(self, scope: Scope, command: Command, session_id: str | None) -> list[Event]:
        """Carry out a control command recognised in a user message."""
        name = command.name
        events: list[Event]
        if name == "pause":
            self.pause(scope.user_id)
            events = [Event(action=Action.PAUSE, memory=None, reason="memory paused")]
        elif name == "resume":
            self.resume(scope.user_id)
            events = [Event(action=Action.RESUME, memory=None, reason="memory resumed")]
        elif name == "view":
            items = self.get_all(user_id=scope.user_id, agent_id=scope.agent_id, limit=None)
            items = [i for i in items if i.kind is not Kind.TURN]
            if command.target:
                items = control.matching(items, command.target, self.settings.forget_min_overlap)
            events = [Event(action=Action.VIEW, memory=i, reason="remembered") for i in items]
        elif name == "forget":
            assert command.target
            events = self.forget(command.target, user_id=scope.user_id, agent_id=scope.agent_id)
        elif name == "forget_last":
            live = self.store.list(scope, Filters(
                status=[Status.ACTIVE, Status.DISPUTED], session_id=session_id,
            ), limit=50)
            events = self._delete_items(
                scope, control.latest([i for i in live if i.kind is not Kind.SUMMARY]),
                reason="withdrawn on request", cascade=False, undo=True,
            )
        elif name == "delete_kind":
            assert command.target
            events = self.delete_by_kind(command.target, user_id=scope.user_id, agent_id=scope.agent_id)
        elif name == "delete_all":
            items = self.store.list(scope, Filters(status=[]))
            self.delete_all(user_id=scope.user_id, agent_id=scope.agent_id)
            events = [Event(action=Action.DELETE, memory=self._shown(i), reason="deleted: everything") for i in items]
        else:  # pragma: no cover - parse_command only makes the names above
            raise InvalidInput(f"unknown command {name!r}")
        if not events:
            events = [Event(action=Action.NOOP, memory=None, reason="nothing matched")]
        command = command.model_copy(update={"message": control.reply(command, events)})
        return [e.model_copy(update={"command": command}) for e in events]

    def export(
        self,
        *,
        user_id: str,
        agent_id: str | None = None,
        format: str = "engram",
        history: bool = False,
        path: str | Path | None = None,
    ) -> dict[str, Any] | list[dict[str, Any]]:
        """A user's memories as engram JSON (lossless; `history` adds the audit trail) or an
        OptMem memory file; also written to `path` when given. See engram.portability."""
        data = portability.export_data(self, _scope(user_id, agent_id), format=format, history=history)
        if path is not None:
            Path(path).expanduser().write_text(
                json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
            )
        return data

    def import_(
        self,
        source: str | Path | Mapping[str, Any] | Sequence[Any],
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        on_conflict: str = "skip",
    ) -> portability.ImportReport:
        """Load an engram export or an OptMem file (a path, JSON text or parsed data);
        `user_id` imports into that user (required for OptMem files)."""
        if user_id is not None:
            _scope(user_id, agent_id)
        data = portability.load(source)
        return portability.import_data(self, data, user_id=user_id, agent_id=agent_id, on_conflict=on_conflict)

    def reminders(
        self,
        *,
        user_id: str,
        agent_id: str | None = None,
        now: datetime | None = None,
        horizon: timedelta | None = None,
        tz: Any = None,
    ) -> list[reminders.Reminder]:
        """Tasks due (or overdue) at `now` within `horizon` (default reminder_horizon_hours)."""
        scope = _scope(user_id, agent_id)
        if horizon is None:
            horizon = timedelta(hours=self.settings.reminder_horizon_hours)
        tasks = self.store.list(scope, Filters(status=[Status.ACTIVE, Status.DISPUTED], kind=[Kind.TASK]))
        zone = self.timezone(scope.user_id) if tz is None else tz
        found = reminders.due(tasks, None if now is None else _timestamp(now), horizon=horizon, tz=zone)
        for r in found:
            r.memory = self._shown(r.memory)
            r.text = redact(r.text, self.privacy)
        return found

    def complete(self, memory_id: str, *, now: datetime | None = None, tz: Any = None) -> Event:
        """Mark a task done (a recurring task: this occurrence)."""
        if tz is None and isinstance(memory_id, str) and (item := self.store.get(memory_id)) is not None:
            tz = self.timezone(item.user_id)
        return reminders.complete(self, memory_id, now=None if now is None else _timestamp(now), tz=tz)
