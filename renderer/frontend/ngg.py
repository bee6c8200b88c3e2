"""NGG / primitive-shader front end (seed 000 L984-1012, peers.md §2.8): per subgroup each
distinct vertex's position is fetched and shaded, primitives are culled in the shader before
the rasterizer (back-face, frustum, zero-area, and small ones that cover no sample), survivors
are compacted, and only their vertices fetch and shade attributes."""
from __future__ import annotations

import numpy as np

from renderer.geometry import SetupTriangles
from renderer.workers import spread

from . import ngg_kernels as nk


def cull_small(tris: SetupTriangles, shader_cull: np.ndarray, verdict: np.ndarray, emitted: int,
               culled_small: int, view) -> int:
    """The primitive shader's small-primitive cull, in place: an emitted primitive with
    shader_cull whose setup triangles cover no sample of the RasterView, decided exactly as the
    rasterizer decides coverage (edges, top-left rule, target, depth in [0, 1]), becomes
    culled_small. Returns how many of those the hardware's bounding-box filter alone
    (bbox_misses_samples) would not have caught."""
    covered, in_box = np.zeros(len(verdict), np.bool_), np.zeros(len(verdict), np.bool_)
    spread(nk.cover_samples, tris.n, tris.x, tris.y, tris.zplane, tris.prim, shader_cull,
           view.width, view.height, view.sample_x, view.sample_y, covered, in_box)
    return int(nk.cull_small(shader_cull, verdict, emitted, culled_small, covered, in_box))


def subgroups(gidx: np.ndarray, prim_off: np.ndarray, draw_on: np.ndarray, keep: np.ndarray,
              max_verts: int, max_prims: int):
    """(pos_first, attr_first, n_sub): per corner, whether it fetches and shades the vertex's
    position (first use in its subgroup) and its attributes (first use by a surviving
    primitive of the subgroup); subgroups per draw."""
    if max_verts < 3 or max_prims < 1:
        raise ValueError(f"NGG subgroup needs >= 3 vertices and >= 1 primitive, got {max_verts}, {max_prims}")
    pos_first = np.zeros(len(gidx), np.bool_)
    attr_first = np.zeros(len(gidx), np.bool_)
    n_sub = np.zeros(len(prim_off) - 1, np.int64)
    spread(nk.subgroups, len(prim_off) - 1, np.ascontiguousarray(gidx, np.int64), prim_off,
           draw_on, keep, int(max_verts), int(max_prims), pos_first, attr_first, n_sub)
    return pos_first, attr_first, n_sub


def bbox_misses_samples(tris: SetupTriangles, sel: np.ndarray, view) -> np.ndarray:
    """bool (len(sel),): the bounding box of setup triangle sel[i] holds no sample position of
    any of the view's sample patterns: the small-primitive filter a primitive shader runs
    (rounding its screen-space box to the sample grid, Mesa ac_nir_cull's small-primitive
    test), which finds a subset of what covers_samples finds."""
    out = np.zeros(len(sel), np.bool_)
    spread(nk.bbox_misses_samples, len(sel), tris.x, tris.y, sel, view.sample_x, view.sample_y,
           out)
    return out
