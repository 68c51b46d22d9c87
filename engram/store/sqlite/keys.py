"""The REST server's API keys and shared secrets (migration 6), mixed into `SQLiteStore`.

Rows only: what a key means (hashing, verifying, scoping) is engram.service.keys.
"""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

from engram.store.sqlite.rows import from_epoch

_KEY_COLUMNS = "id, secret_hash, user_id, admin, name, created_at, revoked_at"


class KeysMixin:
    """Needs `_db`, `_lock` and `_tx` from the store."""

    def api_key_insert(self, row: dict[str, Any]) -> None:
        with self._tx() as db:
            db.execute(
                f"INSERT INTO api_keys ({_KEY_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, NULL)",
                (row["id"], row["secret_hash"], row["user_id"], int(row["admin"]), row["name"],
                 row["created_at"].timestamp()),
            )

    def api_key_get(self, key_id: str) -> dict[str, Any] | None:
        with self._lock:
            row = self._db.execute(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE id = ?", (key_id,)).fetchone()
        return None if row is None else key_row(row)

    def api_key_list(self) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(f"SELECT {_KEY_COLUMNS} FROM api_keys ORDER BY created_at, id").fetchall()
        return [key_row(r) for r in rows]

    def api_key_revoke(self, key_id: str, at: datetime) -> bool:
        """True when a live key was revoked now (False: unknown or already revoked)."""
        with self._tx() as db:
            cursor = db.execute(
                "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL", (at.timestamp(), key_id)
            )
            return cursor.rowcount == 1

    def service_secret(self, name: str) -> str:
        """A random secret shared by every process on this file, made on first use."""
        with self._lock:
            row = self._db.execute("SELECT value FROM service_secrets WHERE name = ?", (name,)).fetchone()
        if row is not None:
            return row[0]
        with self._tx() as db:
            db.execute("INSERT OR IGNORE INTO service_secrets (name, value) VALUES (?, ?)",
                       (name, secrets.token_hex(32)))
            return db.execute("SELECT value FROM service_secrets WHERE name = ?", (name,)).fetchone()[0]


def key_row(row: tuple[Any, ...]) -> dict[str, Any]:
    """An api_keys row (id, secret_hash, user_id, admin, name, created_at, revoked_at) as a dict."""
    return {
        "id": row[0], "secret_hash": row[1], "user_id": row[2], "admin": bool(row[3]), "name": row[4],
        "created_at": from_epoch(row[5]), "revoked_at": from_epoch(row[6]),
    }
