"""Guards that run before any rule: small talk, questions, hedges, the here-and-now.

Rather miss than misremember: a question, a hypothetical ("if I lived in
Paris"), an unsure or reported statement ("I think…", "听说…") or a mood of
the moment ("I like it right now") is no fact to file. Greetings and fillers
("oh, btw, …", "对了，…") are stripped so the statement behind them is seen.
"""

from __future__ import annotations

import re

from engram.extract.keys import CJK_RE

_EN_GREETINGS = "hi|hello|hey|hiya|howdy"
_ZH_GREETINGS = "你好|您好|大家好|嗨|哈喽|哈啰|早上好|晚上好"
_EN_FILLER_RE = re.compile(
    rf"^(?:(?P<greet>{_EN_GREETINGS}|good (?:morning|afternoon|evening))\b[\s,!.:;-]*"
    r"|(?:oh|well|so|yeah|yes|yep|ok|okay|hmm+|um+|uh+|ugh+|omg|wow|yikes|welp|meh|man|dude|actually|honestly|btw"
    r"|by the way|also"
    r"|and|but|lol|haha\w*|anyway|anyways|fyi|just fyi|for the record|just so you know|tbh"
    r"|no(?=\s*[,!.:;-]|\s+(?:i|i'm|i've|we|my|it|that|thanks|thank)\b)"  # ("No meetings on Fridays" is said)
    r"|alright|right|oh and|plus|besides"
    # the conversation itself: "Since we last spoke I've…", "Last time we talked, I was…"
    r"|(?:since|when|(?:the\s+)?last\s+time)\s+we\s+(?:last\s+(?:met|saw\s+each\s+other)\b|(?:last\s+)?(?:spoke|talked|chatted|caught\s+up))"
    r"|sorry|oops|wait|correction|i mean|i meant|what i meant (?:was|is)|to be clear|let me correct that)\b[\s,!.:;-]*)+",
    re.I,
)
_ZH_FILLER_RE = re.compile(
    rf"^(?:(?P<greet>{_ZH_GREETINGS})[\s,，!！~。]*"
    r"|(?:对了|其实|另外|还有|顺便说一下|顺便说|顺便|话说|说实话|老实说|然后|而且|不过|哈哈+|嘿"
    r"|不好意思|抱歉|说错了|更正一下|纠正一下|我的意思是|我是说)[\s,，!！~。]*"
    r"|(?:嗯+|哦+|噢+|啊+|对|好的|好吧|好|是的|那个)(?:[\s,，!！~。]+|$)"
    r"|(?:还行|还好|还可以|挺好的?|不错|凑合|一般般|老样子)(?:吧|啊|呀|哈)?[,，!！~。]+)+"
)

_GREETING_RE = re.compile(rf"^(?:{_EN_GREETINGS}|good |{_ZH_GREETINGS})", re.I)

_EN_QUESTION_START = frozenset(
    """what when where who whom whose why how which do does did is are am was were can could
    would should will shall have has had may might isn't aren't doesn't didn't won't wouldn't
    shouldn't couldn't wasn't weren't hasn't haven't""".split()
)

_ZH_QUESTION_WORDS = ("什么", "为什么", "怎么", "哪", "谁", "多少", "几点", "几个", "几天", "几岁", "是不是",
                      "有没有", "能不能", "会不会", "要不要", "对不对", "好不好", "行不行", "可不可以", "是否", "难道")
# an auxiliary that opens a question only before its subject ("Had you …?", "Was Anna …?"); a
# statement that leaves out its "I" opens with it too
_EN_PAST_OPENERS = frozenset(("had", "was"))
_EN_ASKED_SUBJECTS = frozenset("you i he she it we they there anyone anybody someone somebody everyone this that".split())
# a yes-no question asked by saying both: 该不该, 去不去, 买没买
_ZH_A_NOT_A_RE = re.compile(r"([\u4e00-\u9fff])[不没]\1")
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
    "梦见", "做梦", "不一定", "难道", "有一天", "有朝一日", "哪天",
)

