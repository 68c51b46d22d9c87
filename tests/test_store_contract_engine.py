"""The engine end to end on every backend (tests/store_backends.py): `Memory(store=URL)` adds,
searches, updates, deletes, keeps history, runs sessions and the capsule, and reconciles
one user's concurrent writers to one current value, the same way whatever stores it."""

from __future__ import annotations

import multiprocessing

import pytest

from engram import Memory
from helpers import facts
from store_backends import one_process_only, store_target  # noqa: F401 - fixture
from store_contract_workers import say_city


@pytest.fixture
def memory(store_target, embedder):
    with Memory(store=store_target, embedder=embedder) as m:
        yield m


def test_add_search_update_delete_and_history(memory):
    added = facts(memory.add("I live in Berlin and I love green tea", user_id="alice"))
    memory.add("I live in Paris", user_id="bob")
    assert added
    hits = memory.search("where does she live?", user_id="alice")
    assert hits and all(h.memory.user_id == "alice" for h in hits)
    assert any("Berlin" in h.memory.content for h in hits)
    target = next(e.memory for e in added if "Berlin" in e.memory.content)
    memory.update(target.id, "I live in Munich")
    assert memory.get(target.id).content == "I live in Munich"
    assert any("Munich" in h.memory.content for h in memory.search("Munich", user_id="alice"))
    memory.delete(target.id)
    assert all(h.memory.id != target.id for h in memory.search("Munich", user_id="alice"))
    assert [h.action for h in memory.history(target.id)][-1] == "DELETE"
    assert all(h.memory.user_id == "bob" for h in memory.search("Paris", user_id="bob"))


def test_a_new_fact_supersedes_the_old_one(memory):
    memory.add("I live in Berlin", user_id="carol")
    memory.add("I moved to Lisbon", user_id="carol")
    live = [m.content for m in facts(memory.get_all(user_id="carol"))]
    assert any("Lisbon" in c for c in live) and not any("Berlin" in c for c in live)


def test_a_fact_said_again_lists_both_turns_and_a_booking_the_assistant_made_is_due(memory):
    memory.add("I practice taekwondo.", user_id="gus", session_id="s1")
    memory.add("I practice taekwondo.", user_id="gus", session_id="s2")
    (fact,) = facts(memory.get_all(user_id="gus"))
    assert [e.session_id for e in memory.provenance(fact.id)] == ["s1", "s2"]
    memory.add([{"role": "user", "content": "Can you book me a dentist appointment?"},
                {"role": "assistant", "content": "Done: I booked your dentist appointment for Thursday at 10am."}],
               user_id="gus")
    (task,) = [m for m in facts(memory.get_all(user_id="gus")) if m.kind.value == "task"]
    assert task.due_at is not None and [e.metadata["role"] for e in memory.provenance(task.id)] == ["assistant"]


def test_sessions_and_the_capsule(memory):
    session = memory.session("dave", "s1")
    for line in ["I prefer reports in Markdown.", "I live in Berlin.", "I moved to Lisbon."]:
        session.add(line)
    delta = session.end()
    assert "Lisbon" in delta.text and "Berlin" not in delta.text
    capsule = memory.capsule("dave")
    assert "Markdown" in capsule.text
    assert memory.store.session_get(_scope("dave"), "s1").ended_at is not None


def test_deleting_a_user_leaves_nothing_of_theirs(memory):
    memory.add("My bank PIN is 4711", user_id="erin", infer=False)
    memory.session("erin", "s1").add("remember the boat")
    memory.add("I like boats", user_id="frank")
    memory.delete_all(user_id="erin")
    assert memory.get_all(user_id="erin") == [] and memory.search("boat", user_id="erin") == []
    assert memory.store.turns_rows(_scope("erin")) == []
    assert memory.get_all(user_id="frank")


def test_processes_saying_where_they_live_leave_one_current_value(store_target, embedder):
    if one_process_only(store_target):
        pytest.skip(one_process_only(store_target))
    Memory(store=store_target, embedder=embedder).close()  # the schema exists before they race
    context = multiprocessing.get_context("spawn")
    cities = ["Berlin", "Paris", "Madrid", "Lisbon"]
    start = context.Barrier(len(cities))
    workers = [context.Process(target=say_city, args=(store_target, "gina", c, start)) for c in cities]
    for w in workers:
        w.start()
    for w in workers:
        w.join(180)
        assert w.exitcode == 0
    with Memory(store=store_target, embedder=embedder) as memory:
        places = [m for m in facts(memory.get_all(user_id="gina", filters={"status": []}, limit=None))
                  if any(c in m.content for c in cities)]
        assert len(places) == len(cities)
        assert len([m for m in places if m.status.value == "active"]) == 1
        successors = [m.superseded_by for m in places if m.status.value == "superseded"]
        assert len(successors) == len(cities) - 1 and len(set(successors)) == len(successors)


def _scope(user_id: str):
    from engram.store.base import Scope

    return Scope(user_id)
