"""The texture L1 lines of a quad's four bilinear filters in one level: LLVM vector IR.

`level_lines4` is the tap-by-tap walk of texture_l1.quad_footprint for one level, for the common
sampler: repeat on both axes, a level whose sides are powers of two, blocks whose sides are
powers of two (every format but ASTC 6x6). The walk takes each lane's four texels in turn (lane
0's (x0, y0), (x1, y0), (x0, y1), (x1, y1), then lane 1's...), finds each one's block and that
block's line, and adds the line where it is not yet listed. Here the sixteen taps' lines are
four-lane vector operations (the texels as the quad's filter finds them,
quad_filter_kernels.repeat_texels: floor of u * w - 0.5, repeat's mask; x1 = x0 + 1 wrapped),
gathered into one sixteen-lane vector in the walk's order, and listed by a loop that takes the
first tap not yet covered (a compare of all sixteen against each line listed, and the lowest bit
of what is left): one round a line, one or two for most quads. Before it, a level's span gave
one or two lines at once (few_lines, which stays for the other samplers) and left a fifth of
pul1duel's levels to the walk, sixteen block addresses and scans of its list; the texture walk
of pul1duel's frame on one thread took 59.5 ms against 88.8 (its quads recorded and replayed). A
lane whose floor lies outside (-2^31, 2^31) (far off its triangle's plane, or NaN) leaves the
quad to the walk (the function returns -1). tests/test_texture_l1.py holds the footprint to its
tap-by-tap twin.
"""
from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from .quad_filter_kernels import _D4, _I64x4, LANES, repeat_texels
from .vector_ir import splat as vector_splat

TAPS = 16                    # 4 texels a lane's bilinear filter, 4 lanes
_I64x16 = ir.VectorType(ir.IntType(64), TAPS)
_I64 = ir.IntType(64)
_I16 = ir.IntType(TAPS)


