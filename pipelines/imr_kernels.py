"""Numba kernel of the IMR's memory replay: the raster's requests in submission order.

An immediate-mode GPU walks draws, then primitives, then the pixels of each primitive, so its
caches see index and vertex fetches of a primitive followed by its ROP block requests and texture
fetches. That order (not the tile order the raster kernels ran in) is what the caches are fed.
"""
from __future__ import annotations

from numba import njit

from renderer.memory import L2, ROP_COLOR, ROP_DEPTH, STREAM
from renderer.memory_kernels import (M_LINE_SHIFT, REGION_SHIFT, access, access_block, access_range,
                                     block_tile)

S_INDEX, S_VERTEX, S_COLOR, S_DEPTH, S_TEXTURE = (STREAM[s] for s in ("index", "vertex", "color",
                                                                       "depth", "texture"))


@njit(cache=True, error_model="numpy")
def replay_submission_order(cs, acc, tile_bytes, geo, prim_tri_off, bins, ref_tile, ev, mat,
                            color, depth, blocks_x, tex_region):
    # Unpack the structs once: an array taken out of a tuple inside the loop is ref-counted
    # every time, which costs more than the cache lookup itself.
    lines, shape, meta = cs
    prim_off, indices, index_base, vertex_base, index_bytes, vertex_bytes = geo
    tri_offsets, ref_slot, tile, tiles_x = bins.tri_offsets, bins.ref_slot, bins.tile, bins.tiles_x
    block_off, n_block, block, tested_m, written_m, tex_off, n_tex, tex_addr = ev
    depth_test, depth_write, blend = mat.depth_test, mat.depth_write, mat.blend
    shift = meta[M_LINE_SHIFT]
    for d in range(prim_off.shape[0] - 1):
        ib, vb = index_base[d], vertex_base[d]
        for p in range(prim_off[d], prim_off[d + 1]):
            local = p - prim_off[d]
            last = -1
            for k in range(3):
                line = (ib + (local * 3 + k) * index_bytes) >> shift
                if line != last:
                    access(lines, shape, meta, acc, tile_bytes, L2, line, False, S_INDEX, -1)
                    last = line
                access_range(lines, shape, meta, acc, tile_bytes, L2,
                             vb + indices[p * 3 + k] * vertex_bytes, vertex_bytes, False, S_VERTEX, -1)
            for t in range(prim_tri_off[p], prim_tri_off[p + 1]):
                for q in range(tri_offsets[t], tri_offsets[t + 1]):
                    r = ref_slot[q]
                    for e in range(block_off[r], block_off[r] + n_block[r]):
                        blk = block[e]
                        tl = block_tile(blk, blocks_x, tile, tiles_x)
                        tested, written = tested_m[e], written_m[e]
                        if depth_test[d] and tested:
                            access_block(lines, shape, meta, acc, tile_bytes, ROP_DEPTH, depth[0],
                                         depth[1], blk, tested, False, S_DEPTH, tl)
                        if blend[d] and written:
                            access_block(lines, shape, meta, acc, tile_bytes, ROP_COLOR, color[0],
                                         color[1], blk, written, False, S_COLOR, tl)
                        if depth_write[d] and written:
                            access_block(lines, shape, meta, acc, tile_bytes, ROP_DEPTH, depth[0],
                                         depth[1], blk, written, True, S_DEPTH, tl)
                        if written:
                            access_block(lines, shape, meta, acc, tile_bytes, ROP_COLOR, color[0],
                                         color[1], blk, written, True, S_COLOR, tl)
                    for e in range(tex_off[r], tex_off[r] + n_tex[r]):
                        line = ((tex_region << REGION_SHIFT) + tex_addr[e]) >> shift
                        access(lines, shape, meta, acc, tile_bytes, L2, line, False, S_TEXTURE,
                               ref_tile[r])
