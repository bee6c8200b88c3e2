"""A quad's four texture filters at once: LLVM vector IR, a lane a pixel.

`quad_filter4` is shade_kernels.filter_texture for the four lanes of a quad, for the common
sampler: repeat on both axes and levels whose sides are powers of two (every texture of the
built-in scenes and the game levels). Where the scalar filter works out each lane's four texel
indices and weights on its own (a multiply, a floor, a range check and a mask an axis, then the
indices' arithmetic), here a quad's are four-lane vector operations, and only the texel loads
and the lerps, four channels a vector as bilerp_kernels.bilerp_rgba8 does them, are a lane's
own (pul1duel's frame through imr-baseline 0.963 of the time, two processes taking turns).

Every lane's value is the scalar filter's bit for bit: the same IEEE operations in the same
order (u * w - 0.5, its floor and the weight fx - floor, each channel's lerps, then trilinear's
r + (r1 - r) * frac), no fused multiply-add, and the same texels: repeat's int(i) & (size - 1)
for a whole number i in (-2^31, 2^31), taken here in 32-bit lanes, whose low bits are the
64-bit integer's. A lane whose floor lies outside that range (far off its triangle's plane, or
NaN) sends the quad back to the scalar filter (the function returns False), unless the lane is
not one the caller shades; such a lane's indices are made 0 first, so it reads in bounds.
tests/test_quad_filter.py holds the two equal.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .shade_kernels import TWO_31
from .vector_ir import row as vector_row, splat as vector_splat

LANES = 4
CHANNELS = 4
_D4 = ir.VectorType(ir.DoubleType(), LANES)
_I32x4 = ir.VectorType(ir.IntType(32), LANES)
_I64x4 = ir.VectorType(ir.IntType(64), LANES)
_B4 = ir.VectorType(ir.IntType(8), CHANNELS)


def _i32(k):
    return ir.Constant(ir.IntType(32), k)


def repeat_texels(builder, coord, size):
    """IR: the texels a bilinear filter reads along one axis of a level `size` texels wide (an
    i64, a power of two) under repeat, at four lanes' coordinates coord (<4 x double>), as
    shade_kernels.tap_words finds them: (f = coord * size - 0.5, its floor f0, whether f0 lies
    in (-2^31, 2^31) (ordered compares: false for NaN), i0 = f0 & (size - 1), i1 = (i0 + 1) &
    (size - 1)), i0 and i1 as <4 x i32>, taken from 0 where f0 is out of range."""
    floor = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_D4, [_D4]),
                                           "llvm.floor.v4f64")
    f = builder.fsub(builder.fmul(coord, vector_splat(
        builder, builder.sitofp(size, ir.DoubleType()), _D4)), ir.Constant(_D4, [0.5] * LANES))
    f0 = builder.call(floor, [f])
    ok = builder.and_(builder.fcmp_ordered(">", f0, ir.Constant(_D4, [-TWO_31] * LANES)),
                      builder.fcmp_ordered("<", f0, ir.Constant(_D4, [TWO_31] * LANES)))
    mask = vector_splat(builder, builder.trunc(builder.sub(size, ir.Constant(
        ir.IntType(64), 1)), ir.IntType(32)), _I32x4)
    i0 = builder.and_(builder.fptosi(builder.select(ok, f0, ir.Constant(_D4, [0.0] * LANES)),
                                     _I32x4), mask)
    i1 = builder.and_(builder.add(i0, ir.Constant(_I32x4, [1] * LANES)), mask)
    return f, f0, ok, i0, i1


@intrinsic
def quad_filter4(typingctx, data, attr, rgba, live, level0, level1, frac, base):
    """The base colour base (r, g, b, a) times the texture filter at each live lane's uv
    (attr[3, lane], attr[4, lane]; float64 C (5, 4)) into rgba[c, lane] (float64 C (4, 4)),
    the base colour alone in the others: bilinear in level0, blended with level1 by frac where
    frac > 0 (trilinear). A level is (first texel in data, width, height), its sides powers of
    two; data: the texture table's RGBA8 words; live: the lanes (bit lane) shaded. Returns
    False, and leaves rgba as it was, where a live lane's texel index is out of repeat's range
    (the caller filters the quad lane by lane then)."""
    if not (isinstance(data, types.Array) and data.dtype == types.uint32 and data.ndim == 1
            and all(isinstance(a, types.Array) and a.dtype == types.float64 and a.ndim == 2
                    and a.layout == "C" for a in (attr, rgba))):
        return None
    sig = types.boolean(data, attr, rgba, live, level0, level1, frac, base)

    def codegen(context, builder, signature, args):
        data, attr, rgba, live, level0, level1, frac, base = args
        words = context.make_array(signature.args[0])(context, builder, data).data
        uv = context.make_array(signature.args[1])(context, builder, attr).data
        out = context.make_array(signature.args[2])(context, builder, rgba).data
        mul, sub, add = builder.fmul, builder.fsub, builder.fadd

        def scalar(value, ty, to):
            return context.cast(builder, value, ty, to)

        live = scalar(live, signature.args[3], types.int64)
        bits = vector_splat(builder, builder.trunc(live, ir.IntType(32)), _I32x4)
        lane_bits = ir.Constant(_I32x4, [1 << k for k in range(LANES)])
        is_live = builder.icmp_unsigned("!=", builder.and_(bits, lane_bits),
                                        ir.Constant(_I32x4, [0] * LANES))
        u = builder.load(vector_row(builder, uv, 3, _D4), align=8)
        v = builder.load(vector_row(builder, uv, 4, _D4), align=8)

        def axis(coord, size):
            """A level's texels along one axis: (i0, i1) as 64-bit lanes, the weight, and
            whether each lane's floor is in range (repeat's masked path)."""
            f, f0, ok, i0, i1 = repeat_texels(builder, coord, size)
            return builder.zext(i0, _I64x4), builder.zext(i1, _I64x4), sub(f, f0), ok

        def level(lv, ty):
            """(the four lanes' texel indices i00, i10, i01, i11 (64-bit lanes), weights ax,
            ay, whether each lane is in range) of level lv = (first, width, height)."""
            first, w, h = (scalar(builder.extract_value(lv, k), ty.types[k], types.int64)
                           for k in range(3))
            x0, x1, ax, okx = axis(u, w)
            y0, y1, ay, oky = axis(v, h)
            base = vector_splat(builder, first, _I64x4)
            wide = vector_splat(builder, w, _I64x4)
            r0, r1 = (builder.add(base, builder.mul(y, wide)) for y in (y0, y1))
            taps = (builder.add(r0, x0), builder.add(r0, x1), builder.add(r1, x0),
                    builder.add(r1, x1))
            return taps, ax, ay, builder.and_(okx, oky)

        def bilerp(taps, ax, ay, lane):
            """bilerp_rgba8's arithmetic for one lane: its (r, g, b, a) as a vector."""
            def texel(t):
                i = builder.extract_element(t, _i32(lane))
                word = builder.load(builder.gep(words, [i]), align=4)
                return builder.uitofp(builder.bitcast(word, _B4), _D4)
            t00, t10, t01, t11 = (texel(t) for t in taps)
            wx = vector_splat(builder, builder.extract_element(ax, _i32(lane)), _D4)
            wy = vector_splat(builder, builder.extract_element(ay, _i32(lane)), _D4)
            top = add(t00, mul(sub(t10, t00), wx))
            bot = add(t01, mul(sub(t11, t01), wx))
            return mul(add(top, mul(sub(bot, top), wy)),
                       ir.Constant(_D4, [1.0 / 255.0] * CHANNELS))

        frac = scalar(frac, signature.args[6], types.float64)
        trilinear = builder.fcmp_ordered(">", frac, ir.Constant(ir.DoubleType(), 0.0))
        t = vector_splat(builder, frac, _D4)
        tint = ir.Constant(_D4, ir.Undefined)
        for c in range(CHANNELS):
            tint = builder.insert_element(tint, scalar(builder.extract_value(base, c),
                                                       signature.args[7].types[c],
                                                       types.float64), _i32(c))

        def store(lane, colour):
            """base x colour where the lane is live, base where not (as the scalar shading)."""
            shaded = builder.select(builder.extract_element(is_live, _i32(lane)),
                                    mul(tint, colour), tint)
            for c in range(CHANNELS):
                ptr = builder.gep(out, [ir.Constant(ir.IntType(64), c * LANES + lane)])
                builder.store(builder.extract_element(shaded, _i32(c)), ptr, align=8)

        def in_range(ok):
            """Whether every live lane's texels are in repeat's range (ok: each lane's)."""
            bad = builder.and_(is_live, builder.not_(ok))
            return builder.icmp_unsigned("==", builder.bitcast(bad, ir.IntType(LANES)),
                                         ir.Constant(ir.IntType(LANES), 0))

        done = cgutils.alloca_once_value(builder, ir.Constant(ir.IntType(1), 0))
        taps0, ax0, ay0, ok0 = level(level0, signature.args[4])
        with builder.if_else(trilinear) as (blend, single):
            with blend:                  # (level1 only here: a bilinear quad's is level0 again)
                taps1, ax1, ay1, ok1 = level(level1, signature.args[5])
                good = in_range(builder.and_(ok0, ok1))
                builder.store(good, done)
                with builder.if_then(good, likely=True):
                    for lane in range(LANES):
                        c0 = bilerp(taps0, ax0, ay0, lane)
                        c1 = bilerp(taps1, ax1, ay1, lane)
                        store(lane, add(c0, mul(sub(c1, c0), t)))
            with single:
                good = in_range(ok0)
                builder.store(good, done)
                with builder.if_then(good, likely=True):
                    for lane in range(LANES):
                        store(lane, bilerp(taps0, ax0, ay0, lane))
        return builder.load(done)

    return sig, codegen
