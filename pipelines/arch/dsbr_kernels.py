"""Numba kernels of AMD's draw-stream binning rasterizer: batches of primitives, and the order
in which a binned batch issues its work (all the batch's fetches, then its pixels bin by bin)."""
from __future__ import annotations

import numpy as np
from numba import njit

from renderer.stamped_set import add_new

from pipelines.arch.imr_kernels import append_in_order


@njit(cache=True, nogil=True, error_model="numpy")
def batches(prim_tri_off, prim_draw, draw_key, draw_binned, max_prims, corners, attrs_per_vertex,
            max_alloc):
    """Cut the primitives (in submission order) into batches. A batch closes when it holds
    max_prims primitives that reach the rasterizer, at a draw whose fixed-function state
    (draw_key) differs, around draws the driver leaves unbinned, and when the next primitive's
    new vertices would not fit the batch's parameter-cache allocations: max_alloc groups of 16
    vertex attributes (PA_SC_BINNER_CNTL_1.MAX_ALLOC_COUNT), attrs_per_vertex each. corners:
    the draw-local vertex index of each primitive's three corners. Returns the batch CSR over
    primitives, whether each batch is binned, and the breaks by reason (limit, state, budget)."""
    n_prims = prim_tri_off.shape[0] - 1
    starts = np.empty(n_prims + 1, np.int64)
    binned = np.empty(n_prims + 1, np.bool_)
    # The (draw, vertex) keys the batch holds (renderer.stamped_set: a batch is a generation)
    size = 1
    while size < 2 * (3 * max_prims + 3):
        size *= 2
    slot_key = np.zeros((1, size), np.int64)
    slot_gen = np.zeros((1, size), np.int64)
    fresh_keys = np.empty(3, np.int64)
    gen = 0
    n_b = 0
    count = 0
    n_seen = 0
    breaks = np.zeros(3, np.int64)
    for p in range(n_prims):
        d = prim_draw[p]
        raster = prim_tri_off[p + 1] > prim_tri_off[p]
        open_new = n_b == 0
        if not open_new and d != prim_draw[p - 1]:
            if draw_key[d] != draw_key[prim_draw[p - 1]] or draw_binned[d] != draw_binned[prim_draw[p - 1]]:
                open_new = True
                breaks[1] += 1
        if not open_new and count == max_prims and raster:
            open_new = True
            breaks[0] += 1
        if open_new:
            n_seen = 0
            gen += 1
        n_new = 0
        if raster:
            for k in range(3):
                key = (np.int64(d) << 32) | corners[3 * p + k]
                if add_new(slot_key, slot_gen, 0, gen, key):
                    fresh_keys[n_new] = key
                    n_new += 1
            need = ((n_seen + n_new) * attrs_per_vertex + 15) // 16
            if not open_new and count > 0 and need > max_alloc:
                open_new = True
                breaks[2] += 1
                gen += 1                                 # the primitive's vertices open the new batch
                for k in range(n_new):
                    add_new(slot_key, slot_gen, 0, gen, fresh_keys[k])
                n_seen = 0
        if open_new:
            starts[n_b] = p
            binned[n_b] = draw_binned[d]
            n_b += 1
            count = 0
            n_seen = 0
        if raster:
            count += 1
            n_seen += n_new
    starts[n_b] = n_prims
    return starts[:n_b + 1].copy(), binned[:n_b].copy(), breaks


@njit(cache=True, nogil=True, error_model="numpy")
def work_binned(prim_tri_off, tri_offsets, ref_slot, ref_tile, tile_bin, batch_starts,
                batch_binned):
    """The work list (as imr_kernels.replay reads it) of a binning rasterizer: a binned batch
    fetches all its primitives, then visits its bins in order, and in each bin its primitives
    in submission order; an unbinned batch runs as immediate mode. tile_bin: each raster
    tile's bin."""
    n_prims = prim_tri_off.shape[0] - 1
    work = np.empty(n_prims + ref_slot.shape[0], np.int64)
    n_bins = tile_bin.max() + 1
    start = np.empty(n_bins + 1, np.int64)     # a batch's first work slot per bin
    ref_bin = np.empty(256, np.int64)          # the bins of a batch's references
    k = 0
    for b in range(batch_starts.shape[0] - 1):
        p0, p1 = batch_starts[b], batch_starts[b + 1]
        if not batch_binned[b]:
            k = append_in_order(work, k, p0, p1, prim_tri_off, tri_offsets, ref_slot)
            continue
        for p in range(p0, p1):
            work[k] = -(p + 1)
            k += 1
        # bin-major, submission order within a bin: a counting sort (stable) over the span of
        # bins the batch touches, a few of the screen's hundreds for a batch of nearby triangles
        q0, q1 = tri_offsets[prim_tri_off[p0]], tri_offsets[prim_tri_off[p1]]
        if q1 - q0 > ref_bin.shape[0]:
            ref_bin = np.empty(2 * (q1 - q0), np.int64)
        lo, hi = n_bins, -1
        for q in range(q0, q1):
            bn = tile_bin[ref_tile[ref_slot[q]]]
            ref_bin[q - q0] = bn
            lo, hi = min(lo, bn), max(hi, bn)
        start[:hi - lo + 2] = 0
        for i in range(q1 - q0):
            start[ref_bin[i] - lo + 1] += 1
        start[0] = k
        for i in range(hi - lo):
            start[i + 1] += start[i]
        for i in range(q1 - q0):
            work[start[ref_bin[i] - lo]] = ref_slot[q0 + i]
            start[ref_bin[i] - lo] += 1
        k += q1 - q0
    return work
