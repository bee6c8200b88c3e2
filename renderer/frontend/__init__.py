"""Geometry front ends: consume a pass's draws, camera and the preset's front-end parameters;
produce the setup triangles that reach the rasterizer, the fetch plan (the index, vertex and
meshlet bytes each input primitive reads, for the memory replay) and the geom.* counters.

    from renderer.frontend import front_end
    fe = front_end(draws, camera, 1280, 720, 1, params, "ngg", mm)
    fe.tris                         # SetupTriangles of the surviving primitives
    fe.counters["geom.vertices_shaded"], fe.counters["geom.prims_culled.small"]

Three paths, chosen per draw (DESIGN.md §4):
- legacy: every index fetched, vertices de-duplicated by a FIFO post-transform cache
  (vertices shaded = misses), culling in fixed function after assembly (legacy.py);
- ngg: per subgroup, positions shaded once per distinct vertex, the primitive shader culls
  (back-face, frustum, zero-area, no sample covered) and compacts, attributes are fetched and
  shaded only for survivors' vertices; the cull costs ALU per primitive (ngg.py);
- mesh: meshlets (meshlets.py) culled whole by an amplification stage (frustum, normal cone),
  then all of a surviving meshlet's vertices shaded, shared ones once per meshlet (mesh.py);
  where the preset says so (mesh_prim_cull) its primitives are culled before export as NGG's.
A draw flagged stream_out, or a mesh draw whose meshlets overflow the export budget, falls back
to legacy (counted). Every path rasterizes the same pixels: what one culls that another does
not covers no sample, so images are identical and only the costs differ.
"""
from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from functools import partial
from typing import NamedTuple

import numpy as np

from renderer import geometry_kernels as gk
from renderer.counters import Counters
from renderer.formats import INDEX, VERTEX
from renderer.geometry import SetupTriangles, setup_all
from renderer.memory import STREAM
from renderer.memo import MeshMemo, digest, mesh_ids
from renderer.memory_requests import OP_STREAM_SHIFT
from renderer.raster import RasterView
from renderer.workers import SMALL_TRIANGLES, on_this_thread

from . import fetch_kernels as fk
from . import mesh as mesh_path
from .legacy import ptc_hits_of_draws
from .meshlets import BOUNDS, DESCRIPTOR, VERTEX_REF, meshlets_of
from .ngg import cull_small, subgroups

LEGACY, NGG, MESH = 0, 1, 2
FRONTENDS = ("legacy", "ngg", "mesh")

# Input primitive verdicts beyond geometry_kernels' EMITTED, CULLED_BACKFACE, CULLED_ZERO_AREA,
# CULLED_FRUSTUM: the NGG cull of primitives that cover no sample, and primitives of meshlets
# the amplification stage culled.
CULLED_SMALL, CULLED_MESHLET = 4, 5
REASONS = {gk.CULLED_BACKFACE: "backface", gk.CULLED_ZERO_AREA: "zero_area",
           gk.CULLED_FRUSTUM: "frustum", CULLED_SMALL: "small", CULLED_MESHLET: "meshlet"}

# Vertex layout in memory: positions in one stream, the other attributes in another (the layout
# an NGG or mesh pipeline wants: "some memory loads are only executed by those vertices that
# survived the culling", peers.md §2.8). Byte counts from renderer.formats.VERTEX.
POSITION_BYTES = VERTEX.fields["position"][0].itemsize                 # 12 B
ATTRIBUTE_BYTES = VERTEX.itemsize - POSITION_BYTES                      # 20 B
# Vertex shader ALU ops, counted from geometry_kernels.world_vertices and clip_vertices (one op
# per multiply-add): the position part is world (3 x 4) and clip (4 x 4) transforms = 28; the
# attribute part is the normal's 3 x 3 transform (9), its length (3), rsqrt (1) and scale
# (3) = 16. (The simulator remembers world-space results across cameras; the count is of
# what the GPU's vertex shader runs every frame.)
POSITION_OPS, ATTRIBUTE_OPS = 28, 16


