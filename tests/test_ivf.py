"""The IVF index behind dense search in large scopes (engram/store/ivf.py).

Scopes are kept small here (a lowered `approximate_above`) so the suite stays
fast; the recall tests use real text embedded by wordllama (random gaussian
vectors have no cluster structure and say little about recall)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from engram.bench.scale import queries, sentences
from engram.store import ivf as ivf_module
from engram.store.ivf import IVF
from engram.store.scope_index import ScopeIndex
from engram.text import detect_language

LOCOMO = Path(__file__).parents[1].parent / "shared" / "data" / "locomo-dev"
LIVE = ["active", "disputed"]


def _index(vectors: np.ndarray, *, statuses=None, agents=None, approximate_above: int = 1_000) -> ScopeIndex:
    n = len(vectors)
    index = ScopeIndex(vectors.shape[1], approximate_above=approximate_above, background=False)
    index.add(
        list(range(n)), [f"m{i}" for i in range(n)], list(vectors), [[]] * n,
        statuses or ["active"] * n, agents or [None] * n,
    )
    return index


def _recall(index: ScopeIndex, vectors: np.ndarray, queries_: np.ndarray, depth: int,
            allowed: np.ndarray | None = None, statuses=("active",), agent_id=None) -> float:
    """Share of the returned rows that score at least the exact `depth`-th score
    (tie-aware: templated text has many identical vectors, any of which is right)."""
    shares = []
    for query in queries_:
        got = index.dense(query, list(statuses), agent_id, depth)
        exact = vectors @ query
        if allowed is not None:
            exact[~allowed] = -np.inf
        kth = np.sort(exact)[-depth]
        assert len(got) == depth
        shares.append(np.mean([exact[int(i[1:])] >= kth - 1e-5 for i, _ in got]))
    return float(np.mean(shares))


@pytest.fixture(scope="module")
def scale_set(embedder):
    """20k sentences of the scale benchmark (English and Chinese) and its English queries."""
    rng = random.Random(7)
    texts = list(sentences(20_000, rng))
    asked = [q for q in queries(120, rng) if detect_language(q) == "en"]
    return np.asarray(embedder.embed(texts), np.float32), np.asarray(embedder.embed(asked), np.float32)


def _perturbed(texts: list[str], n: int, rng: random.Random) -> list[str]:
    """`n` variants of `texts`: words dropped, halves of two texts spliced."""
    out = list(texts)
    while len(out) < n:
        words = rng.choice(texts).split()
        if rng.random() < 0.3:
            other = rng.choice(texts).split()
            words = words[: max(1, len(words) // 2)] + other[len(other) // 2 :]
        out.append(" ".join(w for w in words if rng.random() > 0.15) or " ".join(words))
    return out


def _probe_like_100k(index: ScopeIndex, monkeypatch) -> None:
    """Probe the share of clusters a 100k-row scope probes (32 of 474), with no row floor."""
    from engram.store import scope_index

    share = ivf_module.NPROBE / ivf_module.centroid_count(100_000)
    monkeypatch.setattr(ivf_module, "NPROBE", round(share * index._ivf.clusters))
    monkeypatch.setattr(scope_index, "SHORTLIST", 0)


def test_recall_against_exact_on_the_scale_benchmark_text(scale_set, monkeypatch) -> None:
    vectors, asked = scale_set
    index = _index(vectors)
    assert index.dense(asked[0], ["active"], None, 10)  # builds the IVF
    assert index._ivf is not None and index._ivf.clusters == ivf_module.centroid_count(len(vectors))
    assert _recall(index, vectors, asked, 10) >= 0.95
    assert _recall(index, vectors, asked, 30) >= 0.95
    _probe_like_100k(index, monkeypatch)
    assert _recall(index, vectors, asked, 10) >= 0.95


def test_recall_against_exact_on_locomo_turns(embedder, monkeypatch) -> None:
    files = sorted(LOCOMO.glob("*.json"))
    if not files:
        pytest.skip(f"shared evaluation data not found at {LOCOMO}")
    turns, asked = [], []
    for path in files:
        data = json.loads(path.read_text(encoding="utf-8"))
        for key, value in data.items():
            if key.startswith("session_") and isinstance(value, list):
                turns += [t["text"] for t in value if t.get("text")]
        asked += [q["question"] for q in data.get("qa", []) if q.get("category") in (1, 2, 3, 4)]
    rng = random.Random(3)
    vectors = np.asarray(embedder.embed(_perturbed(turns, 20_000, rng)), np.float32)
    questions = np.asarray(embedder.embed(rng.sample(asked, min(100, len(asked)))), np.float32)
    index = _index(vectors)
    assert _recall(index, vectors, questions, 10) >= 0.95
    _probe_like_100k(index, monkeypatch)
    assert _recall(index, vectors, questions, 10) >= 0.95


def test_filters_agents_and_statuses_are_respected(scale_set) -> None:
    vectors, asked = scale_set
    n = len(vectors)
    rng = np.random.default_rng(1)
    agents = rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1]).tolist()
    statuses = rng.choice(["active", "superseded", "archived"], n, p=[0.8, 0.15, 0.05]).tolist()
    index = _index(vectors, statuses=statuses, agents=agents)
    agent, status = np.array(agents), np.array(statuses)
    for agent_id, wanted in (("a", ["active"]), ("b", ["active", "superseded"]), ("c", ["archived"]),
                             (None, ["superseded"])):
        allowed = np.isin(status, wanted) & (True if agent_id is None else agent == agent_id)
        for query in asked[:20]:
            for memory_id, _ in index.dense(query, wanted, agent_id, 10):
                assert allowed[int(memory_id[1:])]
        assert _recall(index, vectors, asked[:40], 10, allowed, wanted, agent_id) >= 0.95
    # an `allowed` callable (filters beyond status and agent) is honoured too
    even = lambda rowids: rowids % 2 == 0  # noqa: E731
    hits = index.dense(asked[0], ["active"], None, 10, even)
    assert len(hits) == 10 and all(int(i[1:]) % 2 == 0 for i, _ in hits)
    assert index.dense(asked[0], ["active"], "nobody", 10) == []


def test_rows_written_after_the_build_are_found_and_removed_ones_are_not(scale_set, embedder) -> None:
    vectors, asked = scale_set
    n = len(vectors)
    index = _index(vectors)
    index.dense(asked[0], ["active"], None, 10)
    built = index._ivf
    new = embedder.embed(["The zebra sanctuary in Namibia asked us to volunteer over the winter."])[0]
    index.add([n], ["late"], [new], [[]], ["active"], [None])
    assert index.dense(new, ["active"], None, 1)[0][0] == "late"
    assert index._ivf is built and built.entries == n + 1  # joined a cluster, no rebuild

    query = asked[1]
    first, second, third = (int(i[1:]) for i, _ in index.dense(query, ["active"], None, 3))
    index.set_status(first, None)  # deleted
    index.set_status(second, "superseded")
    shown = [i for i, _ in index.dense(query, ["active"], None, 10)]
    assert f"m{first}" not in shown and f"m{second}" not in shown and f"m{third}" in shown
    assert f"m{second}" in [i for i, _ in index.dense(query, ["superseded"], None, 10)]
    assert f"m{first}" not in [i for i, _ in index.dense(query, ["active", "superseded"], None, 10)]

    # new content: the row moves to wherever its new vector belongs
    other = embedder.embed(["Kayaking between the fjords near Bergen at midnight sun."])[0]
    index.replace(third, other, [])
    assert index.dense(other, ["active"], None, 1)[0][0] == f"m{third}"
    again = dict(index.dense(query, ["active"], None, 10))
    assert f"m{third}" not in again or again[f"m{third}"] == pytest.approx(float(other @ query), abs=1e-4)
    assert index._ivf is built


def test_rebuilt_after_doubling_or_many_deletions(scale_set) -> None:
    vectors, asked = scale_set
    half = len(vectors) // 2
    index = _index(vectors[:half])
    index.dense(asked[0], ["active"], None, 10)
    first = index._ivf
    assert first is not None and first.built == half
    index.add(list(range(half, 2 * half)), [f"m{i}" for i in range(half, 2 * half)],
              list(vectors[half : 2 * half]), [[]] * half, ["active"] * half, [None] * half)
    assert first.entries == 2 * half  # a batch this large joins the clusters at once
    assert index.dense(vectors[half + 5], ["active"], None, 1)[0][1] == pytest.approx(1.0, abs=1e-4)
    assert _recall(index, vectors[: 2 * half], asked[:40], 10) >= 0.95
    assert index._ivf is first  # grown 2×, not more: kept
    index.add([2 * half], ["one-more"], [vectors[0]], [[]], ["active"], [None])
    index.dense(asked[0], ["active"], None, 10)
    second = index._ivf
    assert second is not first and second.built == 2 * half + 1
    for row in range(0, 2 * half, 3):  # a third of the rows deleted
        index.set_status(row, None)
    hits = index.dense(asked[0], ["active"], None, 10)
    assert index._ivf is not second and index._ivf.built == index._live_vectors
    assert all(int(i[1:]) % 3 for i, _ in hits if i.startswith("m"))


def test_small_scopes_stay_exact(scale_set) -> None:
    vectors, asked = scale_set
    small = vectors[:800]
    index = _index(small, approximate_above=1_000)
    for query in asked[:20]:
        got = index.dense(query, ["active"], None, 10)
        exact = np.argsort(-(small @ query), kind="stable")[:10]
        assert [s for _, s in got] == pytest.approx([float(small[i] @ query) for i in exact], abs=1e-4)
    assert index._ivf is None


def test_rebuilt_in_the_background_while_the_old_index_serves(scale_set) -> None:
    vectors, asked = scale_set
    half = len(vectors) // 2 - 1  # so that all of them are more than twice as many
    index = ScopeIndex(vectors.shape[1], approximate_above=1_000, background=True)
    index.add(list(range(half)), [f"m{i}" for i in range(half)], list(vectors[:half]), [[]] * half,
              ["active"] * half, [None] * half)
    query = asked[0]
    index.dense(query, ["active"], None, 10)
    old = index._ivf
    assert old is not None and index._building is None  # the first build is inline
    rest = len(vectors) - half
    index.add(list(range(half, len(vectors))), [f"m{i}" for i in range(half, len(vectors))],
              list(vectors[half:]), [[]] * rest, ["active"] * rest, [None] * rest)
    assert index.dense(query, ["active"], None, 10)  # stale: a rebuild starts, the old index answers
    building = index._building
    assert index._ivf is old and building is not None and building.thread is not None
    # rows written while it builds reach the new index when it is swapped in
    late = np.asarray(vectors[:1] * -1.0, np.float32)
    index.add([len(vectors)], ["late"], list(late), [[]], ["active"], [None])
    assert index.dense(late[0], ["active"], None, 1)[0][0] == "late"  # through the old one
    assert building.wait(60) and building.error is None and building.seconds > 0
    assert index.dense(late[0], ["active"], None, 1)[0][0] == "late"  # through the new one
    assert index._ivf is building.result and index._ivf.entries == len(vectors) + 1


def test_ivf_search_widens_when_the_mask_passes_too_few() -> None:
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(20, 32)).astype(np.float32)
    vectors = centres[rng.integers(0, 20, 4_000)] + 0.1 * rng.normal(size=(4_000, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ivf = IVF.build(vectors, np.arange(4_000))
    mask = np.zeros(4_000, dtype=bool)
    mask[[5, 1_500, 3_999]] = True  # three rows, anywhere
    rows, _ = ivf.search(vectors[0], mask, nprobe=1, min_rows=0, limit=3)
    assert sorted(rows.tolist()) == [5, 1_500, 3_999]


def test_through_the_store_updates_and_deletions_reach_the_index(monkeypatch, memory, embedder) -> None:
    from engram.store import scope_index

    monkeypatch.setattr(scope_index, "EXACT_UP_TO", 300)
    monkeypatch.setattr(scope_index, "BUILD_IN_BACKGROUND", False)
    rng = random.Random(2)
    memory.add_many([
        {"messages": text, "user_id": "u1", "infer": False} for text in sentences(600, rng, zh_share=0.0)
    ])
    memory.add_many([{"messages": "My neighbour keeps bees on the roof.", "user_id": "u1", "infer": False}])
    found = memory.search("neighbour bees roof", user_id="u1", limit=5)
    assert found[0].memory.content == "My neighbour keeps bees on the roof."
    assert memory.store._indexes["u1"]._ivf is not None
    target = found[0].memory.id
    index = memory.store._indexes["u1"]
    memory.update(target, content="My neighbour keeps goats in the garden.")
    goats = embedder.embed(["My neighbour keeps goats in the garden."])[0]
    assert index.dense(goats, LIVE, None, 1)[0][0] == target
    memory.delete(target)
    assert target not in [i for i, _ in index.dense(goats, LIVE, None, 10)]
    assert target not in [r.memory.id for r in memory.search("neighbour goats garden", user_id="u1")]
