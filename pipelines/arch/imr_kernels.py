"""Numba kernels of the IMR's memory replay: the raster's requests in the order the GPU issues them.

An immediate-mode GPU walks draws, then primitives, then the pixels of each primitive, so its
caches see index and vertex fetches of a primitive followed by its ROP block requests and texture
fetches. That order (not the tile order the raster kernels ran in) is what the caches are fed.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from renderer.inlined import inlined
from renderer.memory import L2, ROP_COLOR, ROP_DEPTH, STREAM
from renderer.frontend.fetch_kernels import issue
from renderer.prefetch import prefetch
from renderer.memory import fusable, serve, serve_levels
from renderer.memory_requests import (ALL_LEVELS, OP_RMW, OP_WRITE_BACK, R_TILE, REQUESTS,
                                      block_layout, copy_request, line_shift, new_requests, op_code,
                                      region_base, request, request_block_as, request_level,
                                      request_line)

S_COLOR, S_DEPTH, S_TEXTURE, S_META = (
    STREAM[s] for s in ("color", "depth", "texture", "meta"))
ALL = ~np.uint64(0)   # every pixel of a block
# Rows a pipelined replay hands on in place of the L2 requests they stand for (serve_handed):
# line = the primitive whose fetches, or the tile reference whose texel blocks, to issue.
FETCH_MARK, TEXTURE_MARK = -2, -3
# ... and, once the ROP colour cache is the other thread's (MOVABLE_LEVELS), in place of a block
# event's colour requests, where they stand among its depth requests: the fused read and write,
# or the write. line = the event | what the colour state said (color_mark). (A read apart from
# its write, the first blend of a DCC block not cleared, goes as its lines.)
COLOR_FUSED_MARK, COLOR_WRITE_MARK = -4, -5
MARK_EVENT_BITS = 40      # an event index below 2^40; above it the block's size or clear bit
HTILE_BYTES = 4     # hierarchical-Z word per 8x8 depth block (AMD HTILE: 32 bits per 8x8 tile)
# How far ahead replay asks for a reference's lines: its counts and offsets (REF_AHEAD work
# items), then, those in the cache, its events and draw (EVENTS_AHEAD items)
REF_AHEAD, EVENTS_AHEAD = 16, 8


class ImrPass(NamedTuple):
    """What an immediate-mode replay reads of one render pass."""
    fetch: tuple               # the front end's FetchPlan rows (off, addr, nbytes, op)
    fetch_need: int            # the most lines one primitive's fetches span
    tri_draw: np.ndarray       # int32 each setup triangle's draw
    bins: tuple                # renderer.binning.TileBins
    ref_tile: np.ndarray       # int64 each tile reference's tile
    events: tuple              # renderer.raster.RopEvents: the raster's ROP blocks and texels
    mat: tuple                 # renderer.raster.Materials (depth test / write, blend per draw)
    color: tuple               # renderer.memory.Surface (region, bytes per pixel)
    depth: tuple               # Surface; region 0 without depth
    tex_region: int            # the textures' region
    htile_region: int          # hierarchical Z's HTILE words; 0: no HiZ
    cleared_color: np.ndarray  # bool per 8x8 block still in the fast-cleared state (empty:
    cleared_depth: np.ndarray  # no fast clear); the first write takes a block out of it
    color_size: np.ndarray     # int64 per 8x8 block, with DCC (events.size not empty): the payload
                               # of the block as last written (-1: not written compressed yet)
    depth_size: np.ndarray     # the same for depth, with depth compression (events.zsize)


@njit(cache=True, nogil=True, error_model="numpy")
def work_in_submission_order(prim_tri_off, tri_offsets, ref_slot):
    """The order an IMR's units issue work: each primitive's fetch (-(p + 1)), then its pixels,
    tile reference by tile reference (r >= 0)."""
    n_prims = prim_tri_off.shape[0] - 1
    work = np.empty(n_prims + ref_slot.shape[0], np.int64)
    append_in_order(work, 0, 0, n_prims, prim_tri_off, tri_offsets, ref_slot)
    return work


@njit(cache=True, nogil=True, error_model="numpy")
def append_in_order(work, k, p0, p1, prim_tri_off, tri_offsets, ref_slot):
    """Primitives p0..p1 into work from position k, each fetch followed by its tile
    references; returns the next position."""
    for p in range(p0, p1):
        work[k] = -(p + 1)
        k += 1
        for t in range(prim_tri_off[p], prim_tri_off[p + 1]):
            for q in range(tri_offsets[t], tri_offsets[t + 1]):
                work[k] = ref_slot[q]
                k += 1
    return k


@njit(cache=True, nogil=True, error_model="numpy")
def replay(mem, ip, work, start, own, out):
    """Feed the caches (`mem`, renderer.memory.Serving) an immediate-mode GPU's requests for
    pass `ip` (ImrPass), in the order `work` gives: -(p + 1) issues primitive p's front-end
    fetches (renderer.frontend.FetchPlan: its indices, vertices, meshlet tables); r >= 0 runs
    tile reference r's ROP block requests (depth test, blend read, depth and colour writes)
    and texel fetches. With hierarchical Z (htile_region > 0) every tested block also reads its
    HTILE word, every depth-written block writes it, and a block HiZ rejected reads it and
    nothing else. After a fast clear a block still in the cleared state is read from its
    metadata, not memory; the first write takes it out of that state.

    Serves the levels in `own` (renderer.memory.serve_levels) and appends what reaches the others
    to `out` (for serve_handed), from work item `start` until the work is done or out might not
    hold the next item. Returns (the next item, the rows of out used)."""
    # Unpack the structs once: an array taken out of a tuple inside the loop is ref-counted
    # every time, which costs more than the cache lookup itself.
    lines, shape, meta = mem.caches
    acc, tile_bytes = mem.totals, mem.tile_bytes
    f_off, f_addr, f_nbytes, f_op = ip.fetch
    prim_need, tri_draw, ref_tile, ref_tri = ip.fetch_need, ip.tri_draw, ip.ref_tile, ip.bins.ref_tri
    (block_off, n_block, block, tested_m, written_m, tex_off, n_tex, tex_addr, ev_size, ev_zsize,
     _) = ip.events
    color_size, depth_size = ip.color_size, ip.depth_size
    dcc, zcomp = ev_size.shape[0] > 0, ev_zsize.shape[0] > 0
    depth_test, depth_write, blend = ip.mat.depth_test, ip.mat.depth_write, ip.mat.blend
    color, depth, tex_region, htile_region = ip.color, ip.depth, ip.tex_region, ip.htile_region
    cleared_color, cleared_depth = ip.cleared_color, ip.cleared_depth
    shift = line_shift(meta)
    texture_op = op_code(False, S_TEXTURE)
    meta_read, meta_written = op_code(False, S_META), op_code(True, S_META)
    htile_base = region_base(htile_region)
    depth_read, depth_written = op_code(False, S_DEPTH), op_code(True, S_DEPTH)
    color_read, color_written = op_code(False, S_COLOR), op_code(True, S_COLOR)
    color_blocks = block_layout(meta, color[0], color[1])
    depth_blocks = block_layout(meta, depth[0], depth[1])
    # A block's read and write (depth test and write, blend read and write, the HTILE word's)
    # go as one row a line where the ROP cache gives the same counts that way (fusable): a
    # third fewer rows for a DSBR replay to write and its first thread to look up.
    fuse_z, fuse_c = fusable(shape, ROP_DEPTH, depth_blocks[3]), fusable(shape, ROP_COLOR,
                                                                         color_blocks[3])
    fuse_htile = fusable(shape, ROP_DEPTH, 1)
    meta_rmw = meta_read | OP_RMW
    # Requests are buffered and served in order; before each unit of work (a primitive's fetches,
    # a block's ROP requests, a texel block) the buffer is served if the unit might not fit.
    block_need = 2 * color_blocks[3] + 2 * depth_blocks[3] + 2
    cap = max(REQUESTS, prim_need, block_need)
    rq = new_requests(cap)
    n = n_out = 0
    # most requests one request can hand on (see serve_levels); none when all levels are ours
    fanout = 0 if own == ALL_LEVELS else shape.shape[0] + 1
    # When another thread serves L2, the requests that enter there (a primitive's fetches, a
    # reference's texel blocks) are handed on as one row each, and serve_handed issues them:
    # that thread has the lighter load.
    hand_on = (own >> L2) & 1 == 0
    # When it also serves the ROP colour cache, a block event's colour requests go as one mark
    # row each, which it makes from the event (serve_handed), rather than their lines, made
    # here only to be handed on (spheres on amd-rdna2 at 1080p: this thread 40.5 -> 38.6 ms a
    # frame, the other 23.7 -> 25.5). The colour state (fast clear, last size) stays this
    # thread's: the marks carry what it said.
    color_marks = hand_on and (own >> ROP_COLOR) & 1 == 0
    n_work = work.shape[0]
    for k in range(start, n_work):
        item = work[k]
        # the raster left these tile by tile; they are read in work order (renderer.prefetch)
        ahead = work[k + REF_AHEAD] if k + REF_AHEAD < n_work else -1
        if ahead >= 0:
            prefetch(n_block, ahead)
            prefetch(n_tex, ahead)
            prefetch(block_off, ahead)
            prefetch(ref_tri, ahead)
            prefetch(ref_tile, ahead)
        ahead = work[k + EVENTS_AHEAD] if k + EVENTS_AHEAD < n_work else -1
        if ahead >= 0:
            first = block_off[ahead]
            prefetch(block, first)
            prefetch(tested_m, first)
            prefetch(written_m, first)
            if dcc:
                prefetch(ev_size, first)
            if zcomp:
                prefetch(ev_zsize, first)
            prefetch(tri_draw, ref_tri[ahead])
        # Whatever serves it, the item's requests and those pending hand on at most this many.
        most = (n + (prim_need if item < 0 else n_block[item] * block_need + n_tex[item])) * fanout
        if n_out + most > out.shape[0]:       # (none handed on: out must grow, see serve_pipelined)
            return k, serve_levels(lines, shape, meta, acc, tile_bytes, rq, n, own, out, n_out)
        if item < 0:
            p = -item - 1
            if n > cap - prim_need:
                n_out = serve_levels(lines, shape, meta, acc, tile_bytes, rq, n, own, out, n_out)
                n = 0
            if hand_on:
                if f_off[p + 1] > f_off[p]:      # (most fetch nothing: their waves' first did)
                    n = request(rq, n, FETCH_MARK, p, OP_WRITE_BACK, -1)
            else:
                n = issue(rq, n, L2, shift, f_off, f_addr, f_nbytes, f_op, p)
            continue
        r = item
        d = tri_draw[ref_tri[r]]
        test_z, write_z, read_color = depth_test[d], depth_write[d], blend[d]
        tl = ref_tile[r]                # a reference's blocks all lie in its tile
        for e in range(block_off[r], block_off[r] + n_block[r]):
            if n > cap - block_need:
                n_out = serve_levels(lines, shape, meta, acc, tile_bytes, rq, n, own, out, n_out)
                n = 0
            blk = block[e]
            if blk < 0:                              # rejected by hierarchical Z
                blk = -blk - 1
                n = request(rq, n, ROP_DEPTH, (htile_base + blk * HTILE_BYTES) >> shift, meta_read, tl)
                continue
            tested, written = tested_m[e], written_m[e]
            z_write = write_z and written != 0
            if htile_region > 0:
                h_line = (htile_base + blk * HTILE_BYTES) >> shift
                if z_write and fuse_htile:
                    n = request(rq, n, ROP_DEPTH, h_line, meta_rmw, tl)
                else:
                    n = request(rq, n, ROP_DEPTH, h_line, meta_read, tl)
                    if z_write:
                        n = request(rq, n, ROP_DEPTH, h_line, meta_written, tl)
            z_clear = cleared_depth.shape[0] > 0 and cleared_depth[blk]
            c_clear = cleared_color.shape[0] > 0 and cleared_color[blk]
            z_read = test_z and tested != 0 and not z_clear
            c_read = read_color and written != 0 and not c_clear
            c_write = written != 0
            z_bytes = ev_zsize[e] if zcomp and z_write else -1
            c_bytes = ev_size[e] if dcc and c_write else -1
            z_was = depth_size[blk] if zcomp else -1
            c_was = color_size[blk] if dcc else -1
            # A compressed block (DCC, HTILE) is read and written whole, at the size it was last
            # written or now is (request_block_as); a raw one, the lines its pixels are in. The
            # first write to a cleared block fills all of it: the pixels it does not cover take
            # the clear value from the metadata. Read and write go as one row a line where
            # every line written is read (the written pixels were tested, or the read is whole).
            z_fused = z_read and z_write and fuse_z and (z_was >= 0 or (
                z_bytes < 0 and written & ~tested == 0))
            c_fused = c_read and fuse_c and (c_was >= 0 or c_bytes < 0)
            if z_fused:
                n = request_block_as(rq, n, meta, ROP_DEPTH, depth_blocks, blk, tested, depth_read,
                                     tl, z_was, written, z_bytes)
            if c_fused and color_marks:
                n = request(rq, n, COLOR_FUSED_MARK, color_mark(e, c_was + 1), OP_WRITE_BACK, tl)
            elif c_fused:
                n = request_block_as(rq, n, meta, ROP_COLOR, color_blocks, blk, written, color_read,
                                     tl, c_was, written, c_bytes)
            if z_read and not z_fused:
                n = request_block_as(rq, n, meta, ROP_DEPTH, depth_blocks, blk, tested, depth_read,
                                     tl, z_was)
            if c_read and not c_fused:
                n = request_block_as(rq, n, meta, ROP_COLOR, color_blocks, blk, written,
                                     color_read, tl, c_was)
            if z_write and not z_fused:
                n = request_block_as(rq, n, meta, ROP_DEPTH, depth_blocks, blk,
                                     ALL if z_clear else written, depth_written, tl, z_bytes)
            if c_write and not c_fused and color_marks:
                n = request(rq, n, COLOR_WRITE_MARK, color_mark(e, c_clear), OP_WRITE_BACK, tl)
            elif c_write and not c_fused:
                n = request_block_as(rq, n, meta, ROP_COLOR, color_blocks, blk,
                                     ALL if c_clear else written, color_written, tl, c_bytes)
            if z_write:
                if zcomp:
                    depth_size[blk] = z_bytes
                if z_clear:
                    cleared_depth[blk] = False
            if c_write:
                if dcc:
                    color_size[blk] = c_bytes
                if c_clear:
                    cleared_color[blk] = False
        if hand_on and n_tex[r] > 0:
            if n == cap:
                n_out = serve_levels(lines, shape, meta, acc, tile_bytes, rq, n, own, out, n_out)
                n = 0
            n = request(rq, n, TEXTURE_MARK, r, OP_WRITE_BACK, -1)
            continue
        for e in range(tex_off[r], tex_off[r] + n_tex[r]):
            if n == cap:
                n_out = serve_levels(lines, shape, meta, acc, tile_bytes, rq, n, own, out, n_out)
                n = 0
            line = (region_base(tex_region) + tex_addr[e]) >> shift
            n = request(rq, n, L2, line, texture_op, ref_tile[r])
    return work.shape[0], serve_levels(lines, shape, meta, acc, tile_bytes, rq, n, own, out, n_out)


@inlined
def color_mark(e, state):
    """A colour mark's line: event e and the colour state its requests need (the block's last
    size + 1 for a fused read and write, whether it is still fast-cleared for a write)."""
    return e | (np.int64(state) << MARK_EVENT_BITS)


@njit(cache=True, nogil=True, error_model="numpy")
def serve_handed(lines, shape, meta, acc, tile_bytes, rows, n, ip):
    """The lower thread of a pipelined replay of pass `ip` (ImrPass): serves rows[:n] (with
    serve's arguments before them) as replay handed them on, in order, issuing the fetches,
    texel blocks and colour block requests a FETCH_MARK, TEXTURE_MARK or colour mark stands
    for (the colour requests as replay makes them, from the event and the state in the mark)."""
    f_off, f_addr, f_nbytes, f_op = ip.fetch
    prim_need, tex_region, ref_tile = ip.fetch_need, ip.tex_region, ip.ref_tile
    tex_off, n_tex, tex_addr = ip.events.tex_off, ip.events.n_tex, ip.events.tex_addr
    block, written_m, ev_size = ip.events.block, ip.events.written, ip.events.size
    dcc = ev_size.shape[0] > 0
    color = ip.color
    color_blocks = block_layout(meta, color[0], color[1])
    color_read, color_written = op_code(False, S_COLOR), op_code(True, S_COLOR)
    shift = line_shift(meta)
    texture_op = op_code(False, S_TEXTURE)
    cap = max(REQUESTS, prim_need, color_blocks[3])
    rq = new_requests(cap)
    m = 0
    event_mask = (np.int64(1) << MARK_EVENT_BITS) - 1
    for i in range(n):
        lv = request_level(rows, i)
        if lv >= -1:                      # a plain request
            if m == cap:
                serve(lines, shape, meta, acc, tile_bytes, rq, m)
                m = 0
            m = copy_request(rq, m, rows, i)
        elif lv == FETCH_MARK:
            if m > cap - prim_need:
                serve(lines, shape, meta, acc, tile_bytes, rq, m)
                m = 0
            m = issue(rq, m, L2, shift, f_off, f_addr, f_nbytes, f_op, request_line(rows, i))
        elif lv == COLOR_FUSED_MARK or lv == COLOR_WRITE_MARK:
            if m > cap - color_blocks[3]:
                serve(lines, shape, meta, acc, tile_bytes, rq, m)
                m = 0
            line, tl = request_line(rows, i), rows[i, R_TILE]
            e, state = line & event_mask, line >> MARK_EVENT_BITS
            blk, written = block[e], written_m[e]
            c_bytes = ev_size[e] if dcc else -1
            if lv == COLOR_FUSED_MARK:
                m = request_block_as(rq, m, meta, ROP_COLOR, color_blocks, blk, written,
                                     color_read, tl, state - 1, written, c_bytes)
            else:
                m = request_block_as(rq, m, meta, ROP_COLOR, color_blocks, blk,
                                     ALL if state else written, color_written, tl, c_bytes)
        else:
            r = request_line(rows, i)
            for e in range(tex_off[r], tex_off[r] + n_tex[r]):
                if m == cap:
                    serve(lines, shape, meta, acc, tile_bytes, rq, m)
                    m = 0
                m = request(rq, m, L2, (region_base(tex_region) + tex_addr[e]) >> shift,
                            texture_op, ref_tile[r])
    serve(lines, shape, meta, acc, tile_bytes, rq, m)
