"""The sections of the tile kernel (renderer.raster_kernels.rasterize_tile), in the order it
runs them: per reference the HSR shading phase's early out and the setup; per 8x8 block the edge
test, coverage and the plain fill path; per 2x2 quad coverage, visibility (early Z and the HSR
phases), attributes, shading and the ROP; per reference the events (their compressed sizes:
renderer.rop_sizes). Those per block, quad and
pixel are inlined into the kernel, those per tile and per reference called; the comment below
says why, and gives the rules that keep the inlined kernel the one-body kernel's code.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .binning_kernels import BLOCK
from .block_masks import BLOCK_BITS, block_far, lowest_bit, popcount
from .geometry_kernels import SUBPIXEL, holds_no_sample
from .inlined import inlined
from .interpolate_kernels import quad_attributes4
from .lambert_kernels import lambert4
from .pow2 import is_pow2
from .quad_filter_kernels import quad_filter4
from .raster_schedule import PH_SHADE, PH_VIS
from .rop import CLEAR_COLOR, CLEAR_DEPTH, CLEAR_SHADED, CLEAR_WORD, CLEAR_Z
from .rop_kernels import depth_test, quantize, rgba8_word, write_samples
from .shade_kernels import (L_HEIGHT, L_OFFSET, L_WIDTH, S_WRAP_S, S_WRAP_T, WRAP_REPEAT,
                            filter_texture, lambert)

SHADE_VEC = 4          # pixels per vector of the plain path's shading loop (AVX2, float64)
# Covered pixels from which a block inside the target takes fill_block (all 64 visited, a select
# each) rather than fill_pixels (the covered ones, a branch each). The raster of city through
# imr-baseline at 1280x720, one thread, two runs each (ms): whole blocks only 20.9, 21.2; from
# 32 pixels 20.3, 19.1; from 16 18.6, 19.4; from 8 20.2, 18.8.
FILL_BLOCK_MIN = 16
# Columns of a block at most, px, that block_coverage covers pixel by pixel rather than with its
# eight-column vector loop. Sponza's picture at 640x360, two threads, against the vector loop
# alone (92dbfb0): 2 -> 1.00x, 3 -> 0.97x, 4 -> 0.93-0.97x, 5 -> 0.97x, 6 -> 0.95x, 8 -> 0.97x.
NARROW = 4


# --- rasterize_tile's sections, in the order it runs them -------------------------------------
# Those that run once per tile or per reference (hiz_init, still_wins, flush_events, rop_sizes'
# event_sizes and event_depth_sizes, pixels_touched) are functions of their own that the kernel
# calls: numba compiles each once, for the 1x and 4x kernels (and shade_uniform) alike, instead
# of copying and typing their IR into every caller (the quad path's shading, quad_shade, and
# texture footprint, texture_l1.quad_footprint, once called too, are inlined now: the copies
# of their arguments cost a textured frame a fifth of its time). Inlined at
# numba's IR level, those eight made up a third of rasterize_tiles_1x's compile time (150 s
# against 102 s alone, on a 2-core machine, bench/bench_cold_start.py), and as calls they take
# no reference counts (their arrays are borrowed) and cost nothing measurable: sponza at 1080p,
# one thread, best raster of 6 frames: 159-165 ms inlined, 149-164 ms called.
# The rest are inlined into it by LLVM (forceinline=True): numba compiles each helper once, as a
# function of its own marked alwaysinline, and the inliner of the kernel's module copies the
# helper's optimised code in before numba prunes the reference counts. Until 2026-12-06 they were
# inlined at numba's IR level (inline="always"), which copies, types and analyses the helper's IR
# again at every call site and then the whole grown kernel pass after pass: the raster module
# compiled in 54.8 s that way and in 33.6 s this way (rasterize_tiles_1x and its callees, in one of
# precompile's two workers, empty cache), with the same 53 increments and 159 decrements in
# rasterize_tile (bench/kernel_ir.py; 54 and 162 since it is compiled for its sample count,
# raster_kernels.tile_kernel) and frames the same or faster (docs/speed.md). Whichever
# inliner, a helper is written so that the compiled tile kernel stays what the one-body kernel was
# (bench/kernel_ir.py prints its instruction and reference-count figures): a helper takes its
# arrays one by one (a struct opened inside it costs its arrays' reference counts per call), calls
# nothing that is not inlined itself (block_far is inlined for this: a call to a function compiled
# apart returns an error status, and on that exit path the pruning gives up; quad_shade_rop,
# inlined around sample_texture's call, kept 14 atomic pairs a quad), and uses every array it takes
# on every path through it (an array whose last use is conditional, or an early return before it,
# leaves its increment and decrement on different paths, where LLVM's pruning of them fails: 2-13
# atomic pairs per block or triangle, measured 5-17% on spheres). The HiZ / depth bound test and
# the texture request stay in the body for that reason: each writes an array on one path only.


@njit(cache=True, nogil=True, error_model="numpy")
def clear_tile(words, depth, shaded, clear, tx0, ty0, tile, width, height, n_samples):
    """The pass's start in the tile's pixels, written as the raster takes the tile up
    (rop.Framebuffer.clear): the clear colour (words: the colour target as one RGBA8 word a
    sample), the clear depth, zero shaded counts, each where `clear` asks for it; the targets
    flat, a row of the tile at a time, contiguous in each (stores LLVM makes vector-wide)."""
    x1, y1 = min(tx0 + tile, width), min(ty0 + tile, height)
    word, z = np.uint32(clear[CLEAR_WORD]), np.float32(clear[CLEAR_Z])
    for y in range(ty0, y1):
        lo, hi = y * width + tx0, y * width + x1          # the row's pixels
        if clear[CLEAR_COLOR]:
            words[lo * n_samples:hi * n_samples] = word
        if clear[CLEAR_DEPTH]:
            depth[lo * n_samples:hi * n_samples] = z
        if clear[CLEAR_SHADED]:
            shaded[lo:hi] = 0


@njit(cache=True, nogil=True, error_model="numpy")
def hiz_init(zmax, at_zmax, fb_depth, tx0, ty0, nbx, width, height, n_samples):
    """Hierarchical Z at the tile's start: each 8x8 block's farthest stored depth and how many
    samples hold it."""
    for b in range(nbx * nbx):
        zmax[b], at_zmax[b] = block_far(fb_depth, tx0 + (b % nbx) * BLOCK,
                                        ty0 + (b // nbx) * BLOCK, width, height, n_samples)


@njit(cache=True, nogil=True, error_model="numpy")
def hiz_clear(zmax, at_zmax, z, tx0, ty0, nbx, width, height, n_samples):
    """hiz_init of a tile whose every sample holds z (clear_tile has just written it): the same
    values, counted instead of read (block_far over 64 equal samples a block, fewer at the
    target's edge)."""
    far = z if z > 0 else np.float32(0.0)       # block_far's walk starts at 0 and keeps the max
    for b in range(nbx * nbx):
        x0, y0 = tx0 + (b % nbx) * BLOCK, ty0 + (b // nbx) * BLOCK
        n = max(0, min(x0 + BLOCK, width) - x0) * max(0, min(y0 + BLOCK, height) - y0)
        zmax[b] = far if n else np.float32(0.0)              # (a block past the edge: none)
        at_zmax[b] = n * n_samples if z >= 0 else 0


@njit(cache=True, nogil=True, error_model="numpy")
def still_wins(ev_block, ev_written, winner, ev_cur, ev_end, blocks_x, tx0, ty0, t):
    """HSR's shading phase: does triangle t still hold a pixel of those its visibility phase
    left in events ev_cur..ev_end? Half the triangles PH_VIS let through on a dense mesh lose
    all their pixels to later ones; nothing is set up, counted or fetched for those."""
    for e in range(ev_cur, ev_end):
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


@inlined
def no_sample_inside(vx, vy, t, reach):
    """No sample position (pixel centres moved by up to `reach` subpixels) lies inside triangle
    t's bounding box: it covers nothing. Most triangles of a dense mesh at a viewer's reduced
    resolution are such."""
    return holds_no_sample(vx[t, 0], vx[t, 1], vx[t, 2], vy[t, 0], vy[t, 1], vy[t, 2], reach)


@inlined
def edge_setup(vx, vy, t, sample_x, sample_y, n_samples, A, B, C, bias, sample_e):
    """Triangle t's integer edge functions E = A x + B y + C (subpixels), the top-left rule's
    bias per edge and each edge's offset at each sample position."""
    for k in range(3):
        ax, ay = vx[t, k], vy[t, k]
        dx, dy = vx[t, (k + 1) % 3] - ax, vy[t, (k + 1) % 3] - ay
        A[k] = -dy
        B[k] = dx
        C[k] = dy * ax - dx * ay
        # Top-left rule, y down, positive area: top edge dy == 0 and dx > 0, left edge dy < 0.
        bias[k] = 0 if (dy < 0 or (dy == 0 and dx > 0)) else -1
        for s in range(n_samples):
            sample_e[k, s] = A[k] * sample_x[s] + B[k] * sample_y[s]


@inlined
def block_edges(A, B, C, bias, rx0, rx1, ry0, ry1):
    """The three edges over the rectangle [rx0, rx1] x [ry0, ry1] (subpixels) that holds all
    samples of an 8x8 block: (outside one edge: skip the block, inside all three: skip the
    per-sample edge tests). llvmpipe's do_block_16 / do_block_4 idea."""
    outside = False
    full = True
    for k in range(3):
        hi = (A[k] * (rx1 if A[k] > 0 else rx0) + B[k] * (ry1 if B[k] > 0 else ry0)
              + C[k] + bias[k])
        lo = (A[k] * (rx0 if A[k] > 0 else rx1) + B[k] * (ry0 if B[k] > 0 else ry1)
              + C[k] + bias[k])
        outside = outside or hi < 0
        full = full and lo >= 0
    return outside, full


@inlined
def block_coverage(blk_z, bx0, by0, x0, y0, x1, y1, fA0, fA1, fA2, fB0, fB1, fB2, fC0, fC1, fC2,
                   dzdx, dzdy, zc):
    """Coverage at one sample of the 8x8 block at (bx0, by0): a 64-bit mask (bit y*8+x) of the
    pixels inside the three edges (float64 edge functions, the fill rule's bias in C: whole
    numbers below 2^53, so exact), the bounding box [x0, x1) x [y0, y1) and the depth range;
    each pixel's depth into blk_z. One loop with no branch in its body: LLVM vectorises it.
    A block the bounding box crosses in at most NARROW columns (most blocks of a dense mesh's
    small triangles) visits just those pixels, one by one: the vector loop's setup and its
    eight columns a row cost more there. The depths outside the box are left as they were."""
    cov_m = np.uint64(0)
    c0, c1 = max(bx0, x0) - bx0, min(bx0 + BLOCK, x1) - bx0
    r0, r1 = max(by0, y0) - by0, min(by0 + BLOCK, y1) - by0
    if c1 - c0 <= NARROW:
        for r in range(r0, r1):
            Y = (by0 + r) * SUBPIXEL + SUBPIXEL // 2
            for c in range(c0, c1):
                X = (bx0 + c) * SUBPIXEL + SUBPIXEL // 2
                z = dzdx * X + dzdy * Y + zc
                p = r * BLOCK + c
                blk_z[np.uint64(p)] = np.float32(z)
                inside = ((fA0 * X + fB0 * Y + fC0 >= 0.0) & (fA1 * X + fB1 * Y + fC1 >= 0.0)
                          & (fA2 * X + fB2 * Y + fC2 >= 0.0) & (0.0 <= z) & (z <= 1.0))
                cov_m |= np.uint64(inside) << np.uint64(p)
        return cov_m
    for p in range(r0 * BLOCK, r1 * BLOCK):
        lx = bx0 + (p & (BLOCK - 1))
        X = lx * SUBPIXEL + SUBPIXEL // 2
        Y = (by0 + (p >> BLOCK_BITS)) * SUBPIXEL + SUBPIXEL // 2
        z = dzdx * X + dzdy * Y + zc
        blk_z[np.uint64(p)] = np.float32(z)      # (unsigned: no wrap-around, no scatter)
        inside = ((x0 <= lx) & (lx < x1) & (fA0 * X + fB0 * Y + fC0 >= 0.0)
                  & (fA1 * X + fB1 * Y + fC1 >= 0.0)
                  & (fA2 * X + fB2 * Y + fC2 >= 0.0) & (0.0 <= z) & (z <= 1.0))
        cov_m |= np.uint64(inside) << np.uint64(p)
    return cov_m


@njit(cache=True, nogil=True, error_model="numpy")
def fill_block(phase, cov_m, blk_z, winner, tile, depth, shaded, words, width, bx0, by0, tx0,
               ty0, t, word, count_zmax, zmax_bl):
    """fill_pixels' common cases on large surfaces (a city, a full-screen quad, a level's walls),
    the covered pixels (cov_m) of a block inside the target, all 64 visited, at one sample per
    pixel: in immediate mode (PH_IMR) a one-colour triangle (`word`, RGBA8 as the colour
    target's uint32 words hold it), depth tested and written;
    visibility (PH_VIS), depth tested and written, the winner recorded; shading after it
    (PH_SHADE) a one-colour triangle where it won. With count_zmax (hierarchical Z's count, as
    fill_pixels) it counts the samples at the block's farthest depth (zmax_bl) that a write
    lowered. Returns (the pixels that passed, the pixels PH_VIS won, the samples lowered from
    zmax_bl). The targets come flat (depth, shaded, words: one element a pixel, row-major at
    `width`; winner: the tile's, row-major at `tile`) and are indexed unsigned (no negative
    index to wrap); each pixel is a select, no branch, in a loop of its own for each phase, and
    the zmax count in a pass of its own (a micro-benchmark of a 1280x768 target's blocks, ms:
    immediate mode 2.32 with the phase tested inside one loop and the count in it, 1.85 so;
    visibility 1.69 against 0.85). An uncovered pixel is written what it holds: the block must
    lie inside the target (a row past its right edge would reach into the next row, another
    tile's). The tile kernel decides once per triangle whether its blocks may come here
    (block_fill), and per block whether they cover enough of it (FILL_BLOCK_MIN)."""
    lowered = 0
    if count_zmax and phase != PH_SHADE:     # (a pass of its own: in the loops below it costs
        for r in range(BLOCK):               # more than the rest of their work)
            at = np.uint64((by0 + r) * width + bx0)
            row_cov = cov_m >> np.uint64(r * BLOCK)
            low_m = np.uint64(0)
            for c in range(BLOCK):
                old = depth[at + np.uint64(c)]
                low_m |= np.uint64((blk_z[r * BLOCK + c] < old) & (old == zmax_bl)) << np.uint64(c)
            lowered += popcount(low_m & row_cov & np.uint64(0xFF))
    m = np.uint64(0)                         # the pixels that passed (PH_VIS: that it won)
    for r in range(BLOCK):
        at = np.uint64((by0 + r) * width + bx0)               # the row's first pixel
        won = np.uint64((by0 + r - ty0) * tile + bx0 - tx0)
        row_cov = cov_m >> np.uint64(r * BLOCK)
        row_m = np.uint64(0)
        if phase == PH_SHADE:
            for c in range(BLOCK):
                i = at + np.uint64(c)
                ok = ((row_cov >> np.uint64(c)) & np.uint64(1) != 0) & \
                    (winner[won + np.uint64(c)] == t)
                shaded[i] += ok
                words[i] = word if ok else words[i]
                row_m |= np.uint64(ok) << np.uint64(c)
        elif phase == PH_VIS:
            for c in range(BLOCK):
                i, w = at + np.uint64(c), won + np.uint64(c)
                old, zf = depth[i], blk_z[r * BLOCK + c]
                ok = ((row_cov >> np.uint64(c)) & np.uint64(1) != 0) & (zf < old)
                depth[i] = zf if ok else old
                winner[w] = t if ok else winner[w]
                row_m |= np.uint64(ok) << np.uint64(c)
        else:
            for c in range(BLOCK):
                i = at + np.uint64(c)
                old, zf = depth[i], blk_z[r * BLOCK + c]
                ok = ((row_cov >> np.uint64(c)) & np.uint64(1) != 0) & (zf < old)
                depth[i] = zf if ok else old
                shaded[i] += ok
                words[i] = word if ok else words[i]
                row_m |= np.uint64(ok) << np.uint64(c)
        m |= row_m << np.uint64(r * BLOCK)
    if phase == PH_VIS:
        return np.uint64(0), m, lowered
    return m, np.uint64(0), lowered


@inlined
def fill_pixels(cov_m, blk_z, winner, tile, depth, shaded, words, width, sh_x, sh_y, bx0, by0, tx0,
                ty0, t, phase, test_depth, depth_write, count_zmax, zmax_bl, uniform, word):
    """The plain path's pixels: the covered pixels of the block (cov_m) one by one, in any order
    (a triangle's pixels are independent): the depth test (or, shading after HSR, whether t
    won the pixel), the depth write, the colour where it is one per triangle (`word`, as
    fill_block); the pixels left to shade into sh_x, sh_y (shade_pixels writes them whole).
    The targets flat and indexed unsigned, as fill_block's (a 3-D index wraps each negative
    subscript: two instructions per axis per access), the colour one word, and the depth
    test's outcome a select, not a branch (b2f82d5: spheres' raster 4-7% faster on one thread).
    Returns (pixels to shade, pixels that passed, pixels PH_VIS won, samples at the block's
    zmax it lowered)."""
    n_sh = 0
    pass_m = np.uint64(0)
    left = cov_m
    vis_m = np.uint64(0)
    lowered = 0
    while left:
        p = lowest_bit(left)
        left &= left - np.uint64(1)
        lx = bx0 + (p & (BLOCK - 1))
        ly = by0 + (p >> BLOCK_BITS)
        i = np.uint64(ly * width + lx)
        w = np.uint64((ly - ty0) * tile + lx - tx0)
        if phase == PH_SHADE:
            ok = winner[w] == t
        else:
            zf, old = blk_z[p], depth[i]      # (no depth read in PH_SHADE)
            ok = zf < old or not test_depth
            if count_zmax:
                lowered += ok & (old == zmax_bl)
            if depth_write:
                depth[i] = zf if ok else old
        bit = np.uint64(ok) << np.uint64(p)
        if phase == PH_VIS:
            winner[w] = t if ok else winner[w]
            vis_m |= bit
            continue
        pass_m |= bit
        shaded[i] += ok
        if uniform:
            words[i] = word if ok else words[i]
        else:                # shaded after the loop, the block's pixels at once
            sh_x[n_sh] = lx
            sh_y[n_sh] = ly
            n_sh += ok
    return n_sh, pass_m, vis_m, lowered


@inlined
def shade_pixels(sh_x, sh_y, sh_word, n_sh, words, width, fedges, inv_w, normals, base, lit,
                 is_back, light_s):
    """The plain path's shading: base colour, Lambert on the interpolated normal where lit, for
    the n_sh pixels (sh_x, sh_y; their RGBA8 words into sh_word), stored into the colour target
    (words: one a pixel, flat at `width`, as fill_pixels'; four byte stores through a 4-D
    index made spheres' raster 10% slower, 7eeea5a). In a loop with no branch in its body,
    which LLVM runs four pixels per instruction: square roots and divisions are most of a
    fragment's cost. The count is rounded up to whole vectors, the last pixel repeated (the
    copies are never written): a small triangle's 10-20 pixels otherwise leave up to three to
    the loop's scalar tail, a pixel per instruction. The edge functions are float64 (fedges:
    A, B and C without the fill rule's bias, as floats; whole numbers below 2^53, so exact, as
    block_coverage's) on int32 pixel coordinates: AVX2 has no vector int64 multiply nor int64
    to float64 conversion, which made each vector of four pixels nine emulated multiplies and
    twelve scalar conversions."""
    A0, A1, A2, B0, B1, B2, C0, C1, C2 = fedges
    w0, w1, w2 = inv_w
    n00, n01, n02, n10, n11, n12, n20, n21, n22 = normals
    br, bg, bb = base
    n_vec = (n_sh + SHADE_VEC - 1) // SHADE_VEC * SHADE_VEC
    for j in range(n_sh, n_vec):
        sh_x[j], sh_y[j] = sh_x[n_sh - 1], sh_y[n_sh - 1]
    for j in range(n_vec):
        X = float(sh_x[j]) * SUBPIXEL + SUBPIXEL // 2
        Y = float(sh_y[j]) * SUBPIXEL + SUBPIXEL // 2
        l2 = A0 * X + B0 * Y + C0
        l0 = A1 * X + B1 * Y + C1
        l1 = A2 * X + B2 * Y + C2
        # perspective-correct weights, not normalised: Lambert normalises the normal, which
        # takes their common factor out (one division less)
        p0, p1, p2 = l0 * w0, l1 * w1, l2 * w2
        sr, sg, sb = br, bg, bb
        if lit:
            sr, sg, sb = lambert(sr, sg, sb, p0 * n00 + p1 * n10 + p2 * n20,
                                 p0 * n01 + p1 * n11 + p2 * n21,
                                 p0 * n02 + p1 * n12 + p2 * n22, is_back, light_s)
        sh_word[j] = rgba8_word(quantize(sr), quantize(sg), quantize(sb), 255)
    for j in range(n_sh):
        words[np.uint64(sh_y[j] * width + sh_x[j])] = sh_word[j]


@inlined
def quad_from_mask(cov_m, blk_z, q, lane_cov, lane_z):
    """One sample: the lanes of the 2x2 quad whose top-left pixel is bit q of the block, from
    its coverage mask and depths (block_coverage's)."""
    for lane in range(4):
        k = q + (lane >> 1) * BLOCK + (lane & 1)
        lane_cov[lane] = (cov_m >> np.uint64(k)) & np.uint64(1)
        lane_z[lane, 0] = blk_z[k]


@inlined
def quad_coverage(qx, qy, x0, y0, x1, y1, edges, bias, full, sample_e, sample_x, sample_y, dzdx,
                  dzdy, zc, n_samples, lane_cov, lane_z):
    """Several samples: each lane's covered samples (bit s) of the 2x2 quad at (qx, qy) inside
    the bounding box [x0, x1) x [y0, y1), the edges (full: the block is inside all three) and
    the depth range, and their depths; False when no sample is covered."""
    A0, A1, A2, B0, B1, B2, C0, C1, C2 = edges
    T0, T1, T2 = bias
    any_cov = False
    for lane in range(4):
        lx = qx + (lane & 1)
        ly = qy + (lane >> 1)
        cov = 0
        if x0 <= lx < x1 and y0 <= ly < y1:
            X = lx * SUBPIXEL + SUBPIXEL // 2
            Y = ly * SUBPIXEL + SUBPIXEL // 2
            e0 = A0 * X + B0 * Y + C0
            e1 = A1 * X + B1 * Y + C1
            e2 = A2 * X + B2 * Y + C2
            for s in range(n_samples):
                f0 = e0 + sample_e[0, s]
                f1 = e1 + sample_e[1, s]
                f2 = e2 + sample_e[2, s]
                if full or (f0 + T0 >= 0 and f1 + T1 >= 0 and f2 + T2 >= 0):
                    z = dzdx * (X + sample_x[s]) + dzdy * (Y + sample_y[s]) + zc
                    if 0.0 <= z <= 1.0:     # the far plane clips per sample
                        cov |= 1 << s
                        lane_z[lane, s] = np.float32(z)
        lane_cov[lane] = cov
        any_cov = any_cov or cov != 0
    return any_cov


@inlined
def quad_visibility(lane_cov, lane_pass, lane_z, winner, depth, width, touched, tested, written,
                    zmax_stale, qx, qy, tx0, ty0, nbx, t, phase, late, hsr, test_depth,
                    depth_write, n_samples):
    """Which covered lanes of the quad go on to shading (lane_pass: their samples): early Z, or
    with HSR the visibility phase (PH_VIS: winners and depth, nothing shaded) and the shading
    phase (PH_SHADE: the samples t won); alpha-tested fragments in immediate mode go on whole
    (alpha test first, then late Z). Returns (lanes to shade, fragments, covered samples,
    fragments early Z killed, fragments PH_VIS let through). depth: the target flat (a depth a
    sample, rows of `width` pixels), indexed unsigned as the winners are (no index to wrap)."""
    n_shade = n_frag = n_samp = n_early = n_cand = 0
    for lane in range(4):
        cov = lane_cov[lane]
        lane_pass[lane] = 0
        if cov == 0:
            continue
        lx = qx + (lane & 1)
        ly = qy + (lane >> 1)
        if phase == PH_SHADE:        # the samples this triangle won
            passed = 0
            for s in range(n_samples):
                if (cov >> s) & 1 and winner[np.uint64(ly - ty0), np.uint64(lx - tx0),
                                             np.uint64(s)] == t:
                    passed |= 1 << s
            if passed:
                lane_pass[lane] = passed
                n_shade += 1
            continue
        n_frag += 1
        b = ((ly - ty0) >> BLOCK_BITS) * nbx + ((lx - tx0) >> BLOCK_BITS)
        bit = np.uint64(1) << np.uint64(((ly & (BLOCK - 1)) << BLOCK_BITS) + (lx & (BLOCK - 1)))
        touched[b] |= bit
        for s in range(n_samples):
            n_samp += (cov >> s) & 1
        if late and not hsr:     # IMR: alpha test first, then late Z
            lane_pass[lane] = cov
            n_shade += 1
            continue
        # Early Z; with HSR also for alpha-tested fragments: the tile knows the depth so far,
        # so only fragments in front of it are shaded (their depth is written after the alpha
        # test).
        passed = cov
        if test_depth:
            tested[b] |= bit
            passed = depth_test(depth, np.uint64((ly * width + lx) * n_samples), cov, lane_z, lane,
                                n_samples)
        if passed == 0:
            n_early += 1
        elif phase == PH_VIS:
            n_cand += 1
            written[b] |= bit
            for s in range(n_samples):
                if (passed >> s) & 1:
                    winner[np.uint64(ly - ty0), np.uint64(lx - tx0), np.uint64(s)] = t
                    if depth_write:
                        depth[np.uint64((ly * width + lx) * n_samples + s)] = lane_z[lane, s]
                        zmax_stale[b] = True
        else:
            lane_pass[lane] = passed
            n_shade += 1
    return n_shade, n_frag, n_samp, n_early, n_cand


@inlined
def quad_attributes(lane_attr, qx, qy, fedges, inv_w, normals, uvs):
    """Normal and uv at the four pixel centres of the quad at (qx, qy), perspective-correct,
    into lane_attr[k, lane] (k: nx, ny, nz, u, v), all four lanes at once
    (interpolate_kernels.quad_attributes4; helper lanes give the derivatives that pick the mip
    level). The edge functions in float64 (fedges, as shade_pixels'); normals and uvs the
    triangle's corners' (float32, nine and six)."""
    quad_attributes4(lane_attr, float(qx * SUBPIXEL + SUBPIXEL // 2),
                     float((qx + 1) * SUBPIXEL + SUBPIXEL // 2),
                     float(qy * SUBPIXEL + SUBPIXEL // 2),
                     float((qy + 1) * SUBPIXEL + SUBPIXEL // 2), fedges, inv_w, normals, uvs)


@inlined
def quad_shade(lane_pass, lane_attr, lane_rgba, tex_data, tex_levels, tex_sampler, textured, ti,
               level, frac, base, lit, is_back, light_s):
    """Shade the quad's passing lanes into lane_rgba[0:4, lane] (r, g, b, a; the other lanes
    get the base colour): base colour x texture (the four lanes' filters at once,
    quad_filter_kernels.quad_filter4, where the sampler allows; else lane by lane, the filter
    inlined), then Lambert on all four lanes at once (lambert_kernels.lambert4). Inlined, and
    calling nothing: a call into a function numba compiled apart leaves a path that returns its
    error status, on which the pruning of reference counts gives up, so a section that spans
    one keeps an atomic pair per array it takes at every run (shading and the ROP in one
    inlined section, around sample_texture's call: 14 pairs a quad, 4-5% of a textured frame
    in bench/perf_kernels.py). Called, it took its six arrays as some fifty words copied to the
    stack a quad (texture_l1.quad_footprint gives what inlining both gained), for no longer
    cold compile (a cold `tilesim report` 71.8 -> 71.3 s)."""
    br, bg, bb, ba = base
    # The four lanes' filters at once where the sampler repeats and the levels' sides are
    # powers of two (quad_filter_kernels: the same colours), else lane by lane.
    top = level + 1 if frac > 0.0 else level
    w0, h0 = tex_levels[ti, level, L_WIDTH], tex_levels[ti, level, L_HEIGHT]
    w1, h1 = tex_levels[ti, top, L_WIDTH], tex_levels[ti, top, L_HEIGHT]
    by_quad = False
    if (textured and tex_sampler[ti, S_WRAP_S] == WRAP_REPEAT
            and tex_sampler[ti, S_WRAP_T] == WRAP_REPEAT
            and is_pow2(w0) and is_pow2(h0) and is_pow2(w1) and is_pow2(h1)):
        live = 0
        for lane in range(4):
            if lane_pass[lane] != 0:
                live |= 1 << lane
        by_quad = quad_filter4(tex_data, lane_attr, lane_rgba, live,
                               (tex_levels[ti, level, L_OFFSET], w0, h0),
                               (tex_levels[ti, top, L_OFFSET], w1, h1), frac, base)
    if not by_quad:
        for lane in range(4):
            sr, sg, sb, sa = br, bg, bb, ba
            if textured and lane_pass[lane] != 0:
                tr, tg, tb, ta = filter_texture(tex_data, tex_levels, tex_sampler, ti, level,
                                                frac, lane_attr[3, lane], lane_attr[4, lane])
                sr, sg, sb, sa = sr * tr, sg * tg, sb * tb, sa * ta
            lane_rgba[0, lane], lane_rgba[1, lane], lane_rgba[2, lane], lane_rgba[3, lane] = (
                sr, sg, sb, sa)
    if lit:
        lambert4(lane_rgba, lane_attr, is_back, light_s)


@inlined
def quad_rop(lane_pass, lane_z, lane_rgba, rgba, words, depth, shaded, tested, written, zmax_stale,
             where, n_samples, uniform, phase, rop):
    """Send the quad's passing lanes to the ROP, each in its colour (quad_shade's lane_rgba, or
    rgba for a uniform triangle): the alpha test and late Z for alpha-tested fragments, then
    blend or write the samples that passed. Returns (shaded, of which after HSR, alpha killed,
    late Z killed, written, blended). The targets flat (words: RGBA8 a sample; depth: a depth a
    sample; shaded: a count a pixel); where: the quad's corner, the tile's and the target's
    width (qx, qy, tx0, ty0, blocks per tile row, width); rop: (alpha-tested, HSR, depth test,
    alpha cutoff, blend, depth write)."""
    qx, qy, tx0, ty0, nbx, width = where
    late, hsr, test_depth, alpha_cutoff, blend, depth_write = rop
    n_shaded = n_hsr_shaded = n_alpha = n_late = n_written = n_blended = 0
    for lane in range(4):
        passed = lane_pass[lane]
        if passed == 0:
            continue
        if uniform:
            sr, sg, sb, sa = rgba[0], rgba[1], rgba[2], rgba[3]
        else:
            sr, sg, sb, sa = lane_rgba[0, lane], lane_rgba[1, lane], lane_rgba[2, lane], \
                lane_rgba[3, lane]
        lx = qx + (lane & 1)
        ly = qy + (lane >> 1)
        n_shaded += 1
        if phase == PH_SHADE:
            n_hsr_shaded += 1
        px = np.uint64(ly * width + lx)
        at = px * np.uint64(n_samples)            # the pixel's first sample
        shaded[px] += 1
        b = ((ly - ty0) >> BLOCK_BITS) * nbx + ((lx - tx0) >> BLOCK_BITS)
        bit = np.uint64(1) << np.uint64(((ly & (BLOCK - 1)) << BLOCK_BITS) + (lx & (BLOCK - 1)))
        if late:
            if sa < alpha_cutoff:
                n_alpha += 1
                continue
            if test_depth and not hsr:
                tested[b] |= bit
                passed = depth_test(depth, at, passed, lane_z, lane, n_samples)
            if passed == 0:
                n_late += 1
                continue
        n_written += 1
        if phase != PH_SHADE:       # PH_VIS recorded this block's requests
            written[b] |= bit
        if blend:
            n_blended += 1
        write_samples(words, depth, at, passed, lane_z, lane, n_samples, sr, sg, sb, sa,
                      depth_write, blend)
        zmax_stale[b] |= depth_write
    return n_shaded, n_hsr_shaded, n_alpha, n_late, n_written, n_blended


@njit(cache=True, nogil=True, error_model="numpy")
def flush_events(ev_block, ev_tested, ev_written, base, rejected, tested, written, zmax, at_zmax,
                 zmax_stale, fb_depth, x0, y0, x1, y1, tx0, ty0, nbx, blocks_x, width, height,
                 n_samples, hiz):
    """A triangle's ROP requests as events from slot `base` on, one per block of its bounding
    box [x0, x1) x [y0, y1) it touched, in block order: the pixels it tested and wrote, or
    -(block + 1) for a block HiZ rejected (an HTILE read, nothing else). Clears the block masks
    and measures HiZ again where a write made it stale. Returns the number of events."""
    n_blk = 0
    for by in range((y0 - ty0) // BLOCK, (y1 - 1 - ty0) // BLOCK + 1):
        for bx in range((x0 - tx0) // BLOCK, (x1 - 1 - tx0) // BLOCK + 1):
            b = by * nbx + bx
            gb = (ty0 // BLOCK + by) * blocks_x + tx0 // BLOCK + bx
            if rejected[b]:
                ev_block[base + n_blk] = -(gb + 1)
                ev_tested[base + n_blk] = 0
                ev_written[base + n_blk] = 0
                n_blk += 1
                rejected[b] = False
                continue
            if tested[b] == 0 and written[b] == 0:
                continue
            if hiz and zmax_stale[b]:
                zmax[b], at_zmax[b] = block_far(fb_depth, tx0 + bx * BLOCK, ty0 + by * BLOCK,
                                                width, height, n_samples)
                zmax_stale[b] = False
            ev_block[base + n_blk] = gb
            ev_tested[base + n_blk] = tested[b]
            ev_written[base + n_blk] = written[b]
            n_blk += 1
            tested[b] = 0
            written[b] = 0
    return n_blk


@njit(cache=True, nogil=True, error_model="numpy")
def pixels_touched(touched):
    """Pixels of the tile a fragment reached (the overdraw denominator)."""
    covered = 0
    for b in range(touched.shape[0]):
        covered += popcount(touched[b])
    return covered
