"""The entity graph on PostgreSQL: entities, aliases, mentions, edges and their trace, per user.
Mixed into `PostgresStore`; the contract is engram.store.graph's, the SQLite twin
engram.store.sqlite.graph (the same tables and triggers in PostgreSQL's dialect; the methods are engram.store.graph_sql's).

Consistency lives in the schema (migration 3, `GRAPH_MIGRATION`): a trigger on ``memories``
drops a deleted memory's mentions and edges, one on ``graph_mentions`` deletes an entity (with
its aliases, edges and history) once nothing mentions it. Every graph change bumps the user's
version (engram.store.postgres.store), so a snapshot cached here is checked against it and a
write from another process is never missed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, nullcontext
from typing import Any

import psycopg

from engram.store.graph_sql import SELF_CONSISTENT, GraphMethods, fresh_memo

GRAPH_MIGRATION: tuple[str, ...] = (
    """CREATE TABLE graph_entities (
        id text PRIMARY KEY,
        user_id text NOT NULL,
        name text NOT NULL,
        type text NOT NULL,
        created_at double precision NOT NULL
    )""",
    "CREATE INDEX graph_entities_user ON graph_entities(user_id)",
    """CREATE TABLE graph_aliases (
        user_id text NOT NULL,
        key text NOT NULL,
        entity_id text NOT NULL,
        alias text NOT NULL,
        PRIMARY KEY (user_id, key)
    )""",
    "CREATE INDEX graph_aliases_entity ON graph_aliases(entity_id)",
    """CREATE TABLE graph_mentions (
        entity_id text NOT NULL,
        memory_id text NOT NULL,
        user_id text NOT NULL,
        role text NOT NULL,
        PRIMARY KEY (entity_id, memory_id)
    )""",
    "CREATE INDEX graph_mentions_memory ON graph_mentions(memory_id)",
    "CREATE INDEX graph_mentions_user ON graph_mentions(user_id)",
    """CREATE TABLE graph_edges (
        id bigserial PRIMARY KEY,
        user_id text NOT NULL,
        src text NOT NULL,
        rel text NOT NULL,
        dst text NOT NULL,
        memory_id text NOT NULL,
        reason text NOT NULL DEFAULT ''
    )""",
    "CREATE INDEX graph_edges_user ON graph_edges(user_id)",
    "CREATE INDEX graph_edges_memory ON graph_edges(memory_id)",
    "CREATE INDEX graph_edges_src ON graph_edges(src)",
    "CREATE INDEX graph_edges_dst ON graph_edges(dst)",
    """CREATE TABLE graph_history (
        id bigserial PRIMARY KEY,
        user_id text NOT NULL,
        action text NOT NULL,
        entity_id text NOT NULL,
        other_id text,
        detail text NOT NULL,
        created_at double precision NOT NULL
    )""",
    "CREATE INDEX graph_history_user ON graph_history(user_id)",
    "CREATE INDEX graph_history_entity ON graph_history(entity_id)",
    """CREATE FUNCTION graph_memory_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM graph_mentions WHERE memory_id = OLD.id;
        DELETE FROM graph_edges WHERE memory_id = OLD.id;
        RETURN NULL;
    END $$""",
    """CREATE TRIGGER graph_memory_deleted AFTER DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION graph_memory_deleted()""",
    """CREATE FUNCTION graph_entity_orphaned() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF NOT EXISTS (SELECT 1 FROM graph_mentions WHERE entity_id = OLD.entity_id) THEN
            DELETE FROM graph_edges WHERE src = OLD.entity_id OR dst = OLD.entity_id;
            DELETE FROM graph_aliases WHERE entity_id = OLD.entity_id;
            DELETE FROM graph_history WHERE entity_id = OLD.entity_id OR other_id = OLD.entity_id;
            DELETE FROM graph_entities WHERE id = OLD.entity_id;
        END IF;
        RETURN NULL;
    END $$""",
    """CREATE TRIGGER graph_entity_orphaned AFTER DELETE ON graph_mentions
    FOR EACH ROW EXECUTE FUNCTION graph_entity_orphaned()""",
)

# A search's reads of the mentions (`graph_sql.around`, `mentioned`: a user's entities, how many
# memories each; how many memories the graph links) answered from the index alone: from the
# table they read a heap page per mention, the user's mentions being spread over the file as
# they were written (1M memories: ~1,200 mentions a user over ~200 pages; the counts 1.6 → 0.3
# ms, the linked memories 2.2 → 0.8 ms a cold user). The index by user alone goes: this one
# starts with it.
GRAPH_READS_MIGRATION: tuple[str, ...] = (
    "DROP INDEX graph_mentions_user",
    "CREATE INDEX graph_mentions_user ON graph_mentions(user_id, entity_id, memory_id)",
)

# A cold search's first read of the graph is the user's names (`graph_sql.names`): entities and
# aliases written over months sit on ~120 heap pages shared with other users (~3 ms when they
# are not in the buffers, at 1M memories); from indexes that carry the columns it reads, the
# user's entries are a few adjacent leaf pages (~0.4 ms). Names are short (rules bound them, the
# LLM's and imports' are capped at `engram.graph.portable` limits), well under an index row.
GRAPH_NAMES_MIGRATION: tuple[str, ...] = (
    "DROP INDEX graph_entities_user",
    "CREATE INDEX graph_entities_user ON graph_entities(user_id) INCLUDE (id, name, type, created_at)",
    "CREATE INDEX graph_aliases_user ON graph_aliases(user_id) INCLUDE (key, entity_id, alias)",
)

_INSERT = re.compile(r"INSERT INTO (\w+) \(([^)]*)\) VALUES (\([^)]*\))(.*)", re.S)
_UPDATES = re.compile(r"ON CONFLICT \(([^)]*)\) DO UPDATE")
_ROWS_PER_STATEMENT = 1_000  # PostgreSQL takes at most 65,535 parameters a statement


def statements(sql: str, rows: Sequence[Sequence[Any]]) -> Iterator[tuple[str, Sequence[Any]]]:
    """`executemany(sql, rows)` as few statements: an INSERT as multi-row ones (when it updates
    on conflict, one row per key, the last: a statement may not update a row twice, and one by
    one the last would win), anything else row by row."""
    found = _INSERT.fullmatch(sql)
    if found is None:
        yield from ((sql, row) for row in rows)
        return
    table, columns, marks, rest = found.groups()
    target = _UPDATES.search(rest)
    if target is not None:
        names = [c.strip() for c in columns.split(",")]
        at = [names.index(c.strip()) for c in target.group(1).split(",")]
        rows = list({tuple(row[i] for i in at): row for row in rows}.values())
    for start in range(0, len(rows), _ROWS_PER_STATEMENT):
        chunk = rows[start : start + _ROWS_PER_STATEMENT]
        yield f"INSERT INTO {table} ({columns}) VALUES {', '.join([marks] * len(chunk))}{rest}", [v for r in chunk for v in r]


class Marks:
    """A psycopg cursor taking engram.store.graph_sql's ``?`` placeholders (its SQL holds no
    other ``?`` or ``%``). With `queue`, `executemany` waits for the next `execute` or `flush`,
    which sends what waits as multi-row statements in one pipeline: one round trip for a whole
    graph write, where psycopg's `executemany` takes one per call."""

    def __init__(self, cursor: psycopg.Cursor, *, queue: bool = False) -> None:
        self.cursor = cursor
        self.queued: list[tuple[str, Sequence[Sequence[Any]]]] | None = [] if queue else None

    def execute(self, sql: str, params: Sequence[Any] = ()) -> psycopg.Cursor:
        self.flush()
        return self.cursor.execute(sql.replace("?", "%s"), params)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        if not rows:
            return
        if self.queued is None:
            self.cursor.executemany(sql.replace("?", "%s"), rows)
        else:
            self.queued.append((sql.replace("?", "%s"), rows))

    def flush(self) -> None:
        if not self.queued:
            return
        queued, self.queued = self.queued, []
        with self.cursor.connection.pipeline():
            for sql, rows in queued:
                for statement, params in statements(sql, rows):  # (a text per row count: not prepared)
                    self.cursor.execute(statement, params, prepare=False)


