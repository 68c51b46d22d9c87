"""WAL checkpoints in a thread of their own, off the writers' path.

SQLite's automatic checkpoint runs inside the COMMIT that crosses its threshold (1,000 pages),
with the writers' lock held: that one add copies the WAL into the file and syncs both, 10-47 ms
on this machine's disk, and with 8 writers every other writer queues behind it. Here the writing
connection has ``wal_autocheckpoint=0`` and a `Checkpointer` thread, on a connection of its
own, runs the same PASSIVE checkpoint once enough has changed. A PASSIVE checkpoint takes no
writer lock, so writes go on while it copies (SQLite's documented pattern for this).

Nothing about durability changes: committed frames are in the WAL either way, and SQLite
replays them on open after a crash. A deletion's checkpoint (the store's `_checkpoint`, which
must finish before the deleted text counts as gone) still runs at once, in the deleting thread.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

log = logging.getLogger(__name__)

# rows changed (SQLite's total_changes, triggers included) between checkpoints: an add changes
# ~10, so about one in a hundred adds wakes the thread; a bulk ingest of a few hundred rows at once
CHANGES_PER_CHECKPOINT = 1000


class Checkpointer:
    """Checkpoints the WAL of the database at `path` in a daemon thread, started on first need."""

    def __init__(self, path: Path, every: int = CHANGES_PER_CHECKPOINT) -> None:
        self._path = path
        self._every = every
        self._since = 0  # rows changed since the thread was last woken
        self._last_total: int | None = None
        self._wake = threading.Event()
        self._closing = False
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self.runs = 0  # checkpoints run

    def committed(self, total_changes: int) -> None:
        """After each commit of the writing connection, with its ``total_changes``: wakes the
        thread once `every` rows changed since it last ran. Costs an addition per commit."""
        last, self._last_total = self._last_total, total_changes
        self._since += total_changes - (last if last is not None else total_changes)
        if self._since >= self._every and not self._closing:
            self._since = 0
            self._ensure_thread()
            self._wake.set()

    def _ensure_thread(self) -> None:
        if self._thread is not None:
            return
        with self._start_lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="engram-checkpoint", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        try:
            db = sqlite3.connect(str(self._path), isolation_level=None, check_same_thread=False, timeout=0)
        except sqlite3.Error as exc:  # the writing connection's own checkpoint on close still runs
            log.warning("WAL checkpoints stay with SQLite's close: cannot open %s (%s)", self._path, exc)
            return
        try:
            while True:
                self._wake.wait()
                self._wake.clear()
                if self._closing:
                    return
                try:
                    db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                    self.runs += 1
                except sqlite3.Error as exc:  # busy with another process's checkpoint, a full disk: next time
                    log.debug("WAL checkpoint skipped: %s", exc)
        finally:
            db.close()

    def close(self) -> None:
        """Stop the thread (a checkpoint under way finishes first) and close its connection,
        before the writing connection closes: the last connection to close checkpoints the
        WAL and removes it."""
        self._closing = True
        self._wake.set()
        if self._thread is not None:
            self._thread.join()
