"""Numba kernel of the order a tile's references are rasterized in (raster_kernels), with and
without hidden-surface removal.

Immediate mode runs each triangle once (PH_IMR). With hidden-surface removal (a TBDR tile, or a
DSBR batch with deferred shading) each run of triangles whose visibility is known before shading
(opaque, no alpha test, no blend) runs twice: PH_VIS tests and writes depth and records the last
triangle to pass at each sample; PH_SHADE then shades just those. A MASK or BLEND triangle ends
the run, since its fragments need the shaded result below them, and so does a change of chunk,
since a tiler whose parameter buffer filled must shade what it has (a partial render).

Immediate mode whose colour no counter reads as it is written (no DCC sizes: rop_sizes) may
defer the colour of its textured opaque triangles (DEFERRED_COLOUR): each runs once in PH_IMR as
ever, every counter, event and depth as before, but records the last triangle to write each
sample instead of shading it; before the next triangle that is not such (a blend reads the colour
below, an alpha test needs its own shading, and any other writes colour where a winner may wait)
and at the tile's end, the run is painted (PH_PAINT: each sample shaded once, by its winner,
counting nothing). The image is the same, since an opaque write replaces the colour whole; the
work is that of the pixels that stay, not of every fragment that passed early Z (pul1duel at
1080p shades 4.4M fragments for 2.0M pixels). The raster decides run by run whether a run waits
(raster_kernels.PAINT_PAYS): painting again costs more than it saves where little is overwritten.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .inlined import inlined

MASK_MODE = 1          # scenes.model.AlphaMode.MASK: shade before the depth test (late Z)
PH_IMR, PH_VIS, PH_SHADE, PH_PAINT = 0, 1, 2, 3
FLUSH_PARTIAL, FLUSH_MASK, FLUSH_BLEND = range(3)   # why a deferred run ended early


@inlined
def deferred_colour(d, texture, alpha_mode, blend):
    """Whether draw d's colour may wait for PH_PAINT in immediate mode: textured, opaque, no
    alpha test (the shading that pays to defer, and whose output no test reads)."""
    return texture[d] >= 0 and alpha_mode[d] != MASK_MODE and not blend[d]


@njit(cache=True, nogil=True, error_model="numpy")
def schedule(first, last, ref_tri, draw, alpha_mode, blend, texture, chunk, hsr, defer, flushes):
    """(reference, phase) rows, in order, for references first..last-1 of a tile; flushes[k] +=
    the deferred runs ended early for reason k (FLUSH_*). defer: immediate mode paints its
    deferred_colour triangles' runs (PH_PAINT) before the next other triangle and at the end."""
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
        elif defer and not hsr and deferred_colour(d, texture, alpha_mode, blend):
            run_end = r
            while run_end < last and deferred_colour(draw[ref_tri[run_end]], texture, alpha_mode,
                                                     blend):
                run_end += 1
            for phase in (PH_IMR, PH_PAINT):
                for rr in range(r, run_end):
                    sched[n, 0], sched[n, 1] = rr, phase
                    n += 1
            r = run_end
        else:
            sched[n, 0], sched[n, 1] = r, PH_IMR
            n += 1
            r += 1
    return sched[:n]
