"""The CLI mirrors the library: every command against a real database file."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from engram.cli import app
from helpers import episodes, facts


@pytest.fixture
def cli(tmp_path):
    runner = CliRunner()
    db = str(tmp_path / "cli.db")

    def invoke(*args: str):
        result = runner.invoke(app, ["--db", db, *args])
        return result

    return invoke


def test_add_search_list_get_edit_history_delete(cli):
    added = cli("add", "I live in Berlin.", "--user", "u1", "--json")
    assert added.exit_code == 0, added.output
    memory_id = json.loads(added.output)[0]["memory"]["id"]
    assert cli("add", "我住在北京", "--user", "u2").exit_code == 0

    found = json.loads(cli("search", "where do I live", "--user", "u1", "--json").output)
    assert [r["memory"]["id"] for r in facts(found)] == [memory_id]
    assert episodes(found) == []  # the fact stands for the turn it was drawn from
    assert "Berlin" in cli("search", "Berlin", "--user", "u1").output

    listed = json.loads(cli("list", "--user", "u2", "--json").output)
    assert len(facts(listed)) == 1 and "北京" in facts(listed)[0]["content"]
    assert [m["content"] for m in episodes(listed)] == ["我住在北京"]

    assert json.loads(cli("get", memory_id, "--json").output)["id"] == memory_id
    assert cli("edit", memory_id, "User lives in Potsdam.").exit_code == 0
    history = json.loads(cli("history", memory_id, "--json").output)
    assert [h["action"] for h in history] == ["ADD", "UPDATE"]

    assert cli("delete", memory_id).exit_code == 0
    # the fact is gone; the episode (what the user said) is listed until it is deleted too
    assert [m["content"] for m in json.loads(cli("list", "--user", "u1", "--json").output)] == ["I live in Berlin."]
    assert len(json.loads(cli("list", "--user", "u2", "--json").output)) == 2


def test_raw_add_and_delete_all(cli):
    assert cli("add", "just a turn", "--user", "u1", "--raw").exit_code == 0
    assert cli("delete", "--all", "--user", "u1", "--yes").exit_code == 0
    assert json.loads(cli("list", "--user", "u1", "--json").output) == []


def test_errors_are_clear_and_exit_nonzero(cli):
    result = cli("get", "does-not-exist")
    assert result.exit_code == 1 and "no memory with id" in result.stderr and result.stdout == ""
    result = cli("add", "I live in Berlin.", "--user", "")
    assert result.exit_code == 1 and "--user must be" in result.stderr and "user_id" not in result.stderr


def test_timezone_is_shown_set_and_cleared(cli):
    assert cli("timezone", "--user", "alice").output.strip() == "alice: UTC"
    assert "Asia/Shanghai" in cli("timezone", "Asia/Shanghai", "--user", "alice").output
    assert "Asia/Shanghai" in cli("timezone", "--user", "alice").output  # persisted
    bad = cli("timezone", "Mars/Olympus", "--user", "alice")
    assert bad.exit_code == 1 and "unknown time zone" in bad.output
    assert cli("timezone", "--clear", "--user", "alice").output.strip() == "alice: UTC"


def test_nothing_worth_remembering_is_said_plainly(cli):
    result = cli("add", "What's the time?", "--user", "u1")
    # no fact in a question: only the turn itself, shown as an episode
    assert result.exit_code == 0 and "kept as an episode" in result.output
    events = json.loads(cli("add", "What's the time?", "--user", "u2", "--json").output)
    assert facts(events) == [] and [e["memory"]["content"] for e in episodes(events)] == ["What's the time?"]
    result = cli("add", "haha thanks", "--user", "u1")  # chatter: not even an episode
    assert result.exit_code == 0 and "nothing worth remembering" in result.output


def test_demo_tells_the_story_and_answers_from_memory(tmp_path):
    result = CliRunner().invoke(app, ["demo", "--db", str(tmp_path / "demo.db")])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "SUPERSEDE" in out and "Lisbon" in out and "上海" in out
    assert "superseded (kept as history)" in out


def test_demo_answers_from_a_conversation_said_turn_by_turn(tmp_path):
    out = CliRunner().invoke(app, ["demo", "--db", str(tmp_path / "demo.db")]).output
    martial = out[out.index("What martial art do I do?"):]
    assert "taekwondo" in martial.split("\n└")[0]  # the first results table: the episode is found
    assert "kept as an episode" in out and "跆拳道" in out[out.index("我在练什么？"):]
