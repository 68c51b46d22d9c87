"""The PostgreSQL schema: numbered migrations, applied in order on open under an advisory
lock (several processes may open a new database at once); the version is in `engram_schema`.

Times are POSIX seconds (double precision) as in the SQLite store, so rows convert the same
way on both (`engram.store.sqlite.rows`); JSON fields are jsonb; the vector is pgvector's
`vector` without a fixed dimension (a store may hold another embedder's vectors until
`engram reembed`), indexed by HNSW per dimension through an expression index
(`hnsw_index`); the lexical tokens are engram's own, space-separated (ranked in memory,
per user, by `engram.store.scope_index`).
"""

from __future__ import annotations

SCHEMA_VERSION = 2
MIGRATION_LOCK = 0x656E6772616D  # pg_advisory_xact_lock key of schema changes ("engram")

MIGRATIONS: dict[int, str] = {
    1: """
    CREATE EXTENSION IF NOT EXISTS vector;
    CREATE TABLE memories (
        rowid bigserial PRIMARY KEY,
        id text NOT NULL UNIQUE,
        user_id text NOT NULL,
        agent_id text,
        session_id text,
        content text NOT NULL,
        kind text NOT NULL,
        layer text NOT NULL,
        status text NOT NULL,
        language text NOT NULL,
        key text,
        value text,
        importance double precision NOT NULL,
        confidence double precision NOT NULL,
        strength double precision NOT NULL,
        access_count integer NOT NULL DEFAULT 0,
        last_accessed double precision,
        created_at double precision NOT NULL,
        updated_at double precision NOT NULL,
        valid_from double precision,
        valid_to double precision,
        source text NOT NULL,
        metadata jsonb NOT NULL DEFAULT '{}',
        entities jsonb NOT NULL DEFAULT '[]',
        tags jsonb NOT NULL DEFAULT '[]',
        due_at double precision,
        recurrence text,
        supersedes text,
        superseded_by text,
        sources jsonb NOT NULL DEFAULT '[]',
        embedding_model text,
        content_hash text NOT NULL,
        idempotency_key text,
        embedding vector,
        tokens text NOT NULL DEFAULT ''
    ) WITH (fillfactor = 90);
    CREATE INDEX memories_created ON memories(user_id, created_at);
    CREATE INDEX memories_status_kind ON memories(user_id, status, kind);
    CREATE INDEX memories_key ON memories(user_id, key) WHERE key IS NOT NULL;
    CREATE INDEX memories_hash ON memories(user_id, content_hash);
    CREATE INDEX memories_idem ON memories(user_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
    CREATE TABLE history (
        id bigserial PRIMARY KEY,
        memory_id text NOT NULL,
        user_id text NOT NULL,
        action text NOT NULL,
        old_content text,
        new_content text,
        reason text NOT NULL DEFAULT '',
        created_at double precision NOT NULL,
        related_id text
    );
    CREATE INDEX history_memory ON history(memory_id);
    CREATE INDEX history_user ON history(user_id);
    CREATE INDEX history_related ON history(related_id) WHERE related_id IS NOT NULL;
    CREATE TABLE user_versions (
        user_id text PRIMARY KEY,
        version bigint NOT NULL
    );
    CREATE TABLE user_state (
        user_id text NOT NULL,
        name text NOT NULL,
        value text NOT NULL,
        updated_at double precision NOT NULL,
        PRIMARY KEY (user_id, name)
    );
    CREATE TABLE sessions (
        user_id text NOT NULL,
        session_id text NOT NULL,
        agent_id text,
        started_at double precision NOT NULL,
        last_active double precision NOT NULL,
        ended_at double precision,
        end_reason text,
        compressed_at double precision,
        summary_id text,
        PRIMARY KEY (user_id, session_id)
    );
    CREATE INDEX sessions_open ON sessions(user_id, last_active) WHERE ended_at IS NULL;
    CREATE TABLE session_turns (
        id bigserial PRIMARY KEY,
        user_id text NOT NULL,
        session_id text NOT NULL,
        role text NOT NULL,
        content text NOT NULL,
        tokens integer NOT NULL,
        created_at double precision NOT NULL
    );
    CREATE INDEX session_turns_session ON session_turns(user_id, session_id, id);
    CREATE TABLE jobs (
        id bigserial PRIMARY KEY,
        kind text NOT NULL,
        user_id text NOT NULL,
        agent_id text,
        session_id text,
        payload text NOT NULL,
        state text NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        error text,
        created_at double precision NOT NULL,
        run_after double precision NOT NULL DEFAULT 0,
        claimed_by text,
        claimed_at double precision
    );
    CREATE INDEX jobs_state ON jobs(state, id);
    CREATE INDEX jobs_user ON jobs(user_id, state);
    """,
    # 2: the REST server's API keys and shared secrets (as SQLite's migration 6)
    2: """
    CREATE TABLE api_keys (
        id text PRIMARY KEY,
        secret_hash text NOT NULL,
        user_id text,
        admin integer NOT NULL DEFAULT 0,
        name text,
        created_at double precision NOT NULL,
        revoked_at double precision
    );
    CREATE TABLE service_secrets (
        name text PRIMARY KEY,
        value text NOT NULL
    );
    """,
}


def statements(script: str) -> list[str]:
    """A migration's statements (none of them holds a ';' of its own)."""
    return [s.strip() for s in script.split(";") if s.strip()]


def hnsw_index(dim: int) -> str:
    """The HNSW index of `dim`-dimensional vectors (an expression index: the column takes any
    dimension); a query uses it by ordering on ``embedding::vector(dim) <=> q`` with
    ``vector_dims(embedding) = dim``."""
    return (
        f"CREATE INDEX IF NOT EXISTS memories_hnsw_{dim} ON memories USING hnsw"
        f" ((embedding::vector({dim})) vector_cosine_ops) WHERE vector_dims(embedding) = {dim}"
    )
