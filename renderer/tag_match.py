"""The way of a set whose tag is a line: the lookup every request of the cache model makes.

    way = tag_way(lines, s, n, line)     # lines int64 (sets, F_N, max ways), C; -1: a miss
    way = way_in_row(tags, first, n, line)   # tags int64 flat, a set's n ways from `first`
                                             # (the texture L1's, texture_l1.l1_access)

`memory_kernels.serve_levels` looked for it as a plain loop over the set's n ways remembering
the last match, which LLVM vectorised as four ways a compare and then reduced the matching
index across the lanes with compares and blends: a tenth of serve_levels' samples on spheres
through amd-rdna2 (Linux perf). A set's tags are unique, so the way is the lowest set bit of
the ways' match mask: `tag_way` compares four ways at a time (one AVX2 compare), collects each
four's result as four bits (a `vmovmskpd`) and takes the mask's trailing zeros.

A chunk of four may run past the set's n ways into the next ways of the row (the array's last
axis is the largest level's ways) or into the set's next field (the LRU stamps): those bits are
masked off, and the reads stay inside the array, since the tags are a set's first field.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


LANES = 4                  # ways a compare takes (an AVX2 register of int64)

_I64 = ir.IntType(64)
_V4 = ir.VectorType(_I64, LANES)


def _int64_c(ty, ndim):
    """Whether numba type ty is a C-contiguous int64 array of ndim dimensions."""
    return (isinstance(ty, types.Array) and ty.ndim == ndim and ty.layout == "C"
            and ty.dtype == types.int64)


def _scalars(context, builder, signature, args):
    """An intrinsic's arguments after its array, as i64 values."""
    return [context.cast(builder, a, t, types.int64)
            for a, t in zip(args[1:], signature.args[1:])]


def _match(builder, tags, n, line):
    """The IR of a lookup: the lowest k < n with tags[k] == line (tags: an i64 pointer), or -1;
    four tags a compare, so up to three past n are read (and masked off)."""
    # (imported here, when the IR is made: block_masks imports the binning kernels, which
    # import the texture L1, which imports this module)
    from .block_masks import cttz64
    i32 = ir.IntType(32)
    want = builder.shuffle_vector(
        builder.insert_element(ir.Constant(_V4, ir.Undefined), line, ir.Constant(i32, 0)),
        ir.Constant(_V4, ir.Undefined), ir.Constant(ir.VectorType(i32, LANES), [0] * LANES))
    four = ir.Constant(_I64, LANES)
    chunks = builder.udiv(builder.add(n, ir.Constant(_I64, LANES - 1)), four)
    mask = cgutils.alloca_once_value(builder, ir.Constant(_I64, 0))
    with cgutils.for_range(builder, chunks) as loop:
        at = builder.mul(loop.index, four)
        v = builder.load(builder.bitcast(builder.gep(tags, [at]), _V4.as_pointer()), align=8)
        bits = builder.bitcast(builder.icmp_signed("==", v, want), ir.IntType(LANES))
        got = builder.shl(builder.zext(bits, _I64), at)
        builder.store(builder.or_(builder.load(mask), got), mask)
    # the ways past n, then the lowest match (cttz of 0 is 64: no way)
    keep = builder.sub(builder.shl(ir.Constant(_I64, 1), n), ir.Constant(_I64, 1))
    keep = builder.select(builder.icmp_signed(">=", n, ir.Constant(_I64, 64)),
                          ir.Constant(_I64, -1), keep)
    found = builder.and_(builder.load(mask), keep)
    way = cttz64(builder, found)
    return builder.select(builder.icmp_signed("==", found, ir.Constant(_I64, 0)),
                          ir.Constant(_I64, -1), way)


@intrinsic
def tag_way(typingctx, lines, s, n, line):
    """The way (0..n-1) of set s of `lines` (int64 C (sets, fields, max ways), tags the first
    field) whose tag is `line`, or -1; n at most 64 ways (memory_kernels.MAX_WAYS)."""
    if not _int64_c(lines, 3):
        return None
    sig = types.int64(lines, s, n, line)

    def codegen(context, builder, signature, args):
        s, n, line = _scalars(context, builder, signature, args)
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        shape = cgutils.unpack_tuple(builder, ary.shape, 3)
        tags = builder.gep(ary.data, [builder.mul(s, builder.mul(shape[1], shape[2]))])
        return _match(builder, tags, n, line)
    return sig, codegen


@intrinsic
def way_in_row(typingctx, tags, first, n, line):
    """The k (0..n-1) with tags[first + k] == line, or -1: tag_way for a cache whose sets lie
    in one flat int64 array, n ways a set from `first` (the texture L1). n must be a multiple
    of four (the compares read whole fours) and at most 64."""
    if not _int64_c(tags, 1):
        return None
    sig = types.int64(tags, first, n, line)

    def codegen(context, builder, signature, args):
        first, n, line = _scalars(context, builder, signature, args)
        tags = context.make_array(signature.args[0])(context, builder, args[0]).data
        return _match(builder, builder.gep(tags, [first]), n, line)
    return sig, codegen
