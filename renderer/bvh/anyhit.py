"""The any-hit programs' table: what a ray reads at a candidate hit on a non-opaque triangle.

    ah = any_hit_table(scene.draws, Triangles.of_scene(scene), texture_unit(preset))
    trace_rays(layout, rays, surfaces=ah)

Alpha-tested (MASK) triangles keep their corners, their uv at the corners, their draw's base
alpha, cutoff and texture (in the texture table the raster samples: the preset's formats, so a
ray reads the texel blocks the raster's texture unit would); blended ones a cutoff of -1
(traverse_kernels.any_hit: ignored or accepted by ray type). A scene with no such triangle gets
AnyHit.none(), whose empty arrays no kernel reads (every triangle node says OPAQUE). (Not
imported by the traversal's modules: its tables come from renderer.shade, which is no
kernel's source, renderer.jit_cache.)
"""
from __future__ import annotations

import numpy as np

from renderer.shade import RGBA8_UNIT, TextureUnit, build_tables
from .builder import ALPHA_MASK, TRI_ALPHA_TEST, TRI_BLEND, Triangles
from .traverse_kernels import AnyHit


def any_hit_table(draws, tris: Triangles, unit: TextureUnit = RGBA8_UNIT) -> AnyHit:
    """The table for `tris` (Triangles.of_scene of these draws), textures stored as `unit`
    stores them."""
    rows = np.flatnonzero(tris.flags & (TRI_ALPHA_TEST | TRI_BLEND))
    if not len(rows):
        return AnyHit.none()
    mat, tex = build_tables(draws, unit)
    slot = np.full(tris.n, -1, np.int32)
    slot[rows] = np.arange(len(rows))
    uv = np.zeros((len(rows), 3, 2), np.float32)
    starts = np.cumsum([0] + [dr.mesh.n_triangles for dr in draws])   # a draw's triangles
    for draw, a, b in zip(draws, starts[:-1], starts[1:]):              # are consecutive
        lo, hi = np.searchsorted(rows, (a, b))
        if hi > lo and draw.mesh.uvs is not None:
            uv[lo:hi] = draw.mesh.uvs[draw.mesh.indices.astype(np.int64)[rows[lo:hi] - a]]
    d = tris.geometry[rows]
    has_uv = np.array([dr.mesh.uvs is not None for dr in draws])
    return AnyHit(slot, np.ascontiguousarray(tris.v[rows]), uv, mat.base_color[d, 3],
                  np.where(mat.alpha_mode[d] == ALPHA_MASK, mat.alpha_cutoff[d], np.float32(-1)),
                  np.where(has_uv[d], mat.texture[d], np.int32(-1)), tex.data, tex.levels,
                  tex.sampler, tex.base, tex.block)
