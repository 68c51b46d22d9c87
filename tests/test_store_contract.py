"""The storage contract: every behaviour the engine relies on, asserted the same way on every
backend (tests/store_backends.py lists them). A backend is done when this file is green on it."""

from __future__ import annotations

import multiprocessing
import threading
from datetime import timedelta

import numpy as np
import pytest

from engram.models import Filters, MemoryItem, Status, utcnow
from engram.records import make_record
from engram.store.base import (
    HistoryEvent, Record, Scope, SessionRecord, StoreError, Transition, TransitionGroup, TurnRecord,
)
from engram.text import lexical_tokens as words
from store_backends import one_process_only, store_factory, store_target  # noqa: F401 - fixtures
from store_contract_workers import write_user

DIM = 8
ALL = Filters(status=[])


@pytest.fixture
def store(store_factory):
    return store_factory()


def unit(*values: float) -> np.ndarray:
    vector = np.zeros(DIM, dtype=np.float32)
    vector[: len(values)] = values
    return vector / np.linalg.norm(vector)


def rec(user: str, content: str, vector: np.ndarray | None = None, *, agent: str | None = None, **fields) -> Record:
    item = MemoryItem(user_id=user, agent_id=agent, content=content, **fields)
    return make_record(item, embedding=unit(1.0) if vector is None else vector)


def added(store, *records: Record) -> list[str]:
    store.write(inserts=list(records), events=[HistoryEvent.of(r.item, "ADD", None, "test") for r in records])
    return [r.item.id for r in records]


def ids(hits) -> list[str]:
    return [h[0] if isinstance(h, tuple) else h.id for h in hits]


# -- persistence and migrations ----------------------------------------------------------
def test_what_is_written_reads_back_whole_after_reopening(store, store_factory):
    record = rec("alice", "Alice lives in Berlin", unit(1, 2), key="city", value="Berlin",
                 metadata={"source": "chat", "n": 3}, tags=["home"], entities=["Berlin"])
    added(store, record)
    store.close()
    again = store_factory()
    item = again.get(record.item.id)
    assert item is not None and item.content == "Alice lives in Berlin"
    assert (item.key, item.value, item.metadata, item.tags, item.entities) == (
        "city", "Berlin", {"source": "chat", "n": 3}, ["home"], ["Berlin"])
    assert abs(item.created_at - record.item.created_at) < timedelta(milliseconds=1)
    assert np.allclose(again.embeddings([item.id])[item.id], unit(1, 2))
    assert again.ids_with_prefix(item.id[:6]) == [item.id]


def test_the_schema_version_is_recorded_and_reopening_keeps_it(store, store_factory):
    version = store.schema_version
    assert version >= 1
    store.close()
    assert store_factory().schema_version == version


def test_a_read_only_store_reads_and_refuses_writes(store, store_factory):
    first = added(store, rec("alice", "tea with lemon"))[0]
    reader = store_factory(read_only=True)
    assert reader.get(first).content == "tea with lemon"
    with pytest.raises(StoreError):
        added(reader, rec("alice", "no"))


# -- scoping and isolation -----------------------------------------------------------------
def test_no_read_crosses_users_or_agents(store):
    a = added(store, rec("alice", "coffee every morning", unit(1, 0), key="drink"),
              rec("alice", "coffee with the bot", unit(1, 0), agent="bot", key="drink"))
    b = added(store, rec("bob", "coffee every morning", unit(1, 0), key="drink"))
    alice, bot, bob = Scope("alice"), Scope("alice", "bot"), Scope("bob")
    live = Filters()
    assert set(ids(store.list(alice, live))) == set(a)
    assert ids(store.list(bot, live)) == [a[1]]
    assert ids(store.list(bob, live)) == b
    assert store.count(alice, live) == 2 and store.count(bob, live) == 1
    assert set(ids(store.lexical_search(alice, words("coffee"), live, 10))) == set(a)
    assert ids(store.lexical_search(bot, words("coffee"), live, 10)) == [a[1]]
    assert ids(store.dense_search(bob, unit(1, 0), live, 10)) == b
    assert ids(store.dense_search(bot, unit(1, 0), live, 10)) == [a[1]]
    assert ids(store.restatements(bob, unit(1, 0), words("coffee"), live, 10)) == b
    assert ids(store.find_by_key(bob, "drink", live)) == b
    h = store.get(a[0])
    assert ids(store.find_by_hash(bob, make_record(h).content_hash, live)) == b
    assert store.user_ids() == ["alice", "bob"]
    assert ids(store.lexical_search(Scope("carol"), words("coffee"), live, 10)) == []
    assert ids(store.dense_search(Scope("alice", "nobody"), unit(1, 0), live, 10)) == []


