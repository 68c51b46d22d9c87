"""Extraction without an LLM: explicit commands and precision-first EN/ZH rules.

Rather miss than misremember: a sentence yields a candidate only when one
anchored pattern matches it cleanly. Questions, hypotheticals, hedges and
reported speech are dropped before any rule runs; objects that only make sense
in context ("I like it") are refused. Explicit commands ("remember that…",
"请记住…") always store something.

Every candidate is rewritten as a statement about the user in the user's
language ("User lives in Berlin." / "用户住在北京") and carries a `key` naming
its slot so that reconciliation can recognise updates:

    preference:<object>          I love coffee / I hate coffee (polarity +1/-1)
    preference:favourite_<x>     my favourite colour is blue
    preference:answer_language   always answer in Chinese (value "zh")
    preference:<instruction>     never use emojis (polarity -1)
    preference:nickname          call me Bob
    fact:name | fact:location | fact:hometown | fact:employer | fact:work_location
    fact:occupation | fact:school | fact:diet | fact:allergy_<x> | fact:has_<thing>
    fact:<attribute>             my birthday is … → fact:birthday
    fact:<relation>_<attribute>  my dog's name is Rex → fact:dog_name
    task:<action>                I need to submit the report by Friday
    identity:role | identity:tone
"""

from __future__ import annotations

import calendar
import re
import unicodedata
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

import rjieba

from engram.models import Candidate, Kind, Source, as_utc, utcnow
from engram.text import detect_language, split_sentences

__all__ = ["extract_candidates"]

_IMPORTANCE = {Kind.IDENTITY: 0.85, Kind.PREFERENCE: 0.7, Kind.FACT: 0.7, Kind.TASK: 0.75}
_EXPLICIT_IMPORTANCE = 0.9
_RULE_CONFIDENCE = 0.8

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_I = re.I
_APOS = str.maketrans({"\u2019": "'", "\u2018": "'", "`": "'", "\uff07": "'"})
_WS_RE = re.compile(r"\s+")


@dataclass(slots=True)
class _Ctx:
    now: datetime  # aware; dates resolve in its time zone
    lang: str
    relaxed: bool = False  # inside an explicit command: tasks need no modal verb
    greeted: bool = False  # "hi, I'm Caroline": a bare name after a greeting


# --------------------------------------------------------------------------- word lists

_EN_ADV = (
    r"(?:(?:really|truly|totally|absolutely|just|also|still|actually|genuinely|honestly|definitely"
    r"|seriously|generally|usually|always|normally|mostly|currently|now|already|recently|so|super"
    r"|quite|particularly|especially|even|officially|finally|do|kinda|pretty\s+much)\s+)*"
)
_PRONOUN_START = frozenset(
    """it it's its that this these those them they you your yours u ur him her his us me myself
    what how when where why who which whatever everything anything something nothing all both
    either neither one ones here there so very too lots lot many most much more less some such
    doing being""".split()
)
_DETERMINERS = frozenset("the a an my your our their his her some this that these those to".split())
_EN_TRAILING_FILLER_RE = re.compile(
    r"(?:\s+(?:a lot|so much|very much|that much|too much|too|as well|either|anymore|any more"
    r"|though|anyway|anyways|really|honestly|tbh|btw|now|these days|nowadays|in general|generally"
    r"|at all|lately|for real|to be honest|haha\w*|lol|lmao|right now|at the moment|currently))+$",
    _I,
)
_EN_CUT_RE = re.compile(
    r"\s*(?:[,;:(]|\s-\s|\s+(?:and|but|because|since|so|although|though|while|when|whereas"
    r"|which|who|where|unless|until|except)\b)",
    _I,
)
_CUT_WORDS = frozenset(
    "and but because since so although though while when whereas which who where unless until except".split()
)
_FILLER_LAST = frozenset(
    """lot much too well either anymore more though anyway anyways really honestly tbh btw now days
    nowadays general generally all lately real honest lol lmao moment currently""".split()
)
_TIME_LAST = frozenset(
    """year years month months week weeks summer winter spring fall autumn ago recently yesterday
    today now lately currently days nowadays moment day""".split()
)
_EN_TIME_TAIL_RE = re.compile(
    r"(?:\s+(?:(?:last|this|next)\s+(?:year|month|week|summer|winter|spring|fall|autumn)"
    r"|(?:a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d+|a few|several)\s+"
    r"(?:days?|weeks?|months?|years?)\s+ago|in\s+\d{4}|recently|yesterday|today|now|lately"
    r"|currently|these days|nowadays|at the moment|for now|for (?:a|an|one|two|three|\d+)\s+"
    r"(?:days?|weeks?|months?|years?)))+$",
    _I,
)

_ZH_PARTICLES_RE = re.compile(r"[啊呀哦啦嘛哈呗哟噢喔嗯~]+$")
_END_JUNK_RE = re.compile(
    r"(?:[\s.!。,;:~…、)\]\"'”’]+|\s+(?:lol|lmao|haha\w*|hehe|xd)\b|\s*(?::-?\)|:-?d|;-?\)|:p|<3|\^_?\^)"
    r"|[\U0001F000-\U0001FAFF\u2600-\u27BF\uFE0F\u200d]+|[啊呀哦啦嘛哈呗哟噢喔嗯]+(?=[\s.!。,~]*$))+$",
    _I,
)

_EN_FILLER_RE = re.compile(
    r"^(?:(?P<greet>hi|hello|hey|hiya|howdy|good (?:morning|afternoon|evening))\b[\s,!.:;-]*"
    r"|(?:oh|well|so|yeah|yes|yep|ok|okay|hmm+|um+|uh+|actually|honestly|btw|by the way|also"
    r"|and|but|lol|haha\w*|anyway|anyways|fyi|just fyi|for the record|just so you know|tbh|no"
    r"|alright|right|oh and|plus|besides)\b[\s,!.:;-]*)+",
    _I,
)
_ZH_FILLER_RE = re.compile(
    r"^(?:(?P<greet>你好|您好|大家好|嗨|哈喽|哈啰|早上好|晚上好)[\s,，!！~。]*"
    r"|(?:对了|其实|另外|还有|顺便说一下|顺便说|顺便|话说|说实话|老实说|然后|而且|不过|哈哈+|嘿)[\s,，!！~。]*"
    r"|(?:嗯+|哦+|噢+|啊+|对|好的|好吧|好|是的|那个)(?:[\s,，!！~。]+|$))+"
)

_EN_QUESTION_START = frozenset(
    """what when where who whom whose why how which do does did is are am was were can could
    would should will shall have has had may might isn't aren't doesn't didn't won't wouldn't
    shouldn't couldn't wasn't weren't hasn't haven't""".split()
)
_ZH_END_PARTICLES = frozenset("啊呀哦啦嘛哈呗哟噢喔嗯")
_EN_END_JUNK = ("lol", "lmao", "xd", "hehe", "ha", ":d", ":p")
_ZH_QUESTION_WORDS = ("什么", "为什么", "怎么", "哪", "谁", "多少", "几点", "几个", "几天", "几岁", "是不是",
                      "有没有", "能不能", "会不会", "要不要", "对不对", "好不好", "行不行", "可不可以", "是否", "难道")
_WORD_RE = re.compile(r"[a-z']+")
_EN_HEDGE_WORDS = frozenset(
    """if unless whether would wouldn't could couldn't might maybe perhaps probably possibly hopefully
    suppose supposing imagine imagining pretend hypothetically wish wished wonder wondering guess
    unsure dunno kinda sorta someday said says apparently allegedly dreamt dreamed""".split()
)
_EN_HEDGE_PHRASES = tuple(
    f" {p} " for p in (
        "not sure", "don't know", "do not know", "no idea", "not certain", "i think", "i thought",
        "i feel like", "i believe", "i suspect", "i assume", "kind of", "sort of", "used to",
        "some day", "one day", "as if", "told me", "tells me", "according to",
    )
)
_ZH_HEDGES = (
    "如果", "假如", "假设", "要是", "万一", "倘若", "假使", "的话", "可能", "也许", "或许", "大概", "说不定",
    "不确定", "不知道", "不清楚", "好像", "似乎", "想象", "觉得", "认为", "我想", "曾经", "过去", "小时候",
    "本来", "原来", "打算", "计划", "准备", "考虑", "想要", "据说", "听说", "他说", "她说", "告诉我", "梦想",
    "梦见", "做梦", "不一定", "难道",
)
_CONTEXT_WORDS = frozenset("you your yours it that this them".split())
_EN_TRANSIENT_RE = re.compile(
    r"\b(?:right now|at the moment|today|tonight|this (?:morning|afternoon|evening))\b", _I
)
_ZH_TRANSIENT_RE = re.compile(r"今天|今晚|现在|刚才|刚刚|此刻|这会儿|明天|昨天")


# --------------------------------------------------------------------------- helpers


def _rsub(rx: re.Pattern[str], s: str, window: int = 40) -> str:
    """Strip an end-anchored pattern, scanning only the tail (``(…)+$`` is quadratic otherwise)."""
    if len(s) <= window:
        return rx.sub("", s)
    cut = len(s) - window
    return s[:cut] + rx.sub("", s[cut:])


def _en_hedged(s: str) -> bool:
    """Hypothetical, unsure, reported or habitual-past speech: not a fact to file."""
    words = _WORD_RE.findall(s.lower())
    if any(w in _EN_HEDGE_WORDS or w.endswith("'d") for w in words):
        return True
    padded = " " + " ".join(words) + " "
    return any(p in padded for p in _EN_HEDGE_PHRASES)


def _zh_hedged(s: str) -> bool:
    return any(h in s for h in _ZH_HEDGES) or s.startswith("以前") or "我以前" in s or s.endswith("吧")


def _prep(text: str) -> str:
    return unicodedata.normalize("NFKC", text).translate(_APOS)


def _strip_end(s: str) -> str:
    """Drop trailing punctuation, emoji, "lol", sentence particles (keeps "?")."""
    s = s.rstrip()
    if not s:
        return s
    last = s[-1]
    if last.isalnum() and last not in _ZH_END_PARTICLES and not s[-5:].lower().endswith(_EN_END_JUNK):
        return s
    return _rsub(_END_JUNK_RE, s).strip()


def _is_question(core: str, lang: str) -> bool:
    """`core` has been through `_strip_end`."""
    if core.endswith("?"):
        return True
    if lang == "zh" or _CJK_RE.search(core):
        if core.endswith(("吗", "呢", "么")) or any(q in core for q in _ZH_QUESTION_WORDS):
            return True
    first = core.split(None, 1)[0].lower() if core else ""
    return first in _EN_QUESTION_START


_CJK_RE = re.compile(f"[{_CJK}]")
_SLUG_TOKEN_RE = re.compile(f"[a-z0-9]+|[{_CJK}]+")
_ZH_SLUG_DROP_RE = re.compile(r"^(?:把|将|去|吃|喝|看|听|玩)(?=..)|[的了着过]")
_EN_CONSUME_RE = re.compile(
    r"^(?:to\s+)?(?:eat|eating|drink|drinking|watch|watching|listen to|listening to|play|playing"
    r"|have|having)\s+(?=\S)",
    _I,
)
_IES_KEEP = frozenset(
    "movies cookies zombies pies ties lies hippies selfies smoothies brownies goalies rookies"
    " calories indies species series".split()
)
_S_KEEP = frozenset("species series tennis axis iris chassis pelvis physics maths news lens gas yes".split())
_OES = frozenset("tomatoes potatoes heroes mangoes echoes volcanoes".split())


def _singular(w: str) -> str:
    if len(w) <= 3 or w.endswith(("ss", "us", "sis", "ous")) or w in _S_KEEP:
        return w
    if w.endswith("ies"):
        return w[:-1] if w in _IES_KEEP else w[:-3] + "y"
    if w in _OES or w.endswith(("ches", "shes", "xes", "sses", "zes")):
        return w[:-2]
    if w.endswith("s"):
        return w[:-1]
    return w


def _slug(phrase: str, *, consume: bool = False, limit: int = 6) -> str:
    """Stable key part: "the Rolling Stones" → "rolling_stone", "吃火锅" → "火锅"."""
    t = _prep(phrase).casefold().replace("'s ", " ").replace("color", "colour").replace("colourr", "colour")
    if consume:
        t = _EN_CONSUME_RE.sub("", t)
    parts: list[str] = []
    for tok in _SLUG_TOKEN_RE.findall(t):
        if _CJK_RE.match(tok):
            tok = _ZH_SLUG_DROP_RE.sub("", tok) if consume else tok.replace("的", "")
            if tok:
                parts.append(tok)
        elif tok not in _DETERMINERS:
            parts.append(tok)
    if not parts:
        return ""
    parts = parts[:limit]
    if parts[-1].isascii():
        parts[-1] = _singular(parts[-1])
    return "_".join(parts)[:48].strip("_")


_ART_RE = re.compile(r"^(?:the|a|an)\s+", _I)
_ZH_YOU_RE = re.compile(r"[你您](?!们)")
_DANGLING_PREP_RE = re.compile(r"\s+(?:by|before|on|until|till|due|at)\s*$", _I)
_ZH_ACT_LEAD_RE = re.compile(r"^(?:我的?|都|就|还|也|会|要|得|在|，|,)+")
_NAME_WORD_RE = re.compile(r"[A-Za-z\u00c0-\u024f][\w'.-]*")


def _value(phrase: str) -> str:
    """Slot value: casefolded, no leading article, single spaces."""
    v = _WS_RE.sub(" ", phrase.strip()).casefold()
    return _ART_RE.sub("", v)


