"""Sessions, working-memory turns and change tracking (migration 2), mixed into `SQLiteStore`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from engram.store.base import (
    MemoryRow,
    Scope,
    SessionRecord,
    TurnRecord,
)
from engram.store.sqlite.rows import ROW_COLUMNS, from_epoch, row_from


class SessionsMixin:
    """Needs `_db`, `_lock`, `_tx` and `_scope_where` from the store."""

    def item_rows(self, scope: Scope, statuses: Sequence[str]) -> list[MemoryRow]:
        where, params = self._scope_where(scope)
        if statuses:
            where += f" AND status IN ({', '.join('?' for _ in statuses)})"
            params += [getattr(s, "value", s) for s in statuses]
        with self._lock:
            rows = self._db.execute(f"SELECT {ROW_COLUMNS} FROM memories WHERE {where}", params).fetchall()
        return [row_from(r) for r in rows]

    def user_version(self, user_id: str) -> int:
        with self._lock:
            row = self._db.execute(
                "SELECT version FROM user_versions WHERE user_id = ?", (user_id,)
            ).fetchone()
        return 0 if row is None else row[0]

    _SESSION_COLUMNS = (
        "user_id, session_id, agent_id, started_at, last_active, ended_at, end_reason,"
        " compressed_at, summary_id"
    )

    @staticmethod
    def _session_from_row(row: Sequence[Any]) -> SessionRecord:
        return SessionRecord(
            user_id=row[0], session_id=row[1], agent_id=row[2], started_at=from_epoch(row[3]),
            last_active=from_epoch(row[4]), ended_at=from_epoch(row[5]), end_reason=row[6],
            compressed_at=from_epoch(row[7]), summary_id=row[8],
        )

    def session_get(self, scope: Scope, session_id: str) -> SessionRecord | None:
        with self._lock:
            row = self._db.execute(
                f"SELECT {self._SESSION_COLUMNS} FROM sessions WHERE user_id = ? AND session_id = ?",
                (scope.user_id, session_id),
            ).fetchone()
        return None if row is None else self._session_from_row(row)

    _TOUCH_SQL = (
        "INSERT INTO sessions (user_id, session_id, agent_id, started_at, last_active)"
        " VALUES (?, ?, ?, ?, ?) ON CONFLICT (user_id, session_id) DO UPDATE SET"
        " last_active = max(last_active, excluded.last_active), ended_at = NULL, end_reason = NULL"
    )

    def session_touch(self, scope: Scope, session_id: str, at: datetime) -> SessionRecord:
        moment = at.timestamp()
        with self._tx() as db:
            db.execute(self._TOUCH_SQL, (scope.user_id, session_id, scope.agent_id, moment, moment))
            row = db.execute(
                f"SELECT {self._SESSION_COLUMNS} FROM sessions WHERE user_id = ? AND session_id = ?",
                (scope.user_id, session_id),
            ).fetchone()
        return self._session_from_row(row)

    def session_list(
        self, scope: Scope, *, open_only: bool = True, idle_before: datetime | None = None
    ) -> list[SessionRecord]:
        sql = f"SELECT {self._SESSION_COLUMNS} FROM sessions WHERE user_id = ?"
        params: list[Any] = [scope.user_id]
        if scope.agent_id is not None:
            sql += " AND agent_id = ?"
            params.append(scope.agent_id)
        if open_only:
            sql += " AND ended_at IS NULL"
        if idle_before is not None:
            sql += " AND last_active < ?"
            params.append(idle_before.timestamp())
        sql += " ORDER BY last_active DESC"
        with self._lock:
            rows = self._db.execute(sql, params).fetchall()
        return [self._session_from_row(r) for r in rows]

    def session_end(self, scope: Scope, session_id: str, at: datetime, reason: str) -> bool:
        with self._tx() as db:
            cursor = db.execute(
                "UPDATE sessions SET ended_at = ?, end_reason = ?"
                " WHERE user_id = ? AND session_id = ? AND ended_at IS NULL",
                (at.timestamp(), reason, scope.user_id, session_id),
            )
            return cursor.rowcount == 1

    def session_finish(
        self, scope: Scope, session_id: str, *, summary_id: str | None, compressed_at: datetime
    ) -> None:
        with self._tx() as db:
            db.execute(
                "UPDATE sessions SET summary_id = COALESCE(?, summary_id), compressed_at = ?"
                " WHERE user_id = ? AND session_id = ?",
                (summary_id, compressed_at.timestamp(), scope.user_id, session_id),
            )
            db.execute(
                "DELETE FROM session_turns WHERE user_id = ? AND session_id = ?",
                (scope.user_id, session_id),
            )

    def turns_append(
        self, scope: Scope, session_id: str, turns: Sequence[TurnRecord], keep_tokens: int,
        touched_at: datetime | None = None,
    ) -> None:
        with self._tx() as db:
            if touched_at is not None:  # the session is active: one transaction for both
                moment = touched_at.timestamp()
                db.execute(self._TOUCH_SQL, (scope.user_id, session_id, scope.agent_id, moment, moment))
            db.executemany(
                "INSERT INTO session_turns (user_id, session_id, role, content, tokens, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (scope.user_id, session_id, t.role, t.content, t.tokens, t.created_at.timestamp())
                    for t in turns
                ],
            )
            # keep the newest turns whose running total (newest first) fits
            db.execute(
                "DELETE FROM session_turns WHERE user_id = ? AND session_id = ? AND id IN ("
                " SELECT id FROM (SELECT id, SUM(tokens) OVER (ORDER BY id DESC) AS total"
                "  FROM session_turns WHERE user_id = ? AND session_id = ?) WHERE total > ?)",
                (scope.user_id, session_id, scope.user_id, session_id, keep_tokens),
            )

    def turns_list(self, scope: Scope, session_id: str, last: int | None = None) -> list[TurnRecord]:
        with self._lock:
            rows = self._db.execute(
                "SELECT role, content, tokens, created_at FROM session_turns"
                " WHERE user_id = ? AND session_id = ? ORDER BY id DESC LIMIT ?",
                (scope.user_id, session_id, -1 if last is None else last),
            ).fetchall()
        return [TurnRecord(role=r[0], content=r[1], tokens=r[2], created_at=from_epoch(r[3])) for r in reversed(rows)]

    def turns_rows(self, scope: Scope) -> list[tuple[int, str, str]]:
        """(id, session_id, content) of every working-memory turn of the user."""
        with self._lock:
            return self._db.execute(
                "SELECT id, session_id, content FROM session_turns WHERE user_id = ? ORDER BY id",
                (scope.user_id,),
            ).fetchall()

    def turns_delete(self, scope: Scope, turn_ids: Sequence[int]) -> None:
        if not turn_ids:
            return
        with self._tx() as db:
            for start in range(0, len(turn_ids), 500):
                chunk = list(turn_ids[start : start + 500])
                db.execute(
                    f"DELETE FROM session_turns WHERE user_id = ? AND id IN ({', '.join('?' for _ in chunk)})",
                    [scope.user_id, *chunk],
                )
        # no compaction here: callers delete memories next, and `delete` compacts
