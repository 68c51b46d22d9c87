"""The LLM path against small local models (issue #19), replayed on the scripted server.

The outputs below are what Qwen2.5-Coder 0.5B/1.5B really answered behind
llama.cpp's server: a copied prompt example, a judge writing in the first person
with commentary, a question instead of a fact, the assistant's own sentence, and
a model looping until its context was full.
"""

from __future__ import annotations

import threading
import time

import pytest
from llm_scripts import requests_of, router, task_of

from engram.agent import MemoryAgent
from engram.models import Kind, Source
from engram.providers.openai_compat import LLMSettings, LLMUnavailable, OpenAICompatLLM

PUPPY = "I just got a puppy! Her name's Coco. We're planning a trip to Japan in April."
COPIED = {"content": "User's project manager is Li Hua.", "kind": "fact", "key": "fact:manager_name",
          "value": "Li Hua"}
ACME_UPDATE = {"action": "UPDATE", "target": 1, "reason": "consistent",
               "content": "I work at Acme as a data engineer and I prefer answers in Markdown. This information is "
                          "consistent with the existing memory about my current job title."}
CORIANDER_UPDATE = {"action": "UPDATE", "target": 1, "content": "用户询问是否喜欢香菜，我不同意。", "reason": "合并"}


def contents(memory, user="u"):
    return sorted(i.content for i in memory.get_all(user_id=user) if i.kind is not Kind.SUMMARY)


def wait_for(condition, seconds=5.0):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.01)
    return condition()


# --- 1. grounding: the copied example ------------------------------------------
def test_the_copied_prompt_example_is_not_stored_and_a_grounded_memory_is(llm_memory, fake_llm):
    fake_llm.responder = router(extract={"memories": [
        COPIED, {"content": "User's puppy is named Coco.", "kind": "fact"},
        {"content": "User plans a trip to Japan in April.", "kind": "event"},
    ]})
    memory = llm_memory()
    memory.add(PUPPY, user_id="u")
    stored = contents(memory)  # the rules (issue #12) read this turn too: the model's two may be their duplicates
    assert any("Coco" in c for c in stored) and any("Japan in April" in c for c in stored)
    assert not any(COPIED["content"] in c for c in stored)
    tasks = memory.llm_usage()["tasks"]
    assert (tasks["extract_ungrounded"], tasks["extract_grounded"]) == (1, 2)
    # the prompt no longer holds a concrete fact a weak model can copy
    system = requests_of(fake_llm, "extract")[0]["messages"][0]["content"]
    assert "Li Hua" not in system and "<name>" in system


def test_the_copied_chinese_example_is_not_stored(llm_memory, fake_llm):
    fake_llm.responder = router(extract={"memories": [
        {"content": "用户的项目经理叫李华", "kind": "fact"}, {"content": "用户最近爱上了绿茶", "kind": "preference"}]})
    memory = llm_memory()
    memory.add("我最近爱上了绿茶", user_id="u")
    assert "用户的项目经理叫李华" not in contents(memory) and "用户最近爱上了绿茶" in contents(memory)
    assert "李华" not in requests_of(fake_llm, "extract")[0]["messages"][0]["content"]


# --- 2. the judge cannot corrupt a good memory -------------------------------------
def test_a_first_person_commentary_update_is_refused_and_the_old_memory_stays(llm_memory, fake_llm):
    fake_llm.responder = router(judge=ACME_UPDATE)
    memory = llm_memory(llm_extraction="off", llm_compress=False, llm_grey_zone=0.0)
    acme = memory.add("I work at Acme.", user_id="u")[0].memory
    memory.add("I work at Acme as a data engineer and I prefer answers in Markdown.", user_id="u")
    assert requests_of(fake_llm, "judge"), "the judge was asked"
    assert memory.get(acme.id).content == "User works at Acme."
    stored = contents(memory)
    assert "User works at Acme." in stored and not any("I work" in c or "consistent" in c for c in stored)
    assert memory.llm_usage()["tasks"]["judge_refused"] >= 1
    assert "UPDATE" not in [h.action for h in memory.history(acme.id)]


def test_a_question_in_the_first_person_does_not_replace_a_chinese_memory(llm_memory, fake_llm):
    fake_llm.responder = router(
        judge=CORIANDER_UPDATE,
        extract=lambda r: {"memories": [{"content": "用户受不了香菜", "kind": "preference"}]}
        if "受不了" in str(r) else {"memories": []},
    )
    memory = llm_memory(llm_compress=False, llm_grey_zone=0.0)
    old = memory.add("我不喜欢吃香菜", user_id="u")[0].memory
    memory.add("香菜我是真的受不了", user_id="u")
    assert requests_of(fake_llm, "judge")
    assert memory.get(old.id).content == "用户不喜欢吃香菜"
    assert not any("询问" in c or "我" in c for c in contents(memory))
    assert memory.llm_usage()["tasks"]["judge_refused"] == 1


