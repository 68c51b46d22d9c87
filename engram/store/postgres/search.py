"""Search inside a scope: lexical, duplicate checks and dense search of most users on the per-user
`ScopeIndex` (loaded from the user's pack, see `engram.store.scope_pack`), dense search of the few
users HNSW serves in the database (pgvector). Mixed into `PostgresStore`.

Why dense in the index: ranking a user's 1,000 rows in the database reads ~1,000 heap pages (their
rows are spread over the table as they were written), 12-19 ms when they are not in PostgreSQL's
buffers (a cold user at 1M memories), 4 ms when they are; the index ranks them in ~0.1 ms, and
its pack is one value of contiguous pages."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import psycopg

from engram.models import Filters
from engram.store import scope_pack
from engram.store.base import Scope
from engram.store.scope_index import EXACT_UP_TO, Allowed, ScopeIndex, Window
from engram.store.scope_pack import PACK_FROM_ROWS, REPACK_ROWS
from engram.store.sqlite.rows import statuses_of, to_epoch, turn_place, turn_span
from engram.store.sqlite.search import query_terms

# Dense search picks its path by the scope's size. The user's index ranks every row exactly up to
# `EXACT_UP_TO` rows (10k rows: ~1 ms), where the database's exact scan through the user's btree
# cost ~5 µs a row (10k rows: 54 ms p50 on a busy 2-core machine) and HNSW a few ms whatever the
# size, more on cold pages (1,000-row users of a 100k-row table: ~17 ms). HNSW filtered to one
# user finds that user's rows only as often as they occur in the table, and gives up after
# hnsw.max_scan_tuples (20,000): a filtered HNSW query alone returned too few rows in FACTS.md
# (recall 0.19). So HNSW serves a scope of more than `HNSW_ABOVE` rows that is at least
# `HNSW_MIN_SHARE` of the table, with an iterative scan; a short answer falls back to an exact
# scan in the database. Other scopes, however large, rank in their index (IVF past `EXACT_UP_TO`).
HNSW_ABOVE = EXACT_UP_TO
HNSW_MIN_SHARE = 0.01
HNSW_EF_SEARCH = 100
_TABLE_ROWS_TTL = 60.0  # seconds the table's estimated row count is reused


class SearchMixin:
    """Needs the pool, transactions and caches of `PostgresStore`."""

    def lexical_search(
        self, scope: Scope, tokens: Sequence[str], filters: Filters, limit: int,
        weights: Sequence[float] | None = None, context_weight: float = 0.0,
    ) -> list[tuple[str, float]]:
        """BM25 over engram's tokens with the user's own statistics (see scope_index)."""
        terms = query_terms(tokens)
        if not terms or limit <= 0:
            return []
        with self._searchable(scope, filters) as (index, statuses, allowed, window):
            return index.lexical(terms, statuses, scope.agent_id, limit, allowed, weights, context_weight, window)

    def restatements(
        self, scope: Scope, vector: np.ndarray | None, tokens: Sequence[str], filters: Filters, limit: int
    ) -> list[tuple[str, float]]:
        terms = query_terms(tokens)
        if not terms or limit <= 0:
            return []
        with self._searchable(scope, filters) as (index, statuses, allowed, window):
            return index.restatements(
                None if vector is None else np.asarray(vector, dtype=np.float32), terms, statuses, scope.agent_id, limit, allowed, window
            )

    @contextmanager
    def _searchable(
        self, scope: Scope, filters: Filters
    ) -> Iterator[tuple[ScopeIndex, list[str], Allowed | None, Window | None]]:
        """The user's index, current, held (under `_lock`) for one search, and the filters it applies."""
        allowed, window = self._index_filters(scope, filters)
        with self._lock:
            yield self._scope_index(scope.user_id), statuses_of(filters), allowed, window

    def _scope_index(self, user_id: str) -> ScopeIndex:
        """(Under `_lock`) the user's index, current. Cached while the user's version in the
        database is the one it was built or patched at; else (first use, or another process
        wrote) from the user's pack or the cached index caught up with what was added since,
        else loaded from every row of the user (and packed for the next start)."""
        index = self._indexes.get(user_id)
        if index is not None and self._index_versions.get(user_id) == self._version_read(user_id):
            return index
        outside = getattr(self._local, "conn", None) is None  # not inside the caller's transaction
        if outside:
            fresh = self._unpacked(user_id, index)
            if fresh is not None:
                self._saw_version(user_id, self._index_versions[user_id])
                return fresh
        version = self.user_version(user_id)
        self._saw_version(user_id, version)
        # version and rows may come from two snapshots: a write between them makes the index
        # look stale (loaded again), never current when it is not
        index = ScopeIndex(self.dim)
        with self._conn() as conn:
            self._index_rows(conn, index, "user_id = %s", (user_id,))
        self._indexes[user_id] = index
        self._index_versions[user_id] = version
        if outside:
            self._pack(user_id, index, version)
        return index

    def _unpacked(self, user_id: str, cached: ScopeIndex | None) -> ScopeIndex | None:
        """The user's index from their pack (or `cached`, when the pack is not newer), caught up
        with the rows added and the statuses changed since; None without a pack.

        A current pack is one statement (one round trip). Otherwise pack, version and catch-up
        are read in one snapshot, so what changed since the pack was written can only be new
        rows and status changes: a deletion or a change of what the index holds drops the pack
        in the same transaction (schema `PACK_MIGRATION`)."""
        at = self._index_versions.get(user_id, -1) if cached is not None else -1
        with self._pool.connection() as conn:
            version, packed_at, blob = self._pack_state(conn, user_id, at, stale=False)
            if packed_at is None:
                return None
            added = 0
            if version != max(packed_at, at):  # changed since: pack and catch-up in one snapshot
                conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
                try:
                    version, packed_at, blob = self._pack_state(conn, user_id, at, stale=True)
                    if packed_at is None:
                        return None
                    index = cached if packed_at <= at else self._restored(blob)
                    if index is not None and version != max(packed_at, at):
                        added = self._catch_up(conn, index, user_id)
                finally:
                    conn.execute("COMMIT")
            else:
                index = cached if packed_at <= at else self._restored(blob)
        if index is None:
            return None
        self._indexes[user_id] = index
        self._index_versions[user_id] = version
        if added >= max(REPACK_ROWS, index.size // 8):
            self._pack(user_id, index, version)
        return index

    @staticmethod
    def _pack_state(conn: psycopg.Connection, user_id: str, at: int, stale: bool) -> tuple[int, int | None, bytes | None]:
        """(the user's version, their pack's version or None, the pack when it is newer than `at`
        and, unless `stale`, current: the only case that needs no second read)."""
        version, packed_at, blob = conn.execute(
            "SELECT coalesce(v.version, 0), p.version,"
            " CASE WHEN p.version > %s AND (%s OR p.version = coalesce(v.version, 0)) THEN p.data END"
            " FROM (SELECT 1) AS one LEFT JOIN user_versions v ON v.user_id = %s LEFT JOIN scope_packs p ON p.user_id = %s",
            (at, stale, user_id, user_id), binary=True,
        ).fetchone()
        return version, packed_at, blob

    def _restored(self, blob: bytes | None) -> ScopeIndex | None:
        restored = scope_pack.restore(blob, self.dim)
        return None if restored is None else restored[0]

    def _catch_up(self, conn: psycopg.Connection, index: ScopeIndex, user_id: str) -> int:
        """Status changes of the rows the index holds (and rows committed after a later one,
        or gone) and the rows added since; returns the rows added."""
        last = scope_pack.last_rowid(index)
        late = scope_pack.apply_statuses(
            index, conn.execute("SELECT rowid, status FROM memories WHERE user_id = %s AND rowid <= %s", (user_id, last)), last
        )
        before = index.size
        self._index_rows(conn, index, "user_id = %s AND (rowid > %s OR rowid = ANY(%s::bigint[]))", (user_id, last, late))
        return index.size - before

    @staticmethod
    def _index_rows(conn: psycopg.Connection, index: ScopeIndex, where: str, params: Sequence[Any]) -> None:
        """Rows into the index, appended."""
        rows = conn.execute(
            "SELECT rowid, embedding, tokens, status, agent_id, kind, session_id, id, created_at,"
            " CASE WHEN kind = 'turn' THEN metadata::text END, CASE WHEN kind = 'turn' THEN content END, language"
            f" FROM memories WHERE {where} ORDER BY rowid",
            params, binary=True,
        ).fetchall()
        if rows:
            index.add(
                [r[0] for r in rows], [r[7] for r in rows],
                [r[1] if r[1] is not None and len(r[1]) == index.dim else None for r in rows],
                [r[2].split() for r in rows], [r[3] for r in rows], [r[4] for r in rows],
                [turn_place(r[5], r[4], r[6], r[8], r[9], r[10] or "") for r in rows], [r[8] for r in rows],
                languages=[r[11] for r in rows],
            )  # the days each turn talks about: read when asked (`named_spans`)

    def _pack(self, user_id: str, index: ScopeIndex, version: int) -> None:
        """Persist the index as the user's pack at `version`, when it is worth one and holds only
        live rows. Encoded now (the index changes after this call), written behind on a thread
        of its own: writing ~1 MB took 15-30 ms, most of it the commit's flush (a cache: lost in
        a crash, it is written again on the next load). Skipped when too many wait."""
        if self.read_only or index.size < PACK_FROM_ROWS or not index.clean:
            return
        if not self._packs_queued.acquire(blocking=False):
            return
        try:
            self._packer.submit(self._write_pack, user_id, version, scope_pack.encode(index.to_parts()))
        except RuntimeError:  # the store is closing
            self._packs_queued.release()

    def _write_pack(self, user_id: str, version: int, blob: bytes) -> None:
        """(On the packer thread.) The pack, only while the user is still at `version`, read under
        their version row (FOR SHARE: a writer holding it is not waited for, the next load packs);
        never inside a caller's transaction (a connection of its own). A pack only saves time:
        a failure is no error."""
        try:
            with self._pool.connection() as conn, conn.transaction():
                conn.execute("SET LOCAL synchronous_commit = off")
                row = conn.execute(
                    "SELECT version FROM user_versions WHERE user_id = %s FOR SHARE NOWAIT", (user_id,)
                ).fetchone()
                if row is not None and row[0] == version:
                    conn.execute(
                        "INSERT INTO scope_packs (user_id, version, data) VALUES (%s, %s, %s) ON CONFLICT (user_id)"
                        " DO UPDATE SET version = excluded.version, data = excluded.data",
                        (user_id, version, blob),
                    )
        except psycopg.Error:
            pass
        finally:
            self._packs_queued.release()

    def _packs_written(self) -> None:
        """Wait until the packs queued so far are written (tests, benchmarks)."""
        self._packer.submit(lambda: None).result()

    def _index_filters(self, scope: Scope, filters: Filters) -> tuple[Allowed | None, Window | None]:
        """A time range as the index's own window; other filters (kind, session, metadata,
        as_of…) as the rowids SQL permits."""
        window = None
        if filters.since is not None or filters.until is not None:
            window = (to_epoch(filters.since), to_epoch(filters.until))
            filters = filters.model_copy(update={"since": None, "until": None})
        if filters.is_default:
            return None, window
        where, params = self._filter_where(scope, filters)
        permitted = np.array([r[0] for r in self._rows(f"SELECT rowid FROM memories WHERE {where}", params)], dtype=np.int64)
        return (lambda rowids: np.isin(rowids, permitted)), window

    def _count_rows(self, conn: psycopg.Connection, deltas: Mapping[str, int]) -> None:
        """(In the writing transaction, after `_bump` locked these users' version rows.) Keep each
        user's row count, and move a user the write took over `HNSW_ABOVE` rows and
        `HNSW_MIN_SHARE` of the table into the HNSW index: their rows flagged now, new ones by
        the insert trigger. The version lock orders this against another process inserting
        rows of the same user, so no row of theirs is left out."""
        deltas = {u: n for u, n in deltas.items() if n}
        if not deltas:
            return
        counted = conn.execute(
            "UPDATE user_versions v SET row_count = v.row_count + d.n FROM unnest(%s::text[], %s::bigint[]) AS d(u, n)"
            " WHERE v.user_id = d.u RETURNING v.user_id, v.row_count",
            (list(deltas), list(deltas.values())),
        ).fetchall()
        table = self._table_rows()
        due = [u for u, n in counted if n > HNSW_ABOVE and n >= HNSW_MIN_SHARE * table]
        if not due:
            return
        joined = conn.execute(
            "INSERT INTO hnsw_users SELECT unnest(%s::text[]) ON CONFLICT DO NOTHING RETURNING user_id", (due,)
        ).fetchall()
        if joined:
            conn.execute(
                "UPDATE memories SET hnsw = true WHERE user_id = ANY(%s::text[]) AND NOT hnsw", ([r[0] for r in joined],)
            )

    def _in_hnsw(self, user_id: str) -> bool:
        return bool(self._rows("SELECT 1 FROM hnsw_users WHERE user_id = %s", (user_id,)))

    def dense_search(
        self, scope: Scope, vector: np.ndarray, filters: Filters, limit: int, context_weight: float = 0.0
    ) -> list[tuple[str, float]]:
        """Top `limit` (id, cosine) in the scope: ranked in the user's index (every row, as the
        database would, without reading a page of theirs; read with the turns around, as
        `ScopeIndex.dense` reads them), or by HNSW in the database for a user it serves (each row
        alone)."""
        if limit <= 0:
            return []
        with self._searchable(scope, filters) as (index, statuses, allowed, window):
            size = index.size  # the index the search loads anyway: no count of the user's rows
            hnsw = size > HNSW_ABOVE and size >= HNSW_MIN_SHARE * self._table_rows() and self._in_hnsw(scope.user_id)
            if not hnsw:
                return index.dense(
                    np.asarray(vector, dtype=np.float32), statuses, scope.agent_id, limit, allowed, window, context_weight
                )
        with self._conn() as conn:
            with self._dense_query(conn, scope, vector, filters, limit, hnsw) as (sql, params):
                rows = conn.execute(sql, params, prepare=False).fetchall()
            if hnsw and len(rows) < limit:  # the filters left HNSW too few rows: rank them all
                with self._dense_query(conn, scope, vector, filters, limit, False) as (sql, params):
                    rows = conn.execute(sql, params, prepare=False).fetchall()
        rows.sort(key=lambda r: -r[1])  # HNSW's relaxed order
        return [(r[0], float(r[1])) for r in rows]

    def explain_dense(self, scope: Scope, vector: np.ndarray, filters: Filters, limit: int, hnsw: bool) -> str:
        """PostgreSQL's plan for a dense search by HNSW or exact (which index serves it)."""
        with self._conn() as conn, self._dense_query(conn, scope, vector, filters, limit, hnsw) as (sql, params):
            return "\n".join(r[0] for r in conn.execute("EXPLAIN " + sql, params, prepare=False))

    def _table_rows(self) -> float:
        """PostgreSQL's estimate of the memories table's rows (no scan), reused for a minute."""
        now = time.monotonic()
        cached = self._table_estimate
        if cached is None or now - cached[0] > _TABLE_ROWS_TTL:
            rows = self._rows("SELECT greatest(reltuples, 0) FROM pg_class WHERE oid = 'memories'::regclass")
            cached = self._table_estimate = (now, float(rows[0][0]))
        return cached[1]

    @contextmanager
    def _dense_query(
        self, conn: psycopg.Connection, scope: Scope, vector: np.ndarray, filters: Filters, limit: int, hnsw: bool,
    ) -> Iterator[tuple[str, list[Any]]]:
        """The dense query, inside the settings it needs (not prepared: a prepared plan would
        keep the settings of its first runs)."""
        query = np.asarray(vector, dtype=np.float32)
        where, params = self._filter_where(scope, filters)
        where += f" AND vector_dims(embedding) = {int(self.dim)}"  # a literal: it selects the partial HNSW index
        if not hnsw:
            # `embedding <=> q` matches no index: the planner reads the scope's rows by its btree
            yield (
                f"SELECT id, 1 - (embedding <=> %s) FROM memories WHERE {where} ORDER BY embedding <=> %s LIMIT %s",
                [query, *params, query, limit],
            )
            return
        with conn.transaction():  # SET LOCAL: this query only
            conn.execute(f"SET LOCAL hnsw.ef_search = {max(HNSW_EF_SEARCH, int(limit))}")
            conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            # the size decided HNSW: a plan through the user's btree and a sort is not an option
            conn.execute("SET LOCAL enable_sort = off")
            conn.execute("SET LOCAL enable_seqscan = off")
            cast = f"embedding::vector({int(self.dim)})"
            yield (  # `AND hnsw`: the index's own condition (the user's rows are all flagged)
                f"SELECT id, 1 - ({cast} <=> %s) FROM memories WHERE {where} AND hnsw ORDER BY {cast} <=> %s LIMIT %s",
                [query, *params, query, limit],
            )

    def turn_links(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, tuple[str | None, str | None]]:
        with self._lock:
            return self._scope_index(scope.user_id).answered_ids(memory_ids)

    def turns_by(self, scope: Scope, speakers: Iterable[str]) -> tuple[set[str], set[str]]:
        with self._lock:
            index = self._scope_index(scope.user_id)
            return index.speakers(), index.speaker_rows(set(speakers))

    def languages(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, str]:
        """The language of each of these memories the user's index knows (no row is read)."""
        with self._lock:
            return self._scope_index(scope.user_id).languages(memory_ids)

    def named_spans(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, tuple[float, float]]:
        """The days these turns talk about, read from their text when a search asks (a shortlist),
        not for every turn when the user's index loads: parsing the dates of 1,000 turns was
        ~100 ms of a cold search here (SQLite keeps them in the user's pack)."""
        if not memory_ids:
            return {}
        rows = self._rows(
            "SELECT id, kind, created_at, content FROM memories WHERE id = ANY(%s::text[]) AND user_id = %s",
            (list(memory_ids), scope.user_id),
        )
        spans = {i: turn_span(kind, at, content) for i, kind, at, content in rows}
        return {i: span for i, span in spans.items() if span is not None}
