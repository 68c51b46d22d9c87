"""A correction in the next breath ("Oh wait, actually it's June not May", "不对，是下周四，不是下周三")
puts the user's latest memory right: the corrected one supersedes it (history keeps both), a task's
day moves with it, and a judgement ("It's fine, not great") corrects nothing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from engram import Action, Kind, Status
from engram.extract.corrections import correction, switch

SAID = datetime(2026, 12, 2, 10, tzinfo=UTC)  # a Wednesday


def _live(memory, user_id: str = "u") -> list[str]:
    return [m.content for m in memory.get_all(user_id=user_id) if m.kind is not Kind.TURN]


def test_the_month_of_a_trip_is_put_right(memory):
    memory.add([{"role": "assistant", "content": "Hi! Where are you headed?"},
                {"role": "user", "content": "Lisbon in May with my partner Alex."}], user_id="u", timestamp=SAID)
    events = memory.add("Oh wait, actually it's June not May.", user_id="u", timestamp=SAID)
    (fixed,) = [e for e in events if e.memory is not None and e.memory.kind is not Kind.TURN]
    assert fixed.action is Action.SUPERSEDE
    assert _live(memory) == ["User is going to Lisbon in June with their partner Alex."]
    (old,) = [m for m in memory.get_all(user_id="u", filters={"status": [Status.SUPERSEDED]}) if m.kind is not Kind.TURN]
    assert "May" in old.content and old.superseded_by == fixed.memory.id


def test_a_tasks_day_moves_with_the_correction_and_keeps_its_time(memory):
    memory.add("I have a dentist appointment on Thursday.", user_id="u", timestamp=SAID)
    memory.add("Actually it's Friday, not Thursday.", user_id="u", timestamp=SAID)
    (task,) = [m for m in memory.get_all(user_id="u") if m.kind is Kind.TASK]
    assert task.content == "User has a dentist appointment on Friday (2026-12-04)."
    assert task.due_at.date().isoformat() == "2026-12-04"
    memory.add("我的面试定在下周三下午两点", user_id="z", timestamp=SAID)
    memory.add("不对，是下周四，不是下周三。", user_id="z", timestamp=SAID)
    (interview,) = [m for m in memory.get_all(user_id="z") if m.kind is Kind.TASK]
    assert interview.content == "用户的面试定在下周四下午两点（2026-12-10 14:00）"
    assert (interview.due_at.day, interview.due_at.hour) == (10, 14)


def test_a_correction_that_says_it_was_wrong_first_is_still_only_a_correction(memory):
    memory.add("我现在住在杭州西湖区。", user_id="z", timestamp=SAID)
    memory.add("我刚才说错了，是滨江区，不是西湖区。", user_id="z", timestamp=SAID)
    (home,) = [m for m in memory.get_all(user_id="z") if m.kind is not Kind.TURN]  # no "用户刚才说错了"
    assert (home.content, home.key, home.value) == ("用户现在住在杭州滨江区", "fact:location", "杭州滨江区")


def test_a_name_is_put_right_in_its_slot(memory):
    memory.add("My partner's name is Sam.", user_id="u", timestamp=SAID)
    memory.add("Sorry, I meant Alex, not Sam.", user_id="u", timestamp=SAID)
    (name,) = [m for m in memory.get_all(user_id="u") if m.kind is not Kind.TURN]
    assert (name.content, name.key, name.value) == ("User's partner's name is Alex.", "fact:partner_name", "Alex")


def test_nothing_to_correct_keeps_everything_as_it_was(memory):
    memory.add("My husband is a great cook.", user_id="u", timestamp=SAID)
    memory.add("It's fine, not great.", user_id="u", timestamp=SAID)  # a judgement, not a correction
    memory.add("Actually it's Rome, not Paris.", user_id="u", timestamp=SAID)  # no memory says Paris
    assert _live(memory) == ["User's husband is a great cook."]


@pytest.mark.parametrize(("text", "fix"), [
    ("Oh wait, actually it's June not May.", ("June", "May")),
    ("I meant Alex, not Sam.", ("Alex", "Sam")),
    ("not May, June", ("June", "May")),
    ("That's Paris, not London.", ("Paris", "London")),
    ("不对，是六月，不是五月。", ("六月", "五月")),
    ("不是周四，是周五", ("周五", "周四")),
    ("我刚才说错了，是滨江区，不是西湖区。", ("滨江区", "西湖区")),
    ("It's fine, not great.", None),
    ("It's not that bad.", None),
    ("it's a cat not a dog", None),
])
def test_what_reads_as_a_correction(text, fix):
    assert correction(text) == fix


def test_a_correction_reaches_only_what_was_said_lately(memory):
    memory.add("My partner's name is Sam.", user_id="u", timestamp=datetime(2026, 10, 1, tzinfo=UTC))
    memory.add("Sorry, I meant Alex, not Sam.", user_id="u", timestamp=SAID)  # two months on: nothing to take back
    assert _live(memory) == ["User's partner's name is Sam."]


def test_a_switch_months_later_puts_the_old_tool_right_and_keeps_what_happened(memory):
    memory.add("I always use poetry and ruff.", user_id="u", timestamp=datetime(2026, 6, 1, tzinfo=UTC))
    memory.add("Actually we switched to uv last week, no more poetry.", user_id="u", timestamp=SAID)
    live = _live(memory)
    assert "User always uses uv and ruff." in live and not any("poetry and ruff" in m for m in live)
    assert "User switched to uv, no more poetry." in live  # what happened stays as said
    (old,) = [m for m in memory.get_all(user_id="u", filters={"status": [Status.SUPERSEDED]}) if m.kind is not Kind.TURN]
    assert old.content == "User always uses poetry and ruff."


def test_a_switch_in_chinese_and_one_that_names_nothing_kept(memory):
    memory.add("我们团队用MySQL做数据库。", user_id="z", timestamp=datetime(2026, 3, 1, tzinfo=UTC))
    memory.add("我们从MySQL换成了PostgreSQL。", user_id="z", timestamp=SAID)
    assert any("PostgreSQL" in m and "MySQL" not in m for m in _live(memory, "z"))
    memory.add("I moved from Notion to Obsidian.", user_id="v", timestamp=SAID)  # no memory said Notion
    assert all(m.metadata.get("polarity") is None for m in memory.get_all(user_id="v"))


@pytest.mark.parametrize(("text", "moved"), [
    ("Actually we switched to uv last week, no more poetry.", ("uv", "poetry")),
    ("I moved from Notion to Obsidian.", ("Obsidian", "Notion")),
    ("We replaced Jenkins with GitHub Actions.", ("GitHub Actions", "Jenkins")),
    ("I use Obsidian now instead of Notion.", ("Obsidian", "Notion")),
    ("不用微信了，改用飞书。", ("飞书", "微信")),
    ("I switched to decaf.", None),  # nothing named as left behind
    ("I moved to it.", None),
])
def test_what_reads_as_a_switch(text, moved):
    assert switch(text) == moved


def test_a_switch_or_a_move_leaves_what_others_do_as_it_was(memory):
    memory.add("My sister lives in Chicago and uses Notion.", user_id="u", timestamp=datetime(2026, 6, 1, tzinfo=UTC))
    memory.add("I live in Chicago.", user_id="u", timestamp=datetime(2026, 6, 1, tzinfo=UTC))
    memory.add("I moved from Chicago to Denver.", user_id="u", timestamp=SAID)
    memory.add("I switched from Notion to Obsidian.", user_id="u", timestamp=SAID)
    live = _live(memory)
    assert "User's sister lives in Chicago and uses Notion." in live  # (hers, not the user's)
    assert "User moved to Denver." in live and "User lives in Chicago." not in live
