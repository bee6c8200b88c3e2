"""The bvh8 box test: a ray against a node's 8 child boxes in float32, 8 lanes at once, as
RDNA's ray accelerator tests boxes in fp32 (the BVH instructions take an fp32 ray; RDNA 4 tests
8 boxes per clock, seed-notes 000_partB l.84).

numba's loop vectoriser gives this test at most 4 lanes (in float64, or in float32 beside the
64-bit mask), so `box8` is written as LLVM vector IR: six 8-wide plane loads, subtract,
multiply, min/max, one compare and the sign mask. No fused multiply-add: every operation is one
IEEE rounding, which the bounds below count.

Conservative: a box the exact ray crosses is never culled. A distance (plane - o) * (1 / d) in
float32 is within a factor (1 +- gamma(3)) of the exact one, gamma(n) = n u / (1 - n u), u =
2^-24 (Ize, "Robust BVH Ray Traversal", JCGT 2013; PBRT 3 §3.9); so the far distance, times
1 + FAR_EPS and rounded, is never below the exact far distance times (1 + gamma(3)) / (1 -
gamma(3)), which bounds the near one: FAR_EPS = 2^-21 > 2 gamma(3) + u (4.8e-7 against 3.6e-7).
The kept limit, the closest hit so far, is widened the same way (lim32). Both margins leave room
for the float64 triangle test's own rounding (~1e-15, which BOX_EPS covers on the float64 path).

Ranges: a ray is tame when every direction component is at least 2^-60 in size and every origin
component at most 2^60; the layout clamps planes beyond 2^60 to infinity (outward). Then every
finite distance is below 2^121, no product overflows, and a plane at infinity gives an
infinite distance, never NaN. Rays that are not tame take the float64 test (traverse8_kernels).
"""
from __future__ import annotations

from functools import partial

import numpy as np
from llvmlite import ir
from numba import njit, prange, types
from numba.core import cgutils
from numba.extending import intrinsic

from renderer.inlined import inlined
from renderer.vector_ir import splat as vector_splat

from renderer.box_sort import SORT_LARGEST, SORT_MIDPOINT

from .traverse_kernels import KEY_MAX

FAR_EPS = 2.0 ** -21        # far-distance widening, relative (derived above)
LIM_EPS = 2.0 ** -20        # closest-hit widening before rounding to float32 (lim32)
RANGE = 2.0 ** 60           # tame rays and finite planes stay within this (see above)
F32_MAX = float(np.finfo(np.float32).max)

_F8 = ir.VectorType(ir.FloatType(), 8)
_I32x8 = ir.VectorType(ir.IntType(32), 8)


def _vmax(builder, x, y):
    """The compare-and-select that x86 does in one vmaxps."""
    return builder.select(builder.fcmp_ordered(">", x, y), x, y)


def _vmin(builder, x, y):
    return builder.select(builder.fcmp_ordered("<", x, y), x, y)


@intrinsic
def box8(typingctx, boxes, node, nx, ny, nz, ox, oy, oz, ix, iy, iz, tmin, lim, at, ak, sort):
    """Node `node` of boxes (float32 C (n, 6, 8): planes lo xyz, hi xyz by slot) against the
    ray o, 1/d (float32), its entry planes nx, ny, nz (0 or 3, 1 or 4, 2 or 5 by the sign of d).
    Writes each slot's entry distance to at and its sort key (traverse_kernels.box_key, the
    order `sort`, SORT_*) to ak (float32 (8,) each, +inf where culled) and returns the mask of
    slots kept: entered within [tmin, far * (1 + FAR_EPS)] and at or before lim."""
    sig = types.uint64(boxes, node, nx, ny, nz, ox, oy, oz, ix, iy, iz, tmin, lim, at, ak, sort)

    def codegen(context, builder, signature, args):
        b, node, nx, ny, nz, ox, oy, oz, ix, iy, iz, tmin, lim, at, ak, sort = args
        planes = context.make_array(signature.args[0])(context, builder, b).data
        out = context.make_array(signature.args[13])(context, builder, at).data
        out_key = context.make_array(signature.args[14])(context, builder, ak).data
        f32 = ir.FloatType()
        i64 = node.type
        base = builder.mul(node, ir.Constant(i64, 48))

        vmax, vmin = (partial(f, builder) for f in (_vmax, _vmin))
        splat = partial(vector_splat, builder, vector=_F8)

        def plane(p):
            ptr = builder.gep(planes, [builder.add(base, builder.mul(p, ir.Constant(i64, 8)))])
            return builder.load(builder.bitcast(ptr, _F8.as_pointer()), align=4)

        def dist(p, o, i):
            return builder.fmul(builder.fsub(plane(p), splat(o)), splat(i))

        exit_x, exit_y, exit_z = (builder.sub(ir.Constant(i64, k), p) for k, p in ((3, nx), (5, ny), (7, nz)))
        # every plane loaded once, before the stores (at and ak may alias the planes for all
        # LLVM knows: a load after a store is made again); max is exact, so its order is free
        near = vmax(dist(nx, ox, ix), vmax(dist(ny, oy, iy), dist(nz, oz, iz)))
        far = vmin(vmin(dist(exit_x, ox, ix), dist(exit_y, oy, iy)), dist(exit_z, oz, iz))
        tnear = vmax(splat(tmin), near)
        tfar = builder.fmul(far, splat(ir.Constant(f32, 1.0 + FAR_EPS)))
        hit = builder.fcmp_ordered("<=", tnear, vmin(tfar, splat(lim)))
        inf = splat(ir.Constant(f32, np.inf))
        # box_key's: tnear; tnear - min(far, lim); the unclamped near + far, ends held
        largest = builder.fsub(tnear, vmin(far, splat(lim)))
        midpoint = builder.fadd(vmax(near, splat(ir.Constant(f32, -KEY_MAX))),
                                vmin(far, splat(ir.Constant(f32, KEY_MAX))))

        def is_sort(k):
            return builder.icmp_signed("==", sort, ir.Constant(sort.type, k))
        key = builder.select(is_sort(SORT_LARGEST), largest,
                             builder.select(is_sort(SORT_MIDPOINT), midpoint, tnear))
        builder.store(builder.select(hit, tnear, inf), builder.bitcast(out, _F8.as_pointer()),
                      align=4)
        builder.store(builder.select(hit, key, inf), builder.bitcast(out_key, _F8.as_pointer()),
                      align=4)
        return builder.zext(builder.bitcast(hit, ir.IntType(8)), ir.IntType(64))

    return sig, codegen


