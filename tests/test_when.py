"""Time expressions → UTC ranges (engram.when): what a question's dates mean."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from engram.when import TimeRange, find_range, find_ranges

# Wednesday 14 February 2024, mid-afternoon UTC
NOW = datetime(2024, 2, 14, 15, 30, tzinfo=UTC)


def _days(text: str, now: datetime = NOW) -> tuple[str, str, str] | None:
    """(matched words, first day, last day) of the first expression, or None."""
    found = find_range(text, now)
    if found is None:
        return None
    last = found.end - timedelta(days=1)
    return found.text, found.start.date().isoformat(), last.date().isoformat()


ENGLISH = [
    ("what did I do yesterday?", "yesterday", "2024-02-13", "2024-02-13"),
    ("anything new today", "today", "2024-02-14", "2024-02-14"),
    ("what did we discuss last night", "last night", "2024-02-13", "2024-02-13"),
    ("the day before yesterday", "the day before yesterday", "2024-02-12", "2024-02-12"),
    ("what did I read last week", "last week", "2024-02-05", "2024-02-11"),
    ("the week before last", "the week before last", "2024-01-29", "2024-02-04"),
    ("my plans this week", "this week", "2024-02-12", "2024-02-18"),
    ("bills from last month", "last month", "2024-01-01", "2024-01-31"),
    ("what happened this month", "this month", "2024-02-01", "2024-02-29"),
    ("trips last year", "last year", "2023-01-01", "2023-12-31"),
    ("goals for this year", "this year", "2024-01-01", "2024-12-31"),
    ("I called her 3 days ago", "3 days ago", "2024-02-11", "2024-02-11"),
    ("two weeks ago we met", "two weeks ago", "2024-01-29", "2024-02-04"),
    ("a month ago", "a month ago", "2024-01-01", "2024-01-31"),
    ("six months ago", "six months ago", "2023-08-01", "2023-08-31"),
    ("twelve years ago", "twelve years ago", "2012-01-01", "2012-12-31"),
    ("in the last two weeks", "the last two weeks", "2024-01-31", "2024-02-14"),
    ("over the past 3 days", "the past 3 days", "2024-02-11", "2024-02-14"),
    ("what did I cook last May?", "last May", "2023-05-01", "2023-05-31"),
    ("last february", "last february", "2023-02-01", "2023-02-28"),  # not this (current) one
    ("in February", "in February", "2024-02-01", "2024-02-29"),  # the current one
    ("When did Melanie go camping in June?", "in June", "2023-06-01", "2023-06-30"),
    ("during March 2022", "during March 2022", "2022-03-01", "2022-03-31"),
    ("May 2023", "May 2023", "2023-05-01", "2023-05-31"),
    ("in May last year", "in May last year", "2023-05-01", "2023-05-31"),
    ("what did we do in 2019?", "in 2019", "2019-01-01", "2019-12-31"),
    ("Japan, 2019?", "2019", "2019-01-01", "2019-12-31"),
    ("last Friday", "last Friday", "2024-02-09", "2024-02-09"),
    ("last Wednesday", "last Wednesday", "2024-02-07", "2024-02-07"),  # today is Wednesday
    ("on 8 May 2023", "on 8 May 2023", "2023-05-08", "2023-05-08"),
    ("on May 8, 2023", "on May 8, 2023", "2023-05-08", "2023-05-08"),
    ("What painting did she show on October 13, 2023?", "on October 13, 2023", "2023-10-13", "2023-10-13"),
    ("on the 1st of February, 2023", "on the 1st of February, 2023", "2023-02-01", "2023-02-01"),
    ("notes from 2023-05-08", "2023-05-08", "2023-05-08", "2023-05-08"),
    ("on May 2", "on May 2", "2023-05-02", "2023-05-02"),
    ("last summer", "last summer", "2023-06-01", "2023-08-31"),
    ("last winter", "last winter", "2022-12-01", "2023-02-28"),  # this winter has not ended
    ("last spring", "last spring", "2023-03-01", "2023-05-31"),
    ("last autumn", "last autumn", "2023-09-01", "2023-11-30"),
    ("last fall", "last fall", "2023-09-01", "2023-11-30"),
    ("the summer of 2022", "the summer of 2022", "2022-06-01", "2022-08-31"),
    ("last weekend", "last weekend", "2024-02-10", "2024-02-11"),
]

CHINESE = [
    ("昨天吃了什么", "昨天", "2024-02-13", "2024-02-13"),
    ("前天的会议", "前天", "2024-02-12", "2024-02-12"),
    ("今天天气", "今天", "2024-02-14", "2024-02-14"),
    ("上周我们聊了什么", "上周", "2024-02-05", "2024-02-11"),
    ("上个星期", "上个星期", "2024-02-05", "2024-02-11"),
    ("上礼拜", "上礼拜", "2024-02-05", "2024-02-11"),
    ("本周的计划", "本周", "2024-02-12", "2024-02-18"),
    ("这周", "这周", "2024-02-12", "2024-02-18"),
    ("上周三去了哪里", "上周三", "2024-02-07", "2024-02-07"),
    ("上周日", "上周日", "2024-02-11", "2024-02-11"),
    ("上周末", "上周末", "2024-02-10", "2024-02-11"),
    ("上上周", "上上周", "2024-01-29", "2024-02-04"),
    ("上个月的账单", "上个月", "2024-01-01", "2024-01-31"),
    ("这个月", "这个月", "2024-02-01", "2024-02-29"),
    ("本月", "本月", "2024-02-01", "2024-02-29"),
    ("去年去过哪些地方", "去年", "2023-01-01", "2023-12-31"),
    ("前年", "前年", "2022-01-01", "2022-12-31"),
    ("今年的目标", "今年", "2024-01-01", "2024-12-31"),
    ("3天前", "3天前", "2024-02-11", "2024-02-11"),
    ("三天前", "三天前", "2024-02-11", "2024-02-11"),
    ("两周前", "两周前", "2024-01-29", "2024-02-04"),
    ("两个星期前", "两个星期前", "2024-01-29", "2024-02-04"),
    ("三个月前", "三个月前", "2023-11-01", "2023-11-30"),
    ("十年前", "十年前", "2014-01-01", "2014-12-31"),
    ("2年前", "2年前", "2022-01-01", "2022-12-31"),
    ("2023年5月", "2023年5月", "2023-05-01", "2023-05-31"),
    ("2023年", "2023年", "2023-01-01", "2023-12-31"),
    ("2023年5月8日", "2023年5月8日", "2023-05-08", "2023-05-08"),
    ("5月", "5月", "2023-05-01", "2023-05-31"),
    ("五月份", "五月份", "2023-05-01", "2023-05-31"),
    ("二月", "二月", "2024-02-01", "2024-02-29"),  # the current month is the latest February
    ("十二月", "十二月", "2023-12-01", "2023-12-31"),
    ("5月8号", "5月8号", "2023-05-08", "2023-05-08"),
    ("去年五月我做了什么菜？", "去年五月", "2023-05-01", "2023-05-31"),
    ("去年夏天", "去年夏天", "2023-06-01", "2023-08-31"),
    ("最近三天", "最近三天", "2024-02-11", "2024-02-14"),
    ("过去两周", "过去两周", "2024-01-31", "2024-02-14"),
]


@pytest.mark.parametrize(("text", "words", "first", "last"), ENGLISH + CHINESE)
def test_a_time_expression_becomes_its_days(text, words, first, last):
    assert _days(text) == (words, first, last)


NOT_RANGES = [
    "I may go to the gym",
    "May I ask you something?",
    "You may 2 times a day",
    "Logging in may fail",
    "May 2 people come along?",
    "the last may be the best",
    "I went for two weeks",
    "we stayed for 3 days",
    "5 apples",
    "I have 2000 apples",
    "I paid 2000.",
    "room 2019?",
    "the year 3000 plan",
    "before 2023",
    "after May 2022",
    "since June",
    "until last week",
    "next week",
    "tomorrow",
    "How long ago was her 18th birthday?",
    "What are her plans for the summer?",
    "two weeks before the party",
    "1234-56-78",
    # Chinese
    "我喜欢喝咖啡",
    "三个月",
    "五个苹果",
    "以前天天去跑步",
    "以前年轻的时候",
    "这周围很安静",
    "中秋节吃月饼",
    "2023年以前",
    "自从去年",
    "将近三年",
    "附近3天",
    "1990年代",
    "明天",
    "下周",
]


@pytest.mark.parametrize("text", NOT_RANGES)
def test_words_that_are_not_a_past_range_give_none(text):
    assert find_ranges(text, NOW) == []


@pytest.mark.parametrize(
    ("text", "day"),
    [("上周一起吃饭", None), ("这周天气不错", None), ("上周一", "2024-02-05"), ("上星期天", "2024-02-11")],
)
def test_chinese_weekday_only_where_it_is_one(text, day):
    """"上周一起" is "last week, together", not last Monday; "这周天气" is this week's weather."""
    found = find_range(text, NOW)
    assert found is not None
    length = (found.end - found.start).days
    if day is None:
        assert length == 7
    else:
        assert (found.start.date().isoformat(), length) == (day, 1)


