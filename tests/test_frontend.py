"""Geometry front ends (renderer.frontend): legacy post-transform cache, NGG culling, mesh
shading. Images must not depend on the front end; only what is fetched and shaded does."""
from __future__ import annotations

import dataclasses

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import renderer.binning as binning
import renderer.frontend as frontend
from pipelines import render
from pipelines.presets.frontend import PARAMS
from pipelines.presets import PRESETS, get_preset
from renderer import geometry_kernels as gk
from renderer.frontend import (CULLED_MESHLET, CULLED_SMALL, FRONTENDS, acmr, front_end)
from renderer.frontend.legacy import ptc_hits
from renderer.frontend.meshlets import build
from renderer.geometry import setup_all
from renderer.memory import STREAM
from renderer.memory_kernels import OP_STREAM_SHIFT
from renderer.raster import RasterView
from renderer.transforms import clip_from_world
from renderer.workers import on_this_thread
from scenes.library import get_scene, scene_names
from scenes.model import (Camera, CullMode, Draw, DrawState, Material, Mesh, Scene, SceneError)

W, H = 96, 64
BASE = get_preset("imr-baseline").frontend.as_dict()


# ---- images ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", scene_names())
def test_images_identical_across_front_ends(name):
    """Every built-in scene: legacy, NGG and mesh shading rasterize the same pixels."""
    runs = [render(name, "imr-baseline", W, H, frontend=f) for f in FRONTENDS]
    for r in runs[1:]:
        assert np.array_equal(r.color, runs[0].color)
        assert np.array_equal(r.depth, runs[0].depth)
        assert r.counters["raster.fragments"] == runs[0].counters["raster.fragments"]
        assert r.counters["raster.samples_covered"] == runs[0].counters["raster.samples_covered"]


@pytest.mark.parametrize("preset,samples", [("amd-rdna2", 1), ("apple-m3", 4)])
def test_images_identical_on_other_architectures(preset, samples):
    runs = [render("spheres", preset, W, H, samples, frontend=f) for f in FRONTENDS]
    for r in runs[1:]:
        assert np.array_equal(r.color, runs[0].color)
        assert r.counters["raster.samples_covered"] == runs[0].counters["raster.samples_covered"]


# ---- legacy: the FIFO post-transform cache ---------------------------------------------------

def _grid(nx: int, ny: int) -> Mesh:
    """nx x ny quads, row by row, each as (a, b, c), (b, d, c) with a = (i, j), b = (i+1, j),
    c = (i, j+1), d = (i+1, j+1): counter-clockwise seen from +z."""
    xs, ys = np.meshgrid(np.arange(nx + 1), np.arange(ny + 1))
    pos = np.stack([xs.ravel(), ys.ravel(), np.zeros(xs.size)], axis=1).astype(np.float32)
    v = lambda i, j: j * (nx + 1) + i     # noqa: E731
    tris = []
    for j in range(ny):
        for i in range(nx):
            tris += [(v(i, j), v(i + 1, j), v(i, j + 1)), (v(i + 1, j), v(i + 1, j + 1), v(i, j + 1))]
    return Mesh("grid", pos, np.array(tris, np.uint32))


@pytest.mark.parametrize("size,misses", [
    (0, lambda nx, ny: 6 * nx * ny),            # no cache: every corner shades
    (2, lambda nx, ny: 4 * nx * ny),            # only the shared edge's far vertex survives
    (3, lambda nx, ny: 2 * (nx + 1) * ny),      # a quad reuses its left edge: 2 new per quad,
    (4, lambda nx, ny: 2 * (nx + 1) * ny),      # 4 for a row's first; rows do not reach back
    (10_000, lambda nx, ny: (nx + 1) * (ny + 1)),   # everything stays: each vertex once
])
def test_post_transform_cache_counts_on_a_grid(size, misses):
    """Traced by hand: the first quad of a row misses a, b, c, d; every later quad (i, j) finds
    (i, j) and (i, j+1) from its neighbour and misses (i+1, j) and (i+1, j+1)."""
    nx, ny = 7, 5
    mesh = _grid(nx, ny)
    hit = ptc_hits(mesh.indices.reshape(-1).astype(np.int64), np.array([0, mesh.n_triangles]),
                   np.ones(1, np.bool_), size)
    assert (~hit).sum() == misses(nx, ny)
    assert hit.sum() == 6 * nx * ny - misses(nx, ny)


