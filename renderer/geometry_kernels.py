"""Numba kernels of the geometry stage: clip, project, snap, cull, triangle setup.

Parallel over input triangles in two passes (count, then write at prefix-summed offsets), so the
output keeps submission order and is the same on any thread count.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from renderer.inlined import inlined

SUBPIXEL_BITS = 8                 # D3D / llvmpipe: positions snap to 1/256 px (DESIGN.md §2)
SUBPIXEL = 1 << SUBPIXEL_BITS
GUARD_PX = 8192                   # guard band beyond each viewport edge, px; keeps |x| < 2^23
                                  # subpixels for 16384² targets, so edge products fit int64
MAX_POLY = 9                      # triangle clipped by 5 planes has at most 3 + 5 vertices
MAX_OUT = MAX_POLY - 2            # triangles per clipped polygon (fan)

# Per-input-primitive outcome (their tally makes the geom.* counters).
EMITTED, CULLED_BACKFACE, CULLED_ZERO_AREA, CULLED_FRUSTUM = 0, 1, 2, 3
EMPTY = 4     # no sample in its bounding box: dropped where setup is asked to (SetupInput.reach),
              # for a picture alone; a frame's setup keeps it (it costs fetch, setup and binning)

# Cull modes, as renderer.cull.CullMode.
CULL_NONE, CULL_BACK, CULL_FRONT = 0, 1, 2


class SetupInput(NamedTuple):
    """A pass's vertices and triangles as setup reads them (vertices of all draws end to end)."""
    clip: np.ndarray       # float64 (nv, 4) clip-space positions
    face_n: np.ndarray     # float64 (n, 3) each triangle's unit face normal where its draw is
                           # faceted (face_normals; (0, 3) when none is)
    normal: np.ndarray     # float64 (nv, 3) world-space unit normals, zero on faceted meshes
    uv: np.ndarray         # (nv, 2) texture coordinates
    idx: np.ndarray        # int64 (n, 3) pass-global vertex indices of each input triangle
    tri_draw: np.ndarray   # int32 (n,) each triangle's draw
    draw_flat: np.ndarray  # bool (n_draws,) faceted: the face normal at every corner
    draw_cull: np.ndarray  # int64 (n_draws,) CULL_NONE / CULL_BACK / CULL_FRONT
    width: int             # render target, pixels
    height: int
    reach: int             # >= 0: drop a whole triangle whose bounding box holds no sample
                           # (pixel centres moved by up to reach subpixels: EMPTY); -1: keep all


@inlined
def holds_no_sample(x0, x1, x2, y0, y1, y2, reach):
    """No sample position (pixel centres moved by up to `reach` subpixels) lies inside the
    bounding box of the triangle with these snapped corners (subpixels): it covers nothing."""
    h = SUBPIXEL // 2
    return ((max(x0, x1, x2) + reach - h) >> SUBPIXEL_BITS
            < (min(x0, x1, x2) - reach - h + SUBPIXEL - 1) >> SUBPIXEL_BITS
            or (max(y0, y1, y2) + reach - h) >> SUBPIXEL_BITS
            < (min(y0, y1, y2) - reach - h + SUBPIXEL - 1) >> SUBPIXEL_BITS)


class Projected(NamedTuple):
    """project_vertices' output, per vertex (left unwritten where outside a clip plane)."""
    sx: np.ndarray         # int64 window x, snapped to 1/256 px
    sy: np.ndarray         # int64 window y, snapped, y down
    fx: np.ndarray         # float64 window x in subpixels, unsnapped (the depth plane's fit)
    fy: np.ndarray         # float64 window y in subpixels, unsnapped
    z: np.ndarray          # float64 window depth
    inv_w: np.ndarray      # float64 1 / clip w
    outcode: np.ndarray    # int32 bit k: outside _plane_dist's plane k

    @staticmethod
    def empty(nv: int) -> "Projected":
        return Projected(np.empty(nv, np.int64), np.empty(nv, np.int64), np.empty(nv),
                         np.empty(nv), np.empty(nv), np.empty(nv), np.empty(nv, np.int32))


class Verdicts(NamedTuple):
    """The counting pass's output, per input triangle."""
    n_emit: np.ndarray     # int64 setup triangles it makes (0 when culled)
    outcome: np.ndarray    # uint8 EMITTED or the cull reason
    clipped: np.ndarray    # uint8 went through the clipper


