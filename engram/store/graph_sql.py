"""The entity graph's statements and `Store` methods, one implementation for every SQL backend
(SQLite: engram.store.sqlite.graph, PostgreSQL: engram.store.postgres.graph). Each backend
brings its schema (tables and triggers, the same in both), its transaction and its caching
(`GraphMethods`' three hooks); the statements take a DB-API handle with
``execute``/``executemany`` and ``?`` placeholders (the PostgreSQL store wraps its cursor in
`Marks`). Every statement is valid in both dialects."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, Protocol

from engram.store.graph import (
    LIVE_STATUSES, AliasRow, EdgeRow, EntityRow, GraphEvent, GraphSnapshot, MentionRow, event_from, event_params,
    snapshot_from,
)


class Handle(Protocol):
    def execute(self, sql: str, params: Sequence[Any] = ...) -> Any: ...
    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> Any: ...


def _marks(values: Sequence[Any]) -> str:
    return ", ".join("?" for _ in values)


def write(
    db: Handle, user_id: str, entities: Sequence[EntityRow], aliases: Sequence[AliasRow],
    mentions: Sequence[MentionRow], edges: Sequence[EdgeRow], events: Sequence[GraphEvent], replace: Sequence[str],
) -> None:
    """`Store.graph_write`'s statements (inside the caller's transaction)."""
    db.executemany(
        "INSERT INTO graph_entities (id, user_id, name, type, created_at) VALUES (?, ?, ?, ?, ?)"
        " ON CONFLICT (id) DO UPDATE SET name = excluded.name, type = excluded.type",
        [(e.id, user_id, e.name, e.type, e.created_at.timestamp()) for e in entities],
    )
    db.executemany(
        "INSERT INTO graph_aliases (user_id, key, entity_id, alias) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
        [(user_id, a.key, a.entity_id, a.alias) for a in aliases],
    )
    db.executemany(
        "INSERT INTO graph_mentions (entity_id, memory_id, user_id, role) VALUES (?, ?, ?, ?)"
        " ON CONFLICT (entity_id, memory_id) DO UPDATE SET user_id = excluded.user_id, role = excluded.role",
        [(m.entity_id, m.memory_id, user_id, m.role) for m in mentions],
    )
    if replace:  # after the new links are in: an entity still mentioned is not orphaned
        keep = {(m.entity_id, m.memory_id) for m in mentions}
        old = db.execute(
            f"SELECT entity_id, memory_id FROM graph_mentions WHERE memory_id IN ({_marks(replace)})", list(replace)
        ).fetchall()
        db.executemany(
            "DELETE FROM graph_mentions WHERE entity_id = ? AND memory_id = ?",
            [tuple(row) for row in old if tuple(row) not in keep],
        )
        db.execute(f"DELETE FROM graph_edges WHERE memory_id IN ({_marks(replace)})", list(replace))
    db.executemany(
        "INSERT INTO graph_edges (user_id, src, rel, dst, memory_id, reason) VALUES (?, ?, ?, ?, ?, ?)",
        [(user_id, e.src, e.rel, e.dst, e.memory_id, e.reason) for e in edges],
    )
    add_events(db, events)


_COPY_MENTIONS = (
    "INSERT INTO graph_mentions (entity_id, memory_id, user_id, role)"
    " SELECT ?, memory_id, user_id, role FROM graph_mentions WHERE entity_id = ?"
)


def merge(db: Handle, user_id: str, keep: str, drop: str, reason: str, at: datetime) -> bool:
    """`Store.graph_merge`'s statements; False when there was nothing to merge."""
    name = db.execute("SELECT name FROM graph_entities WHERE id = ? AND user_id = ?", (drop, user_id)).fetchone()
    if name is None or keep == drop:
        return False
    db.execute("UPDATE graph_aliases SET entity_id = ? WHERE entity_id = ? AND user_id = ?", (keep, drop, user_id))
    db.execute("UPDATE graph_edges SET src = ? WHERE src = ? AND user_id = ?", (keep, drop, user_id))
    db.execute("UPDATE graph_edges SET dst = ? WHERE dst = ? AND user_id = ?", (keep, drop, user_id))
    db.execute("DELETE FROM graph_edges WHERE src = dst AND src = ?", (keep,))
    db.execute("UPDATE graph_history SET entity_id = ? WHERE entity_id = ?", (keep, drop))
    db.execute("UPDATE graph_history SET other_id = NULL WHERE other_id = ?", (drop,))
    db.execute(_COPY_MENTIONS + " ON CONFLICT DO NOTHING", (keep, drop))
    db.execute("DELETE FROM graph_mentions WHERE entity_id = ?", (drop,))  # the trigger drops the entity
    add_events(db, [GraphEvent(user_id, "MERGE", keep, None, f"{name[0]!r} merged in: {reason}", at)])
    return True


