"""Normalisation shared by every rule: input text, slot keys and slot values.

A candidate's `key` names the slot it fills (``preference:rolling_stone``) so a
later statement about the same slot is recognised as an update; `slugify` makes
that key part stable across wordings, `slot_value` the value.
"""

from __future__ import annotations

import re
import unicodedata

CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
EMOJI = "\U0001F000-\U0001FAFF\u2600-\u27BF"  # pictographs and dingbats

_APOS = str.maketrans({"\u2019": "'", "\u2018": "'", "`": "'", "\uff07": "'"})
WS_RE = re.compile(r"\s+")
CJK_RE = re.compile(f"[{CJK}]")


def prepare_text(text: str) -> str:
    """NFKC (full-width → ASCII) with curly apostrophes made straight."""
    return unicodedata.normalize("NFKC", text).translate(_APOS)


_SLUG_TOKEN_RE = re.compile(f"[a-z0-9]+|[{CJK}]+")
_ZH_SLUG_DROP_RE = re.compile(r"^(?:把|将|去|吃|喝|看|听|玩)(?=..)|[的了着过]")
_EN_CONSUME_RE = re.compile(
    r"^(?:to\s+)?(?:eat|eating|drink|drinking|watch|watching|listen to|listening to|play|playing"
    r"|have|having)\s+(?=\S)",
    re.I,
)

_DETERMINERS = frozenset("the a an my your our their his her some this that these those to".split())

_IES_KEEP = frozenset(
    "movies cookies zombies pies ties lies hippies selfies smoothies brownies goalies rookies"
    " calories indies species series".split()
)
_S_KEEP = frozenset("species series tennis axis iris chassis pelvis physics maths news lens gas yes".split())
_OES = frozenset("tomatoes potatoes heroes mangoes echoes volcanoes".split())


def _singular(w: str) -> str:
    if len(w) <= 3 or w.endswith(("ss", "us", "sis", "ous")) or w in _S_KEEP:
        return w
    if w.endswith("ies"):
        return w[:-1] if w in _IES_KEEP else w[:-3] + "y"
    if w in _OES or w.endswith(("ches", "shes", "xes", "sses", "zes")):
        return w[:-2]
    if w.endswith("s"):
        return w[:-1]
    return w


def slugify(phrase: str, *, consume: bool = False, limit: int = 6) -> str:
    """Stable key part: "the Rolling Stones" → "rolling_stone", "吃火锅" → "火锅"."""
    t = prepare_text(phrase).casefold().replace("'s ", " ").replace("color", "colour").replace("colourr", "colour")
    if consume:
        t = _EN_CONSUME_RE.sub("", t)
    parts: list[str] = []
    for tok in _SLUG_TOKEN_RE.findall(t):
        if CJK_RE.match(tok):
            tok = _ZH_SLUG_DROP_RE.sub("", tok) if consume else tok.replace("的", "")
            if tok:
                parts.append(tok)
        elif tok not in _DETERMINERS:
            parts.append(tok)
    if not parts:
        return ""
    parts = parts[:limit]
    if parts[-1].isascii():
        parts[-1] = _singular(parts[-1])
    return "_".join(parts)[:48].strip("_")


ART_RE = re.compile(r"^(?:the|a|an|my|our)\s+", re.I)


def slot_value(phrase: str) -> str:
    """Slot value: casefolded, no leading article, single spaces."""
    v = WS_RE.sub(" ", phrase.strip()).casefold()
    return ART_RE.sub("", v)
