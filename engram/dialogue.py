"""Dialogue structure: where a turn sits in its conversation, who said it, which turn it answers.

Half of the turns a question needs do not share its words: they answer the turn before
("How long do you hold that pose?" → "I typically hold it for 30-60 seconds"). So a turn
is read with the turn it answers: the nearest earlier turn by another speaker (within a
few turns), else the turn just before it. The order comes from the conversation itself,
never from when a row was inserted: a turn id in the metadata ("D20:10", "20:10",
``turn: 10``), then when it was said; an explicit ``metadata["reply_to"]`` (a turn id or
memory id) names the answered turn outright. A transcript imported shuffled therefore
reads exactly as one imported in order. Turns with neither a session nor a turn id are
one conversation a day, by time, where a long pause starts afresh and only another
speaker's turn is answered (an agent that passes no session is still in a dialogue).

Who said a turn: ``metadata["speaker"]``, else a leading "Name: " in its text (the way
transcripts are written), else ``metadata["role"]``.
"""

from __future__ import annotations

import re
from bisect import bisect_left, insort
from functools import lru_cache
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any


REPLY_TO_KEY = "reply_to"
SPEAKER_KEY = "speaker"
# metadata keys that may carry a turn's id, most specific first
TURN_ID_KEYS = ("turn_id", "dia_id", "turn", "message_id")
ANSWER_REACH = 3  # how many turns back the answered turn (another speaker's) may be
# turns without a session or a session's turn id are one conversation per day (UTC), in which a
# turn said longer than this after the one before starts afresh (answers nothing before it), and
# a turn answers only another speaker's (memories stored verbatim one after another are not a dialogue)
INFERRED_GAP_S = 2 * 3600.0
_INFERRED = "\x1e"  # marks a conversation key inferred from time (session ids hold no control characters)

_TURN_ID = re.compile(r"^\s*[A-Za-z]*\s*:?\s*(\d+)\s*(?::\s*(\d+))?\s*$")
_SPEAKER = re.compile(r"^\s*([^\W\d_][\w'’.\- ]{0,38}?)\s*:\s+(?=\S)")
_QUESTION = re.compile(r"[?？]|吗[。！!]?\s*$")


@dataclass(frozen=True, slots=True)
class TurnPlace:
    """A turn's place in its conversation, as the index orders and links turns."""

    conversation: str
    order: tuple[float, float, float]  # (session number, turn number, said at): sorts the turns
    speaker: str | None = None
    turn_id: str | None = None  # as the caller wrote it (what `reply_to` may name)
    reply_to: str | None = None


def turn_number(value: Any) -> tuple[int, int] | None:
    """(session, turn) from a turn id: "D20:10" → (20, 10), "7" → (0, 7); None otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return (0, value) if value >= 0 else None
    if not isinstance(value, str):
        return None
    m = _TURN_ID.match(value)
    if m is None:
        return None
    return (int(m[1]), int(m[2])) if m[2] is not None else (0, int(m[1]))


def turn_id_of(metadata: Mapping[str, Any]) -> str | None:
    for key in TURN_ID_KEYS:
        value = metadata.get(key)
        if value is not None and turn_number(value) is not None:
            return str(value)
    return None


def speaker_of(content: str, metadata: Mapping[str, Any] | None = None) -> str | None:
    """Who said a turn (lower case), or None when nothing says."""
    metadata = metadata or {}
    named = metadata.get(SPEAKER_KEY)
    if isinstance(named, str) and named.strip():
        return named.strip().lower()
    m = _SPEAKER.match(content)
    if m is not None:
        return m[1].strip().lower()
    role = metadata.get("role")
    return role.lower() if isinstance(role, str) and role else None


def body(content: str) -> str:
    """A turn's words without its "Name: " prefix."""
    m = _SPEAKER.match(content)
    return content[m.end():] if m else content


@lru_cache(maxsize=8192)
def is_question(content: str) -> bool:
    return bool(_QUESTION.search(body(content)))


