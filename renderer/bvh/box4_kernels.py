"""The bvh4 box test on a node's four children at once: traverse_kernels.slab_and_key in four
float64 lanes, operation for operation, so that every distance, key and decision is the one the
scalar test gives (tests/test_bvh.py holds the two to each other bit for bit).

The bvh4 walk (traverse4_kernels.walk) had tested a node's children one by one: a third of its
time in scalar float64 arithmetic, on the layout most presets' ray passes walk. Python's max(a,
b) as numba compiles it is b where b > a, else a (min: b where b < a), which the selects below
repeat, so that even a zero's sign comes out as the scalar test's. A ray parallel to a slab
(its reciprocal 0, traverse_kernels._inv) takes the slab's inside-or-out answer lane by lane,
by select, where the scalar test branched.
"""
from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from renderer.box_sort import SORT_CLOSEST, SORT_LARGEST, SORT_MIDPOINT
from renderer.vector_ir import splat as vector_splat

from .traverse_kernels import BOX_EPS, KEY_MAX

_D4 = ir.VectorType(ir.DoubleType(), 4)
BOX0, BOX_WORDS = 4, 6     # a bvh4 node's child j: float32 words 4 + 6 j .. (lo xyz, hi xyz)


@intrinsic
def box4(typingctx, node_f32, node, ox, oy, oz, ix, iy, iz, tmin, tmax, lim, sort, at, ak, b):
    """Node `node` of a bvh4 layout (node_f32: its float32 words, C (n, 32)) against the ray o,
    1/d (float64; traverse_kernels._inv: 0 where parallel), [tmin, tmax], the closest hit's
    limit lim, in order `sort` (SORT_*): each child slot j's entry distance and sort key, as
    slab_and_key returns them (inf, inf: missed), into at[b + j] and ak[b + j] (float64), all
    four slots (an empty slot's too: the walk skips it)."""
    sig = types.void(node_f32, node, ox, oy, oz, ix, iy, iz, tmin, tmax, lim, sort, at, ak, b)

    def codegen(context, builder, signature, args):
        words_arg, node, ox, oy, oz, ix, iy, iz, tmin, tmax, lim, sort, at, ak, b = args
        words_ary = context.make_array(signature.args[0])(context, builder, words_arg)
        words = words_ary.data
        row = builder.extract_value(words_ary.shape, 1)
        f64, i64 = ir.DoubleType(), ir.IntType(64)
        splat = lambda x: vector_splat(builder, x, _D4)           # noqa: E731
        const = lambda x: ir.Constant(_D4, [float(x)] * 4)        # noqa: E731
        base = builder.mul(node, row)

        # the four boxes' 24 words in one load, each plane's four lanes shuffled out of it and
        # widened at once (a word at a time, loaded, widened and inserted, had been 72
        # instructions of the test)
        boxes_ty = ir.VectorType(ir.FloatType(), 4 * BOX_WORDS)
        first = builder.gep(words, [builder.add(base, ir.Constant(i64, BOX0))])
        boxes = builder.load(builder.bitcast(first, boxes_ty.as_pointer()), align=4)

        def plane(c):
            lanes = ir.Constant(ir.VectorType(ir.IntType(32), 4),
                                [BOX_WORDS * j + c for j in range(4)])
            return builder.fpext(builder.shuffle_vector(boxes, ir.Constant(boxes_ty, ir.Undefined),
                                                        lanes), _D4)

        def vmax(acc, v):           # Python's max(acc, v), as numba compiles it
            return builder.select(builder.fcmp_ordered(">", v, acc), v, acc)

        def vmin(acc, v):
            return builder.select(builder.fcmp_ordered("<", v, acc), v, acc)

        def axis(lo, hi, o, inv, tn, tf):
            """_axis: [tn, tf] clipped by one slab, lane by lane."""
            os_ = splat(o)
            a = builder.fmul(builder.fsub(lo, os_), splat(inv))
            bb = builder.fmul(builder.fsub(hi, os_), splat(inv))
            clipped_n, clipped_f = vmax(tn, vmin(a, bb)), vmin(tf, vmax(a, bb))
            outside = builder.or_(builder.fcmp_ordered("<", os_, lo),
                                  builder.fcmp_ordered(">", os_, hi))
            par_n = builder.select(outside, const(np.inf), tn)
            par_f = builder.select(outside, const(-np.inf), tf)
            parallel = builder.fcmp_ordered("==", inv, ir.Constant(f64, 0.0))
            return builder.select(parallel, par_n, clipped_n), builder.select(parallel, par_f, clipped_f)

        lx, ly, lz, hx, hy, hz = (plane(c) for c in range(6))

        def interval(tn, tf):
            tn, tf = axis(lx, hx, ox, ix, tn, tf)
            tn, tf = axis(ly, hy, oy, iy, tn, tf)
            return axis(lz, hz, oz, iz, tn, tf)

        def kept(tn, tf):
            """tn <= min(tf + |tf| BOX_EPS + 1e-300, tmax)"""
            fabs = builder.module.globals.get("llvm.fabs.v4f64") or ir.Function(
                builder.module, ir.FunctionType(_D4, [_D4]), "llvm.fabs.v4f64")
            widened = builder.fadd(builder.fadd(tf, builder.fmul(builder.call(fabs, [tf]),
                                                                 const(BOX_EPS))), const(1e-300))
            return builder.fcmp_ordered("<=", tn, vmin(widened, splat(tmax)))

        inf = const(np.inf)
        # The interval from (-inf, inf), its entry clamped to tmin: the other orders' distance,
        # and nearest first's too, which slab_and_key takes from [tmin, inf) (_slab). Both are
        # one chain of selects over the three near planes, from tmin or from -inf: each keeps
        # the first value greater than all before it, so either gives tmin unless a plane is
        # greater, and then the same plane, the sign of a zero included (a NaN is passed over
        # alike); the far chains start at inf in both. (Testing both ways took half of the
        # test's arithmetic.)
        near, far = interval(const(-np.inf), inf)
        tn = vmax(splat(tmin), near)
        hit = kept(tn, far)
        dist = builder.select(hit, tn, inf)
        largest = builder.fsub(tn, vmin(far, splat(lim)))
        midpoint = builder.fadd(vmax(near, const(-KEY_MAX)), vmin(far, const(KEY_MAX)))

        def is_sort(k):
            return builder.icmp_signed("==", sort, ir.Constant(sort.type, k))
        key = builder.select(is_sort(SORT_LARGEST), largest, midpoint)
        keys = builder.select(is_sort(SORT_CLOSEST), dist, builder.select(hit, key, inf))
        for out, v in ((at, dist), (ak, keys)):
            data = context.make_array(signature.args[12])(context, builder, out).data
            ptr = builder.bitcast(builder.gep(data, [b]), _D4.as_pointer())
            builder.store(v, ptr, align=8)
        return context.get_dummy_value()

    return sig, codegen


assert SORT_MIDPOINT not in (SORT_CLOSEST, SORT_LARGEST)     # the select above: the third order