def _cut(phrase: str) -> str:
    """Keep the first clause of an object phrase ("Berlin, with my wife" → "Berlin")."""
    words = phrase.lower().split()
    if not _CUT_WORDS.intersection(words) and not any(ch in phrase for ch in ",;:(-"):
        return phrase.strip()
    return _EN_CUT_RE.split(phrase, 1)[0].strip()


def _last_word(s: str) -> str:
    i = s.rfind(" ")
    return s[i + 1:].lower()


def _trim_fillers(s: str) -> str:
    """"sushi lol" → "sushi", "coffee at all" → "coffee"."""
    last = _last_word(s)
    if last not in _FILLER_LAST and not last.startswith("haha"):
        return s
    return _rsub(_EN_TRAILING_FILLER_RE, s)


def _trim_time(s: str) -> str:
    """"Munich last year" → "Munich"."""
    last = _last_word(s)
    if last not in _TIME_LAST and not last.isdigit():
        return s
    return _rsub(_EN_TIME_TAIL_RE, s)


def _article(word: str) -> str:
    return "an" if word[:1].lower() in "aeiou" else "a"


def _ucfirst(s: str) -> str:
    return s[:1].upper() + s[1:] if s else s


def _lcfirst(s: str) -> str:
    return s[:1].lower() + s[1:] if s else s


def _sentence(s: str) -> str:
    s = s.strip()
    return s if s.endswith((".", "!")) else s + "."


# English third person -----------------------------------------------------------

_EN_MODALS = frozenset("can cannot can't will won't would should must may might could shall".split())
_EN_IRREGULAR = {"am": "is", "have": "has", "do": "does", "don't": "doesn't", "go": "goes",
                 "gotta": "has to", "'m": "is", "'ve": "has", "'d": "would", "'ll": "will"}
_EN_PAST = frozenset("was were had did didn't went got made took came saw met grew began became".split())
_EN_HEAD_RE = re.compile(
    r"^i(?P<contr>'m|'ve|'d|'ll)?\b(?P<adv>(?:\s+(?:really|truly|totally|absolutely|just|also"
    r"|still|actually|genuinely|honestly|definitely|seriously|generally|usually|always|never"
    r"|normally|often|sometimes|currently|now|already|recently|even|only|finally))*)"
    r"(?:\s+(?P<verb>[a-z']+))?",
    _I,
)
_EN_PRON_RE = re.compile(r"\b(?:(?P<i>I)(?P<c>'m|'ve|'ll|'d)?|(?P<w>myself|mine|my|me))\b", _I)
_PRON = {"myself": "themselves", "mine": "theirs", "my": "their", "me": "them", "": "they",
         "'m": "they are", "'ve": "they have", "'ll": "they will", "'d": "they would"}
_EN_YOU_RE = re.compile(r"\b(?:you're|you are|your|yours|you)\b", _I)
_YOU = {"you're": "the assistant is", "you are": "the assistant is", "your": "the assistant's",
        "yours": "the assistant's", "you": "the assistant"}


def _pron_sub(m: re.Match[str]) -> str:
    return _PRON[(m.group("w") or m.group("c") or "").lower()]


def _you_sub(m: re.Match[str]) -> str:
    return _YOU[_WS_RE.sub(" ", m.group().lower())]


def _third(verb: str) -> str:
    lv = verb.lower()
    if lv in _EN_IRREGULAR:
        return _EN_IRREGULAR[lv]
    if lv in _EN_MODALS or lv in _EN_PAST or lv.endswith("n't") or not lv.isalpha() \
            or lv.endswith("ed") and not lv.endswith("eed"):
        return verb
    if lv.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if len(lv) > 1 and lv.endswith("y") and lv[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


def _en_third(clause: str) -> str:
    """Rewrite a first-person English clause as a statement about "User"."""
    s = clause.strip()
    head = ""
    m = _EN_HEAD_RE.match(s)
    if m and (m.group("contr") or m.group("verb")):
        contr, adv, verb = m.group("contr"), m.group("adv") or "", m.group("verb")
        if contr:
            head = "User " + _EN_IRREGULAR[contr.lower()] + adv + (" " + verb if verb else "")
        else:
            head = "User" + adv + " " + _third(verb)
        s = s[m.end():]
    elif s[:2].lower() in ("my", "me") and not s[2:3].isalnum():
        head, s = ("User's" if s[1] in "yY" else "User"), s[2:]
    s = _en_rest(s)
    if not head:
        s = _EN_YOU_RE.sub(_you_sub, s)
        return _sentence(_ucfirst(s))
    return _sentence(head + s)


def _zh_third(clause: str, *, subject: bool = False) -> str:
    """Rewrite a first-person Chinese clause about "用户"; `subject` adds one when missing."""
    s = clause.replace("我们", "\0").replace("我", "用户").replace("\0", "我们")
    if "你" in s or "您" in s:
        s = _ZH_YOU_RE.sub("助手", s)
    if subject and not s.startswith("用户"):
        s = "用户" + s
    return s


def _third_person(clause: str, lang: str, *, subject: bool = False) -> str:
    return _zh_third(clause, subject=subject) if lang == "zh" else _en_third(clause)


def _entities(*phrases: str) -> list[str]:
    out = []
    for p in phrases:
        p = (p or "").strip()
        if p and (len(p.split()) <= 4 if p.isascii() else len(p) <= 12):
            out.append(_ART_RE.sub("", p))
    return out


def _mk(ctx: _Ctx, kind: Kind, content: str, key: str | None, value: str | None, reason: str,
        *, polarity: int = 0, entities: list[str] | None = None, due_at: datetime | None = None,
        recurrence: str | None = None, valid_from: datetime | None = None) -> Candidate:
    return Candidate(
        content=content, kind=kind, key=key, value=value, polarity=polarity,
        importance=_IMPORTANCE[kind], confidence=_RULE_CONFIDENCE, language=ctx.lang,
        source=Source.RULE, reason=reason, entities=list(dict.fromkeys(entities or ())),
        due_at=as_utc(due_at) if due_at else None, recurrence=recurrence,
        valid_from=as_utc(valid_from) if valid_from else None,
    )


# --------------------------------------------------------------------------- dates

_WD_EN = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_WD_CODE = ("MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN")
_WD_EN_RE = "|".join(_WD_EN)
_MONTHS = {
    "january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
    "may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9,
    "sept": 9, "sep": 9, "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12,
    "dec": 12,
}
_MONTH_RE = "|".join(sorted(_MONTHS, key=len, reverse=True))
_EN_NUMS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "seven": 7, "eight": 8, "nine": 9, "ten": 10, "a couple of": 2}
_EN_DATE_RE = re.compile(
    rf"""(?:\b(?P<prep>by|before|on|until|till|no\ later\ than|due)\s+)?\b(?:
      (?P<rel>the\ day\ after\ tomorrow|tomorrow|today|tonight|next\ week|next\ month
        |this\ weekend|next\ weekend|the\ weekend|(?:the\ )?end\ of\ (?:the\ |this\ )?(?:day|week|month|year)
        |eod|eow)
    | (?:(?P<mod>this\ coming|this|next|coming)\s+)?(?P<wd>{_WD_EN_RE})(?:\s+(?:morning|afternoon|evening|night))?
    | (?P<iy>\d{{4}})-(?P<im>\d{{1,2}})-(?P<id>\d{{1,2}})
    | (?P<mon>{_MONTH_RE})\.?\s+(?P<md>\d{{1,2}})(?:st|nd|rd|th)?(?:,?\s+(?P<my>\d{{4}}))?
    | (?:the\s+)?(?P<dm>\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<mon2>{_MONTH_RE})(?:,?\s+(?P<my2>\d{{4}}))?
    | in\s+(?P<n>\d+|a\ couple\ of|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+(?P<unit>days?|weeks?|months?)
    | (?:at|by|before)\s+(?P<th>\d{{1,2}})(?::(?P<tm>\d{{2}}))?\s*(?P<tap>a\.?m\.?|p\.?m\.?)
    )\b(?:\s*(?:at|by|before)?\s*(?P<hh>\d{{1,2}})(?::(?P<mm>\d{{2}}))?\s*(?P<ap>a\.?m\.?|p\.?m\.?)(?!\w))?""",
    re.I | re.X,
)
_ZH_NUM_RE = "[0-9]+|[零一二两三四五六七八九十]+"
_ZH_WD = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6,
          "1": 0, "2": 1, "3": 2, "4": 3, "5": 4, "6": 5, "7": 6}
_ZH_DATE_RE = re.compile(
    rf"""(?:
      (?P<mod>下下个?|下个?|这个?|本)?(?:周|星期|礼拜)(?P<wd>[一二三四五六日天1-7])
    | (?P<rel>大后天|后天|明天|明早|明晚|今天|今晚|今早|下周末|下周|下星期|下个星期|下礼拜|下个礼拜|这周末|本周末|周末
        |本月底|这个月底|月底|下个月|年底)
    | (?:(?P<y>\d{{4}})年)?(?P<m>\d{{1,2}})月(?P<d>\d{{1,2}})[日号]?
    | (?P<iy>\d{{4}})-(?P<im>\d{{1,2}})-(?P<id>\d{{1,2}})
    | (?P<n>{_ZH_NUM_RE})(?P<unit>天|个星期|周|个月)(?:后|以后|之后)
    )(?:(?P<ampm>上午|早上|中午|下午|晚上)?(?P<hh>{_ZH_NUM_RE})点(?:(?P<half>半)|(?P<mm>[0-9]{{1,2}})分?)?)?""",
    re.X,
)


def _zh_int(s: str) -> int:
    if s.isdigit():
        return int(s)
    digits = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7,
              "八": 8, "九": 9}
    if "十" in s:
        tens, _, ones = s.partition("十")
        return (digits.get(tens, 1) if tens else 1) * 10 + (digits.get(ones, 0) if ones else 0)
    return digits.get(s, 0)


def _upcoming(today: date, wd: int) -> date:
    return today + timedelta(days=(wd - today.weekday()) % 7)


def _next_week(today: date, wd: int = 0) -> date:
    return today - timedelta(days=today.weekday()) + timedelta(days=7 + wd)


def _month_end(d: date) -> date:
    return d.replace(day=calendar.monthrange(d.year, d.month)[1])


def _add_months(d: date, n: int) -> date:
    y, m = divmod(d.month - 1 + n, 12)
    year, month = d.year + y, m + 1
    return date(year, month, min(d.day, calendar.monthrange(year, month)[1]))


def _md(today: date, month: int, day: int, year: str | None) -> date | None:
    try:
        d = date(int(year) if year else today.year, month, day)
    except ValueError:
        return None
    if not year and d < today:
        d = date(d.year + 1, month, day) if not (month == 2 and day == 29) else d
    return d


def _hm(hh: str | None, mm: str | None, ap: str | None, zh_ampm: str | None = None) -> time | None:
    if not hh:
        return None
    h = _zh_int(hh)
    m = int(mm) if mm else 0
    ap = (ap or "").lower().replace(".", "")
    if (ap == "pm" or zh_ampm in ("下午", "晚上")) and h < 12:
        h += 12
    elif ap == "am" and h == 12:
        h = 0
    if h > 23 or m > 59:
        return None
    return time(h, m)


def _resolve_en(m: re.Match[str], today: date) -> tuple[date | None, time | None]:
    g = m.groupdict()
    t = _hm(g["hh"], g["mm"], g["ap"])
    if g["rel"]:
        rel = g["rel"].lower().replace("the ", "").replace("this ", "")
        if rel in ("today", "tonight", "end of day", "eod"):
            return today, t
        if rel == "tomorrow":
            return today + timedelta(days=1), t
        if rel == "day after tomorrow":
            return today + timedelta(days=2), t
        if rel == "next week":
            return _next_week(today), t
        if rel == "next month":
            return _add_months(today.replace(day=1), 1), t
        if rel == "weekend":
            return (today if today.weekday() >= 5 else _upcoming(today, 5)), t
        if rel == "next weekend":
            return _next_week(today, 5), t
        if rel in ("end of week", "eow"):
            return _upcoming(today, 4), t
        if rel == "end of month":
            return _month_end(today), t
        if rel == "end of year":
            return date(today.year, 12, 31), t
        return None, None
    if g["wd"]:
        wd = _WD_EN.index(g["wd"].lower())
        mod = (g["mod"] or "").lower()
        return (_next_week(today, wd) if mod == "next" else _upcoming(today, wd)), t
    if g["iy"]:
        try:
            return date(int(g["iy"]), int(g["im"]), int(g["id"])), t
        except ValueError:
            return None, None
    if g["mon"]:
        return _md(today, _MONTHS[g["mon"].lower()], int(g["md"]), g["my"]), t
    if g["mon2"]:
        return _md(today, _MONTHS[g["mon2"].lower()], int(g["dm"]), g["my2"]), t
    if g["n"]:
        n = _EN_NUMS.get(g["n"].lower()) or int(g["n"])
        unit = g["unit"].lower()
        if unit.startswith("day"):
            return today + timedelta(days=n), t
        if unit.startswith("week"):
            return today + timedelta(weeks=n), t
        return _add_months(today, n), t
    if g["th"]:
        return today, _hm(g["th"], g["tm"], g["tap"])
    return None, None


