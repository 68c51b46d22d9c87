"""A sentence that starts with the name of the user's own person or pet is about them
("Max passed away" after "I have a dog named Max"), in English and Chinese."""

from __future__ import annotations

import pytest

from engram.extract import extract_candidates
from engram.extract.owned import as_owned
from engram.graph.kin import owned_names

OWNED = {"Max": "dog", "Anna": "sister", "小雨": "女儿"}


@pytest.mark.parametrize("sentence, read", [
    ("Max passed away last week.", "My dog Max passed away last week."),
    ("Anna got promoted.", "My sister Anna got promoted."),
    ("Anna's car broke down.", "My sister Anna's car broke down."),  # what is theirs
    ("Anna’s birthday is in May.", "My sister Anna’s birthday is in May."),
    ("Anna's.", "Anna's."),
    ("Sadly Max passed away last night.", "Sadly my dog Max passed away last night."),  # after a word that leads in
    ("Guess what, Anna got promoted!", "Guess what, my sister Anna got promoted!"),
    ("So Maxwell is great.", "So Maxwell is great."),
    ("小雨考上了大学。", "我的女儿小雨考上了大学。"),
    ("Anna, guess what!", "Anna, guess what!"),  # called out, not talked about
    ("Maxwell is great.", "Maxwell is great."),  # another word that starts the same
    ("Max Planck was a physicist.", "Max Planck was a physicist."),  # a longer name
    ("I love Max.", "I love Max."),
    ("Anna is my sister.", "Anna is my sister."),  # says whose she is itself
    ("Anna, my little sister, is a nurse.", "Anna, my little sister, is a nurse."),
    ("小雨是我女儿。", "小雨是我女儿。"),
])
def test_a_sentence_that_starts_with_an_owned_name_says_whose_it_is(sentence, read):
    assert as_owned(sentence, OWNED) == read


def test_the_rules_then_keep_it_about_them():
    said = [c.content for c in extract_candidates("Max passed away last week.", owned=OWNED)]
    assert said == ["User's dog Max passed away."]
    assert [c.content for c in extract_candidates("小雨考上了大学。", owned=OWNED)] == ["用户的女儿小雨考上了大学"]
    assert extract_candidates("Max passed away last week.") == []  # nobody said whose Max is


@pytest.mark.parametrize("first, later, fact", [
    ("I have a dog named Max.", "Max passed away last week.", "User's dog Max passed away."),
    ("My sister Anna is a nurse.", "Anna got promoted yesterday.", "User's sister Anna got promoted."),
    ("我女儿叫小雨。", "小雨考上了大学。", "用户的女儿小雨考上了大学"),
    ("我养了一只猫，叫咪咪。", "咪咪生病了。", "用户的猫咪咪生病了"),
    ("我们家有一只金毛，叫豆豆。", "豆豆昨天生病了。", "用户的金毛豆豆生病了"),
    ("We have a golden retriever called Biscuit.", "Biscuit chewed my shoes again.",
     "User's dog Biscuit chewed their shoes again."),
    ("我和老公李明打算三月去京都旅行。", "李明升职了！", "用户的老公李明升职了"),
    ("We have a son named Leo.", "Leo just started kindergarten.", "User's son Leo just started kindergarten."),
    ("My daughter Lily is in second grade.", "Lily's birthday is October 3rd.",
     "User's daughter Lily's birthday is October 3rd."),
    ("We have a cat named Luna and a golden retriever called Max.", "Sadly Max passed away last night.",
     "User's dog Max passed away."),  # (the second pet was lost, and "Sadly" hid the name)
    ("我们有一个五岁的儿子叫乐乐。", "乐乐最近感冒了，一直咳嗽。", "用户的儿子乐乐最近感冒了"),
    ("我有个女儿叫小美。", "小美今天第一天上学。", "用户的女儿小美第一天上学"),
    ("We have two kids, Emma who is 8 and Noah who is 5.", "Emma is allergic to peanuts.",
     "User's child Emma is allergic to peanuts."),  # names said with their ages
    ("我家有两个孩子，大的叫朵朵，8岁，小的叫豆豆，5岁。", "朵朵对花生过敏。", "用户的孩子朵朵对花生过敏"),
])
def test_a_later_turn_about_the_users_own_is_remembered(memory, first, later, fact):
    memory.add(first, user_id="ana")
    memory.flush()  # (the graph's links are made behind the write)
    events = memory.add(later, user_id="ana")
    assert fact in [e.memory.content for e in events if e.memory is not None]
    # another user never said whose Max or 小雨 is: nothing is filed as theirs
    other = memory.add(later, user_id="bob")
    assert fact not in [e.memory.content for e in other if e.memory is not None]


