"""The texture L1 (AMD's L0): the footprint of each shaded quad and the cache it goes through.

A textured quad's footprint is the texel blocks its four lanes' bilinear filters touch (2x2
texels a lane, in each level the LOD names: one, or two for trilinear), in the texture's format
(a block is bw x bh texels in `bytes`: 4x4 in 64 B for RGBA8, 4x4 in 8 B for BC1, 8x8 in 16 B
for ASTC 8x8...). Blocks are laid out row by row within a level, levels one after another; the
footprint's distinct L1 lines, in lane order, are looked up in a set-associative LRU cache of the
preset's line, ways and capacity. A miss asks L2 for the line: the raster records its byte
address as a texture event, which the architecture's memory replay serves in its order.

All four lanes fetch, helper lanes too: the texture unit filters whole quads (the helpers'
texels give the derivatives). The cache starts cold at each raster tile, the unit of work one
shader core takes (a tiler's tile, a DSBR bin's tile, an IMR's screen region); its state is the
tile's alone, so the counts do not depend on which thread ran which tile.

The raster records each textured quad's lanes' uv and level as it shades it, and texture_walk
runs the footprints through the cache after the reference (the triangle in the tile), in that
order. A footprint is a level's sixteen taps at once where the sampler repeats and the sides
are powers of two (footprint4, quad_lines_kernels.level_lines4: pul1duel's recorded quads
through the walk on one thread 88.8 -> 59.5 ms), else one or two lines at once where a level's
span says so (few_lines), else tap by tap. `l1_access` is held to a dictionary-LRU twin on
recorded footprints (tests/test_texture_l1.py).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .inlined import callee, inlined
from .pow2 import is_pow2, over
from .quad_lines_kernels import level_lines4
from .shade_kernels import (L_BLOCKS_X, L_HEIGHT, L_TILED, L_WIDTH, S_WRAP_S, S_WRAP_T, TWO_31,
                            WRAP_CLAMP, WRAP_REPEAT, texel_pair)
from .tag_match import way_in_row

# Columns of TextureTable.block: texels wide and high, bytes, and log2 of the width and height
# where they are powers of two (-1 where not: ASTC 6x6), so that most block indices are shifts
# (a 64-bit division by a value known only at run time costs 40-90 cycles)
B_WIDTH, B_HEIGHT, B_BYTES, B_SHIFT_X, B_SHIFT_Y = 0, 1, 2, 3, 4
# Entries of TextureTable.l1
L1_SETS, L1_WAYS, L1_LINE_SHIFT = 0, 1, 2
# Lines a quad may miss in, at most, as the raster sizes its texture events: the four lanes of a
# quad sit at most sqrt(2) texels apart in the LOD's level (texture_lod rounds log2 of the
# longer derivative), so with the filter's second texel a quad spans at most 5 texels a side:
# 2 blocks a side, 4 blocks, in each of trilinear's 2 levels. (Perspective can bend lane 3 off
# that bound; a quad past it raises in renderer.raster rather than losing a request.)
LINES_PER_QUAD = 8


@inlined
def _add_line(lines, n, line):
    for k in range(n):
        if lines[k] == line:
            return n
    lines[n] = line
    return n + 1


@inlined
def texel_blocks(levels, sampler, block, ti, level, u, v):
    """The blocks holding the 2x2 texels of the bilinear filter at (u, v) in `level`, as byte
    offsets from the level's first block: (b00, b10, b01, b11), b10 = -1 where the second
    column lies in b00's block, b01 = -1 where the second row does, b11 = -1 where either."""
    return _lane_blocks(u, v, levels[ti, level, L_WIDTH], levels[ti, level, L_HEIGHT],
                        sampler[ti, S_WRAP_S], sampler[ti, S_WRAP_T], block[ti, B_WIDTH],
                        block[ti, B_HEIGHT], block[ti, B_SHIFT_X], block[ti, B_SHIFT_Y],
                        levels[ti, level, L_BLOCKS_X], block[ti, B_BYTES])


