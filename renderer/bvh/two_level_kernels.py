"""Two-level traversal: the TLAS walk, and at each instance it reaches, the ray moved into the
instance's space and walked through its BLAS by the layout's own walk from the BLAS's root
(traverse4_kernels.walk, traverse8_kernels.walk8: every BLAS is a part of one merged layout), as
radv's traversal loop enters a BLAS at an instance node.

The TLAS walk follows the rules of traverse_kernels (children nearest first, ties by slot; the
preset's stack, a ring that restarts through parent links or a stack that spills; the closest hit
the least t, ties by the least scene triangle id). The stack is shared as on the hardware: a BLAS
walk starts with the entries the TLAS walk holds and has the rest (at least one). Where RDNA's
ring is full inside a BLAS, the BLAS walk overwrites its own oldest entries and restarts within
the BLAS; the TLAS entries below it are kept (radv lets the ring overwrite through both levels
and climbs back through the instance node; keeping the TLAS entries is our simplification).

Per ray, the TLAS's share of the costs goes to its own columns (T_*); the BLAS walks' costs sum in
the usual ones (traverse_kernels.C_*), but for steps, isect_clocks and the stack's counts, which
are the ray's whole walk (both levels).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from .box8_kernels import box8, entry_planes, lim32, tame
from .layouts_kernels import L_BVH4, L_BVH8
from .traverse4_kernels import trace_chunk4_fast, walk
from .trace_kernels import next_run, run_length
from .traverse8_kernels import walk8
from .traverse_kernels import (BOX_EPS, C_CLOCKS, C_FILLS, C_N, C_OVERFLOWS, C_POPS, C_PUSHES,
                               C_RESTARTS, C_SPILLS, C_STEPS, FLAG_ANY_HIT, R_DX, R_DY, R_DZ, R_N,
                               R_OX, R_OY, R_OZ, R_TMAX, R_TMIN, REC_FILL, REC_SHIFT,
                               REC_INSTANCE, REC_SPILL, REC_TLAS, REC_TLAS_PARENT, SPILL_SLOTS,
                               RayJob, make_scratch, next_after, TraceOut, _inv, pop_nearest,
                               push_spilling, slab_and_key, spill_records)

EMPTY = -(1 << 62)        # an unused TLAS child slot
# Per-ray TLAS costs (columns of tl_costs): steps, nodes fetched descending, box tests, instances
# entered (each a ray transform and a 128 B instance node), nodes fetched again by restarts,
# parent links read
T_STEPS, T_NODES, T_TESTS, T_INSTANCES, T_REFETCH, T_PARENT_READS, T_N = range(7)
TLAS_COUNTER_NAMES = ("tlas.steps", "tlas.nodes.box", "tlas.tests.box", "instances",
                      "tlas.nodes.refetch", "tlas.parent_reads")


class Tlas(NamedTuple):
    """The TLAS and the instances, as the kernel reads them (renderer.bvh.two_level)."""
    child: np.ndarray          # int64 (m, width): node >= 0, instance -(i + 1), EMPTY
    planes: np.ndarray         # float32 (m, 6, 8) child boxes as box8 reads them: planes lo xyz,
                               # hi xyz by slot, rounded outward (box8_kernels.node_planes),
                               # empty slots +inf
    parent: np.ndarray         # int32 (m,) -1 at the root
    inst_parent: np.ndarray    # int32 (k,) the node holding each instance (-1: in none)
    inst_blas: np.ndarray      # int32 (k,) each instance's BLAS
    blas_root: np.ndarray      # int64 (n_blas,) each BLAS's root node in the merged layout
    inst_first: np.ndarray     # int64 (k,) scene id of the instance's first triangle
    blas_base: np.ndarray      # int64 (n_blas,) the BLAS's first triangle id (its layout's ids)
    obj_from_world: np.ndarray   # float64 (k, 3, 4) world -> the instance's object space


@njit(cache=True, nogil=True, error_model="numpy")
def trace_chunk2(tlas, blas, job, ah, out, tl_costs, r0, r1, rec0, rec_cap):
    """Rays r0..r1-1 of `job` through the TLAS `tlas` and the BLASes `blas` (traverse_kernels.Tree:
    their merged layout) into `out` and tl_costs (T_*); records into out.rec[rec0:rec0 +
    rec_cap] when rec_cap > 0. Returns the records the chunk needed."""
    child, planes, parent, inst_parent = tlas.child, tlas.planes, tlas.parent, tlas.inst_parent
    inst_blas, blas_root, inst_first, blas_base, xf = (tlas.inst_blas, tlas.blas_root, tlas.inst_first,
                                                       tlas.blas_base, tlas.obj_from_world)
    rays, flags, stack, box_rate, spill_at = job.rays, job.flags, job.stack, job.box_rate, job.spill_at
    sort = job.sort
    out_prim, out_t, costs, rec = out.prim, out.t, out.costs, out.rec
    width = child.shape[1]
    kind = blas.kind
    sc = make_scratch(stack)                    # the BLAS walks' (the TLAS walk's stack is below)
    st_ref = np.empty(stack, np.int64)
    st_t = np.empty(stack)
    at, ak = np.empty(width), np.empty(width)   # a node's children's entry distances, sort keys
    ar = np.empty(width, np.int64)
    at32, ak32 = np.empty(8, np.float32), np.empty(8, np.float32)
    one = np.empty((1, R_N), np.float32)        # the ray in an instance's space
    b_prim = np.empty(1, np.int64)
    b_t = np.empty(1)
    b_cnt = np.empty((1, C_N), np.int32)
    b_recn = np.zeros(1, np.int64)
    scratch = np.empty(1, np.int64)             # a BLAS walk's records once the chunk's are full
    nrec = 0
    for r in range(r0, r1):
        ox, oy, oz = np.float64(rays[r, R_OX]), np.float64(rays[r, R_OY]), np.float64(rays[r, R_OZ])
        dx, dy, dz = np.float64(rays[r, R_DX]), np.float64(rays[r, R_DY]), np.float64(rays[r, R_DZ])
        tmin, tmax = np.float64(rays[r, R_TMIN]), np.float64(rays[r, R_TMAX])
        ix, iy, iz = _inv(dx), _inv(dy), _inv(dz)
        # box8's float32 test for a tame ray (traverse8_kernels' rule), else float64 slabs
        f32 = tame(ox, oy, oz, dx, dy, dz)
        o32x, o32y, o32z, tmin32 = rays[r, R_OX], rays[r, R_OY], rays[r, R_OZ], rays[r, R_TMIN]
        i32x = np.float32(1.0) / rays[r, R_DX] if f32 else np.float32(0.0)
        i32y = np.float32(1.0) / rays[r, R_DY] if f32 else np.float32(0.0)
        i32z = np.float32(1.0) / rays[r, R_DZ] if f32 else np.float32(0.0)
        nx, ny, nz = entry_planes(i32x, i32y, i32z)
        best_t, best_p = tmax, np.int64(-1)
        for k in range(C_N):
            costs[r, k] = 0
        steps = nodes = tests = instances = refetch = parent_reads = clocks = 0
        pushes = pops = spills = fills = on_chip = overflows = restarts = 0
        cur, last = np.int64(0), np.int64(-1)   # ref: node << 1, or instance << 1 | 1
        size, top, over, done = 0, 0, False, False
        while not done:
            lim_f32 = lim32(best_t)
            lim = np.float64(lim_f32) if f32 else best_t * (1.0 + BOX_EPS)
            climbing = False
            if cur >= 0 and (cur & 1) == 1:          # an instance: its BLAS, the ray moved in
                i = cur >> 1
                instances += 1
                if rec_cap > 0:
                    if nrec < rec_cap:
                        rec[rec0 + nrec] = (REC_INSTANCE << REC_SHIFT) | i
                    nrec += 1
                one[0, R_OX] = xf[i, 0, 0] * ox + xf[i, 0, 1] * oy + xf[i, 0, 2] * oz + xf[i, 0, 3]
                one[0, R_OY] = xf[i, 1, 0] * ox + xf[i, 1, 1] * oy + xf[i, 1, 2] * oz + xf[i, 1, 3]
                one[0, R_OZ] = xf[i, 2, 0] * ox + xf[i, 2, 1] * oy + xf[i, 2, 2] * oz + xf[i, 2, 3]
                one[0, R_DX] = xf[i, 0, 0] * dx + xf[i, 0, 1] * dy + xf[i, 0, 2] * dz
                one[0, R_DY] = xf[i, 1, 0] * dx + xf[i, 1, 1] * dy + xf[i, 1, 2] * dz
                one[0, R_DZ] = xf[i, 2, 0] * dx + xf[i, 2, 1] * dy + xf[i, 2, 2] * dz
                one[0, R_TMIN] = rays[r, R_TMIN]
                tm = np.float32(best_t)              # t is the same in both spaces (the
                if tm < best_t:                      # direction is not renormalised)
                    tm = np.nextafter(tm, np.float32(np.inf))
                one[0, R_TMAX] = tm
                if spill_at > 0:
                    sub = RayJob(one, 1, flags, stack, job.dual, box_rate, job.tri_rate,
                                 max(1, spill_at - on_chip), sort)
                else:
                    sub = RayJob(one, 1, flags, max(1, stack - size), job.dual, box_rate,
                                 job.tri_rate, 0, sort)
                b = inst_blas[i]
                at0, cap = rec0 + nrec, rec_cap - nrec
                if rec_cap > 0 and cap <= 0:
                    sub_out = TraceOut(b_prim, b_t, b_cnt, scratch, 1, b_recn)
                    at0, cap = 0, 1
                else:
                    sub_out = TraceOut(b_prim, b_t, b_cnt, rec, cap, b_recn)
                if kind == L_BVH8:
                    n_b = walk8(blas, sub, ah, sub_out, 0, 1, at0, cap, blas_root[b], sc)
                elif kind == L_BVH4 and not job.dual:      # (the flat walk's common case)
                    n_b = trace_chunk4_fast(blas, sub, ah, sub_out, 0, 1, at0, cap, blas_root[b],
                                            sc)
                else:
                    n_b = walk(blas, sub, ah, sub_out, 0, 1, at0, cap, blas_root[b], sc)
                if rec_cap > 0:
                    if nrec < rec_cap:         # the walk's spill slots are ray 0's: this ray's,
                        for q in range(at0, at0 + min(n_b, cap)):     # above the TLAS's entries
                            kd = rec[q] >> REC_SHIFT
                            if kd == REC_SPILL or kd == REC_FILL:
                                rec[q] += r * SPILL_SLOTS + size
                    nrec += n_b
                for k in range(C_N):
                    costs[r, k] += b_cnt[0, k]
                p = b_prim[0]
                if p >= 0:
                    t = b_t[0]
                    g = inst_first[i] + p - blas_base[b]
                    if t < best_t or (t == best_t and g < best_p):
                        best_t, best_p = t, g
                        if flags & FLAG_ANY_HIT:
                            done = True
                last = cur
                cur = -1
                continue
            if cur >= 0:
                node = cur >> 1
            else:
                in_memory = size - on_chip
                top, size, cur, last, n_pop, on_chip, n_fill = pop_nearest(
                    st_ref, st_t, top, size, stack, lim, last, spill_at, on_chip)
                pops += n_pop
                fills += n_fill
                if rec_cap > 0 and n_fill > 0:
                    nrec = spill_records(rec, rec0, nrec, rec_cap, REC_FILL, r, in_memory - 1,
                                         n_fill, -1)
                if cur >= 0:
                    continue
                if not over:
                    break
                # stack dry after an overflow: climb from the last node or instance visited
                node = np.int64(inst_parent[last >> 1] if (last & 1) == 1 else parent[last >> 1])
                parent_reads += 1
                if rec_cap > 0:
                    if nrec < rec_cap:
                        rec[rec0 + nrec] = (REC_TLAS_PARENT << REC_SHIFT) | last
                    nrec += 1
                if node < 0:
                    break
                climbing = True
                refetch += 1
            steps += 1
            if not climbing:
                nodes += 1
            if rec_cap > 0:
                if nrec < rec_cap:
                    rec[rec0 + nrec] = (REC_TLAS << REC_SHIFT) | node
                nrec += 1
            keep = np.uint64(0)
            if f32:
                keep = box8(planes, node, nx, ny, nz, o32x, o32y, o32z, i32x, i32y, i32z, tmin32,
                            lim_f32, at32, ak32, sort)
            n = 0
            while n < width and child[node, n] != EMPTY:       # the slots used come first
                c = child[node, n]
                if f32:
                    kept = (keep >> np.uint64(n)) & np.uint64(1)
                    at[n] = np.float64(at32[n]) if kept else np.inf
                    ak[n] = np.float64(ak32[n]) if kept else np.inf
                else:
                    at[n], ak[n] = slab_and_key(
                        planes[node, 0, n], planes[node, 1, n], planes[node, 2, n],
                        planes[node, 3, n], planes[node, 4, n], planes[node, 5, n],
                        ox, oy, oz, ix, iy, iz, tmin, tmax, lim, sort)
                ar[n] = (c << 1) if c >= 0 else ((-c - 1) << 1) | 1
                n += 1
            tests += n
            clocks += (n + box_rate - 1) // box_rate
            if climbing:
                # continue with the first child after `last` in (key, slot) order
                nxt = next_after(at, ak, ar, n, last, lim)
                if nxt >= 0:
                    cur = nxt
                    restarts += 1
                else:
                    last = node << 1
                continue
            # the children in front of the closest hit, in key order (ties by slot)
            m = 0
            for j in range(n):
                t = at[j]
                if t <= lim and t < np.inf:
                    at[m], ak[m], ar[m] = t, ak[j], ar[j]
                    m += 1
            for x in range(1, m):         # insertion sort by key, stable
                t, k, rf = at[x], ak[x], ar[x]
                y = x - 1
                while y >= 0 and ak[y] > k:
                    at[y + 1], ak[y + 1], ar[y + 1] = at[y], ak[y], ar[y]
                    y -= 1
                at[y + 1], ak[y + 1], ar[y + 1] = t, k, rf
            for x in range(m - 1, 0, -1):  # all but the first, last first
                st_ref[top], st_t[top] = ar[x], at[x]
                top = top + 1 if top + 1 < stack else 0
                pushes += 1
                on_chip, spills, nrec = push_spilling(on_chip, spill_at, spills, rec, rec0, nrec,
                                                      rec_cap, r, size)
                if size == stack:
                    overflows += 1
                    over = True
                else:
                    size += 1
            if m > 0:
                cur = ar[0]
            else:
                last = node << 1
                cur = -1
        out_prim[r] = best_p
        out_t[r] = best_t if best_p >= 0 else np.inf
        costs[r, C_STEPS] += steps
        costs[r, C_CLOCKS] += clocks
        costs[r, C_PUSHES] += pushes
        costs[r, C_POPS] += pops
        costs[r, C_SPILLS] += spills
        costs[r, C_FILLS] += fills
        costs[r, C_OVERFLOWS] += overflows
        costs[r, C_RESTARTS] += restarts
        tl_costs[r, T_STEPS] = steps
        tl_costs[r, T_NODES] = nodes
        tl_costs[r, T_TESTS] = tests
        tl_costs[r, T_INSTANCES] = instances
        tl_costs[r, T_REFETCH] = refetch
        tl_costs[r, T_PARENT_READS] = parent_reads
    return nrec


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def trace2(tlas, blas, job, ah, out, tl_costs, n_threads):
    """All rays of `job` through the two levels, parallel over chunks of job.chunk rays, each
    thread taking the next run of chunks from a shared cursor (trace_kernels.next_run); chunk c
    records into out.rec[c * out.rec_cap:] and its count into out.rec_n[c]."""
    chunk = job.chunk
    n_chunks = (job.rays.shape[0] + chunk - 1) // chunk
    run = run_length(n_chunks, n_threads)
    cursor = np.zeros(1, np.int64)
    for w in prange(n_threads):
        while True:
            c0, c1 = next_run(cursor, run, n_chunks, n_threads)
            if c0 >= n_chunks:
                break
            for c in range(c0, c1):
                _chunk2(tlas, blas, job, ah, out, tl_costs, c)


@njit(cache=True, nogil=True, error_model="numpy")
def _chunk2(tlas, blas, job, ah, out, tl_costs, c):
    r0 = c * job.chunk
    r1 = min(job.rays.shape[0], r0 + job.chunk)
    out.rec_n[c] = trace_chunk2(tlas, blas, job, ah, out, tl_costs, r0, r1, c * out.rec_cap,
                                out.rec_cap)
