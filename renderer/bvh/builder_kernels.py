"""Numba kernels of the BVH builder: triangle splitting into references (before the build), binned
SAH over reference centroids (BVH2), and the collapse of a BVH2 into a wide tree (4 or 8
children) whose children are either wide nodes or triangle slots (one triangle, or a primitive
node of several), as AMD's box nodes point at box nodes or triangle / primitive nodes (peers.md
§3.1).

Deterministic: the threads (the SAH's subtrees, the collapse's programme) work on parts of the
tree that do not depend on each other, so the same triangles give the same tree on every run
and on any number of threads.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from renderer.block_masks import lowest_bit
from renderer.inlined import inlined

N_BINS = 64          # centroid bins per axis, at most 64 (_grow marks the used ones in a uint64);
#                      Embree's binned SAH uses 32 (kernels/builders/bvh_builder_sah.h
#                      NUM_OBJECT_BINS), tinybvh 8. Measured on sponza's 1080p primary
#                      rays with split triangles: 64 takes 14.3 steps per ray against 32's 14.85
#                      (unsplit: 23.1 against 24.0, and 26.4 with 16), 3% more bvh8 rays/s than 32
#                      (process-alternating, 4 rounds), for a build 25% slower (sponza 0.60 -> 0.77 s)
C_TRAV = 1.0         # SAH cost of a traversal step relative to one triangle test: 1:1 as pbrt-v4's
C_ISECT = 1.0        # BVHAggregate and tinybvh's default C_TRAV/C_INT
# The collapse's costs of a primitive node, relative to a wide node's C_TRAV: opening it (a
# fetch and a step) and each triangle it tests. Assumed (a box step tests 8 boxes, a primitive
# node up to 4 triangles at once), then checked on 1080p primary rays: C_PRIM 0.25-2 and C_TRI
# 0.1-0.5 all give dragon 1.81-1.84 box nodes and 0.19-0.21 primitive nodes per ray, sponza
# 10.56-10.71 and 1.54-1.62; rays/s differed less than this machine's noise
C_PRIM = 0.5
C_TRI = 0.25


@inlined(error_model="python")
def _area(lo0, lo1, lo2, hi0, hi1, hi2):
    dx, dy, dz = hi0 - lo0, hi1 - lo1, hi2 - lo2
    if dx < 0.0:        # empty box (lo = +inf): no area
        return 0.0
    return 2.0 * (dx * dy + dy * dz + dz * dx)


@inlined(error_model="python")
def _float32_down(x):
    """The greatest float32 value at most x (a box's lower plane, rounded outward)."""
    f = np.float32(x)
    return np.float64(np.nextafter(f, np.float32(-np.inf)) if f > x else f)


@inlined(error_model="python")
def _float32_up(x):
    f = np.float32(x)
    return np.float64(np.nextafter(f, np.float32(np.inf)) if f < x else f)


@njit(cache=True, nogil=True)
def _split_range(v, t0, t1, s_lo, s_ext, max_area, max_depth, r_lo, r_hi, r_tri):
    """split_references for triangles t0..t1 - 1: their references into r_lo, r_hi, r_tri from
    0 on, in triangle order; returns how many, or -1 if they would not fit."""
    max_v = 3 + max_depth                 # a cut adds at most one corner to a convex polygon
    poly = np.empty((max_depth + 2, max_v, 3))    # a depth-first stack of pieces
    n_corner = np.empty(max_depth + 2, np.int64)
    depth = np.empty(max_depth + 2, np.int64)
    cut = np.empty((max_v, 3))
    lo, hi = np.empty(3), np.empty(3)
    m = 0
    for t in range(t0, t1):
        for c in range(3):
            for a in range(3):
                poly[0, c, a] = v[t, c, a]
        n_corner[0], depth[0] = 3, 0
        sp = 1
        while sp > 0:
            sp -= 1
            k = n_corner[sp]
            for a in range(3):
                lo[a], hi[a] = np.inf, -np.inf
                for q in range(k):
                    lo[a] = min(lo[a], poly[sp, q, a])
                    hi[a] = max(hi[a], poly[sp, q, a])
                t_lo = min(v[t, 0, a], v[t, 1, a], v[t, 2, a])
                t_hi = max(v[t, 0, a], v[t, 1, a], v[t, 2, a])
                lo[a], hi[a] = max(_float32_down(lo[a]), t_lo), min(_float32_up(hi[a]), t_hi)
            # the coarsest grid plane strictly inside the box, on any axis (ties: the longest)
            ax, level, plane = -1, 64, 0.0
            if depth[sp] < max_depth and _area(lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]) > max_area:
                for a in range(3):
                    if s_ext[a] <= 0.0 or hi[a] <= lo[a]:
                        continue
                    u0, u1 = (lo[a] - s_lo[a]) / s_ext[a], (hi[a] - s_lo[a]) / s_ext[a]
                    for lv in range(1, 53):
                        cells = np.ldexp(1.0, lv)
                        at = np.floor(u1 * cells)
                        p = np.float64(np.float32(s_lo[a] + s_ext[a] * at / cells))
                        if at / cells > u0 and lo[a] < p < hi[a]:
                            if lv < level or (lv == level and hi[a] - lo[a] > hi[ax] - lo[ax]):
                                ax, level, plane = a, lv, p
                            break
            if ax < 0:                                   # small enough: a reference
                if m == r_tri.shape[0]:
                    return -1
                for a in range(3):
                    r_lo[m, a], r_hi[m, a] = lo[a], hi[a]
                r_tri[m] = t
                m += 1
                continue
            cut[:k] = poly[sp, :k]
            d = depth[sp] + 1
            for side in (-1.0, 1.0):                     # below the plane, then above
                out = 0
                for q in range(k):
                    s0 = side * (cut[q, ax] - plane)      # <= 0: on this side
                    q1 = q + 1 if q + 1 < k else 0
                    s1 = side * (cut[q1, ax] - plane)
                    if s0 <= 0.0:
                        poly[sp, out] = cut[q]
                        out += 1
                    if (s0 < 0.0 < s1) or (s1 < 0.0 < s0):    # the edge crosses the plane
                        f = s0 / (s0 - s1)
                        for a in range(3):
                            poly[sp, out, a] = cut[q, a] + f * (cut[q1, a] - cut[q, a])
                        poly[sp, out, ax] = plane
                        out += 1
                if out >= 3:
                    n_corner[sp], depth[sp] = out, d
                    sp += 1
    return m


