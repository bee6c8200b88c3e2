"""BVH builder: consumes a scene's draws (or a triangle soup), produces a binned-SAH BVH2 and the
wide trees the hardware layouts are encoded from (renderer.bvh.layouts).

    tris = Triangles.of_scene(get_scene("bunny"))
    bvh2 = build_bvh2(tris)                  # Bvh2: nodes, leaves of <= 4 triangles
    wide = collapse(bvh2, 8, 4, 7)           # Wide: 8 children per node, each a node or a slot
                                             # of up to 4 triangles (7 distinct corners)
"""
from __future__ import annotations

import time
from typing import NamedTuple

import numba
import numpy as np

from renderer.cull import CullMode
from renderer.errors import SceneError

from . import collapse_kernels as ck
from .sah_kernels import build_sah
from .split_kernels import split_references

# Triangle flags as DXR's instance and geometry flags (D3D12_RAYTRACING_INSTANCE_FLAGS,
# D3D12_RAYTRACING_GEOMETRY_FLAGS): a draw that is not back-face culled gets
# TRIANGLE_CULL_DISABLE; one that culls front faces is wound clockwise; an alpha-tested (MASK)
# or blended draw is not OPAQUE: a candidate hit on it runs its any-hit program.
TRI_CULL_DISABLE = 1
TRI_FRONT_CW = 2
TRI_ALPHA_TEST = 4
TRI_BLEND = 8
# scenes.model.AlphaMode's values (renderer does not import scenes, so that editing a scene is
# no kernel's source: renderer.jit_cache; tests/test_anyhit.py checks they agree)
ALPHA_MASK, ALPHA_BLEND = 1, 2
MAX_LEAF = 4         # BVH2 leaf size cap: a BVH4 box node must be able to open any leaf
# Triangle splitting (split_kernels.split_references): a piece's box may hold at most this
# fraction of the scene box's surface area before it is cut again, at most SPLIT_DEPTH times.
# Derived by measurement (bvh8, 1080p primary rays, process-alternating A/B): on sponza, whose
# walls and floor are long triangles across the atrium, 7e-5 gives 1.47x references and 14.9
# steps per ray against 24.0 unsplit, and 3.5% more rays/s than 1e-4 (1.32x references, 15.1
# steps); 5e-5 gives bunny 1.64x references and slows it 5%; at 7e-5 bunny gets 1.15x,
# dragon 1.01x. Rotated sponza and random rays inside it gain steadily with more
# splitting down to 5e-5.
SPLIT_AREA = 7e-5
SPLIT_DEPTH = 8
SPLIT_BUDGET = 2.0   # references per triangle at most: past it the area threshold is raised 4x


class Triangles(NamedTuple):
    """The scene as one world-space triangle soup; triangle i is the i-th of draw order."""
    v: np.ndarray          # float32 (n, 3, 3) corners in world space
    geometry: np.ndarray   # int32 (n,) index of the draw
    flags: np.ndarray      # uint32 (n,) TRI_* bits

    @property
    def n(self) -> int:
        return len(self.v)

    @staticmethod
    def of_scene(scene) -> "Triangles":
        if not scene.draws:
            raise SceneError(f"scene {scene.name!r}: no triangles to build a BVH over")
        try:
            return Triangles.of_draws(scene.draws)
        except SceneError:
            raise SceneError(f"scene {scene.name!r}: no triangles to build a BVH over") from None

    @staticmethod
    def of_draws(draws, world: bool = True) -> "Triangles":
        """The draws' triangles, draw after draw: in world space, or (world=False) each in its
        mesh's own space (renderer.bvh.two_level's BLASes)."""
        vs, geo, flags = [], [], []
        for d, draw in enumerate(draws):
            p = draw.mesh.positions
            if world:
                p = p.astype(np.float64) @ draw.world_from_object[:3, :3].T + draw.world_from_object[:3, 3]
            vs.append(p[draw.mesh.indices.astype(np.int64)].astype(np.float32))
            geo.append(np.full(draw.mesh.n_triangles, d, np.int32))
            mode = int(draw.material.alpha_mode)
            f = (TRI_CULL_DISABLE if draw.state.cull == CullMode.NONE else 0) | \
                (TRI_FRONT_CW if draw.state.cull == CullMode.FRONT else 0) | \
                (TRI_ALPHA_TEST if mode == ALPHA_MASK else 0) | \
                (TRI_BLEND if mode == ALPHA_BLEND else 0)
            flags.append(np.full(draw.mesh.n_triangles, f, np.uint32))
        if not vs or not sum(len(v) for v in vs):
            raise SceneError("no triangles to build a BVH over")
        return Triangles(np.ascontiguousarray(np.concatenate(vs)), np.concatenate(geo),
                         np.concatenate(flags))

    @staticmethod
    def of_array(v: np.ndarray) -> "Triangles":
        v = np.ascontiguousarray(v, np.float32)
        if v.ndim != 3 or v.shape[1:] != (3, 3) or len(v) == 0:
            raise SceneError(f"triangles must be (n, 3, 3) with n >= 1, got {v.shape}")
        if not np.isfinite(v).all():
            raise SceneError("triangles contain NaN or infinite coordinates")
        return Triangles(v, np.zeros(len(v), np.int32), np.zeros(len(v), np.uint32))

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """float64 (n, 3) lo, hi: exact (min/max of float32 values)."""
        return self.v.min(axis=1).astype(np.float64), self.v.max(axis=1).astype(np.float64)


