"""Guarded status changes (archive, merge, restore, resolve). Mixed into `PostgresStore`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import psycopg

from engram.store.base import TRANSITION_FIELDS, HistoryEvent, Record, StoreError, Transition, TransitionGroup
from engram.store.sqlite.rows import to_epoch


class _GroupFailed(Exception):
    """An atomic group's guard failed: its savepoint is rolled back."""


class TransitionsMixin:
    """Needs the pool, transactions and caches of `PostgresStore`."""

    def transition(
        self, transitions: Sequence[Transition], *, inserts: Sequence[Record] = (),
        events: Sequence[HistoryEvent] = (), atomic: bool = False,
    ) -> list[str]:
        if not transitions and not inserts and not events:
            return []
        return self.transition_groups([TransitionGroup(transitions, inserts, events, atomic)])[0]

    def transition_groups(self, groups: Sequence[TransitionGroup]) -> list[list[str]]:
        """Several groups in one transaction, each in its own savepoint: an atomic group whose
        guard fails leaves no trace while the others commit."""
        results: list[list[str]] = []
        with self._tx():
            for group in groups:
                changed: list[str] = []
                try:
                    with self._tx() as conn:
                        self._insert_group(conn, group, changed)
                except _GroupFailed:
                    changed = []
                results.append(changed)
        return results

    def _insert_group(self, conn: psycopg.Connection, group: TransitionGroup, changed: list[str]) -> None:
        self._bump(conn, (r.item.user_id for r in group.inserts))
        self._insert(conn, group.inserts)
        applied: list[HistoryEvent] = []
        for t in group.transitions:
            row = self._apply_transition(conn, t)
            if row is None:
                if group.atomic:
                    raise _GroupFailed
                continue
            rowid, user_id = row
            self._bump(conn, [user_id])
            self._patch(user_id, lambda i, r=rowid, s=t.status: i.set_status(r, s))
            changed.append(t.memory_id)
            applied.append(HistoryEvent(t.memory_id, user_id, t.action, None, None, t.reason, t.at, t.related_id))
        self._write_events(conn, applied)
        self._write_events(conn, group.events)

    @staticmethod
    def _apply_transition(conn: psycopg.Connection, t: Transition) -> tuple[int, str] | None:
        sets = ["status = %s", "updated_at = %s"]
        params: list[Any] = [t.status, t.at.timestamp()]
        if t.metadata:  # a JSON merge patch: a None value removes the key
            kept = {k: v for k, v in t.metadata.items() if v is not None}
            sets.append("metadata = (metadata || %s::jsonb) - %s::text[]")
            params += [json.dumps(kept, ensure_ascii=False, default=str), [k for k, v in t.metadata.items() if v is None]]
        for name, value in (t.fields or {}).items():
            if name not in TRANSITION_FIELDS:
                raise StoreError(f"a transition cannot set {name!r}")
            sets.append(f"{name} = %s")
            params.append(to_epoch(value) if isinstance(value, datetime) else value)
        where = "id = %s AND status = ANY(%s::text[])"
        params += [t.memory_id, list(t.from_status)]
        if t.guard:
            where += " AND updated_at = %s AND COALESCE(last_accessed, -1) = %s"
            params += [to_epoch(t.seen_updated_at), -1 if t.seen_last_accessed is None else to_epoch(t.seen_last_accessed)]
        return conn.execute(f"UPDATE memories SET {', '.join(sets)} WHERE {where} RETURNING rowid, user_id", params).fetchone()
