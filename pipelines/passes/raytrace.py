"""Ray passes (DESIGN.md §4, issue 7): primary visibility, shadows to the directional light from
the rasterized depth, ambient occlusion; traced against the scene's BVH in the preset's node
layout, every node and triangle fetch priced through the preset's caches in front of DRAM.

    from pipelines.passes.raytrace import trace
    rt = trace("dragon", "amd-rdna4", 640, 360, rays=("primary", "shadow", "ao"))
    rt.images["primary"]      # uint8 (h, w, 4) shaded primary hits, row 0 on top
    rt.images["shadow"]       # float32 (h, w) 1 lit, 0 in shadow (1 where nothing was drawn)
    rt.images["ao"]           # float32 (h, w) unoccluded fraction of the AO rays
    rt.counters["rt.primary.steps"], rt.counters["mem.dram.read.bvh_node"]
    combine(render("dragon", "amd-rdna4", 640, 360).color, rt)   # raster colour x shadow x AO

Passes consume: the scene's triangles (one world-space soup, renderer.bvh.Triangles), its camera
and light, a depth image for shadows (the raster's, unless given). AO starts from the primary
hits (position and geometric normal), so asking for AO traces the primary pass too. Produce:
images, per-pixel cost maps and counters `rt.<pass>.*` (rays, hits, steps, nodes.box,
nodes.leaf, nodes.refetch, tests.box, tests.tri, stack.overflows, stack.restarts, parent_reads,
dual_steps, obb_transforms, isect_clocks at the preset's test rates, bytes.node / bytes.leaf
before the caches, dram_read.bvh_node / bvh_leaf, cache.<l0|l1|l2>.hits / misses / bytes: what
each level of the ray unit's path served, bytes = lookups x line), their totals `rt.*`, and the
memory model's `mem.*`. RT fetches enter the ray unit's own caches, the preset's rt_l0 (and rt_l1
where the part has one: pipelines.presets.rt), read-only levels that miss down to the preset's
L2, then DRAM, as RDNA's node fetches go L0 -> L1 -> L2 (seed 000 L1154). In a frame
(pipelines.frame.run) the levels are added to the frame's memory model after its raster passes
(MemoryModel.add_levels: the raster's levels and counts stay as they were) and the ray passes
meet the L2 those left; traced alone, in a model of their own, cold at the first pass.

Ray order (ray_order, RAY_ORDERS): secondary rays (shadow, AO) are traced in pixel order, or
"sorted" as a hardware or driver binning step would issue them (coherent_order: by the Morton code
of the origin's cell in a grid over the scene, then the direction octant); the results go back to
pixel order, so images and every count but the caches' are the same either way.
Shadow and AO rays terminate on the first hit (DXR ACCEPT_FIRST_HIT_AND_END_SEARCH); primary rays
cull back faces of draws that the rasterizer culls (CULL_BACK_FACING_TRIANGLES with per-draw
TRIANGLE_CULL_DISABLE), so the two see the same surfaces (PASS_FLAGS). Alpha-tested triangles run
their any-hit program for every ray (renderer.bvh.anyhit: the texel blocks at the hit's uv,
priced as stream texture; counters anyhit, anyhit.ignored, bytes.texture); blended ones stop
primary rays and let shadow and AO rays through. The traversal stack is the preset's (Stack:
entries on chip, RDNA's ring that restarts or a stack that spills to memory as stream rt_stack;
counters stack.pushes / pops / spills / fills, stack.onchip_bytes). A node's children are
visited in the order the preset's driver picks by the ray's flags (rt_box_sort,
renderer.box_sort: on RDNA 3 and 4 largest interval first for shadow and AO rays, lowest
midpoint for primary rays; nearest first on RDNA 2): the images are the same in every order.
"""
from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import partial
from typing import NamedTuple

import numpy as np

from renderer.box_sort import ORDER_NAMES, sort_of
from renderer.bvh import Layout, Triangles, build_layout, make_rays, price, trace_rays
from renderer.bvh.anyhit import any_hit_table
from renderer.bvh.trace_kernels import fold_costs
from renderer.bvh.traverse import cost_totals
from renderer.bvh.two_level import (TwoLevel, build_two_level, invertible, price_two_level, trace_two_level,
                                    two_level_totals)
from renderer.bvh.traverse_kernels import AnyHit
from renderer.bvh.rays_kernels import BAD_VALUE
from renderer.bvh.traverse_kernels import C_N, C_STEPS, R_N
from renderer.bvh.two_level_kernels import T_N
from renderer.counters import Counters
from renderer.memo import MeshMemo, digest, draws_key, draws_kept
from renderer.memory import MemoryModel
from renderer.transforms import clip_from_world, look_at
from scenes.library import get_scene
from scenes.model import RAY_PASSES, Scene, SceneError