def split(
    db: Handle, user_id: str, entity_id: str, new: EntityRow, alias_keys: Sequence[str],
    memory_ids: Sequence[str], reason: str, at: datetime,
) -> None:
    """`Store.graph_split`'s statements."""
    db.execute(
        "INSERT INTO graph_entities (id, user_id, name, type, created_at) VALUES (?, ?, ?, ?, ?)",
        (new.id, user_id, new.name, new.type, new.created_at.timestamp()),
    )
    db.executemany(
        "UPDATE graph_aliases SET entity_id = ? WHERE user_id = ? AND key = ? AND entity_id = ?",
        [(new.id, user_id, k, entity_id) for k in alias_keys],
    )
    moved = [(new.id, entity_id, m) for m in memory_ids]
    db.executemany(_COPY_MENTIONS + " AND memory_id = ? ON CONFLICT DO NOTHING", moved)
    db.executemany("UPDATE graph_edges SET src = ? WHERE src = ? AND memory_id = ?", moved)
    db.executemany("UPDATE graph_edges SET dst = ? WHERE dst = ? AND memory_id = ?", moved)
    add_events(db, [
        GraphEvent(user_id, "SPLIT", new.id, entity_id, f"split off: {reason}", at),
        GraphEvent(user_id, "SPLIT", entity_id, new.id, f"{new.name!r} split off: {reason}", at),
    ])
    db.executemany("DELETE FROM graph_mentions WHERE entity_id = ? AND memory_id = ?", [(entity_id, m) for m in memory_ids])


def snapshot(db: Handle, user_id: str) -> GraphSnapshot:
    """The user's whole graph as stored."""
    return snapshot_from(
        user_id,
        db.execute("SELECT id, name, type, created_at FROM graph_entities WHERE user_id = ?", (user_id,)).fetchall(),
        db.execute("SELECT entity_id, key, alias FROM graph_aliases WHERE user_id = ?", (user_id,)).fetchall(),
        db.execute("SELECT entity_id, memory_id, role FROM graph_mentions WHERE user_id = ?", (user_id,)).fetchall(),
        db.execute(
            "SELECT src, rel, dst, memory_id, reason FROM graph_edges WHERE user_id = ? ORDER BY id", (user_id,)
        ).fetchall(),
    )


def around(db: Handle, user_id: str, entity_ids: Sequence[str]) -> tuple[list[EdgeRow], dict[str, int]]:
    """The edges of these entities (in edge order), and how many memories mention each of them
    and of their neighbours."""
    ids = list(entity_ids)
    edges = [EdgeRow(*r) for r in db.execute(
        f"SELECT src, rel, dst, memory_id, reason FROM graph_edges WHERE user_id = ?"
        f" AND (src IN ({_marks(ids)}) OR dst IN ({_marks(ids)})) ORDER BY id", (user_id, *ids, *ids),
    ).fetchall()]
    near = sorted(set(ids) | {e.src for e in edges} | {e.dst for e in edges})
    counts = dict(db.execute(
        f"SELECT entity_id, count(*) FROM graph_mentions WHERE user_id = ? AND entity_id IN ({_marks(near)})"
        " GROUP BY entity_id", (user_id, *near),
    ).fetchall())
    return edges, counts


def linked(db: Handle, user_id: str) -> int:
    """How many of the user's memories the graph links at all."""
    return db.execute("SELECT count(DISTINCT memory_id) FROM graph_mentions WHERE user_id = ?", (user_id,)).fetchone()[0]


