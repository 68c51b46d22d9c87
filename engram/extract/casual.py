"""Chat as people type it: "i'm john, 29", "im moving to vancouver tho", "gf is sarah, shes a nurse".

The English rules read "I", "I'm", "don't" and whole words; typed fast, a message has "i",
"im", "dont", "gf" and "tho" instead, and the rules then read nothing of it. `formal` writes
those few forms the usual way before the rules read a message: the pronoun "i" and its
contractions, contractions typed without their apostrophe (only in a message that has no
apostrophe at all, where "dont" cannot be a word of its own), the common abbreviations of
chat, and a capital at the start of each sentence. It changes nothing else: a word it does not
know stays as typed, and a message with any Chinese in it is left alone.
"""

from __future__ import annotations

import re

from engram.extract.keys import CJK_RE

_I_RE = re.compile(r"\bi\b(?=(?:'(?:m|ve|ll|d))?\b)")
_NO_APOSTROPHE = {
    "im": "I'm", "ive": "I've", "dont": "don't", "doesnt": "doesn't", "didnt": "didn't", "cant": "can't",
    "isnt": "isn't", "arent": "aren't", "wasnt": "wasn't", "werent": "weren't", "havent": "haven't",
    "hasnt": "hasn't", "wouldnt": "wouldn't", "couldnt": "couldn't", "shouldnt": "shouldn't", "shes": "she's",
    "hes": "he's", "thats": "that's", "whats": "what's", "theres": "there's", "theyre": "they're",
    "youre": "you're", "weve": "we've", "theyve": "they've",
}
_NO_APOSTROPHE_RE = re.compile(r"\b(" + "|".join(_NO_APOSTROPHE) + r")\b", re.I)
_CHAT = {
    "gf": "girlfriend", "bf": "boyfriend", "bff": "best friend", "bc": "because", "cuz": "because", "coz": "because",
    "tho": "though", "rn": "right now", "ppl": "people", "pls": "please", "plz": "please", "thx": "thanks",
    "u": "you", "ur": "your", "bday": "birthday", "yrs": "years", "w/": "with", "mgr": "manager", "dev": "developer",
}
# in lower case only, and not before a dot: "U.S." and "Dev" (a name) stay as written
_CHAT_RE = re.compile(r"(?<![\w'.])(" + "|".join(map(re.escape, _CHAT)) + r")(?![\w'.])")
_ZH_SPACE_RE = re.compile(r"(?<=[\u4e00-\u9fff])[ \u3000]+(?=[\u4e00-\u9fff])")
_LIKE_ABOUT_RE = re.compile(
    r"\b(?P<verb>do|did|have|had|got|for|take|took|spend|spent|run|ran|read|sleep|slept|walk|walked|drink|drank|eat|ate"
    r"|maybe|was|is|it's|earn|make|made|pay|paid|weigh|lost|gained)\s+like(?=\s+\$?\d)")
# "gonna"/"wanna" as the rules read them; said first, with "I" left out ("Gonna start a blog"): the user's
_GONNA_RE = re.compile(r"(?P<start>^|[.!?]\s+)?\b(?P<w>gonna|wanna)\b", re.I)
_GONNA = {"gonna": "going to", "wanna": "want to"}
_SENTENCE_START_RE = re.compile(r"(^|[.!?]\s+)([a-z])")
# a name typed in lower case, after the words that introduce one ("a cat called pixel", "i'm john,")
_KIN = r"(?:girlfriend|boyfriend|wife|husband|partner|fiancee?|son|daughter|sister|brother|mom|dad|mum|grandma|grandpa|best friend)"
_NAME_AFTER_RE = re.compile(
    rf"\b(called|named|name is|name's|call me|I'm|{_KIN} is|{_KIN}'s)\s+([a-z]{{2,}})"
    r"(?=\s*(?:,|\.|!|\?|$|and\b|[^\w\s]))"  # (an emoji after it too: "a kitten named mochi 😍")
)
# "allergic to shellfish btw", "vegan lol": said of oneself, without "I'm"
_BARE_STATE_RE = re.compile(
    r"(^|[.!?]\s+)((?:allergic|lactose intolerant|gluten intolerant|vegan|vegetarian|pescatarian|married|engaged"
    r"|divorced|pregnant|retired|left-handed|right-handed)"
    r"(?=\s*(?:[,.!]|$)|\s+(?:to|with|since|for|now|too|btw|lol|though|and)\b))",  # (not "Retired teacher here")
    re.I,
)
# "MCAT is in April", "The bar exam is next July": an exam known by name, the user's own
_BARE_EXAM_RE = re.compile(
    r"(^|[.!?]\s+)(?:the\s+)?(MCAT|LSAT|GRE|GMAT|SAT|ACT|IELTS|TOEFL|USMLE|[Bb]ar exam|CPA exam|[Ff]inals|[Mm]idterms?)"
    r"(?=\s+(?:is|are)\s+(?:on|in|next|this|tomorrow)\b)", re.I)
