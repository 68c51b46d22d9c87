"""How much each retriever counts for a query: the dense weight by the query's shape and
language, and how far the lexical retriever reaches into memories in another language.

Dense weight. A one-line English question is read well by its words (BM25); a query in
Chinese (bigram BM25 reads it less well) or of several lines (the dialogue so far, whose gist a
sentence encoder keeps better than its many incidental words) leans on the embedder. Measured
with the multilingual embedder (dev R@10): LoCoMo questions 0.731 / 0.732 / 0.713 / 0.706
at 0 / 0.05 / 0.1 / 0.2 (with dialogue structure merged: 0.773 / 0.772 / 0.768 at 0.05 / 0.1 /
0.2; 0.2 kept, which dates by relevance need: tests/test_dates.py); MADial dialogues zh 0.745 / 0.763 / 0.767 / 0.747 and en 0.773 / 0.783 / 0.785 / 0.798 at
0.4 / 0.5 / 0.6 / 0.7 (`weight_dense`, `weight_dense_wide`).

Cross-language. A Chinese question can only share words with an English memory through what it says in Latin
letters (a name, "Bart"), and an English question none with a Chinese memory but its names.
Those few shared words made the lexical side rank memories of the other language by a name
every one of them holds, and fusion with it buried the multilingual embedder's good ranking
(MADial, Chinese dialogues over English memories, R@10: 0.33 fused against 0.71 dense alone).

So a lexical hit in another language than the query counts in proportion to the share of the
query's word weight written in that language's script; a hit in the query's own language counts
fully, and a store in one language ranks exactly as before.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engram.config import Settings
from engram.text import is_cjk


def dense_weight(settings: Settings, query: str, language: str) -> float:
    """`weight_dense` for a one-line English query, `weight_dense_wide` for one in Chinese
    or of several lines."""
    several = sum(1 for line in query.splitlines() if line.strip()) > 1
    return settings.weight_dense_wide if several or language != "en" else settings.weight_dense


def script_shares(terms: Sequence[str], weights: Sequence[float]) -> dict[str, float]:
    """The share of the query's weighted terms written in Chinese and in Latin script."""
    total = sum(weights) or 1.0
    chinese = sum(w for t, w in zip(terms, weights, strict=True) if any(is_cjk(ch) for ch in t)) / total
    return {"zh": chinese, "en": 1.0 - chinese}


def reach(query_language: str, shares: Mapping[str, float], memory_language: str) -> float:
    """What a lexical hit in `memory_language` is worth to a query in `query_language`, in [0, 1]."""
    if memory_language == query_language or memory_language not in shares:
        return 1.0
    own = shares.get(query_language, 0.0)
    return min(1.0, shares[memory_language] / own) if own > 0 else 1.0


def lexical_reach(
    query_language: str, terms: Sequence[str], weights: Sequence[float], languages: Mapping[str, str]
) -> dict[str, float]:
    """The lexical weight of each hit (id → language of the memory) that is below 1."""
    if not terms:
        return {}
    shares = script_shares(terms, weights)
    out = {}
    for memory_id, language in languages.items():
        worth = reach(query_language, shares, language)
        if worth < 1.0:
            out[memory_id] = worth
    return out
