"""The request buffer: what a producer (an architecture's replay, the tiler, the front end's
fetch, a clear, a resolve, a flush) fills and hands to the memory model (renderer.memory), and the
addressing it shares with the caches. Defined here once; the serve engine
(renderer.memory_kernels) reads it, and nothing else needs its columns.

    rq = new_requests(REQUESTS)
    n = request(rq, 0, level, line_of(meta, region, offset), op_code(False, stream), tile)
    serve(*mem.caches, mem.totals, mem.tile_bytes, rq, n)   # renderer.memory.serve, in a
                                                            # kernel; mem = mm.serve_args()

A buffer is int64 (capacity, R_N), one row per cache line: the level it enters at, the line
(byte address >> log2 line bytes), op = write | write-back << 1 | stream << 2 | fill << 9 |
(compressed bytes + 1) << 10 (0: raw; op_sized) | read-modify-write << 21 | (the write's
compressed bytes + 1) << 22 (request_block_as with a write), and
the screen tile it is charged to (-1: none). A byte address is region << REGION_SHIFT | offset:
one region per surface or buffer, so lines never alias. `meta` is the model's line geometry and
what its producers and caches share (MemoryModel.state.meta): line bytes, log2 line bytes,
whether a compressed block is packed into its first lines (M_PACKED: some cache level holds
compressed lines, CacheConfig.holds_compressed), the level whose sets serve_levels asks for
ahead of time (M_FAR: memory_kernels.FAR_BYTES; -1 for none), and from M_SLOTS on, per region
id, the slot its DRAM bytes are counted under as a named surface (0: none;
MemoryModel.region).
"""
from __future__ import annotations

import numpy as np

from .binning_kernels import BLOCK
from .block_masks import lowest_bit
from .inlined import inlined

REGION_SHIFT = 40    # byte address = region << 40 | offset: one region per surface or buffer
MAX_REGIONS = 1 << 16     # region ids stay below it (memory.MemoryModel.region)
M_LINE_BYTES, M_LINE_SHIFT, M_PACKED, M_FAR, M_SLOTS = range(5)   # fields of meta (above)
M_N = M_SLOTS + MAX_REGIONS
R_LEVEL, R_LINE, R_OP, R_TILE, R_N = range(5)  # columns of a request row
OP_WRITE, OP_WRITE_BACK, OP_STREAM_SHIFT = 1, 2, 2
OP_FILL = 1 << 9       # above the stream's 7 bits: see memory_kernels.serve_levels
# A compressed line: the bytes it moves when it crosses to DRAM, + 1 (0: it moves raw, a whole
# line). A codec's block shrinks to fewer bytes than its lines hold; each line carries its share
# (line_share), so that the lines of a block sum to the block's compressed size. Where a cache
# holds compressed lines the block is packed: its bytes fill its first lines and the rest are
# empty (a share of 0 bytes), which that cache does not keep (memory_kernels).
OP_SIZE_SHIFT, SIZE_MASK = 10, 2047
# A read and then a write of the same line at its entry level, as one row (a ROP's depth test
# and depth write of a block, a blend's read and write, an HTILE word's): the read's size in
# the size field, the write's in the next 11 bits. Only for a level that allocates writes and
# holds raw lines (fusable), where the write then always hits the line the read left: one
# lookup for two. See memory_kernels.serve_levels.
OP_RMW, OP_WSIZE_SHIFT = 1 << 21, 22
RMW_BITS = OP_RMW | (SIZE_MASK << OP_WSIZE_SHIFT)
ALL_LEVELS = -1        # every level and DRAM (serve_levels' `own`)
REQUESTS = 1024      # rows of a producer's request buffer: 32 KiB, stays in the L1 data cache


@inlined
def new_requests(capacity):
    return np.empty((capacity, R_N), np.int64)


@inlined
def line_bytes(meta):
    return meta[M_LINE_BYTES]


@inlined
def line_shift(meta):
    """log2 of the line size: a byte address >> line_shift is its line."""
    return meta[M_LINE_SHIFT]


@inlined
def region_base(region):
    """The byte address of a region's first byte."""
    return region << REGION_SHIFT


@inlined
def line_of(meta, region, offset):
    """The line holding byte `offset` of `region`."""
    return ((region << REGION_SHIFT) + offset) >> meta[M_LINE_SHIFT]


@inlined
def request_level(rq, i):
    """Row i's level (a producer may mark rows with negative levels below -1 of its own)."""
    return rq[i, R_LEVEL]


@inlined
def request_line(rq, i):
    return rq[i, R_LINE]


@inlined
def copy_request(rq, n, src, i):
    """Appends row i of buffer src; returns the new count."""
    rq[n, R_LEVEL], rq[n, R_LINE] = src[i, R_LEVEL], src[i, R_LINE]
    rq[n, R_OP], rq[n, R_TILE] = src[i, R_OP], src[i, R_TILE]
    return n + 1


@inlined
def request(rq, n, lv, line, op, tile):
    """Appends one request; returns the new count."""
    rq[n, R_LEVEL] = lv
    rq[n, R_LINE] = line
    rq[n, R_OP] = op
    rq[n, R_TILE] = tile
    return n + 1


