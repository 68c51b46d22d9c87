"""Trimming the phrases rules capture: clause ends, trailing fillers, second clauses.

"I really like sushi lol, but …" should file "sushi"; these helpers cut a
captured phrase down to the part that is the object, and hold the word lists
the rules share to refuse objects that only make sense in context.
"""

from __future__ import annotations

import re

from engram.animals import BREEDS_ZH
from engram.extract.keys import EMOJI

# adverbs allowed between "I" and the verb: "I really just love …"
EN_ADV = (
    r"(?:(?:really|truly|totally|absolutely|just|also|still|actually|genuinely|honestly|definitely"
    r"|seriously|generally|usually|always|normally|mostly|currently|now|already|recently|so|super"
    r"|quite|particularly|especially|even|officially|finally|do|kinda|pretty\s+much)\s+)*"
)
# an object starting with one of these refers to something said before
PRONOUN_START = frozenset(
    """it it's its that this these those them they you your yours u ur him her his us me myself
    what how when where why who which whatever everything anything something nothing all both
    either neither one ones here there so very too lots lot many most much more less some such
    doing being""".split()
)

# an object containing one of these ("a picture of you") is not about the user alone
CONTEXT_WORDS = frozenset("you your yours it that this them here there".split())

_EN_TRAILING_FILLER_RE = re.compile(
    r"(?:(?:\s*,\s+|\s+)(?:obviously|of course|for sure|definitely|actually|a lot|so much|very much|that much"
    r"|too much|too|as well|either|anymore|any more"
    r"|though|anyway|anyways|really|honestly|tbh|btw|by the way|fyi|just so you know|now|these days|nowadays|in general|generally"
    r"|at all|lately|for real|to be honest|haha\w*|lol|lmao|right now|at the moment|currently))+$",
    re.I,
)
_CUT_WORDS = tuple(
    "and but because since so although though while when whereas which who where unless until except".split()
)
_EN_CUT_RE = re.compile(rf"\s*(?:[,;:(]|\s-\s|\s+(?:{'|'.join(_CUT_WORDS)})\b)", re.I)
_CUT_SET = frozenset(_CUT_WORDS)
_FILLER_LAST = frozenset(
    """lot much too well either anymore more though anyway anyways really honestly tbh btw now days
    nowadays general generally all lately real honest lol lmao moment currently obviously course sure
    definitely actually""".split()
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
    re.I,
)

_ZH_PARTICLES = "啊呀哦啦嘛哈呗哟噢喔嗯"  # sentence-final particles
_ZH_END_PARTICLES = frozenset(_ZH_PARTICLES)
ZH_PARTICLES_RE = re.compile(rf"[{_ZH_PARTICLES}~]+$")
# what `strip_end` peels off a sentence's end, one piece at a time (a loop, not a nested
# `(…+)+$` pattern: that one backtracked exponentially on a run of emoji or "!" before junk)
_END_PUNCT = frozenset(" \t\n\r\f\v.!。,;:~…、)]\"'”’")
_END_EMOJI_RE = re.compile(f"[{EMOJI}\uFE0F\u200d]")
_END_WORD_RE = re.compile(r"\s(?:lol|lmao|haha[a-z]*|hehe|xd|btw|tbh|fyi)$|(?::-?\)|:-?d|;-?\)|:p|<3|\^_?\^)$", re.I)
_END_WORD_WINDOW = 16  # the longest piece `_END_WORD_RE` takes, with room for "hahahaha…"
_EN_END_JUNK = ("lol", "lmao", "xd", "hehe", "ha", ":d", ":p")

ZH_CUT_RE = re.compile(r"[，,；;。]|因为|但是|不过|所以")

ZH_OBJ_BAD_RE = re.compile(r"^(?:[你您他她它这那哪谁上过了着的得]|什么|自己|大家|人家)")
# a verb with nothing after it, after the adverbs that may lead it: "下次可以试试", "试过", "选的"
ZH_BARE_VERB = (r"(?:明天|今天|今晚|回头|改天|周末|下次|以后|也|还|都|很|挺|蛮|比较|非常|真的|就|可以|会|一定|特别|超级?)*"
                r"(?:试试看?|试一下|试过了?|试了|选的|买的|做的|说的|喜欢|知道了?|明白了?|去过|看过|玩过|期待的?|这么想|这样想|那么想)")


def _rsub(rx: re.Pattern[str], s: str, window: int = 40) -> str:
    """Strip an end-anchored pattern, scanning only the tail (``(…)+$`` is quadratic otherwise)."""
    if len(s) <= window:
        return rx.sub("", s)
    cut = len(s) - window
    return s[:cut] + rx.sub("", s[cut:])