@intrinsic
def misses8(typingctx, rays, r, lx, ly, lz, hx, hy, hz):
    """Rays r..r+7 of rays (float32 C (n, 8): origin, tmin, direction, tmax) against one box
    (float32 planes lo lx ly lz, hi hx hy hz), the test box8 runs on a node's slots but across
    8 rays: the mask of those whose entry comes after their widened exit or their lim32(tmax)
    and that are tame (`tame`: a ray that is not, or whose values are NaN, is never in it).

    Box8 misses every box inside this one for such a ray: each of its steps (a subtraction, a
    multiplication by 1/d, min, max, the widening, float32 rounding) is monotonic in the plane,
    so an inner box is never entered before this one nor left after it."""
    if not (isinstance(rays, types.Array) and rays.dtype == types.float32 and rays.ndim == 2
            and rays.layout == "C"):
        return None
    sig = types.uint64(rays, r, lx, ly, lz, hx, hy, hz)

    def codegen(context, builder, signature, args):
        arr, r, lx, ly, lz, hx, hy, hz = args
        data = context.make_array(signature.args[0])(context, builder, arr).data
        i64, f32 = r.type, ir.FloatType()
        ptr = builder.gep(data, [builder.mul(r, ir.Constant(i64, 8))])
        block = builder.load(builder.bitcast(ptr, ir.VectorType(f32, 64).as_pointer()), align=4)

        def column(k):       # field k of the 8 rays (8 rows of 8 floats, transposed)
            return builder.shuffle_vector(block, ir.Constant(ir.VectorType(f32, 64), ir.Undefined),
                                          ir.Constant(_I32x8, [k + 8 * i for i in range(8)]))

        vmax, vmin = (partial(f, builder) for f in (_vmax, _vmin))
        splat = partial(vector_splat, builder, vector=_F8)
        zero = splat(ir.Constant(f32, 0.0))
        near, far = [], []
        for k, lo, hi in ((0, lx, hx), (1, ly, hy), (2, lz, hz)):
            o, inv = column(k), builder.fdiv(splat(ir.Constant(f32, 1.0)), column(4 + k))
            a = builder.fmul(builder.fsub(splat(lo), o), inv)
            b = builder.fmul(builder.fsub(splat(hi), o), inv)
            up = builder.fcmp_ordered(">", inv, zero)        # entry_planes: lo where 1/d > 0
            near.append(builder.select(up, a, b))
            far.append(builder.select(up, b, a))
        tnear = vmax(vmax(column(3), near[0]), vmax(near[1], near[2]))
        tfar = vmin(vmin(far[0], far[1]), far[2])
        tfar = builder.fmul(tfar, splat(ir.Constant(f32, 1.0 + FAR_EPS)))
        d8 = ir.VectorType(ir.DoubleType(), 8)             # lim32, 8 at once
        wide = builder.fmul(builder.fpext(column(7), d8),
                            vector_splat(builder, ir.Constant(ir.DoubleType(), 1.0 + LIM_EPS), d8))
        top = ir.Constant(d8, [F32_MAX] * 8)
        lim = builder.fptrunc(builder.select(builder.fcmp_ordered("<", top, wide), top, wide), _F8)
        miss = builder.fcmp_ordered(">", tnear, vmin(tfar, lim))
        fabs = cgutils.get_or_insert_function(builder.module, ir.FunctionType(_F8, [_F8]),
                                              "llvm.fabs.v8f32")
        for k in range(3):     # tame: |d| >= 1 / RANGE and |o| <= RANGE on each axis, ordered
            d_ok = builder.fcmp_ordered(">=", builder.call(fabs, [column(4 + k)]),
                                        splat(ir.Constant(f32, 1.0 / RANGE)))
            o_ok = builder.fcmp_ordered("<=", builder.call(fabs, [column(k)]),
                                        splat(ir.Constant(f32, RANGE)))
            miss = builder.and_(miss, builder.and_(d_ok, o_ok))
        return builder.zext(builder.bitcast(miss, ir.IntType(8)), ir.IntType(64))

    return sig, codegen


