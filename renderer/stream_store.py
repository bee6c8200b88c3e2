"""Stores that bypass the host's caches, for outputs written once and read long after.

    stream_row(cnt, r, values)    # cnt int32 C (n, k): row r = values (k int64s, truncated)
    stream_fence()                # before another thread reads what the stores wrote

A bvh trace writes each ray's row of per-ray counters (traverse_kernels.C_*, 80 bytes a ray,
166 MB for a 1920x1080 frame of rays): far more than the host's caches hold, so each line
written is first read from DRAM (a write-allocate) and later evicted. Non-temporal stores
(`!nontemporal`: MOVNTI, four bytes each, combined into whole lines in the core's write-combining
buffers) skip the read. They are weakly ordered: a thread ends its writes with stream_fence
(SFENCE) before it returns its results to one that reads them.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

_I32 = ir.IntType(32)


@intrinsic
def stream_row(typingctx, cnt, r, values):
    """Row r of cnt (int32, 2-D, C) = values (a tuple of as many integers), stored
    non-temporally."""
    if not (isinstance(cnt, types.Array) and cnt.ndim == 2 and cnt.layout == "C"
            and cnt.dtype == types.int32 and isinstance(values, types.BaseTuple)
            and all(isinstance(t, types.Integer) for t in values)):
        return None
    sig = types.void(cnt, r, values)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        width = cgutils.unpack_tuple(builder, ary.shape, 2)[1]
        row = context.cast(builder, args[1], signature.args[1], types.int64)
        base = builder.gep(ary.data, [builder.mul(row, width)])
        nt = builder.module.add_metadata([ir.Constant(_I32, 1)])
        for k, (t, v) in enumerate(zip(signature.args[2], cgutils.unpack_tuple(builder, args[2]))):
            st = builder.store(context.cast(builder, v, t, types.int32),
                               builder.gep(base, [ir.Constant(ir.IntType(64), k)]), align=4)
            st.set_metadata("nontemporal", nt)
        return context.get_dummy_value()
    return sig, codegen


@intrinsic
def stream_fence(typingctx):
    """SFENCE: the non-temporal stores before it are visible before any store after it."""
    sig = types.void()

    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), []),
                                            "llvm.x86.sse.sfence")
        builder.call(fn, [])
        return context.get_dummy_value()
    return sig, codegen
