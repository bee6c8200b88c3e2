"""Numba kernels of the binned-SAH BVH2 build over reference boxes (build_sah): the surface
area heuristic's splits, grown top down, the top a level at a time and the subtrees below it
on all threads, then numbered as one depth-first build numbers them.

Deterministic: the threads work on parts of the tree that do not depend on each other, so the
same references give the same tree on every run and on any number of threads.
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


@inlined(error_model="python")
def box_area(lo0, lo1, lo2, hi0, hi1, hi2):
    """The surface area of the box lo .. hi (0 for an empty one): the SAH's measure of how
    likely a ray is to open it."""
    dx, dy, dz = hi0 - lo0, hi1 - lo1, hi2 - lo2
    if dx < 0.0:        # empty box (lo = +inf): no area
        return 0.0
    return 2.0 * (dx * dy + dy * dz + dz * dx)


@njit(cache=True)
def owners(work, n_threads):
    """The thread of each of a build's parts, by their work (int64): the largest first, each to
    the thread with the least work so far. Which thread takes a part changes nothing in what
    it builds, only how evenly the threads finish."""
    owner = np.empty(work.shape[0], np.int64)
    load = np.zeros(n_threads, np.int64)
    for s in np.argsort(-work):
        w = np.argmin(load)
        owner[s] = w
        load[w] += work[s]
    return owner


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
        parent_area = box_area(blo[0], blo[1], blo[2], bhi[0], bhi[1], bhi[2])
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
                right_area[x] = box_area(rl[0], rl[1], rl[2], rh[0], rh[1], rh[2])
                right_n[x] = rn
            ll[:], lh[:] = np.inf, -np.inf
            ln = 0
            for x in range(n_used - 1):          # split after used bin x
                b = occupied[x]
                ln += bin_n[b]
                for k in range(3):
                    ll[k] = min(ll[k], bin_lo[b, k])
                    lh[k] = max(lh[k], bin_hi[b, k])
                cost = box_area(ll[0], ll[1], ll[2], lh[0], lh[1], lh[2]) * ln + right_area[x + 1] * right_n[x + 1]
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
    owner = owners(tree[4][roots], n_threads)
    _grow_all(tri_lo, tri_hi, cen, perm, tree, roots, bases, owner, n_threads, max_leaf)
    lo, hi, left, first, count, parent = _canonical(tree, m, 2 * n)
    return lo, hi, left, first, count, parent, perm
