"""Reference retrieval systems measured side by side with engram, in numpy.

- `BM25Index`: Okapi BM25 (k1=1.5, b=0.75, Lucene's non-negative idf) over
  plain tokens: lowercase words of two or more characters for alphabetic text,
  character bigrams for Chinese/Japanese/Korean runs (a lone character stays a
  unigram). No stemming, no stopwords; a term repeated in the query counts each
  time. This is the "plain BM25" of the references: on MADial-zh (dev slice,
  event text) it gives exactly the README's R@5 0.498 / R@10 0.610.
- `DenseIndex`: cosine similarity of wordllama embeddings (engram's default
  embedder, `WordLlamaEmbedder`), exact.
- `RRFIndex`: reciprocal-rank fusion (k=60) of the two rankings.

Each index holds one scope (one conversation, one user), as engram does.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from engram.providers.embedders import Embedder

_CJK = (
    "\u3040-\u30ff"  # kana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs
    "\uac00-\ud7af"  # hangul
)
_RUN = re.compile(f"([{_CJK}]+)|([^\\W{_CJK}]+)")


def plain_tokens(text: str) -> list[str]:
    """Lowercase words (2+ characters) and CJK character bigrams, in order."""
    tokens: list[str] = []
    for cjk, word in _RUN.findall(text.lower()):
        if cjk:
            if len(cjk) == 1:
                tokens.append(cjk)
            else:
                tokens.extend(cjk[i : i + 2] for i in range(len(cjk) - 1))
        elif len(word) > 1 and word != "_" * len(word):
            tokens.append(word)
    return tokens


class Index(Protocol):
    """One scope's documents, searchable by text."""

    name: str

    def build(self, texts: Sequence[str]) -> None: ...

    def search(self, query: str, k: int) -> list[int]:
        """Indexes of the best `k` documents, best first."""
        ...


class BM25Index:
    name = "bm25"

    def __init__(self, k1: float = 1.5, b: float = 0.75, query_tf: bool = True) -> None:
        self.k1, self.b = k1, b
        self.query_tf = query_tf
        self.n = 0
        self.postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}

    def build(self, texts: Sequence[str]) -> None:
        docs = [Counter(plain_tokens(t)) for t in texts]
        self.n = len(docs)
        lengths = np.array([sum(d.values()) for d in docs], dtype=np.float64)
        avgdl = float(lengths.mean()) if self.n and lengths.sum() else 1.0
        grouped: dict[str, tuple[list[int], list[int]]] = {}
        for index, counts in enumerate(docs):
            for term, tf in counts.items():
                ids, tfs = grouped.setdefault(term, ([], []))
                ids.append(index)
                tfs.append(tf)
        self.postings = {}
        for term, (ids, tfs) in grouped.items():
            idx = np.array(ids, dtype=np.int64)
            tf = np.array(tfs, dtype=np.float64)
            idf = math.log(1.0 + (self.n - len(ids) + 0.5) / (len(ids) + 0.5))
            norm = tf + self.k1 * (1.0 - self.b + self.b * lengths[idx] / avgdl)
            self.postings[term] = (idx, idf * tf * (self.k1 + 1.0) / norm)

    def scores(self, query: str) -> np.ndarray:
        scores = np.zeros(self.n, dtype=np.float64)
        terms = plain_tokens(query)
        # a term repeated in the query counts each time, as in bm25s (the references)
        for term in terms if self.query_tf else dict.fromkeys(terms):
            posting = self.postings.get(term)
            if posting is not None:
                scores[posting[0]] += posting[1]
        return scores

    def ranking(self, query: str) -> np.ndarray:
        """Every document with a positive score, best first (ties by document order)."""
        scores = self.scores(query)
        hits = np.flatnonzero(scores > 0)
        return hits[np.argsort(-scores[hits], kind="stable")]

    def search(self, query: str, k: int) -> list[int]:
        return self.ranking(query)[:k].tolist()


class DenseIndex:
    name = "dense"

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.matrix = np.zeros((0, embedder.dim), dtype=np.float32)

    def build(self, texts: Sequence[str]) -> None:
        self.matrix = self.embedder.embed(list(texts)) if texts else self.matrix

    def scores(self, query: str) -> np.ndarray:
        return self.matrix @ self.embedder.embed([query])[0]

    def ranking(self, query: str) -> np.ndarray:
        return np.argsort(-self.scores(query), kind="stable")

    def search(self, query: str, k: int) -> list[int]:
        return self.ranking(query)[:k].tolist()


class RRFIndex:
    """Reciprocal-rank fusion of BM25 and dense rankings: sum of 1 / (k + rank)."""

    name = "rrf"

    def __init__(self, embedder: Embedder, k: int = 60) -> None:
        self.k = k
        self.bm25 = BM25Index()
        self.dense = DenseIndex(embedder)

    def build(self, texts: Sequence[str]) -> None:
        self.bm25.build(texts)
        self.dense.build(texts)

    def search(self, query: str, k: int) -> list[int]:
        fused = np.zeros(self.bm25.n, dtype=np.float64)
        for ranking in (self.bm25.ranking(query), self.dense.ranking(query)):
            fused[ranking] += 1.0 / (self.k + np.arange(1, len(ranking) + 1))
        hits = np.flatnonzero(fused > 0)
        return hits[np.argsort(-fused[hits], kind="stable")][:k].tolist()


BASELINES = ("bm25", "dense", "rrf")


def make_baseline(name: str, embedder: Embedder | None = None) -> Index:
    if name == "bm25":
        return BM25Index()
    if embedder is None:
        from engram.providers.embedders import WordLlamaEmbedder

        embedder = WordLlamaEmbedder()
    if name == "dense":
        return DenseIndex(embedder)
    if name == "rrf":
        return RRFIndex(embedder)
    raise ValueError(f"unknown baseline {name!r}; known: {', '.join(BASELINES)}")