def strip_end(s: str) -> str:
    """Drop trailing punctuation, emoji, "lol", sentence particles (keeps "?").

    Linear in the length of what is dropped: each step removes one character or one
    short token from the end, checked in a bounded window."""
    s = s.rstrip()
    if not s:
        return s
    last = s[-1]
    if last.isalnum() and last not in _ZH_END_PARTICLES and not s[-5:].lower().endswith(_EN_END_JUNK):
        return s
    end = len(s)
    particles_ok = True  # particles go only while nothing but junk follows them
    while end:
        ch = s[end - 1]
        if ch in _END_PUNCT:
            end -= 1
            continue
        if ch in _ZH_END_PARTICLES and particles_ok:
            end -= 1
            continue
        if _END_EMOJI_RE.match(ch):
            end -= 1
            particles_ok = False  # "好啊😂": the emoji goes, the particle stays (as before)
            continue
        m = _END_WORD_RE.search(s, max(0, end - _END_WORD_WINDOW), end)
        if m is None:
            break
        end = m.start()
        particles_ok = False
    return s[:end].strip()


def cut_clause(phrase: str) -> str:
    """Keep the first clause of an object phrase ("Berlin, with my wife" → "Berlin")."""
    words = phrase.lower().split()
    if not _CUT_SET.intersection(words) and not any(ch in phrase for ch in ",;:(-"):
        return phrase.strip()
    return _EN_CUT_RE.split(phrase, 1)[0].strip()


def _last_word(s: str) -> str:
    i = s.rfind(" ")
    return s[i + 1:].lower()


def trim_fillers(s: str) -> str:
    """"sushi lol" → "sushi", "coffee at all" → "coffee"."""
    last = _last_word(s)
    if last not in _FILLER_LAST and not last.startswith("haha"):
        return s
    return _rsub(_EN_TRAILING_FILLER_RE, s)


def trim_time(s: str) -> str:
    """"Munich last year" → "Munich"."""
    last = _last_word(s)
    if last not in _TIME_LAST and not last.isdigit():
        return s
    return _rsub(_EN_TIME_TAIL_RE, s)


def pronoun_led(phrase: str) -> bool:
    """"it", "that one", "something nice": an object that needs its context."""
    return phrase.split()[0].lower() in PRONOUN_START


# a word of comment after a comma that closes an English clause ("I'm allergic to cats, sadly")
_EN_ASIDE_END_RE = re.compile(
    r"\s*,\s*(?:[a-z]+ly|though|too|anyway|lol|haha|now|again|still|either|yet|btw|tbh)$")


def strip_aside(clause: str, lang: str) -> str:
    """`clause` without a closing aside: "I love pizza, pasta and sushi, honestly" listed the
    aside as a food, and "allergic to cats, sadly" as an allergy."""
    return _EN_ASIDE_END_RE.sub("", clause) if lang != "zh" else clause


def zh_object(obj: str) -> str:
    """A Chinese object without trailing particles or 了/的 ("火锅了啊" → "火锅")."""
    obj = ZH_PARTICLES_RE.sub("", obj.strip())
    return obj[:-1].strip() if len(obj) > 2 and obj[-1] in "了的" else obj


# the groups a Chinese speaker calls theirs as they do their people ("我们公司"): owned, but no one who feels
ZH_GROUPS = ("公司", "团队", "部门", "学校", "小区")
# the people and animals a Chinese speaker calls theirs ("我妹妹", "我家的猫"): who a clause is about
ZH_PEOPLE = (
    "老婆 妻子 太太 爱人 老公 丈夫 儿子 女儿 孩子们 孩子 小孩 宝宝 哥哥 弟弟 姐姐 妹妹 妈妈 母亲 妈 爸爸 父亲 爸 父母 爸妈 "
    "女朋友 男朋友 女友 男友 前男友 前女友 前夫 前妻 对象 老板 领导 上司 同事 室友 朋友 最好的朋友 闺蜜 兄弟 邻居 奶奶 爷爷 外婆 姥姥 外公 姥爷 "
    "叔叔 阿姨 舅舅 姑姑 表哥 表姐 表妹 表弟 堂哥 堂姐 堂妹 堂弟 老师 同学 同桌 家人 公公 婆婆 岳父 岳母 "
    "嫂子 弟媳 姐夫 妹夫 女婿 儿媳妇 儿媳 孙子 孙女 外孙女 外孙 侄子 侄女 外甥女 外甥 继父 继母 后妈 未婚夫 未婚妻 "
    "舅妈 姨妈 婶婶 伯母 姑父 姨父 伯伯 大伯 合伙人 搭档 队友 教练 房东 哥 姐 弟 妹"
).split() + list(ZH_GROUPS)
ZH_PETS = "猫咪 小猫 猫 小狗 狗狗 狗 宠物 兔子 鹦鹉 仓鼠 金鱼 乌龟".split()
# breeds said in place of "狗"/"猫": "我家有一只金毛，叫豆豆" names the dog, not the user
ZH_PET_BREEDS = list(BREEDS_ZH)
ZH_OWNED_RE = "|".join(sorted(ZH_PEOPLE + ZH_PETS + ZH_PET_BREEDS, key=len, reverse=True))
