"""Vectors at the index's precision (engram.store.fixed_point): what a pack stores is what an
index built from the rows holds, so both rank alike."""

from __future__ import annotations

import numpy as np

from engram.store.fixed_point import as_held, fixed, unfixed


def _units(n: int, dim: int, seed: int = 0) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def test_sixteen_bit_steps_keep_cosines_to_within_a_hundred_thousandth():
    rows = _units(200, 512)
    steps, scale = fixed(rows)
    assert steps.dtype == np.int16 and steps.nbytes == rows.nbytes // 2
    back = unfixed(steps, scale)
    assert np.abs(back - rows).max() < 1e-5
    assert np.abs((back * rows).sum(axis=1) - 1.0).max() < 1e-4


def test_held_once_is_held_for_good_and_one_at_a_time_is_the_same_as_all_at_once():
    rows = _units(50, 256, seed=1)
    held = unfixed(*fixed(rows))
    assert np.array_equal(unfixed(*fixed(held)), held)  # a pack of an index read from a pack
    assert np.array_equal(np.stack([as_held(r) for r in rows]), held)


def test_a_zero_vector_and_large_values_survive():
    assert np.array_equal(as_held(np.zeros(8, np.float32)), np.zeros(8, np.float32))
    big = np.array([3.0, -1.5, 0.25, 0.0], np.float32)
    assert np.array_equal(as_held(big), big)  # exactly representable in 16-bit steps of 2**-13


def test_a_pack_missing_a_part_is_ignored_not_a_failed_search():
    from engram.store import scope_pack
    from engram.store.scope_index import ScopeIndex

    index = ScopeIndex(8)
    rows = _units(3, 8)
    index.add([1, 2, 3], ["a", "b", "c"], list(rows), [["x"], ["y"], ["z"]], ["active"] * 3, [None] * 3,
              languages=["en", "zh", "en"])
    parts = index.to_parts()
    restored, _ = scope_pack.restore(scope_pack.encode(parts), 8)
    assert np.array_equal(restored.matrix[:3], index.matrix[:3])
    assert restored.languages(["a", "b", "c"]) == {"a": "en", "b": "zh", "c": "en"}
    del parts["language"]  # what a pack of an older layout under the same format number would lack
    assert scope_pack.restore(scope_pack.encode(parts), 8) is None
