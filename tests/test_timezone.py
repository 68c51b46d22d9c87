"""A user's time zone: their days for "yesterday" in a search, "tomorrow" in what they say,
and their reminders. Without one, the `timezone` setting; without that, UTC."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from engram import Memory
from engram.errors import InvalidInput

SHANGHAI = ZoneInfo("Asia/Shanghai")
# 07:30 on Wednesday 14 February in Shanghai: still Tuesday the 13th in UTC
ASKED = datetime(2024, 2, 13, 23, 30, tzinfo=UTC)


def _meals(memory: Memory, user: str) -> None:
    # 20:00 in Shanghai on the 13th and on the 12th (12:00 UTC the same days)
    memory.add("I ate dumplings for dinner.", user_id=user, infer=False,
               timestamp=datetime(2024, 2, 13, 12, 0, tzinfo=UTC))
    memory.add("I ate noodles for dinner.", user_id=user, infer=False,
               timestamp=datetime(2024, 2, 12, 12, 0, tzinfo=UTC))


def _first(memory: Memory, user: str, query: str) -> str:
    return memory.search(query, user_id=user, now=ASKED, limit=1)[0].memory.content


def test_yesterday_is_the_users_yesterday(memory):
    _meals(memory, "utc-user")
    assert "noodles" in _first(memory, "utc-user", "what did I eat for dinner yesterday?")
    _meals(memory, "shanghai-user")
    memory.set_timezone("shanghai-user", "Asia/Shanghai")
    assert "dumplings" in _first(memory, "shanghai-user", "what did I eat for dinner yesterday?")
    assert "dumplings" in _first(memory, "shanghai-user", "我昨天晚饭吃了什么？ dinner")


def test_the_setting_is_the_default_zone_and_a_users_own_wins(db_path, embedder):
    with Memory(db_path, embedder=embedder, timezone="Asia/Shanghai") as memory:
        _meals(memory, "u")
        assert memory.timezone("u") == SHANGHAI
        assert "dumplings" in _first(memory, "u", "what did I eat for dinner yesterday?")
        memory.set_timezone("u", "UTC")
        assert "noodles" in _first(memory, "u", "what did I eat for dinner yesterday?")
        memory.set_timezone("u", None)  # back to the setting
        assert memory.timezone("u") == SHANGHAI


def test_the_zone_survives_a_restart(db_path, embedder):
    with Memory(db_path, embedder=embedder) as memory:
        assert memory.timezone("u") is UTC
        memory.set_timezone("u", "Asia/Shanghai")
    with Memory(db_path, embedder=embedder) as memory:
        assert memory.timezone("u") == SHANGHAI


def test_tomorrow_in_what_the_user_says_is_their_tomorrow(memory):
    said = datetime(2024, 2, 15, 17, 0, tzinfo=UTC)  # Friday 01:00 in Shanghai
    memory.set_timezone("s", "Asia/Shanghai")
    due = memory.add("Remind me to call mom tomorrow", user_id="s", timestamp=said)[0].memory.due_at
    assert due.astimezone(SHANGHAI).date() == datetime(2024, 2, 17).date()
    due_utc = memory.add("Remind me to call mom tomorrow", user_id="t", timestamp=said)[0].memory.due_at
    assert due_utc.date() == datetime(2024, 2, 16).date()


def test_reminders_count_days_in_the_users_zone(memory):
    memory.set_timezone("s", "Asia/Shanghai")
    said = datetime(2024, 2, 15, 2, 0, tzinfo=UTC)  # 10:00 on the 15th in Shanghai
    task = memory.add("I need to submit the report today", user_id="s", timestamp=said)[0].memory
    due_local = task.due_at.astimezone(SHANGHAI)
    assert (due_local.date(), due_local.hour) == (datetime(2024, 2, 15).date(), 23)
    # 17:00 UTC on the 14th is already 01:00 on the 15th in Shanghai: due today there
    early = datetime(2024, 2, 14, 17, 0, tzinfo=UTC)
    assert [r.text.split(":")[0] for r in memory.reminders(user_id="s", now=early)] == ["Due today"]
    # read in UTC (an explicit tz wins), the same moment is still the 14th
    assert memory.reminders(user_id="s", now=early, tz="UTC")[0].text.startswith("Due tomorrow")


@pytest.mark.parametrize("bad", ["Mars/Olympus", "", 8, timedelta(hours=8)])
def test_an_unknown_zone_is_refused_and_nothing_changes(memory, bad):
    with pytest.raises(InvalidInput):
        memory.set_timezone("u", bad)
    assert memory.timezone("u") is UTC


def test_without_a_zone_set_the_callers_own_zone_counts(memory):
    """No zone for the user and none in the settings: an aware `now` or `timestamp` says
    which day it is; a naive one is UTC."""
    _meals(memory, "u")
    asked_in_shanghai = ASKED.astimezone(SHANGHAI)  # the same instant, on a Shanghai clock
    found = memory.search("what did I eat for dinner yesterday?", user_id="u", now=asked_in_shanghai, limit=1)
    assert "dumplings" in found[0].memory.content
    assert "noodles" in _first(memory, "u", "what did I eat for dinner yesterday?")  # UTC
    said = datetime(2024, 2, 15, 17, 0, tzinfo=UTC).astimezone(SHANGHAI)  # Friday 01:00 there
    due = memory.add("Remind me to call mom tomorrow", user_id="u", timestamp=said)[0].memory.due_at
    assert due.astimezone(SHANGHAI).date() == datetime(2024, 2, 17).date()


def test_a_zone_set_by_another_process_is_seen_at_once(memory, db_path, embedder):
    assert memory.timezone("u") is UTC and not memory.is_paused("u")  # read (and kept) here
    with Memory(db_path, embedder=embedder) as other:  # its own connection
        other.set_timezone("u", "Asia/Shanghai")
        other.pause("u")
    assert memory.timezone("u") == SHANGHAI and memory.is_paused("u")
