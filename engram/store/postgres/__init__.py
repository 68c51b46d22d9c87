"""The PostgreSQL + pgvector store (the ``postgres`` extra): several engram processes, on
several machines, sharing one database (see `store` for the layout)."""

from engram.store.postgres.schema import SCHEMA_VERSION
from engram.store.postgres.store import PostgresStore

__all__ = ["SCHEMA_VERSION", "PostgresStore"]
