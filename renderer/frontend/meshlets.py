"""Meshlets: consumes a Mesh, produces Meshlets (CSR tables of bounded vertex and triangle
counts, bounding spheres and normal cones), built once per mesh and size and kept.

The builder is greedy over the index buffer in order (a new meshlet starts when the next
triangle would exceed either bound), the scan builder of meshoptimizer: it keeps every
triangle's submission order, which the image depends on for blending and equal depths."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import meshlets_kernels as mk

DESCRIPTOR = np.dtype([("vertex_offset", np.uint32), ("triangle_offset", np.uint32),
                       ("vertex_count", np.uint32), ("triangle_count", np.uint32)])   # 16 B, meshopt_Meshlet
BOUNDS = np.dtype([("center", np.float32, 3), ("radius", np.float32), ("cone_apex", np.float32, 3),
                   ("cone_axis", np.float32, 3), ("cone_cutoff", np.float32),
                   ("cone_axis_s8", np.int8, 3), ("cone_cutoff_s8", np.int8)])       # 48 B, meshopt_Bounds
VERTEX_REF = np.dtype(np.uint32)          # meshlet vertex list entry: a mesh vertex id
TRIANGLE = np.dtype((np.uint8, 3))        # three meshlet-local vertex indices


class Meshlets(NamedTuple):
    prim_off: np.ndarray   # int64 (m + 1,) first triangle of each meshlet (contiguous runs)
    vert_off: np.ndarray   # int64 (m + 1,) CSR into verts
    verts: np.ndarray      # int64 (sum of vertex counts,) mesh vertex ids, in order of first use
    corner: np.ndarray     # int64 (n_tris, 3) each corner's index into its meshlet's vertices
    center: np.ndarray     # float64 (m, 3) bounding sphere, object space
    radius: np.ndarray     # float64 (m,)
    axis: np.ndarray       # float64 (m, 3) normal cone axis (unit)
    cutoff: np.ndarray     # float64 (m,) least cos(axis, face normal); -1 = never cone-culled

    @property
    def n(self) -> int:
        return len(self.radius)

    def vertex_counts(self) -> np.ndarray:
        return np.diff(self.vert_off)

    def prim_counts(self) -> np.ndarray:
        return np.diff(self.prim_off)


def build(positions: np.ndarray, indices: np.ndarray, max_verts: int, max_prims: int) -> Meshlets:
    if not (3 <= max_verts <= 256 and 1 <= max_prims <= 512):
        raise ValueError(f"meshlet bounds out of range: {max_verts} vertices (3..256), "
                         f"{max_prims} primitives (1..512)")
    idx = np.ascontiguousarray(indices, np.int64)
    n = len(idx)
    prim_off = np.empty(n + 1, np.int64)
    vert_off = np.empty(n + 1, np.int64)
    verts = np.empty(3 * n, np.int64)
    corner = np.empty((n, 3), np.int64)
    m = mk.build_greedy(idx, len(positions), int(max_verts), int(max_prims), prim_off, vert_off,
                        verts, corner)
    prim_off, vert_off = prim_off[:m + 1].copy(), vert_off[:m + 1].copy()
    verts = verts[:vert_off[-1]].copy()
    center, radius = np.empty((m, 3)), np.empty(m)
    axis, cutoff = np.empty((m, 3)), np.empty(m)
    mk.bounds(np.asarray(positions, np.float64), idx, prim_off, vert_off, verts, center, radius,
              axis, cutoff)
    return Meshlets(prim_off, vert_off, verts, corner, center, radius, axis, cutoff)


_CACHE: dict = {}
_CACHE_KEEP = 64


def meshlets_of(mesh, max_verts: int, max_prims: int) -> Meshlets:
    """The mesh's meshlets for these bounds, built once (an asset-time step) and kept."""
    key = (id(mesh), max_verts, max_prims)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is mesh:
        return hit[1]
    ml = build(mesh.positions, mesh.indices, max_verts, max_prims)
    if len(_CACHE) >= _CACHE_KEEP:
        _CACHE.pop(next(iter(_CACHE)))
    _CACHE[key] = (mesh, ml)
    return ml