def test_ids_that_look_like_query_syntax_are_plain_ids(store):
    odd = "o'brien\" OR 1=1; --"
    added(store, rec(odd, "secret plan"), rec("x", "secret plan"))
    assert len(store.list(Scope(odd), Filters())) == 1
    assert len(store.lexical_search(Scope(odd), words("secret"), Filters(), 10)) == 1


# -- filters ---------------------------------------------------------------------------------
def test_time_ranges_filter_lists_counts_and_both_searches(store):
    now = utcnow()
    old = rec("u", "trip to Rome", unit(1, 0), created_at=now - timedelta(days=40))
    new = rec("u", "trip to Oslo", unit(1, 0.1), created_at=now - timedelta(days=2))
    added(store, old, new)
    recent = Filters(since=now - timedelta(days=7))
    before = Filters(until=now - timedelta(days=7))
    scope = Scope("u")
    assert ids(store.list(scope, recent)) == [new.item.id]
    assert store.count(scope, before) == 1
    assert ids(store.lexical_search(scope, words("trip"), recent, 10)) == [new.item.id]
    assert ids(store.dense_search(scope, unit(1, 0), before, 10)) == [old.item.id]
    assert ids(store.list(scope, Filters(), newest_first=False)) == [old.item.id, new.item.id]
    assert ids(store.list(scope, Filters(), limit=1, offset=1)) == [old.item.id]


def test_metadata_kind_and_status_filters(store):
    a = rec("u", "note one", metadata={"topic": "work", "n": 1, "labels": ["x", "y"]})
    b = rec("u", "note two", metadata={"topic": "home", "n": 5})
    c = rec("u", "note three", kind="preference", status=Status.ARCHIVED)
    added(store, a, b, c)
    scope = Scope("u")

    def found(**filters) -> set[str]:
        return set(ids(store.list(scope, Filters(**filters))))

    assert found(metadata={"topic": "work"}) == {a.item.id}
    assert found(metadata={"n": {"gte": 2}}) == {b.item.id}
    assert found(metadata={"topic": {"in": ["home", "x"]}}) == {b.item.id}
    assert found(metadata={"topic": {"ne": "work"}}) == {b.item.id}
    assert found(metadata={"labels": {"contains": "y"}}) == {a.item.id}
    assert found(metadata={"OR": [{"n": 1}, {"n": 5}]}) == {a.item.id, b.item.id}
    assert found(metadata={"NOT": {"topic": "work"}}) == {b.item.id}
    assert found(status=["archived"]) == {c.item.id}
    assert found(status=[], kind=["preference"]) == {c.item.id}
    hits = store.lexical_search(scope, words("note"), Filters(metadata={"topic": "home"}), 10)
    assert ids(hits) == [b.item.id]
    assert ids(store.dense_search(scope, unit(1), Filters(metadata={"n": 1}), 10)) == [a.item.id]


# -- search ------------------------------------------------------------------------------------
def test_lexical_search_ranks_by_the_users_own_statistics(store):
    added(store, rec("u", "I love green tea"), rec("u", "green is my colour"), rec("u", "我喜欢喝咖啡"))
    hits = store.lexical_search(Scope("u"), words("green tea"), Filters(), 10)
    assert [store.get(i).content for i in ids(hits)] == ["I love green tea", "green is my colour"]
    assert hits[0][1] > hits[1][1] > 0
    chinese = store.lexical_search(Scope("u"), words("咖啡"), Filters(), 10)
    assert [store.get(i).content for i in ids(chinese)] == ["我喜欢喝咖啡"]