@njit(cache=True, nogil=True, parallel=True)
def _split_chunks(v, edges, s_lo, s_ext, max_area, max_depth, r_lo, r_hi, r_tri, counts, n_threads):
    """Chunk c (triangles edges[c]..edges[c + 1] - 1) into slab c of r_lo, r_hi, r_tri, its
    count (or -1) into counts[c]; thread w takes chunks w, w + n_threads, ..."""
    for w in prange(n_threads):
        for c in range(w, counts.shape[0], n_threads):
            counts[c] = _split_range(v, edges[c], edges[c + 1], s_lo, s_ext, max_area, max_depth,
                                     r_lo[c], r_hi[c], r_tri[c])


@njit(cache=True)
def split_references(v, split, max_depth, max_refs, n_threads):
    """Triangle splitting before the build (Karras & Aila 2013, "Fast Parallel Construction of
    High-Quality Bounding Volume Hierarchies", §4; AMD GPURT builds with triangle splitting as an
    option): a triangle whose box has more surface area than `split` times the scene box's is
    cut at the coarsest plane of the scene box's power-of-two grid that crosses the box (so
    that the pieces of neighbouring triangles share planes the SAH can split at), each side
    clipped (Sutherland-Hodgman) and cut again, at most max_depth times. A long thin triangle across a room then
    gives references whose boxes hug it instead of one box full of empty space.

    v float32 (n, 3, 3). Returns the references: ref_lo, ref_hi float64 (m, 3) (float32 values,
    rounded outward from the clipped polygon's corners and within the triangle's own box, so
    the pieces' boxes cover the triangle) and ref_tri int64 (m,), in triangle order; or, as
    soon as they would pass max_refs, None for ref_tri (the caller raises split).

    A triangle's pieces depend on it and the scene box alone: chunks of triangles are cut on
    all n_threads threads (_split_chunks), each into a slab of its own, and joined in order,
    the references a single loop makes."""
    n = v.shape[0]
    s_lo = np.empty(3)
    s_ext = np.empty(3)
    for a in range(3):
        s_lo[a] = v[:, :, a].min()
        s_ext[a] = v[:, :, a].max() - s_lo[a]
    max_area = split * _area(0.0, 0.0, 0.0, s_ext[0], s_ext[1], s_ext[2])
    n_chunks = 2 * n_threads               # (two a thread: the large triangles cluster by draw)
    edges = np.empty(n_chunks + 1, np.int64)
    for c in range(n_chunks + 1):
        edges[c] = c * n // n_chunks
    # a slab holds max_refs: a chunk past it passes the budget alone (its pages are touched only
    # as far as its references reach)
    r_lo = np.empty((n_chunks, max_refs, 3))
    r_hi = np.empty((n_chunks, max_refs, 3))
    r_tri = np.empty((n_chunks, max_refs), np.int64)
    counts = np.empty(n_chunks, np.int64)
    _split_chunks(v, edges, s_lo, s_ext, max_area, max_depth, r_lo, r_hi, r_tri, counts, n_threads)
    m = 0
    for c in range(n_chunks):
        if counts[c] < 0:
            return r_lo[0, :0].copy(), r_hi[0, :0].copy(), None
        m += counts[c]
    if m > max_refs:
        return r_lo[0, :0].copy(), r_hi[0, :0].copy(), None
    out_lo, out_hi, out_tri = np.empty((m, 3)), np.empty((m, 3)), np.empty(m, np.int64)
    at = 0
    for c in range(n_chunks):
        k = counts[c]
        out_lo[at:at + k], out_hi[at:at + k], out_tri[at:at + k] = r_lo[c, :k], r_hi[c, :k], r_tri[c, :k]
        at += k
    return out_lo, out_hi, out_tri