class Bvh2(NamedTuple):
    """Binary tree; node 0 is the root; children of node i are left[i] and left[i] + 1."""
    lo: np.ndarray        # float64 (m, 3) node box (exact float32 values)
    hi: np.ndarray
    left: np.ndarray      # int64 (m,) first child, -1 for a leaf
    first: np.ndarray     # int64 (m,) a leaf's first position in perm
    count: np.ndarray     # int64 (m,) a leaf's triangle count (0 for internal nodes)
    parent: np.ndarray    # int64 (m,) -1 for the root
    perm: np.ndarray      # int64 (r,) triangle at each leaf position (a split one at several)
    pos_lo: np.ndarray    # float64 (r, 3) box of each leaf position: its piece of the triangle
    pos_hi: np.ndarray
    tris: Triangles
    seconds: float        # build time, wall clock (splitting included)

    @property
    def depth(self) -> int:
        d = np.zeros(len(self.left), np.int64)
        for i in range(len(self.left)):       # parents precede children
            if self.left[i] >= 0:
                d[self.left[i]] = d[self.left[i] + 1] = d[i] + 1
        return int(d.max()) + 1


class Wide(NamedTuple):
    """A wide tree: children of a node are wide nodes (first n_wide slots) or triangle slots."""
    width: int
    child: np.ndarray       # int64 (k, width): >= 0 wide node, -(s+1) triangle slot s, else empty
    c_lo: np.ndarray        # float64 (k, width, 3) child boxes
    c_hi: np.ndarray
    n_wide: np.ndarray      # int64 (k,)
    n_child: np.ndarray     # int64 (k,)
    parent: np.ndarray      # int64 (k,) -1 for the root
    tri_order: np.ndarray   # int64 (r,) triangle at each position (a split one in several slots)
    tri_parent: np.ndarray  # int64 (r,) wide node holding each position
    tri_count: np.ndarray   # int64 (r,) triangles of the slot starting at each position, else 0
    tris: Triangles
    seconds: float


def build_bvh2(tris: Triangles, max_leaf: int = MAX_LEAF, split: float | None = SPLIT_AREA) -> Bvh2:
    """`split`: the triangle-splitting threshold (SPLIT_AREA), None for one reference per
    triangle."""
    if not 1 <= max_leaf <= MAX_LEAF:
        raise ValueError(f"max_leaf must be 1..{MAX_LEAF}, got {max_leaf}")
    t0 = time.perf_counter()
    if split is None:
        lo, hi = tris.bounds()
        ref_tri = np.arange(tris.n)
    else:
        while True:       # stops: past the scene box's area nothing is cut
            lo, hi, ref_tri = split_references(tris.v, split, SPLIT_DEPTH,
                                                  int(SPLIT_BUDGET * tris.n), numba.get_num_threads())
            if ref_tri is not None:
                break
            split *= 4.0
    node_lo, node_hi, left, first, count, parent, perm = build_sah(lo, hi, max_leaf,
                                                                   numba.get_num_threads())
    return Bvh2(node_lo, node_hi, left, first, count, parent, ref_tri[perm], lo[perm], hi[perm],
                tris, time.perf_counter() - t0)


def collapse(bvh: Bvh2, width: int, leaf_tris: int = 1, leaf_corners: int | None = None) -> Wide:
    """`leaf_tris` > 1: a child slot may be a primitive node of up to that many triangles with up
    to `leaf_corners` distinct corners (default: any), where the SAH cost says so
    (collapse_kernels.collapse)."""
    if width not in (4, 8):
        raise ValueError(f"wide BVHs are 4 or 8 wide, got {width}")
    leaf_corners = 3 * leaf_tris if leaf_corners is None else leaf_corners
    if not 1 <= leaf_tris <= 8 or leaf_corners < 3:
        raise ValueError(f"a triangle slot holds 1 to 8 triangles and >= 3 corners, got {leaf_tris}, "
                         f"{leaf_corners}")
    t0 = time.perf_counter()
    out = ck.collapse(bvh.lo, bvh.hi, bvh.left, bvh.first, bvh.count, bvh.perm, bvh.pos_lo,
                      bvh.pos_hi, bvh.tris.v, width, leaf_tris, leaf_corners,
                      numba.get_num_threads())
    return Wide(width, *out, bvh.tris, time.perf_counter() - t0)


def warm_up() -> None:
    """Compile (or load from numba's cache) the builder kernels on a tiny input."""
    v = np.array([[[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 0, 1], [1, 0, 1], [0, 1, 1]]], np.float32)
    collapse(build_bvh2(Triangles.of_array(v)), 4)
