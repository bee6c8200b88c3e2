"""Mesh-shading front end (seed 000 L1254-1277, seed 004 L1107-1176): an amplification (task /
object) stage culls whole meshlets against the frustum and by normal cone before any vertex
work; each surviving meshlet's mesh shader shades all its vertices, so a vertex shared by two
meshlets is shaded twice (no reuse across meshlets); its output must fit the on-chip export
budget."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from renderer.counters import Counters
from renderer.formats import PARAM_VERTEX
from renderer.cull import CullMode
from renderer.workers import spread

from . import mesh_kernels as mk
from .meshlets import Meshlets

KEPT, CULLED_FRUSTUM, CULLED_CONE = mk.KEPT, mk.CULLED_FRUSTUM, mk.CULLED_CONE
EXPORT_VERTEX = PARAM_VERTEX     # what a mesh shader exports per vertex: clip position + varyings


def export_bytes(ml: Meshlets) -> np.ndarray:
    """int64 (m,): on-chip bytes each meshlet's output takes (vertices + triangle indices)."""
    return ml.vertex_counts() * EXPORT_VERTEX.itemsize + ml.prim_counts() * ml.triangle_bytes


def frustum_planes(clip_from_world: np.ndarray) -> np.ndarray:
    """float64 (6, 4): the clip volume's planes (w ± x, w ± y, w ± z >= 0) in world space, unit
    normals pointing inside."""
    m = clip_from_world
    planes = np.array([m[3] + m[0], m[3] - m[0], m[3] + m[1], m[3] - m[1], m[3] + m[2], m[3] - m[2]])
    return planes / np.linalg.norm(planes[:, :3], axis=1)[:, None]


def similarity(world_from_object: np.ndarray) -> bool:
    """A rotation and uniform scale (no mirror, no shear): cones stay cones under it."""
    a = world_from_object[:3, :3]
    g = a.T @ a
    s = g[0, 0]
    return bool(np.linalg.det(a) > 0 and np.allclose(g, s * np.eye(3), rtol=1e-6, atol=1e-9 * s))


def amplify(tables: list[Meshlets], draw_table: np.ndarray, world_m: np.ndarray,
            cone_ok: np.ndarray, eye: np.ndarray, planes: np.ndarray):
    """Verdict (KEPT / CULLED_FRUSTUM / CULLED_CONE) for every meshlet of every mesh draw.
    tables: the distinct meshes' meshlets; draw_table[d]: the table of draw d (-1: not a mesh
    draw). Returns (verdict, row_draw, row_meshlet) over rows in draw order."""
    rows_d, rows_m = [], []
    for d, t in enumerate(draw_table):
        if t >= 0:
            rows_d.append(np.full(tables[t].n, d, np.int64))
            rows_m.append(np.arange(tables[t].n, dtype=np.int64))
    if not rows_d:
        return np.zeros(0, np.int8), np.zeros(0, np.int64), np.zeros(0, np.int64)
    row_d, row_m = np.concatenate(rows_d), np.concatenate(rows_m)
    verdict = np.empty(len(row_d), np.int8)
    # one kernel call per distinct mesh (its tables), over the rows of its draws
    for t, ml in enumerate(tables):
        sel = np.flatnonzero(draw_table[row_d] == t)
        if len(sel) == 0:
            continue
        out = np.empty(len(sel), np.int8)
        spread(mk.amplify, len(sel), ml.center, ml.radius, ml.axis, ml.cutoff, row_m[sel],
               row_d[sel], world_m, cone_ok, eye, planes, out)
        verdict[sel] = out
    return verdict, row_d, row_m


class MeshRows(NamedTuple):
    """One row per (mesh draw, meshlet), in draw then meshlet order."""
    draw: np.ndarray          # int64 (r,) the draw
    meshlet: np.ndarray       # int64 (r,) the meshlet in its mesh's table
    first: np.ndarray         # int64 (r,) its first primitive (pass-global)
    alive: np.ndarray         # bool (r,) the amplification stage kept it
    vert_off: np.ndarray      # int64 (r + 1,) CSR into verts
    verts: np.ndarray         # int64 mesh vertex ids of each row's meshlet
    mesh_vert_first: np.ndarray   # int64 (r,) where its vertex list starts in its mesh's table
    culled_prims: np.ndarray  # int64 primitives (pass-global) of culled meshlets


def run(tables: list[Meshlets], draw_table: np.ndarray, draws, prim_off: np.ndarray,
        eye: np.ndarray, clip_from_world: np.ndarray, c: Counters) -> MeshRows:
    """The amplification stage over every mesh draw, and its counters: meshlets, culled by
    reason, vertices shaded (every vertex of every kept meshlet), the duplicates among them
    (shaded - distinct vertices per draw), export bytes."""
    ds = np.flatnonzero(draw_table >= 0)
    if len(ds) == 0:
        z = np.zeros(0, np.int64)
        return MeshRows(z, z, z, np.zeros(0, np.bool_), np.zeros(1, np.int64), z, z, z)
    world_m = np.stack([d.world_from_object[:3] for d in draws])
    cone_ok = np.array([d.state.cull == CullMode.BACK and similarity(d.world_from_object)
                        for d in draws], np.bool_)
    verdict, row_d, row_m = amplify(tables, draw_table, world_m, cone_ok, eye,
                                    frustum_planes(clip_from_world))
    t_of = [tables[draw_table[d]] for d in ds]
    first = np.concatenate([t.prim_off[:-1] + prim_off[d] for t, d in zip(t_of, ds)])
    count = np.concatenate([t.prim_counts() for t in t_of])
    nv = np.concatenate([t.vertex_counts() for t in t_of])
    verts = np.concatenate([t.verts for t in t_of])
    vert_first = np.concatenate([t.vert_off[:-1] for t in t_of])
    vert_off = np.zeros(len(nv) + 1, np.int64)
    np.cumsum(nv, out=vert_off[1:])
    alive = verdict == KEPT
    culled_prims = np.concatenate([np.arange(prim_off[d], prim_off[d + 1]) for d in ds])[
        np.repeat(~alive, count)]
    c.add("geom.meshlets", len(verdict))
    c.add("geom.meshlets_culled.frustum", int((verdict == CULLED_FRUSTUM).sum()))
    c.add("geom.meshlets_culled.cone", int((verdict == CULLED_CONE).sum()))
    shaded = int(nv[alive].sum())
    distinct = 0
    for d in ds:
        kept = np.flatnonzero((row_d == d) & alive)
        if len(kept):
            distinct += len(np.unique(np.concatenate([verts[vert_off[r]:vert_off[r + 1]] for r in kept])))
    c.add("geom.mesh.vertices_shaded", shaded)
    c.add("geom.mesh.duplicated_vertices", shaded - distinct)
    c.add("geom.mesh.export_bytes", shaded * EXPORT_VERTEX.itemsize
          + int(count[alive].sum()) * tables[0].triangle_bytes)
    return MeshRows(row_d, row_m, first, alive, vert_off, verts, vert_first, culled_prims)