class FetchPlan(NamedTuple):
    """Per input primitive, the byte ranges its front end reads (CSR), in reading order."""
    off: np.ndarray      # int64 (n_prims + 1,)
    addr: np.ndarray     # int64 (n,) byte address (region << REGION_SHIFT | offset)
    nbytes: np.ndarray   # int64 (n,)
    op: np.ndarray       # int64 (n,) read op code with its stream (index or vertex)
    need: int            # most lines one primitive's ranges span (request buffer headroom)


class FrontEnd:
    """The pass's front-end results. tris, path and verdict are ready at once; the fetch plan and
    the counters of what was fetched and shaded are worked out once begin() is called (on the
    memory model's second thread, where there is one), and reading them waits for that."""

    def __init__(self, tris: SetupTriangles, path: np.ndarray, verdict: np.ndarray,
                 counters: Counters, later: Callable[[], tuple[FetchPlan, Counters]],
                 run: Callable[[Callable], Future]):
        self.tris = tris          # the surviving primitives' setup triangles, submission order
        self.path = path          # int8 (n_draws,) LEGACY / NGG / MESH as each draw ran
        self.verdict = verdict    # uint8 (n_prims,) EMITTED or the reason it was culled
        self._counters, self._later, self._run, self._future = counters, later, run, None

    def begin(self) -> None:
        """Start on the fetch plan and its counters (a second call does nothing)."""
        if self._future is None:
            self._future = self._run(self._later)

    @property
    def fetch(self) -> FetchPlan:
        self.begin()
        return self._future.result()[0]

    @property
    def counters(self) -> Counters:
        self.begin()
        return self._counters + self._future.result()[1]


def _paths(draws, params: dict, frontend: str | None, c: Counters) -> np.ndarray:
    if frontend is not None and frontend not in FRONTENDS:
        raise ValueError(f"unknown front end {frontend!r} (try: {', '.join(FRONTENDS)})")
    default = FRONTENDS.index(params["frontend"])
    path = np.empty(len(draws), np.int8)
    for d, draw in enumerate(draws):
        p = FRONTENDS.index(frontend) if frontend is not None else default
        if frontend is None and draw.state.mesh_shader and params["mesh_shading"]:
            p = MESH
        if p != LEGACY and draw.state.stream_out:
            c.add("geom.fallback.stream_out", 1)
            p = LEGACY
        path[d] = p
    return path


def front_end(draws, camera, width: int, height: int, samples: int, params: dict,
              frontend: str | None = None, mm=None) -> FrontEnd:
    """Run the pass's draws through their front ends (`frontend` None: the preset's default,
    mesh for draws that ask for it where the preset has mesh shading). `params` as
    pipelines.presets.frontend; `mm` gives the buffers' addresses (None: a private model)."""
    with on_this_thread(sum(d.mesh.n_triangles for d in draws) < SMALL_TRIANGLES):
        return _front_end(draws, camera, width, height, samples, params, frontend, mm)