from pipelines.arch.shared import texture_unit
from pipelines.passes import raytrace_kernels as rk
from pipelines.presets import Preset, get_preset

PASSES = RAY_PASSES
RAY_ORDERS = ("pixel", "sorted")
# The acceleration structure's form: "flat", one world-space tree over every triangle (the scene's
# draws baked in); "two-level", a BLAS per mesh and a TLAS over the draws as instances
# (renderer.bvh.two_level), as DXR and Vulkan applications build it; "auto", two-level where a
# mesh is drawn more than once (what instancing saves), flat elsewhere.
BVH_FORMS = ("auto", "flat", "two-level")
RT_LEVELS = (("rt_l0", "l0"), ("rt_l1", "l1"), ("l2", "l2"))   # memory level -> rt.<pass>.cache.<name>
GRID_BITS = 6            # sorted order: 64 cells per axis over the scene bounds (coherent_order)
MODES = ("bvh2", "bvh4", "bvh4x2", "bvh8", "bvh8-obb")
BATCH = 1 << 18          # rays traced and priced per batch: bounds the fetch records in memory
FETCH_STREAMS = ("bvh_node", "bvh_leaf", "texture", "rt_stack", "bvh_tlas")   # what a ray pass reads
# Each pass's ray flags (trace_rays's names; DXR's RAY_FLAG_*). Primary rays cull back faces
# where the raster does and take the closest hit, blended surfaces included (the raster draws
# them over what is behind); shadow and AO rays end at the first hit accepted and pass through
# blended surfaces (FLAG_IGNORE_BLEND: the application's choice, as raster engines leave
# translucent draws out of their shadow passes). Alpha-tested surfaces run their any-hit for
# every ray type.
PASS_FLAGS = {"primary": dict(cull_back=True),
              "shadow": dict(any_hit=True, ignore_blend=True),
              "ao": dict(any_hit=True, ignore_blend=True)}
SHADOW_PULL = 2e-3       # shadow origins move this fraction of their distance towards the eye:
                         # window depth in float32 places a point to ~1e-4 of its distance
SURFACE_EPS = 1e-4       # of the scene diagonal: AO and shadow rays start this far off the surface


