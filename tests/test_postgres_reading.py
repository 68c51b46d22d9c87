"""PostgreSQL reads a user's version once per search (`PostgresStore.reading`), not once per
store call: a round trip each. Nothing goes stale for it: what another process wrote shows in
the next search, and a write of the searching thread shows in the reads after it."""

from __future__ import annotations

import pytest
from test_postgres import url  # noqa: F401 - a fixture: a fresh schema on the test run's server

from engram import Memory
from engram.store.postgres.store import PostgresStore


def opened(target: str, embedder) -> Memory:
    return Memory(store=target, embedder=embedder, reinforce=False)


@pytest.fixture
def version_reads(monkeypatch) -> list[str]:
    """The users whose version was read from the database, in order."""
    reads: list[str] = []
    real = PostgresStore.user_version

    def counting(self, user_id: str) -> int:
        reads.append(user_id)
        return real(self, user_id)

    monkeypatch.setattr(PostgresStore, "user_version", counting)
    return reads


def test_a_search_reads_the_users_version_once(url, embedder, version_reads):  # noqa: F811
    with opened(url, embedder) as memory:
        for text in ["I drink green tea every evening", "My sister Anna is a nurse", "Anna lives in Porto"]:
            memory.add(text, user_id="alice", infer=False)
        memory.search("where does Anna live?", user_id="alice")  # the index loaded
        version_reads.clear()
        hits = memory.search("what does my sister do?", user_id="alice")
        assert "nurse" in hits[0].memory.content
        assert version_reads == ["alice"]


def test_what_another_process_wrote_shows_in_the_next_search(url, embedder):  # noqa: F811
    with opened(url, embedder) as here, opened(url, embedder) as there:
        here.add("I drink green tea every evening", user_id="alice", infer=False)
        assert [h.memory.content for h in here.search("which tea?", user_id="alice")] == ["I drink green tea every evening"]
        there.add("My favourite tea is a smoky lapsang souchong", user_id="alice", infer=False)
        assert "My favourite tea is a smoky lapsang souchong" in [
            h.memory.content for h in here.search("which tea?", user_id="alice")]


def test_a_write_inside_one_reading_shows_in_the_reads_after_it(url, embedder):  # noqa: F811
    with opened(url, embedder) as memory:
        memory.add("I drink green tea every evening", user_id="alice", infer=False)
        with memory.store.reading():
            assert len(memory.search("which tea?", user_id="alice")) == 1
            memory.add("My favourite tea is a smoky lapsang souchong", user_id="alice", infer=False)
            assert len(memory.search("which tea?", user_id="alice")) == 2


def test_a_repeated_question_reads_the_graph_around_its_names_once(url, embedder, monkeypatch):  # noqa: F811
    from engram.store import graph_sql

    reads: list[list[str]] = []
    real = graph_sql.around

    def counting(db, user_id, entity_ids):
        reads.append(list(entity_ids))
        return real(db, user_id, entity_ids)

    monkeypatch.setattr(graph_sql, "around", counting)
    with opened(url, embedder) as memory:
        for text in ["My sister Anna lives in Porto", "Anna works as a nurse at the city hospital"]:
            memory.add(text, user_id="alice")
        first = [h.memory.id for h in memory.search("What does Anna do?", user_id="alice")]
        assert len(reads) == 1  # Anna is a name the graph knows
        assert [h.memory.id for h in memory.search("What does Anna do?", user_id="alice")] == first
        assert len(reads) == 1
        memory.add("Anna is training to become a midwife", user_id="alice")
        memory.search("What does Anna do?", user_id="alice")
        assert len(reads) == 2  # the graph changed: read again


def test_questions_naming_other_entities_count_the_users_linked_memories_once(url, embedder, monkeypatch):  # noqa: F811
    """How many memories the graph links is the whole graph's figure: one read per graph state,
    not one per question (a `count(DISTINCT …)` over all the user's mentions)."""
    from engram.store import graph_sql

    counted: list[str] = []
    real = graph_sql.linked
    monkeypatch.setattr(graph_sql, "linked", lambda db, user_id: counted.append(user_id) or real(db, user_id))
    with opened(url, embedder) as memory:
        for text in ["My sister Anna lives in Porto", "My brother Tom works in Lisbon"]:
            memory.add(text, user_id="alice")
        for question in ("What does Anna do?", "Who lives in Porto?", "What does Tom do in Lisbon?"):
            memory.search(question, user_id="alice")
        assert counted == ["alice"]
        memory.add("Anna is training to become a midwife", user_id="alice")
        memory.search("Who lives in Porto?", user_id="alice")
        assert counted == ["alice", "alice"]  # the graph changed: counted again


