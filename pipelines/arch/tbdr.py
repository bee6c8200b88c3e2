"""TBDR — tile-based deferred rendering, Apple / PowerVR style (DESIGN.md §4).

Phase 1 (geometry and tiling): vertex work for the whole pass, each triangle binned to the
tiles it really overlaps (exact triangle–tile test), the parameter buffer — transformed triangle
data once, one list entry per tile — written to memory. Phase 2, tile by tile, on chip: hidden-
surface removal resolves which triangle owns each sample before anything is shaded, so an opaque
pixel is shaded once whatever the draw order; an alpha-tested (MASK) or blended triangle needs
the shaded result below it, so it ends the deferred run and is shaded in order (counted as
tile.hsr_flush.*). Colour and depth live in tile memory; only load and store actions touch DRAM,
memoryless attachments never do, and MSAA resolves on chip so only the resolved colour is stored.

When the parameter buffer fills, the tiler renders what it has (a partial render): every tile
touched so far parks its whole working set, every sample, in memory and reloads it when the
next chunk reaches it; deferred runs end there too (tile.hsr_flush.partial_render).

A pass whose tile does not fit even at 16x16 is split: depth first, parked in memory, then
colour with the depth reloaded; the geometry is binned twice (tile.fallback.pass_split).

The cache model's replay runs on the memory model's second thread beside the raster: phase 1
as soon as the bins exist, phase 2 a band of tile rows behind the raster (tbdr_kernels).

Not yet modelled (issue 3): imageblocks and threadgroup memory, the G-buffer scene.
"""
from __future__ import annotations

import threading

import numpy as np

from renderer.binning import bin_triangles
from renderer.compression import rop_meta_bytes
from renderer.compression.te import SIGNATURE
from renderer.counters import Counters
from renderer.formats import FORMATS, PARAM_PRIMITIVE, PARAM_VERTEX, TILE_LIST_ENTRY
from renderer.frontend import front_end
from renderer.geometry_kernels import prim_offsets
from renderer.memory import MemoryModel
from renderer.raster import Raster, RasterView, RopEvents
from renderer.raster_kernels import RC
from renderer.shade import build_tables, light_vector
from scenes.model import LoadAction, StoreAction

from pipelines.arch.compressed import NO_SIZES, BandSizes, block_sizes, codec_for
from pipelines.arch.shared import (GeometryStreams, blocks, framebuffer, read_inputs, shaded_counts,
                    texture_unit, tile_maps)
from pipelines.result import Result
from pipelines.arch.tbdr_kernels import (SpillTally, TilerPass, TileTransfers, param_chunks,
                                         tiler_geometry, tiler_state, tiler_tiles)

# Square tiles, largest first: a tile that does not fit shrinks to the next. Apple's valid ones
# are 32x32 and 16x16 (seed 004 L698); 64 and up for sweeps and for GMEM-sized bins (Adreno).
TILE_SIZES = (256, 128, 64, 32, 16)
# Tile rows the raster draws between hand-offs to the replay: the replay's share of the last band
# is what remains after the raster ends (1/9 of phase 2 at 1080p with 32-px tiles).
BAND_ROWS = 4


def tile_memory_bytes(tile: int, rp) -> int:
    """Bytes one tile of this pass needs on chip: every attachment at every sample, the
    explicit imageblock per pixel and the tile shaders' threadgroup memory (seed 004 L279-284:
    tile memory, imageblock and threadgroup storage share one pool)."""
    per_pixel = sum(FORMATS[a.format].bytes_per_sample for a in (rp.color, rp.depth) if a is not None)
    return tile * tile * (rp.samples * per_pixel + rp.imageblock_bytes) + rp.threadgroup_bytes


