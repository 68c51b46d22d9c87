"""Whole-table copies in and out (`engram.store.copy`, for `engram migrate`). Mixed into `SQLiteStore`."""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import numpy as np

from engram.store.copy import MEMORY_COLUMNS, TABLE, keyset, unpack
from engram.store.sqlite.rows import scope_tokens


class CopyMixin:
    """Needs the connection, lock and transactions of `SQLiteStore`."""

    def copy_out(self, table: str, after: Sequence[Any] | None, limit: int) -> list[tuple[tuple, dict[str, Any]]]:
        spec = TABLE[table]
        where = "" if after is None else f"WHERE {keyset(spec, '?').replace('rowid', 'm.rowid')}"
        if table == "memories":
            sql = (
                f"SELECT m.rowid, {', '.join('m.' + c for c in MEMORY_COLUMNS)}, m.embedding, f.tokens"
                f" FROM memories m JOIN memories_fts f ON f.rowid = m.rowid {where} ORDER BY m.rowid LIMIT ?"
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
        columns = list(spec.columns) + (["embedding"] if table == "memories" else [])
        sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})"
        with self._tx() as db:
            for row in rows:
                values = [row[c] for c in spec.columns]
                if table == "memories":
                    vector = row["embedding"]
                    values.append(None if vector is None else np.asarray(vector, dtype=np.float32).tobytes())
                    rowid = db.execute(sql, values).lastrowid
                    owner = SimpleNamespace(user_id=row["user_id"], agent_id=row["agent_id"])
                    db.execute(
                        "INSERT INTO memories_fts (rowid, tokens, scope) VALUES (?, ?, ?)",
                        (rowid, " ".join(row["tokens"]), scope_tokens(owner)),
                    )
                else:
                    db.execute(sql, values)
            if table == "memories":
                self._items.clear()
                for user_id in {row["user_id"] for row in rows}:
                    self._indexes.pop(user_id, None)

    def copy_count(self, table: str) -> int:
        with self._lock:
            return self._db.execute(f"SELECT count(*) FROM {TABLE[table].name}").fetchone()[0]
