"""Checks of what callers pass to the public API, turned into engram's own types.
A bad argument raises `InvalidInput` with a message a user can act on."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from engram.errors import InvalidInput
from engram.models import Filters, Message, as_utc, utcnow
from engram.store.base import Scope

if TYPE_CHECKING:  # pragma: no cover
    from engram.models import MemoryItem

# the moments engram stores: every later computation (decay, horizons, ± a day) stays in range
EARLIEST = datetime(1900, 1, 1, tzinfo=UTC)
LATEST = datetime(3000, 1, 1, tzinfo=UTC)
MAX_DEPTH = 32  # nesting of metadata (and of import files' values)

MessagesInput = str | Mapping[str, Any] | Sequence[Mapping[str, Any] | Message]


def scope(user_id: Any, agent_id: Any = None) -> Scope:
    try:
        return Scope(user_id, agent_id)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None


def messages(value: MessagesInput) -> list[Message]:
    if isinstance(value, str):
        items: list[Any] = [{"role": "user", "content": value}]
    elif isinstance(value, Mapping):
        items = [value]
    elif isinstance(value, Sequence):
        items = list(value)
    else:
        raise InvalidInput(
            f"messages must be a string or a list of {{'role', 'content'}} dicts, not {type(value).__name__}"
        )
    try:
        parsed = [m if isinstance(m, Message) else Message.model_validate(m) for m in items]
    except ValidationError as exc:
        raise InvalidInput(f"invalid message: {exc.errors()[0]['msg']}") from None
    if not parsed or not any(m.content.strip() for m in parsed):
        raise InvalidInput("messages contain no text")
    return parsed


def filters(value: Filters | Mapping[str, Any] | None) -> Filters:
    if value is None:
        return Filters()
    if isinstance(value, Filters):
        return value
    if not isinstance(value, Mapping):
        raise InvalidInput(f"filters must be a dict, not {type(value).__name__}")
    try:
        return Filters.model_validate(dict(value))
    except ValidationError as exc:
        error = exc.errors()[0]
        raise InvalidInput(f"invalid filter {'.'.join(map(str, error['loc']))}: {error['msg']}") from None


def metadata(value: Mapping[str, Any] | None, limit: int | None = None) -> dict[str, Any]:
    """A JSON object of finite values, at most `limit` bytes as JSON (``max_metadata_bytes``)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidInput(f"metadata must be a dict, not {type(value).__name__}")
    json_value(value, "metadata")
    size = len(json.dumps(value, ensure_ascii=False).encode("utf-8"))
    if limit is not None and size > limit:
        raise InvalidInput(f"metadata is {size:,} bytes as JSON; the limit is {limit:,} (max_metadata_bytes)")
    return dict(value)


def timestamp(value: datetime | None, name: str = "timestamp") -> datetime:
    """A moment in UTC, between 1900 and 2999 (None: now)."""
    if value is None:
        return utcnow()
    if not isinstance(value, datetime):
        raise InvalidInput(f"{name} must be a datetime, not {type(value).__name__}")
    try:
        at = as_utc(value)
    except (OverflowError, ValueError):
        raise InvalidInput(f"{name} {value!r} is out of range (1900-2999)") from None
    if not EARLIEST <= at < LATEST:
        raise InvalidInput(f"{name} {value!r} is out of range (1900-2999)")
    return at


def horizon(value: Any) -> timedelta | None:
    if value is not None and (not isinstance(value, timedelta) or value <= timedelta(0) or value > timedelta(days=36500)):
        raise InvalidInput(f"horizon must be a positive timedelta (at most 100 years), not {value!r}")
    return value


def text(value: Any, name: str, limit: int | None = None) -> str:
    """A string engram can store and index: valid Unicode (no lone surrogates), no NUL,
    within `limit` characters."""
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string, not {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"{name} is not valid Unicode (a lone surrogate)") from None
    if "\x00" in value:
        raise InvalidInput(f"{name} contains a NUL character")
    if limit is not None and len(value) > limit:
        raise InvalidInput(f"{name} is {len(value):,} characters; the limit is {limit:,} (settings)")
    return value


def json_value(value: Any, name: str, depth: int = 0) -> None:
    """JSON engram can store and read back: finite numbers, string keys, valid text, not too deep."""
    if depth > MAX_DEPTH:
        raise InvalidInput(f"{name} is nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, str):
        text(value, name)
    elif isinstance(value, bool) or value is None:
        return
    elif isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            raise InvalidInput(f"{name} holds an integer outside 64 bits")
    elif isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidInput(f"{name} holds {value!r}: numbers must be finite")
    elif isinstance(value, Mapping):
        for key, inner in value.items():
            if not isinstance(key, str):
                raise InvalidInput(f"{name} keys must be strings, not {key!r}")
            text(key, f"{name} key")
            json_value(inner, name, depth + 1)
    elif isinstance(value, list | tuple):
        for inner in value:
            json_value(inner, name, depth + 1)
    else:
        raise InvalidInput(f"{name} must be JSON-serialisable: {type(value).__name__} is not")


def stored_item(item: MemoryItem) -> None:
    """A memory from outside (an import file) holds only values engram can use later."""
    text(item.content, "content")
    for name in ("created_at", "updated_at", "valid_from", "valid_to", "due_at", "last_accessed"):
        moment = getattr(item, name)
        if moment is not None:
            timestamp(moment, name)
    for name in ("importance", "confidence", "strength"):
        if not math.isfinite(getattr(item, name)):
            raise InvalidInput(f"{name} must be a finite number")
    json_value(item.metadata, "metadata")
    json_value([item.key, item.value, item.entities, item.tags, item.sources], "fields")


def session_id(value: Any) -> str | None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise InvalidInput("session_id must be a non-empty string when given")
    return value


def positive_int(name: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise InvalidInput(f"{name} must be a positive integer, not {value!r}")
    return value


def memory_id(value: Any, name: str = "memory id") -> str:
    if not isinstance(value, str) or not value or len(value) > 256:
        raise InvalidInput(f"{name} must be a non-empty string (at most 256 characters)")
    return text(value, name)
