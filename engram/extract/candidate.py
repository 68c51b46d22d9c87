"""The context rules run in, and the one way rules make a `Candidate`."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from datetime import datetime

from engram.extract.keys import ART_RE
from engram.extract.rewrite import en_rest
from engram.models import Candidate, Kind, Source, as_utc

_IMPORTANCE = {Kind.IDENTITY: 0.85, Kind.PREFERENCE: 0.7, Kind.FACT: 0.7, Kind.TASK: 0.75, Kind.EVENT: 0.6}
_RULE_CONFIDENCE = 0.8


@dataclass(slots=True)
class Ctx:
    now: datetime  # aware; dates resolve in its time zone
    lang: str
    relaxed: bool = False  # inside an explicit command: tasks need no modal verb
    greeted: bool = False  # "hi, I'm Caroline": a bare name after a greeting
    memo: dict[str, Any] | None = None  # shared by a message's clauses: who "she"/"它" is ("other")
    soft: bool = False  # a plan or a past habit ("打算…", "I used to…"): only general statements


# "User also likes tea." / "用户也喜欢茶": said after another statement, kept on its own
_ALSO_RE = re.compile(r"^(?P<who>User(?:'s [a-z]+)? )also |^(?P<who_zh>用户(?:的[\u4e00-\u9fff]{1,3})?)也(?=[\u4e00-\u9fff])")


def entities_of(*phrases: str) -> list[str]:
    """Short phrases (≤ 4 words, ≤ 12 CJK characters) without a leading article."""
    out = []
    for p in phrases:
        p = (p or "").strip()
        if p and (len(p.split()) <= 4 if p.isascii() else len(p) <= 12):
            out.append(ART_RE.sub("", p))
    return out


def candidate(ctx: Ctx, kind: Kind, content: str, key: str | None, value: str | None, reason: str,
              *, polarity: int = 0, entities: list[str] | None = None, due_at: datetime | None = None,
              recurrence: str | None = None, valid_from: datetime | None = None) -> Candidate:
    """A rule's candidate: rule importance and confidence, dates in UTC."""
    if content.startswith("User"):
        content = en_rest(content)  # "User loves my job." → "User loves their job."
    content = _ALSO_RE.sub(lambda m: m.group("who") or m.group("who_zh"), content)  # on its own: "also" of what?
    return Candidate(
        content=content, kind=kind, key=key, value=value, polarity=polarity,
        importance=_IMPORTANCE[kind], confidence=_RULE_CONFIDENCE, language=ctx.lang,
        source=Source.RULE, reason=reason, entities=list(dict.fromkeys(entities or ())),
        due_at=as_utc(due_at) if due_at else None, recurrence=recurrence,
        valid_from=as_utc(valid_from) if valid_from else None,
    )
