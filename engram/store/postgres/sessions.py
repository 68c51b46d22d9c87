"""Sessions, working-memory turns, per-user state and the audit trail. Mixed into `PostgresStore`."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from engram.models import HistoryEntry
from engram.store.base import Scope, SessionRecord, TurnRecord
from engram.store.sqlite.rows import from_epoch, history_entry

_SESSION_COLUMNS = "user_id, session_id, agent_id, started_at, last_active, ended_at, end_reason, compressed_at, summary_id"
_TOUCH_SQL = (
    "INSERT INTO sessions (user_id, session_id, agent_id, started_at, last_active) VALUES (%s, %s, %s, %s, %s)"
    " ON CONFLICT (user_id, session_id) DO UPDATE SET last_active = GREATEST(sessions.last_active,"
    " excluded.last_active), ended_at = NULL, end_reason = NULL"
)
_HISTORY_COLUMNS = "id, memory_id, user_id, action, old_content, new_content, reason, created_at, related_id"


def _session(row: Sequence[Any]) -> SessionRecord:
    return SessionRecord(
        user_id=row[0], session_id=row[1], agent_id=row[2], started_at=from_epoch(row[3]),
        last_active=from_epoch(row[4]), ended_at=from_epoch(row[5]), end_reason=row[6],
        compressed_at=from_epoch(row[7]), summary_id=row[8],
    )


class SessionsMixin:
    """Needs the pool and transactions of `PostgresStore`."""

    # -- history ------------------------------------------------------------------
    def history(self, memory_id: str) -> list[HistoryEntry]:
        rows = self._rows(f"SELECT {_HISTORY_COLUMNS} FROM history WHERE memory_id = %s ORDER BY id", (memory_id,))
        return [history_entry(r) for r in rows]

    def user_history(self, user_id: str) -> list[HistoryEntry]:
        rows = self._rows(f"SELECT {_HISTORY_COLUMNS} FROM history WHERE user_id = %s ORDER BY id", (user_id,))
        return [history_entry(r) for r in rows]

    # -- per-user state ----------------------------------------------------------------
    def get_state(self, user_id: str, name: str) -> str | None:
        rows = self._rows("SELECT value FROM user_state WHERE user_id = %s AND name = %s", (user_id, name))
        return rows[0][0] if rows else None

    def set_state(self, user_id: str, name: str, value: str | None, at: datetime) -> None:
        with self._tx() as conn:
            if value is None:
                conn.execute("DELETE FROM user_state WHERE user_id = %s AND name = %s", (user_id, name))
            else:
                conn.execute(
                    "INSERT INTO user_state (user_id, name, value, updated_at) VALUES (%s, %s, %s, %s)"
                    " ON CONFLICT (user_id, name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                    (user_id, name, value, at.timestamp()),
                )

    # -- sessions and turns ----------------------------------------------------------------
    def session_get(self, scope: Scope, session_id: str) -> SessionRecord | None:
        rows = self._rows(
            f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE user_id = %s AND session_id = %s", (scope.user_id, session_id)
        )
        return _session(rows[0]) if rows else None

    def session_touch(self, scope: Scope, session_id: str, at: datetime) -> SessionRecord:
        moment = at.timestamp()
        with self._tx() as conn:
            conn.execute(_TOUCH_SQL, (scope.user_id, session_id, scope.agent_id, moment, moment))
            row = conn.execute(
                f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE user_id = %s AND session_id = %s", (scope.user_id, session_id)
            ).fetchone()
        return _session(row)

    def session_list(
        self, scope: Scope, *, open_only: bool = True, idle_before: datetime | None = None
    ) -> list[SessionRecord]:
        sql = f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE user_id = %s"
        params: list[Any] = [scope.user_id]
        if scope.agent_id is not None:
            sql += " AND agent_id = %s"
            params.append(scope.agent_id)
        if open_only:
            sql += " AND ended_at IS NULL"
        if idle_before is not None:
            sql += " AND last_active < %s"
            params.append(idle_before.timestamp())
        return [_session(r) for r in self._rows(sql + " ORDER BY last_active DESC", params)]

    def session_end(self, scope: Scope, session_id: str, at: datetime, reason: str) -> bool:
        with self._tx() as conn:
            cursor = conn.execute(
                "UPDATE sessions SET ended_at = %s, end_reason = %s WHERE user_id = %s AND session_id = %s"
                " AND ended_at IS NULL",
                (at.timestamp(), reason, scope.user_id, session_id),
            )
            return cursor.rowcount == 1

    def session_finish(
        self, scope: Scope, session_id: str, *, summary_id: str | None, compressed_at: datetime
    ) -> None:
        with self._tx() as conn:
            conn.execute(
                "UPDATE sessions SET summary_id = COALESCE(%s, summary_id), compressed_at = %s"
                " WHERE user_id = %s AND session_id = %s",
                (summary_id, compressed_at.timestamp(), scope.user_id, session_id),
            )
            conn.execute("DELETE FROM session_turns WHERE user_id = %s AND session_id = %s", (scope.user_id, session_id))

    def turns_append(
        self, scope: Scope, session_id: str, turns: Sequence[TurnRecord], keep_tokens: int,
        touched_at: datetime | None = None,
    ) -> None:
        with self._tx() as conn:
            if touched_at is not None:
                moment = touched_at.timestamp()
                conn.execute(_TOUCH_SQL, (scope.user_id, session_id, scope.agent_id, moment, moment))
            with conn.cursor() as cursor:
                cursor.executemany(
                    "INSERT INTO session_turns (user_id, session_id, role, content, tokens, created_at)"
                    " VALUES (%s, %s, %s, %s, %s, %s)",
                    [(scope.user_id, session_id, t.role, t.content, t.tokens, t.created_at.timestamp()) for t in turns],
                )
            # keep the newest turns whose running total (newest first) fits
            conn.execute(
                "DELETE FROM session_turns WHERE id IN (SELECT id FROM (SELECT id, SUM(tokens) OVER (ORDER BY id DESC)"
                " AS total FROM session_turns WHERE user_id = %s AND session_id = %s) t WHERE total > %s)",
                (scope.user_id, session_id, keep_tokens),
            )

    def turns_list(self, scope: Scope, session_id: str, last: int | None = None) -> list[TurnRecord]:
        rows = self._rows(
            "SELECT role, content, tokens, created_at FROM session_turns WHERE user_id = %s AND session_id = %s"
            " ORDER BY id DESC LIMIT %s",
            (scope.user_id, session_id, last),
        )
        return [TurnRecord(role=r[0], content=r[1], tokens=r[2], created_at=from_epoch(r[3])) for r in reversed(rows)]

    def turns_rows(self, scope: Scope) -> list[tuple[int, str, str]]:
        return [tuple(r) for r in self._rows(
            "SELECT id, session_id, content FROM session_turns WHERE user_id = %s ORDER BY id", (scope.user_id,)
        )]

    def turns_delete(self, scope: Scope, turn_ids: Sequence[int]) -> None:
        if turn_ids:
            with self._tx() as conn:
                conn.execute(
                    "DELETE FROM session_turns WHERE user_id = %s AND id = ANY(%s::bigint[])", (scope.user_id, list(turn_ids))
                )
