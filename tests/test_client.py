"""`MemoryClient` behaves as `Memory`: the same tests, run against the library in process and
against a real uvicorn server on 127.0.0.1 (an admin key, so every user is reachable)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from engram import Action, InvalidInput, Kind, MemoryItem, NotFound, Status
from engram.capsule import Capsule, Context
from engram.client import AsyncMemoryClient, MemoryClient, RemoteError
from engram.service.app import create_app
from engram.service.keys import KeyStore
from helpers import facts
from service_server import LiveServer

WED = datetime(2025, 1, 8, 10, tzinfo=UTC)
FRI = datetime(2025, 1, 10, 9, tzinfo=UTC)


@pytest.fixture(scope="module")
def served(tmp_path_factory, embedder):
    """One server for the module, over its own store (each test uses its own users)."""
    from engram import Memory

    with Memory(tmp_path_factory.mktemp("srv") / "engram.db", embedder=embedder) as memory:
        _, secret = KeyStore(memory.store).create(None, admin=True)
        with LiveServer(create_app(memory)) as url:
            yield memory, url, secret


@pytest.fixture(params=["memory", "client"])
def mem(request, served):
    memory, url, secret = served
    if request.param == "memory":
        yield memory
        return
    with MemoryClient(url, api_key=secret) as client:
        yield client


@pytest.fixture
def user(request):
    """A user id of this test alone (the module shares one store)."""
    return "u-" + request.node.name.replace("[", "-").rstrip("]")


def test_add_search_get_update_history_delete(mem, user):
    [event] = facts(mem.add("I live in Berlin.", user_id=user))
    assert event.action is Action.ADD and isinstance(event.memory, MemoryItem)
    [hit] = facts(mem.search("where do I live?", user_id=user))
    assert hit.memory.id == event.memory.id and 0 < hit.relevance <= 1 and hit.parts.fused > 0
    assert mem.get(event.memory.id).content == event.memory.content
    edited = mem.update(event.memory.id, "User lives in Potsdam.")
    assert edited.action is Action.UPDATE and mem.get(event.memory.id).content == "User lives in Potsdam."
    assert [h.action for h in mem.history(event.memory.id)] == ["ADD", "UPDATE"]
    assert mem.delete(event.memory.id).action is Action.DELETE
    with pytest.raises(NotFound):
        mem.get(event.memory.id)
    assert mem.history(event.memory.id)[-1].action == "DELETE"


def test_lists_counts_filters_and_views(mem, user):
    mem.add("I love green tea.", user_id=user)
    mem.add("I am a nurse.", user_id=user, metadata={"src": "intake"})
    listed = mem.get_all(user_id=user, limit=None)
    assert mem.count(user_id=user) == len(listed) == 4  # two facts, two episodes
    turns = mem.get_all(user_id=user, filters={"kind": ["turn"]})
    assert len(turns) == 2 == mem.count(user_id=user, filters={"kind": "turn"})
    assert [m.content for m in mem.get_all(user_id=user, limit=1, offset=0)] == [listed[0].content]
    assert set(mem.view(user_id=user)) >= {Kind.TURN}
    with pytest.raises(InvalidInput):
        mem.get_all(user_id=user, filters={"nope": 1})


def test_verbatim_idempotent_and_background_adds(mem, user):
    first = mem.add("remember this verbatim", user_id=user, infer=False, idempotency_key="k1")
    again = mem.add("remember this verbatim", user_id=user, infer=False, idempotency_key="k1")
    assert [e.action for e in again] == [Action.NOOP] and again[0].memory.id == first[0].memory.id
    assert mem.add("I drive a blue car.", user_id=user, background=True) == []
    assert mem.flush(30) is True
    assert any("blue car" in m.content for m in mem.get_all(user_id=user))
    bulk = mem.add_many([{"messages": f"bulk note {i}", "user_id": user} for i in range(3)])
    assert [e.action for e in bulk] == [Action.ADD] * 3


def test_deleting_by_kind_all_and_forgetting(mem, user):
    mem.add("I live in Lisbon.", user_id=user)
    mem.add("I love sardines.", user_id=user)
    would = mem.forget("sardines", user_id=user, dry_run=True)
    assert would and all(isinstance(m, MemoryItem) for m in would)
    gone = mem.forget("sardines", user_id=user)
    assert {e.action for e in gone} == {Action.DELETE}
    assert not any("sardines" in m.content for m in mem.get_all(user_id=user))
    by_kind = mem.delete_by_kind("turn", user_id=user)
    assert by_kind and all(e.memory.kind is Kind.TURN for e in by_kind)
    with pytest.raises(InvalidInput):
        mem.delete_by_kind("nonsense", user_id=user)
    assert mem.delete_all(user_id=user) >= 1 and mem.count(user_id=user) == 0


def test_pause_and_resume(mem, user):
    mem.pause(user)
    assert mem.is_paused(user) and mem.add("I live in Oslo.", user_id=user) == []
    mem.resume(user)
    assert not mem.is_paused(user) and facts(mem.add("I live in Oslo.", user_id=user))


def test_disputes_ask_and_resolve(mem, user):
    old = mem.add("I love coffee.", user_id=user)[0].memory
    new = mem.add("I hate coffee.", user_id=user)[0]
    assert new.action is Action.DISPUTE
    [clar] = mem.clarifications(user_id=user)
    assert clar.memory_ids == [old.id, new.memory.id] and "coffee" in clar.question
    events = mem.resolve(new.memory.id, keep="this")
    assert {e.action for e in events} <= {Action.RESOLVE, Action.SUPERSEDE}
    assert mem.get(old.id).status is Status.SUPERSEDED and mem.clarifications(user_id=user) == []
    with pytest.raises(InvalidInput):
        mem.resolve(old.id, keep="both")


def test_capsule_context_sessions_and_compress(mem, user):
    mem.add("我住在北京", user_id=user)
    mem.add("I prefer short answers.", user_id=user)
    capsule = mem.capsule(user)
    assert isinstance(capsule, Capsule) and "北京" in capsule.text and 0 < capsule.token_count <= capsule.budget
    context = mem.context("where do I live?", user_id=user)
    assert isinstance(context, Context) and "北京" in context.text
    session = mem.session(user)
    session.add([{"role": "user", "content": "I am planning a trip to Kyoto."},
                 {"role": "assistant", "content": "Nice!"}])
    assert [t.role for t in session.turns()] == ["user", "assistant"]
    delta = session.end()
    assert delta.session_id == session.session_id and mem.end_session(user, session.session_id).already_ended
    assert mem.compress(user).user_id == user


def test_reminders_and_complete(mem, user):
    [event] = facts(mem.add("Every Friday I send the weekly report.", user_id=user, timestamp=WED))
    [due] = mem.reminders(user_id=user, now=FRI)
    assert due.memory.id == event.memory.id and due.recurring
    assert mem.reminders(user_id=user, now=WED, horizon=timedelta(hours=1)) == []
    assert mem.complete(event.memory.id, now=FRI).action is Action.UPDATE


def test_export_import_and_maintain(mem, user):
    mem.add("I am allergic to peanuts.", user_id=user)
    data = mem.export(user_id=user)
    assert data["format"] == "engram" and data["memories"]
    report = mem.import_(data, user_id=user + "-copy")
    assert report.added == len(data["memories"])
    assert mem.count(user_id=user + "-copy") == mem.count(user_id=user)
    assert mem.maintain(user).users == 1
    mem.set_timezone(user, "Asia/Shanghai")
    assert str(mem.timezone(user)) == "Asia/Shanghai"


def test_bad_input_raises_the_same_errors(mem, user):
    for call in (lambda: mem.search("", user_id=user), lambda: mem.add("hi", user_id=" x"),
                 lambda: mem.search("q", user_id=user, limit=0), lambda: mem.update("nope")):
        with pytest.raises(InvalidInput):
            call()
    with pytest.raises(NotFound):
        mem.delete("no-such-id")
    with pytest.raises(NotFound):
        mem.history("no-such-id")


def test_the_client_reports_auth_and_reachability(served):
    _, url, _ = served
    with MemoryClient(url, api_key="egk_wrong") as client, pytest.raises(RemoteError) as denied:
        client.count(user_id="x")
    assert denied.value.status == 401
    with MemoryClient("http://127.0.0.1:9", api_key="x", timeout=2) as client, pytest.raises(RemoteError) as down:
        client.count(user_id="x")
    assert down.value.status == 0


def test_the_async_client_awaits_the_same_calls(served, user):
    _, url, secret = served

    async def run():
        async with AsyncMemoryClient(url, api_key=secret) as client:
            await client.add("I live in Rome.", user_id=user)
            found, counted = await asyncio.gather(client.search("where?", user_id=user), client.count(user_id=user))
            async with await client.session(user) as session:
                await session.add("I am learning Italian.")
                assert [t.content for t in await session.turns()] == ["I am learning Italian."]
            assert (await client.end_session(user, session.session_id)).already_ended  # the block ended it
            return found, counted

    found, counted = asyncio.run(run())
    assert "Rome" in facts(found)[0].memory.content and counted == 2


def test_the_readme_client_example_runs_against_a_server(served, tmp_path):
    """README's ```py block of the REST section, as written, with $ENGRAM_URL and $ENGRAM_API_KEY."""
    import os
    import re
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    section = (root / "README.md").read_text(encoding="utf-8").split("## REST server and web manager", 1)[1]
    [block] = re.findall(r"^```py\n(.*?)^```", section.split("\n## ", 1)[0], re.S | re.M)
    _, url, secret = served
    env = {**os.environ, "ENGRAM_URL": url, "ENGRAM_API_KEY": secret, "PYTHONPATH": str(root)}
    done = subprocess.run([sys.executable, "-c", block], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "User lives in Berlin."


def test_graph(mem, user):
    mem.add("My wife Anna works at Google.", user_id=user)
    g = mem.graph(user)
    names = {e.id: e.name for e in g.entities}
    assert ("Anna", "works_at", "Google") in {(names[r.source], r.relation, names[r.target]) for r in g.relations}