def _resolve_zh(m: re.Match[str], today: date) -> tuple[date | None, time | None]:
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
    rel = g["rel"]
    if rel:
        if rel in ("今天", "今晚", "今早"):
            return today, t
        if rel in ("明天", "明早", "明晚"):
            return today + timedelta(days=1), t
        if rel == "后天":
            return today + timedelta(days=2), t
        if rel == "大后天":
            return today + timedelta(days=3), t
        if rel in ("下周", "下星期", "下个星期", "下礼拜", "下个礼拜"):
            return _next_week(today), t
        if rel in ("周末", "这周末", "本周末"):
            return (today if today.weekday() >= 5 else _upcoming(today, 5)), t
        if rel == "下周末":
            return _next_week(today, 5), t
        if rel in ("月底", "本月底", "这个月底"):
            return _month_end(today), t
        if rel == "下个月":
            return _add_months(today.replace(day=1), 1), t
        if rel == "年底":
            return date(today.year, 12, 31), t
    if g["m"]:
        return _md(today, int(g["m"]), int(g["d"]), g["y"]), t
    if g["iy"]:
        try:
            return date(int(g["iy"]), int(g["im"]), int(g["id"])), t
        except ValueError:
            return None, None
    if g["n"]:
        n = _zh_int(g["n"])
        unit = g["unit"]
        if unit == "天":
            return today + timedelta(days=n), t
        if unit in ("周", "个星期"):
            return today + timedelta(weeks=n), t
        return _add_months(today, n), t
    return None, None


def _due(d: date | None, t: time | None, now: datetime) -> datetime | None:
    """Deadline on day `d`: at the time said, else at the end of that day (user's zone = now's)."""
    if d is None:
        return None
    due = datetime.combine(d, t or time(23, 59), tzinfo=now.tzinfo)
    if t and d == now.date() and due < now and not t == time(23, 59):
        due += timedelta(days=1)  # "by 9am" said at noon: tomorrow
    return due


def _due_label(due: datetime, t: time | None) -> str:
    return due.strftime("%Y-%m-%d %H:%M") if t else due.strftime("%Y-%m-%d")


_EN_REC_RE = re.compile(
    rf"""\b(?:(?:every|each)\s+(?:(?P<unit>day|morning|evening|night|afternoon|weekday|weekend|week|month|year)
      |(?P<wds>(?:{_WD_EN_RE})(?:\s*(?:,|and|&|or)\s*(?:{_WD_EN_RE}))*))
    |(?P<adv>daily|nightly|weekly|monthly|yearly|annually)
    |on\s+(?P<plural>(?:{_WD_EN_RE})s(?:\s*(?:,|and|&)\s*(?:{_WD_EN_RE})s)*))\b""",
    re.I | re.X,
)
_ZH_REC_RE = re.compile(
    r"每个?(?:周|星期|礼拜)(?P<wd>[一二三四五六日天1-7])(?:[和、跟及与](?:周|星期|礼拜)?(?P<wd2>[一二三四五六日天1-7]))?"
    r"|(?P<unit>每天|每日|每晚|每早|天天|每个工作日|工作日|每个周末|每周末|每周|每星期|每个星期|每礼拜|每个月|每月|每年)"
)
_UNIT_REC = {"day": "daily", "morning": "daily", "evening": "daily", "night": "daily",
             "afternoon": "daily", "week": "weekly", "month": "monthly", "year": "yearly",
             "weekday": "weekly:MON,TUE,WED,THU,FRI", "weekend": "weekly:SAT,SUN",
             "daily": "daily", "nightly": "daily", "weekly": "weekly", "monthly": "monthly",
             "yearly": "yearly", "annually": "yearly",
             "每天": "daily", "每日": "daily", "每晚": "daily", "每早": "daily", "天天": "daily",
             "每个工作日": "weekly:MON,TUE,WED,THU,FRI", "工作日": "weekly:MON,TUE,WED,THU,FRI",
             "每个周末": "weekly:SAT,SUN", "每周末": "weekly:SAT,SUN", "每周": "weekly",
             "每星期": "weekly", "每个星期": "weekly", "每礼拜": "weekly", "每个月": "monthly",
             "每月": "monthly", "每年": "yearly"}


def _recurrence(m: re.Match[str]) -> tuple[str, int | None]:
    """("weekly:FRI", 4) — the rule and, for one weekday, its index (for the next due date)."""
    g = m.groupdict()
    if g.get("unit"):
        return _UNIT_REC[g["unit"].lower() if g["unit"].isascii() else g["unit"]], None
    if g.get("adv"):
        return _UNIT_REC[g["adv"].lower()], None
    if "wds" in g:
        names = g["wds"] or g["plural"] or ""
        days = sorted({_WD_EN.index(w) for w in re.findall(_WD_EN_RE, names.lower())})
    else:
        days = sorted({_ZH_WD[d] for d in (g["wd"], g.get("wd2")) if d})
    rule = "weekly:" + ",".join(_WD_CODE[d] for d in days)
    return rule, days[0] if len(days) == 1 else None


# --------------------------------------------------------------------------- explicit

_EN_EXPLICIT_RE = re.compile(
    r"""^(?P<polite>(?:can|could|would|will)\s+you\s+(?:please\s+)?)?
    (?:please\s+|pls\s+|plz\s+|kindly\s+)?
    (?:(?:i\s+want|i'd\s+like|i\s+would\s+like|i\s+need)\s+you\s+to\s+)?
    (?:always\s+)?
    (?P<verb>remember|memori[sz]e|keep\s+in\s+mind|bear\s+in\s+mind|don't\s+forget|do\s+not\s+forget
      |never\s+forget|make\s+a\s+note|take\s+(?:a\s+)?note|note|save\s+this|store\s+this)
    (?:\s+(?:this|that|it|the\ following)(?=\s*:))?(?:\s+(?:for\s+me|for\s+later|down))?
    (?P<sep>\s*[:\-\u2013\u2014]\s*|\s*,\s*|\s+that\s+|\s+of\s+|\s+)(?P<clause>.+)$""",
    re.I | re.X,
)
_ZH_EXPLICIT_RE = re.compile(
    r"^(?P<polite>你?(?:能不能|可不可以|能|可以|帮忙)(?:帮我)?)?(?:请你?|麻烦你?|你要|你得|一定要|务必|帮我)?(?:帮我)?"
    r"(?P<verb>记住|记下来|记下|记一下|记好|记着|牢记|记得|千万别忘了|别忘了|别忘记|不要忘了|不要忘记|备注一下|记录一下|记录下来)"
    r"(?:了)?[:\s,，]*(?:这个|这件事|这一点|一件事|一下)?[:\s,，]*(?:就是)?(?P<clause>.+)$"
)
_EN_REMIND_RE = re.compile(
    r"^(?P<polite>(?:can|could|would|will)\s+you\s+)?(?:please\s+)?(?:don't\s+forget\s+to\s+)?"
    r"remind\s+me\s+(?:to\s+|about\s+|that\s+)?(?P<clause>.+)$",
    _I,
)
_ZH_REMIND_RE = re.compile(r"^(?:请|麻烦)?你?(?:记得|到时候?|能不能|可以)?提醒(?:一下)?我(?:一下)?[:\s,，]*(?P<clause>.+)$")
_NOTE_SEP_RE = re.compile(r"\s*[:\-\u2013\u2014]\s*|\s+that\s+", _I)
_EN_REJECT_CLAUSE_RE = re.compile(r"^(?:when|how|what|who|where|why|whether|if|the\s+time|me\b|us\b)", _I)


def _explicit(s: str, ctx: _Ctx) -> list[Candidate] | None:
    """"remember …", "请记住…", "remind me to …": None when the sentence is no command."""
    zh = ctx.lang == "zh"
    m = (_ZH_EXPLICIT_RE if zh else _EN_EXPLICIT_RE).match(s)
    remind = False
    if m is None:
        m = (_ZH_REMIND_RE if zh else _EN_REMIND_RE).match(s)
        remind = m is not None
    if m is None:
        return None
    clause = _strip_end(m.group("clause"))
    polite = m.groupdict().get("polite")
    if polite:
        clause = re.sub(r"(?:\s*[?？]|吗|好吗|可以吗|行吗)+$", "", clause).strip()
        clause = _strip_end(clause)
    if not clause or _EN_REJECT_CLAUSE_RE.match(clause):
        return []
    if not zh and not remind and m.group("verb").lower() == "note" and not _NOTE_SEP_RE.fullmatch(m.group("sep")):
        return None  # "note the date" is not a memory command
    if _is_question(clause, ctx.lang) and not polite:
        return []
    inner = _Ctx(ctx.now, detect_language(clause), relaxed=True)
    if remind:
        found = _task_from_command(clause, inner, reminder=True)
    else:
        found = _mine_sentence(clause, inner, explicit=True)
        if not found:
            found = _fallback(clause, inner, imperative=m.group("verb") in (
                "记得", "别忘了", "千万别忘了", "别忘记", "不要忘了", "不要忘记"))
    verb = "remind me" if remind else m.group("verb")
    for c in found:
        c.source = Source.EXPLICIT
        c.importance = max(c.importance, _EXPLICIT_IMPORTANCE)
        c.confidence = 1.0
        c.reason = f"explicit request ({verb!s}); {c.reason}" if c.reason else f"explicit request ({verb})"
    return found


def _fallback(clause: str, ctx: _Ctx, *, imperative: bool = False) -> list[Candidate]:
    """An explicit clause no rule understood: keep it, rewritten about the user."""
    if ctx.lang == "en" and re.match(r"^to\s+\S", clause, _I):
        return _task_from_command(clause[3:].strip(), ctx)
    if ctx.lang == "zh" and imperative and not re.match(r"^[我你他她它这那]", clause):
        return _task_from_command(clause, ctx)
    content = _third_person(clause, ctx.lang)
    return [_mk(ctx, Kind.FACT, content, None, None, "no rule matched; stored as said")]


def _task_from_command(clause: str, ctx: _Ctx, *, reminder: bool = False) -> list[Candidate]:
    """"remember to call mom tomorrow" / "提醒我明天交报告": a task with an optional date."""
    zh = ctx.lang == "zh"
    found = _task(("我要" + clause) if zh and not clause.startswith("我") else
                  clause if zh else "I need to " + clause, ctx)
    if found:
        if reminder:
            for c in found:
                c.reason = "reminder requested; " + c.reason
        return found
    act = _strip_end(clause)
    if not act:
        return []
    if zh:
        content = _zh_third(act if act.startswith("我") else "需要" + act, subject=True)
    else:
        content = _sentence(("User wants to be reminded to " if reminder else "User needs to ") + _en_rest(act))
    return [_mk(ctx, Kind.TASK, content, "task:" + _slug(act, consume=True), None,
                "reminder requested" if reminder else "task stated in a command",
                entities=_entities(act))]


def _en_rest(s: str) -> str:
    """First person → "they" in the rest of a clause ("… before I leave" → "… before they leave")."""
    return _EN_PRON_RE.sub(_pron_sub, s)


# --------------------------------------------------------------------------- identity & instructions

_EN_STANDING = r"(?:from\s+now\s+on|going\s+forward|for\s+this\s+conversation|from\s+here\s+on|in\s+(?:the\s+)?future|by\s+default)"
_EN_ID_RE = re.compile(
    rf"""^(?:please\s+)?(?:(?P<mark>{_EN_STANDING})\s*,?\s*)?(?:please\s+)?
    (?:(?P<want>i\s+want\s+you\s+to|i'd\s+like\s+you\s+to|i\s+would\s+like\s+you\s+to|i\s+need\s+you\s+to)\s+)?
    (?:please\s+)?(?:always\s+)?
    (?P<verb>act\s+as|act\s+like|serve\s+as|play\s+the\s+role\s+of|take\s+on\s+the\s+role\s+of|pretend\s+to\s+be
      |pretend\s+you(?:'re|\s+are)|work\s+as|be|you\s+are\s+now|you're\s+now|you\s+are|you're
      |you\s+will\s+be|you'll\s+be|you\s+are\s+going\s+to\s+be|become)
    \s+(?P<det>my|a|an|the|our)\s+(?P<role>.+)$""",
    re.I | re.X,
)
_EN_TONE_RE = re.compile(
    r"^(?:please\s+)?(?:always\s+)?(?P<verb>talk|speak|write|respond|reply|answer|chat)\s+"
    r"(?P<to>to\s+me\s+|with\s+me\s+)?(?P<how>like|as\s+if\s+you\s+were|as\s+though\s+you\s+were|as)\s+"
    r"(?P<det>my\s+|a\s+|an\s+|the\s+)?(?P<role>.+)$",
    _I,
)
_ROLE_HEADS = frozenset(
    """assistant editor tutor teacher coach expert translator reviewer consultant advisor adviser
    mentor writer critic coder programmer engineer developer analyst therapist proofreader
    interviewer examiner partner researcher planner secretary guide trainer instructor professor
    copywriter marketer designer architect lawyer doctor accountant counselor counsellor chef
    nutritionist strategist manager pm butler concierge sparring""".split()
)
_COMPLIMENTS = frozenset(
    """hero lifesaver savior saviour favorite favourite best genius angel champion star legend man
    guy buddy pal bro dude love darling sweetheart baby everything world friend idiot fool""".split()
)
_ROLE_TAIL_RE = re.compile(
    rf"(?:\s+(?:for\s+me|please|today|here|now|for\s+now|{_EN_STANDING}|for\s+the\s+rest\s+of\s+(?:this|our)\s+conversation))+$",
    _I,
)
_ZH_ID_RE = re.compile(
    r"^(?:请|麻烦)?你?(?P<mark>以后|今后|从现在开始|从现在起|接下来|现在|之后)?[,，]?(?:请)?你?(?:就)?"
    r"(?P<verb>作为|当|做|扮演|担任|充当|成为)(?P<my>我的)?(?P<role>.+)$"
)
_ZH_YOU_ARE_RE = re.compile(
    r"^(?P<mark>(?:以后|今后|从现在开始|从现在起|接下来|现在)[,，]?)?你(?:就|现在|以后|从现在开始)?是"
    r"(?P<my>我的)?(?P<role>.+)$"
)
_ZH_ROLE_CLEAN_RE = re.compile(r"^(?:一个|一名|一位|一|个|名|位)|(?:吧|好吗|了|就好|就行|可以吗)$")
_ZH_COMPLIMENTS = frozenset("好人 天才 最棒的 最好的 朋友 好朋友 最好的朋友 宝贝 救星 英雄 谁 骗子 笨蛋".split())


