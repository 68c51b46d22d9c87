"""Whole-table copies in and out (`engram.store.copy`, for `engram migrate`). Mixed into `PostgresStore`."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from engram.store.copy import JSON_COLUMNS, TABLE, keyset, unpack
from engram.store.postgres.schema import FLAG_ALL, PROMOTE_ALL, RECOUNT, hnsw_index
from engram.store.postgres.search import HNSW_ABOVE, HNSW_MIN_SHARE

_SERIAL = {"history": "id", "session_turns": "id", "jobs": "id", "graph_edges": "id", "graph_history": "id"}


def _select(column: str) -> str:
    return f"{column}::text" if column in JSON_COLUMNS else column


class CopyMixin:
    """Needs the pool, transactions and caches of `PostgresStore`."""

    def copy_out(self, table: str, after: Sequence[Any] | None, limit: int) -> list[tuple[tuple, dict[str, Any]]]:
        spec = TABLE[table]
        where = "" if after is None else f"WHERE {keyset(spec, '%s')}"
        extra = ", embedding, tokens" if table == "memories" else ""
        columns = ", ".join(_select(c) for c in spec.key + spec.columns)
        rows = self._rows(
            f"SELECT {columns}{extra} FROM {table} {where} ORDER BY {', '.join(spec.key)} LIMIT %s",
            [*(after or ()), limit], binary=table == "memories",
        )
        return unpack(spec, rows)

    def copy_in(self, table: str, rows: Sequence[dict[str, Any]]) -> None:
        if not rows:
            return
        spec = TABLE[table]
        columns = list(spec.columns) + (["embedding", "tokens"] if table == "memories" else [])
        marks = ", ".join("%s::jsonb" if c in JSON_COLUMNS else "%s" for c in columns)
        sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})"
        values = []
        for row in rows:
            value = [row[c] for c in spec.columns]
            if table == "memories":
                vector = row["embedding"]
                value += [None if vector is None else np.asarray(vector, dtype=np.float32), " ".join(row["tokens"])]
            values.append(value)
        with self._tx() as conn:
            with conn.cursor() as cursor:
                cursor.executemany(sql, values)
            if table in _SERIAL:  # ids were given: the sequence continues after them
                column = _SERIAL[table]
                conn.execute(
                    f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'),"
                    f" (SELECT GREATEST(max({column}), 1) FROM {table}))"
                )
            if table == "memories":
                self._bump(conn, {row["user_id"] for row in rows})
                self._count_rows(conn, Counter(row["user_id"] for row in rows))
        if table == "memories":  # (inside `atomic`: the whole transaction's patches then find no index)
            self._drop_indexes({row["user_id"] for row in rows})

    def copy_prepare(self) -> None:
        """Before a bulk copy: no HNSW index to maintain row by row (built once, in `copy_finish`,
        which is several times faster; a store opened meanwhile builds it at open)."""
        with self._tx() as conn:
            conn.execute(f"DROP INDEX IF EXISTS memories_hnsw_{int(self.dim)}")

    def copy_finish(self) -> None:
        """The row counts, the users HNSW serves (by the table's true size now), then the index."""
        with self._tx() as conn:
            conn.execute(RECOUNT)
            conn.execute(PROMOTE_ALL, {"above": HNSW_ABOVE, "share": HNSW_MIN_SHARE})
            conn.execute(FLAG_ALL)
            conn.execute("SET LOCAL maintenance_work_mem = '512MB'")
            conn.execute(hnsw_index(self.dim))
            conn.execute("ANALYZE memories")

    def copy_count(self, table: str) -> int:
        return self._rows(f"SELECT count(*) FROM {TABLE[table].name}")[0][0]
