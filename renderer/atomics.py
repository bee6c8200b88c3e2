"""An atomic fetch-and-add for kernels that share work between threads (numba has none on the CPU).

    k = fetch_add(cursor, 1)      # cursor: an int64 array; returns cursor[0] before the add

The raster's threads take tiles one at a time from a shared cursor (raster_kernels.run_tiles), so
a thread slowed by another thread on its core (the tiler's memory replay) or by dense tiles takes
fewer, and none waits at the end of a band for another's fixed share. `monotonic` ordering: the
cursor orders nothing but itself; what a tile writes is published when the threads join.
"""
from __future__ import annotations

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def fetch_add(typingctx, cursor, value):
    """cursor[0] += value atomically (int64 array, C or any layout); returns the value before."""
    if not (isinstance(cursor, types.Array) and cursor.dtype == types.int64):
        return None
    sig = types.int64(cursor, types.int64)

    def codegen(context, builder, signature, args):
        arr, value = args
        ary = context.make_array(signature.args[0])(context, builder, arr)
        ptr = cgutils.get_item_pointer(context, builder, signature.args[0], ary,
                                       [context.get_constant(types.intp, 0)])
        value = context.cast(builder, value, signature.args[1], types.int64)
        return builder.atomic_rmw("add", ptr, value, "monotonic")
    return sig, codegen
