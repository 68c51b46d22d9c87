"""Slots: what a keyed fact answers, as one token that the fact and the question both carry.

"What's my job?" shares no word with "User is a data scientist.", and the embedder barely
links them (USE cosine 0.07-0.13, below unrelated short turns such as "I'm vegan."). The
rules (and the LLM) key such facts (`fact:occupation`); the fact is indexed with its slot's
token (``slot:work``), and a question that asks for that slot in the words people use for it
("job", "for a living", "职业", "做什么工作") searches that token too. One token per slot, so
it weighs as one word of the question, and BM25 gives it the weight of a rare word: few of a
user's memories hold it.
"""

from __future__ import annotations

import re
from functools import lru_cache

from engram.whose import ABOUT_OTHERS_RE

SLOT_PREFIX = "slot:"  # (lexical tokens are [a-z0-9.:] or CJK: no word said can make one)

# fact keys (exact, or a prefix ending in "_") -> their slots
_KEY_SLOTS: dict[str, tuple[str, ...]] = {
    "fact:occupation": ("work",),
    "fact:employer": ("work",),
    "fact:work_location": ("work", "home"),
    "fact:location": ("home",),
    "fact:hometown": ("origin",),
    "fact:name": ("name",),
    "preference:nickname": ("name",),
    "fact:age": ("age",),
    "fact:birthday": ("age",),
    "fact:school": ("school",),
    "fact:learning_": ("school",),
    "fact:allergy_": ("health", "diet"),
    "fact:diet": ("diet",),
}

# the words a question uses for each slot, in English and Chinese (matched ignoring case)
_CUES: dict[str, str] = {
    "work": r"\b(?:jobs?|occupation|profession|career|employer|employed|for a living|line of work"
            r"|what (?:do|does) (?:i|he|she|they) do)\b|工作|职业|上班|单位|做什么的|干什么的|干哪行|是做什么",
    "home": r"\b(?:live|lives|reside|resides|based|home)\b|住|家在|在哪.{0,2}生活",
    "origin": r"\b(?:grow up|grew up|hometown|originally|come from|comes from|born|where (?:am|is|are) \w+ from)\b"
              r"|老家|家乡|哪里人|哪儿人|出生|籍贯",
    "name": r"\b(?:name|called)\b|名字|叫什么|称呼",
    "age": r"\b(?:how old|age|birthday)\b|多大|几岁|年龄|岁数|生日",
    "school": r"\b(?:school|study|studying|student|university|college|major|degree|learning)\b"
              r"|学校|大学|读书|上学|专业|学历|在学|学什么",
    "health": r"\b(?:allerg\w*|medication|medicine|health|condition)\b|过敏|药|健康|身体",
    "diet": r"\b(?:eat|eats|eating|diet|food|foods|meat)\b|吃|饮食|忌口",
}


# idioms that ask for a slot in words that mean something else ("living" is not where one lives)
_IDIOMS_RE = re.compile(r"\b(?:do|does|did) for a living\b", re.IGNORECASE)


# a preference about food ("User doesn't eat cilantro.", "用户不吃香菜"): the diet slot too
_FOOD_RE = re.compile(r"\b(?:eat|eats|ate|eating|food|foods|dish|dishes|cuisine|snack)\b|吃|菜|饮食|忌口", re.IGNORECASE)


def fact_slots(key: str | None, content: str = "") -> list[str]:
    """The slot tokens of a memory with this key (none for an unkeyed one); a preference whose
    `content` is about food also fills the diet slot ("我有什么忌口？" finds "用户不吃香菜")."""
    if not key:
        return []
    slots = _KEY_SLOTS.get(key)
    if slots is None:
        prefix = key[: key.find("_") + 1] if "_" in key else ""
        slots = _KEY_SLOTS.get(prefix, ()) if prefix.endswith("_") else ()
    if not slots and key.startswith("preference:") and _FOOD_RE.search(content):
        slots = ("diet",)
    return [SLOT_PREFIX + s for s in slots]


# the cues as one pattern, one named group a slot: a question is read once (~10 µs, not ~50)
_ANY_CUE_RE = re.compile(
    "|".join(f"(?P<{slot}>{cue})" for slot, cue in _CUES.items()), re.IGNORECASE
)


@lru_cache(maxsize=1024)
def question_slots(question: str) -> tuple[str, ...]:
    """The slot tokens a question about the user asks for, in the order of `_CUES` (a search
    asks several times, a repeated question again: kept)."""
    asked = {m.lastgroup for m in _ANY_CUE_RE.finditer(question)}
    if not asked or ABOUT_OTHERS_RE.search(question):
        return ()
    return tuple(SLOT_PREFIX + slot for slot in _CUES if slot in asked)


def without_idioms(question: str) -> str:
    """`question` without the idioms its slot stands for, for the lexical search."""
    return _IDIOMS_RE.sub("do", question)
