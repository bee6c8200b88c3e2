"""Numba kernels of the memory model: set-associative LRU caches, write-back, in front of DRAM.

Sequential on purpose: the requests are replayed in the order the architecture's units issue
them, which is what makes DRAM bytes depend on locality. All levels share one line size. A read
miss allocates and fetches from the level below; a write miss allocates without fetching
(byte-masked lines, as GPU L2s keep), and dirty victims are written to the level below.

The state is three plain arrays (not a tuple of many): numba reference-counts every array it
takes out of a tuple, and in a loop of a few million requests that costs more than the lookup.
    lines  int64 (levels, sets, ways, F_N)  one row per way: tag, LRU stamp, dirty, stream, tile
    shape  int64 (levels, 3)                sets, ways, level below (-1 = DRAM)
    meta   int64 (3,)                       LRU clock, line bytes, log2 line bytes
    acc    int64 (A_N, width)               byte and event totals (rows below)
    tile_bytes int64 (n_tiles,)             DRAM bytes charged to each screen tile
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .binning_kernels import BLOCK

REGION_SHIFT = 40    # byte address = region << 40 | offset: one region per surface or buffer

F_TAG, F_STAMP, F_DIRTY, F_STREAM, F_TILE, F_N = 0, 1, 2, 3, 4, 5   # fields of a way
SH_SETS, SH_WAYS, SH_NEXT, SH_MASK, SH_N = 0, 1, 2, 3, 4
M_CLOCK, M_LINE_BYTES, M_LINE_SHIFT = 0, 1, 2
# Rows of acc: bytes by stream (columns) for the first four, events by level for the last two.
A_DRAM_READ, A_DRAM_WRITE, A_ONCHIP_READ, A_ONCHIP_WRITE, A_HITS, A_MISSES, A_N = range(7)


@njit(cache=True, error_model="numpy")
def _set(shape, lv, line):
    """Set of a line (line >= 0): a mask when the set count is a power of two, else an unsigned
    remainder (no sign fix-up)."""
    return line % shape[lv, SH_SETS]


@njit(cache=True, error_model="numpy")
def _lookup(lines, shape, lv, line):
    """(set, way, hit): the way holding line, else the victim: the least recently used way.
    Invalid ways have stamp 0 and valid ones a unique stamp >= 1, so the first minimum is the
    first invalid way when there is one."""
    s = _set(shape, lv, line)
    n = shape[lv, SH_WAYS]
    for w in range(n):
        if lines[F_TAG, lv, s, w] == line:
            return s, w, True
    best, oldest = 0, lines[F_STAMP, lv, s, 0]
    for w in range(1, n):
        t = lines[F_STAMP, lv, s, w]
        if t < oldest:
            best, oldest = w, t
    return s, best, False


@njit(cache=True, error_model="numpy")
def _touch(lines, meta, lv, s, w):
    meta[M_CLOCK] += 1
    lines[F_STAMP, lv, s, w] = meta[M_CLOCK]


@njit(cache=True, error_model="numpy")
def _dram(meta, acc, tile_bytes, write, stream, tile):
    acc[A_DRAM_WRITE if write else A_DRAM_READ, stream] += meta[M_LINE_BYTES]
    if tile >= 0:
        tile_bytes[tile] += meta[M_LINE_BYTES]


@njit(cache=True, error_model="numpy")
def write_back(lines, shape, meta, acc, tile_bytes, lv, line, stream, tile):
    """A dirty line leaving the level above arrives at lv (DRAM when lv < 0); a dirty victim it
    displaces goes on down."""
    while lv >= 0:
        s, w, hit = _lookup(lines, shape, lv, line)
        _touch(lines, meta, lv, s, w)
        if hit:
            lines[F_DIRTY, lv, s, w] = 1
            return
        v_line, v_dirty = lines[F_TAG, lv, s, w], lines[F_DIRTY, lv, s, w]
        v_stream, v_tile = lines[F_STREAM, lv, s, w], lines[F_TILE, lv, s, w]
        lines[F_TAG, lv, s, w] = line
        lines[F_DIRTY, lv, s, w] = 1
        lines[F_STREAM, lv, s, w] = stream
        lines[F_TILE, lv, s, w] = tile
        if v_line < 0 or v_dirty == 0:
            return
        line, stream, tile = v_line, v_stream, v_tile
        lv = shape[lv, SH_NEXT]
    _dram(meta, acc, tile_bytes, True, stream, tile)


@njit(cache=True, error_model="numpy")
def access(lines, shape, meta, acc, tile_bytes, lv, line, write, stream, tile):
    """One line-sized request from a unit whose first cache is level lv."""
    acc[A_ONCHIP_WRITE if write else A_ONCHIP_READ, stream] += meta[M_LINE_BYTES]
    while lv >= 0:
        s, w, hit = _lookup(lines, shape, lv, line)
        _touch(lines, meta, lv, s, w)
        if hit:
            acc[A_HITS, lv] += 1
            if write:
                lines[F_DIRTY, lv, s, w] = 1
            return
        acc[A_MISSES, lv] += 1
        v_line, v_dirty = lines[F_TAG, lv, s, w], lines[F_DIRTY, lv, s, w]
        v_stream, v_tile = lines[F_STREAM, lv, s, w], lines[F_TILE, lv, s, w]
        lines[F_TAG, lv, s, w] = line
        lines[F_DIRTY, lv, s, w] = 1 if write else 0
        lines[F_STREAM, lv, s, w] = stream
        lines[F_TILE, lv, s, w] = tile
        if v_line >= 0 and v_dirty:
            write_back(lines, shape, meta, acc, tile_bytes, shape[lv, SH_NEXT], v_line, v_stream, v_tile)
        if write:
            return            # write-validate: no fetch from below
        lv = shape[lv, SH_NEXT]
    _dram(meta, acc, tile_bytes, False, stream, tile)


@njit(cache=True, error_model="numpy")
def access_range(lines, shape, meta, acc, tile_bytes, lv, first_byte, n_bytes, write, stream, tile):
    """Every line overlapping [first_byte, first_byte + n_bytes)."""
    shift = meta[M_LINE_SHIFT]
    for line in range(first_byte >> shift, ((first_byte + n_bytes - 1) >> shift) + 1):
        access(lines, shape, meta, acc, tile_bytes, lv, line, write, stream, tile)


@njit(cache=True, error_model="numpy")
def access_block(lines, shape, meta, acc, tile_bytes, lv, region, bpp, block, mask, write,
                 stream, tile):
    """The lines of one 8x8 block of a block-linear surface (region, bpp = bytes per pixel with
    all its samples) that hold the pixels in mask (bit y*8+x)."""
    ppl = meta[M_LINE_BYTES] // bpp          # pixels per line (the wrapper checks >= 1)
    base = (region << REGION_SHIFT) + block * (BLOCK * BLOCK * bpp)
    for j in range((BLOCK * BLOCK + ppl - 1) // ppl):
        lo = j * ppl
        bits = min(ppl, BLOCK * BLOCK - lo)
        m = (~np.uint64(0)) if bits == 64 else ((np.uint64(1) << np.uint64(bits)) - np.uint64(1))
        if mask & (m << np.uint64(lo)):
            access(lines, shape, meta, acc, tile_bytes, lv,
                   (base + j * meta[M_LINE_BYTES]) >> meta[M_LINE_SHIFT], write, stream, tile)


@njit(cache=True, error_model="numpy")
def block_tile(block, blocks_x, tile, tiles_x):
    return ((block // blocks_x) * BLOCK // tile) * tiles_x + ((block % blocks_x) * BLOCK) // tile


@njit(cache=True, error_model="numpy")
def flush_region(cs, acc, tile_bytes, region, invalidate_only):
    """End of pass for one surface: STORE writes its dirty lines down to DRAM, level by level
    from the top; DONT_CARE (invalidate_only) drops them without a byte of traffic."""
    lines, shape, meta = cs
    shift = REGION_SHIFT - meta[M_LINE_SHIFT]
    for lv in range(shape.shape[0]):          # levels are ordered top (ROP) to bottom
        for s in range(shape[lv, SH_SETS]):
            for w in range(shape[lv, SH_WAYS]):
                line = lines[F_TAG, lv, s, w]
                if line < 0 or (line >> shift) != region:
                    continue
                if lines[F_DIRTY, lv, s, w] and not invalidate_only:
                    write_back(lines, shape, meta, acc, tile_bytes, shape[lv, SH_NEXT], line,
                               lines[F_STREAM, lv, s, w], lines[F_TILE, lv, s, w])
                lines[F_DIRTY, lv, s, w] = 0
                if invalidate_only:
                    lines[F_TAG, lv, s, w] = -1
                    lines[F_STAMP, lv, s, w] = 0     # invalid ways are the oldest


@njit(cache=True, error_model="numpy")
def clear_surface(cs, acc, tile_bytes, lv, region, bpp, n_blocks, stream, blocks_x, tile, tiles_x):
    """A clear without fast-clear metadata: every line of the surface written once."""
    lines, shape, meta = cs
    full = ~np.uint64(0)
    for b in range(n_blocks):
        access_block(lines, shape, meta, acc, tile_bytes, lv, region, bpp, b, full, True, stream,
                     block_tile(b, blocks_x, tile, tiles_x))


@njit(cache=True, error_model="numpy")
def resolve_surface(cs, acc, tile_bytes, lv, src, dst, n_blocks, color_stream, resolve_stream,
                    blocks_x, tile, tiles_x):
    """MSAA resolve: read every sample line of src, write the single-sample dst.
    src, dst: (region, bytes per pixel)."""
    lines, shape, meta = cs
    full = ~np.uint64(0)
    for b in range(n_blocks):
        t = block_tile(b, blocks_x, tile, tiles_x)
        access_block(lines, shape, meta, acc, tile_bytes, lv, src[0], src[1], b, full, False,
                     color_stream, t)
        access_block(lines, shape, meta, acc, tile_bytes, lv, dst[0], dst[1], b, full, True,
                     resolve_stream, t)
