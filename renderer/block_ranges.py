"""The per-channel range (lowest and highest value of R, G, B and A) of an 8x8 block of RGBA8
pixels, as DCC sizes every block the ROP writes (rop_sizes.event_sizes).

Numba types integer arithmetic at 64 bits, so the plain loop compares bytes as 64-bit lanes, four
to an AVX2 register (measured 100-150 ns a block on an AVX2 EPYC). `rgba8_range` writes the loop in
LLVM IR instead: a row of 8 pixels is one 32-byte vector, and the block's minimum and maximum are
a byte-wise umin / umax per row (23.5 ns a block there); `rgba4_range` the same for rows of four
pixels (AFBC's sub-blocks). The framebuffer codecs' delta groups take them too
(compression/codecs_kernels). `edge_range` is the same range a pixel at a time, for a block cut
by the target's right edge; tests/test_block_ranges.py holds them to numpy.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from renderer.inlined import inlined

_I8, _I32, _I64 = ir.IntType(8), ir.IntType(32), ir.IntType(64)
_V32 = ir.VectorType(_I8, 32)          # a row of 8 RGBA8 pixels (one sample)
_V16 = ir.VectorType(_I8, 16)
_V4 = ir.VectorType(_I8, 4)


def _vop(builder, name, vec):
    """The LLVM intrinsic llvm.<name> (umin, umax) on vectors of type vec."""
    fnty = ir.FunctionType(vec, [vec, vec])
    return cgutils.get_or_insert_function(builder.module, fnty, f"llvm.{name}.v{vec.count}i8")


def _shuffle(builder, v, lanes):
    return builder.shuffle_vector(v, v, ir.Constant(ir.VectorType(_I32, len(lanes)), lanes))


def _fold(builder, v, name, lanes):
    """The byte vector v folded in halves by llvm.<name> (umin, umax) down to `lanes` bytes:
    byte j of the result is the extreme of v's bytes j, j + lanes, j + 2 lanes..."""
    while v.type.count > lanes:
        half = v.type.count // 2
        v = builder.call(_vop(builder, name, ir.VectorType(_I8, half)),
                         [_shuffle(builder, v, list(range(half))),
                          _shuffle(builder, v, list(range(half, 2 * half)))])
    return v


@intrinsic
def rgba8_range(typingctx, words, start, row_words, rows, vecs, sample):
    """The range of one sample plane of a block: `rows` rows of `vecs` 32-byte vectors each
    (vecs = the sample count, 1 or 4: a row of 8 pixels x samples, sample-interleaved as the
    framebuffer stores them), the first at word `start` of `words` (uint32, C) and each the next
    `row_words` words on. Returns a uint64: bytes 0-3 the lowest R, G, B, A of sample `sample`,
    bytes 4-7 the highest. The caller keeps the reads inside the array (full rows only)."""
    sig = types.uint64(words, start, row_words, rows, vecs, sample)

    def codegen(context, builder, signature, args):
        arr, start, row_words, rows, vecs, sample = args
        data = context.make_array(signature.args[0])(context, builder, arr).data
        lo = cgutils.alloca_once_value(builder, ir.Constant(_V32, [255] * 32))
        hi = cgutils.alloca_once_value(builder, ir.Constant(_V32, [0] * 32))
        umin = _vop(builder, "umin", _V32)
        umax = _vop(builder, "umax", _V32)
        with cgutils.for_range(builder, rows) as r:
            row = builder.add(start, builder.mul(r.index, row_words))
            with cgutils.for_range(builder, vecs) as v:
                at = builder.add(row, builder.mul(v.index, ir.Constant(_I64, 8)))
                x = builder.load(builder.bitcast(builder.gep(data, [at]), _V32.as_pointer()),
                                 align=1)
                builder.store(builder.call(umin, [builder.load(lo), x]), lo)
                builder.store(builder.call(umax, [builder.load(hi), x]), hi)

        def reduce(acc, name):
            # lane j of a vector is byte j % 4 of pixel j // 4; at 4 samples pixel p is sample
            # p % 4 (the vector holds 2 pixels x 4 samples), at one sample every pixel is one
            v16 = _fold(builder, acc, name, 16)
            one = _fold(builder, v16, name, 4)
            words16 = builder.bitcast(v16, ir.VectorType(_I32, 4))
            four = builder.bitcast(builder.extract_element(words16, builder.trunc(sample, _I32)), _V4)
            single = builder.icmp_unsigned("==", vecs, ir.Constant(vecs.type, 1))
            return builder.zext(builder.bitcast(builder.select(single, one, four), _I32), _I64)

        low, high = reduce(builder.load(lo), "umin"), reduce(builder.load(hi), "umax")
        return builder.or_(low, builder.shl(high, ir.Constant(_I64, 32)))

    return sig, codegen


