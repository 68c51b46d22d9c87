"""Checks of what callers pass to the public API, turned into engram's own types.
A bad argument raises `InvalidInput` with a message a user can act on."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, get_args

from pydantic import ValidationError

from engram.config import Settings
from engram.errors import InvalidInput
from engram.models import Filters, Message, as_utc, as_zone, utcnow
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


def embedder_name(name: str) -> str:
    """`Memory(embedder="use")`: a configurable embedder by the ``embedder`` setting's name."""
    allowed = get_args(Settings.model_fields["embedder"].annotation)
    if name not in allowed:
        raise InvalidInput(f"unknown embedder {name!r}: one of {', '.join(allowed)}, or an embedder object")
    return name


def messages(value: MessagesInput, limit: int | None = None) -> list[Message]:
    """Messages from a string, one dict or a list; each valid text within `limit` characters
    (``max_message_chars``)."""
    if isinstance(value, str):
        items: list[Any] = [{"role": "user", "content": value}]
    elif isinstance(value, Mapping):
        items = [value]
    elif isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        items = list(value)
    else:
        raise InvalidInput(
            f"messages must be a string or a list of {{'role', 'content'}} dicts, not {type(value).__name__}"
        )
    try:
        parsed = [m if isinstance(m, Message) else Message.model_validate(m) for m in items]
    except ValidationError as exc:
        raise InvalidInput(f"invalid message: {exc.errors()[0]['msg']}") from None
    for m in parsed:
        text(m.content, "a message", limit)
    if not parsed or not any(m.content.strip() for m in parsed):
        raise InvalidInput("messages contain no text")
    return parsed


def query(value: Any, limit: int | None = None, name: str = "query") -> str:
    """A non-empty query within `limit` characters (``max_query_chars``)."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{name} must be a non-empty string")
    return text(value, name, limit)


def batch(value: Any) -> list[dict[str, Any]]:
    """`add_many`'s entries: dicts with `messages` and the keyword arguments of `add`."""
    if isinstance(value, str | bytes | Mapping) or not isinstance(value, Sequence | Iterable):
        raise InvalidInput(f"add_many takes a list of dicts, not {type(value).__name__}")
    entries = []
    for index, entry in enumerate(value):
        if not isinstance(entry, Mapping):
            raise InvalidInput(f"add_many entry {index} must be a dict, not {type(entry).__name__}")
        unknown = set(entry) - BATCH_KEYS
        if "messages" not in entry or unknown:
            raise InvalidInput(
                f"add_many entry {index} needs 'messages'" if "messages" not in entry
                else f"add_many entry {index}: unknown keys {sorted(map(str, unknown))}"
            )
        entries.append(dict(entry))
    return entries


BATCH_KEYS = frozenset({
    "messages", "user_id", "agent_id", "session_id", "metadata", "infer", "timestamp", "idempotency_key", "background",
})


def filters(value: Filters | Mapping[str, Any] | None) -> Filters:
    if value is None:
        return Filters()
    if isinstance(value, Filters):
        parsed = value
    elif not isinstance(value, Mapping):
        raise InvalidInput(f"filters must be a dict, not {type(value).__name__}")
    else:
        value = dict(value)
        unknown = sorted(k for k in value if k not in Filters.model_fields and k not in ("AND", "OR", "NOT"))
        if unknown:  # a typo must not become a metadata condition that silently matches nothing
            raise InvalidInput(f"unknown filter {unknown[0]!r}; metadata conditions go under "
                               f"'metadata': {{'metadata': {{{unknown[0]!r}: ...}}}}")
        logical = {k: value.pop(k) for k in ("AND", "OR", "NOT") if k in value}
        if logical:  # mem0 writes AND / OR / NOT at the top level
            value["metadata"] = {**(value.get("metadata") or {}), **logical}
        try:
            parsed = Filters.model_validate(value)
        except ValidationError as exc:
            error = exc.errors()[0]
            raise InvalidInput(f"invalid filter {'.'.join(map(str, error['loc']))}: {error['msg']}") from None
        except (OverflowError, TypeError):
            raise InvalidInput("invalid filter: a time out of range") from None
    for name in ("since", "until", "as_of"):
        if getattr(parsed, name) is not None:
            timestamp(getattr(parsed, name), f"filter {name}")
    if parsed.session_id is not None:
        text(parsed.session_id, "filter session_id")
    metadata_condition(parsed.metadata)
    return parsed


_OPERATORS = frozenset({"eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains"})


