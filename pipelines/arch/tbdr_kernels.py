"""Numba kernels of the tiler's memory replay (TBDR): what crosses to the system cache and DRAM.

Phase 1 (tiler_geometry) walks primitives in submission order: the front end's fetches (its
FetchPlan: indices, vertices, meshlet tables), then the parameter buffer: each transformed
vertex once (per chunk), a record per setup triangle, and a list entry per tile it touches. A
clipped triangle's pieces are charged as its original vertices (clipping makes few). The tiler
writes through write-combining slots, one per stream (vertices, records) and one per tile list
(assumed: a line is one request however many writes fill it in a row, as a write-combining
buffer merges them), so a line written by consecutive writes is one request. Phase 2
(tiler_tiles) walks tiles: load actions read the tile's pixels, the tile list and every listed
triangle are read back through the parameter cache (one request per distinct line of a listed
primitive: its record and vertices, merged as the front end's fetch merges a primitive's),
texels are fetched, and store actions write the tile out. Colour and depth in between live in
tile memory and never leave the chip.

The replay runs chunk by chunk (partial renders), phase 1 then phase 2, and phase 2 over any
run of tiles at a time, its place kept in a TilerState: pipelines.arch.tbdr starts it while the raster
is still drawing and hands it each band of tiles as the band is finished. Requests are served in
the order one call over everything would serve them, so the counters do not depend on the bands.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from renderer.binning_kernels import BLOCK
from renderer.inlined import inlined
from renderer.memory import STREAM
from renderer.frontend.fetch_kernels import issue
from renderer.memory import serve
from renderer.memory_requests import (REQUESTS, block_layout, line_bytes, line_shift, new_requests,
                                      op_code, region_base, request, request_block,
                                      request_block_as, request_range)

PARAM_CACHE, SLC = 0, 1            # levels of the tiler's MemoryConfig
ALL = ~np.uint64(0)                # every pixel of a block
S_PARAM, S_COLOR, S_DEPTH, S_TEXTURE, S_COMP_META = (
    STREAM[s] for s in ("param", "color", "depth", "texture", "comp_meta"))


@njit(cache=True, nogil=True, error_model="numpy")
def param_chunks(prim_off, indices, draw_vbase, prim_tri_off, tri_refs, sizes, capacity):
    """Partial renders: the chunk of each primitive. A primitive adds its setup triangles'
    records and tile-list entries, and each of its vertices not yet in the buffer; a new chunk
    starts (and the buffer empties) where the next primitive would overflow it. A primitive
    larger than the whole buffer still goes in, alone. sizes = (vertex, primitive record, list
    entry) bytes. Returns (chunk per primitive, bytes written in all).
    Most passes fit one chunk (one_chunk_bytes says so, on every thread); the walk below is for
    those that do not."""
    one = one_chunk_bytes(prim_off, indices, draw_vbase, prim_tri_off, tri_refs, sizes)
    if 0 <= one <= capacity:
        return np.zeros(prim_off[-1], np.int64), one
    return _param_walk(prim_off, indices, draw_vbase, prim_tri_off, tri_refs, sizes, capacity)


@inlined
def _fixed_bytes(p, prim_tri_off, tri_refs, record_b, entry_b):
    """What primitive p writes whatever the buffer holds: its setup triangles' records and their
    tile-list entries."""
    refs = 0
    for t in range(prim_tri_off[p], prim_tri_off[p + 1]):
        refs += tri_refs[t]
    return (prim_tri_off[p + 1] - prim_tri_off[p]) * record_b + refs * entry_b


ONE_CHUNK_PART = 4096     # primitives per parallel part of one_chunk_bytes


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def one_chunk_bytes(prim_off, indices, draw_vbase, prim_tri_off, tri_refs, sizes):
    """The bytes param_chunks' walk writes if the whole pass stays in one chunk: every surviving
    primitive's records and list entries, and each vertex a surviving primitive uses, once. The
    walk's used bytes only grow within a chunk, so the pass is one chunk exactly when this fits
    the buffer. -1 if a surviving primitive names a vertex twice (the walk would count it twice:
    left to it). In parts of primitives on every thread (a draw can be the whole pass); the
    parts mark the vertices they use, each mark a 1 whichever part writes it."""
    vertex_b, record_b, entry_b = sizes
    n_prims = prim_off[-1]
    n_parts = max(1, -(-n_prims // ONE_CHUNK_PART))
    used = np.zeros(draw_vbase[-1], np.uint8)
    fixed = np.zeros(n_parts, np.int64)
    twice = np.zeros(n_parts, np.int64)
    for k in prange(n_parts):
        p0, p1 = k * ONE_CHUNK_PART, min(n_prims, (k + 1) * ONE_CHUNK_PART)
        d = np.searchsorted(prim_off, p0, side="right") - 1      # the draw of p0
        for p in range(p0, p1):
            while prim_off[d + 1] <= p:
                d += 1
            if prim_tri_off[p + 1] == prim_tri_off[p]:
                continue                             # culled: writes nothing
            fixed[k] += _fixed_bytes(p, prim_tri_off, tri_refs, record_b, entry_b)
            i0, i1, i2 = indices[p * 3], indices[p * 3 + 1], indices[p * 3 + 2]
            if i0 == i1 or i1 == i2 or i0 == i2:
                twice[k] += 1
            for i in (i0, i1, i2):
                used[draw_vbase[d] + i] = 1
    if twice.sum() > 0:
        return -1
    n_used = 0
    for v in prange(used.shape[0]):
        n_used += used[v]
    return fixed.sum() + n_used * vertex_b


@njit(cache=True, nogil=True, error_model="numpy")
def _param_walk(prim_off, indices, draw_vbase, prim_tri_off, tri_refs, sizes, capacity):
    """param_chunks primitive by primitive, chunk by chunk (the obvious way)."""
    vertex_b, record_b, entry_b = sizes
    n_prims = prim_off[-1]
    chunk = np.zeros(n_prims, np.int64)
    n_verts = draw_vbase[-1]
    stamp = np.full(n_verts, -1, np.int64)          # chunk that last wrote each vertex
    c, used, total = 0, 0, 0
    for d in range(prim_off.shape[0] - 1):
        for p in range(prim_off[d], prim_off[d + 1]):
            if prim_tri_off[p + 1] == prim_tri_off[p]:
                chunk[p] = c                         # culled: writes nothing
                continue
            fixed = _fixed_bytes(p, prim_tri_off, tri_refs, record_b, entry_b)
            new = 0
            for k in range(3):
                if stamp[draw_vbase[d] + indices[p * 3 + k]] != c:
                    new += 1
            if used > 0 and used + fixed + new * vertex_b > capacity:
                c += 1
                used = 0
                new = 3                              # the buffer emptied: vertices go in again
            for k in range(3):
                stamp[draw_vbase[d] + indices[p * 3 + k]] = c
            used += fixed + new * vertex_b
            total += fixed + new * vertex_b
            chunk[p] = c
    return chunk, total


@inlined
def _tile_blocks(rq, n, meta, lv, layout, op, i, tx0, ty0, bx1, by1, blocks_x):
    """Request every block of tile i (blocks [tx0, bx1) x [ty0, by1)) of one surface."""
    for by in range(ty0, by1):
        for bx in range(tx0, bx1):
            n = request_block(rq, n, meta, lv, layout, by * blocks_x + bx, ~np.uint64(0), op, i)
    return n


@inlined
def _tile_transfer(rq, n, meta, write, spilled, transfers, i, tx0, ty0, bx1, by1, blocks_x):
    """Load (write False) or store one tile's colour and depth: from or to the spill around a
    partial render, else as the load and store actions say, the colour compressed where
    `transfers` has its blocks' sizes (with the codec's metadata). Returns (n, spill bytes
    moved)."""
    actions, spill, sizes, (meta_region, meta_bytes) = transfers
    moved = 0
    for a in range(2):
        if spilled:
            region, bpp = spill[a]
            on = bpp > 0
        else:
            region, bpp, on = actions[2 * a + (1 if write else 0)]
        if not on:
            continue
        n0 = n
        op = op_code(write, S_COLOR if a == 0 else S_DEPTH)
        layout = block_layout(meta, region, bpp)
        size = sizes[1 if write else 0]
        if a == 0 and not spilled and size.shape[0] > 0:
            prev = -1
            for by in range(ty0, by1):
                for bx in range(tx0, bx1):
                    if size[by * blocks_x + bx] >= 0:   # (-1: transaction elimination kept it)
                        n = request_block_as(rq, n, meta, SLC, layout, by * blocks_x + bx, ALL,
                                             op, i, size[by * blocks_x + bx])
                first = region_base(meta_region) + (by * blocks_x + tx0) * meta_bytes
                n, prev = request_range(rq, n, SLC, first, first + (bx1 - tx0) * meta_bytes - 1,
                                        line_shift(meta), op_code(write, S_COMP_META), i, prev)
        else:
            n = _tile_blocks(rq, n, meta, SLC, layout, op, i, tx0, ty0, bx1, by1, blocks_x)
        if spilled:
            moved += (n - n0) * line_bytes(meta)
    return n, moved


class TilerPass(NamedTuple):
    """What the tiler's replay reads of one render pass: the same for every chunk and band."""
    prim_off: np.ndarray      # int64 (n_draws + 1,) each draw's first primitive
    indices: np.ndarray       # draw-local vertex indices, three per primitive
    draw_vbase: np.ndarray    # int64 (n_draws + 1,) each draw's first transformed vertex
    fetch: tuple              # the front end's FetchPlan rows (off, addr, nbytes, op)
    fetch_need: int           # the most lines one primitive's fetches span
    prim_tri_off: np.ndarray  # int64 CSR: each primitive's setup triangles
    tri_prim: np.ndarray      # int64 each setup triangle's primitive
    prim_chunk: np.ndarray    # int64 each primitive's chunk (param_chunks: partial renders)
    bins: tuple               # renderer.binning.TileBins
    ref_tile: np.ndarray      # int64 each tile reference's tile
    events: tuple             # renderer.raster.RasterEvents (each reference's texel blocks)
    param: tuple              # ((region, bytes) of a vertex, a primitive record, a list entry)
    tex_region: int           # the textures' region
    blocks_x: int             # 8x8 blocks across and down the target
    blocks_y: int


