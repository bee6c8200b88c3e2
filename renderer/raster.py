"""Raster: consumes SetupTriangles + TileBins + shading tables, renders into a Framebuffer and
produces the raster.* counters and the ROP/texture request events for the memory model."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import raster_kernels as rk
from .binning import TileBins, event_capacity
from .counters import Counters, from_array
from .rop_sizes import RULE_DCC_MAX_BLOCK, RULE_Z_MAX_PLANES, resize_events
from .geometry import SetupTriangles
from .rop import Framebuffer  # noqa: F401  (re-exported: raster renders into it)

# Skip the pixels of 8x8 blocks a triangle covers whole and is known to lose at (raster_kernels'
# zbound): a speed-up of the simulator only, counted as if every pixel had been visited. Tests
# turn it off to check that nothing it produces differs.
Z_SKIP = True

# D3D standard 4x pattern, 1/16 px from the pixel centre, y down (D3D11 standard sample positions).
D3D_4X = np.array([(-2, -6), (6, -2), (-6, 2), (2, 6)], np.int64)


class RasterView(NamedTuple):
    width: int
    height: int
    samples: int
    sample_x: np.ndarray   # int64 (samples,) offset from the pixel centre, 1/256 px
    sample_y: np.ndarray

    @staticmethod
    def make(width: int, height: int, samples: int) -> "RasterView":
        if samples == 1:
            off = np.zeros((1, 2), np.int64)
        elif samples == 4:
            off = D3D_4X * (256 // 16)
        else:
            raise ValueError(f"samples must be 1 or 4, got {samples}")
        return RasterView(width, height, samples, off[:, 0].copy(), off[:, 1].copy())


class RopEvents(NamedTuple):
    """What the ROP and texture units asked memory for, per tile-major reference (bins.ref_tri)."""
    block_off: np.ndarray  # int64 (n_refs + 1,) capacity CSR into block/tested/written
    n_block: np.ndarray    # int64 (n_refs,) events used
    block: np.ndarray      # int64 (cap,) global 8x8 block index (row-major over the target)
    tested: np.ndarray     # uint64 (cap,) pixels of the block whose depth was tested (bit y*8+x)
    written: np.ndarray    # uint64 (cap,) pixels of the block whose colour (and depth) was written
    tex_off: np.ndarray    # int64 (n_refs + 1,) capacity CSR into tex_addr
    n_tex: np.ndarray      # int64 (n_refs,)
    tex_addr: np.ndarray   # int64 (cap,) byte address of a texture L1 line it missed (texture_l1)
    size: np.ndarray       # int64 (cap,) with DCC: the block's colour payload as the ROP leaves it
                           # after the event (-1: nothing written); (0,) without
    zsize: np.ndarray      # int64 (cap,) with depth compression: the block's depth payload after
                           # the event (-1: no depth written); (0,) without
    rules: np.ndarray      # int64 (RULES_N,) the rules both follow (rop_sizes.codec_rules)

    @staticmethod
    def none() -> "RopEvents":
        """No events, typed as the raster's are (numba compiles a kernel once for both): for a
        consumer that starts before the raster has made its own (the tiler's replay)."""
        i, u = np.zeros(0, np.int64), np.zeros(0, np.uint64)
        return RopEvents(i, i, i, u, u, i, i, i, i, i, i)


class Raster:
    """One frame's raster work, run whole (rasterize) or in bands of tile rows, so that a consumer
    of the events (the tiler's replay, on another thread) can start on the top of the screen
    while the rest is still being drawn. The events exist, empty, from the start.

    With `hsr`, each tile resolves visibility of its opaque runs before shading them (a TBDR
    tile); the image is the same either way. `chunk` (int64 per triangle, non-decreasing) marks
    partial renders: a deferred run ends where the chunk changes, as a tiler must shade what it
    has when its parameter buffer fills. `hiz` keeps the farthest depth per 8x8 block and
    rejects blocks a triangle cannot come nearer than (an IMR's hierarchical Z); rejected blocks
    leave an event with block -(b + 1). With DCC in `rules` (rop_sizes.codec_rules) each
    event also records the DCC payload of its block's colour as the ROP leaves it (DCC
    compresses a block when the ROP cache writes it back: the block as it is then, not the final
    image), with HTILE its depth payload under plane tracking. Without `costs` it draws the
    image alone (pipelines.picture): no texture L1, nothing that only a cost needs, and no
    events but, with `hsr`, the visibility phase's, which the shading phase walks."""

    def __init__(self, tris: SetupTriangles, bins: TileBins, mat, tex, light: np.ndarray,
                 fb: Framebuffer, view: RasterView, hsr: bool = False,
                 chunk: np.ndarray | None = None, hiz: bool = False, rules: np.ndarray | None = None,
                 costs: bool = True):
        rules = rk.NO_CODEC if rules is None else rules
        dcc, zcomp = rules[RULE_DCC_MAX_BLOCK] > 0, rules[RULE_Z_MAX_PLANES] > 0
        if costs or hsr:          # (the image alone with HSR: its events, no texture L1's)
            textured = (mat.texture[tris.draw] >= 0 if tris.n and costs
                        else np.zeros(tris.n, np.bool_))
            block_off, tex_off = event_capacity(tris, view.width, view.height, bins, textured)
        else:
            block_off = tex_off = np.zeros(bins.n_refs + 1, np.int64)
        self.ev = RopEvents(block_off, np.zeros(bins.n_refs, np.int64),
                            np.empty(block_off[-1], np.int64), np.empty(block_off[-1], np.uint64),
                            np.empty(block_off[-1], np.uint64), tex_off,
                            np.zeros(bins.n_refs, np.int64), np.empty(tex_off[-1], np.int64),
                            np.empty(block_off[-1] if dcc else 0, np.int64),
                            np.empty(block_off[-1] if zcomp else 0, np.int64), rules)
        self.per_tile = np.zeros((bins.n_tiles, rk.RC.N), np.int64)
        if chunk is None:
            chunk = np.zeros(tris.n, np.int64)
        self.bins = bins
        self._job = rk.RasterJob(tris, bins, mat, tex, light, fb, self.ev, view, hsr, hiz, Z_SKIP,
                                 chunk, costs)
        self._run = rk.tile_kernel(self._job, view.samples, self.per_tile)

    def bands(self, rows: int):
        """Render `rows` tile rows at a time, top to bottom; after each band, yield how many tiles
        (in tile order) are finished: their pixels, counter rows and events."""
        tiles_x, tiles_y = self.bins.tiles_x, self.bins.tiles_y
        for y0 in range(0, tiles_y, rows):
            y1 = min(tiles_y, y0 + rows)
            rk.run_tiles(self._run, np.arange(y0 * tiles_x, y1 * tiles_x))
            yield y1 * tiles_x

    def result(self) -> tuple[Counters, np.ndarray, RopEvents]:
        """The counters, the per-tile counter rows (n_tiles, RC.N) for heat maps, and the events
        for the memory model."""
        self._job.fb.clear[:] = 0         # every tile has started from it: the arrays hold it now
        totals = self.per_tile.sum(axis=0)
        if totals[rk.RC.TEX_OVERFLOW]:
            raise RuntimeError(f"{totals[rk.RC.TEX_OVERFLOW]} texture L1 misses found no room among "
                               f"their reference's events (texture_l1.LINES_PER_QUAD a quad)")
        return from_array(rk.COUNTER_NAMES, totals), self.per_tile, self.ev


def size_events_as(ev: RopEvents, image: np.ndarray) -> None:
    """Take the events' DCC sizes (ev.size, in place; nothing without DCC) against `image`
    ((h, w, 4) or (h, w, samples, 4) RGBA8) instead of the pixels the raster left: a pass whose
    colour is an earlier attachment's image (rop_sizes.resize_events)."""
    if ev.size.shape[0] == 0:
        return
    h, w = image.shape[:2]
    words = np.ascontiguousarray(image).reshape(-1).view(np.uint32)
    resize_events(ev.block, ev.written, ev.size, words, ev.rules, -(-w // 8), w, h,
                  image.shape[2] if image.ndim == 4 else 1)


def rasterize(tris: SetupTriangles, bins: TileBins, mat, tex, light: np.ndarray, fb: Framebuffer,
              view: RasterView, hsr: bool = False, chunk: np.ndarray | None = None,
              hiz: bool = False, rules: np.ndarray | None = None,
              costs: bool = True) -> tuple[Counters, np.ndarray, RopEvents]:
    """Render all tiles into fb (in place), in one parallel pass; see Raster."""
    job = Raster(tris, bins, mat, tex, light, fb, view, hsr, chunk, hiz, rules, costs)
    for _ in job.bands(bins.tiles_y):
        pass
    return job.result()
