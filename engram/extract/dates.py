"""Dates in what the user says: due dates, weekdays, times of day, recurrences, and when
something already happened.

"by Friday 5pm", "next Monday", "in two weeks", "周五前", "下周三下午3点",
"每周一和周四": resolved against `now` in its own time zone. A due date with no
time is due at 23:59 that day.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from typing import Any

from engram.when import MONTHS, en_small_numbers, find_range, zh_number

_WD_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WD_CODE = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")
_WD_EN_RE = "|".join(_WD_EN)
_MONTH_RE = "|".join(sorted(MONTHS, key=len, reverse=True))
_EN_NUMS = en_small_numbers(10) | {"a couple of": 2}
EN_DATE_RE = re.compile(
    rf"""(?:\b(?P<prep>by|before|on|until|till|no\ later\ than|due)\s+)?\b(?:
      (?P<rel>the\ day\ after\ tomorrow|tomorrow|today|tonight|next\ week|next\ month
        |this\ weekend|next\ weekend|the\ weekend|(?:the\ )?end\ of\ (?:the\ |this\ )?(?:day|week|month|year)
        |eod|eow)
    | (?:(?P<mod>this\ coming|this|next|coming)\s+)?(?P<wd>{_WD_EN_RE})(?:\s+(?:morning|afternoon|evening|night))?
    | (?P<iy>\d{{4}})-(?P<im>\d{{1,2}})-(?P<id>\d{{1,2}})
    | (?:the\s+)?end\s+of\s+(?P<eom>{_MONTH_RE})
    | (?P<mon>{_MONTH_RE})\.?\s+(?P<md>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<my>\d{{4}}))?
    | (?:the\s+)?(?P<dm>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon2>{_MONTH_RE})(?:,?\s+(?P<my2>\d{{4}}))?
    | (?:the\s+)?(?P<dom>\d{{1,2}})(?:st|nd|rd|th)\s+of\s+(?P<domof>next|this|the)\s+month
    | the\s+(?P<dom2>\d{{1,2}})(?:st|nd|rd|th)(?=\s*(?:[,.!?;]|$|at\b|and\b|so\b|because\b|but\b))
    | in\s+(?P<n>\d+|a\ couple\ of|a|an|one|two|three|four|five|six|seven|eight|nine|ten)
        \s+(?P<unit>days?|weeks?|months?)
    | (?:at|by|before)\s+(?P<th>\d{{1,2}})(?::(?P<tm>\d{{2}}))?\s*(?P<tap>a\.?m\.?|p\.?m\.?)
        (?:\s+(?:on\s+)?(?:(?P<tmod>this|next|coming)\s+)?(?P<tday>the\ day\ after\ tomorrow|tomorrow|today|tonight
        |{_WD_EN_RE}))?
    )\b(?:\s*(?:at|by|before)?\s*(?P<hh>\d{{1,2}})(?::(?P<mm>\d{{2}}))?\s*(?P<ap>a\.?m\.?|p\.?m\.?)(?!\w)
        | \s+(?:at|by|before)\s+(?P<bare>\d{{1,2}})(?::(?P<bmm>\d{{2}}))?(?=\s*(?:[,.!?;]|$|and\b|for\b|with\b))
        | \s+(?:at|by|before)?\s*(?P<noon>noon|midday|midnight))?""",
    re.I | re.X,
)
_ZH_NUM_RE = "[0-9]+|[零一二两三四五六七八九十]+"
_ZH_DAY_RE = "[0-9]{1,2}|[二三]?十[一二三四五六七八九]?|[一二三四五六七八九]"  # a day of the month
_ZH_UNITS = {"天": "day", "周": "week", "个星期": "week", "个月": "month"}
_ZH_WD = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6,
          "1": 0, "2": 1, "3": 2, "4": 3, "5": 4, "6": 5, "7": 6}
ZH_DATE_RE = re.compile(
    rf"""(?:
      (?P<mod>下下个?|下个?|这个?|本)?(?:周|星期|礼拜)(?P<wd>[一二三四五六日天1-7])
    | (?P<ofm>下个?月|这个?月|本月)(?P<dom>{_ZH_DAY_RE})[日号]
    | (?P<rel>大后天|后天|明天|明早|明晚|今天|今晚|今早|下周末|下周|下星期|下个星期|下礼拜|下个礼拜|这周末|本周末|周末
        |本月底|这个月底|月底|下个月|年底)
    | (?:(?P<y>\d{{4}})年)?(?P<m>\d{{1,2}}|十[一二]?|[一二三四五六七八九])月(?P<d>\d{{1,2}}(?=[日号])|{_ZH_DAY_RE}(?=[日号])|\d{{1,2}})[日号]?
    | (?P<dom2>{_ZH_DAY_RE})号(?![线楼房门床车位码机台桌电球])
    | (?P<iy>\d{{4}})-(?P<im>\d{{1,2}})-(?P<id>\d{{1,2}})
    | (?P<n>{_ZH_NUM_RE})(?P<unit>天|个星期|周|个月)(?:后|以后|之后)
    | (?P<tampm>上午|早上|中午|下午|傍晚|晚上)(?P<thh>{_ZH_NUM_RE})点(?:(?P<thalf>半)|(?P<tmm>[0-9]{{1,2}})分?)?
    )(?:(?P<ampm>上午|早上|中午|下午|晚上)?(?P<hh>{_ZH_NUM_RE})点(?:(?P<half>半)|(?P<mm>[0-9]{{1,2}})分?)?)?""",
    re.X,
)


# a time counted from when it was said ("上个月", "三年前", "前几天"): dropped from a fact once
# `valid_from` holds it (a fact read a year later must not still say "last month"); a date
# ("2019年", "五月") stays, it means the same whenever it is read
_ZH_TIME_REL_RE = re.compile(
    r"^(?:昨天|昨晚|今天|今早|前天|上周[一二三四五六日末]?|上个月|上周末|去年|前年|今年|这周|本周"
    r"|前几天|前些天|前阵子|(?:[0-9]+|[一二两三四五六七八九十几半]+)个?(?:天|周|星期|礼拜|月|年)(?:前|以前|之前))"
)


_ZH_BEFORE_NOW_RE = re.compile(r"前|去年|上个?月")  # ("今年七岁" is no year gone by: it stays "七岁")


def zh_said_time(text: str, now: datetime) -> tuple[str, datetime | None]:
    """`text` without a time counted from `now`, and when the thing it says happened (the start
    of the first time it names; "去年开始学钢琴": began last year). A year or month stays, as
    the one it names ("三年前开始学钢琴" → "2023年开始学钢琴"; see `en_valid_from`)."""
    r = find_range(text, now)
    if r is None and "开始" in text:  # (an open range to a search: "since last year")
        r = find_range(text[: text.index("开始")], now)
    if r is None:
        return text, None
    a, b = r.span
    if _ZH_TIME_REL_RE.match(r.text):  # "两年前就住在杭州": its 就 ("already then") goes with it
        named = absolute_when(r.text, "zh", now) if _ZH_BEFORE_NOW_RE.search(r.text) else r.text
        text = text[:a] + ("" if named == r.text else named) + text[b:].removeprefix("就").removeprefix("才")
    return text, r.start


def zh_int(s: str) -> int:
    """Arabic digits or Chinese numerals up to 99 ("十五", "两"); 0 when neither."""
    return zh_number(s) or 0


def _upcoming(today: date, wd: int) -> date:
    return today + timedelta(days=(wd - today.weekday()) % 7)


def _next_week(today: date, wd: int = 0) -> date:
    return today - timedelta(days=today.weekday()) + timedelta(days=7 + wd)


def _weekend(today: date) -> date:
    return today if today.weekday() >= 5 else _upcoming(today, 5)


def _month_end(d: date) -> date:
    return d.replace(day=calendar.monthrange(d.year, d.month)[1])


def _add_months(d: date, n: int) -> date:
    y, m = divmod(d.month - 1 + n, 12)
    year, month = d.year + y, m + 1
    return date(year, month, min(d.day, calendar.monthrange(year, month)[1]))


def _after(today: date, n: int, unit: str) -> date:
    """`n` days, weeks or months after `today` (`unit` is "day", "week" or "month")."""
    if unit == "day":
        return today + timedelta(days=n)
    if unit == "week":
        return today + timedelta(weeks=n)
    return _add_months(today, n)


# "next week", "下周", …: what each relative date word resolves to, given today
_RELATIVE: dict[str, Callable[[date], date]] = {word: resolve for words, resolve in (
    (("today", "tonight", "end of day", "eod", "今天", "今晚", "今早"), lambda d: d),
    (("tomorrow", "明天", "明早", "明晚"), lambda d: d + timedelta(days=1)),
    (("day after tomorrow", "后天"), lambda d: d + timedelta(days=2)),
    (("大后天",), lambda d: d + timedelta(days=3)),
    (("next week", "下周", "下星期", "下个星期", "下礼拜", "下个礼拜"), _next_week),
    (("next month", "下个月"), lambda d: _add_months(d.replace(day=1), 1)),
    (("weekend", "周末", "这周末", "本周末"), _weekend),
    (("next weekend", "下周末"), lambda d: _next_week(d, 5)),
    (("end of week", "eow"), lambda d: _upcoming(d, 4)),
    (("end of month", "月底", "本月底", "这个月底"), _month_end),
    (("end of year", "年底"), lambda d: date(d.year, 12, 31)),
) for word in words}


def _md(today: date, month: int, day: int, year: str | None) -> date | None:
    """Month and day; without a year, the next such day (today included)."""
    try:
        d = date(int(year) if year else today.year, month, day)
    except ValueError:
        return None
    if not year and d < today:
        d = date(d.year + 1, month, day) if not (month == 2 and day == 29) else d
    return d


def _day_of_month(today: date, day: int, months_ahead: int | None) -> date | None:
    """Day `day` of this month or of one `months_ahead`; without it, the next such day (today
    included): "on the 15th" said on the 20th is next month's."""
    ahead = months_ahead if months_ahead is not None else 0 if day >= today.day else 1
    first = _add_months(today.replace(day=1), ahead)
    try:
        return first.replace(day=day)
    except ValueError:  # the 31st of a 30-day month
        return None