@intrinsic
def level_lines4(typingctx, uv, q, level, shape, line_shift, lines, n):
    """The lines (byte address >> line_shift) holding the texels of the bilinear filters at
    quad q's four lanes (u = uv[q, 0:4], v = uv[q, 4:8]; float64 C (n, 8)) in one level, each
    once, in the order the tap-by-tap walk meets them, into lines[n:] (int64); returns the new
    count, or -1 (nothing written) where a lane's texel index is out of repeat's range. level:
    (its first byte, width, height, blocks a row), sides powers of two; shape: the format's
    blocks (log2 width, log2 height, bytes), sides powers of two. lines must hold n + 16."""
    if not (isinstance(uv, types.Array) and uv.dtype == types.float64 and uv.ndim == 2
            and uv.layout == "C" and isinstance(lines, types.Array)
            and lines.dtype == types.int64 and lines.ndim == 1):
        return None
    sig = types.int64(uv, q, level, shape, line_shift, lines, n)

    def codegen(context, builder, signature, args):
        uv, q, level, shape, line_shift, lines, n = args
        _, q_ty, level_ty, shape_ty, shift_ty, _, n_ty = signature.args
        uv_arr = context.make_array(signature.args[0])(context, builder, uv)
        out = context.make_array(signature.args[5])(context, builder, lines).data

        def i64(value, ty):
            return context.cast(builder, value, ty, types.int64)

        first, w, h, blocks_x = (i64(builder.extract_value(level, k), level_ty.types[k])
                                 for k in range(4))
        sx, sy, bb = (i64(builder.extract_value(shape, k), shape_ty.types[k]) for k in range(3))
        shift = i64(line_shift, shift_ty)
        n = i64(n, n_ty)
        row = builder.gep(uv_arr.data, [builder.mul(i64(q, q_ty), ir.Constant(_I64, 8))])
        u = builder.load(builder.bitcast(row, _D4.as_pointer()), align=8)
        v = builder.load(builder.bitcast(builder.gep(row, [ir.Constant(_I64, 4)]),
                                         _D4.as_pointer()), align=8)

        def axis(coord, size, block_shift):
            """The lanes' two texels along one axis, as block indices (64-bit lanes), and
            whether each lane's floor is in range."""
            _, _, ok, i0, i1 = repeat_texels(builder, coord, size)
            s = vector_splat(builder, block_shift, _I64x4)
            return (builder.lshr(builder.zext(i0, _I64x4), s),
                    builder.lshr(builder.zext(i1, _I64x4), s), ok)

        bx0, bx1, okx = axis(u, w, sx)
        by0, by1, oky = axis(v, h, sy)
        all_ok = builder.icmp_unsigned("==", builder.bitcast(builder.and_(okx, oky),
                                                             ir.IntType(LANES)),
                                       ir.Constant(ir.IntType(LANES), (1 << LANES) - 1))
        # a tap's byte: first + (by * blocks_x + bx) * bb, as a row's first byte plus a column's
        # offset, two products a row and two a column where the tap-by-tap form has two a tap
        # (a 64-bit vector multiply is three uops: the level's footprints on pul1duel's recorded
        # quads, one thread, 38.3 -> 36.2 ms)
        row_bytes = vector_splat(builder, builder.mul(blocks_x, bb), _I64x4)
        base, size = vector_splat(builder, first, _I64x4), vector_splat(builder, bb, _I64x4)
        s = vector_splat(builder, shift, _I64x4)
        row0, row1 = (builder.add(base, builder.mul(by, row_bytes)) for by in (by0, by1))
        col0, col1 = builder.mul(bx0, size), builder.mul(bx1, size)
        taps = [builder.ashr(builder.add(row, col), s)
                for row, col in ((row0, col0), (row0, col1), (row1, col0), (row1, col1))]
        # the sixteen in the walk's order: lane-major, each lane's four taps in turn
        low = builder.shuffle_vector(taps[0], taps[1], ir.Constant(
            ir.VectorType(ir.IntType(32), 8), list(range(8))))
        high = builder.shuffle_vector(taps[2], taps[3], ir.Constant(
            ir.VectorType(ir.IntType(32), 8), list(range(8))))
        order = [tap * LANES + lane for lane in range(LANES) for tap in range(LANES)]
        walk = builder.shuffle_vector(low, high, ir.Constant(
            ir.VectorType(ir.IntType(32), TAPS), order))

        def left_after(mask, x):
            """mask without the taps whose line is x."""
            other = builder.icmp_signed("!=", walk, vector_splat(builder, x, _I64x16))
            return builder.and_(mask, builder.bitcast(other, _I16))

        cttz = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(_I16, [_I16, ir.IntType(1)]), "llvm.cttz.i16")
        result = cgutils.alloca_once_value(builder, ir.Constant(_I64, -1))
        with builder.if_then(all_ok, likely=True):
            entry = builder.block
            lead = builder.extract_element(walk, ir.Constant(ir.IntType(32), 0))
            builder.store(lead, builder.gep(out, [n]))
            mask0 = left_after(ir.Constant(_I16, (1 << TAPS) - 1), lead)
            n0 = builder.add(n, ir.Constant(_I64, 1))
            head = builder.append_basic_block("lines.head")
            body = builder.append_basic_block("lines.body")
            done = builder.append_basic_block("lines.done")
            builder.branch(head)
            builder.position_at_end(head)
            mask = builder.phi(_I16)
            count = builder.phi(_I64)
            mask.add_incoming(mask0, entry)
            count.add_incoming(n0, entry)
            builder.cbranch(builder.icmp_unsigned("!=", mask, ir.Constant(_I16, 0)), body, done)
            builder.position_at_end(body)
            j = builder.call(cttz, [mask, ir.Constant(ir.IntType(1), 1)])
            x = builder.extract_element(walk, builder.zext(j, ir.IntType(32)))
            builder.store(x, builder.gep(out, [count]))
            mask.add_incoming(left_after(mask, x), body)
            count.add_incoming(builder.add(count, ir.Constant(_I64, 1)), body)
            builder.branch(head)
            builder.position_at_end(done)
            builder.store(count, result)
        return builder.load(result)

    return sig, codegen
