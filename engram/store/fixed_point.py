"""Vectors as an index holds them: 16-bit steps and a power-of-two scale per row.

Why: a user's pack (`engram.store.scope_pack`) is read whole by their first search after a
start, and its vectors are most of it. At 16 bits they are half the bytes of float32
(PostgreSQL at 1M memories, 1,000 of a user: the pack's fetch ~2.5-4.3 → ~1.4-1.8 ms when not
in its buffers), and read back by one integer cast (float16 took ~1 ms for 1,000 × 512 on
these machines). An index built from the rows holds its vectors at the same precision
(`as_held`), so it ranks exactly like one read back from its pack; cosines move by ~1e-5.
"""

from __future__ import annotations

import numpy as np

_FIXED = 32767  # the largest 16-bit step


def fixed(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows of vectors as 16-bit integers and a power-of-two scale per row (`unfixed` reads them back)."""
    rows = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
    peak = np.abs(rows).max(axis=1)
    exponent = np.ceil(np.log2(np.where(peak > 0, peak, 1.0) / _FIXED)).astype(np.int32)
    scale = np.ldexp(np.float32(1), exponent).astype(np.float32)
    # a power of two: multiplying by its inverse is exact, and no step passes ±_FIXED
    steps = np.rint(rows * np.ldexp(np.float32(1), -exponent).astype(np.float32)[:, None]).astype(np.int16)
    return steps, scale


def unfixed(steps: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """The float32 rows `fixed` stands for."""
    return steps.astype(np.float32) * scale[:, None]


def as_held(vector: np.ndarray) -> np.ndarray:
    """One vector at the index's precision (~2e-6 per component of a unit vector). The scale being
    a power of two makes this idempotent: a vector held twice is the vector held once."""
    return unfixed(*fixed(vector))[0]
