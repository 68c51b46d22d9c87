"""The entity graph on PostgreSQL: entities, aliases, mentions, edges and their trace, per user.
Mixed into `PostgresStore`; the contract is engram.store.graph's, the SQLite twin
engram.store.sqlite.graph (the same tables, triggers and statements in PostgreSQL's dialect).

Consistency lives in the schema (migration 3, `GRAPH_MIGRATION`): a trigger on ``memories``
drops a deleted memory's mentions and edges, one on ``graph_mentions`` deletes an entity (with
its aliases, edges and history) once nothing mentions it. Every graph change bumps the user's
version (engram.store.postgres.store), so a snapshot cached here is checked against it and a
write from another process is never missed.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import psycopg

from engram.store.graph import (
    LIVE_STATUSES, AliasRow, EdgeRow, EntityRow, GraphEvent, GraphSnapshot, MentionRow, event_from, event_params,
    snapshot_from,
)

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

_MOVE_MENTIONS = (
    "INSERT INTO graph_mentions (entity_id, memory_id, user_id, role)"
    " SELECT %s, memory_id, user_id, role FROM graph_mentions WHERE entity_id = %s"
)


class GraphMixin:
    """Needs the pool, transactions and per-user versions of `PostgresStore`."""

    def graph_write(
        self, user_id: str, *, entities: Sequence[EntityRow] = (), aliases: Sequence[AliasRow] = (),
        mentions: Sequence[MentionRow] = (), edges: Sequence[EdgeRow] = (),
        events: Sequence[GraphEvent] = (), replace: Sequence[str] = (),
    ) -> None:
        """New entities, aliases, mentions and edges of one user, in one transaction (joining the
        caller's, so a memory and its links commit together). `replace`: memories whose old
        mentions and edges go (those not restated here)."""
        with self._tx() as conn, conn.cursor() as cur:
            self._bump(conn, [user_id])
            cur.executemany(
                "INSERT INTO graph_entities (id, user_id, name, type, created_at) VALUES (%s, %s, %s, %s, %s)"
                " ON CONFLICT (id) DO UPDATE SET name = excluded.name, type = excluded.type",
                [(e.id, user_id, e.name, e.type, e.created_at.timestamp()) for e in entities],
            )
            cur.executemany(
                "INSERT INTO graph_aliases (user_id, key, entity_id, alias) VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                [(user_id, a.key, a.entity_id, a.alias) for a in aliases],
            )
            cur.executemany(
                "INSERT INTO graph_mentions (entity_id, memory_id, user_id, role) VALUES (%s, %s, %s, %s)"
                " ON CONFLICT (entity_id, memory_id) DO UPDATE SET user_id = excluded.user_id, role = excluded.role",
                [(m.entity_id, m.memory_id, user_id, m.role) for m in mentions],
            )
            if replace:  # after the new links are in: an entity still mentioned is not orphaned
                keep = {(m.entity_id, m.memory_id) for m in mentions}
                old = conn.execute(
                    "SELECT entity_id, memory_id FROM graph_mentions WHERE memory_id = ANY(%s::text[])", (list(replace),)
                ).fetchall()
                cur.executemany(
                    "DELETE FROM graph_mentions WHERE entity_id = %s AND memory_id = %s",
                    [tuple(row) for row in old if tuple(row) not in keep],
                )
                conn.execute("DELETE FROM graph_edges WHERE memory_id = ANY(%s::text[])", (list(replace),))
            cur.executemany(
                "INSERT INTO graph_edges (user_id, src, rel, dst, memory_id, reason) VALUES (%s, %s, %s, %s, %s, %s)",
                [(user_id, e.src, e.rel, e.dst, e.memory_id, e.reason) for e in edges],
            )
            self._graph_events(cur, events)

    def graph_merge(self, user_id: str, keep: str, drop: str, reason: str, at: datetime) -> None:
        """`drop` becomes `keep`: its aliases, mentions and edges move over, and the trace says so."""
        with self._tx() as conn, conn.cursor() as cur:
            name = conn.execute(
                "SELECT name FROM graph_entities WHERE id = %s AND user_id = %s", (drop, user_id)
            ).fetchone()
            if name is None or keep == drop:
                return
            self._bump(conn, [user_id])
            conn.execute("UPDATE graph_aliases SET entity_id = %s WHERE entity_id = %s AND user_id = %s", (keep, drop, user_id))
            conn.execute("UPDATE graph_edges SET src = %s WHERE src = %s AND user_id = %s", (keep, drop, user_id))
            conn.execute("UPDATE graph_edges SET dst = %s WHERE dst = %s AND user_id = %s", (keep, drop, user_id))
            conn.execute("DELETE FROM graph_edges WHERE src = dst AND src = %s", (keep,))
            conn.execute("UPDATE graph_history SET entity_id = %s WHERE entity_id = %s", (keep, drop))
            conn.execute("UPDATE graph_history SET other_id = NULL WHERE other_id = %s", (drop,))
            conn.execute(_MOVE_MENTIONS + " ON CONFLICT DO NOTHING", (keep, drop))
            conn.execute("DELETE FROM graph_mentions WHERE entity_id = %s", (drop,))  # the trigger drops the entity
            self._graph_events(cur, [GraphEvent(user_id, "MERGE", keep, None, f"{name[0]!r} merged in: {reason}", at)])

    def graph_split(
        self, user_id: str, entity_id: str, new: EntityRow, alias_keys: Sequence[str],
        memory_ids: Sequence[str], reason: str, at: datetime,
    ) -> None:
        """`new` takes `alias_keys` and the mentions of `memory_ids` from `entity_id` (they were
        two entities after all); both keep a trace."""
        with self._tx() as conn, conn.cursor() as cur:
            self._bump(conn, [user_id])
            conn.execute(
                "INSERT INTO graph_entities (id, user_id, name, type, created_at) VALUES (%s, %s, %s, %s, %s)",
                (new.id, user_id, new.name, new.type, new.created_at.timestamp()),
            )
            cur.executemany(
                "UPDATE graph_aliases SET entity_id = %s WHERE user_id = %s AND key = %s AND entity_id = %s",
                [(new.id, user_id, k, entity_id) for k in alias_keys],
            )
            cur.executemany(
                _MOVE_MENTIONS + " AND memory_id = %s ON CONFLICT DO NOTHING", [(new.id, entity_id, m) for m in memory_ids]
            )
            cur.executemany(
                "UPDATE graph_edges SET src = %s WHERE src = %s AND memory_id = %s", [(new.id, entity_id, m) for m in memory_ids]
            )
            cur.executemany(
                "UPDATE graph_edges SET dst = %s WHERE dst = %s AND memory_id = %s", [(new.id, entity_id, m) for m in memory_ids]
            )
            self._graph_events(cur, [
                GraphEvent(user_id, "SPLIT", new.id, entity_id, f"split off: {reason}", at),
                GraphEvent(user_id, "SPLIT", entity_id, new.id, f"{new.name!r} split off: {reason}", at),
            ])
            cur.executemany(
                "DELETE FROM graph_mentions WHERE entity_id = %s AND memory_id = %s", [(entity_id, m) for m in memory_ids]
            )

    def graph_snapshot(self, user_id: str) -> GraphSnapshot:
        """The user's whole graph; cached while the user's version (bumped by every change of
        their memories or graph, in any process) stays the same."""
        return self._graph_cached("_graph_snapshots", user_id, lambda conn: snapshot_from(
            user_id,
            conn.execute("SELECT id, name, type, created_at FROM graph_entities WHERE user_id = %s", (user_id,)),
            conn.execute("SELECT entity_id, key, alias FROM graph_aliases WHERE user_id = %s", (user_id,)),
            conn.execute("SELECT entity_id, memory_id, role FROM graph_mentions WHERE user_id = %s", (user_id,)),
            conn.execute(
                "SELECT src, rel, dst, memory_id, reason FROM graph_edges WHERE user_id = %s ORDER BY id", (user_id,)
            ),
        ))

    def graph_live(self, user_id: str) -> frozenset[str]:
        """Ids of the user's live memories (active, disputed) that the graph links; cached like the snapshot."""
        return self._graph_cached("_graph_live", user_id, lambda conn: frozenset(r[0] for r in conn.execute(
            "SELECT DISTINCT m.id FROM graph_mentions g JOIN memories m ON m.id = g.memory_id"
            " WHERE g.user_id = %s AND m.status = ANY(%s::text[])", (user_id, list(LIVE_STATUSES)),
        )))

    def _graph_cached(self, name: str, user_id: str, read):
        """`read(conn)` for the user, reused while their version holds. Inside a transaction
        (whose uncommitted changes the version does not show yet) read afresh, uncached."""
        if getattr(self._local, "conn", None) is not None:
            with self._conn() as conn:
                return read(conn)
        cache: dict = self.__dict__.setdefault(name, {})
        with self._conn() as conn, conn.transaction():  # version and rows from one snapshot
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            row = conn.execute("SELECT version FROM user_versions WHERE user_id = %s", (user_id,)).fetchone()
            version = 0 if row is None else row[0]
            hit = cache.get(user_id)
            if hit is not None and hit[0] == version:
                return hit[1]
            value = read(conn)
        with self._lock:
            if len(cache) > 64:
                cache.clear()
            cache[user_id] = (version, value)
        return value

    def graph_history(self, user_id: str) -> list[GraphEvent]:
        """The trace of resolution (creations, aliases, merges, splits), oldest first."""
        return [event_from(user_id, r) for r in self._rows(
            "SELECT action, entity_id, other_id, detail, created_at FROM graph_history WHERE user_id = %s ORDER BY id",
            (user_id,),
        )]

    @staticmethod
    def _graph_events(cur: psycopg.Cursor, events: Sequence[GraphEvent]) -> None:
        cur.executemany(
            "INSERT INTO graph_history (user_id, action, entity_id, other_id, detail, created_at)"
            " VALUES (%s, %s, %s, %s, %s, %s)",
            event_params(events),
        )