def _filter_value(key: str, wanted: Any) -> None:
    if not isinstance(wanted, str | int | float | bool) or (isinstance(wanted, float) and not math.isfinite(wanted)):
        raise InvalidInput(f"metadata filter {key!r}: compare with a string, number or boolean, not {wanted!r}")
    if isinstance(wanted, int) and not -(2**63) <= wanted < 2**63:
        raise InvalidInput(f"metadata filter {key!r}: integer out of range")
    if isinstance(wanted, str):
        text(wanted, f"metadata filter {key!r}")


def metadata_condition(condition: Any, where: str = "metadata") -> None:
    """A metadata filter engram can run, in mem0's language (``{"k": v}``, ``{"k": {"gte": 3}}``
    with eq ne gt gte lt lte in nin contains, ``AND`` / ``OR`` / ``NOT``;
    engram.store.sqlite.items.metadata_where), else `InvalidInput` naming what is wrong."""
    if not isinstance(condition, Mapping):
        raise InvalidInput(f"{where} filter must be a dict, not {type(condition).__name__}")
    for key, value in condition.items():
        if key in ("AND", "OR"):
            if not isinstance(value, list) or not value:
                raise InvalidInput(f"{where}.{key} takes a non-empty list of conditions")
            for index, part in enumerate(value):
                metadata_condition(part, f"{where}.{key}[{index}]")
            continue
        if key == "NOT":
            metadata_condition(value, f"{where}.NOT")
            continue
        if not isinstance(key, str) or not key or any(c in key for c in '"\\') or any(ord(c) < 32 for c in key):
            raise InvalidInput(f"invalid metadata filter key {key!r}: a name without quotes, backslashes or control characters")
        text(key, "metadata filter key")
        if isinstance(value, Mapping):
            if not value:
                raise InvalidInput(f"{where}.{key}: give an operator ({', '.join(sorted(_OPERATORS))})")
            for op, operand in value.items():
                if op not in _OPERATORS:
                    raise InvalidInput(f"{where}.{key}: unknown operator {op!r}; "
                                       f"expected one of {', '.join(sorted(_OPERATORS))}")
                if op in ("in", "nin") and not isinstance(operand, list):
                    raise InvalidInput(f"{where}.{key}.{op} takes a list")
                for one in operand if op in ("in", "nin") else [operand]:
                    _filter_value(key, one)
        elif isinstance(value, list):
            raise InvalidInput(f"metadata filter {key!r}: for one of several values write {{'in': [...]}}")
        else:
            _filter_value(key, value)


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
    return optional_id("session_id", value)


def positive_int(name: str, value: Any, most: int = 1_000_000, least: int = 1) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not least <= value <= most:
        raise InvalidInput(f"{name} must be an integer from {least} to {most:,}, not {value!r}")
    return value


def budget(value: Any) -> int | None:
    """A token budget: None (the setting), or 0 to ten million tokens."""
    return None if value is None else positive_int("budget", value, 10_000_000, least=0)


def offset(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**62:
        raise InvalidInput(f"offset must be a non-negative integer, not {value!r}")
    return value


def optional_id(name: str, value: Any) -> str | None:
    """An optional caller-chosen id (idempotency key, session id): a non-empty string."""
    if value is not None:
        if not isinstance(value, str) or not value.strip() or len(value) > 256:
            raise InvalidInput(f"{name} must be a non-empty string of at most 256 characters, not {value!r}")
        text(value, name)
    return value


def required_id(name: str, value: Any) -> str:
    if value is None:
        raise InvalidInput(f"{name} is required")
    return optional_id(name, value)  # type: ignore[return-value]


def language(value: Any) -> str | None:
    if value is not None and value not in ("en", "zh"):
        raise InvalidInput(f"language must be 'en', 'zh' or None, not {value!r}")
    return value


def memory_id(value: Any, name: str = "memory id") -> str:
    if not isinstance(value, str) or not value or len(value) > 256:
        raise InvalidInput(f"{name} must be a non-empty string (at most 256 characters)")
    return text(value, name)


def zone(value: Any) -> Any:
    """A time zone argument: None, a tzinfo, or an IANA name that exists."""
    if value is not None:
        as_zone(value)
    return value


def moment(value: Any, name: str) -> datetime:
    """A datetime in engram's range, kept in the caller's zone (their "yesterday")."""
    timestamp(value, name)
    return value


def alias(name: str, value: Any, other: str, other_value: Any) -> Any:
    """An argument given under either of two names (engram's and mem0's), not both differently."""
    if other_value is None:
        return value
    if value is not None and value != other_value:
        raise InvalidInput(f"give {name} or {other}, not both")
    return other_value


def fraction(name: str, value: Any) -> float | None:
    """None, or a number in [0, 1] (a relevance threshold)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
        raise InvalidInput(f"{name} must be a number between 0 and 1, not {value!r}")
    return float(value)
