"""How good the offline extraction is: a labelled set, and LoCoMo's annotated observations.

Labelled set (``tests/data/extraction/labelled_{en,zh}.jsonl``), one user turn a line::

    {"text": "我女儿叫小雨，今年七岁。",
     "facts": [{"subject": "other", "must": ["女儿", "小雨"]}, {"subject": "other", "must": ["七岁"]}],
     "not": ["用户今年七岁"]}

`facts` are what a careful reader would file from the turn; each fact names the words it
must contain (`must`: Chinese words as substrings, English words at a word start, any
case, so "cat" matches "cats") and whom it is about (`subject`: "user", or "other" for the
user's pet, child, spouse, colleague…). `not` lists statements that must never be produced
(another person's or a pet's fact stated as the user's). A negative (a question, a request,
a hypothetical, chatter, general knowledge) has no facts. A produced fact is correct when
it contains every `must` word of one labelled fact and no `not` string; precision is the
share of produced facts that are correct, recall the share of labelled facts produced.

LoCoMo observations (`observation_scores`): `session_N_observation` = ``{speaker: [[text,
evidence], …]}``. An observation is covered when at least half of its content words
(`engram.text.content_words`, without the speaker's name) are in the facts kept from its
evidence turns; a fact is supported when at least half of its content words (without
"user") are in one observation of its turn.
"""

from __future__ import annotations

import json
import re
import statistics
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engram.bench.data import normalise_dia_id, parse_evidence, session_turns
from engram.extract import extract_candidates
from engram.text import content_words

__all__ = ["extraction_only", "extraction_timing", "labelled_scores", "observation_scores"]

LABELLED_NOW = datetime(2026, 5, 8, 12, 0, tzinfo=UTC)  # the turns of the labelled set are said then
_OBS_RE = re.compile(r"^session_(\d+)_observation$")
_USER_WORDS = frozenset(("user", "用户"))


def _has_word(content: str, word: str) -> bool:
    w = word.casefold()
    if not w.isascii():
        return w in content
    return re.search(r"(?<![a-z0-9])" + re.escape(w), content) is not None


def _matches(content: str, fact: dict[str, Any]) -> bool:
    low = content.casefold()
    return all(_has_word(low, w) for w in fact["must"])


def labelled_scores(path: str | Path, *, now: datetime = LABELLED_NOW, examples: int = 15) -> dict[str, Any]:
    """Precision and recall of `extract_candidates` on one labelled file (format above)."""
    produced = correct = labelled = found = subject_errors = 0
    misses: list[str] = []
    false_pos: list[str] = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        facts = rec.get("facts", [])
        forbidden = [f.casefold() for f in rec.get("not", [])]
        got = [c.content for c in extract_candidates(rec["text"], role="user", now=now)]
        labelled += len(facts)
        hit = [False] * len(facts)
        for content in got:
            produced += 1
            bad = any(f in content.casefold() for f in forbidden)
            subject_errors += bad
            ok = False
            for i, fact in enumerate(facts):
                if _matches(content, fact):
                    hit[i] = True
                    ok = True
            if ok and not bad:
                correct += 1
            elif len(false_pos) < examples:
                false_pos.append(f"{rec['text']} → {content}")
        found += sum(hit)
        for fact, h in zip(facts, hit, strict=True):
            if not h and len(misses) < examples:
                misses.append(f"{rec['text']} ({fact['subject']}: {', '.join(fact['must'])}) → {got}")
    return {
        "path": str(path), "produced": produced, "correct": correct, "labelled": labelled, "found": found,
        "precision": correct / produced if produced else 1.0, "recall": found / labelled if labelled else 1.0,
        "subject_errors": subject_errors, "misses": misses, "false_positives": false_pos,
    }


def _observations(conversation: dict[str, Any]) -> Iterable[tuple[str, str, list[str]]]:
    """(speaker, observation text, evidence dia_ids) for every annotated observation."""
    for key, value in conversation.items():
        if not _OBS_RE.match(key) or not isinstance(value, dict):
            continue
        for speaker, items in value.items():
            for item in items or ():
                if isinstance(item, (list, tuple)) and item:
                    text = str(item[0])
                    evidence = parse_evidence(item[1] if len(item) > 1 else None)
                    yield str(speaker), text, evidence


def _share(words: frozenset[str], within: frozenset[str] | set[str]) -> float:
    return len(words & within) / len(words) if words else 0.0


def observation_scores(conversation: dict, facts_by_turn: dict[str, list[str]]) -> dict:
    """Coverage of the annotated observations by the facts kept from their evidence turns,
    and support of those facts by an observation of their turn (both at ≥ 50 % of content words)."""
    fact_words = {t: [content_words(f) - _USER_WORDS for f in fs] for t, fs in facts_by_turn.items()}
    obs_by_turn: dict[str, list[frozenset[str]]] = {}
    covered = total = 0
    for speaker, text, evidence in _observations(conversation):
        words = content_words(text) - content_words(speaker)
        if not words:
            continue
        total += 1
        kept: set[str] = set()
        for turn in evidence:
            obs_by_turn.setdefault(turn, []).append(words)
            for fw in fact_words.get(turn, ()):
                kept |= fw
        covered += _share(words, kept) >= 0.5
    facts = supported = 0
    for turn, fws in fact_words.items():
        for fw in fws:
            facts += 1
            supported += any(_share(fw, ow) >= 0.5 for ow in obs_by_turn.get(normalise_dia_id(turn), ()))
    turns = sum(1 for t in _turns(conversation))
    return {
        "observations": total, "covered": covered, "coverage": covered / total if total else 0.0,
        "facts": facts, "supported": supported, "support": supported / facts if facts else 0.0,
        "turns": turns, "turns_with_facts": sum(1 for fs in facts_by_turn.values() if fs),
        "facts_per_turn": facts / turns if turns else 0.0,
    }


def _turns(conversation: dict[str, Any]) -> Iterable[tuple[dict[str, str], datetime | None]]:
    """Every turn (`engram.bench.data.session_turns`), in session order, with its session's date."""
    for _session, when, turns in session_turns(conversation):
        for turn in turns:
            yield turn, when


def extraction_only(conversation: dict) -> dict[str, list[str]]:
    """Facts the rules keep from each turn, said by its speaker ("I" = the speaker) at its session's time."""
    out: dict[str, list[str]] = {}
    for turn, when in _turns(conversation):
        found = extract_candidates(str(turn["text"]), role="user", now=when)
        out[turn["dia_id"]] = [c.content for c in found]
    return out


def extraction_timing(conversations: Iterable[dict], *, repeat: int = 3) -> dict[str, float]:
    """Milliseconds per turn of `extract_candidates` over the conversations' turns (best of `repeat` per turn)."""
    samples: list[float] = []
    for conv in conversations:
        for turn, when in _turns(conv):
            text = str(turn["text"])
            best = min(_timed(text, when) for _ in range(repeat))
            samples.append(best * 1000)
    if not samples:
        return {"turns": 0, "p50_ms": 0.0, "p95_ms": 0.0, "mean_ms": 0.0}
    samples.sort()
    return {"turns": len(samples), "p50_ms": statistics.median(samples),
            "p95_ms": samples[min(len(samples) - 1, int(0.95 * len(samples)))], "mean_ms": statistics.fmean(samples)}


def _timed(text: str, when: datetime | None) -> float:
    t0 = time.perf_counter()
    extract_candidates(text, role="user", now=when)
    return time.perf_counter() - t0
