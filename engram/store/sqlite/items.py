"""Reading memories: by id, by scope and filters, by key, hash or idempotency key; light
rows and signals for ranking. Mixed into `SQLiteStore`."""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from engram.models import Filters, MemoryItem
from engram.store.base import MemoryRow, Scope
from engram.store.metadata_sql import metadata_sql
from engram.store.sqlite.rows import ITEM_CACHE_SIZE, JSON_LIST, ROW_COLUMNS, copy_item, row_from


def _sql_value(value: Any) -> Any:
    return int(value) if isinstance(value, bool) else value


def metadata_where(condition: Mapping[str, Any], column: str) -> tuple[str, list[Any]]:
    """SQL for a metadata filter in mem0's language (`engram.store.metadata_sql`) over SQLite's JSON."""
    return metadata_sql(condition, functools.partial(_compare, column), true="1", false="0")


def _compare(column: str, name: str, op: str, operand: Any) -> tuple[str, list[Any]]:
    path = f'$."{name}"'
    field = f"json_extract({column}, ?)"
    if op in _COMPARE:
        return f"{field} {_COMPARE[op]} ?", [path, _sql_value(operand)]
    if op == "ne":
        return f"({field} IS NULL OR {field} != ?)", [path, path, _sql_value(operand)]
    if op in ("in", "nin"):
        marks = ", ".join("?" for _ in operand) or "NULL"
        test = f"{field} IN ({marks})"
        values = [_sql_value(v) for v in operand]
        if op == "in":
            return test, [path, *values]
        return f"({field} IS NULL OR NOT {test})", [path, path, *values]
    # contains: an element of a list, or a substring of a string
    return (
        f"(CASE json_type({column}, ?) WHEN 'array' THEN EXISTS (SELECT 1 FROM json_each({column}, ?)"
        f" WHERE value = ?) WHEN 'text' THEN instr({field}, ?) > 0 ELSE 0 END)",
        [path, path, _sql_value(operand), path, str(operand)],
    )


