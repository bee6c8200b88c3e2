"""IMR — immediate mode (DESIGN.md §4): draws and primitives in submission order over the whole
screen; early-Z where the state allows (no alpha test), late-Z otherwise; ROP colour and depth
caches in front of L2 and DRAM, so DRAM traffic depends on locality and overdraw on draw order.

Built from the shared stages: geometry → binning (only to run screen tiles in parallel) → raster
(coverage, depth, shade, ROP) → memory replay in submission order.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from renderer.binning import RASTER_TILE, bin_triangles
from renderer.binning_kernels import BLOCK
from renderer.counters import Counters
from renderer.formats import INDEX, VERTEX
from renderer.geometry import setup_pass
from renderer.memory import ROP_COLOR, ROP_DEPTH, STREAM, MemoryModel, Surface
from renderer.memory_kernels import clear_surface, resolve_surface
from renderer.raster import Framebuffer, RasterView, rasterize
from renderer.raster_kernels import RC
from renderer.shade import build_tables, light_vector
from scenes.model import LoadAction, StoreAction

from .imr_kernels import replay_submission_order
from .result import Result


class GeometryStreams(NamedTuple):
    """Where each draw's index and vertex data live, for the front end's fetches."""
    prim_off: np.ndarray     # int64 (n_draws + 1,) first primitive of each draw (pass-global)
    indices: np.ndarray      # int64 (3 * n_prims,) vertex index of every corner
    index_base: np.ndarray   # int64 (n_draws,) byte address of the draw's index buffer
    vertex_base: np.ndarray  # int64 (n_draws,) byte address of its vertex buffer
    index_bytes: int
    vertex_bytes: int

    @staticmethod
    def of(draws, mm: MemoryModel) -> "GeometryStreams":
        counts = [d.mesh.n_triangles for d in draws]
        prim_off = np.zeros(len(draws) + 1, np.int64)
        np.cumsum(counts, out=prim_off[1:])
        idx = np.concatenate([d.mesh.indices.reshape(-1) for d in draws]).astype(np.int64) \
            if draws else np.zeros(0, np.int64)
        # Instances of one mesh share its buffers: same region, so the caches see the reuse.
        ib = np.array([mm.address(mm.region(("index", id(d.mesh)))) for d in draws], np.int64)
        vb = np.array([mm.address(mm.region(("vertex", id(d.mesh)))) for d in draws], np.int64)
        return GeometryStreams(prim_off, idx, ib, vb, INDEX.itemsize, VERTEX.itemsize)


def _blocks(width, height):
    bx, by = -(-width // BLOCK), -(-height // BLOCK)
    return bx, bx * by


def render(scene, preset, width: int, height: int, samples: int = 1) -> Result:
    tiles_x, tiles_y = -(-width // RASTER_TILE), -(-height // RASTER_TILE)
    mm = MemoryModel(preset.memory, tiles_x * tiles_y)
    blocks_x, n_blocks = _blocks(width, height)
    light = light_vector(scene.light)
    counters = Counters()
    per_tile = np.zeros((tiles_y * tiles_x, RC.N), np.int64)
    images: dict[str, np.ndarray] = {}
    shaded = np.zeros((height, width), np.uint32)
    fb = None
    for rp in scene.frame(samples):
        view = RasterView.make(width, height, rp.samples)
        fb = _framebuffer(rp, images, view, shaded)
        color = mm.surface(rp.color.name, rp.color.format, rp.samples)
        depth = mm.surface(rp.depth.name, rp.depth.format, rp.samples) if rp.depth else Surface(0, 4)
        # No fast clear on the baseline: a CLEAR writes every line of the surface.
        for att, surf, level, stream in ((rp.color, color, ROP_COLOR, "color"),
                                         (rp.depth, depth, ROP_DEPTH, "depth")):
            if att is not None and att.load == LoadAction.CLEAR:
                clear_surface(mm.state, mm.acc, mm.tile_bytes, level, surf.region,
                              surf.bytes_per_pixel, n_blocks, STREAM[stream], blocks_x, RASTER_TILE,
                              tiles_x)
        tris, geom_counters = setup_pass(rp.draws, scene.camera, width, height)
        bins = bin_triangles(tris, width, height)
        mat, tex = build_tables(rp.draws)
        if rp.depth is None:
            mat.depth_test[:] = False
            mat.depth_write[:] = False
        raster_counters, tile_rows, ev = rasterize(tris, bins, mat, tex, light, fb, view)
        geo = GeometryStreams.of(rp.draws, mm)
        prim_tri_off = np.searchsorted(tris.prim, np.arange(len(geo.indices) // 3 + 1)).astype(np.int64)
        ref_tile = np.repeat(np.arange(bins.n_tiles, dtype=np.int64), np.diff(bins.tile_offsets))
        replay_submission_order(mm.state, mm.acc, mm.tile_bytes, geo, prim_tri_off, bins, ref_tile, ev, mat,
                                color, depth, blocks_x, mm.region("textures"))
        if rp.samples > 1:
            resolved = mm.surface(rp.color.name + ".resolved", rp.color.format, 1)
            resolve_surface(mm.state, mm.acc, mm.tile_bytes, ROP_COLOR, color, resolved, n_blocks,
                            STREAM["color"], STREAM["resolve"], blocks_x, RASTER_TILE, tiles_x)
            mm.flush(resolved, store=True)
        # An IMR has no tile memory: a memoryless attachment still lives in DRAM-backed caches,
        # and only its final store is skipped.
        for att, surf in ((rp.color, color), (rp.depth, depth)):
            if att is not None:
                mm.flush(surf, store=att.store == StoreAction.STORE and not att.memoryless)
        counters = counters + geom_counters + raster_counters
        per_tile += tile_rows
    counters = counters + mm.counters()
    counters["tile.tiles"] = tiles_x * tiles_y
    return Result(scene.name, preset.name, width, height, samples, fb.resolve(), fb.depth.min(axis=2),
                  counters, _tile_maps(per_tile, mm.tile_bytes, tiles_x, tiles_y),
                  {"overdraw": shaded}, RASTER_TILE, preset.dram_gbps)


def _framebuffer(rp, images, view, shaded) -> Framebuffer:
    """The pass's attachments: previous contents for LOAD, else the clear value."""
    def get(att, shape, dtype, clear):
        if att.load == LoadAction.LOAD and att.name in images and images[att.name].shape == shape:
            return images[att.name]
        img = np.empty(shape, dtype)
        img[:] = clear
        images[att.name] = img
        return img
    h, w, s = view.height, view.width, view.samples
    clear = np.round(np.clip(np.asarray(rp.color.clear[:4], np.float64), 0, 1) * 255).astype(np.uint8)
    color = get(rp.color, (h, w, s, 4), np.uint8, clear)
    depth = get(rp.depth, (h, w, s), np.float32, rp.depth.clear[0]) if rp.depth is not None \
        else np.ones((h, w, s), np.float32)
    return Framebuffer(color, depth, shaded)


def _tile_maps(per_tile, tile_bytes, tiles_x, tiles_y) -> dict[str, np.ndarray]:
    shape = (tiles_y, tiles_x)
    shaded = per_tile[:, RC.SHADED].reshape(shape)
    covered = per_tile[:, RC.PIXELS_COVERED].reshape(shape)
    return {"overdraw": np.where(covered > 0, shaded / np.maximum(covered, 1), 0.0),
            "shaded": shaded, "dram_bytes": tile_bytes.reshape(shape).copy()}