def _identity(s: str, ctx: _Ctx) -> list[Candidate] | None:
    if ctx.lang == "zh":
        return _zh_identity(s, ctx)
    m = _EN_ID_RE.match(s)
    if m:
        verb = _WS_RE.sub(" ", m.group("verb").lower())
        det = m.group("det").lower()
        role = _ROLE_TAIL_RE.sub("", _cut(m.group("role"))).strip()
        words = role.lower().split()
        if not words or len(words) > 6 or _en_hedged(role) or words[0] in _PRONOUN_START:
            return None
        head = re.sub(r"[^a-z]", "", words[-1])
        if head in _COMPLIMENTS:
            return None
        weak = verb in ("be", "you are", "you're", "you will be", "you'll be", "you are going to be",
                        "become", "you are now", "you're now")
        if weak and det != "my" and not (m.group("mark") or m.group("want")) and head not in _ROLE_HEADS:
            return None
        if det == "the":
            phrase = "the " + role
        else:
            phrase = _article(role) + " " + role
        content = f"User wants the assistant to act as {phrase}."
        return [_mk(ctx, Kind.IDENTITY, content, "identity:role", _value(role),
                    f"identity instruction ({verb} …)", entities=_entities(role))]
    m = _EN_TONE_RE.match(s)
    if m:
        role = _ROLE_TAIL_RE.sub("", _cut(m.group("role"))).strip()
        det = (m.group("det") or "").strip().lower()
        how = _WS_RE.sub(" ", m.group("how").lower())
        if not role or (not det and how != "like") or len(role.split()) > 6:
            return None
        if not det and not role[:1].isupper():
            return None  # "answer like this": a one-off, not a persona
        if role.split()[0].lower() in _PRONOUN_START:
            return None
        verb = m.group("verb").lower()
        to = " to them" if m.group("to") and "to" in m.group("to").lower() else (" with them" if m.group("to") else "")
        det_out = "" if not det else ("a" if det == "my" else det) + " "
        if det in ("a", "an", "my"):
            det_out = _article(role) + " "
        content = f"User wants the assistant to {verb}{to} {how} {det_out}{role}."
        return [_mk(ctx, Kind.IDENTITY, content, "identity:tone", _value(role),
                    f"identity instruction ({verb} {how} …)", entities=_entities(role))]
    return None


def _zh_identity(s: str, ctx: _Ctx) -> list[Candidate] | None:
    m = _ZH_ID_RE.match(s)
    kind = "verb"
    if m is None:
        m = _ZH_YOU_ARE_RE.match(s)
        kind = "you_are"
    if m is None:
        return None
    role = _ZH_ROLE_CLEAN_RE.sub("", _ZH_ROLE_CLEAN_RE.sub("", m.group("role").strip())).strip()
    my = bool(m.group("my"))
    if not role or len(role) > 16 or role in _ZH_COMPLIMENTS or re.match(r"^[我你他她它，,]", role):
        return None
    if kind == "verb":
        verb = m.group("verb")
        if verb not in ("扮演", "充当") and not my:
            return None
    elif not (my or m.group("mark")):
        return None
    content = ("用户希望助手作为其" if my else "用户希望助手扮演") + role
    return [_mk(ctx, Kind.IDENTITY, content, "identity:role", _value(role), "身份指令",
                entities=_entities(role))]


_LANGS = {"chinese": "zh", "mandarin": "zh", "english": "en", "japanese": "ja", "korean": "ko",
          "french": "fr", "german": "de", "spanish": "es", "italian": "it", "portuguese": "pt",
          "russian": "ru", "中文": "zh", "汉语": "zh", "普通话": "zh", "英文": "en", "英语": "en",
          "日语": "ja", "日文": "ja", "韩语": "ko", "法语": "fr", "德语": "de", "西班牙语": "es"}
_EN_LANG_RE = re.compile(
    r"^(?:(?:answer|reply|respond|write|speak|talk|communicate|chat)(?:\s+(?:to|with)\s+(?:me|them))?"
    r"(?:\s+only)?\s+in|use)\s+(?P<lang>chinese|mandarin|english|japanese|korean|french|german"
    r"|spanish|italian|portuguese|russian)\b",
    _I,
)
_ZH_LANG_RE = re.compile(
    r"(?:用|使用|以)(?P<lang>中文|汉语|普通话|英文|英语|日语|日文|韩语|法语|德语|西班牙语)"
    r"(?:来)?(?:回答|回复|交流|沟通|写|说|聊|跟我|和我|对话)"
)
_EN_VERBS = frozenset(
    """answer reply respond write use speak talk keep be give format include avoid add show explain
    summarise summarize start end sign stop refer address translate provide list put make send
    ask check cite tell greet mention offer suggest number label return output structure break
    limit wrap quote spell double-check proofread correct point call respond remind""".split()
)
_EN_INSTR_RE = re.compile(
    rf"""^(?:please\s+)?(?:(?P<mark>{_EN_STANDING})\s*,?\s*)?(?:please\s+)?
    (?:(?:i\s+want\s+you\s+to|i'd\s+like\s+you\s+to|i\s+would\s+like\s+you\s+to|i\s+need\s+you\s+to)\s+)?
    (?P<adv>always|never|don't\s+ever|do\s+not\s+ever|don't|do\s+not)?\s*(?P<body>.+?)
    (?:\s*,?\s*(?P<mark2>{_EN_STANDING}|every\s+time|each\s+time|please))*$""",
    re.I | re.X,
)
_EN_STANDING_HINTS = ("always", "never", "from now on", "going forward", "future", "by default", "every time",
                      "each time", "for this conversation", "from here on")
_ZH_INSTR_RE = re.compile(
    r"^(?:请|麻烦)?你?(?P<mark>以后|今后|从现在开始|从现在起|之后|往后|接下来|总是|始终|永远|一律|每次都|每次)"
    r"[,，]?(?:请)?你?(?P<body>.+)$"
)
_ZH_NEG_RE = re.compile(r"^(?:都|也|一律|永远|再)*(?:不要|别|不用|不准|禁止|不许)")


def _nickname(s: str, ctx: _Ctx) -> list[Candidate] | None:
    if ctx.lang == "zh":
        m = re.match(r"^(?:请|你可以|你就|以后|以后就|以后请|就)?叫我(?P<name>.+?)(?:就好|就行|就可以|吧)?$", s)
        if m is None:
            return None
        name = m.group("name").strip()
        if not _valid_zh_name(name):
            return None
        return [_mk(ctx, Kind.PREFERENCE, f"用户希望被称呼为{name}", "preference:nickname",
                    _value(name), "称呼偏好", polarity=1, entities=[name])]
    m = re.match(
        r"^(?:please\s+)?(?:just\s+|you\s+can\s+(?:just\s+)?|feel\s+free\s+to\s+|always\s+)?"
        rf"call\s+me\s+(?P<name>.+?)(?:\s*,?\s*(?:please|{_EN_STANDING}|instead))*$",
        s, _I)
    if m is None:
        return None
    name = _cut(m.group("name"))
    if not _valid_en_name(name):
        return None
    return [_mk(ctx, Kind.PREFERENCE, f"User wants to be called {name}.", "preference:nickname",
                _value(name), "how to address the user", polarity=1, entities=[name])]


def _instruction(s: str, ctx: _Ctx) -> list[Candidate] | None:
    """Standing instructions ("always answer in Chinese", "以后都用中文回答") are preferences."""
    if ctx.lang == "zh":
        m = _ZH_INSTR_RE.match(s)
        if m is None:
            return None
        body = m.group("body").strip()
        if len(body) < 3 or re.match(r"^[我他她它]", body) or len(body) > 30:
            return None
        neg = bool(_ZH_NEG_RE.match(body)) or m.group("mark") == "永远" and "不" in body[:3]
        content = "用户希望助手" + m.group("mark") + _zh_third(body).replace("用户", "其")
        lm = _ZH_LANG_RE.search(body)
        if lm:
            return [_mk(ctx, Kind.PREFERENCE, content, "preference:answer_language", _LANGS[lm.group("lang")],
                        "回答语言偏好", polarity=-1 if neg else 1)]
        core = _ZH_NEG_RE.sub("", body)
        core = re.sub(r"^(?:都|也|一律|再|请|要|用)+", "", core) or body
        return [_mk(ctx, Kind.PREFERENCE, content, "preference:" + _slug(core), "never" if neg else "always",
                    "长期指令", polarity=-1 if neg else 1)]
    low = s.lower()
    if not any(w in low for w in _EN_STANDING_HINTS):
        return None
    m = _EN_INSTR_RE.match(s)
    if m is None:
        return None
    adv = _WS_RE.sub(" ", (m.group("adv") or "").lower())
    marked = bool(m.group("mark") or m.group("mark2") and m.group("mark2").lower() != "please")
    if not (marked or adv in ("always", "never", "don't ever", "do not ever")):
        return None
    body = m.group("body").strip()
    first = body.split(None, 1)[0].lower() if body else ""
    if first not in _EN_VERBS or _en_hedged(body):
        return None
    neg = adv.startswith(("never", "don't", "do not"))
    rest = re.sub(r"\bme\b", "them", re.sub(r"\bmy\b", "their", body, flags=_I), flags=_I)
    content = f"User wants the assistant to {'never' if neg else 'always'} {rest}."
    lm = _EN_LANG_RE.match(body)
    if lm:
        return [_mk(ctx, Kind.PREFERENCE, content, "preference:answer_language",
                    _LANGS[lm.group("lang").lower()], "standing instruction: answer language",
                    polarity=-1 if neg else 1, entities=[_ucfirst(lm.group("lang").lower())])]
    return [_mk(ctx, Kind.PREFERENCE, content, "preference:" + _slug(body), "never" if neg else "always",
                "standing instruction", polarity=-1 if neg else 1)]


# --------------------------------------------------------------------------- names

_NAME_STOP = frozenset(
    """not a an the so very just here back fine good ok okay well tired sorry done ready home
    great busy sure happy sad glad later tomorrow tonight now maybe when if at on anytime asap
    whatever anything something nothing it that this you him her them""".split()
)
_EN_NAME_RE = re.compile(
    r"^(?:my\s+name\s+is|my\s+name's|the\s+name's|i(?:'m|\s+am)\s+called|i(?:'m|\s+am)\s+named"
    r"|(?P<nick>i\s+go\s+by|people\s+call\s+me|everyone\s+calls\s+me|my\s+friends\s+call\s+me))\s+(?P<name>.+)$",
    _I,
)
_EN_GREET_NAME_RE = re.compile(r"^(?:[Ii]'m|[Ii]\s+am|[Tt]his\s+is|[Ii]t's)\s+(?P<name>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)$")
_ZH_NAME_RE = re.compile(r"^我(?:的名字|名字)?(?:叫做|叫|是)(?P<name>.+)$")
_ZH_NAME_BAD_RE = re.compile(r"[了过着的你他她它人车外卖不很在是吗呢吧啊个一]")


def _valid_en_name(name: str) -> bool:
    words = name.split()
    if not 1 <= len(words) <= 3:
        return False
    if _CJK_RE.search(name):
        return len(name) <= 6 and all(_CJK_RE.match(c) for c in name)
    return all(_NAME_WORD_RE.fullmatch(w) and w.lower() not in _NAME_STOP
               for w in words)


def _valid_zh_name(name: str) -> bool:
    if not 1 <= len(name) <= 8 or re.search(r"[\s,，]", name):
        return False
    if _CJK_RE.match(name):
        return len(name) <= 5 and not _ZH_NAME_BAD_RE.search(name) and all(_CJK_RE.match(c) for c in name)
    return _valid_en_name(name)


def _name(s: str, ctx: _Ctx) -> list[Candidate] | None:
    if ctx.lang == "zh":
        m = _ZH_NAME_RE.match(s)
        if m is None or (m.group(0).startswith("我是") and not ctx.greeted):
            return None
        name = m.group("name").strip()
        if not _valid_zh_name(name):
            return None
        return [_mk(ctx, Kind.FACT, _zh_third(s), "fact:name", _value(name), "用户的名字", entities=[name])]
    m = _EN_NAME_RE.match(s)
    nick = bool(m and m.group("nick"))
    if m is None and ctx.greeted:
        m = _EN_GREET_NAME_RE.match(s)
    if m is None:
        return None
    name = _cut(m.group("name"))
    if not _valid_en_name(name):
        return None
    if nick:
        return [_mk(ctx, Kind.PREFERENCE, f"User goes by {name}.", "preference:nickname", _value(name),
                    "how the user is called", polarity=1, entities=[name])]
    return [_mk(ctx, Kind.FACT, f"User's name is {name}.", "fact:name", _value(name), "user's name",
                entities=[name])]