@intrinsic
def rgba4_range(typingctx, words, start, row_words, rows):
    """rgba8_range of `rows` rows of four pixels (one sample; AFBC's 4x4 sub-blocks): each row
    one 16-byte vector, the first at word `start` of `words` (uint32, C), each the next
    `row_words` words on; packed as rgba8_range's. The caller keeps the reads inside the array."""
    sig = types.uint64(words, start, row_words, rows)

    def codegen(context, builder, signature, args):
        arr, start, row_words, rows = args
        data = context.make_array(signature.args[0])(context, builder, arr).data
        lo = cgutils.alloca_once_value(builder, ir.Constant(_V16, [255] * 16))
        hi = cgutils.alloca_once_value(builder, ir.Constant(_V16, [0] * 16))
        umin, umax = _vop(builder, "umin", _V16), _vop(builder, "umax", _V16)
        with cgutils.for_range(builder, rows) as r:
            at = builder.add(start, builder.mul(r.index, row_words))
            x = builder.load(builder.bitcast(builder.gep(data, [at]), _V16.as_pointer()), align=1)
            builder.store(builder.call(umin, [builder.load(lo), x]), lo)
            builder.store(builder.call(umax, [builder.load(hi), x]), hi)

        def reduce(acc, name):            # lane j: byte j % 4 of pixel j // 4
            return builder.zext(builder.bitcast(_fold(builder, acc, name, 4), _I32), _I64)

        low, high = reduce(builder.load(lo), "umin"), reduce(builder.load(hi), "umax")
        return builder.or_(low, builder.shl(high, ir.Constant(_I64, 32)))

    return sig, codegen


@inlined
def unpack(rng):
    """rgba8_range's uint64 as (lo_r, lo_g, lo_b, lo_a, hi_r, hi_g, hi_b, hi_a), int64 each."""
    r = np.int64(rng)
    return (r & 255, (r >> 8) & 255, (r >> 16) & 255, (r >> 24) & 255,
            (r >> 32) & 255, (r >> 40) & 255, (r >> 48) & 255, (r >> 56) & 255)


@inlined
def edge_range(fb_words, x0, y0, nx, y1, width, n_samples, s):
    """rgba8_range of a block cut by the target's right edge (its first nx columns, from
    pixel x0, y0 to row y1), a pixel at a time, packed the same way."""
    byte = np.uint64(255)
    lo, hi = np.uint64(0xFFFFFFFF), np.uint64(0)
    for y in range(y0, y1):
        base = (y * width + x0) * n_samples + s
        for i in range(nx):
            w = np.uint64(fb_words[base + i * n_samples])
            for c in range(4):
                sh = np.uint64(8 * c)
                v = (w >> sh) & byte
                lo = (lo & ~(byte << sh)) | (min((lo >> sh) & byte, v) << sh)
                hi = (hi & ~(byte << sh)) | (max((hi >> sh) & byte, v) << sh)
    return lo | (hi << np.uint64(32))
