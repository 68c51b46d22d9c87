"""A correction of something just said: "Oh wait, actually it's June not May", "I meant Alex, not
Sam", "不对，是六月，不是五月". It names no statement of its own, only a word to put in place of
another; `corrected` writes the user's latest memory that says the old word with the new one
(engram.write supersedes it with that).

Why: people correct themselves in the next breath. Without this, "Lisbon in May" stays the trip's
month after "actually it's June", and the correction itself is kept only as a turn.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from engram.extract.dates import DATE_SUFFIX_RE, EN_DATE_RE, ZH_DATE_RE, date_suffix, due_datetime, resolve_en, resolve_zh
from engram.extract.keys import CJK_RE
from engram.models import Candidate, MemoryItem, Source

_WORDS_EN = r"[\w'-]+(?:\s+[\w'-]+){0,3}?"
_LEAD_EN = r"^(?:(?:oh|um|uh|no|sorry|wait|oops|my bad|i misspoke|i said it wrong)[\s,!.]+)*(?:actually[\s,]+)?"
_EN_RE = re.compile(
    rf"{_LEAD_EN}(?:it's|it is|it was|i meant|i mean|make that|that's|that should be|should be|sorry,)\s+"
    rf"(?P<new>{_WORDS_EN}),?\s+not\s+(?P<old>{_WORDS_EN})[\s.!]*$"
    rf"|{_LEAD_EN}not\s+(?P<old2>{_WORDS_EN}),\s*(?:it's\s+|but\s+|i\s+meant\s+)?(?P<new2>{_WORDS_EN})[\s.!]*$",
    re.I,
)
_ZH_LEAD = r"^(?:(?:我)?(?:刚才|刚刚)?说错了|不对|哦不|错了|等等|抱歉|对不起)?[，,！!]?(?:其实)?"
_ZH_RE = re.compile(
    rf"{_ZH_LEAD}(?:是|应该是|我是说)(?P<new>[^，,。！!？?]{{1,10}}?)[，,]?(?:而)?不是(?P<old>[^，,。！!？?]{{1,10}}?)[。！!]?$"
    rf"|{_ZH_LEAD}不是(?P<old2>[^，,。！!？?]{{1,10}}?)[，,](?:而)?是(?P<new2>[^，,。！!？?]{{1,10}}?)[。！!]?$"
)
# a word that says the sentence takes something back, or a name, a month, a number on both sides
_MARKED_RE = re.compile(r"\b(?:actually|wait|sorry|oops|my bad|i meant|i mean|make that|should be)\b", re.I)
_NAMED_RE = re.compile(r"^(?:[A-Z\d]|the\s+\d)")
# the user's memories a correction may reach: the latest few (what was just said), of the last day
LOOK_BACK = 30
CORRECTS_WITHIN = timedelta(days=1)


def correction(text: str) -> tuple[str, str] | None:
    """(new, old) when `text` corrects a word just said, else None."""
    said = text.strip()
    m = _ZH_RE.match(said) if CJK_RE.search(said) else _EN_RE.match(said)
    if m is None:
        return None
    new, old = (m.group("new") or m.group("new2")).strip(), (m.group("old") or m.group("old2")).strip()
    if not new or not old or new.lower() == old.lower():
        return None
    if not CJK_RE.search(said) and not _MARKED_RE.search(said) and not (_NAMED_RE.match(new) and _NAMED_RE.match(old)):
        return None  # "It's fine, not great" is a judgement; "That's Paris, not London" a correction
    return new, old


# a switch from one thing to another, whenever the old one was said: "we switched to uv last week,
# no more poetry", "I moved from Notion to Obsidian", "我们从MySQL换成了PostgreSQL"
_THING_EN = r"[\w.+#-]+(?:\s+[\w.+#-]+){0,2}?"
_WHO_EN = r"\b(?:i|we)(?:'ve|\s+have)?\s+(?:just\s+|finally\s+|recently\s+|already\s+|now\s+)*"
_SWITCH_EN_RE = re.compile(
    rf"{_WHO_EN}(?:switched|moved|migrated|changed)\s+(?:over\s+)?from\s+(?P<old>{_THING_EN})\s+to\s+(?P<new>{_THING_EN})"
    r"(?=\s*(?:[,.!;]|$|\s+(?:last|this|recently|yesterday|now|a\s+few|two|three|and|because)\b))"
    rf"|{_WHO_EN}(?:switched|moved|migrated)\s+(?:over\s+)?to\s+(?P<new2>{_THING_EN})"
    r"(?:\s+(?:last\s+\w+|this\s+\w+|recently|yesterday|now|a\s+few\s+\w+\s+ago))?\s*,?\s+"
    rf"(?:no\s+more|instead\s+of|rather\s+than|not)\s+(?P<old2>{_THING_EN})(?=\s*(?:[,.!;]|$|\s+(?:anymore|any\s+more)\b))"
    rf"|{_WHO_EN}(?:replaced|swapped(?:\s+out)?)\s+(?P<old3>{_THING_EN})\s+(?:with|for)\s+(?P<new3>{_THING_EN})(?=\s*(?:[,.!;]|$))"
    rf"|{_WHO_EN}use\s+(?P<new4>{_THING_EN})\s+(?:now\s+)?instead\s+of\s+(?P<old4>{_THING_EN})(?=\s*(?:[,.!;]|$))",
    re.I,
)
_THING_ZH = r"[^，,。！!？?\s了]{1,12}?"
_SWITCH_ZH_RE = re.compile(
    rf"从(?P<old>{_THING_ZH})(?:换成|改成|换到|改用|迁移到|转到)了?(?P<new>{_THING_ZH})(?:了)?(?=[，,。！!]|$)"
    rf"|不(?:再)?用(?P<old2>{_THING_ZH})了[，,]?(?:改用|换成|改成|现在用)了?(?P<new2>{_THING_ZH})(?:了)?(?=[，,。！!]|$)"
    rf"|(?:换成|改用)了?(?P<new3>{_THING_ZH})[，,](?:不(?:再)?用(?P<old3>{_THING_ZH})了)(?=[，,。！!]|$)"
)
_SWITCH_WORDS = ("switched", "moved", "migrated", "changed", "replaced", "swapped", "instead of",
                 "换成", "改成", "换到", "改用", "迁移", "转到")
_MAX_SWITCH_CHARS = 400  # a switch is said in a sentence or two
_NOT_A_THING = frozenset("it that this them there here a an the my our".split())


def switch(text: str) -> tuple[str, str] | None:
    """(new, old) when `text` says the user switched from one thing to another, else None."""
    said = text.strip()
    low = said.lower()
    if len(said) > _MAX_SWITCH_CHARS or not any(w in low for w in _SWITCH_WORDS):
        return None  # (most messages: no word of a switch, no pattern run)
    m = (_SWITCH_ZH_RE if CJK_RE.search(said) else _SWITCH_EN_RE).search(said)
    if m is None:
        return None
    found = {k: v for k, v in m.groupdict().items() if v}
    new = next(v for k, v in found.items() if k.startswith("new")).strip().rstrip(".!;")
    old = next(v for k, v in found.items() if k.startswith("old")).strip().rstrip(".!;")
    if new.lower() == old.lower() or {new.lower(), old.lower()} & _NOT_A_THING:
        return None
    return new, old


def _as_word(word: str) -> re.Pattern[str] | None:
    """`word` as a whole word, in any case; None for Chinese, which has no spaces to bound it."""
    # (bounded by Latin letters only: "MySQL" is a word of "用MySQL做数据库")
    return None if CJK_RE.search(word) else re.compile(rf"(?<![A-Za-z0-9_'-]){re.escape(word)}(?![A-Za-z0-9_'-])", re.I)


def says(content: str, word: str) -> bool:
    """`content` says `word` (as a whole word, in Latin script)."""
    pattern = _as_word(word)
    return word in content if pattern is None else pattern.search(content) is not None


def corrected(target: MemoryItem, new: str, old: str, now: datetime, why: str = "corrected by the user") -> Candidate:
    """`target` with `old` put right as `new`; a task's day is read again from the new words
    ("actually it's Friday, not Thursday")."""
    pattern = _as_word(old)

    def put_right(text: str) -> str:
        return text.replace(old, new) if pattern is None else pattern.sub(lambda _: new, text)

    content = put_right(target.content)
    due = target.due_at
    if due is not None and target.recurrence is None:
        zh = target.language == "zh"
        m = (ZH_DATE_RE if zh else EN_DATE_RE).search(new)
        if m is not None:
            day, at = (resolve_zh if zh else resolve_en)(m, now.date())
            was = due.astimezone(now.tzinfo) if now.tzinfo else due
            if at is None and (was.hour, was.minute) != (23, 59):
                at = was.time().replace(tzinfo=None)  # "下周三下午两点" → "下周四": still at two
            due = due_datetime(day, at, now, m) or due
            if due != target.due_at and DATE_SUFFIX_RE.search(content):
                content = DATE_SUFFIX_RE.sub("", content).rstrip("。.") + date_suffix(due, at, zh) + ("" if zh else ".")
    return Candidate(
        content=content, kind=target.kind, key=target.key,
        value=put_right(target.value) if target.value else None,
        polarity=int(target.metadata.get("polarity", 0)), importance=target.importance, language=target.language,
        source=Source.RULE, reason=f"{why}: {old} → {new}", entities=list(target.entities),
        due_at=due, recurrence=target.recurrence, valid_from=target.valid_from,
    )
