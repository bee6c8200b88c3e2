"""Numba helpers on the raster's 8x8 blocks: a block's pixels as a 64-bit mask (bit y*8 + x),
counted and folded into quads, and the farthest depth stored over a block (hierarchical Z and
the depth-bound skip)."""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .binning_kernels import BLOCK
from .inlined import inlined

BLOCK_BITS = 3                 # log2(BLOCK)


@inlined
def popcount(m):
    """Set bits of a uint64 (the SWAR count, which LLVM compiles to one popcnt). (llvm.ctpop
    itself was measured too: sponza's raster, one thread, 6% slower, the tile kernel's code
    laid out otherwise.)"""
    m = m - ((m >> np.uint64(1)) & np.uint64(0x5555555555555555))
    m = (m & np.uint64(0x3333333333333333)) + ((m >> np.uint64(2)) & np.uint64(0x3333333333333333))
    m = (m + (m >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((m * np.uint64(0x0101010101010101)) >> np.uint64(56))


def cttz64(builder, x):
    """LLVM IR: the trailing zeros of the i64 x (64 for 0), llvm.cttz: one tzcnt. For the
    intrinsics that need it (lowest_bit, tag_match.tag_way)."""
    i64, i1 = ir.IntType(64), ir.IntType(1)
    fn = builder.module.globals.get("llvm.cttz.i64") or ir.Function(
        builder.module, ir.FunctionType(i64, [i64, i1]), "llvm.cttz.i64")
    return builder.call(fn, [x, ir.Constant(i1, 0)])      # (0: defined for 0)


@intrinsic
def lowest_bit(typingctx, m):
    """Index of the lowest set bit of a 64-bit word (64 for none): llvm.cttz, one tzcnt. (As
    popcount of the bits below it, LLVM folded the pixel loop's shift into the count and left a
    15-instruction SWAR sequence in it: spheres' raster, one thread, 4-6% slower.)"""
    if not isinstance(m, types.Integer) or m.bitwidth != 64:
        return None

    def codegen(context, builder, signature, args):
        return cttz64(builder, args[0])
    return types.int64(m), codegen


@inlined
def quads_of(m):
    """2x2 quads with a pixel in an 8x8 block's mask (bit y*8+x): fold each quad onto its
    top-left pixel, keep those."""
    f = m | (m >> np.uint64(1))
    f |= f >> np.uint64(BLOCK)
    return popcount(f & np.uint64(0x0055005500550055))


@inlined
def block_far(depth, x0, y0, width, height, n_samples):
    """Farthest stored depth over the samples of the 8x8 block at (x0, y0) inside the target,
    and how many samples hold it: block_far_1x for a whole block at one sample, else
    block_far_walk. Inline: a call to a compiled function inside an inlined section of
    rasterize_tile keeps that section's arrays reference-counted."""
    if n_samples == 1 and x0 + BLOCK <= width and y0 + BLOCK <= height:
        return block_far_1x(depth, x0, y0)
    return block_far_walk(depth, x0, y0, width, height, n_samples)


@inlined
def block_far_walk(depth, x0, y0, width, height, n_samples):
    """block_far sample by sample, in one walk (any block, any sample count; the twin
    block_far_1x is held to)."""
    z = np.float32(0.0)
    n = 0
    for y in range(y0, min(y0 + BLOCK, height)):
        for x in range(x0, min(x0 + BLOCK, width)):
            for s in range(n_samples):
                v = depth[y, x, s]
                if v > z:
                    z, n = v, 1
                elif v == z:
                    n += 1
    return z, n


@inlined
def block_far_1x(depth, x0, y0):
    """block_far of a whole 8x8 block (inside the target) at one sample: each column's farthest
    over the rows (eight independent selects, one vector instruction), then across them, then
    the samples at it counted (a sum of compares, vectorised too). The same value and count:
    the farthest of a set is the same in any order (a NaN, never greater, is passed over either
    way; the walk from +0 never keeps a -0), and the count compares every sample with it. On
    spheres through amd-rdna2 the walk was a third of flush_events' time (HiZ measured again
    after a write). The columns are eight scalars, written out: a local array in numba is a
    heap allocation, one a block."""
    z0 = z1 = z2 = z3 = z4 = z5 = z6 = z7 = np.float32(0.0)
    for y in range(y0, y0 + BLOCK):
        v = depth[y, x0 + 0, 0]
        z0 = v if v > z0 else z0
        v = depth[y, x0 + 1, 0]
        z1 = v if v > z1 else z1
        v = depth[y, x0 + 2, 0]
        z2 = v if v > z2 else z2
        v = depth[y, x0 + 3, 0]
        z3 = v if v > z3 else z3
        v = depth[y, x0 + 4, 0]
        z4 = v if v > z4 else z4
        v = depth[y, x0 + 5, 0]
        z5 = v if v > z5 else z5
        v = depth[y, x0 + 6, 0]
        z6 = v if v > z6 else z6
        v = depth[y, x0 + 7, 0]
        z7 = v if v > z7 else z7
    z = z0
    for c in (z1, z2, z3, z4, z5, z6, z7):
        z = c if c > z else z
    n = 0
    for y in range(y0, y0 + BLOCK):
        for x in range(x0, x0 + BLOCK):
            n += depth[y, x, 0] == z
    return z, n
