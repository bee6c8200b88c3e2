"""Numba kernels of the NGG / primitive-shader front end: subgroups of vertices and primitives,
and the exact "covers no sample" test the in-shader small-primitive cull uses."""
from __future__ import annotations

import numpy as np
from numba import njit

from renderer.geometry_kernels import SUBPIXEL
from renderer.inlined import inlined


@njit(cache=True, nogil=True, error_model="numpy")
def subgroups(d0, d1, gidx, prim_off, draw_on, keep, max_verts, max_prims, pos_first, attr_first,
              n_sub):
    """NGG workgroups (subgroups) per selected draw, in primitive order: a subgroup closes when
    the next primitive would bring its distinct vertices over max_verts or its primitives over
    max_prims (Mesa radv/radeonsi NGG: 128 and 128). Within one, the vertex grouper hands each
    distinct vertex to one lane: its position is fetched and shaded once (pos_first marks the
    corner where it first appears); after culling, only vertices of surviving primitives
    (keep) fetch and shade their attributes (attr_first: first surviving corner). gidx holds
    pass-global vertex ids (distinct per draw). n_sub[d] = subgroups of draw d, for draws
    d0..d1-1 (run in parts on several threads: renderer.workers.spread)."""
    for d in range(d0, d1):
        if not draw_on[d]:
            continue
        p0, p1 = prim_off[d], prim_off[d + 1]
        lo, hi = np.int64(1) << 62, np.int64(0)
        for c in range(p0 * 3, p1 * 3):
            lo = min(lo, gidx[c])
            hi = max(hi, gidx[c] + 1)
        if hi <= lo:
            continue
        seen = np.full(hi - lo, -1, np.int64)       # subgroup that last fetched the position
        seen_attr = np.full(hi - lo, -1, np.int64)  # ... and the attributes
        sg, n_v, n_p = 0, 0, 0
        start = p0
        for p in range(p0, p1 + 1):
            new = 0
            if p < p1:
                for k in range(3):
                    v = gidx[p * 3 + k] - lo
                    dup = False
                    for j in range(k):
                        dup = dup or gidx[p * 3 + j] - lo == v
                    if seen[v] != sg and not dup:
                        new += 1
            if p == p1 or (n_p > 0 and (n_v + new > max_verts or n_p + 1 > max_prims)):
                # close subgroup sg over [start, p): attributes of survivors' vertices
                for q in range(start, p):
                    if keep[q]:
                        for k in range(3):
                            v = gidx[q * 3 + k] - lo
                            if seen_attr[v] != sg:
                                seen_attr[v] = sg
                                attr_first[q * 3 + k] = True
                if p == p1:
                    sg += 1
                    break
                sg += 1
                n_v, n_p, start = 0, 0, p
                new = 0
                for k in range(3):
                    v = gidx[p * 3 + k] - lo
                    dup = False
                    for j in range(k):
                        dup = dup or gidx[p * 3 + j] - lo == v
                    if not dup:
                        new += 1
            for k in range(3):
                v = gidx[p * 3 + k] - lo
                if seen[v] != sg:
                    seen[v] = sg
                    pos_first[p * 3 + k] = True
            n_v += new
            n_p += 1
        n_sub[d] = sg


