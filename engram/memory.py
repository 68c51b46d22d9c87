"""`Memory`: the public API. It validates, hands each call to the part that owns it, and owns
nothing else (docs/architecture.md has the map).

    add ──► engram.write: commands ─► extract ─► privacy ─► reconcile ─► store
    search ──► engram.read: retrieve ─► rescore ─► reinforce ─► show
    delete / forget ──► engram.deletion

Names follow mem0 where they mean the same thing so users can switch.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from contextlib import nullcontext
from functools import partial
from datetime import datetime, timedelta, tzinfo
from pathlib import Path
from typing import Any

from engram import blas, deletion, disputes, lifecycle, portability, read, reminders, user_state
from engram import reembed as vectors
from engram import validate as check
from engram.capsule import Capsule, CapsuleEngine, Context, Delta
from engram.commands import Commands
from engram.compat.mem0 import config_from_mem0
from engram.config import Settings
from engram.context import build_context
from engram.display import Display
from engram.embed_behind import EmbedBehind
from engram.errors import InvalidInput, NotFound
from engram.graph.view import UserGraph, user_graph
from engram.llm import LLMTasks
from engram.models import (
    Action, Clarification, Event, Filters, HistoryEntry, Kind, MemoryItem, SearchResult, Source, utcnow,
)
from engram.privacy import PrivacyPolicy
from engram.providers.embedders import Embedder
from engram.queue import JobQueue
from engram.records import make_record
from engram.retrieve import Retriever
from engram.sanitize import redact_identifier, redact_json
from engram.services import Services, Shared
from engram.session import Session, SessionManager
from engram.store.base import Record, Scope, Store
from engram.validate import MessagesInput
from engram.write import Said, Writer

log = logging.getLogger("engram")

_scope = check.scope


class Memory:
    """Long-term memory for agents, scoped per user (and optionally per agent).

    >>> m = Memory(path="/tmp/demo.db")
    >>> m.add("I live in Berlin", user_id="alice")
    >>> m.search("where does she live?", user_id="alice")
    """

    def __init__(
        self, path: str | Path | None = None, *, settings: Settings | None = None,
        embedder: Embedder | str | None = None, store: Store | str | None = None, llm: Any = None,
        **overrides: Any,
    ) -> None:
        """`llm`: an `OpenAICompatLLM` to use instead of the configured one (``llm_*`` settings).
        `store`: a `Store`, or a store URL (``postgresql://…``; default: the ``store`` setting).
        `embedder`: an object, or a configured one by name (``"use"``, ``"wordllama"``, ``"openai"``)."""
        if isinstance(embedder, str):
            overrides["embedder"], embedder = check.embedder_name(embedder), None
        if settings is None:
            if path is not None:
                overrides["path"] = path
            settings = Settings(**overrides)
        elif path is not None or overrides:
            settings = settings.model_copy(update={**overrides, **({"path": Path(path)} if path else {})})
        opened, embedder = vectors.opened(settings, store, embedder)  # a wordllama store keeps wordllama
        privacy = PrivacyPolicy(**settings.privacy)
        self.services = Services(
            store=opened, embedder=embedder, settings=settings, privacy=privacy, display=Display(privacy),
        )
        where = getattr(self.store, "path", settings.path)  # a file, or a URL without its password
        vectors.check(self.store, embedder, where)  # another embedder's vectors: say what to do
        self.behind = EmbedBehind(self.services, enabled=settings.embed_behind)  # vectors and links after the commit
        self.services.settle = partial(self.behind.settle, vectors=False)  # a deletion reads the graph
        self.behind.start()  # its worker first embeds what a crash left without vectors
        self.retriever = Retriever(self.store, self.embedder, settings, settle=self.behind.settle)
        self.llm_tasks = LLMTasks(self.services, llm)  # no client (nor openai import) unless configured
        self.capsules = CapsuleEngine(self.services, self.retriever, compress_with=self.llm_tasks.compress)
        self.queue = JobQueue(  # background jobs; resumes what a crashed process left
            self.services, self.llm_tasks, run_add=lambda payload: self._run_add_job(payload),
            add_candidate=lambda *args: self.writer.add_batched(*args),
        )
        self.commands = Commands(  # "forget …", "暂停记忆", "Delete all my memories." (asked back first)
            self.services, forget=self.forget, delete_by_kind=self.delete_by_kind, get_all=self.get_all,
        )
        self.writer = Writer(self.services, self.llm_tasks, self.queue, self.commands.run, self.behind)
        self.sessions = SessionManager(  # `memory.sessions.clock` is injectable
            self.services, self.capsules, add=self.add, context=self.context, flush_group=self.queue.flush_group,
        )
        self.queue.resume()
        self._blas = blas.Hold(settings.blas_one_thread)  # one BLAS thread until `close` (engram.blas)

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Memory:
        """mem0's ``Memory.from_config({"llm": …, "embedder": …, "vector_store": …})``: what maps
        becomes engram settings (engram.compat.mem0); flat engram settings work too."""
        return cls(**config_from_mem0(config, Settings.model_fields))

    # the services every part shares (engram.services); assigning one replaces it for all
    settings: Shared[Settings] = Shared()
    store: Shared[Store] = Shared()
    embedder: Shared[Embedder] = Shared()

    @property
    def privacy(self) -> PrivacyPolicy:
        return self.services.privacy

    @privacy.setter
    def privacy(self, policy: PrivacyPolicy) -> None:
        """A new policy: for what is stored from now on, and for everything shown."""
        self.services.privacy = policy
        self.services.display = Display(policy)

    def __enter__(self) -> Memory:  # (a context manager: closed on exit)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop the workers (queued jobs stay on disk, pending vectors are made), close the store."""
        self.queue.close()
        self.behind.close()
        self.store.close()
        self._blas.release()

    # -- writing (engram.write) ------------------------------------------------------
    def add(
        self, messages: MessagesInput, *, user_id: str, agent_id: str | None = None,
        session_id: str | None = None, metadata: Mapping[str, Any] | None = None, infer: bool = True,
        timestamp: datetime | None = None, idempotency_key: str | None = None, background: bool = False,
        run_id: str | None = None,
    ) -> list[Event]:
        """Remember what matters in `messages`; returns what happened to each memory.

        With `infer=False` every message is stored verbatim as a `turn`. `timestamp` says when it
        was said (imports, replays); default now. A repeated `idempotency_key` in the same scope
        returns NOOPs. `background=True` validates, queues the work durably (a crash cannot lose it)
        and returns ``[]`` at once; a worker thread does the rest, `flush()` waits. `run_id` is
        mem0's name for `session_id`. Without an LLM, all an add writes commits at once, or nothing.
        """
        scope = _scope(user_id, agent_id)
        session_id = check.alias("session_id", session_id, "run_id", run_id)
        parsed = check.messages(messages, self.settings.max_message_chars)
        meta = check.metadata(metadata, self.settings.max_metadata_bytes)
        said_at = check.timestamp(timestamp)
        check.session_id(session_id), check.optional_id("idempotency_key", idempotency_key)
        session_id = redact_identifier(session_id, self.privacy, scope.user_id)  # stored, queued and compared
        idempotency_key = redact_identifier(idempotency_key, self.privacy, scope.user_id)
        if background and self.queue.supported:
            self.queue.submit_add(scope, session_id, {
                "messages": self.writer.queued(parsed), "user_id": scope.user_id, "agent_id": scope.agent_id,
                "session_id": session_id, "metadata": redact_json(meta, self.privacy), "infer": infer,
                "timestamp": said_at.isoformat(), "idempotency_key": idempotency_key,
            })
            return []
        with getattr(self.store, "reading", nullcontext)():  # other processes' commits looked for once
            if idempotency_key is not None:
                done = self.store.find_by_idempotency_key(scope, idempotency_key)
                if done:
                    done.sort(key=lambda m: m.source is Source.EPISODE)  # in the order the first call gave
                    return [Event(action=Action.NOOP, memory=m, reason="idempotent replay") for m in done]
            self.sessions.before_add(scope, session_id)
            said = Said(scope, session_id, redact_json(meta, self.privacy), said_at, idempotency_key)
            paused = self.is_paused(scope.user_id)
            if not infer and paused:
                log.debug("memory paused for a user: %d verbatim messages not stored", len(parsed))
                return []
            with self.writer.one_write():  # all of this add's writes in one commit
                if not infer:
                    kept, events = parsed, self.writer.add_turns(said, parsed)
                elif (outcome := self.writer.add(said, parsed, paused=paused, clock_at=timestamp or said_at)).nothing:
                    return []
                else:
                    kept, events = outcome.kept, outcome.commanded + outcome.events
                self.sessions.after_add(scope, kept, session_id, events)
            self.sessions.after_commit(scope, kept, session_id)  # a goodbye ends the session
            return events

    def _run_add_job(self, payload: dict[str, Any]) -> list[Event]:
        """A background `add` (engram.queue), as it was queued."""
        args = dict(payload)
        args["timestamp"] = datetime.fromisoformat(args["timestamp"])
        return self.add(args.pop("messages"), **args)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait for background work: queued adds and batched LLM extraction (waiting turns are
        extracted now), then the vectors written behind. True when all done, False when
        `timeout` seconds ran out first (in either)."""
        return self.queue.flush(timeout) and self.behind.flush(timeout)

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
        paused: dict[str, bool] = {}  # read once per user of the batch (a query each on a server)
        for entry in check.batch(batch):
            messages = entry.pop("messages")
            if entry.pop("infer", False):
                events += self.add(messages, **entry)
                continue
            scope = _scope(entry.get("user_id"), entry.get("agent_id"))
            if scope.user_id not in paused:
                paused[scope.user_id] = self.is_paused(scope.user_id)
            if paused[scope.user_id]:
                continue  # as `add`: nothing is stored while paused
            said = Said(
                scope, redact_identifier(check.session_id(entry.get("session_id")), self.privacy, scope.user_id),
                redact_json(check.metadata(entry.get("metadata"), self.settings.max_metadata_bytes), self.privacy),
                check.timestamp(entry.get("timestamp")),
            )
            items = self.writer.turn_items(said, check.messages(messages, self.settings.max_message_chars))
            key = check.optional_id("idempotency_key", entry.get("idempotency_key"))
            key = redact_identifier(key, self.privacy, scope.user_id)
            records += [make_record(i, None, key) for i in items]
        return events + self.writer.store_verbatim(records, "bulk ingest", behind=False)

    # -- reading (engram.read) ---------------------------------------------------------
    def search(
        self, query: str, *, user_id: str, agent_id: str | None = None, limit: int | None = None,
        filters: Filters | Mapping[str, Any] | None = None, now: datetime | None = None,
        threshold: float | None = None, top_k: int | None = None,
    ) -> list[SearchResult]:
        """The memories most relevant to `query`, best first, each with its score parts.

        Live memories by default (active and disputed); a disputed one comes with a
        `clarification`: the question to ask before relying on it (`resolve` settles it).
        While the user's memory is paused, searching writes nothing (no access counts).
        A query that names a time ("last May", "去年") favours memories said then
        (`add(..., timestamp=...)`); `now` is the moment relative dates in the query are
        read against; default: now. `threshold` keeps results whose absolute `relevance`
        (0-1, comparable across queries) reaches it; `top_k` is mem0's name for `limit`.
        """
        scope = _scope(user_id, agent_id)
        check.query(query, self.settings.max_query_chars)
        limit = check.alias("limit", limit, "top_k", top_k)
        limit = check.positive_int("limit", self.settings.search_limit if limit is None else limit)
        now = None if now is None else check.moment(now, "now")
        return read.search(self.services, self.retriever, scope, query, check.filters(filters), limit, now,
                           check.fraction("threshold", threshold))

    def get(self, memory_id: str) -> MemoryItem:
        item = self.store.get(check.memory_id(memory_id))
        if item is None:
            raise NotFound(f"no memory with id {memory_id!r}")
        return self.services.display.item(item)

    def get_all(
        self, *, user_id: str, agent_id: str | None = None,
        filters: Filters | Mapping[str, Any] | None = None, limit: int | None = 100, offset: int = 0,
    ) -> list[MemoryItem]:
        """Memories of a scope, newest first: live ones (active and disputed) unless `filters`
        say otherwise (``{"status": []}``: every status; ``as_of`` adds superseded versions)."""
        scope = _scope(user_id, agent_id)
        limit = None if limit is None else check.positive_int("limit", limit, 2**62)
        items = self.store.list(scope, read.live(check.filters(filters)), limit=limit, offset=check.offset(offset))
        return [self.services.display.item(i) for i in items]

    def graph(self, user_id: str) -> UserGraph:
        """The user's entities and relations (engram.graph.view), with the trace of resolution."""
        self.behind.settle(user := _scope(user_id, None).user_id, vectors=False)  # links still to make
        return user_graph(self.store, user)

    def provenance(self, memory_id: str) -> list[MemoryItem]:
        """The episodes a memory was drawn from: what the user said that made engram think so."""
        return read.provenance(self.services, self.get(memory_id))

    def count(
        self, *, user_id: str, agent_id: str | None = None, filters: Filters | Mapping[str, Any] | None = None
    ) -> int:
        """How many memories `get_all` would list with no limit."""
        return self.store.count(_scope(user_id, agent_id), read.live(check.filters(filters)))

    def history(self, memory_id: str) -> list[HistoryEntry]:
        entries = self.store.history(check.memory_id(memory_id))
        if not entries and self.store.get(memory_id) is None:
            raise NotFound(f"no memory with id {memory_id!r}")
        return [self.services.display.history_entry(e) for e in entries]

    # -- control ---------------------------------------------------------------------
    def update(
        self, memory_id: str, content: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> Event:
        """Edit a memory's text and/or merge into its metadata; history keeps the old text."""
        if content is None and metadata is None:
            raise InvalidInput("nothing to update: give content and/or metadata")
        if content is not None:
            check.messages(content, self.settings.max_message_chars)
        return self.writer.edit(memory_id, content, check.metadata(metadata, self.settings.max_metadata_bytes))

    def delete(self, memory_id: str) -> Event:
        """Delete for real: the text leaves every table and index; history keeps a contentless event."""
        current = self.store.get(memory_id) if isinstance(memory_id, str) else None
        if current is None:
            raise NotFound(f"no memory with id {memory_id!r}")
        scope = Scope(current.user_id, current.agent_id)
        events = deletion.delete_items(self.services, scope, [current], reason="deleted", cascade=True)
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
        scope, session_id = _scope(user_id, agent_id), check.session_id(session_id)
        return self.sessions.open(scope, redact_identifier(session_id, self.privacy, scope.user_id))

    def end_session(
        self, user_id: str, session_id: str, *, agent_id: str | None = None, reason: str = "explicit"
    ) -> Delta:
        """End a session and compress its memories into a delta; safe to call twice or concurrently."""
        scope, session_id = _scope(user_id, agent_id), check.required_id("session_id", session_id)
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
        budget, language = check.budget(budget), check.language(language)
        self.sessions.expire_idle(scope, reading=True)
        return self.capsules.capsule(scope, budget=budget, language=language)

    def context(
        self, query: str, *, user_id: str, agent_id: str | None = None, session_id: str | None = None,
        budget: int | None = None, limit: int | None = None, turns: bool = False, language: str | None = None,
    ) -> Context:
        """What to put in front of the LLM for this turn: capsule + relevant memories (+ turns)."""
        scope = _scope(user_id, agent_id)
        check.query(query, self.settings.max_query_chars), check.session_id(session_id), check.language(language)
        budget = check.budget(budget)
        limit = None if limit is None else check.positive_int("limit", limit)
        session_id = redact_identifier(session_id, self.privacy, scope.user_id)
        self.sessions.expire_idle(scope, reading=True)
        if session_id is not None:
            self.sessions.activity(scope, session_id)
        return build_context(
            self.capsules, scope, query, session_id=session_id, budget=budget, limit=limit, turns=turns,
            language=language,
        )

    # -- lifecycle and user control (engram.lifecycle, disputes, control, portability,
    #    reminders) -------------------------------------------------------------------
    def clarifications(
        self, *, user_id: str, agent_id: str | None = None, limit: int | None = None
    ) -> list[Clarification]:
        """Open questions about contradicting (disputed) memories, newest first."""
        scope, limit = _scope(user_id, agent_id), None if limit is None else check.positive_int("limit", limit)
        found = disputes.clarifications(self.store, scope, limit=limit)
        return [c for c in (self.services.display.clarification(x) for x in found) if c is not None]

    def resolve(self, memory_id: str, keep: str = "this") -> list[Event]:
        """Settle a dispute: keep "this" (= `memory_id`), "newer", "older", "both", "neither"
        or a memory id of the group; the others are superseded (history keeps all)."""
        return disputes.resolve(self.store, self.services.display, memory_id, keep)

    def maintain(
        self, user_id: str | None = None, *, now: datetime | None = None,
        progress: lifecycle.Progress | None = None,
    ) -> lifecycle.MaintenanceReport:
        """Archive decayed memories, enforce capacity, merge near-duplicates (one user or all)."""
        if user_id is not None:
            _scope(user_id)
        return lifecycle.maintain(self.services, user_id=user_id, now=None if now is None else check.timestamp(now),
                                  progress=progress)

    def restore(self, memory_id: str) -> list[Event]:
        """Bring an archived memory back (for a merge: every source back, the summary gone)."""
        return lifecycle.restore(self.store, self.services.display, memory_id)

    def pause(self, user_id: str) -> None:
        """Stop remembering for this user (persisted): `add` stores nothing until `resume`."""
        user_state.set_paused(self.store, _scope(user_id).user_id, True)

    def resume(self, user_id: str) -> None:
        user_state.set_paused(self.store, _scope(user_id).user_id, False)

    def is_paused(self, user_id: str) -> bool:
        return user_state.is_paused(self.store, _scope(user_id).user_id)

    def set_timezone(self, user_id: str, tz: str | None) -> None:
        """The user's IANA time zone ("Asia/Shanghai"), persisted: their days for "yesterday"
        and "上周" in searches, "Friday" in what they say, and reminders. None: back to the
        `timezone` setting."""
        user_state.set_zone(self.store, _scope(user_id).user_id, tz)

    def timezone(self, user_id: str) -> tzinfo:
        """The user's time zone: their own (`set_timezone`), else the `timezone` setting, else the
        system's ($TZ, /etc/localtime), else UTC."""
        return user_state.zone(self.store, self.settings, _scope(user_id).user_id)

    def view(self, *, user_id: str, agent_id: str | None = None) -> dict[Kind, list[MemoryItem]]:
        """What is remembered about a user, grouped by kind (live memories, newest first)."""
        items = self.get_all(user_id=user_id, agent_id=agent_id, limit=None)
        grouped = {kind: [i for i in items if i.kind is kind] for kind in Kind}
        return {kind: chosen for kind, chosen in grouped.items() if chosen}

    def forget(
        self, about: str, *, user_id: str, agent_id: str | None = None, dry_run: bool = False
    ) -> list[Any]:
        """Delete exactly the memories about `about` (every status), for real; one DELETE
        event per memory deleted ("forget what I said about X"). `dry_run`: the memories
        that would be deleted (`MemoryItem`s), deleting nothing."""
        scope = _scope(user_id, agent_id)
        check.query(about, self.settings.max_query_chars, "what to forget")
        found = deletion.about(self.services, self.retriever, scope, about)
        if dry_run:
            return [self.services.display.item(i) for i in found]
        return deletion.delete_items(
            self.services, scope, found, reason="forgotten on request", cascade=False, topic=about
        )

    def delete_by_kind(self, kind: Kind | str, *, user_id: str, agent_id: str | None = None) -> list[Event]:
        """Delete every memory of one kind (every status), for real."""
        scope = _scope(user_id, agent_id)
        try:
            kind = Kind(kind)
        except ValueError:
            raise InvalidInput(f"unknown kind {kind!r}; expected one of {', '.join(k.value for k in Kind)}") from None
        items = self.store.list(scope, Filters(status=[], kind=[kind]))
        items += deletion.episodes_of(self.services, items)  # what the user said that they came from
        return deletion.delete_items(self.services, scope, items, reason=f"deleted: all {kind.value}", cascade=False)

    def export(
        self, *, user_id: str, agent_id: str | None = None, format: str = "engram", history: bool = False,
        path: str | Path | None = None, progress: Any = None,
    ) -> dict[str, Any] | list[dict[str, Any]]:
        """A user's memories as engram JSON (lossless; `history` adds the audit trail) or an
        OptMem memory file; also written to `path` when given. See engram.portability."""
        scope = _scope(user_id, agent_id)
        self.behind.settle(scope.user_id)  # vectors and links still made behind the user's last writes
        data = portability.export_data(self.store, self.privacy, scope, format=format, history=history,
                                         progress=progress)
        if path is not None:
            Path(path).expanduser().write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        return data

    def import_(
        self, source: str | Path | Mapping[str, Any] | Sequence[Any], *, user_id: str | None = None,
        agent_id: str | None = None, on_conflict: str = "skip", progress: Any = None,
    ) -> portability.ImportReport:
        """Load an engram export or an OptMem file (a path, JSON text or parsed data);
        `user_id` imports into that user (required for OptMem files)."""
        if user_id is not None:
            _scope(user_id, agent_id)
        data = portability.load(source)
        return portability.import_data(self.services, data, user_id=user_id, agent_id=agent_id,
                                       on_conflict=on_conflict, progress=progress)

    def reminders(
        self, *, user_id: str, agent_id: str | None = None, now: datetime | None = None,
        horizon: timedelta | None = None, tz: Any = None,
    ) -> list[reminders.Reminder]:
        """Tasks due (or overdue) at `now` within `horizon` (default reminder_horizon_hours)."""
        scope = _scope(user_id, agent_id)
        now = None if now is None else check.timestamp(now)
        return reminders.due_for(self.services, scope, now=now, horizon=check.horizon(horizon), tz=check.zone(tz))

    def complete(self, memory_id: str, *, now: datetime | None = None, tz: Any = None) -> Event:
        """Mark a task done (a recurring task: this occurrence; `tz`: default the user's zone)."""
        return reminders.complete(self.services, memory_id, now=None if now is None else check.timestamp(now),
                                  tz=check.zone(tz))
