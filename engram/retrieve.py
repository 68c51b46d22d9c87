"""Hybrid retrieval: lexical ∥ dense → weighted reciprocal-rank fusion → rescoring.

Fusion by rank (not raw score) is robust to the two retrievers' different
score scales. Relevance dominates the final score; importance, recency and
use only reorder memories of similar relevance (weights in the config).

A query that names a time ("last May", "去年", `engram.when`) is about what was
said then: each retriever runs once more within the range, so that memories
from then are candidates even when other times match the topic better; those
said within the range get `weight_time` on top; and the time words count less
as topic words (they would pull up every memory that merely says "last" or
"去年"), unless nothing was said then: "4 years ago" is then a quote.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from engram import dialogue_rank, diversity, when_said
from engram.config import Settings
from engram.fusion import dense_weight, lexical_reach
from engram.graph import expand as graph
from engram.kinds import REPLY_KEY
from engram.lifecycle import decayed_importance
from engram.models import Filters, Kind, MemoryItem, ScoreParts, SearchResult, Status
from engram.providers.embedders import Embedder
from engram.providers.query_cache import QueryCache
from engram.store.base import MemoryRow, Scope, Store
from engram.slots import fact_slots, question_slots, without_idioms
from engram.text import detect_language, lexical_tokens
from engram.when import TimeRange, find_ranges
from engram.whose import (
    about_someone_else, about_someone_named, about_user_alone, among_asked, asked_relations, theirs_about, users_own,
)

_MAX_RANGES = 3  # time expressions of one query searched within (more are rare and costly)
_REPLACED_DEPTH = 10  # superseded memories searched, whose matches count for what replaced them
_REPLACED_HOPS = 4  # versions followed from a superseded memory to the current one
_TIME_WORD_WEIGHT = 0.25  # lexical weight of a query's time words while memories from then exist
# words of liking say the same thing for relevance ("what do I like?" is about "User loves tea")
_SAME = {"love": "like", "enjoy": "like", "prefer": "like", "ador": "like", "fond": "like", "favourit": "like",
         "favorit": "like", "dislik": "hate", "喜爱": "喜欢", "爱": "喜欢", "偏好": "喜欢", "讨厌": "不喜欢"}
# beside what it is about, a question's word of liking weighs less: "which seat do I like on
# planes?" is about seats, not about "User likes the Lakers" (the one memory that says "like")
_LIKING = frozenset({*_SAME, *_SAME.values(), "fan"})
_LIKING_WEIGHT = 0.35
_LIKE_NOT_LIKING_RE = re.compile(r"\b(?:look|feel|seem|sound|taste|smell)(?:s|ed)?\s+like\b|\blikely\b", re.I)


@dataclass(slots=True)
class _Candidate:
    lexical: float = 0.0
    dense: float = 0.0
    fused: float = 0.0
    lexical_rank: int | None = None
    dense_rank: int | None = None
    in_range: bool = False  # found by a search within a time range the query names


def replaced_filters(filters: Filters) -> Filters | None:
    """For a plain search of live memories (no other filter), the same search over the
    superseded ones; None otherwise (a caller who names statuses, or asks "as of", gets
    exactly those)."""
    if not filters.is_default or set(filters.status) != {Status.ACTIVE, Status.DISPUTED}:
        return None
    return Filters(status=[Status.SUPERSEDED])


def with_successors(
    hits: list[tuple[str, float]], replaced: list[tuple[str, float]], successors: dict[str, str]
) -> list[tuple[str, float]]:
    """`hits` joined by the current version of each replaced memory, at the replaced one's
    score when that is better, best first."""
    best = dict(hits)
    for memory_id, score in replaced:
        current = successors.get(memory_id)
        if current is not None and score > best.get(current, float("-inf")):
            best[current] = score
    return sorted(best.items(), key=lambda kv: kv[1], reverse=True)


def _competing(old: list[tuple[str, float]], hits: list[tuple[str, float]]) -> list[tuple[str, float]]:
    """The `old` hits that score above the `_REPLACED_DEPTH`-th of `hits`."""
    floor = hits[_REPLACED_DEPTH - 1][1] if len(hits) >= _REPLACED_DEPTH else float("-inf")
    return [(i, score) for i, score in old if score > floor]


def time_ranges(query: str, reference: datetime) -> list[TimeRange]:
    """The time ranges a query names, read against `reference`.

    Only the last line counts: a long query is the dialogue so far, and "today" in an
    earlier line is that line's day, not what the current message asks about."""
    body = query.rstrip()
    return find_ranges(body[body.rfind("\n") + 1 :], reference)[:_MAX_RANGES]


