"""Reading memories: by id, by scope and filters (SQL over jsonb for metadata), by key, hash
or idempotency key; light rows and signals for ranking. Mixed into `PostgresStore`."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from engram.models import Filters, MemoryItem
from engram.store.base import MemoryRow, Scope
from engram.store.metadata_sql import metadata_sql
from engram.store.sqlite.rows import SELECT_ITEM, item_from_row, row_from

_JSON = {"metadata", "entities", "tags", "sources"}
# the item's columns in `item_from_row`'s order, JSON as text (what it parses)
ITEM_SQL = ", ".join(f"{c}::text" if c in _JSON else c for c in SELECT_ITEM.split(", "))
# the light columns of a `MemoryRow` in `row_from`'s order
ROW_SQL = (
    "id, agent_id, content, kind, layer, status, key, language, importance, strength, access_count,"
    " last_accessed, created_at, updated_at, due_at, recurrence, supersedes, superseded_by, sources::text,"
    " metadata->>'merged_kind', coalesce(metadata->>'pinned' IN ('true', '1'), false),"
    " CASE WHEN jsonb_typeof(metadata->'polarity') = 'number' THEN (metadata->>'polarity')::numeric::int ELSE 0 END,"
    " session_id"
)
_COMPARE = {"eq": "=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


def _jsonb(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def metadata_where(condition: Mapping[str, Any], column: str = "metadata") -> tuple[str, list[Any]]:
    """SQL for a metadata filter in mem0's language (`engram.store.metadata_sql`) over jsonb:
    values compare within their JSON type (a number with numbers, a string with strings)."""
    return metadata_sql(condition, functools.partial(_compare, column), true="true", false="false")


def _compare(column: str, name: str, op: str, operand: Any) -> tuple[str, list[Any]]:
    field = f"({column} -> %s)"
    if op in _COMPARE:
        sql = f"(jsonb_typeof({field}) = jsonb_typeof(%s::jsonb) AND {field} {_COMPARE[op]} %s::jsonb)"
        return sql, [name, _jsonb(operand), name, _jsonb(operand)]
    if op == "ne":
        return f"({field} IS NULL OR {field} <> %s::jsonb)", [name, name, _jsonb(operand)]
    if op in ("in", "nin"):
        test = f"COALESCE({field} = ANY(%s::jsonb[]), false)"
        values = [_jsonb(v) for v in operand]
        return (test, [name, values]) if op == "in" else (f"({field} IS NULL OR NOT {test})", [name, name, values])
    # contains: an element of a list, or a substring of a string
    return (
        f"(CASE jsonb_typeof({field}) WHEN 'array' THEN {field} @> jsonb_build_array(%s::jsonb)"
        f" WHEN 'string' THEN strpos({column} ->> %s, %s) > 0 ELSE false END)",
        [name, name, _jsonb(operand), name, str(operand)],
    )


class ItemsMixin:
    """Needs the pool, transactions and caches of `PostgresStore`."""

    def _rows(self, sql: str, params: Sequence[Any] = (), *, binary: bool = False) -> list[tuple]:
        with self._conn() as conn:
            return conn.execute(sql, params, binary=binary).fetchall()

    def get(self, memory_id: str) -> MemoryItem | None:
        found = self.get_many([memory_id])
        return found[0] if found else None

    def get_many(self, memory_ids: Sequence[str]) -> list[MemoryItem]:
        if not memory_ids:
            return []
        rows = self._rows(f"SELECT {ITEM_SQL} FROM memories WHERE id = ANY(%s::text[])", (list(memory_ids),))
        found = self._with_pending({r[0]: item_from_row(r) for r in rows})
        return [found[i] for i in memory_ids if i in found]

    def vector_makers(self) -> set[tuple[str | None, int]]:
        rows = [
            self._rows(
                "SELECT embedding_model, vector_dims(embedding) FROM memories WHERE embedding IS NOT NULL"
                f" ORDER BY rowid {order} LIMIT 1"
            )
            for order in ("ASC", "DESC")
        ]
        return {(r[0][0], r[0][1]) for r in rows if r}

    _STALE = "embedding IS NOT NULL AND (vector_dims(embedding) <> %s OR embedding_model IS DISTINCT FROM %s)"

    def stale_vectors(self, model: str, dim: int, limit: int) -> list[str]:
        rows = self._rows(f"SELECT id FROM memories WHERE {self._STALE} ORDER BY rowid LIMIT %s", (dim, model, limit))
        return [r[0] for r in rows]

    def count_stale_vectors(self, model: str, dim: int) -> int:
        return self._rows(f"SELECT count(*) FROM memories WHERE {self._STALE}", (dim, model))[0][0]

    def ids_with_prefix(self, prefix: str, limit: int = 2) -> list[str]:
        rows = self._rows(
            "SELECT id FROM memories WHERE id >= %s AND id < %s ORDER BY id LIMIT %s",
            (prefix, prefix + "\U0010ffff", limit),
        )
        return [r[0] for r in rows]

    def signals(self, memory_ids: Sequence[str]) -> dict[str, MemoryRow | MemoryItem]:
        if not memory_ids:
            return {}
        rows = self._rows(f"SELECT {ROW_SQL} FROM memories WHERE id = ANY(%s::text[])", (list(memory_ids),))
        return self._with_pending({r[0]: row_from(r) for r in rows})

    def texts(self, memory_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        if not memory_ids:
            return {}
        rows = self._rows("SELECT id, kind, content FROM memories WHERE id = ANY(%s::text[])", (list(memory_ids),))
        return {i: (kind, content) for i, kind, content in rows}

    def embeddings(self, memory_ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not memory_ids:
            return {}
        rows = self._rows(
            "SELECT id, embedding FROM memories WHERE id = ANY(%s::text[]) AND embedding IS NOT NULL",
            (list(memory_ids),), binary=True,
        )
        return dict(rows)

    @staticmethod
    def _scope_where(scope: Scope) -> tuple[str, list[Any]]:
        if scope.agent_id is None:
            return "user_id = %s", [scope.user_id]
        return "user_id = %s AND agent_id = %s", [scope.user_id, scope.agent_id]

    def _filter_where(self, scope: Scope, filters: Filters) -> tuple[str, list[Any]]:
        where, params = self._scope_where(scope)
        clauses = [where]
        for column in ("status", "kind", "layer"):
            values = getattr(filters, column)
            if values:
                clauses.append(f"{column} = ANY(%s::text[])")
                params.append([getattr(v, "value", v) for v in values])
        if filters.session_id is not None:
            clauses.append("session_id = %s")
            params.append(filters.session_id)
        if filters.since is not None:
            clauses.append("created_at >= %s")
            params.append(filters.since.timestamp())
        if filters.until is not None:
            clauses.append("created_at < %s")
            params.append(filters.until.timestamp())
        if filters.as_of is not None:
            moment = filters.as_of.timestamp()
            clauses.append("COALESCE(valid_from, created_at) <= %s AND (valid_to IS NULL OR valid_to > %s)")
            params += [moment, moment]
        if filters.metadata:
            clause, args = metadata_where(filters.metadata)
            clauses.append(clause)
            params += args
        return " AND ".join(clauses), params

    def list(
        self, scope: Scope, filters: Filters, *, limit: int | None = None, offset: int = 0, newest_first: bool = True,
    ) -> list[MemoryItem]:
        where, params = self._filter_where(scope, filters)
        order = "DESC" if newest_first else "ASC"
        sql = f"SELECT {ITEM_SQL} FROM memories WHERE {where} ORDER BY created_at {order}, rowid {order}"
        if limit is not None:
            sql += " LIMIT %s OFFSET %s"
            params += [limit, offset]
        items = [item_from_row(r) for r in self._rows(sql, params)]
        self._with_pending({item.id: item for item in items})
        return items

    def count(self, scope: Scope, filters: Filters) -> int:
        where, params = self._filter_where(scope, filters)
        return self._rows(f"SELECT count(*) FROM memories WHERE {where}", params)[0][0]

    def _find(self, scope: Scope, filters: Filters, column: str, value: str) -> list[MemoryItem]:
        where, params = self._filter_where(scope, filters)
        rows = self._rows(f"SELECT {ITEM_SQL} FROM memories WHERE {where} AND {column} = %s", params + [value])
        items = [item_from_row(r) for r in rows]
        items.sort(key=lambda item: item.created_at, reverse=True)
        return items

    def find_by_key(self, scope: Scope, key: str, filters: Filters) -> list[MemoryItem]:
        return self._find(scope, filters, "key", key)

    def find_by_hash(self, scope: Scope, content_hash: str, filters: Filters) -> list[MemoryItem]:
        return self._find(scope, filters, "content_hash", content_hash)

    def find_by_idempotency_key(self, scope: Scope, key: str) -> list[MemoryItem]:
        return self._find(scope, Filters(status=[]), "idempotency_key", key)

    def user_ids(self) -> list[str]:
        return [r[0] for r in self._rows("SELECT DISTINCT user_id FROM memories ORDER BY 1")]

    def item_rows(self, scope: Scope, statuses: Sequence[str]) -> list[MemoryRow]:
        where, params = self._scope_where(scope)
        if statuses:
            where += " AND status = ANY(%s::text[])"
            params.append([getattr(s, "value", s) for s in statuses])
        return [row_from(r) for r in self._rows(f"SELECT {ROW_SQL} FROM memories WHERE {where}", params)]

    def lifecycle_rows(self, scope: Scope, statuses: Sequence[str]) -> list[MemoryRow]:
        self._flush_access()  # maintenance ranks by uses
        where, params = self._scope_where(scope)
        if statuses:
            where += " AND status = ANY(%s::text[])"
            params.append(list(statuses))
        return [row_from(r) for r in self._rows(f"SELECT {ROW_SQL} FROM memories WHERE {where} ORDER BY rowid", params)]

    def derived_from(self, scope: Scope, memory_ids: Sequence[str]) -> list[MemoryItem]:
        if not memory_ids:
            return []
        where, params = self._scope_where(scope)
        rows = self._rows(
            f"SELECT {ITEM_SQL} FROM memories WHERE {where} AND sources <> '[]'::jsonb"
            " AND sources ?| %s::text[] ORDER BY rowid",
            params + [list(memory_ids)],
        )
        return [item_from_row(r) for r in rows]