def _iso(g: dict[str, Any], t: time | None) -> tuple[date | None, time | None]:
    try:
        return date(int(g["iy"]), int(g["im"]), int(g["id"])), t
    except ValueError:
        return None, None


def _hm(hh: str | None, mm: str | None, ap: str | None, zh_ampm: str | None = None) -> time | None:
    if not hh:
        return None
    h = zh_int(hh)
    m = int(mm) if mm else 0
    ap = (ap or "").lower().replace(".", "")
    if (ap == "pm" or zh_ampm in ("下午", "傍晚", "晚上")) and h < 12:
        h += 12
    elif ap == "am" and h == 12:
        h = 0
    if h > 23 or m > 59:
        return None
    return time(h, m)


def _bare_hour(hh: str, mm: str | None) -> time | None:
    """"Wednesday at 10": an appointment's hour without am/pm, 7-11 in the morning, 12 at noon,
    1-6 in the afternoon (as people book them); a 24-hour time as written."""
    h = int(hh)
    if h > 23:
        return None
    return _hm(str(h), mm, "pm" if 1 <= h <= 6 else None)


def _en_weekday(today: date, name: str, mod: str | None) -> date:
    """"Friday" (this coming one, today included) or "next Friday" (in next week)."""
    wd = _WD_EN.index(name.lower())
    return _next_week(today, wd) if (mod or "").lower() == "next" else _upcoming(today, wd)


