"""Numba kernel of the legacy front end: a FIFO post-transform vertex cache per draw."""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, error_model="numpy")
def fifo_ptc(d0, d1, indices, prim_off, draw_on, size, hit):
    """Walk each selected draw's indices (draw-local, 3 per primitive, in order) through a FIFO
    of `size` vertex ids emptied at the draw's start: a hit reuses a shaded vertex, a miss
    shades it and pushes it in, evicting the oldest (seed 000 L1265: FIFO, 16-32 entries).
    A repeated index inside one primitive hits the entry its first use made. Writes hit[c] per
    corner c of the selected draws among draws d0..d1-1; draws are independent (run in parts
    on several threads: renderer.workers.spread)."""
    for d in range(d0, d1):
        if not draw_on[d]:
            continue
        fifo = np.full(max(size, 1), -1, np.int64)
        head = 0
        for c in range(prim_off[d] * 3, prim_off[d + 1] * 3):
            v = indices[c]
            found = False
            for k in range(size):
                if fifo[k] == v:
                    found = True
                    break
            hit[c] = found
            if not found and size > 0:
                fifo[head] = v
                head = (head + 1) % size