class SetupRows(NamedTuple):
    """The writing pass's output: the columns of geometry.SetupTriangles that setup makes."""
    x: np.ndarray          # int64 (m, 3) window x, 1/256 px
    y: np.ndarray          # int64 (m, 3)
    z: np.ndarray          # float64 (m, 3) window depth
    inv_w: np.ndarray      # float64 (m, 3)
    normal: np.ndarray     # float32 (m, 3, 3)
    uv: np.ndarray         # float32 (m, 3, 2)
    back: np.ndarray       # bool (m,)
    zplane: np.ndarray     # float64 (m, 3)

    @staticmethod
    def empty(m: int) -> "SetupRows":
        return SetupRows(np.empty((m, 3), np.int64), np.empty((m, 3), np.int64),
                         np.empty((m, 3)), np.empty((m, 3)), np.empty((m, 3, 3), np.float32),
                         np.empty((m, 3, 2), np.float32), np.empty(m, np.bool_), np.empty((m, 3)))


@inlined
def _plane_dist(p, k, gx, gy):
    """Signed distance of clip-space point p to plane k; >= 0 inside.
    0: near (z >= -w, OpenGL), 1..4: guard band x, y; 5: far (z <= w), 6..9: viewport x, y."""
    x, y, z, w = p[0], p[1], p[2], p[3]
    if k == 0:
        return z + w
    if k == 1:
        return gx * w - x
    if k == 2:
        return gx * w + x
    if k == 3:
        return gy * w - y
    if k == 4:
        return gy * w + y
    if k == 5:
        return w - z
    if k == 6:
        return w - x
    if k == 7:
        return w + x
    if k == 8:
        return w - y
    return w + y


@njit(cache=True, nogil=True, error_model="numpy")
def _clip_polygon(c0, c1, c2, gx, gy, bary, tmp, p, q, n_planes_mask):
    """Sutherland–Hodgman in homogeneous space on the planes set in n_planes_mask (bits 0..4).
    Polygon vertices are barycentric weights of the input triangle: bary (MAX_POLY, 3); tmp, p,
    q are scratch. Returns the vertex count (0 when clipped away). Rows are copied and blended
    element by element: numba's whole-row slices check their shapes with an error message that
    made it compile str() and its unicode helpers into this kernel (1.3 s of a cold start), and
    the blended row was a temporary array."""
    n = 3
    for i in range(3):
        for c in range(3):
            bary[i, c] = 1.0 if i == c else 0.0
    for k in range(5):
        if not (n_planes_mask >> k) & 1:
            continue
        m = 0
        for i in range(n):
            j = (i + 1) % n
            for c in range(4):
                p[c] = bary[i, 0] * c0[c] + bary[i, 1] * c1[c] + bary[i, 2] * c2[c]
                q[c] = bary[j, 0] * c0[c] + bary[j, 1] * c1[c] + bary[j, 2] * c2[c]
            dp = _plane_dist(p, k, gx, gy)
            dq = _plane_dist(q, k, gx, gy)
            if dp >= 0.0:
                for c in range(3):
                    tmp[m, c] = bary[i, c]
                m += 1
            if (dp >= 0.0) != (dq >= 0.0):
                t = dp / (dp - dq)
                for c in range(3):
                    tmp[m, c] = bary[i, c] + t * (bary[j, c] - bary[i, c])
                m += 1
        n = m
        for i in range(n):
            for c in range(3):
                bary[i, c] = tmp[i, c]
        if n < 3:
            return 0
    return n


@inlined
def _depth_plane(fxa, fya, fxb, fyb, fxc, fyc, sxa, sya, sxb, syb, sxc, syc, sza, szb, szc, out):
    """Window depth as a plane z = out[0] X + out[1] Y + out[2] over subpixel coordinates, fitted
    to the corners' unsnapped positions (f) as OpenGL implementations do (llvmpipe sets up its z
    plane from float positions); snapping moves the edges, not the depth. Falls back to the
    snapped positions (s) when the unsnapped triangle is degenerate. z: the corners' depths."""
    ux, uy, uz = fxb - fxa, fyb - fya, szb - sza
    vx, vy, vz = fxc - fxa, fyc - fya, szc - sza
    det = ux * vy - uy * vx
    x0, y0 = fxa, fya
    if det == 0.0:
        ux, uy = float(sxb - sxa), float(syb - sya)
        vx, vy = float(sxc - sxa), float(syc - sya)
        det = ux * vy - uy * vx
        x0, y0 = float(sxa), float(sya)
    out[0] = (uz * vy - vz * uy) / det
    out[1] = (vz * ux - uz * vx) / det
    out[2] = sza - out[0] * x0 - out[1] * y0


