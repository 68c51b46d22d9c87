"""Proactive reminders: tasks with a due date or a recurrence, EN and ZH, on a simulated clock."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from engram import Action, InvalidInput, Kind, MemoryItem, Status
from engram.reminders import due, next_occurrence, parse_recurrence
from helpers import facts

WED = datetime(2025, 1, 8, 10, tzinfo=UTC)  # a Wednesday
THU_NIGHT = datetime(2025, 1, 9, 23, 30, tzinfo=UTC)
FRI = datetime(2025, 1, 10, 9, tzinfo=UTC)
SAT = datetime(2025, 1, 11, 9, tzinfo=UTC)
NEXT_FRI = datetime(2025, 1, 17, 9, tzinfo=UTC)


def task(recurrence=None, due_at=None, created=WED, content="User sends the weekly report.", language="en"):
    return MemoryItem(user_id="u1", content=content, kind=Kind.TASK, recurrence=recurrence, due_at=due_at,
                      created_at=created, language=language)


@pytest.mark.parametrize(
    "rule, parsed",
    [("daily", ("daily", None)), ("weekly", ("weekly", None)), ("weekly:FRI", ("weekly", (4,))),
     ("weekly:MON,TUE,WED,THU,FRI", ("weekly", (0, 1, 2, 3, 4))), ("monthly", ("monthly", None)),
     ("monthly:15", ("monthly", 15)), ("yearly:02-29", ("yearly", (2, 29)))],
)
def test_recurrence_rules(rule, parsed):
    assert parse_recurrence(rule) == parsed


@pytest.mark.parametrize("rule", ["", "hourly", "weekly:XYZ", "monthly:32", "yearly:02-30"])
def test_bad_recurrence_rules(rule):
    with pytest.raises(InvalidInput):
        parse_recurrence(rule)


def test_next_occurrence():
    fri = datetime(2025, 1, 10, 23, 59, tzinfo=UTC)
    assert next_occurrence(task("weekly:FRI"), WED) == fri
    assert next_occurrence(task("weekly", due_at=fri), WED) == fri  # weekday of due_at
    assert next_occurrence(task("weekly", due_at=fri), SAT) == fri + timedelta(days=7)
    assert next_occurrence(task("daily"), WED) == datetime(2025, 1, 8, 23, 59, tzinfo=UTC)
    assert next_occurrence(task("monthly:31"), datetime(2025, 2, 2, tzinfo=UTC)) == datetime(2025, 2, 28, 23, 59, tzinfo=UTC)
    # 29 February falls on the 28th in other years (days are clamped to the month)
    assert next_occurrence(task("yearly:02-29"), WED) == datetime(2025, 2, 28, 23, 59, tzinfo=UTC)
    # days are counted in the user's time zone: Friday 09:00 in Shanghai is Friday 01:00 UTC
    morning = task("weekly:FRI", due_at=datetime(2025, 1, 10, 1, tzinfo=UTC))
    assert next_occurrence(morning, WED, "Asia/Shanghai") == datetime(2025, 1, 10, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    "said, due_text",
    [
        ("I send the status report every Friday.", "Due today: User sends the status report every Friday."),
        ("每周五要交周报", "今天到期：用户每周五要交周报"),
    ],
)
def test_recurring_tasks_remind_on_their_day(memory, said, due_text):
    [event] = facts(memory.add(said, user_id="u1", timestamp=WED))
    item = event.memory
    assert item.kind is Kind.TASK and item.recurrence == "weekly:FRI"
    assert memory.reminders(user_id="u1", now=WED) == []
    soon = memory.reminders(user_id="u1", now=THU_NIGHT, horizon=timedelta(hours=30))
    assert [r.memory.id for r in soon] == [item.id]
    assert soon[0].text.startswith("Due tomorrow" if said.isascii() else "明天到期")
    [today] = memory.reminders(user_id="u1", now=FRI)
    assert today.text == due_text and today.recurring and not today.overdue
    assert memory.reminders(user_id="u1", now=SAT) == []
    # done this week: not again on Friday; next week it is due again
    event = memory.complete(item.id, now=FRI)
    assert event.action is Action.UPDATE
    assert memory.reminders(user_id="u1", now=FRI + timedelta(hours=2)) == []
    assert [r.memory.id for r in memory.reminders(user_id="u1", now=NEXT_FRI)] == [item.id]


def test_the_issue_example_every_friday_weekly_report(memory):
    [event] = facts(memory.add("Every Friday I send the weekly report.", user_id="u1", timestamp=WED))
    assert event.memory.recurrence == "weekly:FRI" or event.memory.due_at is not None
    assert memory.reminders(user_id="u1", now=FRI)


@pytest.mark.parametrize(
    "said, lang",
    [("I need to submit the report by Friday.", "en"), ("我周五之前要提交报告", "zh")],
)
def test_one_off_deadlines_remind_then_nag_until_done(memory, said, lang):
    [event] = facts(memory.add(said, user_id="u1", timestamp=WED))
    item = event.memory
    assert item.due_at == datetime(2025, 1, 10, 23, 59, tzinfo=UTC) and item.recurrence is None
    assert memory.reminders(user_id="u1", now=WED) == []
    [r] = memory.reminders(user_id="u1", now=FRI)
    assert not r.overdue and r.text.startswith("Due today" if lang == "en" else "今天到期")
    [r] = memory.reminders(user_id="u1", now=SAT)
    assert r.overdue and r.text.startswith("Overdue" if lang == "en" else "已逾期")
    memory.complete(item.id, now=SAT)
    assert memory.reminders(user_id="u1", now=SAT) == []
    assert memory.get(item.id).status is Status.ARCHIVED
    with pytest.raises(InvalidInput):
        memory.complete(item.id)


def test_a_wider_horizon_and_non_tasks(memory):
    memory.add("I need to submit the report by Friday.", user_id="u1", timestamp=WED)
    memory.add("I live in Berlin.", user_id="u1", timestamp=WED)
    assert len(memory.reminders(user_id="u1", now=WED, horizon=timedelta(days=3))) == 1
    fact = memory.get_all(user_id="u1", filters={"kind": "fact"})[0]
    with pytest.raises(InvalidInput, match="not a task"):
        memory.complete(fact.id)


def test_due_lists_soonest_first():
    items = [task("weekly:FRI", content="b"), task(due_at=datetime(2025, 1, 10, 8, tzinfo=UTC), content="a")]
    found = due(items, FRI)
    assert [r.memory.content for r in found] == ["a", "b"]
    assert found[0].overdue and found[0].text.startswith("Overdue (due 2025-01-10 08:00)")


def test_context_mentions_due_items(memory):
    from engram.models import utcnow

    now = utcnow()
    memory.add("I need to call the bank tomorrow.", user_id="u1", timestamp=now - timedelta(hours=30))
    context = memory.context("what should I do today?", user_id="u1")
    assert context.reminders and "call the bank" in context.reminders[0]
    assert "[Due soon]" in context.text


def test_cli_reminders(memory, db_path):
    from typer.testing import CliRunner

    from engram.cli.app import app
    from engram.models import utcnow

    memory.add("I need to call the bank tomorrow.", user_id="u1", timestamp=utcnow() - timedelta(hours=30))
    result = CliRunner().invoke(app, ["--db", str(db_path), "reminders", "--user", "u1", "--json"])
    assert result.exit_code == 0, result.output
    assert "call the bank" in result.output
