"""Splitting a sentence into clauses that each state one thing.

"I live in Berlin and work at Google" → "I live in Berlin", "I work at Google";
"我叫张三，住在北京" → "我叫张三", "我住在北京"; "我住在北京，并且在腾讯工作" →
"我住在北京", "我在腾讯工作". A date split off on its own ("By Friday, I need to …",
"周五前，要…") is put back with its clause. A detail joined to a statement ("…，并附上
数据图表", "…, with charts attached") is no statement of its own: `joined_detail`
gives it back, for the statement to keep.
"""

from __future__ import annotations

import re
from datetime import datetime

from engram.extract.dates import EN_DATE_RE, ZH_DATE_RE, absolute_when
from engram.extract.phrases import CONTEXT_WORDS, ZH_GROUPS, ZH_OWNED_RE, ZH_PET_BREEDS
from engram.extract.rewrite import en_rest, lcfirst

_EN_CLAUSE_SPLIT_RE = re.compile(  # every branch starts where a run of spaces starts: linear on long runs
    r"(?<!\s)(?:\s*[;,]\s*(?:(?:and|but|also|plus|so)\s+)?(?=(?:i|my|we|she|he)\b)|\s+(?:and|but|plus)\s+(?=(?:i|my|she's|he's|she|he)\b)"
    r"|\s*[-–—]+\s+(?=(?:i|my|we)\b)|\s*,?\s+(?:because|'cause|cause|since|so)\s+(?=(?:i|my)\b)"
    r"|\s+when\s+(?=my\s)"
    # "I used to smoke but quit three years ago": the habit given up, read as "… but I quit …" is
    r"|\s*,?\s+but\s+(?=(?:then\s+)?(?:finally\s+)?(?:quit|stopped|gave\s+(?:it\s+|that\s+)?up)(?:\s+(?:it|that))?"
    r"(?:\s+(?:a|an|\w+)\s+(?:days?|weeks?|months?|years?)\s+ago|\s+last\s+\w+|\s+in\s+\d{4})?\s*[.!]?$)"
    r"|(?:\s*,\s*(?:but|and)|\s+but)\s+(?=[a-z]+(?:\s+[a-z]+)?\s+(?:(?:is|are|was|were)\s+(?:\w+\s+){0,3}my|(?:has|have)\s+\w+\s+me)\b))",
    re.I
)
_EN_SPLIT_WORDS = (" and ", " but ", " plus ", "- ", "– ", "— ", "because ", "cause ", " since ", " so ")
_EN_CONTINUE_RE = re.compile(
    r"\s+(?:and|but)\s+(?=(?:also\s+)?(?:work|live|love|like|enjoy|hate|prefer|moved|have|am|started|joined)\b)"
    r"|\s*,\s+(?=(?:just\s+|then\s+)?(?:started|joined|moved|quit|left)\s)", re.I  # "I've moved to SF, started at Figma"
)
_ZH_CLAUSE_SPLIT_RE = re.compile(r"[，,；;]|(?:而且|并且|但是|不过|同时)(?=我)")
_ZH_BEFORE_RE = re.compile(r"(?:之前|以前|前)$")
_ZH_CONTINUE_RE = re.compile(
    r"^(?:也|还|都|平时|平常|目前|现在|一直|主要|一般|经常|特别(?!是)|比较)*(?:住在|住|搬到|搬去|在|是|喜欢|爱|讨厌|不喜欢|(?P<feel>有点|有些)|有|养|叫|今年|最喜欢|来自|老家|对(?![方面手])"
    r"|(?<=主要)(?:写|做|负责|教|卖)(?=[A-Za-z0-9\u4e00-\u9fff]{2})"  # "我是个程序员，主要写Python": what the work is
    r"|能(?=吃|喝|熬夜|跑)"  # "我老家是四川的，特别能吃辣"
    r"|用(?=[A-Za-z0-9\u4e00-\u9fff]{2})(?!户|来|于|完|过)"  # "…，主要用Vue" (what is used, named)
    r"|(?P<wish>想(?=去|做|学|考|当|换|买|找|回|住|要|养|搬)|打算|准备|计划(?!书))"  # "…换个工作，想去做产品经理"
    r"|(?P<attr>预产期|生日)(?=是|在)"  # "我老婆怀孕六个月了，预产期是明年三月": when it is theirs
    r"|月薪|年薪|工资|收入|房贷|房租|车贷|不(?:吃|喝|抽|碰)(?!了))"
)
_ZH_LEAD_RE = re.compile(r"^(?:也|还|都|一直|已经|又)*(?:正在|在|没有|没)?")  # before a continuation's verb
_ZH_I_HAVE_RE = re.compile(rf"^我(?:们家|家|们)?的?(?:{ZH_OWNED_RE})?(?:也|还|都|一直)?(?:养了?|有)")
_ZH_OWNER_RE = re.compile(rf"^我(?:们家|家|们)?的?(?:{ZH_OWNED_RE})")
_ZH_ITS_RE = re.compile(r"^(?:叫|名字叫|今年|已经|才)")
_ZH_OTHER_HINT_RE = re.compile(
    r"猫|狗|宠物|兔|鹦鹉|仓鼠|女儿|儿子|孩子|老婆|老公|妻子|丈夫|哥|姐|弟|妹|妈|爸|朋友|同事|室友|同学|合伙人|搭档|队友|" + "|".join(ZH_PET_BREEDS)
    + r"|(?:有|养了?|领养了?|买了?|捡了?)(?:一|两|几|[0-9])?[只条头匹]"  # an animal counted out: "我家有一只X，叫Y"
)
# "我买了一辆车，是特斯拉": a 是 after something counted out says what that thing is, not the user
_ZH_COUNTED_OBJECT_RE = re.compile(r"[了过](?:一|两|几|[0-9])?[张只个本幅件条部首篇辆套块台双匹座所家间]")
# what a thing just named is: "…，是一辆白色的卡罗拉" (a car, a flat: no person or pet)
ZH_WHICH_THING_RE = re.compile(r"^是(?:一|两)?[辆台部架艘套件本张座栋间把双块][\u4e00-\u9fffA-Za-z0-9]{1,12}[。！!]?$")
# a clause that ends by bringing someone in: what follows without a subject is about them
# ("我有个哥哥，在北京工作": the brother works there, not the user)
_ZH_INTRODUCED_RE = re.compile(rf"^我(?:们)?(?:家)?(?:还|也)?有(?:一|两|几|[0-9])?[个位只条]?(?:{ZH_OWNED_RE})$")
_ZH_AND_RE = re.compile(r"^(?:并且|并|而且|同时|以及|然后|再)(?!我)")
_ZH_ALSO_RE = re.compile(r"^还有(?=一起|就是)")  # "…，还有一起吃了好多冰激凌": "and also", no 有 of the user's
_ZH_DETAIL_BAD_RE = re.compile(r"[你您他她它这那吗呢？?]|[不没]")
_EN_DETAIL_RE = re.compile(r"^(?:with|and|plus|including|using|in|as)\s+\S", re.I)
# "my best friend Priya" split off after "and": a person named, no clause of its own
_EN_JUST_SOMEONE_RE = re.compile(
    r"^my\s+(?:(?:best|little|older|younger|big|baby|oldest|youngest)\s+)?[a-z-]+(?:\s+[A-Z][a-z]+)?[.!]?$")