def test_a_cold_users_first_search_reads_the_graphs_names_in_one_statement(url, embedder, monkeypatch):  # noqa: F811
    """A restarted process's first search of a user: the names come in one statement, with no
    snapshot transaction of their own (the search already read the user's version)."""
    import psycopg

    with opened(url, embedder) as memory:
        for text in ["My sister Anna lives in Porto", "Anna works as a nurse at the city hospital"]:
            memory.add(text, user_id="alice")
    sent: list[str] = []
    real = psycopg.Cursor.execute

    def recording(self, query, *args, **kwargs):
        sent.append(str(query))
        return real(self, query, *args, **kwargs)

    monkeypatch.setattr(psycopg.Cursor, "execute", recording)
    with opened(url, embedder) as restarted:
        sent.clear()
        hits = restarted.search("What does Anna do?", user_id="alice")
        assert any("nurse" in h.memory.content for h in hits)
    names = [q for q in sent if "graph_aliases" in q]
    assert len(names) == 1 and "graph_entities" in names[0]
    assert not any("SET TRANSACTION" in q for q in sent)


def _upgraded_from(url: str, embedder, undo: tuple[str, ...]):
    """A store taken back by `undo`, then opened again: the graph answers as it did before, on
    the schema this engram writes. Returns a connection for looking at what the migration made."""
    import psycopg

    from engram.store.postgres.schema import SCHEMA_VERSION

    with opened(url, embedder) as memory:
        for text in ["My sister Anna lives in Porto", "Anna works as a nurse at the city hospital"]:
            memory.add(text, user_id="alice")
        before = [h.memory.id for h in memory.search("What does Anna do?", user_id="alice")]
    with psycopg.connect(url, autocommit=True) as db:
        for statement in undo:
            db.execute(statement)
    with opened(url, embedder) as upgraded:
        assert upgraded.store.schema_version == SCHEMA_VERSION
        assert [h.memory.id for h in upgraded.search("What does Anna do?", user_id="alice")] == before
    return psycopg.connect(url, autocommit=True)


def test_a_store_of_schema_5_reads_the_graphs_mentions_from_an_index_on_open(url, embedder):  # noqa: F811
    """Migration 6: the mentions' index by user becomes one a search's counts read alone."""
    from store_backends import UNDO_POSTGRES_6

    with _upgraded_from(url, embedder, UNDO_POSTGRES_6) as db:
        columns = db.execute(
            "SELECT indexdef FROM pg_indexes WHERE indexname = 'graph_mentions_user' AND schemaname = current_schema()"
        ).fetchone()[0]
    assert "(user_id, entity_id, memory_id)" in columns


def test_a_store_of_schema_6_reads_the_graphs_names_from_indexes_on_open(url, embedder):  # noqa: F811
    """Migration 7: a cold search's first read of the graph, the user's entities and aliases,
    comes from indexes that carry the columns it reads (an index-only scan, no heap pages)."""
    from store_backends import UNDO_POSTGRES_7

    with _upgraded_from(url, embedder, UNDO_POSTGRES_7) as db:
        db.execute("VACUUM graph_entities, graph_aliases")  # what autovacuum does: the pages all-visible
        db.execute("SET enable_seqscan = off")  # a table this small is read whole otherwise
        plan = "\n".join(r[0] for r in db.execute(
            "EXPLAIN (ANALYZE) SELECT 1, id, name, type, created_at FROM graph_entities WHERE user_id = 'alice'"
            " UNION ALL SELECT 0, entity_id, key, alias, NULL FROM graph_aliases WHERE user_id = 'alice'"
        ).fetchall())
    assert plan.count("Index Only Scan") == 2 and "Heap Fetches: 0" in plan, plan