EN_TRANSIENT_RE = re.compile(
    r"\b(?:right now|at the moment|today|tonight|this (?:morning|afternoon|evening))\b", re.I
)
# (and what one is busy with at this very moment: "正在吃饭", "在开会")
ZH_TRANSIENT_RE = re.compile(r"今天|今晚|现在|刚才|刚刚|此刻|这会儿|明天|昨天"
                             r"|(?:正在|正|在)(?:吃饭|吃午饭|吃晚饭|吃早饭|睡觉|洗澡|开会|开车|上班的路上|路上|回家的路上|排队|等车|做饭)")


_EN_CLOSING_ENDS = ("btw", "by the way", "fyi", "for the record", "just so you know", "worth", "mention", "mentioned")
# the same asides closing a sentence: "Her name is Lucia by the way.", "I'm lactose intolerant, forgot to mention."
_EN_CLOSING_FILLER_RE = re.compile(
    r"(?:\s*,)?\s+(?:btw|by the way|fyi|just fyi|for the record|just so you know|for what it'?s worth"
    r"|(?:(?:i|oh)\s+)?(?:forgot|meant|should(?:'ve|\s+have)?)\s+(?:to\s+)?mention(?:ed)?(?:\s+(?:that|it|this))?)(?=[\s.!]*$)",
    re.I,
)


# a heading before what the user says about themselves: "About me:", "关于我：", "自我介绍一下："
_HEADING_RE = re.compile(
    r"^(?:(?:(?:a\s+(?:little\s+)?bit|some\s+things?|a\s+few\s+things|(?:some\s+)?quick\s+facts?|(?:some\s+)?fun\s+facts?"
    r"|more)\s+about\s+me|about\s+me|(?:a\s+)?quick\s+intro(?:duction)?|intro(?:duction)?|(?:a\s+)?quick\s+update"
    r"|(?:an\s+)?update|background)\s*[:：-]+"
    r"|(?:关于我(?:自己)?|自我介绍(?:一下)?|(?:先|简单)?介绍一下(?:自己|我自己)?|我的(?:基本)?情况|基本情况|更新一下)\s*[:：，,]+)\s*",
    re.I,
)


def without_heading(s: str) -> str:
    """`s` without a heading before what the user says of themselves ("About me:", "关于我：")."""
    return _HEADING_RE.sub("", s, count=1) if ":" in s[:40] or "：" in s[:40] or "，" in s[:12] else s


def strip_fillers(s: str, lang: str) -> tuple[str, bool]:
    """`s` without its opening fillers ("oh, btw, …") and closing asides ("…, by the way."),
    and whether the fillers included a greeting."""
    if lang != "zh" and s[-40:].lower().rstrip(".! ").endswith(_EN_CLOSING_ENDS):
        s = _EN_CLOSING_FILLER_RE.sub("", s)
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


def is_question(core: str, lang: str) -> bool:
    """`core` has been through `strip_end`."""
    if core.endswith(("?", "？")):
        return True
    if (lang == "zh" or CJK_RE.search(core)) and (
        core.endswith(("吗", "呢", "么")) or any(q in core for q in _ZH_QUESTION_WORDS) or _ZH_A_NOT_A_RE.search(core)
    ):
        return True
    words = core.split(None, 2)
    first = words[0].lower() if words else ""
    if first in _EN_PAST_OPENERS:  # "Had a great time at the wedding", "Was at the beach all day": "I" left out
        return len(words) > 1 and (words[1].lower() in _EN_ASKED_SUBJECTS or words[1][:1].isupper())
    return first in _EN_QUESTION_START