_EN_DETAIL_BAD = frozenset("you your it this that them he she they i".split())


def joined_detail(text: str, lang: str) -> str | None:
    """A detail joined to the statement before it, as the statement should end: "并附上数据图表"
    → "，并附上数据图表"; "with charts attached" → ", with charts attached"; else None."""
    text = text.strip()
    if lang == "zh":
        if not _ZH_AND_RE.match(text) or not 3 <= len(text) <= 20 or _ZH_DETAIL_BAD_RE.search(text):
            return None
        return "，" + text
    words = text.lower().split()
    if not _EN_DETAIL_RE.match(text) or len(words) > 8 or _EN_DETAIL_BAD.intersection(words) \
            or CONTEXT_WORDS.intersection(words):
        return None
    return ", " + en_rest(text)


# where from and where to, said after what moves ("…下个月要搬家，从朝阳区搬到海淀区", "We're moving
# next month, from Queens to Brooklyn")
_ZH_FROM_TO_RE = re.compile(r"^(?:是)?从[\u4e00-\u9fffA-Za-z0-9]{1,12}(?:搬|换|调|转|飞|开|坐车|回)?(?:到|去|回)"
                            r"[\u4e00-\u9fffA-Za-z0-9]{1,12}$")
_ZH_WITH_WHOM_RE = re.compile(r"^(?:跟|和|与|同)[\u4e00-\u9fffA-Za-z]{1,10}一起(?:去|玩|过去)?$")
_EN_FROM_TO_RE = re.compile(r"^from\s+(?:[A-Z][\w'-]*|the\s+\w+)(?:\s+[A-Z][\w'-]*)*\s+to\s+(?:[A-Z][\w'-]*|the\s+\w+)"
                            r"(?:\s+[A-Z][\w'-]*)*$")


def from_to_detail(text: str, lang: str) -> str | None:
    """Where from and where to, or with whom, said as a clause of its own after the move or the
    trip it is about ("从朝阳区搬到海淀区", "跟大学室友一起", "from Queens to Brooklyn"), as that
    statement should end; else None."""
    text = text.strip()
    if lang == "zh":
        detail = _ZH_FROM_TO_RE.match(text) or _ZH_WITH_WHOM_RE.match(text)
        return "，" + text if detail and not _ZH_DETAIL_BAD_RE.search(text) else None
    return ", " + text if _EN_FROM_TO_RE.match(text) else None