def test_dense_search_ranks_by_cosine(store):
    near, far = rec("u", "near", unit(1, 0.1)), rec("u", "far", unit(0, 1))
    added(store, far, near)
    hits = store.dense_search(Scope("u"), unit(1, 0), Filters(), 2)
    assert ids(hits) == [near.item.id, far.item.id]
    assert hits[0][1] == pytest.approx(float(unit(1, 0.1) @ unit(1, 0)), abs=1e-4)  # (an index holds 16-bit steps)
    assert ids(store.dense_search(Scope("u"), unit(1, 0), Filters(), 1)) == [near.item.id]


def test_the_index_knows_each_memorys_language_through_edits_and_reopening(store, store_factory):
    """What a search weighs a lexical hit in another language by, known without reading the hit's
    row (engram.fusion); a backend without such an index may know none (the caller reads rows)."""
    english, chinese = rec("u", "I love green tea", language="en"), rec("u", "我喜欢喝绿茶", language="zh")
    added(store, english, chinese)
    scope = Scope("u")
    store.lexical_search(scope, words("tea"), Filters(), 5)  # the user's index is loaded
    known = store.languages(scope, [english.item.id, chinese.item.id, "nope"])
    assert known in ({}, {english.item.id: "en", chinese.item.id: "zh"})
    if not known:
        return
    english.item.content, english.item.language = "我也喜欢红茶", "zh"
    store.write(updates=[make_record(english.item, embedding=unit(0, 1))],
                events=[HistoryEvent.of(english.item, "UPDATE", english.item.content, "edit")])
    assert store.languages(scope, [english.item.id]) == {english.item.id: "zh"}
    store.close()
    again = store_factory()
    again.lexical_search(scope, words("红茶"), Filters(), 5)
    assert again.languages(scope, [english.item.id, chinese.item.id]) == {english.item.id: "zh", chinese.item.id: "zh"}


def test_searches_see_updates_and_status_changes(store):
    record = rec("u", "likes jazz", unit(1, 0))
    added(store, record)
    record.item.content = "likes blues"
    updated = make_record(record.item, embedding=unit(0, 1))
    store.write(updates=[updated], events=[HistoryEvent.of(record.item, "UPDATE", "likes blues", "edit")])
    scope = Scope("u")
    assert ids(store.lexical_search(scope, words("jazz"), Filters(), 5)) == []
    assert ids(store.lexical_search(scope, words("blues"), Filters(), 5)) == [record.item.id]
    assert store.dense_search(scope, unit(0, 1), Filters(), 1)[0][1] == pytest.approx(1.0, abs=1e-4)
    store.transition([Transition(record.item.id, "archived", "ARCHIVE", "old", utcnow())])
    assert ids(store.lexical_search(scope, words("blues"), Filters(), 5)) == []
    assert ids(store.lexical_search(scope, words("blues"), Filters(status=["archived"]), 5)) == [record.item.id]


def test_another_connection_sees_every_write_in_its_searches(store, store_factory):
    other = store_factory()
    added(store, rec("u", "first note about sailing"))
    assert len(other.lexical_search(Scope("u"), words("sailing"), Filters(), 5)) == 1  # its index is built now
    version = other.user_version("u")
    second = added(store, rec("u", "second note about sailing", unit(0, 1)))[0]
    assert other.user_version("u") != version
    assert len(other.lexical_search(Scope("u"), words("sailing"), Filters(), 5)) == 2
    assert ids(other.dense_search(Scope("u"), unit(0, 1), Filters(), 1)) == [second]
    store.delete([second], [])
    assert len(other.lexical_search(Scope("u"), words("sailing"), Filters(), 5)) == 1


def test_access_is_counted_and_does_not_change_the_user_version(store, store_factory):
    first = added(store, rec("u", "a note"))[0]
    version = store.user_version("u")
    at = utcnow()
    store.record_access([first, first], at)
    assert store.get(first).access_count == 2
    store.close()
    again = store_factory()
    assert again.get(first).access_count == 2
    assert again.user_version("u") == version


# -- history ------------------------------------------------------------------------------------
def test_history_keeps_every_event_in_order(store):
    record = rec("u", "likes jazz")
    added(store, record)
    store.write(events=[HistoryEvent.of(record.item, "UPDATE", "likes blues", "edit", old_content="likes jazz")])
    entries = store.history(record.item.id)
    assert [(e.action, e.new_content) for e in entries] == [("ADD", "likes jazz"), ("UPDATE", "likes blues")]
    assert [e.action for e in store.user_history("u")] == ["ADD", "UPDATE"]
    assert store.user_history("other") == []