def test_a_grounded_third_person_update_is_still_applied(llm_memory, fake_llm):
    fake_llm.responder = router(judge={"action": "UPDATE", "target": 1, "reason": "adds the role",
                                       "content": "User works at Acme as a data engineer."})
    memory = llm_memory(llm_extraction="off", llm_compress=False, llm_grey_zone=0.0)
    acme = memory.add("I work at Acme.", user_id="u")[0].memory
    memory.add("I am a data engineer.", user_id="u")
    assert memory.get(acme.id).content == "User works at Acme as a data engineer."


# --- 3. assistant turns are context ---------------------------------------------------
def test_the_assistants_sentence_is_never_stored_but_what_the_user_confirms_is(memory_with_agent, fake_llm):
    memory, agent = memory_with_agent
    proposals = {"memories": [{"content": "Your puppy's name is Coco.", "kind": "fact"},
                              {"content": "User's puppy is named Coco.", "kind": "fact"}]}
    fake_llm.responder = router(chat="Your puppy's name is Coco.", extract=proposals)
    assert agent.chat("What's my puppy called again?") == "Your puppy's name is Coco."
    assert contents(memory, "sam") == []  # only the assistant said Coco: nothing the user said or confirmed
    memory.add([{"role": "assistant", "content": "Is your puppy called Coco?"},
                {"role": "user", "content": "Yes, that's her."}], user_id="sam")
    assert contents(memory, "sam") == ["User's puppy is named Coco."]  # confirmed, in the third person


@pytest.fixture
def memory_with_agent(llm_memory):
    memory = llm_memory(llm_compress=False)
    return memory, MemoryAgent(memory, user_id="sam", background=False)


# --- 4. bounded calls -------------------------------------------------------------------
def test_every_request_carries_max_tokens_from_its_task(llm_memory, fake_llm):
    fake_llm.responder = router(chat="Noted.", extract={"memories": []})
    memory = llm_memory(llm_grey_zone=0.0, llm_max_tokens_extract=300, llm_max_tokens_reply=200)
    agent = MemoryAgent(memory, user_id="u", background=False)
    agent.chat("I love green tea and I work at Acme.")
    agent.chat("I also love black tea.")
    agent.end()
    sent = [r for r, path in zip(fake_llm.requests, fake_llm.paths, strict=True) if path.endswith("completions")]
    by_task = {task: {r["max_tokens"] for r in requests_of(fake_llm, task)} for task in ("chat", "extract", "judge", "compress")}
    assert all(isinstance(r.get("max_tokens"), int) and r["max_tokens"] > 0 for r in sent)
    assert by_task == {"chat": {200}, "extract": {300}, "judge": {160}, "compress": {700}}


def test_a_looping_model_costs_one_bounded_call_and_the_server_is_told_to_stop(llm_memory, fake_llm):
    fake_llm.loop()  # a 0.5B model that never stops
    memory = llm_memory(llm_timeout=0.5, llm_max_retries=2)
    events = memory.add("I love green tea", user_id="u")
    assert [e.memory.source for e in events] == [Source.RULE]  # the rules' memory, nothing lost
    assert len(requests_of(fake_llm, "extract")) == 1  # no retry after a timeout on a local endpoint
    assert wait_for(lambda: fake_llm.aborted == 1)  # the stream was closed: the server stops generating
    usage = memory.llm_usage()
    assert (usage["total"]["calls"], usage["total"]["failures"], usage["tasks"]["extract_failed"]) == (1, 1, 1)


def test_a_silent_local_model_is_not_asked_again_after_a_timeout(llm_memory, fake_llm):
    fake_llm.loop()  # not streamed: no byte comes until the client gives up
    memory = llm_memory(llm_timeout=0.5, llm_max_retries=2, llm_stream="off")
    memory.add("I love green tea", user_id="u")
    assert len(requests_of(fake_llm, "extract")) == 1


def test_a_local_server_error_is_still_retried(fake_llm):
    fake_llm.fail(503, times=2)
    fake_llm.reply("fine")
    llm = OpenAICompatLLM(LLMSettings(base_url=fake_llm.base_url, model="m", timeout=2, max_retries=2))
    assert llm.chat([{"role": "user", "content": "hi"}]).text == "fine"
    assert len(fake_llm.requests) == 3