# "gf is sarah": the user's own, said without "my"
_BARE_KIN_RE = re.compile(
    rf"(^|[.!?]\s+)({_KIN})(?=\s+(?:is|'s|was|works|worked|lives|lived|loves|used to|still|has|had|just)\b)", re.I)
_NOT_NAMES = frozenset("""fine good ok okay tired sure sorry here back home done ready busy happy sad excited so
    very not just really also still glad new single married""".split())


def formal(text: str) -> str:
    """`text` with chat's shorthand written out (see the module docstring); unchanged when it has none."""
    if CJK_RE.search(text):  # "今天面试完了 感觉还行": a space typed for a comma
        return _ZH_SPACE_RE.sub("，", text) if " " in text else text
    out = _I_RE.sub("I", text)
    if "fianc" in out:  # (the rules' words are unaccented: "fiancé" is their "fiance")
        out = out.replace("fiancée", "fiancee").replace("fiancé", "fiance").replace("Fiancée", "Fiancee").replace(
            "Fiancé", "Fiance")
    if "'" not in out:
        out = _NO_APOSTROPHE_RE.sub(lambda m: _keep_case(m.group(), _NO_APOSTROPHE[m.group().lower()]), out)
    out = _CHAT_RE.sub(lambda m: _CHAT[m.group()], out)
    if "nna" in out:
        out = _GONNA_RE.sub(_gonna, out)
    out = _LIKE_ABOUT_RE.sub(r"\g<verb> about", out)  # "I do like 200 cards a day": about 200, no liking
    out = _BARE_EXAM_RE.sub(lambda m: m.group(1) + "My " + (m.group(2) if m.group(2).isupper() else m.group(2).lower()), out)
    out = _BARE_KIN_RE.sub(lambda m: m.group(1) + ("My " if m.group(2)[0].isupper() else "my ") + m.group(2).lower(), out)
    out = _BARE_STATE_RE.sub(lambda m: m.group(1) + "I'm " + m.group(2).lower(), out)
    if any(ch.isupper() for ch in text):
        return out  # (written with capitals: its sentences and names have theirs)
    out = _NAME_AFTER_RE.sub(lambda m: m.group(1) + " " + (m.group(2) if m.group(2) in _NOT_NAMES
                                                          else m.group(2).capitalize()), out)
    return _SENTENCE_START_RE.sub(lambda m: m.group(1) + m.group(2).upper(), out)


def _gonna(m: re.Match[str]) -> str:
    said = _GONNA[m.group("w").lower()]
    if m.group("start") is not None and not m.string.startswith(" be ", m.end()):
        # ("Gonna start a blog": "I'm going to start a blog"; "Gonna be a great night": whose, unsaid)
        return m.group("start") + ("I'm " if said.startswith("going") else "I ") + said
    return _keep_case(m.group("w"), said)


def _keep_case(said: str, written: str) -> str:
    return written[0].upper() + written[1:] if said[:1].isupper() else written
