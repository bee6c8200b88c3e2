"""The engine every architecture shares, one stage per module, numba kernels beside each:

    geometry  setup_pass(draws, camera, w, h) -> SetupTriangles     clip, project, snap, cull
    binning   bin_triangles(tris, w, h, tile) -> TileBins           CSR per screen tile
    shade     build_tables(draws) -> DrawTable, TextureTable        materials, mip chains
    raster    rasterize(tris, bins, mat, tex, light, fb, view, hsr) coverage, Z, shade, ROP
    rop       Framebuffer (per-sample colour and depth), resolve
    memory    MemoryModel(config, n_tiles): caches in front of DRAM, priced by stream
    counters  Counters: one flat record of named int64 counters

An architecture (pipelines/) composes them; for instance, a frame by hand:

    import numpy as np
    from renderer.geometry import setup_pass
    from renderer.binning import bin_triangles
    from renderer.shade import build_tables, light_vector
    from renderer.raster import Framebuffer, RasterView, rasterize
    from scenes.library import get_scene

    scene = get_scene("bunny")
    tris, geom = setup_pass(scene.draws, scene.camera, 640, 480)
    mat, tex = build_tables(scene.draws)
    fb = Framebuffer.make(640, 480, 1, scene.background, 1.0)
    counters, per_tile, events = rasterize(tris, bin_triangles(tris, 640, 480), mat, tex,
                                           light_vector(scene.light), fb, RasterView.make(640, 480, 1))
    image = fb.resolve()          # uint8 (480, 640, 4)
"""

from .allocator import keep_freed_memory
from .jit_cache import load_without_refresh, use_opt_level, use_source_keyed_cache
from .workers import hand_over_quickly, wait_passively

use_opt_level()
use_source_keyed_cache()
load_without_refresh()
keep_freed_memory()
wait_passively()
hand_over_quickly()
