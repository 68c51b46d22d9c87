"""`engram migrate`: a whole store copied between backends, verified, resumable."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from engram import Memory
from engram.cli import app
from engram.migrate import CURSOR_USER, MigrateError, checksums, migrate
from engram.models import utcnow
from engram.store.base import Scope
from engram.store.copy import TABLES
from engram.store.open import open_store
from store_backends import Unavailable, postgres_target


@pytest.fixture
def pg_target(tmp_path):
    try:
        return lambda: postgres_target(tmp_path)
    except Unavailable as exc:  # pragma: no cover - without the wheel
        pytest.skip(str(exc))


def everything(store) -> dict[str, list]:
    """Every row of every table (memories without their backend's rowid), comparable across backends."""
    out: dict[str, list] = {}
    for table in TABLES:
        rows, after = [], None
        while page := store.copy_out(table.name, after, 1000):
            rows += [r for _, r in page if r.get("user_id") != CURSOR_USER]
            after = list(page[-1][0])
        if table.name == "memories":
            for r in rows:
                r["embedding"] = None if r["embedding"] is None else np.round(r["embedding"], 6).tolist()
                r["metadata"] = r["metadata"] and json.loads(r["metadata"])
                for column in ("entities", "tags", "sources"):
                    r[column] = json.loads(r[column])
            rows.sort(key=lambda r: r["id"])
        else:
            rows.sort(key=lambda r: [str(r[c]) for c in table.key])
        out[table.name] = rows
    return out


@pytest.fixture
def filled(tmp_path, embedder):
    """A SQLite store with memories of two users, history, a session with turns, state and a job."""
    path = tmp_path / "source.db"
    with Memory(path, embedder=embedder) as m:
        m.add("I live in Berlin and I love green tea", user_id="alice")
        m.add("我住在上海，喜欢喝咖啡", user_id="bob")
        m.add("My sister Anna works at Google.", user_id="alice", infer=False)  # the entity graph's rows
        first = m.add("Remember my locker code is 42", user_id="alice", infer=False)[0].memory
        m.update(first.id, "My locker code is 43")
        m.session("alice", "s1").add("let's plan the trip to Rome")
        m.pause("bob")
        m.store.jobs_add("add", Scope("alice"), None, '{"text": "later"}', state="queued", at=utcnow())
    return path


def test_sqlite_to_postgres_and_back_is_the_same_store(filled, tmp_path, pg_target, embedder):
    source = open_store(filled, dim=256, read_only=True)
    middle = open_store(pg_target(), dim=256)
    back = open_store(tmp_path / "back.db", dim=256)
    try:
        there = migrate(source, middle, embedder=embedder, batch=3)
        assert there.copied["memories"] == source.copy_count("memories") > 3 and there.users == 2
        assert there.reembedded == 0  # vectors copied, not recomputed
        assert all(there.copied[t] > 0 for t in ("graph_entities", "graph_aliases", "graph_mentions", "graph_edges"))
        migrate(middle, back, embedder=embedder, batch=2)
        assert everything(back) == everything(source)
        assert checksums(middle) == checksums(source)
        assert middle.get_state(CURSOR_USER, "cursor") is None  # finished: nothing to resume
    finally:
        for store in (source, middle, back):
            store.close()
    with Memory(store=middle.url, embedder=embedder) as m:  # the copy works as a store
        assert any("Berlin" in h.memory.content for h in m.search("where does alice live", user_id="alice"))
        assert m.is_paused("bob") and m.store.jobs_count(["queued", "running", "failed"]) == 1
        assert [t.content for t in m.store.turns_list(Scope("alice"), "s1")] == ["let's plan the trip to Rome"]
        names = {e.name for e in m.graph("alice").entities}
        assert {"Anna", "Google"} <= names  # the graph came along, and serves on PostgreSQL


def test_an_interrupted_copy_resumes_where_it_stopped(filled, tmp_path, embedder):
    source = open_store(filled, dim=256, read_only=True)
    target = open_store(tmp_path / "copy.db", dim=256)
    real, calls = target.copy_in, []

    def failing(table, rows):
        calls.append(table)
        if len(calls) == 3:
            raise OSError("the network went away")
        real(table, rows)

    target.copy_in = failing
    with pytest.raises(OSError):
        migrate(source, target, embedder=embedder, batch=2)
    assert 0 < target.copy_count("memories") < source.copy_count("memories")
    assert target.get_state(CURSOR_USER, "cursor") is not None
    target.copy_in = real
    report = migrate(source, target, embedder=embedder, batch=2)
    assert report.resumed and everything(target) == everything(source)
    source.close()
    target.close()


def test_a_target_that_is_not_empty_is_refused(filled, tmp_path, embedder):
    source = open_store(filled, dim=256, read_only=True)
    with Memory(tmp_path / "other.db", embedder=embedder) as other:
        other.add("something else", user_id="zoe", infer=False)
        with pytest.raises(MigrateError, match="not empty"):
            migrate(source, other.store, embedder=embedder)
    source.close()


def test_vectors_of_another_embedder_are_embedded_again(tmp_path, embedder):
    from engram.models import MemoryItem
    from engram.records import make_record

    source = open_store(tmp_path / "small.db", dim=8)
    item = MemoryItem(user_id="u", content="I like sailing", embedding_model="tiny-8")
    source.write(inserts=[make_record(item, embedding=np.ones(8, dtype=np.float32))])
    target = open_store(tmp_path / "big.db", dim=embedder.dim)
    report = migrate(source, target, embedder=embedder)
    assert report.reembedded == 1
    vector = target.embeddings([item.id])[item.id]
    assert len(vector) == embedder.dim and target.get(item.id).embedding_model == embedder.name
    source.close()
    target.close()


def test_the_cli_copies_and_says_how_fast(filled, pg_target, tmp_path):
    url = pg_target()
    result = CliRunner().invoke(app, ["migrate", "--from", str(filled), "--to", url])
    assert result.exit_code == 0, result.output
    assert "memories/s" in result.output and "verified 2 users" in result.output
    again = CliRunner().invoke(app, ["migrate", "--from", str(filled), "--to", url])
    assert again.exit_code == 1 and "not empty" in again.output


# -- Qdrant (qdrant-client's local mode) as a source and a destination ------------------------

GRAPH_TABLES = ("graph_entities", "graph_aliases", "graph_mentions", "graph_edges")


@pytest.fixture
def qdrant_url(tmp_path):
    pytest.importorskip("qdrant_client")
    return lambda name="qdrant": f"qdrant://{tmp_path / name}"


def points_of(store) -> dict[str, object]:
    """memory id -> its point in the store's collection (payload and vectors)."""
    found, _ = store._client.scroll(store.collection, limit=10_000, with_payload=True, with_vectors=True)
    return {p.payload["id"]: p for p in found}


def assert_points_carry_the_vectors_of(store, source) -> None:
    """One point per memory; its dense vector is the source's (Qdrant keeps cosine vectors at unit
    length), its sparse vector holds the memory's words."""
    want = source.embeddings([row["id"] for row in everything(source)["memories"]])
    points = points_of(store)
    assert set(points) == set(want) and len(want) == source.copy_count("memories")
    for memory_id, vector in want.items():
        dense = np.asarray(points[memory_id].vector["dense"], dtype=np.float32)
        np.testing.assert_allclose(dense, vector / np.linalg.norm(vector), atol=1e-6)
        assert points[memory_id].vector["lexical"].indices


def test_sqlite_to_qdrant_and_back_is_the_same_store(filled, tmp_path, qdrant_url, embedder):
    from engram.models import Filters

    source = open_store(filled, dim=embedder.dim, read_only=True)
    middle = open_store(qdrant_url(), dim=embedder.dim)
    back = open_store(tmp_path / "back.db", dim=embedder.dim)
    try:
        there = migrate(source, middle, embedder=embedder, batch=3)
        assert there.copied["memories"] == source.copy_count("memories") > 3 and there.users == 2
        assert there.reembedded == 0 and all(there.copied[t] > 0 for t in GRAPH_TABLES)
        assert_points_carry_the_vectors_of(middle, source)
        # Qdrant answers a dense search with the source's own neighbours and scores
        query = embedder.embed(["which city is her home"])[0]
        theirs = middle.dense_search(Scope("alice"), query, Filters(), 10)
        ours = source.dense_search(Scope("alice"), query, Filters(), 10)
        assert [i for i, _ in theirs] == [i for i, _ in ours] and len(ours) >= 3
        np.testing.assert_allclose([s for _, s in theirs], [s for _, s in ours], atol=1e-4)
        back_report = migrate(middle, back, embedder=embedder, batch=2)
        assert back_report.reembedded == 0 and back_report.users == 2
        assert everything(back) == everything(source) == everything(middle)
        assert checksums(middle) == checksums(source) == checksums(back)
        assert middle.get_state(CURSOR_USER, "cursor") is None
    finally:
        for store in (source, middle, back):
            store.close()
    with Memory(store=qdrant_url(), embedder=embedder) as m:  # the copy works as a store at once
        assert any("Berlin" in h.memory.content for h in m.search("where does alice live", user_id="alice"))
        assert m.search("locker", user_id="alice")[0].memory.content == "My locker code is 43"
        assert "上海" in m.search("上海", user_id="bob")[0].memory.content
        assert m.is_paused("bob") and m.store.jobs_count(["queued", "running", "failed"]) == 1
        assert [t.content for t in m.store.turns_list(Scope("alice"), "s1")] == ["let's plan the trip to Rome"]
        assert {"Anna", "Google"} <= {e.name for e in m.graph("alice").entities}
        assert [h.action for h in m.history(m.search("locker", user_id="alice")[0].memory.id)][-1] == "UPDATE"


def test_postgres_to_qdrant_and_qdrant_to_postgres(filled, qdrant_url, pg_target, embedder):
    source = open_store(filled, dim=embedder.dim, read_only=True)
    pg, qdrant, pg_again = open_store(pg_target(), dim=embedder.dim), None, None
    try:
        migrate(source, pg, embedder=embedder)
        qdrant = open_store(qdrant_url(), dim=embedder.dim)
        assert migrate(pg, qdrant, embedder=embedder, batch=4).reembedded == 0  # PostgreSQL -> Qdrant
        assert_points_carry_the_vectors_of(qdrant, source)
        pg_again = open_store(pg_target(), dim=embedder.dim)
        assert migrate(qdrant, pg_again, embedder=embedder, batch=4).users == 2  # Qdrant -> PostgreSQL
        assert everything(qdrant) == everything(source) == everything(pg_again)
        assert checksums(pg_again) == checksums(source)
    finally:
        for store in (source, pg, qdrant, pg_again):
            if store is not None:
                store.close()


def test_an_interrupted_copy_into_qdrant_resumes_and_writes_the_points_it_missed(filled, qdrant_url, embedder):
    source = open_store(filled, dim=embedder.dim, read_only=True)
    target = open_store(qdrant_url(), dim=embedder.dim)
    client = target._client
    real, calls = client.upsert, []

    def failing(*args, **kwargs):  # the second batch reached the side store, its points do not reach Qdrant
        calls.append(1)
        if len(calls) == 2:
            raise OSError("Qdrant went away")
        return real(*args, **kwargs)

    client.upsert = failing
    try:
        with pytest.raises(OSError):
            migrate(source, target, embedder=embedder, batch=2)
    finally:
        client.upsert = real
    target.close()
    target = open_store(qdrant_url(), dim=embedder.dim)  # run again, as `engram migrate` would
    try:
        assert target.copy_count("memories") == 4 and len(points_of(target)) == 2
        report = migrate(source, target, embedder=embedder, batch=2)
        assert report.resumed and report.copied["memories"] == source.copy_count("memories") - 4
        assert everything(target) == everything(source)
        assert_points_carry_the_vectors_of(target, source)  # the lost batch's points too
    finally:
        target.close()
        source.close()


def test_a_qdrant_collection_holding_another_stores_points_is_refused(filled, tmp_path, embedder):
    from engram.store.base import StoreError

    pytest.importorskip("qdrant_client")
    folder = tmp_path / "shared"
    with Memory(store=f"qdrant://{folder}", embedder=embedder) as m:
        m.add("I collect stamps", user_id="zoe", infer=False)
    source = open_store(filled, dim=embedder.dim, read_only=True)
    other = open_store(f"qdrant://{folder}?side={tmp_path / 'fresh.db'}", dim=embedder.dim)
    try:
        with pytest.raises(StoreError, match="empty collection"):
            migrate(source, other, embedder=embedder)
    finally:
        other.close()
        source.close()


def test_the_cli_copies_into_qdrant_and_out_of_it(filled, qdrant_url, tmp_path):
    out = CliRunner().invoke(app, ["migrate", "--from", str(filled), "--to", qdrant_url()])
    assert out.exit_code == 0, out.output
    assert "memories/s" in out.output and "verified 2 users" in out.output
    back = CliRunner().invoke(app, ["migrate", "--from", qdrant_url(), "--to", str(tmp_path / "back.db")])
    assert back.exit_code == 0 and "verified 2 users" in back.output, back.output


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_what_a_crash_left_for_the_write_behind_worker_is_done_in_the_copy(tmp_path, pg_target, embedder, kind):
    from test_write_behind import add_then_crash_in_a_child

    source_path = tmp_path / "crashed.db"
    add_then_crash_in_a_child(source_path, ["My sister Anna moved to Porto.", "Anna adopted a dog named Coco."])
    source = open_store(source_path, dim=embedder.dim, read_only=True)
    assert len(source.deferred_links(10)) == 2 and source.count_stale_vectors(embedder.name, embedder.dim) == 2
    target_url = pg_target() if kind == "postgres" else tmp_path / "copy.db"
    target = open_store(target_url, dim=embedder.dim)
    report = migrate(source, target, embedder=embedder)
    assert report.linked == 2 and report.reembedded == 2
    source.close()
    target.close()
    with Memory(store=str(target_url), embedder=embedder) as copy:
        assert {"Anna", "Porto", "Coco"} <= {e.name for e in copy.graph("u1").entities}
        hit = copy.search("where did my sister move to?", user_id="u1", limit=1)[0]
        assert "Porto" in hit.memory.content and hit.parts.dense_rank is not None
