"""Whole-table copies in and out (`engram.store.copy`, for `engram migrate`). Mixed into `SQLiteStore`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from engram.store.copy import MEMORY_COLUMNS, TABLE, keyset, unpack


class CopyMixin:
    """Needs the connection, lock and transactions of `SQLiteStore`."""

    def copy_out(self, table: str, after: Sequence[Any] | None, limit: int) -> list[tuple[tuple, dict[str, Any]]]:
        spec = TABLE[table]
        where = "" if after is None else f"WHERE {keyset(spec, '?').replace('rowid', 'm.rowid')}"
        if table == "memories":
            sql = (
                f"SELECT m.rowid, {', '.join('m.' + c for c in MEMORY_COLUMNS)}, m.embedding, m.tokens"
                f" FROM memories m {where} ORDER BY m.rowid LIMIT ?"
            )
        else:
            sql = f"SELECT {', '.join(spec.key + spec.columns)} FROM {table} {where} ORDER BY {', '.join(spec.key)} LIMIT ?"
        with self._lock:
            rows = self._db.execute(sql, [*(after or ()), limit]).fetchall()
        return unpack(spec, rows, lambda blob: np.frombuffer(blob, dtype=np.float32))

    def copy_in(self, table: str, rows: Sequence[dict[str, Any]]) -> None:
        if not rows:
            return
        spec = TABLE[table]
        columns = list(spec.columns) + (["embedding", "tokens"] if table == "memories" else [])
        sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})"
        with self._tx() as db:
            for row in rows:
                values = [row[c] for c in spec.columns]
                if table == "memories":
                    vector = row["embedding"]
                    values.append(None if vector is None else np.asarray(vector, dtype=np.float32).tobytes())
                    values.append(" ".join(row["tokens"]))
                db.execute(sql, values)
            if table == "memories":
                self._items.clear()
                for user_id in {row["user_id"] for row in rows}:
                    self._indexes.pop(user_id, None)

    def copy_count(self, table: str) -> int:
        with self._lock:
            return self._db.execute(f"SELECT count(*) FROM {TABLE[table].name}").fetchone()[0]
