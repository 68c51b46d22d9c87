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

from engram.store.postgres.graph import GRAPH_MIGRATION, GRAPH_NAMES_MIGRATION, GRAPH_READS_MIGRATION
from engram.store.postgres.search import HNSW_ABOVE, HNSW_MIN_SHARE

SCHEMA_VERSION = 7
MIGRATION_LOCK = 0x656E6772616D  # pg_advisory_xact_lock key of schema changes ("engram")

# Keeping every row in the HNSW index made bulk ingest slow (258 rows/s into a 20k-row table,
# 16,000/s without the index, measured with random vectors), yet HNSW only serves users of more
# than `HNSW_ABOVE` rows that are at least `HNSW_MIN_SHARE` of the table
# (engram.store.postgres.search): at 1M rows over 1,000 users no user's search uses it. So the
# index holds the rows flagged ``hnsw``: a trigger flags a new row of a user in ``hnsw_users``,
# and a user joins it (their rows flagged then) when a write takes them over both bounds
# (`SearchMixin._count_rows`). ``user_versions.row_count`` counts each user's rows, kept by the
# writes, so that decision costs no count.
RECOUNT = (
    "INSERT INTO user_versions (user_id, version, row_count) SELECT user_id, 1, count(*) FROM memories GROUP BY user_id"
    " ON CONFLICT (user_id) DO UPDATE SET row_count = excluded.row_count"
)
PROMOTE_ALL = (
    "INSERT INTO hnsw_users SELECT user_id FROM user_versions WHERE row_count > %(above)s"
    " AND row_count >= %(share)s * (SELECT count(*) FROM memories) ON CONFLICT DO NOTHING"
)
FLAG_ALL = "UPDATE memories SET hnsw = true WHERE NOT hnsw AND user_id IN (SELECT user_id FROM hnsw_users)"
HNSW_MIGRATION: tuple[str, ...] = (
    "ALTER TABLE memories ADD COLUMN hnsw boolean NOT NULL DEFAULT false",
    "ALTER TABLE user_versions ADD COLUMN row_count bigint NOT NULL DEFAULT 0",
    "CREATE TABLE hnsw_users (user_id text PRIMARY KEY)",
    """CREATE FUNCTION memories_hnsw_flag() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        NEW.hnsw := EXISTS (SELECT 1 FROM hnsw_users WHERE user_id = NEW.user_id);
        RETURN NEW;
    END $$""",
    """CREATE TRIGGER memories_hnsw_flag BEFORE INSERT ON memories
    FOR EACH ROW EXECUTE FUNCTION memories_hnsw_flag()""",
    # the whole-table HNSW indexes of schema 1-3 (`hnsw_index` makes the partial one after)
    """DO $$ DECLARE r record;
    BEGIN
        FOR r IN SELECT indexname FROM pg_indexes WHERE schemaname = current_schema()
            AND tablename = 'memories' AND indexname LIKE 'memories_hnsw_%' LOOP
            EXECUTE format('DROP INDEX %I', r.indexname);
        END LOOP;
    END $$""",
    RECOUNT,
    PROMOTE_ALL % {"above": HNSW_ABOVE, "share": HNSW_MIN_SHARE},
    FLAG_ALL,
)

# Each user's search index packed in one row (engram.store.scope_pack), so a user's first search
# after a start reads one value instead of every memory of theirs (`SearchMixin._unpacked`). A
# cache, written after a full load at the user's version and caught up with rows added and
# statuses changed since. Deleting a memory, or changing what the index holds of it (its text,
# tokens, vector, agent, kind, session, time; a turn's metadata), drops the pack in the same transaction.
# The trigger first locks the user's version row: a pack being written holds it (FOR SHARE) and
# so lands before the drop, or finds the version moved and is not written.
PACK_MIGRATION: tuple[str, ...] = (
    "CREATE TABLE scope_packs (user_id text PRIMARY KEY, version bigint NOT NULL, data bytea NOT NULL)",
    # already compact: no compression on write nor on every read
    "ALTER TABLE scope_packs ALTER COLUMN data SET STORAGE EXTERNAL",
    """CREATE FUNCTION scope_packs_drop(users text[]) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM 1 FROM user_versions WHERE user_id = ANY(users) ORDER BY user_id FOR NO KEY UPDATE;
        DELETE FROM scope_packs WHERE user_id = ANY(users);
    END $$""",
    """CREATE FUNCTION scope_packs_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM scope_packs_drop(ARRAY(SELECT DISTINCT user_id FROM gone));
        RETURN NULL;
    END $$""",
    """CREATE TRIGGER scope_packs_delete AFTER DELETE ON memories REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION scope_packs_deleted()""",
    """CREATE FUNCTION scope_packs_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM scope_packs_drop(ARRAY[OLD.user_id, NEW.user_id]);
        RETURN NULL;
    END $$""",
    """CREATE TRIGGER scope_packs_rewrite AFTER UPDATE ON memories FOR EACH ROW
    WHEN (OLD.content_hash IS DISTINCT FROM NEW.content_hash OR OLD.tokens IS DISTINCT FROM NEW.tokens
        OR OLD.embedding IS DISTINCT FROM NEW.embedding
        OR OLD.id IS DISTINCT FROM NEW.id OR OLD.user_id IS DISTINCT FROM NEW.user_id
        OR OLD.agent_id IS DISTINCT FROM NEW.agent_id OR OLD.kind IS DISTINCT FROM NEW.kind
        OR OLD.session_id IS DISTINCT FROM NEW.session_id OR OLD.created_at IS DISTINCT FROM NEW.created_at
        OR (NEW.kind = 'turn' AND OLD.metadata IS DISTINCT FROM NEW.metadata))
    EXECUTE FUNCTION scope_packs_changed()""",
)

MIGRATIONS: dict[int, str | tuple[str, ...]] = {
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
    # 3: the entity graph (as SQLite's migration 7: tables and the triggers that keep it consistent)
    3: GRAPH_MIGRATION,
    # 4: only the rows of big users in the HNSW index (see `HNSW_MIGRATION`)
    4: HNSW_MIGRATION,
    # 5: each user's search index packed in one row (see `PACK_MIGRATION`)
    5: PACK_MIGRATION,
    # 6: a search's reads of the graph's mentions from the index alone (see `GRAPH_READS_MIGRATION`)
    6: GRAPH_READS_MIGRATION,
    # 7: a search's first read of the graph, the user's names, from the indexes alone (see `GRAPH_NAMES_MIGRATION`)
    7: GRAPH_NAMES_MIGRATION,
}


def statements(script: str | tuple[str, ...]) -> list[str]:
    """A migration's statements: a script whose statements hold no ';' of their own, or the
    statements themselves (function bodies hold several)."""
    if not isinstance(script, str):
        return list(script)
    return [s.strip() for s in script.split(";") if s.strip()]


def hnsw_index(dim: int) -> str:
    """The HNSW index of `dim`-dimensional vectors (an expression index: the column takes any
    dimension); a query uses it by ordering on ``embedding::vector(dim) <=> q`` with
    ``vector_dims(embedding) = dim AND hnsw`` (the rows of big users: `HNSW_MIGRATION`)."""
    return (
        f"CREATE INDEX IF NOT EXISTS memories_hnsw_{dim} ON memories USING hnsw"
        f" ((embedding::vector({dim})) vector_cosine_ops) WHERE vector_dims(embedding) = {dim} AND hnsw"
    )
