"""The embedded default store: one SQLite file in WAL mode.

- ``memories`` holds every field, the vector as a float32 blob and a content hash;
- ``history`` is the audit trail (ADD/UPDATE/SUPERSEDE/DISPUTE/DELETE/…);
- ``memories.tokens`` holds engram's own language-aware tokens of each memory
  (stems, jieba words, CJK bigrams), space-separated. Ranking runs on the
  in-memory `ScopeIndex` loaded from them: FTS5's ``bm25()`` took ~1.1 ms per
  query on a LoCoMo conversation, the numpy version ~0.2 ms, with per-user
  statistics and the neighbouring-turn field (an FTS5 table beside the rows,
  never queried, was dropped in migration 9: it cost ~15 % of an add's pages).
  Each process patches its indexes on its own writes; when another process
  writes, only the indexes of the users it changed are reloaded (per-user
  versions in ``user_versions``, kept by triggers).
- sessions, working-memory turns, per-user state and the background job queue
  (migrations 2-4).

`SQLiteStore` is this module's connection, transactions and caches, plus one mixin per
concern: `items` (reads), `writes` (writes, access counts, deletion), `search` (the
lexical and dense index), `history`, `transitions` (status changes, maintenance rows),
`state` (per-user switches), `sessions` (sessions, turns), `jobs` (the queue), `keys` (the REST server's API keys).

Deletion is real: ``secure_delete`` zeroes freed pages, history rows lose their
content, and the WAL is checkpointed.
"""

from __future__ import annotations

import fcntl
import functools
import inspect
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from engram.models import MemoryItem
from engram.store.base import MemoryRow, NotADatabase, Scope, StoreError, StoreFull, StoreReadOnly
from engram.store.index_cache import DEFAULT_BUDGET_MB, IndexCache
from engram.store.sqlite.checkpoints import Checkpointer
from engram.store.sqlite.copy import CopyMixin
from engram.store.sqlite.graph import GraphMixin
from engram.store.sqlite.history import HistoryMixin
from engram.store.sqlite.items import ItemsMixin
from engram.store.sqlite.jobs import JobsMixin
from engram.store.sqlite.keys import KeysMixin
from engram.store.sqlite.rows import ITEM_CACHE_SIZE, JSON_LIST, SELECT_ITEM, item_from_row
from engram.store.sqlite.schema import MIGRATIONS, SCHEMA_VERSION, statements
from engram.store.sqlite.search import SearchMixin
from engram.store.sqlite.sessions import SessionsMixin
from engram.store.sqlite.state import StateMixin
from engram.store.sqlite.transitions import TransitionsMixin
from engram.store.sqlite.writes import WritesMixin


