"""PostgreSQL keeps each user's search index packed in one row (schema 5, `scope_packs`), as
SQLite does: a cold user's index comes back from its pack and answers exactly as one loaded
from every row; what another store object (another process) changed since shows on the next
search, a deleted memory never comes back, and a store of schema 4 gains the packs on open."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import psycopg
import pytest
from store_backends import UNDO_POSTGRES_5
from test_index_cache import USERS, _archive, answers, fill
from test_postgres import url  # noqa: F401 - a fixture: a fresh schema on the test run's server

from engram import Memory
from engram.models import Filters
from engram.store import scope_pack
from engram.store.base import Scope
from engram.store.postgres import search as pg_search
from engram.store.postgres.schema import SCHEMA_VERSION
from engram.store.scope_index import ScopeIndex
from engram.text import lexical_tokens


@pytest.fixture(autouse=True)
def small_packs(monkeypatch):
    monkeypatch.setattr(pg_search, "PACK_FROM_ROWS", 5)  # small users get packs too


def sql(target: str, statement: str, params=()):
    with psycopg.connect(target, autocommit=True) as db:
        cursor = db.execute(statement, params)
        return cursor.fetchall() if cursor.description else None


def packs(target: str, *writing: Memory) -> dict[str, int]:
    """The packs in the database (once those that `writing` queued are written)."""
    for memory in writing:
        memory.store._packs_written()
    return dict(sql(target, "SELECT user_id, version FROM scope_packs"))


def opened(target: str, embedder, **options) -> Memory:
    return Memory(store=target, embedder=embedder, reinforce=False, **options)


def both(here: Memory, target: str, embedder) -> Iterator[Memory]:
    """`here` (its indexes cached), then a newly opened store (cold: packs), closed after."""
    yield here
    with opened(target, embedder) as cold:
        yield cold


def full_loads(monkeypatch) -> list[str]:
    """The users whose index was read from every row of theirs (not a pack, not a catch-up)."""
    loaded: list[str] = []
    real = pg_search.SearchMixin._index_rows

    def counting(conn, index, where, params):
        if where == "user_id = %s":
            loaded.append(params[0])
        return real(conn, index, where, params)

    monkeypatch.setattr(pg_search.SearchMixin, "_index_rows", staticmethod(counting))
    return loaded


def test_a_cold_user_loads_from_the_pack_and_answers_as_a_full_load(url, embedder, monkeypatch) -> None:
    with opened(url, embedder) as first:
        fill(first)
        expected = {u: answers(first, u) for u in USERS}
        versions = {u: first.store.user_version(u) for u in USERS}
    assert packs(url) == versions  # written by each user's first load, at the user's version
    loaded = full_loads(monkeypatch)
    with opened(url, embedder) as cold:  # a restarted process
        assert {u: answers(cold, u) for u in USERS} == expected
    assert loaded == []
    sql(url, "DELETE FROM scope_packs")
    with opened(url, embedder) as reference:  # without packs: loaded from the rows again
        assert {u: answers(reference, u) for u in USERS} == expected
    assert sorted(loaded) == sorted(USERS)


def test_rows_and_status_changes_of_another_process_are_caught_up(url, embedder, monkeypatch) -> None:
    with opened(url, embedder) as here, opened(url, embedder) as there:
        fill(here, ["ana", "ben"])
        answers(here, "ana")
        written = packs(url, here)
        archived = here.search("coffee", user_id="ana", limit=1)[0].memory
        there.add("I moved to Porto last week.", user_id="ana", infer=False)
        there.add("I drink green tea now.", user_id="ana", infer=False)
        there.store.transition([_archive(archived.id)])  # a status change leaves the pack
        assert packs(url) == written
        loaded = full_loads(monkeypatch)
        for memory in both(here, url, embedder):  # cached here (caught up), cold (the pack, caught up)
            hits = [r.memory for r in memory.search("where do I live now? Porto", user_id="ana", limit=3)]
            assert "Porto" in hits[0].content
            assert archived.id not in [r.memory.id for r in memory.search("coffee", user_id="ana", limit=20)]
        assert loaded == []
    with opened(url, embedder) as cold:
        got = answers(cold, "ana")
    assert packs(url)["ana"] == written["ana"]  # two rows added: appended on load, no rewrite
    monkeypatch.setattr(pg_search, "REPACK_ROWS", 1)
    with opened(url, embedder) as cold:
        assert answers(cold, "ana") == got
    assert packs(url)["ana"] > written["ana"]  # past REPACK_ROWS: packed again, current
    sql(url, "DELETE FROM scope_packs")
    with opened(url, embedder) as reference:
        assert answers(reference, "ana") == got


def test_a_deletion_or_edit_elsewhere_drops_the_pack_and_never_comes_back(url, embedder) -> None:
    with opened(url, embedder) as here, opened(url, embedder) as there:
        fill(here, ["ana", "ben"])
        secret = here.add("My locker code word is quixotrombone.", user_id="ana", infer=False)[0].memory
        answers(here, "ana")
        answers(here, "ben")
        assert set(packs(url, here)) == {"ana", "ben"}
        there.delete(secret.id)
        assert set(packs(url)) == {"ben"}  # ana's pack held the deleted memory
        edited = here.search("parrot Mochi", user_id="ben", limit=1)[0].memory
        there.update(edited.id, content="I changed my mind about everything.")
        assert packs(url) == {}
        for memory in both(here, url, embedder):  # a cached index and a cold one
            hits = memory.search("quixotrombone locker code word", user_id="ana", limit=20)
            assert secret.id not in [r.memory.id for r in hits]
            top = memory.search("changed my mind about everything", user_id="ben", limit=1)[0].memory
            assert top.id == edited.id and "everything" in top.content
            old_words = lexical_tokens("parrot Mochi")  # its old words are no longer its own
            assert edited.id not in [i for i, _ in memory.store.lexical_search(Scope("ben"), old_words, Filters(), 50)]
    assert set(packs(url)) == {"ana", "ben"}  # the next cold load packed again, without them
    assert not sql(url, "SELECT 1 FROM scope_packs WHERE position('quixotrombone'::bytea in data) > 0")


def test_a_supersede_in_another_store_shows_and_keeps_the_pack(url, embedder) -> None:
    with opened(url, embedder) as here, opened(url, embedder) as there:
        fill(here, ["ana"])
        old = here.add("I live in Lisbon with my cat.", user_id="ana", infer=False)[0].memory
        answers(here, "ana")
        written = packs(url, here)
        there.store.transition([_supersede(old.id)])
        assert packs(url) == written
        for memory in both(here, url, embedder):
            assert old.id not in [r.memory.id for r in memory.search("Lisbon cat", user_id="ana", limit=20)]


def _supersede(memory_id: str):
    from engram.models import utcnow
    from engram.store.base import Transition

    return Transition(memory_id, "superseded", "SUPERSEDE", "test", utcnow())


def test_a_damaged_pack_is_ignored_and_a_read_only_store_writes_none(url, embedder) -> None:
    with opened(url, embedder) as first:
        fill(first, ["ana"])
        expected = answers(first, "ana")
    sql(url, "UPDATE scope_packs SET data = '\\x00ff00ff'::bytea")
    with opened(url, embedder) as cold:
        assert answers(cold, "ana") == expected
    sql(url, "DELETE FROM scope_packs")
    with opened(url, embedder, read_only=True) as reader:
        assert answers(reader, "ana") == expected
    assert packs(url) == {}


def test_a_store_of_schema_4_gains_packs_on_open(url, embedder) -> None:
    with opened(url, embedder) as first:
        fill(first, ["ana"])
        expected = answers(first, "ana")
    for statement in UNDO_POSTGRES_5:
        sql(url, statement)
    assert sql(url, "SELECT to_regclass('scope_packs')") == [(None,)]
    with opened(url, embedder) as upgraded:
        assert upgraded.store.schema_version == SCHEMA_VERSION
        assert answers(upgraded, "ana") == expected
        assert set(packs(url, upgraded)) == {"ana"}
        upgraded.delete(upgraded.search("coffee", user_id="ana", limit=1)[0].memory.id)
        assert packs(url) == {}  # the triggers came with it


def test_statuses_are_caught_up_and_late_or_missing_rows_found() -> None:
    """The shared catch-up step: changed statuses set, a row gone from the table marked deleted,
    a row the index lacks below its newest one (committed late) returned to be read."""
    index = ScopeIndex(2)
    vectors = [np.array([1.0, 0.0], dtype=np.float32)] * 3
    index.add([1, 2, 5], ["a", "b", "e"], vectors, [["x"], ["y"], ["z"]], ["active"] * 3, [None] * 3)
    late = scope_pack.apply_statuses(index, [(1, "active"), (3, "active"), (5, "superseded")], upto=5)
    assert late == [3]
    assert [index.status_of(r) for r in (1, 2, 5)] == ["active", None, "superseded"]


def test_a_search_never_waits_for_a_writer_to_pack(url, embedder) -> None:
    """A writer holding the user's version row (mid-transaction): the cold search answers at
    once, its pack is skipped rather than waited for, and the next cold load packs."""
    with opened(url, embedder) as first:
        fill(first, ["ana"])
        expected = answers(first, "ana")
    sql(url, "DELETE FROM scope_packs")
    with psycopg.connect(url) as writer:
        writer.execute("SELECT version FROM user_versions WHERE user_id = 'ana' FOR NO KEY UPDATE")
        with opened(url, embedder) as cold:
            assert answers(cold, "ana") == expected
            assert packs(url, cold) == {}
        writer.rollback()
    with opened(url, embedder) as cold:
        assert answers(cold, "ana") == expected
    assert set(packs(url)) == {"ana"}
