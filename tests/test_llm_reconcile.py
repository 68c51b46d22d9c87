"""Reconciliation of hard cases: a candidate in the similarity grey zone goes to the LLM judge."""

from __future__ import annotations

import pytest
from llm_scripts import prompt_text, requests_of, router

from engram.models import Action, Candidate, Kind, MemoryItem, Status
from engram.reconcile import Decision, decide
from helpers import facts

HIKING = "I love hiking"
ALPS = "I love hiking in the Alps"  # cosine ~0.83 with HIKING: the grey zone, another slot


@pytest.fixture
def llm_overrides() -> dict:
    return {"llm_extraction": "off", "llm_compress": False}


# --- decide stays pure; the judge is an optional callable ----------------------
def _item(content: str) -> MemoryItem:
    return MemoryItem(user_id="u", content=content, kind=Kind.PREFERENCE)


def test_decide_asks_the_judge_only_in_the_grey_zone():
    calls = []

    def judge(candidate, said, grey):
        calls.append([round(s, 2) for _, s in grey])
        return Decision(Action.NOOP, grey[0][0], "llm: same")

    candidate = Candidate(content="User likes tea.", kind=Kind.PREFERENCE)
    near, grey, far = _item("User likes tea!"), _item("b"), _item("c")
    kwargs = {"said": "I like tea", "exact": [], "same_key": [], "duplicate_similarity": 0.93}
    # a near-duplicate is settled by the rules, no judge
    assert decide(candidate, similar=[(near, 0.95)], judge=judge, grey_zone=0.75, **kwargs).action is Action.NOOP
    assert calls == []
    # a close vector with other wording is not a duplicate: the judge decides
    decide(candidate, similar=[(_item("User likes tea number 2."), 0.95)], judge=judge, grey_zone=0.75, **kwargs)
    assert calls == [[0.95]]
    calls.clear()
    # nothing in the zone: ADD without a call
    assert decide(candidate, similar=[(far, 0.5)], judge=judge, grey_zone=0.75, **kwargs).action is Action.ADD
    assert calls == []
    decision = decide(candidate, similar=[(grey, 0.8), (far, 0.5)], judge=judge, grey_zone=0.75, **kwargs)
    assert decision.action is Action.NOOP and decision.target is grey and calls == [[0.8]]
    # no judge (no LLM): the rules' decision, as before
    assert decide(candidate, similar=[(grey, 0.8)], **kwargs).action is Action.ADD


def test_judge_returning_none_means_add():
    candidate = Candidate(content="User likes tea.", kind=Kind.PREFERENCE)
    decision = decide(candidate, said="", exact=[], same_key=[], similar=[(_item("b"), 0.8)],
                      duplicate_similarity=0.93, judge=lambda *a: None, grey_zone=0.75)
    assert decision.action is Action.ADD


# --- end to end through Memory ---------------------------------------------------
def test_update_refines_the_memory_and_records_the_reason(llm_memory, fake_llm):
    fake_llm.responder = router(judge={"action": "UPDATE", "target": 1,
                                       "content": "User loves hiking, especially in the Alps.",
                                       "reason": "adds where the user hikes"})
    memory = llm_memory()
    first = memory.add(HIKING, user_id="u")[0].memory
    events = memory.add(ALPS, user_id="u")
    prompt = prompt_text(requests_of(fake_llm, "judge")[0])
    assert "User loves hiking." in prompt and "User loves hiking in the Alps." in prompt and "I love hiking in the Alps" in prompt
    assert [e.action for e in facts(events)] == [Action.UPDATE]
    updated = memory.get(first.id)
    assert updated.content == "User loves hiking, especially in the Alps."
    assert [i.content for i in facts(memory.get_all(user_id="u"))] == [updated.content]
    last = memory.history(first.id)[-1]
    assert (last.action, last.old_content, last.reason) == ("UPDATE", "User loves hiking.", "llm: adds where the user hikes")
    assert facts(memory.search("Alps", user_id="u"))[0].memory.id == first.id  # re-embedded, re-indexed
    assert memory.llm_usage()["tasks"]["judge_update"] == 1