class SQLiteStore(
    ItemsMixin, WritesMixin, SearchMixin, HistoryMixin, TransitionsMixin, StateMixin, SessionsMixin, JobsMixin,
    KeysMixin, CopyMixin, GraphMixin,
):
    """`Store` over one SQLite file; safe to share between threads of one process."""

    def __init__(
        self, path: str | Path, *, dim: int, read_only: bool = False, index_cache_mb: float = DEFAULT_BUDGET_MB,
    ) -> None:
        """`read_only` (or a file or folder this process cannot write): reads work, every
        write raises `StoreReadOnly`. `index_cache_mb`: memory for per-user search indexes
        (least recently used evicted past it)."""
        self.path = Path(path)
        self.dim = dim
        memory = str(path) == ":memory:"
        new = not memory and not self.path.exists()
        if not memory and not read_only:
            try:
                self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # memories are private
            except OSError as exc:
                raise StoreError(f"cannot create the folder of {path}: {exc.strerror}") from None
        self.read_only = read_only or (not memory and not _writable(self.path))
        try:
            if self.read_only:
                self._db = sqlite3.connect(
                    f"{self.path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None,
                    check_same_thread=False, timeout=30,
                )
            else:
                self._db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, timeout=30)
                if new:
                    self.path.chmod(0o600)  # the -wal and -shm files SQLite makes take this mode too
        except sqlite3.Error as exc:
            raise store_error(exc, self.path) from None
        self._lock = threading.RLock()
        self._reader = threading.local()  # `.on`: this thread is inside `reading`
        # `.stack`: this thread's deferred `atomic`, whose transaction starts at its first write
        self._later = threading.local()
        # writers of every process queue on this file's lock (`_writing`): the kernel wakes
        # the next one at once, where SQLite's busy handler polls with sleeps of up to 100 ms
        self._lock_fd = None if memory or self.read_only else _open_lock_file(self.path)
        # this process's writer (a thread id), and the mutex its threads queue on before the file lock
        self._writer: int | None = None
        self._write_mutex = threading.Lock()
        self._synced_writing = False  # `_sync_caches` ran since this process took the writers' lock
        self._tx_depth = 0  # nested `_tx` blocks of the thread holding `_writing`
        self._compact_due = False  # a deletion inside `atomic`: compact after the commit
        self._wal_holds_deleted = False  # a deletion's checkpoint waited for a reader: retry
        self._indexes = IndexCache(index_cache_mb, on_evict=self._forget_index)
        # each cached index's user version (`user_versions`, bumped by triggers on every
        # change of that user's memories): another process's write drops only the indexes
        # of the users it changed
        self._index_versions: dict[str, int] = {}
        # content hash of each indexed row, by user: another process's write is patched in
        # (new rows added, changed ones replaced), not reloaded whole
        self._index_hashes: dict[str, dict[int, str]] = {}
        self._touched: set[str] = set()  # users whose indexes this write transaction patched
        # memories as last read, by id: rebuilding an item costs ~20 µs, a copy ~3 µs.
        # Every write path below drops what it changed; another process's write drops all.
        self._items: dict[str, MemoryItem] = {}
        # ranking's light rows (`signals`) of memories not in `_items`, as last read: a search
        # reads the same few dozen again and again. Kept only until the next commit (any
        # write of this process, or another connection's): no write path has to patch them
        self._rows: dict[str, MemoryRow] = {}
        # per-user switches as last read ((user, name) -> value, None for unset): `add` asks
        # for "paused" and "timezone" every time; another process's write drops them all
        self._states: dict[tuple[str, str], str | None] = {}
        # uses counted by record_access, not yet written: id -> (count, last use)
        self._pending_access: dict[str, tuple[int, datetime]] = {}
        self._pending_since: float | None = None
        self._checkpoints: Checkpointer | None = None  # a writable file's WAL checkpoints, off the writers' path
        try:
            for pragma in (
                "busy_timeout=30000",
                "synchronous=NORMAL",
                "secure_delete=ON",
                "cache_size=-65536",
                "temp_store=MEMORY",
            ):
                self._db.execute(f"PRAGMA {pragma}")
            self._check_ours()  # before WAL mode: someone else's file is left as it was
            if not self.read_only:
                self._db.execute("PRAGMA journal_mode=WAL")
                if not memory:  # checkpoints in a thread of their own (engram.store.sqlite.checkpoints)
                    self._db.execute("PRAGMA wal_autocheckpoint=0")
                    self._checkpoints = Checkpointer(self.path)
            self._migrate()
            self._data_version = self._db.execute("PRAGMA data_version").fetchone()[0]
        except sqlite3.Error as exc:
            self._db.close()
            self._close_lock()
            raise store_error(exc, self.path) from None
        except StoreError:
            self._db.close()
            self._close_lock()
            raise

    # -- schema -------------------------------------------------------------------
    def _check_ours(self) -> None:
        """An SQLite file with tables but no engram schema version is someone else's."""
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version == 0 and self._db.execute(
            "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
        ).fetchone()[0]:
            raise NotADatabase(f"{self.path} is an SQLite database, but not an engram database")

    def _migrate(self) -> None:
        version = self._db.execute("PRAGMA user_version").fetchone()[0]
        if version == SCHEMA_VERSION:
            return
        if self.read_only and version < SCHEMA_VERSION:
            raise StoreReadOnly(f"{self.path} needs a schema upgrade, and the store is read-only")
        with self._tx():
            version = self._db.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StoreError(
                    f"{self.path} has schema version {version}; this engram knows "
                    f"up to {SCHEMA_VERSION}. Upgrade engram."
                )
            for target in range(version + 1, SCHEMA_VERSION + 1):
                for statement in statements(MIGRATIONS[target]):
                    self._db.execute(statement)
                self._db.execute(f"PRAGMA user_version = {target}")

    @property
    def schema_version(self) -> int:
        return self._db.execute("PRAGMA user_version").fetchone()[0]

    @contextmanager
    def _writing(self, wait: bool = True) -> Iterator[bool]:
        """This thread is the only writer of the file (every thread, every process) until the
        block ends; reentrant. Yields True, or False when `wait` is off and another writer has
        it (best-effort work, such as a pack or the access counts, is then skipped or deferred).

        One order everywhere: this process's writer mutex, then the file lock, then `_lock`
        (the caches), held to the end. So a thread queuing for another process's write holds
        nothing the readers of this process need: their searches go on meanwhile. A thread
        that already holds `_lock` may only try (`wait` off): waiting there could deadlock."""
        me = threading.get_ident()
        if self._writer != me and wait and getattr(self._later, "stack", None) is not None:
            # the first write of a deferred `atomic`: its transaction (and this lock) from now to its end
            stack, self._later.stack = self._later.stack, None
            stack.enter_context(self._tx())
        if self._writer == me:  # nested
            self._reader.on = False
            yield True
            return
        if wait and self._lock._is_owned():  # type: ignore[attr-defined]
            raise RuntimeError("engram bug: a write waited for the writers' lock while holding the cache lock")
        if not self._take_writer(wait):
            yield False
            return
        try:
            with self._lock:
                self._writer = me
                self._synced_writing = False
                self._reader.on = False  # a write inside `reading`: what follows looks for commits again
                try:
                    yield True
                finally:
                    self._writer = None
        finally:
            if self._lock_fd is not None:
                fcntl.flock(self._lock_fd, fcntl.LOCK_UN)
            self._write_mutex.release()

    def _take_writer(self, wait: bool) -> bool:
        """This process's writer mutex, then the file lock; False (holding neither) when
        `wait` is off and either is taken."""
        if not self._write_mutex.acquire(blocking=wait):
            return False
        if self._lock_fd is None:
            return True
        try:
            fcntl.flock(self._lock_fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._write_mutex.release()
            return False
        except BaseException:
            self._write_mutex.release()
            raise
        return True

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Several reads as one (a search's dozen store calls): other connections' commits are
        looked for once, at the start, not before each call. A write of this thread inside
        ends it (its reads after that look again)."""
        if getattr(self._reader, "on", False):
            yield
            return
        with self._lock:
            self._sync_caches()
        self._reader.on = True
        try:
            yield
        finally:
            self._reader.on = False

    @contextmanager
    def section(self, scope: Scope) -> Iterator[None]:
        """Decide + write as one step for `scope`: no other writer (thread or process) can
        change the file in between, and every read inside sees the latest commit (caches
        are checked against it). Here the whole file is the unit: SQLite has one writer."""
        with self._writing():
            self._sync_caches()
            yield

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        """One write transaction; inside `atomic` (or another `_tx` of this thread) it joins
        the open one, which commits or rolls back as a whole."""
        with self._writing():
            if self._tx_depth:
                self._tx_depth += 1
                try:
                    yield self._db
                finally:
                    self._tx_depth -= 1
                return
            if self.read_only:
                raise StoreReadOnly(f"the store is read-only ({self.path}): reads work, writes do not")
            self._tx_depth = 1
            try:
                self._db.execute("BEGIN IMMEDIATE")
                self._write_access(self._db)
                yield self._db
                self._note_versions(self._db)
                self._db.execute("COMMIT")
                self._rows.clear()
                if self._checkpoints is not None:
                    self._checkpoints.committed(self._db.total_changes)
            except sqlite3.Error as exc:
                self._tx_depth = 0
                self._rollback()
                raise store_error(exc, self.path) from None
            except BaseException:
                self._tx_depth = 0
                self._rollback()
                raise
            self._tx_depth = 0
            if self._compact_due:
                self._compact_due = False
                self._compact()
            elif self._wal_holds_deleted:
                self._checkpoint()

    def _checkpoint(self) -> None:
        """Copy the WAL into the file and empty it, so deleted text is physically gone. A
        reader still on an older snapshot needs the old frames: then it is not waited for;
        the next commit after it ended (or close) tries again (`_wal_holds_deleted`)."""
        with self._writing():
            try:
                self._db.execute("PRAGMA busy_timeout = 0")
                busy = self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            except sqlite3.Error:
                busy = 1
            finally:
                self._db.execute("PRAGMA busy_timeout = 30000")
            self._wal_holds_deleted = bool(busy)

    def _rollback(self) -> None:
        """Undo the open transaction (if SQLite has not already) and what it did to the caches."""
        if self._db.in_transaction:
            try:
                self._db.execute("ROLLBACK")
            except sqlite3.Error:  # the failed statement rolled it back already
                pass
        self._drop_touched()
        self._items.clear()
        self._rows.clear()
        self._graph_rolled_back()
        self._compact_due = False

    @contextmanager
    def atomic(self, *, deferred: bool = False) -> Iterator[None]:
        """Several writes as one transaction: all of them land, or none (an import).

        `deferred`: the transaction, and with it the writers' lock, starts at the first write
        inside, not here, so what is read and worked out before it (an add's extraction) keeps
        no other writer waiting. Reads before that first write see the latest commits; a
        decision that must not go stale is made inside `section`."""
        if not deferred or self._writer == threading.get_ident() or getattr(self._later, "stack", None) is not None:
            with self._tx():  # (inside a pending deferred one: `_writing` starts it first)
                yield
            return
        with ExitStack() as stack:
            self._later.stack = stack
            try:
                yield
            finally:
                self._later.stack = None  # (no write came: nothing was begun)

    def _close_lock(self) -> None:
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def _touch(self, user_ids: Iterable[str]) -> None:
        """This transaction changes these users' memories (and patches their cached indexes)."""
        self._touched.update(user_ids)

    def _note_versions(self, db: sqlite3.Connection) -> None:
        """Before COMMIT: the patched indexes are current at the versions this transaction
        leaves (read inside it, so no other process's write can slip in between)."""
        users = [u for u in self._touched if u in self._indexes]
        self._touched.clear()
        self._index_versions.update(self._versions(users))

    def _forget_index(self, user_id: str) -> None:
        """An index left the cache: what described it goes too."""
        self._index_versions.pop(user_id, None)
        self._index_hashes.pop(user_id, None)

    def _drop_touched(self) -> None:
        """After a rollback: indexes patched inside it no longer match the file."""
        for user_id in self._touched:
            self._indexes.pop(user_id, None)
        self._touched.clear()

    def _versions(self, user_ids: list[str]) -> dict[str, int]:
        """The current version of each user (0: never written)."""
        if len(user_ids) == 1:  # the usual case, by key (5 µs, against 17 through json_each)
            return {user_ids[0]: self.user_version(user_ids[0])}
        found = dict(self._db.execute(
            f"SELECT user_id, version FROM user_versions WHERE user_id IN {JSON_LIST}",
            (json.dumps(user_ids),),
        ).fetchall())
        return {u: found.get(u, 0) for u in user_ids}

    def _commits_seen(self) -> int:
        """Other connections' commits (``PRAGMA data_version``) as this thread reads the file:
        inside `reading`, as of its start."""
        if getattr(self._reader, "on", False):
            return self._data_version
        return self._db.execute("PRAGMA data_version").fetchone()[0]

    def _sync_caches(self) -> None:
        """When another connection changed the file: drop the cached items, and the cached
        indexes of the users whose memories it changed."""
        if getattr(self._reader, "on", False):  # inside `reading`: looked for at its start
            return
        writing = self._writer is not None  # (under `_lock`: then it is this thread)
        if writing and self._synced_writing:  # holding the writers' lock: none came since
            return
        self._synced_writing = writing
        version = self._db.execute("PRAGMA data_version").fetchone()[0]
        if version == self._data_version:
            return
        self._data_version = version
        self._items.clear()
        self._rows.clear()
        self._states.clear()
        if not self._indexes:
            return
        current = self._versions(list(self._indexes))
        for user_id in list(self._indexes):
            if current[user_id] != self._index_versions.get(user_id):
                self._refresh_index(user_id, current[user_id])
            else:  # the same memories; vectors made behind them may have come
                self._fill_holes(user_id)

    def _cached(self, memory_ids: Sequence[str]) -> dict[str, MemoryItem]:
        """Items by id from the cache, reading (and caching) the missing ones."""
        self._sync_caches()
        found = {i: self._items[i] for i in memory_ids if i in self._items}
        missing = [i for i in memory_ids if i not in found]
        if missing:
            rows = self._db.execute(
                f"SELECT {SELECT_ITEM} FROM memories WHERE id IN {JSON_LIST}", (json.dumps(missing),)
            ).fetchall()
            read = {row[0]: self._with_pending(item_from_row(row)) for row in rows}
            found.update(read)
            if len(read) <= ITEM_CACHE_SIZE // 2:  # a bulk read (export, maintenance) is not kept
                self._keep(read)
        return found

    def _keep(self, items: dict[str, MemoryItem]) -> None:
        """Items into the cache, which starts over once it would pass `ITEM_CACHE_SIZE`."""
        if len(self._items) + len(items) > ITEM_CACHE_SIZE:
            self._items.clear()
        self._items.update(items)

    def _forget_items(self, memory_ids: Iterable[str]) -> None:
        for memory_id in memory_ids:
            self._items.pop(memory_id, None)


def _open_lock_file(path: Path) -> int | None:
    """The writers' lock file next to the database (``<name>-lock``); None where it cannot be
    opened (a read-only folder: nothing can be written there anyway)."""
    lock_path = str(path) + "-lock"
    for flags in (os.O_RDWR | os.O_CREAT, os.O_RDONLY):
        try:
            return os.open(lock_path, flags, 0o600)
        except OSError:
            continue
    return None


def _writable(path: Path) -> bool:
    """Can this process write the database (the file, or the folder that would hold it)?"""
    if path.exists():
        return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)
    return os.access(path.parent, os.W_OK)


_FULL = {13, 10 | (3 << 8), 10 | (4 << 8), 10 | (13 << 8)}  # FULL; IOERR_WRITE, _FSYNC, _TRUNCATE


def store_error(exc: sqlite3.Error, path: Path) -> StoreError:
    """SQLite's error as engram's: read-only, full disk, not a database, or a plain store error."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        return StoreError(f"the store cannot do that: {exc}")
    if code & 0xFF == 8:
        return StoreReadOnly(f"the store is read-only ({path}): reads work, writes do not")
    if code in _FULL:
        return StoreFull(f"no space left for {path} (the disk refused a write): nothing was written")
    if code & 0xFF in (11, 26):
        return NotADatabase(f"{path} is not an engram database (not SQLite, damaged or truncated)")
    if code & 0xFF == 14:
        return StoreError(f"cannot open {path}")
    if code & 0xFF in (5, 6):
        return StoreError(f"{path} is busy: another process held it too long; try again")
    return StoreError(f"the store failed: {exc}")


def _translating(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(self: SQLiteStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as exc:
            raise store_error(exc, self.path) from None
        except UnicodeEncodeError:  # a lone surrogate the caller's checks let through
            raise StoreError("a value is not valid Unicode (a lone surrogate): nothing was done") from None

    return call


# every public method raises engram's errors, never sqlite3's (the context managers translate
# inside `_tx`)
for _name in [n for n in dir(SQLiteStore) if not n.startswith("_") and n not in ("section", "atomic")]:
    if inspect.isfunction(getattr(SQLiteStore, _name)):
        setattr(SQLiteStore, _name, _translating(getattr(SQLiteStore, _name)))