class TileTransfers(NamedTuple):
    """What a tile moves at its start and end."""
    actions: tuple   # (region, bytes per pixel, on) of colour load, colour store, depth load,
                     # depth store: what the load and store actions move per tile
    spill: tuple     # (region, bytes per pixel) of colour, depth: where a partial render parks a
                     # tile's full working set (every sample; 0 bpp: no such attachment)
    sizes: tuple     # int64 per 8x8 block: the colour's compressed payload bytes as loaded and
                     # as stored (empty: it moves raw; -1: a block transaction elimination does
                     # not write); the store's are filled in as the raster finishes the tiles
                     # (pipelines.arch.tbdr)
    codec_meta: tuple  # (region, bytes per 8x8 block) of the codec's metadata


class SpillTally(NamedTuple):
    """What partial renders moved, added to by tiler_tiles."""
    bytes: np.ndarray      # int64 (2,) stored, reloaded
    per_tile: np.ndarray   # int64 per tile: partial renders that parked it


class TilerState(NamedTuple):
    """Where the tiler's replay stands between calls: it runs chunk by chunk, phase 1 then
    phase 2, and phase 2 band by band as the raster finishes tiles (tiler_tiles)."""
    rq: np.ndarray           # request buffer, served before each call returns
    stamp: np.ndarray        # chunk that last wrote each transformed vertex to the buffer
    draw_of: np.ndarray      # draw of each primitive
    last_chunk: np.ndarray   # the chunk in which each tile is rendered last
    cursor: np.ndarray       # next reference of each tile not yet rendered
    spilled: np.ndarray      # tile parked by the last partial render
    prim: np.ndarray         # (1,) next primitive of phase 1


