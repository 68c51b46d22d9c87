"""PostgreSQL + pgvector: one database shared by any number of engram processes.

- ``memories`` holds every field, the vector (pgvector) and engram's lexical tokens;
  ``history``, ``sessions``, ``session_turns``, ``user_state`` and ``jobs`` as in SQLite;
- dense search of scopes up to `HNSW_ABOVE` rows, lexical search and duplicate checks run
  on the per-user `ScopeIndex` (BM25 with the user's own statistics, as in SQLite), loaded
  from the user's pack in ``scope_packs`` (else from ``memories``, then packed) and patched
  on this process's own writes; larger scopes' dense search runs in the database by HNSW
  (iterative scan, so a filtered query still fills its limit);
- ``user_versions`` holds a per-user version bumped in the same transaction as every change
  of that user's memories: before a cached index is used its version is checked, so a
  write from another process (or machine) is never missed;
- `section(scope)` is a transaction holding ``pg_advisory_xact_lock`` on the scope's hash:
  reconcile's read-decide-write of one user runs one at a time across every process.

`PostgresStore` is this module's pool, transactions and caches, plus one mixin per concern,
as in `engram.store.sqlite`. Deleted rows leave the tables at once; PostgreSQL reclaims their
space (and the old tuple versions) at its next (auto)vacuum.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg_pool import ConnectionPool

from engram.config import redact_url
from engram.store.base import NotADatabase, Scope, StoreError, StoreFull, StoreReadOnly
from engram.store.index_cache import IndexCache
from engram.store.postgres.vectors import register_vectors
from engram.store.postgres.copy import CopyMixin
from engram.store.postgres.graph import GraphMixin
from engram.store.postgres.items import ItemsMixin
from engram.store.postgres.jobs import JobsMixin
from engram.store.postgres.keys import KeysMixin
from engram.store.postgres.schema import MIGRATION_LOCK, MIGRATIONS, SCHEMA_VERSION, hnsw_index, statements
from engram.store.postgres.search import SearchMixin
from engram.store.postgres.sessions import SessionsMixin
from engram.store.postgres.transitions import TransitionsMixin
from engram.store.postgres.writes import WritesMixin
from engram.store.scope_index import ScopeIndex

POOL_SIZE = 16  # connections per process: one per thread inside a transaction, plus readers
PACKS_QUEUED = 8  # packs waiting to be written at most (~1 MB per 1,000 memories each); more are skipped


def lock_key(text: str) -> int:
    """A signed 64-bit advisory-lock key for a scope (the same in every process)."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "big", signed=True)


