"""`engram chat`: the terminal chat with memory, driven through stdin against the scripted server."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from llm_scripts import router
from typer.testing import CliRunner

from engram.cli import app
from engram.cli.chat import parse_command


def test_slash_commands_in_english_and_chinese():
    assert parse_command("hello") is None
    assert parse_command("/memory") == ("memory", "")
    assert parse_command("/查看记忆") == ("memory", "")
    assert parse_command("/forget green tea") == ("forget", "green tea")
    assert parse_command("/删除记忆 我喜欢蓝色") == ("forget", "我喜欢蓝色")
    assert parse_command("/删除记忆我喜欢蓝色") == ("forget", "我喜欢蓝色")  # as the OptMem article writes it
    assert parse_command("/删除记忆：蓝色") == ("forget", "蓝色")
    assert parse_command("/capsule") == ("capsule", "")
    assert parse_command("/END") == ("end", "")
    assert parse_command("/quit") == ("quit", "") and parse_command("/退出") == ("quit", "")
    assert parse_command("/endless") == ("unknown", "/endless")


def test_no_llm_configured_is_a_clear_message(tmp_path):
    result = CliRunner().invoke(app, ["--db", str(tmp_path / "x.db"), "chat", "--user", "u"])
    assert result.exit_code == 2
    assert "No LLM configured" in result.output and "ENGRAM_LLM_BASE_URL" in result.output


def test_chat_session_in_process(tmp_path, fake_llm, monkeypatch):
    fake_llm.responder = router(chat="好的，记住了。", extract={"memories": [  # a copied prompt example
        {"content": "用户的项目经理叫李华", "kind": "fact"}]})
    monkeypatch.setenv("ENGRAM_LLM_BASE_URL", fake_llm.base_url)
    monkeypatch.setenv("ENGRAM_LLM_MODEL", "m")
    monkeypatch.setenv("ENGRAM_LLM_TIMEOUT", "2")
    script = "\n".join([
        "我喜欢喝绿茶", "/查看记忆", "/capsule", "/usage", "/nope", "/删除记忆 绿茶", "/memory", "/end", "/quit", "",
    ])
    result = CliRunner().invoke(app, ["--db", str(tmp_path / "x.db"), "chat", "--user", "u"], input=script)
    out = result.output
    assert result.exit_code == 0, out
    assert "assistant> 好的，记住了。" in out
    assert out.count("用户喜欢喝绿茶") >= 2 and "capsule: 0 tokens" in out  # listed, then forgotten
    assert "forgotten (1)" in out and "nothing remembered about u" in out
    assert "LLM calls" in out and "unknown command '/nope'" in out
    assert "李华" not in out and "0 kept, 1 dropped as not said by you" in out
    assert out.count("ended") == 2  # /end, then /quit ends the new session


def test_engram_chat_through_stdin_end_to_end(tmp_path, fake_llm, embedder):
    def reply(request):
        system = request["messages"][0]["content"]
        return "You like green tea." if "User loves green tea." in system else "Nice to meet you."

    fake_llm.responder = router(chat=reply, extract={"memories": [{"content": "User is called Sam.", "kind": "fact",
                                                                  "key": "fact:name", "value": "Sam"}]})
    env = {**os.environ, "ENGRAM_LLM_BASE_URL": fake_llm.base_url, "ENGRAM_LLM_MODEL": "m",
           "ENGRAM_PATH": str(tmp_path / "chat.db"), "COLUMNS": "120"}
    session = "Sam here. I love green tea\n/memory\nWhat do I like?\n/quit\n"  # the name grounds the LLM's memory
    done = subprocess.run(
        [sys.executable, "-c", "from engram.cli import app; app()", "chat", "--user", "sam"],
        input=session, capture_output=True, text=True, env=env, timeout=60,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "assistant> Nice to meet you." in out
    assert "User loves green tea." in out and "User is called Sam." in out  # /memory after background extraction
    assert "assistant> You like green tea." in out  # the memory reached the model's prompt
    assert "ended" in out
    from engram import Memory

    with Memory(tmp_path / "chat.db", embedder=embedder) as memory:
        assert memory.get_all(user_id="sam", filters={"kind": "summary"})  # the session was compressed


@pytest.mark.parametrize("line", ["/quit", ""])
def test_quit_and_eof_leave_cleanly(tmp_path, fake_llm, monkeypatch, line):
    monkeypatch.setenv("ENGRAM_LLM_BASE_URL", fake_llm.base_url)
    result = CliRunner().invoke(app, ["--db", str(tmp_path / "x.db"), "chat", "--user", "u"], input=line)
    assert result.exit_code == 0 and "ended" in result.output
