"""A relationship that ended: "Anna and I broke up", "I split up with my boyfriend", "我和小陈分手了",
"我离婚了". What said the other was the user's girlfriend, husband or 男朋友 no longer holds;
`engram.write` supersedes those memories with the event that ended them (history keeps both).

Why: without this, "who is my girlfriend?" goes on finding Anna after the breakup, and the capsule
keeps her as the user's partner. Only a stated ending counts, and only the memories that say the
relationship ("User's girlfriend is Anna", "用户的男朋友叫小陈"): what happened together stays.
"""

from __future__ import annotations

import re

from engram.extract.keys import CJK_RE
from engram.relatives import COUPLE_EN, COUPLE_ZH

_EN_COUPLE = rf"(?:{'|'.join(sorted(COUPLE_EN, key=len, reverse=True))}|ex)"
_EN_ENDED = r"(?:broke\s+up|split\s+up|separated|got\s+divorced|divorced|called\s+it\s+off|ended\s+things)"
_EN_ENDING_RE = re.compile(
    rf"\b(?:(?P<who>(?-i:[A-Z][a-z]+)|my\s+{_EN_COUPLE})\s+and\s+I|I|we)\s+(?:just\s+|finally\s+|recently\s+|officially\s+)*"
    rf"(?:have\s+|'ve\s+)?{_EN_ENDED}(?:\s+with\s+(?P<with>(?-i:[A-Z][a-z]+)|my\s+{_EN_COUPLE}|him|her))?\b"
    r"(?!\s+(?:the|a|an|it|this|that|my|our)\b)",  # ("I broke up the fight")
    re.I,
)
_ZH_COUPLE = "|".join(sorted(COUPLE_ZH, key=len, reverse=True))
_ZH_ENDING_RE = re.compile(
    rf"我(?:已经|刚|刚刚)?(?:和|跟)(?:我的?)?(?P<who>{_ZH_COUPLE}|[\u4e00-\u9fff]{{1,3}}?)(?:已经|刚|刚刚)?(?:分手|离婚|分开)了"
    rf"|我们(?:已经|刚|刚刚)?(?:分手|离婚|分开)了|我(?:已经|刚|刚刚)?(?:离婚|分手)了"
)
_EN_SAYS_COUPLE_RE = re.compile(rf"\b{_EN_COUPLE}\b", re.I)
_ZH_SAYS_COUPLE_RE = re.compile(_ZH_COUPLE)
# the user's own partner, as the rules write it ("User's girlfriend …", "User and their boyfriend …",
# "用户的男朋友…", "用户和老公…"): not a sister's boyfriend
_EN_USERS_COUPLE_RE = re.compile(rf"^User(?:'s|\s+and\s+their)\s+(?:(?:ex-|former\s+|future\s+)?){_EN_COUPLE}\b", re.I)
_ZH_USERS_COUPLE_RE = re.compile(rf"^用户(?:的|和|跟)(?:{_ZH_COUPLE})")


def ending(text: str) -> str | None:
    """Who the relationship the user says ended was with ("Anna", "girlfriend", "小陈"), "" when
    no one is named ("we broke up"), None when `text` says no ending."""
    said = text.strip()
    if len(said) > 400:
        return None
    zh = CJK_RE.search(said) is not None
    m = (_ZH_ENDING_RE if zh else _EN_ENDING_RE).search(said)
    if m is None:
        return None
    who = next((v for k, v in m.groupdict().items() if v and k in ("who", "with")), "") or ""
    who = re.sub(r"^my\s+", "", who, flags=re.I)
    return "" if who.lower() in ("him", "her") else who


def ends(content: str, who: str) -> bool:
    """Whether a standing memory says the relationship that ended: it names the user's partner
    (a girlfriend, a 男朋友), and the one named in the ending when there was one."""
    zh = CJK_RE.search(content) is not None
    if (_ZH_USERS_COUPLE_RE if zh else _EN_USERS_COUPLE_RE).match(content) is None:
        return False
    if not who or (_ZH_SAYS_COUPLE_RE if zh else _EN_SAYS_COUPLE_RE).fullmatch(who):
        return True  # "we broke up", "I broke up with my boyfriend": the user's partner, whoever
    return who.lower() in content.lower()
