"""A sentence that starts with the name of someone or some pet of the user's, said the way the
rules read it: "Max passed away last week" → "My dog Max passed away last week".

Why: a later turn names them alone ("Max passed away", "Anna got promoted", "小雨考上了大学"),
and the rules, which keep what is said about the user and about "my …", kept nothing of it: the
capsule went on saying "User has a dog named Max". Who is whose comes from the user's graph
(`engram.graph.kin`); this module is only the text.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

from engram.animals import ANIMALS_ZH, BREEDS_EN, BREEDS_ZH, PETS_EN
from engram.extract.keys import CJK_RE
from engram.graph.extract_entities import SELF_REF, extract
from engram.relatives import KIN_EN, KIN_ZH, KIN_ZH_LABEL

# one person each: "my kids Anna" or "我家人小雨" would say it wrong
GROUPS = frozenset({"parents", "children", "family", "kids"})
# the kin and pet words every introduction of someone of the user's says (a quick test before the
# entity rules read a message; one regex of them all took ~0.1 ms a message)
_WHOSE_EN = frozenset(w for said in (*KIN_EN, *PETS_EN, *BREEDS_EN) for w in said.split())
_WHOSE_ZH = tuple({*KIN_ZH, *ANIMALS_ZH.values(), *BREEDS_ZH})
_WORD_RE = re.compile(r"[a-zé-]+")  # ("sister's": "sister")
_POSSESSIVE_RE = re.compile(r"['’]s$")


_EN_LEAD_RE = re.compile(
    r"^(?:(?:sadly|unfortunately|so|well|oh|also|and|but|today|yesterday|finally|actually|btw|guess\s+what|omg|ugh)"
    r"[,!]?\s+)+", re.I)


def _says_whose_it_is(sentence: str, relation: str) -> bool:
    """"Anna is my sister." says whose she is itself: "My sister Anna is my sister" would be wrong."""
    if CJK_RE.match(relation):
        return f"我的{relation}" in sentence or f"我{relation}" in sentence
    return re.search(rf"\b(?:my|our)\s+(?:\w+\s+)?{re.escape(relation)}\b", sentence, re.I) is not None


def as_owned(sentence: str, owned: Mapping[str, str]) -> str:
    """`sentence` with "my <relation>" before a name of `owned` it starts with: "Max passed away"
    → "My dog Max passed away", "Lily's birthday is …" → "My daughter Lily's birthday is …", "小雨考上了大学"
    → "我的女儿小雨考上了大学". Not a name called out
    ("Anna, guess what!"), nor one that is only the start of a longer word."""
    lead = _EN_LEAD_RE.match(sentence)  # "Sadly Max passed away last night": after the word that leads in
    if lead and lead.end():
        said = as_owned(sentence[lead.end():], owned)
        return sentence if said == sentence[lead.end():] else sentence[: lead.end()] + said[0].lower() + said[1:]
    for name, relation in owned.items():
        if not sentence.startswith(name) or _says_whose_it_is(sentence, relation):
            continue
        after = sentence[len(name) : len(name) + 1]
        if CJK_RE.match(name):
            if after and CJK_RE.match(after):
                return f"我的{relation}{sentence}"
        elif after == " " and sentence[len(name) + 1 : len(name) + 2].islower():
            return f"My {relation} {sentence}"
        elif after in ("'", "’") and sentence[len(name) + 1 : len(name) + 3] == "s " \
                and sentence[len(name) + 3 : len(name) + 4].islower():  # "Lily's birthday is …"
            return f"My {relation} {sentence}"
    return sentence


def named_again(sentences: list[str]) -> bool:
    """Could a later sentence open with a name an earlier one introduced ("… is Sam. Sam is a
    chef.")? A quick test before `introduced`: an English sentence's first word said before it,
    or any Chinese sentence after the first (its name has no space to end it)."""
    for i in range(1, len(sentences)):
        sentence = sentences[i]
        if CJK_RE.match(sentence):
            return True
        words = sentence.split(None, 1)
        first = _POSSESSIVE_RE.sub("", words[0].rstrip(",.!?;:")) if words else ""  # ("Sam's" → "Sam")
        if first[:1].isupper() and any(first in before for before in sentences[:i]):
            return True
    return False


@lru_cache(maxsize=1024)
def introduced(text: str) -> tuple[tuple[str, str], ...]:
    """The user's people and pets `text` itself names as theirs ("My partner's name is Sam", "I
    have a dog named Rex", "小雨是我女儿"), as (name, what the user calls them) the way the graph's
    `owned_names` gives them. Why: "Sam is a chef." after it in the same message is about the
    partner, and the graph links the message only after it is written."""
    if not _says_kin_or_pet(text):
        return ()
    return tuple(
        (ref.name, called) for ref in extract(text).refs
        if ref.owner == SELF_REF and ref.named and ref.relation and ref.relation not in GROUPS
        and ref.type in ("person", "pet") and (called := called_as(ref.name, ref.relation)) is not None
    )


def called_as(said: str, kin: str) -> str | None:
    """What the user calls the one named `said`, in the language of the name ("小雨" is "女儿"); None
    for a Latin name the user gave in Chinese ("我的狗叫Max"): said in Chinese only."""
    if CJK_RE.search(said) and not CJK_RE.search(kin):
        return KIN_ZH_LABEL.get(kin) or ANIMALS_ZH.get(kin, kin)
    if not CJK_RE.search(said) and CJK_RE.search(kin):
        return None
    return kin


def _says_kin_or_pet(text: str) -> bool:
    """Does `text` say a kin or pet word (in either language)?"""
    if CJK_RE.search(text) and any(word in text for word in _WHOSE_ZH):
        return True
    return not _WHOSE_EN.isdisjoint(_WORD_RE.findall(text.lower()))
