"""Cessations: what the user no longer is, has or does ("I no longer live in Berlin", "我不再住在北京了").

A cessation is read as the statement it ends, then negated: "I don't work at Google
anymore" → the fact rules read "I work at Google" (fact:employer = google) → the same
slot and value with polarity -1, "User no longer works at Google." Reconciliation (see
`engram.reconcile`) then ends exactly the memory that held that value, and leaves a
slot that holds another value alone. What can end:

    fact:location | fact:employer | fact:work_location | fact:occupation | fact:school
    fact:diet | fact:allergy_<x> | fact:has_<thing> | fact:learning_<x>
    preference:<object>     I don't like coffee anymore (polarity -1, value "dislike", as before)
    habit:<activity>        I stopped drinking coffee, 我戒咖啡了: the routine, whatever its schedule
    fact:employer           I quit my job, 我辞职了: whichever employer is remembered (no value)

Only a stated change counts ("no longer", "… anymore", "stopped", "quit", "left",
"moved out of", "不再", "已经不…", "不…了", "戒", "离职"); a plain negation ("I'm not
a doctor", "我不是学生") is no memory. A clause that states a change is never read as
the statement it ends: when no slot is recognised it yields nothing ("I no longer
know what to do").
"""

from __future__ import annotations

import re

from engram.extract.candidate import Ctx, candidate
from engram.extract.facts_en import en_fact
from engram.extract.facts_zh import is_place, zh_fact
from engram.extract.filters import ZH_TRANSIENT_RE
from engram.extract.habits import EN_ACTIVITY_VERBS, base_verb, en_activity, habit_key
from engram.extract.keys import WS_RE, slot_value
from engram.extract.phrases import (
    CONTEXT_WORDS,
    ZH_OBJ_BAD_RE,
    cut_clause,
    pronoun_led,
    trim_fillers,
    trim_time,
    zh_object,
)
from engram.extract.preferences import preference
from engram.extract.rewrite import as_sentence, en_rest, en_third, third_verb, zh_third
from engram.extract.statements import en_valid_from
from engram.models import Candidate, Kind, as_utc
from engram.when import find_range

# a clause states a change only if it has one of these words (a set lookup: cheaper than a regex search)
_EN_GATE_WORDS = frozenset("longer anymore more stopped quit quitted gave given left moved resigned laid fired let switched".split())
_ZH_GATE_RE = re.compile(r"不再|不.*[了啦]$|已经不|已不|早就不|早已不|再也不|戒|离职|辞职|被裁|被辞退|被开除|搬离|搬出|改[喝吃用]|换成")