@njit(cache=True, nogil=True)
def _grow(tri_lo, tri_hi, cen, perm, tree, root, m, max_leaf, limit, pending):
    """Grows the binned-SAH subtree of node `root` (whose references are perm[first[root]:
    first[root] + count[root]]) in `tree` (lo, hi, left, first, count, parent), new nodes from
    index m on, two at a time (a node's children adjacent), depth first, left child first;
    nodes `limit` levels below the root are not grown but listed in `pending`. Returns (m,
    pending nodes). Only this subtree's nodes and perm range are written: subtrees grow apart."""
    lo, hi, left, first, count, parent = tree
    n_pending = 0
    stack = np.empty(128, np.int64)
    depth = np.empty(128, np.int64)
    sp = 0
    stack[sp], depth[sp] = root, 0
    sp += 1
    bin_lo = np.empty((N_BINS, 3))
    bin_hi = np.empty((N_BINS, 3))
    bin_n = np.zeros(N_BINS, np.int64)
    right_area = np.empty(N_BINS)
    right_n = np.empty(N_BINS, np.int64)
    occupied = np.empty(N_BINS, np.int64)      # the bins an axis used, in order
    # bounds of a node (blo, bhi), of its centroids (clo, chi) and of the sweeps' sides: made
    # once, set per node (numba allocates every np.full on the heap; made per node and axis they
    # were 16 allocations a node: sponza's parallel grow took 148-150 ms with them, 112-135
    # without)
    blo, bhi, clo, chi = np.empty(3), np.empty(3), np.empty(3), np.empty(3)
    rl, rh, ll, lh = np.empty(3), np.empty(3), np.empty(3), np.empty(3)
    while sp > 0:
        sp -= 1
        node = stack[sp]
        if depth[sp] >= limit:                 # left for grow_subtrees
            pending[n_pending] = node
            n_pending += 1
            continue
        d = depth[sp]
        f, c = first[node], count[node]
        # bounds of the node and of its centroids
        blo[:], bhi[:], clo[:], chi[:] = np.inf, -np.inf, np.inf, -np.inf
        for i in range(f, f + c):
            t = perm[i]
            for a in range(3):
                blo[a] = min(blo[a], tri_lo[t, a])
                bhi[a] = max(bhi[a], tri_hi[t, a])
                clo[a] = min(clo[a], cen[t, a])
                chi[a] = max(chi[a], cen[t, a])
        for a in range(3):
            lo[node, a], hi[node, a] = blo[a], bhi[a]
        if c == 1:
            continue
        parent_area = _area(blo[0], blo[1], blo[2], bhi[0], bhi[1], bhi[2])
        best_cost, best_axis, best_split = np.inf, -1, -1
        for a in range(3):
            ext = chi[a] - clo[a]
            if ext <= 0.0:
                continue
            scale = N_BINS / ext
            # Bin the centroids; a bin's box starts at its first reference (bin_n counts, and is
            # zero again for the next axis: only the bins used are cleared), and `used` marks it
            used = np.uint64(0)
            for i in range(f, f + c):
                t = perm[i]
                b = min(N_BINS - 1, int((cen[t, a] - clo[a]) * scale))
                if bin_n[b] == 0:
                    used |= np.uint64(1) << np.uint64(b)
                    for k in range(3):
                        bin_lo[b, k], bin_hi[b, k] = tri_lo[t, k], tri_hi[t, k]
                else:
                    for k in range(3):
                        bin_lo[b, k] = min(bin_lo[b, k], tri_lo[t, k])
                        bin_hi[b, k] = max(bin_hi[b, k], tri_hi[t, k])
                bin_n[b] += 1
            # The used bins in order. A split after an empty bin has the sides of the split after
            # the used bin before it, so the same cost: the sweeps visit used bins alone (what a
            # node of a few references pays is its references, not N_BINS) and pick the split
            # the sweep over every bin would, the first of the least cost.
            n_used = 0
            while used:
                b = lowest_bit(used)
                used &= used - np.uint64(1)
                occupied[n_used] = b
                n_used += 1
            # sweep from the right: area and count of used bins x..n_used-1
            rl[:], rh[:] = np.inf, -np.inf
            rn = 0
            for x in range(n_used - 1, 0, -1):
                b = occupied[x]
                rn += bin_n[b]
                for k in range(3):
                    rl[k] = min(rl[k], bin_lo[b, k])
                    rh[k] = max(rh[k], bin_hi[b, k])
                right_area[x] = _area(rl[0], rl[1], rl[2], rh[0], rh[1], rh[2])
                right_n[x] = rn
            ll[:], lh[:] = np.inf, -np.inf
            ln = 0
            for x in range(n_used - 1):          # split after used bin x
                b = occupied[x]
                ln += bin_n[b]
                for k in range(3):
                    ll[k] = min(ll[k], bin_lo[b, k])
                    lh[k] = max(lh[k], bin_hi[b, k])
                cost = _area(ll[0], ll[1], ll[2], lh[0], lh[1], lh[2]) * ln + right_area[x + 1] * right_n[x + 1]
                if cost < best_cost:
                    best_cost, best_axis, best_split = cost, a, b + 1
            for x in range(n_used):
                bin_n[occupied[x]] = 0
        split_cost = C_TRAV + C_ISECT * best_cost / parent_area if parent_area > 0 else np.inf
        if c <= max_leaf and (best_axis < 0 or C_ISECT * c <= split_cost):
            continue                                          # a leaf
        if best_axis >= 0:                                    # partition by the chosen bin
            a = best_axis
            scale = N_BINS / (chi[a] - clo[a])
            i, j = f, f + c - 1
            while i <= j:
                b = min(N_BINS - 1, int((cen[perm[i], a] - clo[a]) * scale))
                if b < best_split:
                    i += 1
                else:
                    perm[i], perm[j] = perm[j], perm[i]
                    j -= 1
            n_left = i - f
        else:                          # all centroids equal: split the range in half
            n_left = c // 2
        l = m
        m += 2
        left[node] = l
        first[l], count[l] = f, n_left
        first[l + 1], count[l + 1] = f + n_left, c - n_left
        parent[l] = parent[l + 1] = node
        count[node] = 0
        if sp + 2 > stack.shape[0]:
            grown = np.empty(2 * stack.shape[0], np.int64)
            grown[:sp] = stack[:sp]
            stack = grown
            grown = np.empty(2 * depth.shape[0], np.int64)
            grown[:sp] = depth[:sp]
            depth = grown
        stack[sp], depth[sp] = l + 1, d + 1
        stack[sp + 1], depth[sp + 1] = l, d + 1
        sp += 2
    return m, n_pending