@inlined
def _bbox_misses(x, y, t, sample_x, sample_y):
    """The bounding box of setup triangle t (subpixels) holds no sample position of any pattern:
    per axis, a sample at k * SUBPIXEL + SUBPIXEL / 2 + offset lies in [lo, hi] when the least
    such k is at most the greatest."""
    half = SUBPIXEL // 2
    x0, x1 = min(x[t, 0], x[t, 1], x[t, 2]), max(x[t, 0], x[t, 1], x[t, 2])
    y0, y1 = min(y[t, 0], y[t, 1], y[t, 2]), max(y[t, 0], y[t, 1], y[t, 2])
    empty = True
    for s in range(sample_x.shape[0]):
        ox, oy = half + sample_x[s], half + sample_y[s]
        in_x = -((ox - x0) // SUBPIXEL) <= (x1 - ox) // SUBPIXEL
        in_y = -((oy - y0) // SUBPIXEL) <= (y1 - oy) // SUBPIXEL
        empty = empty and not (in_x and in_y)
    return empty


@njit(cache=True, nogil=True, error_model="numpy")
def cover_samples(t0, t1, x, y, zplane, tri_prim, shader_cull, width, height, sample_x, sample_y,
                  covered, in_box):
    """The in-shader small-primitive cull's test of setup triangles t0..t1-1 (run in parts on
    several threads: renderer.workers.spread), of primitives p of shader_cull: covered[p] when
    it covers a sample, in_box[p] when it covers none but has a sample in its bounding box
    (both zeroed by the caller)."""
    for t in range(t0, t1):
        p = tri_prim[t]
        # A covered sample lies in the triangle's box: no box sample, no coverage.
        if not shader_cull[p] or _bbox_misses(x, y, t, sample_x, sample_y):
            continue
        # Whether setup triangle t (x, y int64 (n, 3) subpixels, positive area; zplane its depth
        # plane; read in place, as a row view per triangle costs more than the test) covers any
        # sample as the rasterizer decides it: edge functions with the top-left rule at pixel
        # centre + sample offset, inside the target and the pixel bounding box, and window depth
        # in [0, 1] there (the far plane clips per sample). Per sample row the x range that
        # passes the three edges is solved exactly in integers; depth is monotone along a row,
        # so a binary search finds whether some pixel of the range has depth in [0, 1]. (In
        # this loop rather than an inlined helper: the helper, which returned at each find,
        # kept an atomic reference count pair on the sample offsets at every triangle,
        # 0.3-0.5% of amd-rdna2/3/4's samples: tests/test_refcounts.py.)
        x0, x1, x2, y0, y1, y2 = x[t, 0], x[t, 1], x[t, 2], y[t, 0], y[t, 1], y[t, 2]
        A0, B0 = -(y1 - y0), x1 - x0
        A1, B1 = -(y2 - y1), x2 - x1
        A2, B2 = -(y0 - y2), x0 - x2
        C0 = (y1 - y0) * x0 - (x1 - x0) * y0
        C1 = (y2 - y1) * x1 - (x2 - x1) * y1
        C2 = (y0 - y2) * x2 - (x0 - x2) * y2
        T0 = 0 if (-A0 < 0 or (-A0 == 0 and B0 > 0)) else -1
        T1 = 0 if (-A1 < 0 or (-A1 == 0 and B1 > 0)) else -1
        T2 = 0 if (-A2 < 0 or (-A2 == 0 and B2 > 0)) else -1
        half = SUBPIXEL // 2
        px0 = max(0, min(x0, x1, x2) // SUBPIXEL)
        py0 = max(0, min(y0, y1, y2) // SUBPIXEL)
        px1 = min(width, max(x0, x1, x2) // SUBPIXEL + 1)
        py1 = min(height, max(y0, y1, y2) // SUBPIXEL + 1)
        dzdx, dzdy, zc = zplane[t, 0], zplane[t, 1], zplane[t, 2]
        # First the sample of the pixel the centroid lies in: inside for most triangles big
        # enough to cover anything, which then skip the row search and its divisions.
        cx, cy = (x0 + x1 + x2) // (3 * SUBPIXEL), (y0 + y1 + y2) // (3 * SUBPIXEL)
        found = False
        if px0 <= cx < px1 and py0 <= cy < py1:
            for s in range(sample_x.shape[0]):
                X, Y = cx * SUBPIXEL + half + sample_x[s], cy * SUBPIXEL + half + sample_y[s]
                z = dzdx * X + dzdy * Y + zc
                if (A0 * X + B0 * Y + C0 + T0 >= 0 and A1 * X + B1 * Y + C1 + T1 >= 0
                        and A2 * X + B2 * Y + C2 + T2 >= 0 and 0.0 <= z <= 1.0):
                    found = True
                    break
        for s in range(0 if found else sample_x.shape[0]):
            ox, oy = half + sample_x[s], half + sample_y[s]
            for py in range(py0, py1):
                Y = py * SUBPIXEL + oy
                lo, hi = px0, px1 - 1
                for k in range(3):
                    A = A0 if k == 0 else (A1 if k == 1 else A2)
                    B = B0 if k == 0 else (B1 if k == 1 else B2)
                    C = C0 if k == 0 else (C1 if k == 1 else C2)
                    T = T0 if k == 0 else (T1 if k == 1 else T2)
                    K = A * ox + B * Y + C + T       # E(px) = A * SUBPIXEL * px + K >= 0
                    if A == 0:
                        if K < 0:
                            hi = lo - 1
                    elif A > 0:                      # px >= ceil(-K / (A * SUBPIXEL))
                        lo = max(lo, -((K) // (A * SUBPIXEL)))
                    else:                            # px <= floor(K / (-A * SUBPIXEL))
                        hi = min(hi, K // (-A * SUBPIXEL))
                if lo > hi:
                    continue
                # depth along the row, as the rasterizer computes it (float64, monotone in px)
                za = dzdx * (lo * SUBPIXEL + ox) + dzdy * Y + zc
                zb = dzdx * (hi * SUBPIXEL + ox) + dzdy * Y + zc
                if 0.0 <= za <= 1.0 or 0.0 <= zb <= 1.0:
                    found = True
                    break
                if (za < 0.0 and zb < 0.0) or (za > 1.0 and zb > 1.0):
                    continue
                # za and zb on either side of [0, 1]: the first pixel at or past 0 up the ramp
                up = zb > za
                a, b = lo, hi
                while a < b:                     # least px with z >= 0 (up) / z <= 1 (down)
                    m = (a + b) // 2
                    z = dzdx * (m * SUBPIXEL + ox) + dzdy * Y + zc
                    if (up and z >= 0.0) or (not up and z <= 1.0):
                        b = m
                    else:
                        a = m + 1
                z = dzdx * (a * SUBPIXEL + ox) + dzdy * Y + zc
                if 0.0 <= z <= 1.0:
                    found = True
                    break
            if found:
                break
        # (a primitive's triangles may race to store True: the same value either way)
        if found:
            covered[p] = True
        else:
            in_box[p] = True


@njit(cache=True, nogil=True, error_model="numpy")
def cull_small(shader_cull, verdict, emitted, culled_small, covered, in_box):
    """cover_samples' verdict: an emitted primitive of shader_cull none of whose setup
    triangles covers a sample becomes culled_small. Returns how many of those the bounding-box
    filter alone would not have caught."""
    not_boxed = 0
    for p in range(verdict.shape[0]):
        if shader_cull[p] and verdict[p] == emitted and not covered[p]:
            verdict[p] = culled_small
            not_boxed += not in_box[p]
    return not_boxed


@njit(cache=True, nogil=True, error_model="numpy")
def bbox_misses_samples(i0, i1, x, y, sel, sample_x, sample_y, out):
    """out[i] = the bounding box of setup triangle sel[i] holds no sample (_bbox_misses), for
    i0..i1-1 (run in parts on several threads: renderer.workers.spread)."""
    for i in range(i0, i1):
        out[i] = _bbox_misses(x, y, sel[i], sample_x, sample_y)
