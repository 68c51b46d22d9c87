"""Time expressions in text ("last May", "two weeks ago", "去年五月", "上周三") → UTC ranges.

A question that names a time ("what did I cook last May?") is asking about
memories said then; retrieval turns the words into a range of `created_at`
and favours what falls inside it (see `engram.retrieve`). Everything here is
a pure function of the text and a reference moment (when the question is
asked), so the same question replayed later means the same days.

Precision first: a missed expression only costs the boost, an invented one
pushes unrelated memories up. So "may" the verb is never the month,
durations ("for two weeks") and open or future spans ("before 2023",
"next week") are not ranges, and a bare number is a year only where it
reads as one ("in 2023"). Days are whole days in the reference moment's own
time zone ("yesterday" asked at 07:00 in Shanghai is the Shanghai yesterday;
UTC for a naive moment); the ranges come back in UTC. Weeks start on Monday; seasons are the meteorological ones of the northern
hemisphere (spring = March-May, summer = June-August, …).

Precompiled rules are tried only just before a time word, behind a set lookup that
skips text without any (most queries).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, tzinfo


__all__ = ["EN_NUMBERS", "MONTHS", "TimeRange", "en_number", "en_small_numbers", "find_range", "find_ranges",
           "mentions_time", "zh_number"]


@dataclass(frozen=True, slots=True)
class TimeRange:
    """A span of time named by words in a text: ``start <= t < end``, UTC."""

    start: datetime
    end: datetime
    text: str  # the words that named it
    span: tuple[int, int]  # where they are in the text

    def __contains__(self, moment: object) -> bool:
        if not isinstance(moment, datetime):
            return False
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return self.start <= moment < self.end


# --- calendar arithmetic on whole days -----------------------------------------------
Days = tuple[date, date]  # [first day, day after the last)


def _day(d: date) -> Days:
    return d, d + timedelta(days=1)


def _week(d: date, back: int = 0) -> Days:
    monday = d - timedelta(days=d.weekday() + 7 * back)
    return monday, monday + timedelta(days=7)


def _add_months(year: int, month: int, delta: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + delta
    return index // 12, index % 12 + 1


def _month(year: int, month: int) -> Days:
    ny, nm = _add_months(year, month, 1)
    return date(year, month, 1), date(ny, nm, 1)


def _year(year: int) -> Days:
    return date(year, 1, 1), date(year + 1, 1, 1)


def _past_month(today: date, month: int, strict: bool) -> Days:
    """The latest `month` not after this one (`strict`: before this one)."""
    year = today.year if (month < today.month or (month == today.month and not strict)) else today.year - 1
    return _month(year, month)


def _past_day(today: date, month: int, day: int) -> Days | None:
    """The latest `month`/`day` not after today."""
    for year in (today.year, today.year - 1, today.year - 2):
        try:
            d = date(year, month, day)
        except ValueError:
            continue  # 29 February in a common year
        if d <= today:
            return _day(d)
    return None


_SEASON_START = {"spring": 3, "summer": 6, "autumn": 9, "fall": 9, "winter": 12}


def _season(year: int, season: str) -> Days:
    """Three months from the season's first month of `year` (winter runs into the next year)."""
    first = _SEASON_START[season]
    ey, em = _add_months(year, first, 3)
    return date(year, first, 1), date(ey, em, 1)


def _last_season(today: date, season: str) -> Days:
    """The latest such season that has ended by today."""
    for year in (today.year, today.year - 1, today.year - 2):
        span = _season(year, season)
        if span[1] <= today:
            return span
    return _season(today.year - 2, season)  # unreachable: one of the three has ended


def _back(today: date, amount: int, unit: str) -> Days:
    """The day, week, month or year `amount` of them before today's."""
    if unit == "day":
        return _day(today - timedelta(days=amount))
    if unit == "week":
        return _week(today, amount)
    if unit == "month":
        return _month(*_add_months(today.year, today.month, -amount))
    return _year(today.year - amount)


