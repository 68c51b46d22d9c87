"""`engram migrate --from URL --to URL`: copy a whole store to another backend.

Every table (`engram.store.copy.TABLES`: memories with their vectors and tokens, history,
sessions, turns, per-user state, the job queue, the entity graph) is copied in the source's key order, a batch
per transaction. Each batch commits together with a cursor kept in the target (a
`user_state` row of `CURSOR_USER`), so an interrupted run resumes after the last batch that
landed. Vectors are copied as they are, unless they were made by another embedder than the
configured one, or are still missing (written behind, and the source closed before they were
made): those are embedded on the way. Memories the source still had to link into its entity
graph (`graph_pending`, the same case) are linked in the target, in the order they were
written. The copy is then verified: per table counts, and per user the count and an
order-independent checksum of the memories (id, content, status, times, vector).
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engram.errors import EngramError
from engram.graph import build as graph
from engram.models import utcnow
from engram.providers.embedders import Embedder
from engram.records import text_to_embed
from engram.store.base import Store
from engram.store.copy import TABLES, CopyRows

CURSOR_USER = "engram:migrate"  # the target's user_state row holding the resume cursor
PENDING_LINKS_MAX = 1_000_000_000  # (all of them: a crash leaves one worker batch or so)
Progress = Callable[[int, int, str], None]  # (done, total, what)


class MigrateError(EngramError):
    """The copy cannot start or did not verify."""


@dataclass
class MigrateReport:
    copied: dict[str, int] = field(default_factory=dict)  # rows per table, this run
    reembedded: int = 0  # vectors made on the way (another embedder's, or none yet)
    linked: int = 0  # memories linked into the graph on the way (the source had not yet)
    users: int = 0
    seconds: float = 0.0
    resumed: bool = False

    @property
    def memories_per_s(self) -> float:
        return self.copied.get("memories", 0) / self.seconds if self.seconds else 0.0


def migrate(
    source: Store, target: Store, *, embedder: Embedder | None = None, batch: int = 500,
    progress: Progress | None = None,
) -> MigrateReport:
    """Copy `source` into `target` (empty, or holding an interrupted copy's cursor), then
    verify. `embedder`: vectors another embedder made are re-embedded with it."""
    src, dst = _copyable(source), _copyable(target)
    cursor = _cursor(target)
    if cursor is None and any(dst.copy_count(t.name) for t in TABLES if t.name != "user_state"):
        raise MigrateError("the target store is not empty (and holds no interrupted copy to resume)")
    report = MigrateReport(resumed=cursor is not None)
    cursor = cursor or {"done": [], "table": None, "after": None}
    total = sum(src.copy_count(t.name) for t in TABLES)
    done = sum(dst.copy_count(t.name) for t in TABLES) - (1 if report.resumed else 0)
    started = time.perf_counter()
    getattr(dst, "copy_prepare", lambda: None)()  # e.g. PostgreSQL: its HNSW index is built once, after
    for table in TABLES:
        if table.name in cursor["done"]:
            continue
        after = cursor["after"] if cursor["table"] == table.name else None
        copied = 0
        while True:
            page = src.copy_out(table.name, after, batch)
            if not page:
                break
            rows = [row for _, row in page if table.name != "user_state" or row["user_id"] != CURSOR_USER]
            if table.name == "memories" and embedder is not None:
                report.reembedded += _reembed(rows, embedder)
            after = list(page[-1][0])
            with target.atomic():  # the batch and the cursor after it: both or neither
                dst.copy_in(table.name, rows)
                _save_cursor(target, {"done": cursor["done"], "table": table.name, "after": after})
            copied += len(rows)
            done += len(rows)
            if progress is not None:
                progress(done, total, f"copying {table.name}")
            if len(page) < batch:
                break
        cursor["done"].append(table.name)
        _save_cursor(target, {"done": cursor["done"], "table": None, "after": None})
        report.copied[table.name] = copied
    report.linked = _link_pending(source, target, cursor)
    getattr(dst, "copy_finish", lambda: None)()
    report.seconds = time.perf_counter() - started
    report.users = verify(source, target, vectors=not report.reembedded)
    target.set_state(CURSOR_USER, "cursor", None, utcnow())  # finished: nothing to resume
    return report


def _copyable(store: Store) -> CopyRows:
    if not all(hasattr(store, name) for name in ("copy_out", "copy_in", "copy_count")):
        raise MigrateError(f"{type(store).__name__} cannot copy whole tables (no copy_out/copy_in)")
    return store  # type: ignore[return-value]


def _cursor(target: Store) -> dict[str, Any] | None:
    text = target.get_state(CURSOR_USER, "cursor")
    return None if text is None else json.loads(text)


def _save_cursor(target: Store, cursor: dict[str, Any]) -> None:
    target.set_state(CURSOR_USER, "cursor", json.dumps(cursor), utcnow())


def _reembed(rows: list[dict[str, Any]], embedder: Embedder) -> int:
    """Embed, in place, the rows whose vector another embedder made or that have none yet;
    returns how many."""
    stale = [
        row for row in rows
        if row["embedding"] is None or len(row["embedding"]) != embedder.dim or row["embedding_model"] != embedder.name
    ]
    if stale:
        vectors = embedder.embed([text_to_embed(row["kind"], row["content"], row["metadata"]) for row in stale])
        for row, vector in zip(stale, vectors, strict=True):
            row["embedding"], row["embedding_model"] = np.asarray(vector, dtype=np.float32), embedder.name
    return len(stale)


def _link_pending(source: Store, target: Store, cursor: dict[str, Any]) -> int:
    """Link in the target, in one transaction and in the order they were written, the memories
    the source still had to link (`Store.deferred_links`); returns how many. Done once: the
    cursor records it, so a resumed copy does not link them twice."""
    if "links" in cursor["done"] or not callable(getattr(source, "deferred_links", None)):
        return 0
    noted = [memory_id for memory_id, _ in source.deferred_links(PENDING_LINKS_MAX)]  # type: ignore[attr-defined]
    found = {m.id: m for m in target.get_many(noted)}
    items = [found[i] for i in noted if i in found]
    with target.atomic():
        graph.link(target, items)
        cursor["done"].append("links")
        _save_cursor(target, {"done": cursor["done"], "table": None, "after": None})
    return len(items)


def checksums(store: Store, *, vectors: bool = True, batch: int = 2000) -> dict[str, tuple[int, int]]:
    """Per user: (memories, checksum), the checksum a sum of per-row hashes (any row order);
    `vectors`: the vectors and their model count too (not after a re-embedding)."""
    found: dict[str, list[int]] = {}
    copy, after = _copyable(store), None
    while rows := copy.copy_out("memories", after, batch):
        for _, row in rows:
            digest = hashlib.blake2b(digest_size=8)
            for column in ("id", "content", "status", "kind", "key", "created_at", "updated_at", "metadata"):
                value = json.dumps(json.loads(row[column]), sort_keys=True) if column == "metadata" else row[column]
                digest.update(repr(value).encode("utf-8", "surrogatepass") + b"\x1f")
            if vectors and row["embedding"] is not None:
                digest.update(str(row["embedding_model"]).encode("utf-8"))
                digest.update(np.round(np.asarray(row["embedding"], dtype=np.float64), 5).tobytes())
            entry = found.setdefault(row["user_id"], [0, 0])
            entry[0] += 1
            entry[1] = (entry[1] + int.from_bytes(digest.digest(), "big")) % 2**64
        after = list(rows[-1][0])
    return {user: (n, total) for user, (n, total) in found.items()}


def verify(source: Store, target: Store, *, vectors: bool = True) -> int:
    """Same row count in every table and the same memories per user; returns the users checked.
    The graph's tables are not counted when the source had memories still to link (the copy
    linked them: `_link_pending`)."""
    src, dst = _copyable(source), _copyable(target)
    unlinked = callable(getattr(source, "deferred_links", None)) and bool(source.deferred_links(1))  # type: ignore[attr-defined]
    for table in TABLES:
        if unlinked and table.name.startswith("graph_"):
            continue
        want, got = src.copy_count(table.name), dst.copy_count(table.name)
        if table.name == "user_state":
            want -= 1 if source.get_state(CURSOR_USER, "cursor") is not None else 0
            got -= 1 if target.get_state(CURSOR_USER, "cursor") is not None else 0
        if want != got:
            raise MigrateError(f"{table.name}: {want} rows in the source, {got} in the target")
    mine, theirs = checksums(source, vectors=vectors), checksums(target, vectors=vectors)
    if mine != theirs:
        users = sorted(u for u in set(mine) | set(theirs) if mine.get(u) != theirs.get(u))
        raise MigrateError(f"the memories of {len(users)} user(s) differ after the copy, e.g. {users[0]!r}")
    return len(mine)
