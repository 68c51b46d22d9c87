"""Questions in the words people use for a fact ("what's my job?") find the fact that holds it
("User is a data scientist.") though they share no word (engram.slots)."""

from __future__ import annotations

import pytest

from engram.slots import fact_slots, question_slots

EN = [
    "Hi! I'm Priya, I'm a data scientist at Spotify.",
    "I live in Stockholm with my partner.",
    "I'm 34 years old.",
    "I grew up in Ohio.",
    "I'm vegan.",
    "The weather has been awful lately.",
    "I watched a documentary about octopuses last night.",
    "My sister Anna is a nurse in Leeds.",
]
ZH = [
    "你好，我叫王芳，是一名护士，在协和医院上班。",
    "我住在上海浦东。",
    "我今年三十二岁。",
    "我老家是四川成都的。",
    "这几天天气一直不好。",
    "昨天和朋友去吃了火锅，特别好吃。",
]


def _said(memory, user_id: str, turns: list[str]) -> None:
    for turn in turns:
        memory.add(turn, user_id=user_id)
    memory.flush()


@pytest.mark.parametrize("question, expected", [
    ("what is my job?", {"User is a data scientist.", "User works at Spotify."}),
    ("what do I do for a living?", {"User is a data scientist.", "User works at Spotify."}),
    ("what's my profession?", {"User is a data scientist."}),
    ("where am I based?", {"User lives in Stockholm."}),
    ("where am I from originally?", {"User grew up in Ohio."}),
    ("how old am I?", {"User is 34 years old."}),
    ("what do I eat?", {"User is vegan."}),
])
def test_an_english_question_finds_the_fact_it_asks_for(memory, question, expected):
    _said(memory, "priya", EN)
    top = [h.memory.content for h in memory.search(question, user_id="priya", limit=len(expected))]
    assert set(top) == expected


@pytest.mark.parametrize("question, expected", [
    ("我是做什么工作的？", "用户是一名护士"),
    ("我的职业是什么？", "用户是一名护士"),
    ("我多大了？", "用户今年三十二岁"),
    ("我是哪里人？", "用户老家是四川成都的"),
    ("我家在哪？", "用户住在上海浦东"),
])
def test_a_chinese_question_finds_the_fact_it_asks_for(memory, question, expected):
    _said(memory, "wangfang", ZH)
    assert memory.search(question, user_id="wangfang", limit=1)[0].memory.content == expected


def test_a_question_about_someone_else_does_not_ask_for_the_users_own(memory):
    _said(memory, "priya", EN)
    top = memory.search("what does my sister do for a living?", user_id="priya", limit=1)
    assert top[0].memory.content == "User's sister Anna is a nurse in Leeds."
    assert question_slots("what does my sister do for a living?") == ()
    assert question_slots("what's my dog's name?") == ()
    assert question_slots("我妈妈住在哪？") == ()
    assert question_slots("where does she live?") == ()


def test_the_users_own_questions_name_their_slots():
    assert question_slots("what's my name?") == ("slot:name",)
    assert question_slots("我叫什么名字？") == ("slot:name",)
    assert question_slots("what am I allergic to?") == ("slot:health",)
    assert question_slots("what's the weather like?") == ()


def test_keyed_facts_carry_their_slots():
    assert fact_slots("fact:occupation") == ["slot:work"]
    assert fact_slots("fact:allergy_花生") == ["slot:health", "slot:diet"]
    assert fact_slots("fact:learning_japanese") == ["slot:school"]
    assert fact_slots("fact:dog_name") == []  # the dog's name is not the user's
    assert fact_slots(None) == []


def test_the_facts_of_one_turn_are_each_a_result(memory):
    """A turn's facts say different things: each is found (the turn itself stands behind them)."""
    _said(memory, "priya", EN)
    found = [h.memory.content for h in memory.search("what is my job?", user_id="priya", limit=5)]
    assert "User is a data scientist." in found and "User works at Spotify." in found
    assert "Hi! I'm Priya, I'm a data scientist at Spotify." not in found
    assert len(found) == len(set(found))


def test_a_word_of_liking_beside_a_topic_does_not_outweigh_it(memory):
    """"which seat do I like on planes?" is about seats: the one memory that says "like" (the
    Lakers) does not win on that word alone."""
    _said(memory, "tom", ["I'm a huge fan of the Lakers.", "I prefer window seats when I fly.",
                          "I can't stand country music.", "I'm vegetarian."])
    assert memory.search("which seat do I like on planes?", user_id="tom", limit=1)[0].memory.content == (
        "User prefers window seats when they fly.")
    assert memory.search("what music don't I like?", user_id="tom", limit=1)[0].memory.content == (
        "User dislikes country music.")
    assert memory.search("what do I like?", user_id="tom", limit=1)[0].memory.content == "User likes the Lakers."


def test_a_food_preference_answers_what_the_user_eats(memory):
    _said(memory, "chen", ["我不吃香菜。", "我住在上海。", "我每天早上跑步。", "我的女儿叫小雨。"])
    top = memory.search("我有什么忌口？", user_id="chen", limit=1)[0].memory.content
    assert "香菜" in top
    assert fact_slots("preference:香菜", "用户不吃香菜") == ["slot:diet"]
    assert fact_slots("preference:jazz", "User likes jazz.") == []
