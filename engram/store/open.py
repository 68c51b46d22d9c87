"""Open a store from a path or a URL: the one place that knows which backends exist.

- a plain path, or ``sqlite:///absolute/path`` (``sqlite:///:memory:``): the embedded SQLite file;
- ``postgresql://…`` / ``postgres://…`` (any libpq URL, e.g. ``postgresql:///engram?host=/run/pg``):
  PostgreSQL with pgvector (`engram.store.postgres`, the ``postgres`` extra);
- ``qdrant://host:6333`` or ``qdrant:///absolute/path``: Qdrant (`engram.store.qdrant.open_qdrant`).

Backends other than SQLite are imported only when asked for: their drivers are optional.
"""

from __future__ import annotations

from pathlib import Path

from engram.config import redact_url, store_backend
from engram.store.base import Store, StoreError

def backend_of(target: str | Path) -> str:
    """"sqlite", "postgres" or "qdrant" (`StoreError` for an unknown scheme)."""
    try:
        return store_backend(target)
    except ValueError as exc:
        raise StoreError(str(exc)) from None


def sqlite_path(target: str | Path) -> Path | str:
    """The file a SQLite path or ``sqlite:///…`` URL names (``:memory:`` as is)."""
    text = str(target)
    if text.startswith("sqlite://"):
        text = text[len("sqlite://"):]
        if text.startswith("/:memory:") or text == ":memory:":
            return ":memory:"
        if not text.startswith("/"):
            raise StoreError(f"sqlite URL {target!r}: use sqlite:///absolute/path (three slashes)")
    return text if text == ":memory:" else Path(text).expanduser()


def open_store(
    target: str | Path, *, dim: int, read_only: bool = False, index_cache_mb: float | None = None,
) -> Store:
    """The store `target` names, opened for vectors of `dim` dimensions. `index_cache_mb`: the
    memory budget of the per-user search indexes (None: the default; SQLite only for now)."""
    backend = backend_of(target)
    if backend == "postgres":
        try:
            from engram.store.postgres import PostgresStore
        except ImportError as exc:  # psycopg is an extra
            raise StoreError(f"PostgreSQL needs the postgres extra (pip install 'engram[postgres]'): {exc}") from None
        return PostgresStore(str(target), dim=dim, read_only=read_only)
    if backend == "qdrant":
        try:
            from engram.store.qdrant import open_qdrant
        except ImportError as exc:
            raise StoreError(f"Qdrant needs the qdrant extra (pip install 'engram[qdrant]'): {exc}") from None
        return open_qdrant(str(target), dim=dim, read_only=read_only)
    from engram.store.sqlite import SQLiteStore

    budget = {} if index_cache_mb is None else {"index_cache_mb": index_cache_mb}
    return SQLiteStore(sqlite_path(target), dim=dim, read_only=read_only, **budget)


def describe(target: str | Path) -> str:
    """A store's name for messages and progress bars, without a password."""
    return str(sqlite_path(target)) if backend_of(target) == "sqlite" else redact_url(str(target))
