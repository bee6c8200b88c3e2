"""Traversal: consumes a Layout and rays, produces closest (or first) hits, per-ray costs and,
on request, the ray-ordered list of every node and triangle fetch, which `price` runs through the
memory model (streams bvh_node, bvh_leaf) with a cache in front of DRAM.

    rays = make_rays(origins, directions, tmin=0.0, tmax=np.inf)
    hits, fetches = trace_rays(layout, rays, stack=16, record=True)
    hits.prim, hits.t                     # triangle id (scene order) or -1; distance or inf
    counters = cost_counters(layout, hits) + price(layout, fetches, memory_model, level)
"""
from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np

from renderer.box_sort import sort_of
from renderer.counters import Counters
from renderer.memory import STREAM, MemoryModel

from . import traverse_kernels as tk
from .rays_kernels import BAD_DIRECTION, BAD_VALUE, fill_rays
from .trace_kernels import FAST_BVH4, FAST_BVH8, WALK, compact_records, trace as trace_kernel
from .layouts import OBB_TABLE, TRI_NODE, Layout
from .layouts_kernels import L_BVH4, L_BVH8, N_OBB

CHUNK = 128          # rays per parallel work item: each records its fetches into its own slab
REC_PER_RAY = 96     # record capacity per ray; a chunk that needs more is re-run alone
PARENT_LINK_BYTES = 4   # radv keeps one uint32 parent id per node
STACK_ENTRY_BYTES = 4   # RDNA's LDS stack: one DWORD (node pointer) an entry (seed-notes
                        # 000_partB l.99)


class Hits(NamedTuple):
    prim: np.ndarray     # int64 (n,) triangle id in scene order (Triangles index), -1: miss
    t: np.ndarray        # float64 (n,) hit distance in units of |direction|, inf: miss
    counts: np.ndarray   # int32 (n, tk.C_N) per-ray costs (tk.COUNTER_NAMES)


def make_rays(origins, directions, tmin=0.0, tmax=np.inf) -> np.ndarray:
    """float32 (n, 8): origin, tmin, direction, tmax (traverse_kernels R_*); tmin and tmax one
    value for all rays or one per ray. Filled by rays_kernels.fill_rays in parallel."""
    o, d = (_ray_rows(x) for x in (origins, directions))
    if o.shape != d.shape:
        raise ValueError(f"origins {o.shape} and directions {d.shape} differ")
    n = len(o)
    lo, hi = (np.asarray(x, np.float32).reshape(-1) for x in (tmin, tmax))
    if len(lo) not in (1, n) or len(hi) not in (1, n):
        raise ValueError(f"tmin and tmax must be one value or one per ray ({n}), got {len(lo)} and "
                         f"{len(hi)}")
    rays = np.empty((n, tk.R_N), np.float32)
    if n == 0:
        return rays
    verdict = fill_rays(_one_row(o), _one_row(d), lo, hi, rays)
    if verdict & BAD_VALUE:
        raise ValueError("ray origins, directions and tmin must be finite")
    if verdict & BAD_DIRECTION:
        raise ValueError("a ray direction is zero")
    return rays


def _ray_rows(x) -> np.ndarray:
    """Origins or directions as (n, 3) rows of float64 (as given) or float32 (anything else,
    rounded once, as make_rays always has)."""
    x = np.asarray(x)
    return (x if x.dtype == np.float64 else np.asarray(x, np.float32)).reshape(-1, 3)


def _one_row(x: np.ndarray) -> np.ndarray:
    """fill_rays's input: one row where every row is the same (a broadcast), else the rows,
    contiguous."""
    if len(x) > 1 and x.strides[0] == 0:
        return np.ascontiguousarray(x[:1])
    return np.ascontiguousarray(x)


def _flags(any_hit: bool, cull_back: bool, cull_front: bool = False, opaque: bool = False,
           cull_non_opaque: bool = False, ignore_blend: bool = False) -> int:
    return ((tk.FLAG_ANY_HIT if any_hit else 0) | (tk.FLAG_CULL_BACK if cull_back else 0)
            | (tk.FLAG_CULL_FRONT if cull_front else 0) | (tk.FLAG_OPAQUE if opaque else 0)
            | (tk.FLAG_CULL_NON_OPAQUE if cull_non_opaque else 0)
            | (tk.FLAG_IGNORE_BLEND if ignore_blend else 0))