_EN_SOON = r"(?:(?:just|finally|recently|already|actually|completely|officially|totally|eventually)\s+)*"
_EN_NO_LONGER_RE = re.compile(r"^i(?P<be>'m|\s+am)?\s+(?:(?:just|really|simply)\s+)?no\s+longer\s+(?P<rest>.+)$", re.I)
_EN_NOT_ANYMORE_RE = re.compile(
    r"^i(?:\s+(?:don't|do\s+not|dont)|(?P<be>'m|\s+am)\s+not)\s+(?P<rest>.+?)\s*,?\s+(?:anymore|any\s+more)"
    r"(?:\s+(?:now|either|though))?$",
    re.I,
)
_EN_STOP_RE = re.compile(
    rf"^i(?P<have>\s+have|'ve)?\s+{_EN_SOON}(?P<verb>stopped|quit|quitted|gave\s+up|given\s+up)\s+(?:on\s+)?(?P<rest>.+)$",
    re.I,
)
_EN_LEFT_RE = re.compile(
    rf"^i(?P<have>\s+have|'ve)?\s+{_EN_SOON}(?P<verb>left|resigned|(?:was|got|been)\s+(?:laid\s+off|fired|let\s+go))"
    r"(?:\s+(?:from|by)(?=\s))?(?:\s+(?P<rest>.+))?$",
    re.I,
)
_EN_MOVED_OUT_RE = re.compile(
    rf"^i(?:\s+have|'ve)?\s+{_EN_SOON}moved\s+(?:out\s+of|away\s+from)\s+(?P<place>.+?)"
    r"(?:\s+(?:and\s+)?(?:to|into)\s+(?P<to>.+))?$",
    re.I,
)
_EN_MY_JOB_RE = re.compile(r"^my\s+(?:(?:old|last|previous|day|full-time|part-time)\s+)?job(?:\s+(?:at|with)\s+(?P<org>.+))?$", re.I)
_EN_ORG_RE = re.compile(r"^[A-Z0-9][\w&.'-]*(?:\s+(?:[A-Z0-9][\w&.'-]*|&|of|and))*$")
_EN_ORG_CUT_RE = re.compile(r"\s+(?:to|so|after|when|in\s+order|because|since)\b.*$", re.I)
_EN_RECENT_RE = re.compile(r"\b(?:yesterday|today|tonight|this\s+(?:morning|afternoon|evening)|last\s+night|earlier)\b", re.I)
# things one gives up or quits without a verb: "I gave up coffee", "I quit sugar"
_EN_CONSUMABLES = frozenset(
    """coffee tea caffeine alcohol booze beer wine liquor soda sugar meat dairy gluten carbs bread chocolate
    cigarettes cigarette pork beef chicken fish eggs cheese milk""".split()
)
# activities that need no object: "I don't smoke anymore"
_EN_ALONE = frozenset(
    """smoke vape drink run jog swim cycle bike drive cook bake dance sing paint draw write read exercise meditate
    work game ski surf skate hike climb fish knit sew garden""".split()
)
_EN_STATE_VERBS = {"live": "I live", "work": "I work", "like": "I like", "love": "I love", "enjoy": "I enjoy",
                   "learn": "I'm learning", "study": "I'm studying", "be": "I'm", "have": "I have",
                   "own": "I own"}
# the statements a cessation can end (slot prefixes)
_NEGATABLE = ("fact:location", "fact:employer", "fact:work_location", "fact:occupation", "fact:diet",
              "fact:school", "fact:allergy_", "fact:has_", "fact:learning_", "preference:")
_NOT_NEGATABLE = ("preference:favourite_", "preference:nickname", "preference:answer_language")

_ZH_ADV = r"(?:现在|目前|最近|已经|早就|早已|也|都|就|真的|终于|再也|去年|今年|上个月|上周|刚|刚刚)*"
_ZH_DROPPED_RE = re.compile(r"^(?:最近|现在|已经|早就|再也|从此|以后)*(?:不再|已不|不|戒|改[喝吃用]|换成)")
_ZH_NEG_RE = re.compile(rf"^我(?P<adv>{_ZH_ADV})(?P<neg>不再|已不|不)(?P<rest>[^，,]+?)(?P<le>了|啦)?$")
_ZH_QUIT_RE = re.compile(rf"^我{_ZH_ADV}戒(?![指备严律心])(?:掉)?(?:了)?(?P<obj>[^，,不没]{{1,6}}?)(?:了|啦)?$")
_ZH_JOB_RE = re.compile(
    rf"^我{_ZH_ADV}(?:从(?P<org>[^，,]{{1,20}}?))?(?P<verb>离职|辞职|被裁员|被裁|被辞退|被开除)(?:了|啦)?$"
)
_ZH_MOVED_OUT_RE = re.compile(rf"^我{_ZH_ADV}(?:搬离|搬出)了?(?P<place>[^，,]{{2,12}}?)(?:了|啦)?$")
_ZH_ACTIVITY_RE = re.compile(r"^(?:吃|喝|抽|玩|打|用|看|去|练|跑|做|上|参加|踢|骑|开|弹|画|唱|跳|拉|吹|游)")
_ZH_LEARN_RE = re.compile(r"^学(?:习)?(?![校院生期年堂费历位者会])")
_ZH_QUIT_CANON = {"烟": "抽烟", "酒": "喝酒", "糖": "吃糖"}
_ZH_LEAD_ADV_RE = re.compile(r"^(?:现在|目前|一直|也|还|都|已经)+")


