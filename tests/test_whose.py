"""Whose a memory is (engram.whose): a question about the user alone ranks what is said of the
user above what is said of the user's roommate or sister, in English and Chinese; a question
that names the other person is left alone. And a one-off event that moves keeps one memory."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram import Action, Kind, Status
from engram.whose import about_someone_else, about_user_alone


@pytest.fixture(scope="module")
def use():
    """The multilingual default embedder: the user's own turn is found by its meaning alone."""
    from engram.providers.use import USEEmbedder

    return USEEmbedder()


def _said(memory, turns: list[str], user_id: str = "u") -> None:
    for turn in turns:
        memory.add(turn, user_id=user_id)
    memory.flush()


def test_a_question_about_the_user_ranks_the_users_own_fact_above_a_roommates(use):
    # the roommate's fact shares the question's one word (考); the user's own does not
    from engram import Memory

    with Memory(":memory:", embedder=use) as memory:
        _said(memory, ["我在准备考研，目标是浙江大学的计算机专业。", "有，我室友小王也考浙大，不过他考的是电子信息。"])
        top = memory.search("我要考哪个学校？", user_id="u", limit=1)[0].memory.content
        assert "浙江大学" in top and "室友" not in top
        # asked about the roommate, the roommate's fact comes first
        assert "室友" in memory.search("我室友考哪个学校？", user_id="u", limit=1)[0].memory.content


def test_off_the_ranking_is_as_before(use):
    from engram import Memory

    with Memory(":memory:", embedder=use, other_subject_factor=1.0) as memory:
        _said(memory, ["我在准备考研，目标是浙江大学的计算机专业。", "有，我室友小王也考浙大，不过他考的是电子信息。"])
        assert "室友" in memory.search("我要考哪个学校？", user_id="u", limit=1)[0].memory.content


@pytest.mark.parametrize(("question", "alone"), [
    ("where do I live?", True), ("我要考哪个学校？", True), ("what does my sister do?", False),
    ("我妈妈住在哪？", False), ("where does she live?", False), ("who handles the frontend?", False),
])
def test_who_a_question_asks_about(question, alone):
    assert about_user_alone(question) is alone


@pytest.mark.parametrize(("text", "other"), [
    ("User's roommate Jake plays guitar.", True), ("用户的室友小王也考浙大", True),
    ("User's co-founder writes React.", True), ("My roommate Jake plays guitar.", True),
    ("有，我室友小王也考浙大，不过他考的是电子信息。", True),
    ("User's launch is on March 15th.", False), ("User lives in Porto.", False),
    ("My sister lives in Pune and I live in Porto.", False),  # it goes on about the user
    ("我妈妈说我太瘦了", False),
])
def test_who_a_memory_is_about(text, other):
    assert about_someone_else(text) is other


def test_a_moved_event_replaces_its_first_day(memory):
    said = datetime(2026, 12, 2, 10, tzinfo=UTC)
    memory.add("We launch on March 15th.", user_id="u", timestamp=said)
    events = memory.add("Actually the launch moved to April 2nd.", user_id="u", timestamp=said)
    (moved,) = [e for e in events if e.memory is not None and e.memory.kind is Kind.TASK]
    assert moved.action is Action.SUPERSEDE
    live = [m for m in memory.get_all(user_id="u") if m.kind is Kind.TASK and m.status is Status.ACTIVE]
    assert [(m.content, m.due_at.date().isoformat()) for m in live] == [
        ("User's launch moved to April 2nd (2027-04-02).", "2027-04-02")
    ]
    # the same day said again is no change
    again = memory.add("The launch moved to April 2nd.", user_id="u", timestamp=said)
    assert all(e.action is Action.NOOP for e in again if e.memory is not None and e.memory.kind is Kind.TASK)


def test_a_question_about_someone_of_the_users_ranks_the_users_own_particulars_lower(use):
    from engram import Memory

    with Memory(":memory:", embedder=use) as memory:
        _said(memory, ["I'm Lena. I teach high school chemistry in Munich.",
                       "My sister Eva just had a baby girl named Mila!"])
        assert "Mila" in memory.search("what's my niece's name?", user_id="u", limit=1)[0].memory.content
        assert memory.search("what's my name?", user_id="u", limit=1)[0].memory.content == "User's name is Lena."


@pytest.mark.parametrize(("turns", "question", "answer", "other"), [
    (["我嫂子在银行工作。", "我姐夫叫王强，是个程序员。"], "我姐夫做什么工作？", "程序员", "嫂子"),
    (["My sister-in-law works at a bank.", "My brother-in-law is a pilot."], "what does my brother-in-law do?",
     "pilot", "sister-in-law"),
])
def test_asked_about_one_of_the_users_people_what_is_said_of_another_of_theirs_comes_after(
        use, turns, question, answer, other):
    from engram import Memory

    with Memory(":memory:", embedder=use) as memory:
        _said(memory, turns)
        found = [r.memory.content for r in memory.search(question, user_id="u", limit=5)]
        first_other = next(i for i, content in enumerate(found) if other in content)
        assert answer in found[0] and all(other not in content for content in found[:first_other])
