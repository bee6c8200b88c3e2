"""Mesh-shading front end (seed 000 L1254-1277, seed 004 L1107-1176): an amplification (task /
object) stage culls whole meshlets against the frustum and by normal cone before any vertex
work; each surviving meshlet's mesh shader shades all its vertices, so a vertex shared by two
meshlets is shaded twice (no reuse across meshlets); its output must fit the on-chip export
budget."""
from __future__ import annotations

import numpy as np

from renderer.formats import PARAM_VERTEX

from . import mesh_kernels as mk
from .meshlets import TRIANGLE, Meshlets

KEPT, CULLED_FRUSTUM, CULLED_CONE = mk.KEPT, mk.CULLED_FRUSTUM, mk.CULLED_CONE
EXPORT_VERTEX = PARAM_VERTEX     # what a mesh shader exports per vertex: clip position + varyings


def export_bytes(ml: Meshlets) -> np.ndarray:
    """int64 (m,): on-chip bytes each meshlet's output takes (vertices + triangle indices)."""
    return ml.vertex_counts() * EXPORT_VERTEX.itemsize + ml.prim_counts() * TRIANGLE.itemsize


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
        mk.amplify(ml.center, ml.radius, ml.axis, ml.cutoff, row_m[sel], row_d[sel], world_m,
                   cone_ok, eye, planes, out)
        verdict[sel] = out
    return verdict, row_d, row_m
