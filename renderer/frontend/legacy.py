"""Legacy front end: index fetch, a FIFO post-transform cache, then fixed-function culling
after primitive assembly (seed 000 L988, L1265, L1273). Consumes a draw's index stream,
produces which corners hit the cache: vertices shaded = misses."""
from __future__ import annotations

import numpy as np

from . import legacy_kernels as lk


def ptc_hits(indices: np.ndarray, prim_off: np.ndarray, draw_on: np.ndarray, size: int) -> np.ndarray:
    """bool (3 n_prims,): corner c hit a FIFO post-transform cache of `size` entries (emptied
    per draw); only draws with draw_on set are walked (others read False). indices are the
    corners' vertex ids (draw-local or pass-global: only equality matters)."""
    if size < 0:
        raise ValueError(f"post-transform cache size must be >= 0, got {size}")
    hit = np.zeros(len(indices), np.bool_)
    lk.fifo_ptc(np.ascontiguousarray(indices, np.int64), prim_off, draw_on, int(size), hit)
    return hit
