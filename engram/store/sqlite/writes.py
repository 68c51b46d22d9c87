"""Writing memories: inserts and updates in one transaction with their history and index
changes, access counts, and real deletion. Mixed into `SQLiteStore`."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime

import numpy as np

from engram.models import MemoryItem
from engram.store.base import HistoryEvent, MemoryRow, Record, Scope, StoreError
from engram.store.sqlite.rows import INSERT_SQL, UPDATE_SQL, copy_item, row_values, span_later, turn_place


_KEEP_WRITTEN = 16  # writes of up to this many new memories put them in the item cache


class WritesMixin:
    """Needs the connection, lock, transactions and caches of `SQLiteStore`."""

    def write(
        self,
        inserts: Sequence[Record] = (),
        updates: Sequence[Record] = (),
        events: Sequence[HistoryEvent] = (),
    ) -> None:
        """Insert and update memories and append history in one transaction."""
        if not inserts and not updates and not events:
            return
        # the writer (and with it `_lock`) is held until the new rows are in the index too: a
        # search in another thread sees the write whole or not at all
        with self._writing():
            with self._tx() as db:
                self._sync_caches()
                self._touch(r.item.user_id for r in (*inserts, *updates))
                rowids = [db.execute(INSERT_SQL, row_values(r)).lastrowid for r in inserts]
                for record in updates:
                    updated = db.execute(UPDATE_SQL, row_values(record)[1:] + [record.item.id]).fetchone()
                    if updated is None:
                        raise StoreError(f"no memory with id {record.item.id!r}")
                    rowid = updated[0]
                    cache = self._indexes.get(record.item.user_id)
                    if cache is not None:
                        self._index_hashes[record.item.user_id][rowid] = record.content_hash
                        if record.embedding is not None:  # new content: re-index it
                            cache.replace(rowid, record.embedding, record.tokens, record.item.language)
                        cache.set_status(rowid, record.item.status.value)
                self._write_events(db, events)
                self._forget_items(r.item.id for r in updates)
            self._cache_add(rowids, inserts)
            if len(inserts) <= _KEEP_WRITTEN:  # an add, not a bulk ingest
                self._keep_items(r.item for r in inserts)

    def set_vectors(self, model: str, vectors: Sequence[tuple[str, str, np.ndarray]]) -> int:
        """Vectors made after their rows were written (`engram.embed_behind`), as (id, content
        hash, vector): each lands only while its row has no vector and still says what it was
        made from (an edit meanwhile embedded its new text itself). Returns how many landed."""
        if not vectors:
            return 0
        landed = 0
        with self._writing():
            with self._tx() as db:
                self._sync_caches()
                for memory_id, content_hash, vector in vectors:
                    row = db.execute(
                        "UPDATE memories SET embedding = ?, embedding_model = ? WHERE id = ? AND content_hash = ?"
                        " AND embedding IS NULL RETURNING rowid, user_id",
                        (np.asarray(vector, dtype=np.float32).tobytes(), model, memory_id, content_hash),
                    ).fetchone()
                    if row is None:
                        continue
                    landed += 1
                    cache = self._indexes.get(row[1])
                    if cache is not None:
                        cache.set_vector(row[0], vector)
                # the user's version stays (what they said did not change: capsules stay cached);
                # other processes fill their index's rows without vectors on their next read
                self._forget_items(memory_id for memory_id, _, _ in vectors)
        return landed

    def hold_vectors(self, user_id: str, vectors: Sequence[tuple[str, np.ndarray]]) -> bool:
        """Stand-in vectors (memory id, vector) for the user's rows still waiting for theirs, held
        by the user's index in memory only until `set_vectors` lands the real ones (read-your-
        writes without running the whole model in the caller's thread: `engram.embed_behind`).
        False when the index cannot hold them (a scope as large as the IVF's)."""
        with self._lock:
            self._sync_caches()
            return self._scope_index(user_id).hold(vectors)

    def _keep_items(self, items: Iterable[MemoryItem]) -> None:
        """New memories into the item cache (copies: callers keep theirs): the next statement
        is most often checked against what was just said."""
        self._keep({item.id: copy_item(item) for item in items})

    def _cache_add(self, rowids: list[int], records: Sequence[Record]) -> None:
        by_user: dict[str, list[int]] = {}
        for index, record in enumerate(records):
            if record.item.user_id in self._indexes:
                by_user.setdefault(record.item.user_id, []).append(index)
        for user_id, indexes in by_user.items():
            self._index_hashes[user_id].update((rowids[i], records[i].content_hash) for i in indexes)
            self._indexes[user_id].add(
                [rowids[i] for i in indexes],
                [records[i].item.id for i in indexes],
                [records[i].embedding for i in indexes],
                [records[i].tokens for i in indexes],
                [records[i].item.status.value for i in indexes],
                [records[i].item.agent_id for i in indexes],
                [
                    turn_place(
                        r.item.kind, r.item.agent_id, r.item.session_id, r.item.created_at.timestamp(),
                        r.item.metadata, r.item.content,
                    )
                    for r in (records[i] for i in indexes)
                ],
                [records[i].item.created_at.timestamp() for i in indexes],
                [
                    span_later(r.item.kind, r.item.created_at.timestamp(), r.item.content)
                    for r in (records[i] for i in indexes)
                ],
                languages=[records[i].item.language for i in indexes],
            )

    def _write_events(self, db: sqlite3.Connection, events: Sequence[HistoryEvent]) -> None:
        if events:
            db.executemany(
                "INSERT INTO history (memory_id, user_id, action, old_content, new_content,"
                " reason, created_at, related_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (e.memory_id, e.user_id, e.action, e.old_content, e.new_content,
                     e.reason, e.at.timestamp(), e.related_id)
                    for e in events
                ],
            )

    def record_access(self, memory_ids: Iterable[str], at: datetime) -> None:
        """Count a use of each memory. Applied at once to what this process reads, written
        to the file in batches (with the next write, within a second, or on close): a
        transaction per search cost more than the rest of a small search."""
        with self._lock:
            for memory_id in memory_ids:
                count, _ = self._pending_access.get(memory_id, (0, at))
                self._pending_access[memory_id] = (count + 1, at)
                item = self._items.get(memory_id)
                if item is not None:
                    item.__dict__["access_count"] += 1
                    item.__dict__["last_accessed"] = at
            now = time.monotonic()
            if self._pending_since is None:
                self._pending_since = now
                return
            due = not self.read_only and (len(self._pending_access) >= 256 or now - self._pending_since >= 1.0)
        if due:  # only when no other writer has the file now: a search never queues for a write
            with self._writing(wait=False) as mine:
                if mine:
                    with self._tx():
                        pass  # _tx writes pending uses first

    def _write_access(self, db: sqlite3.Connection) -> None:
        """Write the pending uses (inside the caller's transaction)."""
        if self._pending_access:
            db.executemany(
                "UPDATE memories SET access_count = access_count + ?,"
                " last_accessed = MAX(COALESCE(last_accessed, 0), ?) WHERE id = ?",
                [(count, at.timestamp(), i) for i, (count, at) in self._pending_access.items()],
            )
            self._pending_access.clear()
        self._pending_since = None

    def _pending_life(self, row: MemoryRow) -> MemoryRow:
        pending = self._pending_access.get(row.id)
        if pending is None:
            return row
        return replace(row, access_count=row.access_count + pending[0], last_accessed=pending[1])

    def _with_pending(self, item: MemoryItem) -> MemoryItem:
        """An item just read from the file, with the uses not yet written to it."""
        pending = self._pending_access.get(item.id)
        if pending is not None:
            item.__dict__["access_count"] += pending[0]
            item.__dict__["last_accessed"] = pending[1]
        return item

    def delete(self, memory_ids: Sequence[str], events: Sequence[HistoryEvent]) -> None:
        """Remove memories from every table and index; history keeps contentless events."""
        if not memory_ids:
            return
        with self._tx() as db:
            self._sync_caches()
            self._purge(db, list(memory_ids))
            self._write_events(db, events)
        self._compact()

    def _purge(self, db: sqlite3.Connection, ids: list[str]) -> None:
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ", ".join("?" for _ in chunk)
            rows = db.execute(
                f"SELECT rowid, user_id FROM memories WHERE id IN ({marks})", chunk
            ).fetchall()
            rowids = [r[0] for r in rows]
            row_marks = ", ".join("?" for _ in rowids)
            if rowids:
                db.execute(f"DELETE FROM memories WHERE rowid IN ({row_marks})", rowids)
            # the memory's own rows, and rows of other memories that quote it
            # (supersede/dispute/merge record the other side's text and values)
            db.execute(
                f"UPDATE history SET old_content = NULL, new_content = NULL, reason = ''"
                f" WHERE memory_id IN ({marks}) OR related_id IN ({marks})",
                chunk + chunk,
            )
            self._touch(user_id for _, user_id in rows)
            for rowid, user_id in rows:
                cache = self._indexes.get(user_id)
                if cache is not None:
                    cache.set_status(rowid, None)
            self._forget_items(chunk)

    def _compact(self) -> None:
        """Flush the WAL into the file, so the deleted rows' old pages are gone from it too."""
        with self._writing():
            if self._tx_depth:  # inside `atomic`: once it commits
                self._compact_due = True
                return
            self._checkpoint()

    def delete_scope(self, scope: Scope, at: datetime) -> int:
        where, params = self._scope_where(scope)
        with self._tx() as db:
            self._sync_caches()
            ids = [r[0] for r in db.execute(f"SELECT id FROM memories WHERE {where}", params)]
            self._purge(db, ids)
            self._purge_sessions(db, scope)
            self._write_events(
                db,
                [HistoryEvent(i, scope.user_id, "DELETE", None, None, "delete_all", at) for i in ids],
            )
        self._compact()
        return len(ids)

    def reset(self) -> None:
        with self._tx() as db:
            db.execute("DELETE FROM memories")
            self._items.clear()
            db.execute("DELETE FROM history")
            db.execute("DELETE FROM session_turns")
            db.execute("DELETE FROM sessions")
            db.execute("DELETE FROM jobs")
            self._indexes.clear()
            self._index_versions.clear()
        self._compact()
        with self._writing():
            self._db.execute("VACUUM")

    @staticmethod
    def _purge_sessions(db: sqlite3.Connection, scope: Scope) -> None:
        """A scope's sessions, their turns and its queued jobs (they hold the user's words)."""
        if scope.agent_id is None:
            db.execute("DELETE FROM jobs WHERE user_id = ?", (scope.user_id,))
        else:
            db.execute("DELETE FROM jobs WHERE user_id = ? AND agent_id = ?", (scope.user_id, scope.agent_id))
        if scope.agent_id is None:
            db.execute("DELETE FROM session_turns WHERE user_id = ?", (scope.user_id,))
            db.execute("DELETE FROM sessions WHERE user_id = ?", (scope.user_id,))
            return
        db.execute(
            "DELETE FROM session_turns WHERE user_id = ? AND session_id IN"
            " (SELECT session_id FROM sessions WHERE user_id = ? AND agent_id = ?)",
            (scope.user_id, scope.user_id, scope.agent_id),
        )
        db.execute(
            "DELETE FROM sessions WHERE user_id = ? AND agent_id = ?", (scope.user_id, scope.agent_id)
        )