@njit(cache=True, nogil=True, parallel=True)
def _grow_all(tri_lo, tri_hi, cen, perm, tree, roots, bases, owner, n_threads, max_leaf):
    """The subtrees of `roots` grown to the leaves at once, subtree s's new nodes from
    bases[s] (a range of its own) on, by thread owner[s]."""
    none = np.empty(0, np.int64)
    for w in prange(n_threads):
        for s in range(roots.shape[0]):
            if owner[s] == w:
                _grow(tri_lo, tri_hi, cen, perm, tree, roots[s], bases[s], max_leaf, 1 << 30, none)


@njit(cache=True, nogil=True, parallel=True)
def _split_all(tri_lo, tri_hi, cen, perm, tree, nodes, bases, max_leaf, kids, n_kids):
    """Each of `nodes` split once (or made a leaf) on all threads, node k's children from
    bases[k]: (left, right) into kids[k] and n_kids[k] = 2, or n_kids[k] = 0 for a leaf."""
    for k in prange(nodes.shape[0]):
        _, got = _grow(tri_lo, tri_hi, cen, perm, tree, nodes[k], bases[k], max_leaf, 1, kids[k])
        n_kids[k] = got


@njit(cache=True)
def _canonical(tree, m_used, n_nodes):
    """The tree's nodes renumbered as one depth-first build, left child first, numbers them
    (the root 0, then each split's two children as the split is reached), whatever ranges its
    subtrees grew in: the tree a serial build makes, node for node."""
    left = tree[2]
    new = np.full(m_used, -1, np.int64)
    order = np.empty(n_nodes, np.int64)       # old index of each new node
    new[0], order[0] = 0, 0
    m = 1
    stack = np.empty(128, np.int64)
    stack[0] = 0
    sp = 1
    while sp > 0:
        sp -= 1
        node = stack[sp]
        l = left[node]
        if l < 0:
            continue
        new[l], new[l + 1] = m, m + 1
        order[m], order[m + 1] = l, l + 1
        m += 2
        if sp + 2 > stack.shape[0]:
            grown = np.empty(2 * stack.shape[0], np.int64)
            grown[:sp] = stack[:sp]
            stack = grown
        stack[sp] = l + 1
        stack[sp + 1] = l
        sp += 2
    return _renumbered(tree, new, order[:m])


