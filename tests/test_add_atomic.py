"""One `add` is one transaction (engram.write `Writer.one_write`): the episode, every fact drawn
from it and the session's turns land together or not at all, so a failure half-way through a
message leaves nothing behind that a retry would then duplicate."""

from __future__ import annotations

import threading

import pytest

from engram.models import Kind
from engram.store.base import Scope, StoreFull

TWO_FACTS = "I live in Lisbon and I work as a nurse."


def test_a_message_with_two_facts_keeps_them_with_its_episode_and_session_turn(memory):
    memory.add([{"role": "assistant", "content": "Tell me about yourself."}, {"role": "user", "content": TWO_FACTS}],
               user_id="u1", session_id="s1")
    kept = memory.get_all(user_id="u1", limit=None)
    assert sorted(m.kind is Kind.TURN for m in kept) == [False, False, True]  # two facts and the episode
    assert [t.content for t in memory.sessions.turns(Scope("u1"), "s1")][-1] == TWO_FACTS


def test_a_failure_half_way_through_a_message_leaves_nothing_of_it(memory, monkeypatch):
    memory.add("I drink green tea in the evening.", user_id="u1", session_id="s1")
    before = {m.id for m in memory.get_all(user_id="u1", limit=None)}
    real, calls = memory.store.write, []

    def full_on_the_second_fact(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:  # the episode and the first fact are written; the second fact is not
            raise StoreFull("no space left (simulated): nothing was written")
        return real(*args, **kwargs)

    monkeypatch.setattr(memory.store, "write", full_on_the_second_fact)
    with pytest.raises(StoreFull):
        memory.add(TWO_FACTS, user_id="u1", session_id="s1")
    monkeypatch.setattr(memory.store, "write", real)
    assert len(calls) == 3
    assert {m.id for m in memory.get_all(user_id="u1", limit=None)} == before
    assert all("Lisbon" not in h.memory.content for h in memory.search("where do I live?", user_id="u1"))
    memory.add(TWO_FACTS, user_id="u1", session_id="s1")  # the retry keeps each once
    kept = memory.get_all(user_id="u1", limit=None)
    assert [m.content for m in kept if m.kind is Kind.TURN].count(TWO_FACTS) == 1
    facts = [m.content for m in kept if m.kind is not Kind.TURN and m.id not in before]
    assert len(facts) == 2 and any("Lisbon" in f for f in facts) and any("nurse" in f for f in facts)


class WatchedLock:
    """A session's lock that says when someone waits for it."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.waiting = threading.Event()

    def __enter__(self) -> WatchedLock:
        self.waiting.set()
        self.lock.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.lock.release()


def test_a_goodbye_ends_its_session_after_the_add_committed_so_no_writer_waits_on_it(memory):
    memory.add("I drink green tea in the evening.", user_id="u1", session_id="s1")
    watched = WatchedLock()
    memory.sessions._locks[("u1", "s1")] = watched
    watched.lock.acquire()  # as a thread ending the session holds it while it writes
    try:
        bye = threading.Thread(target=memory.add, args=("Goodbye!",), kwargs={"user_id": "u1", "session_id": "s1"})
        bye.start()
        assert watched.waiting.wait(10)  # the goodbye waits for the session's lock ...
        other = threading.Thread(target=memory.add, args=("I like cats.",), kwargs={"user_id": "u2"})
        other.start()
        other.join(10)
        assert not other.is_alive()  # ... holding no writers' lock: other writes go on
    finally:
        watched.lock.release()
    bye.join(10)
    assert not bye.is_alive()
    assert memory.sessions.store.session_get(Scope("u1"), "s1").ended_at is not None
