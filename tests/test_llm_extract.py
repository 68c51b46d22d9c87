"""LLM extraction (the "memory secretary" prompt) against the scripted server: the real SDK runs.

With an LLM engram gets better (memories the rules miss) and never worse: any
failure falls back to the rules' memories, logged and counted.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from llm_scripts import prompt_text, requests_of, router, task_of

from engram.extract.llm import ExtractedMemory, novel_candidates
from engram.models import Action, Candidate, Kind, Source
from helpers import facts

MANAGER_ZH = {"content": "用户的项目经理叫李华", "kind": "fact", "reason": "用户陈述的事实",
              "key": "fact:manager_name", "value": "李华", "importance": 0.6}




def contents(memory, user="u"):
    """What was remembered about `user`: not the session summaries, nor the episodes (what was said)."""
    return sorted(i.content for i in facts(memory.get_all(user_id=user)) if i.kind is not Kind.SUMMARY)


# --- the prompt and the happy path ------------------------------------------
def test_chinese_turn_gets_the_chinese_secretary_prompt_and_chinese_memories(llm_memory, fake_llm):
    fake_llm.reply_json({"memories": [MANAGER_ZH]})
    memory = llm_memory()
    events = memory.add("我的项目经理叫李华，我喜欢喝咖啡", user_id="u")
    sent = fake_llm.requests[-1]
    system, user = sent["messages"][0]["content"], sent["messages"][1]["content"]
    assert "记忆秘书" in system and "决策与承诺" in system and "绝不翻译" in system
    assert sent["response_format"] == {"type": "json_object"}
    assert "用户：我的项目经理叫李华，我喜欢喝咖啡" in user
    by_source = {e.memory.source: e.memory for e in events}
    assert by_source[Source.LLM].content == "用户的项目经理叫李华"
    assert by_source[Source.LLM].language == "zh" and by_source[Source.LLM].key == "fact:manager_name"
    assert by_source[Source.RULE].content == "用户喜欢喝咖啡"  # the rules still run
    assert all(e.action is Action.ADD for e in events)
    history = memory.history(by_source[Source.LLM].id)
    assert history[0].reason == "llm: 用户陈述的事实"


def test_english_prompt_and_decision_the_rules_cannot_see(llm_memory, fake_llm):
    fake_llm.reply_json({"memories": [{"content": "User decided to go with plan B for the launch.",
                                       "kind": "decision", "reason": "a decision", "importance": 0.7}]})
    memory = llm_memory()
    assert memory.add("OK, we go with plan B for the launch.", user_id="u")[0].memory.kind is Kind.DECISION
    assert "memory secretary" in fake_llm.requests[-1]["messages"][0]["content"]
    assert contents(memory) == ["User decided to go with plan B for the launch."]


def test_seed_format_bare_list_with_type_in_chinese_category_names(llm_memory, fake_llm):
    fake_llm.reply_json([
        {"content": "用户更喜欢用Markdown格式接收报告", "type": "用户偏好", "reason": "明确表达的偏好"},
        {"content": "用户需要在周五前完成项目提案初稿", "type": "任务与目标", "reason": "截止日期", "due": "2030-05-03"},
    ])
    memory = llm_memory()
    memory.add("Markdown最顺手。提案初稿的事，老板说周五要看。", user_id="u")
    items = {i.kind: i for i in memory.get_all(user_id="u")}
    assert items[Kind.PREFERENCE].content == "用户更喜欢用Markdown格式接收报告"
    assert items[Kind.TASK].due_at is not None and items[Kind.TASK].due_at.year == 2030


# --- language: a Chinese memory is never stored in English --------------------
def test_translated_item_is_dropped_and_counted_the_chinese_one_kept(llm_memory, fake_llm):
    fake_llm.reply_json({"memories": [
        {"content": "User's project manager is Li Hua.", "kind": "fact", "reason": "translated"},
        {"content": "用户每周五要交项目周报", "kind": "task", "reason": "周期任务"},
    ]})
    memory = llm_memory()
    memory.add("我的项目经理是李华，我每周五要交项目周报", user_id="u")
    stored = contents(memory)
    assert "用户每周五要交项目周报" in stored
    assert not any("Li Hua" in c for c in stored)
    assert memory.llm_usage()["tasks"]["extract_translated"] == 1


# --- failures: the rules' memories stay, the failure is logged and counted ----
@pytest.mark.parametrize("script", ["garbage", "malformed_body", "http_500", "timeout"])
def test_llm_failure_falls_back_to_the_rules(llm_memory, fake_llm, caplog, script):
    if script == "garbage":
        fake_llm.reply("Sure! The user likes coffee.")
    elif script == "malformed_body":
        fake_llm.malformed()
    elif script == "http_500":
        fake_llm.fail(500)
    else:
        fake_llm.delay(1.0, json.dumps({"memories": [MANAGER_ZH]}))
    memory = llm_memory(llm_timeout=0.3)
    with caplog.at_level("WARNING", logger="engram.llm"):
        events = memory.add("I love green tea", user_id="u")
    assert [e.memory.content for e in facts(events)] == ["User loves green tea."]
    assert events[0].memory.source is Source.RULE
    usage = memory.llm_usage()
    assert usage["tasks"]["extract_failed"] == 1 and usage["total"]["failures"] == 1
    assert "LLM extraction failed" in caplog.text


def test_malformed_json_is_repaired_where_safe(llm_memory, fake_llm):
    fake_llm.reply("```json\n{'memories': [{'content': 'User plays the cello.', 'kind': 'fact', 'reason': 'hobby',},],}\n```")
    memory = llm_memory()
    memory.add("Cello practice every evening, it's my thing", user_id="u")
    assert contents(memory) == ["User plays the cello."]


def test_rate_limit_then_success_is_retried_by_the_sdk(llm_memory, fake_llm):
    fake_llm.fail(429, retry_after=0.01)
    fake_llm.reply_json({"memories": [{"content": "User plays the cello.", "kind": "fact", "reason": "hobby"}]})
    memory = llm_memory(llm_max_retries=2)
    memory.add("Cello practice every evening, it's my thing", user_id="u")
    assert contents(memory) == ["User plays the cello."]
    assert len(fake_llm.requests) == 2 and memory.llm_usage()["total"]["calls"] == 1


def test_invalid_items_are_dropped_one_by_one(llm_memory, fake_llm):
    fake_llm.reply_json({"memories": [
        {"content": "", "kind": "fact"},
        {"content": "User is a vegetarian.", "kind": "opinion"},
        "just a string",
        {"content": "User plays the cello.", "kind": "fact", "importance": 7},
    ]})
    memory = llm_memory()
    memory.add("Vegetarian, and the cello is my thing", user_id="u")
    items = [i for i in facts(memory.get_all(user_id="u")) if i.source is Source.LLM]  # (the rules read "Vegetarian")
    assert [i.content for i in items] == ["User plays the cello."]
    assert items[0].importance == pytest.approx(0.7)  # a 1-10 scale read as 0..1
    assert memory.llm_usage()["tasks"]["extract_invalid"] == 3


def test_wrong_shape_falls_back(llm_memory, fake_llm):
    fake_llm.reply_json({"answer": "nothing", "count": 0})
    memory = llm_memory()
    events = memory.add("I love green tea", user_id="u")
    assert [e.memory.source for e in facts(events)] == [Source.RULE]
    assert memory.llm_usage()["tasks"]["extract_failed"] == 1


def test_what_the_rules_already_said_is_not_stored_twice(llm_memory, fake_llm):
    fake_llm.reply_json({"memories": [
        {"content": "User loves green tea.", "kind": "preference", "key": "preference:green_tea"},
        {"content": "User really loves green tea", "kind": "preference"},
        {"content": "User lives in Lyon.", "kind": "fact", "key": "fact:location"},
    ]})
    memory = llm_memory()
    memory.add("I love green tea. Lyon has been home for years.", user_id="u")
    assert contents(memory) == ["User lives in Lyon.", "User loves green tea."]
    assert memory.llm_usage()["tasks"]["extract_covered_by_rules"] == 2


def test_novel_candidates_rules_win_on_slot_and_text():
    rule = Candidate(content="User lives in Berlin.", kind=Kind.FACT, key="fact:location", value="berlin")
    same_key = Candidate(content="User is based in Berlin, Germany.", kind=Kind.FACT, key="fact:location",
                         source=Source.LLM)
    new = Candidate(content="User has two cats.", kind=Kind.FACT, source=Source.LLM)
    assert [c for c, _ in novel_candidates([(same_key, 0), (new, 0)], [rule])] == [new]


def test_extracted_memory_schema_clamps_and_maps():
    item = ExtractedMemory.model_validate({"content": " x ", "kind": "Commitment", "importance": -3, "polarity": "-5"})
    assert (item.content, item.kind, item.importance, item.polarity) == ("x", Kind.DECISION, 0.0, -1)


# --- privacy, budget and usage -------------------------------------------------
def test_secrets_are_redacted_before_they_reach_the_llm(llm_memory, fake_llm):
    memory = llm_memory()
    memory.add("My card is 4111 1111 1111 1111 and I love green tea", user_id="u")
    sent = prompt_text(requests_of(fake_llm, "extract")[-1])
    assert "4111" not in sent and "[REDACTED:card]" in sent


def test_llm_candidate_with_a_dropped_secret_is_not_stored(llm_memory, fake_llm):
    fake_llm.reply_json({"memories": [{"content": "User's card is [REDACTED:card].", "kind": "fact"}]})
    memory = llm_memory(privacy={"card": "drop"})
    memory.add("My card is 4111 1111 1111 1111", user_id="u")
    assert contents(memory) == []


def test_call_budget_per_user_then_rules_only(llm_memory, fake_llm):
    fake_llm.responder = router(extract={"memories": [{"content": "User plays the cello.", "kind": "fact"}]})
    memory = llm_memory(llm_call_budget=1)
    memory.add("Cello is my thing", user_id="u")
    events = memory.add("I love green tea", user_id="u")
    assert [e.memory.source for e in facts(events)] == [Source.RULE]
    memory.add("Cello is my thing", user_id="v")  # another user has a budget of their own
    usage = memory.llm_usage()
    assert usage["users"]["u"]["calls"] == 1 and usage["users"]["v"]["calls"] == 1
    assert usage["tasks"]["extract_failed"] == 1 and len(requests_of(fake_llm, "extract")) == 2


def test_global_budget(llm_memory, fake_llm):
    fake_llm.responder = router()
    memory = llm_memory(llm_call_budget=1, llm_budget_scope="global")
    memory.add("I love green tea", user_id="u")
    memory.add("I love black tea", user_id="v")
    assert len(fake_llm.requests) == 1


def test_tokens_and_cost_are_recorded_per_call(llm_memory, fake_llm):
    fake_llm.responder = router()
    memory = llm_memory(llm_price_per_1k_prompt=0.5, llm_price_per_1k_completion=1.5)
    memory.add("I love green tea", user_id="u")
    total = memory.llm_usage()["total"]
    assert total["calls"] == 1 and total["prompt_tokens"] > 100 and total["completion_tokens"] > 0
    expected = (total["prompt_tokens"] * 0.5 + total["completion_tokens"] * 1.5) / 1000
    assert total["cost"] == pytest.approx(expected)


def test_no_call_when_the_user_said_nothing(llm_memory, fake_llm):
    memory = llm_memory()
    memory.add([{"role": "assistant", "content": "How can I help?"}], user_id="u")
    assert fake_llm.requests == []


def test_extraction_off_and_infer_false_make_no_call(llm_memory, fake_llm):
    memory = llm_memory(llm_extraction="off")
    memory.add("I love green tea", user_id="u")
    memory.add("I love black tea", user_id="u", infer=False)
    assert fake_llm.requests == []


# --- batching -------------------------------------------------------------------
def test_batch_mode_one_call_per_n_turns(llm_memory, fake_llm):
    def answer(request):
        assert "Turn 3" in prompt_text(request)
        return {"memories": [{"content": "User is training for a marathon.", "kind": "task", "turn": 2}]}

    fake_llm.responder = router(extract=answer)
    memory = llm_memory(llm_extraction="batch", llm_batch_turns=3)
    first = memory.add("I love green tea", user_id="u", session_id="s")
    memory.add("Running 30 km a week now, the marathon is in May", user_id="u", session_id="s")
    assert fake_llm.requests == [] and [e.memory.source for e in facts(first)] == [Source.RULE]
    events = memory.add("Anyway, what's new?", user_id="u", session_id="s")
    assert len(fake_llm.requests) == 1
    assert [e.memory.content for e in facts(events)] == ["User is training for a marathon."]
    marathon = events[0].memory
    assert marathon.source is Source.LLM and marathon.session_id == "s"
    assert memory.llm_usage()["tasks"]["batched_turns"] == 3


def test_batch_mode_session_end_extracts_the_partial_batch_before_the_delta(llm_memory, fake_llm):
    fake_llm.responder = router(extract={"memories": [{"content": "User plays the cello.", "kind": "fact"}]})
    memory = llm_memory(llm_extraction="batch", llm_batch_turns=10)
    memory.add("Cello is my thing", user_id="u", session_id="s")
    memory.add("Bye!", user_id="u", session_id="s")  # a goodbye ends the session
    assert len(requests_of(fake_llm, "extract")) == 1
    assert contents(memory) == ["User plays the cello."]
    summary = memory.get_all(user_id="u", filters={"kind": "summary"})[0]
    assert "cello" in summary.content


def test_no_llm_configured_never_imports_openai(tmp_path):
    script = textwrap.dedent(f"""
        import sys
        from engram import Memory
        with Memory({str(tmp_path / 'x.db')!r}) as m:
            m.add("I love green tea", user_id="u")
            m.add("I love coffee", user_id="u", background=True)
            assert m.flush(10)
            m.end_session("u", m.session("u").session_id)
            assert m.llm is None and m.llm_usage()["total"] == {{}}
        print("openai" in sys.modules)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"


