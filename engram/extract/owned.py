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

from engram.extract.keys import CJK_RE


_EN_LEAD_RE = re.compile(
    r"^(?:(?:sadly|unfortunately|so|well|oh|also|and|but|today|yesterday|finally|actually|btw|guess\s+what|omg|ugh)"
    r"[,!]?\s+)+", re.I)


def _says_whose(sentence: str, relation: str) -> bool:
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
        if not sentence.startswith(name) or _says_whose(sentence, relation):
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
