"""Pydantic models shared by every part of engram.

They are the contract between the pipeline parts: extraction produces
`Candidate`s, reconciliation turns them into `Event`s over `MemoryItem`s,
retrieval returns `SearchResult`s with their score parts.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, tzinfo
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, field_validator

from engram.errors import InvalidInput
from engram.kinds import Action, Kind, Layer, Source, Status  # re-exported


def utcnow() -> datetime:
    """Timezone-aware now; storage is always UTC."""
    return datetime.now(UTC)


def as_utc(value: datetime) -> datetime:
    """Naive datetimes are taken as UTC, aware ones converted to it."""
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def as_zone(tz: tzinfo | str | None) -> tzinfo:
    """A time zone from an IANA name ("Asia/Shanghai") or a tzinfo; None is UTC."""
    if tz is None:
        return UTC
    if isinstance(tz, tzinfo):
        return tz
    if isinstance(tz, str):
        try:
            return ZoneInfo(tz)
        except (ValueError, KeyError, OSError, ZoneInfoNotFoundError):
            pass
    raise InvalidInput(f"unknown time zone {tz!r}; expected an IANA name such as 'Asia/Shanghai'")


def new_id() -> str:
    return uuid.uuid4().hex


class MemoryItem(BaseModel):
    """One self-contained statement about a user, with its metadata."""

    model_config = ConfigDict(validate_assignment=True)

    id: str = Field(default_factory=new_id)
    user_id: str
    agent_id: str | None = None
    session_id: str | None = None
    content: str
    kind: Kind = Kind.FACT
    layer: Layer = Layer.EPISODIC
    status: Status = Status.ACTIVE
    language: str = "en"
    key: str | None = None
    value: str | None = None
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    strength: float = Field(default=1.0, ge=0.0)
    access_count: int = 0
    last_accessed: datetime | None = None
    created_at: datetime = Field(default_factory=utcnow)
    updated_at: datetime = Field(default_factory=utcnow)
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    source: Source = Source.API
    metadata: dict[str, Any] = Field(default_factory=dict)
    entities: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    due_at: datetime | None = None
    recurrence: str | None = None
    supersedes: str | None = None
    superseded_by: str | None = None
    sources: list[str] = Field(default_factory=list)
    embedding_model: str | None = None

    def to_mem0(self, score: float | None = None) -> dict[str, Any]:
        """This memory in mem0's dict shape (``get_all``/``search`` entries); engram's own
        fields that mem0 has no name for stay under ``metadata`` keys it does not use."""
        shown: dict[str, Any] = {
            "id": self.id, "memory": self.content, "hash": None,
            "metadata": {**self.metadata, "kind": self.kind.value, "status": self.status.value},
            "created_at": self.created_at.isoformat(), "updated_at": self.updated_at.isoformat(),
            "user_id": self.user_id,
        }
        if self.agent_id is not None:
            shown["agent_id"] = self.agent_id
        if self.session_id is not None:
            shown["run_id"] = self.session_id
        if score is not None:
            shown["score"] = score
        return shown

    @field_validator(
        "created_at", "updated_at", "valid_from", "valid_to", "last_accessed", "due_at"
    )
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return None if value is None else as_utc(value)


class Candidate(BaseModel):
    """A memory proposed by an extractor, before reconciliation decides its fate.

    `key` names the slot the statement fills (``fact:location``,
    ``preference:coffee``) so a later statement about the same slot can be
    recognised as an update; `value` is the slot's normalised value.
    """

    content: str
    kind: Kind
    key: str | None = None
    value: str | None = None
    polarity: int = 0  # +1 likes, -1 dislikes, 0 neutral: conflicts on one key
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    language: str = "en"
    source: Source = Source.RULE
    reason: str = ""
    entities: list[str] = Field(default_factory=list)
    due_at: datetime | None = None
    recurrence: str | None = None
    valid_from: datetime | None = None
    # typed entities (name, type) and relations (source, relation, target, reason) an LLM gave
    # with it, grounded in what the user said: the entity graph takes them (engram.graph.llm)
    typed_entities: list[tuple[str, str]] = Field(default_factory=list)
    relations: list[tuple[str, str, str, str]] = Field(default_factory=list)


class Command(BaseModel):
    """A user-control command recognised in a message ("forget what I said about X",
    "暂停记忆"…): `name` is view, forget, forget_last, delete_kind, delete_all, pause or
    resume; `target` the topic (forget, view) or kind (delete_kind)."""

    name: str
    target: str | None = None
    language: str = "en"
    message: str = ""  # a confirmation for the agent to relay, in the user's language


class Event(BaseModel):
    """What happened to one memory as the result of a call.

    `memory` is None only for events of a control command that concern no single
    memory (PAUSE, RESUME, or a forget that matched nothing); `command` is set on
    every event a control command produced.
    """

    action: Action
    memory: MemoryItem | None
    reason: str = ""
    previous: MemoryItem | None = None
    command: Command | None = None


class Clarification(BaseModel):
    """A clarifying question about memories that contradict each other (status disputed).

    `memory_ids` are oldest first; settle with ``Memory.resolve(id, keep=...)``.
    """

    memory_ids: list[str]
    key: str | None = None
    question: str
    language: str = "en"
    contents: list[str] = Field(default_factory=list)


class ScoreParts(BaseModel):
    """Why a result ranked where it did."""

    lexical: float = 0.0
    dense: float = 0.0
    fused: float = 0.0
    importance: float = 0.0
    recency: float = 0.0
    use: float = 0.0
    time: float = 0.0  # 1.0 when said within a time range the query names ("last May")
    lexical_rank: int | None = None
    dense_rank: int | None = None


class SearchResult(BaseModel):
    """One hit. `score` ranks (relevance, then importance, recency, use); `relevance` is
    absolute, in [0, 1], comparable across queries: how much of the query the memory
    covers (weighted query words it contains, or the embedder's similarity, calibrated).
    `search(threshold=…)` and `context()` filter on it."""

    memory: MemoryItem
    score: float
    relevance: float = 0.0
    parts: ScoreParts = Field(default_factory=ScoreParts)
    # set when the memory is disputed: the question to ask before relying on it
    clarification: Clarification | None = None

    def to_mem0(self) -> dict[str, Any]:
        """This hit in mem0's shape (``{"id", "memory", "score", "metadata", …}``), for code
        written against mem0; `score` is the absolute `relevance`. See engram.compat.mem0."""
        return self.memory.to_mem0(score=self.relevance)


class HistoryEntry(BaseModel):
    """One row of the audit trail: ADD/UPDATE/SUPERSEDE/DISPUTE/DELETE/... with old and new content."""

    id: int
    memory_id: str
    user_id: str
    action: str
    old_content: str | None
    new_content: str | None
    reason: str
    created_at: datetime
    related_id: str | None = None  # the other memory an event concerns (supersede, dispute, merge)


class Message(BaseModel):
    role: str
    content: str

    @field_validator("role")
    @classmethod
    def _role(cls, value: str) -> str:
        if value not in {"user", "assistant", "system", "tool"}:
            raise ValueError(f"unknown role {value!r}; expected user, assistant, system or tool")
        return value


class Filters(BaseModel):
    """What a read may return. Scope (user, agent) is not here: it is always required.

    Built from the user's ``filters={...}`` dict; by default only active memories.
    """

    model_config = ConfigDict(extra="forbid")

    kind: list[Kind] | None = None
    status: list[Status] = Field(default_factory=lambda: [Status.ACTIVE])
    layer: list[Layer] | None = None
    session_id: str | None = None
    since: datetime | None = None  # created_at >= since
    until: datetime | None = None  # created_at < until
    as_of: datetime | None = None  # valid at that moment (valid_from <= t < valid_to)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("kind", "status", "layer", mode="before")
    @classmethod
    def _listify(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [value]
        return value

    @field_validator("since", "until", "as_of")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return None if value is None else as_utc(value)

    @property
    def is_default(self) -> bool:
        """Only the status filter: the fast path of the stores applies."""
        return (
            self.kind is None
            and self.layer is None
            and self.session_id is None
            and self.since is None
            and self.until is None
            and self.as_of is None
            and not self.metadata
        )
