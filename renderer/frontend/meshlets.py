"""Meshlets: consumes a Mesh, produces Meshlets (CSR tables of bounded vertex and triangle
counts, bounding spheres and normal cones), built once per mesh and size and kept.

The renderer's builder is greedy over the index buffer in order (a new meshlet starts when the
next triangle would exceed either bound), meshoptimizer's scan builder: it keeps every
triangle's submission order, which the image depends on for blending and equal depths. A
clustering builder (grown by adjacency, triangles reordered, meshopt_buildMeshlets' approach) is
here for comparison: it reuses more but may change the image, so rendering does not use it."""
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
LOCAL_INDEX = (np.dtype(np.uint8), np.dtype(np.uint16))   # a meshlet-local vertex index: 8-bit up
                                                          # to 256 vertices per meshlet, else 16


class Meshlets(NamedTuple):
    order: np.ndarray      # int64 (n_tris,) mesh triangle in each meshlet slot (scan: identity)
    prim_off: np.ndarray   # int64 (m + 1,) first slot of each meshlet
    vert_off: np.ndarray   # int64 (m + 1,) CSR into verts
    verts: np.ndarray      # int64 (sum of vertex counts,) mesh vertex ids, in order of first use
    corner: np.ndarray     # int64 (n_tris, 3) per slot, each corner's index into its meshlet's vertices
    center: np.ndarray     # float64 (m, 3) bounding sphere, object space
    radius: np.ndarray     # float64 (m,)
    axis: np.ndarray       # float64 (m, 3) normal cone axis (unit)
    cutoff: np.ndarray     # float64 (m,) least cos(axis, face normal); -1 = never cone-culled
    triangle_bytes: int    # one triangle's three local indices

    @property
    def n(self) -> int:
        return len(self.radius)

    def vertex_counts(self) -> np.ndarray:
        return np.diff(self.vert_off)

    def prim_counts(self) -> np.ndarray:
        return np.diff(self.prim_off)


def build(positions: np.ndarray, indices: np.ndarray, max_verts: int, max_prims: int,
          builder: str = "scan") -> Meshlets:
    """Meshlets of at most max_verts vertices and max_prims triangles ("scan": in order;
    "cluster": grown by adjacency, reordered)."""
    if builder not in ("scan", "cluster"):
        raise ValueError(f"unknown meshlet builder {builder!r} (scan or cluster)")
    if not (3 <= max_verts <= 65536 and 1 <= max_prims <= 65536):
        raise ValueError(f"meshlet bounds out of range: {max_verts} vertices, {max_prims} "
                         f"primitives (3..65536 and 1..65536)")
    idx = np.ascontiguousarray(indices, np.int64)
    n = len(idx)
    prim_off = np.empty(n + 1, np.int64)
    vert_off = np.empty(n + 1, np.int64)
    verts = np.empty(3 * n, np.int64)
    corner = np.empty((n, 3), np.int64)
    order = np.arange(n, dtype=np.int64)
    if builder == "scan":
        m = mk.build_greedy(idx, len(positions), int(max_verts), int(max_prims), prim_off,
                            vert_off, verts, corner)
    else:
        m = mk.build_cluster(idx, len(positions), int(max_verts), int(max_prims), order, prim_off,
                             vert_off, verts, corner)
        idx = idx[order]
    prim_off, vert_off = prim_off[:m + 1].copy(), vert_off[:m + 1].copy()
    verts = verts[:vert_off[-1]].copy()
    center, radius = np.empty((m, 3)), np.empty(m)
    axis, cutoff = np.empty((m, 3)), np.empty(m)
    mk.bounds(np.asarray(positions, np.float64), idx, prim_off, vert_off, verts, center, radius,
              axis, cutoff)
    tri_b = 3 * LOCAL_INDEX[0 if max_verts <= 256 else 1].itemsize
    return Meshlets(order, prim_off, vert_off, verts, corner, center, radius, axis, cutoff, tri_b)


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