@njit(cache=True, nogil=True, parallel=True)
def _renumbered(tree, new, order):
    """The tree's rows in the order `order` (old index of each new node), its links through
    `new` (new index of each old node): a gather on all threads (sponza's 552k nodes from the
    subtrees' ranges, host cache misses most of them)."""
    lo, hi, left, first, count, parent = tree
    m = order.shape[0]
    out_lo, out_hi = np.empty((m, 3)), np.empty((m, 3))
    out_left, out_first = np.empty(m, np.int64), np.empty(m, np.int64)
    out_count, out_parent = np.empty(m, np.int64), np.empty(m, np.int64)
    for k in prange(m):
        o = order[k]
        for a in range(3):
            out_lo[k, a], out_hi[k, a] = lo[o, a], hi[o, a]
        out_left[k] = new[left[o]] if left[o] >= 0 else -1
        out_first[k], out_count[k] = first[o], count[o]
        out_parent[k] = new[parent[o]] if parent[o] >= 0 else -1
    return out_lo, out_hi, out_left, out_first, out_count, out_parent


TOP_LEVELS = 4       # build_sah grows the tree's top this deep a level at a time, then the
                     # subtrees below it (up to 2^TOP_LEVELS) on all threads


@njit(cache=True)
def build_sah(tri_lo, tri_hi, max_leaf, n_threads):
    """Binned-SAH BVH2 over reference boxes tri_lo/tri_hi float64 (n, 3): triangles, or the
    pieces split_references cut them into.

    Returns (lo, hi, left, first, count, parent, perm): node boxes float64 (m, 3); left child
    index (right = left + 1, so a node's children are adjacent, as tinybvh lays them out) or -1
    for a leaf; a leaf's triangles are perm[first:first + count]; parent (-1 for the root).

    A node's split depends on its references alone, so subtrees grow apart: the top
    TOP_LEVELS levels a level at a time, a level's nodes split on all threads (_split_all: the
    root's one pass over every reference is the only serial one, where the top had been four
    on one thread), the subtrees below them in parallel (_grow_all), each in
    a node range of its own (at most 2 x its references), then renumbered as the one
    depth-first build numbers them (_canonical): the same tree, byte for byte, on any number of
    threads (n_threads: the caller's numba.get_num_threads())."""
    n = tri_lo.shape[0]
    cap = (2 << TOP_LEVELS) + 2 * n    # the top's nodes, then a range of 2 x its references a subtree
    tree = (np.empty((cap, 3)), np.empty((cap, 3)), np.full(cap, -1, np.int64),
            np.zeros(cap, np.int64), np.zeros(cap, np.int64), np.full(cap, -1, np.int64))
    perm = np.arange(n)
    cen = 0.5 * (tri_lo + tri_hi)
    tree[3][0], tree[4][0] = 0, n
    # the top, a level at a time, a level's nodes split on all threads (its references are
    # ranges of perm apart); the nodes below it left to grow as subtrees
    roots = np.zeros(1, np.int64)
    m = 1
    for _ in range(TOP_LEVELS):
        bases = m + 2 * np.arange(roots.shape[0])
        m += 2 * roots.shape[0]
        kids = np.empty((roots.shape[0], 2), np.int64)
        n_kids = np.empty(roots.shape[0], np.int64)
        _split_all(tri_lo, tri_hi, cen, perm, tree, roots, bases, max_leaf, kids, n_kids)
        below = np.empty(n_kids.sum(), np.int64)
        n_below = 0
        for k in range(roots.shape[0]):
            for j in range(n_kids[k]):
                below[n_below] = kids[k, j]
                n_below += 1
        roots = below
    n_pending = roots.shape[0]
    bases = np.empty(n_pending, np.int64)
    for s in range(n_pending):
        bases[s] = m
        m += 2 * tree[4][roots[s]]
    # each subtree to the thread with the least work so far, the largest first (the work is
    # about its references; which thread grows it changes nothing in the tree)
    owner = np.empty(n_pending, np.int64)
    load = np.zeros(n_threads, np.int64)
    for s in np.argsort(-tree[4][roots]):
        w = np.argmin(load)
        owner[s] = w
        load[w] += tree[4][roots[s]]
    _grow_all(tri_lo, tri_hi, cen, perm, tree, roots, bases, owner, n_threads, max_leaf)
    lo, hi, left, first, count, parent = _canonical(tree, m, 2 * n)
    return lo, hi, left, first, count, parent, perm


@njit(cache=True)
def distinct_tris(perm, pos0, n, out):
    """The triangles at leaf positions pos0..pos0 + n - 1, each once (a split one's pieces are
    several positions), into out[:nt] in position order; returns nt."""
    nt = 0
    for p in range(pos0, pos0 + n):
        seen = False
        for q in range(nt):
            seen |= out[q] == perm[p]
        if not seen:
            out[nt] = perm[p]
            nt += 1
    return nt


