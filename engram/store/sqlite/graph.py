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
from collections.abc import Sequence
from datetime import datetime

from engram.store.graph import AliasRow, EdgeRow, EntityRow, GraphEvent, GraphSnapshot, MentionRow
from engram.store.sqlite.rows import from_epoch

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

LIVE_STATUSES = ("active", "disputed")


class GraphMixin:
    """Needs the connection, lock and transactions of `SQLiteStore`."""

    _graph_gen: int = 0  # bumped by this process's graph writes (the snapshot cache's key)

    def graph_write(
        self, user_id: str, *, entities: Sequence[EntityRow] = (), aliases: Sequence[AliasRow] = (),
        mentions: Sequence[MentionRow] = (), edges: Sequence[EdgeRow] = (),
        events: Sequence[GraphEvent] = (), replace: Sequence[str] = (),
    ) -> None:
        """New entities, aliases, mentions and edges of one user, in one transaction (joining the
        caller's, so a memory and its links commit together). `replace`: memories whose old
        mentions and edges go (those not restated here)."""
        with self._tx() as db:
            db.executemany(
                "INSERT INTO graph_entities (id, user_id, name, type, created_at) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT (id) DO UPDATE SET name = excluded.name, type = excluded.type",
                [(e.id, user_id, e.name, e.type, e.created_at.timestamp()) for e in entities],
            )
            db.executemany(
                "INSERT OR IGNORE INTO graph_aliases (user_id, key, entity_id, alias) VALUES (?, ?, ?, ?)",
                [(user_id, a.key, a.entity_id, a.alias) for a in aliases],
            )
            db.executemany(
                "INSERT OR REPLACE INTO graph_mentions (entity_id, memory_id, user_id, role) VALUES (?, ?, ?, ?)",
                [(m.entity_id, m.memory_id, user_id, m.role) for m in mentions],
            )
            if replace:  # after the new links are in: an entity still mentioned is not orphaned
                keep = {(m.entity_id, m.memory_id) for m in mentions}
                marks = ", ".join("?" for _ in replace)
                old = db.execute(
                    f"SELECT entity_id, memory_id FROM graph_mentions WHERE memory_id IN ({marks})", list(replace)
                ).fetchall()
                db.executemany(
                    "DELETE FROM graph_mentions WHERE entity_id = ? AND memory_id = ?",
                    [tuple(row) for row in old if tuple(row) not in keep],
                )
                db.execute(f"DELETE FROM graph_edges WHERE memory_id IN ({marks})", list(replace))
            db.executemany(
                "INSERT INTO graph_edges (user_id, src, rel, dst, memory_id, reason) VALUES (?, ?, ?, ?, ?, ?)",
                [(user_id, e.src, e.rel, e.dst, e.memory_id, e.reason) for e in edges],
            )
            self._graph_events(db, events)
            self._graph_gen += 1

    def graph_merge(self, user_id: str, keep: str, drop: str, reason: str, at: datetime) -> None:
        """`drop` becomes `keep`: its aliases, mentions and edges move over, and the trace says so."""
        with self._tx() as db:
            name = db.execute(
                "SELECT name FROM graph_entities WHERE id = ? AND user_id = ?", (drop, user_id)
            ).fetchone()
            if name is None or keep == drop:
                return
            db.execute("UPDATE graph_aliases SET entity_id = ? WHERE entity_id = ? AND user_id = ?", (keep, drop, user_id))
            db.execute("UPDATE graph_edges SET src = ? WHERE src = ? AND user_id = ?", (keep, drop, user_id))
            db.execute("UPDATE graph_edges SET dst = ? WHERE dst = ? AND user_id = ?", (keep, drop, user_id))
            db.execute("DELETE FROM graph_edges WHERE src = dst AND src = ?", (keep,))
            db.execute("UPDATE graph_history SET entity_id = ? WHERE entity_id = ?", (keep, drop))
            db.execute("UPDATE graph_history SET other_id = NULL WHERE other_id = ?", (drop,))
            db.execute(
                "INSERT OR IGNORE INTO graph_mentions (entity_id, memory_id, user_id, role)"
                " SELECT ?, memory_id, user_id, role FROM graph_mentions WHERE entity_id = ?", (keep, drop),
            )
            db.execute("DELETE FROM graph_mentions WHERE entity_id = ?", (drop,))  # the trigger drops the entity
            self._graph_events(db, [GraphEvent(user_id, "MERGE", keep, None, f"{name[0]!r} merged in: {reason}", at)])
            self._graph_gen += 1

    def graph_split(
        self, user_id: str, entity_id: str, new: EntityRow, alias_keys: Sequence[str],
        memory_ids: Sequence[str], reason: str, at: datetime,
    ) -> None:
        """`new` takes `alias_keys` and the mentions of `memory_ids` from `entity_id` (they were
        two entities after all); both keep a trace."""
        with self._tx() as db:
            db.execute(
                "INSERT INTO graph_entities (id, user_id, name, type, created_at) VALUES (?, ?, ?, ?, ?)",
                (new.id, user_id, new.name, new.type, new.created_at.timestamp()),
            )
            db.executemany(
                "UPDATE graph_aliases SET entity_id = ? WHERE user_id = ? AND key = ? AND entity_id = ?",
                [(new.id, user_id, k, entity_id) for k in alias_keys],
            )
            db.executemany(
                "INSERT OR IGNORE INTO graph_mentions (entity_id, memory_id, user_id, role)"
                " SELECT ?, memory_id, user_id, role FROM graph_mentions WHERE entity_id = ? AND memory_id = ?",
                [(new.id, entity_id, m) for m in memory_ids],
            )
            db.executemany(
                "UPDATE graph_edges SET src = ? WHERE src = ? AND memory_id = ?", [(new.id, entity_id, m) for m in memory_ids]
            )
            db.executemany(
                "UPDATE graph_edges SET dst = ? WHERE dst = ? AND memory_id = ?", [(new.id, entity_id, m) for m in memory_ids]
            )
            self._graph_events(db, [
                GraphEvent(user_id, "SPLIT", new.id, entity_id, f"split off: {reason}", at),
                GraphEvent(user_id, "SPLIT", entity_id, new.id, f"{new.name!r} split off: {reason}", at),
            ])
            db.executemany(
                "DELETE FROM graph_mentions WHERE entity_id = ? AND memory_id = ?", [(entity_id, m) for m in memory_ids]
            )
            self._graph_gen += 1

    def graph_snapshot(self, user_id: str) -> GraphSnapshot:
        """The user's whole graph; cached until this process writes it or any memory of the
        user (or anything in another process) changes."""
        with self._lock:
            key = self._graph_key(user_id)
            cache: dict[str, tuple[tuple[int, int, int], GraphSnapshot]] = self.__dict__.setdefault("_graph_cache", {})
            hit = cache.get(user_id)
            if hit is not None and hit[0] == key:
                return hit[1]
            db = self._db
            snap = GraphSnapshot(
                entities={
                    r[0]: EntityRow(r[0], user_id, r[1], r[2], from_epoch(r[3]))
                    for r in db.execute(
                        "SELECT id, name, type, created_at FROM graph_entities WHERE user_id = ?", (user_id,)
                    )
                },
                aliases=[AliasRow(r[0], r[1], r[2]) for r in db.execute(
                    "SELECT entity_id, key, alias FROM graph_aliases WHERE user_id = ?", (user_id,)
                )],
                mentions=[MentionRow(r[0], r[1], r[2]) for r in db.execute(
                    "SELECT entity_id, memory_id, role FROM graph_mentions WHERE user_id = ?", (user_id,)
                )],
                edges=[EdgeRow(r[0], r[1], r[2], r[3], r[4]) for r in db.execute(
                    "SELECT src, rel, dst, memory_id, reason FROM graph_edges WHERE user_id = ? ORDER BY id", (user_id,)
                )],
            )
            if len(cache) > 64:
                cache.clear()
            cache[user_id] = (key, snap)
            return snap

    def graph_live(self, user_id: str) -> frozenset[str]:
        """Ids of the user's live memories (active, disputed) that the graph links; cached like
        the snapshot (a status change bumps the user's version)."""
        with self._lock:
            key = self._graph_key(user_id)
            cache: dict[str, tuple[tuple[int, int, int], frozenset[str]]] = self.__dict__.setdefault("_graph_live", {})
            hit = cache.get(user_id)
            if hit is not None and hit[0] == key:
                return hit[1]
            live = frozenset(r[0] for r in self._db.execute(
                "SELECT DISTINCT m.id FROM graph_mentions g JOIN memories m ON m.id = g.memory_id"
                " WHERE g.user_id = ? AND m.status IN (?, ?)", (user_id, *LIVE_STATUSES),
            ))
            if len(cache) > 64:
                cache.clear()
            cache[user_id] = (key, live)
            return live

    def _graph_key(self, user_id: str) -> tuple[int, int, int]:
        """What a cached graph read depends on: other connections' commits, this process's graph
        writes, and the user's memories (any insert, delete or status change)."""
        return (self._db.execute("PRAGMA data_version").fetchone()[0], self._graph_gen, self.user_version(user_id))

    def graph_history(self, user_id: str) -> list[GraphEvent]:
        """The trace of resolution (creations, aliases, merges, splits), oldest first."""
        with self._lock:
            return [
                GraphEvent(user_id, r[0], r[1], r[2], r[3], from_epoch(r[4]))
                for r in self._db.execute(
                    "SELECT action, entity_id, other_id, detail, created_at FROM graph_history"
                    " WHERE user_id = ? ORDER BY id", (user_id,),
                )
            ]

    @staticmethod
    def _graph_events(db: sqlite3.Connection, events: Sequence[GraphEvent]) -> None:
        db.executemany(
            "INSERT INTO graph_history (user_id, action, entity_id, other_id, detail, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [(e.user_id, e.action, e.entity_id, e.other_id, e.detail, e.at.timestamp()) for e in events],
        )