def _window(today: date, amount: int, unit: str) -> Days:
    """The last `amount` days/weeks/months/years up to and including today."""
    end = today + timedelta(days=1)
    if unit == "day":
        return today - timedelta(days=amount), end
    if unit == "week":
        return today - timedelta(days=7 * amount), end
    if unit == "month":
        y, m = _add_months(today.year, today.month, -amount)
        return _safe_date(y, m, today.day), end
    return _safe_date(today.year - amount, today.month, today.day), end


def _safe_date(year: int, month: int, day: int) -> date:
    while True:
        try:
            return date(year, month, day)
        except ValueError:
            day -= 1


def _valid_year(text: str) -> int | None:
    year = int(text)
    return year if 1900 <= year <= 2100 else None


def _date_or_none(year: int | None, month: int, day: int) -> Days | None:
    if year is None:
        return None
    try:
        return _day(date(year, month, day))
    except ValueError:
        return None


# --- words (the month names and Chinese numerals also serve the extraction rules' due dates) -
MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
    "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
    "september": 9, "sept": 9, "sep": 9, "october": 10, "oct": 10, "november": 11, "nov": 11,
    "december": 12, "dec": 12,
}
_WEEKDAYS = {
    "monday": 0, "tuesday": 1, "wednesday": 2, "thursday": 3, "friday": 4, "saturday": 5, "sunday": 6,
}
# English number words: the one table every reader of "seven" or "twenty-one" uses
_UNITS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
          "sixteen seventeen eighteen nineteen").split()
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")

EN_NUMBERS: dict[str, int] = {w: n for n, w in enumerate(_UNITS)} | {w: 20 + 10 * i for i, w in enumerate(_TENS)}


def en_small_numbers(upto: int, *, article: bool = True) -> dict[str, int]:
    """Number words from one to `upto` ("a"/"an" count as one unless `article` is False)."""
    out = {"a": 1, "an": 1} if article else {}
    return out | {w: n for w, n in EN_NUMBERS.items() if 1 <= n <= upto}


def en_number(word: str) -> int | None:
    """Digits or words up to 99: "7", "seven", "twenty-one", "twenty one"; else None."""
    w = word.lower().replace("-", " ").strip()
    if w.isdigit():
        return int(w)
    parts = w.split()
    if len(parts) == 1:
        return EN_NUMBERS.get(w)
    if len(parts) == 2 and parts[0] in _TENS and 1 <= EN_NUMBERS.get(parts[1], 0) <= 9:
        return EN_NUMBERS[parts[0]] + EN_NUMBERS[parts[1]]
    return None


_EN_NUMBERS = en_small_numbers(12)
_ZH_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5,
              "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_ZH_UNITS = {"天": "day", "日": "day", "周": "week", "星期": "week", "礼拜": "week",
             "月": "month", "年": "year"}
_ZH_YEARS = {"今年": 0, "去年": 1, "前年": 2, "大前年": 3}
_ZH_DAYS = {"今天": 0, "今日": 0, "今早": 0, "今晚": 0, "昨天": 1, "昨日": 1, "昨晚": 1,
            "前天": 2, "大前天": 3}
_ZH_SEASONS = {"春": "spring", "夏": "summer", "秋": "autumn"}


def _en_number(word: str) -> int | None:
    word = word.lower()
    if word.isdigit():
        return int(word)
    return _EN_NUMBERS.get(word)