_NEXT_YEAR_RE = re.compile(r"\s*,?\s*next\s+year\b", re.I)


def resolve_en(m: re.Match[str], today: date) -> tuple[date | None, time | None]:
    """The day and time an `EN_DATE_RE` match names; (None, None) when it names none."""
    g = m.groupdict()
    t = _hm(g["hh"], g["mm"], g["ap"])
    if g["bare"]:
        t = _bare_hour(g["bare"], g["bmm"])
    elif g["noon"]:
        t = time(0, 0) if g["noon"].lower() == "midnight" else time(12, 0)
    if g["rel"]:
        resolve = _RELATIVE.get(g["rel"].lower().replace("the ", "").replace("this ", ""))
        return (resolve(today), t) if resolve else (None, None)
    if g["wd"]:
        return _en_weekday(today, g["wd"], g["mod"]), t
    if g["iy"]:
        return _iso(g, t)
    if g["eom"]:  # "by the end of May": its last day, the next May to come
        end = _month_end(date(today.year, MONTHS[g["eom"].lower()], 1))
        return (end if end >= today else _month_end(end.replace(year=today.year + 1, day=1))), t
    if g["mon"] or g["mon2"]:  # ("June 14th next year": in the year after this one)
        year = g["my"] or g["my2"] or (str(today.year + 1) if _NEXT_YEAR_RE.match(m.string, m.end()) else None)
        return _md(today, MONTHS[(g["mon"] or g["mon2"]).lower()], int(g["md"] or g["dm"]), year), t
    if g["dom"] or g["dom2"]:
        of = (g["domof"] or "").lower()
        return _day_of_month(today, int(g["dom"] or g["dom2"]), 1 if of == "next" else 0 if of else None), t
    if g["n"]:
        n = _EN_NUMS.get(g["n"].lower()) or int(g["n"])
        return _after(today, n, g["unit"].lower().rstrip("s")), t
    if g["th"]:  # "at 5pm", "at 5pm tomorrow", "by 6pm on Friday"
        t = _hm(g["th"], g["tm"], g["tap"])
        day = (g["tday"] or "today").lower()
        if day in _WD_EN:
            return _en_weekday(today, day, g["tmod"]), t
        resolve = _RELATIVE.get(day.replace("the ", ""))
        return (resolve(today) if resolve else today), t
    return None, None