def _front_end(draws, camera, width: int, height: int, samples: int, params: dict,
               frontend: str | None, mm) -> FrontEnd:
    c = Counters()
    path = _paths(draws, params, frontend, c)
    s = setup_all(draws, camera, width, height)
    n = len(s.idx)
    prim_off = np.zeros(len(draws) + 1, np.int64)
    np.cumsum(s.n_prims, out=prim_off[1:])
    gidx = s.idx.reshape(-1)

    # Mesh draws: meshlet tables per distinct mesh; a draw whose meshlets overflow the export
    # budget cannot take the path.
    tables, table_of, draw_table = [], {}, np.full(len(draws), -1, np.int64)
    for d in np.flatnonzero(path == MESH):
        mesh = draws[d].mesh
        ml = meshlets_of(mesh, int(params["meshlet_max_verts"]), int(params["meshlet_max_prims"]))
        if mesh_path.export_bytes(ml).max() > int(params["mesh_output_budget_bytes"]):
            c.add("geom.fallback.mesh_budget", 1)
            path[d] = LEGACY
            continue
        if id(mesh) not in table_of:
            table_of[id(mesh)] = len(tables)
            tables.append(ml)
        draw_table[d] = table_of[id(mesh)]
    for k, name in enumerate(FRONTENDS):
        c.add(f"geom.draws.{name}", int((path == k).sum()))
    lidx, prim_path, legacy_c, ngg_c = _static_arrays(draws, s, path)

    verdict = s.outcome.copy()
    # Mesh: the amplification stage's verdict per (draw, meshlet).
    rows = mesh_path.run(tables, draw_table, draws, prim_off, np.asarray(camera.eye, np.float64),
                         s.clip_from_world, c)
    head = np.full(n, -1, np.int64)
    head[rows.first] = np.arange(len(rows.first))
    verdict[rows.culled_prims] = CULLED_MESHLET
    # Culling in the shader: every primitive of an NGG draw, and, where the preset culls before
    # export (mesh_prim_cull), every primitive of a kept meshlet; it costs cull_alu_ops each.
    # Back-facing, zero-area and outside ones are dropped there instead of in fixed function
    # (same verdicts); it also drops primitives that cover no sample.
    shader_cull = prim_path == NGG
    if params["mesh_prim_cull"]:
        shader_cull = shader_cull | ((prim_path == MESH) & (verdict != CULLED_MESHLET))
    if shader_cull.any():
        view = RasterView.make(width, height, samples)
        c.add("geom.ngg.small_bbox",
              cull_small(s.tris, shader_cull, verdict, gk.EMITTED, CULLED_SMALL, view))
    keep = verdict == gk.EMITTED

    # What is fetched and shaded (the post-transform cache, NGG subgroups) and the fetch plan
    # are needed by the memory replay and the counters, not by the rasterizer: with a memory
    # model they are worked out on its second thread from when the caller says (FrontEnd.begin:
    # best beside its own serial work, as parallel kernels lose a core to it). The buffers'
    # addresses are taken here: region ids are numbered on this thread, in order.
    addresses = _plan_addresses(draws, mm, params, prim_off, rows, tables)
    later = partial(_fetches, draws, params, path, gidx, prim_off, keep, lidx, prim_path,
                    legacy_c, ngg_c, c["geom.mesh.vertices_shaded"], head, rows, addresses)

    hist = gk.tally(verdict, CULLED_MESHLET + 1)
    c.add("geom.prims_in", n)
    for k, name in REASONS.items():
        c.add(f"geom.prims_culled.{name}", int(hist[k]))
    c.add("geom.prims_clipped", np.count_nonzero(s.clipped))
    c.add("geom.cull_alu_ops", int(params["cull_alu_ops"]) * np.count_nonzero(shader_cull))
    keep_tri = keep[s.tris.prim]
    tris = s.tris if keep_tri.all() else s.tris.take(np.flatnonzero(keep_tri))
    c.add("geom.setup_triangles", tris.n)
    return FrontEnd(tris, path, verdict, c, later, mm.background if mm is not None else _now)