@njit(cache=True)
def prim_fits(pos0, n, perm, v, max_tri, max_vert, tri, corner):
    """The distinct triangles among leaf positions pos0..pos0 + n - 1 (pieces of one triangle
    count once) if they fit one primitive node of max_tri triangles and max_vert distinct
    corners, else -1. tri (at least n) and corner (3 max_tri, 3) are its working space, the
    caller's: _collapse_costs asks this of most BVH2 nodes, and allocating them at every call
    cost a third of its time (sponza: 84 ms with the allocations, 54-60 without)."""
    nt = distinct_tris(perm, pos0, n, tri)
    if nt > max_tri:
        return -1
    nv = 0
    for q in range(nt):
        for c in range(3):
            seen = False
            for u in range(nv):
                seen |= (corner[u, 0] == v[tri[q], c, 0]) & (corner[u, 1] == v[tri[q], c, 1]) & (
                    corner[u, 2] == v[tri[q], c, 2])
            if not seen:
                corner[nv] = v[tri[q], c]
                nv += 1
    return nt if nv <= max_vert else -1


@njit(cache=True, nogil=True)
def _costs_of(nodes, lo, hi, left, first, count, perm, v, width, max_tri, max_vert, cost, how,
              split, sub):
    """_collapse_costs' programme at the BVH2 nodes `nodes`, in that order (each node's
    children before it), into cost, how, split and sub."""
    part = np.empty(width + 1)
    part_k = np.empty(width + 1, np.int64)
    tri = np.empty(2 * max_tri, np.int64)        # prim_fits' working space
    corner = np.empty((3 * max_tri, 3), np.float32)
    one = (C_PRIM + C_TRI) if max_tri > 1 else 0.0      # a triangle's own slot, per unit area
    for b in nodes:
        node = _area(lo[b, 0], lo[b, 1], lo[b, 2], hi[b, 0], hi[b, 1], hi[b, 2])
        sub[b] = count[b] if left[b] < 0 else sub[left[b]] + sub[left[b] + 1]
        nt = prim_fits(first[b], sub[b], perm, v, max_tri, max_vert, tri, corner) if (
            max_tri > 1 and sub[b] <= 2 * max_tri) else -1
        prim = node * (C_PRIM + C_TRI * nt) if nt > 0 else np.inf
        if left[b] < 0:
            tris = node * one * count[b]      # (its pieces' boxes are within the leaf's)
            for i in range(1, width + 1):
                c = tris if i >= count[b] else node * C_TRAV + tris
                cost[b, i] = c
                if prim < c:
                    cost[b, i], how[b, i] = prim, -1
            continue
        l, r = left[b], left[b] + 1
        for i in range(2, width + 1):
            part[i], part_k[i] = np.inf, 0
            for k in range(1, i):
                c = cost[l, k] + cost[r, i - k]
                if c < part[i]:
                    part[i], part_k[i] = c, k
        whole = node * C_TRAV + part[width]
        split[b] = part_k[width]
        cost[b, 1] = whole
        if prim < whole:
            cost[b, 1], how[b, 1] = prim, -1
        for i in range(2, width + 1):
            if part[i] < cost[b, 1]:
                cost[b, i], how[b, i] = part[i], part_k[i]
            else:
                cost[b, i], how[b, i] = cost[b, 1], how[b, 1]


@njit(cache=True, nogil=True, parallel=True)
def _costs_apart(roots, desc, owner, lo, hi, left, first, count, perm, v, width, max_tri,
                 max_vert, cost, how, split, sub, n_threads):
    """_costs_of over the descendants of each of `roots` (node r's: left[r] ..
    left[r] + desc[r] - 1), bottom up, subtree s on thread owner[s]."""
    for w in prange(n_threads):
        for s in range(roots.shape[0]):
            r = roots[s]
            if owner[s] == w and desc[r] > 0:
                _costs_of(np.arange(left[r] + desc[r] - 1, left[r] - 1, -1), lo, hi, left, first,
                          count, perm, v, width, max_tri, max_vert, cost, how, split, sub)


APART = 4            # subtrees a thread's share of the collapse's programme is cut into, about


