"""Numba kernels of the raster stage, with shading (shade_kernels) and the ROP (rop_kernels)
inlined per fragment: one fused loop per screen tile.

One tile is one unit of parallel work: its triangles (TileBins) are walked in submission order,
2x2 quads are tested against integer edge functions with the top-left rule, depth is tested
early (or late, after the alpha test, for MASK), fragments are shaded once per pixel and written
per sample. Every tile writes only its own pixels, its own counter row and its own event slabs,
so the result does not depend on the thread count.

The ROP's memory requests are recorded, not priced, here: per (triangle, 8x8 block) the pixels
it tested and the pixels it wrote, and per (triangle, tile) the texture blocks it fetched. The
memory model replays them in submission order (renderer.memory).

rasterize_tile walks a tile's schedule (raster_schedule: the HSR phases are data, a phase per
reference); per reference it sets the triangle up (_edge_setup, _shading) and walks its 8x8
blocks: _block_vs_edges and HiZ (_block_hiz) first, then the depth bound (_depth_bound_fails),
the block's coverage (_coverage_1x), and either the plain fill path (_fill_block) or quads
(_quads: coverage per sample, early Z and HSR, attributes, texture, shading, ROP); then its
events (_flush_events). The helpers are inlined (measured: as fast as the one kernel was);
they take arrays one by one, since numba reference-counts an array taken out of a struct at
every use, and scalars in structs (Edges, Shading), which cost nothing.
"""
from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

import numpy as np
from numba import literally, njit, prange

from .binning_kernels import BLOCK
from .block_masks import BLOCK_BITS, block_far, lowest_bit, popcount, quads_of
from .geometry_kernels import SUBPIXEL, SUBPIXEL_BITS
from .raster_schedule import (FLUSH_BLEND, FLUSH_MASK, FLUSH_PARTIAL, MASK_MODE, PH_IMR, PH_SHADE,
                              PH_VIS, schedule)
from .rop_kernels import depth_test, quantize, write_samples
from .shade_kernels import lambert, mip_level, sample_bilinear, shade_fragment, texel_block_address

TEX_RECENT = 8         # texture blocks remembered per (triangle, tile): the texture L1's reach
SHADE_VEC = 4          # pixels per vector of the plain path's shading loop (AVX2, float64)


class RC(IntEnum):
    """Per-tile raster counters (row of RasterOutput.counters); names in COUNTER_NAMES."""
    FRAGMENTS = 0        # (triangle, pixel) pairs with at least one covered sample
    SAMPLES = 1          # covered samples
    QUADS = 2            # 2x2 quads with at least one covered pixel
    HELPER_LANES = 3     # lanes of shaded quads that ran without a fragment of their own
    EARLY_Z_KILLED = 4   # fragments whose every sample failed the depth test before shading
    LATE_Z_KILLED = 5    # shaded fragments whose every sample then failed the depth test
    ALPHA_KILLED = 6     # shaded MASK fragments below the alpha cutoff (discard)
    SHADED = 7           # fragments shaded (the overdraw numerator)
    BLENDED = 8          # fragments blended over the destination
    WRITTEN = 9          # fragments that wrote colour
    PIXELS_COVERED = 10  # pixels with at least one fragment (the overdraw denominator)
    TEX_BLOCKS = 11      # texture block requests after the per-triangle L1 (memory events)
    HSR_KILLED = 12      # fragments that passed the depth test but HSR found hidden: not shaded
    HSR_FLUSH_MASK = 13  # deferred runs cut short by an alpha-tested (punch-through) triangle
    HSR_FLUSH_BLEND = 14 # ... and by a blended one
    HSR_FLUSH_PARTIAL = 15  # ... and by a partial render (the parameter buffer filled up)
    HIZ_REJECTED = 16    # (triangle, 8x8 block) pairs hierarchical Z rejected whole
    N = 17


COUNTER_NAMES = ["raster.fragments", "raster.samples_covered", "raster.quads",
                 "raster.helper_lanes", "raster.early_z_killed", "raster.late_z_killed",
                 "raster.alpha_killed", "raster.shaded", "raster.blended", "raster.written",
                 "raster.pixels_covered", "raster.texture_block_requests", "raster.hsr_killed",
                 "tile.hsr_flush.punch_through", "tile.hsr_flush.blend",
                 "tile.hsr_flush.partial_render", "raster.hiz_rejected_blocks"]


# Counts kept per tile beside RC's (rasterize_tile's k): HSR_KILLED is their difference.
K_HSR_CANDIDATES = RC.N    # fragments immediate mode would have shaded in deferred runs
K_HSR_SHADED = RC.N + 1    # ... and those the shading phase shaded
K_N = RC.N + 2


class RasterJob(NamedTuple):
    """One pass's raster work (renderer.raster.Raster makes it)."""
    tris: tuple            # geometry.SetupTriangles
    bins: tuple            # binning.TileBins
    mat: tuple             # shade.Materials, per draw
    tex: tuple             # shade.TextureTable
    light: np.ndarray      # float64 (9,) shade.light_vector
    fb: tuple              # rop.Framebuffer: colour, depth, shaded counts
    events: tuple          # raster.RopEvents, filled here
    target: tuple          # raster.RasterView: size and sample positions (not `view`: numba
                           # takes any .view for ndarray.view)
    hsr: bool              # deferred runs: visibility resolved before shading (raster_schedule)
    hiz: bool              # hierarchical Z: reject 8x8 blocks by their farthest stored depth
    zskip: bool            # the simulator's own depth bound per block (raster.Z_SKIP)
    chunk: np.ndarray      # int64 per triangle: its partial-render chunk


class Edges(NamedTuple):
    """A triangle's edge functions over subpixel positions: E_k = A_k X + B_k Y + C_k, a sample
    inside when E_k + T_k >= 0 for all three (T_k: the top-left rule's bias, 0 or -1); the f*
    fields are the same as float64 with T_k in fC_k, exact (whole numbers below 2^53: |A|, |B| <
    2^23 subpixels, |X|, |Y| < 2^23). Scalars, which LLVM keeps in registers."""
    A0: int
    A1: int
    A2: int
    B0: int
    B1: int
    B2: int
    C0: int
    C1: int
    C2: int
    T0: int
    T1: int
    T2: int
    fA0: float
    fA1: float
    fA2: float
    fB0: float
    fB1: float
    fB2: float
    fC0: float
    fC1: float
    fC2: float


