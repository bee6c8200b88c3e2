"""Numba kernels of the collapse of a BVH2 into a wide tree (collapse): 4 or 8 children, each
a wide node or a triangle slot (one triangle, or a primitive node of several), as AMD's box
nodes point at box nodes or triangle / primitive nodes (peers.md §3.1). Which BVH2 nodes become
wide nodes is an SAH-optimal choice (_collapse_costs), worked out on all threads; the same
tree on any number of threads.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from renderer.inlined import inlined

from .sah_kernels import C_TRAV, box_area, owners

# The collapse's costs of a primitive node, relative to a wide node's C_TRAV: opening it (a
# fetch and a step) and each triangle it tests. Assumed (a box step tests 8 boxes, a primitive
# node up to 4 triangles at once), then checked on 1080p primary rays: C_PRIM 0.25-2 and C_TRI
# 0.1-0.5 all give dragon 1.81-1.84 box nodes and 0.19-0.21 primitive nodes per ray, sponza
# 10.56-10.71 and 1.54-1.62; rays/s differed less than this machine's noise
C_PRIM = 0.5
C_TRI = 0.25


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
        node = box_area(lo[b, 0], lo[b, 1], lo[b, 2], hi[b, 0], hi[b, 1], hi[b, 2])
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
    owner = owners(desc[roots], n_threads)       # the most descendants first
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