class PostgresStore(
    ItemsMixin, WritesMixin, SearchMixin, TransitionsMixin, SessionsMixin, JobsMixin, KeysMixin, CopyMixin, GraphMixin,
):
    """`Store` over a PostgreSQL database with pgvector; safe to share between threads."""

    def __init__(self, url: str, *, dim: int, read_only: bool = False, pool_size: int = POOL_SIZE) -> None:
        self.url = url
        self.path = redact_url(url)  # what messages name
        self.dim = dim
        self.read_only = read_only
        self._local = threading.local()  # this thread's open transaction (connection, depth, changes)
        self._lock = threading.RLock()  # the caches below
        self._index_versions: dict[str, int] = {}
        # per-user indexes within a memory budget, least recently used dropped (engram.store.index_cache)
        self._indexes = IndexCache(on_evict=lambda user_id: self._index_versions.pop(user_id, None))
        # uses counted by record_access, not yet written: id -> (count, last use)
        self._pending_access: dict[str, tuple[int, datetime]] = {}
        self._pending_since: float | None = None
        self._table_estimate: tuple[float, float] | None = None  # (when, rows): `_table_rows`
        # users' packs written behind the search that loaded them (`SearchMixin._pack`)
        self._packer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="engram-packs")
        self._packs_queued = threading.BoundedSemaphore(PACKS_QUEUED)
        try:
            with psycopg.connect(url, autocommit=True) as conn:
                self._migrate(conn)
            self._pool = ConnectionPool(
                url, min_size=1, max_size=pool_size, kwargs={"autocommit": True},
                configure=self._configure, open=True, timeout=60, name="engram",
            )
            self._pool.wait(timeout=60)
        except psycopg.Error as exc:
            raise pg_error(exc, self.path) from None

    def _configure(self, conn: psycopg.Connection) -> None:
        register_vectors(conn)
        if self.read_only:
            conn.execute("SET default_transaction_read_only = on")

    # -- schema -------------------------------------------------------------------
    def _migrate(self, conn: psycopg.Connection) -> None:
        version = self._version(conn)
        if version == SCHEMA_VERSION:
            return
        if version > SCHEMA_VERSION:
            raise StoreError(f"{self.path} has schema version {version}; this engram knows up to {SCHEMA_VERSION}. Upgrade engram.")
        if self.read_only:
            raise StoreReadOnly(f"{self.path} needs a schema upgrade, and the store is read-only")
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            version = self._version(conn)  # another process may have migrated meanwhile
            if version == 0 and conn.execute("SELECT to_regclass('memories')").fetchone()[0] is not None:
                raise NotADatabase(f"{self.path} has a memories table, but is not an engram database")
            if version == 0:
                conn.execute("CREATE TABLE engram_schema (version integer NOT NULL)")
                conn.execute("INSERT INTO engram_schema VALUES (0)")
            for target in range(version + 1, SCHEMA_VERSION + 1):
                for statement in statements(MIGRATIONS[target]):
                    conn.execute(statement)
                conn.execute("UPDATE engram_schema SET version = %s", (target,))
            conn.execute(hnsw_index(self.dim))
        register_vectors(conn)

    @staticmethod
    def _version(conn: psycopg.Connection) -> int:
        if conn.execute("SELECT to_regclass('engram_schema')").fetchone()[0] is None:
            return 0
        return conn.execute("SELECT version FROM engram_schema").fetchone()[0]

    @property
    def schema_version(self) -> int:
        with self._conn() as conn:
            return self._version(conn)

    # -- connections and transactions -------------------------------------------------
    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection]:
        """This thread's connection: the one of its open transaction, else one from the pool."""
        held = getattr(self._local, "conn", None)
        if held is not None:
            yield held
            return
        with self._pool.connection() as conn:
            yield conn

    @contextmanager
    def _tx(self) -> Iterator[psycopg.Connection]:
        """One transaction; inside another of this thread (`atomic`, `section`) a savepoint of
        it. The cached indexes take this transaction's changes once it commits."""
        if self.read_only:
            raise StoreReadOnly(f"the store is read-only ({self.path}): reads work, writes do not")
        held = getattr(self._local, "conn", None)
        if held is not None:  # a savepoint: rolled back alone, its cache changes with it
            mark, bumped = len(self._local.patches), dict(self._local.bumped)
            try:
                with held.transaction():
                    yield held
            except BaseException:
                del self._local.patches[mark:]
                self._local.bumped = bumped
                raise
            return
        self._local.versions = None  # a write inside `reading`: the reads after it look again
        try:
            with self._pool.connection() as conn:
                self._local.conn, self._local.bumped, self._local.patches = conn, {}, []
                with conn.transaction():
                    yield conn
        except BaseException as exc:
            self._local.conn = None
            self._drop_indexes(self._local.bumped)
            if isinstance(exc, psycopg.Error):
                raise pg_error(exc, self.path) from None
            raise
        self._local.conn = None  # the connection is back in the pool: the caches take the commit
        self._apply_patches(self._local.bumped, self._local.patches)

    @contextmanager
    def atomic(self, *, deferred: bool = False) -> Iterator[None]:
        """Several writes as one transaction: all of them land, or none. (`deferred` changes
        nothing here: a PostgreSQL transaction keeps other writers waiting only on the rows
        and advisory locks it takes.)"""
        with self._tx():
            yield

    @contextmanager
    def section(self, scope: Scope) -> Iterator[None]:
        """Decide + write as one step for `scope`, across threads, processes and machines: a
        transaction holding the scope's advisory lock (reads inside see the latest commit)."""
        with self._tx() as conn:
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (lock_key(scope.user_id),))
            yield

    # -- per-user versions and cached indexes ----------------------------------------
    def _bump(self, conn: psycopg.Connection, user_ids: Any) -> None:
        """This transaction changes these users' memories: their versions go up by one (the
        row stays locked until the commit, so no other writer's bump can come in between)."""
        bumped: dict[str, int] = self._local.bumped
        new = sorted({u for u in user_ids if u not in bumped})
        if new:
            rows = conn.execute(
                "INSERT INTO user_versions (user_id, version) SELECT u, 1 FROM unnest(%s::text[]) AS u"
                " ON CONFLICT (user_id) DO UPDATE SET version = user_versions.version + 1 RETURNING user_id, version",
                (new,),
            ).fetchall()
            bumped.update(rows)

    def _patch(self, user_id: str, change: Callable[[ScopeIndex], None]) -> None:
        """A change to `user_id`'s cached index, applied when the transaction commits."""
        self._local.patches.append((user_id, change))

    def _apply_patches(self, bumped: dict[str, int], patches: list) -> None:
        """After the commit: an index one version behind takes the changes; one that another
        process's write made stale is dropped (reloaded when next searched)."""
        with self._lock:
            current: set[str] = set()
            for user_id, version in bumped.items():
                if user_id not in self._indexes:
                    continue
                cached = self._index_versions.get(user_id)
                if cached == version - 1:
                    current.add(user_id)
                    self._index_versions[user_id] = version
                elif cached != version:
                    self._drop_indexes([user_id])
            for user_id, change in patches:
                if user_id in current:
                    change(self._indexes[user_id])

    def _drop_indexes(self, user_ids: Any) -> None:
        with self._lock:
            for user_id in list(user_ids):
                self._indexes.pop(user_id, None)
                self._index_versions.pop(user_id, None)

    def user_version(self, user_id: str) -> int:
        with self._conn() as conn:
            row = conn.execute("SELECT version FROM user_versions WHERE user_id = %s", (user_id,)).fetchone()
        return 0 if row is None else row[0]

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Several reads as one (a search's half-dozen store calls): a user's version is read
        once, by the first call that needs it, not by each (a round trip each). A write of this
        thread inside ends it: the reads after it look again."""
        if getattr(self._local, "versions", None) is not None:
            yield
            return
        self._local.versions = {}
        try:
            yield
        finally:
            self._local.versions = None

    def _version_read(self, user_id: str) -> int:
        """The user's version: inside `reading`, as its first read of the user saw it."""
        version = self._version_seen(user_id)
        if version is None:
            version = self.user_version(user_id)
            self._saw_version(user_id, version)
        return version

    def _version_seen(self, user_id: str) -> int | None:
        """The user's version as this thread's `reading` saw it; None outside one, or not yet read."""
        seen: dict[str, int] | None = getattr(self._local, "versions", None)
        return None if seen is None else seen.get(user_id)

    def _saw_version(self, user_id: str, version: int) -> None:
        """Inside `reading`: the version a read of the user found (an index loaded at it)."""
        seen: dict[str, int] | None = getattr(self._local, "versions", None)
        if seen is not None:
            seen[user_id] = version

    def close(self) -> None:
        try:
            self._flush_access()
        finally:
            self._packer.shutdown(wait=True)  # the packs queued are written: the next start uses them
            self._pool.close()


def pg_error(exc: psycopg.Error, where: str) -> StoreError:
    """PostgreSQL's error as engram's: read-only, full disk, unreachable, or a plain store error."""
    if isinstance(exc, pg_errors.ReadOnlySqlTransaction):
        return StoreReadOnly(f"the store is read-only ({where}): reads work, writes do not")
    if isinstance(exc, pg_errors.DiskFull):
        return StoreFull(f"no space left for {where} (the server refused a write): nothing was written")
    if isinstance(exc, psycopg.OperationalError):
        return StoreError(f"cannot reach the database {where}: {str(exc).strip()}")
    return StoreError(f"the store failed: {str(exc).strip()}")


def _translating(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call(self: PostgresStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except psycopg.Error as exc:
            raise pg_error(exc, self.path) from None
        except UnicodeEncodeError:
            raise StoreError("a value is not valid Unicode (a lone surrogate): nothing was done") from None

    return call


# every public method raises engram's errors, never psycopg's (`_tx` translates for the
# context managers)
for _name in [n for n in dir(PostgresStore) if not n.startswith("_") and n not in ("section", "atomic")]:
    if inspect.isfunction(getattr(PostgresStore, _name)):
        setattr(PostgresStore, _name, _translating(getattr(PostgresStore, _name)))