@dataclass
class RtResult:
    scene: str
    preset: str
    width: int
    height: int
    mode: str                                   # MODES: the layout and traversal used
    ray_order: str = "pixel"                    # RAY_ORDERS: the order secondary rays were traced in
    bvh: str = "flat"                           # the structure traced: "flat" or "two-level"
    structure_bytes: dict[str, int] = field(default_factory=dict)   # bvh_bytes, less "flat"
    # builds the flattened tree of the same layout and returns its bytes: bvh_bytes asks it of a
    # two-level result only when read (the report), so that a frame does not build both trees
    flat_bytes: "callable | None" = field(default=None, repr=False)
    images: dict[str, np.ndarray] = field(default_factory=dict)
    pixel_maps: dict[str, np.ndarray] = field(default_factory=dict)   # (h, w) steps per pass
    counters: Counters = field(default_factory=Counters)
    pass_counters: dict[str, Counters] = field(default_factory=dict)  # per pass; they sum to counters
    orders: dict[str, str] = field(default_factory=dict)  # per pass: its box sort (ORDER_NAMES)
    build_seconds: float = 0.0
    trace_seconds: float = 0.0                  # traversal only (counters on), all passes
    price_seconds: float = 0.0                  # memory-model replay of the fetches

    @property
    def bvh_bytes(self) -> dict[str, int]:
        """Bytes the structure occupies: "flat" (the one tree); two-level: "blas", "tlas",
        "instances", and "flat", what the flattened tree of the same layout takes."""
        if self.flat_bytes is None:
            return dict(self.structure_bytes)
        return {**self.structure_bytes, "flat": self.flat_bytes()}

    def per_ray(self, name: str, pass_: str = "primary") -> float:
        """A counter divided by the pass's rays, e.g. per_ray("bytes.node", "shadow")."""
        rays = self.counters[f"rt.{pass_}.rays"]
        return self.counters[f"rt.{pass_}.{name}"] / rays if rays else 0.0

    def hit_rate(self, level: str, pass_: str = "primary") -> float | None:
        """Hits / lookups of the ray unit's cache `level` (l0, l1, l2) in a pass; None where the
        level saw no lookup (the part has no such level, or nothing was fetched)."""
        h, m = (self.counters[f"rt.{pass_}.cache.{level}.{k}"] for k in ("hits", "misses"))
        return h / (h + m) if h + m else None

    def summary(self) -> list[dict]:
        """One row per traced pass, the figures `tilesim report --rt` shows: per-ray steps,
        nodes, tests and bytes (before the caches, and from DRAM), stack events per 1000 rays,
        any-hit invocations, those that let the ray through and their texel bytes, the stack's
        on-chip bytes and spills, and the hit rate of each of the ray unit's caches (None where
        the part has no such level)."""
        rows = []     # tlas_steps, instances, tlas_bytes (TLAS and instance nodes): 0 when flat
        for p in PASSES:
            if not self.counters[f"rt.{p}.rays"]:
                continue
            c = lambda k: self.per_ray(k, p)  # noqa: E731
            rows.append({
                "pass": p, "mode": self.mode, "rays": self.counters[f"rt.{p}.rays"],
                "hit_rate": c("hits"), "steps": c("steps"), "box_nodes": c("nodes.box"),
                "leaf_nodes": c("nodes.leaf"), "box_tests": c("tests.box"), "tri_tests": c("tests.tri"),
                "bytes": c("bytes.node") + c("bytes.leaf"),
                "dram_bytes": c("dram_read.bvh_node") + c("dram_read.bvh_leaf") + c("dram_read.bvh_tlas"),
                "overflows_per_1k": 1000 * c("stack.overflows"), "restarts_per_1k": 1000 * c("stack.restarts"),
                "dual_steps": c("dual_steps"), "isect_clocks": c("isect_clocks"),
                "anyhit": c("anyhit"), "anyhit_ignored": c("anyhit.ignored"),
                "texel_bytes": c("bytes.texture"), "dram_texture_bytes": c("dram_read.texture"),
                "stack_bytes": c("stack.onchip_bytes"), "spills_per_1k": 1000 * c("stack.spills"),
                "order": self.ray_order if p != "primary" else "pixel",
                "bvh": self.bvh, "tlas_steps": c("tlas.steps"), "instances": c("instances"),
                "tlas_bytes": c("bytes.tlas") + c("bytes.instance"),
                **{f"{short}_hit_rate": self.hit_rate(short, p) for _, short in RT_LEVELS},
            })
        return rows


def camera_rays(camera, width: int, height: int) -> np.ndarray:
    """One ray per pixel centre, row 0 on top; direction has unit forward component, so t is
    the view-space depth and [near, far] is the rasterizer's clip range."""
    ys, xs = np.mgrid[0:height, 0:width]
    return pixel_rays(camera, width, height, xs.ravel() + 0.5, ys.ravel() + 0.5)


def pixel_rays(camera, width: int, height: int, xs, ys) -> np.ndarray:
    """Rays through window positions (xs, ys) in pixels (origin top-left, y down)."""
    v = look_at(camera.eye, camera.target, camera.up)
    s, u, f = v[0, :3], v[1, :3], -v[2, :3]
    th = np.tan(np.radians(camera.fovy_deg) / 2.0)
    x = (np.asarray(xs, np.float64) * 2.0 / width - 1.0) * th * width / height
    y = (1.0 - np.asarray(ys, np.float64) * 2.0 / height) * th
    d = f[None, :] + x[:, None] * s[None, :] + y[:, None] * u[None, :]
    o = np.broadcast_to(np.asarray(camera.eye, np.float64), d.shape)
    return make_rays(o, d, camera.near, camera.far)


def world_from_depth(camera, depth: np.ndarray) -> np.ndarray:
    """float64 (h, w, 3) world positions of window depths (1.0 = nothing drawn: NaN)."""
    h, w = depth.shape
    inv = np.linalg.inv(clip_from_world(camera, w, h))
    x = (np.arange(w) + 0.5) * 2.0 / w - 1.0
    y = 1.0 - (np.arange(h) + 0.5) * 2.0 / h
    ndc = np.stack([np.broadcast_to(x[None, :], (h, w)), np.broadcast_to(y[:, None], (h, w)),
                    2.0 * depth.astype(np.float64) - 1.0, np.ones((h, w))], axis=-1)
    p = ndc @ inv.T
    out = p[..., :3] / p[..., 3:]
    out[depth >= 1.0] = np.nan
    return out