@inlined
def _emit_corner(o, k, x, y, z, inv_w, b0, b1, b2, flat, fn0, fn1, fn2, normal, uv, i0, i1, i2,
                 out_x, out_y, out_z, out_inv_w, out_normal, out_uv):
    """Corner k of setup triangle o: window position, depth and 1/w as given; the normal (the
    face's when flat) and uv weighed from the input triangle's corners i0, i1, i2 by (b0, b1,
    b2), in one order for clipped and whole triangles alike, so both give the same bits."""
    # unsigned subscripts: numba wraps a negative index, a compare and an add at each of the
    # corner's 9 stores and 15 loads (the write pass of spheres' setup, one thread: 7.2-7.5 ms
    # -> 6.1-6.3)
    r, c = np.uint64(o), np.uint64(k)
    u0, u1, u2 = np.uint64(i0), np.uint64(i1), np.uint64(i2)
    out_x[r, c] = x
    out_y[r, c] = y
    out_z[r, c] = z
    out_inv_w[r, c] = inv_w
    for j in range(3):
        if flat:
            out_normal[r, c, j] = fn0 if j == 0 else (fn1 if j == 1 else fn2)
        else:
            out_normal[r, c, j] = b0 * normal[u0, j] + b1 * normal[u1, j] + b2 * normal[u2, j]
    for j in range(2):
        out_uv[r, c, j] = b0 * uv[u0, j] + b1 * uv[u1, j] + b2 * uv[u2, j]


@inlined
def _snap(v):
    return np.int64(np.floor(v * SUBPIXEL + 0.5))


@njit(cache=True, nogil=True, error_model="numpy")
def world_vertices(v0, v1, pos, nrm, v_draw, world_m, normal_m, world, out_n):
    """Vertices v0..v1-1: world = world_m[d] @ (p, 1); out_n = normal_m[d] @ n, normalised (left
    zero when n is zero: faceted meshes). (This and the other range kernels here run in parts on
    several threads: renderer.workers.spread.)"""
    for v in range(v0, v1):
        d = v_draw[v]
        for i in range(3):
            world[v, i] = (world_m[d, i, 0] * pos[v, 0] + world_m[d, i, 1] * pos[v, 1]
                           + world_m[d, i, 2] * pos[v, 2] + world_m[d, i, 3])
        ln = 0.0
        for i in range(3):
            out_n[v, i] = normal_m[d, i, 0] * nrm[v, 0] + normal_m[d, i, 1] * nrm[v, 1] + normal_m[d, i, 2] * nrm[v, 2]
            ln += out_n[v, i] * out_n[v, i]
        if ln > 0.0:
            ln = np.sqrt(ln)
            for i in range(3):
                out_n[v, i] /= ln


@njit(cache=True, nogil=True, error_model="numpy")
def clip_vertices(v0, v1, world, clip_m, clip):
    """Vertices v0..v1-1: clip = clip_m @ (world, 1)."""
    for v in range(v0, v1):
        for i in range(4):
            clip[v, i] = (clip_m[i, 0] * world[v, 0] + clip_m[i, 1] * world[v, 1]
                          + clip_m[i, 2] * world[v, 2] + clip_m[i, 3])


CLIP_PLANES = 0b11111             # near + guard band: planes that clipping must cut against
REJECT_PLANES = 0b1111100001      # near, far, viewport: all three outside one → invisible


@njit(cache=True, nogil=True, error_model="numpy")
def project_vertices(v0, v1, clip, width, height, sx, sy, fx, fy, z, inv_w, outcode):
    """Vertices v0..v1-1, once each, into Projected's fields: window position (unsnapped and
    snapped), depth, 1/w, and the clip planes it is outside of (bit k for _plane_dist's plane
    k). Triangles with no vertex outside the near or guard-band planes (almost all) take these
    as they are; the rest are clipped."""
    gx = 1.0 + 2.0 * GUARD_PX / width
    gy = 1.0 + 2.0 * GUARD_PX / height
    for v in range(v0, v1):
        c = clip[v]
        oc = 0
        for k in range(10):
            if _plane_dist(c, k, gx, gy) < 0:
                oc |= 1 << k
        outcode[v] = oc
        if oc & CLIP_PLANES:
            continue                      # w may be <= 0: only the clipper may project it
        iw = 1.0 / c[3]
        fx[v] = (c[0] * iw * 0.5 + 0.5) * width * SUBPIXEL          # subpixels
        fy[v] = (0.5 - c[1] * iw * 0.5) * height * SUBPIXEL         # y down, row 0 on top
        sx[v] = _snap(fx[v] / SUBPIXEL)
        sy[v] = _snap(fy[v] / SUBPIXEL)
        z[v] = c[2] * iw * 0.5 + 0.5
        inv_w[v] = iw