def change(s: str, ctx: Ctx) -> list[Candidate] | None:
    """A stated cessation: the negated statement ([] when no slot is recognised), or None.
    Once a job was left, the message's "I'm at Stripe now" / "现在在字节跳动" is the new one."""
    if ctx.memo and ctx.memo.get("left_job") and (now_at := _now_at(s, ctx)) is not None:
        return now_at
    if ctx.lang == "zh":
        if ctx.memo and (ctx.memo.get("opens") or ctx.memo.get("last") == "用户") and _ZH_DROPPED_RE.match(s):
            s = "我" + s  # "最近不打羽毛球了", "我以前喝拿铁，改喝美式了": Chinese leaves out its 我
        found = _zh_change(s, ctx) if _ZH_GATE_RE.search(s) else None
    else:
        found = None if _EN_GATE_WORDS.isdisjoint(s.lower().split()) else _en_change(s, ctx)
    if found and ctx.memo is not None and any(c.key == "fact:employer" and c.polarity < 0 for c in found):
        ctx.memo["left_job"] = True
    return _since_then(found, s, ctx) if found else found


def _since_then(found: list[Candidate], s: str, ctx: Ctx) -> list[Candidate]:
    """A cessation said with when it happened ("I quit smoking three years ago"): it holds since
    then, not since it was said, and a time said relative to then goes from the statement (as
    the statements' rules do: `en_valid_from`), which would otherwise say it wrongly a year on."""
    when = find_range(s, ctx.now)
    if when is None or when.start >= as_utc(ctx.now):
        return found
    for c in found:
        c.valid_from = when.start
        if ctx.lang == "en":
            c.content = as_sentence(en_valid_from(c.content.rstrip("."), ctx)[0])
    return found


def _now_at(s: str, ctx: Ctx) -> list[Candidate] | None:
    """The employer a clause names after a job was left, or None."""
    if ctx.lang == "zh":
        m = _ZH_NOW_AT_RE.match(s)
        return (zh_fact(f"我在{m.group('org')}工作", ctx) or []) if m else None
    m = _EN_NOW_AT_RE.match(s)
    return (en_fact("I work at " + m.group("org"), ctx) or []) if m else None


# --------------------------------------------------------------------------- negating a statement
def _negatable(c: Candidate) -> bool:
    key = c.key or ""
    if not key.startswith(_NEGATABLE) or key.startswith(_NOT_NEGATABLE) or c.polarity < 0:
        return False
    return not c.content.startswith(("User moved", "User relocated", "用户搬"))


def _no_longer_en(content: str) -> str:
    """"User lives in Berlin." → "User no longer lives in Berlin."; "User is …" → "User is no longer …"."""
    rest = content.removeprefix("User ")
    return "User is no longer " + rest[3:] if rest.startswith("is ") else "User no longer " + rest


def _no_longer_zh(content: str) -> str:
    """"用户住在北京" → "用户不再住在北京"; "用户在腾讯工作" → "用户已不在腾讯工作"; "用户在学日语" → "用户不再学日语"."""
    body = _ZH_LEAD_ADV_RE.sub("", content.removeprefix("用户"))
    if body.startswith(("在学", "正在学")):
        return "用户不再" + body[body.index("学"):]
    if body.startswith("在"):
        return "用户已不在" + body[1:]
    return "用户不再" + body


def _negated(found: list[Candidate] | None, ctx: Ctx) -> list[Candidate]:
    """The statements of `found` a cessation can end, negated."""
    out = []
    for c in found or ():
        if not _negatable(c):
            continue
        zh = ctx.lang == "zh"
        out.append(c.model_copy(update={
            "polarity": -1,
            "value": "dislike" if c.kind is Kind.PREFERENCE else c.value,
            "content": _no_longer_zh(c.content) if zh else _no_longer_en(c.content),
            "reason": ("不再：" if zh else "no longer: ") + c.reason,
            "valid_from": as_utc(ctx.now),
        }))
    return out