# --------------------------------------------------------------------------- preferences

_EN_FAV_RE = re.compile(
    r"^my\s+(?:(?:all[- ]time|absolute|very|current|personal)\s+)?(?P<fav>favou?rite|fave|fav)\s+"
    r"(?P<x>[a-z][a-z -]{0,30}?)\s+(?:is|are|'s|has\s+to\s+be)\s+(?P<y>.+)$",
    _I,
)
_EN_FAV2_RE = re.compile(r"^(?P<y>.+?)\s+(?:is|are)\s+my\s+(?:all[- ]time\s+)?(?:favou?rite|fave)\s+(?P<x>[a-z][a-z -]{0,30})$", _I)
_EN_PREF_RE = re.compile(
    rf"^i\s+(?P<neg>don't|do\s+not|dont)?\s*{_EN_ADV}"
    r"(?P<verb>like|love|enjoy|adore|prefer|hate|dislike|detest|loathe|despise|can't\s+stand|cannot\s+stand"
    r"|can\s+not\s+stand|can't\s+bear|care\s+for)\s+(?P<obj>.+)$",
    _I,
)
_EN_PREF2_RE = re.compile(
    r"^i(?:'m|\s+am)\s+(?P<neg>not\s+)?(?:(?:really|so|totally|also|even|that|very|quite|super|such)\s+)*"
    r"(?P<verb>(?:a\s+)?(?:(?:big|huge|massive|real|great)\s+)?fan\s+of|into|fond\s+of|obsessed\s+with"
    r"|crazy\s+about|passionate\s+about|keen\s+on)\s+(?P<obj>.+)$",
    _I,
)
_EN_NEG_VERBS = frozenset(("hate", "dislike", "detest", "loathe", "despise", "can't stand", "cannot stand",
                           "can not stand", "can't bear"))
_EN_PREFER_SPLIT_RE = re.compile(r"\s+(?:over|rather\s+than|instead\s+of|more\s+than|to)\s+", _I)
_FAV_CANON = {"color": "colour", "colors": "colour", "colours": "colour", "颜色": "colour",
              "食物": "food", "菜": "food", "电影": "movie", "书": "book", "歌": "song", "歌曲": "song",
              "运动": "sport", "动物": "animal", "城市": "city", "饮料": "drink", "水果": "fruit",
              "乐队": "band", "歌手": "singer", "季节": "season", "游戏": "game", "作家": "author",
              "演员": "actor", "花": "flower", "国家": "country", "编程语言": "programming_language",
              "语言": "language", "电视剧": "tv_show", "节目": "show", "咖啡": "coffee", "茶": "tea",
              "movies": "movie", "films": "movie", "film": "movie"}
_ZH_FAV_RE = re.compile(r"^我(?:最喜欢|最爱|最喜爱|最中意)的(?P<x>.{1,8}?)(?:是|叫|为)(?P<y>.+)$")
_ZH_PREF_RE = re.compile(
    r"^我(?P<adv>(?:也|还|还是|一直|向来|从来|特别|非常|很|超级|超|最|比较|挺|蛮|真的|真|更|就|本来就|都|一点都|一点也|实在|确实|完全|根本)*)"
    r"(?P<verb>更喜欢|比较喜欢|喜欢|喜爱|热爱|爱好|爱|偏好|偏爱|钟爱|迷恋|讨厌|厌恶|反感|受不了|不喜欢|不爱|不太喜欢|不怎么喜欢"
    r"|恨|忍不了|不能接受|希望)(?P<obj>.+)$"
)
_ZH_NEG_VERBS = frozenset("讨厌 厌恶 反感 受不了 不喜欢 不爱 不太喜欢 不怎么喜欢 恨 忍不了 不能接受".split())
_ZH_OBJ_BAD_RE = re.compile(r"^(?:[你您他她它这那哪谁上过了着的得]|什么|自己|大家|人家)")
_ZH_PREFER_SPLIT_RE = re.compile(r"(?:而不是|胜过|多过|多于|超过|比起)")


def _favourite(s: str, ctx: _Ctx) -> list[Candidate] | None:
    if ctx.lang == "zh":
        m = _ZH_FAV_RE.match(s)
        if m is None:
            return None
        x, y = m.group("x"), _zh_obj(m.group("y"))
        if not y or len(y) > 20 or _ZH_OBJ_BAD_RE.match(y):
            return None
        key = "preference:favourite_" + (_FAV_CANON.get(x) or _slug(x))
        return [_mk(ctx, Kind.PREFERENCE, _zh_third(s), key, _value(y), "最喜欢的事物", polarity=1,
                    entities=_entities(y))]
    m = _EN_FAV_RE.match(s)
    if m is None:
        m = _EN_FAV2_RE.match(s)
        if m is None:
            return None
        y = m.group("y").strip()
        content = f"User's favourite {m.group('x').strip()} is {y}."
    else:
        y = _trim_fillers(_cut(m.group("y"))).strip()
        content = None
    x = m.group("x").strip().lower()
    if not y or y.split()[0].lower() in _PRONOUN_START or len(y.split()) > 8:
        return None
    canon = _FAV_CANON.get(x) or _slug(x)
    if content is None:
        content = _en_third(s[: m.start("y")] + y)
    return [_mk(ctx, Kind.PREFERENCE, content, "preference:favourite_" + canon, _value(y),
                f"favourite {x}", polarity=1, entities=_entities(y))]


def _zh_obj(obj: str) -> str:
    obj = _ZH_PARTICLES_RE.sub("", obj.strip())
    return obj[:-1].strip() if len(obj) > 2 and obj[-1] in "了的" else obj


def _preference(s: str, ctx: _Ctx) -> list[Candidate] | None:
    if ctx.lang == "zh":
        return _zh_preference(s, ctx)
    m = _EN_PREF_RE.match(s)
    if m:
        verb = _WS_RE.sub(" ", m.group("verb").lower())
        neg_verb = verb in _EN_NEG_VERBS
        if m.group("neg"):
            if neg_verb or verb == "prefer":
                return None  # "I don't hate it": too subtle to file
            polarity = -1
        elif verb == "care for":
            return None
        else:
            polarity = -1 if neg_verb else 1
    else:
        m = _EN_PREF2_RE.match(s)
        if m is None:
            return None
        verb = "like"
        polarity = -1 if m.group("neg") else 1
    obj = _trim_fillers(_cut(m.group("obj"))).strip()
    words = obj.split()
    if not words or len(words) > 8 or words[0].lower() in _PRONOUN_START:
        return None
    lowered = obj.lower()
    if _CONTEXT_WORDS.intersection(lowered.split()) or _EN_TRANSIENT_RE.search(s):
        return None
    key_obj = obj
    if verb == "prefer" and not lowered.startswith("to "):
        key_obj = _EN_PREFER_SPLIT_RE.split(obj, 1)[0]
    slug = _slug(key_obj, consume=True)
    if not slug:
        return None
    if polarity < 0:
        content = f"User dislikes {obj}."
    elif verb in ("like", "love", "enjoy", "adore", "prefer"):
        content = f"User {_third(verb)} {obj}."
    else:
        content = f"User likes {obj}."
    return [_mk(ctx, Kind.PREFERENCE, content, "preference:" + slug, "like" if polarity > 0 else "dislike",
                f"{'likes' if polarity > 0 else 'dislikes'} {key_obj}", polarity=polarity,
                entities=_entities(key_obj))]


def _zh_preference(s: str, ctx: _Ctx) -> list[Candidate] | None:
    m = _ZH_PREF_RE.match(s)
    if m is None:
        return None
    verb, adv = m.group("verb"), m.group("adv")
    obj = _zh_obj(_ZH_CUT_RE.split(m.group("obj"), 1)[0])
    if not obj or len(obj) > 20 or _ZH_OBJ_BAD_RE.match(obj) or _ZH_TRANSIENT_RE.search(s):
        return None
    negative = verb in _ZH_NEG_VERBS
    if verb == "希望" and (re.match(r"^[你您]", obj) or len(obj) > 15):
        return None  # a request to the assistant, unless standing (handled as an instruction)
    if negative and "不" in adv:
        return None
    key_obj = _ZH_PREFER_SPLIT_RE.split(obj, 1)[0] or obj
    slug = _slug(key_obj, consume=True)
    if not slug:
        return None
    polarity = -1 if negative else 1
    content = _zh_third("我" + adv + verb + obj)
    return [_mk(ctx, Kind.PREFERENCE, content, "preference:" + slug, "dislike" if negative else "like",
                f"{verb}{key_obj}", polarity=polarity, entities=_entities(key_obj))]


_ZH_CUT_RE = re.compile(r"[，,；;。]|因为|但是|不过|所以")


# --------------------------------------------------------------------------- facts (English)

_PLACE_BLACKLIST = frozenset((
    "the moment", "fear", "denial", "a bubble", "my head", "the past", "the present", "the future",
    "peace", "hope", "sin", "hell", "heaven", "a dream", "my dreams", "harmony", "here", "there",
))
_EN_LOC_RE = re.compile(
    rf"^i(?:\s+{_EN_ADV}(?P<v1>live|reside|moved|relocated)\s+(?:back\s+)?(?:in|to)"
    rf"|(?:'m|\s+am)\s+{_EN_ADV}(?P<v2>living|based|residing|located)\s+(?:in|out\s+of)"
    rf"|(?:'ve|\s+have)\s+{_EN_ADV}(?P<v3>moved|relocated)\s+(?:back\s+)?to)\s+(?P<place>.+)$",
    _I,
)
_EN_FROM_RE = re.compile(
    r"^i(?:(?:'m|\s+am)\s+(?:originally\s+)?(?P<from>from)|\s+(?:grew\s+up|was\s+raised|was\s+born\s+and\s+raised)\s+in"
    r"|\s+was\s+born\s+in)\s+(?P<place>.+)$",
    _I,
)
_EN_WORK_RE = re.compile(
    rf"^i(?:\s+{_EN_ADV}(?:work|intern)|(?:'m|\s+am)\s+{_EN_ADV}(?:working|interning|employed)"
    r"|(?:'ve|\s+have)\s+been\s+working)\s+(?P<prep>at|for)\s+(?P<org>.+?)"
    r"(?:\s+as\s+(?P<det>a|an)\s+(?P<job>.+))?$",
    _I,
)
_ORG_BLACKLIST = frozenset(
    "home night nights night shift the moment myself a living fun free money my family weekends "
    "a while the weekend the weekends it that this".split(" ")
)
_JOB_HEADS = frozenset(
    """engineer developer programmer coder doctor physician surgeon nurse teacher student lawyer
    attorney designer manager chef cook baker barista artist writer author novelist poet
    scientist researcher analyst consultant accountant architect professor lecturer pilot
    dentist pharmacist photographer journalist reporter editor musician singer dancer actor
    actress entrepreneur founder cofounder co-founder ceo cto cfo coo vp intern freelancer
    veterinarian vet therapist psychologist psychiatrist counselor counsellor firefighter
    officer soldier farmer mechanic electrician plumber carpenter waiter waitress cashier clerk
    librarian translator interpreter economist banker trader investor realtor homemaker
    athlete coach trainer tutor postdoc paramedic technician administrator sysadmin devops
    marketer salesperson recruiter secretary assistant director executive producer filmmaker
    animator illustrator copywriter blogger youtuber streamer podcaster retiree pensioner
    housewife househusband driver nanny caregiver pharmacologist biologist chemist physicist
    mathematician statistician historian linguist sociologist philosopher judge paralegal
    auditor strategist specialist consultant undergrad undergraduate graduate phd candidate
    surveyor geologist optometrist midwife tailor hairdresser stylist""".split()
)
_JOB_BAD_WORDS = frozenset("bit little lot fan mess kind sort tad huge total big fan".split())
_DIET_RE = re.compile(
    rf"^i(?:'m|\s+am)\s+{_EN_ADV}(?:(?:a|an)\s+)?(?:strict\s+)?(?P<diet>vegetarian|vegan|pescatarian|pescetarian)$", _I
)
_ALLERGY_RE = re.compile(
    rf"^i(?:'m|\s+am)\s+{_EN_ADV}(?:(?:very|severely|highly|deathly|mildly|slightly|seriously)\s+)?allergic\s+to\s+(?P<obj>.+)$",
    _I,
)
_EN_JOB_RE = re.compile(
    rf"^i(?:(?:'m|\s+am)\s+{_EN_ADV}|\s+{_EN_ADV}work\s+as\s+)(?P<det>a|an)\s+(?P<job>[a-z][a-z' -]*?)"
    r"(?:\s+(?P<prep>at|for|in|with)\s+(?P<org>.+))?$",
    _I,
)
_RELATIONS = {
    "dog": "dog", "cat": "cat", "pet": "pet", "puppy": "dog", "kitten": "cat", "wife": "wife",
    "husband": "husband", "partner": "partner", "spouse": "spouse", "son": "son",
    "daughter": "daughter", "kid": "child", "child": "child", "baby": "baby", "brother": "brother",
    "sister": "sister", "mom": "mother", "mum": "mother", "mother": "mother", "dad": "father",
    "father": "father", "girlfriend": "girlfriend", "boyfriend": "boyfriend", "boss": "boss",
    "manager": "manager", "best friend": "best_friend", "grandma": "grandmother",
    "grandmother": "grandmother", "grandpa": "grandfather", "grandfather": "grandfather",
    "uncle": "uncle", "aunt": "aunt", "cousin": "cousin", "fiance": "fiance", "fiancé": "fiance",
    "fiancee": "fiancee", "fiancée": "fiancee", "roommate": "roommate", "cofounder": "cofounder",
    "co-founder": "cofounder", "parrot": "parrot", "rabbit": "rabbit", "hamster": "hamster",
    "horse": "horse", "car": "car",
}
_ATTRS = {
    "name": "name", "birthday": "birthday", "birth date": "birthday", "date of birth": "birthday",
    "bday": "birthday", "email": "email", "email address": "email", "e-mail": "email",
    "phone": "phone", "phone number": "phone", "cell": "phone", "mobile number": "phone",
    "address": "address", "home address": "address", "hometown": "hometown",
    "home town": "hometown", "age": "age", "job": "occupation", "occupation": "occupation",
    "profession": "occupation", "job title": "occupation", "major": "major",
    "nationality": "nationality", "timezone": "timezone", "time zone": "timezone",
    "native language": "native_language", "first language": "native_language",
    "mother tongue": "native_language", "pronouns": "pronouns", "blood type": "blood_type",
    "star sign": "zodiac_sign", "zodiac sign": "zodiac_sign", "username": "username",
    "github": "github", "github username": "github", "github handle": "github",
    "website": "website", "company": "employer", "employer": "employer", "school": "school",
    "university": "school", "college": "school", "alma mater": "school", "nickname": "nickname",
    "middle name": "middle_name", "last name": "last_name", "surname": "last_name",
    "family name": "last_name", "first name": "name", "full name": "name", "height": "height",
    "shoe size": "shoe_size", "anniversary": "anniversary", "wedding anniversary": "anniversary",
    "dietary restriction": "diet", "diet": "diet", "religion": "religion", "mbti": "mbti",
    "personality type": "mbti", "handle": "username",
}
_REL_RE = "|".join(sorted((re.escape(r) for r in _RELATIONS), key=len, reverse=True))
_ATTR_RE = "|".join(sorted((re.escape(a) for a in _ATTRS), key=len, reverse=True))
_EN_MY_REL_ATTR_RE = re.compile(rf"^(?P<rel>{_REL_RE})(?:'s|s'|')?\s+(?P<attr>{_ATTR_RE})$", _I)
_EN_MY_RE = re.compile(r"^my\s+(?P<attr>[a-z][\w' -]{0,40}?)\s+(?P<verb>is|are)\s+(?P<val>.+)$", _I)
_EN_MY_S_RE = re.compile(r"^my\s+(?P<attr>[a-z][\w-]{0,20})'s\s+(?P<val>(?!name\b)(?!birthday\b).+)$", _I)
_HAS = {
    "dog": "dog", "dogs": "dog", "puppy": "dog", "puppies": "dog", "cat": "cat", "cats": "cat",
    "kitten": "cat", "kittens": "cat", "parrot": "parrot", "rabbit": "rabbit", "bunny": "rabbit",
    "hamster": "hamster", "goldfish": "fish", "fish": "fish", "bird": "bird", "birds": "bird",
    "horse": "horse", "turtle": "turtle", "snake": "snake", "lizard": "lizard", "pet": "pet",
    "pets": "pet", "kid": "children", "kids": "children", "child": "children",
    "children": "children", "son": "son", "sons": "son", "daughter": "daughter",
    "daughters": "daughter", "brother": "brother", "brothers": "brother", "sister": "sister",
    "sisters": "sister", "twin": "twin", "wife": "wife", "husband": "husband",
    "partner": "partner", "girlfriend": "girlfriend", "boyfriend": "boyfriend", "car": "car",
    "bike": "bike", "bicycle": "bike", "motorcycle": "motorcycle", "house": "house",
    "apartment": "apartment", "degree": "degree", "phd": "degree", "masters": "degree",
    "master's": "degree", "bachelor's": "degree",
}
_EN_HAVE_RE = re.compile(
    rf"^i(?:\s+{_EN_ADV}(?:have|own)|'ve\s+got|\s+have\s+got)\s+"
    r"(?P<obj>(?:a|an|one|two|three|four|five|six|\d+)\s+.+)$",
    _I,
)
_NAMED_RE = re.compile(r"\s+(?:named|called)\s+(?P<name>.+)$", _I)


