"""IMR — immediate mode (DESIGN.md §4): draws and primitives in submission order over the whole
screen; early-Z where the state allows (no alpha test), late-Z otherwise; ROP colour and depth
caches in front of L2 and DRAM, so DRAM traffic depends on locality and overdraw on draw order.

Built from the shared stages: geometry → binning (only to run screen tiles in parallel) → raster
(coverage, depth, shade, ROP) → memory replay in submission order.
"""
from __future__ import annotations

import numpy as np

from renderer.binning import RASTER_TILE, bin_triangles
from renderer.binning_kernels import BLOCK
from renderer.counters import Counters
from renderer.frontend import front_end
from renderer.geometry_kernels import prim_offsets
from renderer.memory import L2, ROP_COLOR, ROP_DEPTH, MemoryModel, Surface
from renderer.raster import RasterView, rasterize, size_events_as
from renderer.raster_kernels import RC
from renderer.compression.depth import GRANULE as DEPTH_GRANULE
from renderer.compression.depth import MAX_PLANES as DEPTH_MAX_PLANES
from renderer.compression.depth import PLANE as DEPTH_PLANE
from renderer.rop_sizes import codec_rules
from renderer.rop import rgba8
from renderer.shade import build_tables, light_vector
from scenes.model import LoadAction, StoreAction

from pipelines.arch.compressed import codec_for, depth_codec_for
from pipelines.arch.shared import (GeometryStreams, blocks, framebuffer, read_inputs, shaded_counts,
                    texture_unit, tile_maps)
from pipelines.arch.imr_kernels import ImrPass, replay, serve_handed, work_in_submission_order
from pipelines.result import Result


CMASK_BITS = 4     # fast-clear metadata per 8x8 colour block (AMD CMASK)
HTILE_BITS = 32    # per 8x8 depth block (AMD HTILE)
# The caches the replay's own thread serves while a second serves L2 and below (MemoryModel.
# serve_pipelined): the ROP caches, which nothing but the ROP feeds; colour's is handed down
# to the second thread when the first runs longer (a dense frame's many small blocks that hit).
UPPER_LEVELS = (ROP_COLOR, ROP_DEPTH)
MOVABLE_LEVELS = (ROP_COLOR,)


def submission_order(prim_tri_off, geo, bins, ref_tile, tris, rp, mat, preset):
    """IMR: each primitive's fetch, then its pixels, in submission order; no deferred shading
    (the second value would give each triangle's deferral group, as rasterize's `chunk`)."""
    return work_in_submission_order(prim_tri_off, bins.tri_offsets, bins.ref_slot), None


