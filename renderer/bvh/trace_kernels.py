"""The parallel loop of traversal: chunks of rays handed to the kernel of their layout."""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .layouts_kernels import L_BVH8
from .traverse4_kernels import trace_chunk
from .traverse8_kernels import trace_chunk8, trace_chunk8_fast

BANDS = 32            # trace gives each thread a run of chunks in each of this many bands


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def trace(layout, nf, nu, tf, tu, node_parent, tri_parent, table, boxes, tc, rays, chunk, flags, stack,
          dual, box_rate, tri_rate, out_prim, out_t, cnt, rec, rec_cap, rec_n, n_threads, fast):
    """All rays, parallel over chunks of `chunk` rays; chunk c records into rec[c * rec_cap:].
    fast: a bvh8 layout with no rotated node and no records wanted, run by trace_chunk8_fast.

    The cost of rays varies across an image (sky, then geometry), and a prange hands each of
    its n_threads threads one fixed share, so a thread's share is a run of chunks from each of
    BANDS bands of the rays: every thread gets about the same work, in consecutive chunks."""
    n_chunks = (rays.shape[0] + chunk - 1) // chunk
    per_band = (n_chunks + BANDS - 1) // BANDS
    per_run = (per_band + n_threads - 1) // n_threads
    for w in prange(n_threads):
        redo = np.empty(chunk, np.int64)
        for band in range(BANDS):
            c0 = band * per_band + w * per_run
            for c in range(c0, min(c0 + per_run, (band + 1) * per_band, n_chunks)):
                r0 = c * chunk
                r1 = min(rays.shape[0], r0 + chunk)
                if fast:
                    n_redo = trace_chunk8_fast(nu, tc, tu, boxes, rays, r0, r1, flags, stack, box_rate,
                                               tri_rate, out_prim, out_t, cnt, redo)
                    for k in range(n_redo):
                        trace_chunk8(nu, tc, tu, node_parent, tri_parent, table, boxes, rays, redo[k],
                                     redo[k] + 1, flags, stack, box_rate, tri_rate, out_prim, out_t, cnt,
                                     rec, 0, 0)
                    rec_n[c] = 0
                elif layout == L_BVH8:
                    rec_n[c] = trace_chunk8(nu, tc, tu, node_parent, tri_parent, table, boxes, rays,
                                            r0, r1, flags, stack, box_rate, tri_rate, out_prim, out_t,
                                            cnt, rec, c * rec_cap, rec_cap)
                else:
                    rec_n[c] = trace_chunk(layout, nf, nu, tf, tu, node_parent, tri_parent, rays, r0,
                                           r1, flags, stack, dual, box_rate, out_prim, out_t, cnt,
                                           rec, c * rec_cap, rec_cap)
