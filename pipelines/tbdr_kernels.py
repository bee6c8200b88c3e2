"""Numba kernel of the tiler's memory replay (TBDR): what crosses to the system cache and DRAM.

Phase 1 walks primitives in submission order: index and vertex fetch, then the parameter buffer
written once per setup triangle (its transformed vertices) and once per tile it touches (a list
entry). Phase 2 walks tiles: load actions read the tile's pixels, the tile list and every listed
triangle are read back through the parameter cache, texels are fetched, and store actions write
the tile out. Colour and depth in between live in tile memory and never leave the chip.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from renderer.binning_kernels import BLOCK
from renderer.memory import STREAM
from renderer.memory_kernels import (M_LINE_BYTES, M_LINE_SHIFT, R_N, REGION_SHIFT, REQUESTS,
                                     block_layout, op_code, request, request_block, serve)

PARAM_CACHE, SLC = 0, 1            # levels of the tiler's MemoryConfig
S_INDEX, S_VERTEX, S_PARAM, S_COLOR, S_DEPTH, S_TEXTURE = (
    STREAM[s] for s in ("index", "vertex", "param", "color", "depth", "texture"))


@njit(cache=True, error_model="numpy")
def replay_tiler(cs, acc, tile_bytes, geo, prim_tri_off, bins, ref_tile, ev, param, tiles,
                 blocks_x, blocks_y, tex_region):
    """param = (region of triangle data, bytes per setup triangle, region of tile lists, bytes
    per list entry). tiles = (colour load, colour store, depth load, depth store) as
    (region, bytes per pixel, on) each: what the load and store actions move per tile."""
    lines, shape, meta = cs
    prim_off, indices, index_base, vertex_base, index_bytes, vertex_bytes = geo
    tri_offsets, ref_slot, tile, tiles_x = bins.tri_offsets, bins.ref_slot, bins.tile, bins.tiles_x
    tile_offsets, ref_tri = bins.tile_offsets, bins.ref_tri
    tex_off, n_tex, tex_addr = ev.tex_off, ev.n_tex, ev.tex_addr
    prim_region, prim_bytes, list_region, entry_bytes = param
    lb, shift = meta[M_LINE_BYTES], meta[M_LINE_SHIFT]
    index_op, vertex_op = op_code(False, S_INDEX), op_code(False, S_VERTEX)
    param_write, param_read = op_code(True, S_PARAM), op_code(False, S_PARAM)
    texture_op = op_code(False, S_TEXTURE)
    need = 3 * (1 + vertex_bytes // lb + 2) + 2 * (prim_bytes // lb + 2) + 64
    cap = max(REQUESTS, 4 * need)
    rq = np.empty((cap, R_N), np.int64)
    n = 0
    prim_base = prim_region << REGION_SHIFT
    list_base = list_region << REGION_SHIFT
    # Phase 1: geometry and tiling, in submission order.
    for d in range(prim_off.shape[0] - 1):
        ib, vb = index_base[d], vertex_base[d]
        for p in range(prim_off[d], prim_off[d + 1]):
            if n > cap - need:
                serve(lines, shape, meta, acc, tile_bytes, rq, n)
                n = 0
            local = p - prim_off[d]
            last = -1
            for k in range(3):
                line = (ib + (local * 3 + k) * index_bytes) >> shift
                if line != last:
                    n = request(rq, n, SLC, line, index_op, -1)
                    last = line
                first = vb + indices[p * 3 + k] * vertex_bytes
                for line in range(first >> shift, ((first + vertex_bytes - 1) >> shift) + 1):
                    n = request(rq, n, SLC, line, vertex_op, -1)
            for t in range(prim_tri_off[p], prim_tri_off[p + 1]):
                first = prim_base + t * prim_bytes
                for line in range(first >> shift, ((first + prim_bytes - 1) >> shift) + 1):
                    n = request(rq, n, SLC, line, param_write, -1)
                for q in range(tri_offsets[t], tri_offsets[t + 1]):
                    if n == cap:
                        serve(lines, shape, meta, acc, tile_bytes, rq, n)
                        n = 0
                    r = ref_slot[q]        # tile lists are laid out tile-major: entry r
                    line = (list_base + r * entry_bytes) >> shift
                    n = request(rq, n, SLC, line, param_write, ref_tile[r])
    # Phase 2: tile by tile.
    for i in range(tile_offsets.shape[0] - 1):
        tx0 = (i % tiles_x) * tile // BLOCK
        ty0 = (i // tiles_x) * tile // BLOCK
        bx1 = min(tx0 + tile // BLOCK, blocks_x)
        by1 = min(ty0 + tile // BLOCK, blocks_y)
        for a in range(2):                              # load actions: colour, depth
            region, bpp, on = tiles[2 * a]
            if not on:
                continue
            layout = block_layout(meta, region, bpp)
            op = op_code(False, S_COLOR if a == 0 else S_DEPTH)
            for by in range(ty0, by1):
                for bx in range(tx0, bx1):
                    if n > cap - layout[3]:
                        serve(lines, shape, meta, acc, tile_bytes, rq, n)
                        n = 0
                    n = request_block(rq, n, meta, SLC, layout, by * blocks_x + bx, ~np.uint64(0), op, i)
        last = -1
        for r in range(tile_offsets[i], tile_offsets[i + 1]):
            if n > cap - need:
                serve(lines, shape, meta, acc, tile_bytes, rq, n)
                n = 0
            line = (list_base + r * entry_bytes) >> shift
            if line != last:
                n = request(rq, n, PARAM_CACHE, line, param_read, i)
                last = line
            first = prim_base + ref_tri[r] * prim_bytes
            for line in range(first >> shift, ((first + prim_bytes - 1) >> shift) + 1):
                n = request(rq, n, PARAM_CACHE, line, param_read, i)
            for e in range(tex_off[r], tex_off[r] + n_tex[r]):
                if n == cap:
                    serve(lines, shape, meta, acc, tile_bytes, rq, n)
                    n = 0
                n = request(rq, n, SLC, ((tex_region << REGION_SHIFT) + tex_addr[e]) >> shift,
                            texture_op, i)
        for a in range(2):                              # store actions: colour, depth
            region, bpp, on = tiles[2 * a + 1]
            if not on:
                continue
            layout = block_layout(meta, region, bpp)
            op = op_code(True, S_COLOR if a == 0 else S_DEPTH)
            for by in range(ty0, by1):
                for bx in range(tx0, bx1):
                    if n > cap - layout[3]:
                        serve(lines, shape, meta, acc, tile_bytes, rq, n)
                        n = 0
                    n = request_block(rq, n, meta, SLC, layout, by * blocks_x + bx, ~np.uint64(0), op, i)
    serve(lines, shape, meta, acc, tile_bytes, rq, n)