class Shading(NamedTuple):
    """How one (triangle, phase) reference is tested and shaded, decided before its pixels."""
    t: int                 # the triangle
    d: int                 # its draw
    phase: int             # PH_IMR / PH_VIS / PH_SHADE (raster_schedule)
    late: bool             # alpha-tested (MASK): shaded before its depth test
    test_depth: bool
    depth_write: bool      # (never in PH_SHADE: PH_VIS wrote it)
    count_zmax: bool       # the plain path keeps HiZ's at_zmax counts
    blend: bool
    textured: bool
    ti: int                # its texture
    lit: bool
    is_back: bool
    uniform: bool          # one colour for every fragment (u0, u1, u2)
    u0: np.uint8
    u1: np.uint8
    u2: np.uint8
    br: float              # base colour
    bg: float
    bb: float
    ba: float
    dzdx: float            # window depth plane over subpixels
    dzdy: float
    zc: float
    w0: float              # 1/w at the corners (perspective-correct weights)
    w1: float
    w2: float
    x0: int                # the bounding box within the tile, pixels [x0, x1) x [y0, y1)
    y0: int
    x1: int
    y1: int


class CornerNormals(NamedTuple):
    """A triangle's normals at its corners (nkc: corner k, component c), for the plain path's
    Lambert. (Apart from Shading: a call of more than 30 arguments is one numba cannot type.)"""
    n00: float
    n01: float
    n02: float
    n10: float
    n11: float
    n12: float
    n20: float
    n21: float
    n22: float


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _pixel_bit(lx, ly):
    """A pixel's bit in its 8x8 block's mask (bit y*8 + x)."""
    return np.uint64(1) << np.uint64(((ly & (BLOCK - 1)) << BLOCK_BITS) + (lx & (BLOCK - 1)))


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _block_of(lx, ly, tx0, ty0, nbx):
    """A pixel's 8x8 block within its tile."""
    return ((ly - ty0) >> BLOCK_BITS) * nbx + ((lx - tx0) >> BLOCK_BITS)


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _holds_a_pixel(winner, t, ev_block, ev_written, e0, e1, blocks_x, tx0, ty0):
    """Whether triangle t still holds any pixel PH_VIS let it win (its events e0..e1, in block
    order): half of them on a dense mesh lose all their pixels to later triangles, and a
    triangle that holds none is not set up, counted or fetched for at all."""
    for e in range(e0, e1):
        gb = ev_block[e]
        left = ev_written[e] if gb >= 0 else np.uint64(0)
        wy0 = ((gb // blocks_x) << BLOCK_BITS) - ty0
        wx0 = ((gb % blocks_x) << BLOCK_BITS) - tx0
        while left:
            p = lowest_bit(left)
            left &= left - np.uint64(1)
            if winner[wy0 + (p >> BLOCK_BITS), wx0 + (p & (BLOCK - 1)), 0] == t:
                return True
    return False


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _no_sample_in_box(vx, vy, t, reach):
    """No sample position (reach: the farthest from its pixel centre, subpixels) lies inside
    triangle t's bounding box: it covers nothing. Most triangles of a dense mesh at a viewer's
    reduced resolution are such."""
    h = SUBPIXEL // 2
    return ((max(vx[t, 0], vx[t, 1], vx[t, 2]) + reach - h) >> SUBPIXEL_BITS
            < (min(vx[t, 0], vx[t, 1], vx[t, 2]) - reach - h + SUBPIXEL - 1) >> SUBPIXEL_BITS
            or (max(vy[t, 0], vy[t, 1], vy[t, 2]) + reach - h) >> SUBPIXEL_BITS
            < (min(vy[t, 0], vy[t, 1], vy[t, 2]) - reach - h + SUBPIXEL - 1) >> SUBPIXEL_BITS)


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _edge(vx, vy, t, k):
    """Edge k of triangle t, from corner k to the next: (A, B, C, the fill rule's bias)."""
    ax, ay = vx[t, k], vy[t, k]
    dx, dy = vx[t, (k + 1) % 3] - ax, vy[t, (k + 1) % 3] - ay
    # Top-left rule, y down, positive area: top edge dy == 0 and dx > 0, left edge dy < 0.
    return -dy, dx, dy * ax - dx * ay, 0 if (dy < 0 or (dy == 0 and dx > 0)) else -1


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _edge_setup(vx, vy, t, sample_x, sample_y, n_samples, sample_e):
    """Triangle t's Edges, and each edge's offset at each sample position (sample_e[k, s])."""
    A0, B0, C0, T0 = _edge(vx, vy, t, 0)
    A1, B1, C1, T1 = _edge(vx, vy, t, 1)
    A2, B2, C2, T2 = _edge(vx, vy, t, 2)
    for s in range(n_samples):
        sample_e[0, s] = A0 * sample_x[s] + B0 * sample_y[s]
        sample_e[1, s] = A1 * sample_x[s] + B1 * sample_y[s]
        sample_e[2, s] = A2 * sample_x[s] + B2 * sample_y[s]
    return Edges(A0, A1, A2, B0, B1, B2, C0, C1, C2, T0, T1, T2,
                 float(A0), float(A1), float(A2), float(B0), float(B1), float(B2),
                 float(C0 + T0), float(C1 + T1), float(C2 + T2))


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _edge_range(a, b, c, bias, rx0, rx1, ry0, ry1):
    """The largest and smallest value one edge function (with its bias) takes over the
    rectangle [rx0, rx1] x [ry0, ry1]."""
    hi = a * (rx1 if a > 0 else rx0) + b * (ry1 if b > 0 else ry0) + c + bias
    lo = a * (rx0 if a > 0 else rx1) + b * (ry0 if b > 0 else ry1) + c + bias
    return hi, lo


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _block_vs_edges(e, rx0, rx1, ry0, ry1):
    """An 8x8 block against the three edges over a rectangle that holds all its samples
    (llvmpipe's do_block_16 / do_block_4 idea): (outside one edge: skip the block, inside all
    three: skip the per-sample edge tests)."""
    h0, l0 = _edge_range(e.A0, e.B0, e.C0, e.T0, rx0, rx1, ry0, ry1)
    h1, l1 = _edge_range(e.A1, e.B1, e.C1, e.T1, rx0, rx1, ry0, ry1)
    h2, l2 = _edge_range(e.A2, e.B2, e.C2, e.T2, rx0, rx1, ry0, ry1)
    return h0 < 0 or h1 < 0 or h2 < 0, l0 >= 0 and l1 >= 0 and l2 >= 0


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _uniform_inputs(textured, unlit, v_normal, t):
    """A fragment shader whose inputs are the same at every fragment (no texture, and unlit or
    one normal at all three vertices: faceted meshes, the analytic layers) has one output per
    triangle: rasterize_tile evaluates it once, as a compiler hoists uniform work."""
    return not textured and (unlit or (
        v_normal[t, 0, 0] == v_normal[t, 1, 0] == v_normal[t, 2, 0]
        and v_normal[t, 0, 1] == v_normal[t, 1, 1] == v_normal[t, 2, 1]
        and v_normal[t, 0, 2] == v_normal[t, 1, 2] == v_normal[t, 2, 2]))


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _plane_near(sh, rx0, rx1, ry0, ry1):
    """The nearest (least) depth the triangle's plane comes to over a rectangle of subpixels."""
    return (sh.dzdx * (rx0 if sh.dzdx > 0 else rx1) + sh.dzdy * (ry0 if sh.dzdy > 0 else ry1)
            + sh.zc)


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _plane_far(sh, rx0, rx1, ry0, ry1):
    """The farthest (greatest) depth of the plane over the rectangle."""
    return (sh.dzdx * (rx1 if sh.dzdx > 0 else rx0) + sh.dzdy * (ry1 if sh.dzdy > 0 else ry0)
            + sh.zc)


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _depth_bound_fails(sh, zlo, zhi, bl, bx0, by0, zbound, fb_depth, width, height, n_samples):
    """The simulator's own depth bound per 8x8 block (not a modelled unit: it changes no
    counter, event or pixel; raster.Z_SKIP): no sample of the block holds a depth above
    zbound[bl] (-1: not read from the target yet). The caller has checked that the triangle
    covers every sample of the block, none clipped by near or far, and tests depth before
    shading, so the block's outcome depends only on depth: it fails at every sample when the
    plane's nearest point (zlo) is not nearer than the bound. LESS only lowers depths, so the
    bound stays true. 1e-12 covers float64 rounding between the plane at the corners and at
    the samples; float32 rounding is monotone."""
    if not (zlo > 1e-12 and zhi < 1.0 - 1e-12):
        return False, False
    if zbound[bl] < 0.0:
        zbound[bl] = block_far(fb_depth, bx0, by0, width, height, n_samples)[0]
    if zlo - 1e-12 >= zbound[bl]:
        return True, False
    # every sample ends at or below the plane's farthest point in the block: a covering,
    # depth-writing triangle tightens the bound
    return False, sh.depth_write


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _coverage_1x(e, sh, bx0, by0, blk_z):
    """One sample: the 8x8 block's coverage as a 64-bit mask (bit y*8+x) and each pixel's depth
    in blk_z, over the block's rows in the bounding box, in a loop with no branch in its body
    (vectorised)."""
    cov_m = np.uint64(0)
    p0_, p1_ = (max(by0, sh.y0) - by0) * BLOCK, (min(by0 + BLOCK, sh.y1) - by0) * BLOCK
    for p in range(p0_, p1_):
        lx = bx0 + (p & (BLOCK - 1))
        X = lx * SUBPIXEL + SUBPIXEL // 2
        Y = (by0 + (p >> BLOCK_BITS)) * SUBPIXEL + SUBPIXEL // 2
        z = sh.dzdx * X + sh.dzdy * Y + sh.zc
        blk_z[p] = np.float32(z)
        # edge functions in float64: whole numbers below 2^53, so exact
        inside = ((sh.x0 <= lx) & (lx < sh.x1) & (e.fA0 * X + e.fB0 * Y + e.fC0 >= 0.0)
                  & (e.fA1 * X + e.fB1 * Y + e.fC1 >= 0.0)
                  & (e.fA2 * X + e.fB2 * Y + e.fC2 >= 0.0) & (0.0 <= z) & (z <= 1.0))
        cov_m |= np.uint64(inside) << np.uint64(p)
    return cov_m


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _fill_block(e, sh, nrm, cov_m, bx0, by0, bl, tx0, ty0, light_s, k, blk_z, winner, fb_color,
                fb_depth, fb_shaded, zmax, at_zmax, zmax_stale, touched, tested, written, sh_x,
                sh_y, sh_r, sh_g, sh_b):
    """The plain path, the common case: opaque triangles with one colour (flat or unlit) or
    Lambert on the interpolated normal, at one sample, untextured (or visibility alone, PH_VIS,
    which reads no texture). The covered pixels one by one, in any order (a triangle's pixels
    are independent); quads, helper lanes and fragments counted from the block's masks, as
    _quads counts them. Same arithmetic as _quads."""
    t, phase, depth_write, test_depth = sh.t, sh.phase, sh.depth_write, sh.test_depth
    n_sh = 0
    n_c = popcount(cov_m)
    pass_m = np.uint64(0)
    left = cov_m
    vis_m = np.uint64(0)
    zmax_bl = zmax[bl]
    lowered = 0                    # samples at zmax this block's writes lower
    while left:
        p = lowest_bit(left)
        left &= left - np.uint64(1)
        lx = bx0 + (p & (BLOCK - 1))
        ly = by0 + (p >> BLOCK_BITS)
        zf = blk_z[p]                # (not read in PH_SHADE: no depth there)
        bit = np.uint64(1) << np.uint64(p)
        if phase == PH_SHADE:
            if winner[ly - ty0, lx - tx0, 0] != t:
                continue
        elif test_depth and not zf < fb_depth[ly, lx, 0]:
            continue
        if sh.count_zmax:
            lowered += fb_depth[ly, lx, 0] == zmax_bl
        if phase == PH_VIS:
            winner[ly - ty0, lx - tx0, 0] = t
            vis_m |= bit
            if depth_write:
                fb_depth[ly, lx, 0] = zf
            continue
        pass_m |= bit
        fb_shaded[ly, lx] += 1
        if depth_write:
            fb_depth[ly, lx, 0] = zf
        if sh.uniform:
            fb_color[ly, lx, 0, 0] = sh.u0
            fb_color[ly, lx, 0, 1] = sh.u1
            fb_color[ly, lx, 0, 2] = sh.u2
        else:                # shaded below, the block's pixels at once
            sh_x[n_sh] = lx
            sh_y[n_sh] = ly
            n_sh += 1
        fb_color[ly, lx, 0, 3] = 255
    n_pass = popcount(pass_m)
    if sh.count_zmax:
        at_zmax[bl] -= lowered
        zmax_stale[bl] |= at_zmax[bl] <= 0 or not test_depth
    if phase != PH_SHADE:          # the masks the loop gathered, applied once
        touched[bl] |= cov_m
        k[RC.FRAGMENTS] += n_c
        k[RC.SAMPLES] += n_c
        if test_depth:
            tested[bl] |= cov_m
            k[RC.EARLY_Z_KILLED] += n_c - popcount(pass_m | vis_m)
        written[bl] |= pass_m | vis_m
        k[K_HSR_CANDIDATES] += popcount(vis_m)
    if phase == PH_IMR:
        k[RC.QUADS] += quads_of(cov_m)
    elif phase == PH_SHADE:
        k[RC.QUADS] += quads_of(pass_m)
    k[RC.HELPER_LANES] += 4 * quads_of(pass_m) - n_pass
    k[RC.SHADED] += n_pass
    k[RC.WRITTEN] += n_pass
    if phase == PH_SHADE:
        k[K_HSR_SHADED] += n_pass
    # Lambert on the interpolated normal for every pixel the block shades, in a loop with no
    # branch in its body, which LLVM runs four pixels per instruction: square roots and
    # divisions are most of a fragment's cost. The count is rounded up to whole vectors, the
    # last pixel repeated (the copies are never written): a small triangle's 10-20 pixels
    # otherwise leave up to three to the loop's scalar tail, a pixel per instruction.
    n_vec = (n_sh + SHADE_VEC - 1) // SHADE_VEC * SHADE_VEC
    for j in range(n_sh, n_vec):
        sh_x[j], sh_y[j] = sh_x[n_sh - 1], sh_y[n_sh - 1]
    for j in range(n_vec):
        X = sh_x[j] * SUBPIXEL + SUBPIXEL // 2
        Y = sh_y[j] * SUBPIXEL + SUBPIXEL // 2
        l2 = float(e.A0 * X + e.B0 * Y + e.C0)
        l0 = float(e.A1 * X + e.B1 * Y + e.C1)
        l1 = float(e.A2 * X + e.B2 * Y + e.C2)
        # perspective-correct weights, not normalised: Lambert normalises the normal, which
        # takes their common factor out (one division less)
        p0, p1, p2 = l0 * sh.w0, l1 * sh.w1, l2 * sh.w2
        sr, sg, sb = sh.br, sh.bg, sh.bb
        if sh.lit:
            sr, sg, sb = lambert(sr, sg, sb, p0 * nrm.n00 + p1 * nrm.n10 + p2 * nrm.n20,
                                 p0 * nrm.n01 + p1 * nrm.n11 + p2 * nrm.n21,
                                 p0 * nrm.n02 + p1 * nrm.n12 + p2 * nrm.n22, sh.is_back, light_s)
        sh_r[j] = quantize(sr)
        sh_g[j] = quantize(sg)
        sh_b[j] = quantize(sb)
    for j in range(n_sh):
        fb_color[sh_y[j], sh_x[j], 0, 0] = sh_r[j]
        fb_color[sh_y[j], sh_x[j], 0, 1] = sh_g[j]
        fb_color[sh_y[j], sh_x[j], 0, 2] = sh_b[j]


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _quad_coverage(e, sh, qx, qy, bx0, by0, full, cov_m, n_samples, sample_e, sample_x, sample_y,
                   blk_z, lane_cov, lane_z):
    """The 2x2 quad at (qx, qy): each lane's covered samples (lane_cov) and their depths
    (lane_z); whether any lane is covered. One sample reads the block's mask and depths."""
    if n_samples == 1:
        q = (qy - by0) * BLOCK + qx - bx0
        if (cov_m >> np.uint64(q)) & np.uint64(0x303) == 0:
            return False
        for lane in range(4):
            p = q + (lane >> 1) * BLOCK + (lane & 1)
            lane_cov[lane] = (cov_m >> np.uint64(p)) & np.uint64(1)
            lane_z[lane, 0] = blk_z[p]
        return True
    any_cov = False
    for lane in range(4):
        lx = qx + (lane & 1)
        ly = qy + (lane >> 1)
        cov = 0
        if sh.x0 <= lx < sh.x1 and sh.y0 <= ly < sh.y1:
            X = lx * SUBPIXEL + SUBPIXEL // 2
            Y = ly * SUBPIXEL + SUBPIXEL // 2
            e0 = e.A0 * X + e.B0 * Y + e.C0
            e1 = e.A1 * X + e.B1 * Y + e.C1
            e2 = e.A2 * X + e.B2 * Y + e.C2
            for s in range(n_samples):
                f0 = e0 + sample_e[0, s]
                f1 = e1 + sample_e[1, s]
                f2 = e2 + sample_e[2, s]
                if full or (f0 + e.T0 >= 0 and f1 + e.T1 >= 0 and f2 + e.T2 >= 0):
                    z = sh.dzdx * (X + sample_x[s]) + sh.dzdy * (Y + sample_y[s]) + sh.zc
                    if 0.0 <= z <= 1.0:     # the far plane clips per sample
                        cov |= 1 << s
                        lane_z[lane, s] = np.float32(z)
        lane_cov[lane] = cov
        any_cov = any_cov or cov != 0
    return any_cov


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _quad_visibility(sh, qx, qy, tx0, ty0, nbx, n_samples, hsr, k, lane_cov, lane_pass, lane_z,
                     winner, fb_depth, touched, tested, written, zmax_stale):
    """Which samples of each lane go on to shading (lane_pass); returns the lanes that do.
    PH_SHADE: the samples this triangle won in PH_VIS. Otherwise early Z, where the state
    allows it: always with HSR (the tile knows the depth so far, so only fragments in front of
    it are shaded; an alpha-tested one writes its depth after the test), never for an
    alpha-tested fragment on an IMR (alpha test first, then late Z). PH_VIS records the winner
    of each sample and writes its depth."""
    phase, t = sh.phase, sh.t
    n_shade = 0
    for lane in range(4):
        cov = lane_cov[lane]
        lane_pass[lane] = 0
        if cov == 0:
            continue
        lx = qx + (lane & 1)
        ly = qy + (lane >> 1)
        if phase == PH_SHADE:
            passed = 0
            for s in range(n_samples):
                if (cov >> s) & 1 and winner[ly - ty0, lx - tx0, s] == t:
                    passed |= 1 << s
            if passed:
                lane_pass[lane] = passed
                n_shade += 1
            continue
        k[RC.FRAGMENTS] += 1
        b = _block_of(lx, ly, tx0, ty0, nbx)
        touched[b] |= _pixel_bit(lx, ly)
        for s in range(n_samples):
            k[RC.SAMPLES] += (cov >> s) & 1
        if sh.late and not hsr:
            lane_pass[lane] = cov
            n_shade += 1
            continue
        passed = cov
        if sh.test_depth:
            tested[b] |= _pixel_bit(lx, ly)
            passed = depth_test(fb_depth, ly, lx, cov, lane_z, lane, n_samples)
        if passed == 0:
            k[RC.EARLY_Z_KILLED] += 1
        elif phase == PH_VIS:
            k[K_HSR_CANDIDATES] += 1
            written[b] |= _pixel_bit(lx, ly)
            for s in range(n_samples):
                if (passed >> s) & 1:
                    winner[ly - ty0, lx - tx0, s] = t
                    if sh.depth_write:
                        fb_depth[ly, lx, s] = lane_z[lane, s]
                        zmax_stale[b] = True
        else:
            lane_pass[lane] = passed
            n_shade += 1
    return n_shade


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _quad_attributes(e, sh, qx, qy, lane_pass, lane_attr, v_normal, v_uv):
    """The interpolated normal and uv at the shaded lanes' pixel centres into lane_attr (nx, ny,
    nz, u, v); at all four lanes when textured (helper lanes give the derivatives that pick the
    mip level). The normal is weighed as the plain path weighs it."""
    t = sh.t
    for lane in range(4):
        if sh.uniform or (not sh.textured and lane_pass[lane] == 0):
            continue
        X = (qx + (lane & 1)) * SUBPIXEL + SUBPIXEL // 2
        Y = (qy + (lane >> 1)) * SUBPIXEL + SUBPIXEL // 2
        l2 = float(e.A0 * X + e.B0 * Y + e.C0)
        l0 = float(e.A1 * X + e.B1 * Y + e.C1)
        l1 = float(e.A2 * X + e.B2 * Y + e.C2)
        p0, p1, p2 = l0 * sh.w0, l1 * sh.w1, l2 * sh.w2      # perspective-correct weights
        for c in range(3):
            lane_attr[lane, c] = p0 * v_normal[t, 0, c] + p1 * v_normal[t, 1, c] \
                + p2 * v_normal[t, 2, c]
        ps = 1.0 / (p0 + p1 + p2)
        p0, p1, p2 = p0 * ps, p1 * ps, p2 * ps
        for c in range(2):
            lane_attr[lane, 3 + c] = p0 * v_uv[t, 0, c] + p1 * v_uv[t, 1, c] + p2 * v_uv[t, 2, c]


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _quad_texels(sh, lane_pass, lane_attr, tex_levels, tex_n_levels, tex_base, recent, n_recent,
                 tex_addr, n_tex):
    """A textured quad's mip level, from its uv derivatives, and its texel block fetch (at the
    first shaded lane) into tex_addr[n_tex] unless among the triangle's last TEX_RECENT in this
    tile (the texture L1's reach). Returns (level, n_recent, n_tex)."""
    level = mip_level(tex_levels, tex_n_levels, sh.ti, lane_attr[1, 3] - lane_attr[0, 3],
                      lane_attr[1, 4] - lane_attr[0, 4], lane_attr[2, 3] - lane_attr[0, 3],
                      lane_attr[2, 4] - lane_attr[0, 4])
    first = 0
    while lane_pass[first] == 0:
        first += 1
    addr = texel_block_address(tex_levels, tex_base, sh.ti, level, lane_attr[first, 3],
                               lane_attr[first, 4])
    seen = False
    for j in range(min(n_recent, TEX_RECENT)):
        if recent[j] == addr:
            seen = True
    if not seen:
        recent[n_recent % TEX_RECENT] = addr
        n_recent += 1
        tex_addr[n_tex] = addr
        n_tex += 1
    return level, n_recent, n_tex


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _quad_shade_rop(sh, qx, qy, tx0, ty0, nbx, n_samples, hsr, level, alpha_cutoff, light_s, k,
                    lane_pass, lane_z, lane_attr, rgba, texel, tex_data, tex_levels, fb_color,
                    fb_depth, fb_shaded, tested, written, zmax_stale):
    """Shade the quad's passing lanes (base colour x texture, then Lambert; a uniform triangle's
    colour is in rgba already) and send them through the ROP: the alpha test and late Z of an
    alpha-tested fragment, then depth and colour writes, blended or not."""
    for lane in range(4):
        passed = lane_pass[lane]
        if passed == 0:
            continue
        lx = qx + (lane & 1)
        ly = qy + (lane >> 1)
        if not sh.uniform:
            sr, sg, sb, sa = sh.br, sh.bg, sh.bb, sh.ba
            if sh.textured:
                sample_bilinear(tex_data, tex_levels, sh.ti, level, lane_attr[lane, 3],
                                lane_attr[lane, 4], texel)
                sr, sg, sb, sa = sr * texel[0], sg * texel[1], sb * texel[2], sa * texel[3]
            if sh.lit:
                sr, sg, sb = lambert(sr, sg, sb, lane_attr[lane, 0], lane_attr[lane, 1],
                                     lane_attr[lane, 2], sh.is_back, light_s)
            rgba[0], rgba[1], rgba[2], rgba[3] = sr, sg, sb, sa
        k[RC.SHADED] += 1
        if sh.phase == PH_SHADE:
            k[K_HSR_SHADED] += 1
        fb_shaded[ly, lx] += 1
        b = _block_of(lx, ly, tx0, ty0, nbx)
        bit = _pixel_bit(lx, ly)
        if sh.late:
            if rgba[3] < alpha_cutoff:
                k[RC.ALPHA_KILLED] += 1
                continue
            if sh.test_depth and not hsr:
                tested[b] |= bit
                passed = depth_test(fb_depth, ly, lx, passed, lane_z, lane, n_samples)
            if passed == 0:
                k[RC.LATE_Z_KILLED] += 1
                continue
        k[RC.WRITTEN] += 1
        if sh.phase != PH_SHADE:       # PH_VIS recorded this block's requests
            written[b] |= bit
        if sh.blend:
            k[RC.BLENDED] += 1
        write_samples(fb_color, fb_depth, ly, lx, passed, lane_z, lane, n_samples,
                      rgba[0], rgba[1], rgba[2], rgba[3], sh.depth_write, sh.blend)
        zmax_stale[b] |= sh.depth_write


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _flush_events(r, sh, tx0, ty0, nbx, blocks_x, hiz, rejected, tested, written, zmax, at_zmax,
                  zmax_stale, fb_depth, width, height, n_samples, block_off, ev_block, ev_tested,
                  ev_written):
    """Reference r's ROP requests, one event per block of its bounding box it touched, in
    block order: the pixels tested and written (a block HiZ rejected: -(block + 1), an HTILE
    read alone); each block's masks are cleared for the next triangle, and HiZ's farthest depth
    measured again where a write may have lowered it. Returns the events written."""
    n_blk = 0
    blk_base = block_off[r]
    for by in range((sh.y0 - ty0) // BLOCK, (sh.y1 - 1 - ty0) // BLOCK + 1):
        for bx in range((sh.x0 - tx0) // BLOCK, (sh.x1 - 1 - tx0) // BLOCK + 1):
            b = by * nbx + bx
            gb = (ty0 // BLOCK + by) * blocks_x + tx0 // BLOCK + bx
            if rejected[b]:
                ev_block[blk_base + n_blk] = -(gb + 1)
                ev_tested[blk_base + n_blk] = 0
                ev_written[blk_base + n_blk] = 0
                n_blk += 1
                rejected[b] = False
                continue
            if tested[b] == 0 and written[b] == 0:
                continue
            if hiz and zmax_stale[b]:
                zmax[b], at_zmax[b] = block_far(fb_depth, tx0 + bx * BLOCK, ty0 + by * BLOCK,
                                                width, height, n_samples)
                zmax_stale[b] = False
            ev_block[blk_base + n_blk] = gb
            ev_tested[blk_base + n_blk] = tested[b]
            ev_written[blk_base + n_blk] = written[b]
            n_blk += 1
            tested[b] = 0
            written[b] = 0
    return n_blk


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _store_counts(cnt, k, touched, flushes):
    """Add a tile's counts to its row (cnt): k's, the pixels its fragments reached, the HSR
    kills (fragments early Z passed in deferred runs less those shaded) and why its deferred
    runs ended."""
    for j in range(RC.N):
        cnt[j] += k[j]
    covered = 0
    for b in range(touched.shape[0]):
        covered += popcount(touched[b])
    cnt[RC.PIXELS_COVERED] += covered
    cnt[RC.HSR_KILLED] += k[K_HSR_CANDIDATES] - k[K_HSR_SHADED]
    cnt[RC.HSR_FLUSH_MASK] += flushes[FLUSH_MASK]
    cnt[RC.HSR_FLUSH_BLEND] += flushes[FLUSH_BLEND]
    cnt[RC.HSR_FLUSH_PARTIAL] += flushes[FLUSH_PARTIAL]


@njit(cache=True, nogil=True, error_model="numpy")
def rasterize_tile(i, job, n_samples, counters):
    """Tile i of `job` (RasterJob): its references in the schedule's order, each set up and
    walked block by block; its counts added to counters[i]."""
    # Unpack the structs once: an array taken out of a tuple inside the loop is ref-counted
    # every time, which costs more than the edge tests.
    tris, bins, mat, tex, fb, ev, target = (job.tris, job.bins, job.mat, job.tex, job.fb,
                                            job.events, job.target)
    light, hsr, hiz, zskip, chunk = job.light, job.hsr, job.hiz, job.zskip, job.chunk
    vx, vy, _, v_inv_w, v_normal, v_uv, back, zplane, draw, _ = tris
    tile, tiles_x, tile_offsets, ref_tri = bins.tile, bins.tiles_x, bins.tile_offsets, bins.ref_tri
    base_color, texture, alpha_mode, alpha_cutoff, unlit, depth_test_d, depth_write_d, blend_d = mat
    tex_data, tex_levels, tex_n_levels, tex_base = tex
    fb_color, fb_depth, fb_shaded = fb
    block_off, n_block, ev_block, ev_tested, ev_written, tex_off, n_tex_out, tex_addr = ev
    width, height, _, sample_x, sample_y = target
    tx0 = (i % tiles_x) * tile
    ty0 = (i // tiles_x) * tile
    reach = 0                            # farthest sample from its pixel centre, subpixels
    for s in range(n_samples):
        reach = max(reach, abs(sample_x[s]), abs(sample_y[s]))
    nbx = tile // BLOCK
    blocks_x = (width + BLOCK - 1) // BLOCK
    # Per 8x8 block of the tile: the pixels a fragment reached, and the current triangle's
    # tested and written pixels (its events).
    touched = np.zeros(nbx * nbx, np.uint64)
    tested = np.zeros(nbx * nbx, np.uint64)
    written = np.zeros(nbx * nbx, np.uint64)
    # Hierarchical Z (HTILE-like): the farthest depth in each 8x8 block of the tile. A block a
    # triangle cannot come nearer than is rejected before any per-pixel work.
    zmax = np.ones(nbx * nbx, np.float32)
    # zmax changes only when a write lowers the last sample that held it (LESS only lowers
    # depths): the samples at zmax are counted, the plain path counts down those it lowers,
    # and a block is measured again only when none is left (or after any other kind of
    # write). A block that still shows background has many samples at its farthest depth, so
    # most depth-writing triangles leave zmax as it is.
    at_zmax = np.zeros(nbx * nbx, np.int64)
    zmax_stale = np.zeros(nbx * nbx, np.bool_)
    rejected = np.zeros(nbx * nbx, np.bool_)
    if hiz:
        for b in range(nbx * nbx):
            zmax[b], at_zmax[b] = block_far(fb_depth, tx0 + (b % nbx) * BLOCK,
                                            ty0 + (b // nbx) * BLOCK, width, height, n_samples)
    zbound = np.full(nbx * nbx, -1.0, np.float32)   # _depth_bound_fails's; -1: not read yet
    recent = np.empty(TEX_RECENT, np.int64)
    sh_x = np.empty(BLOCK * BLOCK, np.int64)       # pixels a block shades (_fill_block), and
    sh_y = np.empty(BLOCK * BLOCK, np.int64)       # their colours
    sh_r = np.empty(BLOCK * BLOCK, np.uint8)
    sh_g = np.empty(BLOCK * BLOCK, np.uint8)
    sh_b = np.empty(BLOCK * BLOCK, np.uint8)
    blk_z = np.empty(BLOCK * BLOCK, np.float32)    # one sample: each pixel's depth
    sample_e = np.empty((3, n_samples), np.int64)
    lane_cov = np.empty(4, np.int64)
    lane_pass = np.empty(4, np.int64)
    lane_z = np.empty((4, n_samples), np.float32)
    lane_attr = np.empty((4, 5))         # nx, ny, nz, u, v at each lane's pixel centre
    rgba = np.empty(4)
    texel = np.empty(4)
    light_s = (light[0], light[1], light[2], light[3], light[4], light[5], light[6], light[7],
               light[8])
    k = np.zeros(K_N, np.int64)          # the tile's counts (RC, K_*), stored once at the end
    # The order the tile's references run in, and why deferred runs ended (raster_schedule).
    flushes = np.zeros(3, np.int64)
    sched = schedule(tile_offsets[i], tile_offsets[i + 1], ref_tri, draw, alpha_mode, blend_d,
                     chunk, hsr, flushes)
    winner = np.full((tile, tile, n_samples) if hsr else (0, 0, 0), -1, np.int64)
    for j in range(sched.shape[0]):
        r, phase = sched[j, 0], sched[j, 1]
        ev_cur, ev_end = block_off[r], block_off[r] + n_block[r]   # PH_VIS's events (PH_SHADE)
        # Shading after HSR at one sample visits just the blocks where PH_VIS left the triangle
        # pixels (its events, in block order), and nothing at all for a triangle that won none.
        # (With HiZ the shading pass still walks the bounding box: its HiZ test counts there.)
        ev_walk = phase == PH_SHADE and n_samples == 1 and not hiz
        t = ref_tri[r]
        if ev_walk and not _holds_a_pixel(winner, t, ev_block, ev_written, ev_cur, ev_end,
                                          blocks_x, tx0, ty0):
            n_tex_out[r] = 0
            continue
        # Without HiZ (whose block test comes before coverage) nothing is counted for a
        # triangle whose box holds no sample.
        if not hiz and _no_sample_in_box(vx, vy, t, reach):
            continue
        d = draw[t]
        depth_write = depth_write_d[d] and phase != PH_SHADE     # PH_VIS wrote it already
        if depth_write and not depth_test_d[d]:      # depths may rise: no bound holds any more
            zbound[:] = 1.0
        textured = texture[d] >= 0
        uniform = _uniform_inputs(textured, unlit[d], v_normal, t)
        u0 = u1 = u2 = np.uint8(0)
        if uniform:
            shade_fragment(base_color, texture, unlit, tex_data, tex_levels, light, d,
                           v_normal[t, 0, 0], v_normal[t, 0, 1], v_normal[t, 0, 2], back[t], 0.0,
                           0.0, 0, rgba)
            u0, u1, u2 = quantize(rgba[0]), quantize(rgba[1]), quantize(rgba[2])
        x0 = max(tx0, min(vx[t, 0], vx[t, 1], vx[t, 2]) >> SUBPIXEL_BITS)
        y0 = max(ty0, min(vy[t, 0], vy[t, 1], vy[t, 2]) >> SUBPIXEL_BITS)
        x1 = min(tx0 + tile, width, (max(vx[t, 0], vx[t, 1], vx[t, 2]) >> SUBPIXEL_BITS) + 1)
        y1 = min(ty0 + tile, height, (max(vy[t, 0], vy[t, 1], vy[t, 2]) >> SUBPIXEL_BITS) + 1)
        late = alpha_mode[d] == MASK_MODE
        count_zmax = hiz and depth_write
        lit = not unlit[d]
        sh = Shading(t, d, phase, late, depth_test_d[d], depth_write, count_zmax, blend_d[d],
                     textured, texture[d], lit, back[t], uniform, u0, u1, u2,
                     float(base_color[d, 0]), float(base_color[d, 1]), float(base_color[d, 2]),
                     float(base_color[d, 3]), zplane[t, 0], zplane[t, 1], zplane[t, 2],
                     v_inv_w[t, 0], v_inv_w[t, 1], v_inv_w[t, 2], x0, y0, x1, y1)
        nrm = CornerNormals(v_normal[t, 0, 0], v_normal[t, 0, 1], v_normal[t, 0, 2],
                            v_normal[t, 1, 0], v_normal[t, 1, 1], v_normal[t, 1, 2],
                            v_normal[t, 2, 0], v_normal[t, 2, 1], v_normal[t, 2, 2])
        e = _edge_setup(vx, vy, t, sample_x, sample_y, n_samples, sample_e)
        # The plain path (_fill_block): opaque, untextured, one sample. (Visibility alone,
        # PH_VIS, reads no texture: textured triangles take it there too.)
        fill_fast = (not textured or phase == PH_VIS) and not sh.late and not sh.blend \
            and n_samples == 1
        n_recent = 0
        n_tex = tex_off[r]                 # the next texel block's slot
        bby0, bbx0 = y0 & ~(BLOCK - 1), x0 & ~(BLOCK - 1)
        n_rows = 1 if ev_walk else max(0, (y1 - bby0 + BLOCK - 1) >> BLOCK_BITS)
        n_cols = ev_end - ev_cur if ev_walk else max(0, (x1 - bbx0 + BLOCK - 1) >> BLOCK_BITS)
        for row in range(n_rows):
            for col in range(n_cols):
                ev_m = np.uint64(0)
                if ev_walk:
                    gb = ev_block[ev_cur + col]
                    ev_m = ev_written[ev_cur + col]
                    if gb < 0 or ev_m == 0:
                        continue
                    by0 = (gb // blocks_x) << BLOCK_BITS
                    bx0 = (gb % blocks_x) << BLOCK_BITS
                else:
                    by0 = bby0 + (row << BLOCK_BITS)
                    bx0 = bbx0 + (col << BLOCK_BITS)
                # the rectangle that holds every sample of the block, subpixels
                rx0 = bx0 * SUBPIXEL + SUBPIXEL // 2 - reach
                rx1 = (bx0 + BLOCK - 1) * SUBPIXEL + SUBPIXEL // 2 + reach
                ry0 = by0 * SUBPIXEL + SUBPIXEL // 2 - reach
                ry1 = (by0 + BLOCK - 1) * SUBPIXEL + SUBPIXEL // 2 + reach
                outside, full = False, True
                if not ev_walk:                   # (an event's block is inside)
                    outside, full = _block_vs_edges(e, rx0, rx1, ry0, ry1)
                if outside:
                    continue
                bl = ((by0 - ty0) >> BLOCK_BITS) * nbx + ((bx0 - tx0) >> BLOCK_BITS)
                zlo = _plane_near(sh, rx0, rx1, ry0, ry1)
                # HiZ: LESS fails when zlo is not nearer than the block's farthest stored depth
                # (float32 rounding is monotone, so the per-sample test would fail too)
                if hiz and sh.test_depth and zlo >= zmax[bl]:
                    k[RC.HIZ_REJECTED] += 1
                    rejected[bl] = True
                    continue
                tight, zhi = False, 0.0
                if zskip and full and sh.test_depth and not sh.late and phase != PH_SHADE \
                        and bx0 >= x0 and bx0 + BLOCK <= x1 and by0 >= y0 and by0 + BLOCK <= y1:
                    zhi = _plane_far(sh, rx0, rx1, ry0, ry1)
                    fails, tight = _depth_bound_fails(sh, zlo, zhi, bl, bx0, by0, zbound,
                                                      fb_depth, width, height, n_samples)
                    if fails:               # every sample fails: counted as visited
                        tested[bl] = ~np.uint64(0)
                        touched[bl] = ~np.uint64(0)
                        k[RC.FRAGMENTS] += BLOCK * BLOCK
                        k[RC.SAMPLES] += BLOCK * BLOCK * n_samples
                        k[RC.EARLY_Z_KILLED] += BLOCK * BLOCK
                        if phase == PH_IMR:
                            k[RC.QUADS] += BLOCK * BLOCK // 4
                        continue
                # One sample: the block's coverage as a 64-bit mask before any pixel.
                cov_m = np.uint64(0)
                if ev_walk:
                    cov_m = ev_m
                elif phase == PH_SHADE and n_samples == 1:
                    # Shading after HSR: the pixels it can have won are those it passed in
                    # PH_VIS, which that phase left in its events, block by block in this
                    # same order; no coverage to compute again.
                    while ev_cur < ev_end and ev_block[ev_cur] < 0:   # HiZ rejected: none
                        ev_cur += 1
                    if ev_cur < ev_end and ev_block[ev_cur] == (by0 >> BLOCK_BITS) * blocks_x \
                            + (bx0 >> BLOCK_BITS):
                        cov_m = ev_written[ev_cur]
                        ev_cur += 1
                    if cov_m == 0:
                        continue
                elif n_samples == 1:
                    cov_m = _coverage_1x(e, sh, bx0, by0, blk_z)
                    if cov_m == 0:
                        continue
                if fill_fast:
                    _fill_block(e, sh, nrm, cov_m, bx0, by0, bl, tx0, ty0, light_s, k, blk_z,
                                winner, fb_color, fb_depth, fb_shaded, zmax, at_zmax, zmax_stale,
                                touched, tested, written, sh_x, sh_y, sh_r, sh_g, sh_b)
                else:
                    for qy in range(max(by0, y0 & ~1), min(by0 + BLOCK, y1), 2):
                        for qx in range(max(bx0, x0 & ~1), min(bx0 + BLOCK, x1), 2):
                            if not _quad_coverage(e, sh, qx, qy, bx0, by0, full, cov_m,
                                                  n_samples, sample_e, sample_x, sample_y,
                                                  blk_z, lane_cov, lane_z):
                                continue
                            if phase == PH_IMR:
                                k[RC.QUADS] += 1
                            n_shade = _quad_visibility(sh, qx, qy, tx0, ty0, nbx, n_samples,
                                                       hsr, k, lane_cov, lane_pass, lane_z,
                                                       winner, fb_depth, touched, tested,
                                                       written, zmax_stale)
                            if n_shade == 0:
                                continue
                            if phase == PH_SHADE:
                                k[RC.QUADS] += 1
                            k[RC.HELPER_LANES] += 4 - n_shade
                            _quad_attributes(e, sh, qx, qy, lane_pass, lane_attr, v_normal, v_uv)
                            level = 0
                            if textured:
                                level, n_recent, n_tex = _quad_texels(
                                    sh, lane_pass, lane_attr, tex_levels, tex_n_levels,
                                    tex_base, recent, n_recent, tex_addr, n_tex)
                            _quad_shade_rop(sh, qx, qy, tx0, ty0, nbx, n_samples, hsr, level,
                                            alpha_cutoff[d], light_s, k, lane_pass, lane_z,
                                            lane_attr, rgba, texel, tex_data, tex_levels,
                                            fb_color, fb_depth, fb_shaded, tested, written,
                                            zmax_stale)
                if tight:
                    zbound[bl] = min(zbound[bl], np.float32(zhi + 1e-6))
        if phase == PH_SHADE:
            n_tex_out[r] = n_tex - tex_off[r]
            k[RC.TEX_BLOCKS] += n_tex - tex_off[r]
            continue
        n_block[r] = _flush_events(r, sh, tx0, ty0, nbx, blocks_x, hiz, rejected, tested,
                                   written, zmax, at_zmax, zmax_stale, fb_depth, width, height,
                                   n_samples, block_off, ev_block, ev_tested, ev_written)
        if phase == PH_IMR:
            n_tex_out[r] = n_tex - tex_off[r]
            k[RC.TEX_BLOCKS] += n_tex - tex_off[r]
    _store_counts(counters[i], k, touched, flushes)


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def rasterize_tiles(tris, bins, mat, tex, light, fb, events, target, hsr, hiz, zskip, chunk,
                    n_samples, tile_order, counters):
    """The tiles of tile_order in parallel. It takes RasterJob's parts one by one: numba's
    parallel loop hands its free variables to the threads one struct deep (a struct of structs
    fails to compile there), so the job is put together again in the loop, per tile."""
    # The sample count as a compile-time constant (one specialisation each for 1x and 4x): the
    # per-sample loops then unroll, which is worth a fifth of the raster time at 1x.
    literally(n_samples)
    for k in prange(tile_order.shape[0]):
        job = RasterJob(tris, bins, mat, tex, light, fb, events, target, hsr, hiz, zskip, chunk)
        rasterize_tile(tile_order[k], job, n_samples, counters)


# Entry points with the sample count fixed, so that calls from Python find their compiled code
# by argument types (a literal argument would send every call through numba's typing, ~20 ms).
@njit(cache=True, nogil=True, error_model="numpy")
def rasterize_tiles_1x(job, tile_order, counters):
    """The tiles of tile_order of `job` (RasterJob) at one sample per pixel."""
    tris, bins, mat, tex, light, fb, events, target, hsr, hiz, zskip, chunk = job
    rasterize_tiles(tris, bins, mat, tex, light, fb, events, target, hsr, hiz, zskip, chunk, 1,
                    tile_order, counters)


@njit(cache=True, nogil=True, error_model="numpy")
def rasterize_tiles_4x(job, tile_order, counters):
    """... at four."""
    tris, bins, mat, tex, light, fb, events, target, hsr, hiz, zskip, chunk = job
    rasterize_tiles(tris, bins, mat, tex, light, fb, events, target, hsr, hiz, zskip, chunk, 4,
                    tile_order, counters)
