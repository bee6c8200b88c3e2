"""Numba kernels of the memory model: set-associative LRU caches, write-back, in front of DRAM.

Sequential on purpose: the requests are replayed in submission order (the order an IMR's units
issue them), which is what makes DRAM bytes depend on locality. All levels share one line size.
A read miss allocates and fetches from the level below; a write miss allocates without fetching
(byte-masked lines, as GPU L2s keep), and dirty victims are written to the level below.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .binning_kernels import BLOCK

REGION_SHIFT = 40    # byte address = region << 40 | offset: one region per surface or buffer
NO_TILE = -1


@njit(cache=True, error_model="numpy")
def _find(cs, lv, line):
    s = line % cs.n_sets[lv]
    for w in range(cs.n_ways[lv]):
        if cs.tag[lv, s, w] == line:
            return s, w
    return s, -1


@njit(cache=True, error_model="numpy")
def _victim(cs, lv, s):
    best = 0
    for w in range(cs.n_ways[lv]):
        if cs.tag[lv, s, w] < 0:
            return w
        if cs.stamp[lv, s, w] < cs.stamp[lv, s, best]:
            best = w
    return best


@njit(cache=True, error_model="numpy")
def _dram(cs, acc, write, stream, tile):
    if write:
        acc.dram_write[stream] += cs.line_bytes
    else:
        acc.dram_read[stream] += cs.line_bytes
    if tile >= 0:
        acc.tile_bytes[tile] += cs.line_bytes


@njit(cache=True, error_model="numpy")
def _install(cs, acc, lv, s, line, dirty, stream, tile):
    """Put line in set s of level lv; a dirty victim is written to the levels below."""
    w = _victim(cs, lv, s)
    v_line, v_dirty = cs.tag[lv, s, w], cs.dirty[lv, s, w]
    v_stream, v_tile = cs.stream[lv, s, w], cs.tile[lv, s, w]
    cs.clock[0] += 1
    cs.tag[lv, s, w] = line
    cs.stamp[lv, s, w] = cs.clock[0]
    cs.dirty[lv, s, w] = dirty
    cs.stream[lv, s, w] = stream
    cs.tile[lv, s, w] = tile
    if v_line >= 0 and v_dirty:
        write_back(cs, acc, cs.next[lv], v_line, v_stream, v_tile)


@njit(cache=True, error_model="numpy")
def write_back(cs, acc, lv, line, stream, tile):
    """A dirty line leaving the level above arrives at lv (DRAM when lv < 0)."""
    while True:
        if lv < 0:
            _dram(cs, acc, True, stream, tile)
            return
        s, w = _find(cs, lv, line)
        if w >= 0:
            cs.clock[0] += 1
            cs.stamp[lv, s, w] = cs.clock[0]
            cs.dirty[lv, s, w] = True
            return
        # Allocate (write-validate) and push the victim down: inline _install to stay iterative.
        w = _victim(cs, lv, s)
        v_line, v_dirty = cs.tag[lv, s, w], cs.dirty[lv, s, w]
        v_stream, v_tile = cs.stream[lv, s, w], cs.tile[lv, s, w]
        cs.clock[0] += 1
        cs.tag[lv, s, w] = line
        cs.stamp[lv, s, w] = cs.clock[0]
        cs.dirty[lv, s, w] = True
        cs.stream[lv, s, w] = stream
        cs.tile[lv, s, w] = tile
        if v_line < 0 or not v_dirty:
            return
        line, stream, tile = v_line, v_stream, v_tile
        lv = cs.next[lv]


@njit(cache=True, error_model="numpy")
def access(cs, acc, lv, line, write, stream, tile):
    """One line-sized request from a unit whose first cache is level lv."""
    if write:
        acc.onchip_write[stream] += cs.line_bytes
    else:
        acc.onchip_read[stream] += cs.line_bytes
    while lv >= 0:
        s, w = _find(cs, lv, line)
        if w >= 0:
            acc.hits[lv] += 1
            cs.clock[0] += 1
            cs.stamp[lv, s, w] = cs.clock[0]
            if write:
                cs.dirty[lv, s, w] = True
            return
        acc.misses[lv] += 1
        _install(cs, acc, lv, s, line, write, stream, tile)
        if write:
            return
        lv = cs.next[lv]
    _dram(cs, acc, False, stream, tile)


@njit(cache=True, error_model="numpy")
def access_range(cs, acc, lv, first_byte, n_bytes, write, stream, tile):
    """Every line overlapping [first_byte, first_byte + n_bytes)."""
    shift = cs.line_shift
    for line in range(first_byte >> shift, ((first_byte + n_bytes - 1) >> shift) + 1):
        access(cs, acc, lv, line, write, stream, tile)


@njit(cache=True, error_model="numpy")
def flush_region(cs, acc, region, invalidate_only):
    """End of pass for one surface: STORE writes its dirty lines down to DRAM, level by level
    from the top; DONT_CARE (invalidate_only) drops them without a byte of traffic."""
    shift = REGION_SHIFT - cs.line_shift
    for lv in range(cs.tag.shape[0]):          # levels are ordered top (ROP) to bottom
        for s in range(cs.n_sets[lv]):
            for w in range(cs.n_ways[lv]):
                line = cs.tag[lv, s, w]
                if line < 0 or (line >> shift) != region:
                    continue
                if cs.dirty[lv, s, w] and not invalidate_only:
                    write_back(cs, acc, cs.next[lv], line, cs.stream[lv, s, w], cs.tile[lv, s, w])
                cs.dirty[lv, s, w] = False
                if invalidate_only:
                    cs.tag[lv, s, w] = -1


@njit(cache=True, error_model="numpy")
def block_tile(block, blocks_x, tile, tiles_x):
    return ((block // blocks_x) * BLOCK // tile) * tiles_x + ((block % blocks_x) * BLOCK) // tile


@njit(cache=True, error_model="numpy")
def access_block(cs, acc, lv, surface, block, mask, write, stream, tile):
    """The lines of one 8x8 block (block-linear surface) that hold the pixels in mask
    (bit y*8+x). surface = (region, bytes per pixel incl. samples)."""
    region, bpp = surface
    block_bytes = BLOCK * BLOCK * bpp
    ppl = cs.line_bytes // bpp               # pixels per line (validated >= 1 by the wrapper)
    base = (region << REGION_SHIFT) + block * block_bytes
    n_lines = (BLOCK * BLOCK + ppl - 1) // ppl
    for j in range(n_lines):
        lo = j * ppl
        bits = min(ppl, BLOCK * BLOCK - lo)
        m = (~np.uint64(0)) if bits == 64 else ((np.uint64(1) << np.uint64(bits)) - np.uint64(1))
        if mask & (m << np.uint64(lo)):
            access(cs, acc, lv, (base + j * cs.line_bytes) >> cs.line_shift, write, stream, tile)


@njit(cache=True, error_model="numpy")
def clear_surface(cs, acc, lv, surface, n_blocks, stream, blocks_x, tile, tiles_x):
    """A clear without fast-clear metadata: every line of the surface written once."""
    full = ~np.uint64(0)
    for b in range(n_blocks):
        access_block(cs, acc, lv, surface, b, full, True, stream, block_tile(b, blocks_x, tile, tiles_x))


@njit(cache=True, error_model="numpy")
def resolve_surface(cs, acc, lv, src, dst, n_blocks, color_stream, resolve_stream, blocks_x,
                    tile, tiles_x):
    """MSAA resolve: read every sample line, write the single-sample image."""
    full = ~np.uint64(0)
    for b in range(n_blocks):
        t = block_tile(b, blocks_x, tile, tiles_x)
        access_block(cs, acc, lv, src, b, full, False, color_stream, t)
        access_block(cs, acc, lv, dst, b, full, True, resolve_stream, t)
