"""The entity graph travels with export and import (issue #18 item 3): restored as it was (merges,
confirmed aliases, relations with their reasons, the trace) on every backend; a tampered file is
refused whole; an import never touches another user's graph; a file without a graph section
still gets one rebuilt from its memories."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime

import pytest

from engram import InvalidInput, Memory
from engram.migrate import migrate
from engram.store.graph import EntityRow
from engram.store.open import open_store
from store_backends import BACKENDS, Unavailable, postgres_target, store_target  # noqa: F401 - fixture

AT = datetime(2026, 6, 1, 9, tzinfo=UTC)


def fill(memory: Memory, user: str = "alice") -> None:
    """A graph with what the memories alone cannot give again: "my wife" merged into Anna, a
    split with its trace, Chinese names written two ways."""
    first = memory.add("My wife loves Paris.", user_id=user, infer=False)[0].memory
    memory.add("My wife Anna works at Google.", user_id=user, infer=False)
    memory.add("张三是甲公司的联系人。", user_id=user, infer=False)
    memory.add("張三下周去甲公司。", user_id=user, infer=False)
    anna = next(e.id for e in memory.graph(user).entities if e.name == "Anna")
    memory.store.graph_split(user, anna, EntityRow("ent_split_paris", user, "Paris fan", "person", AT), [],
                             [first.id], "the Paris fan is someone else", AT)


def by_name(memory: Memory, user: str) -> tuple[dict, set, list]:
    return by_name_of(memory.graph(user))


def by_name_of(graph) -> tuple[dict, set, list]:
    """The graph as a person reads it (names, not ids): entities, relations, trace."""
    name = {e.id: e.name for e in graph.entities}
    return ({e.name: (e.type, tuple(e.aliases), len(e.memories)) for e in graph.entities},
            {(name[r.source], r.relation, name[r.target], r.reason) for r in graph.relations},
            [(h.action, name.get(h.entity), h.detail) for h in graph.history])


def other_store(request, tmp_path) -> str:
    """A second fresh store of the test's backend."""
    folder = tmp_path / "other"
    folder.mkdir()
    return BACKENDS[request.node.callspec.params["store_target"]](folder)


def test_export_then_import_into_a_fresh_store_gives_the_same_graph(store_target, request, tmp_path, embedder):
    path = tmp_path / "alice.json"
    with Memory(store=store_target, embedder=embedder) as m:
        fill(m)
        before = m.graph("alice")
        m.export(user_id="alice", path=path)
    section = json.loads(path.read_text(encoding="utf-8"))["graph"]
    assert section["version"] == 1 and "张三" in path.read_text(encoding="utf-8")  # readable, not \u-escaped
    with Memory(store=other_store(request, tmp_path), embedder=embedder) as o:
        report = o.import_(path)
        after = o.graph("alice")
    assert after == before  # ids, names, types, aliases, memories, relations with reasons, the trace and its times
    assert report.entities == len(section["entities"]) > 0
    entities, relations, trace = by_name_of(after)
    assert "my wife" in entities["Anna"][1] and ("user", "wife", "Anna", "My wife Anna") in relations  # the merge
    assert ("张三", "contact_of", "甲公司", "张三是甲公司的联系人") in relations and "張三" not in entities
    assert [a for a, _, _ in trace].count("MERGE") == 1 and ("SPLIT", "Paris fan", "split off: the Paris fan is"
                                                             " someone else") in trace


def test_the_llms_typed_entities_and_relations_come_back_with_their_reasons(llm_memory, fake_llm, tmp_path, embedder):
    fake_llm.reply_json({"memories": [{
        "content": "User's contact at Initech for project Falcon is Priya.", "kind": "fact", "reason": "stated",
        "entities": [{"name": "Priya", "type": "person"}, {"name": "Initech", "type": "company"},
                     {"name": "Falcon", "type": "project"}],
        "relations": [{"source": "Priya", "relation": "contact of", "target": "Initech", "reason": "she is the contact"},
                      {"source": "Initech", "relation": "runs", "target": "Falcon", "reason": "their project"}],
    }]})
    memory = llm_memory()
    memory.add("for falcon our contact over at initech is priya", user_id="u")
    data = memory.export(user_id="u")
    with Memory(tmp_path / "restored.db", embedder=embedder) as o:  # no LLM here: nothing is re-derived
        o.import_(data)
        entities, relations, _ = by_name(o, "u")
    assert ("Priya", "contact_of", "Initech", "llm: she is the contact") in relations
    assert ("Initech", "runs", "Falcon", "llm: their project") in relations
    assert entities["Initech"][0] == "org" and entities["Falcon"][0] == "project"


def _last(data: dict, table: str) -> dict:
    return data["graph"][table][-1]


