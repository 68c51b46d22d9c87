"""Qdrant as the search layer over a SQLite side store.

Layout:
- one Qdrant collection per store (``?collection=``, default ``engram``), one point per memory
  (id: the memory's rowid in the side store) with a dense vector (cosine), a sparse vector of
  engram's lexical tokens (Qdrant's IDF modifier, statistics scoped to the user with an IDF
  corpus filter, as engram's own BM25 is per user), and the record in the payload beside the
  fields searches filter on (user_id, agent_id, status, kind, session_id: keyword indexes;
  created_at: a float index);
- the side store is an ordinary engram SQLite file (`SQLiteStore`, composed by inheritance, not
  copied): history, sessions, turns, per-user state, the job queue, and the memories' rows
  themselves, which keep the transactions, guarded transitions and the per-user version every
  cache relies on. Qdrant cannot join a SQLite transaction, so it is a mirror:

Mirroring: after every write that commits (and at the end of `atomic`), each user whose
version (``user_versions``, bumped by triggers) differs from the version last mirrored to the
collection (``qdrant_mirror`` in the side store) is brought level: their points are compared
with their rows by a stamp of each row, changed rows upserted, vanished ones deleted, under the
writers' lock so no write lands in between. A search first checks its user's two versions (one
primary-key read), so another process's writes, or a crash between commit and mirror, are
caught up before it answers. Deletion reaches Qdrant before `delete` returns.
"""

from __future__ import annotations

import functools
import hashlib
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from qdrant_client import QdrantClient, models

from engram.models import Filters
from engram.store.base import Scope, StoreError
import engram.store.qdrant.points as P
from engram.store.qdrant.copy import QdrantCopyMixin
from engram.store.qdrant.target import QdrantTarget, parse
from engram.store.scope_index import RESTATEMENT_SHORTLIST
from engram.store.sqlite.rows import SELECT_ITEM, item_from_row, statuses_of, to_epoch
from engram.store.sqlite.search import query_terms
from engram.store.sqlite.store import SQLiteStore

_CHUNK = 256  # rows read and points upserted at a time while mirroring

# local mode locks its folder to one client: stores of one process share it
_local_lock = threading.Lock()
_local: dict[str, list[Any]] = {}  # folder -> [client, users]


def _open_client(target: QdrantTarget) -> tuple[QdrantClient, Callable[[], None]]:
    if target.local_path is None:
        client = QdrantClient(url=target.url, api_key=target.api_key)
        return client, client.close
    key = str(target.local_path.resolve())
    with _local_lock:
        entry = _local.get(key)
        if entry is None:
            target.local_path.mkdir(mode=0o700, parents=True, exist_ok=True)
            try:
                entry = _local[key] = [QdrantClient(path=key), 0]
            except RuntimeError as exc:  # another process holds the folder
                raise StoreError(f"cannot open Qdrant folder {key}: {exc}") from None
        entry[1] += 1

    def release() -> None:
        with _local_lock:
            entry[1] -= 1
            if entry[1] == 0 and _local.get(key) is entry:
                del _local[key]
                entry[0].close()

    return entry[0], release


def _stamp(row: Sequence[Any]) -> str:
    """What a point must be rewritten for: any change of the row's item columns."""
    return hashlib.blake2b(repr(tuple(row)).encode("utf-8"), digest_size=12).hexdigest()