def _en_fact(s: str, ctx: _Ctx) -> list[Candidate] | None:
    low = s[:2].lower()
    if low.startswith("my"):
        return _en_my(s, ctx)
    if not low.startswith("i"):
        return None
    for fn in (_en_location, _en_from, _en_work, _en_diet, _en_allergy, _en_job, _en_have):
        found = fn(s, ctx)
        if found is not None:
            return found
    return None


def _place_ok(place: str) -> bool:
    words = place.split()
    return bool(words) and len(words) <= 6 and place.lower() not in _PLACE_BLACKLIST \
        and words[0].lower() not in _PRONOUN_START and not place.isdigit()


def _en_place(raw: str) -> str:
    place = _trim_time(_cut(raw)).strip()
    return _trim_fillers(place).strip()


def _en_location(s: str, ctx: _Ctx) -> list[Candidate] | None:
    m = _EN_LOC_RE.match(s)
    if m is None:
        return None
    place = _en_place(m.group("place"))
    if not _place_ok(place):
        return []
    verb = (m.group("v1") or m.group("v2") or m.group("v3")).lower()
    content = {
        "live": f"User lives in {place}.", "reside": f"User lives in {place}.",
        "living": f"User lives in {place}.", "residing": f"User lives in {place}.",
        "based": f"User is based in {place}.", "located": f"User is based in {place}.",
        "moved": f"User moved to {place}.", "relocated": f"User relocated to {place}.",
    }[verb]
    moved = verb in ("moved", "relocated")
    return [_mk(ctx, Kind.FACT, content, "fact:location", _value(place), f"where the user lives ({verb})",
                entities=_entities(place), valid_from=ctx.now if moved else None)]


def _en_from(s: str, ctx: _Ctx) -> list[Candidate] | None:
    m = _EN_FROM_RE.match(s)
    if m is None:
        return None
    place = _en_place(m.group("place"))
    if not _place_ok(place) or re.search(r"\d", place):
        return []
    content = _sentence(_en_third(s[: m.start("place")] + place))
    return [_mk(ctx, Kind.FACT, content, "fact:hometown", _value(place), "where the user is from",
                entities=_entities(place))]


def _en_work(s: str, ctx: _Ctx) -> list[Candidate] | None:
    m = _EN_WORK_RE.match(s)
    if m is None:
        return None
    org = _trim_time(_cut(m.group("org"))).strip()
    org = re.split(r"\s+for\s+(?:\d|a\b|an\b|about|over|almost|nearly|the\s+past|the\s+last|years|months)", org, 1, flags=_I)[0]
    if not org or org.lower() in _ORG_BLACKLIST or len(org.split()) > 6 or org.split()[0].lower() in _PRONOUN_START:
        return []
    prep = m.group("prep").lower()
    out = [_mk(ctx, Kind.FACT, f"User works {prep} {org}.", "fact:employer", _value(org), "user's employer",
               entities=_entities(org))]
    job = m.group("job")
    if job:
        job = _cut(job)
        if _job_ok(job):
            out.append(_mk(ctx, Kind.FACT, f"User works as {_article(job)} {job}.", "fact:occupation",
                           _value(job), "user's occupation", entities=[]))
    return out


def _job_ok(job: str) -> bool:
    words = job.lower().split()
    if not words or len(words) > 4 or any(w in _JOB_BAD_WORDS for w in words):
        return False
    return words[-1] in _JOB_HEADS


def _en_job(s: str, ctx: _Ctx) -> list[Candidate] | None:
    m = _EN_JOB_RE.match(s)
    if m is None:
        return None
    job = _trim_fillers(m.group("job")).strip()
    if not _job_ok(job):
        return None
    det = m.group("det").lower()
    verb_is = "works as" if re.search(r"\bwork\s+as\b", s[: m.start("det")], _I) else "is"
    out = [_mk(ctx, Kind.FACT, f"User {verb_is} {det} {job}.", "fact:occupation", _value(job),
               "user's occupation")]
    prep, org = (m.group("prep") or "").lower(), m.group("org")
    if org and prep in ("at", "for"):
        org = _trim_time(_cut(org)).strip()
        if org and org.lower() not in _ORG_BLACKLIST and len(org.split()) <= 6:
            if job.lower().split()[-1] == "student":
                out.append(_mk(ctx, Kind.FACT, f"User studies at {org}.", "fact:school", _value(org),
                               "user's school", entities=_entities(org)))
            else:
                out.append(_mk(ctx, Kind.FACT, f"User works {prep} {org}.", "fact:employer", _value(org),
                               "user's employer", entities=_entities(org)))
    return out


def _en_diet(s: str, ctx: _Ctx) -> list[Candidate] | None:
    m = _DIET_RE.match(s)
    if m is None:
        return None
    diet = m.group("diet").lower().replace("pescetarian", "pescatarian")
    return [_mk(ctx, Kind.FACT, f"User is {diet}.", "fact:diet", diet, "user's diet")]


def _en_allergy(s: str, ctx: _Ctx) -> list[Candidate] | None:
    m = _ALLERGY_RE.match(s)
    if m is None:
        return None
    obj = _trim_fillers(_cut(m.group("obj"))).strip()
    slug = _slug(obj)
    if not slug or obj.split()[0].lower() in _PRONOUN_START:
        return []
    return [_mk(ctx, Kind.FACT, f"User is allergic to {obj}.", "fact:allergy_" + slug, _value(obj),
                "user's allergy", entities=_entities(obj))]


def _en_have(s: str, ctx: _Ctx) -> list[Candidate] | None:
    m = _EN_HAVE_RE.match(s)
    if m is None:
        return None
    obj = _trim_fillers(_cut(m.group("obj"))).strip()
    name = None
    nm = _NAMED_RE.search(obj)
    if nm:
        name, obj = nm.group("name").strip(), obj[: nm.start()].strip()
    words = [w.lower() for w in obj.split()]
    canon = next((_HAS[w] for w in words[1:5] if w in _HAS), None)
    if canon is None or _EN_TRANSIENT_RE.search(s):
        return None
    thing = " ".join(obj.split()[1:])
    out = [_mk(ctx, Kind.FACT, f"User has {obj}" + (f" named {name}." if name else "."), "fact:has_" + canon,
               _value(obj if not words[0] in ("a", "an") else thing), f"the user has {thing}",
               entities=_entities(thing))]
    if name and _valid_en_name(name) and words[0] in ("a", "an", "one"):
        out.append(_mk(ctx, Kind.FACT, f"User's {thing} is named {name}.", f"fact:{canon}_name", _value(name),
                       f"name of the user's {thing}", entities=[name]))
    return out


def _en_my(s: str, ctx: _Ctx) -> list[Candidate] | None:
    m = _EN_MY_RE.match(s)
    if m is None:
        m = _EN_MY_S_RE.match(s)
        if m is None:
            return None
    attr = _WS_RE.sub(" ", m.group("attr").lower().strip())
    shown = _trim_fillers(_cut(m.group("val"))).strip()
    val = shown
    if not val or len(val.split()) > 8 or val.split()[0].lower() in _PRONOUN_START:
        return None
    key = None
    named = re.match(r"^(?:called|named)\s+(?P<n>.+)$", val, _I)
    ra = _EN_MY_REL_ATTR_RE.match(attr)
    if ra:
        key = f"fact:{_RELATIONS[ra.group('rel').lower()]}_{_ATTRS[ra.group('attr').lower()]}"
    elif attr in _RELATIONS and named:
        val = named.group("n").strip()
        key = f"fact:{_RELATIONS[attr]}_name"
        if not _valid_en_name(val):
            return None
    elif attr in _ATTRS:
        key = "fact:" + _ATTRS[attr]
        if key == "fact:name" and not _valid_en_name(val):
            return None
    if key is None:
        return None
    if key.endswith(("birthday", "anniversary")):
        val = re.sub(r"^on\s+", "", val, flags=_I)
    content = _en_third(s[: m.start("val")] + shown)
    return [_mk(ctx, Kind.FACT, content, key, _value(val), f"user's {attr}",
                entities=_entities(val) if key.endswith("name") else [])]


# --------------------------------------------------------------------------- facts (Chinese)

