"""DSBR — AMD's draw-stream binning rasterizer (DESIGN.md §4, seed 000 L733-775): immediate mode
with binning. Geometry runs for the whole screen as on an IMR; primitives are gathered into
batches in submission order (closed at 63 primitives, at a state change, around draws the driver
leaves unbinned, and when the batch's vertices outgrow its parameter-cache allocations:
PA_SC_BINNER_CNTL_1.MAX_ALLOC_COUNT as AMD's PAL driver programs it), and each batch's pixels are processed bin by bin, so colour and depth stay in
the ROP caches while a bin is worked on. The image is the IMR's; only the order the caches see
changes. Bin sizes follow Mesa radeonsi (si_state_binning.c, GFX10+ formula).

Optional deferred shading within a batch (preset batch_deferred_shading): among a binned
batch's opaque primitives only the front-most fragment per pixel is shaded (the raster's HSR
phases, with the batch as the run); blended draws keep their order. Hierarchical Z, fast clear
and the Infinity Cache come from the IMR side (pipelines.arch.imr, the presets).
"""
from __future__ import annotations

import numpy as np

from renderer.binning import RASTER_TILE
from renderer.counters import Counters
from renderer.formats import FORMATS, VERTEX
from scenes.model import AlphaMode

from pipelines.arch import imr
from pipelines.arch.dsbr_kernels import batches, work_binned

FPOVS_PER_BATCH = 63          # primitives per batch, Mesa radeonsi si_emit_dpbb_state
# Vertex attributes a vertex exports to the parameter cache: renderer.formats.VERTEX's fields
# beyond the position (normal, uv), one 16-byte attribute slot each.
ATTRIBUTES_PER_VERTEX = len(VERTEX.names) - 1
# On-chip tag budgets per RB pipe, Mesa radeonsi gfx10_get_bin_sizes (peers.md §2.7)
ZS_TAG_SIZE, ZS_NUM_TAGS = 64, 312
CC_TAG_SIZE, CC_READ_TAGS = 1024, 31
FC_TAG_SIZE, FC_READ_TAGS = 256, 44
MIN_BIN = (128, 64)           # GFX10-11 minimum bin, px
NO_DEPTH_BIN = (512, 512)


def _log2(v: int) -> int:
    return max(int(v), 1).bit_length() - 1