TAMPERED = {
    "entity of another user": (lambda d: _last(d, "entities").update(user_id="mallory"),
                               r"graph entity \d+: names user 'mallory', not the user this file is about"),
    "trace of another user": (lambda d: _last(d, "history").update(user_id="bob"), r"graph history \d+: names user 'bob'"),
    "unknown memory": (lambda d: _last(d, "mentions").update(memory_id="m-nowhere"),
                       r"graph mention \d+: memory_id 'm-nowhere' is not a memory of the file"),
    "unknown entity": (lambda d: _last(d, "edges").update(src="ent_nowhere"),
                       r"graph edge \d+: src 'ent_nowhere' is not an entity of the file's graph"),
    "malformed key": (lambda d: _last(d, "aliases").update(key=42), r"graph alias \d+: key must be a string"),
    "malformed time": (lambda d: _last(d, "entities").update(created_at="yesterday"),
                       r"graph entity \d+: unreadable created_at"),
    "unknown role": (lambda d: _last(d, "mentions").update(role=["owner"]), r"graph mention \d+: role must be one of"),
    "duplicate entity": (lambda d: d["graph"]["entities"].append(dict(d["graph"]["entities"][0])),
                         r"graph entity \d+: id '.+' is also another entity's"),
    "row not an object": (lambda d: d["graph"]["edges"].append("oops"), r"graph edge \d+: not an object"),
    "file names no user": (lambda d: d.pop("scope"), r"a graph section needs the file's scope.user_id"),
    "newer section": (lambda d: d["graph"].update(version=2), r"graph section version 2 is not supported"),
    "not a section": (lambda d: d.update(graph=[]), r"'graph' must be an object"),
}


@pytest.mark.parametrize("case", sorted(TAMPERED))
def test_a_tampered_graph_section_refuses_the_whole_file(memory, tmp_path, embedder, case):
    fill(memory)
    data = memory.export(user_id="alice", history=True)
    tamper, message = TAMPERED[case]
    tamper(data)
    with Memory(tmp_path / "target.db", embedder=embedder) as o:
        with pytest.raises(InvalidInput, match=message):
            o.import_(data)
        assert o.get_all(user_id="alice", filters={"status": []}, limit=None) == []  # nothing written
        assert o.store.graph_snapshot("alice").entities == {} and o.store.graph_history("alice") == []


def test_a_link_to_another_users_memory_is_refused(memory, tmp_path, embedder):
    fill(memory)
    data = memory.export(user_id="alice")
    linked = data["graph"]["mentions"][-1]["memory_id"]
    next(m for m in data["memories"] if m["id"] == linked)["user_id"] = "bob"
    with Memory(tmp_path / "target.db", embedder=embedder) as o:
        with pytest.raises(InvalidInput, match=r"graph mention \d+: memory '.+' belongs to user 'bob', not 'alice'"):
            o.import_(data)
        assert o.get_all(user_id="bob", filters={"status": []}, limit=None) == []


def test_importing_alices_file_into_bob_never_touches_alices_graph(memory):
    fill(memory)
    alice = memory.graph("alice")
    report = memory.import_(memory.export(user_id="alice"), user_id="bob")  # same database: every id clashes
    assert memory.graph("alice") == alice
    assert by_name(memory, "bob") == by_name(memory, "alice")  # bob has the whole graph, merges and trace included
    bob = memory.graph("bob")
    assert not {e.id for e in bob.entities} & {e.id for e in alice.entities}  # new entity ids, not alice's rows
    assert all(memory.get(i).user_id == "bob" for e in bob.entities for i in e.memories)
    assert report.renamed == 4 and report.entities == len(bob.entities)


def test_importing_the_same_file_again_leaves_the_graph_as_it_was(memory):
    fill(memory)
    before, data = memory.graph("alice"), memory.export(user_id="alice")
    memory.import_(data)  # skip: every memory is there already
    assert memory.graph("alice") == before
    memory.import_(data, on_conflict="replace")  # the file's memories and their links, once
    assert by_name(memory, "alice") == by_name_of(before)


def test_an_import_joins_the_entities_the_user_already_has(memory, tmp_path, embedder):
    fill(memory)
    data = memory.export(user_id="alice")
    with Memory(tmp_path / "target.db", embedder=embedder) as o:
        o.add("I played tennis with Anna on Sunday.", user_id="alice", infer=False)
        o.import_(data)
        names = [e.name for e in o.graph("alice").entities]
        entities, _, trace = by_name(o, "alice")
    assert sorted(names) == sorted(set(names))  # one Anna, not two
    assert entities["Anna"] == ("person", ("my wife",), 2)  # her tennis and Google memories, the type the file knew
    assert [a for a, n, _ in trace if n == "Anna"].count("CREATE") == 1