@inlined
def _culled(back, cull):
    """Whether the draw's cull mode drops a triangle that faces back (back) or front."""
    return (back and cull == CULL_BACK) or (not back and cull == CULL_FRONT)


@inlined
def _face_normal(world, i0, i1, i2):
    """Faceted meshes: the unit face normal of the input triangle, CCW outward."""
    ax, ay, az = world[i1, 0] - world[i0, 0], world[i1, 1] - world[i0, 1], world[i1, 2] - world[i0, 2]
    bx, by, bz = world[i2, 0] - world[i0, 0], world[i2, 1] - world[i0, 1], world[i2, 2] - world[i0, 2]
    fn0, fn1, fn2 = ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx
    ln = np.sqrt(fn0 * fn0 + fn1 * fn1 + fn2 * fn2)
    if ln > 0:
        fn0, fn1, fn2 = fn0 / ln, fn1 / ln, fn2 / ln
    return fn0, fn1, fn2


@njit(cache=True, nogil=True, error_model="numpy")
def face_normals(t0, t1, world, idx, tri_draw, draw_flat, out):
    """Triangles t0..t1-1 into out (float64 (n, 3), zeros): the unit face normal (_face_normal)
    of each triangle of a faceted draw. They do not depend on the camera: made once while the
    draws and their transforms stay (renderer.geometry.transform_vertices), not at every setup,
    where the square root and three divisions a triangle took sponza's setup at 640x360 on one
    thread 11.8 ms against 11.2 without (d6477ab)."""
    for t in range(t0, t1):
        if draw_flat[tri_draw[t]]:
            out[t, 0], out[t, 1], out[t, 2] = _face_normal(world, idx[t, 0], idx[t, 1], idx[t, 2])


