"""Vector helpers every embedder shares (bundled and remote alike)."""

from __future__ import annotations

import numpy as np


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """Each row scaled to unit length (zero rows stay zero): cosine becomes a dot product."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms
