"""The bvh8 triangle test: a ray against a primitive node's 4 triangle lanes at once, in float64.

`tri4` is traverse_kernels._tri (Moeller-Trumbore) with the same operations in the same order,
each lane on its own, so every lane's values are the scalar test's bit for bit: IEEE
operations, no fused multiply-add, no reassociation. numba's vectoriser left the lane loop
scalar (4 divides and 110 scalar multiplies in the kernel's assembly), so the test is written as
LLVM vector IR: 4 float64 lanes, one AVX2 register per row of the node's triangles
(Layout.tri_corners: float32 corners a, b, c by axis, a lane per triangle; widened to float64,
where the edges b - a, c - a are exact).

Where _tri returns early, tri4 computes on and masks: a miss is det == 0, u < 0, u > 1,
v < 0, u + v > 1, t < tmin or t > tmax, each an ordered compare. A lane whose arithmetic gives
NaN is not masked (no compare takes a NaN) and comes out NaN, as _tri returns it; callers take
only lanes whose t < inf, which a NaN is not. Back-face culling is the caller's, on the
determinant tri4 also returns.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from renderer.vector_ir import splat as vector_splat

LANES = 4                 # triangles a primitive node holds (layouts.PRIM_TRIS)
ROWS = 9                  # corners a, b, c by axis

_D4 = ir.VectorType(ir.DoubleType(), LANES)
_F4 = ir.VectorType(ir.FloatType(), LANES)


@intrinsic
def tri4(typingctx, tc, s, ox, oy, oz, dx, dy, dz, tmin, tmax, out_t, out_det):
    """Primitive node s of tc (float32 C (n, 9, 4)) against the ray o, d (float64) within
    [tmin, tmax]. Writes each lane's t to out_t (float64 (4,), +inf for a miss) and its
    determinant to out_det; returns the mask of lanes whose t < inf."""
    sig = types.uint64(tc, s, ox, oy, oz, dx, dy, dz, tmin, tmax, out_t, out_det)

    def codegen(context, builder, signature, args):
        tc, s, ox, oy, oz, dx, dy, dz, tmin, tmax, out_t, out_det = args
        rows = context.make_array(signature.args[0])(context, builder, tc).data
        t_ptr = context.make_array(signature.args[10])(context, builder, out_t).data
        det_ptr = context.make_array(signature.args[11])(context, builder, out_det).data
        i64 = s.type
        base = builder.mul(s, ir.Constant(i64, ROWS * LANES))

        def splat(x):
            return vector_splat(builder, x, _D4)

        def row(k):               # float32 corners, widened (exact)
            ptr = builder.gep(rows, [builder.add(base, ir.Constant(i64, k * LANES))])
            return builder.fpext(builder.load(builder.bitcast(ptr, _F4.as_pointer()), align=4), _D4)

        mul, sub, add = builder.fmul, builder.fsub, builder.fadd

        def cross(a1, a2, a3, b1, b2, b3):     # (a2 b3 - a3 b2, a3 b1 - a1 b3, a1 b2 - a2 b1)
            return sub(mul(a2, b3), mul(a3, b2)), sub(mul(a3, b1), mul(a1, b3)), sub(mul(a1, b2), mul(a2, b1))

        def dot(a1, a2, a3, b1, b2, b3):       # (a1 b1 + a2 b2) + a3 b3, as Python evaluates it
            return add(add(mul(a1, b1), mul(a2, b2)), mul(a3, b3))

        def lt(x, y):
            return builder.fcmp_ordered("<", x, y)

        ax, ay, az, bx, by, bz, cx, cy, cz = (row(k) for k in range(ROWS))
        e1x, e1y, e1z, e2x, e2y, e2z = sub(bx, ax), sub(by, ay), sub(bz, az), sub(cx, ax), sub(cy, ay), sub(cz, az)
        dx, dy, dz = splat(dx), splat(dy), splat(dz)
        px, py, pz = cross(dx, dy, dz, e2x, e2y, e2z)
        det = dot(e1x, e1y, e1z, px, py, pz)
        one, zero = splat(ir.Constant(ir.DoubleType(), 1.0)), splat(ir.Constant(ir.DoubleType(), 0.0))
        inv = builder.fdiv(one, det)
        sx, sy, sz = sub(splat(ox), ax), sub(splat(oy), ay), sub(splat(oz), az)
        u = mul(dot(sx, sy, sz, px, py, pz), inv)
        qx, qy, qz = cross(sx, sy, sz, e1x, e1y, e1z)
        v = mul(dot(dx, dy, dz, qx, qy, qz), inv)
        t = mul(dot(e2x, e2y, e2z, qx, qy, qz), inv)
        miss = builder.fcmp_ordered("==", det, zero)
        for bad in (lt(u, zero), lt(one, u), lt(v, zero), lt(one, add(u, v)), lt(t, splat(tmin)),
                    lt(splat(tmax), t)):
            miss = builder.or_(miss, bad)
        inf = splat(ir.Constant(ir.DoubleType(), np.inf))
        t = builder.select(miss, inf, t)
        builder.store(t, builder.bitcast(t_ptr, _D4.as_pointer()), align=8)
        builder.store(det, builder.bitcast(det_ptr, _D4.as_pointer()), align=8)
        hit = lt(t, inf)
        return builder.zext(builder.bitcast(hit, ir.IntType(LANES)), ir.IntType(64))

    return sig, codegen
