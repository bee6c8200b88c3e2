"""A quad's attributes at its four pixel centres at once: LLVM vector IR, a lane a pixel.

`quad_attributes4` is the perspective-correct interpolation that raster_sections.quad_attributes
ran lane by lane until 2026-12-06 (the normal and uv at each pixel centre of a 2x2 quad, from
the triangle's float64 edge functions and 1/w), with the same operations in the same order on
each lane, so every lane's values are the scalar loop's bit for bit: IEEE operations, no fused
multiply-add, no reassociation (sums left to right, as Python evaluates them;
tests/test_interpolate.py holds the two equal). The scalar loop reloaded and widened the
triangle's float32 normals and uvs at every lane (LLVM cannot prove that the stores to the lane
array leave them unchanged) and divided lane by lane: 15% of pul1duel's rasterize_tile samples
through imr-baseline (bench/perf_kernels.py --annotate rasterize_tile). Here each row is one
AVX2 register (4 float64 lanes): three edge functions, three weights, one division, five
attributes, and the triangle's corners come in as scalars read once a triangle.

The attributes go out attribute by attribute (attr[k, lane]: nx, ny, nz, u, v), four lanes a
row, one vector store each.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .vector_ir import lanes, row as vector_row, splat as vector_splat

LANES = 4                     # a quad's pixels: (0, 0), (1, 0), (0, 1), (1, 1)
_D4 = ir.VectorType(ir.DoubleType(), LANES)


@intrinsic
def quad_attributes4(typingctx, attr, x0, x1, y0, y1, fedges, inv_w, normals, uvs):
    """attr[k, lane] (float64 C (5, 4)) = attribute k at the centre of the quad's pixel `lane`,
    whose subpixel coordinates are (x0, y0), (x1, y0), (x0, y1), (x1, y1) (float64): the
    barycentric weights from the edge functions fedges (A0, A1, A2, B0, B1, B2, C0, C1, C2:
    float64) and inv_w (1/w at the three corners), the normal (normals: the corners' nx, ny,
    nz, float32) with the unnormalised weights, the uv (uvs: the corners' u, v, float32) with
    the normalised ones."""
    if not (isinstance(attr, types.Array) and attr.dtype == types.float64 and attr.ndim == 2
            and attr.layout == "C"):
        return None
    sig = types.void(attr, x0, x1, y0, y1, fedges, inv_w, normals, uvs)

    def codegen(context, builder, signature, args):
        attr, x0, x1, y0, y1, fedges, inv_w, normals, uvs = args
        out = context.make_array(signature.args[0])(context, builder, attr).data

        def as_lanes(values, types_):         # float64 values (cast from their types) as lanes
            return lanes(builder, [context.cast(builder, x, ty, types.float64)
                                   for x, ty in zip(values, types_)], _D4)

        def splat(tup, ty, i):                # element i of a tuple argument, in every lane
            x = context.cast(builder, builder.extract_value(tup, i), ty.dtype, types.float64)
            return vector_splat(builder, x, _D4)

        mul, add = builder.fmul, builder.fadd
        xt, yt = signature.args[1], signature.args[3]
        X = as_lanes([x0, x1, x0, x1], [xt, signature.args[2], xt, signature.args[2]])
        Y = as_lanes([y0, y0, y1, y1], [yt, yt, signature.args[4], signature.args[4]])
        te, tw, tn, tu = signature.args[5:9]
        a = [splat(fedges, te, i) for i in range(3)]
        b = [splat(fedges, te, 3 + i) for i in range(3)]
        c = [splat(fedges, te, 6 + i) for i in range(3)]
        # edge k's function is the weight of the corner opposite it, (k + 2) mod 3
        l2 = add(add(mul(a[0], X), mul(b[0], Y)), c[0])
        l0 = add(add(mul(a[1], X), mul(b[1], Y)), c[1])
        l1 = add(add(mul(a[2], X), mul(b[2], Y)), c[2])
        p0, p1, p2 = (mul(l, splat(inv_w, tw, k)) for k, l in enumerate((l0, l1, l2)))

        def interpolate(w0, w1, w2, tup, ty, stride, ch):
            return add(add(mul(w0, splat(tup, ty, ch)), mul(w1, splat(tup, ty, stride + ch))),
                       mul(w2, splat(tup, ty, 2 * stride + ch)))

        rows = [interpolate(p0, p1, p2, normals, tn, 3, ch) for ch in range(3)]
        ps = builder.fdiv(ir.Constant(_D4, [1.0] * LANES), add(add(p0, p1), p2))
        q0, q1, q2 = mul(p0, ps), mul(p1, ps), mul(p2, ps)
        rows += [interpolate(q0, q1, q2, uvs, tu, 2, ch) for ch in range(2)]
        for k, values in enumerate(rows):
            builder.store(values, vector_row(builder, out, k, _D4), align=8)
        return context.get_dummy_value()

    return sig, codegen