@inlined
def _lane_blocks(u, v, w, h, ws, wt, bw, bh, sx, sy, blocks_x, bb):
    """texel_blocks on the level's parameters as scalars (a level w x h texels, wrap modes ws,
    wt, blocks bw x bh texels (1 << sx, 1 << sy where powers of two, else -1) of bb bytes,
    blocks_x a row): loaded once a level by the footprint walk, whose stores to its line list
    would otherwise make LLVM load them again at every lane (both are int64 arrays)."""
    x0, x1 = texel_pair(np.floor(u * w - 0.5), w, ws)
    y0, y1 = texel_pair(np.floor(v * h - 0.5), h, wt)
    bx0, bx1 = over(x0, bw, sx), over(x1, bw, sx)
    by0, by1 = over(y0, bh, sy), over(y1, bh, sy)
    b10 = (by0 * blocks_x + bx1) * bb if bx1 != bx0 else -1
    b01 = (by1 * blocks_x + bx0) * bb if by1 != by0 else -1
    b11 = (by1 * blocks_x + bx1) * bb if bx1 != bx0 and by1 != by0 else -1
    return (by0 * blocks_x + bx0) * bb, b10, b01, b11


@inlined
def _texel_span(f0, f1, size, mode):
    """The texels a quad's filters read along one axis, whose unwrapped indices run from f0 to
    f1 (whole numbers held as floats, f0 <= f1), as one unbroken run (i0, i1) of the level's
    texels: repeat where the run does not cross the level's edge (a power-of-two size, as
    repeat masks), clamp always (monotone); (-1, -1) otherwise (mirror, a wrapped run, a
    value out of range or NaN), which sends the quad lane by lane."""
    if not (-TWO_31 < f0 and f1 < TWO_31):
        return -1, -1
    if mode == WRAP_CLAMP:
        return int(min(max(f0, 0.0), size - 1.0)), int(min(max(f1, 0.0), size - 1.0))
    if mode != WRAP_REPEAT or size & (size - 1) != 0:
        return -1, -1
    i0 = int(f0) & (size - 1)
    i1 = i0 + int(f1 - f0)
    return (i0, i1) if i1 < size else (-1, -1)


