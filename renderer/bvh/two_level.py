"""Two-level acceleration structures, as DXR and Vulkan build them and the hardware walks them:
a bottom-level BVH (BLAS) per mesh, in the mesh's own space, built once however often the mesh is
drawn; instances, each a BLAS and a transform; a top-level BVH (TLAS) over the instances' world
boxes. Consumes a scene's draws, produces a TwoLevel that traversal (trace_two_level) reads.

    two = build_two_level(scene.draws, "bvh8")
    hits, fetches, tlas_costs = trace_two_level(two, rays, record=True)   # hits.prim: scene ids
    two.bytes      # {"blas", "tlas", "instances"}: against build_layout(...).bytes, what
                   # instancing saves

A BLAS is built per (mesh, pipeline state): draws of one mesh with different cull or alpha modes
get BLASes of their own (a triangle's cull and any-hit flags live in its node, as DXR's geometry
flags live in its BLAS). An instance is a draw: its transform, its BLAS, and the scene id of its
first triangle, so that a hit names the same triangle as the flattened tree (Triangles.of_scene
order). The TLAS has the BLAS layout's width (2, 4 or 8 children a node) and node size, built
with the same binned SAH over the instances' world boxes and collapsed top-down (each node opens
its largest child until it has `width`); its boxes are float32 rounded outward (bvh2, bvh4: radv's
box32 nodes) or, in bvh8, the 12-bit planes RDNA 4's nodes decode to. The BLASes are kept
as one merged layout (layouts.merge), each walked from its own root. An instance node is
radv's `radv_bvh_instance_node`, 128 B: the BLAS pointer, ids and flags, the world-to-object and
object-to-world 3x4 matrices (reference/peers.md §3.1).
"""
from __future__ import annotations

import time
from typing import NamedTuple

import numba
import numpy as np

from renderer.allocator import aligned_empty
from renderer.box_sort import sort_of
from renderer.counters import Counters
from renderer.errors import SceneError
from renderer.memory import MemoryModel

from . import traverse_kernels as tk
from . import two_level_kernels as tlk
from .box8_kernels import node_planes
from .builder import Triangles
from .layouts import PRIM_NODE, Layout, merge, quantize
from .sah_kernels import build_sah
from .two_level_kernels import EMPTY, Tlas

INSTANCE_NODE_BYTES = 128      # radv_bvh_instance_node (reference/peers.md §3.1)
TLAS_WIDTH = {"bvh2": 2, "bvh4": 4, "bvh8": 8, "bvh8-obb": 8}


class TwoLevel(NamedTuple):
    name: str                    # the BLASes' layout (renderer.bvh.LAYOUTS)
    blas: Layout                 # every BLAS, one merged layout (each from its root: tlas.blas_root),
                                 # triangle ids those of blas_tris
    blas_tris: Triangles         # every BLAS's triangles in object space, BLAS after BLAS
    blas_draws: tuple            # a draw of each BLAS (its mesh and material)
    tlas: Tlas                   # the kernels' view: TLAS nodes, instances, transforms
    world_from_object: np.ndarray   # float64 (k, 4, 4) per instance
    seconds: float               # build time of every BLAS and the TLAS

    @property
    def n_instances(self) -> int:
        return len(self.tlas.inst_blas)

    @property
    def width(self) -> int:
        return self.tlas.child.shape[1]

    @property
    def tlas_node_bytes(self) -> int:
        """A TLAS node fetch: the BLAS layout's box-node fetch (a bvh2 step fetches a pair)."""
        return self.blas.fetch_bytes

    @property
    def bytes(self) -> dict[str, int]:
        """Bytes the structure occupies: the BLASes' nodes and triangles, the TLAS's nodes, the
        instance nodes."""
        node = self.blas.nodes.dtype.itemsize
        return {"blas": self.blas.bytes,
                "tlas": len(self.tlas.child) * (node * (2 if self.name == "bvh2" else 1)),
                "instances": self.n_instances * INSTANCE_NODE_BYTES}


def _pipeline_key(draw, flags: int) -> tuple:
    return id(draw.mesh), flags


