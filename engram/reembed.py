"""Vectors made by another embedder: detected when a store is opened, replaced by `reembed`.

A store keeps the vectors of the embedder that wrote it (``embedding_model`` per memory).
Opened with a different one (another model, or a 64-d endpoint against 256-d wordllama),
search would compare incompatible vectors; `check` stops that with a message that says what
to do, and `reembed` (``engram reembed``) re-embeds every memory in place, in batches, each
its own transaction: interrupted, it resumes where it stopped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from engram.errors import EngramError
from engram.providers.embedders import Embedder, WordLlamaEmbedder, make_embedder
from engram.records import embed_records, make_record
from engram.store.base import Store

Progress = Callable[[int, int], None]  # (done, total)
log = logging.getLogger("engram")


class EmbedderMismatch(EngramError):
    """The store's vectors were made by another embedder than the configured one."""


def the_store_s_own(store: Store, settings: Any) -> Embedder | None:
    """The built-in embedder a store was made with, when the configuration names none and
    the default is another: a store from before the default changed (wordllama, 256-d) opens
    with its own embedder, searchable as before, instead of refusing to open; `engram reembed
    --embedder use` moves it to the new default when the user wants."""
    if "embedder" in settings.model_fields_set or settings.embedder != "use":
        return None  # chosen by the user: `check` says what to do on a mismatch
    makers = getattr(store, "vector_makers", lambda: set())()
    wordllama = WordLlamaEmbedder.name_for(settings.embedding_dim)
    if makers and all(model == wordllama and dim == settings.embedding_dim for model, dim in makers):
        log.warning("%s holds wordllama vectors: searching with wordllama (run `engram reembed` for the "
                    "multilingual default)", getattr(store, "path", "the store"))
        return WordLlamaEmbedder(settings.embedding_dim)
    return None


def opened(settings: Any, store: Store | str | None, embedder: Embedder | None) -> tuple[Store, Embedder]:
    """The store `Memory` works on and the embedder for it: the given ones, else the configured
    ones, except that a store made with wordllama keeps it while the configuration names no
    embedder (`the_store_s_own`)."""
    from engram.store.open import open_store

    chosen = embedder or make_embedder(settings)
    if store is not None and not isinstance(store, str):
        return store, chosen

    def open_for(e: Embedder) -> Store:
        return open_store(store or settings.store_target, dim=e.dim, read_only=settings.read_only,
                          index_cache_mb=settings.index_cache_mb)

    made = open_for(chosen)
    own = the_store_s_own(made, settings) if embedder is None else None
    if own is None:
        return made, chosen
    made.close()
    return open_for(own), own


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
