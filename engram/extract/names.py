"""The user's name: "my name is …", "我叫…", and what counts as a plausible name."""

from __future__ import annotations

import re

from engram.extract.candidate import Ctx, candidate
from engram.extract.keys import CJK_RE, slot_value
from engram.extract.phrases import cut_clause
from engram.extract.rewrite import zh_third
from engram.models import Candidate, Kind

_NAME_WORD_RE = re.compile(r"[A-Za-z\u00c0-\u024f][\w'.-]*")

_NAME_STOP = frozenset(
    """not a an the so very just here back fine good ok okay well tired sorry done ready home
    great busy sure happy sad glad later tomorrow tonight now maybe when if at on anytime asap
    whatever anything something nothing it that this you him her them""".split()
)
_EN_NAME_RE = re.compile(
    r"^(?:my\s+name\s+is|my\s+name's|the\s+name's|i(?:'m|\s+am)\s+called|i(?:'m|\s+am)\s+named"
    r"|(?P<nick>i\s+go\s+by|people\s+call\s+me|everyone\s+calls\s+me|my\s+friends\s+call\s+me))\s+(?P<name>.+)$",
    re.I,
)
_EN_GREET_NAME_RE = re.compile(
    r"^(?:[Ii]'m|[Ii]\s+am|[Tt]his\s+is|[Ii]t's)\s+(?P<name>[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)$"
)
# what "I'm …" says capitalised that is no name: where one is from, a faith, a party
_NOT_A_NAME_RE = re.compile(
    r"(?!(?:Brian|Adrian|Julian|Vivian|Lillian|Sebastian|Damian|Fabian|Gillian|Marian|Dorian|Killian|Kristian)$)"
    r"\w+(?:ese|ish|ian|ican)|(?:German|Cuban|Korean|European|Chilean|Caribbean|Latino|Latina|Thai|Filipino|Iraqi|Israeli|"
    r"Pakistani|Bangladeshi|Nepali|Kiwi|Arab|Arabic|Greek|Dutch|Swiss|Czech|Slovak|Jewish|Muslim|Hindu|Buddhist|Sikh|"
    r"Mormon|Catholic|Protestant|Orthodox|Atheist|Agnostic|Democrat|Republican|Libertarian|Liberal|Conservative|"
    r"Hispanic|Latinx|Vegan|Texan|Londoner|New Yorker|Free|Yours|Me|"
    r"Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|Christmas|Easter|Halloween|Thanksgiving)",  # ("I'm Fine": `_NAME_STOP`)
)
_ZH_NAME_RE = re.compile(r"^我(?:的名字|名字)?(?:叫做|叫|是)(?P<name>.+)$")
_ZH_NAME_BAD_RE = re.compile(r"[了过着的你他她它人车外卖不很在是吗呢吧啊个一]")


# "I'm John, 29, software developer from Toronto": an introduction, its parts set off by commas
_EN_INTRO_RE = re.compile(
    r"^(?:(?i:hi|hey|hello))?[\s,!]*(?:I'm|I\s+am)\s+(?P<name>[A-Z][a-z]+),\s*(?P<age>\d{1,2})(?:\s*(?:years\s+old|y/?o))?"
    r"(?:,\s*(?:(?:an?)\s+)?(?P<job>(?!I\b|my\b)[a-z][a-z -]{1,40}?))?(?:,?\s+(?P<prep>from|in|based\s+in)\s+(?P<place>[\w][\w .'-]{1,40}?))?"
    r"(?:,\s*(?:and\s+)?(?P<more>(?:I|my|My)\b.+?))?"  # "I'm Dan, 41, I live in Austin with my wife": and the rest
    r"[.!]?$"
)


def intro_apart(sentence: str) -> list[str]:
    """`_en_intro_apart` or `zh_intro_apart`, by the script of `sentence`."""
    return zh_intro_apart(sentence) if CJK_RE.search(sentence) else _en_intro_apart(sentence)


def _en_intro_apart(sentence: str) -> list[str]:
    """An introduction said in one breath, as the statements it makes: "I'm John, 29, software
    developer from Toronto" → "My name is John." "I'm 29 years old." "I'm a software developer."
    "I'm from Toronto."; any other sentence as it is."""
    m = _EN_INTRO_RE.match(sentence.strip())
    if m is None or not valid_en_name(m.group("name")):
        return [sentence]
    said = [f"My name is {m.group('name')}.", f"I'm {m.group('age')} years old."]
    if m.group("job"):
        job = m.group("job").strip()
        said.append(f"I'm {'an' if job[:1] in 'aeiou' else 'a'} {job}.")
    if m.group("place"):
        place = m.group("place").strip()
        place = place[:1].upper() + place[1:]  # ("a nurse in Leeds": where they live; "from Toronto": where from)
        said.append(f"I'm from {place}." if m.group("prep").lower() == "from" else f"I live in {place}.")
    if m.group("more"):
        said.append(m.group("more").rstrip(".!") + ".")
    return said


