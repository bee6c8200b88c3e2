"""Ray tracing acceleration structures as the hardware lays them out (DESIGN.md §4).

    builder   Triangles.of_scene(scene) -> Triangles; build_bvh2(tris) -> Bvh2 (binned SAH);
              collapse(bvh2, 4 | 8, leaf_tris) -> Wide
    layouts   bvh2_layout / bvh4_layout / bvh8_layout(wide, obb=False) -> Layout: flat arrays of
              numpy structured dtypes of the real node sizes: bvh2 32 B nodes + 64 B triangle
              nodes; bvh4 128 B box + 64 B triangle nodes (RDNA 2/3); bvh8 128 B quantized box
              (optionally OBB) + 128 B primitive nodes of up to 4 triangles (RDNA 4)
    traverse  make_rays(o, d, tmin, tmax); trace_rays(layout, rays, any_hit, cull_back, stack,
              dual, record) -> (Hits, fetches); cost_counters(layout, hits) -> rt.* Counters;
              price(layout, fetches, memory_model, level): bvh_node / bvh_leaf DRAM bytes

    from renderer.bvh import build_layout, make_rays, trace_rays
    layout = build_layout(Triangles.of_scene(get_scene("bunny")), "bvh8")
    hits, _ = trace_rays(layout, make_rays([[0, 0.1, 1]], [[0, 0, -1]]))
"""
from __future__ import annotations

from .builder import Bvh2, Triangles, Wide, build_bvh2, collapse
from .layouts import (BVH8_PRIM_TRIS, LAYOUTS, PRIM_TRIS, PRIM_VERTS, Layout, bvh2_layout, bvh4_layout,
                      bvh8_layout)
from .traverse import Hits, cost_counters, make_rays, price, trace_rays

__all__ = ["Bvh2", "Triangles", "Wide", "build_bvh2", "collapse", "LAYOUTS", "Layout", "bvh2_layout",
           "bvh4_layout", "bvh8_layout", "Hits", "cost_counters", "make_rays", "price", "trace_rays",
           "build_layout", "warm_up"]


def build_layout(tris: Triangles, name: str, prim_tris: int = BVH8_PRIM_TRIS) -> Layout:
    """One layout by name (LAYOUTS): bvh2 from a SAH BVH2 with leaves of up to 4 triangles; the
    wide ones collapsed from a SAH BVH2 with one triangle per leaf. `prim_tris`: triangles per
    bvh8 primitive node at most (1 to PRIM_TRIS; collapse's leaf_tris)."""
    if name not in LAYOUTS:
        raise ValueError(f"unknown BVH layout {name!r} (try: {', '.join(LAYOUTS)})")
    if not 1 <= prim_tris <= PRIM_TRIS:
        raise ValueError(f"a primitive node holds 1 to {PRIM_TRIS} triangles, got {prim_tris}")
    if name == "bvh2":
        return bvh2_layout(build_bvh2(tris))
    if name == "bvh4":
        return bvh4_layout(collapse(build_bvh2(tris, 1), 4))
    wide = collapse(build_bvh2(tris, 1), 8, prim_tris, PRIM_VERTS)
    return bvh8_layout(wide, obb=name == "bvh8-obb")


def warm_up() -> None:
    from . import builder, traverse
    builder.warm_up()
    traverse.warm_up()