@pytest.mark.parametrize("said, fact", [
    ("My partner's name is Sam. Sam is a chef.", "User's partner Sam is a chef."),
    ("I have a dog named Rex. Rex loves the beach.", "User's dog Rex loves the beach."),
    ("My sister's name is Anna. Anna got promoted yesterday.", "User's sister Anna got promoted."),
    ("Anna is my sister. Anna is a teacher.", "User's sister Anna is a teacher."),
    ("我女儿叫小雨。小雨喜欢画画。", "用户的女儿小雨喜欢画画"),
    ("Max is my dog. Max is old.", "User's dog Max is old."),
    ("小雨是我女儿。小雨喜欢画画。", "用户的女儿小雨喜欢画画"),
])
def test_a_name_introduced_earlier_in_the_same_message_is_the_users_own(memory, said, fact):
    """The graph links a message only after it is written: the message itself says whose the
    name is, for the sentences after the one that introduced it."""
    kept = [e.memory.content for e in memory.add(said, user_id="ana") if e.memory is not None]
    assert fact in kept
    assert not any("is their sister" in k or "is User's sister Anna" in k for k in kept)  # not said twice


def test_a_blank_sentence_is_no_sentence_to_name_anyone_in():
    from engram.extract.owned import named_again

    assert named_again(["My partner's name is Sam.", "   ", "Sam is a chef."])  # (a blank one raised IndexError)
    assert not named_again(["I have a dog.", "  "])


def test_a_message_introduces_only_the_users_own():
    from engram.extract.owned import introduced

    assert introduced("My partner's name is Sam.") == (("Sam", "partner"),)
    assert introduced("我女儿叫小雨。") == (("小雨", "女儿"),)
    assert introduced("Caroline: my son Leo is five.") == ()  # a speaker's son, not the user's
    assert introduced("Sam is a chef.") == () and introduced("Thanks, Anna!") == ()


def test_a_name_of_someone_not_the_users_own_is_left_alone(memory):
    memory.add("I met Obama once.", user_id="ana")
    memory.flush()
    events = memory.add("Obama gave a speech.", user_id="ana")
    assert [e.memory.kind.value for e in events if e.memory is not None] == ["turn"]


def test_a_question_about_my_dog_finds_the_pet_named_by_its_breed(memory):
    from engram.animals import animal_words

    assert animal_words("We have a golden retriever called Biscuit.") == ["dog"]
    assert animal_words("我们家有一只金毛，叫豆豆。") == ["狗"]
    assert animal_words("I retrieved the file.") == []
    for text in ["My name is Priya.", "We have a golden retriever called Biscuit.", "I have a cat named Luna."]:
        memory.add(text, user_id="ana")
    for question in ["what's my dog's name?", "tell me about my dog"]:
        assert "Biscuit" in memory.search(question, user_id="ana", limit=3)[0].memory.content


def test_a_second_child_named_is_the_users_too(memory):
    """"a son named Sam" after "a son named Leo": both are the user's sons (one alias each)."""
    for said in ["I have a son named Leo.", "I also have a son named Sam.", "我有个女儿叫小美。", "我还有个女儿叫小丽。"]:
        memory.add(said, user_id="ana")
        memory.flush()
    assert owned_names(memory.store, "ana") == {"Leo": "son", "Sam": "son", "小美": "女儿", "小丽": "女儿"}
    events = memory.add("Sam broke his arm.", user_id="ana")
    assert "User's son Sam broke his arm." in [e.memory.content for e in events if e.memory is not None]


def test_pets_and_children_named_together_are_each_the_users(memory):
    memory.add("I have two cats, Luna and Milo.", user_id="ana")
    memory.add("We have two kids, Leo and Mia.", user_id="ana")
    memory.flush()
    assert owned_names(memory.store, "ana") == {"Luna": "cat", "Milo": "cat", "Leo": "child", "Mia": "child"}
    events = memory.add("Milo passed away last week.", user_id="ana")
    assert "User's cat Milo passed away." in [e.memory.content for e in events if e.memory is not None]


@pytest.mark.parametrize("first, later, fact", [
    ("My partner's name is Sam.", "Sam is a chef.", "User's partner Sam is a chef."),
    ("I have a dog named Rex.", "Rex loves the beach.", "User's dog Rex loves the beach."),
    ("我女儿叫小雨。", "小雨喜欢画画。", "用户的女儿小雨喜欢画画"),
])
def test_a_name_the_session_just_introduced_is_the_users_before_the_graph_links_it(reopen, first, later, fact):
    """The next turn comes before the graph has linked the first (its links are made behind the
    add): the session's recent turns say whose the name is. Without the graph at all, too."""
    memory = reopen(graph=False)
    memory.add(first, user_id="ana", session_id="s1")
    kept = [e.memory.content for e in memory.add(later, user_id="ana", session_id="s1") if e.memory is not None]
    assert fact in kept
    other = memory.add(later, user_id="ana", session_id="s2")  # another session said no such thing
    assert fact not in [e.memory.content for e in other if e.memory is not None]
