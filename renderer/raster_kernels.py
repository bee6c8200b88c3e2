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
reference, decided before the kernel); its sections are helpers (renderer.raster_sections,
with the rules that keep them free): those per block, quad and pixel inlined, those per tile
and per reference called.
"""
from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

import numpy as np
from numba import get_num_threads, njit, typeof, types

from .atomics import fetch_add
from .binning_kernels import BLOCK
from .block_masks import BLOCK_BITS, block_far, popcount, quads_of
from .geometry_kernels import SUBPIXEL, SUBPIXEL_BITS
from .raster_schedule import (FLUSH_BLEND, FLUSH_MASK, FLUSH_PARTIAL, MASK_MODE, PH_IMR, PH_SHADE,
                              PH_VIS, schedule)
from .raster_sections import (FILL_BLOCK_MIN, block_coverage, block_edges, clear_tile,
                              edge_setup, fill_block, fill_pixels, flush_events, hiz_clear,
                              hiz_init, no_sample_inside, pixels_touched, quad_attributes,
                              quad_coverage, quad_from_mask, quad_rop, quad_shade,
                              quad_visibility, shade_pixels, still_wins)
from .rop import CLEAR_DEPTH, CLEAR_Z
from .rop_kernels import quantize, rgba8_word
from .rop_sizes import RULE_Z_INIT, codec_rules, event_depth_sizes, event_sizes
from .shade_kernels import shade_uniform, texture_lod
from .texture_l1 import L1_SETS, L1_WAYS, texture_walk
from .workers import alongside


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
    TEX_MISSES = 11      # texture L1 misses: the lines it asks L2 for (memory events)
    HSR_KILLED = 12      # fragments that passed the depth test but HSR found hidden: not shaded
    HSR_FLUSH_MASK = 13  # deferred runs cut short by an alpha-tested (punch-through) triangle
    HSR_FLUSH_BLEND = 14 # ... and by a blended one
    HSR_FLUSH_PARTIAL = 15  # ... and by a partial render (the parameter buffer filled up)
    HIZ_REJECTED = 16    # (triangle, 8x8 block) pairs hierarchical Z rejected whole
    TEXELS = 17          # texels the filters read: 4 a lane and level of each textured quad
    TEX_LOOKUPS = 18     # texture L1 lookups: the distinct lines of each quad's footprint
    TEX_HITS = 19        # ... that hit
    TEX_OVERFLOW = 20    # misses past a reference's event capacity (none; renderer.raster
                         # raises if any): not a counter, so not in COUNTER_NAMES
    N = 21


COUNTER_NAMES = ["raster.fragments", "raster.samples_covered", "raster.quads",
                 "raster.helper_lanes", "raster.early_z_killed", "raster.late_z_killed",
                 "raster.alpha_killed", "raster.shaded", "raster.blended", "raster.written",
                 "raster.pixels_covered", "raster.texture_l1_misses", "raster.hsr_killed",
                 "tile.hsr_flush.punch_through", "tile.hsr_flush.blend",
                 "tile.hsr_flush.partial_render", "raster.hiz_rejected_blocks",
                 "raster.texels", "raster.texture_l1_lookups", "raster.texture_l1_hits"]


NO_CODEC = codec_rules()     # RopEvents.rules of a pass that compresses nothing (sizes empty)


class RasterJob(NamedTuple):
    """One pass's raster work (renderer.raster.Raster makes it)."""
    tris: tuple            # geometry.SetupTriangles
    bins: tuple            # binning.TileBins
    mat: tuple             # shade.Materials, per draw
    tex: tuple             # shade.TextureTable: the textures and the L1 they are read through
    light: np.ndarray      # float64 (9,) shade.light_vector
    fb: tuple              # rop.Framebuffer: colour, depth, shaded counts, the tiles' clear
    events: tuple          # raster.RopEvents, filled here
    target: tuple          # raster.RasterView: size and sample positions (not `view`: numba
                           # takes any .view for ndarray.view)
    hsr: bool              # deferred runs: visibility resolved before shading (raster_schedule)
    hiz: bool              # hierarchical Z: reject 8x8 blocks by their farthest stored depth
    zskip: bool            # the simulator's own depth bound per block (raster.Z_SKIP)
    chunk: np.ndarray      # int64 per triangle: its partial-render chunk
    costs: bool            # record the events and run the texture L1 (False: the image alone,
                           # for pipelines.picture; the counts of misses and lookups then stay 0)


