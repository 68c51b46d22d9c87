"""The `Store` protocol every backend implements, and the scope every call carries.

A store persists memories, their vectors, their lexical tokens and the history
in one transaction, and answers lexical and dense queries *inside* a scope.
It knows nothing of extraction or scoring policy.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

import numpy as np

from engram.errors import EngramError
from engram.models import Filters, HistoryEntry, MemoryItem, utcnow
from engram.store.graph import AliasRow, EdgeRow, EntityRow, GraphEvent, GraphSnapshot, MentionRow


class StoreError(EngramError):
    """A store cannot do what was asked (bad input, unknown id, broken file)."""


class StoreReadOnly(StoreError):
    """The store is read-only (file or folder not writable, or opened read-only): reads work."""


class StoreFull(StoreError):
    """The disk refused a write (no space, file size limit): the transaction was rolled back."""


class NotADatabase(StoreError):
    """The file is not an engram database: not SQLite, damaged, truncated, or someone else's."""


@dataclass(frozen=True, slots=True)
class Scope:
    """Who a memory belongs to. `agent_id=None` means every agent of the user."""

    user_id: str
    agent_id: str | None = None

    def __post_init__(self) -> None:
        _check_id("user_id", self.user_id)
        if self.agent_id is not None:
            _check_id("agent_id", self.agent_id)


def _check_id(name: str, value: object) -> None:
    """An id names one owner: not blank, no surrounding spaces (" bob" is not a second bob),
    no control characters or NUL, valid Unicode, at most 256 characters."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} must be a non-empty string")
    if value != value.strip():
        raise ValueError(f"{name} {value!r} starts or ends with whitespace")
    if len(value) > 256:
        raise ValueError(f"{name} is longer than 256 characters")
    if any(ord(c) < 32 or ord(c) == 127 or 0xD800 <= ord(c) <= 0xDFFF for c in value):
        raise ValueError(f"{name} {value!r} contains a control character or an invalid one")


# A record's tokens may end with context words, each behind this prefix: words that are not
# the memory's own but help find it (the question an episode answers). A backend indexes
# them in a weaker field of their own; ":" keeps FTS5 from matching them as plain words.
CONTEXT_PREFIX = "ctx:"


@dataclass(slots=True)
class Record:
    """A memory as written: the item plus what the indexes need."""

    item: MemoryItem
    embedding: np.ndarray | None
    tokens: list[str]
    content_hash: str
    idempotency_key: str | None = None


@dataclass(slots=True)
class HistoryEvent:
    memory_id: str
    user_id: str
    action: str
    old_content: str | None
    new_content: str | None
    reason: str
    at: datetime
    # the other memory this event concerns (supersede, dispute, merge, resolve): when
    # that one is deleted, this row loses its content and reason too
    related_id: str | None = None

    @classmethod
    def of(
        cls, item: MemoryItem, action: str, new_content: str | None, reason: str,
        *, old_content: str | None = None, related_id: str | None = None,
    ) -> HistoryEvent:
        """An event about `item` now. ADD and DISPUTE record the item's own text
        when no other new text is given."""
        if new_content is None and action in ("ADD", "DISPUTE"):
            new_content = item.content
        return cls(
            memory_id=item.id, user_id=item.user_id, action=action, old_content=old_content,
            new_content=new_content, reason=reason, at=utcnow(), related_id=related_id,
        )


@dataclass(frozen=True, slots=True)
class MemoryRow:
    """A memory's light columns, without vector or the full `MemoryItem` (10k rows in ms):
    what ranking (retrieval signals, capsule choice) and maintenance scan."""

    id: str
    agent_id: str | None
    content: str
    kind: str
    layer: str
    status: str
    key: str | None
    language: str
    importance: float
    strength: float
    access_count: int
    last_accessed: datetime | None
    created_at: datetime
    updated_at: datetime
    due_at: datetime | None
    recurrence: str | None
    supersedes: str | None
    superseded_by: str | None
    sources: tuple[str, ...]
    merged_kind: str | None  # metadata["merged_kind"] of merge summaries
    pinned: bool  # metadata["pinned"]: never archived or evicted, first in the capsule
    polarity: int  # metadata["polarity"]: -1 on a fact is "no longer" (engram.reconcile.negates)
    session_id: str | None = None  # None: added outside a session (mem0-style `add`)


# columns a Transition may set besides status (never content)
TRANSITION_FIELDS = frozenset(
    {"valid_to", "superseded_by", "supersedes", "importance", "last_accessed"}
)


@dataclass(slots=True)
class Transition:
    """A guarded status change: applied only if the memory is still in one of
    `from_status` (and, when `seen_updated_at`/`seen_last_accessed` are given,
    was not edited or used since it was read), so maintenance can run while
    the engine is in use without undoing anything done meanwhile.
    """

    memory_id: str
    status: str
    action: str  # history action written for it, e.g. ARCHIVE
    reason: str
    at: datetime
    from_status: tuple[str, ...] = ("active",)
    metadata: dict[str, Any] | None = None  # JSON merge patch (a None value removes the key)
    fields: dict[str, Any] | None = None  # subset of TRANSITION_FIELDS
    related_id: str | None = None
    guard: bool = False
    seen_updated_at: datetime | None = None
    seen_last_accessed: datetime | None = None


@dataclass(slots=True)
class TransitionGroup:
    """Transitions with the inserts and events that go with them (a merge: the summary,
    its sources archived); `atomic`: all of it or none."""

    transitions: Sequence[Transition]
    inserts: Sequence[Record] = ()
    events: Sequence[HistoryEvent] = ()
    atomic: bool = False


@dataclass(slots=True)
class SessionRecord:
    """A conversation's bookkeeping (no content): open while `ended_at` is None."""

    user_id: str
    session_id: str
    agent_id: str | None
    started_at: datetime
    last_active: datetime
    ended_at: datetime | None = None
    end_reason: str | None = None
    compressed_at: datetime | None = None
    summary_id: str | None = None


