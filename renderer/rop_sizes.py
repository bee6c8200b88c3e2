"""What each block the ROP leaves costs compressed: the DCC payload of its colour and the
HTILE-style planes of its depth, as the raster flushes a triangle's events (raster_kernels calls
event_sizes and event_depth_sizes per reference) and, for a pass that shows an earlier
attachment's image, once over all its events (resize_events). codec_rules packs a pass's rules
for them. Their byte rules are renderer.compression's; tests/test_compression_frame.py holds
both to slow twins.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .binning_kernels import BLOCK
from .block_ranges import edge_range, rgba8_range, unpack
from .compression.codecs import DCC_BLOCK, DCC_SECTOR
from .compression.codecs_kernels import bit_length, granular_bytes
from .compression.depth_kernels import planes_bytes

# Colour: the rules of renderer.compression's DCC for one 256 B block of RGBA8 (8x8 pixels of
# one sample): a fast-cleared or constant block (0/1 per channel, DCC_CONSTANT_ENCODE) costs its
# key only; otherwise one delta group (per channel a 4-bit width and an 8-bit base, then 64
# deltas) in 64 B sectors, stored raw when that reaches the raw 256 B or passes the generation's
# largest compressed block. Depth: HTILE-style plane tracking (renderer.compression.depth's byte
# rules): a block starts cleared (no planes: its HTILE word alone) or unknown (raw, a loaded
# depth); a depth write that covers the whole block leaves one plane, a partial one adds its
# triangle's plane to those the block holds; more planes than the format keeps is raw. The ROP
# knows the planes it writes, as HTILE's does; it never learns that a plane it wrote is gone
# (only a covering write resets them). tests/test_compression_frame.py holds both to slow twins.
(RULE_DCC_MAX_BLOCK, RULE_HAS_CLEAR, RULE_CLEAR, RULE_Z_MAX_PLANES, RULE_Z_INIT, RULE_Z_PLANE_BYTES,
 RULE_Z_GRANULE, RULES_N) = 0, 1, 2, 6, 7, 8, 9, 10


def codec_rules(dcc_max_block: int = 0, clear=None, z_max_planes: int = 0, z_cleared: bool = True,
                z_plane_bytes: int = 24, z_granule: int = 32) -> np.ndarray:
    """The int64 (RULES_N,) array of RopEvents.rules: DCC's largest compressed block and the
    pass's fast-clear colour (RGBA8) if any; the depth codec's planes per block (0: depth is
    not compressed), whether the pass starts from a cleared depth, and its plane and granule
    bytes (renderer.compression.depth)."""
    out = np.zeros(RULES_N, np.int64)
    out[RULE_DCC_MAX_BLOCK] = dcc_max_block
    if clear is not None:
        out[RULE_HAS_CLEAR] = 1
        out[RULE_CLEAR:RULE_CLEAR + 4] = clear
    out[RULE_Z_MAX_PLANES] = z_max_planes
    out[RULE_Z_INIT] = 0 if z_cleared else z_max_planes + 1
    out[RULE_Z_PLANE_BYTES], out[RULE_Z_GRANULE] = z_plane_bytes, z_granule
    return out


@njit(cache=True, nogil=True, error_model="numpy")
def resize_events(ev_block, ev_written, ev_size, image_words, rules, blocks_x, width, height,
                  n_samples):
    """Every event's DCC size again, against `image_words` (as event_sizes' fb_words) in place
    of the blocks as the raster left them: a pass whose colour is an earlier attachment's image
    (scenes.model.RenderPass.shows: a lighting pass that writes each block once, with what the
    G-buffer pass computed)."""
    event_sizes(ev_block, ev_written, ev_size, 0, ev_block.shape[0], image_words, rules,
                blocks_x, width, height, n_samples)


@njit(cache=True, nogil=True, error_model="numpy")
def event_sizes(ev_block, ev_written, ev_size, lo, hi, fb_words, rules, blocks_x, width, height,
                n_samples):
    """Events lo..hi-1: the DCC payload bytes of each written block's colour now (every sample
    plane its own 256 B block), into ev_size; -1 for an event that wrote nothing. Nothing
    without DCC (ev_size empty). fb_words: the colour target (h, w, samples) as one RGBA8 word
    a sample, flat; each sample plane's channel ranges come from block_ranges.rgba8_range (a row
    of the block one 32-byte vector), or a pixel at a time at the target's right edge."""
    end = hi if ev_size.shape[0] > 0 else lo
    max_block, has_clear = rules[RULE_DCC_MAX_BLOCK], rules[RULE_HAS_CLEAR]
    c0, c1, c2, c3 = rules[RULE_CLEAR], rules[RULE_CLEAR + 1], rules[RULE_CLEAR + 2], rules[RULE_CLEAR + 3]
    h_last, w_last = height - 1, width - 1
    for e in range(lo, end):
        b = ev_block[e]
        if b < 0 or ev_written[e] == 0:
            ev_size[e] = -1
            continue
        x0, y0 = (b % blocks_x) * BLOCK, (b // blocks_x) * BLOCK
        # past the edge the codec repeats the edge pixels, which changes no extreme: those
        # columns and rows are left out
        nx = min(x0 + BLOCK - 1, w_last) - x0 + 1
        y1 = min(y0 + BLOCK - 1, h_last) + 1
        total = 0
        for s in range(n_samples):
            if nx == BLOCK:       # a whole row is one vector (block_ranges)
                rng = rgba8_range(fb_words, (y0 * width + x0) * n_samples, width * n_samples,
                                  y1 - y0, n_samples, s)
            else:
                rng = edge_range(fb_words, x0, y0, nx, y1, width, n_samples, s)
            lo0, lo1, lo2, lo3, hi0, hi1, hi2, hi3 = unpack(rng)
            if lo0 == hi0 and lo1 == hi1 and lo2 == hi2 and lo3 == hi3:
                if has_clear and lo0 == c0 and lo1 == c1 and lo2 == c2 and lo3 == c3:
                    continue                          # fast clear: the key alone
                rgb = (lo0 == lo1 and lo1 == lo2) and (lo0 == 0 or lo0 == 255)
                if rgb and (lo3 == 0 or lo3 == 255):
                    continue                          # constant encoding: the key alone
            widths = (bit_length(hi0 - lo0) + bit_length(hi1 - lo1) + bit_length(hi2 - lo2)
                      + bit_length(hi3 - lo3))
            # one delta group: per channel a 4-bit width and an 8-bit base, then the deltas
            total += granular_bytes(4 * (4 + 8) + BLOCK * BLOCK * widths, DCC_SECTOR, max_block,
                                    DCC_BLOCK)
        ev_size[e] = total


@njit(cache=True, nogil=True, error_model="numpy")
def event_depth_sizes(ev_block, ev_written, ev_zsize, lo, hi, zplanes, rules, depth_write, tx0,
                      ty0, nbx, blocks_x, n_samples):
    """Events lo..hi-1 of a triangle that writes depth (depth_write) or not: each written
    block's plane count (zplanes, per block of the tile) moves as the rules above say, and its
    depth payload bytes go to ev_zsize (-1: no depth write). Nothing when depth is not
    compressed (ev_zsize empty)."""
    end = hi if ev_zsize.shape[0] > 0 else lo
    most, plane_b, granule = rules[RULE_Z_MAX_PLANES], rules[RULE_Z_PLANE_BYTES], rules[RULE_Z_GRANULE]
    raw = BLOCK * BLOCK * 4 * n_samples
    for e in range(lo, end):
        b = ev_block[e]
        if b < 0 or ev_written[e] == 0 or not depth_write:
            ev_zsize[e] = -1
            continue
        local = ((b // blocks_x) - ty0 // BLOCK) * nbx + (b % blocks_x) - tx0 // BLOCK
        # a covering write leaves its plane alone; a partial one adds it to the block's (a
        # cleared block's clear value is a plane too, once written around)
        held = zplanes[local]
        p = 1 if ev_written[e] == ~np.uint64(0) else min(max(held, 1) + 1, most + 1)
        zplanes[local] = p
        ev_zsize[e] = raw if p > most else min(raw, planes_bytes(p, BLOCK * BLOCK * n_samples,
                                                                  plane_b, granule))
