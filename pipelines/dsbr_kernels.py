"""Numba kernels of AMD's draw-stream binning rasterizer: batches of primitives, and the order
in which a binned batch issues its work (all the batch's fetches, then its pixels bin by bin)."""
from __future__ import annotations

import numpy as np
from numba import njit

from .imr_kernels import append_in_order


@njit(cache=True, error_model="numpy")
def batches(prim_tri_off, prim_draw, draw_key, draw_binned, max_prims):
    """Cut the primitives (in submission order) into batches. A batch closes when it holds
    max_prims primitives that reach the rasterizer, at a draw whose fixed-function state
    (draw_key) differs, and around draws the driver leaves unbinned. Returns the batch CSR over
    primitives, whether each batch is binned, and the breaks by reason (limit, state)."""
    n_prims = prim_tri_off.shape[0] - 1
    starts = np.empty(n_prims + 1, np.int64)
    binned = np.empty(n_prims + 1, np.bool_)
    n_b = 0
    count = 0
    breaks = np.zeros(2, np.int64)
    for p in range(n_prims):
        d = prim_draw[p]
        open_new = n_b == 0
        if not open_new and d != prim_draw[p - 1]:
            if draw_key[d] != draw_key[prim_draw[p - 1]] or draw_binned[d] != draw_binned[prim_draw[p - 1]]:
                open_new = True
                breaks[1] += 1
        if not open_new and count == max_prims and prim_tri_off[p + 1] > prim_tri_off[p]:
            open_new = True
            breaks[0] += 1
        if open_new:
            starts[n_b] = p
            binned[n_b] = draw_binned[d]
            n_b += 1
            count = 0
        if prim_tri_off[p + 1] > prim_tri_off[p]:
            count += 1
    starts[n_b] = n_prims
    return starts[:n_b + 1].copy(), binned[:n_b].copy(), breaks


@njit(cache=True, error_model="numpy")
def work_binned(prim_tri_off, tri_offsets, ref_slot, ref_bin, batch_starts, batch_binned):
    """The work list (as imr_kernels.replay reads it) of a binning rasterizer: a binned batch
    fetches all its primitives, then visits its bins in order, and in each bin its primitives
    in submission order; an unbinned batch runs as immediate mode."""
    n_prims = prim_tri_off.shape[0] - 1
    work = np.empty(n_prims + ref_slot.shape[0], np.int64)
    k = 0
    for b in range(batch_starts.shape[0] - 1):
        p0, p1 = batch_starts[b], batch_starts[b + 1]
        if not batch_binned[b]:
            k = append_in_order(work, k, p0, p1, prim_tri_off, tri_offsets, ref_slot)
            continue
        for p in range(p0, p1):
            work[k] = -(p + 1)
            k += 1
        q0, q1 = tri_offsets[prim_tri_off[p0]], tri_offsets[prim_tri_off[p1]]
        keys = np.empty(q1 - q0, np.int64)
        for q in range(q0, q1):              # bin-major, submission order within a bin
            keys[q - q0] = ref_bin[ref_slot[q]] * (q1 - q0) + (q - q0)
        for j in np.argsort(keys):
            work[k] = ref_slot[q0 + j]
            k += 1
    return work