def check_job(layout: Layout, stack: int, dual: bool, box_rate: int, tri_rate: int, spill: bool) -> None:
    """trace_rays's (and two_level.trace_two_level's) checks of how the rays are to be traced."""
    if box_rate < 1 or tri_rate < 1:
        raise ValueError(f"test rates must be >= 1 per clock, got {box_rate} and {tri_rate}")
    if stack < 1:
        raise ValueError(f"stack must hold at least one entry, got {stack}")
    if dual and layout.name != "bvh4":
        raise ValueError("BVH4x2 (dual) traversal runs on the bvh4 layout")
    if layout.kind == L_BVH8 and (layout.child_boxes.shape != (len(layout.nodes), 6, 8)
                                  or layout.child_boxes.dtype != np.float32
                                  or layout.tri_corners.shape != (len(layout.tris), 9, 4)
                                  or layout.tri_corners.dtype != np.float32
                                  or layout.node_head.shape != (len(layout.nodes), 4)
                                  or layout.tri_head.shape != (len(layout.tris), 8)):
        # box8 reads a node's 48 float32 planes unchecked
        raise ValueError("a bvh8 layout needs its decoded float32 child boxes and triangles and its "
                         "node heads (made by bvh8_layout; Layout.heads after a change)")
    if spill and stack >= tk.SPILL_SLOTS:
        raise ValueError(f"a spilling stack keeps fewer than {tk.SPILL_SLOTS} entries on chip, got {stack}")


