"""Binning: consumes SetupTriangles, produces TileBins (CSR). Raster consumes them tile by tile.

Every architecture bins: an IMR does it only to run screen tiles in parallel (llvmpipe does the
same with 64x64 tiles, peers.md §1.1) while its memory traffic is still replayed in submission
order; a tiler's binning is its parameter buffer. Triangles are stored once; bins hold indices.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import binning_kernels as bk
from .geometry import SetupTriangles
from .geometry_kernels import running_sum
from .pow2 import exponent
from .workers import SMALL_TRIANGLES, on_this_thread, spread

RASTER_TILE = 64   # px; llvmpipe's TILE_SIZE (peers.md §1.1): the unit of parallel work


class TileBins(NamedTuple):
    tile: int                 # tile edge, px
    tiles_x: int
    tiles_y: int
    tile_offsets: np.ndarray  # int64 (n_tiles + 1,) CSR into ref_tri
    ref_tri: np.ndarray       # int64 (n_refs,) setup triangle of each reference, tile-major
    tri_offsets: np.ndarray   # int64 (n_tris + 1,) CSR into ref_slot (triangle-major)
    ref_slot: np.ndarray      # int64 (n_refs,) tile-major position of each triangle-major ref

    @property
    def n_tiles(self) -> int:
        return self.tiles_x * self.tiles_y

    @property
    def n_refs(self) -> int:
        return len(self.ref_tri)

    def ref_tiles(self) -> np.ndarray:
        """int64 (n_refs,): the tile of each tile-major reference."""
        return np.repeat(np.arange(self.n_tiles, dtype=np.int64), np.diff(self.tile_offsets))


def bin_triangles(tris: SetupTriangles, width: int, height: int, tile: int = RASTER_TILE,
                  exact: bool = True) -> TileBins:
    """Each triangle to the tiles it overlaps (exact triangle–tile test when `exact`, else its
    bounding box)."""
    tiles_x, tiles_y = -(-width // tile), -(-height // tile)
    shift = exponent(tile)
    with on_this_thread(tris.n < SMALL_TRIANGLES):
        counts = np.zeros(tris.n, np.int64)
        spread(bk.count_tiles, tris.n, tris.x, tris.y, width, height, tile, shift, exact, counts)
        tri_offsets = running_sum(counts)
        ref_tile = np.empty(int(tri_offsets[-1]), np.int64)
        spread(bk.fill_refs, tris.n, tris.x, tris.y, width, height, tile, shift, exact, tiles_x,
               tri_offsets, ref_tile)
        tile_offsets, ref_tri, ref_slot = bk.sort_refs_by_tile(ref_tile, tri_offsets,
                                                               tiles_x * tiles_y)
    return TileBins(tile, tiles_x, tiles_y, tile_offsets, ref_tri, tri_offsets, ref_slot)


def event_capacity(tris: SetupTriangles, width: int, height: int, bins: TileBins,
                   textured: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Upper bounds on the memory events each reference of `bins` can emit, as CSR offsets
    (n_refs + 1): ROP blocks of its bounding box in its tile, and texture L1 misses of a
    reference to a `textured` triangle (bk.event_bounds)."""
    blocks = np.zeros(bins.n_refs, np.int64)
    quads = np.zeros(bins.n_refs, np.int64)
    spread(bk.event_bounds, bins.n_tiles, tris.x, tris.y, width, height, bins.tile, bins.tiles_x,
           bins.tile_offsets, bins.ref_tri, textured, blocks, quads)
    return running_sum(blocks), running_sum(quads)
