"""Numba kernels of triangle splitting before the BVH build (split_references): long
triangles cut into references whose boxes hug them, on all threads, in triangle order.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from renderer.inlined import inlined

from .sah_kernels import box_area


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
            if depth[sp] < max_depth and box_area(lo[0], lo[1], lo[2], hi[0], hi[1], hi[2]) > max_area:
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
    max_area = split * box_area(0.0, 0.0, 0.0, s_ext[0], s_ext[1], s_ext[2])
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