@inlined
def request_fetch(rq, n, meta, lv, index_base, vertex_base, local, v0, v1, v2, index_bytes,
                  vertex_bytes, index_op, vertex_op):
    """A front end fetching primitive `local` of a draw: its three indices and its three
    vertices, one request per distinct line (the fetch unit merges a primitive's requests to
    the same line, as it does for the indices it reads three at a time). Returns the new count."""
    shift = meta[M_LINE_SHIFT]
    last_index = -1
    seen0 = seen1 = -1                     # vertex lines already requested for this primitive
    for k in range(3):
        line = (index_base + (local * 3 + k) * index_bytes) >> shift
        if line != last_index:
            n = request(rq, n, lv, line, index_op, -1)
            last_index = line
        first = vertex_base + (v0 if k == 0 else (v1 if k == 1 else v2)) * vertex_bytes
        for line in range(first >> shift, ((first + vertex_bytes - 1) >> shift) + 1):
            if line != seen0 and line != seen1:
                n = request(rq, n, lv, line, vertex_op, -1)
                seen0, seen1 = line, seen0
    return n


@inlined
def op_code(write, stream):
    return (OP_WRITE if write else 0) | (stream << OP_STREAM_SHIFT)


@inlined
def op_sized(write, stream, nbytes):
    """op_code for a line that moves `nbytes` compressed bytes when it crosses to DRAM."""
    return op_code(write, stream) | ((nbytes + 1) << OP_SIZE_SHIFT)


@inlined
def line_share(nbytes, j, k, lb, packed):
    """Line j's share of a block of k lines of lb bytes compressed to nbytes: packed, the lines
    its bytes fill, in order (a cache that holds compressed lines keeps no more); else spread
    evenly, whole bytes, the remainder to the first lines. Either way they sum to nbytes.
    k is a power of two (block_layout's, as the line and the pixel are), so the quotient is a
    shift: the two integer divisions of a fused row's shares were 13% of the IMR replay
    kernel's samples (spheres, amd-rdna2, 1080p, Linux perf)."""
    if packed:
        return min(lb, max(0, nbytes - j * lb))
    return (nbytes >> lowest_bit(np.uint64(k))) + (1 if j < nbytes & (k - 1) else 0)


@inlined
def block_layout(meta, region, bpp):
    """A block-linear surface (region, bpp = bytes per pixel with all its samples; the wrapper
    checks that bpp divides the line) as request_block walks it: (first byte, bytes per 8x8
    block, pixels per line, lines per block at most: a power of two, as bpp divides the line's
    power of two bytes)."""
    ppl = meta[M_LINE_BYTES] // bpp
    return region << REGION_SHIFT, BLOCK * BLOCK * bpp, ppl, (BLOCK * BLOCK + ppl - 1) // ppl


@inlined
def line_pixels(j, ppl):
    """The pixels of an 8x8 block (bit y*8+x) in its line j, of ppl pixels a line."""
    lo = j * ppl
    bits = min(ppl, BLOCK * BLOCK - lo)
    m = (~np.uint64(0)) if bits == 64 else ((np.uint64(1) << np.uint64(bits)) - np.uint64(1))
    return m << np.uint64(lo)


@inlined
def request_block(rq, n, meta, lv, layout, block, mask, op, tile):
    """The lines of one 8x8 block of a surface (layout from block_layout) that hold the pixels
    in mask (bit y*8+x). Returns the new count."""
    first, block_bytes, ppl, n_lines = layout
    lb, shift = meta[M_LINE_BYTES], meta[M_LINE_SHIFT]
    base = first + block * block_bytes
    for j in range(n_lines):
        if mask & line_pixels(j, ppl):
            n = request(rq, n, lv, (base + j * lb) >> shift, op, tile)
    return n


@inlined
def request_block_as(rq, n, meta, lv, layout, block, mask, op, tile, nbytes, wmask=0, wbytes=-1):
    """A block as it is stored: compressed to nbytes >= 0, every line, each its line_share
    (packed as meta says); raw (nbytes < 0), the lines that hold the pixels in mask (as
    request_block). With a write after the read (op a read; wmask, wbytes as mask, nbytes for
    it): a line both read and written is one OP_RMW row. Every line written must be read (the
    caller's: written pixels were tested, or the read is compressed, whole), and the level must
    be fusable (memory_kernels): the rows then meet that level's sets as the reads and then the
    writes would, one set a line. One loop that writes its rows itself: the replays call it
    four times an event, and two inlined helpers behind a branch, each taking the buffer, cost
    the IMR's replay a fifth more time (numba reference-counts an array handed on where the
    branches defeat its pruning)."""
    first, block_bytes, ppl, n_lines = layout
    lb, shift, packed = meta[M_LINE_BYTES], meta[M_LINE_SHIFT], meta[M_PACKED]
    base = first + block * block_bytes
    for j in range(n_lines):
        m = line_pixels(j, ppl)
        if nbytes < 0 and mask & m == 0:
            continue
        o = op
        if nbytes >= 0:
            o |= (line_share(nbytes, j, n_lines, lb, packed) + 1) << OP_SIZE_SHIFT
        if wbytes >= 0 or wmask & m:
            o |= OP_RMW
            if wbytes >= 0:
                o |= (line_share(wbytes, j, n_lines, lb, packed) + 1) << OP_WSIZE_SHIFT
        rq[n, R_LEVEL] = lv
        rq[n, R_LINE] = (base + j * lb) >> shift
        rq[n, R_OP] = o
        rq[n, R_TILE] = tile
        n += 1
    return n


@inlined
def request_range(rq, n, lv, first, last, shift, op, tile, prev):
    """The lines of bytes first..last (inclusive), skipping the line `prev` (the last one a
    run of ranges asked for). Returns (the new count, the last line)."""
    for line in range(first >> shift, (last >> shift) + 1):
        if line != prev:
            n = request(rq, n, lv, line, op, tile)
            prev = line
    return n, prev


@inlined
def block_tile(block, blocks_x, tile, tiles_x):
    return ((block // blocks_x) * BLOCK // tile) * tiles_x + ((block % blocks_x) * BLOCK) // tile