class GraphMixin(GraphMethods):
    """Needs the pool, transactions and per-user versions of `PostgresStore`; the methods are
    engram.store.graph_sql's."""

    @contextmanager
    def _graph_tx(self, user_id: str, names: bool = True) -> Iterator[Marks]:
        """A graph change: one transaction (or the caller's) that bumps the user's version, its
        statements sent in one pipeline (a bulk ingest writes the graph of every user it touches:
        ~10 round trips per user before)."""
        held = getattr(self._local, "conn", None)
        # inside the caller's transaction no savepoint of its own (two round trips): a failed
        # graph write fails the caller's transaction, as a memory and its links commit together
        with (nullcontext(held) if held is not None else self._tx()) as conn, conn.cursor() as cur:
            self._bump(conn, [user_id])
            marks = Marks(cur, queue=True)
            yield marks
            marks.flush()

    @contextmanager
    def _graph_reading(self) -> Iterator[Marks]:
        with self._conn() as conn, conn.cursor() as cur:
            yield Marks(cur)

    def _graph_cached(self, name: str, user_id: str, read: Callable[[Marks, str], Any]) -> Any:
        """`read` for the user, reused while their version holds. Inside a transaction (whose
        uncommitted changes the version does not show yet) read afresh, uncached. Inside `reading`,
        a hit on the version it saw, and the empty `fresh_memo`, cost no round trip, and a read
        that is one statement (`SELF_CONSISTENT`) one: a cold user's names took six (a snapshot
        transaction around the version and two statements)."""
        if getattr(self._local, "conn", None) is not None:
            with self._conn() as conn, conn.cursor() as cur:
                return read(Marks(cur), user_id)
        cache: dict = self.__dict__.setdefault(name, {})
        hit = cache.get(user_id)
        version = self._version_seen(user_id)
        if hit is not None and version is not None and version == hit[0]:
            return hit[1]
        if version is not None and read is fresh_memo:  # reads no rows: no snapshot to take
            value = read(None, user_id)
        elif version is not None and read in SELF_CONSISTENT:
            with self._conn() as conn, conn.cursor() as cur:
                value = read(Marks(cur), user_id)
        else:
            with self._conn() as conn, conn.transaction(), conn.cursor() as cur:  # version and rows: one snapshot
                cur.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
                row = cur.execute("SELECT version FROM user_versions WHERE user_id = %s", (user_id,)).fetchone()
                version = 0 if row is None else row[0]
                self._saw_version(user_id, version)
                hit = cache.get(user_id)
                if hit is not None and hit[0] == version:
                    return hit[1]
                value = read(Marks(cur), user_id)
        with self._lock:
            if len(cache) > 64:
                cache.clear()
            cache[user_id] = (version, value)
        return value