@njit(cache=True, nogil=True, error_model="numpy")
def setup_triangles(t0, t1, inp, vert, write, offsets, verdicts, out):
    """Clip, project, snap and cull triangles t0..t1 of `inp` (SetupInput; `vert` its vertices
    as project_vertices left them). Counting (write False) fills `verdicts`; writing puts each
    triangle's setup triangles at offsets[t] into `out` (SetupRows). One call per chunk, not per
    triangle: numba ref-counts an array taken out of a struct, so the structs are unpacked here,
    once per chunk; per triangle that would cost more than the triangle's own work."""
    clip, face_n, normal, uv, idx = inp.clip, inp.face_n, inp.normal, inp.uv, inp.idx
    tri_draw, draw_flat, draw_cull = inp.tri_draw, inp.draw_flat, inp.draw_cull
    width, height, reach = inp.width, inp.height, inp.reach
    snap_x, snap_y, exact_x, exact_y, win_z, inv_w, outcode = vert
    n_emit, outcome, clipped = verdicts
    out_x, out_y, out_z, out_inv_w, out_normal, out_uv, out_back, out_zplane = out
    bary, tmp = np.empty((MAX_POLY, 3)), np.empty((MAX_POLY, 3))
    p, q = np.empty(4), np.empty(4)
    poly_sx, poly_sy = np.empty(MAX_POLY, np.int64), np.empty(MAX_POLY, np.int64)
    poly_z, poly_iw = np.empty(MAX_POLY), np.empty(MAX_POLY)      # the clipped polygon's
    poly_fx, poly_fy = np.empty(MAX_POLY), np.empty(MAX_POLY)     # corners, as vert's
    for t in range(t0, t1):
        if write and offsets[t + 1] == offsets[t]:
            continue
        d = tri_draw[t]
        flat, cull = draw_flat[d], draw_cull[d]
        out_base = offsets[t] if write else 0
        res = (0, EMITTED, False)
        for _once in range(1):        # a block to break out of: each `break` is a verdict
            i0, i1, i2 = idx[t, 0], idx[t, 1], idx[t, 2]
            if outcode[i0] & outcode[i1] & outcode[i2] & REJECT_PLANES:
                res = (0, CULLED_FRUSTUM, False)
                break
            mask = (outcode[i0] | outcode[i1] | outcode[i2]) & CLIP_PLANES
            if mask == 0:
                # No plane cuts it (almost every triangle): its own three vertices make one
                # setup triangle or none, without the polygon's scratch arrays (same result).
                area = ((snap_x[i1] - snap_x[i0]) * (snap_y[i2] - snap_y[i0])
                        - (snap_y[i1] - snap_y[i0]) * (snap_x[i2] - snap_x[i0]))
                if area == 0:
                    res = (0, CULLED_ZERO_AREA, False)
                    break
                back = area > 0
                if _culled(back, cull):
                    res = (0, CULLED_BACKFACE, False)
                    break
                if reach >= 0 and holds_no_sample(snap_x[i0], snap_x[i1], snap_x[i2], snap_y[i0],
                                                  snap_y[i1], snap_y[i2], reach):
                    res = (0, EMPTY, False)
                    break
                res = (1, EMITTED, False)
                if not write:
                    break
                o = out_base
                fn0 = fn1 = fn2 = 0.0
                if flat:
                    fn0, fn1, fn2 = face_n[t, 0], face_n[t, 1], face_n[t, 2]
                for k in range(3):
                    v = k if back or k == 0 else 3 - k     # raster wants positive area
                    iv = i0 if v == 0 else (i1 if v == 1 else i2)
                    _emit_corner(o, k, snap_x[iv], snap_y[iv], win_z[iv], inv_w[iv],
                                 1.0 if v == 0 else 0.0, 1.0 if v == 1 else 0.0,
                                 1.0 if v == 2 else 0.0, flat, fn0, fn1, fn2, normal, uv, i0, i1,
                                 i2, out_x, out_y, out_z, out_inv_w, out_normal, out_uv)
                out_back[o] = back
                _depth_plane(exact_x[i0], exact_y[i0], exact_x[i1], exact_y[i1], exact_x[i2],
                             exact_y[i2], snap_x[i0], snap_y[i0], snap_x[i1], snap_y[i1],
                             snap_x[i2], snap_y[i2], win_z[i0], win_z[i1], win_z[i2],
                             out_zplane[o])
                break
            # A plane cuts it: the clipped polygon, projected and snapped, as a fan.
            c0, c1, c2 = clip[i0], clip[i1], clip[i2]
            gx = 1.0 + 2.0 * GUARD_PX / width
            gy = 1.0 + 2.0 * GUARD_PX / height
            n = _clip_polygon(c0, c1, c2, gx, gy, bary, tmp, p, q, mask)
            if n < 3:
                res = (0, CULLED_FRUSTUM, True)
                break
            for v in range(n):
                cx = bary[v, 0] * c0[0] + bary[v, 1] * c1[0] + bary[v, 2] * c2[0]
                cy = bary[v, 0] * c0[1] + bary[v, 1] * c1[1] + bary[v, 2] * c2[1]
                cz = bary[v, 0] * c0[2] + bary[v, 1] * c1[2] + bary[v, 2] * c2[2]
                cw = bary[v, 0] * c0[3] + bary[v, 1] * c1[3] + bary[v, 2] * c2[3]
                iw = 1.0 / cw
                poly_fx[v] = (cx * iw * 0.5 + 0.5) * width * SUBPIXEL
                poly_fy[v] = (0.5 - cy * iw * 0.5) * height * SUBPIXEL
                poly_sx[v] = _snap(poly_fx[v] / SUBPIXEL)
                poly_sy[v] = _snap(poly_fy[v] / SUBPIXEL)
                poly_z[v] = cz * iw * 0.5 + 0.5
                poly_iw[v] = iw
            fn0 = fn1 = fn2 = 0.0
            if flat and write:
                fn0, fn1, fn2 = face_n[t, 0], face_n[t, 1], face_n[t, 2]
            n_out = 0
            n_back = 0
            n_zero = 0
            for f in range(1, n - 1):
                a, b, c = 0, f, f + 1
                # Twice the signed area in subpixels² with y down: < 0 is counter-clockwise as seen,
                # the OpenGL front face.
                area = ((poly_sx[b] - poly_sx[a]) * (poly_sy[c] - poly_sy[a])
                        - (poly_sy[b] - poly_sy[a]) * (poly_sx[c] - poly_sx[a]))
                if area == 0:
                    n_zero += 1
                    continue
                back = area > 0
                if _culled(back, cull):
                    n_back += 1
                    continue
                if write:
                    o = out_base + n_out
                    order = (a, b, c) if back else (a, c, b)   # raster wants positive area
                    for k in range(3):
                        v = order[k]
                        _emit_corner(o, k, poly_sx[v], poly_sy[v], poly_z[v], poly_iw[v],
                                     bary[v, 0], bary[v, 1], bary[v, 2], flat, fn0, fn1, fn2,
                                     normal, uv, i0, i1, i2, out_x, out_y, out_z, out_inv_w,
                                     out_normal, out_uv)
                    out_back[o] = back
                    _depth_plane(poly_fx[a], poly_fy[a], poly_fx[b], poly_fy[b], poly_fx[c],
                                 poly_fy[c], poly_sx[a], poly_sy[a], poly_sx[b], poly_sy[b],
                                 poly_sx[c], poly_sy[c], poly_z[a], poly_z[b], poly_z[c],
                                 out_zplane[o])
                n_out += 1
            if n_out > 0:
                res = (n_out, EMITTED, True)
                break
            if n_back > 0:
                res = (0, CULLED_BACKFACE, True)
                break
            res = (0, CULLED_ZERO_AREA, True)
            break
        if not write:
            n_emit[t], outcome[t], clipped[t] = res