def _fetches(draws, params, path, gidx, prim_off, keep, lidx, prim_path, legacy_c, ngg_c,
             mesh_shaded, head, rows, addresses) -> tuple[FetchPlan, Counters]:
    """Which corners fetch and shade their vertex (legacy: post-transform cache misses; NGG: first
    use in a subgroup), the counts, and the fetch plan."""
    # Without NGG subgroups (formed from this camera's survivors) what is fetched depends only
    # on the meshes, their paths and the post-transform cache's size: remembered, with its
    # counts.
    static = None if (path == NGG).any() else (path.tobytes(), int(params["ptc_entries"]))

    def fetches():
        hit = ptc_hits_of_draws(draws, lidx, prim_off, path == LEGACY, int(params["ptc_entries"]))
        if static is None:
            pos_first, attr_first, n_sub = subgroups(gidx, prim_off, path == NGG, keep,
                                                     int(params["ngg_max_verts"]),
                                                     int(params["ngg_max_prims"]))
        else:                 # no NGG draw: no subgroups to form
            pos_first = attr_first = np.zeros(len(gidx), np.bool_)
            n_sub = np.zeros(len(draws), np.int64)
        missed = legacy_c & ~hit
        ngg_pos, ngg_attr = ngg_c & pos_first, ngg_c & attr_first
        fetch_index = prim_path != MESH
        counts = (np.count_nonzero(fetch_index), np.count_nonzero(legacy_c),
                  np.count_nonzero(missed), int(n_sub.sum()), np.count_nonzero(ngg_pos),
                  np.count_nonzero(ngg_attr))
        return fetch_index, missed | ngg_pos, missed | ngg_attr, counts
    fetched = fetches() if static is None else _STATIC.get(
        (mesh_ids(draws), "fetches", static), (d.mesh for d in draws), fetches)
    fetch_index, fetch_pos, fetch_attr, counts = fetched
    n_index, n_legacy, misses, n_subgroups, ngg_pos, ngg_attr = counts

    c = Counters()
    c.add("geom.indices", n_index * 3)
    c.add("geom.cache_hits", n_legacy - misses)
    c.add("geom.ngg.subgroups", n_subgroups)
    c.add("geom.vertices_shaded", misses + ngg_pos + mesh_shaded)
    c.add("geom.vertices_attr_shaded", misses + ngg_attr + mesh_shaded)
    c.add("geom.vs_alu_ops", POSITION_OPS * c["geom.vertices_shaded"]
          + ATTRIBUTE_OPS * c["geom.vertices_attr_shaded"])
    plan = _fetch_plan(prim_off, lidx, fetch_index, fetch_pos, fetch_attr, head, rows,
                       addresses, static)
    return plan, c


def _now(fn: Callable) -> Future:
    """fn() run here, as a finished Future (no memory model: no second thread)."""
    done: Future = Future()
    done.set_result(fn())
    return done


_STATIC = MeshMemo(8)


def _static_arrays(draws, s, path):
    """What depends only on the meshes and each draw's path, not on the camera: every corner's
    draw-local vertex index, each primitive's path, and which corners take the legacy and NGG
    paths. Remembered while the same meshes are drawn (the viewer, reports of many presets);
    shared, so never written to."""
    def compute():
        v_base = np.zeros(len(draws) + 1, np.int64)
        np.cumsum(s.n_verts, out=v_base[1:])
        lidx = s.idx.reshape(-1) - np.repeat(v_base[:-1], 3 * s.n_prims)
        prim_path = np.repeat(path, s.n_prims)
        return lidx, prim_path, np.repeat(prim_path == LEGACY, 3), np.repeat(prim_path == NGG, 3)
    return _STATIC.get((mesh_ids(draws), path.tobytes()), (d.mesh for d in draws), compute)


class _PlanAddresses(NamedTuple):
    index_base: np.ndarray    # int64 per draw: its buffers' first bytes
    pos_base: np.ndarray
    attr_base: np.ndarray
    desc_addr: np.ndarray     # int64 per meshlet row: its descriptor, vertex list, triangles
    vlist_addr: np.ndarray
    tri_addr: np.ndarray
    tri_bytes: int            # one meshlet triangle's bytes
    line_shift: int
    wave: int
    meshes: tuple             # the draws' meshes (the memo's key, kept alive by it)


def _plan_addresses(draws, mm, params, prim_off, rows, tables) -> _PlanAddresses:
    """Where the draws' buffers live in mm (regions in first-use order, numbered here)."""
    wave = int(params["fetch_wave"])
    if not 1 <= wave <= fk.MAX_WAVE:
        raise ValueError(f"fetch_wave must be 1 to {fk.MAX_WAVE} lanes, got {wave}")
    if mm is None:
        mm = _Addresses()
    meshes = [id(d.mesh) for d in draws]
    distinct = list(dict.fromkeys(meshes))    # first-use order: the order regions are numbered

    def base(kind, extra=()):
        at = {m: mm.address(mm.region((kind, m, *extra))) for m in distinct}
        return np.array([at[m] for m in meshes], np.int64)
    index_base, pos_base, attr_base = base("index"), base("vertex"), base("vertex.attr")
    mkey = (int(params["meshlet_max_verts"]), int(params["meshlet_max_prims"]))
    desc_b = DESCRIPTOR.itemsize + BOUNDS.itemsize
    tri_b = tables[0].triangle_bytes if tables else 3     # one pass: one meshlet size
    desc_addr = base("meshlets", mkey)[rows.draw] + rows.meshlet * desc_b
    vlist_addr = base("meshlet.vertices", mkey)[rows.draw] + rows.mesh_vert_first * VERTEX_REF.itemsize
    tri_addr = base("meshlet.triangles", mkey)[rows.draw] + (rows.first - prim_off[rows.draw]) * tri_b
    return _PlanAddresses(index_base, pos_base, attr_base, desc_addr, vlist_addr, tri_addr, tri_b,
                          int(mm.config.line_bytes).bit_length() - 1, wave,
                          tuple(d.mesh for d in draws))