@njit(cache=True, nogil=True, error_model="numpy")
def _few_lines(u0, u1, u2, u3, v0, v1, v2, v3, w, h, ws, wt, sx, sy, blocks_x, bb, first,
               line_shift):
    """The L1 lines a quad's four bilinear filters read in a level, when they are one or two,
    in the order the lane-by-lane walk meets them: (line, -1), (line, line), or (-1, -1) when
    they may be more (the walk then). Lanes at uv (u0, v0) .. (u3, v3); the level w x h
    texels, blocks 1 << sx by 1 << sy texels of bb bytes, blocks_x a row, the first at byte
    `first`. Most quads of a textured frame read one line or two (a magnified or 1:1 texture;
    the small blocks of BC and ASTC formats: a line is a row of blocks, and a quad's texels
    cross at most one block row), and this replaces the sixteen taps' block arithmetic.

    The filters' texels span [floor(min u * w - 0.5), floor(max u * w - 0.5) + 1] across (u * w
    - 0.5 rounds monotonely in u), and likewise down, and both ends of each span are read (the
    least lane's first texel, the greatest's second). A block's line is that of its first byte,
    which rises along a block row and from row to row, so: when the span's first and last
    blocks share a line, every block between does; in one block row (or column) of blocks, its
    two end blocks are read, and lines that differ by one are all there is; in two rows, each
    within one line, both rows are read. The walk meets lane 0's first block first.
    Called, not inlined: scalars in and out, and inlined it added 10 s to a cold `tilesim
    report` against 5 called (bench/bench_cold_start.py, 2026-12-04)."""
    if sx < 0 or sy < 0:                 # blocks a division wide (ASTC 6x6): lane by lane
        return -1, -1
    uv_sum = u0 + u1 + u2 + u3 + v0 + v1 + v2 + v3
    if uv_sum != uv_sum:                 # a NaN (a helper lane far off its triangle's plane),
        return -1, -1                    # which min and max would pass over: the walk's
    fx = np.floor(min(min(u0, u1), min(u2, u3)) * w - 0.5)
    fy = np.floor(min(min(v0, v1), min(v2, v3)) * h - 0.5)
    x0, x1 = _texel_span(fx, np.floor(max(max(u0, u1), max(u2, u3)) * w - 0.5) + 1.0, w, ws)
    y0, y1 = _texel_span(fy, np.floor(max(max(v0, v1), max(v2, v3)) * h - 0.5) + 1.0, h, wt)
    if x0 < 0 or y0 < 0:
        return -1, -1
    bx0, bx1, by0, by1 = x0 >> sx, x1 >> sx, y0 >> sy, y1 >> sy
    l00 = (first + (by0 * blocks_x + bx0) * bb) >> line_shift
    l11 = (first + (by1 * blocks_x + bx1) * bb) >> line_shift
    if l00 == l11:
        return l00, -1
    if bx0 == bx1 or by0 == by1:         # one block row or column
        two = l11 == l00 + 1
    else:                                # two block rows, each within one line
        two = (by1 == by0 + 1 and (first + (by0 * blocks_x + bx1) * bb) >> line_shift == l00
               and (first + (by1 * blocks_x + bx0) * bb) >> line_shift == l11)
    if not two:
        return -1, -1
    # lane 0's first texel, as the walk finds it (the span has no wrap inside it)
    fu, fv = np.floor(u0 * w - 0.5), np.floor(v0 * h - 0.5)
    lx, _ = _texel_span(fu, fu, w, ws)
    ly, _ = _texel_span(fv, fv, h, wt)
    lead = (first + ((ly >> sy) * blocks_x + (lx >> sx)) * bb) >> line_shift
    return (l00, l11) if lead == l00 else (l11, l00)


@inlined
def footprint_params(levels, sampler, base, block, ti, level, n_levels, uv, q):
    """What quad_footprint needs of texture ti as scalars: its format (wrap s, wrap t, block
    width, height, bytes, log2 width, log2 height), the geometry (first byte, width, height,
    blocks a row) of `level` and of the level above it where n_levels is 2 (else `level`
    again), and recorded quad q's four lanes' u and v (uv[q, 0:4], uv[q, 4:8]: the raster's
    quad_uv).

    An inlined helper that takes an array and calls a function compiled apart keeps the
    array's reference count in and out around it (the call's error path keeps LLVM from
    pruning the pair): the footprint took four of the texture table's arrays and the lanes'
    and the lines' arrays around _few_lines, six atomic pairs a textured quad, 7% of pul1duel's
    samples through imr-baseline (bench/perf_kernels.py). So the table is read here (no
    call), _few_lines is called with scalars alone (few_lines), and quad_footprint, which
    takes uv and lines, calls nothing."""
    fmt = (sampler[ti, S_WRAP_S], sampler[ti, S_WRAP_T], block[ti, B_WIDTH], block[ti, B_HEIGHT],
           block[ti, B_BYTES], block[ti, B_SHIFT_X], block[ti, B_SHIFT_Y])
    up = level + 1 if n_levels > 1 else level     # (every array read on every path)
    at = (base[ti] + levels[ti, level, L_TILED], levels[ti, level, L_WIDTH],
          levels[ti, level, L_HEIGHT], levels[ti, level, L_BLOCKS_X])
    above = (base[ti] + levels[ti, up, L_TILED], levels[ti, up, L_WIDTH],
             levels[ti, up, L_HEIGHT], levels[ti, up, L_BLOCKS_X])
    u = (uv[q, 0], uv[q, 1], uv[q, 2], uv[q, 3])
    v = (uv[q, 4], uv[q, 5], uv[q, 6], uv[q, 7])
    return fmt, at, above, u, v