@inlined
def entry_planes(ix, iy, iz):
    """The plane rows (of lo xyz, hi xyz) where a ray with these reciprocal directions enters a
    box on each axis: lo for a positive component, hi otherwise; box8's nx, ny, nz."""
    return 0 if ix > 0.0 else 3, 1 if iy > 0.0 else 4, 2 if iz > 0.0 else 5


@inlined
def lim32(best_t):
    """The float32 limit box8 keeps children up to: the closest hit widened by LIM_EPS (so that
    float32's rounding, to nearest, still lands above best_t (1 + gamma(3))), never above the
    largest float32, so that an empty slot's infinite entry is never kept."""
    return np.float32(min(best_t * (1.0 + LIM_EPS), F32_MAX))


@inlined
def tame(ox, oy, oz, dx, dy, dz):
    """Whether box8's ranges hold for this ray (see the module's note); float32 or float64 values."""
    return (min(abs(dx), abs(dy), abs(dz)) >= 1.0 / RANGE
            and max(abs(ox), abs(oy), abs(oz)) <= RANGE)


def planes32(lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float64 planes rounded outward to float32: lo down, hi up, and beyond RANGE to infinity
    (node_planes's slow twin, in numpy)."""
    l32, h32 = lo.astype(np.float32), hi.astype(np.float32)
    l32 = np.where(l32 > lo, np.nextafter(l32, np.float32(-np.inf)), l32)
    h32 = np.where(h32 < hi, np.nextafter(h32, np.float32(np.inf)), h32)
    l32 = np.where(l32 < -RANGE, np.float32(-np.inf), l32)
    h32 = np.where(h32 > RANGE, np.float32(np.inf), h32)
    return l32, h32


@njit(cache=True, nogil=True, parallel=True)
def node_planes(lo, hi, valid, out):
    """The box test's rows: out[k] (float32 (k, 6, 8): planes lo xyz, hi xyz by slot) from the
    child boxes lo, hi (float64 (k, 8, 3)) as planes32 rounds them, +inf in every plane of a
    slot not `valid` ((k, 8)). A kernel on all threads, where numpy's rounding, concatenation,
    mask and transpose took 9 ms of sponza's 52 ms layout."""
    for k in prange(lo.shape[0]):
        for j in range(8):
            for a in range(3):
                lo32, hi32 = np.float32(np.inf), np.float32(np.inf)
                if valid[k, j]:
                    lo32, hi32 = np.float32(lo[k, j, a]), np.float32(hi[k, j, a])
                    if lo32 > lo[k, j, a]:
                        lo32 = np.nextafter(lo32, np.float32(-np.inf))
                    if hi32 < hi[k, j, a]:
                        hi32 = np.nextafter(hi32, np.float32(np.inf))
                    if lo32 < -RANGE:
                        lo32 = np.float32(-np.inf)
                    if hi32 > RANGE:
                        hi32 = np.float32(np.inf)
                out[k, a, j], out[k, 3 + a, j] = lo32, hi32


def box8_twin(boxes: np.ndarray, node: int, o, d, tmin, lim, sort: int = 0):
    """box8 in numpy, one operation at a time in float32: the slow twin tests hold it to.
    Returns the mask kept, the entry distances and the sort keys (SORT_*)."""
    f = np.float32
    o, i = np.asarray(o, f), f(1) / np.asarray(d, f)
    b = boxes[node]
    near = np.where(i[:, None] > 0, b[0:3], b[3:6])
    far = np.where(i[:, None] > 0, b[3:6], b[0:3])
    a = (near - o[:, None]) * i[:, None]
    c = (far - o[:, None]) * i[:, None]
    near_t = np.maximum(a[0], np.maximum(a[1], a[2]))
    tnear = np.maximum(f(tmin), near_t)
    far_t = np.minimum(np.minimum(c[0], c[1]), c[2])
    hit = tnear <= np.minimum(far_t * f(1.0 + FAR_EPS), f(lim))
    with np.errstate(invalid="ignore"):          # (inf - inf in slots not kept)
        key = {SORT_LARGEST: lambda: tnear - np.minimum(far_t, f(lim)),
               SORT_MIDPOINT: lambda: (np.maximum(near_t, f(-KEY_MAX))
                                       + np.minimum(far_t, f(KEY_MAX)))}.get(sort, lambda: tnear)()
    return (int((hit * (1 << np.arange(8))).sum()), np.where(hit, tnear, f(np.inf)),
            np.where(hit, key, f(np.inf)))
