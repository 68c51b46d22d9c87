"""A relationship the user says ended ("Anna and I broke up", "我和小陈分手了") takes away the memories
that said the other was their partner: superseded by the event that ended it, history keeps both, and
what the two did together stays."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram import Kind, Status
from engram.extract.endings import ending, ends

BEFORE = datetime(2026, 9, 1, tzinfo=UTC)
SAID = datetime(2026, 12, 2, 10, tzinfo=UTC)


def _live(memory, user_id: str) -> list[str]:
    return [m.content for m in memory.get_all(user_id=user_id) if m.kind is not Kind.TURN]


def test_a_breakup_ends_the_girlfriend_and_keeps_what_happened(memory):
    memory.add("My girlfriend Anna and I have been together for 2 years.", user_id="u", timestamp=BEFORE)
    memory.add("My sister is Anna too, funny.", user_id="u", timestamp=BEFORE)
    memory.add("Anna and I broke up, long distance didn't work.", user_id="u", timestamp=SAID)
    live = _live(memory, "u")
    assert not any("have been together" in m for m in live)
    assert any("broke up" in m for m in live)
    (ended,) = [m for m in memory.get_all(user_id="u", filters={"status": [Status.SUPERSEDED]}) if m.kind is not Kind.TURN]
    assert "girlfriend Anna" in ended.content and ended.superseded_by is not None
    top = memory.search("who is my girlfriend?", user_id="u", limit=1)[0].memory
    assert "broke up" in top.content


def test_a_chinese_breakup_ends_the_boyfriends_name_and_keeps_their_years(memory):
    memory.add("我男朋友叫小陈，我们在一起三年了。", user_id="z", timestamp=BEFORE)
    memory.add("我和小陈分手了。", user_id="z", timestamp=SAID)
    live = _live(memory, "z")
    assert "用户的男朋友叫小陈" not in live
    assert "用户和男朋友在一起三年了" in live  # (what happened is history)
    assert "用户和小陈分手了" in live


@pytest.mark.parametrize(("text", "who"), [
    ("Anna and I broke up, long distance didn't work.", "Anna"),
    ("I broke up with my boyfriend.", "boyfriend"),
    ("We split up last month.", ""),
    ("i broke up with him", ""),
    ("我和小陈分手了。", "小陈"),
    ("我离婚了", ""),
    ("The band broke up.", None),
    ("My parents divorced when I was 5.", None),
    ("I broke up the fight.", None),
])
def test_what_reads_as_an_ending(text, who):
    assert ending(text) == who


@pytest.mark.parametrize(("content", "who", "gone"), [
    ("User and their girlfriend Anna have been together for 2 years.", "Anna", True),
    ("User's girlfriend is Mia.", "Anna", False),
    ("User's sister is Anna.", "Anna", False),
    ("User's boyfriend works at Google.", "", True),
    ("用户的男朋友叫小陈", "小陈", True),
    ("User's sister's boyfriend works at Google.", "", False),  # (someone else's partner)
    ("用户的妹妹的男朋友叫小李", "", False),
])
def test_which_memories_an_ending_takes_away(content, who, gone):
    assert ends(content, who) is gone
