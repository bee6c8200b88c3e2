"""Numba kernels of the layouts: the OBB choice of bvh8-obb nodes.

A node's children share one rotation (AMD RDNA 4, seed-notes 000_partB L113-117). For every node
and every one of the N_OBB rotations the builder needs each child's box in the rotated frame:
a discrete-orientation polytope (k-DOP) of the child's subtree along the 3 x N_OBB axes,
computed bottom up, deepest level first, parallel over the nodes of a level.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from renderer.inlined import inlined

L_BVH2, L_BVH4, L_BVH8 = 0, 1, 2     # traversal's layout codes
N_OBB = 104                          # AMD NUM_OBB_TRANSFORMS (seed-notes 000_partB L117)
NO_OBB = 127                         # 7-bit index sentinel: axis-aligned node
F32_PAD = 2.5e-7                     # > 2 float32 ulps: rounding a bound outward to float32


@inlined(error_model="python")
def _down(x):
    return np.float32(x - abs(x) * F32_PAD - 1e-30)


@inlined(error_model="python")
def _up(x):
    return np.float32(x + abs(x) * F32_PAD + 1e-30)


@inlined(error_model="python")
def _sa(dx, dy, dz):
    return 2.0 * (dx * dy + dy * dz + dz * dx)


@njit(cache=True, parallel=True)
def choose_obb(child, n_child, parent, tri_order, tri_count, v, table, factor, rot, c_lo, c_hi):
    """For each node, the rotation r minimising the summed surface area of its children's boxes
    in frame r; kept (rot[node] = r, children's boxes replaced by their frame-r boxes, outward
    rounded) only where the axis-aligned sum is at least `factor` times larger."""
    k = child.shape[0]
    depth = np.zeros(k, np.int64)
    for i in range(1, k):              # parents precede children
        depth[i] = depth[parent[i]] + 1
    dop = np.empty((k, N_OBB, 6), np.float32)     # subtree box in each frame: lo xyz, hi xyz
    for level in range(depth.max(), -1, -1):
        nodes = np.flatnonzero(depth == level)
        for ii in prange(nodes.shape[0]):
            node = nodes[ii]
            box = np.empty((8, N_OBB, 6))
            for j in range(n_child[node]):
                c = child[node, j]
                if c >= 0:
                    for r in range(N_OBB):
                        for a in range(6):
                            box[j, r, a] = dop[c, r, a]
                else:                  # a triangle slot: its triangles' corners
                    s0 = -c - 1
                    for r in range(N_OBB):
                        for a in range(3):
                            lo, hi = np.inf, -np.inf
                            for s in range(s0, s0 + tri_count[s0]):
                                t = tri_order[s]
                                for p in range(3):
                                    x = (table[r, a, 0] * v[t, p, 0] + table[r, a, 1] * v[t, p, 1]
                                         + table[r, a, 2] * v[t, p, 2])
                                    lo, hi = min(lo, x), max(hi, x)
                            box[j, r, a], box[j, r, 3 + a] = _down(lo), _up(hi)
            aabb = 0.0
            for j in range(n_child[node]):
                aabb += _sa(c_hi[node, j, 0] - c_lo[node, j, 0], c_hi[node, j, 1] - c_lo[node, j, 1],
                            c_hi[node, j, 2] - c_lo[node, j, 2])
            best, best_r = np.inf, -1
            for r in range(N_OBB):
                s = 0.0
                for j in range(n_child[node]):
                    s += _sa(box[j, r, 3] - box[j, r, 0], box[j, r, 4] - box[j, r, 1],
                             box[j, r, 5] - box[j, r, 2])
                if s < best:
                    best, best_r = s, r
            if best_r >= 0 and aabb >= factor * best:
                rot[node] = best_r
                for j in range(n_child[node]):
                    for a in range(3):
                        c_lo[node, j, a] = box[j, best_r, a]
                        c_hi[node, j, a] = box[j, best_r, 3 + a]
            for r in range(N_OBB):
                for a in range(3):
                    lo, hi = np.inf, -np.inf
                    for j in range(n_child[node]):
                        lo, hi = min(lo, box[j, r, a]), max(hi, box[j, r, 3 + a])
                    dop[node, r, a], dop[node, r, 3 + a] = lo, hi


@njit(cache=True)
def pack_prims(child, n_wide, n_child, tri_order, tri_count, v, max_tri, max_vert):
    """Each node's triangle slots, in slot order, as primitive nodes, one per slot, holding its
    triangles (positions first[p]..first[p] + n[p] - 1) and their distinct corners once each
    (a corner shared by triangles of one slot is stored once, as RDNA 4's compressed primitive
    nodes do). Node w's prims are node_first[w].. + node_n[w]. Returns also each prim's
    corners, corner indices per triangle (max_tri rows), and the first slot with more than
    max_tri triangles or max_vert corners (-1 if none)."""
    k = child.shape[0]
    n = tri_order.shape[0]
    first = np.empty(n, np.int64)
    count = np.empty(n, np.int64)
    verts = np.zeros((n, max_vert, 3), np.float32)
    n_vert = np.zeros(n, np.int64)
    idx = np.zeros((n, max_tri, 3), np.uint8)
    node_first = np.zeros(k, np.int64)
    node_n = n_child - n_wide
    P = 0
    for w in range(k):
        node_first[w] = P
        for j in range(n_wide[w], n_child[w]):
            s0 = -child[w, j] - 1
            first[P], count[P] = s0, tri_count[s0]
            if count[P] > max_tri:
                return first, count, verts, n_vert, idx, node_first, node_n, s0
            nv = 0
            for s in range(s0, s0 + count[P]):
                t = tri_order[s]
                for c in range(3):
                    q = 0
                    while q < nv and not (verts[P, q, 0] == v[t, c, 0] and verts[P, q, 1] == v[t, c, 1]
                                          and verts[P, q, 2] == v[t, c, 2]):
                        q += 1
                    if q == nv:
                        if nv == max_vert:
                            return first, count, verts, n_vert, idx, node_first, node_n, s0
                        verts[P, q, 0], verts[P, q, 1], verts[P, q, 2] = v[t, c, 0], v[t, c, 1], v[t, c, 2]
                        nv += 1
                    idx[P, s - s0, c] = q
            n_vert[P] = nv
            P += 1
    return (first[:P].copy(), count[:P].copy(), verts[:P].copy(), n_vert[:P].copy(), idx[:P].copy(),
            node_first, node_n, -1)


@njit(cache=True)
def lane_corners(v, idx, n_tri, out):
    """Layout.tri_corners: out[p, 3 * c + axis, lane] = corner c of primitive node p's triangle
    `lane` (v: the node's corners (n, PRIM_VERTS, 3), idx: each triangle's corner indices into
    them), 0 for a lane past the node's n_tri[p] triangles."""
    for p in range(out.shape[0]):
        for q in range(out.shape[2]):
            live = q < n_tri[p]
            for c in range(3):
                for a in range(3):
                    out[p, 3 * c + a, q] = v[p, idx[p, q, c], a] if live else np.float32(0)


