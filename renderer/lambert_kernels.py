"""Lambert on a quad's four lanes at once: LLVM vector IR, a lane a pixel.

`lambert4` is shade_kernels.lambert (a directional light plus ambient on the interpolated,
normalised normal, flipped for back faces) with the same operations in the same order on each
lane, so every lane's colour is the scalar function's bit for bit: IEEE operations (the square
root included), no fused multiply-add, no reassociation, and max(0, n.l) as numba's max takes
it (0 where n.l is NaN or not above 0). tests/test_lambert.py holds the two equal. Lane by lane,
each textured or lit fragment took a square root and a division of its own, and the scalar
code between them: about 8% of pul1duel's rasterize_tile samples through imr-baseline
(bench/perf_kernels.py --annotate rasterize_tile). Here a quad takes one of each, four float64
lanes a row (one AVX2 register).

The rows are the raster's quad arrays, attribute by attribute: colour rgba[c, lane] (r, g, b,
a: a is left as it is), normal attr[c, lane] for c < 3 (raster_sections.quad_attributes).
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .vector_ir import row as vector_row, splat as vector_splat

LANES = 4
_D4 = ir.VectorType(ir.DoubleType(), LANES)


@intrinsic
def lambert4(typingctx, rgba, attr, back, light):
    """rgba[0:3, lane] (float64 C (4, 4)) lit in place by the normal attr[0:3, lane] (float64
    C (5, 4)), flipped where `back`, under light (the 9 scalars of shade.light_vector: the
    direction towards the light, its colour, the ambient colour)."""
    if not all(isinstance(a, types.Array) and a.dtype == types.float64 and a.ndim == 2
               and a.layout == "C" for a in (rgba, attr)):
        return None
    sig = types.void(rgba, attr, back, light)

    def codegen(context, builder, signature, args):
        rgba, attr, back, light = args
        colour = context.make_array(signature.args[0])(context, builder, rgba).data
        normal = context.make_array(signature.args[1])(context, builder, attr).data

        def row(base, k):
            return vector_row(builder, base, k, _D4)

        def light_(k):
            return vector_splat(builder, context.cast(builder, builder.extract_value(light, k),
                                                      signature.args[3].dtype, types.float64), _D4)

        mul, add = builder.fmul, builder.fadd
        nx, ny, nz = (builder.load(row(normal, k), align=8) for k in range(3))
        sqrt = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_D4, [_D4]),
                                              "llvm.sqrt.v4f64")
        ln = builder.call(sqrt, [add(add(mul(nx, nx), mul(ny, ny)), mul(nz, nz))])
        zero = ir.Constant(_D4, [0.0] * LANES)
        inv = builder.fdiv(ir.Constant(_D4, [1.0] * LANES), ln)
        unit = builder.fcmp_ordered(">", ln, zero)          # normalised where ln > 0
        nx, ny, nz = (builder.select(unit, mul(n, inv), n) for n in (nx, ny, nz))
        flip = context.cast(builder, back, signature.args[2], types.boolean)
        nx, ny, nz = (builder.select(flip, builder.fneg(n), n) for n in (nx, ny, nz))
        dot = add(add(mul(nx, light_(0)), mul(ny, light_(1))), mul(nz, light_(2)))
        ndl = builder.select(builder.fcmp_ordered(">", dot, zero), dot, zero)
        for c in range(3):
            ptr = row(colour, c)
            lit = mul(builder.load(ptr, align=8), add(light_(6 + c), mul(ndl, light_(3 + c))))
            builder.store(lit, ptr, align=8)
        return context.get_dummy_value()

    return sig, codegen