def test_a_reply_goes_before_a_task_call_which_is_sent_again_after_it(fake_llm):
    fake_llm.loop()  # the extraction call: a long generation in progress
    fake_llm.reply("Here is your answer.")  # the agent's reply
    fake_llm.reply_json({"memories": []})  # the extraction, sent again
    llm = OpenAICompatLLM(LLMSettings(base_url=fake_llm.base_url, model="m", timeout=5, max_retries=0))
    chat_model = OpenAICompatLLM(LLMSettings(base_url=fake_llm.base_url + "/", model="big", timeout=5, max_retries=0))
    results: list = []
    task = threading.Thread(target=lambda: results.append(
        llm.chat_json([{"role": "user", "content": "extract"}], task="extract")))
    task.start()
    assert wait_for(lambda: len(fake_llm.requests) == 1)
    reply = chat_model.chat([{"role": "user", "content": "hello"}], task="reply")  # another client, same server
    task.join(5)
    assert reply.text == "Here is your answer." and results == [{"memories": []}]
    assert [r["max_tokens"] for r in fake_llm.requests] == [512, 600, 512]
    assert wait_for(lambda: fake_llm.aborted == 1)  # the stopped stream was closed
    assert llm.ledger.snapshot()["total"]["calls"] == 1  # the resent call is the same call


def test_an_agent_reply_stops_a_background_extraction_which_runs_again_after(llm_memory, fake_llm):
    fake_llm.responder = router(chat="Noted.", extract={"memories": []})
    fake_llm.loop(when=lambda request: task_of(request) == "extract")  # the first extraction: slow, endless
    memory = llm_memory(llm_timeout=10, llm_compress=False, background_poll_s=0.05)
    agent = MemoryAgent(memory, user_id="u")  # extraction in the background
    assert agent.chat("I love green tea") == "Noted."
    assert wait_for(lambda: len(requests_of(fake_llm, "extract")) == 1)  # it is generating now
    assert agent.chat("And I work at Acme.") == "Noted."  # the reply did not queue behind it
    assert memory.flush(timeout=10)
    assert wait_for(lambda: fake_llm.aborted == 1)  # the extraction was stopped for the reply…
    assert len(requests_of(fake_llm, "extract")) == 3  # …and sent again, then the second turn's
    assert contents(memory) == ["User loves green tea.", "User works at Acme."]


def test_a_hosted_endpoint_is_not_streamed():
    llm = OpenAICompatLLM(LLMSettings(base_url="https://api.deepseek.com/v1", model="m"))
    assert not llm.local and not llm.streaming


def test_timeouts_are_bounded_by_the_budget_not_by_chunks(fake_llm):
    fake_llm.loop(interval=0.001)  # chunks keep coming: no read timeout would ever fire
    llm = OpenAICompatLLM(LLMSettings(base_url=fake_llm.base_url, model="m", timeout=0.3, max_retries=3))
    with pytest.raises(LLMUnavailable, match="stopped after"):
        llm.chat([{"role": "user", "content": "hi"}], task="extract")
    assert len(fake_llm.requests) == 1


def test_a_server_refusing_stream_options_is_streamed_without_them(fake_llm):
    fake_llm.fail(422, {"detail": [{"loc": ["body", "stream_options"], "msg": "extra fields not permitted"}]})
    fake_llm.reply("fine")
    fake_llm.reply("again")
    llm = OpenAICompatLLM(LLMSettings(base_url=fake_llm.base_url, model="m", timeout=2, max_retries=0))
    assert llm.chat([{"role": "user", "content": "hi"}]).text == "fine"
    assert llm.chat([{"role": "user", "content": "hi"}]).text == "again"
    assert ["stream_options" in r for r in fake_llm.requests] == [True, False, False]
    assert all(r["stream"] for r in fake_llm.requests)


def test_a_server_that_wants_max_completion_tokens_gets_them(fake_llm):
    fake_llm.fail(400, {"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this model. "
                                             "Use 'max_completion_tokens' instead.", "type": "invalid_request_error"}})
    fake_llm.reply("fine")
    fake_llm.reply("again")
    llm = OpenAICompatLLM(LLMSettings(base_url=fake_llm.base_url, model="m", timeout=2, max_retries=0))
    assert llm.chat([{"role": "user", "content": "hi"}], task="judge").text == "fine"
    assert llm.chat([{"role": "user", "content": "hi"}], task="judge").text == "again"
    assert [(r.get("max_tokens"), r.get("max_completion_tokens")) for r in fake_llm.requests] == [
        (160, None), (None, 160), (None, 160)]
