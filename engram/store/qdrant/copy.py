"""Whole-store copies into and out of Qdrant (`engram migrate`). Mixed into `QdrantStore`.

Out: the side store's rows (SQLite's `copy_out`, inherited: the rows are the truth, the points
their mirror). In: each batch lands in the side store (SQLite's `copy_in`) and, once its
transaction commits, its points are written from those rows, with the vectors as copied, so
the progress shown is Qdrant's too and nothing is embedded again. The ordinary mirror would
instead re-read every point of each user the batch touched (quadratic in a user's size), so
from `copy_prepare` to `copy_finish` it stands aside (bulk mode); `copy_finish` then runs it
once over the whole collection, which writes whatever an interruption left out, records every
user as level, and checks one point per memory. Any other write ends bulk mode, and a search
catches its user up as always: an interrupted copy leaves a store behind, never wrong.

qdrant-client's local mode commits each point to its own SQLite file with an fsync (~1-15 ms
apiece, most of a copy's time): in bulk mode that file syncs once, at the end, instead.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Sequence
from typing import Any

from engram.store.base import StoreError


class QdrantCopyMixin:
    """Needs `QdrantStore`'s client, collection, mirror and side store."""

    _bulk = False
    _pending: dict[str, None] | None = None  # ids copied in this transaction: their points follow its commit
    _unsynced: tuple[sqlite3.Connection, int] | None = None  # local mode's points file, its `synchronous`

    def copy_prepare(self) -> None:
        """Refuse a collection holding points its side store does not know (another store's)."""
        points, rows = self._client.count(self.collection, exact=True).count, self.copy_count("memories")
        if points > rows:
            raise StoreError(
                f"the Qdrant collection {self.collection!r} holds {points} points for the {rows} memories of its"
                f" side store ({self.target.side}): copy into an empty collection"
            )
        self._bulk, self._pending = True, {}
        db = _local_points_db(self._client, self.collection)
        if db is not None and self._unsynced is None:
            self._unsynced = (db, db.execute("PRAGMA synchronous").fetchone()[0])
            db.execute("PRAGMA synchronous = OFF")

    def copy_in(self, table: str, rows: Sequence[dict[str, Any]]) -> None:
        super().copy_in(table, rows)  # type: ignore[misc]
        if self._bulk and table == "memories":
            self._pending.update((row["id"], None) for row in rows)
        if not self._tx_depth:
            self._after_commit()

    def copy_finish(self) -> None:
        self._end_bulk()
        self._mirror_changed(whole=True)
        points, rows = self._client.count(self.collection, exact=True).count, self.copy_count("memories")
        if points != rows:
            raise StoreError(f"the Qdrant collection {self.collection!r} holds {points} points for {rows} memories")

    def _after_commit(self) -> None:
        """A write transaction committed: bring Qdrant level (bulk mode: the copied batch's points)."""
        if not self._bulk:
            self._mirror_changed()
            return
        ids, self._pending = list(self._pending), {}
        if ids:
            with self._writing():
                self._upsert_ids(ids)

    def _end_bulk(self) -> None:
        """Back to mirroring every write; local mode's points file synced and syncing again."""
        self._bulk, self._pending = False, None
        unsynced, self._unsynced = self._unsynced, None
        if unsynced is not None:
            db, level = unsynced
            db.execute(f"PRAGMA synchronous = {int(level)}")
            path = db.execute("PRAGMA database_list").fetchone()[2]
            fd = os.open(path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)


def _local_points_db(client: Any, collection: str) -> sqlite3.Connection | None:
    """The SQLite file local mode keeps a collection's points in (qdrant-client internals,
    so None whenever they look otherwise, and for a server)."""
    local = getattr(client, "_client", None)
    found = getattr(local, "collections", None)
    persistence = getattr(found.get(collection) if isinstance(found, dict) else None, "storage", None)
    db = getattr(persistence, "storage", None)
    return db if isinstance(db, sqlite3.Connection) else None