def _ended(positive: str, ctx: Ctx) -> list[Candidate]:
    """The statement `positive` ("I work at Google") read by the fact and preference rules, negated."""
    if ctx.lang == "zh":
        found = zh_fact(positive, ctx) or preference(positive, ctx)
    else:
        found = en_fact(positive, ctx) or preference(positive, ctx)
    return _negated(found, ctx)


def _stopped(ctx: Ctx, content: str, activity: str, reason: str) -> list[Candidate]:
    """A routine ended: habit:<activity>, with no value (whatever its schedule was)."""
    key = habit_key(activity)
    if key is None:
        return []
    return [candidate(ctx, Kind.FACT, content, key, None, reason, polarity=-1, valid_from=ctx.now)]


def _left_job(ctx: Ctx, content: str, org: str | None) -> list[Candidate]:
    """An employer ended: fact:employer = org, or (no org: "I quit my job") whichever is remembered."""
    return [candidate(ctx, Kind.FACT, content, "fact:employer", slot_value(org) if org else None,
                      "left a job" if ctx.lang == "en" else "离职", polarity=-1,
                      entities=[org] if org else [], valid_from=ctx.now)]


# --------------------------------------------------------------------------- English
def _en_change(s: str, ctx: Ctx) -> list[Candidate] | None:
    m = _EN_NO_LONGER_RE.match(s) or _EN_NOT_ANYMORE_RE.match(s)
    if m:
        rest = trim_fillers(m.group("rest")).strip()
        if m.group("be"):
            return _ended("I'm " + rest, ctx)
        found = _ended("I " + rest, ctx)
        if found:
            return found
        verb, _, obj = rest.partition(" ")
        if verb.lower() not in EN_ACTIVITY_VERBS or (obj and _context_bound(obj)) \
                or not (obj or verb.lower() in _EN_ALONE):
            return []
        return _stopped(ctx, as_sentence("User no longer " + third_verb(verb) + (" " + en_rest(obj) if obj else "")),
                        en_activity(rest), "no longer does it")
    m = _EN_SWITCHED_RE.match(s)
    if m:  # "I've switched from lattes to americanos": the new one liked, the old one (when said) no longer
        return _switched(s, m.group("new"), m.group("old"), ctx)
    m = _EN_STOP_RE.match(s)
    if m:
        stopped = _en_stop(s, m, ctx)
        if stopped and stopped[0].key == "fact:employer":  # (the job joined says why: "… to join Stripe")
            joined = _en_then_joined(s, ctx)
            return _with_why(stopped + joined, [] if joined else _en_left_to(s, m, ctx))
        return stopped
    m = _EN_LEFT_RE.match(s)
    if m:  # ("I left to travel" may be a place left; "I resigned to …" is a job)
        left, joined = _en_left(s, m, ctx), _en_then_joined(s, ctx)
        why = _en_left_to(s, m, ctx) if not joined and (left or m.group("verb").lower() != "left") else []
        return _with_why(left + joined, why)
    m = _EN_MOVED_OUT_RE.match(s)
    if m:
        if m.group("to"):
            return en_fact("I moved to " + m.group("to"), ctx) or []
        place = trim_time(trim_fillers(cut_clause(m.group("place")))).strip()
        return _ended("I live in " + place, ctx) if _EN_ORG_RE.match(place) else []
    return None


_EN_SWITCHED_RE = re.compile(
    rf"^i(?:'ve|\s+have)?\s+{_EN_SOON}switched\s+(?:over\s+)?(?:from\s+(?P<old>[^,]{{1,30}}?)\s+)?to\s+"
    r"(?P<new>(?!a\s+new\b|the\s+new\b)[^,]{1,30}?)(?:\s+(?:now|instead|these\s+days))?$",
    re.I,
)
_ZH_SWITCHED_RE = re.compile(r"^我?(?:现在|最近|已经)*(?:改|换成)(?P<verb>[喝吃用])了?(?P<new>[^，,不]{1,8}?)了?$")