def test_task_router_sees_each_prompt():
    assert task_of({"messages": [{"role": "system", "content": "你是一名记忆秘书。"}]}) == "extract"


def test_llm_settings_from_environment_toml_and_arguments(tmp_path, monkeypatch):
    from engram.config import Settings
    from engram.llm import llm_settings, make_llm

    config = tmp_path / "engram.toml"
    config.write_text('[llm]\nmodel = "qwen2.5"\nextraction = "batch"\nbatch_turns = 4\ncall_budget = 50\n'
                      '[background]\nworkers = 2\n')
    monkeypatch.setenv("ENGRAM_CONFIG", str(config))
    monkeypatch.setenv("ENGRAM_LLM_BASE_URL", "http://127.0.0.1:11434/v1")
    monkeypatch.setenv("ENGRAM_LLM_TIMEOUT", "7.5")
    monkeypatch.setenv("ENGRAM_LLM_API_KEY", "sk-test")
    s = Settings(llm_price_per_1k_prompt=0.1)
    assert (s.llm_extraction, s.llm_batch_turns, s.background_workers) == ("batch", 4, 2)
    made = llm_settings(s)
    assert (made.base_url, made.model, made.timeout, made.call_budget, made.price_per_1k_prompt) == (
        "http://127.0.0.1:11434/v1", "qwen2.5", 7.5, 50, 0.1)
    assert made.api_key.get_secret_value() == "sk-test"
    monkeypatch.delenv("ENGRAM_LLM_BASE_URL")
    monkeypatch.setenv("ENGRAM_CONFIG", str(tmp_path / "none.toml"))
    assert make_llm(Settings()) is None


def test_an_llm_no_longer_fact_ends_exactly_the_value_it_names(llm_memory, fake_llm):
    """Polarity -1 on a fact (the prompt says so) is "no longer": it supersedes the memory
    holding that value, and only that one."""
    memory = llm_memory()
    fake_llm.reply_json({"memories": []})
    kept = memory.add("I work at Acme.", user_id="u")[0].memory
    assert kept.key == "fact:employer"
    fake_llm.reply_json({"memories": [{
        "content": "User no longer works at Acme.", "kind": "fact", "reason": "a change",
        "key": "fact:employer", "value": "Acme", "importance": 0.6, "polarity": -1,
    }]})
    events = memory.add("Left Acme behind last month.", user_id="u")  # (the rules read nothing here)
    assert [e.action for e in facts(events)] == [Action.SUPERSEDE]
    assert memory.get(kept.id).status.value == "superseded"
    assert "polarity (on a preference: 1 likes, -1 dislikes; on anything else: -1 when" in \
        fake_llm.requests[-1]["messages"][0]["content"] + fake_llm.requests[-1]["messages"][1]["content"]