_ZH_LOC_RE = re.compile(
    r"^我(?:现在|目前|一直|还|也|已经|刚|刚刚|最近|去年|前年|今年|上个月|上周|终于)*"
    r"(?:(?P<live>住在|住|定居在|定居于|定居|生活在)|(?P<move>搬到了|搬到|搬去了|搬去|搬来了|搬来|搬家到|搬回了|搬回到|搬回))"
    r"(?P<place>.+)$"
)
_ZH_LOC2_RE = re.compile(r"^我(?:现在|目前|一直)*在(?P<place>.{2,12}?)(?:生活|定居|安家)(?:了)?$")
_ZH_PLACE_TAIL_RE = re.compile(r"(?:去了|来了|住了|了|啦|呢|哦|啊|住|生活|这边|那边|定居)+$")
_ZH_PLACE_BAD = frozenset("家 家里 这里 那里 这儿 那儿 酒店 宾馆 医院 附近 楼上 楼下 隔壁 哪 外面 公司 学校".split())
_ZH_WORK_RE = re.compile(
    r"^我(?:现在|目前|一直|也|还|已经|在职)*在(?P<org>[^，,]{1,20}?)"
    r"(?:(?P<verb>工作|上班|任职|实习|打工)|(?:当|做|担任)(?:一名|一个|一位|个)?(?P<job>.{1,10}?))(?:了)?$"
)
_ZH_ORG_BAD = frozenset("家 家里 这里 那里 外地 国外 公司 晚上 周末 办公室 现在 这 那 哪里 单位".split())
_ZH_JOBS = frozenset(
    """医生 老师 教师 学生 护士 律师 会计 司机 警察 销售 老板 翻译 编辑 记者 作家 演员 歌手 教授 主管 总监
    经理 博士 硕士 运营 画家 专家 厨师 农民 工人 商人 军人 公务员 程序员 工程师 设计师 产品经理 研究员 科学家
    创业者 自由职业者 摄影师 建筑师 分析师 博士生 研究生 大学生 高中生 初中生 小学生 实习生 顾问 咨询师 药剂师
    牙医 兽医 飞行员 数据科学家 会计师 审计师 律师助理 保安 快递员 外卖员 店长 主播 博主 全职妈妈 家庭主妇 退休人员
    导演 编剧 模特 舞者 音乐家 艺术家 企业家 投资人 码农 前端 后端 全栈 架构师 测试 产品 客服 HR 人事 秘书 助理""".split()
)
_ZH_JOB_SUFFIX_RE = re.compile(r"(?:师|员|者|家|生)$")
_ZH_JOB_BAD_RE = re.compile(r"[了不很在是的吗呢吧说我你他她]")
_ZH_JOB_RE = re.compile(r"^我(?:现在|目前|也|还|其实)*是(?:一名|一个|一位|个|名|位)?(?P<job>.+)$")
_ZH_ORG_JOB_RE = re.compile(r"^我(?:现在|目前|也|还)*是(?P<org>[^，,的]{2,12})的(?:一名|一个|一位)?(?P<job>.{2,10})$")
_ZH_RELATIONS = {
    "猫": "cat", "小猫": "cat", "狗": "dog", "小狗": "dog", "狗狗": "dog", "猫咪": "cat", "宠物": "pet",
    "老婆": "wife", "妻子": "wife", "太太": "wife", "爱人": "spouse", "老公": "husband", "丈夫": "husband",
    "儿子": "son", "女儿": "daughter", "孩子": "child", "哥哥": "older_brother", "弟弟": "younger_brother",
    "姐姐": "older_sister", "妹妹": "younger_sister", "妈妈": "mother", "母亲": "mother", "爸爸": "father",
    "父亲": "father", "女朋友": "girlfriend", "男朋友": "boyfriend", "老板": "boss", "领导": "boss",
    "室友": "roommate", "最好的朋友": "best_friend", "朋友": "friend", "车": "car",
}
_ZH_ATTRS = {
    "名字": "name", "生日": "birthday", "邮箱": "email", "电子邮箱": "email", "邮件地址": "email",
    "电话": "phone", "手机": "phone", "手机号": "phone", "手机号码": "phone", "电话号码": "phone",
    "地址": "address", "住址": "address", "老家": "hometown", "家乡": "hometown", "年龄": "age",
    "职业": "occupation", "工作": "occupation", "专业": "major", "星座": "zodiac_sign", "血型": "blood_type",
    "母语": "native_language", "国籍": "nationality", "时区": "timezone", "公司": "employer",
    "学校": "school", "大学": "school", "微信": "wechat", "微信号": "wechat", "昵称": "nickname",
    "小名": "nickname", "身高": "height", "属相": "chinese_zodiac", "生肖": "chinese_zodiac",
    "结婚纪念日": "anniversary", "纪念日": "anniversary",
}
_ZH_REL_RE = "|".join(sorted(_ZH_RELATIONS, key=len, reverse=True))
_ZH_ATTR_RE = "|".join(sorted(_ZH_ATTRS, key=len, reverse=True))
_ZH_MY_RE = re.compile(
    rf"^我的?(?:(?P<rel>{_ZH_REL_RE})的?)?(?P<attr>{_ZH_ATTR_RE})?(?P<verb>叫做|叫|是|为|在)(?P<val>.+)$"
)
_ZH_HAS = {"猫": "cat", "猫咪": "cat", "狗": "dog", "狗狗": "dog", "孩子": "children", "小孩": "children",
           "儿子": "son", "女儿": "daughter", "哥哥": "brother", "弟弟": "brother", "姐姐": "sister",
           "妹妹": "sister", "女朋友": "girlfriend", "男朋友": "boyfriend", "老婆": "wife", "老公": "husband",
           "妻子": "wife", "丈夫": "husband", "车": "car", "汽车": "car", "宠物": "pet", "房子": "house",
           "兔子": "rabbit", "鹦鹉": "parrot", "仓鼠": "hamster"}
_ZH_HAS_RE = re.compile(
    r"^我(?:也|还|现在|家里?)*(?P<verb>有|养了|养着|养)(?P<num>[一二两三四五六七八九十几0-9]+)?"
    r"(?P<clf>只|条|个|辆|台|位|头|匹|套|间)?(?P<obj>[^，,]{1,8}?)(?:叫(?P<name>.{1,6}))?$"
)
_ZH_FROM_RE = re.compile(r"^我(?:来自|老家是|老家在|的老家是|的老家在|是在|是|在)?(?P<place>.{2,8}?)(?P<tail>人|长大的?|出生的?)$")
_ZH_FROM2_RE = re.compile(r"^我(?:来自|出生在|出生于|老家是|老家在)(?P<place>.{2,10})$")
_ZH_ALLERGY_RE = re.compile(r"^我(?:对)?(?P<obj>.{1,10}?)过敏$")
_ZH_DIET_RE = re.compile(r"^我(?:是|一直)?(?:吃素的?|(?P<vegan>纯)?素食(?:主义)?者)$")


def _is_place(word: str) -> bool:
    tags = rjieba.tag(word)
    return bool(tags) and all(t == "ns" for _, t in tags)


def _zh_fact(s: str, ctx: _Ctx) -> list[Candidate] | None:
    if not s.startswith("我"):
        return None
    for fn in (_zh_location, _zh_work, _zh_diet, _zh_from, _zh_job, _zh_my, _zh_has, _zh_allergy):
        found = fn(s, ctx)
        if found is not None:
            return found
    return None


def _zh_location(s: str, ctx: _Ctx) -> list[Candidate] | None:
    m = _ZH_LOC_RE.match(s) or _ZH_LOC2_RE.match(s)
    if m is None:
        return None
    place = _ZH_CUT_RE.split(m.group("place"), 1)[0]
    place = _ZH_PLACE_TAIL_RE.sub("", place).strip()
    if not place or len(place) > 12 or place in _ZH_PLACE_BAD or re.match(r"^[了着过得院校的在]", place):
        return None
    moved = bool(m.groupdict().get("move"))
    return [_mk(ctx, Kind.FACT, _zh_third(s), "fact:location", _value(place), "用户的居住地",
                entities=[place], valid_from=ctx.now if moved else None)]


def _zh_work(s: str, ctx: _Ctx) -> list[Candidate] | None:
    m = _ZH_WORK_RE.match(s)
    if m is None:
        return None
    org = m.group("org").strip()
    if org in _ZH_ORG_BAD or len(org) > 20 or re.match(r"^[这那哪]", org):
        return None
    out = []
    where = _CJK_RE.match(org) and _is_place(org)
    key, what = ("fact:work_location", "用户的工作地点") if where else ("fact:employer", "用户的雇主")
    job = m.group("job")
    content = _zh_third(s) if not job else f"用户在{org}工作"
    out.append(_mk(ctx, Kind.FACT, content, key, _value(org), what, entities=[org]))
    if job and _zh_job_ok(job):
        out.append(_mk(ctx, Kind.FACT, f"用户是{job}", "fact:occupation", _value(job), "用户的职业"))
    return out


def _zh_job_ok(job: str) -> bool:
    if not 1 < len(job) <= 10 or _ZH_JOB_BAD_RE.search(job):
        return False
    if job in _ZH_JOBS:
        return True
    if job.endswith(("家", "生")) and len(job) < 3:
        return False
    return bool(_ZH_JOB_SUFFIX_RE.search(job)) or any(job.endswith(j) for j in _ZH_JOBS if len(j) >= 2)


def _zh_job(s: str, ctx: _Ctx) -> list[Candidate] | None:
    m = _ZH_ORG_JOB_RE.match(s)
    if m and _zh_job_ok(m.group("job")):
        org, job = m.group("org"), m.group("job")
        return [_mk(ctx, Kind.FACT, f"用户是{job}", "fact:occupation", _value(job), "用户的职业"),
                _mk(ctx, Kind.FACT, f"用户在{org}工作", "fact:employer", _value(org), "用户的雇主", entities=[org])]
    m = _ZH_JOB_RE.match(s)
    if m is None:
        return None
    job = _zh_obj(m.group("job"))
    if not _zh_job_ok(job):
        return None
    return [_mk(ctx, Kind.FACT, _zh_third(s), "fact:occupation", _value(job), "用户的职业")]


def _zh_diet(s: str, ctx: _Ctx) -> list[Candidate] | None:
    m = _ZH_DIET_RE.match(s)
    if m is None:
        return None
    diet = "纯素" if m.group("vegan") else "素食"
    return [_mk(ctx, Kind.FACT, _zh_third(s), "fact:diet", diet, "用户的饮食")]


def _zh_from(s: str, ctx: _Ctx) -> list[Candidate] | None:
    m = _ZH_FROM2_RE.match(s)
    if m is None:
        m = _ZH_FROM_RE.match(s)
        if m is None or not _is_place(m.group("place")):
            return None
    place = _ZH_PLACE_TAIL_RE.sub("", m.group("place")).strip()
    if not place or re.search(r"\d", place) or place in _ZH_PLACE_BAD:
        return None
    return [_mk(ctx, Kind.FACT, _zh_third(s), "fact:hometown", _value(place), "用户的家乡", entities=[place])]


def _zh_my(s: str, ctx: _Ctx) -> list[Candidate] | None:
    m = _ZH_MY_RE.match(s)
    if m is None:
        return None
    rel, attr, verb = m.group("rel"), m.group("attr"), m.group("verb")
    val = _zh_obj(_ZH_CUT_RE.split(m.group("val"), 1)[0])
    if not val or len(val) > 30 or _ZH_OBJ_BAD_RE.match(val):
        return None
    if verb == "在" and attr not in ("老家", "家乡"):
        return None
    if rel and not attr:
        if verb not in ("叫", "叫做") or not _valid_zh_name(val):
            return None
        key = f"fact:{_ZH_RELATIONS[rel]}_name"
    elif attr:
        if not s.startswith("我的") and not rel and attr not in ("名字",):
            return None
        field = _ZH_ATTRS[attr]
        key = f"fact:{_ZH_RELATIONS[rel]}_{field}" if rel else f"fact:{field}"
    else:
        return None
    return [_mk(ctx, Kind.FACT, _zh_third(s), key, _value(val), f"用户的{rel or ''}{attr or '名字'}",
                entities=[val] if key.endswith("name") else [])]


def _zh_has(s: str, ctx: _Ctx) -> list[Candidate] | None:
    m = _ZH_HAS_RE.match(s)
    if m is None:
        return None
    obj = m.group("obj")
    canon = next((v for k, v in sorted(_ZH_HAS.items(), key=lambda kv: -len(kv[0])) if obj.endswith(k)), None)
    if canon is None or len(obj) > 6:
        return None
    if not (m.group("num") or m.group("clf") or obj in _ZH_HAS):
        return None
    value = (m.group("num") or "") + (m.group("clf") or "") + obj
    out = [_mk(ctx, Kind.FACT, _zh_third(s if not m.group("name") else s[: m.start("name") - 1]),
               "fact:has_" + canon, _value(value), "用户拥有的", entities=[obj])]
    name = m.group("name")
    if name and _valid_zh_name(name):
        out.append(_mk(ctx, Kind.FACT, f"用户的{obj}叫{name}", f"fact:{canon}_name", _value(name),
                       f"用户的{obj}的名字", entities=[name]))
    return out


def _zh_allergy(s: str, ctx: _Ctx) -> list[Candidate] | None:
    m = _ZH_ALLERGY_RE.match(s)
    if m is None:
        return None
    obj = m.group("obj")
    if _ZH_OBJ_BAD_RE.match(obj):
        return None
    return [_mk(ctx, Kind.FACT, _zh_third(s), "fact:allergy_" + _slug(obj), _value(obj), "用户的过敏原",
                entities=[obj])]


# --------------------------------------------------------------------------- tasks