def test_supersede_dispute_noop_and_add(llm_memory, fake_llm):
    answers = iter([
        {"action": "SUPERSEDE", "target": 1, "reason": "the user changed"},
        {"action": "DISPUTE", "target": 1, "reason": "unclear"},
        {"action": "NOOP", "target": 1, "reason": "same thing"},
        {"action": "ADD", "reason": "different"},
    ])
    fake_llm.responder = router(judge=lambda request: next(answers))
    memory = llm_memory()
    users = ["a", "b", "c", "d"]
    firsts = {u: memory.add(HIKING, user_id=u)[0].memory for u in users}
    results = {u: memory.add(ALPS, user_id=u)[0] for u in users}
    assert results["a"].action is Action.SUPERSEDE and memory.get(firsts["a"].id).status is Status.SUPERSEDED
    assert memory.history(firsts["a"].id)[-1].reason == "llm: the user changed"
    assert results["b"].action is Action.DISPUTE and memory.get(firsts["b"].id).status is Status.DISPUTED
    assert results["c"].action is Action.NOOP and memory.get(firsts["c"].id).strength == 2.0
    assert results["d"].action is Action.ADD and len(facts(memory.get_all(user_id="d"))) == 2
    assert memory.history(results["d"].memory.id)[0].reason == "llm: different"


@pytest.mark.parametrize("answer", ["no idea", {"action": "UPDATE", "target": 7}, {"action": "MERGE", "target": 1},
                                    {"action": "SUPERSEDE"}])
def test_bad_judgement_means_add(llm_memory, fake_llm, answer):
    fake_llm.responder = router(judge=answer)
    memory = llm_memory()
    memory.add(HIKING, user_id="u")
    assert memory.add(ALPS, user_id="u")[0].action is Action.ADD
    tasks = memory.llm_usage()["tasks"]
    assert tasks.get("judge_failed", 0) + tasks.get("judge_invalid", 0) == 1


def test_judge_timeout_means_add_quickly(llm_memory, fake_llm):
    memory = llm_memory(llm_timeout=0.3)
    memory.add(HIKING, user_id="u")
    fake_llm.delay(1.0, '{"action": "NOOP", "target": 1}')
    assert memory.add(ALPS, user_id="u")[0].action is Action.ADD
    assert memory.llm_usage()["tasks"]["judge_failed"] == 1


def test_chinese_update_must_stay_chinese(llm_memory, fake_llm):
    fake_llm.responder = router(judge={"action": "UPDATE", "target": 1, "content": "User likes green and oolong tea."})
    memory = llm_memory(llm_grey_zone=0.5)
    memory.add("我喜欢喝绿茶", user_id="u")
    events = memory.add("我喜欢喝乌龙茶", user_id="u")
    assert events[0].action is Action.ADD
    assert sorted(i.content for i in facts(memory.get_all(user_id="u"))) == ["用户喜欢喝乌龙茶", "用户喜欢喝绿茶"]


def test_chinese_update_in_chinese(llm_memory, fake_llm):
    fake_llm.responder = router(judge={"action": "UPDATE", "target": 1, "content": "用户喜欢喝绿茶和乌龙茶",
                                       "reason": "补充了另一种茶"})
    memory = llm_memory(llm_grey_zone=0.5)
    memory.add("我喜欢喝绿茶", user_id="u")
    events = memory.add("我喜欢喝乌龙茶", user_id="u")
    assert events[0].action is Action.UPDATE and events[0].memory.content == "用户喜欢喝绿茶和乌龙茶"
    assert "你负责维护用户的长期记忆" in prompt_text(requests_of(fake_llm, "judge")[0])


def test_grey_zone_is_configurable_and_off_switch(llm_memory, fake_llm):
    fake_llm.responder = router()
    memory = llm_memory(llm_grey_zone=0.9)
    memory.add(HIKING, user_id="u")
    memory.add(ALPS, user_id="u")
    assert requests_of(fake_llm, "judge") == []
    memory2 = llm_memory(llm_reconcile=False)
    memory2.add(HIKING, user_id="v")
    memory2.add(ALPS, user_id="v")
    assert requests_of(fake_llm, "judge") == []
