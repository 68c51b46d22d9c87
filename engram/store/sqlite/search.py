"""The search index: lexical (BM25 over engram's tokens, in the per-user `ScopeIndex`) and
dense search inside a scope. Mixed into `SQLiteStore`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from engram.models import Filters
from engram.store import scope_pack
from engram.store.base import Scope, StoreError
from engram.store.scope_index import Allowed, ScopeIndex, Window
from engram.store.scope_pack import PACK_FROM_ROWS, REPACK_ROWS
from engram.store.sqlite.rows import span_later, statuses_of, to_epoch, turn_place


def query_terms(tokens: Sequence[str]) -> list[str]:
    """A query's distinct tokens, in order."""
    return list(dict.fromkeys(t for t in tokens if t))


class SearchMixin:
    """Needs the connection, lock, transactions and caches of `SQLiteStore`."""

    def lexical_search(
        self, scope: Scope, tokens: Sequence[str], filters: Filters, limit: int,
        weights: Sequence[float] | None = None, context_weight: float = 0.0,
    ) -> list[tuple[str, float]]:
        """BM25 over engram's tokens with the user's own statistics (see scope_index)."""
        terms = query_terms(tokens)
        if not terms or limit <= 0:
            return []
        with self._lock:
            index, statuses, allowed, window = self._searchable(scope, filters)
            return index.lexical(terms, statuses, scope.agent_id, limit, allowed, weights, context_weight, window)

    def _searchable(
        self, scope: Scope, filters: Filters
    ) -> tuple[ScopeIndex, list[str], Allowed | None, Window | None]:
        """(Under the lock) the user's index, current, and the filters it applies itself."""
        self._sync_caches()
        allowed, window = self._index_filters(scope, filters)
        return self._scope_index(scope.user_id), statuses_of(filters), allowed, window

    def _scope_index(self, user_id: str) -> ScopeIndex:
        """The user's in-memory index: cached, else from its pack, else loaded from the
        memories table and FTS5 tokens (and packed for the next cold start)."""
        cache = self._indexes.get(user_id)
        if cache is None:
            cache = self._unpacked(user_id)
            if cache is None:
                cache = ScopeIndex(self.dim)
                # the version before the rows: a write landing in between makes the index look
                # stale (refreshed once more), never current when it is not
                version = self.user_version(user_id)
                self._index_hashes[user_id] = {}
                self._index_rows(cache, user_id, "m.user_id = ?", [user_id])
                self._index_versions[user_id] = version
                self._indexes[user_id] = cache
                self._pack(user_id, cache)
        return cache

    def _unpacked(self, user_id: str) -> ScopeIndex | None:
        """The user's index from its pack, caught up with what changed since, or None.

        Pack, version and catch-up are read in one snapshot, so what changed since the pack was
        written can only be new rows and status changes: a deletion, or a change of a memory's
        text, vector, agent, kind, session or time, drops the pack in the same transaction."""
        own = not self._db.in_transaction
        if own:
            self._db.execute("BEGIN")
        try:
            row = self._db.execute("SELECT version, data FROM scope_packs WHERE user_id = ?", (user_id,)).fetchone()
            restored = None if row is None else scope_pack.restore(row[1], self.dim)
            if restored is None:
                return None
            cache, parts = restored
            self._index_hashes[user_id] = dict(zip(cache.rowids.tolist(), parts["hashes"].split("\n"), strict=False))  # none: [""]
            version = self.user_version(user_id)
            added = 0 if version == row[0] else self._catch_up(cache, user_id)
        finally:
            if own:
                self._db.execute("COMMIT")
        self._index_versions[user_id] = version
        self._indexes[user_id] = cache
        # a first vector set behind leaves the pack alone (its trigger): the rows the pack holds
        # without one are read here
        self._fill_holes(user_id)
        if added >= max(REPACK_ROWS, cache.size // 8):
            self._pack(user_id, cache)
        return cache

    def _catch_up(self, cache: ScopeIndex, user_id: str) -> int:
        """Rows added since the pack (appended) and status changes (read from a covering index,
        no table rows); returns the rows added."""
        last = scope_pack.last_rowid(cache)
        # one writer at a time: rowids commit in order, so no row up to `last` is new
        scope_pack.apply_statuses(
            cache, self._db.execute("SELECT rowid, status FROM memories WHERE user_id = ? AND rowid <= ?", (user_id, last)), last
        )
        before = cache.size
        self._index_rows(cache, user_id, "m.user_id = ? AND m.rowid > ?", [user_id, last])
        return cache.size - before

    def _pack(self, user_id: str, cache: ScopeIndex) -> None:
        """Persist the index as the user's pack, when it is worth one and holds only live rows.
        Skipped inside a transaction (its fate is the caller's) and when the user changed since
        the index was current (the next load packs)."""
        if self.read_only or self._tx_depth or cache.size < PACK_FROM_ROWS or not cache.clean:
            return
        version = self._index_versions[user_id]
        hashes = self._index_hashes[user_id]
        parts = cache.to_parts()
        parts["hashes"] = "\n".join(hashes[r] for r in cache.rowids[: cache.size].tolist())
        blob = scope_pack.encode(parts)
        try:
            with self._writing(wait=False) as mine:  # another writer has the file: the next load packs
                if mine:
                    with self._tx() as db:
                        if self.user_version(user_id) == version:
                            db.execute(
                                "INSERT OR REPLACE INTO scope_packs (user_id, version, data) VALUES (?, ?, ?)",
                                (user_id, version, blob),
                            )
        except StoreError:  # busy, full, read-only: a pack only saves time; the next load tries again
            pass

    def _index_rows(self, cache: ScopeIndex, user_id: str, where: str, params: list) -> None:
        """Rows into `cache` (new ones appended; a known rowid with new content replaced)."""
        rows = self._db.execute(
            "SELECT m.rowid, m.embedding, m.tokens, m.status, m.agent_id, m.kind, m.session_id,"
            " m.id, m.created_at, m.content_hash, CASE WHEN m.kind = 'turn' THEN m.metadata END,"
            " CASE WHEN m.kind = 'turn' THEN m.content END, m.language FROM memories m"
            f" WHERE {where} ORDER BY m.rowid",
            params,
        ).fetchall()
        hashes = self._index_hashes[user_id]
        for r in rows:
            if r[0] in cache.position:  # its content changed in another process
                cache.replace(r[0], None if r[1] is None else np.frombuffer(r[1], dtype=np.float32), r[2].split(), r[12])
                cache.set_status(r[0], r[3])
            hashes[r[0]] = r[9]
        fresh = [r for r in rows if r[0] not in cache.position]
        if fresh:
            cache.add(
                [r[0] for r in fresh],
                [r[7] for r in fresh],
                [None if r[1] is None else np.frombuffer(r[1], dtype=np.float32) for r in fresh],
                [r[2].split() for r in fresh],
                [r[3] for r in fresh],
                [r[4] for r in fresh],
                [turn_place(r[5], r[4], r[6], r[8], r[10], r[11] or "") for r in fresh],
                [r[8] for r in fresh],
                [span_later(r[5], r[8], r[11] or "") for r in fresh],
                languages=[r[12] for r in fresh],
            )

    def _fill_holes(self, user_id: str) -> None:
        """Vectors another process set since (write-behind) into this user's index rows that
        lack one; they leave the user's version alone, so only such rows are read."""
        cache = self._indexes[user_id]
        holes = cache.holes()
        for start in range(0, len(holes), 500):
            chunk = [int(r) for r in holes[start : start + 500]]
            for rowid, blob in self._db.execute(
                f"SELECT rowid, embedding FROM memories WHERE rowid IN ({', '.join('?' for _ in chunk)})"
                " AND embedding IS NOT NULL", chunk,
            ):
                cache.set_vector(rowid, np.frombuffer(blob, dtype=np.float32))

    def _refresh_index(self, user_id: str, version: int) -> None:
        """Another process changed this user's memories: patch the index from a light scan
        (rowid, status, content hash, whether it has a vector; not the vectors) instead of
        reloading every row. A row whose vector came after it (write-behind) is read again."""
        cache, hashes = self._indexes[user_id], self._index_hashes[user_id]
        seen: set[int] = set()
        stale: list[int] = []
        for rowid, status, content_hash, embedded in self._db.execute(
            "SELECT rowid, status, content_hash, embedding IS NOT NULL FROM memories WHERE user_id = ?", (user_id,)
        ):
            seen.add(rowid)
            if (
                rowid not in cache.position or hashes.get(rowid) != content_hash
                or (embedded and not cache.has_vector[cache.position[rowid]])
            ):
                stale.append(rowid)
            elif cache.status_of(rowid) != status:
                cache.set_status(rowid, status)
        for rowid in [r for r in hashes if r not in seen]:  # deleted there
            cache.set_status(rowid, None)
            del hashes[rowid]
        for start in range(0, len(stale), 500):
            chunk = stale[start : start + 500]
            self._index_rows(cache, user_id, f"m.rowid IN ({', '.join('?' for _ in chunk)})", chunk)
        self._index_versions[user_id] = version

    def _index_filters(self, scope: Scope, filters: Filters) -> tuple[Allowed | None, Window | None]:
        """Filters beyond status/agent, as the index applies them: a time range on its own
        column ("last May" on a 100k scope: ~0.1 ms, where SQL rowids took 250 ms), the rest
        (kind, session, metadata, as_of…) as the rowids SQL permits."""
        window = None
        if filters.since is not None or filters.until is not None:
            window = (to_epoch(filters.since), to_epoch(filters.until))
            filters = filters.model_copy(update={"since": None, "until": None})
        return self._allowed(scope, filters), window

    def _allowed(self, scope: Scope, filters: Filters) -> Allowed | None:
        """For filters beyond status/agent: the permitted rowids, from SQL."""
        if filters.is_default:
            return None
        where, params = self._filter_where(scope, filters)
        permitted = np.fromiter(
            (r[0] for r in self._db.execute(f"SELECT rowid FROM memories WHERE {where}", params)),
            dtype=np.int64,
        )
        return lambda rowids: np.isin(rowids, permitted)

    def dense_search(
        self, scope: Scope, vector: np.ndarray, filters: Filters, limit: int, context_weight: float = 0.0
    ) -> list[tuple[str, float]]:
        with self._lock:
            index, statuses, allowed, window = self._searchable(scope, filters)
            return index.dense(
                np.asarray(vector, dtype=np.float32), statuses, scope.agent_id, limit, allowed, window, context_weight
            )

    def restatements(
        self, scope: Scope, vector: np.ndarray | None, tokens: Sequence[str], filters: Filters, limit: int
    ) -> list[tuple[str, float]]:
        """The closest by cosine among the memories sharing the most words with `tokens`
        (`vector` None: those memories, most words shared first)."""
        terms = query_terms(tokens)
        if not terms or limit <= 0:
            return []
        with self._lock:
            index, statuses, allowed, window = self._searchable(scope, filters)
            return index.restatements(
                None if vector is None else np.asarray(vector, dtype=np.float32), terms, statuses, scope.agent_id, limit, allowed, window
            )

    def turn_links(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, tuple[str | None, str | None]]:
        with self._lock:
            self._sync_caches()
            return self._scope_index(scope.user_id).answered_ids(memory_ids)

    def turns_by(self, scope: Scope, speakers: Iterable[str]) -> tuple[set[str], set[str]]:
        with self._lock:
            self._sync_caches()
            index = self._scope_index(scope.user_id)
            return index.speakers(), index.speaker_rows(set(speakers))

    def languages(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, str]:
        """The language of each of these memories the user's index knows (no row is read)."""
        with self._lock:
            self._sync_caches()
            return self._scope_index(scope.user_id).languages(memory_ids)

    def named_spans(self, scope: Scope, memory_ids: Sequence[str]) -> dict[str, tuple[float, float]]:
        with self._lock:
            self._sync_caches()
            return self._scope_index(scope.user_id).named_spans(memory_ids)
