"""engram.grounding and engram.llm_calls: the pure checks, on what real small models wrote (issue #19)."""

from __future__ import annotations

import pytest

from engram.grounding import judgement_problem, proposal_problem, source_of
from engram.llm_calls import is_local, max_tokens_for, retry_delay
from engram.models import Message

PUPPY = "I just got a puppy! Her name's Coco. We're planning a trip to Japan in April."


@pytest.mark.parametrize("content", [
    "User's project manager is Li Hua.",  # the prompt's old example, copied for every message
    "User plans a trip to Japan in May 2027.",  # a number the user never said
    "Your puppy's name is Coco.",  # second person
    "I just got a puppy named Coco.",  # first person
    "User's <relation> is <name>.",  # the new example's placeholders, copied
    "User asked whether the puppy needs shots?",
])
def test_ungrounded_or_misworded_proposals_are_refused(content):
    assert proposal_problem(content, PUPPY) is not None


@pytest.mark.parametrize("content", [
    "User's puppy is named Coco.", "User has a new dog named Coco.", "User is planning a trip to Japan in April.",
])
def test_paraphrases_of_what_the_user_said_pass(content):
    assert proposal_problem(content, PUPPY) is None


def test_chinese_grounding_reads_words_across_segmentations_and_names():
    assert proposal_problem("用户的项目经理叫李华", "我最近爱上了绿茶") is not None
    assert proposal_problem("用户的项目经理叫李华", "李华是我的经理") is None
    assert proposal_problem("用户不再在腾讯工作", "我从腾讯离职了") is None  # the name grounds it
    assert proposal_problem("用户不喜欢吃香菜", "香菜我是真的不喜欢吃") is None
    assert proposal_problem("我不喜欢吃香菜", "我不喜欢吃香菜") == "first person"


def test_an_assistant_sentence_is_context_unless_the_user_confirms_it():
    said, assistant = source_of([Message(role="user", content="What's my puppy called?"),
                                 Message(role="assistant", content="Your puppy's name is Coco.")])
    assert "Coco" not in said and assistant == ["Your puppy's name is Coco."]
    assert proposal_problem("Your puppy's name is Coco.", said, assistant) is not None
    assert proposal_problem("User's puppy is named Coco.", said, assistant) is not None
    said, _ = source_of([Message(role="assistant", content="Is your puppy called Coco?"),
                         Message(role="user", content="对，就是她")])
    assert proposal_problem("User's puppy is named Coco.", said) is None


def test_judgements_real_models_wrote_are_refused_and_a_clean_one_passes():
    acme = {"candidate": "User works as a data engineer.", "old": "User works at Acme.",
            "said": "I work at Acme as a data engineer and I prefer answers in Markdown."}
    bad = ("I work at Acme as a data engineer and I prefer answers in Markdown. This information is consistent "
           "with the existing memory about my current job title.")
    assert "statement about the user" in judgement_problem(bad, **acme)
    assert judgement_problem("User works at Acme. This information is consistent with the existing memory.",
                             **acme) is not None  # commentary
    assert judgement_problem("User works at Acme as a data engineer.", **acme) is None
    assert judgement_problem("User works at Acme as a data engineer in Berlin.", **acme).startswith("name")
    coriander = {"candidate": "用户受不了香菜", "old": "用户不喜欢吃香菜", "said": "香菜我是真的受不了"}
    assert judgement_problem("用户询问是否喜欢香菜，我不同意。", **coriander) == "a question, not a statement"
    assert judgement_problem("用户不喜欢吃香菜，觉得受不了", **coriander) is None
    assert judgement_problem("用户不喜欢吃香菜，" * 3, **coriander).startswith("longer")


@pytest.mark.parametrize("url, local", [
    ("http://127.0.0.1:8080/v1", True), ("http://localhost:11434/v1", True), ("http://[::1]:8000/v1", True),
    ("http://192.168.1.20:8000/v1", True), ("http://10.0.0.5/v1", True), ("http://gpu-box.local:8000/v1", True),
    ("https://api.openai.com/v1", False), ("https://dashscope.aliyuncs.com/compatible-mode/v1", False), (None, False),
])
def test_local_endpoints_are_recognised(url, local):
    assert is_local(url) is local


def test_retry_policy():
    assert retry_delay(status=None, timed_out=True, local=True, attempt=0) is None
    assert retry_delay(status=None, timed_out=True, local=False, attempt=0) == 0.5
    assert retry_delay(status=503, timed_out=False, local=True, attempt=2) == 2.0
    assert retry_delay(status=429, timed_out=False, local=True, attempt=0, retry_after="0.01") == 0.01
    assert retry_delay(status=400, timed_out=False, local=True, attempt=0) is None
    assert max_tokens_for("judge", {"judge": 99, "reply": 7}) == 99 and max_tokens_for("other", {"reply": 7}) == 7


def test_numbers_must_be_the_users_in_digits_or_words():
    assert proposal_problem("User has been vegetarian for 3 years.", "I've been vegetarian for three years") is None
    assert proposal_problem("User has been vegetarian for 4 years.", "I've been vegetarian for three years") \
        == "number(s) not in the source: 4"
    assert proposal_problem("用户的猫2岁了", "我养了一只猫，今年两岁了") is None
    assert proposal_problem("User must send the draft by 2030-05-03.", "I must send the draft by Friday") is None


def test_the_us_is_no_first_person():
    assert proposal_problem("User moved to the US in 2021.", "We moved to the US in 2021") is None
