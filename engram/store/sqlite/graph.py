"""The entity graph on SQLite: entities, aliases, mentions, edges and their trace, per user.
Mixed into `SQLiteStore`; the contract is engram.store.graph's.

Consistency lives in the schema (migration `GRAPH_SCHEMA`): a trigger on `memories` drops a
deleted memory's mentions and edges, and a trigger on `graph_mentions` deletes an entity (with
its aliases, edges and history) once nothing mentions it. So every way a memory is deleted
(delete, forget, delete_all, capacity eviction, reset) keeps the graph consistent without
knowing it exists.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from engram.store.graph import GraphSnapshot
from engram.store.graph_sql import GraphMethods, names

GRAPH_SCHEMA = """
CREATE TABLE graph_entities (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    name TEXT NOT NULL,
    type TEXT NOT NULL,
    created_at REAL NOT NULL
) WITHOUT ROWID;
CREATE INDEX graph_entities_user ON graph_entities(user_id);
CREATE TABLE graph_aliases (
    user_id TEXT NOT NULL,
    key TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    alias TEXT NOT NULL,
    PRIMARY KEY (user_id, key)
) WITHOUT ROWID;
CREATE INDEX graph_aliases_entity ON graph_aliases(entity_id);
CREATE TABLE graph_mentions (
    entity_id TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    role TEXT NOT NULL,
    PRIMARY KEY (entity_id, memory_id)
) WITHOUT ROWID;
CREATE INDEX graph_mentions_memory ON graph_mentions(memory_id);
CREATE INDEX graph_mentions_user ON graph_mentions(user_id);
CREATE TABLE graph_edges (
    id INTEGER PRIMARY KEY,
    user_id TEXT NOT NULL,
    src TEXT NOT NULL,
    rel TEXT NOT NULL,
    dst TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT ''
);
CREATE INDEX graph_edges_user ON graph_edges(user_id);
CREATE INDEX graph_edges_memory ON graph_edges(memory_id);
CREATE INDEX graph_edges_src ON graph_edges(src);
CREATE INDEX graph_edges_dst ON graph_edges(dst);
CREATE TABLE graph_history (
    id INTEGER PRIMARY KEY,
    user_id TEXT NOT NULL,
    action TEXT NOT NULL,
    entity_id TEXT NOT NULL,
    other_id TEXT,
    detail TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX graph_history_user ON graph_history(user_id);
CREATE INDEX graph_history_entity ON graph_history(entity_id);
CREATE TRIGGER graph_memory_deleted AFTER DELETE ON memories BEGIN
    DELETE FROM graph_mentions WHERE memory_id = OLD.id;
    DELETE FROM graph_edges WHERE memory_id = OLD.id;
END;
CREATE TRIGGER graph_entity_orphaned AFTER DELETE ON graph_mentions
WHEN NOT EXISTS (SELECT 1 FROM graph_mentions WHERE entity_id = OLD.entity_id) BEGIN
    DELETE FROM graph_edges WHERE src = OLD.entity_id OR dst = OLD.entity_id;
    DELETE FROM graph_aliases WHERE entity_id = OLD.entity_id;
    DELETE FROM graph_history WHERE entity_id = OLD.entity_id OR other_id = OLD.entity_id;
    DELETE FROM graph_entities WHERE id = OLD.entity_id;
END;
"""

GRAPH_PENDING_SCHEMA = """
CREATE TABLE graph_pending (  -- rowid: the order they were written in (names resolve in it)
    memory_id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL
);
CREATE TRIGGER graph_pending_deleted AFTER DELETE ON memories BEGIN
    DELETE FROM graph_pending WHERE memory_id = OLD.id;
END;
"""


class GraphMixin(GraphMethods):
    """Needs the connection, lock and transactions of `SQLiteStore`; the methods are
    engram.store.graph_sql's."""

    _graph_gen: int = 0  # bumped by this process's graph writes (the caches' key)
    _names_gen: int = 0  # bumped by those that may change entities or aliases (`graph_names`)

    @contextmanager
    def _graph_tx(self, user_id: str, names: bool = True) -> Iterator[sqlite3.Connection]:
        with self._tx() as db:
            yield db
            self._graph_gen += 1
            self._names_gen += names

    def _graph_rolled_back(self) -> None:
        """What the caches read inside a transaction that rolled back is not the graph."""
        self._graph_gen += 1
        self._names_gen += 1

    @contextmanager
    def _graph_reading(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            yield self._db

    def _graph_cached(
        self, name: str, user_id: str, read: Callable[[sqlite3.Connection, str], Any],
        key: Callable[[], tuple] | None = None,
    ) -> Any:
        """`read`, reused while `key` holds (by default until this process writes the graph, any
        memory of the user changes, or another connection commits anything)."""
        with self._lock:
            current = self._graph_key(user_id) if key is None else key()
            cache: dict = self.__dict__.setdefault(name, {})
            hit = cache.get(user_id)
            if hit is not None and hit[0] == current:
                return hit[1]
            value = read(self._db, user_id)
            if len(cache) > 64:
                cache.clear()
            cache[user_id] = (current, value)
            return value

    def graph_names(self, user_id: str) -> GraphSnapshot:
        """The user's entities and aliases only, cached apart from the snapshot, whose key moves
        with every write of the user's memories: this one moves only when the graph's names can
        have changed (this process's graph writes that add entities or aliases, merges and
        splits, another connection's commit, or an entity gone with its last memory, which
        lowers the count). A memory that only mentions known names reads nothing again."""
        def key() -> tuple:
            count = self._db.execute("SELECT count(*) FROM graph_entities WHERE user_id = ?", (user_id,)).fetchone()[0]
            return (self._commits_seen(), self._names_gen, count)

        return self._graph_cached("_graph_names", user_id, names, key)

    # -- links made behind the write (engram.embed_behind) ---------------------------------
    def defer_links(self, memories: Sequence[tuple[str, str]]) -> None:
        """(In the write's transaction) these (memory id, user id) are to be linked later."""
        with self._tx() as db:
            db.executemany("INSERT OR IGNORE INTO graph_pending (memory_id, user_id) VALUES (?, ?)", memories)

    def deferred_links(self, limit: int) -> list[tuple[str, str]]:
        """(memory id, user id) of memories still to be linked (a crash before the worker reached
        them), oldest first."""
        with self._lock:
            return self._db.execute(
                "SELECT memory_id, user_id FROM graph_pending ORDER BY rowid LIMIT ?", (limit,)
            ).fetchall()

    def links_done(self, memory_ids: Sequence[str]) -> list[str]:
        """(In the linking transaction) clear the notes of these memories; returns those that
        had one (the ones still to link: another thread may have linked the rest)."""
        with self._tx() as db:
            return [r[0] for i in memory_ids for r in db.execute(
                "DELETE FROM graph_pending WHERE memory_id = ? RETURNING memory_id", (i,)
            ).fetchall()]

    def _graph_key(self, user_id: str) -> tuple[int, int, int]:
        """What a cached graph read depends on: other connections' commits (as of the search's
        start inside `reading`), this process's graph writes, and the user's memories (any
        insert, delete or status change)."""
        return (self._commits_seen(), self._graph_gen, self.user_version(user_id))