def choose_tile(preset, rp) -> tuple[int, int]:
    """The preset's tile, shrunk while the working set exceeds tile memory (seed 004 L316:
    step down 32x32 → 16x16). Returns (tile, shrinks)."""
    budget = int(preset.tiler.tile_memory_bytes.value)
    sizes = [s for s in TILE_SIZES if s <= int(preset.tiler.tile_px.value)]
    for k, size in enumerate(sizes):
        if tile_memory_bytes(size, rp) <= budget:
            return size, k
    return sizes[-1], len(sizes)       # still over budget: counted, rendered at the smallest


def render(scene, preset, width: int, height: int, samples: int = 1,
           frontend: str | None = None, passes=None, history: dict | None = None) -> Result:
    """`frontend`: legacy | ngg | mesh, None for the preset's default (renderer.frontend).
    `passes`: the render passes to run (the frame graph's), default `scene.frame(samples)`.
    `history`: the previous frame's Result.history in a sequence (transaction elimination)."""
    history = {} if history is None else history
    next_history: dict = {}
    fe_params = preset.frontend.as_dict()
    light = light_vector(scene.light)
    counters = Counters()
    images: dict[str, np.ndarray] = {}
    blocks_x, blocks_y, _ = blocks(width, height)
    passes = scene.frame(samples) if passes is None else passes
    tile0 = int(preset.tiler.tile_px.value)
    hsr = bool(preset.tiler.hsr.value)       # False: early Z in submission order within each tile
    tiles_x, tiles_y = -(-width // tile0), -(-height // tile0)
    mm = MemoryModel(preset.memory_config(), tiles_x * tiles_y)
    # The overdraw counts and each pass's attachments, cleared by the raster tile by tile (as
    # the IMR's: shared.framebuffer)
    shaded = shaded_counts(width, height)
    per_tile = np.zeros((tiles_y * tiles_x, RC.N), np.int64)
    max_tiles = -(-width // TILE_SIZES[-1]) * -(-height // TILE_SIZES[-1])
    tile_spills = np.zeros(tiles_y * tiles_x, np.int64)
    fb = None
    attachments: dict = {}           # name -> (attachment, samples) of the passes so far
    packed: dict = {}                # name -> payload bytes per block of a surface stored compressed
    for rp in passes:
        view = RasterView.make(width, height, rp.samples)
        fb = framebuffer(rp, images, view, shaded, first=fb is None)
        tile, shrinks = choose_tile(preset, rp)
        n_sizes = len([s for s in TILE_SIZES if s <= tile0])
        over = shrinks >= n_sizes                       # not even the smallest tile fits
        split = over and rp.depth is not None
        counters.add("tile.fallback.tile_shrink", min(shrinks, n_sizes - 1))
        counters.add("tile.fallback.pass_split", split)
        counters.add("tile.fallback.over_budget", over and not split)
        counters.add("tile.memory_bytes", tile_memory_bytes(tile, rp))
        fe = front_end(rp.draws, scene.camera, width, height, rp.samples, fe_params, frontend, mm)
        fe.begin()      # the fetch plan on the second thread while this one bins
        tris = fe.tris
        bins = bin_triangles(tris, width, height, tile=tile, exact=True)
        mat, tex = build_tables(rp.draws, texture_unit(preset))
        if rp.depth is None:
            mat.depth_test[:] = False
            mat.depth_write[:] = False
        geo = GeometryStreams.of(rp.draws)
        n_prims = len(geo.indices) // 3
        prim_tri_off = prim_offsets(tris.prim, n_prims)
        draw_vbase = np.zeros(len(rp.draws) + 1, np.int64)   # first transformed vertex per draw
        np.cumsum([len(d.mesh.positions) for d in rp.draws], out=draw_vbase[1:])
        sizes = (PARAM_VERTEX.itemsize, PARAM_PRIMITIVE.itemsize, TILE_LIST_ENTRY.itemsize)
        prim_chunk, param_bytes = param_chunks(geo.prim_off, geo.indices, draw_vbase, prim_tri_off,
                                               np.diff(bins.tri_offsets), sizes,
                                               int(preset.tiler.param_buffer_bytes.value))
        tri_chunk = prim_chunk[tris.prim] if tris.n else np.zeros(0, np.int64)
        ref_tile = bins.ref_tiles()
        param = tuple((mm.region((part, rp.name)), size) for part, size in
                      zip(("param vertices", "param primitives", "tile lists"), sizes))
        stores = _tile_actions(mm, rp)
        # DRAM bytes per tile of this pass's tiling; sized for the smallest tiles, since lines
        # still cached from an earlier pass carry that pass's tile numbers.
        pass_bytes = np.zeros(max_tiles, np.int64)
        spill = tuple((mm.surface(a.name + ".spill", a.format, rp.samples)[:] if a is not None
                       else (0, 0)) for a in (rp.color, rp.depth))
        extra = np.zeros(2, np.int64)
        spills = np.zeros(bins.n_tiles, np.int64)
        # The replay follows the raster down the screen on the memory model's second thread:
        # phase 1 needs only the bins (it starts while this thread makes the raster's job),
        # phase 2 a band's events once the band is drawn.
        drawn = _Progress()
        store_sizes, transfer_sizes, codec_meta = _colour_codec(preset, rp, mm, stores, images,
                                                                fb, tile, bins.tiles_x, history)
        runs = tuple(TileTransfers(actions, spill, transfer_sizes, codec_meta)
                     for actions in (_split(stores) if split else (stores,)))
        tp = TilerPass(geo.prim_off, geo.indices, draw_vbase, None, 0, prim_tri_off, tris.prim,
                       prim_chunk, bins, ref_tile, RopEvents.none(), param, mm.region("textures"),
                       blocks_x, blocks_y)

        def replay_pass(tp=tp, fe=fe, pass_bytes=pass_bytes, tally=SpillTally(extra, spills),
                        store_sizes=store_sizes):
            # the fetch plan is taken there: the front end makes it on that thread too
            tp = tp._replace(fetch=fe.fetch[:4], fetch_need=fe.fetch.need)
            _replay(mm, pass_bytes, tp, runs, tally, drawn, store_sizes)
        replay = mm.background(replay_pass)
        try:
            job = Raster(tris, bins, mat, tex, light, fb, view, hsr=hsr, chunk=tri_chunk)
            drawn.events = job.ev
            for done in job.bands(BAND_ROWS):
                drawn.reach(done)
        finally:
            drawn.reach(bins.n_tiles)          # never leave the replay waiting
        replay.result()
        raster_counters, tile_rows, ev = job.result()
        counters = counters + read_inputs(rp, mm, attachments, images, fb, width, height, preset,
                                          packed)
        _fold(spills, bins.tiles_x, tile0 // tile, tile_spills, tiles_x)
        for region, bpp in spill:                   # a spill is dead once reloaded
            if bpp:
                mm.flush(region, store=False, tile_bytes=pass_bytes)
        counters.add("tile.partial_renders", int(prim_chunk[-1]) if n_prims else 0)
        counters.add("tile.partial_render.store_bytes", extra[0])
        counters.add("tile.partial_render.load_bytes", extra[1])
        for region, bpp, on in stores[1::2]:
            if on:
                mm.flush(region, store=True, tile_bytes=pass_bytes)
            elif split and region:         # depth the split parked for its second half: dead
                mm.flush(region, store=False, tile_bytes=pass_bytes)
        if codec_meta[0]:                   # the codec's metadata goes with the surface
            mm.flush(codec_meta[0], store=True, tile_bytes=pass_bytes)
        _transaction_elimination(mm, rp, store_sizes, next_history, counters, pass_bytes)
        _fold(pass_bytes[:bins.n_tiles], bins.tiles_x, tile0 // tile, mm.tile_bytes, tiles_x)
        _fold(tile_rows, bins.tiles_x, tile0 // tile, per_tile, tiles_x)
        for region, _ in param:                   # the parameter buffer dies with the pass
            mm.flush(region, store=False, tile_bytes=pass_bytes)
        counters.add("tile.param_bytes", param_bytes)
        counters = counters + fe.counters + raster_counters
        attachments.update({a.name: (a, rp.samples) for a in (rp.color, rp.depth) if a is not None})
        if store_sizes is not None and store_sizes.codec is not None:   # read later as stored
            packed[rp.color.name] = store_sizes.sizes
    counters = counters + mm.counters()
    counters["tile.tiles"] = tiles_x * tiles_y
    maps = tile_maps(per_tile, mm.tile_bytes, tiles_x, tiles_y)
    # Every way a tile fell off the fast path, per reason and summed: deferred runs cut short by
    # punch-through, blending or a partial render, and the spills of partial renders.
    reasons = {"punch_through": per_tile[:, RC.HSR_FLUSH_MASK], "blend": per_tile[:, RC.HSR_FLUSH_BLEND],
               "partial_render": per_tile[:, RC.HSR_FLUSH_PARTIAL], "spill": tile_spills}
    for reason, per in reasons.items():
        maps[f"fallback.{reason}"] = np.asarray(per).reshape(tiles_y, tiles_x)
    maps["fallbacks"] = sum(maps[f"fallback.{r}"] for r in reasons)
    return Result(scene.name, preset.name, width, height, samples, fb.resolve(), fb.nearest_depth(),
                  counters, maps, {"overdraw": shaded}, tile0, float(preset.memory.dram_gbps.value), memory=mm,
                  history=next_history, presented=packed.get(rp.color.name))


class _Progress:
    """How many tiles (in tile order) the raster has finished, for a thread that waits on it,
    and the raster's events (set before any tile is reported finished)."""

    def __init__(self):
        self._done = 0
        self._cond = threading.Condition()
        self.events = None

    def reach(self, done: int) -> None:
        with self._cond:
            self._done = max(self._done, done)
            self._cond.notify_all()

    def beyond(self, lo: int) -> int:
        """Wait until more than `lo` tiles are finished; returns how many are."""
        with self._cond:
            self._cond.wait_for(lambda: self._done > lo)
            return self._done


def _replay(mm: MemoryModel, pass_bytes, tp: TilerPass, runs: tuple[TileTransfers, ...],
            tally: SpillTally, drawn: _Progress, store_sizes: BandSizes | None) -> None:
    """The tiler's memory replay (tbdr_kernels) for each run of the pass's actions (two when the
    pass is split): chunk by chunk, phase 1, then phase 2 over the tiles as the raster finishes
    them, the compressed colour's store sizes (store_sizes) filled in for each band first.
    DRAM bytes go to pass_bytes, by this pass's tiles; tp's events are the raster's once it has
    finished a tile (drawn.events)."""
    n_chunks = int(tp.prim_chunk[-1]) + 1 if len(tp.prim_chunk) else 1
    mem = mm.serve_args(pass_bytes)
    for transfers in runs:
        state = tiler_state(tp, mm.config.line_bytes)
        for c in range(n_chunks):
            tiler_geometry(mem, tp, state, c)
            lo = 0
            while lo < tp.bins.n_tiles:
                hi = drawn.beyond(lo)
                tp = tp._replace(events=drawn.events)
                if store_sizes is not None:
                    store_sizes.fill(hi)
                tiler_tiles(mem, tp, transfers, tally, state, c, lo, hi)
                lo = hi


def _colour_codec(preset, rp, mm: MemoryModel, actions: tuple, images: dict, fb, tile: int,
                  tiles_x: int, history: dict):
    """How the pass's colour crosses to memory under the preset's codec and transaction
    elimination: the tile store compresses the tile's final pixels and leaves out the 16x16
    tiles whose CRC equals last frame's (`history`, by attachment; BandSizes, filled as the
    raster finishes them), a load reads what an earlier pass stored, compressed the same way.
    Returns (the store's BandSizes or None, the TileTransfers sizes (load, store), the codec
    metadata's (region, bytes per block))."""
    codec = codec_for(preset, rp.color)
    te = bool(preset.compression.transaction_elimination.value) and rp.color is not None \
        and rp.color.format == "rgba8"
    (_, _, load_on), (_, _, store_on) = actions[0], actions[1]
    if not (load_on and codec) and not (store_on and (codec or te)):
        return None, (NO_SIZES, NO_SIZES), (0, 0)
    # a pass that shows an earlier attachment's image stores that image (read_inputs copies it
    # into the target after the raster)
    color = images[rp.shows] if rp.shows is not None else fb.color
    store = BandSizes(preset, codec, color, tile, tiles_x, te and store_on,
                      history.get(rp.color.name)) if store_on else None
    load = block_sizes(preset, codec, images[rp.color.name]) if load_on and codec else NO_SIZES
    meta = (mm.region(rp.color.name + ".codec_meta"), rop_meta_bytes(codec)) if codec else (0, 0)
    return store, (load, NO_SIZES if store is None else store.store), meta


def _transaction_elimination(mm: MemoryModel, rp, store: BandSizes | None, history: dict,
                             counters: Counters, pass_bytes) -> None:
    """After the pass: its colour's signatures kept for the next frame (history), counted, and
    their traffic: each frame writes its signature buffer and reads the previous one (4 B per
    16x16 tile, renderer.compression.te)."""
    if store is None or not store.te:
        return
    n = store.signatures.size
    buf = mm.region(rp.color.name + ".te")
    if store.previous is not None:
        mm.read_linear(mm.level("l2"), buf, n * SIGNATURE.itemsize, "comp_meta")
    mm.write_linear(mm.level("l2"), buf, n * SIGNATURE.itemsize, "comp_meta")
    mm.flush(buf, store=True, tile_bytes=pass_bytes)
    counters.add("te.tiles", n)
    counters.add("te.tiles_written", n - store.kept)
    counters.add("te.saved_bytes", store.saved)
    history[rp.color.name] = store.signatures


def _split(actions: tuple) -> tuple:
    """A pass whose tile does not fit even at the smallest size is split in two over the same
    geometry (seed 004 L316): depth first, stored; then colour, with that depth reloaded."""
    color_load, color_store, depth_load, depth_store = actions
    off = (0, 4, False)
    parked = (depth_store[0], depth_store[1], True)
    return ((off, off, depth_load, parked),
            (color_load, color_store, (depth_load[0], depth_load[1], True), depth_store))


def _fold(rows: np.ndarray, tiles_x: int, f: int, into: np.ndarray, into_tiles_x: int) -> None:
    """Add per-tile rows of a pass rendered with tiles f times smaller into the preset's tiles."""
    i = np.arange(len(rows))
    np.add.at(into, ((i // tiles_x) // f) * into_tiles_x + (i % tiles_x) // f, rows)


def _tile_actions(mm: MemoryModel, rp) -> tuple:
    """(region, bytes per pixel, on) for colour load, colour store, depth load, depth store.
    Clear and don't-care cost nothing and memoryless never touches memory. Colour lives in
    memory resolved (MSAA resolves on chip), depth with all its samples."""
    out = []
    for att, samples in ((rp.color, 1), (rp.depth, rp.samples)):
        if att is None:
            out += [(0, 4, False), (0, 4, False)]
            continue
        name = att.name + (".resolved" if att is rp.color and rp.samples > 1 else "")
        surf = mm.surface(name, att.format, samples)
        live = not att.memoryless
        out += [(surf.region, surf.bytes_per_pixel, live and att.load == LoadAction.LOAD),
                (surf.region, surf.bytes_per_pixel, live and att.store == StoreAction.STORE)]
    return tuple(out)
