"""The days a turn talks about, resolved when it is indexed.

"I went camping last Saturday", said on Monday 8 May 2023, is about Saturday 6 May: a
question about "early May" or "the weekend of the 6th" should find it even though it was
said on the 8th, and a question about camping "in June" should not favour it. The time
words of a turn (`engram.when`, EN + ZH: "yesterday", "two weekends ago", "上周六", "前几天")
are read against the moment the turn was said and kept as one span of days per turn;
retrieval's time signal counts a memory said in the range a question names, or about it.
"""

from __future__ import annotations

from datetime import UTC, datetime

from engram.when import TimeRange, find_ranges

MAX_RANGES = 3  # time expressions of one turn read (more are rare)
NAMED_TEXT_CHARS = 2_000  # a turn's first characters read for time words


def named_span(text: str, said_at: datetime) -> tuple[float, float] | None:
    """(start, end) POSIX seconds of the days `text` names, read against `said_at`; None
    when it names none."""
    if not text:
        return None
    if said_at.tzinfo is None:
        said_at = said_at.replace(tzinfo=UTC)
    ranges = find_ranges(text[:NAMED_TEXT_CHARS], said_at)[:MAX_RANGES]
    if not ranges:
        return None
    return min(r.start for r in ranges).timestamp(), max(r.end for r in ranges).timestamp()


NEAR = 0.5  # the time signal of a memory only within the tolerance of a named range


def spans(ranges: list[TimeRange]) -> list[tuple[float, float]]:
    """`ranges` as POSIX (start, end) spans."""
    return [(r.start.timestamp(), r.end.timestamp()) for r in ranges]


def _inside(moment: float, span: tuple[float, float] | None, windows: list[tuple[float, float]], pad: float) -> bool:
    for start, end in windows:
        start, end = start - pad, end + pad
        if start <= moment < end or (span is not None and span[0] < end and start < span[1]):
            return True
    return False


def closeness(
    moment: float, span: tuple[float, float] | None, windows: list[tuple[float, float]], tolerance_days: float,
) -> float:
    """1.0 for a memory said at `moment` (or about `span`) inside a window a question names;
    `NEAR` when only within `tolerance_days` of one (a session dated a day or two off what
    the question says still counts, but less than one on the day); else 0."""
    if _inside(moment, span, windows, 0.0):
        return 1.0
    if tolerance_days > 0 and _inside(moment, span, windows, tolerance_days * 86400.0):
        return NEAR
    return 0.0
