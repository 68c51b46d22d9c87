"""Memories as Qdrant points: a dense vector, a sparse vector of engram's lexical tokens, and
the record in the payload with the scope fields searches filter on."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
from qdrant_client import models

from engram.store.base import CONTEXT_PREFIX

DENSE = "dense"
LEXICAL = "lexical"
# payload fields with an index (the filters every search applies)
KEYWORD_FIELDS = ("user_id", "agent_id", "status", "kind", "session_id")
FLOAT_FIELDS = ("created_at",)
BM25_K1 = 1.2
CONTEXT_DIM = "ctx:"  # context words (`CONTEXT_PREFIX`) get dimensions of their own


def dimension(token: str) -> int:
    """A token's sparse dimension: 32 bits of its hash (collisions among a user's few thousand
    words are rare, and cost only a little ranking noise)."""
    return int.from_bytes(hashlib.blake2b(token.encode("utf-8"), digest_size=4).digest(), "little")


def document_vector(tokens: Sequence[str]) -> models.SparseVector:
    """A memory's sparse vector: saturated term frequency (BM25's tf part; Qdrant's IDF modifier
    supplies the idf at query time), context words on dimensions of their own."""
    counts = Counter(
        CONTEXT_DIM + t[len(CONTEXT_PREFIX):] if t.startswith(CONTEXT_PREFIX) else t for t in tokens if t
    )
    weights: dict[int, float] = {}
    for token, tf in counts.items():
        key = dimension(token)
        weights[key] = weights.get(key, 0.0) + tf * (BM25_K1 + 1.0) / (tf + BM25_K1)
    return models.SparseVector(indices=list(weights), values=list(weights.values()))


def query_vector(
    terms: Sequence[str], weights: Sequence[float] | None = None, context_weight: float = 0.0
) -> models.SparseVector:
    """A query's sparse vector: each term (weighted), and its context dimension when asked."""
    found: dict[int, float] = {}
    for position, term in enumerate(terms):
        weight = 1.0 if weights is None else float(weights[position])
        found[dimension(term)] = found.get(dimension(term), 0.0) + weight
        if context_weight > 0:
            key = dimension(CONTEXT_DIM + term)
            found[key] = found.get(key, 0.0) + weight * context_weight
    return models.SparseVector(indices=list(found), values=list(found.values()))


def point(
    rowid: int, stamp: str, record: dict[str, Any], embedding: np.ndarray | None, tokens: Sequence[str]
) -> models.PointStruct:
    """`record`: the memory as JSON (`MemoryItem.model_dump(mode="json")`)."""
    vector: dict[str, Any] = {LEXICAL: document_vector(tokens)}
    if embedding is not None:
        vector[DENSE] = np.asarray(embedding, dtype=np.float32).tolist()
    payload = {
        "id": record["id"], "user_id": record["user_id"], "agent_id": record.get("agent_id"),
        "status": record["status"], "kind": record["kind"], "session_id": record.get("session_id"),
        "created_at": record["_created_epoch"], "stamp": stamp,
        "record": {k: v for k, v in record.items() if not k.startswith("_")},
    }
    return models.PointStruct(id=rowid, vector=vector, payload=payload)


def scope_filter(
    user_id: str, agent_id: str | None, statuses: Sequence[str], window: tuple[float | None, float | None] | None,
    permitted: Sequence[int] | None,
) -> models.Filter:
    must: list[Any] = [
        models.FieldCondition(key="user_id", match=models.MatchValue(value=user_id)),
        models.FieldCondition(key="status", match=models.MatchAny(any=list(statuses))),
    ]
    if agent_id is not None:
        must.append(models.FieldCondition(key="agent_id", match=models.MatchValue(value=agent_id)))
    if window is not None:
        since, until = window
        must.append(models.FieldCondition(key="created_at", range=models.Range(gte=since, lt=until)))
    if permitted is not None:
        must.append(models.HasIdCondition(has_id=list(permitted)))
    return models.Filter(must=must)


def user_filter(user_id: str) -> models.Filter:
    return models.Filter(must=[models.FieldCondition(key="user_id", match=models.MatchValue(value=user_id))])