@njit(cache=True, nogil=True, error_model="numpy")
def rasterize_tile(tile_order, cursor, tris, bins, mat, tex, light, fb, ev, view, n_samples,
                   hsr, hiz, zskip, chunk, costs, quads, counters):
    """The tiles of a pass (RasterJob's parts, which tile_kernel below passes it) in
    tile_order, each taken in turn from cursor[0] (shared with the other threads doing the same
    order) until none is left. Tile i: its references in the schedule's order
    (raster_schedule), each set up once and walked 8x8 block by block; its counts added to
    counters[i].

    Per reference: the HSR shading phase's early out (still_wins), the setup (no_sample_inside,
    edge_setup, the uniform colour), then per block the edge test (block_edges), HiZ and the
    depth bound, coverage (block_coverage), and either the plain fill path (fill_pixels,
    shade_pixels) or the quad path (quad_from_mask / quad_coverage, quad_visibility: early Z
    and the HSR phases, quad_attributes, the textured quad's uvs recorded, quad_shade,
    quad_rop); then the recorded quads' footprints through the texture L1
    (texture_l1.texture_walk) and the events (flush_events). The per-block and per-quad sections
    are inlined helpers (raster_sections says how they keep the one-body kernel's code: on spheres,
    dragon, sponza, spot, foliage and spheres 4x at 1080p the split and the one-body kernel
    measured within noise of each other, with the same instruction count to 0.5% and the same
    38 reference increments); those per tile and per reference are called.
    It takes the job's parts, not the job: opening a struct of structs per tile measured 5%
    (74-79 ms against 78-84). And it takes its tiles in a loop of its own, so that it opens
    those parts and makes its scratch once a thread rather than once a tile.

    `quads` is None for a pass none of whose draws can leave the plain path (quad_path below):
    numba prunes the branches on it before typing, so that kernel compiles without the quad path
    and the texture L1, which it would never run."""
    # Unpack the structs once: an array taken out of a tuple inside the loop is ref-counted
    # every time, which costs more than the edge tests.
    vx, vy, _, v_inv_w, v_normal, v_uv, back, zplane, draw, _ = tris
    tile, tiles_x, tile_offsets, ref_tri = bins.tile, bins.tiles_x, bins.tile_offsets, bins.ref_tri
    base_color, texture, alpha_mode, alpha_cutoff, unlit, depth_test_d, depth_write_d, blend_d = mat
    tex_data, tex_levels, tex_n_levels, _, _, tex_sampler, tex_l1 = tex
    fb_color, fb_depth, fb_shaded, fb_clear = fb
    (block_off, n_block, ev_block, ev_tested, ev_written, tex_off, n_tex_out, tex_addr, ev_size,
     ev_zsize, rules) = ev
    width, height, _, sample_x, sample_y = view
    reach = 0                            # farthest sample from its pixel centre, subpixels
    for s in range(n_samples):
        reach = max(reach, abs(sample_x[s]), abs(sample_y[s]))
    nbx = tile // BLOCK
    blocks_x = (width + BLOCK - 1) // BLOCK
    # The per-tile state and scratch, made once for all the tiles this thread takes and set
    # afresh at each (below): made per tile, with the structs above opened per tile, they were
    # some thirty allocations and fifty reference-count pairs a tile, atomics on counts the
    # other raster thread was changing too (NRT_incref/decref 3.5% of sponza's samples)
    touched = np.empty(nbx * nbx, np.uint64)     # pixels a fragment reached, per 8x8 block
    zmax = np.empty(nbx * nbx, np.float32)
    at_zmax = np.empty(nbx * nbx, np.int64)
    zmax_stale = np.empty(nbx * nbx, np.bool_)
    rejected = np.empty(nbx * nbx, np.bool_)
    zplanes = np.empty(nbx * nbx, np.int64)
    zbound = np.empty(nbx * nbx, np.float32)
    tested = np.empty(nbx * nbx, np.uint64)
    written = np.empty(nbx * nbx, np.uint64)
    # The targets flat (clear_tile's, fill_block's): an RGBA8 word a sample (DCC's too), a depth
    # a sample, a shaded count a pixel
    fb_words = fb_color.reshape(fb_color.size).view(np.uint32)
    depth_px, shaded_px = fb_depth.reshape(fb_depth.size), fb_shaded.reshape(fb_shaded.size)
    # A block no fragment has reached since clear_tile holds the clear depth at every sample:
    # its bound is what block_far would find there (its walk keeps the max from 0), -1 if the
    # pass loads its depth.
    z_cleared = np.float32(max(fb_clear[CLEAR_Z], 0.0) if fb_clear[CLEAR_DEPTH] else -1.0)
    l1_tags = np.empty(tex_l1[L1_SETS] * tex_l1[L1_WAYS], np.int64)
    l1_stamps = np.empty(tex_l1[L1_SETS] * tex_l1[L1_WAYS], np.int64)
    # A reference's textured quads as the raster shades them, for texture_walk after it: each
    # one's lanes' u and v, and its level and levels (1, or 2 for trilinear); a reference's
    # quads lie in the tile. Then texture_walk's scratch: a quad's lines, the quad before's.
    quad_uv = np.empty((tile * tile // 4, 8))
    quad_level = np.empty((tile * tile // 4, 2), np.int64)
    quad_lines = np.empty(32, np.int64)
    last_lines = np.empty(32, np.int64)
    sh_x = np.empty(BLOCK * BLOCK, np.int32)       # pixels a block shades (fill_fast), and
    sh_y = np.empty(BLOCK * BLOCK, np.int32)       # their colours
    sh_word = np.empty(BLOCK * BLOCK, np.uint32)
    blk_z = np.empty(BLOCK * BLOCK, np.float32)    # fill_fast: each pixel's depth
    A = np.empty(3, np.int64)
    B = np.empty(3, np.int64)
    C = np.empty(3, np.int64)
    bias = np.empty(3, np.int64)
    sample_e = np.empty((3, n_samples), np.int64)
    lane_cov = np.empty(4, np.int64)
    lane_pass = np.empty(4, np.int64)
    lane_z = np.empty((4, n_samples), np.float32)
    lane_attr = np.empty((5, 4))         # nx, ny, nz, u, v at each lane's pixel centre
    rgba = np.empty(4)
    lane_rgba = np.empty((4, 4))         # r, g, b, a of each lane (quad_shade)
    light_s = (light[0], light[1], light[2], light[3], light[4], light[5], light[6], light[7],
               light[8])
    flushes = np.empty(3, np.int64)
    taken = fetch_add(cursor, 1)
    while taken < tile_order.shape[0]:
        i = tile_order[taken]
        taken = fetch_add(cursor, 1)
        tx0 = (i % tiles_x) * tile
        ty0 = (i // tiles_x) * tile
        touched[:] = 0
        # Hierarchical Z (HTILE-like): the farthest depth in each 8x8 block of the tile. A
        # block a triangle cannot come nearer than is rejected before any per-pixel work.
        zmax[:] = 1.0
        # zmax changes only when a write lowers the last sample that held it (LESS only lowers
        # depths): the samples at zmax are counted, the plain path counts down those it
        # lowers, and a block is measured again only when none is left (or after any other
        # kind of write). A block that still shows background has many samples at its
        # farthest depth, so most depth-writing triangles leave zmax as it is.
        at_zmax[:] = 0
        zmax_stale[:] = False
        rejected[:] = False
        zplanes[:] = rules[RULE_Z_INIT]                  # depth planes each block holds
        clear_tile(fb_words, depth_px, shaded_px, fb_clear, tx0, ty0, tile, width, height,
                   n_samples)
        if hiz:
            if fb_clear[CLEAR_DEPTH]:
                hiz_clear(zmax, at_zmax, np.float32(fb_clear[CLEAR_Z]), tx0, ty0, nbx, width,
                          height, n_samples)
            else:
                hiz_init(zmax, at_zmax, fb_depth, tx0, ty0, nbx, width, height, n_samples)
        # The simulator's own depth bound per 8x8 block (not a modelled unit: it changes no
        # counter, event or pixel; raster.Z_SKIP): no sample of the block holds a depth above
        # it. A block a triangle covers whole and cannot come nearer than the bound fails the
        # depth test at every sample, so its outcome is known without visiting the pixels.
        # LESS only lowers depths, so the bound stays true; a covering, depth-writing triangle
        # tightens it.
        zbound[:] = -1.0                                  # -1: not read from the target yet
        tested[:] = 0
        written[:] = 0
        # The texture L1, cold at the tile's start (texture_l1)
        l1_tags[:] = -1
        l1_stamps[:] = 0
        l1_clock = 0
        # Counters live in registers in the hot loop and are flushed once (pbrt's habit).
        k_fragments = 0
        k_samples = 0
        k_quads = 0
        k_helper_lanes = 0
        k_early_z_killed = 0
        k_late_z_killed = 0
        k_alpha_killed = 0
        k_shaded = 0
        k_blended = 0
        k_written = 0
        k_tex_misses = 0
        k_texels = 0
        k_tex_lookups = 0
        k_tex_hits = 0
        k_tex_overflow = 0
        k_hsr_candidates = 0     # fragments immediate mode would have shaded in deferred runs
        k_hsr_shaded = 0
        k_hiz_rejected = 0
        # The order the tile's references run in, and why deferred runs ended (raster_schedule)
        flushes[:] = 0
        sched = schedule(tile_offsets[i], tile_offsets[i + 1], ref_tri, draw, alpha_mode, blend_d,
                         chunk, hsr, flushes)
        winner = np.full((tile, tile, n_samples) if hsr else (0, 0, 0), -1, np.int64)
        winner_px = winner.reshape(winner.size)          # fill_block's (it runs at one sample only)
        for j in range(sched.shape[0]):
            r, phase = sched[j, 0], sched[j, 1]
            ev_cur, ev_end = block_off[r], block_off[r] + n_block[r]   # PH_VIS's events (PH_SHADE)
            # Shading after HSR at one sample visits just the blocks where PH_VIS left the triangle
            # pixels (its events, in block order), and nothing at all for a triangle that won none.
            # (With HiZ the shading pass still walks the bounding box: its HiZ test counts there.)
            ev_walk = phase == PH_SHADE and n_samples == 1 and not hiz
            t = ref_tri[r]
            if ev_walk:
                # Half the triangles PH_VIS let through on a dense mesh lose all their pixels to
                # later ones: look for one pixel it still holds before any setup (nothing is
                # counted or fetched for a triangle that shades nothing).
                if not still_wins(ev_block, ev_written, winner, ev_cur, ev_end, blocks_x, tx0, ty0,
                                  t):
                    n_tex_out[r] = 0
                    event_sizes(ev_block, ev_written, ev_size, ev_cur, ev_end, fb_words,
                                rules, blocks_x, width, height, n_samples)
                    continue
            if not hiz:
                # No sample inside the triangle's bounding box: it covers nothing, and without HiZ
                # (whose block test comes before coverage) nothing about it is counted. Most
                # triangles of a dense mesh at a viewer's reduced resolution are such.
                if no_sample_inside(vx, vy, t, reach):
                    continue
            d = draw[t]
            late = alpha_mode[d] == MASK_MODE
            test_depth = depth_test_d[d]
            depth_write = depth_write_d[d] and phase != PH_SHADE     # PH_VIS wrote it already
            count_zmax = hiz and depth_write      # the plain path keeps HiZ's at_zmax counts
            blend = blend_d[d]
            textured = texture[d] >= 0
            ti = texture[d]
            br, bg, bb, ba = (float(base_color[d, 0]), float(base_color[d, 1]),
                              float(base_color[d, 2]), float(base_color[d, 3]))
            lit = not unlit[d]
            is_back = back[t]
            if depth_write and not test_depth:      # depths may rise: no bound holds any more
                zbound[:] = 1.0
            # A fragment shader whose inputs are the same at every fragment (no texture, and unlit
            # or one normal at all three vertices: faceted meshes, the analytic layers) has one
            # output per triangle; evaluate it once, as a compiler hoists uniform work.
            uniform = not textured and (unlit[d] or (
                v_normal[t, 0, 0] == v_normal[t, 1, 0] == v_normal[t, 2, 0]
                and v_normal[t, 0, 1] == v_normal[t, 1, 1] == v_normal[t, 2, 1]
                and v_normal[t, 0, 2] == v_normal[t, 1, 2] == v_normal[t, 2, 2]))
            u_word = np.uint32(0)            # fill_block's: as fb_words holds it (little-endian)
            if uniform:
                shade_uniform(base_color, unlit, light, d, v_normal[t, 0, 0], v_normal[t, 0, 1],
                              v_normal[t, 0, 2], back[t], rgba)
                u_word = rgba8_word(quantize(rgba[0]), quantize(rgba[1]), quantize(rgba[2]), 255)
            # The plain path: opaque, untextured, one sample; one colour, or Lambert on the
            # interpolated normal computed right there (the same arithmetic as the general path).
            # (Visibility alone, PH_VIS, reads no texture: textured triangles take it there too.)
            fill_fast = ((not textured or phase == PH_VIS) and not late and not blend
                         and n_samples == 1)
            # ... and its commonest cases, a whole block at once (raster_sections.fill_block): one
            # colour depth tested and written in immediate mode, the visibility pass depth tested
            # and written, one colour shaded after it
            block_fill = fill_fast and (
                (phase == PH_SHADE and uniform)
                or (test_depth and depth_write and (phase == PH_VIS or uniform)))
            n00, n01, n02 = v_normal[t, 0, 0], v_normal[t, 0, 1], v_normal[t, 0, 2]
            n10, n11, n12 = v_normal[t, 1, 0], v_normal[t, 1, 1], v_normal[t, 1, 2]
            n20, n21, n22 = v_normal[t, 2, 0], v_normal[t, 2, 1], v_normal[t, 2, 2]
            edge_setup(vx, vy, t, sample_x, sample_y, n_samples, A, B, C, bias, sample_e)
            # Scalars for the hot loop: LLVM keeps them in registers (array elements it must reload,
            # since it cannot prove the stores to the lane arrays do not alias them).
            A0, A1, A2, B0, B1, B2 = A[0], A[1], A[2], B[0], B[1], B[2]
            C0, C1, C2, T0, T1, T2 = C[0], C[1], C[2], bias[0], bias[1], bias[2]
            edges = (A0, A1, A2, B0, B1, B2, C0, C1, C2)
            normals = (n00, n01, n02, n10, n11, n12, n20, n21, n22)
            uvs = (v_uv[t, 0, 0], v_uv[t, 0, 1], v_uv[t, 1, 0], v_uv[t, 1, 1], v_uv[t, 2, 0],
                   v_uv[t, 2, 1])
            # the same, as float64 with the fill rule's bias in C: every product and sum is a whole
            # number below 2^53 (|A|, |B| < 2^23 subpixels, |X|, |Y| < 2^23), so float64 is exact
            fA0, fA1, fA2 = float(A0), float(A1), float(A2)
            fB0, fB1, fB2 = float(B0), float(B1), float(B2)
            fC0, fC1, fC2 = float(C0 + T0), float(C1 + T1), float(C2 + T2)
            fedges = (fA0, fA1, fA2, fB0, fB1, fB2, float(C0), float(C1), float(C2))  # no bias
            dzdx, dzdy, zc = zplane[t, 0], zplane[t, 1], zplane[t, 2]
            w0, w1, w2 = v_inv_w[t, 0], v_inv_w[t, 1], v_inv_w[t, 2]
            x0 = max(tx0, min(vx[t, 0], vx[t, 1], vx[t, 2]) >> SUBPIXEL_BITS)
            y0 = max(ty0, min(vy[t, 0], vy[t, 1], vy[t, 2]) >> SUBPIXEL_BITS)
            x1 = min(tx0 + tile, width, (max(vx[t, 0], vx[t, 1], vx[t, 2]) >> SUBPIXEL_BITS) + 1)
            y1 = min(ty0 + tile, height, (max(vy[t, 0], vy[t, 1], vy[t, 2]) >> SUBPIXEL_BITS) + 1)
            n_tex = 0
            n_quads_tex = 0                   # textured quads recorded for texture_walk
            # Hierarchical: each 8x8 block of the bbox is first tested against the three edges over
            # a rectangle that holds all its samples; blocks outside an edge are skipped, blocks
            # inside all three skip the per-sample edge tests (llvmpipe's do_block_16 / do_block_4
            # idea).
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
                    rx0 = bx0 * SUBPIXEL + SUBPIXEL // 2 - reach
                    rx1 = (bx0 + BLOCK - 1) * SUBPIXEL + SUBPIXEL // 2 + reach
                    ry0 = by0 * SUBPIXEL + SUBPIXEL // 2 - reach
                    ry1 = (by0 + BLOCK - 1) * SUBPIXEL + SUBPIXEL // 2 + reach
                    outside, full = False, True
                    if not ev_walk:                   # (an event's block is inside)
                        outside, full = block_edges(A, B, C, bias, rx0, rx1, ry0, ry1)
                    if outside:
                        continue
                    bl = ((by0 - ty0) >> BLOCK_BITS) * nbx + ((bx0 - tx0) >> BLOCK_BITS)
                    # nearest the triangle's plane comes within the block
                    zlo = dzdx * (rx0 if dzdx > 0 else rx1) + dzdy * (ry0 if dzdy > 0 else ry1) + zc
                    if hiz and test_depth:
                        # LESS fails when zlo is not nearer than the block's farthest stored depth
                        # (float32 rounding is monotone, so the per-sample test would fail too)
                        if zlo >= zmax[bl]:
                            k_hiz_rejected += 1
                            rejected[bl] = True
                            continue
                    # The triangle covers every sample of the block, none clipped by near or far,
                    # and the depth test runs before shading: the block's outcome depends only on
                    # depth (zskip's bound above). 1e-12 covers float64 rounding between the plane
                    # at the corners and at the samples; float32 rounding is monotone.
                    tight = False
                    if zskip and full and test_depth and not late and phase != PH_SHADE \
                            and bx0 >= x0 and bx0 + BLOCK <= x1 and by0 >= y0 and by0 + BLOCK <= y1:
                        zhi = (dzdx * (rx1 if dzdx > 0 else rx0) + dzdy * (ry1 if dzdy > 0 else ry0)
                               + zc)
                        if zlo > 1e-12 and zhi < 1.0 - 1e-12:
                            if zbound[bl] < 0.0:     # (the clear's, not read back, where it holds)
                                zbound[bl] = (
                                    z_cleared if z_cleared >= 0.0 and touched[bl] == 0 else
                                    block_far(fb_depth, bx0, by0, width, height, n_samples)[0])
                            if zlo - 1e-12 >= zbound[bl]:    # every sample fails: count as visited
                                tested[bl] = ~np.uint64(0)
                                touched[bl] = ~np.uint64(0)
                                k_fragments += BLOCK * BLOCK
                                k_samples += BLOCK * BLOCK * n_samples
                                k_early_z_killed += BLOCK * BLOCK
                                if phase == PH_IMR:
                                    k_quads += BLOCK * BLOCK // 4
                                continue
                            # every sample ends at or below the plane's farthest point in the block
                            tight = depth_write
                    # One sample: the block's coverage as a 64-bit mask (bit y*8+x) before any
                    # pixel.
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
                        cov_m = block_coverage(blk_z, bx0, by0, x0, y0, x1, y1, fA0, fA1, fA2, fB0,
                                               fB1, fB2, fC0, fC1, fC2, dzdx, dzdy, zc)
                        if cov_m == 0:
                            continue
                    if fill_fast or quads is None:       # (None: no draw leaves it)
                        # The common case of opaque triangles with one colour (flat or unlit) or
                        # Lambert on the interpolated normal, at one sample: the covered pixels one
                        # by one, in any order (a triangle's pixels are independent); quads, helper
                        # lanes and fragments counted from the block's masks, as the general path
                        # counts.
                        n_c = popcount(cov_m)
                        if block_fill and (cov_m == ~np.uint64(0) or (
                                n_c >= FILL_BLOCK_MIN and bx0 + BLOCK <= width
                                and by0 + BLOCK <= height)):
                            n_sh = 0
                            pass_m, vis_m, lowered = fill_block(
                                phase, cov_m, blk_z, winner_px, tile, depth_px, shaded_px, fb_words,
                                width, bx0, by0, tx0, ty0, t, u_word, count_zmax, zmax[bl])
                        else:
                            n_sh, pass_m, vis_m, lowered = fill_pixels(
                                cov_m, blk_z, winner_px, tile, depth_px, shaded_px, fb_words, width,
                                sh_x, sh_y, bx0, by0, tx0, ty0, t, phase, test_depth, depth_write,
                                count_zmax, zmax[bl], uniform, u_word)
                        n_pass = popcount(pass_m)
                        if count_zmax:
                            at_zmax[bl] -= lowered
                            zmax_stale[bl] |= at_zmax[bl] <= 0 or not test_depth
                        if phase != PH_SHADE:          # the masks the loop gathered, applied once
                            touched[bl] |= cov_m
                            k_fragments += n_c
                            k_samples += n_c
                            if test_depth:
                                tested[bl] |= cov_m
                                k_early_z_killed += n_c - popcount(pass_m | vis_m)
                            written[bl] |= pass_m | vis_m
                            k_hsr_candidates += popcount(vis_m)
                        if phase == PH_IMR:
                            k_quads += quads_of(cov_m)
                        elif phase == PH_SHADE:
                            k_quads += quads_of(pass_m)
                        k_helper_lanes += 4 * quads_of(pass_m) - n_pass
                        k_shaded += n_pass
                        k_written += n_pass
                        if phase == PH_SHADE:
                            k_hsr_shaded += n_pass
                        # the pixels left to shade, the block's at once (vectorised)
                        shade_pixels(sh_x, sh_y, sh_word, n_sh, fb_words, width, fedges,
                                     (w0, w1, w2), normals, (br, bg, bb), lit, is_back, light_s)
                        if tight:
                            zbound[bl] = min(zbound[bl], np.float32(zhi + 1e-6))
                        continue
                    for qy in range(max(by0, y0 & ~1), min(by0 + BLOCK, y1), 2):
                        for qx in range(max(bx0, x0 & ~1), min(bx0 + BLOCK, x1), 2):
                            if n_samples == 1:           # from the block's mask
                                q = (qy - by0) * BLOCK + qx - bx0
                                if (cov_m >> np.uint64(q)) & np.uint64(0x303) == 0:
                                    continue
                                quad_from_mask(cov_m, blk_z, q, lane_cov, lane_z)
                                any_cov = True
                            else:
                                any_cov = quad_coverage(qx, qy, x0, y0, x1, y1, edges,
                                                        (T0, T1, T2), full, sample_e, sample_x,
                                                        sample_y, dzdx, dzdy, zc, n_samples,
                                                        lane_cov, lane_z)
                            if not any_cov:
                                continue
                            if phase == PH_IMR:
                                k_quads += 1
                            n_shade, n_frag, n_samp, n_early, n_cand = quad_visibility(
                                lane_cov, lane_pass, lane_z, winner, depth_px, width, touched,
                                tested, written, zmax_stale, qx, qy, tx0, ty0, nbx, t, phase, late,
                                hsr, test_depth, depth_write, n_samples)
                            k_fragments += n_frag
                            k_samples += n_samp
                            k_early_z_killed += n_early
                            k_hsr_candidates += n_cand
                            if n_shade == 0:
                                continue
                            if phase == PH_SHADE:
                                k_quads += 1
                            k_helper_lanes += 4 - n_shade
                            if not uniform:
                                quad_attributes(lane_attr, qx, qy, fedges, (w0, w1, w2), normals,
                                                uvs)
                            # The quad's mip level(s) (from its uv derivatives), recorded with its
                            # lanes' uv for the texture L1 (texture_walk, after the reference).
                            level, frac = 0, 0.0
                            if textured:
                                level, frac = texture_lod(tex_levels, tex_n_levels, tex_sampler, ti,
                                                          lane_attr[3, 1] - lane_attr[3, 0],
                                                          lane_attr[4, 1] - lane_attr[4, 0],
                                                          lane_attr[3, 2] - lane_attr[3, 0],
                                                          lane_attr[4, 2] - lane_attr[4, 0])
                                n_lv = 2 if frac > 0.0 else 1
                                if costs:
                                    for lane in range(4):
                                        quad_uv[n_quads_tex, lane] = lane_attr[3, lane]
                                        quad_uv[n_quads_tex, 4 + lane] = lane_attr[4, lane]
                                    quad_level[n_quads_tex, 0] = level
                                    quad_level[n_quads_tex, 1] = n_lv
                                    n_quads_tex += 1
                                k_texels += 16 * n_lv
                            if not uniform:
                                quad_shade(lane_pass, lane_attr, lane_rgba, tex_data, tex_levels,
                                           tex_sampler, textured, ti, level, frac, (br, bg, bb, ba),
                                           lit, is_back, light_s)
                            n_sh, n_hsr_sh, n_alpha, n_late, n_wr, n_blend = quad_rop(
                                lane_pass, lane_z, lane_rgba, rgba, fb_words, depth_px, shaded_px,
                                tested, written, zmax_stale, (qx, qy, tx0, ty0, nbx, width),
                                n_samples, uniform, phase, (late, hsr, test_depth, alpha_cutoff[d],
                                                            blend, depth_write))
                            k_shaded += n_sh
                            k_hsr_shaded += n_hsr_sh
                            k_alpha_killed += n_alpha
                            k_late_z_killed += n_late
                            k_written += n_wr
                            k_blended += n_blend
                    if tight:
                        zbound[bl] = min(zbound[bl], np.float32(zhi + 1e-6))
            if quads is not None and n_quads_tex > 0:
                n_tex, n_look, n_hit, n_over, l1_clock = texture_walk(
                    tex, ti, quad_uv, quad_level, n_quads_tex, l1_tags, l1_stamps, l1_clock,
                    quad_lines, last_lines, tex_addr, tex_off[r],
                    tex_off[r + 1] - tex_off[r])
                k_tex_lookups += n_look
                k_tex_hits += n_hit
                k_tex_overflow += n_over
            if not costs and not hsr:     # the image alone: no events (nothing reads the masks;
                continue                  # HSR's shading phase reads its visibility's events)
            if phase == PH_SHADE:
                n_tex_out[r] = n_tex
                k_tex_misses += n_tex
                # its events (PH_VIS's) get the blocks' DCC sizes now that its pixels are shaded
                event_sizes(ev_block, ev_written, ev_size, block_off[r], ev_end, fb_words,
                            rules, blocks_x, width, height, n_samples)
                continue
            # Flush this triangle's ROP requests, one event per touched block, in block order.
            n_block[r] = flush_events(ev_block, ev_tested, ev_written, block_off[r], rejected,
                                      tested, written, zmax, at_zmax, zmax_stale, fb_depth, x0, y0,
                                      x1, y1, tx0, ty0, nbx, blocks_x, width, height, n_samples,
                                      hiz)
            event_depth_sizes(ev_block, ev_written, ev_zsize, block_off[r],
                              block_off[r] + n_block[r], zplanes, rules, depth_write, tx0, ty0, nbx,
                              blocks_x, n_samples)
            if phase == PH_IMR:
                n_tex_out[r] = n_tex
                k_tex_misses += n_tex
                event_sizes(ev_block, ev_written, ev_size, block_off[r], block_off[r] + n_block[r],
                            fb_words, rules, blocks_x, width, height, n_samples)
        cnt = counters[i]
        cnt[RC.FRAGMENTS] += k_fragments
        cnt[RC.SAMPLES] += k_samples
        cnt[RC.QUADS] += k_quads
        cnt[RC.HELPER_LANES] += k_helper_lanes
        cnt[RC.EARLY_Z_KILLED] += k_early_z_killed
        cnt[RC.LATE_Z_KILLED] += k_late_z_killed
        cnt[RC.ALPHA_KILLED] += k_alpha_killed
        cnt[RC.SHADED] += k_shaded
        cnt[RC.BLENDED] += k_blended
        cnt[RC.WRITTEN] += k_written
        cnt[RC.TEX_MISSES] += k_tex_misses
        cnt[RC.PIXELS_COVERED] += pixels_touched(touched)
        cnt[RC.HSR_KILLED] += k_hsr_candidates - k_hsr_shaded
        cnt[RC.HSR_FLUSH_MASK] += flushes[FLUSH_MASK]
        cnt[RC.HSR_FLUSH_BLEND] += flushes[FLUSH_BLEND]
        cnt[RC.HSR_FLUSH_PARTIAL] += flushes[FLUSH_PARTIAL]
        cnt[RC.HIZ_REJECTED] += k_hiz_rejected
        cnt[RC.TEXELS] += k_texels
        cnt[RC.TEX_LOOKUPS] += k_tex_lookups
        cnt[RC.TEX_HITS] += k_tex_hits
        cnt[RC.TEX_OVERFLOW] += k_tex_overflow


# The entry point: rasterize_tile itself, compiled for a job's argument types with its sample count
# typed as a literal, so that it is a constant in the machine code (its per-sample loops unroll,
# worth a fifth of the raster time at 1x) and called from Python through that compiled code.
# Until 2026-12-06 two kernels held the constant, rasterize_tiles_1x and _4x, each calling
# rasterize_tile with 1 or 4: numba compiled the tile kernel for any count (12 s), then linked it
# into each and LLVM inlined it and optimised it once more for the constant (3.2 s each). A call
# from Python of a literal-typed argument goes through numba.literally, which types the whole call
# again at every call (about 1 s a frame), hence the signature resolved once per job here. Not a
# prange: numba compiles a parallel loop as a function of its own into which it links the tile
# kernel and optimises it once more (6.6 s of the raster module's 28.6 s, one process, empty cache),
# and a prange hands each thread a fixed share.
N_SAMPLES_ARG = 10          # rasterize_tile's argument typed as a literal
QUADS_ARG = 16              # and its `quads` (None: the kernel without its quad path)
_ENTRIES: dict = {}         # type_key of the arguments -> rasterize_tile's compiled entry point


def type_key(value):
    """What numba.typeof(value) depends on, made some fifteen times faster than it (a job's 48
    arrays: 0.05 ms against 0.74, 3% of a 640x360 picture): an array's class, dtype, dimensions,
    layout (C, F or A, as numba's map_layout tells it) and writeability (numba's readonly), a
    tuple's class and items, any other value's numba type itself. Values of one key have one
    type, and values of one type one key (tests/test_raster.py holds it against typeof)."""
    if isinstance(value, np.ndarray):
        flags = value.flags
        layout = "C" if flags.c_contiguous else "F" if flags.f_contiguous else "A"
        return (type(value), value.dtype, value.ndim, layout, flags.writeable)
    if isinstance(value, tuple):
        return (type(value),) + tuple(type_key(v) for v in value)
    return typeof(value)


# The tile kernel without its quad path: a pass of opaque, untextured, unblended draws at one
# sample fills every block on the plain path, so the quad path (quad coverage, visibility,
# attributes, shading, the ROP's samples) and the texture L1's walk never run in it. Given None
# for `quads`, numba prunes them before typing (its dead-branch pruning of a None argument), and
# that kernel compiles in about half the tile kernel's time, without some thirty callees:
# `render triangle`'s kernels one after another in one process, 72.4 -> 56.1 s (2026-12-08).
# Both make the same pixels, counts and events, since the branches pruned are never taken
# there (tests/test_raster.py runs a pass both ways). LEAN off gives every pass the whole
# kernel: a command that draws textured scenes too compiles that one alone
# (pipelines.commands.precompile.choose_variant).
LEAN = True


def plain_draws(textured, alpha_mode, blend) -> bool:
    """Whether draws (one element each: sampling a texture, their alpha mode, blended) all stay
    on the plain path at one sample: the rule quad_path applies to a pass's tables and
    pipelines.commands.precompile.lean_scene to a command's scenes."""
    return not (np.any(textured) or np.any(np.asarray(alpha_mode) == MASK_MODE)
                or np.any(blend))


def quad_path(mat, n_samples: int):
    """rasterize_tile's `quads`: None when LEAN is on and no draw of the pass (mat:
    shade.Materials) can take the quad path, else True."""
    if LEAN and n_samples == 1 and plain_draws(mat.texture >= 0, mat.alpha_mode, mat.blend):
        return None
    return True


def tile_kernel(job: RasterJob, n_samples: int, counters: np.ndarray):
    """rasterize_tile compiled (or loaded from the cache) for `job`'s parts, `n_samples` and the
    counter rows `counters`, as run(tile_order, cursor) for run_tiles' threads: the tiles of
    tile_order (int64), each taken in turn from cursor[0]. The compiled code takes its arguments
    as the types it was compiled for without checking them, so the arrays it is given are made
    here (the job's, counters) or are int64 vectors (tile_order, cursor)."""
    tris, bins, mat, tex, light, fb, events, target, hsr, hiz, zskip, chunk, costs = job
    ints = np.zeros(1, np.int64)
    quads = quad_path(mat, n_samples)
    args = (ints, ints, tris, bins, mat, tex, light, fb, events, target, n_samples, hsr, hiz,
            zskip, chunk, costs, quads, counters)
    key = (type_key(args), n_samples)
    entry = _ENTRIES.get(key)
    if entry is None:
        sig = tuple(types.literal(a) if i == N_SAMPLES_ARG else typeof(a)
                    for i, a in enumerate(args))
        entry = _ENTRIES[key] = rasterize_tile.compile(sig)

    def run(tile_order: np.ndarray, cursor: np.ndarray) -> None:
        entry(np.ascontiguousarray(tile_order, np.int64), cursor, tris, bins, mat, tex, light, fb,
              events, target, n_samples, hsr, hiz, zskip, chunk, costs, quads, counters)
    return run


def run_tiles(run, order: np.ndarray) -> None:
    """run (tile_kernel's) over the tiles of `order` on numba's thread count (NUMBA_NUM_THREADS,
    set_num_threads) at once: this thread and helper threads, each taking the next tile not yet
    taken. A fixed share each (a prange's static schedule) left a thread idle at the end of every
    band of the tiler's raster while the other finished a share slowed by the memory replay on its
    core: three threads on two cores (the raster 74% busy on apple-m3, spheres, 1080p). A tile's
    pixels, events and counter row are its own, so the result is the same whichever thread draws
    it, on any number of threads."""
    n = min(get_num_threads(), len(order))
    cursor = np.zeros(1, np.int64)
    if n <= 1:
        run(order, cursor)
        return
    alongside(run, [(order, cursor)] * n, "raster")
