"""`delete(id)` deletes exactly that memory and what derives from it: queued work and
working-memory turns that merely share words with it survive (issue 13, item 5)."""

from __future__ import annotations

import json

from engram import Memory
from engram.models import utcnow
from engram.store.base import Scope


def queue_background_add(memory: Memory, user_id: str, text: str) -> None:
    """An acknowledged `add(background=True)` still waiting in the durable queue."""
    payload = {
        "messages": [{"role": "user", "content": text}], "user_id": user_id, "agent_id": None,
        "session_id": None, "metadata": {}, "infer": True, "timestamp": utcnow().isoformat(),
        "idempotency_key": None,
    }
    memory.store.jobs_add("add", Scope(user_id), None, json.dumps(payload), state="queued", at=utcnow())


def test_delete_keeps_a_queued_add_of_a_similar_sentence(db_path, embedder) -> None:
    with Memory(db_path, embedder=embedder) as memory:
        doomed = memory.add("I love Ethiopian coffee in the morning.", user_id="u1")[0].memory
        queue_background_add(memory, "u1", "I love Kenyan coffee in the morning.")
        memory.delete(doomed.id)
        queued = memory.store.jobs_list(["queued"], user_id="u1")
        assert [json.loads(j.payload)["messages"][0]["content"] for j in queued] == [
            "I love Kenyan coffee in the morning."
        ]
    with Memory(db_path, embedder=embedder) as memory:  # a restart runs what was queued
        assert memory.flush(30)
        contents = [m.content for m in memory.get_all(user_id="u1")]
        assert any("Kenyan" in c for c in contents) and not any("Ethiopian" in c for c in contents)


def test_delete_keeps_working_memory_turns_that_only_share_words(memory: Memory) -> None:
    memory.add("I love Ethiopian coffee in the morning.", user_id="u1", session_id="s1")
    memory.add("I love Kenyan coffee in the morning.", user_id="u1", session_id="s1", infer=False)
    doomed = next(m for m in memory.get_all(user_id="u1") if "Ethiopian" in m.content and m.kind.value != "turn")
    memory.delete(doomed.id)
    turns = [t.content for t in memory.session("u1", "s1").turns()]
    assert "I love Kenyan coffee in the morning." in turns


def test_delete_of_a_verbatim_turn_removes_its_working_memory_copy(memory: Memory) -> None:
    event = memory.add("My locker code is on the blue note.", user_id="u1", session_id="s1", infer=False)[0]
    memory.add("My locker is on the second floor.", user_id="u1", session_id="s1", infer=False)
    memory.delete(event.memory.id)
    turns = [t.content for t in memory.session("u1", "s1").turns()]
    assert turns == ["My locker is on the second floor."]