def clear_attachments(mm, rp, color, depth, meta_regions, fast, blocks_x, n_blocks, tiles_x):
    """A CLEAR writes every line of the surface, or, with fast clear, only its metadata: CMASK
    (4 bits per colour block) and HTILE (32 bits per depth block), and the blocks start in the
    cleared state (seed 000 L315: O(resolution) becomes O(tiles)). Returns, per stream, which
    blocks are in that state (empty without fast clear)."""
    cleared = {}
    for att, surf, level, stream, meta_bits in ((rp.color, color, ROP_COLOR, "color", CMASK_BITS),
                                                (rp.depth, depth, ROP_DEPTH, "depth", HTILE_BITS)):
        cleared[stream] = np.zeros(0, np.bool_)
        if att is None or att.load != LoadAction.CLEAR:
            continue
        if fast:
            cleared[stream] = np.ones(n_blocks, np.bool_)
            mm.write_linear(level, meta_regions[att.name], -(-n_blocks * meta_bits // 8), "meta")
        else:
            mm.clear(level, surf, np.ones(n_blocks, np.bool_), stream, blocks_x, RASTER_TILE,
                     tiles_x)
    return cleared


def store_attachments(mm, rp, surfaces, cleared: dict, compressed, sizes, packed: dict,
                      blocks_x: int, n_blocks: int, tiles_x: int, reach: dict) -> Counters:
    """The end of an IMR pass. An IMR has no tile memory: a memoryless attachment still lives in
    DRAM-backed caches, and only its final store is skipped. A stored surface with blocks still
    in the fast-cleared state gets them written out first (a fast-clear eliminate), unless a
    codec holds the clear: DCC's key, HTILE's word (those go out with the surface). A surface
    stored compressed leaves its blocks' sizes in `packed` for a later pass that reads it (a
    block still fast-cleared: its key, no payload). surfaces, compressed, sizes: colour's and
    depth's Surface, whether DCC / HTILE compress them, and the replay's last sizes per block.
    reach: region -> the bytes of it the frame's passes have addressed so far, which spares
    the flush a scan of every set of a cache larger than that (MemoryModel.flush's n_bytes)."""
    counters = Counters()
    for att, surf, level, stream, codec, size in zip((rp.color, rp.depth), surfaces,
                                                     (ROP_COLOR, ROP_DEPTH), ("color", "depth"),
                                                     compressed, sizes):
        if att is None:
            continue
        left = cleared[stream]
        stored = att.store == StoreAction.STORE and not att.memoryless
        if codec and stored:
            if stream == "color":       # the DCC keys, one byte per block and sample
                keys, key_bytes = mm.region(att.name + ".dcc"), n_blocks * rp.samples
                mm.write_linear(L2, keys, key_bytes, "comp_meta")
                mm.flush(keys, store=True, n_bytes=key_bytes)
            else:                       # the HTILE words, with the planes they describe
                mm.flush(mm.region(att.name + ".htile"), store=True,
                         n_bytes=n_blocks * HTILE_BITS // 8)
            packed[att.name] = np.where((size < 0) & left, 0, size) if left.size else size
        elif left.any() and stored:
            counters.add(f"rop.fast_clear.eliminated_blocks.{stream}", int(left.sum()))
            mm.clear(level, surf, left, stream, blocks_x, RASTER_TILE, tiles_x)
        mm.flush(surf, store=stored, n_bytes=reach[surf.region])
    return counters


def render(scene, preset, width: int, height: int, samples: int = 1,
           work_order=submission_order, frontend: str | None = None, passes=None) -> Result:
    """`work_order` plans the pass: the order of work for the caches, and optionally groups of
    triangles whose opaque fragments are shaded only where front-most (DSBR passes its own).
    `frontend`: legacy | ngg | mesh, None for the preset's default (renderer.frontend).
    `passes`: the render passes to run (the frame graph's), default `scene.frame(samples)`."""
    fe_params = preset.frontend.as_dict()
    tiles_x, tiles_y = -(-width // RASTER_TILE), -(-height // RASTER_TILE)
    mm = MemoryModel(preset.memory_config(), tiles_x * tiles_y)
    blocks_x, _, n_blocks = blocks(width, height)
    light = light_vector(scene.light)
    counters = Counters()
    per_tile = np.zeros((tiles_y * tiles_x, RC.N), np.int64)
    images: dict[str, np.ndarray] = {}
    # The overdraw counts, zeroed by the first pass's raster tile by tile (shared.framebuffer)
    shaded = shaded_counts(width, height)
    fb = None
    attachments: dict = {}           # name -> (attachment, samples) of the passes so far
    packed: dict = {}                # name -> payload bytes per block of a surface stored compressed
    reach: dict = {}                 # region -> bytes of it the passes so far have addressed
    for rp in scene.frame(samples) if passes is None else passes:
        view = RasterView.make(width, height, rp.samples)
        # The attachments, cleared by the raster tile by tile; the clears' traffic is made on
        # the memory model's second thread while this one sets up geometry (which reads no
        # cache or pixel).
        fb = framebuffer(rp, images, view, shaded, first=fb is None)
        color = mm.surface(rp.color.name, rp.color.format, rp.samples)
        depth = mm.surface(rp.depth.name, rp.depth.format, rp.samples) if rp.depth else Surface(0, 4)
        for surf in (color, depth):      # block-linear: n_blocks blocks of 64 pixels
            reach[surf.region] = max(reach.get(surf.region, 0),
                                     n_blocks * BLOCK * BLOCK * surf.bytes_per_pixel)
        # Regions are numbered here, on this thread: their order decides addresses, so it must
        # not depend on the threads' timing.
        fast = bool(preset.raster.fast_clear.value)
        meta_regions = {att.name: mm.region(att.name + suffix)
                        for att, suffix in ((rp.color, ".cmask"), (rp.depth, ".htile"))
                        if fast and att is not None and att.load == LoadAction.CLEAR}
        clears = mm.background(clear_attachments, mm, rp, color, depth, meta_regions, fast,
                               blocks_x, n_blocks, tiles_x)
        fe = front_end(rp.draws, scene.camera, width, height, rp.samples, fe_params, frontend, mm)
        tris = fe.tris
        bins = bin_triangles(tris, width, height)
        fe.begin()      # the fetch plan on the second thread, beside the serial work order
        mat, tex = build_tables(rp.draws, texture_unit(preset))
        if rp.depth is None:
            mat.depth_test[:] = False
            mat.depth_write[:] = False
        hiz = bool(preset.raster.hiz.value) and rp.depth is not None
        geo = GeometryStreams.of(rp.draws)
        prim_tri_off = prim_offsets(tris.prim, len(geo.indices) // 3)
        ref_tile = bins.ref_tiles()
        work, deferred = work_order(prim_tri_off, geo, bins, ref_tile, tris, rp, mat, preset)
        dcc = codec_for(preset, rp.color) == "dcc"
        zcomp = depth_codec_for(preset, rp.depth) == "htile"
        rules = codec_rules(
            int(preset.compression.dcc_max_compressed_block.value) if dcc else 0,
            rgba8(rp.color.clear) if fast and rp.color.load == LoadAction.CLEAR else None,
            DEPTH_MAX_PLANES if zcomp else 0, rp.depth is None or rp.depth.load != LoadAction.LOAD,
            DEPTH_PLANE.itemsize, DEPTH_GRANULE)
        raster_counters, tile_rows, ev = rasterize(tris, bins, mat, tex, light, fb, view,
                                                   hsr=deferred is not None, chunk=deferred, hiz=hiz,
                                                   rules=rules)
        if rp.shows is not None:     # the pass writes that image: its blocks compress as it does
            size_events_as(ev, images[rp.shows])
        tex_region = mm.region("textures")
        cleared = clears.result()
        ip = ImrPass(fe.fetch[:4], fe.fetch.need, tris.draw, bins, ref_tile, ev, mat, color,
                     depth, tex_region, mm.region(rp.depth.name + ".htile") if hiz else 0,
                     cleared["color"], cleared["depth"],
                     np.full(n_blocks if dcc else 0, -1, np.int64),
                     np.full(n_blocks if zcomp else 0, -1, np.int64))

        def produce(start, own, out, mem=mm.serve_args(), ip=ip, work=work):
            start, n = replay(mem, ip, work, start, own, out)
            return (None if start == len(work) else start), n

        def consume(*served, ip=ip):
            serve_handed(*served, ip)
        mm.serve_pipelined(produce, UPPER_LEVELS, consume, MOVABLE_LEVELS)
        counters = counters + read_inputs(rp, mm, attachments, images, fb, width, height, preset,
                                          packed)
        if rp.samples > 1:
            resolved = mm.surface(rp.color.name + ".resolved", rp.color.format, 1)
            mm.resolve(ROP_COLOR, color, resolved, n_blocks, blocks_x, RASTER_TILE, tiles_x)
            mm.flush(resolved, store=True)
        counters = counters + store_attachments(mm, rp, (color, depth), cleared, (dcc, zcomp),
                                                (ip.color_size, ip.depth_size), packed,
                                                blocks_x, n_blocks, tiles_x, reach)
        counters = counters + fe.counters + raster_counters
        per_tile += tile_rows
        attachments.update({a.name: (a, rp.samples) for a in (rp.color, rp.depth) if a is not None})
    counters = counters + mm.counters()
    counters["tile.tiles"] = tiles_x * tiles_y
    return Result(scene.name, preset.name, width, height, samples, fb.resolve(), fb.nearest_depth(),
                  counters, tile_maps(per_tile, mm.tile_bytes, tiles_x, tiles_y),
                  {"overdraw": shaded}, RASTER_TILE, float(preset.memory.dram_gbps.value), memory=mm,
                  presented=packed.get(rp.color.name) if rp.samples == 1 else None)   # 4x: resolved raw
