"""Traversal of the bvh8 layout, with or without OBB (traverse_kernels describes the rules):
trace_chunk8 in full, trace_chunk8_fast for its common case."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..inlined import inlined
from renderer.block_masks import lowest_bit, popcount
from renderer.prefetch import prefetch
from renderer.stream_store import stream_fence, stream_row

from .box8_kernels import box8, entry_planes, lim32, misses8, tame
from .layouts_kernels import N_OBB
from .tri4_kernels import LANES, ROWS, tri4
from .traverse_kernels import (BOX_EPS, FLAG_ANY_HIT, FLAG_OPAQUE, R_DX, R_DY, R_DZ, R_OX, R_OY,
                               R_OZ, R_TMAX, R_TMIN, REC_NODE, REC_PARENT, REC_SHIFT, REC_TRI,
                               REF_BOX, REF_TRI, REC_FILL, REC_SPILL, TRI_NON_OPAQUE, _culled, _inv,
                               _write_costs, any_hit, box_key, first_after, make_scratch,
                               pop_nearest, slab_and_key, spill_push, spill_records)


H_INTERNAL, H_LEAF, H_ROT, H_COUNTS = 0, 1, 2, 3    # Layout.node_head's columns (NODE_HEAD_WORDS)
BOX_FLOATS = 48             # a node's row of child_boxes: 6 planes x 8 slots, 192 B (box8's)
TRI_FLOATS = ROWS * LANES   # a primitive node's row of tri_corners, 144 B (tri4's)


@inlined
def _prims(tri_u32, s, hit, n, flags, best_t, best_p, lane_t, lane_det):
    """Takes the lanes with a hit (mask `hit`, tri4's over bvh8 primitive node s's n triangles:
    word 0 count, 1-4 ids, 5 flags a byte each) against the closest hit so far, in order, as
    _tri one by one would, until one is a candidate on a non-opaque triangle: its any-hit
    program must run (the kernel runs it, traverse_kernels.any_hit, and calls again with the
    lanes left). Returns the closest hit, the lanes left, the triangles tested (n, or q + 1 for
    a first hit under FLAG_ANY_HIT), whether to stop, the hits culled, and that candidate's lane
    or -1. (No array but those it reads on every path: an inlined helper given others would
    reference-count them at every call, renderer/raster_sections.py.)"""
    culled = 0
    while hit:
        q = lowest_bit(hit)
        hit &= hit - np.uint64(1)
        tflags = (tri_u32[s, 5] >> (8 * q)) & 0xFF
        if _culled(lane_det[q], tflags, flags):
            culled += 1
            continue
        t = lane_t[q]
        p = np.int64(tri_u32[s, 1 + q])
        if t < best_t or (t == best_t and p < best_p):
            if tflags & TRI_NON_OPAQUE and not flags & FLAG_OPAQUE:
                return best_t, best_p, hit, n, False, culled, q
            best_t, best_p = t, p
            if flags & FLAG_ANY_HIT:
                return best_t, best_p, hit, q + 1, True, culled, -1
    return best_t, best_p, hit, n, False, culled, -1


@inlined
def _ref8(j, n_int, ib, lb):
    """The ref of a bvh8 node's slot j: its n_int box children are nodes ib.., the rest primitive
    nodes lb + n_int.. (lb is the node's leaf base less n_int)."""
    return ((ib + j) << 2) | REF_BOX if j < n_int else ((lb + j) << 2) | REF_TRI


@inlined
def _u(i):
    """An index known to be >= 0, as uint64: numba wraps a negative signed index (a compare and
    an add at every access), which LLVM could not prove away in the sort and the stack's ring
    (0-5% of the fast kernel's time in A/B runs, near this machine's noise)."""
    return np.uint64(i)


@inlined
def _sort_kept(ak, sl, m):
    """Sorts a node's m kept children (sort keys ak, slots sl) by key, ties by slot: an
    insertion sort, stable (m is at most 8)."""
    for x in range(1, m):
        t, k = ak[_u(x)], sl[_u(x)]
        z = x
        while z > 0 and ak[_u(z - 1)] > t:
            ak[_u(z)], sl[_u(z)] = ak[_u(z - 1)], sl[_u(z - 1)]
            z -= 1
        ak[_u(z)], sl[_u(z)] = t, k


@inlined
def _push_one(ref, t, st_ref, st_t, top, size, stack):
    """One entry onto the ring stack: (top, size, entries overwritten)."""
    st_ref[_u(top)], st_t[_u(top)] = ref, t
    top = top + 1 if top + 1 < stack else 0
    lost = 1 if size == stack else 0
    return top, size + 1 - lost, lost


@inlined
def _push_kept(keep, at, ak, sl, st_ref, st_t, top, size, stack, n_int, ib, lb, spill_at,
               on_chip):
    """The children a box test kept, two or more (mask keep, entry distances at and sort keys ak
    by slot): their keys packed to the front of ak by slot, sorted (ties by slot), all but the
    first pushed last first onto the ring stack (st_ref, st_t: ref and entry distance; top,
    size). Returns the first's ref, top, size, how many entries the ring overwrote (overflows),
    entries pushed, on_chip, and under the spill policy (traverse_kernels.spill_push) the first
    spill slot and the entries spilled."""
    m = 0
    while keep:                # the m-th kept slot is at or after m: packs in place
        j = lowest_bit(keep)
        keep &= keep - np.uint64(1)
        ak[_u(m)], sl[_u(m)] = ak[j], j
        m += 1
    _sort_kept(ak, sl, m)
    lost = spilled = 0
    first_slot = -1
    for x in range(m - 1, 0, -1):
        on_chip, out = spill_push(on_chip, spill_at)
        if out:
            if spilled == 0:
                first_slot = size - on_chip
            spilled += 1
        j = sl[_u(x)]
        top, size, more = _push_one(_ref8(j, n_int, ib, lb), at[j], st_ref, st_t, top, size,
                                    stack)
        lost += more
    return _ref8(sl[0], n_int, ib, lb), top, size, lost, m - 1, on_chip, first_slot, spilled


@inlined
def _push_few(keep, at, ak, st_ref, st_t, top, size, stack, n_int, ib, lb):
    """_push_kept for two or three kept children, without its packing loop and sort: their
    slots (ascending) and keys held as scalars, ordered by compare-and-swap (the lower slot on
    a tie), the first returned and the others pushed last first with their entry distances.
    Returns as _push_kept without a spill policy: the first's ref, top, size, entries
    overwritten, entries pushed. The commonest nodes with children to push: bench_bvh's rays
    at 1920x1080 on two threads, two kept (against the sort) dragon AO 7.00 -> 7.24 Mrays/s
    and sponza AO 8.36 -> 8.82, primary rays 1-2%; three kept too, sponza primary 9.34 ->
    9.71 against two alone, the others within this machine's noise (2%)."""
    j0 = lowest_bit(keep)
    keep &= keep - np.uint64(1)
    j1 = lowest_bit(keep)
    keep &= keep - np.uint64(1)
    # keys k and entry distances d (both arrays read before the branch: an inlined helper
    # that reads an array on one path only reference-counts it, raster_sections.py's rules)
    k0, k1, d0, d1 = ak[j0], ak[j1], at[j0], at[j1]
    j2 = lowest_bit(keep)             # the highest slot, if kept: a tie leaves it last
    k2, d2 = ak[j2 & 7], at[j2 & 7]
    if k1 < k0:                       # (slots ascending: a tie keeps the order)
        j0, j1, k0, k1, d0, d1 = j1, j0, k1, k0, d1, d0
    if keep == 0:
        top, size, lost = _push_one(_ref8(j1, n_int, ib, lb), d1, st_ref, st_t, top, size, stack)
        return _ref8(j0, n_int, ib, lb), top, size, lost, 1
    if k2 < k1:
        j1, j2, k1, k2, d1, d2 = j2, j1, k2, k1, d2, d1
        if k1 < k0 or (k1 == k0 and j1 < j0):
            j0, j1, k0, k1, d0, d1 = j1, j0, k1, k0, d1, d0
    top, size, lost = _push_one(_ref8(j2, n_int, ib, lb), d2, st_ref, st_t, top, size, stack)
    top, size, more = _push_one(_ref8(j1, n_int, ib, lb), d1, st_ref, st_t, top, size, stack)
    return _ref8(j0, n_int, ib, lb), top, size, lost + more, 2


@njit(cache=True, nogil=True, error_model="numpy")
def trace_chunk8(tree, job, ah, out, r0, r1, rec0, rec_cap):
    """trace_chunk for the bvh8 layout: the same traversal, hits, counters and records. Its own
    kernel so that the box test runs over all 8 slots of a node's decoded planes at once (empty
    slots are +inf boxes): box8's float32 test for a tame ray at an unrotated node, else a
    float64 one (a loop LLVM vectorises, or _slab for a ray parallel to an axis plane); a
    node's children are kept, sorted and pushed by slot, each ref made only for those kept."""
    return walk8(tree, job, ah, out, r0, r1, rec0, rec_cap, 0, make_scratch(job.stack))


@inlined
def walk8(tree, job, ah, out, r0, r1, rec0, rec_cap, root_node, sc):
    """trace_chunk8 from box node `root_node` (a BLAS's root in a two-level walk's merged
    layout), with the working arrays `sc` (Scratch)."""
    node_u32, tri_corners, tri_u32 = tree.node_u32, tree.tri_corners, tree.tri_u32
    node_parent, tri_parent, table, boxes = (tree.node_parent, tree.tri_parent, tree.obb_table,
                                             tree.child_boxes)
    rays, flags, stack, box_rate, tri_rate = (job.rays, job.flags, job.stack, job.box_rate,
                                              job.tri_rate)
    spill_at, sort = job.spill_at, job.sort
    out_prim, out_t, costs, rec = out.prim, out.t, out.costs, out.rec
    st_ref, st_t = sc.st_ref, sc.st_t
    at, ak = sc.at, sc.ak                # entry distances and sort keys of the opened node's slots
    at32, ak32 = sc.at32, sc.ak32        # box8's
    sl = sc.ar                           # slots kept, in key order
    lane_t, lane_det = sc.lane_t, sc.lane_det        # tri4's
    box_clocks = sc.box_clocks                       # clocks of a node's n box tests
    for n in range(boxes.shape[2] + 1):              # (no integer division per step)
        box_clocks[n] = (n + box_rate - 1) // box_rate
    nrec = 0
    for r in range(r0, r1):
        ox, oy, oz = np.float64(rays[r, R_OX]), np.float64(rays[r, R_OY]), np.float64(rays[r, R_OZ])
        dx, dy, dz = np.float64(rays[r, R_DX]), np.float64(rays[r, R_DY]), np.float64(rays[r, R_DZ])
        tmin, tmax = np.float64(rays[r, R_TMIN]), np.float64(rays[r, R_TMAX])
        ix, iy, iz = _inv(dx), _inv(dy), _inv(dz)
        f32 = tame(ox, oy, oz, dx, dy, dz)      # box8 at unrotated nodes
        o32x, o32y, o32z = rays[r, R_OX], rays[r, R_OY], rays[r, R_OZ]
        i32x = np.float32(1.0) / rays[r, R_DX] if f32 else np.float32(0.0)
        i32y = np.float32(1.0) / rays[r, R_DY] if f32 else np.float32(0.0)
        i32z = np.float32(1.0) / rays[r, R_DZ] if f32 else np.float32(0.0)
        best_t = tmax
        best_p = np.int64(-1)
        cur, last = (np.int64(root_node) << 2) | REF_BOX, np.int64(-1)
        size, top, over = 0, 0, False      # entries, ring position of the next push, lost any
        steps = box_nodes = leaf_nodes = box_tests = tri_tests = 0
        overflows = restarts = refetch = parent_reads = obbs = clocks = 0
        anyhits = ignored = texels = culled = 0
        pushes = pops = spills = fills = on_chip = 0
        done = False
        while not done:
            # children (and stack entries) in front of the closest hit: box8's widened limit
            # for a tame ray, at all nodes (wider than BOX_EPS's: only more conservative)
            lim_f32 = lim32(best_t)
            lim = np.float64(lim_f32) if f32 else best_t * (1.0 + BOX_EPS)
            climbing = False
            if cur >= 0 and (cur & 3) == REF_TRI:
                s = cur >> 2
                steps += 1
                leaf_nodes += 1
                if rec_cap > 0:
                    if nrec < rec_cap:
                        rec[rec0 + nrec] = (REC_TRI << REC_SHIFT) | s
                    nrec += 1
                n = np.int64(tri_u32[s, 0] & 0xFF)
                lanes = tri4(tri_corners, s, ox, oy, oz, dx, dy, dz, tmin, tmax, lane_t,
                             lane_det) & ((np.uint64(1) << n) - 1)
                tested = n
                while True:
                    best_t, best_p, lanes, tested, done, n_cut, q = _prims(
                        tri_u32, s, lanes, tested, flags, best_t, best_p, lane_t, lane_det)
                    culled += n_cut
                    if q < 0:
                        break
                    p = np.int64(tri_u32[s, 1 + q])
                    ok, n_bytes, nrec = any_hit(ah, p, ox, oy, oz, dx, dy, dz, flags, rec, rec0,
                                                nrec, rec_cap)
                    anyhits += 1
                    texels += n_bytes
                    if not ok:
                        ignored += 1
                        continue
                    best_t, best_p = lane_t[q], p
                    if flags & FLAG_ANY_HIT:
                        done = True
                        tested = q + 1
                        break
                tri_tests += tested
                clocks += (tested + tri_rate - 1) // tri_rate
                last = cur
                cur = -1
                continue
            if cur >= 0:
                node = cur >> 2
            else:
                # pop the nearest entry still in front of the closest hit
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
                # stack dry after an overflow: climb from the last node visited
                kind = last & 3
                node = np.int64(tri_parent[last >> 2] if kind == REF_TRI else node_parent[last >> 2])
                parent_reads += 1
                if rec_cap > 0:
                    if nrec < rec_cap:
                        rec[rec0 + nrec] = (REC_PARENT << REC_SHIFT) | (
                            (last >> 2) * 2 + (1 if kind == REF_TRI else 0))
                    nrec += 1
                if node < 0:
                    break
                climbing = True
                refetch += 1
            steps += 1
            if not climbing:
                box_nodes += 1
            if rec_cap > 0:
                if nrec < rec_cap:
                    rec[rec0 + nrec] = (REC_NODE << REC_SHIFT) | node
                nrec += 1
            # words 0-2 origin, 3 internal base, 4 leaf base, 5 parent, 6 exponents (3 bytes) |
            # obb << 24, 7 n_internal | n_children << 8, 8-31 qbox (decoded: boxes[node])
            w6, w7 = node_u32[node, 6], node_u32[node, 7]
            rot = np.int64(w6 >> 24)
            px, py, pz, jx, jy, jz = ox, oy, oz, ix, iy, iz
            if rot < N_OBB:               # the ray in the node's rotated frame
                obbs += 1
                px = table[rot, 0, 0] * ox + table[rot, 0, 1] * oy + table[rot, 0, 2] * oz
                py = table[rot, 1, 0] * ox + table[rot, 1, 1] * oy + table[rot, 1, 2] * oz
                pz = table[rot, 2, 0] * ox + table[rot, 2, 1] * oy + table[rot, 2, 2] * oz
                jx = _inv(table[rot, 0, 0] * dx + table[rot, 0, 1] * dy + table[rot, 0, 2] * dz)
                jy = _inv(table[rot, 1, 0] * dx + table[rot, 1, 1] * dy + table[rot, 1, 2] * dz)
                jz = _inv(table[rot, 2, 0] * dx + table[rot, 2, 1] * dy + table[rot, 2, 2] * dz)
            n_int, n = np.int64(w7 & 0xFF), np.int64((w7 >> 8) & 0xFF)
            # as _ref8 takes them
            ib, lb = np.int64(node_u32[node, 3]), np.int64(node_u32[node, 4]) - n_int
            if f32 and rot >= N_OBB:
                nx, ny, nz = entry_planes(i32x, i32y, i32z)
                keep = box8(boxes, node, nx, ny, nz, o32x, o32y, o32z, i32x, i32y, i32z,
                            rays[r, R_TMIN], lim_f32, at32, ak32, sort)
                for j in range(boxes.shape[2]):
                    at[j], ak[j] = at32[j], ak32[j]
            elif jx != 0.0 and jy != 0.0 and jz != 0.0:
                # _slab on every slot, with no parallel-slab case and each axis's entry plane
                # picked by the direction's sign (rounding is monotonic: the same values as the
                # min and max of both planes): straight-line, vectorised
                nx, ny, nz = entry_planes(jx, jy, jz)
                keep = np.uint64(0)
                for j in range(boxes.shape[2]):
                    ax, bx = (boxes[node, nx, j] - px) * jx, (boxes[node, 3 - nx, j] - px) * jx
                    ay, by = (boxes[node, ny, j] - py) * jy, (boxes[node, 5 - ny, j] - py) * jy
                    az, bz = (boxes[node, nz, j] - pz) * jz, (boxes[node, 7 - nz, j] - pz) * jz
                    near = max(ax, max(ay, az))
                    tnear = max(tmin, near)
                    tfar = min(min(bx, by), bz)
                    hit = tnear <= min(tfar + abs(tfar) * BOX_EPS + 1e-300, tmax)
                    at[j] = tnear if hit else np.inf
                    ak[j] = box_key(sort, tnear, near, tfar, lim) if hit else np.inf
                    keep |= np.uint64(hit & (tnear <= lim) & (tnear < np.inf)) << np.uint64(j)
            else:
                keep = np.uint64(0)
                for j in range(n):
                    at[j], ak[j] = slab_and_key(
                        boxes[node, 0, j], boxes[node, 1, j], boxes[node, 2, j], boxes[node, 3, j],
                        boxes[node, 4, j], boxes[node, 5, j], px, py, pz, jx, jy, jz, tmin, tmax,
                        lim, sort)
                    keep |= np.uint64((at[j] <= lim) & (at[j] < np.inf)) << np.uint64(j)
            box_tests += n
            clocks += box_clocks[n]
            if climbing:
                # continue with the first child after `last` in (key, slot) order
                ks = -1
                for j in range(n):
                    if _ref8(j, n_int, ib, lb) == last:
                        ks = j
                nsl = first_after(at, ak, n, lim, ks)
                if nsl < n:
                    cur = _ref8(nsl, n_int, ib, lb)
                    restarts += 1
                else:
                    last = (node << 2) | REF_BOX
                continue
            # the children in front of the closest hit (the mask the box test made), packed
            # to the front by slot and sorted by key, ties by slot
            if keep == 0:
                last = (node << 2) | REF_BOX
                cur = -1
                continue
            if keep & (keep - np.uint64(1)) == 0:        # one child: no stack traffic
                cur = _ref8(lowest_bit(keep), n_int, ib, lb)
                continue
            cur, top, size, lost, n_push, on_chip, slot, n_spill = _push_kept(
                keep, at, ak, sl, st_ref, st_t, top, size, stack, n_int, ib, lb, spill_at, on_chip)
            overflows += lost
            over |= lost > 0
            pushes += n_push
            spills += n_spill
            if rec_cap > 0 and n_spill > 0:
                nrec = spill_records(rec, rec0, nrec, rec_cap, REC_SPILL, r, slot, n_spill, 1)
        out_prim[r] = best_p
        out_t[r] = best_t if best_p >= 0 else np.inf
        _write_costs(costs, r, steps, box_nodes, leaf_nodes, box_tests, tri_tests, overflows, restarts,
                     refetch, parent_reads, 0, obbs, clocks, anyhits, ignored, texels, culled,
                     pushes, pops, spills, fills)
    return nrec


@inlined
def _root_misses(boxes, n, rays, r0, r1):
    """Bit r - r0 of the returned uint8 array set where ray r (of r0..r1-1, in whole eights)
    misses the union of the root's n boxes, which box8 would then keep none of (misses8).
    A loop of its own before the rays' walks: in the walk's loop the union's six planes held
    registers the walk needed (sponza, whose rays all enter the root, 6% slower)."""
    lx = ly = lz = np.float32(np.inf)
    hx = hy = hz = np.float32(-np.inf)
    for j in range(n):
        lx, ly, lz = min(lx, boxes[0, 0, j]), min(ly, boxes[0, 1, j]), min(lz, boxes[0, 2, j])
        hx, hy, hz = max(hx, boxes[0, 3, j]), max(hy, boxes[0, 4, j]), max(hz, boxes[0, 5, j])
    missed = np.zeros((r1 - r0 + 7) >> 3, np.uint8)
    for g in range((r1 - r0) >> 3):
        missed[g] = misses8(rays, r0 + 8 * g, lx, ly, lz, hx, hy, hz)
    return missed


@inlined
def _stream_costs(cnt, r, steps, box_nodes, leaf_nodes, box_tests, tri_tests, overflows,
                  restarts, refetch, parent_reads, duals, obbs, clocks, anyhits, ignored,
                  texel_bytes, culled, pushes, pops, spills, fills):
    """_write_costs with stores past the host's caches (renderer.stream_store): the row in
    C_* order, which is the arguments' order; the kernel fences them before it returns."""
    stream_row(cnt, r, (steps, box_nodes, leaf_nodes, box_tests, tri_tests, overflows, restarts,
                        refetch, parent_reads, duals, obbs, clocks, anyhits, ignored, texel_bytes,
                        culled, pushes, pops, spills, fills))


@njit(cache=True, nogil=True, error_model="numpy")
def trace_chunk8_fast(tree, job, ah, out, r0, r1, redo):
    """trace_chunk8 for the common case alone: no fetch records, a tame ray (box8_kernels:
    none parallel to an axis plane), no restart after an overflow, no spill, no candidate hit
    on a non-opaque triangle. A ray that needs one of those is left to trace_chunk8, listed in
    redo; returns how many were. Same decisions, hits and counters (tests/test_bvh.py holds
    them equal), in a kernel small enough for LLVM to keep its state in registers, with
    distances in float32 throughout. The layout has no rotated node: trace_rays gives one that
    has to trace_chunk8 whole (a check of each node here cost sponza's rays 2.5-3.7%, A/B).

    The loop is turned around: a step takes the children the last box test kept, goes on to
    the next box node (popping, testing primitive nodes on the way) and tests it. So the root's
    test comes before the loop, and a ray that keeps none of the root's children (most of a
    model's pixels around it: 85% of dragon's at 1080p) is done without entering it, before
    any of the loop's setup (the triangle test's broadcast ray): those rays took 23-27 ns
    each, now 16-17 (dragon 1080p, 9-14% of all its rays' time, A/B on one and two threads).
    Before the walks, misses8 tests eight rays at a time against the union of the root's boxes
    and the rays that miss it skip even that test (with the caller's one call for many chunks,
    _trace_chunks: 12.7-13.0 -> 7.7 ns per ray that misses the dragon, one thread); it tests
    their ranges too (`tame`), so such a ray is done before its own loads and checks (11.4 ->
    9.9 ns with its 80-byte row, one thread; dragon's primary rays 4.7% faster on two). Each ray's
    counters go out past the host's caches (_stream_costs): 80 bytes a ray, 166 MB a 1080p
    frame of rays, which plain stores first read from DRAM (dragon's primary rays, 85% of which
    end at the root: 47.0 -> 44.9 ms and 47.1 -> 46.2 in two A/B runs, bench_bvh's rays, two
    threads; sponza's within noise)."""
    # the node words it reads, 16 bytes a node (Layout.node_head: a node's children's in a line
    # or two), and the primitive nodes' first 32 bytes (tri_head: their words as tri_u32's)
    head, tri_corners, tri_u32, boxes = (tree.node_head, tree.tri_corners, tree.tri_head,
                                         tree.child_boxes)
    rays, flags, stack, box_rate, tri_rate = (job.rays, job.flags, job.stack, job.box_rate,
                                              job.tri_rate)
    out_prim, out_t, costs = out.prim, out.t, out.costs
    spill_at, sort = job.spill_at, job.sort
    flat_boxes, flat_tris = boxes.reshape(-1), tri_corners.reshape(-1)
    flat_heads = tri_u32.reshape(-1)
    st_ref = np.empty(stack, np.int64)
    st_t = np.empty(stack, np.float32)
    at = np.empty(8, np.float32)       # box8's distances
    ak = np.empty(8, np.float32)       # and keys
    sl = np.empty(boxes.shape[2], np.int64)
    lane_t, lane_det = np.empty(4), np.empty(4)
    box_clocks = np.empty(boxes.shape[2] + 1, np.int64)
    for n in range(boxes.shape[2] + 1):
        box_clocks[n] = (n + box_rate - 1) // box_rate
    tri_clocks = np.empty(LANES + 1, np.int64)      # (a division a primitive node: 1-5% of
    for n in range(LANES + 1):                      # the rays' time, A/B)
        tri_clocks[n] = (n + tri_rate - 1) // tri_rate
    n_redo = 0
    n_root = np.int64((head[0, H_COUNTS] >> 8) & 0xFF)
    missed = _root_misses(boxes, n_root, rays, r0, r1)
    for r in range(r0, r1):
        if (missed[(r - r0) >> 3] >> ((r - r0) & 7)) & 1:
            # a tame ray's miss at the root (all its boxes at once): one step, n box tests
            out_prim[r] = -1
            out_t[r] = np.inf
            _stream_costs(costs, r, 1, 1, 0, n_root, 0, 0, 0, 0, 0, 0, 0, box_clocks[n_root], 0,
                          0, 0, 0, 0, 0, 0, 0)
            continue
        o32x, o32y, o32z, tmin32 = rays[r, R_OX], rays[r, R_OY], rays[r, R_OZ], rays[r, R_TMIN]
        # (the float32 values: the float64 ray, which only the triangle test needs, is made
        # after the root's test; 5% of dragon's time in A/B runs)
        if not tame(o32x, o32y, o32z, rays[r, R_DX], rays[r, R_DY], rays[r, R_DZ]):
            redo[n_redo] = r
            n_redo += 1
            continue
        ix = np.float32(1.0) / rays[r, R_DX]
        iy = np.float32(1.0) / rays[r, R_DY]
        iz = np.float32(1.0) / rays[r, R_DZ]
        nx, ny, nz = entry_planes(ix, iy, iz)
        tmax = np.float64(rays[r, R_TMAX])
        lim = lim32(tmax)
        node = np.int64(0)
        w7 = head[0, H_COUNTS]
        n = np.int64((w7 >> 8) & 0xFF)
        keep = box8(boxes, node, nx, ny, nz, o32x, o32y, o32z, ix, iy, iz, tmin32, lim, at, ak,
                    sort)
        if keep == 0:                       # a miss at the root: one step, n box tests
            out_prim[r] = -1
            out_t[r] = np.inf
            _stream_costs(costs, r, 1, 1, 0, n, 0, 0, 0, 0, 0, 0, 0, box_clocks[n], 0, 0, 0, 0, 0,
                          0, 0, 0)
            continue
        ox, oy, oz = np.float64(rays[r, R_OX]), np.float64(rays[r, R_OY]), np.float64(rays[r, R_OZ])
        dx, dy, dz = np.float64(rays[r, R_DX]), np.float64(rays[r, R_DY]), np.float64(rays[r, R_DZ])
        tmin = np.float64(rays[r, R_TMIN])
        best_t = tmax
        best_p = np.int64(-1)
        size, top, over, bail = 0, 0, False, False
        box_nodes, box_tests, clocks = 1, n, box_clocks[n]
        leaf_nodes = tri_tests = overflows = culled = pushes = pops = 0
        while True:
            # the children of `node` its test kept: the first in key order next, the others
            # pushed
            n_int = np.int64(w7 & 0xFF)
            ib, lb = np.int64(head[node, H_INTERNAL]), np.int64(head[node, H_LEAF]) - n_int
            if flags & FLAG_ANY_HIT:
                # A first-hit ray's kept primitive children, asked of the host's caches at once
                # (their corners' three lines, their head words): such a ray ends at the first
                # hit it accepts, often in the next primitive node it opens, whose corners
                # would wait on host DRAM. bench_bvh's AO rays, rounds with and without it
                # taking turns in one process: dragon 0.96-0.97x the time, sponza 0.95-0.97x;
                # closest-hit rays within 2% either way (and the kept box children too: AO
                # 0.98-1.00x, primary 1.02-1.05x), so they are left as they were.
                prims = keep >> np.uint64(n_int)
                while prims:
                    leaf = lb + n_int + lowest_bit(prims)
                    prims &= prims - np.uint64(1)
                    prefetch(flat_tris, leaf * TRI_FLOATS)
                    prefetch(flat_tris, leaf * TRI_FLOATS + 16)
                    prefetch(flat_tris, leaf * TRI_FLOATS + TRI_FLOATS - 1)
                    prefetch(flat_heads, leaf * tri_u32.shape[1])
            if keep == 0:
                cur = np.int64(-1)
            elif keep & (keep - np.uint64(1)) == 0:      # one: no stack traffic
                cur = _ref8(lowest_bit(keep), n_int, ib, lb)
            else:
                if popcount(keep) <= 3:
                    cur, top, size, lost, n_push = _push_few(keep, at, ak, st_ref, st_t, top,
                                                             size, stack, n_int, ib, lb)
                else:
                    cur, top, size, lost, n_push, _, _, _ = _push_kept(
                        keep, at, ak, sl, st_ref, st_t, top, size, stack, n_int, ib, lb, 0, 0)
                overflows += lost
                over |= lost > 0
                pushes += n_push
                if 0 < spill_at < size:       # a spill: trace_chunk8's
                    bail = True
                    break
            # on to the next box node, popping and testing primitive nodes on the way
            done = False
            while True:
                if cur < 0:
                    # pop the nearest entry still in front of the closest hit
                    while size > 0:
                        top = top - 1 if top > 0 else stack - 1
                        size -= 1
                        pops += 1
                        if st_t[_u(top)] <= lim:
                            cur = st_ref[_u(top)]
                            break
                    if size > 0:
                        # the entry under it, asked of the caches while cur's subtree is walked
                        # (a host cache miss is an AO ray's likeliest wait): the three lines of
                        # its planes or its triangles' corners
                        nxt = st_ref[_u(top - 1 if top > 0 else stack - 1)]
                        if (nxt & 3) == REF_TRI:
                            c = (nxt >> 2) * TRI_FLOATS
                            prefetch(flat_tris, c)
                            prefetch(flat_tris, c + 16)
                            prefetch(flat_tris, c + TRI_FLOATS - 1)
                        else:
                            c = (nxt >> 2) * BOX_FLOATS
                            prefetch(flat_boxes, c)
                            prefetch(flat_boxes, c + 16)
                            prefetch(flat_boxes, c + 32)
                    if cur < 0:
                        bail = over         # dry after an overflow: a restart, trace_chunk8's
                        done = True
                        break
                if (cur & 3) != REF_TRI:
                    break
                leaf_nodes += 1
                s = cur >> 2
                n_tris = np.int64(tri_u32[s, 0] & 0xFF)
                lanes = tri4(tri_corners, s, ox, oy, oz, dx, dy, dz, tmin, tmax, lane_t,
                             lane_det) & ((np.uint64(1) << n_tris) - 1)
                best_t, best_p, _, tested, done, n_cut, q = _prims(
                    tri_u32, s, lanes, n_tris, flags, best_t, best_p, lane_t, lane_det)
                culled += n_cut
                if q >= 0:                  # an any-hit to run: trace_chunk8's
                    bail = done = True
                tri_tests += tested
                clocks += tri_clocks[tested]
                lim = lim32(best_t)
                cur = -1
                if done:
                    break
            if done:
                break
            node = cur >> 2
            box_nodes += 1
            w7 = head[node, H_COUNTS]
            n = np.int64((w7 >> 8) & 0xFF)
            keep = box8(boxes, node, nx, ny, nz, o32x, o32y, o32z, ix, iy, iz, tmin32, lim, at,
                        ak, sort)
            box_tests += n
            clocks += box_clocks[n]
        if bail:
            redo[n_redo] = r
            n_redo += 1
            continue
        out_prim[r] = best_p
        out_t[r] = best_t if best_p >= 0 else np.inf
        _stream_costs(costs, r, box_nodes + leaf_nodes, box_nodes, leaf_nodes, box_tests,
                      tri_tests, overflows, 0, 0, 0, 0, 0, clocks, 0, 0, 0, culled, pushes, pops,
                      0, 0)
    stream_fence()
    return n_redo
