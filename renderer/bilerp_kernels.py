"""The bilinear filter's arithmetic on RGBA8 texels, the four channels at once: LLVM vector IR.

`bilerp_rgba8` is shade_kernels.bilinear_channel for channels 0-3 with the same operations in
the same order, each channel on its own, so every channel's value is the scalar filter's bit for
bit: IEEE operations, no fused multiply-add, no reassociation. The scalar form takes a byte out
of each of the four texel words per channel (a shift, a mask, an int-to-float conversion and a
widening each: 16 of each a filter, most of quad_shade's hottest instructions in
bench/perf_kernels.py); here a word is four bytes widened to four float64 lanes in one
conversion, and the lerps are 4-lane operations (one AVX2 register a row).

Exactness: a byte is a whole number in [0, 255], exact in float32 and float64 alike, so widening
it straight to float64 gives what bilinear_channel's float32 then float64 gives, and the
difference of two of them (bilinear_channel's one float32 subtraction) is exact in both.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .vector_ir import splat as vector_splat

CHANNELS = 4                   # R, G, B, A: R in a word's low byte
_D4 = ir.VectorType(ir.DoubleType(), CHANNELS)
_B4 = ir.VectorType(ir.IntType(8), CHANNELS)


@intrinsic
def bilerp_rgba8(typingctx, data, i00, i10, i01, i11, ax, ay):
    """The bilinear filter of data's RGBA8 words i00, i10 (the next column), i01 (the next row)
    and i11 with weights ax, ay: (r, g, b, a) in [0, 1], float64. The indices must lie in data
    (shade_kernels.tap_words makes them so): they are not checked or wrapped."""
    if not (isinstance(data, types.Array) and data.dtype == types.uint32 and data.ndim == 1):
        return None
    sig = types.UniTuple(types.float64, CHANNELS)(data, i00, i10, i01, i11, ax, ay)

    def codegen(context, builder, signature, args):
        data, i00, i10, i01, i11, ax, ay = args
        words = context.make_array(signature.args[0])(context, builder, data).data

        def texel(i, ty):                     # a word's four bytes as float64 lanes (exact)
            i = context.cast(builder, i, ty, types.int64)
            word = builder.load(builder.gep(words, [i]), align=4)
            return builder.uitofp(builder.bitcast(word, _B4), _D4)

        def splat(x, ty):
            return vector_splat(builder, context.cast(builder, x, ty, types.float64), _D4)

        t00, t10, t01, t11 = (texel(i, ty) for i, ty in zip((i00, i10, i01, i11), signature.args[1:5]))
        wx, wy = splat(ax, signature.args[5]), splat(ay, signature.args[6])
        mul, sub, add = builder.fmul, builder.fsub, builder.fadd
        top = add(t00, mul(sub(t10, t00), wx))
        bot = add(t01, mul(sub(t11, t01), wx))
        scale = splat(ir.Constant(ir.DoubleType(), 1.0 / 255.0), types.float64)
        rgba = mul(add(top, mul(sub(bot, top), wy)), scale)
        values = [builder.extract_element(rgba, ir.Constant(ir.IntType(32), c)) for c in range(CHANNELS)]
        return context.make_tuple(builder, signature.return_type, values)

    return sig, codegen