def build_two_level(draws, name: str, prim_tris: int | None = None) -> TwoLevel:
    """BLASes of the draws' meshes (one per mesh and pipeline state), an instance per draw, the
    TLAS over them. name: the BLASes' layout; prim_tris: build_layout's."""
    from . import build_layout
    from .layouts import BVH8_PRIM_TRIS
    t0 = time.perf_counter()
    if not draws:
        raise SceneError("no draws to build a BVH over")
    flat = Triangles.of_draws(draws, world=False)     # object space, draw after draw
    starts = np.concatenate([[0], np.cumsum([d.mesh.n_triangles for d in draws])])
    blas_of: dict[tuple, int] = {}
    inst_blas = np.empty(len(draws), np.int32)
    firsts = []
    for i, d in enumerate(draws):
        key = _pipeline_key(d, int(flat.flags[starts[i]]) if d.mesh.n_triangles else 0)
        if key not in blas_of:
            blas_of[key] = len(firsts)
            firsts.append(i)
        inst_blas[i] = blas_of[key]
    parts = [slice(starts[i], starts[i + 1]) for i in firsts]
    v = np.concatenate([flat.v[s] for s in parts])
    blas_tris = Triangles(np.ascontiguousarray(v),
                          np.concatenate([np.full(s.stop - s.start, b, np.int32) for b, s in enumerate(parts)]),
                          np.concatenate([flat.flags[s] for s in parts]))
    base = np.concatenate([[0], np.cumsum([s.stop - s.start for s in parts])]).astype(np.int64)
    blas, lo, hi = [], np.empty((len(parts), 3)), np.empty((len(parts), 3))
    for b, s in enumerate(parts):
        tris = Triangles(flat.v[s], blas_tris.geometry[base[b]:base[b + 1]], flat.flags[s])
        if tris.n == 0:          # a draw of no triangles: an instance that nothing can hit
            tris = Triangles(np.zeros((1, 3, 3), np.float32), np.zeros(1, np.int32),
                             np.zeros(1, np.uint32))
        lay = build_layout(tris, name, BVH8_PRIM_TRIS if prim_tris is None else prim_tris)
        blas.append(_offset_ids(lay, base[b]))
        t_lo, t_hi = tris.bounds()
        lo[b], hi[b] = t_lo.min(axis=0), t_hi.max(axis=0)
    xf = np.array([np.asarray(d.world_from_object, np.float64) for d in draws])
    bad = np.flatnonzero(~invertible(xf))
    if len(bad):
        raise SceneError(f"draw {bad[0]}: its transform is singular (a scale of 0): no ray can be "
                         "moved into its space; trace the flattened tree (--bvh flat)")
    obj = np.linalg.inv(xf)[:, :3, :]
    w_lo, w_hi = _world_boxes(lo[inst_blas], hi[inst_blas], xf)
    live = np.array([d.mesh.n_triangles > 0 for d in draws])     # a draw of no triangles
    child, box, parent, inst_parent = _tlas(w_lo, w_hi, np.flatnonzero(live), TLAS_WIDTH[name])
    merged, roots = merge(blas)
    tlas = Tlas(child, box, parent, inst_parent, inst_blas, roots, starts[:-1].astype(np.int64),
                base[:-1], np.ascontiguousarray(obj))
    return TwoLevel(name, merged, blas_tris, tuple(draws[i] for i in firsts), tlas, xf,
                    time.perf_counter() - t0)


def invertible(xf: np.ndarray) -> np.ndarray:
    """bool per (k, 4, 4) transform: its 3x3 part has an inverse (a ray can be moved into its
    space)."""
    det = np.linalg.det(np.asarray(xf, np.float64)[:, :3, :3])
    return np.isfinite(det) & (np.abs(det) > 1e-300)


def _offset_ids(lay: Layout, first: int) -> Layout:
    """The BLAS's triangle ids as ids into TwoLevel.blas_tris (its any-hit table's rows)."""
    tris = lay.tris.copy()
    if tris.dtype == PRIM_NODE:
        live = np.arange(tris["tri_id"].shape[1])[None, :] < tris["n_tri"][:, None]
        tris["tri_id"] = np.where(live, tris["tri_id"] + first, 0)
    else:
        tris["triangle_id"] += np.uint32(first)
    return lay._replace(tris=tris).heads()


def _world_boxes(lo: np.ndarray, hi: np.ndarray, xf: np.ndarray):
    """float64 world boxes of object boxes lo, hi (k, 3) under transforms xf (k, 4, 4): the box
    of the 8 transformed corners, rounded outward to float32 values."""
    corners = np.stack([np.where(np.array([(c >> a) & 1 for a in range(3)], bool), hi, lo)
                        for c in range(8)], axis=1)                       # (k, 8, 3)
    w = np.einsum("kij,kcj->kci", xf[:, :3, :3], corners) + xf[:, None, :3, 3]
    out = []
    for x, way in ((w.min(axis=1), -np.inf), (w.max(axis=1), np.inf)):
        f = x.astype(np.float32)
        wrong = f > x if way < 0 else f < x
        out.append(np.where(wrong, np.nextafter(f, np.float32(way)), f).astype(np.float64))
    return out[0], out[1]


