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


def _table(slot, v, uv, alpha, cutoff, texture, tex) -> AnyHit:
    return AnyHit(slot.astype(np.int32), np.ascontiguousarray(v, np.float32),
                  np.ascontiguousarray(uv, np.float32), alpha.astype(np.float32),
                  cutoff.astype(np.float32), texture.astype(np.int32), tex.data, tex.levels,
                  tex.sampler, tex.base, tex.block)


def any_hit_table(draws, tris: Triangles, unit: TextureUnit = RGBA8_UNIT) -> AnyHit:
    """The table for `tris` (Triangles.of_scene of these draws), textures stored as `unit`
    stores them."""
    non_opaque = (tris.flags & (TRI_ALPHA_TEST | TRI_BLEND)) != 0
    if not non_opaque.any():
        return AnyHit.none()
    mat, tex = build_tables(draws, unit)
    rows = np.flatnonzero(non_opaque)
    slot = np.full(tris.n, -1, np.int64)
    slot[rows] = np.arange(len(rows))
    d = tris.geometry[rows]
    uv = np.zeros((len(rows), 3, 2), np.float32)
    first = 0
    for k, draw in enumerate(draws):          # each draw's triangles are consecutive
        n = draw.mesh.n_triangles
        mine = (rows >= first) & (rows < first + n)
        if mine.any() and draw.mesh.uvs is not None:
            idx = draw.mesh.indices.astype(np.int64)[rows[mine] - first]
            uv[mine] = draw.mesh.uvs[idx]
        first += n
    mask = np.array([int(dr.material.alpha_mode) == ALPHA_MASK for dr in draws])[d]
    cutoff = np.where(mask, mat.alpha_cutoff[d], -1.0)
    texture = np.where(np.array([dr.mesh.uvs is not None for dr in draws])[d], mat.texture[d], -1)
    return _table(slot, tris.v[rows], uv, mat.base_color[d, 3], cutoff, texture, tex)
