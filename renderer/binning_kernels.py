"""Numba kernels that bin setup triangles to screen tiles (CSR, submission order kept per tile)."""
from __future__ import annotations

import numpy as np
from numba import njit

from .geometry_kernels import SUBPIXEL_BITS
from .inlined import inlined
from .pow2 import over
from .texture_l1 import LINES_PER_QUAD

BLOCK = 8     # ROP block edge, px: the unit the ROP asks the memory system for (see raster_kernels)


@inlined
def pixel_bbox(x, y, t, width, height):
    """Conservative pixel bbox [x0, x1) x [y0, y1) of triangle t, clipped to the viewport: every
    pixel that may hold a covered sample."""
    x0 = max(0, min(x[t, 0], x[t, 1], x[t, 2]) >> SUBPIXEL_BITS)
    y0 = max(0, min(y[t, 0], y[t, 1], y[t, 2]) >> SUBPIXEL_BITS)
    x1 = min(width, (max(x[t, 0], x[t, 1], x[t, 2]) >> SUBPIXEL_BITS) + 1)
    y1 = min(height, (max(y[t, 0], y[t, 1], y[t, 2]) >> SUBPIXEL_BITS) + 1)
    return x0, y0, x1, y1


@inlined
def _overlaps(x, y, t, rx0, ry0, rx1, ry1):
    """Exact triangle–rectangle overlap for a positive-area triangle: the rectangle (subpixels,
    inclusive) is out if all four corners are outside one edge (the triangle's bbox was already
    intersected with it, which covers the separating axes x and y)."""
    for k in range(3):
        ax, ay = x[t, k], y[t, k]
        bx, by = x[t, (k + 1) % 3], y[t, (k + 1) % 3]
        dx, dy = bx - ax, by - ay
        # E(p) = dx*(py-ay) - dy*(px-ax); its maximum over the rectangle is at one corner.
        px = rx0 if dy > 0 else rx1
        py = ry1 if dx > 0 else ry0
        if dx * (py - ay) - dy * (px - ax) < 0:
            return False
    return True


@inlined
def _tile_range(x, y, t, width, height, tile, shift):
    """The tiles [tx0, tx1] x [ty0, ty1] triangle t's bounding box reaches (tx1 < tx0: none);
    shift: pow2.exponent(tile). A shift for a power-of-two tile rather than four 64-bit
    divisions, which were most of a small triangle's binning (sponza at 640x360, one thread:
    count_tiles and fill_refs 2.2 and 2.4 ms, bin_triangles 4.66 -> 2.82 ms)."""
    x0, y0, x1, y1 = pixel_bbox(x, y, t, width, height)
    if x1 <= x0 or y1 <= y0:
        return 0, 0, -1, -1
    return (over(x0, tile, shift), over(y0, tile, shift), over(x1 - 1, tile, shift),
            over(y1 - 1, tile, shift))


@njit(cache=True, nogil=True, error_model="numpy")
def count_tiles(t0, t1, x, y, width, height, tile, shift, exact, counts):
    """counts[t] for triangles t0..t1-1: the tiles each overlaps. (This and the other range
    kernels here run in parts on several threads: renderer.workers.spread.)"""
    for t in range(t0, t1):
        tx0, ty0, tx1, ty1 = _tile_range(x, y, t, width, height, tile, shift)
        if tx1 == tx0 and ty1 == ty0:
            counts[t] = 1
            continue
        c = 0
        for ty in range(ty0, ty1 + 1):
            for tx in range(tx0, tx1 + 1):
                if not exact or _overlaps(x, y, t, tx * tile << SUBPIXEL_BITS, ty * tile << SUBPIXEL_BITS,
                                          ((tx + 1) * tile << SUBPIXEL_BITS) - 1,
                                          ((ty + 1) * tile << SUBPIXEL_BITS) - 1):
                    c += 1
        counts[t] = c


@njit(cache=True, nogil=True, error_model="numpy")
def fill_refs(t0, t1, x, y, width, height, tile, shift, exact, tiles_x, tri_offsets, ref_tile):
    """Tile of every (triangle, tile) reference of triangles t0..t1-1, triangle-major (the order
    geometry produced)."""
    for t in range(t0, t1):
        tx0, ty0, tx1, ty1 = _tile_range(x, y, t, width, height, tile, shift)
        o = tri_offsets[t]
        for ty in range(ty0, ty1 + 1):
            for tx in range(tx0, tx1 + 1):
                if (tx1 == tx0 and ty1 == ty0) or not exact or _overlaps(
                        x, y, t, tx * tile << SUBPIXEL_BITS, ty * tile << SUBPIXEL_BITS,
                        ((tx + 1) * tile << SUBPIXEL_BITS) - 1, ((ty + 1) * tile << SUBPIXEL_BITS) - 1):
                    ref_tile[o] = ty * tiles_x + tx
                    o += 1


@njit(cache=True, nogil=True, error_model="numpy")
def sort_refs_by_tile(ref_tile, tri_offsets, n_tiles):
    """Counting sort, stable: within a tile, triangles stay in submission order.
    Returns tile_offsets (n_tiles+1), ref_tri (n_refs) and ref_slot: the tile-major position of
    each triangle-major reference (the memory model walks triangles, then their tiles)."""
    n_refs = ref_tile.shape[0]
    tile_offsets = np.zeros(n_tiles + 1, np.int64)
    for r in range(n_refs):
        tile_offsets[ref_tile[r] + 1] += 1
    for i in range(n_tiles):
        tile_offsets[i + 1] += tile_offsets[i]
    cursor = tile_offsets[:-1].copy()
    ref_tri = np.empty(n_refs, np.int64)
    ref_slot = np.empty(n_refs, np.int64)
    n_tris = tri_offsets.shape[0] - 1
    for t in range(n_tris):
        for r in range(tri_offsets[t], tri_offsets[t + 1]):
            s = cursor[ref_tile[r]]
            cursor[ref_tile[r]] += 1
            ref_tri[s] = t
            ref_slot[r] = s
    return tile_offsets, ref_tri, ref_slot


@njit(cache=True, nogil=True, error_model="numpy")
def event_bounds(i0, i1, x, y, width, height, tile, tiles_x, tile_offsets, ref_tri, textured,
                 blocks, quads):
    """Upper bounds on the memory events each reference of tiles i0..i1-1 can emit: ROP blocks
    of its bbox in the tile (blocks), and (textured draws) texture L1 misses: LINES_PER_QUAD for
    each 2x2 quad of it (quads)."""
    for i in range(i0, i1):
        tx0p, ty0p = (i % tiles_x) * tile, (i // tiles_x) * tile
        for r in range(tile_offsets[i], tile_offsets[i + 1]):
            t = ref_tri[r]
            x0, y0, x1, y1 = pixel_bbox(x, y, t, width, height)
            x0, y0 = max(x0, tx0p), max(y0, ty0p)
            x1, y1 = min(x1, tx0p + tile), min(y1, ty0p + tile)
            bx = (x1 - 1) // BLOCK - x0 // BLOCK + 1
            by = (y1 - 1) // BLOCK - y0 // BLOCK + 1
            blocks[r] = bx * by
            if textured[t]:
                quads[r] = ((x1 - 1) // 2 - x0 // 2 + 1) * ((y1 - 1) // 2 - y0 // 2 + 1) \
                    * LINES_PER_QUAD
