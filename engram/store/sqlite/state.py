"""Per-user switches (paused, time zone, maintenance checkpoints), cached per process.
Mixed into `SQLiteStore`."""

from __future__ import annotations

from datetime import datetime


class StateMixin:
    """Needs the connection, lock, transactions and caches of `SQLiteStore`."""

    def get_state(self, user_id: str, name: str) -> str | None:
        with self._lock:
            self._sync_caches()
            if (user_id, name) not in self._states:
                row = self._db.execute(
                    "SELECT value FROM user_state WHERE user_id = ? AND name = ?", (user_id, name)
                ).fetchone()
                self._states[(user_id, name)] = None if row is None else row[0]
            return self._states[(user_id, name)]

    def set_state(self, user_id: str, name: str, value: str | None, at: datetime) -> None:
        with self._tx() as db:
            self._states.pop((user_id, name), None)  # read again after the commit
            if value is None:
                db.execute("DELETE FROM user_state WHERE user_id = ? AND name = ?", (user_id, name))
            else:
                db.execute(
                    "INSERT INTO user_state (user_id, name, value, updated_at) VALUES (?, ?, ?, ?)"
                    " ON CONFLICT (user_id, name) DO UPDATE SET value = excluded.value,"
                    " updated_at = excluded.updated_at",
                    (user_id, name, value, at.timestamp()),
                )
