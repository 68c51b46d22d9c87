"""Writing memories: inserts and updates with their history in one transaction, access
counts, and deletion. Mixed into `PostgresStore`."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

import numpy as np
import psycopg

from engram.models import MemoryItem
from engram.store.base import HistoryEvent, Record, Scope, StoreError
from engram.store.scope_index import ScopeIndex
from engram.store.sqlite.rows import SELECT_ITEM, row_values, turn_place

_JSON = {"metadata", "entities", "tags", "sources"}
_COLUMNS = SELECT_ITEM.split(", ") + ["content_hash", "idempotency_key", "embedding", "tokens"]
_MARKS = ["%s::jsonb" if c in _JSON else "%s" for c in _COLUMNS]
INSERT_SQL = f"INSERT INTO memories ({', '.join(_COLUMNS)}) VALUES ({', '.join(_MARKS)}) RETURNING rowid"
# every column but `id` (the last parameter); an update without a new vector keeps the old one
UPDATE_SQL = "UPDATE memories SET " + ", ".join(
    f"{c} = COALESCE({m}, {c})" if c == "embedding" else f"{c} = {m}"
    for c, m in zip(_COLUMNS, _MARKS, strict=True) if c != "id"
) + " WHERE id = %s RETURNING rowid, content_hash"


def record_values(record: Record) -> list[Any]:
    """A record as `INSERT_SQL`'s parameters (the SQLite store's conversions, the vector as numpy)."""
    values = row_values(record)  # SQLite's blob (next to last) is replaced by the array
    values[-2] = None if record.embedding is None else np.asarray(record.embedding, dtype=np.float32)
    return values


def index_add(rowids: Sequence[int], records: Sequence[Record]):
    """The cached-index change that adds these rows."""

    def change(index: ScopeIndex) -> None:
        index.add(
            list(rowids), [r.item.id for r in records], [r.embedding for r in records],
            [r.tokens for r in records], [r.item.status.value for r in records],
            [r.item.agent_id for r in records],
            [
                turn_place(r.item.kind, r.item.agent_id, r.item.session_id, r.item.created_at.timestamp(),
                           r.item.metadata, r.item.content)
                for r in records
            ],
            [r.item.created_at.timestamp() for r in records],
            languages=[r.item.language for r in records],
        )  # the days each turn talks about: read from the database when asked (`named_spans`)

    return change


class WritesMixin:
    """Needs the pool, transactions and caches of `PostgresStore`."""

    def write(
        self, inserts: Sequence[Record] = (), updates: Sequence[Record] = (), events: Sequence[HistoryEvent] = (),
    ) -> None:
        if not inserts and not updates and not events:
            return
        with self._tx() as conn:
            self._bump(conn, (r.item.user_id for r in (*inserts, *updates)))
            self._insert(conn, inserts)
            for record in updates:
                row = conn.execute(UPDATE_SQL, record_values(record)[1:] + [record.item.id]).fetchone()
                if row is None:
                    raise StoreError(f"no memory with id {record.item.id!r}")
                rowid, status = row[0], record.item.status.value
                if record.embedding is not None:  # new content: re-indexed
                    vector, tokens, language = record.embedding, record.tokens, record.item.language
                    self._patch(
                        record.item.user_id, lambda i, r=rowid, v=vector, t=tokens, g=language: i.replace(r, v, t, g)
                    )
                self._patch(record.item.user_id, lambda i, r=rowid, s=status: i.set_status(r, s))
            self._write_events(conn, events)

    def _insert(self, conn: psycopg.Connection, records: Sequence[Record]) -> None:
        """Insert rows (one round trip per 1,000) and patch the users' cached indexes after the commit."""
        if not records:
            return
        rowids: list[int] = []
        with conn.cursor() as cursor:
            for start in range(0, len(records), 1000):
                chunk = records[start : start + 1000]
                cursor.executemany(INSERT_SQL, [record_values(r) for r in chunk], returning=True)
                while True:
                    rowids.append(cursor.fetchone()[0])
                    if not cursor.nextset():
                        break
        by_user: dict[str, list[int]] = {}
        for position, record in enumerate(records):
            by_user.setdefault(record.item.user_id, []).append(position)
        self._count_rows(conn, {user_id: len(positions) for user_id, positions in by_user.items()})
        for user_id, positions in by_user.items():
            self._patch(user_id, index_add([rowids[p] for p in positions], [records[p] for p in positions]))

    @staticmethod
    def _write_events(conn: psycopg.Connection, events: Sequence[HistoryEvent]) -> None:
        if events:
            with conn.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO history (memory_id, user_id, action, old_content, new_content, reason, created_at,"
                    " related_id) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
                    [
                        (e.memory_id, e.user_id, e.action, e.old_content, e.new_content, e.reason,
                         e.at.timestamp(), e.related_id)
                        for e in events
                    ],
                )

    def record_access(self, memory_ids: Iterable[str], at: datetime) -> None:
        """Count a use of each memory: kept here and written in batches (within a second, at
        256 memories, or on close), as SQLite does: a statement per search cost a third of it.
        This process reads its own pending uses at once; others within the second."""
        with self._lock:
            for memory_id in memory_ids:
                count, _ = self._pending_access.get(memory_id, (0, at))
                self._pending_access[memory_id] = (count + 1, at)
            if self._pending_since is None:
                self._pending_since = time.monotonic()
            due = len(self._pending_access) >= 256 or time.monotonic() - self._pending_since >= 1.0
        if due:
            self._flush_access()

    def _flush_access(self) -> None:
        with self._lock:
            pending, self._pending_access, self._pending_since = self._pending_access, {}, None
        if not pending or self.read_only:
            return
        with self._conn() as conn:
            conn.execute(
                "UPDATE memories m SET access_count = m.access_count + u.n,"
                " last_accessed = GREATEST(COALESCE(m.last_accessed, 0), u.at)"
                " FROM unnest(%s::text[], %s::int[], %s::float8[]) AS u(id, n, at) WHERE m.id = u.id",
                (list(pending), [n for n, _ in pending.values()], [at.timestamp() for _, at in pending.values()]),
            )

    def _with_pending(self, found: dict[str, Any]) -> dict[str, Any]:
        """Items or rows just read, with this process's uses not written yet."""
        with self._lock:
            for memory_id, (count, at) in self._pending_access.items():
                value = found.get(memory_id)
                if value is None:
                    continue
                if isinstance(value, MemoryItem):
                    value.__dict__["access_count"] += count
                    value.__dict__["last_accessed"] = at
                else:
                    found[memory_id] = replace(value, access_count=value.access_count + count, last_accessed=at)
        return found

    def delete(self, memory_ids: Sequence[str], events: Sequence[HistoryEvent]) -> None:
        """Remove memories (row, vector, tokens); history keeps contentless events."""
        if not memory_ids:
            return
        with self._tx() as conn:
            self._purge(conn, list(memory_ids))
            self._write_events(conn, events)

    def _purge(self, conn: psycopg.Connection, ids: list[str]) -> None:
        rows = conn.execute(
            "DELETE FROM memories WHERE id = ANY(%s::text[]) RETURNING rowid, user_id", (ids,)
        ).fetchall()
        # the memory's own history rows, and rows of other memories that quote it
        conn.execute(
            "UPDATE history SET old_content = NULL, new_content = NULL, reason = ''"
            " WHERE memory_id = ANY(%s::text[]) OR related_id = ANY(%s::text[])",
            (ids, ids),
        )
        self._bump(conn, (user_id for _, user_id in rows))
        self._count_rows(conn, {u: -n for u, n in Counter(user_id for _, user_id in rows).items()})
        for rowid, user_id in rows:
            self._patch(user_id, lambda i, r=rowid: i.set_status(r, None))

    def delete_scope(self, scope: Scope, at: datetime) -> int:
        where, params = self._scope_where(scope)
        with self._tx() as conn:
            ids = [r[0] for r in conn.execute(f"SELECT id FROM memories WHERE {where}", params)]
            self._purge(conn, ids)
            self._purge_sessions(conn, scope)
            self._write_events(conn, [HistoryEvent(i, scope.user_id, "DELETE", None, None, "delete_all", at) for i in ids])
        return len(ids)

    @staticmethod
    def _purge_sessions(conn: psycopg.Connection, scope: Scope) -> None:
        """A scope's sessions, their turns and its queued jobs (they hold the user's words)."""
        if scope.agent_id is None:
            for table in ("jobs", "session_turns", "sessions"):
                conn.execute(f"DELETE FROM {table} WHERE user_id = %s", (scope.user_id,))
            return
        conn.execute("DELETE FROM jobs WHERE user_id = %s AND agent_id = %s", (scope.user_id, scope.agent_id))
        conn.execute(
            "DELETE FROM session_turns WHERE user_id = %s AND session_id IN"
            " (SELECT session_id FROM sessions WHERE user_id = %s AND agent_id = %s)",
            (scope.user_id, scope.user_id, scope.agent_id),
        )
        conn.execute("DELETE FROM sessions WHERE user_id = %s AND agent_id = %s", (scope.user_id, scope.agent_id))

    def reset(self) -> None:
        with self._tx() as conn:
            users = [r[0] for r in conn.execute("SELECT DISTINCT user_id FROM memories")]
            self._bump(conn, users)
            for table in ("memories", "history", "session_turns", "sessions", "jobs", "hnsw_users"):
                conn.execute(f"DELETE FROM {table}")
            conn.execute("UPDATE user_versions SET row_count = 0")
        self._drop_indexes(list(self._indexes))