class QdrantStore(QdrantCopyMixin, SQLiteStore):
    """`Store` whose searches run in Qdrant; everything else is the side store's."""

    def __init__(self, target: QdrantTarget, *, dim: int, read_only: bool = False) -> None:
        super().__init__(target.side, dim=dim, read_only=read_only)
        self.target = target
        self.collection = target.collection
        self._idf_per_user = True  # an older server refuses IDF corpus filters: then collection-wide
        try:
            self._client, self._release = _open_client(target)
            self._dense = self._prepare()
        except BaseException:
            SQLiteStore.close(self)
            raise

    # -- set-up ------------------------------------------------------------------------
    def _prepare(self) -> bool:
        """Create the collection, its payload indexes and the mirror table when missing;
        True when the collection's dense vectors have this store's dimension."""
        client, name = self._client, self.collection
        if not client.collection_exists(name):
            if self.read_only:
                return True  # nothing to search yet
            client.create_collection(
                name,
                vectors_config={P.DENSE: models.VectorParams(size=self.dim, distance=models.Distance.COSINE)},
                sparse_vectors_config={P.LEXICAL: models.SparseVectorParams(modifier=models.Modifier.IDF)},
            )
            with warnings.catch_warnings():  # local mode says indexes do nothing there
                warnings.simplefilter("ignore")
                for field in P.KEYWORD_FIELDS:
                    client.create_payload_index(name, field, models.PayloadSchemaType.KEYWORD)
                for field in P.FLOAT_FIELDS:
                    client.create_payload_index(name, field, models.PayloadSchemaType.FLOAT)
        if not self.read_only:
            with self._tx() as db:
                db.execute(
                    "CREATE TABLE IF NOT EXISTS qdrant_mirror (collection TEXT NOT NULL, user_id TEXT NOT NULL,"
                    " version INTEGER NOT NULL, PRIMARY KEY (collection, user_id)) WITHOUT ROWID"
                )
        vectors = client.get_collection(name).config.params.vectors
        size = vectors[P.DENSE].size if isinstance(vectors, dict) and P.DENSE in vectors else None
        return size == self.dim

    def close(self) -> None:
        try:
            try:
                self._end_bulk()  # an interrupted copy: local mode's points file syncs again
            finally:
                super().close()
        finally:
            release, self._release = getattr(self, "_release", None), None
            if release is not None:
                release()

    # -- mirroring ---------------------------------------------------------------------
    def _stale_users(self, user_id: str | None = None) -> list[tuple[str, int]]:
        """(user, version) of the users whose points lag behind their rows."""
        try:
            sql = (
                "SELECT v.user_id, v.version FROM user_versions v LEFT JOIN qdrant_mirror m"
                " ON m.collection = ? AND m.user_id = v.user_id WHERE m.version IS NOT v.version"
            )
            if user_id is None:
                return self._db.execute(sql, (self.collection,)).fetchall()
            return self._db.execute(sql + " AND v.user_id = ?", (self.collection, user_id)).fetchall()
        except Exception:  # noqa: BLE001 - a read-only side store made before the mirror table existed
            return []

    # Qdrant follows the side store by the user's version, which a vector set behind leaves alone:
    # its memories are embedded with the row (engram.embed_behind sees no `set_vectors`)
    set_vectors = None

    def _mirror_changed(self, *, whole: bool = False) -> None:
        """Bring every lagging user's points level with their rows (see the module's docstring).
        `whole`: read the stamps of the whole collection in one pass, not user by user (after a
        bulk copy, when every user lags: one filtered scroll per user is a full scan each in
        local mode)."""
        if self.read_only:
            return
        with self._writing():
            stale = self._stale_users()
            known = self._point_stamps(None) if whole and stale else None
            for user_id, version in stale:
                have = self._point_stamps(user_id).get(user_id, {}) if known is None else known.get(user_id, {})
                self._mirror(user_id, version, have)

    def _point_stamps(self, user_id: str | None) -> dict[str, dict[int, str | None]]:
        """user -> point id -> the stamp of the row it was made from; one user's, or everyone's."""
        found: dict[str, dict[int, str | None]] = {}
        offset = None
        while True:
            points, offset = self._client.scroll(
                self.collection, scroll_filter=None if user_id is None else P.user_filter(user_id), limit=1000,
                offset=offset, with_payload=["stamp", "user_id"], with_vectors=False,
            )
            for p in points:
                payload = p.payload or {}
                found.setdefault(payload.get("user_id"), {})[int(p.id)] = payload.get("stamp")
            if offset is None:
                return found

    def _mirror(self, user_id: str, version: int, have: dict[int, str | None]) -> None:
        """`have`: the user's points now, by id, with their stamps."""
        client, name = self._client, self.collection
        rows = {r[0]: r[1:] for r in self._db.execute(
            f"SELECT rowid, {SELECT_ITEM} FROM memories WHERE user_id = ?", (user_id,)
        )}
        stamps = {rowid: _stamp(row) for rowid, row in rows.items()}
        gone = [rowid for rowid in have if rowid not in stamps]
        if gone:
            client.delete(name, points_selector=models.PointIdsList(points=gone), wait=True)
        self._upsert(rows, stamps, [rowid for rowid, stamp in stamps.items() if have.get(rowid) != stamp])
        with self._tx() as db:
            db.execute(
                "INSERT OR REPLACE INTO qdrant_mirror (collection, user_id, version) VALUES (?, ?, ?)",
                (name, user_id, version),
            )

    def _upsert_ids(self, ids: Sequence[str]) -> None:
        """Write the points of these memories as their rows are now (ids no row has: none)."""
        for start in range(0, len(ids), _CHUNK):
            chunk = ids[start : start + _CHUNK]
            rows = {r[0]: r[1:] for r in self._db.execute(
                f"SELECT rowid, {SELECT_ITEM} FROM memories WHERE id IN ({', '.join('?' for _ in chunk)})", chunk
            )}
            self._upsert(rows, {rowid: _stamp(row) for rowid, row in rows.items()}, list(rows))

    def _upsert(self, rows: dict[int, Sequence[Any]], stamps: dict[int, str], rowids: Sequence[int]) -> None:
        """Write the points of these rows (`rows`: rowid -> `SELECT_ITEM` columns): the record,
        the row's own vector, the sparse vector of its stored tokens."""
        for start in range(0, len(rowids), _CHUNK):
            chunk = rowids[start : start + _CHUNK]
            marks = ", ".join("?" for _ in chunk)
            full = self._db.execute(
                "SELECT m.rowid, m.embedding, m.tokens FROM memories m"
                f" WHERE m.rowid IN ({marks})", chunk,
            ).fetchall()
            batch = []
            for rowid, blob, tokens in full:
                item = item_from_row(rows[rowid])
                record = item.model_dump(mode="json")
                record["_created_epoch"] = item.created_at.timestamp()
                vector = None if blob is None or not self._dense else np.frombuffer(blob, dtype=np.float32)
                if vector is not None and len(vector) != self.dim:
                    vector = None
                batch.append(P.point(rowid, stamps[rowid], record, vector, tokens.split()))
            if batch:
                self._client.upsert(self.collection, points=batch, wait=True)

    @contextmanager
    def atomic(self, *, deferred: bool = False) -> Iterator[None]:
        with super().atomic(deferred=deferred):
            yield
        if not self._tx_depth:
            self._after_commit()  # (`QdrantCopyMixin`: the mirror, or a bulk copy's points)

    # -- searching ---------------------------------------------------------------------
    def _mirror_caught_up(self, scope: Scope) -> None:
        """Before a search, outside `_lock` (a write takes the writers' lock first): the user's
        points level with their rows."""
        with self._lock:
            stale = bool(self._stale_users(scope.user_id))
        if stale:
            self._mirror_changed()

    def _query_filter(self, scope: Scope, filters: Filters) -> models.Filter | None:
        """The filter of a search (None: nothing can pass). Status, agent and time run on the
        payload indexes; the rest (kind, layer, session, metadata, as_of…) as permitted ids
        from the side store."""
        statuses = statuses_of(filters)
        window = None
        if filters.since is not None or filters.until is not None:
            window = (to_epoch(filters.since), to_epoch(filters.until))
            filters = filters.model_copy(update={"since": None, "until": None})
        permitted = None
        if not filters.is_default:
            where, params = self._filter_where(scope, filters)
            permitted = [r[0] for r in self._db.execute(f"SELECT rowid FROM memories WHERE {where}", params)]
            if not permitted:
                return None
        return P.scope_filter(scope.user_id, scope.agent_id, statuses, window, permitted)

    def _sparse(
        self, scope: Scope, vector: models.SparseVector, query_filter: models.Filter, limit: int, *,
        with_vectors: Any = False,
    ) -> list[models.ScoredPoint]:
        params = models.SearchParams(idf=models.IdfCorpusParams(corpus=P.user_filter(scope.user_id)))
        if self._idf_per_user:
            try:
                return self._client.query_points(
                    self.collection, query=vector, using=P.LEXICAL, query_filter=query_filter, limit=limit,
                    with_payload=["id"], with_vectors=with_vectors, search_params=params,
                ).points
            except Exception:  # noqa: BLE001 - a server without IDF corpus filters
                if self.target.local_path is not None:
                    raise
                self._idf_per_user = False
        return self._client.query_points(
            self.collection, query=vector, using=P.LEXICAL, query_filter=query_filter, limit=limit,
            with_payload=["id"], with_vectors=with_vectors,
        ).points

    def lexical_search(
        self, scope: Scope, tokens: Sequence[str], filters: Filters, limit: int,
        weights: Sequence[float] | None = None, context_weight: float = 0.0,
    ) -> list[tuple[str, float]]:
        """Sparse search over the user's tokens, idf from the user's own memories."""
        terms = query_terms(tokens)
        if not terms or limit <= 0:
            return []
        self._mirror_caught_up(scope)
        with self._lock:
            query_filter = self._query_filter(scope, filters)
            if query_filter is None:
                return []
            hits = self._sparse(scope, P.query_vector(terms, weights, context_weight), query_filter, limit)
        return [(p.payload["id"], float(p.score)) for p in hits if p.score > 0]

    def dense_search(
        self, scope: Scope, vector: np.ndarray, filters: Filters, limit: int, context_weight: float = 0.0
    ) -> list[tuple[str, float]]:
        """Each point alone: the collection does not keep which turn answers which, so
        `context_weight` (the turns around, `Store.dense_search`) is not applied here."""
        if limit <= 0 or not self._dense:
            return []
        self._mirror_caught_up(scope)
        with self._lock:
            query_filter = self._query_filter(scope, filters)
            if query_filter is None:
                return []
            hits = self._client.query_points(
                self.collection, query=np.asarray(vector, dtype=np.float32).tolist(), using=P.DENSE,
                query_filter=query_filter, limit=limit, with_payload=["id"],
            ).points
        return [(p.payload["id"], float(p.score)) for p in hits]

    def restatements(
        self, scope: Scope, vector: np.ndarray | None, tokens: Sequence[str], filters: Filters, limit: int
    ) -> list[tuple[str, float]]:
        """Cosine among the few memories sharing the most words (a duplicate check); `vector`
        None: those memories, most words shared first."""
        terms = query_terms(tokens)
        if not terms or limit <= 0 or not self._dense:
            return []
        self._mirror_caught_up(scope)
        with self._lock:
            query_filter = self._query_filter(scope, filters)
            if query_filter is None:
                return []
            hits = self._sparse(
                scope, P.query_vector(terms), query_filter, RESTATEMENT_SHORTLIST, with_vectors=[P.DENSE]
            )
        if vector is None:
            return [(p.payload["id"], float(p.score)) for p in hits if p.score > 0][:limit]
        query = np.asarray(vector, dtype=np.float32)
        scored = []
        for p in hits:
            dense = (p.vector or {}).get(P.DENSE) if isinstance(p.vector, dict) else None
            if p.score > 0 and dense is not None:
                v = np.asarray(dense, dtype=np.float32)
                scored.append((p.payload["id"], float(v @ query / (np.linalg.norm(v) * np.linalg.norm(query) or 1.0))))
        return sorted(scored, key=lambda s: -s[1])[:limit]