def resolve_zh(m: re.Match[str], today: date) -> tuple[date | None, time | None]:
    """The day and time a `ZH_DATE_RE` match names; (None, None) when it names none."""
    g = m.groupdict()
    t = _hm(g["hh"], "30" if g["half"] else g["mm"], None, g["ampm"])
    if g["wd"]:
        wd = _ZH_WD[g["wd"]]
        mod = g["mod"] or ""
        if mod.startswith("下下"):
            return _next_week(today, wd) + timedelta(days=7), t
        if mod.startswith("下"):
            return _next_week(today, wd), t
        if mod:  # 这周X / 本周X: this calendar week
            return today - timedelta(days=today.weekday()) + timedelta(days=wd), t
        return _upcoming(today, wd), t
    if g["rel"]:
        resolve = _RELATIVE.get(g["rel"])
        return (resolve(today), t) if resolve else (None, None)
    if g["dom"] or g["dom2"]:
        ahead = None if g["dom2"] else 1 if g["ofm"].startswith("下") else 0
        return _day_of_month(today, zh_int(g["dom"] or g["dom2"]), ahead), t
    if g["m"]:  # ("明年六月十四号": in the year after this one)
        year = g["y"] or (str(today.year + 1) if m.string[max(0, m.start() - 2):m.start()] == "明年" else None)
        return _md(today, zh_int(g["m"]), zh_int(g["d"]), year), t
    if g["iy"]:
        return _iso(g, t)
    if g["n"]:
        return _after(today, zh_int(g["n"]), _ZH_UNITS[g["unit"]]), t
    if g["thh"]:  # "下午三点要开组会": today, at that time
        return today, _hm(g["thh"], "30" if g["thalf"] else g["tmm"], None, g["tampm"])
    return None, None


def due_datetime(d: date | None, t: time | None, now: datetime, m: re.Match[str] | None = None) -> datetime | None:
    """Deadline on day `d`: at the time said, else at the end of that day (user's zone = now's).
    A time already past today is the next one: "by 9am" said at noon is tomorrow's, "Wednesday
    at 10" said on Wednesday at noon next Wednesday's (`m`, the date said, names a weekday)."""
    if d is None:
        return None
    due = datetime.combine(d, t or time(23, 59), tzinfo=now.tzinfo)
    if t and d == now.date() and due < now:
        due += timedelta(days=7 if m is not None and names_weekday(m) else 1)
    return due