def test_an_agents_export_carries_only_its_memories_entities(memory, tmp_path, embedder):
    fill(memory)
    memory.add("My sister Beth works at Initech.", user_id="alice", agent_id="helper", infer=False)
    data = memory.export(user_id="alice", agent_id="helper")
    with Memory(tmp_path / "target.db", embedder=embedder) as o:
        o.import_(data)
        entities, relations, _ = by_name(o, "alice")
    assert {"Beth", "Initech"} <= set(entities) and not {"Anna", "张三"} & set(entities)
    assert ("Beth", "works_at", "Initech", "Beth works at Initech") in relations


def test_a_file_without_a_graph_section_still_gets_its_graph_rebuilt(memory, tmp_path, embedder):
    fill(memory)
    data = memory.export(user_id="alice")
    old = {k: v for k, v in data.items() if k != "graph"}  # an export written before the section existed
    empty = copy.deepcopy(data)
    empty["graph"] = {"version": 1, "entities": [], "aliases": [], "mentions": [], "edges": [], "history": []}
    for name, file in (("old", old), ("empty", empty)):
        with Memory(tmp_path / f"{name}.db", embedder=embedder) as o:
            report = o.import_(file)
            entities, relations, _ = by_name(o, "alice")
        assert report.entities == 0 and {"Anna", "Google", "张三", "甲公司"} <= set(entities)
        assert ("Anna", "works_at", "Google", "Anna works at Google") in relations


def test_a_failure_while_writing_the_graph_rolls_the_whole_import_back(memory, tmp_path, embedder, monkeypatch):
    fill(memory)
    data = memory.export(user_id="alice")
    with Memory(tmp_path / "target.db", embedder=embedder) as o:
        def broken(*args, **kwargs):
            raise OSError("disk went away")

        monkeypatch.setattr(o.store, "graph_write", broken)
        with pytest.raises(OSError):
            o.import_(data)
        assert o.get_all(user_id="alice", filters={"status": []}, limit=None) == []


def test_migrate_to_postgresql_keeps_the_graph_and_its_trace(tmp_path, embedder):
    try:
        target = postgres_target(tmp_path)
    except Unavailable as exc:
        pytest.skip(str(exc))
    with Memory(tmp_path / "source.db", embedder=embedder) as m:
        fill(m)
        before = m.graph("alice")
    source, copy_ = open_store(tmp_path / "source.db", dim=256, read_only=True), open_store(target, dim=256)
    try:
        migrate(source, copy_)
    finally:
        source.close()
        copy_.close()
    with Memory(store=target, embedder=embedder) as o:
        assert o.graph("alice") == before


def test_the_cli_carries_the_graph_from_one_database_to_another(memory, db_path, tmp_path):
    from typer.testing import CliRunner

    from engram.cli import app

    fill(memory)
    memory.close()
    file, other = tmp_path / "alice.json", tmp_path / "other.db"
    cli = CliRunner()
    assert cli.invoke(app, ["--db", str(db_path), "export", str(file), "--user", "alice"]).exit_code == 0
    result = cli.invoke(app, ["--db", str(other), "import", str(file)])
    assert result.exit_code == 0, result.output
    assert "7 graph entities" in result.output
    shown = cli.invoke(app, ["--db", str(other), "graph", "--user", "alice"]).output
    assert "Paris fan" in shown and "my wife" in shown and "张三" in shown


def test_replace_brings_back_the_graph_of_the_memories_it_restores(memory):
    fill(memory)
    before, data = memory.graph("alice"), memory.export(user_id="alice")
    google = next(m for m in memory.get_all(user_id="alice", limit=None) if "Google" in m.content)
    memory.update(google.id, "My wife Anna works at Microsoft.")  # the edit re-derives: Google is gone
    assert "Google" not in by_name(memory, "alice")[0]
    report = memory.import_(data, on_conflict="replace")
    entities, relations, _ = by_name(memory, "alice")
    assert report.replaced == 4 and "Microsoft" not in entities
    assert ("Anna", "works_at", "Google", "Anna works at Google") in relations
    assert entities == by_name_of(before)[0]


def test_a_name_too_long_to_be_a_name_is_refused_and_nothing_is_imported(memory, tmp_path, embedder):
    """A graph row's names are capped (200 characters): PostgreSQL keeps them in its indexes."""
    fill(memory)
    data = copy.deepcopy(memory.export(user_id="alice"))
    data["graph"]["entities"][0]["name"] = "A" * 201
    with Memory(tmp_path / "target.db", embedder=embedder) as o:
        with pytest.raises(InvalidInput, match="name"):
            o.import_(data)
        assert o.get_all(user_id="alice") == []