@inlined
def few_lines(u, v, fmt, at, above, n_levels, line_shift):
    """_few_lines in the level `at` and, where n_levels is 2, the one `above`: (la, lb) of
    each (-1, -1 where the footprint may be more, or for a level not asked). Scalars only:
    the call is kept apart from quad_footprint, which takes arrays (footprint_params)."""
    ws, wt, bw, bh, bb, sx, sy = fmt
    la = lb = la2 = lb2 = -1
    for k in range(n_levels):               # (one call site: a cold compile's time)
        first, w, h, blocks_x = at if k == 0 else above
        a, b = _few_lines(u[0], u[1], u[2], u[3], v[0], v[1], v[2], v[3], w, h, ws, wt, sx, sy,
                          blocks_x, bb, first, line_shift)
        if k == 0:
            la, lb = a, b
        else:
            la2, lb2 = a, b
    return la, lb, la2, lb2


@inlined
def quad_footprint(uv, q, fmt, at, above, n_levels, line_shift, lines, few):
    """The L1 lines (byte address >> line_shift) holding the 2x2 texels of each lane's bilinear
    filter at (uv[q, lane], uv[q, 4 + lane]) in the level `at` and, where n_levels is 2
    (trilinear), the one `above` (footprint_params), into lines[0:], each line once, level by
    level in lane order; returns their count. lines must hold 16 a level. A level whose
    footprint lies in one line or two takes them from `few` (few_lines: la, lb a level) at
    once; footprint_lines_twin, the lane-by-lane walk alone, is what the tests hold this to.
    Inlined into texture_walk (once inlined into the raster's quad loop: called, it took its
    arrays as some fifty words copied to the stack for every textured quad, the copies
    stalled on store forwarding, a fifth of rasterize_tile's samples on pul1duel)."""
    n = 0
    ws, wt, bw, bh, bb, sx, sy = fmt
    for k in range(n_levels):
        first, w, h, blocks_x = at if k == 0 else above
        la, lb = (few[0], few[1]) if k == 0 else (few[2], few[3])
        if la >= 0:
            n = _add_line(lines, n, la)
            if lb >= 0:
                n = _add_line(lines, n, lb)
            continue
        for lane in range(4):
            b00, b10, b01, b11 = _lane_blocks(uv[q, lane], uv[q, 4 + lane], w, h, ws, wt, bw,
                                              bh, sx, sy, blocks_x, bb)
            n = _add_line(lines, n, (first + b00) >> line_shift)
            if b10 >= 0:
                n = _add_line(lines, n, (first + b10) >> line_shift)
            if b01 >= 0:
                n = _add_line(lines, n, (first + b01) >> line_shift)
                if b11 >= 0:
                    n = _add_line(lines, n, (first + b11) >> line_shift)
    return n


@inlined
def by_vectors(fmt, at, above):
    """Whether footprint4 can take the quad: the sampler repeats on both axes, and the
    level's sides, the one above's (footprint_params gives the level again where there is
    none) and the blocks' are powers of two."""
    ws, wt, bw, bh, bb, sx, sy = fmt
    return (ws == WRAP_REPEAT and wt == WRAP_REPEAT and sx >= 0 and sy >= 0 and is_pow2(at[1])
            and is_pow2(at[2]) and is_pow2(above[1]) and is_pow2(above[2]))


@inlined
def footprint4(uv, q, fmt, at, above, n_levels, line_shift, lines):
    """quad_footprint by quad_lines_kernels.level_lines4, a level's sixteen taps at once, for
    a quad by_vectors allows: the same lines in the same order (a line of the level above that
    the first level listed too, where small levels share a line, is listed once); -1 where a
    lane lies out of repeat's range (quad_footprint then)."""
    ws, wt, bw, bh, bb, sx, sy = fmt
    n = level_lines4(uv, q, at, (sx, sy, bb), line_shift, lines, 0)
    if n < 0 or n_levels < 2:
        return n
    m = level_lines4(uv, q, above, (sx, sy, bb), line_shift, lines, n)
    if m < 0:
        return m
    for k in range(n, m):
        n = _add_line(lines, n, lines[k])
    return n


