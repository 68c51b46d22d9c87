"""Diversity in the top k: near-copies and one session must not crowd out the second evidence.

A question that spans turns ("What activities does Melanie do?", "How do Jon and Gina both
destress?") needs turns from several sessions; ranked by relevance alone, the top k fills
with one session's neighbouring turns and restatements of the best hit. Greedy maximal
marginal relevance: each next pick is the best score less `diversity_session` for every
turn already picked from its session and `diversity_copy` × its word overlap (Jaccard)
with the most similar turn already picked.

Hubs: a memory that shares a little with everything (long, generic, made of frequent
words) keeps winning the second half of a ranking; `hub_penalty` takes a share of the score
of those whose words are mostly common in the scope (see `hubness`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache

from engram.text import content_words

Scored = tuple[float, str, tuple[float, float, float, float]]


@lru_cache(maxsize=8192)
def word_set(text: str) -> frozenset[str]:
    """A memory's content words, as near-copies are compared (cached: the same memories
    come back query after query)."""
    return frozenset(content_words(text))


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Jaccard overlap of two word sets (0 when either is empty)."""
    if not a or not b:
        return 0.0
    shared = len(a & b)  # the union's size without building it
    return shared / (len(a) + len(b) - shared)


def diversify(
    scored: Sequence[Scored], contents: Mapping[str, str], sessions: Mapping[str, str | None],
    keep: int, per_session: float, per_copy: float,
) -> list[Scored]:
    """The top `keep` of `scored` (best first) picked greedily with the penalties above, each
    scored as picked (never above the one before); the rest follow in their order."""
    ranked = sorted(scored, key=lambda t: t[0], reverse=True)
    if (per_session <= 0 and per_copy <= 0) or len(ranked) <= 1:
        return ranked
    words = {m: word_set(contents.get(m, "")) for _, m, _ in ranked} if per_copy > 0 else {}
    # overlap with the most similar pick, brought up to date only when a candidate is looked
    # at (the scan stops early, so most never are): compared[m] picks already compared
    copied = dict.fromkeys(words, 0.0)
    compared = dict.fromkeys(words, 0)
    picked: list[Scored] = []
    counts: dict[str, int] = {}
    rest = list(ranked)
    while rest and len(picked) < keep:
        best_index, best_value = 0, float("-inf")
        for index, (score, memory_id, _) in enumerate(rest):
            if score <= best_value:  # penalties only lower a score: nothing after can win
                break
            session = sessions.get(memory_id)
            value = score - per_session * counts.get(session, 0) if session is not None else score
            if per_copy > 0:
                mine = words[memory_id]
                for _, other, _ in picked[compared[memory_id]:]:
                    copied[memory_id] = max(copied[memory_id], overlap(mine, words[other]))
                compared[memory_id] = len(picked)
                value -= per_copy * copied[memory_id]
            if value > best_value:
                best_index, best_value = index, value
        choice = rest.pop(best_index)
        ceiling = picked[-1][0] if picked else best_value
        picked.append((min(best_value, ceiling), choice[1], choice[2]))
        session = sessions.get(choice[1])
        if session is not None:
            counts[session] = counts.get(session, 0) + 1
    floor = picked[-1][0] if picked else 0.0
    return picked + [(min(score, floor), m, sig) for score, m, sig in rest]
