"""The embedded default store: one SQLite file (see `store` for the layout)."""

from engram.store.sqlite.jobs import JobRecord
from engram.store.sqlite.schema import SCHEMA_VERSION
from engram.store.sqlite.store import SQLiteStore

__all__ = ["SCHEMA_VERSION", "JobRecord", "SQLiteStore"]