@inlined
def _recorded(lane_attr):
    """A quad's lanes' u, v (lane_attr[lane, 3], lane_attr[lane, 4]) as the raster records
    them for texture_walk: one row of quad_uv."""
    uv = np.empty((1, 8))
    for lane in range(4):
        uv[0, lane], uv[0, 4 + lane] = lane_attr[lane, 3], lane_attr[lane, 4]
    return uv


@njit(cache=True, nogil=True, error_model="numpy")
def footprint_lines(lane_attr, levels, sampler, base, block, ti, level, n_levels, line_shift,
                    lines):
    """quad_footprint of texture ti's `level` (and the one above where n_levels is 2) for the
    quad whose lanes' u, v are lane_attr[lane, 3], lane_attr[lane, 4], from the texture
    table's arrays: texture_walk's footprint as the tests call it."""
    uv = _recorded(lane_attr)
    fmt, at, above, u, v = footprint_params(levels, sampler, base, block, ti, level, n_levels,
                                            uv, 0)
    if by_vectors(fmt, at, above):
        n = footprint4(uv, 0, fmt, at, above, n_levels, line_shift, lines)
        if n >= 0:
            return n
    few = few_lines(u, v, fmt, at, above, n_levels, line_shift)
    return quad_footprint(uv, 0, fmt, at, above, n_levels, line_shift, lines, few)


@njit(cache=True, nogil=True, error_model="numpy")
def footprint_lines_twin(lane_attr, levels, sampler, base, block, ti, level, n_levels,
                         line_shift, lines):
    """footprint_lines tap by tap at every level: the obvious twin."""
    uv = _recorded(lane_attr)
    fmt, at, above, _, _ = footprint_params(levels, sampler, base, block, ti, level, n_levels,
                                            uv, 0)
    return quad_footprint(uv, 0, fmt, at, above, n_levels, line_shift, lines, (-1, -1, -1, -1))


@inlined
def l1_access(tags, stamps, sets, ways, line, clock):
    """Look `line` up in the set-associative LRU cache (tags, stamps: sets x ways, a set's ways
    contiguous; tag -1 and stamp 0 for an empty way); on a miss it replaces the least recently
    used way (an empty one first). `clock` is the access's stamp, rising. True on a hit.
    (Indices unsigned: numba wraps a signed one, a shift, a mask and an add at every access.
    A branch-free search of every way measured slower: texture_walk 25.6% of pul1duel's samples
    through imr-baseline against 23.4%.) Ways in whole fours (RDNA 3's 32, GCN's 4) are
    searched four at a time (tag_match.way_in_row) and, on a miss, the least stamp found by a
    vectorised minimum: with 32 ways the walk of pul1duel's recorded quads took 75.0 ms on one
    thread way by way, 55.6 so (with 4 ways 54.0 and 47.4)."""
    first = np.uint64(line & (sets - 1)) * np.uint64(ways)
    if ways & 3 == 0 and ways <= 64:
        w = way_in_row(tags, np.int64(first), ways, line)
        if w >= 0:
            stamps[first + np.uint64(w)] = clock
            return True
        least = stamps[first]
        for k in range(first + np.uint64(1), first + np.uint64(ways)):
            least = min(least, stamps[k])
        victim = first                   # the first way of least stamp (an empty one first)
        while stamps[victim] != least:
            victim += np.uint64(1)
        tags[victim] = line
        stamps[victim] = clock
        return False
    victim = first
    for k in range(first, first + np.uint64(ways)):
        if tags[k] == line:
            stamps[k] = clock
            return True
        if stamps[k] < stamps[victim]:
            victim = k
    tags[victim] = line
    stamps[victim] = clock
    return False