def place_of(
    kind: str, agent_id: str | None, session_id: str | None, said_at: float,
    metadata: Mapping[str, Any] | None, content: str,
) -> TurnPlace | None:
    """Where a verbatim turn sits (None for anything that is not a turn of a conversation).

    Turns of one session (per agent) form a conversation; without a session, turn ids of
    the "D20:10" kind still place a turn in session 20, and without either the turns of one day
    are one, split where `INFERRED_GAP_S` passes between two (an agent that passes no session:
    LoCoMo dev R@10 0.666 → 0.80 with only the turns' times to go by)."""
    if kind != "turn":
        return None
    metadata = metadata or {}
    turn_id = turn_id_of(metadata)
    number = turn_number(turn_id) if turn_id is not None else None
    if session_id is not None:
        conversation = f"{agent_id or ''}\x1f{session_id}"
    elif number is not None and number[0] != 0:
        conversation = f"{agent_id or ''}\x1f#{number[0]}"
    else:
        conversation = f"{agent_id or ''}\x1f{_INFERRED}{int(said_at // 86400)}"
    reply_to = metadata.get(REPLY_TO_KEY)
    return TurnPlace(
        conversation=conversation,
        order=(float(number[0]), float(number[1]), said_at) if number else (0.0, 0.0, said_at),
        speaker=speaker_of(content, metadata),
        turn_id=turn_id,
        reply_to=str(reply_to) if isinstance(reply_to, (str, int)) and not isinstance(reply_to, bool) else None,
    )


