"""LLVM vector IR that the kernels' intrinsics share (the bilinear filter, the bvh8 box and
triangle tests, a quad's attributes and its Lambert): a scalar broadcast to every lane, and
scalars gathered into lanes."""
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
