"""Tasks: things the user has to do by a date, or again and again (task:<action>).

"I need to submit the report by Friday", "I have a dentist appointment on May 5
at 10am", "the essay is due next Monday", "I go running every Monday", "周五前
要交报告", "每周五要交周报". A task needs a date or a recurrence, and (outside
an explicit command) a modal verb, an appointment, a stated deadline or a habit.

A routine ("I go running every Monday", "我每天早上六点跑步": a recurrence, no
modal verb) is a task so that it is reminded, but fills the routine's slot
habit:<activity> (see habits), its value the schedule ("weekly:MON", "daily 06:00").
"""

from __future__ import annotations

import re
from datetime import time

from engram.extract.candidate import Ctx, candidate, entities_of
from engram.extract.dates import (
    EN_DATE_RE,
    EN_REC_RE,
    ZH_DATE_RE,
    ZH_REC_RE,
    ZH_TIME_RE,
    date_suffix,
    due_datetime,
    find_recurrence,
    overlaps,
    resolve_en,
    resolve_recurrence,
    resolve_zh,
    zh_time,
)
from engram.extract.habits import en_activity, habit_key, zh_activity
from engram.extract.keys import slugify
from engram.extract.phrases import (
    CONTEXT_WORDS,
    EN_ADV,
    ZH_BARE_VERB,
    ZH_OBJ_BAD_RE,
    ZH_OWNED_RE,
    ZH_PARTICLES_RE,
    cut_clause,
    pronoun_led,
    trim_fillers,
)
from engram.extract.rewrite import as_sentence, en_objects_named, en_third, lcfirst, zh_pronouns_named, zh_third
from engram.models import Candidate, Kind

_EN_MODAL_RE = re.compile(
    r"^i\s*(?:(?:really|still|also|just|definitely|absolutely|seriously|urgently)\s+)*"
    r"(?P<modal>need\s+to|have\s+to|must|'ve\s+got\s+to|have\s+got\s+to|got\s+to|gotta|'m\s+supposed\s+to"
    r"|\s*am\s+supposed\s+to|'m\s+required\s+to|am\s+required\s+to|should|will\s+have\s+to|'ll\s+have\s+to)\s+(?P<rest>.+)$",
    re.I,
)
_EN_EVENTS = (
    r"(?:meeting|appointment|exam|test|interview|deadline|presentation|call|flight|class|lecture|checkup|check-up"
    r"|mcat|lsat|gre|gmat|sat|act|ielts|toefl|usmle|boards|finals|midterms?"
    r"|surgery|recital|concert|demo|review|standup|stand-up|workshop|conference|trip|party|wedding|session|launch|release"
    r"|move|opening|date|dinner|reservation|booking|visit|holiday|vacation)"
)
_EN_APPT_RE = re.compile(
    r"^i(?:\s+also)?(?:\s+have|'ve(?:\s+also)?\s+got|\s+have\s+got|\s+got)\s+(?:a|an|my|the)\s+(?P<thing>(?:[\w'-]+\s+){0,3}?"
    rf"{_EN_EVENTS})\s+(?P<rest>.+)$",
    re.I,
)
# "I'm meeting a recruiter on Friday": something arranged for a day to come, said in the present
_EN_PLANNED_RE = re.compile(
    r"^i(?:'m|\s+am)\s+(?:also\s+)?(?P<verb>meeting|seeing|visiting|flying|driving|leaving|taking|starting|hosting"
    r"|interviewing|presenting|picking\s+up|going|heading|moving|travell?ing|attending|running"
    r"|having(?=\s+(?:dinner|lunch|breakfast|brunch|drinks|coffee|surgery|friends|people|guests"
    r"|an?\s+(?:party|meeting|call|date|baby|barbecue|bbq|interview|appointment|check-?up)\b)))\s+\S", re.I)
