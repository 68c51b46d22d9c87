"""What the assistant told the user it did for them, said as the user would say it.

"Done: I booked you a table for two at Nopa on Friday at 7pm." is something the user was
told and will ask about ("where's my dinner on Friday?"), though the user only said "Great,
thanks!". An assistant turn that reports a booking, an appointment or a reminder it set is
read as the user's own statement of it ("I have a reservation for a table for two at Nopa on
Friday at 7pm.", "Remind me to call my mom tomorrow at 8am.", "我预约了周五下午三点的牙医"),
which the rules then read like any other (a task due that day).

Only what is addressed to the user counts: a "you"/"your"/"为你" in the report, or a request
of the user's it answers ("Can you book …?"). In a conversation between two people the other
one's "I booked a flight to Paris" is their own trip.
"""

from __future__ import annotations

import re

from engram.text import split_sentences

# the acknowledgement an assistant opens its report with
_EN_OPENER = r"(?:(?:done|all\s+set|great|perfect|ok(?:ay)?|sure(?:\s+thing)?|got\s+it|no\s+problem|alright)[:!.,\s–—-]+)?"
_EN_BOOKED_RE = re.compile(
    rf"^{_EN_OPENER}I(?:'ve|\s+have)?\s+(?:just\s+|now\s+|also\s+|gone\s+ahead\s+and\s+|went\s+ahead\s+and\s+)?"
    r"(?P<verb>book(?:ed)?|reserved?|scheduled?|set\s+up|arranged?|made)\s+(?P<you>you\s+)?"
    r"(?P<what>(?:a|an|your|the)\s+.+?)[.!]*$", re.I)
_EN_FOR_YOU_RE = re.compile(r",?\s+for\s+you\b", re.I)
_EN_REMIND_RE = re.compile(
    rf"^{_EN_OPENER}(?:I(?:'ll|\s+will)\s+(?:be\s+sure\s+to\s+)?remind\s+you|I(?:'ve|\s+have)\s+set\s+(?:up\s+)?a\s+reminder"
    r"(?:\s+for\s+you)?)\s+(?P<what>(?:to|about)\s+.+?)[.!]*$", re.I)
# a booking's head noun that is already an appointment ("your flight", "a dentist appointment")
_EN_ARRANGED_RE = re.compile(
    r"\b(?:appointment|flight|call|meeting|interview|reservation|booking|session|class|lesson|consultation|checkup"
    r"|check-up|visit|trip|tour|massage|haircut|dinner|lunch)\b", re.I)
_EN_YOUR_RE = re.compile(r"\b(?:your|yours|you)\b", re.I)
_EN_YOURS = {"your": "my", "yours": "mine", "you": "me"}

_ZH_BOOKED_RE = re.compile(r"^(?:好的|好|没问题|搞定|已完成)?[，,！!。]?(?:我)?(?:已经|已)?(?P<you>(?:为|帮|给|替)你)?(?P<rest>"
                           r"(?:预订|预定|订|预约|约|安排|定)(?:好)?了?.{2,60}?)[。！!]*$")
_ZH_REMIND_RE = re.compile(r"^(?:好的|好|没问题)?[，,！!。]?我(?:会|将)(?P<when>.{0,20}?)提醒你(?P<rest>.{2,60}?)[。！!]*$")

# what a user asks the assistant to arrange
_ASKED_RE = re.compile(
    r"\b(?:book|reserve|schedule|set\s+up|arrange|remind|make\s+(?:a|an|me\s+a)\s+(?:reservation|appointment|booking))\b"
    r"|预订|预定|订|预约|约|安排|提醒", re.I)
_MAX_CHARS = 400  # (a long answer explains; a report of what was done is short)


def told_user(text: str, asked: str | None = None) -> list[str]:
    """The user's own statements of what the assistant's `text` reports doing for them (a
    booking, an appointment, a reminder), one a sentence; [] when it reports nothing of the
    kind. `asked`: the user's message it answers, when the same call holds it."""
    if not text or len(text) > _MAX_CHARS:
        return []
    requested = bool(asked and _ASKED_RE.search(asked))
    out: list[str] = []
    for sentence in split_sentences(text.strip()):
        said = _en_told(sentence.strip(), requested) if sentence.isascii() else _zh_told(sentence.strip(), requested)
        if said:
            out.append(said)
    return out


def _en_told(s: str, requested: bool) -> str | None:
    if (m := _EN_REMIND_RE.match(s)) is not None:
        return f"Remind me {_mine(m.group('what'))}."
    m = _EN_BOOKED_RE.match(s)
    if m is None or not (requested or m.group("you") or _EN_YOUR_RE.search(m.group("what"))):
        return None
    what = _mine(_EN_FOR_YOU_RE.sub("", m.group("what")))  # ("a call with Dr. Lee for you on Monday")
    if _EN_ARRANGED_RE.search(what.split(" at ")[0].split(" for ")[0]):
        return f"I have {what}."  # "your flight to Denver for Tuesday": an appointment already
    if not m.group("verb").lower().startswith(("book", "reserv")):
        return None  # ("I made you a cake", "I set up your laptop": nothing booked)
    return f"I have a reservation for {what}."  # "a table for two at Nopa on Friday at 7pm"


def _zh_told(s: str, requested: bool) -> str | None:
    if (m := _ZH_REMIND_RE.match(s)) is not None:
        return "提醒我" + m.group("when") + m.group("rest") + "。"
    if (m := _ZH_BOOKED_RE.match(s)) is not None and (m.group("you") or requested):
        return "我" + m.group("rest").replace("你的", "我的") + "。"
    return None


def _mine(what: str) -> str:
    """The assistant's "your" as the user says it: "your mom" → "my mom"."""
    return _EN_YOUR_RE.sub(lambda m: _EN_YOURS[m.group().lower()], what)