def _bin_from_tags(tag_part: int, cost: int) -> tuple[int, int]:
    """log2 of the pixels the tags can hold, split with the width rounded up."""
    log2_px = _log2(tag_part // max(cost, 1))
    return 1 << ((log2_px + 1) // 2), 1 << (log2_px // 2)


def bin_size(num_rbs: int, num_pipes: int, color_bpe: int, samples: int, depth: bool,
             stencil: bool = False, has_depth_target: bool = True,
             min_bin: tuple[int, int] = MIN_BIN) -> tuple[int, int]:
    """Mesa radeonsi's GFX10+ bin size for one colour target of `color_bpe` bytes per element:
    the colour bin, the FMASK bin (MSAA), the depth bin; the smallest area wins."""
    pipes = max(num_rbs, num_pipes)
    color_part = (CC_READ_TAGS * num_rbs // pipes) * (CC_TAG_SIZE * pipes)
    depth_part = (ZS_NUM_TAGS * num_rbs // pipes) * (ZS_TAG_SIZE * pipes)
    fmask_part = (FC_READ_TAGS * num_rbs // pipes) * (FC_TAG_SIZE * pipes)
    fragments = samples                      # colour fragments = samples (no EQAA)
    mrt = 1 if fragments == 1 else 2         # Mesa: 2 without per-sample shading
    c_color = max(color_bpe * mrt, 1)
    color = _bin_from_tags(color_part, c_color)
    if samples >= 2:                         # FMASK: cFmaskMrt[fragments][samples] for 4x = 4
        c_fmask = {2: 1, 4: 4, 8: 8}[samples]
        if _log2(fmask_part // c_fmask) < _log2(color_part // c_color):
            color = _bin_from_tags(fmask_part, c_fmask)
    color = (max(color[0], min_bin[0]), max(color[1], min_bin[1]))
    if not has_depth_target:
        depth_bin = NO_DEPTH_BIN
    else:
        c_depth = ((5 if depth else 0) + (1 if stencil else 0)) * max(samples, 1)
        d = _bin_from_tags(depth_part, c_depth)
        depth_bin = (max(d[0], min_bin[0]), max(d[1], min_bin[1]))
    return color if color[0] * color[1] < depth_bin[0] * depth_bin[1] else depth_bin


# GFX9 (Vega) bin sizes are table lookups, not a formula: Mesa radeonsi si_state_binning.c
# gfx9_get_color_bin_size / gfx9_get_depth_bin_size, the subtables for 4 RBs per shader engine
# and 4 shader engines (Vega 10). Rows: (first sum, width, height); the last row ends the table
# (its size 0 x 0 means binning off).
GFX9_COLOR_4RB_4SE = ((0, 256, 512), (2, 128, 512), (3, 64, 512), (5, 32, 512), (9, 32, 256),
                      (17, 32, 128), (33, 0, 0))
GFX9_DEPTH_4RB_4SE = ((0, 512, 512), (4, 256, 512), (7, 128, 512), (13, 64, 512), (25, 32, 512),
                      (49, 32, 256), (97, 16, 128), (193, 0, 0))


def _lookup(table, total: int) -> tuple[int, int]:
    for (start, w, h), (nxt, _, _) in zip(table, table[1:]):
        if start <= total < nxt:
            return w, h
    return 0, 0


def gfx9_bin_size(color_bpe: int, samples: int, depth: bool) -> tuple[int, int]:
    """Vega 10's bin: colour key = bytes per pixel x (2 under MSAA without per-sample shading),
    depth key = 4 x 5 x samples; the smaller area wins; (0, 0) turns binning off."""
    color = _lookup(GFX9_COLOR_4RB_4SE, color_bpe * (2 if samples >= 2 else 1))
    depth_bin = _lookup(GFX9_DEPTH_4RB_4SE, 4 * 5 * samples) if depth else (512, 512)
    return color if color[0] * color[1] < depth_bin[0] * depth_bin[1] else depth_bin


def render(scene, preset, width: int, height: int, samples: int = 1,
           frontend: str | None = None, passes=None):
    """`frontend`: the geometry front end (renderer.frontend), None for the preset's.
    `passes`: the render passes to run (the frame graph's), default `scene.frame(samples)`."""
    stats = Counters()

    def order(prim_tri_off, geo, bins, ref_tile, tris, rp, mat, preset):
        prim_draw = geo.prim_draw()
        n_rbs, n_pipes = int(preset.binning.num_rbs.value), int(preset.binning.num_l2_channels.value)
        bpe = FORMATS[rp.color.format].bytes_per_sample
        if preset.binning.bin_table.value == "gfx9":
            size = gfx9_bin_size(bpe, rp.samples, rp.depth is not None)
        else:
            size = bin_size(n_rbs, n_pipes, bpe, rp.samples, depth=rp.depth is not None,
                            has_depth_target=rp.depth is not None,
                            min_bin=(MIN_BIN[0], int(preset.binning.min_bin_height.value)))
        if preset.binning.bin_size is not None:        # a user's fixed bin: --set dsbr.bin=WxH
            size = tuple(int(v) for v in str(preset.binning.bin_size.value).split("x"))
        bin_off = size[0] == 0 or size[1] == 0          # Mesa: a bin size of 0 disables DPBB
        # The raster's 64-px tiles are the unit the work list moves: narrower bins are widened.
        stats.add("dsbr.bin_widened", int(size[0] < RASTER_TILE or size[1] < RASTER_TILE))
        size = (max(size[0], RASTER_TILE), max(size[1], RASTER_TILE))
        # Mesa turns binning off where it "is believed to be inefficient": more than 4 RBs, a
        # pixel shader that can kill (alpha test), depth writes on.
        kill = np.array([d.material.alpha_mode == AlphaMode.MASK for d in rp.draws], np.bool_)
        off = (n_rbs > 4) & kill & mat.depth_write & (rp.depth is not None)
        binned = ~off if preset.binning.binning.value and not bin_off else np.zeros(len(rp.draws), np.bool_)
        key = (mat.depth_test.astype(np.int64) | mat.depth_write.astype(np.int64) << 1
               | mat.blend.astype(np.int64) << 2 | mat.alpha_mode.astype(np.int64) << 3)
        starts, batch_binned, breaks = batches(prim_tri_off, prim_draw, key, binned, FPOVS_PER_BATCH,
                                               geo.indices, ATTRIBUTES_PER_VERTEX,
                                               int(preset.binning.max_alloc_count.value))
        # Every raster tile (64 px) lies in one bin: bins are multiples of 64 px.
        tiles_per_bin_x, tiles_per_bin_y = size[0] // RASTER_TILE, size[1] // RASTER_TILE
        bins_x = -(-bins.tiles_x // tiles_per_bin_x)
        tile = np.arange(bins.n_tiles)
        tile_bin = ((tile // bins.tiles_x) // tiles_per_bin_y) * bins_x \
            + (tile % bins.tiles_x) // tiles_per_bin_x
        for name, value in (("dsbr.bin_width", size[0]), ("dsbr.bin_height", size[1]),
                            ("dsbr.batches", len(starts) - 1),
                            ("dsbr.batches_binned", int(batch_binned.sum())),
                            ("dsbr.batch_break.primitive_limit", int(breaks[0])),
                            ("dsbr.batch_break.state_change", int(breaks[1])),
                            ("dsbr.batch_break.alloc_budget", int(breaks[2])),
                            ("dsbr.fallback.ps_kill_depth_write", int(off.sum()) if preset.binning.binning.value else 0),
                            ("dsbr.fallback.binning_off", 0 if preset.binning.binning.value else len(rp.draws)),
                            ("dsbr.fallback.bin_size_zero", len(rp.draws) if bin_off and preset.binning.binning.value else 0)):
            stats.add(name, value)
        work = work_binned(prim_tri_off, bins.tri_offsets, bins.ref_slot, ref_tile, tile_bin,
                           starts, batch_binned)
        if not preset.binning.batch_deferred_shading.value:
            return work, None
        # Deferred shading within a batch: a binned batch's opaque fragments are shaded only
        # where front-most among the batch; an unbinned batch's triangles stand alone.
        batch_of_prim = np.repeat(np.arange(len(starts) - 1), np.diff(starts))
        group = np.where(batch_binned[batch_of_prim], batch_of_prim, len(starts) + np.arange(len(prim_draw)))
        return work, group[tris.prim].astype(np.int64)

    result = imr.render(scene, preset, width, height, samples, work_order=order, frontend=frontend,
                        passes=passes)
    result.counters = result.counters + stats
    return result
