"""A software prefetch for kernels that walk data in an order the hardware cannot guess.

    prefetch(arr, i)       # asks the caches for the line holding arr[i] (1-D, C); returns at once

The IMR's memory replay reads the raster's per-reference arrays and events in submission order,
while the raster left them tile by tile: every work item is a jump, and its loads (the
reference's triangle, block and texel counts, then its events) wait on memory one after another.
Asked for a few items ahead, those lines are in the cache by the time the item comes.
`llvm.prefetch` (read, kept in every level, data) is a hint: it loads nothing into a register,
cannot fault, and an index past the array's end is harmless.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic


@intrinsic
def prefetch(typingctx, arr, i):
    """Prefetch the cache line of arr[i] (a 1-D C-contiguous array; i any integer)."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and arr.layout == "C"
            and isinstance(i, types.Integer)):
        return None
    sig = types.void(arr, i)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        index = context.cast(builder, args[1], signature.args[1], types.intp)
        # (a plain gep, not cgutils.get_item_pointer: no wrap-around of a negative index)
        i8p, i32 = ir.IntType(8).as_pointer(), ir.IntType(32)
        ptr = builder.bitcast(builder.gep(ary.data, [index]), i8p)
        fn = builder.module.globals.get("llvm.prefetch.p0i8") or ir.Function(
            builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
            "llvm.prefetch.p0i8")
        builder.call(fn, [ptr, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()
    return sig, codegen
