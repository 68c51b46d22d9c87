"""Guarded status changes (archive, merge, restore, resolve) and the rows maintenance scans.
Mixed into `SQLiteStore`."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from engram.models import MemoryItem
from engram.store.base import TRANSITION_FIELDS, HistoryEvent, MemoryRow, Record, Scope, StoreError, Transition, TransitionGroup
from engram.store.sqlite.rows import INSERT_SQL, ROW_COLUMNS, SELECT_ITEM, item_from_row, row_from, row_values, to_epoch


class TransitionsMixin:
    """Needs the connection, lock, transactions and caches of `SQLiteStore`."""

    def lifecycle_rows(self, scope: Scope, statuses: Sequence[str]) -> list[MemoryRow]:
        if self._pending_access:
            with self._tx():
                pass  # writes the pending uses: maintenance ranks by them
        where, params = self._scope_where(scope)
        if statuses:
            where += f" AND status IN ({', '.join('?' for _ in statuses)})"
            params += list(statuses)
        with self._lock:
            rows = self._db.execute(
                f"SELECT {ROW_COLUMNS} FROM memories WHERE {where} ORDER BY rowid", params
            ).fetchall()
        return [row_from(r) for r in rows]

    def transition(
        self,
        transitions: Sequence[Transition],
        *,
        inserts: Sequence[Record] = (),
        events: Sequence[HistoryEvent] = (),
        atomic: bool = False,
    ) -> list[str]:
        """Guarded status changes, inserts and events in one short transaction."""
        if not transitions and not inserts and not events:
            return []
        return self.transition_groups([TransitionGroup(transitions, inserts, events, atomic)])[0]

    def transition_groups(self, groups: Sequence[TransitionGroup]) -> list[list[str]]:
        """Several groups in one transaction, each in its own savepoint: an atomic group
        whose guard fails leaves no trace while the others commit."""
        results: list[list[str]] = []
        cached: list[tuple[str, int, str]] = []
        added: list[tuple[list[int], Sequence[Record]]] = []
        # the writers' lock (and with it `_lock`) is held until the caches take the changes; inside
        # the caller's transaction (one `add`), a rollback of it drops what was patched (`_tx`)
        with self._writing():
            with self._tx() as db:
                self._sync_caches()
                for group in groups:
                    db.execute("SAVEPOINT engram_group")
                    rowids = [db.execute(INSERT_SQL, row_values(r)).lastrowid for r in group.inserts]
                    changed: list[str] = []
                    mine: list[tuple[str, int, str]] = []
                    applied: list[HistoryEvent] = []
                    failed = False
                    for t in group.transitions:
                        row = self._apply_transition(db, t)
                        if row is None:
                            if group.atomic:
                                failed = True
                                break
                            continue
                        rowid, user_id, _agent_id = row
                        self._items.pop(t.memory_id, None)
                        changed.append(t.memory_id)
                        mine.append((user_id, rowid, t.status))
                        applied.append(HistoryEvent(
                            t.memory_id, user_id, t.action, None, None, t.reason, t.at, t.related_id,
                        ))
                    if failed:
                        db.execute("ROLLBACK TO engram_group")
                        db.execute("RELEASE engram_group")
                        results.append([])
                        continue
                    self._write_events(db, applied)
                    self._write_events(db, group.events)
                    db.execute("RELEASE engram_group")
                    results.append(changed)
                    cached += mine
                    added.append((rowids, group.inserts))
                self._touch([u for u, _, _ in cached] + [r.item.user_id for _, rs in added for r in rs])
            for user_id, rowid, status in cached:
                cache = self._indexes.get(user_id)
                if cache is not None:
                    cache.set_status(rowid, status)
            for rowids, inserts in added:
                self._cache_add(rowids, inserts)
        return results

    @staticmethod
    def _apply_transition(db: sqlite3.Connection, t: Transition) -> tuple[int, str, str | None] | None:
        sets = ["status = ?", "updated_at = ?"]
        params: list[Any] = [t.status, t.at.timestamp()]
        if t.metadata:
            sets.append("metadata = json_patch(metadata, ?)")
            params.append(json.dumps(t.metadata, ensure_ascii=False, default=str))
        for name, value in (t.fields or {}).items():
            if name not in TRANSITION_FIELDS:
                raise StoreError(f"a transition cannot set {name!r}")
            sets.append(f"{name} = ?")
            params.append(to_epoch(value) if isinstance(value, datetime) else value)
        where = f"id = ? AND status IN ({', '.join('?' for _ in t.from_status)})"
        params += [t.memory_id, *t.from_status]
        if t.guard:
            where += " AND updated_at = ? AND COALESCE(last_accessed, -1) = ?"
            params += [to_epoch(t.seen_updated_at), -1 if t.seen_last_accessed is None else to_epoch(t.seen_last_accessed)]
        return db.execute(
            f"UPDATE memories SET {', '.join(sets)} WHERE {where} RETURNING rowid, user_id, agent_id",
            params,
        ).fetchone()

    def derived_from(self, scope: Scope, memory_ids: Sequence[str]) -> list[MemoryItem]:
        if not memory_ids:
            return []
        where, params = self._scope_where(scope)
        found: dict[str, MemoryItem] = {}
        ids = list(memory_ids)
        with self._lock:
            for start in range(0, len(ids), 500):
                chunk = ids[start : start + 500]
                rows = self._db.execute(
                    f"SELECT {SELECT_ITEM} FROM memories WHERE {where} AND sources != '[]' AND EXISTS"
                    f" (SELECT 1 FROM json_each(memories.sources) WHERE value IN"
                    f" ({', '.join('?' for _ in chunk)}))",
                    params + chunk,
                ).fetchall()
                for r in rows:
                    found.setdefault(r[0], item_from_row(r))
        return list(found.values())
