"""The parallel loop of traversal: chunks of rays handed to the kernel of their layout."""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .layouts_kernels import L_BVH8
from .traverse4_kernels import trace_chunk
from .traverse8_kernels import trace_chunk8, trace_chunk8_fast

BANDS = 32            # trace gives each thread a run of chunks in each of this many bands


@njit(cache=True, nogil=True, error_model="numpy")
def _trace_chunk(tree, job, out, c, fast, redo):
    """Chunk c of the rays; its record count into out.rec_n[c]. The chunk kernels take the
    arrays one by one, as positional arguments: taking the structs (and sharing the stack pop,
    the restart climb and the fetch record as inlined helpers with early exits) measured 15-40%
    slower in bench/bench_bvh.py (dragon bvh8 40-41 Mrays/s against 47-52, sponza bvh8-obb
    4.7-4.9 against 7.7-8.8). They share the stack pop (traverse_kernels.pop_nearest, one
    exit); the restart climb reads one of two parent arrays and writes the record only when
    recording, so as a helper it would keep its arrays reference-counted (the rules in
    renderer/raster_kernels.py): it stays in each kernel."""
    kind, node_f32, node_u32 = tree.kind, tree.node_f32, tree.node_u32
    tri_f32, tri_u32, tri_corners = tree.tri_f32, tree.tri_u32, tree.tri_corners
    node_parent, tri_parent, table, boxes = (tree.node_parent, tree.tri_parent, tree.obb_table,
                                             tree.child_boxes)
    rays, flags, stack, dual = job.rays, job.flags, job.stack, job.dual
    box_rate, tri_rate = job.box_rate, job.tri_rate
    out_prim, out_t, costs, rec, rec_cap, rec_n = out
    r0 = c * job.chunk
    r1 = min(rays.shape[0], r0 + job.chunk)
    if fast:
        n_redo = trace_chunk8_fast(node_u32, tri_corners, tri_u32, boxes, rays, r0, r1, flags,
                                   stack, box_rate, tri_rate, out_prim, out_t, costs, redo)
        for k in range(n_redo):
            trace_chunk8(node_u32, tri_corners, tri_u32, node_parent, tri_parent, table, boxes,
                         rays, redo[k], redo[k] + 1, flags, stack, box_rate, tri_rate, out_prim,
                         out_t, costs, rec, 0, 0)
        rec_n[c] = 0
    elif kind == L_BVH8:
        rec_n[c] = trace_chunk8(node_u32, tri_corners, tri_u32, node_parent, tri_parent, table,
                                boxes, rays, r0, r1, flags, stack, box_rate, tri_rate, out_prim,
                                out_t, costs, rec, c * rec_cap, rec_cap)
    else:
        rec_n[c] = trace_chunk(kind, node_f32, node_u32, tri_f32, tri_u32, node_parent,
                               tri_parent, rays, r0, r1, flags, stack, dual, box_rate, out_prim,
                               out_t, costs, rec, c * rec_cap, rec_cap)


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def trace(tree, job, out, n_threads, fast):
    """All rays of `job` (RayJob) through `tree` (Tree) into `out` (TraceOut), parallel over
    chunks of job.chunk rays; chunk c records into out.rec[c * out.rec_cap:]. fast: a bvh8
    layout with no rotated node and no records wanted, run by trace_chunk8_fast. (The structs
    are opened in _trace_chunk, not here: a parallel loop that writes arrays taken out of a
    struct before it is compiled wrong by numba 0.68, which swaps them.)

    The cost of rays varies across an image (sky, then geometry), and a prange hands each of
    its n_threads threads one fixed share, so a thread's share is a run of chunks from each of
    BANDS bands of the rays: every thread gets about the same work, in consecutive chunks."""
    chunk = job.chunk
    n_chunks = (job.rays.shape[0] + chunk - 1) // chunk
    per_band = (n_chunks + BANDS - 1) // BANDS
    per_run = (per_band + n_threads - 1) // n_threads
    for w in prange(n_threads):
        redo = np.empty(chunk, np.int64)
        for band in range(BANDS):
            c0 = band * per_band + w * per_run
            for c in range(c0, min(c0 + per_run, (band + 1) * per_band, n_chunks)):
                _trace_chunk(tree, job, out, c, fast, redo)