def names_weekday(m: re.Match[str]) -> bool:
    """The date said is a day of the week ("Friday", "at 6pm on Friday", "周三")."""
    g = m.groupdict()
    return bool(g.get("wd") or (g.get("tday") and g["tday"].lower() in _WD_EN))


# the day a task is due, as `date_suffix` writes it at the end of its content: "…（2026-05-11）"
DATE_SUFFIX_RE = re.compile(r"\s*[（(]\d{4}-\d{2}-\d{2}(?: \d{2}:\d{2})?[)）]")


def split_due(content: str) -> tuple[str, str]:
    """`content` without the due day `date_suffix` closed it with, and that suffix ("" if none)."""
    m = DATE_SUFFIX_RE.search(content)
    return (content[: m.start()], m.group()) if m and m.end() == len(content) else (content, "")


def date_suffix(due: datetime | None, t: time | None, zh: bool) -> str:
    """" (2024-10-25)" / "（2024-10-25 17:00）" to append to a task; "" without a date."""
    if due is None:
        return ""
    label = due.strftime("%Y-%m-%d %H:%M") if t else due.strftime("%Y-%m-%d")
    return f"（{label}）" if zh else f" ({label})"


def overlaps(a: re.Match[str], b: re.Match[str]) -> bool:
    return a.start() < b.end() and a.end() > b.start()


EN_REC_RE = re.compile(
    rf"""\b(?:(?:every|each)\s+(?:(?P<unit>day|morning|evening|night|afternoon|weekday|weekend|week|month|year)
      |(?P<wds>(?:{_WD_EN_RE})(?:\s*(?:,|and|&|or)\s*(?:{_WD_EN_RE}))*))
    |(?P<adv>daily|nightly|weekly|monthly|yearly|annually)
    |on\s+(?P<plural>(?:{_WD_EN_RE})s(?:\s*(?:,|and|&)\s*(?:{_WD_EN_RE})s)*))\b""",
    re.I | re.X,
)
ZH_REC_RE = re.compile(
    r"每个?(?:周|星期|礼拜)(?P<wd>[一二三四五六日天1-7])(?:[和、跟及与](?:周|星期|礼拜)?(?P<wd2>[一二三四五六日天1-7]))?"
    # "天天" is "every day" unless it is the end of a day word: 今天天气 is today's weather
    r"|(?P<unit>每天|每日|每晚|每早|(?<![今昨明前后当])天天|每个工作日|工作日|每个周末|每周末|每周|每星期|每个星期|每礼拜|每个月|每月|每年)"
)
_WORKDAYS, _WEEKENDS = "weekly:MON,TUE,WED,THU,FRI", "weekly:SAT,SUN"
_UNIT_REC = {"day": "daily", "morning": "daily", "evening": "daily", "night": "daily",
             "afternoon": "daily", "week": "weekly", "month": "monthly", "year": "yearly",
             "weekday": _WORKDAYS, "weekend": _WEEKENDS,
             "daily": "daily", "nightly": "daily", "weekly": "weekly", "monthly": "monthly",
             "yearly": "yearly", "annually": "yearly",
             "每天": "daily", "每日": "daily", "每晚": "daily", "每早": "daily", "天天": "daily",
             "每个工作日": _WORKDAYS, "工作日": _WORKDAYS, "每个周末": _WEEKENDS, "每周末": _WEEKENDS,
             "每周": "weekly", "每星期": "weekly", "每个星期": "weekly", "每礼拜": "weekly",
             "每个月": "monthly", "每月": "monthly", "每年": "yearly"}


