"""Legacy front end: index fetch, a FIFO post-transform cache, then fixed-function culling
after primitive assembly (seed 000 L988, L1265, L1273). Consumes a draw's index stream,
produces which corners hit the cache: vertices shaded = misses."""
from __future__ import annotations

import numpy as np

from renderer.memo import MeshMemo, mesh_ids
from renderer.workers import spread

from . import legacy_kernels as lk

# The cache's hits depend only on the index order and the cache size, never on the camera: a
# pass drawn again (the viewer, a report of several presets) reuses them.
_HITS = MeshMemo(8)


def ptc_hits(indices: np.ndarray, prim_off: np.ndarray, draw_on: np.ndarray, size: int) -> np.ndarray:
    """bool (3 n_prims,): corner c hit a FIFO post-transform cache of `size` entries (emptied
    per draw); only draws with draw_on set are walked (others read False). indices are the
    corners' vertex ids (draw-local or pass-global: only equality matters)."""
    if size < 0:
        raise ValueError(f"post-transform cache size must be >= 0, got {size}")
    hit = np.zeros(len(indices), np.bool_)
    spread(lk.fifo_ptc, len(prim_off) - 1, np.ascontiguousarray(indices, np.int64), prim_off,
           draw_on, int(size), hit)
    return hit


def ptc_hits_of_draws(draws, indices: np.ndarray, prim_off: np.ndarray, draw_on: np.ndarray,
                      size: int) -> np.ndarray:
    """ptc_hits for a pass's draws, remembered per (meshes, draws on the path, size). The
    result is shared: callers must not write to it."""
    def compute():
        hit = ptc_hits(indices, prim_off, draw_on, size)
        hit.flags.writeable = False
        return hit
    return _HITS.get((mesh_ids(draws), draw_on.tobytes(), int(size)), (d.mesh for d in draws), compute)
