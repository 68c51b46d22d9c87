"""The CLI as a new user meets it (issue #14): text shown as stored, stderr for notices,
one-line errors, ids by prefix, `-` for stdin/stdout, --db anywhere, --version."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from engram.cli import app, hoist_db
from helpers import facts

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def cli(tmp_path, monkeypatch):
    from engram.cli import render

    monkeypatch.setattr(render.console, "width", 200)  # one line per row: the text is findable
    runner = CliRunner()
    db = str(tmp_path / "cli.db")

    def invoke(*args: str, input: str | None = None):
        return runner.invoke(app, ["--db", db, *args], input=input)

    return invoke


@pytest.mark.parametrize("text", ["closing tag [/] test", "use list[str] here", "I drink :coffee: daily", "[bold]x[/bold]"])
def test_stored_text_is_shown_exactly_as_stored(cli, text):
    added = cli("add", text, "-u", "mk2", "--raw")
    assert added.exit_code == 0, added.output
    for args in (("list", "-u", "mk2"), ("search", text, "-u", "mk2")):
        shown = cli(*args)
        assert shown.exit_code == 0, shown.output
        assert text in shown.stdout


def test_json_is_only_json_and_notices_go_to_stderr(cli):
    assert cli("add", "I live in Lisbon.", "-u", "a").exit_code == 0
    found = cli("search", "nothing like this at all", "-u", "zz", "--json")
    assert json.loads(found.stdout) == []
    empty = cli("search", "anything", "-u", "zz")
    assert empty.stdout == "" and "no memories found" in empty.stderr


def test_quiet_silences_notices(tmp_path):
    quiet = CliRunner().invoke(app, ["-q", "--db", str(tmp_path / "q.db"), "search", "x", "-u", "zz"])
    assert quiet.exit_code == 0 and quiet.output == ""


def test_ids_by_unique_prefix_and_short_ids_in_tables(cli):
    added = json.loads(cli("add", "I live in Lisbon.", "-u", "a", "--json").stdout)
    full = added[0]["memory"]["id"]
    listed = cli("list", "-u", "a")
    assert full[:8] in listed.stdout and full not in listed.stdout
    assert json.loads(cli("get", full[:8], "--json").stdout)["id"] == full
    assert cli("history", full[:6]).exit_code == 0


def test_list_says_how_many_and_pages(cli):
    for city in ("Lisbon", "Porto", "Faro"):
        cli("add", f"I visited {city} last year.", "-u", "a", "--raw")
    first = cli("list", "-u", "a", "--all", "--limit", "2")
    assert "showing 1-2 of 3" in first.stderr and "--offset 2" in first.stderr
    rest = json.loads(cli("list", "-u", "a", "--all", "--limit", "2", "--offset", "2", "--json").stdout)
    assert len(rest) == 1


def test_pause_says_why_nothing_was_stored(cli):
    assert cli("pause", "-u", "p").exit_code == 0
    added = cli("add", "I prefer dark mode.", "-u", "p")
    assert added.exit_code == 0 and "paused" in added.stderr and "nothing worth" not in added.stderr


def test_forget_dry_run_deletes_nothing(cli):
    cli("add", "I love coffee.", "-u", "f")
    shown = cli("forget", "coffee", "-u", "f", "--dry-run")
    assert "coffee" in shown.stdout and "dry run" in shown.stderr
    assert len(json.loads(cli("list", "-u", "f", "--json").stdout)) == 2  # the fact and its episode, kept


def test_stdin_and_stdout_dash(cli, tmp_path):
    assert cli("add", "-", "-u", "s", input="I live in Lisbon.\n").exit_code == 0
    exported = cli("export", "-", "-u", "s")
    data = json.loads(exported.stdout)
    assert sorted(m["content"] for m in data["memories"]) == ["I live in Lisbon.", "User lives in Lisbon."]
    imported = cli("import", "-", "-u", "t", input=exported.stdout)
    assert imported.exit_code == 0, imported.output
    assert len(json.loads(cli("list", "-u", "t", "--json").stdout)) == 2  # the fact and its episode


@pytest.mark.parametrize("case", ["missing folder", "not sqlite", "unwritable export"])
def test_ordinary_mistakes_are_one_line_errors(tmp_path, case):
    runner = CliRunner()
    bad = tmp_path / "notes.txt"
    bad.write_text("just some notes, not a database\n" * 50)
    args = {
        "missing folder": ["--db", str(tmp_path / "nope" / "e.db"), "list", "-u", "a"],
        "not sqlite": ["--db", str(bad), "list", "-u", "a"],
        "unwritable export": ["--db", str(tmp_path / "e.db"), "export", str(tmp_path / "nope" / "x.json"), "-u", "a"],
    }[case]
    result = runner.invoke(app, args)
    assert result.exit_code == 1 and result.stderr.startswith("error:") and result.stderr.count("\n") == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not (tmp_path / "nope").exists()


def test_db_option_after_the_subcommand():
    assert hoist_db(["list", "-u", "a", "--db", "x.db"]) == ["--db", "x.db", "list", "-u", "a"]
    assert hoist_db(["search", "q", "--db=x.db"]) == ["--db=x.db", "search", "q"]
    assert hoist_db(["add", "--", "--db"]) == ["add", "--", "--db"]
    assert hoist_db(["add", "x", "-u", "a", "-q"]) == ["-q", "add", "x", "-u", "a"]


def test_python_dash_m_engram_version_and_db_after_the_command(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    version = subprocess.run([sys.executable, "-m", "engram", "--version"], capture_output=True, text=True, env=env)
    assert version.returncode == 0 and version.stdout.startswith("engram ")
    db = tmp_path / "home" / "e.db"
    db.parent.mkdir()
    listed = subprocess.run([sys.executable, "-m", "engram", "list", "-u", "a", "--db", str(db), "--json"],
                            capture_output=True, text=True, env=env)
    assert listed.returncode == 0 and json.loads(listed.stdout) == []
    assert stat.S_IMODE(db.stat().st_mode) == 0o600


def test_help_has_no_bool_metavars_and_lists_choices(cli):
    shown = cli("list", "--help").stdout
    assert "<bool>" not in shown and "preference" in shown and "superseded" in shown


def test_chat_confirms_pause_and_asks_before_deleting_everything(tmp_path, fake_llm, monkeypatch):
    from llm_scripts import router

    fake_llm.responder = router(chat="好的。")
    monkeypatch.setenv("ENGRAM_LLM_BASE_URL", fake_llm.base_url)
    monkeypatch.setenv("ENGRAM_LLM_MODEL", "m")
    script = "我喜欢喝绿茶\n暂停记忆\n恢复记忆\nDelete all my memories.\nno\n/memory\n/quit\n"
    result = CliRunner().invoke(app, ["--db", str(tmp_path / "x.db"), "chat", "--user", "u"], input=script)
    assert result.exit_code == 0, result.output
    out = " ".join(result.output.split())  # lines wrap at the terminal's width
    assert "记忆已暂停" in out and "记忆已恢复" in out
    assert "Reply “yes” to confirm" in out
    assert "nothing was deleted" in out
    assert "用户喜欢喝绿茶" in out  # still remembered after "no"


def test_chat_with_an_endpoint_that_cannot_name_its_model_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("ENGRAM_LLM_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens; no model given
    monkeypatch.setenv("ENGRAM_LLM_TIMEOUT", "2")
    result = CliRunner().invoke(app, ["--db", str(tmp_path / "x.db"), "chat", "--user", "u"], input="/quit\n")
    assert result.exit_code == 1 and result.stderr.startswith("error:") and result.stderr.count("\n") == 1


def test_bulk_add_one_line_each_from_stdin(cli):
    added = cli("add", "-", "-u", "b", "--lines", "--json", input="I live in Lisbon.\n\nI prefer dark mode.\n")
    assert added.exit_code == 0, added.output
    said = [e["memory"]["content"] for e in facts(json.loads(added.stdout))]
    assert said == ["User lives in Lisbon.", "User prefers dark mode."]
