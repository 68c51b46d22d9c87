"""Vectors made by another embedder: detected when a store is opened, replaced by `reembed`.

A store keeps the vectors of the embedder that wrote it (``embedding_model`` per memory).
Opened with a different one (another model, or a 64-d endpoint against 256-d wordllama),
search would compare incompatible vectors; `check` stops that with a message that says what
to do, and `reembed` (``engram reembed``) re-embeds every memory in place, in batches, each
its own transaction: interrupted, it resumes where it stopped.
"""

from __future__ import annotations

from collections.abc import Callable

from engram.errors import EngramError
from engram.providers.embedders import Embedder
from engram.records import embed_records, make_record
from engram.store.base import Store

Progress = Callable[[int, int], None]  # (done, total)


class EmbedderMismatch(EngramError):
    """The store's vectors were made by another embedder than the configured one."""


def check(store: Store, embedder: Embedder, where: object) -> None:
    """Raise `EmbedderMismatch` when the store holds another embedder's vectors."""
    makers = getattr(store, "vector_makers", lambda: set())()
    foreign = {(model, dim) for model, dim in makers if dim != embedder.dim or model != embedder.name}
    if foreign:
        model, dim = sorted(foreign, key=str)[0]
        raise EmbedderMismatch(
            f"{where} holds {dim}-d vectors from {model or 'another embedder'}, but the configured embedder "
            f"is {embedder.name} ({embedder.dim}-d): run `engram reembed` to re-embed the store with it "
            "(resumable), or configure the embedder the store was made with"
        )


def reembed(store: Store, embedder: Embedder, *, batch: int = 256, progress: Progress | None = None) -> int:
    """Re-embed every memory whose vector another embedder made; returns how many."""
    total = store.count_stale_vectors(embedder.name, embedder.dim)
    done = 0
    while True:
        ids = store.stale_vectors(embedder.name, embedder.dim, batch)
        if not ids:
            return done
        records = [make_record(item) for item in store.get_many(ids)]
        embed_records(embedder, records)
        store.write(updates=records)
        done += len(records)
        if progress is not None:
            progress(done, total)
