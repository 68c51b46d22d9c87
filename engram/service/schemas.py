"""Request bodies of the REST API. Replies are engram's own models (MemoryItem, Event, …).

Bodies forbid unknown fields, so a typo is a 422 rather than silently ignored. Values are
checked by `Memory` itself (one set of rules for the library and the server).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

Messages = str | dict[str, Any] | list[dict[str, Any]]


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Scoped(Body):
    """Whose memories: `user_id` defaults to the key's user (a user key can name only itself)."""

    user_id: str | None = None
    agent_id: str | None = None


class AddBody(Scoped):
    messages: Messages
    session_id: str | None = None
    run_id: str | None = None
    metadata: dict[str, Any] | None = None
    infer: bool = True
    timestamp: datetime | None = None
    idempotency_key: str | None = None
    background: bool = False


class BatchBody(Body):
    """`add_many`: each entry takes `add`'s fields plus `messages`; its `user_id` defaults to the key's."""

    items: list[dict[str, Any]] = Field(max_length=10_000)


class FlushBody(Body):
    timeout: float | None = Field(default=30.0, ge=0, le=60)


class SearchBody(Scoped):
    query: str
    limit: int | None = None
    top_k: int | None = None
    filters: dict[str, Any] | None = None
    now: datetime | None = None
    threshold: float | None = None


class ListBody(Scoped):
    filters: dict[str, Any] | None = None
    limit: int | None = 100
    offset: int = 0


class CountBody(Scoped):
    filters: dict[str, Any] | None = None


class UpdateBody(Body):
    content: str | None = None
    metadata: dict[str, Any] | None = None


class ResolveBody(Body):
    keep: str = "this"


class CompleteBody(Body):
    now: datetime | None = None
    tz: str | None = None


class ForgetBody(Scoped):
    about: str
    dry_run: bool = False


class ContextBody(Scoped):
    query: str
    session_id: str | None = None
    budget: int | None = None
    limit: int | None = None
    turns: bool = False
    language: str | None = None


class SessionBody(Scoped):
    session_id: str | None = None


class EndBody(Scoped):
    reason: str = "explicit"


class UserBody(Body):
    user_id: str | None = None


class TimezoneBody(UserBody):
    tz: str | None = None


class MaintainBody(Body):
    """No `user_id` with an admin key: every user."""

    user_id: str | None = None
    now: datetime | None = None


class ExportBody(Scoped):
    format: str = "engram"
    history: bool = False


class ImportBody(Scoped):
    data: dict[str, Any] | list[Any]
    on_conflict: str = "skip"


class SessionInfo(BaseModel):
    user_id: str
    agent_id: str | None = None
    session_id: str


class Count(BaseModel):
    count: int


class Deleted(BaseModel):
    deleted: int


class Paused(BaseModel):
    user_id: str
    paused: bool


class Health(BaseModel):
    status: str = "ok"
    detail: str | None = Field(default=None, description="why not ready")