@inlined
def same_lines(lines, n, last, n_last):
    """Whether a quad's lines[0:n] are the quad before's, last[0:n_last], in the same order."""
    if n != n_last:
        return False
    for k in range(n):
        if lines[k] != last[k]:
            return False
    return True


@callee
def texture_walk(tex, ti, quad_uv, quad_level, n_quads, tags, stamps, clock, lines, last,
                 tex_addr, tex_first, tex_cap):
    """The texture L1 behind one reference's textured quads, in the order the raster shaded
    them: quad q's lanes at u = quad_uv[q, 0:4], v = quad_uv[q, 4:8] in level quad_level[q, 0]
    and, where quad_level[q, 1] is 2 (trilinear), the level above, of texture ti of `tex`
    (shade.TextureTable). Each quad's footprint (quad_footprint) is looked up in the cache
    (tags, stamps; clock: the last access's stamp); a miss's byte address goes to
    tex_addr[tex_first:], at most tex_cap of them. lines, last: scratch of 32 lines each.
    Returns (misses recorded, lookups, hits, misses past tex_cap, the clock).

    After the raster's reference rather than inside its quad loop, where the footprint's
    arithmetic, inlined among the shading's live values, took the registers those needed:
    the cache sees the same lines in the same order (nothing else reaches it in between)."""
    levels, base, block, sampler, l1 = tex.levels, tex.base, tex.block, tex.sampler, tex.l1
    sets, ways, shift = l1[L1_SETS], l1[L1_WAYS], l1[L1_LINE_SHIFT]
    n_tex = lookups = hits = overflow = 0
    n_last = -1                      # last[0:n_last]: the quad before's lines, as looked up
    # One return, after the walk (a second, for n_quads == 0, had numba keep eleven atomic
    # reference count pairs in every call: tests/test_refcounts.py)
    if n_quads > 0:
        # the texture's format and the levels' geometry, read again only where a quad's level(s)
        # differ from the quad before's (the stores below keep LLVM from hoisting the loads)
        level, n_lv = quad_level[0, 0], quad_level[0, 1]
        fmt, at, above, _, _ = footprint_params(levels, sampler, base, block, ti, level, n_lv,
                                                quad_uv, 0)
        vectors = by_vectors(fmt, at, above)
        for q in range(n_quads):
            if quad_level[q, 0] != level or quad_level[q, 1] != n_lv:
                level, n_lv = quad_level[q, 0], quad_level[q, 1]
                fmt, at, above, _, _ = footprint_params(levels, sampler, base, block, ti, level,
                                                        n_lv, quad_uv, q)
                vectors = by_vectors(fmt, at, above)
            n_lines = -1
            if vectors:
                n_lines = footprint4(quad_uv, q, fmt, at, above, n_lv, shift, lines)
            if n_lines < 0:
                u = (quad_uv[q, 0], quad_uv[q, 1], quad_uv[q, 2], quad_uv[q, 3])
                v = (quad_uv[q, 4], quad_uv[q, 5], quad_uv[q, 6], quad_uv[q, 7])
                few = few_lines(u, v, fmt, at, above, n_lv, shift)
                n_lines = quad_footprint(quad_uv, q, fmt, at, above, n_lv, shift, lines, few)
            lookups += n_lines
            # The quad before's lines again, in the same order (a magnified texture's quads, and
            # most others'): that quad left them all in the cache (no set holds more of them than
            # its ways) and more recent than any other line, in this order, so they hit and leave
            # the LRU order as it was (its choices depend on the stamps' order, not their values).
            if n_lines <= ways and same_lines(lines, n_lines, last, n_last):
                hits += n_lines
                continue
            n_last = n_lines
            for k in range(n_lines):
                last[k] = lines[k]
                clock += 1
                if l1_access(tags, stamps, sets, ways, lines[k], clock):
                    hits += 1
                elif n_tex < tex_cap:
                    tex_addr[tex_first + n_tex] = lines[k] << shift
                    n_tex += 1
                else:
                    overflow += 1
    return n_tex, lookups, hits, overflow, clock
