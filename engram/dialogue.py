"""Dialogue structure: where a turn sits in its conversation, who said it, which turn it answers.

Half of the turns a question needs do not share its words: they answer the turn before
("How long do you hold that pose?" → "I typically hold it for 30-60 seconds"). So a turn
is read with the turn it answers: the nearest earlier turn by another speaker (within a
few turns), else the turn just before it. The order comes from the conversation itself,
never from when a row was inserted: a turn id in the metadata ("D20:10", "20:10",
``turn: 10``), then when it was said; an explicit ``metadata["reply_to"]`` (a turn id or
memory id) names the answered turn outright. A transcript imported shuffled therefore
reads exactly as one imported in order.

Who said a turn: ``metadata["speaker"]``, else a leading "Name: " in its text (the way
transcripts are written), else ``metadata["role"]``.
"""

from __future__ import annotations

import re
from bisect import insort
from functools import lru_cache
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


REPLY_TO_KEY = "reply_to"
SPEAKER_KEY = "speaker"
# metadata keys that may carry a turn's id, most specific first
TURN_ID_KEYS = ("turn_id", "dia_id", "turn", "message_id")
ANSWER_REACH = 3  # how many turns back the answered turn (another speaker's) may be

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
        if turn_number(value) is not None:
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
    the "D20:10" kind still place a turn in session 20."""
    if kind != "turn":
        return None
    metadata = metadata or {}
    turn_id = turn_id_of(metadata)
    number = turn_number(turn_id) if turn_id is not None else None
    if session_id is None and (number is None or number[0] == 0):
        return None
    conversation = f"{agent_id or ''}\x1f{session_id if session_id is not None else f'#{number[0]}'}"  # type: ignore[index]
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
    the row of the turn it answers (-1: none). Placing turns in any order gives the same links."""

    turns: dict[str, list[tuple[tuple[float, float, float], int]]] = field(default_factory=dict)
    places: dict[int, TurnPlace] = field(default_factory=dict)
    by_turn_id: dict[str, int] = field(default_factory=dict)
    by_speaker: dict[str, set[int]] = field(default_factory=dict)
    dirty: set[str] = field(default_factory=set)

    def place(self, row: int, place: TurnPlace, memory_id: str | None = None) -> None:
        insort(self.turns.setdefault(place.conversation, []), (place.order, row))
        self.places[row] = place
        if place.speaker is not None:
            self.by_speaker.setdefault(place.speaker, set()).add(row)
        for name in (place.turn_id, memory_id):
            if name is not None:
                self.by_turn_id[name] = row
        self.dirty.add(place.conversation)

    def move(self, old: int, new: int) -> None:
        """A row re-indexed under a new row number (its content changed)."""
        place = self.places.pop(old, None)
        if place is None:
            return
        rows = self.turns[place.conversation]
        rows[:] = [(key, new if row == old else row) for key, row in rows]
        self.places[new] = place
        if place.speaker is not None:
            self.by_speaker[place.speaker].discard(old)
            self.by_speaker[place.speaker].add(new)
        for name, row in list(self.by_turn_id.items()):
            if row == old:
                self.by_turn_id[name] = new
        self.dirty.add(place.conversation)

    def answered(self, rows: list[int]) -> dict[int, int]:
        """For the rows of one conversation in order: the row each answers."""
        out: dict[int, int] = {}
        for position, row in enumerate(rows):
            place = self.places[row]
            if place.reply_to is not None and place.reply_to in self.by_turn_id:
                out[row] = self.by_turn_id[place.reply_to]
                continue
            if position == 0:
                continue
            out[row] = rows[position - 1]
            if place.speaker is None:
                continue
            for back in range(1, min(ANSWER_REACH, position) + 1):
                other = self.places[rows[position - back]].speaker
                if other is not None and other != place.speaker:
                    out[row] = rows[position - back]
                    break
        return out

    def refresh(self) -> dict[int, int]:
        """Links of the conversations changed since the last call: {row: answered row}."""
        out: dict[int, int] = {}
        for conversation in self.dirty:
            out.update(self.answered([row for _, row in self.turns[conversation]]))
        changed = {row for c in self.dirty for _, row in self.turns[c]}
        self.dirty.clear()
        return out | {row: -1 for row in changed if row not in out}

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