def mentioned(db: Handle, user_id: str, entity_ids: Sequence[str]) -> dict[str, set[str]]:
    """The memories that mention each of these entities."""
    found: dict[str, set[str]] = {}
    ids = list(entity_ids)
    for entity_id, memory_id in db.execute(
        f"SELECT entity_id, memory_id FROM graph_mentions WHERE user_id = ? AND entity_id IN ({_marks(ids)})",
        (user_id, *ids),
    ).fetchall():
        found.setdefault(entity_id, set()).add(memory_id)
    return found


def names(db: Handle, user_id: str) -> GraphSnapshot:
    """The user's entities and aliases only (no mentions, no edges): what resolving a new
    memory's names needs on the write path, and a search's first look at the graph. One
    statement, so one snapshot of its own (`SELF_CONSISTENT`)."""
    rows = db.execute(
        "SELECT 1, id, name, type, created_at FROM graph_entities WHERE user_id = ?"
        " UNION ALL SELECT 0, entity_id, key, alias, NULL FROM graph_aliases WHERE user_id = ?",
        (user_id, user_id),
    ).fetchall()
    return snapshot_from(user_id, [r[1:] for r in rows if r[0]], [r[1:4] for r in rows if not r[0]], (), ())


def live(db: Handle, user_id: str) -> frozenset[str]:
    """Ids of the user's live memories (active, disputed) that the graph links."""
    return frozenset(r[0] for r in db.execute(
        "SELECT DISTINCT m.id FROM graph_mentions g JOIN memories m ON m.id = g.memory_id"
        f" WHERE g.user_id = ? AND m.status IN ({_marks(LIVE_STATUSES)})", (user_id, *LIVE_STATUSES),
    ).fetchall())


def history(db: Handle, user_id: str) -> list[GraphEvent]:
    """The trace of resolution, oldest first."""
    return [event_from(user_id, r) for r in db.execute(
        "SELECT action, entity_id, other_id, detail, created_at FROM graph_history WHERE user_id = ? ORDER BY id",
        (user_id,),
    ).fetchall()]


def taken(db: Handle, entity_ids: Sequence[str]) -> set[str]:
    """Those of `entity_ids` that some entity, of any user, already holds."""
    ids = list(dict.fromkeys(entity_ids))
    found: set[str] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        found.update(r[0] for r in db.execute(f"SELECT id FROM graph_entities WHERE id IN ({_marks(chunk)})", chunk))
    return found


def add_events(db: Handle, events: Sequence[GraphEvent]) -> None:
    db.executemany(
        "INSERT INTO graph_history (user_id, action, entity_id, other_id, detail, created_at) VALUES (?, ?, ?, ?, ?, ?)",
        event_params(events),
    )


def fresh_memo(db: Handle | None, user_id: str) -> dict:
    """What `graph_memo` starts a user's graph state with: it reads no rows, so a backend
    that knows the user's version may make it without a snapshot of its own."""
    return {}


# reads consistent by themselves (one statement, or none): a backend that already read the
# user's version may run them without a snapshot transaction. What they read is then as new as
# that version or newer, and a newer state bumped the version, so the next look reads again.
SELF_CONSISTENT: frozenset[Callable[..., Any]] = frozenset({fresh_memo, names})