_COMPARE = {"eq": "=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


class ItemsMixin:
    """Needs the connection, lock, transactions and caches of `SQLiteStore`."""

    def get(self, memory_id: str) -> MemoryItem | None:
        with self._lock:
            item = self._cached([memory_id]).get(memory_id)
        return None if item is None else copy_item(item)

    def vector_makers(self) -> set[tuple[str | None, int]]:
        """(embedding model, dimension) of the first and the last vector stored: a store made
        by another embedder, or half re-embedded (`engram reembed` goes in rowid order), shows
        here without a scan."""
        with self._lock:
            rows = [self._db.execute(
                "SELECT embedding_model, length(embedding) / 4 FROM memories WHERE embedding IS NOT NULL"
                f" ORDER BY rowid {order} LIMIT 1"
            ).fetchone() for order in ("ASC", "DESC")]
        return {(r[0], r[1]) for r in rows if r is not None}

    def stale_vectors(self, model: str, dim: int, limit: int) -> list[str]:
        """Ids of memories whose vector another embedder made, or that have none yet (written
        behind, `engram.embed_behind`, and not embedded before a crash), oldest first, at most `limit`."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id FROM memories WHERE embedding IS NULL OR"
                " length(embedding) != ? OR embedding_model IS NOT ? ORDER BY rowid LIMIT ?",
                (dim * 4, model, limit),
            ).fetchall()
        return [r[0] for r in rows]

    def count_stale_vectors(self, model: str, dim: int) -> int:
        with self._lock:
            return self._db.execute(
                "SELECT count(*) FROM memories WHERE embedding IS NULL OR"
                " length(embedding) != ? OR embedding_model IS NOT ?", (dim * 4, model),
            ).fetchone()[0]

    def ids_with_prefix(self, prefix: str, limit: int = 2) -> list[str]:
        """Ids that start with `prefix` (a short id typed by a person), at most `limit`."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id FROM memories WHERE id >= ? AND id < ? ORDER BY id LIMIT ?",
                (prefix, prefix + "\U0010ffff", limit),
            ).fetchall()
        return [r[0] for r in rows]

    def get_many(self, memory_ids: Sequence[str]) -> list[MemoryItem]:
        if not memory_ids:
            return []
        with self._lock:
            found = self._cached(list(memory_ids))
        return [copy_item(found[i]) for i in memory_ids if i in found]

    def signals(self, memory_ids: Sequence[str]) -> dict[str, MemoryRow | MemoryItem]:
        """What ranking needs of each memory: from the item cache, else light columns only."""
        if not memory_ids:
            return {}
        with self._lock:
            self._sync_caches()
            # cached items serve as they are (read-only here: no copy, no conversion)
            found: dict[str, MemoryRow | MemoryItem] = {}
            missing = []
            for i in memory_ids:
                if i in self._items:
                    found[i] = self._items[i]
                elif i in self._rows:
                    found[i] = self._pending_life(self._rows[i])
                else:
                    missing.append(i)
            if missing:
                rows = [row_from(r) for r in self._db.execute(
                    f"SELECT {ROW_COLUMNS} FROM memories WHERE id IN {JSON_LIST}",
                    (json.dumps(missing),),
                ).fetchall()]
                if len(self._rows) + len(rows) > ITEM_CACHE_SIZE:
                    self._rows.clear()
                self._rows.update((row.id, row) for row in rows)
                found.update((row.id, self._pending_life(row)) for row in rows)
        return found

    def texts(self, memory_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
        """(kind, content) of each memory: what a duplicate check reads before it needs more."""
        if not memory_ids:
            return {}
        with self._lock:
            self._sync_caches()
            cached = {i: self._items[i] for i in memory_ids if i in self._items}
            found = {i: (getattr(item.kind, "value", item.kind), item.content) for i, item in cached.items()}
            missing = [i for i in memory_ids if i not in found]
            if missing:
                rows = self._db.execute(
                    f"SELECT id, kind, content FROM memories WHERE id IN {JSON_LIST}", (json.dumps(missing),)
                ).fetchall()
                found.update((i, (kind, content)) for i, kind, content in rows)
        return found

    def embeddings(self, memory_ids: Sequence[str]) -> dict[str, np.ndarray]:
        if not memory_ids:
            return {}
        marks = ", ".join("?" for _ in memory_ids)
        with self._lock:
            rows = self._db.execute(
                f"SELECT id, embedding FROM memories WHERE id IN ({marks})"
                " AND embedding IS NOT NULL",
                list(memory_ids),
            ).fetchall()
        return {i: np.frombuffer(blob, dtype=np.float32) for i, blob in rows}

    @staticmethod
    def _scope_where(scope: Scope, alias: str = "") -> tuple[str, list[Any]]:
        where = f"{alias}user_id = ?"
        params: list[Any] = [scope.user_id]
        if scope.agent_id is not None:
            where += f" AND {alias}agent_id = ?"
            params.append(scope.agent_id)
        return where, params

    def _filter_where(self, scope: Scope, filters: Filters, alias: str = "") -> tuple[str, list[Any]]:
        where, params = self._scope_where(scope, alias)
        clauses = [where]

        def among(column: str, values: Sequence[Any]) -> None:
            clauses.append(f"{alias}{column} IN ({', '.join('?' for _ in values)})")
            params.extend(getattr(v, "value", v) for v in values)

        if filters.status:
            among("status", filters.status)
        if filters.kind:
            among("kind", filters.kind)
        if filters.layer:
            among("layer", filters.layer)
        if filters.session_id is not None:
            clauses.append(f"{alias}session_id = ?")
            params.append(filters.session_id)
        if filters.since is not None:
            clauses.append(f"{alias}created_at >= ?")
            params.append(filters.since.timestamp())
        if filters.until is not None:
            clauses.append(f"{alias}created_at < ?")
            params.append(filters.until.timestamp())
        if filters.as_of is not None:
            moment = filters.as_of.timestamp()
            clauses.append(
                f"COALESCE({alias}valid_from, {alias}created_at) <= ?"
                f" AND ({alias}valid_to IS NULL OR {alias}valid_to > ?)"
            )
            params += [moment, moment]
        if filters.metadata:
            clause, args = metadata_where(filters.metadata, f"{alias}metadata")
            clauses.append(clause)
            params += args
        return " AND ".join(clauses), params

    def list(
        self,
        scope: Scope,
        filters: Filters,
        *,
        limit: int | None = None,
        offset: int = 0,
        newest_first: bool = True,
    ) -> list[MemoryItem]:
        where, params = self._filter_where(scope, filters)
        order = "DESC" if newest_first else "ASC"
        sql = f"SELECT id FROM memories WHERE {where} ORDER BY created_at {order}, rowid {order}"
        if limit is not None:
            sql += " LIMIT ? OFFSET ?"
            params += [limit, offset]
        with self._lock:
            ids = [r[0] for r in self._db.execute(sql, params)]
            found = self._cached(ids)
        return [copy_item(found[i]) for i in ids if i in found]

    def count(self, scope: Scope, filters: Filters) -> int:
        where, params = self._filter_where(scope, filters)
        with self._lock:
            return self._db.execute(f"SELECT count(*) FROM memories WHERE {where}", params).fetchone()[0]

    def _find(self, scope: Scope, filters: Filters, column: str, value: str) -> list[MemoryItem]:
        where, params = self._filter_where(scope, filters)
        # ids first, the items by `get_many`, from the cache (the write path looks up what it just
        # wrote or restates: a whole row read and rebuilt costs ~8x an id); sorted here, not in
        # SQL: an ORDER BY lets the planner walk the created_at index over every row of the user
        with self._lock:
            ids = [r[0] for r in self._db.execute(
                f"SELECT id FROM memories WHERE {where} AND {column} = ?", params + [value]
            ).fetchall()]
            items = self.get_many(ids)
        items.sort(key=lambda item: item.created_at, reverse=True)
        return items

    def find_by_key(self, scope: Scope, key: str, filters: Filters) -> list[MemoryItem]:
        return self._find(scope, filters, "key", key)

    def find_by_hash(self, scope: Scope, content_hash: str, filters: Filters) -> list[MemoryItem]:
        return self._find(scope, filters, "content_hash", content_hash)

    def find_by_idempotency_key(self, scope: Scope, key: str) -> list[MemoryItem]:
        return self._find(scope, Filters(status=[]), "idempotency_key", key)

    def user_ids(self) -> list[str]:
        with self._lock:
            return [r[0] for r in self._db.execute("SELECT DISTINCT user_id FROM memories ORDER BY 1")]
