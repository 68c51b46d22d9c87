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
from engram.store.base import Scope, Store
from engram.text import lexical_tokens


@dataclass(slots=True)
class _Candidate:
    lexical: float = 0.0
    dense: float = 0.0
    fused: float = 0.0
    lexical_rank: int | None = None
    dense_rank: int | None = None


def recency_score(item: MemoryItem, now: datetime, half_life_days: float) -> float:
    """1.0 for a memory from now, 0.5 after one half-life (from its last use or creation)."""
    moment = item.last_accessed or item.created_at
    age_days = max(0.0, (now - moment).total_seconds() / 86400.0)
    return math.pow(0.5, age_days / half_life_days) if half_life_days > 0 else 0.0


def use_score(item: MemoryItem) -> float:
    """Saturating in the number of uses: 0 for never, → 1 for often."""
    return 1.0 - 1.0 / (1.0 + math.log1p(item.access_count))


class Retriever:
    """Runs one query against one scope of a store."""

    def __init__(self, store: Store, embedder: Embedder, settings: Settings) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings

    def embed_query(self, query: str) -> np.ndarray:
        return self.embedder.embed([query])[0]

    def candidates(
        self, scope: Scope, query: str, filters: Filters, depth: int
    ) -> dict[str, _Candidate]:
        s = self.settings
        found: dict[str, _Candidate] = {}
        if s.weight_lexical > 0:
            for rank, (memory_id, score) in enumerate(
                self.store.lexical_search(scope, lexical_tokens(query), filters, depth), 1
            ):
                c = found.setdefault(memory_id, _Candidate())
                c.lexical, c.lexical_rank = score, rank
                c.fused += s.weight_lexical / (s.rrf_k + rank)
        if s.weight_dense > 0:
            for rank, (memory_id, score) in enumerate(
                self.store.dense_search(scope, self.embed_query(query), filters, depth), 1
            ):
                c = found.setdefault(memory_id, _Candidate())
                c.dense, c.dense_rank = score, rank
                c.fused += s.weight_dense / (s.rrf_k + rank)
        return found

    def search(
        self, scope: Scope, query: str, filters: Filters, limit: int, now: datetime
    ) -> list[SearchResult]:
        s = self.settings
        depth = max(s.candidates, limit)
        found = self.candidates(scope, query, filters, depth)
        if not found:
            return []
        best_possible = (s.weight_lexical + s.weight_dense) / (s.rrf_k + 1)
        shortlist = sorted(found, key=lambda i: found[i].fused, reverse=True)[: max(limit * 3, 20)]
        results = []
        for item in self.store.get_many(shortlist):
            c = found[item.id]
            relevance = c.fused / best_possible
            parts = ScoreParts(
                lexical=c.lexical,
                dense=c.dense,
                fused=relevance,
                importance=item.importance,
                recency=recency_score(item, now, s.recency_half_life_days),
                use=use_score(item),
                lexical_rank=c.lexical_rank,
                dense_rank=c.dense_rank,
            )
            score = (
                relevance
                + s.weight_importance * parts.importance
                + s.weight_recency * parts.recency
                + s.weight_use * parts.use
            )
            results.append(SearchResult(memory=item, score=score, parts=parts))
        results.sort(key=lambda r: r.score, reverse=True)
        return results[:limit]
