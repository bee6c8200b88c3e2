"""Ray passes in the viewer (issue 9 item 2): each panel's preset traces `pipelines.raytrace`
passes at full resolution (never while the camera moves: a trace costs seconds), shadow rays
from that panel's rasterized depth. The BVH of a scene in a layout is built once and reused while
the camera moves (a camera move keeps the scene's draws, and their world-space triangles).

    rt = trace_panel(scene, preset, result, ("primary", "shadow"))
    result = attach(result, rt)      # counters joined (BVH bytes in the DRAM total), steps maps
    rt.images["shadow"]              # float32 (h, w), shown by the ray:shadow mode
"""
from __future__ import annotations

import dataclasses
from collections import OrderedDict

_LAYOUTS: OrderedDict = OrderedDict()   # (id(draws), layout name, prim_tris) -> (draws, Layout)
KEEP = 6                                # scene x layout BVHs kept (N / P steps through scenes)


def layout_name(preset) -> str:
    """The BVH layout the preset's RT mode traverses (RDNA 4's dual BVH4x2 walks BVH4 nodes)."""
    from pipelines.rt_params import rt_params
    mode = rt_params(preset)["rt_layout"].value
    return "bvh4" if mode == "bvh4x2" else mode


def layout_for(scene, preset):
    from pipelines.rt_params import prim_tris, rt_params
    from renderer.bvh import Triangles, build_layout
    key = (id(scene.draws), layout_name(preset), prim_tris(rt_params(preset)))
    hit = _LAYOUTS.get(key)
    if hit is None or hit[0] is not scene.draws:        # an id reused by another scene's list
        hit = (scene.draws, build_layout(Triangles.of_scene(scene), key[1], key[2]))
        _LAYOUTS[key] = hit
        while len(_LAYOUTS) > KEEP:
            _LAYOUTS.popitem(last=False)
    _LAYOUTS.move_to_end(key)
    return hit[1]


def trace_panel(scene, preset, result, passes):
    """pipelines.raytrace.trace for one panel, shadows from the panel's own depth."""
    from pipelines.raytrace import trace
    return trace(scene, preset, result.width, result.height, rays=passes, depth=result.depth,
                 layout=layout_for(scene, preset))


def attach(result, rt):
    """The panel's Result with the ray passes' counters added (as `tilesim render --rays` joins
    them) and their per-pixel traversal steps among its pixel maps."""
    return dataclasses.replace(result, counters=result.counters + rt.counters,
                               pixel_maps={**result.pixel_maps, **rt.pixel_maps})
