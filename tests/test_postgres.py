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
    monkeypatch.setattr(search, "HNSW_ABOVE", 100)
    store.write(inserts=records[:300])
    store.write(inserts=records[300:])
    query = vectors[3]
    owned = [r for r in records if r.item.user_id == "big" and r.item.agent_id == "a"]
    exact = sorted(owned, key=lambda r: -float(r.embedding @ query))[:10]
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
    # the small one exactly, in its index (no page of the table read)
    assert used == [] and [h for h, _ in small] == [
        r.item.id for r in sorted(records[400:450], key=lambda r: -float(r.embedding @ query))[:5]
    ]
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


def test_only_the_rows_of_users_hnsw_serves_are_in_its_index(url, monkeypatch):
    """A user joins the HNSW index when a write takes them over the bound (all their rows then,
    later ones as they come); smaller users' rows stay out of it, and deletes keep the count."""
    from engram.store.postgres import search

    monkeypatch.setattr(search, "HNSW_ABOVE", 50)
    store = open_store(url, dim=DIM)
    rng = np.random.default_rng(3)

    def add(user: str, n: int) -> list[str]:
        records = [make_record(MemoryItem(user_id=user, content=f"{user} {i}"), embedding=rng.normal(size=DIM).astype(np.float32))
                   for i in range(n)]
        store.write(inserts=records)
        return [r.item.id for r in records]

    def indexed() -> dict[str, tuple[int, int]]:
        rows = psql(url, "SELECT m.user_id, count(*) FILTER (WHERE m.hnsw), max(v.row_count) FROM memories m"
                         " JOIN user_versions v USING (user_id) GROUP BY m.user_id")
        return {u: (flagged, counted) for u, flagged, counted in rows}

    grow = add("grow", 40)
    add("small", 10)
    assert indexed() == {"grow": (0, 40), "small": (0, 10)}
    add("grow", 20)
    assert indexed() == {"grow": (60, 60), "small": (0, 10)}
    add("grow", 5)
    store.delete(grow[:7], [])
    assert indexed() == {"grow": (58, 58), "small": (0, 10)}
    assert len(store.dense_search(Scope("grow"), rng.normal(size=DIM).astype(np.float32), Filters(), 10)) == 10
    store.close()


def test_a_store_of_schema_3_keeps_only_its_big_users_in_the_hnsw_index(url, monkeypatch):
    """Upgrading: the whole-table HNSW index goes, users HNSW serves are counted in (their rows
    flagged, the new index holds them), smaller users stay out, and searches find the same."""
    from store_backends import UNDO_POSTGRES_4

    from engram.store.postgres import schema, search

    HNSW_ABOVE = 1_000  # a smaller bound than the store's (`EXACT_UP_TO`): fewer rows to write
    monkeypatch.setattr(search, "HNSW_ABOVE", HNSW_ABOVE)
    promote = schema.PROMOTE_ALL % {"above": HNSW_ABOVE, "share": search.HNSW_MIN_SHARE}
    monkeypatch.setitem(schema.MIGRATIONS, 4, tuple(
        promote if s.startswith("INSERT INTO hnsw_users") else s for s in schema.HNSW_MIGRATION
    ))
    rng = np.random.default_rng(5)
    store = open_store(url, dim=DIM)
    vectors = rng.normal(size=(HNSW_ABOVE + 41, DIM)).astype(np.float32)
    users = ["big"] * (HNSW_ABOVE + 1) + ["small"] * 40
    store.write(inserts=[make_record(MemoryItem(user_id=u, content=f"note {n}"), embedding=vectors[n])
                         for n, u in enumerate(users)])
    before = store.dense_search(Scope("big"), vectors[0], Filters(), 10)
    store.close()
    for statement in UNDO_POSTGRES_4:
        psql(url, statement)
    store = open_store(url, dim=DIM)
    assert store.schema_version >= 4
    flagged = psql(url, "SELECT m.user_id, count(*) FILTER (WHERE m.hnsw), max(v.row_count) FROM memories m"
                        " JOIN user_versions v USING (user_id) GROUP BY m.user_id ORDER BY 1")
    assert flagged == [("big", HNSW_ABOVE + 1, HNSW_ABOVE + 1), ("small", 0, 40)]
    indexes = psql(url, "SELECT indexdef FROM pg_indexes WHERE starts_with(indexname, 'memories_hnsw')"
                         " AND schemaname = current_schema()")
    assert len(indexes) == 1 and indexes[0][0].endswith("AND hnsw)")
    assert [h for h, _ in store.dense_search(Scope("big"), vectors[0], Filters(), 10)][:1] == [before[0][0]]
    store.close()


def test_graph_rows_go_as_multi_row_statements_the_last_row_of_a_key_winning():
    """What a graph write sends in its one pipeline: an INSERT's rows in one statement (a row
    updated twice by one statement is an error: the last of a key is kept, as one by one), other
    statements row by row."""
    from engram.store.postgres.graph import statements

    upsert = ("INSERT INTO graph_mentions (entity_id, memory_id, user_id, role) VALUES (%s, %s, %s, %s)"
              " ON CONFLICT (entity_id, memory_id) DO UPDATE SET role = excluded.role")
    [(sql, params)] = statements(upsert, [("e", "m", "u", "subject"), ("f", "m", "u", "object"), ("e", "m", "u", "object")])
    assert sql.count("(%s, %s, %s, %s)") == 2 and params == ["e", "m", "u", "object", "f", "m", "u", "object"]
    plain = "INSERT INTO graph_edges (user_id, src) VALUES (%s, %s)"
    sent = list(statements(plain, [("u", str(n)) for n in range(2500)]))
    assert [len(p) for _, p in sent] == [2000, 2000, 1000]  # ≤ 1,000 rows a statement
    delete = "DELETE FROM graph_mentions WHERE entity_id = %s AND memory_id = %s"
    assert list(statements(delete, [("e", "m"), ("f", "m")])) == [(delete, ("e", "m")), (delete, ("f", "m"))]