_EN_ENDED_RE = re.compile(
    r"^(?:but\s+|and\s+)?(?:then\s+)?(?:i\s+)?(?:finally\s+)?(?:quit|stopped|gave\s+(?:it\s+|that\s+)?up)"
    r"(?:\s+(?:it|that))?(?P<when>\s+(?:a|an|\w+)\s+(?:days?|weeks?|months?|years?)\s+ago|\s+last\s+\w+|\s+in\s+\d{4})?$",
    re.I,
)
_ZH_ENDED_RE = re.compile(r"^(?:但是?|不过|可是)?(?P<when>后来|去年|上个?月|上周|前年|几年前|[0-9一二两三四五六七八九十]+年前)?(?:就)?"
                          r"(?:戒了|戒掉了|不[喝吃抽玩打]了|停了)$")


def ended_detail(text: str, lang: str, now: datetime | None = None) -> str | None:
    """A habit the clause before said the user had, given up ("I used to drink soda every day
    but I quit last month", "我以前抽烟，后来戒了"), as that statement should end; else None.
    A year or month said relative to `now` is said as it is ("three years ago": in 2023)."""
    text = text.strip()
    if lang == "zh":
        m = _ZH_ENDED_RE.match(text)
        return f"，{absolute_when(m.group('when') or '', lang, now)}戒了" if m else None
    m = _EN_ENDED_RE.match(text)
    return f" but quit{absolute_when(m.group('when') or '', lang, now)}" if m else None


_EN_PAIR_SUBJECT_RE = re.compile(  # "My husband Raj and I", "My sister and my mom are …"
    r"^(?:(?:my\s+[\w'-]+(?:\s+(?-i:[A-Z][a-z]+))?|[\w'-]+)\s+and\s+i(?=\s)"
    r"|my\s+[\w'-]+\s+and\s+my\s+[\w'-]+(?=\s+(?:are|were|both|have|live|work)\b))", re.I)
# "Me and my wife …", "My wife and me …": said the way "My wife and I …" is read
_EN_ME_AND_RE = re.compile(r"^(?:(?:me|i)\s+and\s+my\s+(?P<a>[\w'-]+)|my\s+(?P<b>[\w'-]+)\s+and\s+me)(?=\s)", re.I)
# "My brother, some friends, and I …": a group the user is in, read as "We …" (it was split at its
# commas: "User's brother some friends")
_EN_MEMBER = r"(?:(?i:my|our|his|her|their|some|a|an|the|two|three|a\s+few|several)\s+(?:[\w'-]+\s+)?[\w'-]+|[A-Z][a-z'-]+)"
_EN_GROUP_WITH_ME_RE = re.compile(
    rf"^(?!(?i:yesterday|today|tonight|yes|yeah|well|so|oh|ok|okay|also|then|now|last|this|next)\b)"
    rf"{_EN_MEMBER}(?:\s*,\s*{_EN_MEMBER}){{1,3}}\s*,?\s+(?i:and)\s+(?i:i|me)(?=\s)")


# what puts the verb after "and" under a wish or a maybe: "I hope we can go out and have fun"
_EN_UNREAL_BEFORE_RE = re.compile(
    r"\b(?:hope|hoping|wish|want|wanna|can|could|would|should|might|may|will|'ll|'d|gonna|going\s+to|plan|try|trying|if"
    r"|need|needs|have\s+to|let's)\b", re.I)


_EN_TWO_NAMED_RE = re.compile(
    r"^(?P<head>(?:i|we)(?:'ve|\s+have|\s+also)?\s+(?:have|got|adopted|own|rescued)\s+)"
    r"(?P<a>an?\s+(?:[\w-]+\s+){0,3}?(?:named|called)\s+(?-i:[A-Z][a-z]+))\s*,?\s+and\s+"
    r"(?P<b>an?\s+(?:[\w-]+\s+){0,3}?(?:named|called)\s+(?-i:[A-Z][a-z]+))(?P<tail>.*)$", re.I)


def _continue_i(m: re.Match[str]) -> str:
    """" and I " before a verb that goes on with an object ("and work at Google"), not before a
    noun ("the self-acceptance and love theme"), nor where what comes before governs that verb
    ("I hope we can go out and have fun": no "I have fun")."""
    if _EN_UNREAL_BEFORE_RE.search(m.string, 0, m.start()):
        return m.group()
    rest = m.string[m.end():].split(None, 3)
    return (", and I " if "," in m.group() else " and I ") if len(rest) >= 3 else m.group()