class GraphMethods:
    """The ``graph_*`` methods of `Store` over a backend's three hooks: `_graph_tx` (a write
    transaction, or the caller's), `_graph_reading` (a handle to read with) and `_graph_cached`
    (a read reused while the user's graph is unchanged)."""

    def _graph_tx(self, user_id: str, names: bool = True) -> AbstractContextManager[Handle]:
        """A graph change (`names`: it may change the user's entities or aliases)."""
        ...

    def _graph_reading(self) -> AbstractContextManager[Handle]: ...

    def _graph_cached(self, name: str, user_id: str, read: Callable[[Handle, str], Any]) -> Any: ...

    def graph_write(
        self, user_id: str, *, entities: Sequence[EntityRow] = (), aliases: Sequence[AliasRow] = (),
        mentions: Sequence[MentionRow] = (), edges: Sequence[EdgeRow] = (),
        events: Sequence[GraphEvent] = (), replace: Sequence[str] = (),
    ) -> None:
        """New entities, aliases, mentions and edges of one user, in one transaction (joining the
        caller's, so a memory and its links commit together). `replace`: memories whose old
        mentions and edges go (those not restated here)."""
        with self._graph_tx(user_id, names=bool(entities or aliases)) as db:
            write(db, user_id, entities, aliases, mentions, edges, events, replace)

    def graph_merge(self, user_id: str, keep: str, drop: str, reason: str, at: datetime) -> None:
        """`drop` becomes `keep`: its aliases, mentions and edges move over, and the trace says so."""
        with self._graph_tx(user_id) as db:
            merge(db, user_id, keep, drop, reason, at)

    def graph_split(
        self, user_id: str, entity_id: str, new: EntityRow, alias_keys: Sequence[str],
        memory_ids: Sequence[str], reason: str, at: datetime,
    ) -> None:
        """`new` takes `alias_keys` and the mentions of `memory_ids` from `entity_id` (they were
        two entities after all); both keep a trace."""
        with self._graph_tx(user_id) as db:
            split(db, user_id, entity_id, new, alias_keys, memory_ids, reason, at)

    def graph_snapshot(self, user_id: str) -> GraphSnapshot:
        """The user's whole graph (cached by the backend until it changes)."""
        return self._graph_cached("_graph_snapshots", user_id, snapshot)

    def graph_names(self, user_id: str) -> GraphSnapshot:
        """The user's entities and aliases alone (the write path's name resolution), cached like
        the snapshot unless a backend knows better when names change."""
        return self._graph_cached("_graph_names", user_id, names)

    def graph_around(self, user_id: str, entity_ids: Sequence[str]) -> tuple[list[EdgeRow], dict[str, int], int]:
        """What a search needs of the graph near the entities a query names (`around`): a cold
        search reads this much instead of the whole graph, and a repeated one nothing (`graph_memo`)."""
        if not entity_ids:
            return [], {}, 0

        def read() -> tuple[list[EdgeRow], dict[str, int]]:
            with self._graph_reading() as db:
                return around(db, user_id, entity_ids)

        def count() -> int:
            with self._graph_reading() as db:
                return linked(db, user_id)

        # the count is the user's whole graph's: read once per graph state, not once per question
        edges, counts = self.graph_memo(user_id, ("around", *entity_ids), read)
        return edges, counts, self.graph_memo(user_id, ("linked",), count)

    def graph_mentioned(self, user_id: str, entity_ids: Sequence[str]) -> dict[str, set[str]]:
        """The memories that mention each of these entities (remembered like `graph_around`)."""
        if not entity_ids:
            return {}

        def read() -> dict[str, set[str]]:
            with self._graph_reading() as db:
                return mentioned(db, user_id, entity_ids)

        return self.graph_memo(user_id, ("mentioned", *entity_ids), read)

    def graph_memo(self, user_id: str, key: Hashable, compute: Callable[[], Any]) -> Any:
        """`compute()`, remembered under `key` while the user's graph and memories are unchanged
        (as `_graph_cached` tells): what a question expands to is worked out once, and a
        repeated question reads nothing again. The value is shared: callers do not change it."""
        memo: dict = self._graph_cached("_graph_parts", user_id, fresh_memo)
        if key not in memo:
            if len(memo) > 512:
                memo.clear()
            memo[key] = compute()
        return memo[key]

    def graph_live(self, user_id: str) -> frozenset[str]:
        """Ids of the user's live memories (active, disputed) that the graph links; cached like the snapshot."""
        return self._graph_cached("_graph_live", user_id, live)

    def graph_history(self, user_id: str) -> list[GraphEvent]:
        """The trace of resolution (creations, aliases, merges, splits), oldest first."""
        with self._graph_reading() as db:
            return history(db, user_id)

    def graph_taken(self, entity_ids: Sequence[str]) -> set[str]:
        """Which of these entity ids are in use, by any user (an import keeps a file's ids only
        where they are free: entity ids are unique across users)."""
        with self._graph_reading() as db:
            return taken(db, entity_ids)