def test_every_expression_is_found_in_order_with_its_place():
    text = "last week and 去年五月, not for two weeks"
    found = find_ranges(text, NOW)
    assert [r.text for r in found] == ["last week", "去年五月"]
    assert all(text[r.span[0] : r.span[1]] == r.text for r in found)


def test_the_future_is_not_a_range():
    """In January, "in May" is last year's May; "this summer" has not begun (nothing said then)."""
    january = datetime(2024, 1, 10, tzinfo=UTC)
    assert _days("in May", january) == ("in May", "2023-05-01", "2023-05-31")
    assert find_ranges("this summer", january) == []
    assert find_ranges("今年五月", january) == []


def test_days_are_days_in_the_reference_moments_own_zone():
    # 07:30 on the 14th in Shanghai is still the 13th in UTC: "yesterday" is the 13th there
    shanghai = ZoneInfo("Asia/Shanghai")
    morning = datetime(2024, 2, 14, 7, 30, tzinfo=shanghai)
    found = find_range("yesterday", morning)
    assert found.start == datetime(2024, 2, 13, tzinfo=shanghai)
    assert found.end == datetime(2024, 2, 14, tzinfo=shanghai)
    assert found.start.tzinfo is UTC  # the range itself is in UTC
    assert found.start == datetime(2024, 2, 12, 16, 0, tzinfo=UTC)
    # the same instant read in UTC: its yesterday is the 12th
    assert _days("yesterday", morning.astimezone(UTC)) == ("yesterday", "2024-02-12", "2024-02-12")
    zh = find_range("昨天我吃了什么", morning)
    assert (zh.start, zh.end) == (found.start, found.end)
    naive = datetime(2024, 2, 14, 1, 0)  # naive moments are UTC
    assert _days("today", naive) == ("today", "2024-02-14", "2024-02-14")