def _switched(s: str, new: str, old: str | None, ctx: Ctx) -> list[Candidate]:
    """"I switched from lattes to americanos" / "我现在改喝美式了": a preference for the new one
    (said as said), and the old one, when named, no longer."""
    liked = preference(f"我喜欢{new}" if ctx.lang == "zh" else f"I like {new}", ctx)
    if not liked or liked[0].key is None or len(liked) != 1:
        return []
    liked[0].content = zh_third(s) if ctx.lang == "zh" else as_sentence(en_third(s))
    return (_ended(f"I like {old}", ctx) if old else []) + liked


# after a job was left: where the user is now ("I'm at Stripe now", "and joined Stripe")
_EN_NOW_AT_RE = re.compile(
    r"^(?i:i(?:'m|\s+am)\s+(?:now\s+)?(?:at|with|working\s+(?:at|for)))\s+"
    r"(?P<org>[A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*){0,3})(?i:\s+now)?$"
)
_ZH_NOW_AT_RE = re.compile(r"^(?!.*(?:上班|工作|实习|任职|上学|读书))(?:我)?(?:现在|目前|如今)(?:在|去了|跳到了?)(?P<org>[^，,。\s]{2,12}?)(?:了|啦)?$")
_EN_THEN_JOINED_RE = re.compile(
    r"\b(?i:(?:and|to)\s+(?:then\s+|now\s+|just\s+)?(?:joined|join|started\s+at|(?:now\s+)?work\s+at))\s+"
    r"(?P<org>[A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*){0,3})"
)


def _en_then_joined(s: str, ctx: Ctx) -> list[Candidate]:
    """The new employer said with the old one left: "I left Google and joined Stripe"."""
    m = _EN_THEN_JOINED_RE.search(s)
    return (en_fact("I work at " + m.group("org"), ctx) or []) if m else []


# what the user left a job for ("… to start my own company", "… to join a startup")
_EN_LEFT_TO_RE = re.compile(
    r"\s+to\s+(?:(?:finally|go\s+and)\s+)?(?:start|join|launch|open|found|pursue|focus\s+on|go\s+back\s+to|travel|study"
    r"|take\s+care\s+of|be\s+with|raise|work\s+(?:on|for|at))\b[^,;.!?]{2,60}", re.I)


def _en_left_to(s: str, m: re.Match[str], ctx: Ctx) -> list[Candidate]:
    """Why the user left, when said: "I quit my job at Google to start my own company" is the
    event, beside "User no longer works at Google"."""
    to = _EN_LEFT_TO_RE.search(s, m.end("verb"))
    if to is None:
        return []
    return [candidate(ctx, Kind.EVENT, _said(s[: to.end()].rstrip(), m), None, None, "why the user left a job")]


def _with_why(found: list[Candidate], why: list[Candidate]) -> list[Candidate]:
    """`found` and why the user left, which stands for a bare "User left Microsoft." it says again."""
    said = [w.content.rstrip(".") for w in why]
    return [c for c in found if not any(w.startswith(c.content.rstrip(".") + " ") for w in said)] + why


def _context_bound(phrase: str) -> bool:
    return pronoun_led(phrase) or bool(CONTEXT_WORDS.intersection(phrase.lower().split()))


def _said(s: str, m: re.Match[str]) -> str:
    """"User quit their job." from "I quit my job" (the user's verb, "has" for "I've")."""
    return as_sentence(("User has " if m.group("have") else "User ") + en_rest(s[m.start("verb"):]))


def _en_stop(s: str, m: re.Match[str], ctx: Ctx) -> list[Candidate]:
    """"I stopped drinking coffee", "I quit smoking", "I quit my job at Google", "I gave up coffee"."""
    rest = trim_time(trim_fillers(cut_clause(m.group("rest")))).strip()
    first, _, more = rest.partition(" ")
    low = first.lower()
    if low.endswith("ing") and low not in _EN_CONSUMABLES:
        base = base_verb(low)
        if base in _EN_STATE_VERBS:
            verb = _EN_STATE_VERBS[base]
            return _ended(verb + (" " + more if more else ""), ctx)
        if base not in EN_ACTIVITY_VERBS or _context_bound(more or "x"):
            return []
        return _stopped(ctx, _said(s, m), en_activity(rest), "stopped doing it")
    job = _EN_MY_JOB_RE.match(rest)
    if job:
        org = job.group("org") and _EN_ORG_CUT_RE.sub("", job.group("org")).strip()
        return _ended("I work at " + org, ctx) if org else _left_job(ctx, _said(s, m), None)
    org = _EN_ORG_CUT_RE.sub("", rest)
    if m.group("verb").lower().startswith("quit") and _EN_ORG_RE.match(org) and len(org.split()) <= 4 \
            and not _EN_RECENT_RE.search(s):  # "I quit Google": a job, or an app; said as said
        return _left_job(ctx, as_sentence(("User has quit " if m.group("have") else "User quit ") + org), org)
    if low in _EN_CONSUMABLES and len(rest.split()) <= 3:
        return _stopped(ctx, _said(s, m), rest, "gave it up")
    return []