def _tlas(lo: np.ndarray, hi: np.ndarray, live: np.ndarray, width: int):
    """The TLAS over the boxes of instances `live` (the others are in no node): (child int64
    (m, width): node >= 0, instance -(i + 1), or EMPTY, used slots first; planes float32 (m, 6,
    8): lo xyz, hi xyz by slot, rounded outward, unused slots +inf (box8's); parent int32 (m,);
    inst_parent int32 (k,))."""
    n_lo, n_hi, left, first, count, _, perm = build_sah(lo[live], hi[live], 1,
                                                        numba.get_num_threads())

    def area(i):
        e = n_hi[i] - n_lo[i]
        return e[0] * e[1] + e[1] * e[2] + e[2] * e[0]

    def ref(i):          # a BVH2 node as a TLAS child: a leaf is its instance
        return -(int(live[perm[first[i]]]) + 1) if left[i] < 0 else i

    wide, child, c_lo, c_hi, parent = [0], [], [], [], []
    inst_parent = np.full(len(lo), -1, np.int32)
    w = 0
    while w < len(wide):
        i = wide[w]
        kids = [left[i], left[i] + 1] if left[i] >= 0 else [i]
        while len(kids) < width:            # open the largest internal child in place
            inner = [k for k in kids if left[k] >= 0]
            if not inner:
                break
            k = max(inner, key=area)
            at = kids.index(k)
            kids[at:at + 1] = [left[k], left[k] + 1]
        row = np.full(width, EMPTY, np.int64)
        b_lo, b_hi = np.zeros((8, 3)), np.zeros((8, 3))
        for j, k in enumerate(kids):
            r = ref(k)
            if r >= 0:
                row[j] = len(wide)
                wide.append(k)
                parent.append(w)
            else:
                row[j] = r
                inst_parent[-r - 1] = w
            b_lo[j], b_hi[j] = n_lo[k], n_hi[k]
        child.append(row)
        c_lo.append(b_lo)
        c_hi.append(b_hi)
        w += 1
    child = np.array(child, np.int64)
    c_lo, c_hi = np.array(c_lo), np.array(c_hi)
    valid = np.zeros((len(child), 8), bool)
    valid[:, :width] = child != EMPTY
    if width == 8:          # RDNA 4's box nodes: the 12-bit planes as decoded, as the BLASes'
        c_lo, c_hi = quantize(c_lo, c_hi, valid)[4:]
    boxes = aligned_empty((len(child), 6, 8), np.float32)
    node_planes(np.ascontiguousarray(c_lo), np.ascontiguousarray(c_hi), valid, boxes)
    return child, boxes, np.array([-1] + parent, np.int32), inst_parent


