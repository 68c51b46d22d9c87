"""MemoryAgent: the memory-enhanced agent loop against the scripted server."""

from __future__ import annotations

import threading

import pytest
from llm_scripts import requests_of, router

from engram import Memory
from engram.agent import MemoryAgent
from engram.llm import LLMNotConfigured
from engram.models import Kind
from helpers import episodes, facts
from engram.providers.openai_compat import LLMSettings, LLMUnavailable, OpenAICompatLLM


@pytest.fixture
def memory(db_path, embedder, fake_llm):
    with Memory(db_path, embedder=embedder, llm_base_url=fake_llm.base_url, llm_model="m",
                llm_timeout=2.0, llm_max_retries=0, background_poll_s=0.05) as m:
        yield m


def test_chat_builds_context_replies_records_and_extracts(memory, fake_llm):
    fake_llm.responder = router(
        chat=lambda request: "Noted!" if len(request["messages"]) == 2 else "You like green tea.",
        extract=lambda request: {"memories": [{"content": "User works night shifts.", "kind": "fact"}]}
        if "night" in str(request) else {"memories": []},
    )
    agent = MemoryAgent(memory, user_id="alice", system_prompt="You are Alice's assistant.")
    assert agent.chat("I love green tea, and I work night shifts.") == "Noted!"
    assert memory.flush(timeout=5)
    assert sorted(i.content for i in facts(memory.get_all(user_id="alice"))) == [
        "User loves green tea.", "User works night shifts."]
    assert [i.content for i in episodes(memory.get_all(user_id="alice"))] == [
        "I love green tea, and I work night shifts."]
    assert agent.chat("What do I like to drink?") == "You like green tea."
    sent = requests_of(fake_llm, "chat")[-1]["messages"]
    system = sent[0]["content"]
    assert system.startswith("You are Alice's assistant.")
    assert "User loves green tea." in system and "Long-term memory context" in system
    assert [m["role"] for m in sent[1:]] == ["user", "assistant", "user"]  # the conversation so far
    assert sent[-1]["content"] == "What do I like to drink?"
    assert agent.last_context is not None and agent.last_context.query == "What do I like to drink?"


def test_reply_path_does_not_wait_for_extraction(memory, fake_llm):
    release, started = threading.Event(), []

    def held_extraction(request):  # finishes only once the test lets it
        started.append(1)
        assert release.wait(30)
        return {"memories": []}

    fake_llm.responder = router(chat="Sure.", extract=held_extraction)
    background = MemoryAgent(memory, user_id="u")
    foreground = MemoryAgent(memory, user_id="v", background=False)
    release.set()
    background.chat("warm-up")
    assert memory.flush(5)
    release.clear()
    assert background.chat("I love green tea") == "Sure."  # replied while its extraction cannot finish
    assert memory.flush(timeout=0.2) is False  # ... which is still waiting
    release.set()
    assert memory.flush(timeout=5)
    before = len(started)
    foreground.chat("I love green tea")
    assert len(started) == before + 1  # the foreground agent extracted before it replied


def test_chinese_chat_gets_the_chinese_system_prompt(memory, fake_llm):
    fake_llm.responder = router(chat="好的。")
    agent = MemoryAgent(memory, user_id="u", background=False)
    agent.chat("我喜欢喝绿茶")
    agent.chat("我喜欢喝什么？")
    system = requests_of(fake_llm, "chat")[-1]["messages"][0]["content"]
    assert system.startswith("你是一个有帮助的、且能记住过往对话的AI助手。")
    assert "用户喜欢喝绿茶" in system and "如果需要澄清或记忆有冲突，可以礼貌地询问" in system


def test_chat_model_failure_raises_and_keeps_the_users_words(memory, fake_llm):
    fake_llm.fail(500)
    agent = MemoryAgent(memory, user_id="u", background=False)
    with pytest.raises(LLMUnavailable):
        agent.chat("I love green tea")
    assert [i.content for i in facts(memory.get_all(user_id="u"))] == ["User loves green tea."]
    assert [i.content for i in episodes(memory.get_all(user_id="u"))] == ["I love green tea"]  # the user's words
    assert agent.history == []


def test_end_returns_the_delta_and_starts_a_new_session(memory, fake_llm):
    fake_llm.responder = router(chat="ok")
    agent = MemoryAgent(memory, user_id="u")
    first = agent.session_id
    agent.chat("I love green tea")
    agent.chat("I work at Google")
    delta = agent.end(timeout=5)
    assert delta.session_id == first and "User loves green tea." in delta.text
    assert agent.session_id != first and agent.history == []
    summary = memory.get_all(user_id="u", filters={"kind": Kind.SUMMARY})
    assert len(summary) == 1


def test_resuming_a_session_resumes_its_conversation(memory, fake_llm):
    fake_llm.responder = router(chat="ok")
    agent = MemoryAgent(memory, user_id="u", background=False)
    agent.chat("I love green tea")
    again = MemoryAgent(memory, user_id="u", session_id=agent.session_id)
    assert again.history == agent.history


def test_a_separate_chat_model(memory, fake_llm):
    fake_llm.responder = router(chat="from the other model")
    other = OpenAICompatLLM(LLMSettings(base_url=fake_llm.base_url, model="big-model", max_retries=0))
    agent = MemoryAgent(memory, other, user_id="u", background=False)
    assert agent.chat("hello there") == "from the other model"
    assert requests_of(fake_llm, "chat")[-1]["model"] == "big-model"
    assert requests_of(fake_llm, "extract")[-1]["model"] == "m"


def test_no_llm_is_a_clear_error(db_path, embedder):
    with Memory(db_path, embedder=embedder) as plain:
        with pytest.raises(LLMNotConfigured, match="ENGRAM_LLM_BASE_URL"):
            MemoryAgent(plain, user_id="u")