def _en_left(s: str, m: re.Match[str], ctx: Ctx) -> list[Candidate]:
    """"I left Google", "I left my job at Google", "I resigned", "I was laid off from Acme"."""
    verb = WS_RE.sub(" ", m.group("verb").lower())
    raw = m.group("rest")
    if raw is None:
        return [] if verb == "left" else _left_job(ctx, _said(s, m), None)
    rest = _EN_ORG_CUT_RE.sub("", trim_time(trim_fillers(cut_clause(raw)))).strip()
    job = _EN_MY_JOB_RE.match(rest)
    if job:
        org = job.group("org") and _EN_ORG_CUT_RE.sub("", job.group("org")).strip()
        return _ended("I work at " + org, ctx) if org else _left_job(ctx, _said(s, m), None)
    if not rest or not _EN_ORG_RE.match(rest) or len(rest.split()) > 4 or _EN_RECENT_RE.search(raw):
        return []
    if verb == "left":  # "I left Google" (or "I left Paris"): said as said, about the employer slot
        return _left_job(ctx, as_sentence(("User has left " if m.group("have") else "User left ") + rest), rest)
    return _ended("I work at " + rest, ctx)


# --------------------------------------------------------------------------- Chinese
def _zh_change(s: str, ctx: Ctx) -> list[Candidate] | None:
    m = _ZH_SWITCHED_RE.match(s)
    if m:
        return _switched(s, m.group("verb") + m.group("new"), None, ctx)
    m = _ZH_NEG_RE.match(s)
    if m:
        adv, neg, rest = m.group("adv"), m.group("neg"), m.group("rest")
        if neg == "不" and not (m.group("le") or any(w in adv for w in ("已经", "早就", "早已", "再也"))):
            return None  # a plain negation ("我不住在北京") is not a change
        if _ZH_LEARN_RE.match(rest):
            found = _ended("我在" + rest, ctx)
        else:
            found = _ended("我" + rest, ctx)
        if found:
            return found
        if not _ZH_ACTIVITY_RE.match(rest) or len(rest) < 2 or ZH_TRANSIENT_RE.search(rest):
            return []
        obj = rest[1:] if rest[0] in "吃喝抽玩打用看去练跑做上踢骑开弹画唱跳拉吹游" else rest[2:]
        if len(obj) < 1 or ZH_OBJ_BAD_RE.match(obj) or (rest.startswith("去") and is_place(obj)):
            return []  # "我不去北京了": a trip called off, not a routine
        return _stopped(ctx, "用户不再" + rest, rest, "不再做")
    m = _ZH_QUIT_RE.match(s)
    if m:
        obj = zh_object(m.group("obj"))
        if not obj or ZH_OBJ_BAD_RE.match(obj):
            return []
        return _stopped(ctx, zh_third(s), _ZH_QUIT_CANON.get(obj, obj), "戒掉了")
    m = _ZH_JOB_RE.match(s)
    if m:
        org = m.group("org")
        if org:
            return _ended(f"我在{org}工作", ctx)  # canonical: "用户已不在腾讯工作"
        return _left_job(ctx, zh_third(s), None)
    m = _ZH_MOVED_OUT_RE.match(s)
    if m:
        return _ended("我住在" + m.group("place"), ctx)
    return None