# -- atomic multi-row writes ---------------------------------------------------------------------
def test_atomic_writes_land_whole_or_not_at_all(store):
    with pytest.raises(RuntimeError):
        with store.atomic():
            added(store, rec("u", "one"))
            store.set_state("u", "paused", "1", utcnow())
            raise RuntimeError("stop")
    assert store.count(Scope("u"), ALL) == 0 and store.get_state("u", "paused") is None
    assert store.lexical_search(Scope("u"), words("one"), Filters(), 5) == []
    with store.atomic():
        with store.section(Scope("u")):  # reentrant inside a transaction
            added(store, rec("u", "two"))
        added(store, rec("u", "three"))
    assert store.count(Scope("u"), ALL) == 2
    assert len(store.lexical_search(Scope("u"), words("three"), Filters(), 5)) == 1


def test_an_update_of_an_unknown_memory_writes_nothing(store):
    ghost = rec("u", "ghost")
    with pytest.raises(StoreError):
        store.write(inserts=[rec("u", "real")], updates=[ghost])
    assert store.count(Scope("u"), ALL) == 0


def test_guarded_transitions_apply_only_to_what_was_seen(store):
    a, b = rec("u", "a"), rec("u", "b")
    added(store, a, b)
    now = utcnow()
    assert store.transition([Transition(a.item.id, "archived", "ARCHIVE", "x", now, from_status=("disputed",))]) == []
    fail = TransitionGroup([Transition(a.item.id, "archived", "ARCHIVE", "x", now),
                            Transition(b.item.id, "archived", "ARCHIVE", "x", now, from_status=("disputed",))],
                           inserts=[rec("u", "summary")], atomic=True)
    ok = TransitionGroup([Transition(b.item.id, "superseded", "SUPERSEDE", "y", now, fields={"superseded_by": a.item.id},
                                     metadata={"pinned": True})])
    assert store.transition_groups([fail, ok]) == [[], [b.item.id]]
    assert store.get(a.item.id).status is Status.ACTIVE and store.count(Scope("u"), ALL) == 2
    changed = store.get(b.item.id)
    assert (changed.status, changed.superseded_by, changed.metadata) == (Status.SUPERSEDED, a.item.id, {"pinned": True})
    assert [e.action for e in store.history(b.item.id)] == ["ADD", "SUPERSEDE"]
    stale = Transition(a.item.id, "archived", "ARCHIVE", "x", now, guard=True,
                       seen_updated_at=now - timedelta(days=1), seen_last_accessed=None)
    assert store.transition([stale]) == []
    rows = store.lifecycle_rows(Scope("u"), ["superseded"])
    assert [(r.id, r.pinned) for r in rows] == [(b.item.id, True)]
    assert {r.id for r in store.item_rows(Scope("u"), ["active", "superseded"])} == {a.item.id, b.item.id}


def test_derived_from_finds_summaries_by_source(store):
    a = rec("u", "a")
    summary = rec("u", "sum", sources=[a.item.id])
    added(store, a, summary, rec("v", "other", sources=[a.item.id]))
    assert ids(store.derived_from(Scope("u"), [a.item.id])) == [summary.item.id]


# -- deletion that really deletes -----------------------------------------------------------------
def test_deletion_removes_rows_vectors_tokens_and_quoted_text(store, store_factory):
    gone, keeper = rec("u", "my password is swordfish", unit(1, 0)), rec("u", "keep this", unit(0, 1))
    added(store, gone, keeper)
    store.write(events=[HistoryEvent.of(keeper.item, "SUPERSEDE", "keep this", "swordfish replaced",
                                        old_content="my password is swordfish", related_id=gone.item.id)])
    store.delete([gone.item.id], [HistoryEvent(gone.item.id, "u", "DELETE", None, None, "", utcnow())])
    for reader in (store, store_factory()):
        assert reader.get(gone.item.id) is None and reader.embeddings([gone.item.id]) == {}
        assert reader.lexical_search(Scope("u"), words("swordfish"), ALL, 5) == []
        assert ids(reader.dense_search(Scope("u"), unit(1, 0), ALL, 5)) == [keeper.item.id]
        text = " ".join(f"{e.old_content} {e.new_content} {e.reason}" for e in reader.user_history("u"))
        assert "swordfish" not in text
    assert [e.action for e in store.history(gone.item.id)] == ["ADD", "DELETE"]


