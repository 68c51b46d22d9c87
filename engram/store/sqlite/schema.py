"""The SQLite schema: numbered migrations, applied in order on open (PRAGMA user_version)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

from engram.store.sqlite.graph import GRAPH_PENDING_SCHEMA, GRAPH_SCHEMA

SCHEMA_VERSION = 10

MIGRATIONS: dict[int, str] = {
    1: """
    CREATE TABLE memories (
        rowid INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        user_id TEXT NOT NULL,
        agent_id TEXT,
        session_id TEXT,
        content TEXT NOT NULL,
        kind TEXT NOT NULL,
        layer TEXT NOT NULL,
        status TEXT NOT NULL,
        language TEXT NOT NULL,
        key TEXT,
        value TEXT,
        importance REAL NOT NULL,
        confidence REAL NOT NULL,
        strength REAL NOT NULL,
        access_count INTEGER NOT NULL DEFAULT 0,
        last_accessed REAL,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        valid_from REAL,
        valid_to REAL,
        source TEXT NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{}',
        entities TEXT NOT NULL DEFAULT '[]',
        tags TEXT NOT NULL DEFAULT '[]',
        due_at REAL,
        recurrence TEXT,
        supersedes TEXT,
        superseded_by TEXT,
        sources TEXT NOT NULL DEFAULT '[]',
        embedding_model TEXT,
        content_hash TEXT NOT NULL,
        idempotency_key TEXT,
        embedding BLOB
    );
    CREATE INDEX memories_scope ON memories(user_id, agent_id, status);
    CREATE INDEX memories_key ON memories(user_id, key) WHERE key IS NOT NULL;
    CREATE INDEX memories_hash ON memories(user_id, content_hash);
    CREATE INDEX memories_created ON memories(user_id, created_at);
    CREATE INDEX memories_idem ON memories(user_id, idempotency_key)
        WHERE idempotency_key IS NOT NULL;
    CREATE TABLE history (
        id INTEGER PRIMARY KEY,
        memory_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        action TEXT NOT NULL,
        old_content TEXT,
        new_content TEXT,
        reason TEXT NOT NULL DEFAULT '',
        created_at REAL NOT NULL
    );
    CREATE INDEX history_memory ON history(memory_id);
    CREATE INDEX history_user ON history(user_id);
    CREATE VIRTUAL TABLE memories_fts USING fts5(
        tokens, scope, tokenize = "unicode61 remove_diacritics 0 tokenchars '.:_'"
    );
    """,
    # 2: sessions (open/ended, last activity, delta), their recent turns (working
    # memory survives a restart), and a per-user version that triggers bump on
    # every change of a memory's content or state, so caches built from a user's
    # memories (the capsule) notice writes from any path and any process. The
    # UPDATE trigger names the columns it watches: access bookkeeping
    # (access_count, last_accessed) does not invalidate.
    2: """
    CREATE TABLE sessions (
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        agent_id TEXT,
        started_at REAL NOT NULL,
        last_active REAL NOT NULL,
        ended_at REAL,
        end_reason TEXT,
        compressed_at REAL,
        summary_id TEXT,
        PRIMARY KEY (user_id, session_id)
    ) WITHOUT ROWID;
    CREATE INDEX sessions_open ON sessions(user_id, last_active) WHERE ended_at IS NULL;
    CREATE TABLE session_turns (
        id INTEGER PRIMARY KEY,
        user_id TEXT NOT NULL,
        session_id TEXT NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        tokens INTEGER NOT NULL,
        created_at REAL NOT NULL
    );
    CREATE INDEX session_turns_session ON session_turns(user_id, session_id, id);
    CREATE TABLE user_versions (
        user_id TEXT PRIMARY KEY,
        version INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TRIGGER memories_version_insert AFTER INSERT ON memories BEGIN
        INSERT INTO user_versions (user_id, version) VALUES (NEW.user_id, 1)
        ON CONFLICT (user_id) DO UPDATE SET version = version + 1;
    END;
    CREATE TRIGGER memories_version_delete AFTER DELETE ON memories BEGIN
        INSERT INTO user_versions (user_id, version) VALUES (OLD.user_id, 1)
        ON CONFLICT (user_id) DO UPDATE SET version = version + 1;
    END;
    CREATE TRIGGER memories_version_update AFTER UPDATE OF
        user_id, agent_id, content, kind, layer, status, key, value, importance, confidence,
        strength, created_at, updated_at, valid_from, valid_to, metadata, supersedes,
        superseded_by, sources
    ON memories BEGIN
        INSERT INTO user_versions (user_id, version) VALUES (NEW.user_id, 1)
        ON CONFLICT (user_id) DO UPDATE SET version = version + 1;
    END;
    """,
    # 3: lifecycle and user control. `related_id` names the other memory a history
    # row concerns (its content may appear there), so deleting that memory scrubs
    # the row too; `user_state` holds per-user switches (memory paused) and
    # maintenance watermarks.
    3: """
    ALTER TABLE history ADD COLUMN related_id TEXT;
    CREATE INDEX history_related ON history(related_id) WHERE related_id IS NOT NULL;
    CREATE TABLE user_state (
        user_id TEXT NOT NULL,
        name TEXT NOT NULL,
        value TEXT NOT NULL,
        updated_at REAL NOT NULL,
        PRIMARY KEY (user_id, name)
    ) WITHOUT ROWID;
    CREATE INDEX memories_status_kind ON memories(user_id, status, kind);
    """,
    # 4: the durable background queue (engram.queue). A row is a job: `add` (a
    # whole `Memory.add` run off the reply path), `turn` (a turn waiting for
    # batched LLM extraction, state `waiting`) or `batch` (those turns taken
    # together). Finished jobs are deleted (their payload holds the user's words);
    # a `running` job whose worker died is queued again.
    4: """
    CREATE TABLE jobs (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        user_id TEXT NOT NULL,
        agent_id TEXT,
        session_id TEXT,
        payload TEXT NOT NULL,
        state TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        error TEXT,
        created_at REAL NOT NULL,
        run_after REAL NOT NULL DEFAULT 0,
        claimed_by TEXT,
        claimed_at REAL
    );
    CREATE INDEX jobs_state ON jobs(state, id);
    CREATE INDEX jobs_user ON jobs(user_id, state);
    """,
    # 5: memories_scope (user_id, agent_id, status) served no query the store makes
    # (memories_status_kind and memories_created cover them, EXPLAIN QUERY PLAN over
    # every statement of the test suite), yet every insert and status change paid for it.
    5: """
    DROP INDEX IF EXISTS memories_scope;
    """,
    # 6: the REST server's API keys (engram.service.keys): only a hash of each secret is
    # kept; `user_id` NULL with `admin` 1 is a key for every user. `service_secrets` holds
    # what every worker process of one server must share (the web session signing key).
    6: """
    CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        secret_hash TEXT NOT NULL,
        user_id TEXT,
        admin INTEGER NOT NULL DEFAULT 0,
        name TEXT,
        created_at REAL NOT NULL,
        revoked_at REAL
    ) WITHOUT ROWID;
    CREATE TABLE service_secrets (
        name TEXT PRIMARY KEY,
        value TEXT NOT NULL
    ) WITHOUT ROWID;
    """,
    # 7: the entity graph (engram.graph): entities, aliases, mentions, edges, their trace,
    # and the triggers that keep it consistent with deletions (engram.store.sqlite.graph)
    7: GRAPH_SCHEMA,
    # 8: each user's search index packed in one row (engram.store.scope_pack), so a cold
    # user's first search reads one blob instead of every memory. A cache: written after a
    # full load, checked against user_versions, patched when stale. Deleting a memory, or
    # changing its text or vector, drops the pack at once (it holds tokens and vectors).
    8: """
    CREATE TABLE scope_packs (
        user_id TEXT PRIMARY KEY,
        version INTEGER NOT NULL,
        data BLOB NOT NULL
    );
    CREATE TRIGGER scope_packs_delete AFTER DELETE ON memories BEGIN
        DELETE FROM scope_packs WHERE user_id = OLD.user_id;
    END;
    CREATE TRIGGER scope_packs_rewrite AFTER UPDATE OF
        content_hash, embedding, user_id, agent_id, kind, session_id, created_at
    ON memories WHEN OLD.content_hash IS NOT NEW.content_hash
        OR (OLD.embedding IS NOT NULL AND OLD.embedding IS NOT NEW.embedding)
        OR OLD.user_id IS NOT NEW.user_id OR OLD.agent_id IS NOT NEW.agent_id OR OLD.kind IS NOT NEW.kind
        OR OLD.session_id IS NOT NEW.session_id OR OLD.created_at IS NOT NEW.created_at
    BEGIN
        DELETE FROM scope_packs WHERE user_id IN (OLD.user_id, NEW.user_id);
    END;
    """,
    # 9: a memory's lexical tokens in a column of its own row, not an FTS5 table beside it.
    # Ranking never asked FTS5 anything (the per-user index ranks), yet every add paid for
    # its four b-trees, their segment merges, and the WAL frames they dirtied (~15 % of an
    # add's pages); a deletion no longer needs an FTS merge to drop stale postings.
    9: """
    ALTER TABLE memories ADD COLUMN tokens TEXT NOT NULL DEFAULT '';
    UPDATE memories SET tokens = coalesce((SELECT f.tokens FROM memories_fts f WHERE f.rowid = memories.rowid), '');
    DROP TABLE memories_fts;
    """,
    # 10: memories whose graph links are still to be made (written behind, engram.embed_behind):
    # the worker links them and clears the row; a crash leaves the row for the next open
    10: GRAPH_PENDING_SCHEMA,
}


def statements(script: str) -> Iterator[str]:
    """Split a migration into statements; a trigger body's ';' does not end one."""
    buffer = ""
    for piece in script.split(";"):
        buffer += piece + ";"
        if sqlite3.complete_statement(buffer):
            if buffer.strip(" \t\n;"):
                yield buffer
            buffer = ""
    if buffer.strip(" \t\n;"):
        yield buffer
