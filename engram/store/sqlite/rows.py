"""Rows ↔ models: column lists, conversions and the small helpers every part of the store shares."""

from __future__ import annotations

import json
import operator
from functools import partial
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np

from engram.dialogue import TurnPlace, place_of
from engram.when_said import named_span
from engram.models import Filters, HistoryEntry, Kind, Layer, MemoryItem, Source, Status
from engram.store.base import MemoryRow, Record

_ITEM_COLUMNS = (
    "id user_id agent_id session_id content kind layer status language key value "
    "importance confidence strength access_count last_accessed created_at updated_at "
    "valid_from valid_to source metadata entities tags due_at recurrence supersedes "
    "superseded_by sources embedding_model"
).split()
_TIME_COLUMNS = {"last_accessed", "created_at", "updated_at", "valid_from", "valid_to", "due_at"}
_JSON_COLUMNS = {"metadata", "entities", "tags", "sources"}
SELECT_ITEM = ", ".join(_ITEM_COLUMNS)
_WRITE_COLUMNS = _ITEM_COLUMNS + ["content_hash", "idempotency_key", "embedding", "tokens"]
INSERT_SQL = (
    f"INSERT INTO memories ({', '.join(_WRITE_COLUMNS)}) VALUES ({', '.join('?' for _ in _WRITE_COLUMNS)})"
)
# every column but `id` (the last parameter); an update without a new vector keeps the old one
UPDATE_SQL = "UPDATE memories SET " + ", ".join(
    f"{c} = COALESCE(?, {c})" if c == "embedding" else f"{c} = ?" for c in _WRITE_COLUMNS if c != "id"
) + " WHERE id = ? RETURNING rowid"


def to_epoch(value: datetime | None) -> float | None:
    return None if value is None else value.timestamp()


def from_epoch(value: float | None) -> datetime | None:
    return None if value is None else datetime.fromtimestamp(value, UTC)


def _json_text(value: Any) -> str:
    if not value:  # most memories: no metadata, entities, tags or sources
        return "{}" if isinstance(value, dict) else "[]"
    return json.dumps(value, ensure_ascii=False, default=str)


def _enum_value(value: Any) -> Any:
    return getattr(value, "value", value)  # a `model_copy(update=...)` may hold the plain string


def _writer(column: str) -> Callable[[Any], Any] | None:
    if column in _TIME_COLUMNS:
        return to_epoch
    if column in _JSON_COLUMNS:
        return _json_text
    if column in ("kind", "layer", "status", "source"):
        return _enum_value
    return None


_ITEM_FIELDS = operator.itemgetter(*_ITEM_COLUMNS)  # one C call for the 30 fields
_WRITERS = [(index, write) for index, write in enumerate(map(_writer, _ITEM_COLUMNS)) if write is not None]


def row_values(record: Record) -> list[Any]:
    values = list(_ITEM_FIELDS(record.item.__dict__))
    for index, write in _WRITERS:
        values[index] = write(values[index])
    embedding = None
    if record.embedding is not None:
        embedding = np.asarray(record.embedding, dtype=np.float32).tobytes()
    values += [record.content_hash, record.idempotency_key, embedding, " ".join(record.tokens)]
    return values


_ENUM_COLUMNS = {"kind": Kind, "layer": Layer, "status": Status, "source": Source}


# `IN (SELECT value FROM json_each(?))`: one prepared statement for any number of ids
JSON_LIST = "(SELECT value FROM json_each(?))"


def _json(value: str) -> Any:
    return {} if value == "{}" else [] if value == "[]" else json.loads(value)


def _converter(column: str) -> Callable[[Any], Any] | None:
    if column in _TIME_COLUMNS:
        return from_epoch
    if column in _JSON_COLUMNS:
        return _json
    return _ENUM_COLUMNS.get(column)


_CONVERTERS = [(column, _converter(column)) for column in _ITEM_COLUMNS]


ITEM_CACHE_SIZE = 20_000


def copy_item(item: MemoryItem) -> MemoryItem:
    """A caller's own copy of a cached item (its containers too)."""
    return item.model_copy(
        update={
            "metadata": dict(item.metadata), "entities": list(item.entities),
            "tags": list(item.tags), "sources": list(item.sources),
        }
    )


# the light columns of a `MemoryRow`, in its field order
ROW_COLUMNS = (
    "id, agent_id, content, kind, layer, status, key, language, importance, strength, access_count,"
    " last_accessed, created_at, updated_at, due_at, recurrence, supersedes, superseded_by, sources,"
    " json_extract(metadata, '$.merged_kind'), coalesce(json_extract(metadata, '$.pinned'), 0),"
    " coalesce(json_extract(metadata, '$.polarity'), 0), session_id"
)


def row_from(r: Sequence[Any]) -> MemoryRow:
    return MemoryRow(
        r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10], from_epoch(r[11]),
        from_epoch(r[12]), from_epoch(r[13]), from_epoch(r[14]), r[15], r[16], r[17],
        tuple(json.loads(r[18])) if r[18] != "[]" else (), r[19], bool(r[20]), int(r[21]), r[22],
    )


def item_from_row(row: Sequence[Any]) -> MemoryItem:
    """Rows were validated on the way in; rebuilding without validation is ~10x faster."""
    return MemoryItem.model_construct(
        **{
            column: value if convert is None or value is None else convert(value)
            for (column, convert), value in zip(_CONVERTERS, row, strict=True)
        }
    )


def history_entry(r: Sequence[Any]) -> HistoryEntry:
    return HistoryEntry(
        id=r[0], memory_id=r[1], user_id=r[2], action=r[3], old_content=r[4],
        new_content=r[5], reason=r[6], created_at=from_epoch(r[7]), related_id=r[8],
    )


def turn_span(kind: str, said_at: float, content: str) -> tuple[float, float] | None:
    """The days a verbatim turn talks about ("last Saturday", engram.when_said); None for other rows."""
    if kind != Kind.TURN:
        return None
    return named_span(content, datetime.fromtimestamp(said_at, UTC))


def span_later(kind: str, said_at: float, content: str) -> Callable[[], tuple[float, float] | None] | None:
    """`turn_span`, read when a search asks for it (`ScopeIndex.named_spans`); None for other rows."""
    return partial(turn_span, kind, said_at, content) if kind == Kind.TURN else None


def turn_place(
    kind: str, agent_id: str | None, session_id: str | None, said_at: float,
    metadata: str | dict | None, content: str,
) -> TurnPlace | None:
    """Where a verbatim turn sits in its conversation (engram.dialogue); None for other rows."""
    if kind != Kind.TURN:
        return None
    if isinstance(metadata, str):
        metadata = json.loads(metadata) if metadata else {}
    return place_of(kind, agent_id, session_id, said_at, metadata or {}, content)


def statuses_of(filters: Filters) -> list[str]:
    return [s.value for s in filters.status] or ["active", "superseded", "disputed", "archived"]