def _recurrence(m: re.Match[str]) -> tuple[str, list[int]]:
    """("weekly:MON,THU", [0, 3]): the rule and its weekdays (the next one is the due date)."""
    g = m.groupdict()
    if g.get("unit"):
        return _UNIT_REC[g["unit"].lower() if g["unit"].isascii() else g["unit"]], []
    if g.get("adv"):
        return _UNIT_REC[g["adv"].lower()], []
    if "wds" in g:
        names = g["wds"] or g["plural"] or ""
        days = sorted({_WD_EN.index(w) for w in re.findall(_WD_EN_RE, names.lower())})
    else:
        days = sorted({_ZH_WD[d] for d in (g["wd"], g.get("wd2")) if d})
    rule = "weekly:" + ",".join(_WD_CODE[d] for d in days)
    return rule, days


def find_recurrence(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The most specific recurrence in `text`: named weekdays beat a bare unit, so
    "I send the weekly report every Friday" is weekly on Fridays, not just weekly."""
    matches = list(pattern.finditer(text))
    for m in matches:
        g = m.groupdict()
        if g.get("wds") or g.get("plural") or g.get("wd"):
            return m
    return matches[0] if matches else None


def resolve_recurrence(m: re.Match[str], t: time | None, now: datetime) -> tuple[str, datetime | None]:
    """An `EN_REC_RE`/`ZH_REC_RE` match: its rule, and its next occurrence as the due date: the
    next named weekday, or for a daily rule with a time ("every day at 6am") the next such time."""
    rule, days = _recurrence(m)
    today = now.date()
    if days:
        first = min(_upcoming(today, d) for d in days)
        due = due_datetime(first, t, now)
        if due is not None and due.date() != first:  # today's time has passed: the next of its days
            due = due_datetime(min(_upcoming(today + timedelta(days=1), d) for d in days), t, now)
        return rule, due
    return rule, due_datetime(today, t, now) if t and rule == "daily" else None


# a time of day on its own ("早上六点", "晚上8点半"): a routine's time
ZH_TIME_RE = re.compile(
    rf"(?P<ampm>上午|早上|早晨|中午|下午|傍晚|晚上)?(?P<hh>{_ZH_NUM_RE})点(?:(?P<half>半)|(?P<mm>[0-9]{{1,2}})分?)?"
)


def zh_time(m: re.Match[str]) -> time | None:
    """The time a `ZH_TIME_RE` match names."""
    return _hm(m.group("hh"), "30" if m.group("half") else m.group("mm"), None, m.group("ampm"))


def calendar_day(said: str, now: datetime, lang: str) -> str | None:
    """A day of the year said relative to `now` ("the 15th of next month", "下个月十五号"), as
    the calendar names it ("January 15", "1月15日"): a birthday read a year later must not
    still say "next month". None when `said` is not one such date (a date already named by its
    month, "May 3", stays as said)."""
    said = re.sub(r"^(?:on\s+)", "", said.strip(), flags=re.I)
    m = (ZH_DATE_RE if lang == "zh" else EN_DATE_RE).fullmatch(said)
    if m is None or m.group("hh") or m.groupdict().get("iy") or m.group("m" if lang == "zh" else "mon") \
            or (lang != "zh" and m.group("mon2")):
        return None
    day, _ = (resolve_zh if lang == "zh" else resolve_en)(m, now.date())
    if day is None:
        return None
    return f"{day.month}月{day.day}日" if lang == "zh" else f"{calendar.month_name[day.month]} {day.day}"


def absolute_when(when: str, lang: str, now: datetime | None) -> str:
    """`when` ("three years ago", "last month", "去年") as the year or month it names, when it
    names one (" in 2023", " in November 2026", "2025年"); else as said."""
    found = find_range(when, now) if when.strip() and now is not None else None
    if found is None:
        return when
    start, end = found.start, found.end
    if (start.month, start.day) == (1, 1) and (end.year - start.year, end.month, end.day) == (1, 1, 1):
        return f"{start.year}年" if lang == "zh" else f" in {start.year}"
    if start.day == 1 and end.day == 1 and (end.year * 12 + end.month) - (start.year * 12 + start.month) == 1:
        return f"{start.year}年{start.month}月" if lang == "zh" else f" in {start:%B %Y}"
    return when
