"""Numba kernels of BVH traversal, parallel over chunks of rays, each reading a layout through its
own node words: trace_chunk reads bvh2 and bvh4 (BVH4x2 steps included), choosing the decoder by
a small layout code (layouts_kernels.L_*) as hardware picks the node type; trace_chunk8 reads
bvh8 (with or without OBB), a kernel of its own so that its 8-wide box test compiles to vector
code; trace_chunk8_fast is its common case alone (no records, no rotated node), handing the
rare ray back to it. All make the same decisions in the same order, described here once.

Per ray: a short stack of `stack` entries (RDNA's LDS ring: overwritten when full, seed-notes
000_partB L99); when it runs dry after an overflow, traversal restarts stacklessly through parent
links and the last node visited: climb to the parent, re-test its children, continue with the
first one after the last node in the same (distance, slot) order. Children are visited nearest
first, ties by slot, and every decision depends only on the ray and the node, so that order is
the same each time a node is re-tested, and the restart resumes exactly where the dropped stack
entries would have.

Closest hit: the least t, ties by the least triangle id, so every layout and the brute-force
loop agree exactly. Box tests run in float64 on the float32 planes, or for bvh8 on the layout's
decoded copy of the quantized planes (Layout.child_boxes, decoded once when the layout is built,
the same values a per-test decode gives), with the far distance widened by BOX_EPS so that a
triangle inside a box is never culled by rounding.

Every node and triangle fetch can be recorded (chunk by chunk, in ray order) for the memory
model: a record is kind << 30 | index (REC_*).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from renderer import memory_kernels as mk
from renderer.block_masks import lowest_bit

from .layouts_kernels import L_BVH2, L_BVH8, N_OBB

REF_BOX, REF_TRI, REF_LEAF = 0, 1, 2          # ref = index << 2 | kind; REF_LEAF: a bvh2 leaf
FLAG_ANY_HIT = 1      # DXR RAY_FLAG_ACCEPT_FIRST_HIT_AND_END_SEARCH
FLAG_CULL_BACK = 2    # DXR RAY_FLAG_CULL_BACK_FACING_TRIANGLES
TRI_CULL_DISABLE, TRI_FRONT_CW = 1, 2         # builder.TRI_*, kept in the triangle node's top byte
REC_NODE, REC_TRI, REC_PARENT = 0, 1, 2
REC_SHIFT = 30
BANDS = 32            # trace gives each thread a run of chunks in each of this many bands
BOX_EPS = 1e-9        # relative; float64 box and triangle distances agree to ~1e-15
# Per-ray counters (columns of cnt)
(C_STEPS, C_BOX_NODES, C_LEAF_NODES, C_BOX_TESTS, C_TRI_TESTS, C_OVERFLOWS, C_RESTARTS,
 C_REFETCH, C_PARENT_READS, C_DUAL, C_OBB, C_CLOCKS, C_N) = range(13)
COUNTER_NAMES = ("steps", "nodes.box", "nodes.leaf", "tests.box", "tests.tri", "stack.overflows",
                 "stack.restarts", "nodes.refetch", "parent_reads", "dual_steps", "obb_transforms",
                 "isect_clocks")
# nodes.box: box nodes fetched while descending; nodes.refetch: fetched again by restarts;
# obb_transforms: box-node openings whose node is rotated (the ray transformed into its frame):
# a subset of nodes.box + nodes.refetch, not a node type of its own.
# isect_clocks: intersection-unit clocks at the preset's rates, ceil(tests / rate) per step (a
# node's box tests, a leaf node's triangle tests): 4 box or 1 triangle test per clock on RDNA 2/3,
# 8 or 2 on RDNA 4 (seed-notes 000_partA l.188, 000_partB l.84)
# Ray columns
R_OX, R_OY, R_OZ, R_TMIN, R_DX, R_DY, R_DZ, R_TMAX, R_N = range(9)


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _inv(d):
    """1/d, or 0 for d == 0: the flag _axis reads as "parallel to this slab"."""
    return 1.0 / d if d != 0.0 else 0.0


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _axis(l, h, o, i, tn, tf):
    """Clip [tn, tf] by one slab. i = 0 means the ray is parallel to it: inside or out."""
    if i == 0.0:
        if o < l or o > h:
            return np.inf, -np.inf
        return tn, tf
    a, b = (l - o) * i, (h - o) * i
    return max(tn, min(a, b)), min(tf, max(a, b))


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _slab(lx, ly, lz, hx, hy, hz, ox, oy, oz, ix, iy, iz, tmin, tmax):
    """Entry distance of the ray into the box, or inf if it misses within [tmin, tmax]."""
    tn, tf = _axis(lx, hx, ox, ix, tmin, np.inf)
    tn, tf = _axis(ly, hy, oy, iy, tn, tf)
    tn, tf = _axis(lz, hz, oz, iz, tn, tf)
    if tn <= min(tf + abs(tf) * BOX_EPS + 1e-300, tmax):
        return tn
    return np.inf


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _tri(ox, oy, oz, dx, dy, dz, tmin, tmax, ax, ay, az, bx, by, bz, cx, cy, cz, tflags, flags):
    """Moeller-Trumbore in float64 on one triangle (scalars only: no array reaches a helper in
    the hot loop). Returns t in [tmin, tmax], or inf."""
    e1x, e1y, e1z = bx - ax, by - ay, bz - az
    e2x, e2y, e2z = cx - ax, cy - ay, cz - az
    px, py, pz = dy * e2z - dz * e2y, dz * e2x - dx * e2z, dx * e2y - dy * e2x
    det = e1x * px + e1y * py + e1z * pz          # > 0: front face (counter-clockwise)
    if flags & FLAG_CULL_BACK and not (tflags & TRI_CULL_DISABLE):
        if (det <= 0.0) if not (tflags & TRI_FRONT_CW) else (det >= 0.0):
            return np.inf
    if det == 0.0:
        return np.inf
    inv = 1.0 / det
    sx, sy, sz = ox - ax, oy - ay, oz - az
    u = (sx * px + sy * py + sz * pz) * inv
    if u < 0.0 or u > 1.0:
        return np.inf
    qx, qy, qz = sy * e1z - sz * e1y, sz * e1x - sx * e1z, sx * e1y - sy * e1x
    v = (dx * qx + dy * qy + dz * qz) * inv
    if v < 0.0 or u + v > 1.0:
        return np.inf
    t = (e2x * qx + e2y * qy + e2z * qz) * inv
    if t < tmin or t > tmax:
        return np.inf
    return t


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _prims(tf, tu, s, ox, oy, oz, dx, dy, dz, tmin, tmax, flags, best_t, best_p):
    """Tests bvh8 primitive node s's triangles against the closest hit so far: up to 4, their
    corners stored once (word 0 count, 1-4 ids, 5 flags, 6-8 corner indices a byte each, 9-29
    corners). Returns the closest hit, the triangles tested and whether to stop (a first hit
    under FLAG_ANY_HIT)."""
    tested = 0
    for q in range(np.int64(tu[s, 0] & 0xFF)):
        tested += 1
        b0, b1, b2 = 3 * q, 3 * q + 1, 3 * q + 2
        v0 = 9 + 3 * np.int64((tu[s, 6 + (b0 >> 2)] >> (8 * (b0 & 3))) & 0xFF)
        v1 = 9 + 3 * np.int64((tu[s, 6 + (b1 >> 2)] >> (8 * (b1 & 3))) & 0xFF)
        v2 = 9 + 3 * np.int64((tu[s, 6 + (b2 >> 2)] >> (8 * (b2 & 3))) & 0xFF)
        t = _tri(ox, oy, oz, dx, dy, dz, tmin, tmax, np.float64(tf[s, v0]),
                 np.float64(tf[s, v0 + 1]), np.float64(tf[s, v0 + 2]),
                 np.float64(tf[s, v1]), np.float64(tf[s, v1 + 1]),
                 np.float64(tf[s, v1 + 2]), np.float64(tf[s, v2]),
                 np.float64(tf[s, v2 + 1]), np.float64(tf[s, v2 + 2]),
                 (tu[s, 5] >> (8 * q)) & 0xFF, flags)
        p = np.int64(tu[s, 1 + q])
        if t < np.inf and (t < best_t or (t == best_t and p < best_p)):
            best_t, best_p = t, p
            if flags & FLAG_ANY_HIT:
                return best_t, best_p, tested, True
    return best_t, best_p, tested, False


@njit(cache=True, nogil=True, error_model="numpy")
def trace_chunk(layout, nf, nu, tf, tu, node_parent, tri_parent, rays, r0, r1, flags, stack, dual,
                box_rate, out_prim, out_t, cnt, rec, rec0, rec_cap):
    """Traces rays r0..r1-1 through a bvh2 or bvh4 layout; records fetches into
    rec[rec0:rec0 + rec_cap] when rec_cap > 0. Returns the number of records the chunk needed.

    One loop per ray; each pass through it either tests a triangle node (or a bvh2 leaf), or
    opens one box node (two in BVH4x2 steps) -- descending from the stack, or re-testing a
    parent while climbing after an overflow. The node decoders are written out here, once,
    with no helper taking an array (numba would reference-count it on every call)."""
    st_ref = np.empty(stack, np.int64)
    st_t = np.empty(stack)
    at = np.empty(16)                    # entry distances of the opened node(s): 8 slots each
    ar = np.empty(16, np.int64)          # their refs
    na = np.zeros(2, np.int64)           # children per opened node
    nrec = 0
    root = REF_BOX
    if layout == L_BVH2 and nu[0, 7] > 0:
        root = REF_LEAF
    for r in range(r0, r1):
        ox, oy, oz = np.float64(rays[r, R_OX]), np.float64(rays[r, R_OY]), np.float64(rays[r, R_OZ])
        dx, dy, dz = np.float64(rays[r, R_DX]), np.float64(rays[r, R_DY]), np.float64(rays[r, R_DZ])
        tmin, tmax = np.float64(rays[r, R_TMIN]), np.float64(rays[r, R_TMAX])
        ix, iy, iz = _inv(dx), _inv(dy), _inv(dz)
        best_t = tmax
        best_p = np.int64(-1)
        cur, last = np.int64(root), np.int64(-1)
        size, top, over = 0, 0, False      # entries, ring position of the next push, lost any
        steps = box_nodes = leaf_nodes = box_tests = tri_tests = 0
        overflows = restarts = refetch = parent_reads = duals = clocks = 0
        done = False
        while not done:
            lim = best_t * (1.0 + BOX_EPS)
            climbing = False
            if cur >= 0 and (cur & 3) != REF_BOX:           # triangle node(s)
                i = cur >> 2
                s0, s1 = i, i + 1
                if (cur & 3) == REF_LEAF:
                    s0 = np.int64(nu[i, 3])
                    s1 = s0 + np.int64(nu[i, 7])
                for s in range(s0, s1):          # one triangle per 64 B triangle node
                    steps += 1
                    leaf_nodes += 1
                    tri_tests += 1
                    clocks += 1                   # one test: one clock at any rate
                    if rec_cap > 0:
                        if nrec < rec_cap:
                            rec[rec0 + nrec] = (REC_TRI << REC_SHIFT) | s
                        nrec += 1
                    t = _tri(ox, oy, oz, dx, dy, dz, tmin, tmax, np.float64(tf[s, 0]), np.float64(tf[s, 1]),
                             np.float64(tf[s, 2]), np.float64(tf[s, 3]), np.float64(tf[s, 4]),
                             np.float64(tf[s, 5]), np.float64(tf[s, 6]), np.float64(tf[s, 7]),
                             np.float64(tf[s, 8]), tu[s, 13] >> 24, flags)
                    p = np.int64(tu[s, 12])
                    if t < np.inf:
                        if t < best_t or (t == best_t and p < best_p):
                            best_t, best_p = t, p
                            if flags & FLAG_ANY_HIT:
                                done = True
                                break
                last = cur
                cur = -1
                continue
            if cur >= 0:
                node = cur >> 2
            else:
                # pop the nearest entry still in front of the closest hit
                while size > 0:
                    top = top - 1 if top > 0 else stack - 1
                    size -= 1
                    e = st_ref[top]
                    if st_t[top] <= lim:
                        cur = e
                        break
                    last = e
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
            # BVH4x2: a second box node from the stack top in the same step
            second = np.int64(-1)
            if dual and not climbing and size > 0:
                tp = top - 1 if top > 0 else stack - 1
                e = st_ref[tp]
                if (e & 3) == REF_BOX and st_t[tp] <= lim:
                    top = tp
                    size -= 1
                    second = e >> 2
                    duals += 1
            steps += 1
            for q in range(2 if second >= 0 else 1):
                i = node if q == 0 else second
                if not climbing:
                    box_nodes += 1
                if rec_cap > 0:
                    if nrec < rec_cap:
                        rec[rec0 + nrec] = (REC_NODE << REC_SHIFT) | (nu[i, 3] if layout == L_BVH2 else i)
                    nrec += 1
                b = 8 * q
                if layout == L_BVH2:          # the node's two children, adjacent 32 B nodes
                    l = np.int64(nu[i, 3])
                    for j in range(2):
                        c = l + j
                        at[b + j] = _slab(nf[c, 0], nf[c, 1], nf[c, 2], nf[c, 4], nf[c, 5], nf[c, 6],
                                          ox, oy, oz, ix, iy, iz, tmin, tmax)
                        ar[b + j] = (c << 2) | (REF_LEAF if nu[c, 7] > 0 else REF_BOX)
                    n = 2
                else:                         # bvh4, radv box32: 4 child ids, 4 AABBs
                    n = 0
                    for j in range(4):
                        w = nu[i, j]
                        if w == 0xFFFFFFFF:
                            continue
                        k = 4 + 6 * j
                        at[b + n] = _slab(nf[i, k], nf[i, k + 1], nf[i, k + 2], nf[i, k + 3],
                                          nf[i, k + 4], nf[i, k + 5], ox, oy, oz, ix, iy, iz, tmin, tmax)
                        ar[b + n] = (np.int64(w >> 3) << 2) | (REF_BOX if (w & 7) == 5 else REF_TRI)
                        n += 1
                box_tests += n
                na[q] = n
            clocks += (na[0] + (na[1] if second >= 0 else 0) + box_rate - 1) // box_rate
            if climbing:
                # continue with the first child after `last` in (distance, slot) order
                n = na[0]
                kt, ks = np.inf, -1
                for j in range(n):
                    if ar[j] == last:
                        kt, ks = at[j], j
                nxt, nt, nsl = np.int64(-1), np.inf, n
                for j in range(n):
                    t = at[j]
                    if t <= lim and t < np.inf and (t > kt or (t == kt and j > ks)) and (
                            t < nt or (t == nt and j < nsl)):
                        nxt, nt, nsl = ar[j], t, j
                if nxt >= 0:
                    cur = nxt
                    restarts += 1
                else:
                    last = (node << 2) | REF_BOX
                continue
            # keep the children in front of the closest hit, nearest first (ties by slot)
            m0 = m1 = 0
            for q in range(2 if second >= 0 else 1):
                b = 8 * q
                m = 0
                for j in range(na[q]):
                    t = at[b + j]
                    if t <= lim and t < np.inf:
                        at[b + m], ar[b + m] = t, ar[b + j]
                        m += 1
                for x in range(1, m):     # insertion sort, stable
                    t, rf = at[b + x], ar[b + x]
                    y = x - 1
                    while y >= 0 and at[b + y] > t:
                        at[b + y + 1], ar[b + y + 1] = at[b + y], ar[b + y]
                        y -= 1
                    at[b + y + 1], ar[b + y + 1] = t, rf
                if q == 0:
                    m0 = m
                else:
                    m1 = m
            # push the second node's hits, then the first's but its nearest, far first
            b_end = 0 if m0 > 0 else 1
            for j in range(m1 - 1, b_end - 1, -1):
                st_ref[top], st_t[top] = ar[8 + j], at[8 + j]
                top = top + 1 if top + 1 < stack else 0
                if size == stack:
                    overflows += 1
                    over = True
                else:
                    size += 1
            for j in range(m0 - 1, 0, -1):
                st_ref[top], st_t[top] = ar[j], at[j]
                top = top + 1 if top + 1 < stack else 0
                if size == stack:
                    overflows += 1
                    over = True
                else:
                    size += 1
            if m0 > 0:
                cur = ar[0]
            elif m1 > 0:
                cur = ar[8]
            else:
                last = ((second if second >= 0 else node) << 2) | REF_BOX
                cur = -1
        out_prim[r] = best_p
        out_t[r] = best_t if best_p >= 0 else np.inf
        _write_costs(cnt, r, steps, box_nodes, leaf_nodes, box_tests, tri_tests, overflows, restarts,
                     refetch, parent_reads, duals, 0, clocks)
    return nrec


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _ref8(j, n_int, ib, lb):
    """The ref of a bvh8 node's slot j: its n_int box children are nodes ib.., the rest primitive
    nodes lb + n_int.. (lb is the node's leaf base less n_int)."""
    return ((ib + j) << 2) | REF_BOX if j < n_int else ((lb + j) << 2) | REF_TRI


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _sort_kept(at, sl, m):
    """Sorts a node's m kept children (distances at, slots sl) nearest first, ties by slot:
    an insertion sort, stable, as m is at most 8 and mostly 2 or 3."""
    for x in range(1, m):
        t, k = at[x], sl[x]
        y = x - 1
        while y >= 0 and at[y] > t:
            at[y + 1], sl[y + 1] = at[y], sl[y]
            y -= 1
        at[y + 1], sl[y + 1] = t, k


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _write_costs(cnt, r, steps, box_nodes, leaf_nodes, box_tests, tri_tests, overflows, restarts,
                 refetch, parent_reads, duals, obbs, clocks):
    """Ray r's row of per-ray costs (C_*)."""
    cnt[r, C_STEPS] = steps
    cnt[r, C_BOX_NODES] = box_nodes
    cnt[r, C_LEAF_NODES] = leaf_nodes
    cnt[r, C_BOX_TESTS] = box_tests
    cnt[r, C_TRI_TESTS] = tri_tests
    cnt[r, C_OVERFLOWS] = overflows
    cnt[r, C_RESTARTS] = restarts
    cnt[r, C_REFETCH] = refetch
    cnt[r, C_PARENT_READS] = parent_reads
    cnt[r, C_DUAL] = duals
    cnt[r, C_OBB] = obbs
    cnt[r, C_CLOCKS] = clocks


@njit(cache=True, nogil=True, error_model="numpy")
def trace_chunk8(nu, tf, tu, node_parent, tri_parent, table, boxes, rays, r0, r1, flags, stack,
                 box_rate, tri_rate, out_prim, out_t, cnt, rec, rec0, rec_cap):
    """trace_chunk for the bvh8 layout: the same traversal, hits, counters and records. Its own
    kernel so that the box test runs over all 8 slots of a node's decoded planes at once (a
    loop LLVM vectorises; empty slots are +inf boxes), and a node's children are kept, sorted
    and pushed by slot, each ref made only for the children kept."""
    st_ref = np.empty(stack, np.int64)
    st_t = np.empty(stack)
    at = np.empty(boxes.shape[2])        # entry distances of the opened node's slots
    sl = np.empty(boxes.shape[2], np.int64)   # slots kept, nearest first
    box_clocks = np.empty(boxes.shape[2] + 1, np.int64)   # clocks of a node's n box tests
    for n in range(boxes.shape[2] + 1):                   # (no integer division per step)
        box_clocks[n] = (n + box_rate - 1) // box_rate
    nrec = 0
    for r in range(r0, r1):
        ox, oy, oz = np.float64(rays[r, R_OX]), np.float64(rays[r, R_OY]), np.float64(rays[r, R_OZ])
        dx, dy, dz = np.float64(rays[r, R_DX]), np.float64(rays[r, R_DY]), np.float64(rays[r, R_DZ])
        tmin, tmax = np.float64(rays[r, R_TMIN]), np.float64(rays[r, R_TMAX])
        ix, iy, iz = _inv(dx), _inv(dy), _inv(dz)
        best_t = tmax
        best_p = np.int64(-1)
        cur, last = np.int64(REF_BOX), np.int64(-1)
        size, top, over = 0, 0, False      # entries, ring position of the next push, lost any
        steps = box_nodes = leaf_nodes = box_tests = tri_tests = 0
        overflows = restarts = refetch = parent_reads = obbs = clocks = 0
        done = False
        while not done:
            lim = best_t * (1.0 + BOX_EPS)
            climbing = False
            if cur >= 0 and (cur & 3) == REF_TRI:
                s = cur >> 2
                steps += 1
                leaf_nodes += 1
                if rec_cap > 0:
                    if nrec < rec_cap:
                        rec[rec0 + nrec] = (REC_TRI << REC_SHIFT) | s
                    nrec += 1
                best_t, best_p, tested, done = _prims(tf, tu, s, ox, oy, oz, dx, dy, dz, tmin, tmax,
                                                      flags, best_t, best_p)
                tri_tests += tested
                clocks += (tested + tri_rate - 1) // tri_rate
                last = cur
                cur = -1
                continue
            if cur >= 0:
                node = cur >> 2
            else:
                # pop the nearest entry still in front of the closest hit
                while size > 0:
                    top = top - 1 if top > 0 else stack - 1
                    size -= 1
                    e = st_ref[top]
                    if st_t[top] <= lim:
                        cur = e
                        break
                    last = e
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
            w6, w7 = nu[node, 6], nu[node, 7]
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
            ib, lb = np.int64(nu[node, 3]), np.int64(nu[node, 4]) - n_int     # as _ref8 takes them
            if jx != 0.0 and jy != 0.0 and jz != 0.0:
                # _slab on every slot, with no parallel-slab case and each axis's entry plane
                # picked by the direction's sign (rounding is monotonic: the same values as the
                # min and max of both planes): straight-line, vectorised
                nx = 0 if jx > 0.0 else 3
                ny = 1 if jy > 0.0 else 4
                nz = 2 if jz > 0.0 else 5
                keep = np.uint64(0)
                for j in range(boxes.shape[2]):
                    ax, bx = (boxes[node, nx, j] - px) * jx, (boxes[node, 3 - nx, j] - px) * jx
                    ay, by = (boxes[node, ny, j] - py) * jy, (boxes[node, 5 - ny, j] - py) * jy
                    az, bz = (boxes[node, nz, j] - pz) * jz, (boxes[node, 7 - nz, j] - pz) * jz
                    tnear = max(max(tmin, ax), max(ay, az))
                    tfar = min(min(bx, by), bz)
                    hit = tnear <= min(tfar + abs(tfar) * BOX_EPS + 1e-300, tmax)
                    at[j] = tnear if hit else np.inf
                    keep |= np.uint64(hit & (tnear <= lim) & (tnear < np.inf)) << np.uint64(j)
            else:
                keep = np.uint64(0)
                for j in range(n):
                    at[j] = _slab(boxes[node, 0, j], boxes[node, 1, j], boxes[node, 2, j],
                                  boxes[node, 3, j], boxes[node, 4, j], boxes[node, 5, j],
                                  px, py, pz, jx, jy, jz, tmin, tmax)
                    keep |= np.uint64((at[j] <= lim) & (at[j] < np.inf)) << np.uint64(j)
            box_tests += n
            clocks += box_clocks[n]
            if climbing:
                # continue with the first child after `last` in (distance, slot) order
                kt, ks = np.inf, -1
                for j in range(n):
                    if _ref8(j, n_int, ib, lb) == last:
                        kt, ks = at[j], j
                nt, nsl = np.inf, n
                for j in range(n):
                    t = at[j]
                    if t <= lim and t < np.inf and (t > kt or (t == kt and j > ks)) and (
                            t < nt or (t == nt and j < nsl)):
                        nt, nsl = t, j
                if nsl < n:
                    cur = _ref8(nsl, n_int, ib, lb)
                    restarts += 1
                else:
                    last = (node << 2) | REF_BOX
                continue
            # the children in front of the closest hit (the mask the box test made), packed
            # to the front by slot and sorted nearest first, ties by slot
            if keep == 0:
                last = (node << 2) | REF_BOX
                cur = -1
                continue
            if keep & (keep - np.uint64(1)) == 0:        # one child: no stack traffic
                cur = _ref8(lowest_bit(keep), n_int, ib, lb)
                continue
            m = 0
            while keep:                # the m-th kept slot is at or after m: packs in place
                j = lowest_bit(keep)
                keep &= keep - np.uint64(1)
                at[m], sl[m] = at[j], j
                m += 1
            _sort_kept(at, sl, m)
            # push all but the nearest, far first
            for x in range(m - 1, 0, -1):
                st_ref[top], st_t[top] = _ref8(sl[x], n_int, ib, lb), at[x]
                top = top + 1 if top + 1 < stack else 0
                if size == stack:
                    overflows += 1
                    over = True
                else:
                    size += 1
            cur = _ref8(sl[0], n_int, ib, lb)
        out_prim[r] = best_p
        out_t[r] = best_t if best_p >= 0 else np.inf
        _write_costs(cnt, r, steps, box_nodes, leaf_nodes, box_tests, tri_tests, overflows, restarts,
                     refetch, parent_reads, 0, obbs, clocks)
    return nrec


@njit(cache=True, nogil=True, error_model="numpy")
def trace_chunk8_fast(nu, tf, tu, boxes, rays, r0, r1, flags, stack, box_rate, tri_rate, out_prim,
                      out_t, cnt, redo):
    """trace_chunk8 for the common case alone: no fetch records, no rotated node, no ray
    parallel to an axis plane, no restart after an overflow. A ray that needs one of those is
    left to trace_chunk8, listed in redo; returns how many were. Same decisions, hits and
    counters (tests/test_bvh.py holds them equal), in a kernel small enough for LLVM to keep
    its state in registers: 1.2-1.3x trace_chunk8's rays per second on dragon and sponza.

    Its box test makes only the mask of the children kept, and distances are computed again
    for those alone (the same expression, so the same values): a loop with no stores has no
    run-time alias checks in front of it. Its trip count stays boxes.shape[2], not a literal
    8, which LLVM would unroll into scalar code instead of vectorising."""
    st_ref = np.empty(stack, np.int64)
    st_t = np.empty(stack)
    at = np.empty(boxes.shape[2])
    sl = np.empty(boxes.shape[2], np.int64)
    box_clocks = np.empty(boxes.shape[2] + 1, np.int64)
    for n in range(boxes.shape[2] + 1):
        box_clocks[n] = (n + box_rate - 1) // box_rate
    n_redo = 0
    for r in range(r0, r1):
        ox, oy, oz = np.float64(rays[r, R_OX]), np.float64(rays[r, R_OY]), np.float64(rays[r, R_OZ])
        dx, dy, dz = np.float64(rays[r, R_DX]), np.float64(rays[r, R_DY]), np.float64(rays[r, R_DZ])
        tmin, tmax = np.float64(rays[r, R_TMIN]), np.float64(rays[r, R_TMAX])
        if dx == 0.0 or dy == 0.0 or dz == 0.0:
            redo[n_redo] = r
            n_redo += 1
            continue
        ix, iy, iz = 1.0 / dx, 1.0 / dy, 1.0 / dz
        nx = 0 if ix > 0.0 else 3          # each axis's entry plane, by the direction's sign
        ny = 1 if iy > 0.0 else 4
        nz = 2 if iz > 0.0 else 5
        best_t = tmax
        best_p = np.int64(-1)
        cur = np.int64(REF_BOX)
        size, top, over, bail = 0, 0, False, False
        box_nodes = leaf_nodes = box_tests = tri_tests = overflows = clocks = 0
        while True:
            lim = best_t * (1.0 + BOX_EPS)
            if cur < 0:
                # pop the nearest entry still in front of the closest hit
                while size > 0:
                    top = top - 1 if top > 0 else stack - 1
                    size -= 1
                    if st_t[top] <= lim:
                        cur = st_ref[top]
                        break
                if cur < 0:
                    bail = over             # dry after an overflow: a restart, trace_chunk8's
                    break
            if (cur & 3) == REF_TRI:
                leaf_nodes += 1
                best_t, best_p, tested, stop = _prims(tf, tu, cur >> 2, ox, oy, oz, dx, dy, dz, tmin,
                                                      tmax, flags, best_t, best_p)
                tri_tests += tested
                clocks += (tested + tri_rate - 1) // tri_rate
                cur = -1
                if stop:
                    break
                continue
            node = cur >> 2
            box_nodes += 1
            w7 = nu[node, 7]
            if np.int64(nu[node, 6] >> 24) < N_OBB:
                bail = True                 # a rotated node (the caller passes none: a guard)
                break
            n_int, n = np.int64(w7 & 0xFF), np.int64((w7 >> 8) & 0xFF)
            ib, lb = np.int64(nu[node, 3]), np.int64(nu[node, 4]) - n_int
            keep = np.uint64(0)
            for j in range(boxes.shape[2]):
                ax, bx = (boxes[node, nx, j] - ox) * ix, (boxes[node, 3 - nx, j] - ox) * ix
                ay, by = (boxes[node, ny, j] - oy) * iy, (boxes[node, 5 - ny, j] - oy) * iy
                az, bz = (boxes[node, nz, j] - oz) * iz, (boxes[node, 7 - nz, j] - oz) * iz
                tnear = max(max(tmin, ax), max(ay, az))
                tfar = min(min(bx, by), bz)
                hit = tnear <= min(tfar + abs(tfar) * BOX_EPS + 1e-300, tmax)
                keep |= np.uint64(hit & (tnear <= lim) & (tnear < np.inf)) << np.uint64(j)
            box_tests += n
            clocks += box_clocks[n]
            if keep == 0:
                cur = -1
                continue
            if keep & (keep - np.uint64(1)) == 0:
                cur = _ref8(lowest_bit(keep), n_int, ib, lb)
                continue
            m = 0
            while keep:
                j = lowest_bit(keep)
                keep &= keep - np.uint64(1)
                ax = (boxes[node, nx, j] - ox) * ix
                ay = (boxes[node, ny, j] - oy) * iy
                az = (boxes[node, nz, j] - oz) * iz
                at[m], sl[m] = max(max(tmin, ax), max(ay, az)), j
                m += 1
            _sort_kept(at, sl, m)
            # push all but the nearest, far first
            for x in range(m - 1, 0, -1):
                st_ref[top], st_t[top] = _ref8(sl[x], n_int, ib, lb), at[x]
                top = top + 1 if top + 1 < stack else 0
                if size == stack:
                    overflows += 1
                    over = True
                else:
                    size += 1
            cur = _ref8(sl[0], n_int, ib, lb)
        if bail:
            redo[n_redo] = r
            n_redo += 1
            continue
        out_prim[r] = best_p
        out_t[r] = best_t if best_p >= 0 else np.inf
        _write_costs(cnt, r, box_nodes + leaf_nodes, box_nodes, leaf_nodes, box_tests, tri_tests,
                     overflows, 0, 0, 0, 0, 0, clocks)
    return n_redo


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def trace(layout, nf, nu, tf, tu, node_parent, tri_parent, table, boxes, rays, chunk, flags, stack,
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
                    n_redo = trace_chunk8_fast(nu, tf, tu, boxes, rays, r0, r1, flags, stack, box_rate,
                                               tri_rate, out_prim, out_t, cnt, redo)
                    for k in range(n_redo):
                        trace_chunk8(nu, tf, tu, node_parent, tri_parent, table, boxes, rays, redo[k],
                                     redo[k] + 1, flags, stack, box_rate, tri_rate, out_prim, out_t, cnt,
                                     rec, 0, 0)
                    rec_n[c] = 0
                elif layout == L_BVH8:
                    rec_n[c] = trace_chunk8(nu, tf, tu, node_parent, tri_parent, table, boxes, rays,
                                            r0, r1, flags, stack, box_rate, tri_rate, out_prim, out_t,
                                            cnt, rec, c * rec_cap, rec_cap)
                else:
                    rec_n[c] = trace_chunk(layout, nf, nu, tf, tu, node_parent, tri_parent, rays, r0,
                                           r1, flags, stack, dual, box_rate, out_prim, out_t, cnt,
                                           rec, c * rec_cap, rec_cap)


@njit(cache=True)
def brute_force(tf, tu, rays, flags, out_prim, out_t):
    """Every ray against every triangle node, same test and tie rule: the slow twin's core."""
    for r in range(rays.shape[0]):
        ox, oy, oz = np.float64(rays[r, R_OX]), np.float64(rays[r, R_OY]), np.float64(rays[r, R_OZ])
        dx, dy, dz = np.float64(rays[r, R_DX]), np.float64(rays[r, R_DY]), np.float64(rays[r, R_DZ])
        tmin, tmax = np.float64(rays[r, R_TMIN]), np.float64(rays[r, R_TMAX])
        best_t, best_p = tmax, np.int64(-1)
        for s in range(tf.shape[0]):
            t = _tri(ox, oy, oz, dx, dy, dz, tmin, tmax, np.float64(tf[s, 0]), np.float64(tf[s, 1]),
                     np.float64(tf[s, 2]), np.float64(tf[s, 3]), np.float64(tf[s, 4]),
                     np.float64(tf[s, 5]), np.float64(tf[s, 6]), np.float64(tf[s, 7]),
                     np.float64(tf[s, 8]), tu[s, 13] >> 24, flags)
            p = np.int64(tu[s, 12])
            if t < best_t or (t == best_t and t < np.inf and p < best_p):
                best_t, best_p = t, p
        out_prim[r] = best_p
        out_t[r] = best_t if best_p >= 0 else np.inf


@njit(cache=True)
def replay(lines, shape, meta, acc, tile_bytes, level, fetches, base, stride, size, stream):
    """Fetch records (kind << 30 | index), in order, as line reads entering at cache `level`.
    A bvh2 node record is its child pair; a parent record indexes node (even) or triangle (odd)
    parent links."""
    rq = np.empty((mk.REQUESTS, mk.R_N), np.int64)
    shift = meta[mk.M_LINE_SHIFT]
    n = 0
    mask = (np.int64(1) << REC_SHIFT) - 1
    for f in range(fetches.shape[0]):
        kind, idx = fetches[f] >> REC_SHIFT, fetches[f] & mask
        if kind == REC_PARENT:
            kind, idx = REC_PARENT + (idx & 1), idx >> 1
        first = base[kind] + idx * stride[kind]
        op = mk.op_code(False, stream[kind])
        for line in range(first >> shift, ((first + size[kind] - 1) >> shift) + 1):
            if n == mk.REQUESTS:
                mk.serve(lines, shape, meta, acc, tile_bytes, rq, n)
                n = 0
            n = mk.request(rq, n, level, line, op, -1)
    mk.serve(lines, shape, meta, acc, tile_bytes, rq, n)
