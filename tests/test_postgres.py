"""What only the PostgreSQL backend has: HNSW for large scopes, schema checks on a shared
database, advisory locks across stores, the store URL setting. (Everything else it shares
with SQLite is in the storage contract, tests/test_store_contract*.py.)"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from engram import Memory
from engram.models import Filters, MemoryItem
from engram.records import make_record
from engram.store.base import NotADatabase, Scope, StoreError
from engram.store.open import open_store
from store_backends import Unavailable, postgres_target

DIM = 8


@pytest.fixture
def url(tmp_path) -> str:
    try:
        return postgres_target(tmp_path)
    except Unavailable as exc:  # pragma: no cover - without the wheel
        pytest.skip(str(exc))


def psql(url: str, sql: str, params=()):
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        cursor = conn.execute(sql, params)
        return cursor.fetchall() if cursor.description else None


def test_large_scopes_search_through_hnsw_and_still_fill_a_filtered_limit(url, monkeypatch):
    from engram.store.postgres import search

    rng = np.random.default_rng(7)
    store = open_store(url, dim=DIM)
    vectors = rng.normal(size=(600, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    records = [
        make_record(MemoryItem(user_id="big" if n < 400 else "small" if n < 450 else "other", agent_id="a" if n % 10 == 0 else None,
                               content=f"note {n}"), embedding=vectors[n])
        for n in range(600)
    ]
    store.write(inserts=records)
    query = vectors[3]
    owned = [r for r in records if r.item.user_id == "big" and r.item.agent_id == "a"]
    exact = sorted(owned, key=lambda r: -float(r.embedding @ query))[:10]
    monkeypatch.setattr(search, "HNSW_ABOVE", 100)
    assert "memories_hnsw_8" in store.explain_dense(Scope("big", "a"), query, Filters(), 10, hnsw=True)
    assert "hnsw" not in store.explain_dense(Scope("big", "a"), query, Filters(), 10, hnsw=False)
    used = []
    real = store._dense_query
    monkeypatch.setattr(store, "_dense_query", lambda *args: used.append(args[-1]) or real(*args))
    hits = store.dense_search(Scope("big", "a"), query, Filters(), 10)
    assert used == [True]  # the big scope went through HNSW
    assert [h for h, _ in hits] == [r.item.id for r in exact]  # all 10, in order, only its own
    used.clear()
    small = store.dense_search(Scope("small"), query, Filters(), 5)
    assert used == [False] and len(small) == 5  # the small one exactly, through its btree
    used.clear()
    few = store.dense_search(Scope("big"), query, Filters(kind=["preference"]), 5)
    assert few == [] and used == [True, False]  # HNSW found none: exact had the last word
    assert {store.get(i).user_id for i, _ in small} == {"small"}
    store.close()


def test_a_newer_schema_is_refused_and_so_is_someone_elses_database(url, tmp_path):
    open_store(url, dim=DIM).close()
    psql(url, "UPDATE engram_schema SET version = 99")
    with pytest.raises(StoreError, match="schema version 99"):
        open_store(url, dim=DIM)
    other = postgres_target(tmp_path / "other")
    psql(other, "CREATE TABLE memories (x int)")
    with pytest.raises(NotADatabase):
        open_store(other, dim=DIM)


def test_an_unreachable_server_is_one_clear_error(tmp_path):
    with pytest.raises(StoreError, match="cannot reach"):
        open_store(f"postgresql://nobody@/engram?host={tmp_path}", dim=DIM)


def test_a_section_excludes_the_same_user_in_another_store(url):
    first, second = open_store(url, dim=DIM), open_store(url, dim=DIM)
    release, order = threading.Event(), []

    def hold() -> None:
        with first.section(Scope("u")):
            order.append("first in")
            release.wait(30)
            order.append("first out")

    def follow() -> None:
        with second.section(Scope("u")):
            order.append("second in")

    holder = threading.Thread(target=hold)
    holder.start()
    while "first in" not in order:
        threading.Event().wait(0.01)
    follower = threading.Thread(target=follow)
    follower.start()
    waiting = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
    for _ in range(3000):  # until PostgreSQL shows the second store waiting on the advisory lock
        if psql(url, waiting)[0][0]:
            break
        threading.Event().wait(0.01)
    with second.section(Scope("someone else")):  # other users are not held up
        pass
    assert order == ["first in"]
    release.set()
    holder.join()
    follower.join()
    assert order == ["first in", "first out", "second in"]
    first.close()
    second.close()


def test_the_store_setting_and_memory_take_a_url(url, monkeypatch, embedder):
    from engram.store.postgres import PostgresStore

    monkeypatch.setenv("ENGRAM_STORE", url)
    with Memory(embedder=embedder) as m:
        assert isinstance(m.store, PostgresStore)
        m.add("I keep bees", user_id="hana", infer=False)
    with Memory(store=url, embedder=embedder) as m:
        assert [x.content for x in m.get_all(user_id="hana")] == ["I keep bees"]
