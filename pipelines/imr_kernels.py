"""Numba kernel of the IMR's memory replay: the raster's requests in submission order.

An immediate-mode GPU walks draws, then primitives, then the pixels of each primitive, so its
caches see index and vertex fetches of a primitive followed by its ROP block requests and texture
fetches. That order (not the tile order the raster kernels ran in) is what the caches are fed.
"""
from __future__ import annotations

from numba import njit

from renderer.memory import L2, ROP_COLOR, ROP_DEPTH, STREAM
from renderer.memory_kernels import REGION_SHIFT, access, access_block, access_range, block_tile

S_INDEX, S_VERTEX, S_COLOR, S_DEPTH, S_TEXTURE = (STREAM[s] for s in ("index", "vertex", "color",
                                                                       "depth", "texture"))


@njit(cache=True, error_model="numpy")
def replay_submission_order(cs, acc, geo, prim_tri_off, bins, ref_tile, ev, mat, color, depth,
                            blocks_x, tex_region):
    shift = cs.line_shift
    for d in range(geo.prim_off.shape[0] - 1):
        ib, vb = geo.index_base[d], geo.vertex_base[d]
        for p in range(geo.prim_off[d], geo.prim_off[d + 1]):
            local = p - geo.prim_off[d]
            last = -1
            for k in range(3):
                line = (ib + (local * 3 + k) * geo.index_bytes) >> shift
                if line != last:
                    access(cs, acc, L2, line, False, S_INDEX, -1)
                    last = line
                access_range(cs, acc, L2, vb + geo.indices[p * 3 + k] * geo.vertex_bytes,
                             geo.vertex_bytes, False, S_VERTEX, -1)
            for t in range(prim_tri_off[p], prim_tri_off[p + 1]):
                for q in range(bins.tri_offsets[t], bins.tri_offsets[t + 1]):
                    r = bins.ref_slot[q]
                    for e in range(ev.block_off[r], ev.block_off[r] + ev.n_block[r]):
                        blk = ev.block[e]
                        tl = block_tile(blk, blocks_x, bins.tile, bins.tiles_x)
                        tested, written = ev.tested[e], ev.written[e]
                        if mat.depth_test[d] and tested:
                            access_block(cs, acc, ROP_DEPTH, depth, blk, tested, False, S_DEPTH, tl)
                        if mat.blend[d] and written:
                            access_block(cs, acc, ROP_COLOR, color, blk, written, False, S_COLOR, tl)
                        if mat.depth_write[d] and written:
                            access_block(cs, acc, ROP_DEPTH, depth, blk, written, True, S_DEPTH, tl)
                        if written:
                            access_block(cs, acc, ROP_COLOR, color, blk, written, True, S_COLOR, tl)
                    for e in range(ev.tex_off[r], ev.tex_off[r] + ev.n_tex[r]):
                        line = ((tex_region << REGION_SHIFT) + ev.tex_addr[e]) >> shift
                        access(cs, acc, L2, line, False, S_TEXTURE, ref_tile[r])