@inlined
def _most_rows(fetch_need, param, line_bytes):
    """The most requests one primitive adds in phase 1 (its fetches, fetch_need lines, and its
    parameter-buffer writes) or one reference in phase 2 (fetch_need 0), with room to spare."""
    (_, vertex_b), (_, record_b), _ = param
    return fetch_need + 4 * (record_b + 3 * vertex_b) // line_bytes + 64


@njit(cache=True, nogil=True, error_model="numpy")
def tiler_state(tp, line_bytes):
    """A fresh TilerState for one replay of `tp` (TilerPass). Tiles nothing touches are
    rendered (cleared and stored) with the first chunk."""
    prim_off, draw_vbase, tri_prim, prim_chunk = tp.prim_off, tp.draw_vbase, tp.tri_prim, tp.prim_chunk
    fetch_need, param = tp.fetch_need, tp.param
    tile, tile_offsets, ref_tri = tp.bins.tile, tp.bins.tile_offsets, tp.bins.ref_tri
    n_tiles = tile_offsets.shape[0] - 1
    tile_blocks = (tile // BLOCK) * (tile // BLOCK)
    need = _most_rows(fetch_need, param, line_bytes)
    cap = max(REQUESTS, 4 * need, 2 * tile_blocks * (4 * BLOCK * BLOCK * 16 // line_bytes + 1))
    n_prims = prim_off[-1]
    draw_of = np.empty(n_prims, np.int64)
    for d in range(prim_off.shape[0] - 1):
        draw_of[prim_off[d]:prim_off[d + 1]] = d
    last_chunk = np.zeros(n_tiles, np.int64)
    for i in range(n_tiles):
        if tile_offsets[i + 1] > tile_offsets[i]:
            last_chunk[i] = prim_chunk[tri_prim[ref_tri[tile_offsets[i + 1] - 1]]]
    return TilerState(new_requests(cap), np.full(draw_vbase[-1], -1, np.int64),
                      draw_of, last_chunk, tile_offsets[:-1].copy(), np.zeros(n_tiles, np.bool_),
                      np.zeros(1, np.int64))


@njit(cache=True, nogil=True, error_model="numpy")
def tiler_geometry(mem, tp, state, c):
    """Phase 1 of chunk c of `tp` (TilerPass), served through `mem` (renderer.memory.Serving)
    from `state` (TilerState): geometry and tiling of its primitives, in submission order: each
    primitive's fetches (the front end's plan), then its parameter-buffer writes (tp.param: the
    vertices, the primitive records and the tile lists). A vertex is written the first time a
    chunk uses it (and read in phase 2 with every listed primitive)."""
    lines, shape, meta = mem.caches
    acc, tile_bytes = mem.totals, mem.tile_bytes
    prim_off, indices, draw_vbase, prim_tri_off = tp.prim_off, tp.indices, tp.draw_vbase, tp.prim_tri_off
    prim_chunk, ref_tile, bins, param = tp.prim_chunk, tp.ref_tile, tp.bins, tp.param
    fetch_need = tp.fetch_need
    f_off, f_addr, f_nbytes, f_op = tp.fetch
    tri_offsets, ref_slot = bins.tri_offsets, bins.ref_slot
    (vertex_region, vertex_b), (record_region, record_b), (list_region, entry_bytes) = param
    lb, shift = line_bytes(meta), line_shift(meta)
    param_write = op_code(True, S_PARAM)
    rq, stamp, draw_of = state.rq, state.stamp, state.draw_of
    cap = rq.shape[0]
    need = _most_rows(fetch_need, param, lb)
    vertex_base = region_base(vertex_region)
    record_base = region_base(record_region)
    list_base = region_base(list_region)
    n_prims = prim_off[-1]
    last_vertex = last_record = -1       # the line each write-combining slot holds
    last_list = np.full(bins.tile_offsets.shape[0] - 1, -1, np.int64)    # per tile list
    n = 0
    p = state.prim[0]
    while p < n_prims and prim_chunk[p] == c:
        if n > cap - need:
            serve(lines, shape, meta, acc, tile_bytes, rq, n)
            n = 0
        d = draw_of[p]
        n = issue(rq, n, SLC, shift, f_off, f_addr, f_nbytes, f_op, p)
        if prim_tri_off[p + 1] > prim_tri_off[p]:
            for k in range(3):             # vertices this chunk has not written yet
                v = draw_vbase[d] + indices[p * 3 + k]
                if stamp[v] != c:
                    stamp[v] = c
                    first = vertex_base + v * vertex_b
                    for line in range(first >> shift, ((first + vertex_b - 1) >> shift) + 1):
                        if line != last_vertex:
                            n = request(rq, n, SLC, line, param_write, -1)
                            last_vertex = line
        for t in range(prim_tri_off[p], prim_tri_off[p + 1]):
            first = record_base + t * record_b
            for line in range(first >> shift, ((first + record_b - 1) >> shift) + 1):
                if line != last_record:
                    n = request(rq, n, SLC, line, param_write, -1)
                    last_record = line
            for q in range(tri_offsets[t], tri_offsets[t + 1]):
                if n == cap:
                    serve(lines, shape, meta, acc, tile_bytes, rq, n)
                    n = 0
                r = ref_slot[q]        # tile lists are laid out tile-major: entry r
                line = (list_base + r * entry_bytes) >> shift
                if line != last_list[ref_tile[r]]:
                    n = request(rq, n, SLC, line, param_write, ref_tile[r])
                    last_list[ref_tile[r]] = line
        p += 1
    state.prim[0] = p
    serve(lines, shape, meta, acc, tile_bytes, rq, n)


@njit(cache=True, nogil=True, error_model="numpy")
def tiler_tiles(mem, tp, transfers, tally, state, c, lo, hi):
    """Phase 2 of chunk c of `tp` (TilerPass) over tiles lo..hi-1: every tile the chunk touches
    (or, in the first, that nothing touches), served through `mem` (Serving) from `state`.
    A tile loads and stores what `transfers` (TileTransfers) says: its actions, or around a
    partial render its spill, parked until the next chunk reloads it. tally (SpillTally):
    bytes += stored and reloaded by partial renders; per_tile[i] += 1 for each partial render
    that parks tile i."""
    lines, shape, meta = mem.caches
    acc, tile_bytes = mem.totals, mem.tile_bytes
    indices, draw_vbase, tri_prim, prim_chunk = tp.indices, tp.draw_vbase, tp.tri_prim, tp.prim_chunk
    bins, param, tex_region, blocks_x, blocks_y = tp.bins, tp.param, tp.tex_region, tp.blocks_x, tp.blocks_y
    extra, tile_spills = tally
    tile, tiles_x = bins.tile, bins.tiles_x
    tile_offsets, ref_tri = bins.tile_offsets, bins.ref_tri
    tex_off, n_tex, tex_addr = tp.events.tex_off, tp.events.n_tex, tp.events.tex_addr
    (vertex_region, vertex_b), (record_region, record_b), (list_region, entry_bytes) = param
    lb, shift = line_bytes(meta), line_shift(meta)
    param_read = op_code(False, S_PARAM)
    texture_op = op_code(False, S_TEXTURE)
    rq, draw_of, cursor = state.rq, state.draw_of, state.cursor
    spilled, last_chunk = state.spilled, state.last_chunk
    cap = rq.shape[0]
    need = _most_rows(0, param, lb)
    vertex_base = region_base(vertex_region)
    record_base = region_base(record_region)
    list_base = region_base(list_region)
    n = 0
    for i in range(lo, hi):
        end = cursor[i]
        while end < tile_offsets[i + 1] and \
                prim_chunk[tri_prim[ref_tri[end]]] == c:
            end += 1
        if end == cursor[i] and not (c == 0 and tile_offsets[i + 1] == tile_offsets[i]):
            continue
        tx0 = (i % tiles_x) * tile // BLOCK
        ty0 = (i // tiles_x) * tile // BLOCK
        bx1 = min(tx0 + tile // BLOCK, blocks_x)
        by1 = min(ty0 + tile // BLOCK, blocks_y)
        if n > cap // 2:
            serve(lines, shape, meta, acc, tile_bytes, rq, n)
            n = 0
        n, moved = _tile_transfer(rq, n, meta, False, spilled[i], transfers, i, tx0, ty0,
                                  bx1, by1, blocks_x)
        extra[1] += moved
        last = -1
        for r in range(cursor[i], end):
            if n > cap - need:
                serve(lines, shape, meta, acc, tile_bytes, rq, n)
                n = 0
            line = (list_base + r * entry_bytes) >> shift
            if line != last:
                n = request(rq, n, PARAM_CACHE, line, param_read, i)
                last = line
            t = ref_tri[r]
            first = record_base + t * record_b
            q0 = q1 = q2 = q3 = -1              # lines this primitive has asked for
            for line in range(first >> shift, ((first + record_b - 1) >> shift) + 1):
                n = request(rq, n, PARAM_CACHE, line, param_read, i)
                q1, q0 = q0, line
            tp = tri_prim[t]
            for k in range(3):
                first = vertex_base + (draw_vbase[draw_of[tp]] + indices[tp * 3 + k]) * vertex_b
                for line in range(first >> shift, ((first + vertex_b - 1) >> shift) + 1):
                    if line != q0 and line != q1 and line != q2 and line != q3:
                        n = request(rq, n, PARAM_CACHE, line, param_read, i)
                        q3, q2, q1, q0 = q2, q1, q0, line
            for e in range(tex_off[r], tex_off[r] + n_tex[r]):
                if n == cap:
                    serve(lines, shape, meta, acc, tile_bytes, rq, n)
                    n = 0
                n = request(rq, n, SLC, (region_base(tex_region) + tex_addr[e]) >> shift,
                            texture_op, i)
        cursor[i] = end
        if n > cap // 2:
            serve(lines, shape, meta, acc, tile_bytes, rq, n)
            n = 0
        partial = c < last_chunk[i]
        n, moved = _tile_transfer(rq, n, meta, True, partial, transfers, i, tx0, ty0, bx1,
                                  by1, blocks_x)
        extra[0] += moved
        spilled[i] = partial
        tile_spills[i] += partial
    serve(lines, shape, meta, acc, tile_bytes, rq, n)
