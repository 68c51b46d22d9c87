"""Whole-store copies between backends (`engram migrate`): the tables every backend keeps and
the row shape they exchange, so a backend only maps its own storage to these rows.

A row is a dict of column -> value with the SQLite store's conventions (times as POSIX
seconds, JSON fields as text); a memory row also carries ``embedding`` (float32 array or
None) and ``tokens`` (engram's lexical tokens). Rows come out in the source's key order
(`CopyRows.copy_out`, keyset paging from `after`) and go in with their keys kept
(`CopyRows.copy_in`), so history, turns and jobs keep their ids and order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

# a memory's fields (`MemoryItem`'s, in `engram.store.sqlite.rows.SELECT_ITEM`'s order) and its keys
MEMORY_COLUMNS = tuple(
    "id user_id agent_id session_id content kind layer status language key value importance confidence strength"
    " access_count last_accessed created_at updated_at valid_from valid_to source metadata entities tags due_at"
    " recurrence supersedes superseded_by sources embedding_model content_hash idempotency_key".split()
)
JSON_COLUMNS = frozenset({"metadata", "entities", "tags", "sources"})


@dataclass(frozen=True)
class Table:
    name: str
    key: tuple[str, ...]  # the order rows are copied in (and the resume cursor)
    columns: tuple[str, ...]


TABLES = (
    Table("memories", ("rowid",), MEMORY_COLUMNS),
    Table("history", ("id",), tuple(
        "id memory_id user_id action old_content new_content reason created_at related_id".split())),
    Table("sessions", ("user_id", "session_id"), tuple(
        "user_id session_id agent_id started_at last_active ended_at end_reason compressed_at summary_id".split())),
    Table("session_turns", ("id",), tuple("id user_id session_id role content tokens created_at".split())),
    Table("user_state", ("user_id", "name"), tuple("user_id name value updated_at".split())),
    Table("jobs", ("id",), tuple(
        "id kind user_id agent_id session_id payload state attempts error created_at run_after claimed_by"
        " claimed_at".split())),
    Table("api_keys", ("id",), tuple("id secret_hash user_id admin name created_at revoked_at".split())),
    Table("service_secrets", ("name",), ("name", "value")),
)
TABLE = {t.name: t for t in TABLES}


class CopyRows(Protocol):
    """What a backend adds to `Store` so `engram migrate` can copy it whole."""

    def copy_out(self, table: str, after: Sequence[Any] | None, limit: int) -> list[tuple[tuple, dict[str, Any]]]:
        """Up to `limit` rows of `table` after key `after` (None: from the start), in key
        order, as (key, row)."""
        ...

    def copy_in(self, table: str, rows: Sequence[dict[str, Any]]) -> None:
        """Insert rows as they came out (keys kept), inside the caller's transaction when
        there is one (`atomic`)."""
        ...

    def copy_count(self, table: str) -> int: ...

    # optional: `copy_prepare()` before the first batch and `copy_finish()` after the last
    # (e.g. an index built once instead of row by row)


def unpack(
    table: Table, rows: Sequence[Sequence[Any]], vector: Callable[[Any], Any] = lambda v: v
) -> list[tuple[tuple, dict[str, Any]]]:
    """(key, row) from result rows laid out as key columns, `table.columns`, then for memories
    the vector (through `vector`) and the space-separated tokens."""
    width, out = len(table.key), []
    for r in rows:
        row = dict(zip(table.columns, r[width : width + len(table.columns)], strict=True))
        if table.name == "memories":
            row["embedding"] = None if r[-2] is None else vector(r[-2])
            row["tokens"] = r[-1].split()
        out.append((tuple(r[:width]), row))
    return out


def keyset(table: Table, placeholder: str) -> str:
    """The WHERE clause of the rows after a key: ``(a, b) > (?, ?)``."""
    columns = ", ".join(table.key)
    marks = ", ".join(placeholder for _ in table.key)
    return f"({columns}) > ({marks})" if len(table.key) > 1 else f"{columns} > {placeholder}"