def _fetch_plan(prim_off, lidx, fetch_index, fetch_pos, fetch_attr, head, rows,
                at: _PlanAddresses, static=None) -> FetchPlan:
    """The byte ranges each primitive reads, at its draw's buffers' addresses: indices
    (fetch_index), positions and attributes per corner (fetch_pos, fetch_attr), and at a
    meshlet's first primitive (head) its descriptor and bounds, then, when kept, its lists and
    all its vertices. `static`: a key that determines the fetch_* arrays, if the caller has
    one (else their bytes are hashed)."""
    n = len(head)
    sizes = (INDEX.itemsize, POSITION_BYTES, ATTRIBUTE_BYTES,
             DESCRIPTOR.itemsize + BOUNDS.itemsize, VERTEX_REF.itemsize, at.tri_bytes)
    streams = (STREAM["index"], STREAM["vertex"])
    args = (fk.Demand(prim_off, lidx, fetch_index, fetch_pos, fetch_attr),
            fk.MeshletFetch(head, rows.alive, rows.vert_off, rows.verts, rows.draw, at.desc_addr,
                            at.vlist_addr, at.tri_addr),
            fk.Buffers(at.index_base, at.pos_base, at.attr_base, sizes, streams, at.line_shift,
                       at.wave))
    if len(rows.first):
        return _build_plan(n, args)
    # No meshlets: the plan is a function of these arrays alone, and the viewer and reports
    # draw the same pass again and again.
    key = digest(at.index_base, at.pos_base, at.attr_base, *(
        (prim_off, fetch_index, fetch_pos, fetch_attr) if static is None else ()))
    return _PLANS.get((tuple(map(id, at.meshes)), at.line_shift, at.wave, static, key),
                      at.meshes, lambda: _build_plan(n, args))


def _build_plan(n: int, args) -> FetchPlan:
    off = np.zeros(n + 1, np.int64)
    lines = np.zeros(n, np.int64)
    empty = np.zeros(0, np.int64)
    fk.build(*args, False, fk.PlanRows(off, empty, empty, empty, lines))   # count per primitive
    np.cumsum(off[1:].copy(), out=off[1:])
    addr, nbytes, stream = (np.empty(int(off[-1]), np.int64) for _ in range(3))
    fk.build(*args, True, fk.PlanRows(off, addr, nbytes, stream, lines))   # write at the offsets
    return FetchPlan(off, addr, nbytes, stream << OP_STREAM_SHIFT, int(lines.max()) if n else 0)


_PLANS = MeshMemo(8)


class _Addresses:
    """Buffer addresses when no memory model is given (counters only): regions as MemoryModel
    numbers them, 128-byte lines."""
    class config:
        line_bytes = 128

    def __init__(self):
        self._regions: dict = {}

    def region(self, key) -> int:
        return self._regions.setdefault(key, len(self._regions) + 1)

    def address(self, region: int, offset=0):
        from renderer.memory_requests import REGION_SHIFT
        return (region << REGION_SHIFT) + offset


def acmr(c: Counters) -> float:
    """Average cache miss ratio: vertices shaded per input triangle (derived, never counted)."""
    return c["geom.vertices_shaded"] / c["geom.prims_in"] if c["geom.prims_in"] else 0.0
