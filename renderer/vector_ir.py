"""LLVM vector IR that the kernels' intrinsics share (the bilinear filter, the bvh8 box and
triangle tests, a quad's attributes and its Lambert): a scalar broadcast to every lane, scalars
gathered into lanes, and a row of an array as a vector pointer."""
from __future__ import annotations

from llvmlite import ir


def splat(builder, x, vector):
    """The scalar x (an LLVM value of the element type of `vector`, an ir.VectorType) in every
    lane: one insert and a broadcast shuffle, which x86 makes one vbroadcast."""
    v = builder.insert_element(ir.Constant(vector, ir.Undefined), x, ir.Constant(ir.IntType(32), 0))
    zeros = ir.Constant(ir.VectorType(ir.IntType(32), vector.count), [0] * vector.count)
    return builder.shuffle_vector(v, ir.Constant(vector, ir.Undefined), zeros)


def lanes(builder, values, vector):
    """The scalars `values` (LLVM values of the element type of `vector`) as its lanes, in
    order."""
    v = ir.Constant(vector, ir.Undefined)
    for i, x in enumerate(values):
        v = builder.insert_element(v, x, ir.Constant(ir.IntType(32), i))
    return v


def row(builder, data, k, vector):
    """Row k of a C array of rows of `vector`'s length (data: a pointer to its first element),
    as a pointer to `vector`, for one vector load or store (align 8: a float64 array's)."""
    ptr = builder.gep(data, [ir.Constant(ir.IntType(64), k * vector.count)])
    return builder.bitcast(ptr, vector.as_pointer())
