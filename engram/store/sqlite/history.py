"""The audit trail: a memory's history and a user's. Mixed into `SQLiteStore`."""

from __future__ import annotations



from engram.models import HistoryEntry
from engram.store.sqlite.rows import history_entry


class HistoryMixin:
    """Needs the connection, lock, transactions and caches of `SQLiteStore`."""

    def history(self, memory_id: str) -> list[HistoryEntry]:
        with self._lock:
            rows = self._db.execute(
                "SELECT id, memory_id, user_id, action, old_content, new_content, reason, created_at,"
                " related_id FROM history WHERE memory_id = ? ORDER BY id",
                (memory_id,),
            ).fetchall()
        return [history_entry(r) for r in rows]

    def user_history(self, user_id: str) -> list[HistoryEntry]:
        """Every history row of a user, oldest first (export)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT id, memory_id, user_id, action, old_content, new_content, reason, created_at,"
                " related_id FROM history WHERE user_id = ? ORDER BY id",
                (user_id,),
            ).fetchall()
        return [history_entry(r) for r in rows]