def quieter(terms: list[str], weights: list[float], ranges: list[TimeRange]) -> list[float]:
    """`weights` with the time words' share cut: "May" or "去年" should not pull up every
    memory that says them, only help among those on the topic."""
    quiet = {t for r in ranges for t in lexical_tokens(r.text)}
    return [w * _TIME_WORD_WEIGHT if t in quiet else w for t, w in zip(terms, weights, strict=True)]


def recency_score(signals: MemoryRow | MemoryItem, now: datetime, half_life_days: float) -> float:
    """1.0 for a memory from now, 0.5 after one half-life (from its last use or creation)."""
    moment = signals.last_accessed or signals.created_at
    age_days = max(0.0, (now - moment).total_seconds() / 86400.0)
    return math.pow(0.5, age_days / half_life_days) if half_life_days > 0 else 0.0


def use_score(signals: MemoryRow | MemoryItem) -> float:
    """Saturating in the number of uses: 0 for never, → 1 for often."""
    return 1.0 - 1.0 / (1.0 + math.log1p(signals.access_count))


def query_terms(query: str) -> tuple[list[str], list[float]]:
    """Distinct query tokens with weights. A long query (the dialogue so far, used as
    context) leans on what it keeps talking about (1 + ln of the weighted count) and on
    its latest lines (a line's tokens count from 0.75 for the first line to 1 for the last;
    a one-line query weighs every token 1). The slots the last line asks for (engram.slots:
    "what's my job?") count as words of it; a word of liking beside other words weighs
    `_LIKING_WEIGHT`."""
    lines = [line for line in query.splitlines() if line.strip()] or [query]
    counts: dict[str, float] = {}
    for position, line in enumerate(lines, 1):
        recency = 0.75 + 0.25 * position / len(lines)
        for token in lexical_tokens(without_idioms(line)):
            counts[token] = counts.get(token, 0.0) + recency
    for slot in question_slots(lines[-1]):
        counts[slot] = counts.get(slot, 0.0) + 1.0
    weights = [c if c < 1.0 else 1.0 + math.log(c) for c in counts.values()]
    if len(lines) == 1 and any(t in _LIKING for t in counts) and any(t not in _LIKING for t in counts) \
            and not _LIKE_NOT_LIKING_RE.search(query):
        weights = [w * _LIKING_WEIGHT if t in _LIKING else w for t, w in zip(counts, weights, strict=True)]
    return list(counts), weights