@njit(cache=True, nogil=True, parallel=True)
def prim_ids(first, n_tri, tri_order, flags, geometry, tri_id, tri_flags, tri_geo):
    """Each primitive node p's triangles (n_tri[p] of the wide tree's positions from first[p]:
    tri_order's triangles) as PRIM_NODE's tri_id, flags and geometry_id lanes (int64 (n,
    lanes) each), 0 in a lane past them. On all threads: the same through numpy's masks and
    gathers took 13 ms of sponza's layout."""
    for p in prange(first.shape[0]):
        for q in range(tri_id.shape[1]):
            t = tri_order[first[p] + q] if q < n_tri[p] else -1
            tri_id[p, q] = t if t >= 0 else 0
            tri_flags[p, q] = flags[t] if t >= 0 else 0
            tri_geo[p, q] = geometry[t] if t >= 0 else 0


@njit(cache=True)
def child_bounds(c_lo, c_hi, valid, big, top):
    """Per node and axis, the least lo and the greatest hi of its slots' boxes (float64 (k, 8,
    3) c_lo, c_hi) where `valid` (k, 8) into big, top (k, 3): the node's box in its frame
    (layouts.quantize); inf and -inf for a node with none."""
    for i in range(c_lo.shape[0]):
        for a in range(3):
            lo, hi = np.inf, -np.inf
            for j in range(c_lo.shape[1]):
                if valid[i, j]:
                    lo = min(lo, c_lo[i, j, a])
                    hi = max(hi, c_hi[i, j, a])
            big[i, a], top[i, a] = lo, hi


@njit(cache=True)
def quantize_slots(c_lo, c_hi, valid, o64, s, q_max, ql, qh, lo_dec, hi_dec):
    """layouts.quantize's steps: each used slot's planes as whole steps s[i, a] (a power of two)
    from the node's origin o64[i, a], lo rounded down and hi up, one step more where the
    subtraction's rounding left the decoded plane short of the box, clamped to 0..q_max; unused
    slots (not `valid`) 0. The decoded planes (exact in float64) into lo_dec, hi_dec. The same
    operations, in the same order, as the numpy expressions it replaced (32-44 ms of sponza's
    bvh8 layout, all in (k, 8, 3) temporaries), so the same values. Returns the used planes
    that do not hold the box (none, unless a step is too coarse)."""
    bad = 0
    for i in range(c_lo.shape[0]):
        for j in range(c_lo.shape[1]):
            for a in range(3):
                o, st = o64[i, a], s[i, a]
                l = h = 0.0
                if valid[i, j]:
                    lo, hi = c_lo[i, j, a], c_hi[i, j, a]
                    l, h = np.floor((lo - o) / st), np.ceil((hi - o) / st)
                    if o + l * st > lo:
                        l -= 1
                    if o + h * st < hi:
                        h += 1
                    l, h = min(max(l, 0.0), q_max), min(max(h, 0.0), q_max)
                    bad += (o + l * st > lo) | (o + h * st < hi)
                ql[i, j, a], qh[i, j, a] = l, h
                lo_dec[i, j, a], hi_dec[i, j, a] = o + l * st, o + h * st
    return bad
