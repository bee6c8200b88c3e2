"""Numba kernels of the layouts: the OBB choice of bvh8-obb nodes.

A node's children share one rotation (AMD RDNA 4, seed-notes 000_partB L113-117). For every node
and every one of the N_OBB rotations the builder needs each child's box in the rotated frame:
a discrete-orientation polytope (k-DOP) of the child's subtree along the 3 x N_OBB axes,
computed bottom up, deepest level first, parallel over the nodes of a level.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

L_BVH2, L_BVH4, L_BVH8 = 0, 1, 2     # traversal's layout codes
N_OBB = 104                          # AMD NUM_OBB_TRANSFORMS (seed-notes 000_partB L117)
NO_OBB = 127                         # 7-bit index sentinel: axis-aligned node
F32_PAD = 2.5e-7                     # > 2 float32 ulps: rounding a bound outward to float32


@njit(cache=True, inline="always")
def _down(x):
    return np.float32(x - abs(x) * F32_PAD - 1e-30)


@njit(cache=True, inline="always")
def _up(x):
    return np.float32(x + abs(x) * F32_PAD + 1e-30)


@njit(cache=True, inline="always")
def _sa(dx, dy, dz):
    return 2.0 * (dx * dy + dy * dz + dz * dx)


@njit(cache=True, parallel=True)
def choose_obb(child, n_child, parent, tri_order, v, table, factor, rot, c_lo, c_hi):
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
                else:
                    t = tri_order[-c - 1]
                    for r in range(N_OBB):
                        for a in range(3):
                            lo, hi = np.inf, -np.inf
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
def pack_prims(child, n_wide, n_child, tri_order, v, c_lo, c_hi, max_tri, max_vert):
    """Each node's triangle children, in slot order, packed into primitive nodes of at most
    max_tri triangles and max_vert distinct corners (a corner shared by triangles of one node is
    stored once, as RDNA 4's compressed primitive nodes do). Prim p holds triangle slots
    first[p]..first[p] + n[p] - 1; node w's prims are node_first[w].. + node_n[w]. Returns also
    each prim's corners, corner indices per triangle, and its box in the node's frame."""
    k = child.shape[0]
    n = tri_order.shape[0]
    first = np.empty(n, np.int64)
    count = np.empty(n, np.int64)
    verts = np.zeros((n, max_vert, 3), np.float32)
    n_vert = np.zeros(n, np.int64)
    idx = np.zeros((n, max_tri, 3), np.uint8)
    p_lo = np.empty((n, 3))
    p_hi = np.empty((n, 3))
    node_first = np.zeros(k, np.int64)
    node_n = np.zeros(k, np.int64)
    P = 0
    for w in range(k):
        node_first[w] = P
        j = n_wide[w]
        while j < n_child[w]:
            first[P], count[P], n_vert[P] = -child[w, j] - 1, 0, 0
            for a in range(3):
                p_lo[P, a], p_hi[P, a] = np.inf, -np.inf
            while j < n_child[w] and count[P] < max_tri:
                t = tri_order[-child[w, j] - 1]
                # corners this triangle would add
                new = 0
                for c in range(3):
                    found = False
                    for q in range(n_vert[P]):
                        if verts[P, q, 0] == v[t, c, 0] and verts[P, q, 1] == v[t, c, 1] and verts[P, q, 2] == v[t, c, 2]:
                            found = True
                    if not found:
                        dup = False          # the same corner twice in one (degenerate) triangle
                        for c2 in range(c):
                            if v[t, c2, 0] == v[t, c, 0] and v[t, c2, 1] == v[t, c, 1] and v[t, c2, 2] == v[t, c, 2]:
                                dup = True
                        if not dup:
                            new += 1
                if n_vert[P] + new > max_vert:
                    break
                for c in range(3):
                    q = 0
                    while q < n_vert[P] and not (verts[P, q, 0] == v[t, c, 0] and verts[P, q, 1] == v[t, c, 1]
                                                  and verts[P, q, 2] == v[t, c, 2]):
                        q += 1
                    if q == n_vert[P]:
                        verts[P, q, 0], verts[P, q, 1], verts[P, q, 2] = v[t, c, 0], v[t, c, 1], v[t, c, 2]
                        n_vert[P] += 1
                    idx[P, count[P], c] = q
                for a in range(3):
                    p_lo[P, a] = min(p_lo[P, a], c_lo[w, j, a])
                    p_hi[P, a] = max(p_hi[P, a], c_hi[w, j, a])
                count[P] += 1
                j += 1
            P += 1
        node_n[w] = P - node_first[w]
    return (first[:P].copy(), count[:P].copy(), verts[:P].copy(), n_vert[:P].copy(), idx[:P].copy(),
            p_lo[:P].copy(), p_hi[:P].copy(), node_first, node_n)
