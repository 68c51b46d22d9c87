"""Checks of what callers pass to the public API, turned into engram's own types.
A bad argument raises `InvalidInput` with a message a user can act on."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from engram.errors import InvalidInput
from engram.models import Filters, Message, as_utc, utcnow
from engram.store.base import Scope

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
    value = dict(value)
    unknown = sorted(k for k in value if k not in Filters.model_fields and k not in ("AND", "OR", "NOT"))
    if unknown:  # a typo must not become a metadata condition that silently matches nothing
        raise InvalidInput(f"unknown filter {unknown[0]!r}; metadata conditions go under "
                           f"'metadata': {{'metadata': {{{unknown[0]!r}: ...}}}}")
    logical = {k: value.pop(k) for k in ("AND", "OR", "NOT") if k in value}
    if logical:  # mem0 writes AND / OR / NOT at the top level
        value["metadata"] = {**(value.get("metadata") or {}), **logical}
    try:
        checked = Filters.model_validate(value)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise InvalidInput(f"invalid filter {'.'.join(map(str, error['loc']))}: {error['msg']}") from None
    metadata_condition(checked.metadata)
    return checked


_OPERATORS = frozenset({"eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "contains"})
_SCALAR = (str, int, float, bool)


def metadata_condition(condition: Any, where: str = "metadata") -> None:
    """A metadata filter engram can run (mem0's operators; engram.store.sqlite.items.metadata_where),
    else `InvalidInput` naming what is wrong."""
    if not isinstance(condition, Mapping):
        raise InvalidInput(f"{where} filter must be a dict, not {type(condition).__name__}")
    for name, value in condition.items():
        if name in ("AND", "OR"):
            if not isinstance(value, list) or not value:
                raise InvalidInput(f"{where}.{name} takes a non-empty list of conditions")
            for index, part in enumerate(value):
                metadata_condition(part, f"{where}.{name}[{index}]")
        elif name == "NOT":
            metadata_condition(value, f"{where}.NOT")
        elif isinstance(value, Mapping):
            if not value:
                raise InvalidInput(f"{where}.{name}: give an operator ({', '.join(sorted(_OPERATORS))})")
            for op, operand in value.items():
                if op not in _OPERATORS:
                    raise InvalidInput(f"{where}.{name}: unknown operator {op!r}; "
                                       f"expected one of {', '.join(sorted(_OPERATORS))}")
                scalars = operand if op in ("in", "nin") else [operand]
                if op in ("in", "nin") and not isinstance(operand, list):
                    raise InvalidInput(f"{where}.{name}.{op} takes a list")
                if not all(isinstance(v, _SCALAR) for v in scalars):
                    raise InvalidInput(f"{where}.{name}.{op}: values must be strings, numbers or booleans")
        elif isinstance(value, list):
            if not all(isinstance(v, _SCALAR) for v in value):
                raise InvalidInput(f"{where}.{name}: a list holds strings, numbers or booleans")
        elif not isinstance(value, _SCALAR):
            raise InvalidInput(f"{where}.{name}: a value is a string, number, boolean, list or operator dict")


def metadata(value: Mapping[str, Any] | None) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidInput(f"metadata must be a dict, not {type(value).__name__}")
    try:
        json.dumps(value)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"metadata must be JSON-serialisable: {exc}") from None
    return dict(value)


def timestamp(value: datetime | None) -> datetime:
    if value is None:
        return utcnow()
    if not isinstance(value, datetime):
        raise InvalidInput(f"timestamp must be a datetime, not {type(value).__name__}")
    return as_utc(value)


def session_id(value: Any) -> str | None:
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise InvalidInput("session_id must be a non-empty string when given")
    return value


def positive_int(name: str, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise InvalidInput(f"{name} must be a positive integer, not {value!r}")
    return value


def memory_id(value: Any) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidInput("memory id must be a non-empty string")
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