def _fifo_twin(indices, size):
    fifo, hits = [], []
    for v in indices:
        hits.append(v in fifo)
        if v not in fifo and size > 0:
            fifo.append(v)
            if len(fifo) > size:
                fifo.pop(0)
    return np.array(hits, np.bool_)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 20), min_size=3, max_size=90).map(lambda v: v[:len(v) // 3 * 3]),
       st.integers(0, 12))
def test_post_transform_cache_matches_the_slow_twin(indices, size):
    idx = np.array(indices, np.int64)
    half = len(idx) // 6 * 3     # two draws: the cache empties between them
    prim_off = np.array([0, half // 3, len(idx) // 3])
    hit = ptc_hits(idx, prim_off, np.ones(2, np.bool_), size)
    want = np.concatenate([_fifo_twin(idx[:half], size), _fifo_twin(idx[half:], size)])
    assert np.array_equal(hit, want)


def test_legacy_counters_on_the_grid_scene():
    mesh = _grid(8, 6)
    scene = Scene("grid", "", [Draw(mesh, Material("m"), np.diag([0.2, 0.3, 1, 1]) @ np.eye(4))],
                  Camera((0.8, 0.9, 3), (0.8, 0.9, 0)))
    params = {**BASE, "ptc_entries": 4}
    c = front_end(scene.draws, scene.camera, W, H, 1, params, "legacy").counters
    assert c["geom.vertices_shaded"] == 2 * 9 * 6
    assert c["geom.cache_hits"] == 6 * 8 * 6 - 2 * 9 * 6
    assert c["geom.indices"] == 3 * 96
    assert acmr(c) == pytest.approx(2 * 9 * 6 / 96)


# ---- NGG: exact culling by reason ------------------------------------------------------------

def _random_scene(seed: int, n: int = 400):
    """Triangles in front of the camera, inside the guard band: big and tiny, either winding,
    some degenerate, some off screen."""
    rng = np.random.default_rng(seed)
    centre = rng.uniform([-1.6, -1.2, -3.0], [1.6, 1.2, -1.5], (n, 1, 3))
    size = np.where(rng.random((n, 1, 1)) < 0.6, 0.01, 0.3)
    pos = centre + size * rng.normal(size=(n, 3, 3))
    pos[: n // 20, 2] = pos[: n // 20, 0]          # a few degenerate: a repeated vertex
    mesh = Mesh("soup", pos.reshape(-1, 3).astype(np.float32),
                np.arange(3 * n, dtype=np.uint32).reshape(n, 3))
    return Scene("soup", "", [Draw(mesh, Material("m"))], Camera((0, 0, 0), (0, 0, -1), near=0.5))


def _brute_force(scene, samples):
    """Per triangle, in plain numpy: the reason setup or the NGG cull must give it."""
    mesh = scene.draws[0].mesh
    m = clip_from_world(scene.camera, W, H)
    p = np.c_[mesh.positions.astype(np.float64), np.ones(len(mesh.positions))] @ m.T
    inside = np.stack([p[:, 3] + p[:, 0], p[:, 3] - p[:, 0], p[:, 3] + p[:, 1], p[:, 3] - p[:, 1],
                       p[:, 3] + p[:, 2], p[:, 3] - p[:, 2]], axis=1) >= 0
    fx = (p[:, 0] / p[:, 3] * 0.5 + 0.5) * W * 256
    fy = (0.5 - p[:, 1] / p[:, 3] * 0.5) * H * 256
    sx, sy = np.floor(fx + 0.5).astype(np.int64), np.floor(fy + 0.5).astype(np.int64)
    view = RasterView.make(W, H, samples)
    gx, gy = np.meshgrid(np.arange(W), np.arange(H))
    out = []
    s = setup_all(scene.draws, scene.camera, W, H)
    for t, (a, b, c) in enumerate(mesh.indices.astype(np.int64)):
        if (~inside[[a, b, c]]).all(axis=0).any():
            out.append(gk.CULLED_FRUSTUM)
            continue
        area = (sx[b] - sx[a]) * (sy[c] - sy[a]) - (sy[b] - sy[a]) * (sx[c] - sx[a])
        if area == 0:
            out.append(gk.CULLED_ZERO_AREA)
            continue
        if area > 0:
            out.append(gk.CULLED_BACKFACE)
            continue
        # every sample of the target, the rasterizer's edge functions and top-left rule
        k = np.flatnonzero(s.tris.prim == t)[0]
        x, y, zp = s.tris.x[k], s.tris.y[k], s.tris.zplane[k]
        hit = False
        for ox, oy in zip(view.sample_x, view.sample_y):
            X, Y = gx * 256 + 128 + ox, gy * 256 + 128 + oy
            ok = np.ones_like(X, bool)
            for e in range(3):
                dx, dy = x[(e + 1) % 3] - x[e], y[(e + 1) % 3] - y[e]
                bias = 0 if (dy < 0 or (dy == 0 and dx > 0)) else -1
                ok &= -dy * X + dx * Y + (dy * x[e] - dx * y[e]) + bias >= 0
            z = zp[0] * X + zp[1] * Y + zp[2]
            hit = hit or (ok & (z >= 0) & (z <= 1)).any()
        out.append(gk.EMITTED if hit else CULLED_SMALL)
    return np.array(out)


@pytest.mark.parametrize("seed,samples", [(1, 1), (2, 4)])
def test_ngg_culls_exactly_what_brute_force_finds(seed, samples):
    scene = _random_scene(seed)
    fe = front_end(scene.draws, scene.camera, W, H, samples, BASE, "ngg")
    want = _brute_force(scene, samples)
    assert np.array_equal(fe.verdict, want)
    for reason, name in ((gk.CULLED_BACKFACE, "backface"), (gk.CULLED_ZERO_AREA, "zero_area"),
                         (gk.CULLED_FRUSTUM, "frustum"), (CULLED_SMALL, "small")):
        assert fe.counters[f"geom.prims_culled.{name}"] == (want == reason).sum() > 0
    # the bounding-box filter of a primitive shader finds some of them, never more
    assert 0 < fe.counters["geom.ngg.small_bbox"] <= fe.counters["geom.prims_culled.small"]
    # the legacy path culls the same in fixed function, but not the small ones
    legacy = front_end(scene.draws, scene.camera, W, H, samples, BASE, "legacy")
    assert legacy.counters["geom.prims_culled.small"] == 0
    assert legacy.tris.n == fe.tris.n + (want == CULLED_SMALL).sum()


def test_ngg_fetches_attributes_only_for_survivors():
    scene = get_scene("dragon")
    legacy = front_end(scene.draws, scene.camera, W, H, 1, BASE, "legacy").counters
    ngg = front_end(scene.draws, scene.camera, W, H, 1, BASE, "ngg").counters
    assert ngg["geom.vertices_attr_shaded"] < ngg["geom.vertices_shaded"]
    assert ngg["geom.cull_alu_ops"] == BASE["cull_alu_ops"] * ngg["geom.prims_in"]
    assert legacy["geom.cull_alu_ops"] == 0
    r_l = render("dragon", "imr-baseline", W, H, frontend="legacy").counters
    r_n = render("dragon", "imr-baseline", W, H, frontend="ngg").counters
    assert r_n["mem.dram.read.vertex"] < r_l["mem.dram.read.vertex"]
    assert r_n["mem.dram.read.index"] == r_l["mem.dram.read.index"]


def test_stream_out_draws_fall_back_to_legacy():
    scene = get_scene("quad")
    d = scene.draws[0]
    flagged = dataclasses.replace(scene, draws=[Draw(d.mesh, d.material, d.world_from_object,
                                                     dataclasses.replace(d.state, stream_out=True))])
    for f in ("ngg", "mesh"):
        c = render(flagged, "amd-rdna2", W, H, frontend=f).counters
        assert c["geom.fallback.stream_out"] == 1 and c["geom.draws.legacy"] == 1


# ---- mesh shading ----------------------------------------------------------------------------

def _sphere_scene(cull=CullMode.BACK, eye=(0.3, 0.4, 4.0)):
    import trimesh
    s = trimesh.creation.icosphere(subdivisions=4)
    mesh = Mesh("ico", s.vertices.astype(np.float32), s.faces.astype(np.uint32))
    return Scene("ico", "", [Draw(mesh, Material("m"), state=DrawState(cull=cull))], Camera(eye, (0, 0, 0)))


def test_closed_mesh_back_meshlets_culled_by_cone():
    scene = _sphere_scene()
    fe = front_end(scene.draws, scene.camera, W, H, 1, BASE, "mesh")
    mesh = scene.draws[0].mesh
    ml = build(mesh.positions, mesh.indices, int(BASE["meshlet_max_verts"]), int(BASE["meshlet_max_prims"]))
    # every triangle of a cone-culled meshlet faces away from the eye (world space, exact)
    p = mesh.positions.astype(np.float64)[mesh.indices.astype(np.int64)]
    n = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    away = np.einsum("ij,ij->i", n, p[:, 0] - np.array(scene.camera.eye)) > 0
    culled = fe.verdict == CULLED_MESHLET
    assert away[culled].all()
    all_away = np.array([away[a:b].all() for a, b in zip(ml.prim_off[:-1], ml.prim_off[1:])])
    c = fe.counters
    assert c["geom.meshlets"] == ml.n
    assert c["geom.meshlets_culled.cone"] > 0.5 * all_away.sum()
    assert c["geom.meshlets_culled.cone"] <= all_away.sum()
    assert c["geom.prims_culled.meshlet"] == culled.sum()


def test_duplicated_vertices_equal_the_meshlet_tables():
    scene = _sphere_scene(cull=CullMode.NONE)    # no cone culling, all in view: all shaded
    mesh = scene.draws[0].mesh
    ml = build(mesh.positions, mesh.indices, int(BASE["meshlet_max_verts"]), int(BASE["meshlet_max_prims"]))
    c = front_end(scene.draws, scene.camera, W, H, 1, BASE, "mesh").counters
    dup = ml.vertex_counts().sum() - len(np.unique(ml.verts))
    assert dup > 0
    assert c["geom.mesh.duplicated_vertices"] == dup
    assert c["geom.vertices_shaded"] == ml.vertex_counts().sum()
    assert (ml.vertex_counts() <= BASE["meshlet_max_verts"]).all()
    assert (ml.prim_counts() <= BASE["meshlet_max_prims"]).all()
    # meshlets are contiguous runs: submission order kept, every triangle once
    assert ml.prim_off[0] == 0 and ml.prim_off[-1] == mesh.n_triangles
    local = ml.verts[ml.vert_off[np.repeat(np.arange(ml.n), ml.prim_counts())][:, None] + ml.corner]
    assert np.array_equal(local, mesh.indices)


def test_export_budget_overflow_falls_back():
    scene = _sphere_scene()
    small = {**BASE, "mesh_output_budget_bytes": 512}
    fe = front_end(scene.draws, scene.camera, W, H, 1, small, "mesh")
    assert fe.counters["geom.fallback.mesh_budget"] == 1
    assert fe.counters["geom.draws.legacy"] == 1 and fe.counters["geom.meshlets"] == 0


def test_every_primitive_is_accounted_for():
    for f in FRONTENDS:
        fe = front_end(get_scene("sponza").draws, get_scene("sponza").camera, W, H, 1, BASE, f)
        c = fe.counters
        culled = sum(c[f"geom.prims_culled.{r}"] for r in ("backface", "zero_area", "frustum", "small", "meshlet"))
        assert culled + (fe.verdict == gk.EMITTED).sum() == c["geom.prims_in"]


# ---- presets and API -------------------------------------------------------------------------

def test_every_preset_has_sourced_front_end_params():
    for name in PRESETS:      # every preset has a front-end record
        assert get_preset(name).frontend.frontend.value in FRONTENDS
    for name, params in PARAMS.items():
        for key, p in params.items():
            assert p.source and p.label in ("spec", "measured", "derived", "assumed"), (name, key)
    defaults = {n: get_preset(n).frontend.frontend.value for n in PRESETS}
    assert defaults["amd-gcn"] == defaults["apple-a11"] == "legacy"
    assert defaults["amd-rdna1"] == defaults["amd-rdna4"] == "ngg"


def test_mesh_by_default_where_a_draw_asks_and_the_preset_can():
    scene = get_scene("quad")
    d = scene.draws[0]
    asks = dataclasses.replace(scene, draws=[Draw(d.mesh, d.material, d.world_from_object,
                                                  dataclasses.replace(d.state, mesh_shader=True))])
    assert render(asks, "apple-m3", W, H).counters["geom.draws.mesh"] == 1
    assert render(asks, "apple-a11", W, H).counters["geom.draws.legacy"] == 1
    assert render(asks, "amd-rdna1", W, H).counters["geom.draws.ngg"] == 1


def test_unknown_front_end_is_one_clear_error():
    with pytest.raises(SceneError, match="unknown front end"):
        render("quad", "imr-baseline", W, H, frontend="tess")


def _subgroup_twin(idx, keep, max_verts, max_prims):
    """Subgroups in plain Python: distinct positions per subgroup, distinct survivors' vertices."""
    pos = attr = 0
    groups, cur, n_p = [], set(), 0
    members = []
    for p in range(len(idx) // 3):
        tri = set(idx[3 * p:3 * p + 3])
        if n_p and (len(cur | tri) > max_verts or n_p + 1 > max_prims):
            groups.append((cur, members))
            cur, n_p, members = set(), 0, []
        cur |= tri
        n_p += 1
        members.append(p)
    groups.append((cur, members))
    for verts, ps in groups:
        pos += len(verts)
        attr += len({v for p in ps if keep[p] for v in idx[3 * p:3 * p + 3]})
    return pos, attr, len(groups)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 30), min_size=3, max_size=150).map(lambda v: v[:len(v) // 3 * 3]),
       st.integers(3, 12), st.integers(1, 8), st.integers(0, 2 ** 31))
def test_ngg_subgroups_match_the_slow_twin(indices, max_verts, max_prims, seed):
    from renderer.frontend.ngg import subgroups
    idx = np.array(indices, np.int64)
    keep = np.random.default_rng(seed).random(len(idx) // 3) < 0.5
    pos, attr, n_sub = subgroups(idx, np.array([0, len(idx) // 3]), np.ones(1, np.bool_), keep,
                                 max_verts, max_prims)
    assert (pos.sum(), attr.sum(), n_sub[0]) == _subgroup_twin(list(idx), keep, max_verts, max_prims)


@pytest.mark.parametrize("builder", ["scan", "cluster"])
def test_meshlet_builders_cover_the_mesh_within_bounds(builder):
    mesh = get_scene("bunny").draws[0].mesh
    ml = build(mesh.positions, mesh.indices, 64, 126, builder)
    assert np.array_equal(np.sort(ml.order), np.arange(mesh.n_triangles))      # each once
    slot_meshlet = np.repeat(np.arange(ml.n), ml.prim_counts())
    rebuilt = ml.verts[ml.vert_off[slot_meshlet][:, None] + ml.corner]
    assert np.array_equal(rebuilt, mesh.indices[ml.order])
    assert ml.vertex_counts().max() <= 64 and ml.prim_counts().max() <= 126
    for m in range(0, ml.n, 97):       # no vertex listed twice in one meshlet
        v = ml.verts[ml.vert_off[m]:ml.vert_off[m + 1]]
        assert len(np.unique(v)) == len(v)
    if builder == "scan":
        assert np.array_equal(ml.order, np.arange(mesh.n_triangles))


@pytest.mark.parametrize("f", FRONTENDS)
def test_dram_index_and_vertex_bytes_are_the_planned_lines(f):
    """bunny's buffers fit the baseline's 4 MiB L2, so every index and vertex line the front end
    plans is read from DRAM exactly once: the bytes are the plan's distinct lines."""
    scene = get_scene("bunny")
    fe = front_end(scene.draws, scene.camera, W, H, 1, BASE, f)
    p = fe.fetch
    lb = int(get_preset("imr-baseline").memory.cache_line_bytes.value)
    first, last = p.addr // lb, (p.addr + p.nbytes - 1) // lb
    want = {}
    for s in ("index", "vertex"):
        sel = (p.op >> OP_STREAM_SHIFT) == STREAM[s]
        lines = np.unique(np.concatenate([np.arange(a, b + 1) for a, b in zip(first[sel], last[sel])]))
        want[s] = len(lines) * lb
    c = render(scene, "imr-baseline", W, H, frontend=f).counters
    assert c["mem.dram.read.index"] == want["index"] > 0
    assert c["mem.dram.read.vertex"] == want["vertex"] > 0


def test_mesh_primitives_culled_before_export_where_the_preset_says():
    scene = get_scene("spheres")
    rdna2 = get_preset("amd-rdna2").frontend.as_dict()
    c = front_end(scene.draws, scene.camera, W, H, 1, rdna2, "mesh").counters
    assert rdna2["mesh_prim_cull"] and c["geom.prims_culled.small"] > 0
    assert c["geom.cull_alu_ops"] == rdna2["cull_alu_ops"] * (c["geom.prims_in"] - c["geom.prims_culled.meshlet"])
    c = front_end(scene.draws, scene.camera, W, H, 1, BASE, "mesh").counters
    assert c["geom.prims_culled.small"] == 0 and c["geom.cull_alu_ops"] == 0


@pytest.mark.parametrize("samples", [1, 4])
def test_bbox_filter_matches_naive(samples):
    """The NGG small-primitive box filter (a kernel) against its slow twin, which looks for a
    sample position inside each box one pixel at a time; boxes small and large, negative too."""
    from renderer.frontend.ngg import bbox_misses_samples
    from renderer.geometry import SetupTriangles
    from renderer.geometry_kernels import SetupRows
    from tests.naive import bbox_misses_samples as naive

    rng = np.random.default_rng(samples)
    n = 3000
    base = rng.integers(-2000, 6000, (n, 1))
    x = base + rng.integers(0, 700, (n, 3)) * rng.integers(0, 2, (n, 1))
    y = base[::-1] + rng.integers(0, 700, (n, 3)) * rng.integers(0, 2, (n, 1))
    tris = SetupTriangles(*SetupRows.empty(n), draw=np.zeros(n, np.int64), prim=np.arange(n))._replace(
        x=x.astype(np.int64), y=y.astype(np.int64))
    view = RasterView.make(64, 64, samples)
    sel = np.arange(n)[::2]
    got = bbox_misses_samples(tris, sel, view)
    want = naive(tris.x[sel], tris.y[sel], view.sample_x, view.sample_y)
    assert 0 < want.sum() < len(sel)
    assert np.array_equal(got, want)


# ---- what the fetch units ask for -------------------------------------------------------------

def _plan_twin(n_prims, lidx, fetch_pos, fetch_attr, pos_base, attr_base, index_base, wave, shift):
    """The fetch rules spelled out, one primitive at a time: an index line once per draw, and a
    vertex line once per wave of `wave` fetching lanes of each instruction (positions, then
    attributes), asked for by the primitive whose lane first touches it."""
    out = [[] for _ in range(n_prims)]
    last_index = -1
    waves = [[0, set()], [0, set()]]           # per instruction: lanes filled, lines asked
    for p in range(n_prims):
        for i in range(3):
            line = (index_base + (p * 3 + i) * 4) >> shift
            if line != last_index:
                out[p].append(("index", line))
                last_index = line
        for g, (mask, base, size) in enumerate(((fetch_pos, pos_base, 12), (fetch_attr, attr_base, 20))):
            for i in range(3):
                if not mask[p * 3 + i]:
                    continue
                if waves[g][0] == wave:
                    waves[g] = [0, set()]
                waves[g][0] += 1
                a = base + lidx[p * 3 + i] * size
                for line in range(a >> shift, ((a + size - 1) >> shift) + 1):
                    if line not in waves[g][1]:
                        waves[g][1].add(line)
                        out[p].append(("vertex", line))
    return out


@pytest.mark.parametrize("wave", [1, 16, 32, 64, 128])
def test_fetch_plan_asks_each_line_once_per_wave(wave):
    """The plan builder against its twin on a random mesh with random shaded corners: index
    lines once per draw, vertex lines once per wave and instruction."""
    from renderer.frontend import _build_plan
    from renderer.memory_kernels import REGION_SHIFT
    rng = np.random.default_rng(wave)
    n, n_verts, shift = 300, 400, 7
    lidx = rng.integers(0, n_verts, 3 * n).astype(np.int64)
    fetch_pos = rng.random(3 * n) < 0.6
    fetch_attr = fetch_pos & (rng.random(3 * n) < 0.7)
    bases = [np.array([r << REGION_SHIFT], np.int64) for r in (1, 2, 3)]     # index, pos, attr
    none = np.zeros(0, np.int64)
    from renderer.frontend import fetch_kernels as fk
    args = (fk.Demand(np.array([0, n], np.int64), lidx, np.ones(n, np.bool_), fetch_pos, fetch_attr),
            fk.MeshletFetch(np.full(n, -1, np.int64), np.zeros(0, np.bool_), np.zeros(1, np.int64),
                            none, none, none, none, none),
            fk.Buffers(*bases, (4, 12, 20, 16, 4, 3), (STREAM["index"], STREAM["vertex"]), shift,
                       wave))
    plan = _build_plan(n, args)
    want = _plan_twin(n, lidx, fetch_pos, fetch_attr, int(bases[1][0]), int(bases[2][0]),
                      int(bases[0][0]), wave, shift)
    for p in range(n):
        got = [("index" if (op >> OP_STREAM_SHIFT) == STREAM["index"] else "vertex", a >> shift)
               for a, op in zip(plan.addr[plan.off[p]:plan.off[p + 1]],
                                plan.op[plan.off[p]:plan.off[p + 1]])]
        assert got == want[p], p
    assert (plan.nbytes == 1 << shift).all()


def test_onchip_index_bytes_are_the_index_buffer_lines():
    """The input assembler streams the index buffer: every index line reaches L2 once a frame,
    so the on-chip index bytes equal the DRAM ones (bunny's buffers fit the baseline's L2)."""
    c = render("bunny", "imr-baseline", W, H, frontend="legacy").counters
    n_indices = get_scene("bunny").draws[0].mesh.indices.size
    lb = int(get_preset("imr-baseline").memory.cache_line_bytes.value)
    assert c["mem.onchip.read.index"] == c["mem.dram.read.index"] == -(-n_indices * 4 // lb) * lb


def test_wider_waves_ask_for_fewer_vertex_lines():
    """Wave32 asks for more lines than Wave64 on the same vertices (seed 000 L804)."""
    scene = get_scene("dragon")
    lines = {}
    for wave in (16, 32, 64):
        params = {**BASE, "fetch_wave": wave}
        p = front_end(scene.draws, scene.camera, W, H, 1, params, "legacy").fetch
        lines[wave] = int(((p.op >> OP_STREAM_SHIFT) == STREAM["vertex"]).sum())
    assert lines[16] > lines[32] > lines[64] > 0


def test_fetch_wave_out_of_range_is_refused():
    scene = get_scene("quad")
    for wave in (0, 129):
        with pytest.raises(ValueError, match="fetch_wave"):
            front_end(scene.draws, scene.camera, W, H, 1, {**BASE, "fetch_wave": wave})


def test_small_work_runs_on_the_calling_thread_alone_and_then_as_before(monkeypatch):
    """workers.on_this_thread: numba's thread count is 1 inside when the work is small, what it
    was outside (and for work that is not small); the front end and binning give the same
    triangles, counters and bins whichever side of SMALL_TRIANGLES a pass falls."""
    n = numba.get_num_threads()
    with on_this_thread(True):
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == n
    with on_this_thread(False):
        assert numba.get_num_threads() == n
    scene = get_scene("city")
    runs = []
    for small in (0, 1 << 40):        # never small / always small
        monkeypatch.setattr(frontend, "SMALL_TRIANGLES", small)
        monkeypatch.setattr(binning, "SMALL_TRIANGLES", small)
        fe = front_end(scene.draws, scene.camera, W, H, 1, BASE, "ngg")
        runs.append((fe, binning.bin_triangles(fe.tris, W, H)))
    (a, bins_a), (b, bins_b) = runs
    assert dict(a.counters) == dict(b.counters)
    for x, y in zip((*a.tris, *bins_a), (*b.tris, *bins_b)):
        assert np.array_equal(x, y)