def trace_rays(layout: Layout, rays: np.ndarray, any_hit: bool = False, cull_back: bool = False,
               stack: int = 16, dual: bool = False, record: bool = False, box_rate: int = 4,
               tri_rate: int = 1, cull_front: bool = False, opaque: bool = False,
               cull_non_opaque: bool = False, ignore_blend: bool = False,
               surfaces: tk.AnyHit | None = None, spill: bool = False, box_sort: str = "closest",
               fast_walks: bool = True):
    """Trace every ray; returns (Hits, fetch records int64 in ray order, or None).

    The ray flags (DXR's): any_hit: terminate on the first hit accepted (shadow rays);
    cull_back / cull_front: skip back / front faces unless the triangle's draw disables culling;
    opaque: every triangle opaque (FORCE_OPAQUE); cull_non_opaque: alpha-tested and blended
    triangles are skipped (CULL_NON_OPAQUE); ignore_blend: the any-hit program lets the ray
    through blended surfaces (shadow and AO rays). surfaces: the scene's any-hit table
    (renderer.bvh.anyhit.any_hit_table); needed when the layout has non-opaque triangles.
    stack: short-stack entries on chip; spill: False for RDNA's ring (full, it overwrites its
    oldest entry; dry after that, traversal restarts through parent links), True to spill the
    oldest entries to memory instead (records REC_SPILL / REC_FILL; the ring then holds
    SPILL_SLOTS); dual: BVH4x2, two bvh4 box nodes per step (only for the bvh4 layout);
    box_rate / tri_rate: tests per clock of the intersection unit, for the isect_clocks cost;
    box_sort: the order a node's children are visited in (renderer.box_sort.BOX_SORTS: nearest
    entry first, or the driver's choice by the ray's flags); hits are the same in every order,
    steps are not. fast_walks: False traces every ray by the layout's general walk (the fast
    walks' twin, for tests)."""
    check_job(layout, stack, dual, box_rate, tri_rate, spill)
    sort = sort_of(box_sort, any_hit)
    flags = _flags(any_hit, cull_back, cull_front, opaque, cull_non_opaque, ignore_blend)
    if surfaces is None:
        if layout.non_opaque and not opaque and not cull_non_opaque:
            raise ValueError("the layout has alpha-tested or blended triangles: trace_rays needs "
                             "their any-hit table (surfaces=any_hit_table(...))")
        surfaces = tk.AnyHit.none()
    # the kernels read float32 rows (make_rays's); box8_kernels.misses8 loads eight at once
    rays = np.ascontiguousarray(rays, np.float32)
    if rays.ndim != 2 or rays.shape[1] != tk.R_N:
        raise ValueError(f"rays must be (n, {tk.R_N}) (make_rays), got {rays.shape}")
    n = len(rays)
    tree = tree_of(layout)
    job = tk.RayJob(rays, CHUNK, flags, tk.SPILL_SLOTS if spill else stack, dual, box_rate, tri_rate,
                    stack if spill else 0, sort)
    prim = np.empty(n, np.int64)
    t = np.empty(n, np.float64)
    cnt = np.empty((n, tk.C_N), np.int32)      # every ray writes all of its row
    n_chunks = max(1, -(-n // CHUNK))
    cap = CHUNK * REC_PER_RAY if record else 0
    rec = np.empty(n_chunks * cap if record else 1, np.int64)
    rec_n = np.zeros(n_chunks, np.int64)
    fast = fast_walk(layout, record, dual) if fast_walks else WALK
    trace_kernel(tree, job, surfaces, tk.TraceOut(prim, t, cnt, rec, cap, rec_n),
                 numba.get_num_threads(), fast)
    hits = Hits(prim, t, cnt)
    if not record:
        return hits, None
    return hits, gather_records(rec, rec_n, cap, n, lambda r0, r1, big, big_n: trace_kernel(
        tree, job._replace(rays=rays[r0:r1]), surfaces,
        tk.TraceOut(prim[r0:r1], t[r0:r1], cnt[r0:r1], big, len(big), big_n), 1, WALK))


def fast_walk(layout: Layout, record: bool, dual: bool) -> int:
    """The chunk kernel for the common case (trace_kernels.FAST_*), or WALK: bvh8 with no
    rotated node and nothing recorded (traverse8_kernels.trace_chunk8_fast); bvh4 with one
    node a step (traverse4_kernels.trace_chunk4_fast). Each traces its rays as the layout's
    walk does, and hands it those it does not take."""
    if layout.kind == L_BVH8 and not record and not (layout.nodes["obb"] < N_OBB).any():
        return FAST_BVH8
    if layout.kind == L_BVH4 and not dual:
        return FAST_BVH4
    return WALK


def gather_records(rec, rec_n: np.ndarray, cap: int, n: int, rerun) -> np.ndarray:
    """The chunks' fetch records (chunk c's from rec[c * cap], rec_n[c] of them) in ray order.
    A chunk of very long rays that needed more than its room is traced again alone with room
    enough: rerun(r0, r1, big, big_n) traces rays r0..r1-1 again, recording into big (room for
    all) and their count into big_n."""
    if (rec_n <= cap).all():
        first = np.zeros(len(rec_n), np.int64)
        np.cumsum(rec_n[:-1], out=first[1:])
        out = np.empty(int(rec_n.sum()), np.int64)
        compact_records(rec, rec_n, cap, first, out)
        return out
    parts = []
    for c in range(len(rec_n)):
        if rec_n[c] <= cap:
            parts.append(rec[c * cap:c * cap + rec_n[c]])
        else:
            big = np.empty(rec_n[c], np.int64)
            r0, r1 = c * CHUNK, min(n, (c + 1) * CHUNK)
            rerun(r0, r1, big, rec_n[c:c + 1])
            parts.append(big)
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def brute_force(layout: Layout, rays: np.ndarray, cull_back: bool = False,
                surfaces: tk.AnyHit | None = None, **flags) -> tuple[np.ndarray, np.ndarray]:
    """The slow twin: every ray against every triangle, the same test, any-hit and tie rule.
    Needs a layout of one-triangle nodes (bvh2 or bvh4); `flags`: trace_rays's other ray
    flags by name."""
    if layout.tris.dtype != TRI_NODE:
        raise ValueError(f"brute_force reads 64 B triangle nodes; {layout.name} has primitive nodes")
    _, _, tri_f32, tri_u32 = layout.views()
    prim = np.empty(len(rays), np.int64)
    t = np.empty(len(rays))
    tk.brute_force(tri_f32, tri_u32, rays, _flags(flags.pop("any_hit", False), cull_back, **flags),
                   tk.AnyHit.none() if surfaces is None else surfaces, prim, t)
    return prim, t


def cost_counters(layout: Layout, hits: Hits, prefix: str = "rt.",
                  stack_entry_bytes: int = STACK_ENTRY_BYTES) -> Counters:
    """rt.* from the per-ray costs: rays, hits, steps, nodes, tests, stack events, the bytes
    the fetches move before any cache (node bytes from the layout's dtype), and the stack's
    on-chip traffic: every push written, every pop not filled from memory read, an entry of
    stack_entry_bytes each (spills and fills move through the caches: rt_stack)."""
    return cost_totals(layout, len(hits.prim), int((hits.prim >= 0).sum()),
                       hits.counts.sum(axis=0, dtype=np.int64), prefix, stack_entry_bytes)


def cost_totals(layout: Layout, rays: int, hit: int, tot: np.ndarray, prefix: str = "rt.",
                stack_entry_bytes: int = STACK_ENTRY_BYTES) -> Counters:
    """cost_counters from the rays' counts summed (tot, int64 (C_N,)), `rays` rays of which
    `hit` hit: what a pass traced in batches keeps of them."""
    c = Counters({prefix + "rays": rays, prefix + "hits": hit})
    for name, v in zip(tk.COUNTER_NAMES, tot):
        c[prefix + name] = int(v)
    node_fetches = tot[tk.C_BOX_NODES] + tot[tk.C_REFETCH]
    c[prefix + "bytes.node"] = int(node_fetches * layout.fetch_bytes
                                   + tot[tk.C_PARENT_READS] * PARENT_LINK_BYTES)
    c[prefix + "bytes.leaf"] = int(tot[tk.C_LEAF_NODES] * layout.tris.dtype.itemsize)
    c[prefix + "stack.onchip_bytes"] = int((tot[tk.C_PUSHES] + tot[tk.C_POPS] - tot[tk.C_FILLS])
                                           * stack_entry_bytes)
    return c


def _table(mm: MemoryModel, key, layout: Layout, stack_entry_bytes: int):
    """replay's tables for one tree's records (base, stride, size: (K_N,)) and the kinds' streams:
    its box nodes and parent links stream bvh_node, triangle nodes bvh_leaf, the any-hit
    programs' texel chunks texture (in the region the raster's texture fetches use), a spilling
    stack's writes and reads rt_stack (entries of stack_entry_bytes), TLAS nodes, their parent
    links and instance nodes bvh_tlas. `key` names the tree's regions."""
    region = lambda kind: mm.address(mm.region((kind, layout.name, *key)))  # noqa: E731
    base, stride, size = (np.zeros(tk.K_N, np.int64) for _ in range(3))
    leaf, chunk, e = layout.tris.dtype.itemsize, 1 << tk.TEXEL_REC_SHIFT, stack_entry_bytes
    for k, b, st, sz in ((tk.K_NODE, region("bvh_node"), layout.nodes.dtype.itemsize, layout.fetch_bytes),
                         (tk.K_LEAF, region("bvh_leaf"), leaf, leaf),
                         (tk.K_NODE_PARENT, region("bvh_parent"), PARENT_LINK_BYTES, PARENT_LINK_BYTES),
                         (tk.K_TRI_PARENT, region("bvh_tri_parent"), PARENT_LINK_BYTES, PARENT_LINK_BYTES),
                         (tk.K_TEXEL, mm.address(mm.region("textures")), chunk, chunk),
                         (tk.K_SPILL, region("rt_stack"), e, e), (tk.K_FILL, region("rt_stack"), e, e)):
        base[k], stride[k], size[k] = b, st, sz
    stream = np.full(tk.K_N, STREAM["bvh_tlas"], np.int64)
    stream[[tk.K_NODE, tk.K_LEAF, tk.K_NODE_PARENT, tk.K_TRI_PARENT, tk.K_TEXEL, tk.K_SPILL, tk.K_FILL]] = [
        STREAM["bvh_node"], STREAM["bvh_leaf"], STREAM["bvh_node"], STREAM["bvh_node"],
        STREAM["texture"], STREAM["rt_stack"], STREAM["rt_stack"]]
    return base, stride, size, stream


def price(layout: Layout, fetches: np.ndarray, mm: MemoryModel, level: int,
          stack_entry_bytes: int = STACK_ENTRY_BYTES) -> None:
    """Run the recorded fetches, in ray order, through the memory model, entering at cache
    `level` (streams and regions: _table)."""
    base, stride, size, stream = _table(mm, (id(layout.nodes),), layout, stack_entry_bytes)
    tk.replay(mm.serve_args(), level, fetches, base, stride, size, stream)


def tree_of(layout: Layout) -> tk.Tree:
    """A layout as the traversal kernels read it."""
    node_f32, node_u32, tri_f32, tri_u32 = layout.views()
    return tk.Tree(layout.kind, node_f32, node_u32, tri_f32, tri_u32, layout.node_parent,
                   layout.tri_parent, OBB_TABLE, layout.child_boxes, layout.tri_corners,
                   layout.node_head, layout.tri_head)


def warm_up() -> None:
    """Compile (or load from numba's cache) the traversal kernels on a tiny BVH."""
    from .builder import Triangles, build_bvh2, collapse
    from .layouts import bvh2_layout, bvh4_layout, bvh8_layout
    v = np.array([[[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 0, 1], [1, 0, 1], [0, 1, 1]]], np.float32)
    tris = Triangles.of_array(v)
    rays = make_rays([[0.2, 0.2, -1]], [[0, 0, 1]])
    b = build_bvh2(tris, 1)
    for lay in (bvh2_layout(b), bvh4_layout(collapse(b, 4)), bvh8_layout(collapse(b, 8))):
        trace_rays(lay, rays, record=True)