def trace_two_level(two: TwoLevel, rays: np.ndarray, any_hit: bool = False, cull_back: bool = False,
                    stack: int = 16, dual: bool = False, record: bool = False, box_rate: int = 4,
                    tri_rate: int = 1, cull_front: bool = False, opaque: bool = False,
                    cull_non_opaque: bool = False, ignore_blend: bool = False,
                    surfaces: tk.AnyHit | None = None, spill: bool = False,
                    box_sort: str = "closest"):
    """trace_rays for a TwoLevel: the same flags, stack, rates and order (the TLAS is tested at
    the box rate, its children visited in the BLASes' order). Returns (Hits with scene
    triangle ids, fetch records or None, int32 (n, T_N) TLAS costs). surfaces: the BLASes'
    any-hit table (any_hit_table(two.blas_draws, two.blas_tris, unit)), needed where a BLAS
    has non-opaque triangles."""
    from .traverse import CHUNK, REC_PER_RAY, Hits, _flags, check_job, gather_records, tree_of
    check_job(two.blas, stack, dual, box_rate, tri_rate, spill)
    sort = sort_of(box_sort, any_hit)
    if surfaces is None:
        if two.blas.non_opaque and not opaque and not cull_non_opaque:
            raise ValueError("a BLAS has alpha-tested or blended triangles: trace_two_level needs "
                             "their any-hit table (surfaces=any_hit_table(two.blas_draws, "
                             "two.blas_tris, unit))")
        surfaces = tk.AnyHit.none()
    flags = _flags(any_hit, cull_back, cull_front, opaque, cull_non_opaque, ignore_blend)
    job = tk.RayJob(rays, CHUNK, flags, tk.SPILL_SLOTS if spill else stack, dual, box_rate,
                    tri_rate, stack if spill else 0, sort)
    n = len(rays)
    prim, t = np.empty(n, np.int64), np.empty(n, np.float64)
    cnt, tl = np.empty((n, tk.C_N), np.int32), np.empty((n, tlk.T_N), np.int32)
    n_chunks = max(1, -(-n // CHUNK))
    cap = CHUNK * REC_PER_RAY if record else 0
    rec = np.empty(n_chunks * cap if record else 1, np.int64)
    rec_n = np.zeros(n_chunks, np.int64)
    trees = tree_of(two.blas)
    tlk.trace2(two.tlas, trees, job, surfaces, tk.TraceOut(prim, t, cnt, rec, cap, rec_n), tl,
               numba.get_num_threads())
    hits = Hits(prim, t, cnt)
    if not record:
        return hits, None, tl
    return hits, gather_records(rec, rec_n, cap, n, lambda r0, r1, big, big_n: tlk.trace2(
        two.tlas, trees, job._replace(rays=rays[r0:r1]), surfaces,
        tk.TraceOut(prim[r0:r1], t[r0:r1], cnt[r0:r1], big, len(big), big_n), tl[r0:r1], 1)), tl


def two_level_counters(two: TwoLevel, hits, tl: np.ndarray, prefix: str = "rt.",
                       stack_entry_bytes: int = 4) -> Counters:
    """cost_counters for a two-level walk (the BLAS walks' nodes, tests and bytes; steps, clocks
    and the stack's counts over both levels), and the TLAS's own: tlas.steps, tlas.nodes.box,
    tlas.tests.box, tlas.nodes.refetch, tlas.parent_reads, instances (each a ray transform),
    bytes.tlas (its nodes and parent links before any cache), bytes.instance (128 B instance
    nodes)."""
    return two_level_totals(two, len(hits.prim), int((hits.prim >= 0).sum()),
                            hits.counts.sum(axis=0, dtype=np.int64), tl.sum(axis=0, dtype=np.int64),
                            prefix, stack_entry_bytes)


def two_level_totals(two: TwoLevel, rays: int, hit: int, tot: np.ndarray, tl_tot: np.ndarray,
                     prefix: str = "rt.", stack_entry_bytes: int = 4) -> Counters:
    """two_level_counters from the summed counts (traverse.cost_totals): the rays', tot, and
    the TLAS walks', tl_tot (int64 (T_N,))."""
    from .traverse import PARENT_LINK_BYTES, cost_totals
    c = cost_totals(two.blas, rays, hit, tot, prefix, stack_entry_bytes)
    for name, v in zip(tlk.TLAS_COUNTER_NAMES, tl_tot):
        c[prefix + name] = int(v)
    c[prefix + "bytes.tlas"] = int((tl_tot[tlk.T_NODES] + tl_tot[tlk.T_REFETCH]) * two.tlas_node_bytes
                                   + tl_tot[tlk.T_PARENT_READS] * PARENT_LINK_BYTES)
    c[prefix + "bytes.instance"] = int(tl_tot[tlk.T_INSTANCES] * INSTANCE_NODE_BYTES)
    return c


def price_two_level(two: TwoLevel, fetches: np.ndarray, mm: MemoryModel, level: int,
                    stack_entry_bytes: int = 4) -> None:
    """The recorded fetches of trace_two_level through the memory model, entering at `level`:
    the BLASes' nodes, triangles and parent links as the flat tree's (traverse._table), TLAS
    nodes, their parent links and instance nodes stream bvh_tlas."""
    from .traverse import PARENT_LINK_BYTES, _table
    key = id(two.tlas.child)
    base, stride, size, stream = _table(mm, (key,), two.blas, stack_entry_bytes)
    region = lambda kind: mm.address(mm.region((kind, two.name, key)))  # noqa: E731
    for k, b, st, sz in ((tk.K_TLAS, region("bvh_tlas"), two.tlas_node_bytes, two.tlas_node_bytes),
                         (tk.K_INSTANCE, region("bvh_instance"), INSTANCE_NODE_BYTES, INSTANCE_NODE_BYTES),
                         (tk.K_TLAS_PARENT, region("bvh_tlas_parent"), PARENT_LINK_BYTES, PARENT_LINK_BYTES),
                         (tk.K_INSTANCE_PARENT, region("bvh_instance_parent"), PARENT_LINK_BYTES,
                          PARENT_LINK_BYTES)):
        base[k], stride[k], size[k] = b, st, sz
    tk.replay(mm.serve_args(), level, fetches, base, stride, size, stream)