CHUNK = 4096   # triangles, the fewest in a thread's part of setup_triangles or take_rows


@njit(cache=True, nogil=True, error_model="numpy")
def take_rows(i0, i1, rows, src, dst):
    """Rows i0..i1-1 of every field of dst = rows rows[i] of src's (both geometry.SetupTriangles):
    all fields in one pass, element by element (one walk over rows instead of one per field, and a
    row view per row costs more than its elements), the structs unpacked once per call."""
    x, y, z, inv_w, normal, uv, back, zplane, draw, prim = src
    out_x, out_y, out_z, out_inv_w, out_normal, out_uv, out_back, out_zplane, out_draw, out_prim = dst
    for i in range(i0, i1):
        r = rows[i]
        for k in range(3):
            out_x[i, k], out_y[i, k], out_z[i, k] = x[r, k], y[r, k], z[r, k]
            out_inv_w[i, k], out_zplane[i, k] = inv_w[r, k], zplane[r, k]
            for j in range(3):
                out_normal[i, k, j] = normal[r, k, j]
            for j in range(2):
                out_uv[i, k, j] = uv[r, k, j]
        out_back[i], out_draw[i], out_prim[i] = back[r], draw[r], prim[r]


@njit(cache=True, nogil=True, error_model="numpy")
def running_sum(counts):
    """[0, counts[0], counts[0] + counts[1], ...]: CSR offsets, int64 (n + 1,)."""
    off = np.empty(counts.shape[0] + 1, np.int64)
    off[0] = 0
    for i in range(counts.shape[0]):
        off[i + 1] = off[i] + counts[i]
    return off


@njit(cache=True, nogil=True, error_model="numpy")
def tally(codes, n):
    """How many of codes (small non-negative integers, below n) are each value: int64 (n,).
    np.bincount widens a uint8 array to int64 first, five times the time of this loop."""
    counts = np.zeros(n, np.int64)
    for i in range(codes.shape[0]):
        counts[codes[i]] += 1
    return counts


@njit(cache=True, nogil=True, error_model="numpy")
def prim_offsets(tri_prim, n_prims):
    """CSR from input primitives to their setup triangles (tri_prim sorted): int64 (n_prims + 1,).
    A tally and a running sum, where numpy's bincount and cumsum take five times as long."""
    return running_sum(tally(tri_prim, n_prims))


@njit(cache=True, nogil=True, error_model="numpy")
def emitted_rows(t0, t1, offsets, tri_draw, prim, draw):
    """For each setup triangle of input triangles t0..t1-1 (input triangle t wrote rows
    offsets[t]..offsets[t+1]), its input triangle and its draw: the prim and draw columns of
    SetupTriangles."""
    for t in range(t0, t1):
        for o in range(offsets[t], offsets[t + 1]):
            prim[o] = t
            draw[o] = tri_draw[t]