class Retriever:
    """Runs one query against one scope of a store."""

    def __init__(
        self, store: Store, embedder: Embedder, settings: Settings,
        settle: Callable[..., None] | None = None,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        self.queries = QueryCache()  # a repeated query is not embedded again
        # makes a user's pending vectors and graph links before a search reads them (engram.embed_behind)
        self.settle = settle

    def embed_query(self, query: str) -> np.ndarray:
        return self.queries.vector(self.embedder, query)

    def dense_search(self, scope: Scope, vector: np.ndarray, filters: Filters, depth: int) -> list[tuple[str, float]]:
        """The store's dense search, once the user's memories written behind have their vectors;
        a turn is read with the turn it answers, as on the lexical side (`weight_context`)."""
        if self.settle is not None:  # (a stand-in vector will do while the real one is made)
            self.settle(scope.user_id, links=False, stand_ins=True)
        return self.store.dense_search(scope, vector, filters, depth, context_weight=self.settings.weight_context)

    def dense_applies(self, query: str) -> bool:
        """Skip the embedder for languages it does not know (wordllama: English only);
        blind fusion with a near-random ranking only hurts (MADial-zh: R@10 0.65 → 0.51).
        It still fills in when the lexical side finds too little (see `candidates`)."""
        languages = getattr(self.embedder, "languages", None)
        return languages is None or detect_language(query) in languages

    def candidates(
        self, scope: Scope, query: str, filters: Filters, depth: int, limit: int = 1,
        ranges: list[TimeRange] | None = None, names: set[str] | None = None,
    ) -> dict[str, _Candidate]:
        """Each retriever's top `depth`, fused into one relevance in [0, 1] per memory.

        With `ranges`, each retriever also runs within each range; what only those runs
        find joins after the overall hits (ranked after them, scaled like them)."""
        s = self.settings
        found: dict[str, _Candidate] = {}
        lexical = dense = []
        terms: list[str] = []
        weights: list[float] = []  # as searched (time words quieter)
        plain: list[float] = []  # as the query has them
        vector: np.ndarray | None = None
        if s.weight_lexical > 0:
            terms, plain = query_terms(query)
            weights = quieter(terms, plain, ranges) if ranges else plain
            if names:  # the speakers' turns are favoured instead (engram.dialogue_rank)
                plain = weights = dialogue_rank.name_weights(terms, weights, names, s.speaker_name_weight)
            lexical = self.store.lexical_search(
                scope, terms, filters, depth, weights=weights, context_weight=s.weight_context
            )
        if s.weight_dense > 0 and (len(lexical) < limit or self.dense_applies(query)):
            vector = self.embed_query(query)
            dense = self.dense_search(scope, vector, filters, depth)
        replaced = replaced_filters(filters)
        if replaced is not None:
            lexical, dense = self._current(scope, replaced, terms, weights, vector, lexical, dense)
        # scales of the overall hits, kept when hits from within a range join
        top_lexical = lexical[0][1] if lexical else 1.0
        high, low = (dense[0][1], dense[-1][1]) if dense else (1.0, 0.0)
        in_range: set[str] = set()
        if ranges:
            dense_before = bool(dense)
            lexical, dense, in_range, vector = self._within(
                scope, query, filters, depth, limit, ranges, terms, weights, vector, lexical, dense
            )
            if dense and not dense_before:  # only the searches within ranges ran dense
                high, low = max(d for _, d in dense), min(d for _, d in dense)
            if not in_range and weights != plain:
                # nothing said then: the time words can only be words ("4 years ago", said later)
                lexical = self.store.lexical_search(
                    scope, terms, filters, depth, weights=plain, context_weight=s.weight_context
                )
                top_lexical = lexical[0][1] if lexical else 1.0
        language = detect_language(query)
        reach = self._reach(scope, language, terms, plain, lexical) if dense else {}
        weight_lexical = s.weight_lexical if lexical else 0.0
        # the wider dense weight is for an embedder that reads the query's language; one that
        # cannot (wordllama on Chinese) only fills in, at the plain weight
        weight_dense = (dense_weight(s, query, language) if self.dense_applies(query) else s.weight_dense) if dense else 0.0
        total = weight_lexical + weight_dense
        if total == 0:
            return found
        for rank, (memory_id, score) in enumerate(lexical, 1):
            c = found.setdefault(memory_id, _Candidate())
            c.lexical, c.lexical_rank = score, rank
        for rank, (memory_id, score) in enumerate(dense, 1):
            c = found.setdefault(memory_id, _Candidate())
            c.dense, c.dense_rank = score, rank
        for memory_id in in_range:
            found[memory_id].in_range = True
        if s.fusion == "rrf":
            best = total / (s.rrf_k + 1)
            for memory_id, c in found.items():
                if c.lexical_rank:
                    c.fused += weight_lexical * reach.get(memory_id, 1.0) / (s.rrf_k + c.lexical_rank) / best
                if c.dense_rank:
                    c.fused += weight_dense / (s.rrf_k + c.dense_rank) / best
            return found
        # relative score fusion: BM25 as a share of the best hit, cosine min-max scaled
        spread = (high - low) or 1.0
        for memory_id, c in found.items():
            if c.lexical_rank:
                c.fused += weight_lexical * reach.get(memory_id, 1.0) * c.lexical / top_lexical
            if c.dense_rank:
                c.fused += weight_dense * max(0.0, (c.dense - low) / spread)
            c.fused /= total
        return found

    def _current(
        self, scope: Scope, replaced: Filters, terms: list[str], weights: list[float], vector: np.ndarray | None,
        lexical: list[tuple[str, float]], dense: list[tuple[str, float]],
    ) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        """The hits, with what a superseded memory matches counted for its current version:
        after "I live in Lisbon" and "I moved to Porto", "where do I live?" matches the old
        fact's words and finds the new one ("latest wins" on the read side too)."""
        s = self.settings
        old_lexical = self.store.lexical_search(
            scope, terms, replaced, _REPLACED_DEPTH, weights=weights, context_weight=s.weight_context
        ) if terms else []
        old_dense = self.dense_search(scope, vector, replaced, _REPLACED_DEPTH) if vector is not None and dense else []
        # only an old version that would be among the top hits can lift its successor (and only
        # those are followed: a user with history has some superseded row near every query)
        old_lexical, old_dense = _competing(old_lexical, lexical), _competing(old_dense, dense)
        if not old_lexical and not old_dense:
            return lexical, dense
        successors = self._successors(scope, {i for i, _ in old_lexical} | {i for i, _ in old_dense})
        if not successors:
            return lexical, dense
        return with_successors(lexical, old_lexical, successors), with_successors(dense, old_dense, successors)

    def _successors(self, scope: Scope, memory_ids: set[str]) -> dict[str, str]:
        """The live memory of the scope that replaced each of `memory_ids`, version after version
        (one merged into a summary: the summary); none where the chain ends elsewhere."""
        live = {Status.ACTIVE, Status.DISPUTED}
        found: dict[str, str] = {}
        at = {memory_id: memory_id for memory_id in memory_ids}  # where each chain has got to
        for _ in range(_REPLACED_HOPS):
            items = {m.id: m for m in self.store.get_many(sorted(set(at.values())))}
            onward: dict[str, str] = {}
            for origin, memory_id in at.items():
                item = items.get(memory_id)
                if item is None or item.user_id != scope.user_id or (
                    scope.agent_id is not None and item.agent_id != scope.agent_id
                ):
                    continue
                if memory_id != origin and item.status in live:
                    found[origin] = memory_id
                elif item.superseded_by:
                    onward[origin] = item.superseded_by
            if not onward:
                break
            at = onward
        return found

    def _reach(
        self, scope: Scope, language: str, terms: list[str], weights: list[float], lexical: list[tuple[str, float]]
    ) -> dict[str, float]:
        """Lexical hits in another language than the query's, worth less (engram.fusion); only
        with an embedder that reads across languages (otherwise nothing takes their place)."""
        if not lexical or getattr(self.embedder, "languages", ()) is not None:
            return {}
        ids = [i for i, _ in lexical]
        known = getattr(self.store, "languages", None)  # from the user's index: no row read
        languages = known(scope, ids) if known is not None else {}
        missing = [i for i in ids if i not in languages]
        if missing:
            languages.update((i, r.language) for i, r in self.store.signals(missing).items())
        return lexical_reach(language, terms, weights, languages)

    def _within(
        self, scope: Scope, query: str, filters: Filters, depth: int, limit: int,
        ranges: list[TimeRange], terms: list[str], weights: list[float],
        vector: np.ndarray | None, lexical: list[tuple[str, float]], dense: list[tuple[str, float]],
    ) -> tuple[list[tuple[str, float]], list[tuple[str, float]], set[str], np.ndarray | None]:
        """The overall hits extended by each retriever's top `depth` within each range,
        and the ids those searches found (all of them in a range). A memory in a range
        that is among the overall top `depth` is also among the top `depth` within it,
        so every overall hit said then is marked."""
        s = self.settings
        dense_ran = bool(dense)
        lexical, dense = list(lexical), list(dense)
        seen_lexical = {i for i, _ in lexical}
        seen_dense = {i for i, _ in dense}
        in_range: set[str] = set()
        for r in ranges:
            since = r.start if filters.since is None else max(r.start, filters.since)
            until = r.end if filters.until is None else min(r.end, filters.until)
            if since >= until:
                continue
            within = filters.model_copy(update={"since": since, "until": until})
            hits: list[tuple[str, float]] = []
            if terms:
                hits = self.store.lexical_search(
                    scope, terms, within, depth, weights=weights, context_weight=s.weight_context
                )
                in_range.update(i for i, _ in hits)
                lexical += [(i, score) for i, score in hits if i not in seen_lexical]
                seen_lexical.update(i for i, _ in hits)
            if s.weight_dense > 0 and (dense_ran or len(hits) < limit):
                if vector is None:
                    vector = self.embed_query(query)
                near = self.dense_search(scope, vector, within, depth)
                in_range.update(i for i, _ in near)
                dense += [(i, score) for i, score in near if i not in seen_dense]
                seen_dense.update(i for i, _ in near)
        return lexical, dense, in_range, vector

    def _graph(self, scope: Scope, query: str, filters: Filters, depth: int, found: dict[str, _Candidate]) -> None:
        """Graph-expanded retrieval (engram.graph.expand) fused in: each candidate's relevance
        becomes the weighted mean of what it had and its share of the graph's best score."""
        s = self.settings
        if not graph.applies(query):
            return  # not a question the graph serves: the links still owed can wait for the worker
        if self.settle is not None:  # the user's links made behind (engram.embed_behind)
            self.settle(scope.user_id, vectors=False)
        hits = graph.ranked(self.store, scope, query, filters, s, found)[:depth]
        if not hits:
            return
        total = (s.weight_lexical if s.weight_lexical > 0 else 0.0) + (s.weight_dense if s.weight_dense > 0 else 0.0)
        best = hits[0][1] or 1.0
        for c in found.values():
            c.fused = c.fused * total / (total + s.weight_graph)
        for memory_id, score in hits:
            c = found.setdefault(memory_id, _Candidate())
            c.fused += s.weight_graph * score / best / (total + s.weight_graph)

    def search(
        self, scope: Scope, query: str, filters: Filters, limit: int, now: datetime,
        reference: datetime | None = None, *, spare: int = 0,
    ) -> list[SearchResult]:
        """Top `limit` memories, and `spare` more for the caller to drop what a better one says
        (engram.read); relative dates in the query are read against `reference` (default:
        `now`, which recency and decay are measured from)."""
        with getattr(self.store, "reading", nullcontext)():  # one look for other processes' commits
            return self._search(scope, query, filters, limit, now, reference, spare=spare)

    def _search(
        self, scope: Scope, query: str, filters: Filters, limit: int, now: datetime,
        reference: datetime | None = None, *, spare: int = 0,
    ) -> list[SearchResult]:
        s = self.settings
        depth = max(s.candidates, limit)
        ranges: list[TimeRange] = []
        if s.weight_time > 0:
            ranges = time_ranges(query, reference or now)
        names, said_by = set(), set()
        if s.weight_speaker > 0:
            names, said_by = dialogue_rank.named_speakers(self.store, scope, query)
        found = self.candidates(scope, query, filters, depth, limit, ranges, names)
        if s.graph and s.weight_graph > 0:
            self._graph(scope, query, filters, depth, found)
        if not found:
            return []
        shortlist = sorted(
            found, key=lambda i: found[i].fused + s.weight_time * found[i].in_range, reverse=True
        )[: max((limit + spare) * 2, 10)]
        scored: list[tuple[float, str, tuple[float, float, float, float]]] = []
        contents: dict[str, str] = {}
        sessions: dict[str, str | None] = {}
        keys: dict[str, str | None] = {}
        # the time a query names counts for memories said then or about then, give or take
        # a few days, in proportion to how well they match otherwise (a date alone, maybe
        # off by a session, must not pull up a whole day's chatter)
        windows = when_said.spans(ranges)
        named_spans = getattr(self.store, "named_spans", None) if windows and s.resolve_dates else None
        spans = named_spans(scope, shortlist) if named_spans is not None else {}
        best = max((found[i].fused for i in shortlist), default=1.0) or 1.0
        for memory_id, signals in self.store.signals(shortlist).items():
            contents[memory_id], sessions[memory_id] = signals.content, signals.session_id
            keys[memory_id] = signals.key
            signal = (
                decayed_importance(signals, now, s),
                recency_score(signals, now, s.recency_half_life_days),
                use_score(signals),
                when_said.closeness(
                    signals.created_at.timestamp(), spans.get(memory_id), windows, s.time_tolerance_days
                ) if windows else 0.0,
            )
            score = (
                found[memory_id].fused
                + s.weight_importance * signal[0]
                + s.weight_recency * signal[1]
                + s.weight_use * signal[2]
                + s.weight_time * signal[3] * (found[memory_id].fused / best if s.time_by_relevance else 1.0)
            )
            scored.append((score, memory_id, signal))
        scored = dialogue_rank.adjust(scored, contents, said_by, s)
        if s.other_subject_factor < 1.0:
            scored = _whose_first(scored, query, contents, keys, s.other_subject_factor)
        scored = diversity.diversify(
            scored, contents, sessions, limit + spare, s.diversity_session, s.diversity_copy
        )
        top = dialogue_rank.with_pairs(self.store, scope, scored, contents, s, limit + spare)
        items = {m.id: m for m in self.store.get_many([t[1] for t in top])}
        terms, weights = query_terms(query)
        results = []
        for score, memory_id, (importance, recency, use, time) in top:
            if memory_id not in items:
                continue
            c = found.get(memory_id) or _Candidate()  # a pair brought in (engram.dialogue_rank)
            parts = ScoreParts(
                lexical=c.lexical, dense=c.dense, fused=c.fused,
                importance=importance, recency=recency, use=use, time=time,
                lexical_rank=c.lexical_rank, dense_rank=c.dense_rank,
            )
            relevance = self.relevance(items[memory_id], c, terms, weights)
            results.append(SearchResult(memory=items[memory_id], score=score, relevance=relevance, parts=parts))
        return results

    def relevance(self, item: MemoryItem, found: _Candidate, terms: list[str], weights: list[float]) -> float:
        """Absolute relevance in [0, 1], comparable across queries (unlike the fused score, which
        is relative to the best hit): the larger of the share of the query's weighted words the
        memory contains (an episode's answered turn counting at `weight_context`) and the
        embedder's cosine (a turn's with `weight_context` × its question's, as dense search
        ranks it), calibrated between `relevance_cosine_floor` (unrelated) and
        `relevance_cosine_full`."""
        s = self.settings
        covered = 0.0
        if terms:
            have = {_SAME.get(t, t) for t in (*lexical_tokens(item.content), *fact_slots(item.key, item.content))}
            answered = item.metadata.get(REPLY_KEY) if item.kind is Kind.TURN else None
            around = {_SAME.get(t, t) for t in lexical_tokens(answered)} if isinstance(answered, str) else set()
            covered = sum(
                w if _SAME.get(t, t) in have else s.weight_context * w if _SAME.get(t, t) in around else 0.0
                for t, w in zip(terms, weights, strict=True)
            ) / (sum(weights) or 1.0)
        similar = 0.0
        if found.dense_rank is not None:
            span = (s.relevance_cosine_full - s.relevance_cosine_floor) or 1.0
            similar = min(1.0, max(0.0, (found.dense - s.relevance_cosine_floor) / span))
        return round(max(covered, similar), 4)


def _whose_first(
    scored: list[tuple[float, str, tuple[float, float, float, float]]], query: str, contents: dict[str, str],
    keys: dict[str, str | None], factor: float,
) -> list[tuple[float, str, tuple[float, float, float, float]]]:
    """`factor` of the score for a memory about someone the question is not about (engram.whose):
    what is said of the user's roommate, asked about the user alone ("我要考哪个学校？"); the user's
    own particulars, or a fact about another of theirs, asked about someone of theirs ("what's my
    niece's name?" is not "User's name is Lena." nor "User's nephew is called Max.")."""
    alone, other = about_user_alone(query), about_someone_named(query)
    if not alone and not other:
        return scored
    asked = asked_relations(query) if other else frozenset()
    about = {memory_id: theirs_about(contents[memory_id]) for _, memory_id, _ in scored} if asked else {}
    # another of theirs counts less only once something is said of the one asked about (asked
    # for "my niece's name", "User's sister Eva had a baby girl named Mila" is the answer)
    if not any(subject is not None and among_asked(subject, asked) for subject in about.values()):
        about = {}

    def elsewhere(memory_id: str) -> bool:
        subject = about.get(memory_id)
        return subject is not None and not among_asked(subject, asked)

    return [
        (score * factor if (alone and about_someone_else(contents[memory_id]))
         or (other and (users_own(keys[memory_id]) or elsewhere(memory_id)))
         else score, memory_id, signal)
        for score, memory_id, signal in scored
    ]