_EN_MODAL_RE = re.compile(
    r"^i\s*(?:(?:really|still|also|just|definitely|absolutely|seriously|urgently)\s+)*"
    r"(?P<modal>need\s+to|have\s+to|must|'ve\s+got\s+to|have\s+got\s+to|got\s+to|gotta|'m\s+supposed\s+to"
    r"|\s*am\s+supposed\s+to|'m\s+required\s+to|am\s+required\s+to|should|will\s+have\s+to|'ll\s+have\s+to)\s+(?P<rest>.+)$",
    _I,
)
_EN_APPT_RE = re.compile(
    r"^i\s+(?:also\s+)?(?:have|'ve\s+got|have\s+got)\s+(?:a|an|my|the)\s+(?P<thing>(?:[\w'-]+\s+){0,3}?"
    r"(?:meeting|appointment|exam|test|interview|deadline|presentation|call|flight|class|lecture|checkup|check-up"
    r"|surgery|recital|concert|demo|review|standup|stand-up|workshop|conference|trip|party|wedding|session))\s+(?P<rest>.+)$",
    _I,
)
_EN_DEADLINE_RE = re.compile(
    r"^(?:the\s+|my\s+|our\s+)?(?:deadline|due\s+date)\s+(?:for|of|on)\s+(?P<act>.+?)\s+is\s+(?P<rest>.+)$"
    r"|^(?:the\s+|my\s+|our\s+)?(?P<act2>.+?)\s+(?:is|are)\s+due\s+(?P<rest2>.+)$",
    _I,
)
_DET_RE = re.compile(r"^(?:the|my|our)\s+", _I)
_ONBY_RE = re.compile(r"^(?:on|by)\s+", _I)
_NEGATED_RE = re.compile(r"n't\b|\b(?:not|never|no longer)\b", _I)
_EN_HABIT_RE = re.compile(rf"^i\s+{_EN_ADV}(?P<verb>[a-z]+)\b", _I)
_HABIT_BAD_VERBS = frozenset("am feel think was were get seem hope wish want like love hate know guess".split())
_ZH_MODAL_RE = re.compile(r"一定要|必须|需要|得要|应该|记得|要|得")
_ZH_TASK_SUBJECT_RE = re.compile(r"^(?:我(?!们)|每|周|星期|礼拜|今|明|后天|下|这|本|月|年底|\d|[一二三四五六七八九十]+(?:天|个))")
_ZH_DEADLINE_WORD_RE = re.compile(r"的?(?:截止日期|截止时间|截止|deadline|ddl|DDL)(?:是|在|为|到)?")


_DIGIT_RE = re.compile(r"[0-9]")
_EN_DATE_HINTS = ("day", "tonight", "tomorrow", "week", "month", "year", "eod", "eow", "jan", "feb", "mar",
                  "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_EN_REC_HINTS = ("every", "each", "daily", "nightly", "weekly", "monthly", "yearly", "annually", "days")
_ZH_DATE_HINT_RE = re.compile(r"[周星礼天今明月年号日0-9]")


def _task(s: str, ctx: _Ctx) -> list[Candidate] | None:
    return _zh_task(s, ctx) if ctx.lang == "zh" else _en_task(s, ctx)


def _date_suffix(due: datetime | None, t: time | None, zh: bool) -> str:
    if due is None:
        return ""
    label = _due_label(due, t)
    return f"（{label}）" if zh else f" ({label})"


def _en_task(s: str, ctx: _Ctx) -> list[Candidate] | None:
    today = ctx.now.date()
    low = s.lower()
    dm = _EN_DATE_RE.search(s) if _DIGIT_RE.search(low) or any(h in low for h in _EN_DATE_HINTS) else None
    if dm and dm.start() == 0:  # "By Friday, I need to …": put the date last
        s = s[dm.end():].lstrip(" ,") + " " + _lcfirst(dm.group().strip())
        dm = _EN_DATE_RE.search(s)
    rm = _EN_REC_RE.search(s) if any(h in low for h in _EN_REC_HINTS) else None
    if rm and rm.start() == 0:
        s = s[rm.end():].lstrip(" ,") + " " + _lcfirst(rm.group().strip())
        rm = _EN_REC_RE.search(s)
    if not dm and not rm:
        return None
    due = t = None
    if dm:
        d, t = _resolve_en(dm, today)
        due = _due(d, t, ctx.now)
        if due is None:
            dm = None
    rec = wd = None
    if rm:
        rec, wd = _recurrence(rm)
        if wd is not None:
            due = _due(_upcoming(today, wd), t, ctx.now)
    span = rm or dm
    if span is None:
        return None
    m = _EN_MODAL_RE.match(s)
    if m:
        act = _task_act(m.group("rest"), m.start("rest"), span)
        reason = "task with a deadline" if dm else "recurring task"
    elif (m := _EN_APPT_RE.match(s)) is not None:
        act = m.group("thing")
        reason = "appointment"
    elif (m := _EN_DEADLINE_RE.match(s)) is not None:
        act = m.group("act") or m.group("act2")
        if _PRONOUN_START.intersection([act.split()[0].lower()]) or not dm:
            return None
        due_phrase = (m.group("rest") or m.group("rest2")).strip()
        if m.group("act"):
            content = f"User's deadline for {act} is {due_phrase}"
        else:
            content = f"User's {_DET_RE.sub('', act)} is due {_ONBY_RE.sub('', due_phrase)}"
        content = _sentence(content + _date_suffix(due, t, False))
        return [_mk(ctx, Kind.TASK, content, "task:" + _slug(act), None, "deadline stated",
                    due_at=due, recurrence=rec, entities=_entities(act))]
    elif rm and not _NEGATED_RE.search(s) and (m := _EN_HABIT_RE.match(s)) is not None \
            and m.group("verb").lower() not in _HABIT_BAD_VERBS:
        act = _task_act(s[m.start("verb"):], m.start("verb"), span)
        reason = "recurring activity"
    else:
        return None
    act = act.strip(" ,")
    if not act or act.split()[0].lower() in _PRONOUN_START and not reason.startswith("appoint"):
        return None
    body = _en_third(s).rstrip(".")
    content = _sentence(body + ("" if rec else _date_suffix(due, t, False)))
    return [_mk(ctx, Kind.TASK, content, "task:" + _slug(act, limit=5), None, reason,
                due_at=due, recurrence=rec, entities=[])]


def _task_act(rest: str, offset: int, span: re.Match[str]) -> str:
    """The action phrase without its date: "submit the report by Friday" → "submit the report"."""
    a, b = span.start() - offset, span.end() - offset
    if 0 <= a <= len(rest):
        rest = rest[:max(a, 0)] + rest[max(b, 0):]
    rest = _DANGLING_PREP_RE.sub("", rest.strip())
    return _cut(_trim_fillers(rest)) or rest


def _zh_task(s: str, ctx: _Ctx) -> list[Candidate] | None:
    today = ctx.now.date()
    if not _ZH_TASK_SUBJECT_RE.match(s) and not _ZH_DEADLINE_WORD_RE.search(s):
        return None
    if not _ZH_DATE_HINT_RE.search(s) and "每" not in s:
        return None
    rm = _ZH_REC_RE.search(s) if "每" in s or "工作日" in s or "天天" in s else None
    dm = _ZH_DATE_RE.search(s)
    if rm and dm and dm.start() < rm.end() and dm.end() > rm.start():
        dm = None  # "每周五" is a recurrence, not a date
    if not rm and not dm:
        return None
    due = t = None
    if dm:
        d, t = _resolve_zh(dm, today)
        due = _due(d, t, ctx.now)
    rec = None
    if rm:
        rec, wd = _recurrence(rm)
        if wd is not None:
            due = _due(_upcoming(today, wd), t, ctx.now)
    deadline = _ZH_DEADLINE_WORD_RE.search(s)
    modal = _ZH_MODAL_RE.search(s)
    if not (modal or deadline or rm or ctx.relaxed):
        return None
    rest = s
    for span in sorted((x for x in (dm, rm) if x), key=lambda x: -x.start()):
        tail = re.match(r"(?:之前|以前|前|之内|以内|内)", rest[span.end():])
        end = span.end() + (tail.end() if tail else 0)
        start = span.start() - (1 if span.start() > 0 and rest[span.start() - 1] == "在" else 0)
        rest = rest[:start] + rest[end:]
    if deadline:
        act = _ZH_DEADLINE_WORD_RE.sub("", rest)
    else:
        mm = _ZH_MODAL_RE.search(rest)
        act = rest[mm.end():] if mm else rest
    act = _ZH_ACT_LEAD_RE.sub("", act)
    act = _ZH_PARTICLES_RE.sub("", act[:-1] if act[-1:] in ("了", "的") else act).strip(" ,，")
    if len(act) < 2 or _ZH_OBJ_BAD_RE.match(act):
        return None
    body = _zh_third(s, subject=not deadline) if s.startswith("我") or not deadline else "用户的" + _zh_third(s)
    content = body + ("" if rec else _date_suffix(due, t, True))
    return [_mk(ctx, Kind.TASK, content, "task:" + _slug(act, consume=True), None,
                "带截止日期的任务" if dm else "周期性任务", due_at=due, recurrence=rec)]


# --------------------------------------------------------------------------- orchestration

_EN_CLAUSE_SPLIT_RE = re.compile(
    r"\s*[;,]\s*(?:(?:and|but|also|plus|so)\s+)?(?=(?:i|my)\b)|\s+(?:and|but|plus)\s+(?=(?:i|my)\b)", _I
)
_EN_CONTINUE_RE = re.compile(
    r"\s+(?:and|but)\s+(?=(?:also\s+)?(?:work|live|love|like|enjoy|hate|prefer|moved|have|am)\b)", _I
)
_ZH_CLAUSE_SPLIT_RE = re.compile(r"[，,；;]|(?:而且|并且|但是|不过|同时)(?=我)")
_ZH_CONTINUE_RE = re.compile(
    r"^(?:也|还|都|平时|目前|现在|一直)*(?:住在|住|搬到|搬去|在|是|喜欢|爱|讨厌|不喜欢|有|养|叫|今年|最喜欢|来自|老家|对)"
)


def _clauses(s: str, lang: str) -> list[str]:
    if lang == "zh":
        parts = [p.strip() for p in _ZH_CLAUSE_SPLIT_RE.split(s) if p and p.strip()]
        out: list[str] = []
        for p in parts:
            if out and _ZH_DATE_RE.fullmatch(re.sub(r"(?:之前|以前|前)$", "", out[-1])):
                out[-1] += p  # "周五前，要完成报告"
                continue
            if out and out[0].startswith("我") and not p.startswith("我") and _ZH_CONTINUE_RE.match(p):
                p = "我" + p
            out.append(p)
        return out
    low = s.lower()
    if "," not in s and ";" not in s and " and " not in low and " but " not in low and " plus " not in low:
        return [s]
    s = _EN_CONTINUE_RE.sub(" and I ", s)
    parts = [p.strip() for p in _EN_CLAUSE_SPLIT_RE.split(s) if p and p.strip()]
    out = []
    for p in parts:
        if out and _EN_DATE_RE.fullmatch(out[-1]):
            out[-1] = p + " " + _lcfirst(out[-1])
            continue
        out.append(p)
    return out


_GREETING_RE = re.compile(r"^(?:hi|hello|hey|hiya|howdy|good |你好|您好|大家好|嗨|哈喽|哈啰|早上好|晚上好)", _I)


def _strip_fillers(s: str, lang: str) -> tuple[str, bool]:
    rx = _ZH_FILLER_RE if lang == "zh" else _EN_FILLER_RE
    m = rx.match(s)
    if m is None or not m.group():
        if lang != "zh":
            m2 = _ZH_FILLER_RE.match(s)
            if m2 and m2.group():
                return s[m2.end():].strip(), bool(m2.group("greet"))
        return s, False
    greeted = bool(m.group("greet")) or bool(_GREETING_RE.match(m.group()))
    return s[m.end():].strip(), greeted


_CLAUSE_RULES_EN = (_name, _favourite, _preference, _en_fact, _task)
_CLAUSE_RULES_ZH = (_name, _favourite, _preference, _zh_fact, _task)


def _mine_clause(c: str, ctx: _Ctx) -> list[Candidate]:
    for rule in (_CLAUSE_RULES_ZH if ctx.lang == "zh" else _CLAUSE_RULES_EN):
        found = rule(c, ctx)
        if found is not None:
            return found
    return []


def _mine_sentence(sentence: str, ctx: _Ctx, *, explicit: bool = False) -> list[Candidate]:
    s = _WS_RE.sub(" ", sentence).strip() if "  " in sentence or "\n" in sentence or "\t" in sentence \
        else sentence.strip()
    s, greeted = _strip_fillers(s, ctx.lang)
    if not s:
        return []
    ctx = _Ctx(ctx.now, detect_language(s) if not explicit else ctx.lang, ctx.relaxed, greeted)
    if not explicit:
        found = _explicit(s, ctx)
        if found is not None:
            return found
    core = _strip_end(s)
    if not core or _is_question(core, ctx.lang):
        return []
    for rule in (_nickname, _identity, _instruction):
        found = rule(core, ctx)
        if found is not None:
            return found
    if _zh_hedged(core) if ctx.lang == "zh" else _en_hedged(core):
        return []
    out: list[Candidate] = []
    for clause in _clauses(core, ctx.lang):
        out.extend(_mine_clause(_strip_end(clause), ctx))
    return out


def extract_candidates(text: str, *, role: str = "user", now: datetime | None = None) -> list[Candidate]:
    """Candidate memories in one message; only the user's own words are mined.

    `now` (default: current UTC time) anchors relative dates; an aware `now`
    resolves "Friday" in its own time zone, and `due_at` comes back in UTC.
    """
    if role != "user" or not text or not text.strip():
        return []
    now = utcnow() if now is None else (now if now.tzinfo else now.replace(tzinfo=UTC))
    prepared = _prep(text)
    out: list[Candidate] = []
    seen: set[tuple[str | None, str | None, str]] = set()
    for sentence in split_sentences(prepared):
        for c in _mine_sentence(sentence, _Ctx(now, "en")):
            sig = (c.key, c.value, c.content)
            if sig not in seen:
                seen.add(sig)
                out.append(c)
    return out
