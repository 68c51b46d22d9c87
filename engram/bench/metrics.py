"""Retrieval and latency metrics.

- recall@k: the share of a query's relevant documents found in its top k,
  averaged over queries;
- All@k: the share of queries with *every* relevant document in the top k;
- MRR: the mean of 1 / rank of the first relevant document (0 when none was returned);
- latency percentiles in milliseconds (linear interpolation, as numpy).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from pydantic import BaseModel


def ranks_of(ranking: Sequence[str], relevant: Iterable[str]) -> list[int | None]:
    """The 1-based rank of each relevant id in `ranking` (None where absent)."""
    position: dict[str, int] = {}
    for index, doc_id in enumerate(ranking, 1):
        position.setdefault(doc_id, index)
    return [position.get(r) for r in relevant]


def recall_at(ranks: Sequence[int | None], k: int) -> float:
    """The share of relevant documents ranked within the top k, for one query."""
    if not ranks:
        return 0.0
    return sum(1 for r in ranks if r is not None and r <= k) / len(ranks)


def all_at(ranks: Sequence[int | None], k: int) -> float:
    """1.0 when every relevant document is in the top k, for one query."""
    return float(bool(ranks) and all(r is not None and r <= k for r in ranks))


def reciprocal_rank(ranks: Sequence[int | None]) -> float:
    found = [r for r in ranks if r is not None]
    return 1.0 / min(found) if found else 0.0


def mean_recall(per_query: Sequence[Sequence[int | None]], k: int) -> float:
    return float(np.mean([recall_at(r, k) for r in per_query])) if per_query else 0.0


def mean_all(per_query: Sequence[Sequence[int | None]], k: int) -> float:
    return float(np.mean([all_at(r, k) for r in per_query])) if per_query else 0.0


def mrr(per_query: Sequence[Sequence[int | None]]) -> float:
    return float(np.mean([reciprocal_rank(r) for r in per_query])) if per_query else 0.0


def percentiles(samples_ms: Sequence[float], qs: Iterable[int] = (50, 95, 99)) -> dict[str, float]:
    """``{"p50": …, "p95": …, "p99": …, "mean": …, "n": …}`` of latencies in milliseconds."""
    data = np.asarray(list(samples_ms), dtype=np.float64)
    if data.size == 0:
        return {f"p{q}": 0.0 for q in qs} | {"mean": 0.0, "n": 0}
    out: dict[str, float] = {f"p{q}": float(np.percentile(data, q)) for q in qs}
    out["mean"] = float(data.mean())
    out["n"] = int(data.size)
    return out


class Latency(BaseModel):
    """Latency percentiles in milliseconds over `n` samples."""

    p50: float = 0.0
    p95: float = 0.0
    p99: float = 0.0
    mean: float = 0.0
    n: int = 0


def latency(samples_ms: Sequence[float]) -> Latency:
    return Latency(**percentiles(samples_ms))