def zh_number(text: str) -> int | None:
    """Arabic digits or Chinese numerals up to 99 (十, 十二, 二十, 二十一, 两)."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        t = _ZH_DIGITS.get(tens, -1) if tens else 1
        o = _ZH_DIGITS.get(ones, -1) if ones else 0
        return None if t < 0 or o < 0 else t * 10 + o
    if len(text) == 1:
        return _ZH_DIGITS.get(text)
    return None


def _unit(word: str) -> str:
    word = word.lower().rstrip("s")
    return word if word in ("day", "week", "month", "year") else _ZH_UNITS.get(word, "year")


# --- the expressions ----------------------------------------------------------------------
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)"
)
_FULL_MONTH = r"(?:january|february|march|april|may|june|july|august|september|october|november|december)"
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
_NUM = r"(?:\d{1,2}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
_YEAR = r"(?:19|20|21)\d\d"
_DAYNUM = r"(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?"
_UNIT = r"(?:days?|weeks?|months?|years?)"
_SEASON = r"(?:spring|summer|autumn|fall|winter)"
_ZH_NUM = r"(?:\d{1,2}|[一二两三四五六七八九]?十[一二三四五六七八九]?|[一二两三四五六七八九])"
_ZH_MONTH = r"(?:1[0-2]|0?[1-9]|十[一二]?|[一二三四五六七八九])"
_ZH_DAYNUM = r"(?:3[01]|[12]\d|0?[1-9]|[一二三]?十[一二三四五六七八九]?|[一二三四五六七八九])"

# (name, pattern): named groups inside are prefixed with the rule's name. Order is
# priority where two rules start at the same place (the more specific first).
_RULES: list[tuple[str, str]] = [
    # English
    ("iso", rf"\b(?P<iso_y>{_YEAR})[-/.](?P<iso_m>1[0-2]|0[1-9])[-/.](?P<iso_d>3[01]|[12]\d|0[1-9])\b"),
    ("mdy", rf"\b(?i:(?:on\s+)?(?P<mdy_m>{_MONTH})\.?\s+(?P<mdy_d>{_DAYNUM}),?\s+(?P<mdy_y>{_YEAR}))\b"),
    ("dmy", rf"\b(?i:(?:on\s+)?(?:the\s+)?(?P<dmy_d>{_DAYNUM})\s+(?:of\s+)?(?P<dmy_m>{_MONTH})\.?,?\s+(?P<dmy_y>{_YEAR}))\b"),
    ("my", rf"\b(?i:(?:(?:in|during|of)\s+)?(?P<my_m>{_FULL_MONTH}|{_MONTH}\.?)\s+(?:of\s+)?(?P<my_y>{_YEAR}))\b"),
    ("ym", rf"\b(?P<ym_y>{_YEAR})-(?P<ym_m>1[0-2]|0[1-9])\b(?!-)"),
    ("mrel", rf"\b(?i:(?:(?:in|during)\s+)?(?P<mrel_m>{_FULL_MONTH})\s+(?:of\s+)?(?P<mrel_w>last|this)\s+year)\b"),
    ("md", rf"\b(?i:(?P<md_on>on\s+)?(?P<md_m>{_FULL_MONTH})\s+(?P<md_d>{_DAYNUM}))\b(?![:\d])"),
    ("dm", rf"\b(?i:(?:on\s+)?(?:the\s+)?(?P<dm_d>{_DAYNUM})\s+of\s+(?P<dm_m>{_FULL_MONTH}))\b"),
    ("dbl", r"\b(?i:the\s+(?P<dbl_u>day|week)\s+before\s+(?:last|yesterday))\b"),
    ("win", rf"\b(?i:(?:the\s+)?(?P<win_w>last|past)\s+(?P<win_n>{_NUM})\s+(?P<win_u>{_UNIT}))\b"),
    ("win1", r"\b(?i:the\s+past\s+(?P<win1_u>day|week|month|year))\b"),
    ("ago", rf"\b(?i:(?P<ago_n>{_NUM})\s+(?P<ago_u>{_UNIT})\s+ago)\b"),
    ("rday", r"\b(?i:(?P<rday_w>yesterday|today|tonight|last\s+night|this\s+(?:morning|afternoon|evening)))\b"),
    ("wkend", r"\b(?i:(?P<wkend_w>last|this(?:\s+past)?)\s+weekend)\b"),
    ("wkago", rf"\b(?i:(?P<wkago_n>{_NUM})\s+weekends?\s+ago)\b"),
    ("few", r"\b(?i:(?:a\s+few|a\s+couple(?:\s+of)?|several)\s+(?P<few_u>days|weeks)\s+ago)\b"),
    ("rel", r"\b(?i:(?P<rel_w>last|this)\s+(?P<rel_u>week|month|year))\b"),
    ("lwd", rf"\b(?i:last\s+(?P<lwd_d>{_WEEKDAY}))\b"),
    ("lmon", rf"\b(?i:last\s+(?P<lmon_m>{_FULL_MONTH}))\b"),
    ("inmon", rf"\b(?i:(?:in|during|of)\s+(?:early\s+|late\s+|mid-?)?(?P<inmon_m>{_FULL_MONTH}))\b"),
    ("sy", rf"\b(?i:(?:the\s+)?(?P<sy_s>spring|summer|autumn|fall)\s+(?:of\s+)?(?P<sy_y>{_YEAR}))\b"),
    ("lsea", rf"\b(?i:(?P<lsea_w>last|this)\s+(?P<lsea_s>{_SEASON}))\b"),
    ("year", r"\b(?i:(?:in|during|throughout|(?:the\s+)?year)\s+(?P<year_y>\d{4}))\b(?![-/.:]?\d)"),
    # a bare year only where a clause ends after it ("… in Japan, 2019?"), never inside a
    # number or after a word that makes it a quantity or a code
    ("ybare", rf"(?<![\d.,$#€£¥+\-*/×x])(?<!(?i:no)\.\s)(?P<ybare_y>{_YEAR})(?=\s*(?:[?!;:)。？！，；]|[.,](?!\d)|$))"),
    # Chinese
    ("zymd", rf"(?P<zymd_y>\d{{4}})\s*年\s*(?P<zymd_m>{_ZH_MONTH})\s*月\s*(?P<zymd_d>{_ZH_DAYNUM})\s*[日号]"),
    ("zym", rf"(?P<zym_y>\d{{4}})\s*年\s*(?P<zym_m>{_ZH_MONTH})\s*月(?:份)?"),
    ("zy", r"(?<!\d)(?P<zy_y>\d{4})\s*年(?!代|纪|级|龄)"),
    ("zrym", rf"(?P<zrym_r>大前年|前年|去年|今年)的?(?P<zrym_m>{_ZH_MONTH})月(?:份)?(?:(?P<zrym_d>{_ZH_DAYNUM})[日号])?"),
    ("zrys", r"(?P<zrys_r>大前年|前年|去年|今年)的?(?P<zrys_s>[春夏秋])(?:天|季)"),
    ("zmd", rf"(?<![\d一二两三四五六七八九十零〇年])(?P<zmd_m>{_ZH_MONTH})月(?P<zmd_d>{_ZH_DAYNUM})[日号]"),
    ("zm", rf"(?<![\d一二两三四五六七八九十零〇年个])(?P<zm_m>{_ZH_MONTH})月(?:份)?(?![\d一二三四五六七八九十]+[日号]|饼|光|亮|球|台)"),
    ("zago", rf"(?P<zago_n>{_ZH_NUM})\s*(?:个)?(?P<zago_u>天|周|星期|礼拜|月|年)(?:以|之)?前"),
    ("zwin", rf"(?:过去|最近|(?<![附接将])近)的?(?P<zwin_n>{_ZH_NUM})\s*(?:个)?(?P<zwin_u>天|周|星期|礼拜|月|年)"),
    ("zwk2", r"上上(?:个)?(?:周|星期|礼拜)"),
    ("zwk", r"(?P<zwk_w>上|这|本)(?:个|一)?(?P<zwk_u>周(?![围期边到岁年全密])|星期|礼拜)"
     r"(?P<zwk_d>[二三四五六日末]|一(?![起下样直共些点次个般])|(?<=[期拜])天)?"),
    ("zmon2", r"上上个?月"),
    ("zmon", r"(?P<zmon_w>上个?月|这个?月|本月)"),
    ("zyr", r"(?P<zyr_w>大前年|(?<![以之提目眼当])前年|去年|今年)"),
    ("zfew", r"(?:前几|前些)天|(?<![以之这那好])几天(?:前|之前|以前)"),
    ("zday", r"(?P<zday_w>大前天|(?<![以之提目眼当])前天|昨天|昨日|昨晚|今天|今日|今早|今晚)"),
]

_EN_SCAN = re.compile("|".join(f"(?P<{n}>{p})" for n, p in _RULES if not n.startswith("z")))
_ZH_SCAN = re.compile("|".join(f"(?P<{n}>{p})" for n, p in _RULES if n.startswith("z")))

# Scanning every position with the alternation costs ~5 µs a character, so matching is
# only tried where an expression can start (`_*_STARTS`) shortly before a word every
# expression contains (`_*_TRIGGERS`); text without such a word costs a set lookup.
_EN_WORD = re.compile(r"[a-z]+|\d+")
_EN_TRIGGERS = frozenset(
    "ago yesterday today tonight night morning afternoon evening day days week weeks weekend weekends"
    " month months year years spring summer autumn fall winter".split()
) | frozenset(MONTHS) | frozenset(_WEEKDAYS) | frozenset(("sept",))
_EN_STARTS = frozenset(
    "in during throughout of on the last past this yesterday today tonight year a several".split()
) | frozenset(_EN_NUMBERS) | frozenset(MONTHS) | frozenset(("spring", "summer", "autumn", "fall"))
_EN_BEFORE = 5  # words an expression may start before its trigger
_ZH_TRIGGERS = frozenset("天周月年期拜晚早日")
_ZH_STARTS = frozenset("0123456789一二两三四五六七八九十上这本大前去今昨过最近几")
_ZH_BEFORE = 8  # characters an expression may start before its trigger

# words that turn a point into an open span, which is not a range here
_OPEN_BEFORE = re.compile(r"(?i:\b(?:before|after|until|till|by|prior\s+to|since)\s*)$")
# before a bare number at a clause end, words that make it a quantity or a code ("paid 2000.")
_QUANTITY_BEFORE = re.compile(
    r"(?i:\b(?:about|around|approximately|roughly|nearly|almost|over|under|than|only|just|some"
    r"|room|page|number|no|code|version|pin|rank|level|score|scored|ticket|flight|bus|route|unit"
    r"|paid|pay|cost|costs|spent|spend|earn|earned|earns|owe|owes|worth|price|bought|sold|won|lost"
    r"|ran|walked|count|counted|total|sum|plus|minus|times|is|are|was|were|be|x|at|to|and|or)\W*)$"
)
_ZH_OPEN_BEFORE = re.compile(r"(?:自从|自|从|直到|到)\s*$")
_ZH_OPEN_AFTER = re.compile(r"^(?:以前|之前|以后|之后|以来|前|后|起|开始|到|至)")


def _en_rule(m: re.Match[str], today: date) -> Days | None:
    rule = m.lastgroup
    g = m.group
    if rule == "iso":
        return _date_or_none(_valid_year(g("iso_y")), int(g("iso_m")), int(g("iso_d")))
    if rule in ("mdy", "dmy"):
        month = _month_number(g(f"{rule}_m"), year_follows=True)
        if month is None:
            return None
        return _date_or_none(_valid_year(g(f"{rule}_y")), month, _day_number(g(f"{rule}_d")))
    if rule == "my":
        month = _month_number(g("my_m").rstrip("."), year_follows=True)
        year = _valid_year(g("my_y"))
        return None if month is None or year is None else _month(year, month)
    if rule == "ym":
        year = _valid_year(g("ym_y"))
        return None if year is None else _month(year, int(g("ym_m")))
    if rule == "mrel":
        month = _month_number(g("mrel_m"))
        if month is None:
            return None
        return _month(today.year - (g("mrel_w").lower() == "last"), month)
    if rule == "md":
        month = _month_number(g("md_m"))
        day_text = g("md_d")
        # "May 2 people" is not a date: a bare day number needs "on" or an ordinal
        if month is None or (month == 5 and not g("md_on") and day_text.isdigit()):
            return None
        return _past_day(today, month, _day_number(day_text))
    if rule == "dm":
        month = _month_number(g("dm_m"))
        return None if month is None else _past_day(today, month, _day_number(g("dm_d")))
    if rule == "dbl":
        return _day(today - timedelta(days=2)) if g("dbl_u").lower() == "day" else _week(today, 2)
    if rule == "win":
        amount = _en_number(g("win_n"))
        return None if not amount else _window(today, amount, _unit(g("win_u")))
    if rule == "win1":
        return _window(today, 1, g("win1_u").lower())
    if rule == "ago":
        amount = _en_number(g("ago_n"))
        return None if not amount else _back(today, amount, _unit(g("ago_u")))
    if rule == "rday":
        word = g("rday_w").lower()
        return _day(today - timedelta(days=1)) if word in ("yesterday",) or word.startswith("last") else _day(today)
    if rule == "wkend":
        monday = _week(today, 0 if g("wkend_w").lower() == "this" else 1)[0]
        return monday + timedelta(days=5), monday + timedelta(days=7)
    if rule == "wkago":  # the weekend of the week that many weeks back
        amount = _en_number(g("wkago_n"))
        monday = _week(today, amount)[0] if amount else None
        return None if monday is None else (monday + timedelta(days=5), monday + timedelta(days=7))
    if rule == "few":  # vague: a few days = 2-6 days back, a few weeks = 2-4 weeks back
        if g("few_u").lower() == "days":
            return today - timedelta(days=6), today - timedelta(days=1)
        return _week(today, 4)[0], _week(today, 1)[0]
    if rule == "rel":
        back = 1 if g("rel_w").lower() == "last" else 0
        return _back(today, back, g("rel_u").lower())
    if rule == "lwd":
        days = (today.weekday() - _WEEKDAYS[g("lwd_d").lower()] - 1) % 7 + 1
        return _day(today - timedelta(days=days))
    if rule == "lmon":
        month = _month_number(g("lmon_m"))
        return None if month is None else _past_month(today, month, strict=True)
    if rule == "inmon":
        month = _month_number(g("inmon_m"))
        return None if month is None else _past_month(today, month, strict=False)
    if rule == "sy":
        year = _valid_year(g("sy_y"))
        return None if year is None else _season(year, g("sy_s").lower())
    if rule == "lsea":
        season = g("lsea_s").lower()
        if g("lsea_w").lower() == "last":
            return _last_season(today, season)
        year = today.year - (season == "winter" and today.month < 3)
        return _season(year, season)
    if rule in ("year", "ybare"):
        year = _valid_year(g(f"{rule}_y"))
        return None if year is None else _year(year)
    return None


def _zh_rule(m: re.Match[str], today: date) -> Days | None:
    rule = m.lastgroup
    g = m.group
    if rule == "zfew":  # 前几天: a few days back (2-6), as "a few days ago"
        return today - timedelta(days=6), today - timedelta(days=1)
    if rule == "zymd":
        return _date_or_none(_valid_year(g("zymd_y")), _zh_month(g("zymd_m")), zh_number(g("zymd_d")) or 0)
    if rule == "zym":
        year = _valid_year(g("zym_y"))
        return None if year is None else _month(year, _zh_month(g("zym_m")))
    if rule == "zy":
        year = _valid_year(g("zy_y"))
        return None if year is None else _year(year)
    if rule == "zrym":
        year = today.year - _ZH_YEARS[g("zrym_r")]
        month = _zh_month(g("zrym_m"))
        if g("zrym_d"):
            return _date_or_none(year, month, zh_number(g("zrym_d")) or 0)
        return _month(year, month)
    if rule == "zrys":
        return _season(today.year - _ZH_YEARS[g("zrys_r")], _ZH_SEASONS[g("zrys_s")])
    if rule == "zmd":
        return _past_day(today, _zh_month(g("zmd_m")), zh_number(g("zmd_d")) or 0)
    if rule == "zm":
        return _past_month(today, _zh_month(g("zm_m")), strict=False)
    if rule == "zago":
        amount = zh_number(g("zago_n"))
        return None if not amount else _back(today, amount, _unit(g("zago_u")))
    if rule == "zwin":
        amount = zh_number(g("zwin_n"))
        return None if not amount else _window(today, amount, _unit(g("zwin_u")))
    if rule == "zwk2":
        return _week(today, 2)
    if rule == "zwk":
        start, end = _week(today, 1 if g("zwk_w") == "上" else 0)
        day = g("zwk_d")
        if not day:
            return start, end
        if day == "末":
            return start + timedelta(days=5), end
        return _day(start + timedelta(days=_ZH_WEEKDAYS[day]))
    if rule == "zmon2":
        return _back(today, 2, "month")
    if rule == "zmon":
        return _back(today, 1 if g("zmon_w").startswith("上") else 0, "month")
    if rule == "zyr":
        return _year(today.year - _ZH_YEARS[g("zyr_w")])
    if rule == "zday":
        return _day(today - timedelta(days=_ZH_DAYS[g("zday_w")]))
    return None


def _month_number(word: str, year_follows: bool = False) -> int | None:
    """The month a word names; "may" only capitalised, or lower-case right before a year."""
    month = MONTHS.get(word.lower())
    if month == 5 and word != "May" and not (year_follows and word.lower() == "may"):
        return None
    return month


def _day_number(text: str) -> int:
    return int(re.sub(r"\D", "", text))


def _zh_month(text: str) -> int:
    return zh_number(text) or 0


_ZH_RULES = frozenset(name for name, _ in _RULES if name.startswith("z"))


def _at(d: date, zone: tzinfo) -> datetime:
    """Midnight starting day `d` in `zone`, in UTC."""
    return datetime(d.year, d.month, d.day, tzinfo=zone).astimezone(UTC)


def _en_starts(text: str) -> list[int]:
    """Where an English expression may start: near a time word."""
    lowered = text.lower()
    words = _EN_WORD.findall(lowered)
    if _EN_TRIGGERS.isdisjoint(words) and not any(
        len(w) == 4 and w[0] in "12" and w.isdigit() for w in words
    ):
        return []
    tokens = [(m.start(), m.group()) for m in _EN_WORD.finditer(lowered)]
    starts: set[int] = set()
    for i, (_, word) in enumerate(tokens):
        if word in _EN_TRIGGERS or (len(word) == 4 and word.isdigit()):
            for position, candidate in tokens[max(0, i - _EN_BEFORE) : i + 1]:
                if candidate in _EN_STARTS or candidate[0].isdigit():
                    starts.add(position)
    return sorted(starts)


def _zh_starts(text: str) -> list[int]:
    """Where a Chinese expression may start: a little before a time character."""
    if _ZH_TRIGGERS.isdisjoint(text):
        return []
    starts: set[int] = set()
    for i, ch in enumerate(text):
        if ch in _ZH_TRIGGERS:
            for position in range(max(0, i - _ZH_BEFORE), i + 1):
                if text[position] in _ZH_STARTS:
                    starts.add(position)
    return sorted(starts)


def _matches(text: str) -> list[re.Match[str]]:
    """Leftmost, non-overlapping matches of the rules (English and Chinese)."""
    found: list[re.Match[str]] = []
    for scan, starts in ((_EN_SCAN, _en_starts(text)), (_ZH_SCAN, _zh_starts(text))):
        reached = 0
        for position in starts:
            if position < reached:
                continue
            m = scan.match(text, position)
            if m is not None:
                found.append(m)
                reached = m.end()
    found.sort(key=lambda m: m.start())
    return found


def find_ranges(text: str, now: datetime) -> list[TimeRange]:
    """Every time expression in `text`, left to right, read against the moment `now`."""
    if not text:
        return []
    matches = _matches(text)
    if not matches:
        return []
    zone = now.tzinfo or UTC
    today = now.date()  # in the reference moment's own zone
    found: list[TimeRange] = []
    reached = 0
    for m in matches:
        if m.start() < reached:
            continue  # an English and a Chinese reading of the same words: the first wins
        chinese = m.lastgroup in _ZH_RULES
        try:
            days = (_zh_rule if chinese else _en_rule)(m, today)
        except (ValueError, KeyError, OverflowError):
            days = None
        if days is None:
            continue
        before, after = text[: m.start()], text[m.end():]
        if chinese:
            if _ZH_OPEN_BEFORE.search(before[-4:]) or _ZH_OPEN_AFTER.match(after[:4]):
                continue
        elif _OPEN_BEFORE.search(before[-12:]) or (
            m.lastgroup == "ybare" and _QUANTITY_BEFORE.search(before[-16:])
        ):
            continue
        start, end = days
        if start > today:
            continue  # the future: nothing has been said then
        found.append(TimeRange(_at(start, zone), _at(end, zone), m.group(), (m.start(), m.end())))
        reached = m.end()
    return found


def mentions_time(text: str) -> bool:
    """Whether `text` may name a time (a cheap test: the words and rules, no calendar)."""
    return bool(text) and bool(_matches(text))


def find_range(text: str, now: datetime) -> TimeRange | None:
    """The first time expression in `text`, or None."""
    ranges = find_ranges(text, now)
    return ranges[0] if ranges else None