def test_month_ranges_follow_the_zone_across_daylight_saving():
    new_york = ZoneInfo("America/New_York")
    found = find_range("last March", datetime(2024, 7, 1, 12, tzinfo=new_york))
    assert found.start == datetime(2024, 3, 1, tzinfo=new_york)  # 05:00 UTC (EST)
    assert found.end == datetime(2024, 4, 1, tzinfo=new_york)  # 04:00 UTC (EDT)
    assert found.end - found.start == timedelta(days=31) - timedelta(hours=1)


def test_a_range_says_whether_a_moment_is_in_it():
    found = find_range("last May", NOW)
    assert isinstance(found, TimeRange)
    assert found.start.tzinfo is not None and found.end.tzinfo is not None
    assert datetime(2023, 5, 31, 23, 59, tzinfo=UTC) in found
    assert datetime(2023, 6, 1, tzinfo=UTC) not in found  # the end is exclusive
    assert datetime(2023, 5, 1) in found  # naive: UTC


def test_leap_days_and_impossible_dates():
    assert _days("on February 29, 2020") == ("on February 29, 2020", "2020-02-29", "2020-02-29")
    assert find_ranges("on February 30, 2023", NOW) == []
    assert find_ranges("2023年2月30日", NOW) == []
    # the latest 29 February not after today
    assert _days("on February 29", datetime(2025, 3, 1, tzinfo=UTC))[1] == "2024-02-29"


def test_no_time_words_cost_next_to_nothing():
    """Every search parses its query; one without time words must stay far below 0.05 ms."""
    import timeit

    queries = ["what drink does the user prefer with breakfast?",
               "我喜欢喝什么咖啡？", "Which programming language does Caroline like best?"]
    runs = 2000
    cost = min(timeit.repeat(lambda: [find_ranges(q, NOW) for q in queries], number=runs, repeat=3))
    per_query_ms = cost / runs / len(queries) * 1000
    assert per_query_ms < 0.05, per_query_ms

