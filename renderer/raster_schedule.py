"""Numba kernel of the order a tile's references are rasterized in (raster_kernels), with and
without hidden-surface removal.

Immediate mode runs each triangle once (PH_IMR). With hidden-surface removal (a TBDR tile, or a
DSBR batch with deferred shading) each run of triangles whose visibility is known before shading
(opaque, no alpha test, no blend) runs twice: PH_VIS tests and writes depth and records the last
triangle to pass at each sample; PH_SHADE then shades just those. A MASK or BLEND triangle ends
the run, since its fragments need the shaded result below them, and so does a change of chunk,
since a tiler whose parameter buffer filled must shade what it has (a partial render).
"""
from __future__ import annotations

import numpy as np
from numba import njit

MASK_MODE = 1          # scenes.model.AlphaMode.MASK: shade before the depth test (late Z)
PH_IMR, PH_VIS, PH_SHADE = 0, 1, 2
FLUSH_PARTIAL, FLUSH_MASK, FLUSH_BLEND = range(3)   # why a deferred run ended early


@njit(cache=True, nogil=True, error_model="numpy")
def schedule(first, last, ref_tri, draw, alpha_mode, blend, chunk, hsr, flushes):
    """(reference, phase) rows, in order, for references first..last-1 of a tile; flushes[k] +=
    the deferred runs ended early for reason k (FLUSH_*)."""
    sched = np.empty((2 * (last - first), 2), np.int64)
    n = 0
    r = first
    while r < last:
        d = draw[ref_tri[r]]
        if hsr and alpha_mode[d] != MASK_MODE and not blend[d]:
            run_end = r
            while run_end < last and alpha_mode[draw[ref_tri[run_end]]] != MASK_MODE \
                    and not blend[draw[ref_tri[run_end]]] \
                    and chunk[ref_tri[run_end]] == chunk[ref_tri[r]]:
                run_end += 1
            for phase in (PH_VIS, PH_SHADE):
                for rr in range(r, run_end):
                    sched[n, 0], sched[n, 1] = rr, phase
                    n += 1
            if run_end < last:
                if chunk[ref_tri[run_end]] != chunk[ref_tri[r]]:
                    flushes[FLUSH_PARTIAL] += 1
                elif alpha_mode[draw[ref_tri[run_end]]] == MASK_MODE:
                    flushes[FLUSH_MASK] += 1
                else:
                    flushes[FLUSH_BLEND] += 1
            r = run_end
        else:
            sched[n, 0], sched[n, 1] = r, PH_IMR
            n += 1
            r += 1
    return sched[:n]