@dataclass(slots=True)
class TurnRecord:
    """One message of a session's working memory."""

    role: str
    content: str
    tokens: int
    created_at: datetime


class Store(Protocol):
    """Persistence and scoped queries; one implementation per backend."""

    def write(
        self,
        inserts: Sequence[Record] = (),
        updates: Sequence[Record] = (),
        events: Sequence[HistoryEvent] = (),
    ) -> None: ...

    def section(self, scope: Scope) -> AbstractContextManager[None]:
        """A critical section for `scope` across threads and processes: reconcile reads what
        is stored and writes its decision inside one, so two writers of one user cannot
        both decide against the same old state. Reentrant; reads inside see the latest commit."""
        ...

    def atomic(self, *, deferred: bool = False) -> AbstractContextManager[None]:
        """The store calls inside it are one transaction: all of them land, or none.
        `deferred`: whatever the transaction holds against other writers (SQLite: the file's
        one writer lock) is taken at the first write inside, not on entry; reads before it see
        the latest commits (a decision that must not go stale is made inside `section`)."""
        ...

    def get(self, memory_id: str) -> MemoryItem | None: ...

    def ids_with_prefix(self, prefix: str, limit: int = 2) -> list[str]: ...

    def vector_makers(self) -> set[tuple[str | None, int]]: ...

    def stale_vectors(self, model: str, dim: int, limit: int) -> list[str]: ...

    def count_stale_vectors(self, model: str, dim: int) -> int: ...

    def set_vectors(self, model: str, vectors: Sequence[tuple[str, str, Any]]) -> int:
        """Vectors of rows written without one, as (id, content hash, vector); a row whose text
        changed meanwhile, or that has a vector by now, keeps what it has. Optional: a store
        without it gets its vectors with the row (engram.embed_behind)."""
        ...

    def hold_vectors(self, user_id: str, vectors: Sequence[tuple[str, Any]]) -> bool:
        """Stand-in vectors (memory id, vector) for rows of the user still waiting for theirs,
        searched until `set_vectors` lands the real ones, never stored; False when none can be
        held. Optional (with `set_vectors`): without it a search makes the real vectors first."""
        ...

    def get_many(self, memory_ids: Sequence[str]) -> list[MemoryItem]: ...

    def signals(self, memory_ids: Sequence[str]) -> dict[str, MemoryRow | MemoryItem]:
        """What ranking reads of each memory (never to be modified by the caller)."""
        ...

    def list(
        self,
        scope: Scope,
        filters: Filters,
        *,
        limit: int | None = None,
        offset: int = 0,
        newest_first: bool = True,
    ) -> list[MemoryItem]: ...

    def count(self, scope: Scope, filters: Filters) -> int: ...

    def find_by_key(self, scope: Scope, key: str, filters: Filters) -> list[MemoryItem]: ...

    def find_by_hash(self, scope: Scope, content_hash: str, filters: Filters) -> list[MemoryItem]: ...

    def find_by_idempotency_key(self, scope: Scope, key: str) -> list[MemoryItem]: ...

    def lexical_search(
        self, scope: Scope, tokens: Sequence[str], filters: Filters, limit: int,
        weights: Sequence[float] | None = None, context_weight: float = 0.0,
    ) -> list[tuple[str, float]]:
        """Top `limit` (id, BM25) sharing a token; `context_weight`: how much the words of the
        turn a turn answers (and of the turns answering it) count."""
        ...

    def dense_search(
        self, scope: Scope, vector: np.ndarray, filters: Filters, limit: int, context_weight: float = 0.0
    ) -> list[tuple[str, float]]:
        """Top `limit` (id, cosine); with `context_weight`, a turn's score adds that share of the
        best cosine among the turn it answers and the turns answering it, where the backend keeps
        the conversation (the in-memory `ScopeIndex`; each row alone elsewhere)."""
        ...

    def restatements(
        self, scope: Scope, vector: np.ndarray | None, tokens: Sequence[str], filters: Filters, limit: int
    ) -> list[tuple[str, float]]:
        """Dense search among the memories that share most of `tokens` (duplicate checks);
        `vector` None: those memories by the words shared, vectors not read."""
        ...

    def turn_links(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, tuple[str | None, str | None]]:
        """For each id that is a turn of a conversation: (the turn it answers, the first turn
        answering it), ids or None (engram.dialogue)."""
        return {}

    def turns_by(self, scope: Scope, speakers: Iterable[str]) -> tuple[set[str], set[str]]:
        """(the scope's speakers, ids of the turns said by any of `speakers`), lower case names."""
        return set(), set()

    def languages(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, str]:
        """The language of those memories the backend knows without reading their rows (its
        per-user index); a caller reads the rest through `signals`."""
        return {}

    def named_spans(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, tuple[float, float]]:
        """For each id that is a turn naming a time ("last Saturday"): the (start, end) POSIX
        seconds it names, resolved against when it was said (engram.when_said)."""
        return {}

    def texts(self, memory_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """(kind, content) of each memory."""
        ...

    def embeddings(self, memory_ids: Sequence[str]) -> dict[str, np.ndarray]: ...

    def record_access(self, memory_ids: Iterable[str], at: datetime) -> None: ...

    def delete(self, memory_ids: Sequence[str], events: Sequence[HistoryEvent]) -> None: ...

    def delete_scope(self, scope: Scope, at: datetime) -> int: ...

    def history(self, memory_id: str) -> list[HistoryEntry]: ...

    def user_ids(self) -> list[str]: ...

    # -- lifecycle and user control ------------------------------------------------
    def lifecycle_rows(self, scope: Scope, statuses: Sequence[str]) -> list[MemoryRow]: ...

    def transition(
        self,
        transitions: Sequence[Transition],
        *,
        inserts: Sequence[Record] = (),
        events: Sequence[HistoryEvent] = (),
        atomic: bool = False,
    ) -> list[str]:
        """Apply guarded status changes (plus inserts and events) in one transaction;
        returns the ids changed. `atomic`: all or nothing (nothing is written when a
        single transition's guard fails)."""
        ...

    def transition_groups(self, groups: Sequence[TransitionGroup]) -> list[list[str]]:
        """Several groups in one transaction, each all-or-nothing when atomic; returns
        the ids changed per group ([] for an atomic group that failed)."""
        ...

    def derived_from(self, scope: Scope, memory_ids: Sequence[str]) -> list[MemoryItem]:
        """Memories whose `sources` list any of `memory_ids` (summaries)."""
        ...

    def user_history(self, user_id: str) -> list[HistoryEntry]: ...

    def get_state(self, user_id: str, name: str) -> str | None: ...

    def set_state(self, user_id: str, name: str, value: str | None, at: datetime) -> None: ...

    def turns_rows(self, scope: Scope) -> list[tuple[int, str, str]]:
        """(id, session_id, content) of the user's working-memory turns (forget scrubs them)."""
        ...

    def turns_delete(self, scope: Scope, turn_ids: Sequence[int]) -> None: ...

    # -- sessions, working memory and change tracking --------------------------------
    # Session ids are unique per user; every call is scoped by `scope.user_id`.
    def item_rows(self, scope: Scope, statuses: Sequence[str]) -> list[MemoryRow]:
        """Every memory of the scope with one of `statuses`, as light rows (capsule ranking)."""
        ...

    def user_version(self, user_id: str) -> int:
        """A number that changes whenever any memory of the user changes (any process)."""
        ...

    def session_get(self, scope: Scope, session_id: str) -> SessionRecord | None: ...

    def session_touch(self, scope: Scope, session_id: str, at: datetime) -> SessionRecord:
        """Open the session if new, reopen it if ended, mark it active at `at`."""
        ...

    def session_list(
        self, scope: Scope, *, open_only: bool = True, idle_before: datetime | None = None
    ) -> list[SessionRecord]:
        """Sessions of the scope, most recently active first."""
        ...

    def session_end(self, scope: Scope, session_id: str, at: datetime, reason: str) -> bool:
        """Mark an open session ended; True only for the one caller that ended it."""
        ...

    def session_finish(
        self, scope: Scope, session_id: str, *, summary_id: str | None, compressed_at: datetime
    ) -> None:
        """Record the delta of an ended session and drop its working memory."""
        ...

    def turns_append(
        self, scope: Scope, session_id: str, turns: Sequence[TurnRecord], keep_tokens: int,
        touched_at: datetime | None = None,
    ) -> None:
        """Append turns, then drop the oldest until the session's turns fit `keep_tokens`; with
        `touched_at`, the session is touched (`session_touch`) in the same transaction."""
        ...

    def turns_list(self, scope: Scope, session_id: str, last: int | None = None) -> list[TurnRecord]:
        """The session's working-memory turns, oldest first; with `last`, only the latest `last`."""
        ...

    def reset(self) -> None: ...

    def close(self) -> None: ...

    # -- the entity graph (engram.graph; the contract is engram.store.graph's) -----------
    def graph_write(
        self, user_id: str, *, entities: Sequence[EntityRow] = (), aliases: Sequence[AliasRow] = (),
        mentions: Sequence[MentionRow] = (), edges: Sequence[EdgeRow] = (),
        events: Sequence[GraphEvent] = (), replace: Sequence[str] = (),
    ) -> None:
        """Add one user's entities, aliases, mentions and edges in one transaction (inside
        `atomic`, the caller's); `replace` names memories whose old links not restated go."""
        ...

    def graph_merge(self, user_id: str, keep: str, drop: str, reason: str, at: datetime) -> None:
        """Entity `drop` becomes `keep` (aliases, mentions, edges move); a MERGE event records it."""
        ...

    def graph_split(
        self, user_id: str, entity_id: str, new: EntityRow, alias_keys: Sequence[str],
        memory_ids: Sequence[str], reason: str, at: datetime,
    ) -> None:
        """Entity `new` takes `alias_keys` and the mentions of `memory_ids` from `entity_id`."""
        ...

    def graph_snapshot(self, user_id: str) -> GraphSnapshot:
        """The user's whole graph as stored (read often: a backend should cache it)."""
        ...

    def graph_names(self, user_id: str) -> GraphSnapshot:
        """Optional: the user's entities and aliases alone, for resolving names on the write path
        (cached apart from the snapshot, which every memory write invalidates). Without it the
        write path reads `graph_snapshot`."""
        ...

    def graph_live(self, user_id: str) -> frozenset[str]:
        """Ids of the user's live memories (active, disputed) that the graph links."""
        ...

    def defer_links(self, memories: Sequence[tuple[str, str]]) -> None:
        """Optional, with `deferred_links` and `links_done`: note (memory id, user id) pairs, in
        the write's transaction, whose graph links the write-behind worker makes later
        (engram.embed_behind); a deleted memory's note goes with it. Without them a memory is
        linked with its row."""
        ...

    def deferred_links(self, limit: int) -> list[tuple[str, str]]:
        """(memory id, user id) noted by `defer_links` and not linked yet (a crash left them),
        in the order they were noted."""
        ...

    def links_done(self, memory_ids: Sequence[str]) -> list[str]:
        """Clear the notes of these memories (in the linking transaction); returns those that
        had one, the memories still to link."""
        ...

    def graph_history(self, user_id: str) -> list[GraphEvent]:
        """The trace of entity resolution, oldest first."""
        ...

    def graph_taken(self, entity_ids: Sequence[str]) -> set[str]:
        """Which of these entity ids some user's entity holds already (import: ids are global)."""
        ...
