"""Issue #14's correctness items at the API: edits re-derive the slot, import is idempotent and
knows its formats (mem0 included), metadata filters speak mem0's operators, the time zone
defaults to the system's."""

from __future__ import annotations

import json

import pytest

from engram import InvalidInput
from engram.user_state import system_zone_name
from helpers import facts


def test_an_edit_rederives_the_slot_so_a_later_negation_leaves_it_alone(memory):
    berlin = memory.add("I live in Berlin.", user_id="u")[0].memory
    edited = memory.update(berlin.id, content="User lives in Porto.").memory
    assert (edited.key, edited.value, edited.entities) == ("fact:location", "porto", ["Porto"])
    memory.add("I don't live in Berlin anymore.", user_id="u")
    assert memory.get(berlin.id).status.value == "active"  # the Porto memory is not ended
    free = memory.update(berlin.id, content="Something with no slot at all.").memory
    assert free.key is None and free.value is None


def test_importing_the_same_file_twice_adds_nothing_the_second_time(memory, tmp_path):
    memory.add("I live in Berlin.", user_id="alice")
    memory.add("I prefer tea.", user_id="alice")
    path = tmp_path / "alice.json"
    memory.export(user_id="alice", path=path)
    first = memory.import_(path, user_id="bob")
    again = memory.import_(path, user_id="bob")
    assert first.added == 4 and again.added == 0 and again.skipped == 4  # two facts, two episodes
    assert len(memory.get_all(user_id="bob")) == 4


@pytest.mark.parametrize("data", [{"foo": 1}, {"format": "other"}, [1, 2], {"memories": [{"text": "x"}]}])
def test_a_file_of_no_known_format_is_an_error(memory, data):
    with pytest.raises(InvalidInput, match="format"):
        memory.import_(data, user_id="bob")


@pytest.mark.parametrize("shape", ["get_all", "list"])
def test_mem0_exports_import_as_a_known_format(memory, shape):
    entries = [{"id": "7f1c", "memory": "Likes hiking", "hash": "h", "metadata": {"src": "chat"},
                "categories": ["preferences"], "created_at": "2025-01-01T10:00:00-08:00", "user_id": "carol"},
               {"id": "8a2d", "memory": "Works at ACME", "user_id": "carol"}]
    data = {"results": entries} if shape == "get_all" else entries
    report = memory.import_(json.dumps(data))
    assert report.format == "mem0" and report.added == 2
    assert memory.import_(data).added == 0  # idempotent too
    items = {i.content: i for i in memory.get_all(user_id="carol")}
    assert items["Likes hiking"].kind.value == "preference" and items["Likes hiking"].metadata == {"src": "chat"}


@pytest.fixture
def tagged(memory):
    memory.add("I live in Berlin.", user_id="u", metadata={"n": 3, "tags": ["home"], "src": "chat log"})
    memory.add("I prefer tea.", user_id="u", metadata={"n": 7, "src": "email"})
    memory.add("I work as a nurse.", user_id="u")
    return lambda f: sorted(i.content.split()[-1] for i in facts(memory.get_all(user_id="u", filters=f)))


def test_metadata_filters_take_mem0s_operators(tagged):
    assert tagged({"metadata": {"n": {"gte": 5}}}) == ["tea."]
    assert tagged({"metadata": {"n": {"in": [3, 7]}}}) == ["Berlin.", "tea."]
    assert tagged({"metadata": {"n": {"ne": 3}}}) == ["nurse.", "tea."]
    assert tagged({"metadata": {"tags": {"contains": "home"}}}) == ["Berlin."]
    assert tagged({"metadata": {"src": {"contains": "log"}}}) == ["Berlin."]
    assert tagged({"OR": [{"n": 3}, {"src": "email"}]}) == ["Berlin.", "tea."]  # mem0: logic at the top
    assert tagged({"NOT": {"n": 3}}) == ["nurse.", "tea."]
    assert tagged({"AND": [{"n": {"gt": 1}}, {"n": {"lt": 5}}]}) == ["Berlin."]


@pytest.mark.parametrize("bad", [{"n": {"like": 3}}, {"n": {"in": 3}}, {"n": {"eq": [1]}}, {"n": {}}])
def test_a_filter_engram_cannot_run_is_invalid_input(tagged, bad):
    with pytest.raises(InvalidInput):
        tagged({"metadata": bad})
    with pytest.raises(InvalidInput):
        tagged({"OR": "x"})


def test_the_time_zone_defaults_to_the_systems(memory, monkeypatch):
    monkeypatch.setenv("TZ", "Asia/Shanghai")
    assert system_zone_name() == "Asia/Shanghai"
    assert str(memory.timezone("u")) == "Asia/Shanghai"
    memory.set_timezone("u", "Europe/Lisbon")
    assert str(memory.timezone("u")) == "Europe/Lisbon"


def test_an_embedder_can_be_named_and_a_wrong_name_says_which_exist(tmp_path):
    from engram import Memory

    with Memory(tmp_path / "named.db", embedder="wordllama") as m:
        assert m.embedder.name.startswith("wordllama")
    with pytest.raises(InvalidInput, match="unknown embedder 'bert'.*use, wordllama, openai"):
        Memory(tmp_path / "bad.db", embedder="bert")
    assert not (tmp_path / "bad.db").exists()  # refused before anything was created