def test_deleting_a_scope_removes_its_sessions_turns_and_jobs(store):
    now = utcnow()
    added(store, rec("u", "one"), rec("u", "two", agent="bot"), rec("w", "three"))
    store.turns_append(Scope("u"), "s1", [TurnRecord("user", "hello", 1, now)], 100, touched_at=now)
    store.jobs_add("add", Scope("u"), "s1", '{"text": "hello"}', state="queued", at=now)
    store.jobs_add("add", Scope("w"), None, "{}", state="queued", at=now)
    assert store.delete_scope(Scope("u"), now) == 2
    assert store.count(Scope("u"), ALL) == 0 and store.count(Scope("w"), ALL) == 1
    assert store.turns_rows(Scope("u")) == [] and store.session_list(Scope("u"), open_only=False) == []
    assert [j.user_id for j in store.jobs_list(["queued"])] == ["w"]
    store.reset()
    assert store.count(Scope("w"), ALL) == 0 and store.user_ids() == []


# -- sessions, turns and state ---------------------------------------------------------------------
def test_sessions_open_end_once_and_keep_their_newest_turns(store):
    t0 = utcnow()
    scope = Scope("u", "bot")
    opened = store.session_touch(scope, "s1", t0)
    assert isinstance(opened, SessionRecord) and opened.ended_at is None and opened.agent_id == "bot"
    store.session_touch(scope, "s2", t0 + timedelta(minutes=5))
    assert [s.session_id for s in store.session_list(scope)] == ["s2", "s1"]
    assert [s.session_id for s in store.session_list(scope, idle_before=t0 + timedelta(minutes=1))] == ["s1"]
    assert store.session_end(scope, "s1", t0, "idle") is True
    assert store.session_end(scope, "s1", t0, "idle") is False
    assert [s.session_id for s in store.session_list(scope)] == ["s2"]
    turns = [TurnRecord("user", f"turn {n}", 10, t0 + timedelta(seconds=n)) for n in range(5)]
    store.turns_append(scope, "s2", turns, keep_tokens=30)
    assert [t.content for t in store.turns_list(scope, "s2")] == ["turn 2", "turn 3", "turn 4"]
    assert [t.content for t in store.turns_list(scope, "s2", last=2)] == ["turn 3", "turn 4"]  # the latest, in order
    rows = store.turns_rows(Scope("u"))
    store.turns_delete(Scope("u"), [rows[0][0]])
    assert [t.content for t in store.turns_list(scope, "s2")] == ["turn 3", "turn 4"]
    store.session_finish(scope, "s2", summary_id="m1", compressed_at=t0)
    finished = store.session_get(scope, "s2")
    assert finished.summary_id == "m1" and store.turns_list(scope, "s2") == []
    assert store.session_touch(scope, "s1", t0 + timedelta(hours=1)).ended_at is None  # reopened


def test_per_user_state_is_set_read_and_unset(store, store_factory):
    store.set_state("u", "timezone", "Asia/Shanghai", utcnow())
    assert store_factory().get_state("u", "timezone") == "Asia/Shanghai"
    assert store.get_state("v", "timezone") is None
    store.set_state("u", "timezone", None, utcnow())
    assert store.get_state("u", "timezone") is None


# -- the durable job queue ------------------------------------------------------------------------
def test_the_job_queue_runs_one_job_per_user_at_a_time_and_survives_reopening(store, store_factory):
    now = utcnow()
    first = store.jobs_add("add", Scope("u"), None, "{}", state="queued", at=now)
    store.jobs_add("add", Scope("u"), None, "{}", state="queued", at=now)
    third = store.jobs_add("add", Scope("v"), None, "{}", state="queued", at=now)
    store.close()
    queue = store_factory()
    assert queue.jobs_count(["queued"]) == 3
    job = queue.jobs_claim("w1", now)
    assert (job.id, job.state, job.attempts) == (first, "running", 1)
    assert queue.jobs_claim("w2", now).id == third  # u has one running
    assert queue.jobs_claim("w3", now) is None
    queue.jobs_retry(first, "boom", now - timedelta(seconds=1))
    assert queue.jobs_requeue(queue.jobs_list(["running"])) == 1
    assert {j.id for j in queue.jobs_list(["queued"], user_id="u")} >= {first}
    queue.jobs_fail(first, "gave up")
    assert [j.error for j in queue.jobs_list(["failed"])] == ["gave up"]
    queue.jobs_finish(first)
    assert queue.jobs_list(["failed"]) == []