def _names_the_object(clause: str) -> bool:
    """Whether a 叫/是 after `clause` says what a thing it counted out is ("…开了一家咖啡店"), the
    thing coming after any person or pet it names ("我养了一只猫": the cat's name)."""
    counted = [m.start() for m in _ZH_COUNTED_OBJECT_RE.finditer(clause)]
    hints = [m.start() for m in _ZH_OTHER_HINT_RE.finditer(clause, 1)]
    return bool(counted) and (not hints or counted[-1] > hints[-1])


def split_clauses(s: str, lang: str) -> list[str]:
    """The clauses of `s`; a clause that continues a first-person one gets its "I"/"我" back."""
    if lang == "zh":
        parts = [_ZH_ALSO_RE.sub("", p.strip()) for p in _ZH_CLAUSE_SPLIT_RE.split(s) if p and p.strip()]
        out: list[str] = []
        for p in parts:
            if out and ZH_DATE_RE.fullmatch(_ZH_BEFORE_RE.sub("", out[-1])):
                out[-1] += p  # "周五前，要完成报告"
                continue
            if out and p.startswith(("是", "叫", "名字叫")) and _names_the_object(out[-1]):
                out[-1] += "，" + p  # "我朋友开了一家咖啡店，叫慢时光": what the thing is called, said with it
                continue
            if out and out[0].startswith("我") and not p.startswith("我") \
                    and not (_ZH_ITS_RE.match(p) and _ZH_OTHER_HINT_RE.search(out[-1], 1)) \
                    and (not _ZH_INTRODUCED_RE.search(out[-1]) or p.startswith("还有")) \
                    and not (p.startswith("是") and (_ZH_COUNTED_OBJECT_RE.search(out[-1]) or ZH_WHICH_THING_RE.match(p))):
                # ("我买了一辆车，是…", "…旧车给我开了，是一辆白色的卡罗拉": what the thing is)
                bare = _ZH_AND_RE.sub("", p)  # "并且在腾讯工作": a statement of its own after all
                # ("…滑梯，还有秋千": 还有 adds one more of what was said; after 有 it is one more had)
                going = _ZH_CONTINUE_RE.match(bare) if not bare.startswith("还有") or _ZH_I_HAVE_RE.match(out[-1]) else None
                owner = _ZH_OWNER_RE.match(out[0]) if going else None
                # a verb with no object after "我的<thing>…" is the thing's: "我的车上周被撞了，还在修" is the
                # car being repaired ("我的房子很小，还在还贷款" is the user paying)
                the_things = owner is None and out[0].startswith("我的") \
                    and len(_ZH_LEAD_RE.sub("", bare).rstrip("了好完呢")) <= 1
                # how someone feels is no company's: "我们公司年底要裁员，有点担心" is the user worrying
                felt = bool(going and going.group("feel") and owner and owner.group().endswith(ZH_GROUPS))
                if going and not (owner and going.group("wish")) and not the_things and not felt:
                    # the first clause's subject: "我妹妹在上海工作，也住在上海"
                    # (what someone of theirs wants is read with their name: "我女儿叫小雨，想学钢琴")
                    p = (owner.group() if owner else "我") + ("的" if going.group("attr") and not owner else "") + bare
            out.append(p)
        return out
    s = _EN_GROUP_WITH_ME_RE.sub("We", _EN_ME_AND_RE.sub(lambda m: f"My {m.group('a') or m.group('b')} and I", s, count=1), count=1)
    two = _EN_TWO_NAMED_RE.match(s)
    if two:  # "We have a cat named Luna and a golden retriever called Max": each with the verb
        return [two.group("head") + two.group("a"), two.group("head") + two.group("b") + two.group("tail")]
    low = s.lower()
    if "," not in s and ";" not in s and not any(w in low for w in _EN_SPLIT_WORDS):
        return [s]
    pair = _EN_PAIR_SUBJECT_RE.match(s)  # "Acme and I parted ways", "My wife and I …": one subject
    if pair:
        rest = split_clauses(s[pair.end():], lang)
        return [s[:pair.end()] + (" " + rest[0].strip() if rest else "")] + rest[1:]
    if low.startswith(("i ", "i'")):  # "I live in Berlin and work at Google"; not "hope and love exist"
        s = _EN_CONTINUE_RE.sub(_continue_i, s)
    parts = [p.strip() for p in _EN_CLAUSE_SPLIT_RE.split(s) if p and p.strip()]
    out = []
    for p in parts:
        if out and EN_DATE_RE.fullmatch(out[-1]):
            out[-1] = p + " " + lcfirst(out[-1])
            continue
        if out and _EN_JUST_SOMEONE_RE.match(p):
            out[-1] += " and " + p  # "…, just my sister and my best friend Priya": who, not a clause
            continue
        out.append(p)
    return out