@njit(cache=True)
def _collapse_costs(lo, hi, left, first, count, perm, v, width, max_tri, max_vert, n_threads):
    """Ylitie et al. 2017 §4.1's dynamic programme on a BVH2, bottom up: cost[b, i] is the least
    SAH cost of the BVH2 subtree b laid out in at most i child slots of a wide node, where a
    slot is a wide node, one triangle, or (max_tri > 1) a primitive node holding a whole
    subtree of up to max_tri triangles with up to max_vert distinct corners. Costs are areas
    (the chance a ray opens the slot) times what opening it costs: C_TRAV for a wide node,
    C_PRIM + C_TRI per triangle for a primitive node. With max_tri = 1 every triangle takes a
    slot of its own wherever it goes, so the triangles' cost is the same for every layout and
    is left out (what the layouts differ in is their wide nodes).
    how[b, i] says how: 0 b as one slot (a wide node; a leaf's triangles a slot each when they
    fit), -1 one primitive node, k > 0 k slots for the left child and i - k for the right;
    split[b] is that k for the `width` slots of b's own wide node.
    A node's costs depend on its subtree's alone, and the depth-first numbering (_canonical)
    gives a node's descendants the indices left[b] .. left[b] + desc[b] - 1: so the tree's top
    is cut into subtrees (the largest split until there are APART a thread), their programmes
    run on all threads (_costs_apart), then the nodes above them on this one: the same numbers
    on any number of threads (tests/test_bvh.py), sponza's 552k nodes' collapse 77 -> 53 ms
    on two."""
    m = left.shape[0]
    cost = np.empty((m, width + 1))
    how = np.zeros((m, width + 1), np.int8)      # (k <= width <= 8)
    split = np.zeros(m, np.int64)
    sub = np.empty(m, np.int64)                  # leaf positions under b: first[b]..+ sub[b]
    desc = np.zeros(m, np.int64)                 # descendants of b
    for b in range(m - 1, -1, -1):
        if left[b] >= 0:
            desc[b] = 2 + desc[left[b]] + desc[left[b] + 1]
    # the top: split the subtree with the most descendants until there are enough
    want = APART * n_threads if n_threads > 1 else 1
    roots = np.empty(want + 1, np.int64)
    top = np.empty(want + 1, np.int64)
    roots[0] = 0
    n_roots = 1
    n_top = 0
    while n_roots < want:
        big = 0
        for s in range(1, n_roots):
            if desc[roots[s]] > desc[roots[big]]:
                big = s
        b = roots[big]
        if desc[b] == 0:
            break
        top[n_top] = b
        n_top += 1
        roots[big], roots[n_roots] = left[b], left[b] + 1
        n_roots += 1
    roots = roots[:n_roots]
    owner = np.empty(n_roots, np.int64)          # the most descendants first, to the least load
    load = np.zeros(n_threads, np.int64)
    for s in np.argsort(-desc[roots]):
        w = np.argmin(load)
        owner[s] = w
        load[w] += desc[roots[s]]
    _costs_apart(roots, desc, owner, lo, hi, left, first, count, perm, v, width, max_tri,
                 max_vert, cost, how, split, sub, n_threads)
    # the subtrees' roots and the nodes above them, children first (higher indices)
    rest = np.sort(np.concatenate((roots, top[:n_top])))[::-1].copy()
    _costs_of(rest, lo, hi, left, first, count, perm, v, width, max_tri, max_vert, cost, how,
              split, sub)
    return how, split, sub


@inlined(error_model="python")
def _clear_row(child, c_lo, c_hi, k, empty):
    """Wide node k's row as collapse returns an unused slot: child `empty`, a zero box."""
    for j in range(child.shape[1]):
        child[k, j] = empty
        for a in range(3):
            c_lo[k, j, a] = 0.0
            c_hi[k, j, a] = 0.0