# "我叫小明，25岁，程序员，北京人": an introduction in Chinese, its parts set off by commas
_ZH_INTRO_RE = re.compile(r"^(?:你好|大家好|嗨)?[，,！!]?我(?P<verb>叫|是)(?P<name>[\u4e00-\u9fff]{2,4})[，,](?P<rest>[^。！!？?]+)[。！!]?$")
_ZH_AGE_PART_RE = re.compile(r"^(?:今年)?(?:[0-9]{1,2}|[一二三四五六七八九十]{1,3})岁?$")
_ZH_FROM_PART_RE = re.compile(r"^[\u4e00-\u9fff]{2,4}人$")
_ZH_JOB_PART_RE = re.compile(r"^(?:一名|一个|一位)?[\u4e00-\u9fff]{1,5}(?:员|师|生|家|工|士|者|手|长|警|官|计)$")


def zh_intro_apart(sentence: str) -> list[str]:
    """"我叫小明，25岁，程序员，北京人" → "我叫小明" "我25岁" "我是程序员" "我是北京人"; any other
    part is read as said, after "我" ("刚毕业" → "我刚毕业")."""
    m = _ZH_INTRO_RE.match(sentence.strip())
    if m is None or not valid_zh_name(m.group("name")):
        return [sentence]
    parts = [p.strip() for p in re.split(r"[，,、]", m.group("rest")) if p.strip()]
    if m.group("verb") == "是" and not (parts and _ZH_AGE_PART_RE.match(parts[0])):
        return [sentence]  # "我是李明，今年28岁": an introduction; "我是老师，…" is none
    said = [f"我叫{m.group('name')}"]
    for part in parts:
        if _ZH_AGE_PART_RE.match(part):
            said.append("我" + part + ("" if part.endswith("岁") else "岁"))  # ("今年28": 28 years old)
        elif _ZH_FROM_PART_RE.match(part) or part.startswith(("在", "住", "是", "做", "今年")):
            said.append(("我是" if _ZH_FROM_PART_RE.match(part) else "我") + part)
        elif _ZH_JOB_PART_RE.match(part):
            said.append("我是" + part)  # "程序员", "一名护士"
        else:
            said.append(part if part.startswith(("我", "你", "他", "她")) else "我" + part)
    return said


def valid_en_name(name: str) -> bool:
    """One to three name-like words ("Bob", "Mary Ann"), not "fine" or "tired"."""
    words = name.split()
    if not 1 <= len(words) <= 3:
        return False
    if CJK_RE.search(name):
        return len(name) <= 6 and all(CJK_RE.match(c) for c in name)
    return all(_NAME_WORD_RE.fullmatch(w) and w.lower() not in _NAME_STOP
               for w in words)


def valid_zh_name(name: str) -> bool:
    """A short Chinese name without function characters (了, 的, 不…), or a valid English one."""
    if not 1 <= len(name) <= 8 or re.search(r"[\s,，]", name):
        return False
    if CJK_RE.match(name):
        return len(name) <= 5 and not _ZH_NAME_BAD_RE.search(name) and all(CJK_RE.match(c) for c in name)
    return valid_en_name(name)


def user_name(s: str, ctx: Ctx) -> list[Candidate] | None:
    """"My name is Bob" → fact:name; "I go by Bob" → preference:nickname; a bare
    "I'm Caroline" / "我是…" only right after a greeting."""
    if ctx.lang == "zh":
        m = _ZH_NAME_RE.match(s)
        if m is None or (m.group(0).startswith("我是") and not ctx.greeted):
            return None
        name = m.group("name").strip()
        if not valid_zh_name(name):
            return None
        return [candidate(ctx, Kind.FACT, zh_third(s), "fact:name", slot_value(name), "用户的名字", entities=[name])]
    m = _EN_NAME_RE.match(s)
    nick = bool(m and m.group("nick"))
    bare = m is None
    if bare and (ctx.greeted or (ctx.memo and ctx.memo.get("first"))):
        m = _EN_GREET_NAME_RE.match(s)  # "Hi, I'm Caroline", or "I'm Tom." opening the message
        if m is not None and not ctx.greeted and m.group(0).lower().startswith(("it", "this")):
            m = None  # "It's Shia Labeouf!" answering "who said that?", "It's Tuesday!": only "Hi, it's Anna"
    if m is None:
        return None
    name = cut_clause(m.group("name"))
    if not valid_en_name(name) or (bare and _NOT_A_NAME_RE.fullmatch(name)):
        return None
    if nick:
        return [candidate(ctx, Kind.PREFERENCE, f"User goes by {name}.", "preference:nickname", slot_value(name),
                          "how the user is called", polarity=1, entities=[name])]
    return [candidate(ctx, Kind.FACT, f"User's name is {name}.", "fact:name", slot_value(name), "user's name",
                      entities=[name])]