def _mirrored(method: Callable[..., Any]) -> Callable[..., Any]:
    """A write, then the mirror (unless inside `atomic`: its end mirrors)."""

    @functools.wraps(method)
    def call(self: QdrantStore, *args: Any, **kwargs: Any) -> Any:
        self._end_bulk()  # a write of its own: a bulk copy is over (`QdrantCopyMixin`)
        result = method(self, *args, **kwargs)
        if not self._tx_depth:
            self._mirror_changed()
        return result

    return call


def _translating(method: Callable[..., Any]) -> Callable[..., Any]:
    """Qdrant's errors as engram's (the side store's are translated already)."""

    @functools.wraps(method)
    def call(self: QdrantStore, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except StoreError:
            raise
        except Exception as exc:  # qdrant_client's UnexpectedResponse, ResponseHandlingException, httpx's
            if type(exc).__module__.split(".")[0] in ("qdrant_client", "httpx", "httpcore", "grpc"):
                raise StoreError(f"Qdrant ({self.target.url or self.target.local_path}) failed: {exc}") from None
            raise

    return call


for _name in ("write", "delete", "delete_scope", "transition", "transition_groups", "reset"):
    setattr(QdrantStore, _name, _translating(_mirrored(getattr(SQLiteStore, _name))))
for _name in ("lexical_search", "dense_search", "restatements", "copy_prepare", "copy_in", "copy_finish"):
    setattr(QdrantStore, _name, _translating(getattr(QdrantStore, _name)))


def open_qdrant(url: str, *, dim: int, read_only: bool = False) -> QdrantStore:
    """The store a ``qdrant://`` URL names (see `engram.store.qdrant.target`)."""
    return QdrantStore(parse(url), dim=dim, read_only=read_only)