# "My flight to Tokyo is on March 3rd", "Our launch is next Monday": the user's own, on a day
_EN_MY_EVENT_RE = re.compile(
    rf"^(?:my|our)\s+(?P<thing>(?:[\w'-]+\s+){{0,3}}?{_EN_EVENTS}(?:\s+(?:to|in|at|with|for)\s+[\w' -]{{1,30}}?)?)"
    r"\s+(?:is|are|'s)\s+(?P<rest>.+)$",
    re.I,
)
# "我的考试是十二月二十三号", "我的面试定在下周三": the user's own, on a day
_ZH_EVENTS = (r"(?:考试|面试|会议|会|航班|飞机|火车|高铁|婚礼|手术|体检|复查|答辩|约会|演出|比赛|音乐会|讲座|课|聚会|派对|旅行"
              r"|出差|预约|门诊)")
_ZH_MY_EVENT_RE = re.compile(
    rf"^我的(?P<thing>[\u4e00-\u9fff]{{0,6}}?{_ZH_EVENTS})(?:是|在|定在|安排在|改到|改在)"
)
# "十二月二十号考试", "下周三面试": a day, then the event on it, the user's own (said without "我")
_ZH_DATED_EVENT_RE = re.compile(rf"^(?:我)?(?:有一个|有一场|有个|有场|要|有)?(?P<thing>[\u4e00-\u9fff]{{0,4}}?{_ZH_EVENTS})$")
# "The launch moved to April 2nd", "My exam got pushed back to Friday", "We moved the meeting to
# Thursday": a new day for the user's own event (the same key as its first day: it supersedes it)
_EN_MOVED_RE = re.compile(
    rf"^(?:(?:my|our|the)\s+(?P<thing>(?:[\w'-]+\s+){{0,2}}?{_EN_EVENTS})\s+(?:(?:has|have|had)\s+been\s+|was\s+|were\s+"
    rf"|got\s+|is\s+|'s\s+)?|(?:i|we)\s+(?:have\s+|'ve\s+|just\s+)?(?=\w+\s+(?:my|our|the)\s)"
    rf"(?P<verb>moved|pushed|postponed|rescheduled|changed|delayed|bumped)\s+(?:my|our|the)\s+"
    rf"(?P<thing2>(?:[\w'-]+\s+){{0,2}}?{_EN_EVENTS})\s+)"
    r"(?(verb)|(?:moved|pushed|postponed|rescheduled|changed|delayed|bumped|brought forward|moved up)\s+)"
    r"(?:back\s+|up\s+|forward\s+)?(?:to|until|till)\s+(?P<rest>.+)$",
    re.I,
)
# "We launch on March 15th", "We're releasing next Friday": the day of the user's own launch
_EN_WE_EVENT_RE = re.compile(
    r"^we(?:'re|\s+are)?\s+(?P<verb>launch(?:ing)?|releas(?:e|ing)|go(?:ing)?\s+live|open(?:ing)?|mov(?:e|ing))\s+"
    r"(?:(?P<part>in|out)\s+(?=(?:on|in|next|this|tomorrow)\b))?"  # "moving in on the 15th": the move-in
    r"(?=(?:on|in|next|this|tomorrow)\b)",
    re.I,
)
_EN_VERB_EVENT = {"launch": "launch", "releas": "release", "go": "launch", "open": "opening", "mov": "move"}
_EN_DEADLINE_RE = re.compile(
    r"^(?:the\s+|my\s+|our\s+)?(?:deadline|due\s+date)\s+(?:for|of|on)\s+(?P<act>.+?)\s+is\s+(?P<rest>.+)$"
    r"|^(?:the\s+|my\s+|our\s+)?(?P<act2>.+?)\s+(?:is|are)\s+due\s+(?P<rest2>.+)$",
    re.I,
)
_DET_RE = re.compile(r"^(?:the|my|our)\s+", re.I)
_ONBY_RE = re.compile(r"^(?:on|by)\s+", re.I)
_NEGATED_RE = re.compile(r"n't\b|\b(?:not|never|no longer)\b", re.I)
_EN_HABIT_RE = re.compile(rf"^i\s+{EN_ADV}(?P<verb>[a-z]+)\b", re.I)
_HABIT_BAD_VERBS = frozenset("am feel think was were get seem hope wish want like love hate know guess".split())
_ZH_MODAL_RE = re.compile(r"一定要|必须|需要|得要|应该|记得|要|得")
# done: 了, 过, 完, or a verb with its result ("今天在图书馆看到一本书": saw it, nothing to do)
_ZH_DONE_RE = re.compile(r"了(?!解)|过(?!敏|年|节)|完|(?:看|听|收|找|遇|碰|拿|得|买|见|学|吃|意识)到")
_ZH_DAY_RE = re.compile(r"周|星期|礼拜|明天|后天|今天|今晚|明晚|号|日")  # a day, not a month ("下个月去日本": no day)
_ZH_PLANNED_RE = re.compile(r"飞|去|见|看|回|约|参加|出差|面试|开会|搬家|体检|复查|吃饭|聚餐|接|送|报到|出发|考")
_ZH_TASK_SUBJECT_RE = re.compile(  # (not "我老婆明天要考试": someone else's day)
    rf"^(?:(?:现在|目前|平时|最近)?(?:我(?!们)(?!(?:家|的)?(?:{ZH_OWNED_RE}))|每)|周|星期|礼拜|今|明|后天|下|这|本|月|年底|\d|[一二三四五六七八九十]+(?:天|个|月)"
    r"|上午|早上|中午|傍晚|晚上)"
)
_ZH_DEADLINE_WORD_RE = re.compile(r"的?(?:截止日期|截止时间|截止|deadline|ddl|DDL)(?:是|在|为|到)?")
_DIGIT_RE = re.compile(r"[0-9]")
_EN_DATE_HINTS = ("day", "tonight", "tomorrow", "week", "month", "year", "eod", "eow", "jan", "feb", "mar",
                  "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_EN_REC_HINTS = ("every", "each", "daily", "nightly", "weekly", "monthly", "yearly", "annually", "days")
_ZH_DATE_HINT_RE = re.compile(r"[周星礼天今明月年号日点0-9]")
_DANGLING_PREP_RE = re.compile(r"\s+(?:by|before|on|until|till|due|at)\s*$", re.I)
_ZH_ACT_LEAD_RE = re.compile(r"^(?:我的?|都|就|还|也|会|要|得|在|上午|早上|早晨|中午|下午|傍晚|晚上|，|,)+")
_ZH_USUALLY_RE = re.compile(r"平时|平常|一般|通常|经常|总是|常常|往往|习惯")
_ZH_SPAN_TAIL_RE = re.compile(r"(?:之前|以前|前|之内|以内|内|以后|之后|后)")


# a routine whose act names no activity ("I go every Tuesday", "每天练一个小时"): the clause
# before says what it is (engram.extract.rules joins them)
BARE_ROUTINE = "recurring activity, of the clause before"
_EN_BARE_ACT_RE = re.compile(
    r"(?:go|goes|going|do it|do that|practi[cs]e|train|attend|go there|head there)"
    r"(?:\s+(?:there|(?:in the\s+)?(?:evening|morning|night|afternoon)s?|for (?:an|one|two|\w+) hours?))?",
    re.IGNORECASE,
)
_ZH_BARE_ACT_RE = re.compile(
    r"(?:(?:和|跟|与)[^，,]{1,4}?(?:一起)?)?(?:去|来|练|练习|上课|训练|去上课|打|玩|踢)"
    r"(?:[0-9一二两三四五六七八九十半]+个?(?:小时|钟头|分钟|次))?"
)


# "…planning my wedding. It's on June 14th next year.": the day of the user's event just named
_EN_MY_EVENT_NAMED_RE = re.compile(rf"\b(?:my|i\s+have\s+an?|i've\s+got\s+an?|i\s+got\s+an?)\s+(?P<thing>(?:[\w'-]+\s+){{0,3}}?{_EN_EVENTS})\b", re.I)
_EN_ITS_DAY_RE = re.compile(r"^(?:and\s+)?it(?:'s|\s+is|'ll\s+be|\s+will\s+be)\s+(?P<day>(?:on|in|next|this|tomorrow)\b.+)$",
                            re.I)


def its_day(sentence: str, before: str | None) -> str:
    """"It's on June 14th next year." after a sentence that named the user's wedding (`before`),
    as "My wedding is on June 14th next year."; any other sentence as it is."""
    if before is None or sentence[:2].lower() not in ("it", "an"):
        return sentence
    m = _EN_ITS_DAY_RE.match(sentence.strip())
    named = [e.group("thing") for e in _EN_MY_EVENT_NAMED_RE.finditer(before)]
    if m is None or not named or not EN_DATE_RE.search(m.group("day")):
        return sentence
    return f"My {named[-1].lower()} is {m.group('day')}"


def task(s: str, ctx: Ctx) -> list[Candidate] | None:
    """A task with its due date (UTC) and recurrence rule, or None."""
    return _zh_task(s, ctx) if ctx.lang == "zh" else _en_task(s, ctx)



def _en_task(s: str, ctx: Ctx) -> list[Candidate] | None:
    today = ctx.now.date()
    if ctx.memo and ctx.memo.get("other"):  # "My mom lives in Pune and I call her every Sunday"
        s = en_objects_named(s, ctx.memo["other"], "my")
    low = s.lower()
    dm = EN_DATE_RE.search(s) if _DIGIT_RE.search(low) or any(h in low for h in _EN_DATE_HINTS) else None
    if dm and dm.start() == 0:  # "By Friday, I need to …": put the date last
        s = s[dm.end():].lstrip(" ,") + " " + lcfirst(dm.group().strip())
        dm = EN_DATE_RE.search(s)
    rm = find_recurrence(EN_REC_RE, s) if any(h in low for h in _EN_REC_HINTS) else None
    if rm and rm.start() == 0:
        s = s[rm.end():].lstrip(" ,") + " " + lcfirst(rm.group().strip())
        rm = find_recurrence(EN_REC_RE, s)
        dm = EN_DATE_RE.search(s) if dm else None
    if not dm and not rm:
        return None
    due = t = None
    if dm:
        d, t = resolve_en(dm, today)
        due = due_datetime(d, t, ctx.now, dm)
        if due is None:
            dm = None
    if rm and dm and overlaps(dm, rm):
        dm = None  # "every Monday" is a recurrence, not a date
        due = t = None
    rec = None
    if rm:
        rec, due = resolve_recurrence(rm, t, ctx.now)
    span = rm or dm
    if span is None:
        return None
    body: str | None = None  # the statement, when the clause's own words would not do
    m = _EN_MODAL_RE.match(s)
    if m:
        act = _task_act(m.group("rest"), m.start("rest"), span)
        reason = "task with a deadline" if dm else "recurring task"
    elif (m := _EN_APPT_RE.match(s) or (_EN_MY_EVENT_RE.match(s) if dm else None)) is not None:
        act = m.group("thing")
        reason = "appointment"
        if s.lower().startswith("our"):  # "Our launch is on …": the user's own, said without "I"
            body = f"User's {act.lower()} is {m.group('rest').rstrip('.!')}"
    elif dm and (m := _EN_MOVED_RE.match(s)) is not None:
        act = m.group("thing") or m.group("thing2")
        body = f"User's {act.lower()} moved to {m.group('rest').rstrip('.!')}"
        return [candidate(ctx, Kind.TASK, as_sentence(body + date_suffix(due, t, False)), "task:" + slugify(act, limit=5),
                          None, "appointment moved", due_at=due, entities=[])]
    elif dm and (m := _EN_WE_EVENT_RE.match(s)) is not None:
        act = next(noun for stem, noun in _EN_VERB_EVENT.items() if m.group("verb").lower().startswith(stem))
        act += f"-{m.group('part').lower()}" if m.group("part") else ""
        reason = "appointment"
        body = f"User's {act} is {s[m.end():].rstrip('.!')}"
    elif (m := _EN_DEADLINE_RE.match(s)) is not None:
        act = m.group("act") or m.group("act2")
        if pronoun_led(act) or not dm:
            return None
        due_phrase = (m.group("rest") or m.group("rest2")).strip()
        if m.group("act"):
            content = f"User's deadline for {act} is {due_phrase}"
        else:
            content = f"User's {_DET_RE.sub('', act)} is due {_ONBY_RE.sub('', due_phrase)}"
        content = as_sentence(content + date_suffix(due, t, False))
        return [candidate(ctx, Kind.TASK, content, "task:" + slugify(act), None, "deadline stated",
                          due_at=due, recurrence=rec, entities=entities_of(act))]
    elif dm and due is not None and due > ctx.now and (m := _EN_PLANNED_RE.match(s)) is not None:
        # "I'm meeting a recruiter on Friday", "I'm flying to Denver next Tuesday": what is set for that day
        act = _task_act(s[m.start("verb"):], m.start("verb"), span)
        reason = "appointment"
    elif rm and not _NEGATED_RE.search(s) and (m := _EN_HABIT_RE.match(s)) is not None \
            and m.group("verb").lower() not in _HABIT_BAD_VERBS:
        act = _task_act(s[m.start("verb"):], m.start("verb"), span)
        reason = "recurring activity"
    else:
        return None
    act = act.strip(" ,")
    if not act or CONTEXT_WORDS.intersection(act.lower().split()) or pronoun_led(act):
        return None
    body = body or en_third(s).rstrip(".")
    suffix = "" if rec else date_suffix(due, t, False)
    content = as_sentence(body + ("" if suffix.strip(" ()") in body else suffix))
    key, value = "task:" + slugify(act, limit=5), None
    if reason == "recurring activity" and rec:
        activity = en_activity(act)
        key, value = habit_key(activity) or key, _schedule(rec, t)
        if _EN_BARE_ACT_RE.fullmatch(activity):
            key, reason = None, BARE_ROUTINE
    return [candidate(ctx, Kind.TASK, content, key, value, reason, due_at=due, recurrence=rec, entities=[])]


def _schedule(rec: str, t: time | None) -> str:
    """A routine's slot value: "weekly:MON", "daily 06:00"."""
    return f"{rec} {t:%H:%M}" if t else rec


def _task_act(rest: str, offset: int, span: re.Match[str]) -> str:
    """The action phrase without its date: "submit the report by Friday" → "submit the report"."""
    a, b = span.start() - offset, span.end() - offset
    if 0 <= a <= len(rest):
        rest = rest[:max(a, 0)] + rest[max(b, 0):]
    more = EN_DATE_RE.search(rest) if _DIGIT_RE.search(rest) or "tomorrow" in rest.lower() else None
    if more:  # "be at the airport by 6am tomorrow": both parts are the date
        rest = rest[: more.start()] + rest[more.end():]
    rest = _DANGLING_PREP_RE.sub("", rest.strip())
    return cut_clause(trim_fillers(rest)) or rest


_ZH_INCOME_RE = re.compile(r"工资|月薪|年薪|收入|薪水")


def _zh_task(s: str, ctx: Ctx) -> list[Candidate] | None:
    today = ctx.now.date()
    deadline = _ZH_DEADLINE_WORD_RE.search(s)
    if not _ZH_TASK_SUBJECT_RE.match(s) and not deadline:
        return None
    if not _ZH_DATE_HINT_RE.search(s) and "每" not in s:
        return None
    rm = find_recurrence(ZH_REC_RE, s) if "每" in s or "工作日" in s or "天天" in s else None
    dm = ZH_DATE_RE.search(s)
    if dm and dm.group("thh") and _ZH_USUALLY_RE.search(s):
        return None  # "我平时早上六点跑步": a routine (engram.extract.habits), not today's task
    if rm and dm and overlaps(dm, rm):
        dm = None  # "每周五" is a recurrence, not a date
    if not rm and not dm:
        return None
    due = t = None
    if dm:
        d, t = resolve_zh(dm, today)
        due = due_datetime(d, t, ctx.now, dm)
    rec = tm = None
    if rm:
        if t is None:  # "每天早上六点": the time of a routine, on its own
            tm = next((x for x in ZH_TIME_RE.finditer(s) if not overlaps(x, rm)), None)
            t = zh_time(tm) if tm else None
        rec, due = resolve_recurrence(rm, t, ctx.now)
    modal = _ZH_MODAL_RE.search(s)
    if rm and not modal and ((not dm and _ZH_INCOME_RE.search(s)) or "才" in s):
        return None  # "我每个月工资一万二", "每天晚上两三点才睡着": how things are (a fact), nothing to do each time
    rest = s
    for span in sorted((x for x in (dm, rm, tm) if x), key=lambda x: -x.start()):
        tail = _ZH_SPAN_TAIL_RE.match(rest[span.end():])
        end = span.end() + (tail.end() if tail else 0)
        start = span.start() - (1 if span.start() > 0 and rest[span.start() - 1] == "在" else 0)
        rest = rest[:start] + rest[end:]
    event = (_ZH_MY_EVENT_RE.match(s) or _ZH_DATED_EVENT_RE.match(ZH_PARTICLES_RE.sub("", rest).strip("，, ")))\
        if dm else None
    planned = dm is not None and due is not None and due > ctx.now and _ZH_DAY_RE.search(dm.group()) is not None \
        and _ZH_PLANNED_RE.search(rest) is not None and "我们" not in s and not _ZH_USUALLY_RE.search(s) \
        and not _ZH_DONE_RE.search(rest)
    # ("我下周二飞丹佛": set for that day; "周末一般去爬山" is a habit; "今天面试完了" is done)
    # (with 我们 the statement reads who "we" are: "…，周三晚上我们一起吃饭")
    if not (modal or deadline or rm or event or planned or ctx.relaxed or (dm and (dm.group("hh") or dm.group("thh")))):
        return None
    if deadline:
        act = _ZH_DEADLINE_WORD_RE.sub("", rest)
    elif event:
        act = event.group("thing")
    else:
        mm = _ZH_MODAL_RE.search(rest)
        act = rest[mm.end():] if mm else rest
    act = _ZH_ACT_LEAD_RE.sub("", act)
    act = ZH_PARTICLES_RE.sub("", act[:-1] if act[-1:] in ("了", "的") else act).strip(" ,，")
    if not ZH_TIME_RE.sub("", act).strip("和跟与及、，, "):
        return None  # "每天早上八点和晚上八点": times, and no act
    if act[:1] in "和及与、" and (more := ZH_TIME_RE.match(act, 1)) is not None:
        act = act[more.end():]  # "每天早上八点和晚上八点吃药": the second time is the act's too
    if (len(act) < 2 and not (rec and _ZH_BARE_ACT_RE.fullmatch(act))) or ZH_OBJ_BAD_RE.match(act) \
            or re.fullmatch(ZH_BARE_VERB, act):
        return None  # (a bare "去" stays for the clause before it to name: `BARE_ROUTINE`; "我明天试试看": what, unsaid)
    body = zh_third(s, subject=not deadline) if s.startswith("我") or not deadline else "用户的" + zh_third(s)
    if s.startswith("我") and not s.startswith(("我的", "我们的")):
        body = zh_pronouns_named(body, ctx.memo.get("other") if ctx.memo else None)  # "…我每天去医院看她": 妈妈
        if body is None:
            return None
    content = body + ("" if rec else date_suffix(due, t, True))
    key, value = "task:" + slugify(act, consume=True), None
    reason = "带截止日期的任务" if dm else "周期性任务"
    if rec and not (modal or deadline or ctx.relaxed):  # a routine
        activity = zh_activity(act)
        key, value = habit_key(activity) or key, _schedule(rec, t)
        if _ZH_BARE_ACT_RE.fullmatch(activity):
            key, reason = None, BARE_ROUTINE
    return [candidate(ctx, Kind.TASK, content, key, value, reason, due_at=due, recurrence=rec)]