# a question tacked onto a statement, after a dash or a comma: one to the listener ("…, have you
# been?", "… - want to see a pic?", "…, you know?"), a tag ("…, isn't she cute?", "…, didn't I?",
# "… - pretty cool, huh?", "…, right?") or an aside ("…, guess what?", "…, who knew?")
_EN_QUESTION_TAIL_RE = re.compile(
    r"\s*(?:[-–—,;]|\.\.\.)\s*(?=(?:want|wanna|have\s+you|do\s+you|did\s+you|can\s+you|could\s+you|would\s+you|what|how"
    r"|any|anything|ever|you|ya|guess|who|remember"
    r"|(?:is|are|was|were|do|does|did|have|has|had|wo|would|ca|could|should|ai)n[’']t\s+(?:it|he|she|they|you|we|i|that|this|there)"
    r")\b|(?:[\w’']+\s+){0,2}?[\w’']+\s*,\s*(?:huh|right|eh)\W*$|(?:huh|right|eh|yeah|no|ok|okay)\W*$)", re.I)
_EN_FIRST_PERSON_RE = re.compile(r"\b(?:i|i'm|i've|me|my|we|we're|we've|us|our)\b", re.I)
# "…，你知道吗？", "…，很酷吧？", "…，对吧？": a short last clause that asks
_ZH_TAIL_MAX = 12


def statement_before_question(core: str, lang: str) -> str:
    """The statement a question `core` is tacked onto ("I adopted a cat last week, isn't she
    cute?" → "I adopted a cat last week"; "我上个月搬到了杭州，你知道吗？" → "我上个月搬到了杭州"),
    or "" when the whole sentence asks. English needs the statement to speak of the speaker; Chinese,
    which leaves 我 out, a last clause of a few characters. The statement is then read like any
    other: hedges, subjects and the rest still apply."""
    if lang == "zh" or CJK_RE.search(core):
        head, comma, tail = max(core.rpartition("，"), core.rpartition(","), key=lambda parts: len(parts[0]))
        if not comma or not head.strip() or len(tail) > _ZH_TAIL_MAX or is_question(head.strip(), "zh"):
            return ""
        return head.strip()
    parts = _EN_QUESTION_TAIL_RE.split(core, maxsplit=1)
    if len(parts) == 1 or not _EN_FIRST_PERSON_RE.search(parts[0]) or is_question(parts[0], "en"):
        return ""
    return parts[0]


# "My doctor told me to cut back on sugar": advice the user was given, not hearsay
_ADVICE = r" told me (?:not )?to "
_ADVICE_RE = re.compile(_ADVICE)


# "kinda" after "am" or "feeling" says how much, not how sure: "I'm kinda nervous", "feeling kinda low"
_EN_DEGREE_RE = re.compile(
    r"\b((?:am|'m|is|'s|are|'re|was|were|be|been|being|feel|feels|feeling|felt|get|gets|getting|got|seems?)\s+)"
    r"(?:kinda|sorta|kind\s+of|sort\s+of)\s+"
)


def en_hedged(s: str) -> bool:
    """Hypothetical, unsure, reported or habitual-past speech: not a fact to file."""
    words = _WORD_RE.findall(_EN_DEGREE_RE.sub(r"\1", s.lower()))
    if any((w in _EN_HEDGE_WORDS or w.endswith("'d")) and not (w in ("said", "says") and words[i - 1:i] == ["you"])
           for i, w in enumerate(words)):  # ("what you said": the assistant's words, not hearsay)
        return True
    padded = _ADVICE_RE.sub(" ", " " + " ".join(words) + " ")
    return any(p in padded for p in _EN_HEDGE_PHRASES)


# "我想去新西兰" is a wish to do something (a plan), "我想他是对的" is an opinion held loosely
ZH_WANT_VERBS = "去|学|买|换|搬|考|做|当|成为|参加|试|尝试|养|开|辞|结婚|生|回|看看|玩|旅|住|增|减|存|给|送|准备|陪|带|请"
_ZH_WANT_RE = re.compile(rf"我(?:们)?(?:很|真|特别|一直|好|还)?想(?={ZH_WANT_VERBS})")


