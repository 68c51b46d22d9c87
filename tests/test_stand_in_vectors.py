"""Stand-in vectors for reading your writes (engram.embed_behind, `ScopeIndex.hold`): a search
right after an add finds it by meaning from the embedder's quick vectors, without the whole
model in the caller's thread; the worker's real vectors replace them, and only those are stored."""

from __future__ import annotations

import sqlite3
import threading
from contextlib import contextmanager

import numpy as np
import pytest

from engram import Memory
from engram.providers.use import USEEmbedder
from engram.store.scope_index import ScopeIndex

LIVE = ["active"]


def _unit(rng: np.random.Generator, dim: int = 8) -> np.ndarray:
    v = rng.normal(size=dim).astype(np.float32)
    return v / np.linalg.norm(v)


def _index(n: int, with_vectors: int, approximate_above: int = 1_000) -> tuple[ScopeIndex, list[np.ndarray]]:
    rng = np.random.default_rng(3)
    vectors = [_unit(rng) for _ in range(n)]
    index = ScopeIndex(8, approximate_above=approximate_above, background=False)
    index.add(
        list(range(n)), [f"m{i}" for i in range(n)],
        [v if i < with_vectors else None for i, v in enumerate(vectors)], [[]] * n, ["active"] * n, [None] * n,
    )
    return index, vectors


def test_a_held_stand_in_is_searched_until_the_real_vector_replaces_it():
    index, vectors = _index(6, with_vectors=5)
    assert "m5" not in [i for i, _ in index.dense(vectors[5], LIVE, None, 6)]  # no vector yet
    stand_in = vectors[5] * 0.9 + vectors[0] * 0.1
    assert index.hold([("m5", stand_in / np.linalg.norm(stand_in))])
    assert index.dense(vectors[5], LIVE, None, 1)[0][0] == "m5"
    assert not index.clean  # never packed with a vector the store does not have
    index.set_vector(5, vectors[5])
    assert index.provisional == set() and index.clean
    assert index.dense(vectors[5], LIVE, None, 1) == [("m5", pytest.approx(1.0, abs=1e-4))]


def test_a_real_vector_is_never_replaced_by_a_stand_in_nor_an_edit_by_the_old_texts():
    index, vectors = _index(3, with_vectors=2)
    assert index.hold([("m0", vectors[2]), ("m2", vectors[2]), ("gone", vectors[2])])
    assert index.dense(vectors[0], LIVE, None, 1)[0] == ("m0", pytest.approx(1.0, abs=1e-4))
    index.replace(2, None, [])  # its text was edited: the stand-in was made from the old one
    assert "m2" not in [i for i, _ in index.dense(vectors[2], LIVE, None, 3)]
    assert index.provisional == set()


def test_a_scope_large_enough_for_the_ivf_holds_no_stand_in_and_its_clusters_take_none():
    index, vectors = _index(40, with_vectors=39, approximate_above=50)
    assert index.hold([("m39", vectors[39])])
    rng = np.random.default_rng(9)
    more = [_unit(rng) for _ in range(40)]
    index.add(list(range(40, 80)), [f"m{i}" for i in range(40, 80)], more, [[]] * 40, ["active"] * 40, [None] * 40)
    index.dense(more[0], LIVE, None, 5)  # builds the IVF (80 rows > 50)
    assert index._ivf is not None
    assert 39 not in _clustered(index) and 38 in _clustered(index)
    assert not index.hold([("m39", vectors[39])])  # the caller makes the real vector instead
    index.set_vector(39, vectors[39])  # the real one joins the clusters
    assert index.dense(vectors[39], LIVE, None, 1)[0][0] == "m39"
    assert 39 in _clustered(index)


def _clustered(index: ScopeIndex) -> set[int]:
    """The rows the scope's IVF holds: those of its build and those added since."""
    ivf = index._ivf
    rows = set(ivf.rows.tolist())
    for block, count in zip(ivf.extra_rows, ivf.extra_count, strict=True):
        if block is not None:
            rows |= set(block[:count].tolist())
    return rows


class HeldUSE(USEEmbedder):
    """USE whose whole-model calls from the write-behind worker wait until `release`; every
    whole-model call is recorded with its thread."""

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.calls: list[str] = []

    def embed(self, texts):
        self.calls.append(threading.current_thread().name)
        if threading.current_thread().name == "engram-embed-behind":
            self.release.wait(30)
        return super().embed(texts)


def _stored(db_path, content: str) -> np.ndarray | None:
    with sqlite3.connect(db_path) as db:
        blob = db.execute("SELECT embedding FROM memories WHERE content = ?", (content,)).fetchone()[0]
    return None if blob is None else np.frombuffer(blob, dtype=np.float32)


@contextmanager
def _held_worker(db_path):
    """A Memory whose write-behind worker waits (its embedder held) until the block ends."""
    embedder = HeldUSE()
    embedder.embed(["load the model"])
    with Memory(db_path, embedder=embedder, graph=False) as memory:
        try:
            yield memory, embedder
        finally:
            embedder.release.set()


def test_a_search_right_after_an_add_finds_it_by_meaning_without_the_whole_model_in_its_thread(db_path):
    said = "I practice taekwondo twice a week."
    with _held_worker(db_path) as (m, embedder):
        m.add(said, user_id="u1", infer=False)
        before = [c for c in embedder.calls if c != "engram-embed-behind"]
        hits = m.search("which martial art does she do?", user_id="u1")  # no word in common
        assert hits and hits[0].memory.content == said and hits[0].parts.dense_rank is not None
        assert [c for c in embedder.calls if c != "engram-embed-behind"] == before  # no whole-model run
        assert _stored(db_path, said) is None  # the stand-in is not stored
        embedder.release.set()
        assert m.flush(timeout=30)
        assert np.allclose(_stored(db_path, said), USEEmbedder().embed([said])[0], atol=1e-5)
        assert m.store._indexes["u1"].provisional == set()
        assert m.search("which martial art does she do?", user_id="u1")[0].memory.content == said


def test_a_chinese_memory_gets_its_real_vector_before_the_search(db_path):
    """Token vectors read Chinese badly (one token a character): the whole model runs, as before."""
    said = "我每周练两次跆拳道。"
    with _held_worker(db_path) as (m, embedder):
        m.add(said, user_id="u1", infer=False)
        hits = m.search("她练什么武术？", user_id="u1")
        assert hits and hits[0].memory.content == said
        assert "MainThread" in embedder.calls[1:]
        assert _stored(db_path, said) is not None