def test_waiting_turns_are_gathered_into_one_batch(store):
    now = utcnow()
    for n in range(3):
        store.jobs_add("turn", Scope("u"), "s1", f'"{n}"', state="waiting", at=now)
    assert store.jobs_waiting_groups() == [("u", None, "s1")]
    assert store.jobs_gather(Scope("u"), "s1", min_count=4, at=now, combine=lambda js: "x") is None
    batch = store.jobs_gather(Scope("u"), "s1", min_count=2, at=now,
                              combine=lambda js: ",".join(j.payload for j in js))
    jobs = store.jobs_list(["queued", "waiting"])
    assert [(j.id, j.kind, j.payload) for j in jobs] == [(batch, "batch", '"0","1","2"')]


# -- vectors of another embedder ---------------------------------------------------------------------
def test_vectors_of_another_embedder_are_found(store):
    a = rec("u", "a", embedding_model="m1")
    b = rec("u", "b", embedding_model="m2")
    added(store, a, b)
    assert store.vector_makers() == {("m1", DIM), ("m2", DIM)}
    assert store.stale_vectors("m2", DIM, 10) == [a.item.id]
    assert store.count_stale_vectors("m2", DIM) == 1
    assert store.texts([a.item.id]) == {a.item.id: ("fact", "a")}
    assert set(store.signals([a.item.id, b.item.id])) == {a.item.id, b.item.id}


# -- concurrent writers ---------------------------------------------------------------------------------
def test_threads_writing_for_different_users_see_only_their_own(store):
    def write(user: str) -> None:
        for n in range(10):
            added(store, rec(user, f"{user} note {n} about kites", unit(1, n)))
            assert all(store.get(i).user_id == user for i in ids(store.lexical_search(Scope(user), words("kites"), Filters(), 50)))

    threads = [threading.Thread(target=write, args=(f"user{k}",)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        hits = store.lexical_search(Scope(f"user{k}"), words("kites"), Filters(), 50)
        assert len(hits) == 10 and {store.get(i).user_id for i in ids(hits)} == {f"user{k}"}


def test_processes_writing_at_once_lose_nothing_and_cross_no_user(store, store_target):
    if one_process_only(store_target):
        pytest.skip(one_process_only(store_target))
    store.count(Scope("warm"), ALL)  # the schema exists before they race
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(3)
    workers = [context.Process(target=write_user, args=(store_target, f"p{k}", 15, start)) for k in range(3)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(120)
        assert w.exitcode == 0
    for k in range(3):
        hits = store.lexical_search(Scope(f"p{k}"), words("harbour"), Filters(), 100)
        assert len(hits) == 15 and {store.get(i).user_id for i in ids(hits)} == {f"p{k}"}
        assert store.count(Scope(f"p{k}"), ALL) == 15



# -- the REST server's keys ------------------------------------------------------------------
def test_api_keys_and_shared_secrets(store, store_factory):
    now = utcnow()
    store.api_key_insert({"id": "k1", "secret_hash": "h", "user_id": "u", "admin": False, "name": "ci", "created_at": now})
    store.api_key_insert({"id": "k0", "secret_hash": "h0", "user_id": None, "admin": True, "name": None, "created_at": now})
    assert store.api_key_get("k1")["user_id"] == "u" and store.api_key_get("k0")["admin"] is True
    assert {k["id"] for k in store.api_key_list()} == {"k0", "k1"}
    assert store.api_key_revoke("k1", now) is True and store.api_key_revoke("k1", now) is False
    assert store.api_key_get("k1")["revoked_at"] is not None and store.api_key_get("nope") is None
    secret = store.service_secret("web")
    assert len(secret) == 64 and store_factory().service_secret("web") == secret