def _zh_wish_as_plan(s: str) -> str:
    return _ZH_WANT_RE.sub("我打算", s) if "想" in s else s


def zh_hedged(s: str) -> bool:
    """如果…, 可能…, 听说…, 以前…, …吧: not a fact to file."""
    s = _ZH_ABOUT_RE.sub("", _zh_wish_as_plan(s))  # ("大概十个小时": about so much, no hedge)
    return any(h in s for h in _ZH_HEDGES) or s.startswith("以前") or "我以前" in s or s.endswith("吧")


_ZH_ABOUT_RE = re.compile(r"(?:大概|大约)(?=[0-9一二两三四五六七八九十几半]+\s*[个万千百岁块元公斤斤小分天周年次])")


# hedges that still leave a statement to file as said: a plan ("我们打算四月去日本"), a past
# habit or state ("I used to live in Seattle", "我以前住在西安"); only general statements read them
_EN_SOFT_PHRASES = (" used to ",)
_ZH_SOFT = ("打算", "计划", "准备", "想要", "曾经", "过去", "小时候", "以前", "原来", "本来")


def soft_hedged(s: str, lang: str) -> bool:
    """Hedged only by a plan or a past-habit word: without them it would not be hedged."""
    if lang == "zh":
        s = _zh_wish_as_plan(s)
        if not any(h in s for h in _ZH_SOFT) or s.endswith("吧"):
            return False
        bare = s
        for h in _ZH_SOFT:
            bare = bare.replace(h, "")
        return not zh_hedged(bare)
    words = _WORD_RE.findall(s.lower())
    padded = " " + " ".join(words) + " "
    if not any(p in padded for p in _EN_SOFT_PHRASES):
        return False
    return not en_hedged(padded.replace(" used to ", " "))


# what makes a whole sentence unreal, whichever clause it sits in ("If I had time, I'd …")
_EN_CONDITIONAL = frozenset("""if unless whether suppose supposing imagine imagining pretend hypothetically wish wished
    dreamt dreamed someday""".split())
_EN_CONDITIONAL_PHRASES = (" as if ", " what if ", " i think ", " i thought ", " i believe ", " i guess ", " i feel like ",
                           " some day ", " one day ", " told me ", " according to ", " not sure ", " no idea ")
_ZH_CONDITIONAL = ("如果", "假如", "假设", "要是", "万一", "倘若", "假使", "的话", "梦想", "梦见", "做梦", "想象", "觉得",
                   "认为", "听说", "据说", "有一天", "有朝一日", "哪天", "我想", "难道")


def conditional(s: str, lang: str) -> bool:
    """The whole sentence is unreal or unsure (a condition, a wish, an opinion held loosely, hearsay):
    no clause of it is a fact. Other hedges ("it'd be great", "kinda scary") stay in their clause."""
    if lang == "zh":
        s = _zh_wish_as_plan(s)
        # (a closing 吧 softens its own clause: "我不太能吃辣，杭州菜应该还好吧" keeps the first)
        return any(h in s for h in _ZH_CONDITIONAL) or (s.endswith("吧") and not re.search(r"[，,；;]", s))
    words = _WORD_RE.findall(s.lower())
    padded = _NOT_UNSURE_RE.sub(" ", " " + " ".join(words) + " ")
    return any(w in _EN_CONDITIONAL for w in words) or any(p in padded for p in _EN_CONDITIONAL_PHRASES)


# not doubt about the sentence: a choice still open ("… and I have no idea what to get her"),
# advice given ("my doctor told me to …")
_NOT_UNSURE_RE = re.compile(r" (?:no idea|not sure) (?=(?:what|where|how|which|who|when|why) )|" + _ADVICE)


def hedged(s: str, lang: str) -> bool:
    return zh_hedged(s) if lang == "zh" else en_hedged(s)
