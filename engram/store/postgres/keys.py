"""The REST server's API keys and shared secrets (migration 2), mixed into `PostgresStore`:
the rows of `engram.store.sqlite.keys`, shared by every server process on the database."""

from __future__ import annotations

import secrets
from datetime import datetime
from typing import Any

from engram.store.sqlite.keys import key_row

_KEY_COLUMNS = "id, secret_hash, user_id, admin, name, created_at, revoked_at"


class KeysMixin:
    """Needs the pool and transactions of `PostgresStore`."""

    def api_key_insert(self, row: dict[str, Any]) -> None:
        with self._tx() as conn:
            conn.execute(
                f"INSERT INTO api_keys ({_KEY_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, NULL)",
                (row["id"], row["secret_hash"], row["user_id"], int(row["admin"]), row["name"],
                 row["created_at"].timestamp()),
            )

    def api_key_get(self, key_id: str) -> dict[str, Any] | None:
        rows = self._rows(f"SELECT {_KEY_COLUMNS} FROM api_keys WHERE id = %s", (key_id,))
        return key_row(rows[0]) if rows else None

    def api_key_list(self) -> list[dict[str, Any]]:
        return [key_row(r) for r in self._rows(f"SELECT {_KEY_COLUMNS} FROM api_keys ORDER BY created_at, id")]

    def api_key_revoke(self, key_id: str, at: datetime) -> bool:
        with self._tx() as conn:
            return conn.execute(
                "UPDATE api_keys SET revoked_at = %s WHERE id = %s AND revoked_at IS NULL", (at.timestamp(), key_id)
            ).rowcount == 1

    def service_secret(self, name: str) -> str:
        """A random secret shared by every process on this database, made on first use."""
        with self._tx() as conn:
            conn.execute(
                "INSERT INTO service_secrets (name, value) VALUES (%s, %s) ON CONFLICT (name) DO NOTHING",
                (name, secrets.token_hex(32)),
            )
            return conn.execute("SELECT value FROM service_secrets WHERE name = %s", (name,)).fetchone()[0]