@dataclass(slots=True)
class Conversations:
    """Turns of each conversation in their own order (rows of a scope index), and for each row
    the row of the turn it answers (-1: none). Placing turns in any order gives the same links.

    Links are refreshed where turns were placed: a turn's link reads at most `ANSWER_REACH`
    turns back, so a new turn changes its own and the next few (and those whose `reply_to`
    names it), not its whole conversation (100k turns of one session: 0.12 s per refresh)."""

    turns: dict[str, list[tuple[tuple[float, float, float], int]]] = field(default_factory=dict)
    places: dict[int, TurnPlace] = field(default_factory=dict)
    by_turn_id: dict[str, int] = field(default_factory=dict)
    by_speaker: dict[str, set[int]] = field(default_factory=dict)
    # the rows whose `reply_to` names each turn id or memory id
    named_by: dict[str, set[int]] = field(default_factory=dict)
    # conversation -> the rows placed (or moved) there since the last refresh
    dirty: dict[str, set[int]] = field(default_factory=dict)
    # turns without a session wait here while they are all one voice's (notes, events, the user's
    # messages alone: nothing to link, and placing 1,000 of them cost a cold search ~10 ms); the
    # second voice places them all (not kept in a scope's pack: a pack restores those placed)
    waiting: dict[int, tuple[TurnPlace, str | None]] = field(default_factory=dict)
    voices: set[str] = field(default_factory=set)

    def place(self, row: int, place: TurnPlace, memory_id: str | None = None) -> None:
        if _INFERRED in place.conversation and (self.waiting or len(self.voices) < 2):
            if place.speaker is not None:
                self.voices.add(place.speaker)
            if len(self.voices) < 2 and place.reply_to is None:
                self.waiting[row] = (place, memory_id)
                return
            waiting, self.waiting = self.waiting, {}
            for earlier, (held, name) in waiting.items():
                self._place(earlier, held, name)
        self._place(row, place, memory_id)

    def _place(self, row: int, place: TurnPlace, memory_id: str | None) -> None:
        insort(self.turns.setdefault(place.conversation, []), (place.order, row))
        self.places[row] = place
        if place.speaker is not None:
            self.by_speaker.setdefault(place.speaker, set()).add(row)
        if place.reply_to is not None:
            self.named_by.setdefault(place.reply_to, set()).add(row)
        self._named(row, (place.turn_id, memory_id))
        self.dirty.setdefault(place.conversation, set()).add(row)

    def _named(self, row: int, names: Iterable[str | None]) -> None:
        """`row` is the turn these names stand for: the turns whose `reply_to` names one link again."""
        for name in names:
            if name is None:
                continue
            self.by_turn_id[name] = row
            for asking in self.named_by.get(name, ()):
                self.dirty.setdefault(self.places[asking].conversation, set()).add(asking)

    def move(self, old: int, new: int) -> None:
        """A row re-indexed under a new row number (its content changed)."""
        if old in self.waiting:
            self.waiting[new] = self.waiting.pop(old)
            return
        place = self.places.pop(old, None)
        if place is None:
            return
        rows = self.turns[place.conversation]
        at = bisect_left(rows, (place.order, old))
        rows.pop(at)
        insort(rows, (place.order, new))
        # the turns that read back past the old row (its number may sort it among equals)
        self.dirty.setdefault(place.conversation, set()).update(r for _, r in rows[at : at + ANSWER_REACH])
        self.places[new] = place
        if place.speaker is not None:
            self.by_speaker[place.speaker].discard(old)
            self.by_speaker[place.speaker].add(new)
        if place.reply_to is not None:
            self.named_by[place.reply_to].discard(old)
            self.named_by[place.reply_to].add(new)
        self._named(new, [name for name, row in self.by_turn_id.items() if row == old])
        self.dirty.setdefault(place.conversation, set()).add(new)

    def _position(self, row: int) -> int:
        """Where `row` sits in its conversation."""
        place = self.places[row]
        return bisect_left(self.turns[place.conversation], (place.order, row))

    def link(self, rows: list[tuple[tuple[float, float, float], int]], position: int) -> int:
        """The row the turn at `position` of a conversation answers (-1: none): the turn its
        `reply_to` names, else the nearest of the `ANSWER_REACH` before it said by another
        speaker, else the one just before it. In a conversation inferred from time only another
        speaker's turn, and never one before a pause of `INFERRED_GAP_S`."""
        place = self.places[rows[position][1]]
        if place.reply_to is not None and place.reply_to in self.by_turn_id:
            return self.by_turn_id[place.reply_to]
        earliest = max(0, position - ANSWER_REACH)
        inferred = _INFERRED in place.conversation
        if inferred:
            for later in range(position, earliest, -1):
                if rows[later][0][2] - rows[later - 1][0][2] > INFERRED_GAP_S:
                    earliest = later
                    break
        if position == earliest:
            return -1
        if place.speaker is not None:
            for before in range(position - 1, earliest - 1, -1):
                other = self.places[rows[before][1]].speaker
                if other is not None and other != place.speaker:
                    return rows[before][1]
        # texts said one after another by one voice (notes, events) are not a conversation
        return -1 if inferred else rows[position - 1][1]

    def refresh(self) -> dict[int, int]:
        """Links changed since the last call: {row: answered row or -1}, for the turns placed
        since and the `ANSWER_REACH` after each."""
        out: dict[int, int] = {}
        for conversation, placed in self.dirty.items():
            rows = self.turns[conversation]
            if 2 * len(placed) >= len(rows):
                positions: Iterable[int] = range(len(rows))
            else:
                near: set[int] = set()
                for row in placed:
                    if row in self.places:  # (moved away since)
                        at = self._position(row)
                        near.update(range(at, min(len(rows), at + ANSWER_REACH + 1)))
                positions = near
            for position in positions:
                out[rows[position][1]] = self.link(rows, position)
        self.dirty.clear()
        return out

    def answering(self, row: int, memory_id: str | None = None) -> list[int]:
        """The turns of its conversation that may answer `row`, in order: the `ANSWER_REACH`
        after it, and those whose `reply_to` names it (by turn id or `memory_id`)."""
        place = self.places[row]
        rows = self.turns[place.conversation]
        at = self._position(row)
        found = {r for _, r in rows[at + 1 : at + 1 + ANSWER_REACH]}
        for name in (place.turn_id, memory_id):
            if name is not None:
                found.update(
                    r for r in self.named_by.get(name, ())
                    if r in self.places and self.places[r].conversation == place.conversation
                )
        return sorted(found, key=lambda r: (self.places[r].order, r))

    def replies(self, row: int, answered: int) -> bool:
        """Whether the turn `row` answers (`answered`) is a question put to it: another speaker's
        turn, or the one its `reply_to` names (not the same speaker's previous turn)."""
        place, before = self.places.get(row), self.places.get(answered)
        if place is None or before is None:
            return False
        if place.reply_to is not None and self.by_turn_id.get(place.reply_to) == answered:
            return True
        return place.speaker is not None and before.speaker is not None and place.speaker != before.speaker

    def speakers(self) -> set[str]:
        return {s for s, rows in self.by_speaker.items() if rows}
