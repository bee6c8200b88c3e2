"""Geometry: consumes a pass's draws (meshes, transforms) and a camera; produces SetupTriangles.

Index fetch and vertex transform (numpy, once per vertex), then per triangle in the kernels:
homogeneous clipping against the near plane (and a guard band for the rest), perspective divide,
viewport, snap to 1/256 px, back-face and zero-area culling. The output is in submission order
(draw, primitive, clipped piece), with positive area, ready for any rasterizer.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import geometry_kernels as gk
from .counters import Counters
from .memo import MeshMemo, mesh_ids
from .transforms import clip_from_world
from .workers import spread


class SetupTriangles(NamedTuple):
    """Struct of arrays, one row per triangle that reaches the rasterizer."""
    x: np.ndarray        # int64 (n, 3)  window x, 1/256 px (SUBPIXEL_BITS)
    y: np.ndarray        # int64 (n, 3)  window y, 1/256 px, y down
    z: np.ndarray        # float64 (n, 3) window depth in [0, 1] (may exceed 1 past the far plane)
    inv_w: np.ndarray    # float64 (n, 3) 1 / clip w, for perspective-correct attributes
    normal: np.ndarray   # float32 (n, 3, 3) world-space vertex normals
    uv: np.ndarray       # float32 (n, 3, 2)
    back: np.ndarray     # bool (n,)  was back-facing (winding swapped; shading flips the normal)
    zplane: np.ndarray   # float64 (n, 3) window depth = [0] X + [1] Y + [2], X, Y in 1/256 px
    draw: np.ndarray     # int32 (n,) index of its draw in the pass
    prim: np.ndarray     # int64 (n,) index of its input primitive in the pass (all draws)

    @property
    def n(self) -> int:
        return len(self.draw)

    def take(self, rows: np.ndarray) -> "SetupTriangles":
        """These rows (int64 indices), in that order; copies gathered in parallel."""
        out = SetupTriangles(*(np.empty((len(rows),) + a.shape[1:], a.dtype) for a in self))
        spread(gk.take_rows, len(rows), rows, self, out, grain=gk.CHUNK)
        return out


def inverse_transpose(m: np.ndarray) -> np.ndarray:
    """(n, 3, 3) -> inverse transposes, by cofactors: rows r1 x r2, r2 x r0, r0 x r1 over the
    determinant (np.linalg would wake BLAS threads that then spin against numba's)."""
    r0, r1, r2 = m[:, 0], m[:, 1], m[:, 2]
    cof = np.stack([np.cross(r1, r2), np.cross(r2, r0), np.cross(r0, r1)], axis=1)
    det = np.einsum("ij,ij->i", r0, cof[:, 0])
    return cof / det[:, None, None]


class StaticGeometry(NamedTuple):
    """A pass's vertex and index buffers laid end to end, as a GPU keeps them resident: built
    once per sequence of meshes and reused while the same meshes are drawn."""
    pos: np.ndarray       # float64 (n_verts, 3) object space
    nrm: np.ndarray       # float64 (n_verts, 3) object space, zeros for faceted meshes
    uv: np.ndarray        # float64 (n_verts, 2)
    n_verts: np.ndarray   # int64 (n_draws,)
    idx: np.ndarray       # int64 (n_prims, 3) pass-global vertex indices
    n_prims: np.ndarray   # int64 (n_draws,)
    flat: np.ndarray      # bool (n_draws,) mesh has no normals
    tri_draw: np.ndarray  # int32 (n_prims total,) each triangle's draw


_STATIC = MeshMemo(4)     # passes whose buffers stay resident (a viewer alternates a few)


def static_geometry(draws) -> StaticGeometry:
    return _STATIC.get(mesh_ids(draws), (d.mesh for d in draws), lambda: _static_geometry(draws))


def _static_geometry(draws) -> StaticGeometry:
    meshes = tuple(d.mesh for d in draws)
    n_verts = np.array([len(m.positions) for m in meshes], np.int64)
    v_base = np.concatenate([[0], np.cumsum(n_verts)[:-1]]).astype(np.int64)
    n_prims = np.array([m.n_triangles for m in meshes], np.int64)
    return StaticGeometry(
        np.concatenate([m.positions for m in meshes]).astype(np.float64),
        np.concatenate([m.normals if m.normals is not None else np.zeros((len(m.positions), 3), np.float32)
                        for m in meshes]).astype(np.float64),
        np.concatenate([m.uvs if m.uvs is not None else np.zeros((len(m.positions), 2), np.float32)
                        for m in meshes]).astype(np.float64),
        n_verts,
        np.concatenate([m.indices.astype(np.int64) + b for m, b in zip(meshes, v_base)]),
        n_prims,
        np.array([m.normals is None for m in meshes], np.bool_),
        np.repeat(np.arange(len(meshes), dtype=np.int32), n_prims))


def transform_vertices(draws, clip_from_world_m: np.ndarray):
    """Vertex shading for the whole pass, once per vertex of every draw: clip positions, the
    faceted draws' face normals (gk.face_normals, per triangle), world normals (inverse
    transpose; zeros for faceted meshes) and UVs, concatenated in draw order. World positions,
    normals and face normals do not depend on the camera: they are remembered while the draws
    and their transforms stay (shared, never written to); only clip positions are computed per
    camera."""
    geo = static_geometry(draws)
    world_m = np.stack([d.world_from_object[:3] for d in draws])                 # (n, 3, 4)

    def world_space():
        normal_m = inverse_transpose(world_m[:, :, :3])
        v_draw = np.repeat(np.arange(len(draws), dtype=np.int64), geo.n_verts)
        world, nrm = np.empty((len(geo.pos), 3)), np.empty((len(geo.pos), 3))
        spread(gk.world_vertices, len(geo.pos), geo.pos, geo.nrm, v_draw, world_m, normal_m,
               world, nrm)
        face_n = np.zeros((0, 3))
        if geo.flat.any():
            face_n = np.zeros((len(geo.idx), 3))
            spread(gk.face_normals, len(geo.idx), world, geo.idx, geo.tri_draw, geo.flat, face_n)
        return world, nrm, face_n
    world, nrm_out, face_n = _WORLD.get((mesh_ids(draws), world_m.tobytes()),
                                        (d.mesh for d in draws), world_space)
    clip = np.empty((len(world), 4))
    spread(gk.clip_vertices, len(world), world, clip_from_world_m, clip)
    return clip, face_n, nrm_out, geo.uv, geo.n_verts


_WORLD = MeshMemo(4)


class SetupPass(NamedTuple):
    """Everything setup learns about a pass's input primitives, before a front end decides
    which of them it shades and sends on (renderer.frontend)."""
    tris: SetupTriangles   # every setup triangle, submission order
    outcome: np.ndarray    # uint8 (n_prims,) gk.EMITTED or the fixed-function cull reason
    clipped: np.ndarray    # uint8 (n_prims,) went through the clipper
    idx: np.ndarray        # int64 (n_prims, 3) pass-global vertex indices
    n_prims: np.ndarray    # int64 (n_draws,)
    n_verts: np.ndarray    # int64 (n_draws,)
    clip_from_world: np.ndarray   # float64 (4, 4)


# The last passes set up: the next preset on the same frame reuses them. Pictures' setups
# (reach >= 0) are kept apart, so that a viewer drawing the moving camera's pictures (32 a
# second) does not push out the setup its costs thread is rendering a frame's presets from.
_SETUP = MeshMemo(2)
_PICTURE_SETUP = MeshMemo(2)


def setup_all(draws, camera, width: int, height: int, reach: int = -1) -> SetupPass:
    """All draws of a pass → SetupTriangles in submission order, with each input primitive's
    outcome. The whole pass at once: draws are concatenated, vertex indices made global, each
    stage one kernel over all of them (in parts on several threads: workers.spread). Setup
    depends only on the draws, the camera and the size, never on the preset, so the same frame
    through several presets (the viewer's panels, a report's rows) sets up once; the result is
    shared and must not be written to. `reach` >= 0 drops the whole triangles
    whose bounding box holds no sample (gk.SetupInput.reach): for an image alone
    (pipelines.picture), never for a frame, which counts them."""
    key = (tuple((id(d.mesh), d.world_from_object.tobytes(), int(d.state.cull)) for d in draws),
           camera, width, height, reach)
    return (_SETUP if reach < 0 else _PICTURE_SETUP).get(
        key, (d.mesh for d in draws), lambda: _setup_all(draws, camera, width, height, reach))


def forget_setups() -> None:
    """Empty setup_all's memory: the next frame sets up as if the camera had moved (benchmarks)."""
    _SETUP.clear()
    _PICTURE_SETUP.clear()


def _setup_all(draws, camera, width: int, height: int, reach: int) -> SetupPass:
    cfw = clip_from_world(camera, width, height)
    if draws:
        clip, face_n, nrm, uv, n_verts = transform_vertices(draws, cfw)
        geo = static_geometry(draws)
        idx, n_prims, draw_flat, tri_draw = geo.idx, geo.n_prims, geo.flat, geo.tri_draw
    else:
        clip, face_n, nrm, uv = np.zeros((0, 4)), np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 2))
        n_verts, idx, n_prims = np.zeros(0, np.int64), np.zeros((0, 3), np.int64), np.zeros(0, np.int64)
        draw_flat, tri_draw = np.zeros(0, np.bool_), np.zeros(0, np.int32)
    draw_cull = np.array([int(d.state.cull) for d in draws], np.int64)
    # Left unwritten for vertices outside a clip plane: only the clipper uses those, from clip.
    vert = gk.Projected.empty(len(clip))
    spread(gk.project_vertices, len(clip), clip, width, height, *vert)
    inp = gk.SetupInput(clip, face_n, nrm, uv, idx, tri_draw, draw_flat, draw_cull, width, height,
                        reach)
    # Pass 1 counts each input triangle's setup triangles and outcome, pass 2 writes them at the
    # prefix-summed offsets
    n = len(idx)
    verdicts = gk.Verdicts(np.zeros(n, np.int64), np.zeros(n, np.uint8), np.zeros(n, np.uint8))
    spread(gk.setup_triangles, n, inp, vert, False, np.zeros(1, np.int64), verdicts,
           gk.SetupRows.empty(0), grain=gk.CHUNK)
    n_emit, outcome, clipped = verdicts
    offsets = gk.running_sum(n_emit)
    out = gk.SetupRows.empty(int(offsets[-1]))
    spread(gk.setup_triangles, n, inp, vert, True, offsets, verdicts, out, grain=gk.CHUNK)
    prim, draw = np.empty(offsets[-1], np.int64), np.empty(offsets[-1], np.int32)
    spread(gk.emitted_rows, n, offsets, tri_draw, prim, draw)
    tris = SetupTriangles(*out, draw=draw, prim=prim)
    return SetupPass(tris, outcome, clipped, idx, n_prims, n_verts, cfw)


def setup_pass(draws, camera, width: int, height: int) -> tuple[SetupTriangles, Counters]:
    """All draws of a pass → SetupTriangles in submission order, with the geom.* counters of a
    front end that shades every index (no post-transform reuse) and culls in fixed function."""
    s = setup_all(draws, camera, width, height)
    hist = gk.tally(s.outcome, gk.CULLED_FRUSTUM + 1)
    c = Counters()
    c.add("geom.prims_in", len(s.idx))
    c.add("geom.indices", s.idx.size)
    c.add("geom.vertices_shaded", s.idx.size)
    c.add("geom.prims_culled.backface", hist[gk.CULLED_BACKFACE])
    c.add("geom.prims_culled.zero_area", hist[gk.CULLED_ZERO_AREA])
    c.add("geom.prims_culled.frustum", hist[gk.CULLED_FRUSTUM])
    c.add("geom.prims_clipped", int(s.clipped.sum()))
    c.add("geom.setup_triangles", s.tris.n)
    return s.tris, c