@njit(cache=True)
def collapse(lo, hi, left, first, count, perm, pos_lo, pos_hi, v, width, max_tri, max_vert,
             n_threads):
    """BVH2 -> wide tree of `width` children. A wide node's child is a wide node or a triangle
    slot: one triangle, or (max_tri > 1) up to max_tri triangles with at most max_vert distinct
    corners, a BVH2 subtree that is one primitive node (RDNA 4's primitive nodes hold several).
    The children of a node are allocated together, wide children first, then its triangle
    slots, so each kind is contiguous (RDNA 4's node stores one base per kind, peers.md §3.1).

    Which BVH2 nodes become wide nodes is chosen for the least SAH cost (_collapse_costs:
    Ylitie et al. 2017's optimal collapse, as their compressed wide BVH does). Against the
    greedy conversion it replaced (open the largest child while a slot is free, Embree's and
    tinybvh's MBVH rule) the SAH cost fell 7% on sponza and 1.6% on dragon, and sponza's
    1080p primary rays open 11.63 wide nodes each instead of 12.61.

    Returns (child int64 (k, width) refs: >= 0 wide node, < 0 triangle slot -(s + 1), unused
    slots -1 << 40), child boxes c_lo/c_hi (k, width, 3), n_wide (k,) wide children, n_child
    (k,), parent (k,), tri_order (n,) original triangle of each triangle position, tri_parent
    (n,) the wide node holding it, tri_count (n,): at a slot's first position s its triangles
    (positions s.., distinct triangles), 0 at the others. A one-triangle slot's box is its leaf
    position's (pos_lo, pos_hi): a split triangle's piece; a primitive node's its subtree's."""
    n_tri = perm.shape[0]
    k_cap = 2 * n_tri + 1     # wide nodes <= BVH2 internal nodes + leaves
    EMPTY = -(1 << 40)
    # rows are cleared as wide nodes are made (_clear_row): filling the whole capacity (2 x the
    # references, 8 slots, 3 axes, twice) cost 50-80 ms on sponza, most of the collapse
    child = np.empty((k_cap, width), np.int64)
    c_lo = np.empty((k_cap, width, 3))
    c_hi = np.empty((k_cap, width, 3))
    _clear_row(child, c_lo, c_hi, 0, EMPTY)
    n_wide = np.zeros(k_cap, np.int64)
    n_child = np.zeros(k_cap, np.int64)
    wparent = np.full(k_cap, -1, np.int64)
    tri_order = np.empty(n_tri, np.int64)
    tri_parent = np.empty(n_tri, np.int64)
    tri_count = np.zeros(n_tri, np.int64)
    how, split, sub = _collapse_costs(lo, hi, left, first, count, perm, v, width, max_tri, max_vert,
                                      n_threads)
    src = np.empty(k_cap, np.int64)        # BVH2 node each wide node comes from
    src[0] = 0
    k = 1
    n_slots = 0
    # entries of the node being opened: kind 0 BVH2 node, 1 triangle (perm position)
    e_kind = np.empty(width, np.int64)
    e_id = np.empty(width, np.int64)
    st_node = np.empty(2 * width, np.int64)     # (BVH2 node, slots) still to lay out
    st_slots = np.empty(2 * width, np.int64)
    for w in range(k_cap):
        if w >= k:
            break
        b = src[w]
        ne = 0
        top = 0
        if left[b] < 0:                          # a leaf's triangles
            for i in range(count[b]):
                e_kind[ne], e_id[ne] = 1, first[b] + i
                ne += 1
        else:                                    # its subtree in `width` slots, left first
            st_node[0], st_slots[0] = left[b] + 1, width - split[b]
            st_node[1], st_slots[1] = left[b], split[b]
            top = 2
        while top > 0:
            top -= 1
            c, i = st_node[top], st_slots[top]
            if how[c, i] == -1:                  # one primitive node
                e_kind[ne], e_id[ne] = 2, c
                ne += 1
            elif left[c] < 0 and count[c] <= i:  # its triangles, a slot each
                for j in range(count[c]):
                    e_kind[ne], e_id[ne] = 1, first[c] + j
                    ne += 1
            elif left[c] < 0 or how[c, i] == 0:  # one wide node
                e_kind[ne], e_id[ne] = 0, c
                ne += 1
            else:
                st_node[top], st_slots[top] = left[c] + 1, i - how[c, i]
                st_node[top + 1], st_slots[top + 1] = left[c], how[c, i]
                top += 2
        slot = 0
        for i in range(ne):                      # wide children first, allocated together
            if e_kind[i] == 0:
                c = e_id[i]
                src[k] = c
                wparent[k] = w
                _clear_row(child, c_lo, c_hi, k, EMPTY)
                child[w, slot] = k
                for a in range(3):
                    c_lo[w, slot, a], c_hi[w, slot, a] = lo[c, a], hi[c, a]
                k += 1
                slot += 1
        n_wide[w] = slot
        for i in range(ne):                      # then its triangles, in consecutive slots
            if e_kind[i] == 2:                   # a primitive node's: one slot, pieces merged
                c = e_id[i]
                child[w, slot] = -(n_slots + 1)
                for a in range(3):
                    c_lo[w, slot, a], c_hi[w, slot, a] = lo[c, a], hi[c, a]
                nt = distinct_tris(perm, first[c], sub[c], tri_order[n_slots:])
                tri_parent[n_slots:n_slots + nt] = w
                tri_count[n_slots] = nt
                n_slots += nt
                slot += 1
            elif e_kind[i] == 1:
                pos = e_id[i]
                same = -1                        # a piece of a triangle the node already has:
                for j in range(n_wide[w], slot):     # one slot, the pieces' boxes' union
                    if tri_count[-child[w, j] - 1] == 1 and tri_order[-child[w, j] - 1] == perm[pos]:
                        same = j
                if same >= 0:
                    for a in range(3):
                        c_lo[w, same, a] = min(c_lo[w, same, a], pos_lo[pos, a])
                        c_hi[w, same, a] = max(c_hi[w, same, a], pos_hi[pos, a])
                    continue
                tri_order[n_slots] = perm[pos]
                tri_parent[n_slots] = w
                tri_count[n_slots] = 1
                child[w, slot] = -(n_slots + 1)
                for a in range(3):
                    c_lo[w, slot, a], c_hi[w, slot, a] = pos_lo[pos, a], pos_hi[pos, a]
                n_slots += 1
                slot += 1
        n_child[w] = slot
    return (child[:k].copy(), c_lo[:k].copy(), c_hi[:k].copy(), n_wide[:k].copy(),
            n_child[:k].copy(), wparent[:k].copy(), tri_order[:n_slots].copy(),
            tri_parent[:n_slots].copy(), tri_count[:n_slots].copy())
