"""Session-end compression through OptMem's compress prompt, validated, else the deterministic delta."""

from __future__ import annotations

import pytest
from llm_scripts import prompt_text, requests_of, router

from engram.models import Kind, Source
from helpers import facts


@pytest.fixture
def llm_overrides() -> dict:
    return {"llm_extraction": "off", "llm_reconcile": False}


def zh_session(memory):
    for text in ("我住在北京", "我喜欢喝绿茶", "我更喜欢用Markdown格式接收报告", "我现在住在上海"):
        memory.add(text, user_id="u", session_id="s")


def test_llm_delta_follows_the_seed_prompt_and_keeps_the_capsule_sources(llm_memory, fake_llm):
    fake_llm.responder = router(compress={
        "preferences": [{"text": "喜欢喝绿茶", "from": [2]}, {"text": "报告用Markdown格式", "from": [3]}],
        "facts": [{"text": "住在上海", "updated": True, "from": [1, 4]}],
        "task": [], "identity": [],
    })
    memory = llm_memory()
    zh_session(memory)
    delta = memory.end_session("u", "s")
    prompt = prompt_text(requests_of(fake_llm, "compress")[0])
    for seed in ("记忆优化专家", "合并同类项", "消除冲突", "以时间最近的条目为准", "【用户偏好】", "每条摘要不超过15个词",
                 "300个token以内"):
        assert seed in prompt
    assert "用户住在北京" in prompt and "已被#4取代" in prompt  # the superseded entry, marked
    assert delta.text == "【用户偏好】\n- 喜欢喝绿茶\n- 报告用Markdown格式\n【已知事实】\n- 住在上海（已更新）"
    assert delta.summary.source is Source.LLM and delta.summary.metadata["compressed_by"] == "llm"
    # the facts (not the summaries, nor the episodes: the delta compresses what is known, not what was said)
    deterministic = {i.content for i in facts(memory.get_all(user_id="u")) if i.kind is not Kind.SUMMARY}
    assert {memory.get(i).content for i in delta.sources} == deterministic  # capsule follows these
    assert "用户现在住在上海" in memory.capsule("u").text
    assert memory.llm_usage()["tasks"]["compress_used"] == 1
    assert memory.end_session("u", "s").text == delta.text  # idempotent: the stored delta


@pytest.mark.parametrize("answer", [
    "not json at all",
    {"summary": "the user likes tea"},
    {"preferences": "likes tea"},
    {"preferences": [], "facts": [], "task": [], "identity": []},
])
def test_invalid_answer_falls_back_to_the_deterministic_delta(llm_memory, fake_llm, answer, caplog):
    fake_llm.responder = router(compress=answer)
    memory = llm_memory()
    zh_session(memory)
    with caplog.at_level("WARNING", logger="engram.llm"):
        delta = memory.end_session("u", "s")
    assert delta.summary.metadata["compressed_by"] == "rules" and delta.summary.source is Source.RULE
    assert "用户现在住在上海（已更新）" in delta.text
    assert memory.llm_usage()["tasks"]["compress_failed"] == 1
    assert "LLM compression failed" in caplog.text


def test_server_error_and_timeout_fall_back(llm_memory, fake_llm):
    memory = llm_memory(llm_timeout=0.3)
    zh_session(memory)
    fake_llm.delay(1.0, '{"preferences": []}')
    assert memory.end_session("u", "s").summary.metadata["compressed_by"] == "rules"
    memory.add("I love green tea", user_id="u", session_id="t")
    memory.add("I work at Google", user_id="u", session_id="t")
    fake_llm.fail(503)
    assert memory.end_session("u", "t").summary.metadata["compressed_by"] == "rules"
    assert memory.llm_usage()["tasks"]["compress_failed"] == 2


def test_over_budget_falls_back(llm_memory, fake_llm):
    long_line = {"text": "喜欢喝绿茶，" * 20, "from": [2]}
    fake_llm.responder = router(compress={"preferences": [long_line] * 8, "facts": [], "task": [], "identity": []})
    memory = llm_memory()
    zh_session(memory)
    delta = memory.end_session("u", "s")
    assert delta.summary.metadata["compressed_by"] == "rules"


def test_translated_line_is_dropped_and_the_memory_comes_back_from_the_rules(llm_memory, fake_llm):
    fake_llm.responder = router(compress={
        "preferences": [{"text": "Likes green tea", "from": [2]}, {"text": "报告用Markdown格式", "from": [3]}],
        "facts": [{"text": "住在上海", "updated": True, "from": [1, 4]}],
    })
    memory = llm_memory()
    zh_session(memory)
    delta = memory.end_session("u", "s")
    assert delta.summary.metadata["compressed_by"] == "llm"
    assert "Likes green tea" not in delta.text and "用户喜欢喝绿茶" in delta.text


def test_a_left_out_memory_is_added_back(llm_memory, fake_llm):
    fake_llm.responder = router(compress={"facts": [{"text": "住在上海（已更新）", "from": [4]}]})
    memory = llm_memory()
    zh_session(memory)
    delta = memory.end_session("u", "s")
    assert "- 住在上海（已更新）" in delta.text  # the mark in the text becomes the flag
    assert "用户喜欢喝绿茶" in delta.text and "用户更喜欢用Markdown格式接收报告" in delta.text


def test_english_session_english_prompt(llm_memory, fake_llm):
    fake_llm.responder = router(compress={
        "preferences": [{"text": "Loves green tea", "from": [1]}], "facts": [{"text": "Works at Google", "from": [2]}],
    })
    memory = llm_memory()
    memory.add("I love green tea", user_id="u", session_id="s")
    memory.add("I work at Google", user_id="u", session_id="s")
    delta = memory.end_session("u", "s")
    assert "memory optimisation expert" in prompt_text(requests_of(fake_llm, "compress")[0])
    assert delta.text == "[User preferences]\n- Loves green tea\n[Known facts]\n- Works at Google"


def test_nothing_to_merge_makes_no_call(llm_memory, fake_llm):
    memory = llm_memory()
    memory.add("I love green tea", user_id="u", session_id="s")
    delta = memory.end_session("u", "s")
    assert requests_of(fake_llm, "compress") == [] and delta.text == "[User preferences]\n- User loves green tea."


def test_compression_off(llm_memory, fake_llm):
    memory = llm_memory(llm_compress=False)
    zh_session(memory)
    memory.end_session("u", "s")
    assert fake_llm.requests == []
