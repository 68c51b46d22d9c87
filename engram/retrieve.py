"""Hybrid retrieval: lexical ∥ dense → weighted reciprocal-rank fusion → rescoring.

Fusion by rank (not raw score) is robust to the two retrievers' different
score scales. Relevance dominates the final score; importance, recency and
use only reorder memories of similar relevance (weights in the config).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from engram.config import Settings
from engram.models import Filters, MemoryItem, ScoreParts, SearchResult
from engram.providers.embedders import Embedder
from engram.lifecycle import decayed_importance
from engram.store.base import LifeRow, Scope, Store
from engram.text import detect_language, lexical_tokens


@dataclass(slots=True)
class _Candidate:
    lexical: float = 0.0
    dense: float = 0.0
    fused: float = 0.0
    lexical_rank: int | None = None
    dense_rank: int | None = None


def recency_score(signals: LifeRow | MemoryItem, now: datetime, half_life_days: float) -> float:
    """1.0 for a memory from now, 0.5 after one half-life (from its last use or creation)."""
    moment = signals.last_accessed or signals.created_at
    age_days = max(0.0, (now - moment).total_seconds() / 86400.0)
    return math.pow(0.5, age_days / half_life_days) if half_life_days > 0 else 0.0


def use_score(signals: LifeRow | MemoryItem) -> float:
    """Saturating in the number of uses: 0 for never, → 1 for often."""
    return 1.0 - 1.0 / (1.0 + math.log1p(signals.access_count))


def query_terms(query: str) -> tuple[list[str], list[float]]:
    """Distinct query tokens with weights. A long query (the dialogue so far, used as
    context) leans on what it keeps talking about (1 + ln of the weighted count) and on
    its latest lines (a line's tokens count from 0.75 for the first line to 1 for the last;
    a one-line query weighs every token 1)."""
    lines = [line for line in query.splitlines() if line.strip()] or [query]
    counts: dict[str, float] = {}
    for position, line in enumerate(lines, 1):
        recency = 0.75 + 0.25 * position / len(lines)
        for token in lexical_tokens(line):
            counts[token] = counts.get(token, 0.0) + recency
    return list(counts), [c if c < 1.0 else 1.0 + math.log(c) for c in counts.values()]


class Retriever:
    """Runs one query against one scope of a store."""

    def __init__(self, store: Store, embedder: Embedder, settings: Settings) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings

    def embed_query(self, query: str) -> np.ndarray:
        return self.embedder.embed([query])[0]

    def dense_applies(self, query: str) -> bool:
        """Skip the embedder for languages it does not know (wordllama: English only);
        blind fusion with a near-random ranking only hurts (MADial-zh: R@10 0.65 → 0.51).
        It still fills in when the lexical side finds too little (see `candidates`)."""
        languages = getattr(self.embedder, "languages", None)
        return languages is None or detect_language(query) in languages

    def candidates(
        self, scope: Scope, query: str, filters: Filters, depth: int, limit: int = 1
    ) -> dict[str, _Candidate]:
        """Each retriever's top `depth`, fused into one relevance in [0, 1] per memory."""
        s = self.settings
        found: dict[str, _Candidate] = {}
        lexical = dense = []
        if s.weight_lexical > 0:
            terms, weights = query_terms(query)
            lexical = self.store.lexical_search(
                scope, terms, filters, depth, weights=weights, context_weight=s.weight_context
            )
        if s.weight_dense > 0 and (len(lexical) < limit or self.dense_applies(query)):
            dense = self.store.dense_search(scope, self.embed_query(query), filters, depth)
        weight_lexical = s.weight_lexical if lexical else 0.0
        weight_dense = s.weight_dense if dense else 0.0
        total = weight_lexical + weight_dense
        if total == 0:
            return found
        for rank, (memory_id, score) in enumerate(lexical, 1):
            c = found.setdefault(memory_id, _Candidate())
            c.lexical, c.lexical_rank = score, rank
        for rank, (memory_id, score) in enumerate(dense, 1):
            c = found.setdefault(memory_id, _Candidate())
            c.dense, c.dense_rank = score, rank
        if s.fusion == "rrf":
            best = total / (s.rrf_k + 1)
            for c in found.values():
                if c.lexical_rank:
                    c.fused += weight_lexical / (s.rrf_k + c.lexical_rank) / best
                if c.dense_rank:
                    c.fused += weight_dense / (s.rrf_k + c.dense_rank) / best
            return found
        # relative score fusion: BM25 as a share of the best hit, cosine min-max scaled
        top_lexical = lexical[0][1] if lexical else 1.0
        if dense:
            high, low = dense[0][1], dense[-1][1]
            spread = (high - low) or 1.0
        for c in found.values():
            if c.lexical_rank:
                c.fused += weight_lexical * c.lexical / top_lexical
            if c.dense_rank:
                c.fused += weight_dense * (c.dense - low) / spread
            c.fused /= total
        return found

    def search(
        self, scope: Scope, query: str, filters: Filters, limit: int, now: datetime
    ) -> list[SearchResult]:
        s = self.settings
        depth = max(s.candidates, limit)
        found = self.candidates(scope, query, filters, depth, limit)
        if not found:
            return []
        shortlist = sorted(found, key=lambda i: found[i].fused, reverse=True)[: max(limit * 2, 10)]
        scored: list[tuple[float, str, tuple[float, float, float]]] = []
        for memory_id, signals in self.store.signals(shortlist).items():
            signal = (
                decayed_importance(signals, now, s),
                recency_score(signals, now, s.recency_half_life_days),
                use_score(signals),
            )
            score = (
                found[memory_id].fused
                + s.weight_importance * signal[0]
                + s.weight_recency * signal[1]
                + s.weight_use * signal[2]
            )
            scored.append((score, memory_id, signal))
        scored.sort(key=lambda t: t[0], reverse=True)
        top = scored[:limit]
        items = {m.id: m for m in self.store.get_many([t[1] for t in top])}
        results = []
        for score, memory_id, (importance, recency, use) in top:
            if memory_id not in items:
                continue
            c = found[memory_id]
            parts = ScoreParts(
                lexical=c.lexical, dense=c.dense, fused=c.fused,
                importance=importance, recency=recency, use=use,
                lexical_rank=c.lexical_rank, dense_rank=c.dense_rank,
            )
            results.append(SearchResult(memory=items[memory_id], score=score, parts=parts))
        return results