def ao_rays(p: np.ndarray, n: np.ndarray, samples: int, radius: float, eps: float, seed: int) -> np.ndarray:
    """Cosine-weighted hemisphere rays around unit normals n at points p (m, 3), `samples` a
    point, from eps along n, to `radius`; sample k of point i is keyed (seed, i, k), so the rays
    do not depend on batching or threads (raytrace_kernels.ao_rays)."""
    p, n = (np.ascontiguousarray(x, np.float64).reshape(-1, 3) for x in (p, n))
    rays = np.empty((len(p) * samples, R_N), np.float32)
    verdict = rk.ao_rays(p, n, np.uint64(seed) << np.uint64(40), float(eps), np.float32(radius),
                         rays) if len(p) else 0
    if verdict:
        raise ValueError("ray origins, directions and tmin must be finite"      # (make_rays's)
                         if verdict & BAD_VALUE else "a ray direction is zero")
    return rays


_LAYOUTS: OrderedDict = OrderedDict()   # (id(draws), form, layout name, prim_tris) -> (draws, structure)
KEEP = 6                                # scene x layout BVHs kept (the viewer steps through scenes)


def layout_name(preset: Preset) -> str:
    """The BVH layout the preset's RT mode traverses (RDNA 4's dual BVH4x2 walks BVH4 nodes)."""
    mode = preset.rt.rt_layout.value
    return "bvh4" if mode == "bvh4x2" else mode


def bvh_form(scene: Scene, form: str = "auto") -> str:
    """"flat" or "two-level": what `form` (BVH_FORMS) means for this scene (auto: two-level
    where a mesh is drawn more than once and every draw's transform can be inverted)."""
    if form not in BVH_FORMS:
        raise SceneError(f"unknown BVH form {form!r} (try: {', '.join(BVH_FORMS)})")
    if form == "auto":        # (a draw scaled flat has no space to move rays into: flat then)
        repeated = len({id(d.mesh) for d in scene.draws}) < len(scene.draws)
        return "two-level" if repeated and invertible(
            np.array([d.world_from_object for d in scene.draws])).all() else "flat"
    return form


def _built(scene: Scene, form: str, name: str, prim_tris: int):
    """The scene's structure, built once while the same draws are traced (a camera move keeps a
    scene's draws, and so their triangles)."""
    key = (id(scene.draws), form, name, prim_tris)
    hit = _LAYOUTS.get(key)
    if hit is None or hit[0] is not scene.draws:        # an id reused by another scene's list
        built = build_two_level(scene.draws, name, prim_tris) if form == "two-level" else \
            build_layout(Triangles.of_scene(scene), name, prim_tris)
        hit = _LAYOUTS[key] = (scene.draws, built)
        while len(_LAYOUTS) > KEEP:
            _LAYOUTS.popitem(last=False)
    _LAYOUTS.move_to_end(key)
    return hit[1]


def _flat_bytes(scene: Scene, name: str, prim_tris: int) -> int:
    return _built(scene, "flat", name, prim_tris).bytes


def layout_for(scene: Scene, preset: Preset, form: str = "flat") -> Layout | TwoLevel:
    """The scene's BVH in the preset's layout, flat or two-level (`form`, BVH_FORMS)."""
    return _built(scene, bvh_form(scene, form), layout_name(preset), int(preset.rt.rt_prim_tris.value))


