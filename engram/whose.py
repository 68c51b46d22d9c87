"""Whose: who a question asks about, and who a fact is about (the user, or one of theirs).

"我要考哪个学校？" asks about the user; "用户的室友小王也考浙大" is about the user's roommate,
and shares the question's one content word (考) that the user's own "用户的目标是浙江大学"
lacks, so by words alone the roommate's fact ranks first. A question about the user that names
no one else ranks facts about someone else lower (`Retriever.search`, ``other_subject_factor``),
and turns that speak only of someone else; a question that names one of the user's own ("my
niece", "我的狗") ranks the user's own particulars lower ("what's my niece's name?" is not
"User's name is Lena.").
"""

from __future__ import annotations

import re
from functools import lru_cache

from engram.animals import ANIMALS_ZH
from engram.relatives import KIN_EN, KIN_ZH, relation_of

_OTHERS_EN = sorted({*KIN_EN, *ANIMALS_ZH}, key=len, reverse=True)
_OTHERS_ZH = sorted({*KIN_ZH, *ANIMALS_ZH.values()}, key=len, reverse=True)

# a question about someone else (a relative, a pet, "she"): not about the user alone
ABOUT_OTHERS_RE = re.compile(
    r"\b(?:my|our)\s+(?:[\w-]+\s+)?(?:" + "|".join(map(re.escape, _OTHERS_EN)) + r")(?:s|'s|’s)?\b"
    r"|\b(?:he|she|his|her|him|they|their|them)\b"
    "|" + "|".join(map(re.escape, sorted({*_OTHERS_ZH, "他", "她", "它"}, key=len, reverse=True))),
    re.IGNORECASE,
)
_FIRST_PERSON_RE = re.compile(r"\b(?:i|me|my|mine|myself|i'm|i've|i'd|i'll)\b|我(?!们)", re.IGNORECASE)

# a fact whose subject is one of the user's people or animals ("User's roommate Jake plays
# guitar.", "用户的室友小王也考浙大"), as the rules and the LLM prompts write them
_OTHER_SUBJECT_RE = re.compile(
    r"^(?:User's\s+(?:(?:old|new|little|big|younger|older|best)\s+)?(?P<en>"
    + "|".join(map(re.escape, _OTHERS_EN)) + r")(?:s|'s)?\b"
    r"|用户的(?P<zh>" + "|".join(map(re.escape, _OTHERS_ZH)) + "))",
    re.IGNORECASE,
)

# a turn that opens with one of the user's people or animals ("My roommate Jake plays guitar.",
# "有，我室友小王也考浙大…"), after at most a word of answer
_TURN_OTHER_RE = re.compile(
    r"^(?:[^，,。.!?]{0,6}[，,]\s*)?(?:my\s+(?:(?:old|new|little|big|younger|older|best)\s+)?(?P<en>"
    + "|".join(map(re.escape, _OTHERS_EN)) + r")(?:s|'s)?\b"
    r"|我家?的?(?P<zh>" + "|".join(map(re.escape, _OTHERS_ZH)) + "))",
    re.IGNORECASE,
)


# the slots of the user's own particulars: a question about their niece or dog asks for none of them
_USERS_OWN_KEYS = frozenset("""fact:name fact:age fact:birthday fact:location fact:hometown fact:occupation
    fact:employer fact:work_location fact:school fact:diet preference:nickname""".split())


# the user's own person or animal, named as theirs ("my niece", "我的狗")
_MY_OTHERS_RE = re.compile(
    r"\b(?:my|our)\s+(?:[\w-]+\s+)?(?P<en>" + "|".join(map(re.escape, _OTHERS_EN)) + r")(?:s|'s|’s)?\b"
    r"|我(?:家|们家)?的?(?P<zh>" + "|".join(map(re.escape, _OTHERS_ZH)) + ")",
    re.IGNORECASE,
)
# relations that take in others: a question about "my kids" is about a son too, and the reverse
_TAKES_IN = {
    "children": {"child", "son", "daughter", "baby"}, "child": {"children", "son", "daughter", "baby"},
    "parents": {"mother", "father"}, "grandparents": {"grandmother", "grandfather"},
    "grandchildren": {"grandson", "granddaughter"}, "pet": set(ANIMALS_ZH), "宠物": set(ANIMALS_ZH.values()),
}
_EVERYONE = frozenset({"family"})  # "my family" asks about any of them


@lru_cache(maxsize=1024)
def about_someone_named(question: str) -> bool:
    """The question names one of the user's people or animals as theirs ("what's my niece's name?",
    "我的狗叫什么？"); a bare "she" may be the person a third-person question is about."""
    return _MY_OTHERS_RE.search(question) is not None


def users_own(key: str | None) -> bool:
    """A keyed fact of the user's own particulars ("User's name is Lena.": ``fact:name``)."""
    return key in _USERS_OWN_KEYS


@lru_cache(maxsize=1024)
def about_user_alone(question: str) -> bool:
    """The question asks about the user (I, my, 我) and names no one else."""
    return _FIRST_PERSON_RE.search(question) is not None and ABOUT_OTHERS_RE.search(question) is None


def about_someone_else(text: str) -> bool:
    """A fact whose subject is one of the user's people or animals, or a turn that opens with
    one and does not go on about the user ("My sister lives in Pune and I live in Porto" does)."""
    if _OTHER_SUBJECT_RE.match(text) is not None:
        return True
    opening = _TURN_OTHER_RE.match(text)
    return opening is not None and _FIRST_PERSON_RE.search(text, opening.end()) is None


def _related(a: str, b: str) -> bool:
    return a == b or b in _TAKES_IN.get(a, ()) or a in _TAKES_IN.get(b, ())


@lru_cache(maxsize=1024)
def asked_relations(question: str) -> frozenset[str]:
    """The relations of the user's own people or animals that the question's last line names as
    theirs ("what does my brother-in-law do?", "我姐夫做什么工作": brother-in-law)."""
    lines = question.strip().splitlines()
    line = lines[-1] if lines else ""
    found = {relation_of(m.group("en") or m.group("zh")) for m in _MY_OTHERS_RE.finditer(line)}
    return frozenset() if found & _EVERYONE else frozenset(found)


def theirs_about(text: str) -> str | None:
    """The relation of the user's person or animal a fact is about ("User's sister-in-law works at a
    bank.") or a turn opens with ("我嫂子在银行工作。"): sister-in-law; None for anything else."""
    m = _OTHER_SUBJECT_RE.match(text) or _TURN_OTHER_RE.match(text)
    if m is None:
        return None
    subject = relation_of(m.group("en") or m.group("zh"))
    return None if subject in _EVERYONE else subject


def among_asked(subject: str, asked: frozenset[str]) -> bool:
    """Whether one of the user's people (a relation, as `theirs_about` gives it) is one the question asks about."""
    return any(_related(subject, a) for a in asked)
