"""Ranking with the dialogue in mind: who is asked about, filler, question-answer pairs.

- **Speakers.** "What has Melanie painted?" is about Melanie's own turns: a question naming
  a speaker of the conversation favours that speaker's turns (`weight_speaker`), and the
  name counts less as a word (it is in every turn that greets her, "Thanks, Melanie!").
- **Filler.** "Bye!", "Take care, Nate!" say nothing; when nothing matches well they would
  win on the name alone, so their score is scaled by `filler_factor`.
- **Pairs.** A question turn that matches ("What gave you the idea for the colours?") is
  usually not the memory; its answer is. A hit that asks brings the turn answering it into
  the result, just below itself (`pair_factor` of its score).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache
from itertools import pairwise

from engram.config import Settings
from engram.dialogue import body, is_question
from engram.episodes import is_chatter
from engram.store.base import Scope, Store

_WORD = re.compile(r"[^\W\d_][\w'’\-]*", re.UNICODE)
_POSSESSIVE = re.compile(r"['’]s?$")


@lru_cache(maxsize=8192)  # the same turns are judged query after query
def is_filler(content: str) -> bool:
    """A turn that says nothing to remember ("Bye!", "Take care!", "Thanks, Mel!")."""
    return is_chatter(body(content))


def named_speakers(store: Store, scope: Scope, query: str) -> tuple[set[str], set[str]]:
    """(speakers the query names, ids of their turns); empty when it names none."""
    words = [_POSSESSIVE.sub("", w.lower()) for w in _WORD.findall(query)]
    candidates = set(words) | {f"{a} {b}" for a, b in pairwise(words)}
    turns_by = getattr(store, "turns_by", None)  # a backend without a dialogue index: no speakers
    if turns_by is None:
        return set(), set()
    speakers, _ = turns_by(scope, ())
    named = candidates & speakers
    if not named:
        return set(), set()
    return named, turns_by(scope, named)[1]


def name_weights(terms: Sequence[str], weights: Sequence[float], names: set[str], share: float) -> list[float]:
    """`weights` with the speakers' names at `share` (their turns are favoured instead)."""
    from engram.text import lexical_tokens

    quiet = {t for n in names for t in lexical_tokens(n)}
    return [w * share if t in quiet else w for t, w in zip(terms, weights, strict=True)]


def adjust(
    scored: list[tuple[float, str, tuple[float, float, float, float]]],
    contents: Mapping[str, str],
    said_by: set[str],
    settings: Settings,
) -> list[tuple[float, str, tuple[float, float, float, float]]]:
    """Scores with the speaker bonus and the filler penalty, best first."""
    out = []
    for score, memory_id, signal in scored:
        content = contents.get(memory_id)
        if memory_id in said_by:
            score += settings.weight_speaker
        if content is not None and settings.filler_factor < 1.0 and is_filler(content):
            score *= settings.filler_factor
        out.append((score, memory_id, signal))
    out.sort(key=lambda t: t[0], reverse=True)
    return out


def with_pairs(
    store: Store, scope: Scope,
    scored: list[tuple[float, str, tuple[float, float, float, float]]],
    contents: Mapping[str, str], settings: Settings, keep: int,
) -> list[tuple[float, str, tuple[float, float, float, float]]]:
    """The top `keep`, where each question turn among them brings the turn answering it
    (scored `pair_factor` × the question's score, if that is more than it had)."""
    factor = settings.pair_factor
    top = scored[:keep]
    if factor <= 0 or not top:
        return top
    asking = [m for _, m, _ in top if m in contents and is_question(contents[m])]
    if not asking:
        return top
    turn_links = getattr(store, "turn_links", None)  # a backend without a dialogue index: no pairs
    links = turn_links(scope, asking) if turn_links is not None else {}
    scores = {m: (s, sig) for s, m, sig in scored}
    for score, memory_id, signal in top:
        answer = links.get(memory_id, (None, None))[1]
        if answer is None:
            continue
        before = scores.get(answer, (float("-inf"), signal))
        if factor * score > before[0]:
            scores[answer] = (factor * score, before[1])
    ranked = sorted(((s, m, sig) for m, (s, sig) in scores.items()), key=lambda t: t[0], reverse=True)
    return ranked[:keep]


__all__ = ["adjust", "is_filler", "name_weights", "named_speakers", "with_pairs"]