def coherent_order(rays: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The order a ray-sorting step would trace rays (n, 8) in: by the Morton code of the
    origin's cell in a grid of 2^GRID_BITS cubes per axis over the scene bounds [lo, hi] (the
    longest side), then by the direction's octant; a stable sort, so rays of one cell and octant
    keep their order. Why: rays that start close together and head the same way visit the same
    nodes, so tracing them one after another keeps those nodes in the ray unit's caches; the
    Morton (Z-order) curve keeps cells that are near in space near in the order, and the octant
    (the sign of each direction component) fixes which child a box node is entered by first.
    Integer keys of float32 inputs: the same order on any machine and thread count. Returns
    int64 (n,) indices into rays."""
    cells = 1 << GRID_BITS
    side = max(float(np.max(hi - lo)), 1e-30)
    keys = np.empty(len(rays), np.uint64)
    rk.coherent_keys(np.ascontiguousarray(rays, np.float32), np.asarray(lo, np.float64),
                     cells / side, float(cells), keys)
    return rk.stable_order(keys, 3 * GRID_BITS + 3)


def rt_entry_level(mm: MemoryModel, preset: Preset) -> int:
    """The level ray fetches enter `mm` at: the preset's rt_l0, its ray-unit caches appended to
    the model first if it lacks them (read-only levels, rt_l0 -> rt_l1 -> the model's L2; the
    levels and counts already there are kept: a frame's raster figures do not move)."""
    names = [c.name for c in mm.config.caches]
    if "rt_l0" not in names:
        caches = preset.rt.caches(mm.config.line_bytes)
        n = len(names)
        mm.add_levels(caches, tuple(range(n + 1, n + len(caches))) + (mm.level("l2"),))
    return mm.level("rt_l0")


class PassHits(NamedTuple):
    """What a pass's rays leave (_run), in the rays' order."""
    prim: np.ndarray     # int64 (n,) triangle hit (Triangles index), -1: none
    t: np.ndarray        # float64 (n,) its distance, inf: none
    steps: np.ndarray    # int32 (n,) the ray's traversal steps (the pixel maps')


class Stack(NamedTuple):
    """The traversal stack as the preset keeps it (rt_stack_*)."""
    entries: int          # on chip
    spill: bool           # full: spill to memory (else RDNA's ring: overwrite, then restart)
    entry_bytes: int      # (where the on-chip entries live, rt_stack_location, is energy's)


def _run(layout: Layout | TwoLevel, rays: np.ndarray, mm: MemoryModel | None, level: int,
         res: RtResult, name: str, flags: dict, surfaces: AnyHit, stack: Stack, dual: bool,
         rates: tuple[int, int], order: np.ndarray | None = None):
    """Trace a pass in batches (pricing each batch's fetches in ray order; `order`: trace
    rays[order], results put back in the rays' order); fills counters and returns the rays'
    PassHits. flags: the pass's ray flags by trace_rays's names and the preset's box sort;
    layout: a flat tree or a TwoLevel. Of the per-ray costs (84 bytes a ray: 700 MB for the
    8.3 million AO rays of a 1080p frame) a batch leaves its sums and its rays' steps, the
    pixel maps'."""
    two = isinstance(layout, TwoLevel)
    res.orders[name] = ORDER_NAMES[sort_of(flags["box_sort"], flags.get("any_hit", False))]
    if order is not None:
        rays = rays[order]
    n = len(rays)
    prim = np.empty(n, np.int64)
    t = np.empty(n)
    steps = np.empty(n, np.int32)
    tot, tl_tot = np.zeros(C_N, np.int64), np.zeros(T_N, np.int64)
    before = {s: mm.dram_bytes("read", s) for s in FETCH_STREAMS} if mm is not None else {}
    mem_before = mm.counters() if mm is not None else Counters()

    def priced(fetches):
        t0 = time.perf_counter()
        (price_two_level if two else price)(layout, fetches, mm, level, stack.entry_bytes)
        res.price_seconds += time.perf_counter() - t0

    # A batch's fetches are priced on the memory model's own thread while the next batch is
    # traced (the model's state is that thread's alone until the last one is done; batches are
    # priced one after another, in order). Sponza through amd-rdna3 at 1080p, three passes:
    # tracing 4.8 s on both cores and pricing 3.7 s on one, one after the other until then.
    pricing = None
    for b0 in range(0, n, BATCH):
        t0 = time.perf_counter()
        how = dict(stack=stack.entries, spill=stack.spill, dual=dual, record=mm is not None,
                   box_rate=rates[0], tri_rate=rates[1], surfaces=surfaces, **flags)
        if two:
            hits, fetches, tl_b = trace_two_level(layout, rays[b0:b0 + BATCH], **how)
            tl_tot += tl_b.sum(axis=0, dtype=np.int64)
        else:
            hits, fetches = trace_rays(layout, rays[b0:b0 + BATCH], **how)
        res.trace_seconds += time.perf_counter() - t0
        if mm is not None:
            if pricing is not None:
                pricing.result()
            pricing = mm.background(priced, fetches)
        prim[b0:b0 + BATCH], t[b0:b0 + BATCH] = hits.prim, hits.t
        fold_costs(hits.counts, tot, steps[b0:b0 + BATCH], C_STEPS)
    if pricing is not None:
        pricing.result()
    if order is not None:                      # back to the rays' own order
        back = np.empty_like(order)
        back[order] = np.arange(n)
        prim, t, steps = prim[back], t[back], steps[back]
    n_hit = int((prim >= 0).sum())
    c = two_level_totals(layout, n, n_hit, tot, tl_tot, f"rt.{name}.", stack.entry_bytes) if two \
        else cost_totals(layout, n, n_hit, tot, f"rt.{name}.", stack.entry_bytes)
    if mm is not None:
        for s in FETCH_STREAMS:
            if two or s != "bvh_tlas":           # a flat tree has no TLAS to read
                c[f"rt.{name}.dram_read.{s}"] = mm.dram_bytes("read", s) - before[s]
        mem_now = mm.counters()
        for lv, short in RT_LEVELS:
            if f"mem.cache.{lv}.hits" not in mem_now:
                continue
            for k in ("hits", "misses"):
                c[f"rt.{name}.cache.{short}.{k}"] = mem_now[f"mem.cache.{lv}.{k}"] - mem_before[f"mem.cache.{lv}.{k}"]
            c[f"rt.{name}.cache.{short}.bytes"] = mm.config.line_bytes * (
                c[f"rt.{name}.cache.{short}.hits"] + c[f"rt.{name}.cache.{short}.misses"])
    res.counters = res.counters + c
    # The pass's own share of the frame's totals: its rt.<pass>.* counters also under rt.*, and
    # what it moved through the memory model.
    own = Counters(c)
    for k, v in c.items():
        own.add("rt." + k[len(f"rt.{name}."):], v)
    if mm is not None:
        for k, v in mem_now.items():
            own.add(k, v - mem_before[k])
    res.pass_counters[name] = own
    return PassHits(prim, t, steps)


# What a frame's ray passes make that no preset changes: the camera's rays, the triangles with
# their bounds, the images and AO rays the primary hits make (every layout finds the same
# hits), the shadow rays from the raster's depth. Kept for the next preset of the same frame
# (a report's twelve), each under a key of what it is made from, arrays by value (memo.digest):
# 0.35 of sponza's 2.85 s a preset at 1280x720. Shared: callers must not write to them. Six
# entries, a frame's five and one more: a 1080p frame's AO rays alone are 265 MB, which a
# long-lived process (the viewer) should not keep more of.
_FRAME = MeshMemo(6)


def _triangles(scene: Scene):
    """The scene's triangles (Triangles.of_scene) and the low and high corners of their bounds."""
    tris = Triangles.of_scene(scene)
    corners = tris.v.reshape(-1, 3)
    return tris, corners.min(0), corners.max(0)


def _primary_images(scene: Scene, tris: Triangles, primary, cr: np.ndarray, light: np.ndarray,
                    hit: np.ndarray, w: int, h: int):
    """The primary pass's window depth (float32 (h, w)), the hits' normals and its image
    (uint8 (h, w, 4): Lambert under the scene's light, its background where nothing is hit)."""
    cam = scene.camera
    view_z = np.where(hit, primary.t, np.inf)
    n_, f_ = cam.near, cam.far         # window depth of a view-space depth (OpenGL)
    ndc = (f_ + n_) / (f_ - n_) - 2.0 * f_ * n_ / ((f_ - n_) * view_z)
    depth = np.where(hit, 0.5 * ndc + 0.5, 1.0).astype(np.float32).reshape(h, w)
    normal = _normals(tris, primary, cr)
    lam = np.clip(normal @ light, 0.0, None)
    shade = np.clip(np.asarray(scene.light.ambient)[None]
                    + lam[:, None] * np.asarray(scene.light.color)[None], 0, 1)
    bg = np.asarray(scene.background[:3])
    rgb = np.where(hit[:, None], shade * 0.8, bg[None])
    img = np.empty((h * w, 4), np.uint8)
    img[:, :3] = np.round(rgb * 255.0)
    img[:, 3] = 255
    return depth, normal, img.reshape(h, w, 4)


def _shadow_rays(cam, depth: np.ndarray, light: np.ndarray, eps: float):
    """The pixels the raster drew (bool (h * w,)) and a shadow ray from each towards the light,
    from its world position pulled SHADOW_PULL towards the eye."""
    p = world_from_depth(cam, depth).reshape(-1, 3)
    drawn = np.isfinite(p[:, 0])
    eye = np.asarray(cam.eye, np.float64)
    origin = p[drawn] + (eye - p[drawn]) * SHADOW_PULL
    return drawn, make_rays(origin, np.broadcast_to(light, origin.shape), eps, np.inf)


def trace(scene: Scene | str, preset: Preset | str, width: int, height: int,
          rays=PASSES, mode: str | None = None, ao_samples: int = 4, ao_radius: float | None = None,
          seed: int = 0, depth: np.ndarray | None = None, layout: Layout | None = None,
          memory: bool = True, stack: int | None = None, shadow_any_hit: bool = True,
          memory_model: MemoryModel | None = None, ray_order: str = "pixel",
          bvh: str = "auto") -> RtResult:
    """Trace the ray passes `rays` (a subset of PASSES, or a comma-separated string) of `scene`
    on `preset`'s RT hardware. mode: MODES name (default the preset's rt_layout; "bvh4x2" is the
    dual-node fallback, allowed where the preset has rt_dual_fallback). depth: (h, w) window
    depth for shadow origins (default: the preset's raster render). layout: a prebuilt Layout
    of the mode's layout for this scene (skips the build). memory: price fetches through the
    preset's caches (memory_model: through this model's, the caches the frame's raster passes
    left, as pipelines.frame.run traces; else a model of its own, cold). stack: override the preset's rt_stack_entries. shadow_any_hit: False
    traces shadow rays to their closest hit (to measure what terminate-on-first-hit saves).
    ray_order: "pixel" traces shadow and AO rays in pixel order, "sorted" in coherent_order (the
    images and all but the caches' counters are the same). bvh: the structure's form (BVH_FORMS;
    `layout`, when given, says it: a Layout is flat, a TwoLevel two-level)."""
    from pipelines.frame import Settings, check_resolution, raster
    check_resolution(width, height)
    passes = tuple(p.strip() for p in rays.split(",")) if isinstance(rays, str) else tuple(rays)
    bad = [p for p in passes if p not in PASSES]
    if bad or not passes:
        raise SceneError(f"unknown ray pass {bad[0] if bad else ''!r} (try: {', '.join(PASSES)})")
    if ray_order not in RAY_ORDERS:
        raise SceneError(f"unknown ray order {ray_order!r} (try: {', '.join(RAY_ORDERS)})")
    if bvh not in BVH_FORMS:
        raise SceneError(f"unknown BVH form {bvh!r} (try: {', '.join(BVH_FORMS)})")
    if ao_samples < 1:
        raise SceneError(f"ao_samples must be >= 1, got {ao_samples}")
    scene = get_scene(scene) if isinstance(scene, str) else scene
    preset = get_preset(preset) if isinstance(preset, str) else preset
    params = preset.rt
    mode = mode or params.rt_layout.value
    if mode not in MODES:
        raise SceneError(f"unknown RT mode {mode!r} (try: {', '.join(MODES)})")
    dual = mode == "bvh4x2"
    if dual and not params.rt_dual_fallback.value:
        raise SceneError(f"preset {preset.name!r} has no BVH4x2 dual mode (RDNA 4 only)")
    layout_name = "bvh4" if dual else mode
    stack = Stack(int(stack if stack is not None else params.rt_stack_entries.value),
                  params.rt_stack_overflow.value == "spill", int(params.rt_stack_entry_bytes.value))
    rates = (int(params.rt_box_tests_per_clk.value), int(params.rt_tri_tests_per_clk.value))

    def flags(p, **more):
        """Pass p's ray flags (PASS_FLAGS, overridden by `more`) and the order its rays visit a
        node's children in, which the driver picks by those flags (rt_box_sort)."""
        return {**PASS_FLAGS[p], **more, "box_sort": params.rt_box_sort.value}
    geometry = draws_key(scene.draws)
    tris, lo, hi = _FRAME.get(("triangles", geometry), draws_kept(scene.draws),
                              lambda: _triangles(scene))
    t0 = time.perf_counter()
    prim_tris = int(params.rt_prim_tris.value)
    if layout is None:
        layout = _built(scene, bvh_form(scene, bvh), layout_name, prim_tris)
    elif layout.name != layout_name:
        raise SceneError(f"layout {layout.name!r} given for mode {mode!r}")
    res = RtResult(scene.name, preset.name, width, height, mode, ray_order,
                   "two-level" if isinstance(layout, TwoLevel) else "flat")
    res.build_seconds = time.perf_counter() - t0
    if isinstance(layout, TwoLevel):
        surfaces = any_hit_table(layout.blas_draws, layout.blas_tris, texture_unit(preset))
        res.structure_bytes = layout.bytes
        res.flat_bytes = partial(_flat_bytes, scene, layout_name, prim_tris)   # (picklable)
    else:
        surfaces = any_hit_table(scene.draws, tris, texture_unit(preset))
        res.structure_bytes = {"flat": layout.bytes}
    mm = None if not memory else memory_model if memory_model is not None else \
        MemoryModel(preset.memory_config(), 1)
    level = rt_entry_level(mm, preset) if mm is not None else 0
    diag = float(np.linalg.norm(hi.astype(np.float64) - lo))
    eps = SURFACE_EPS * diag
    cam, h, w = scene.camera, height, width
    light = np.asarray(scene.light.direction, np.float64)
    light /= np.linalg.norm(light)

    primary = None
    if "primary" in passes or "ao" in passes:
        cr = _FRAME.get(("camera rays", cam, w, h), (), lambda: camera_rays(cam, w, h))
        primary = _run(layout, cr, mm, level, res, "primary", flags("primary"), surfaces, stack,
                       dual, rates)
        hit = primary.prim >= 0
        res.images["hit"] = hit.reshape(h, w)
        res.images["prim"] = primary.prim.reshape(h, w)
        res.pixel_maps["rt.primary.steps"] = primary.steps.reshape(h, w)
        # (what the hits make is the same for every preset's layout: made once for them all)
        hits_key = (geometry, cam, w, h, digest(primary.prim, primary.t))
        depth_image, normal, img = _FRAME.get(
            ("primary images", hits_key, scene.light, scene.background), draws_kept(scene.draws),
            lambda: _primary_images(scene, tris, primary, cr, light, hit, w, h))
        res.images["depth"] = depth_image
        res.images["primary"] = img

    if "shadow" in passes:
        if depth is None:
            depth = raster(scene, preset, Settings(w, h)).depth
        if depth.shape != (h, w):
            raise SceneError(f"depth image {depth.shape} does not match {w}x{h}")
        drawn, srays = _FRAME.get(("shadow rays", cam, w, h, tuple(light), eps, digest(depth)), (),
                                  lambda: _shadow_rays(cam, depth, light, eps))
        hits = _run(layout, srays, mm, level, res, "shadow",
                    flags("shadow", any_hit=shadow_any_hit), surfaces, stack, dual, rates,
                    coherent_order(srays, lo, hi) if ray_order == "sorted" else None)
        vis = np.ones(h * w, np.float32)
        vis[drawn] = np.where(hits.prim >= 0, 0.0, 1.0)
        res.images["shadow"] = vis.reshape(h, w)
        steps = np.zeros(h * w, np.int32)
        steps[drawn] = hits.steps
        res.pixel_maps["rt.shadow.steps"] = steps.reshape(h, w)

    if "ao" in passes:
        hit = primary.prim >= 0
        radius = ao_radius if ao_radius is not None else 0.1 * diag

        def make_ao():
            p = (cr[hit, 0:3].astype(np.float64)
                 + primary.t[hit, None] * cr[hit, 4:7].astype(np.float64))
            return ao_rays(p, normal[hit], ao_samples, radius, eps, seed)
        arays = _FRAME.get(("ao rays", hits_key, ao_samples, radius, eps, seed),
                           draws_kept(scene.draws), make_ao)
        hits = _run(layout, arays, mm, level, res, "ao", flags("ao"), surfaces, stack, dual, rates,
                    coherent_order(arays, lo, hi) if ray_order == "sorted" else None)
        occl = (hits.prim >= 0).reshape(-1, ao_samples)
        ao = np.ones(h * w, np.float32)
        ao[hit] = 1.0 - occl.mean(axis=1)
        res.images["ao"] = ao.reshape(h, w)
        steps = np.zeros(h * w, np.int32)
        steps[hit] = hits.steps.reshape(-1, ao_samples).sum(axis=1)
        res.pixel_maps["rt.ao.steps"] = steps.reshape(h, w)

    totals = Counters()
    for k, v in res.counters.items():
        parts = k.split(".")
        if parts[0] == "rt" and parts[1] in PASSES:
            totals.add("rt." + ".".join(parts[2:]), v)
    res.counters = res.counters + totals
    for p in res.pass_counters.values():        # what each pass moved through the caches
        res.counters = res.counters + Counters({k: v for k, v in p.items()
                                                if k.startswith(("mem.", "comp.dram.", "surf."))})
    return res


def _normals(tris: Triangles, hits, rays: np.ndarray) -> np.ndarray:
    """float64 (n, 3) unit geometric normals of the hit triangles, facing the ray (0 on a miss)."""
    out = np.empty((len(hits.prim), 3))
    rk.hit_normals(tris.v, np.ascontiguousarray(hits.prim, np.int64), rays, out)
    return out


def combine(color: np.ndarray, rt: RtResult) -> np.ndarray:
    """The raster colour (h, w, 4) uint8 darkened by the traced shadow and AO images."""
    f = np.ones(color.shape[:2], np.float32)
    if "shadow" in rt.images:
        f *= 0.5 + 0.5 * rt.images["shadow"]      # shadowed pixels keep the ambient half
    if "ao" in rt.images:
        f *= rt.images["ao"]
    out = color.copy()
    out[..., :3] = np.round(color[..., :3] * f[..., None]).astype(np.uint8)
    return out
