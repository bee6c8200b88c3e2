"""Ray passes (pipelines.passes.raytrace) against Embree, the rasterizer, and each other."""
from __future__ import annotations

import numpy as np
import pytest

from pipelines.api import render
from pipelines.passes.raytrace import (MODES, SHADOW_PULL, SURFACE_EPS, camera_rays, combine, pixel_rays, trace,
                                world_from_depth)
from pipelines.presets import get_preset
from pipelines.presets.rt import PARAMS
from renderer.bvh import Triangles, build_bvh2, build_layout, collapse, trace_rays
from renderer.bvh.anyhit import any_hit_table
from renderer.bvh.layouts import PRIM_TRIS, PRIM_VERTS, bvh2_layout, bvh4_layout, bvh8_layout
from scenes.library import get_scene, scene_names
from scenes.model import SceneError

embreex = pytest.importorskip("embreex")


def embree_hits(tris: Triangles, rays: np.ndarray):
    from embreex import rtcore_scene
    from embreex.mesh_construction import TriangleMesh
    scene = rtcore_scene.EmbreeScene()
    TriangleMesh(scene, tris.v)
    out = scene.run(rays[:, 0:3].copy(), rays[:, 4:7].copy(), output=1)
    prim = np.where(out["geomID"] >= 0, out["primID"], -1).astype(np.int64)
    return prim, out["tfar"].astype(np.float64)


@pytest.mark.parametrize("name", ["bunny", "dragon", "sponza"])
def test_primary_hits_agree_with_embree(name):
    scene = get_scene(name)
    tris = Triangles.of_scene(scene)
    rays = camera_rays(scene.camera, 256, 192)
    rays[:, 3], rays[:, 7] = 0.0, np.inf          # Embree's defaults: tnear 0, no far plane
    lay = build_layout(tris, "bvh8")           # as the bench races it
    ours, _ = trace_rays(lay, rays)
    prim, t = embree_hits(tris, rays)
    same_mask = (ours.prim >= 0) == (prim >= 0)
    # A tie: both hit, different triangles, at the same distance (a shared edge or vertex, where
    # each picks one of the triangles there; ours the least id).
    both = (ours.prim >= 0) & (prim >= 0)
    tie = both & (ours.prim != prim) & (np.abs(ours.t - t) <= 1e-5 * np.abs(t))
    agree = same_mask & (~both | (ours.prim == prim) | tie)
    assert agree.mean() >= 0.9999, (name, int((~agree).sum()))
    assert both.mean() > 0.1
    assert np.allclose(ours.t[both], t[both], rtol=1e-5)


@pytest.mark.parametrize("name", ["dragon", "sponza"])
def test_shadow_occlusion_agrees_with_embree(name):
    scene = get_scene(name)
    tris = Triangles.of_scene(scene)
    depth = render(scene, "amd-rdna3", 96, 64).depth
    rt = trace(scene, "amd-rdna3", 96, 64, rays="shadow", depth=depth, memory=False, mode="bvh8-obb")
    p = world_from_depth(scene.camera, depth).reshape(-1, 3)
    drawn = np.isfinite(p[:, 0])
    origin = p[drawn] + (np.asarray(scene.camera.eye) - p[drawn]) * SHADOW_PULL
    light = np.asarray(scene.light.direction, np.float64)
    light /= np.linalg.norm(light)
    diag = np.linalg.norm(tris.v.reshape(-1, 3).max(0).astype(np.float64) - tris.v.reshape(-1, 3).min(0))
    start = origin + light * SURFACE_EPS * diag     # Embree's rays start at t = 0
    prim, _ = embree_hits(tris, np.concatenate([start, np.zeros((len(start), 1)),
                                                np.broadcast_to(light, start.shape),
                                                np.full((len(start), 1), np.inf)], 1).astype(np.float32))
    ours = rt.images["shadow"].reshape(-1)[drawn] == 0
    assert (ours == (prim >= 0)).mean() >= 0.9999
    assert 0 < ours.mean()


def _snap_explains(scene, w, h, px, py, covered):
    """True if some ray within 1/256 px of the pixel centre (the rasterizer's vertex snap) sees
    what the rasterizer saw there."""
    d = 1.0 / 256
    offs = [(dx, dy) for dx in (-d, 0, d) for dy in (-d, 0, d)]
    tris = Triangles.of_scene(scene)
    lay = bvh4_layout(collapse(build_bvh2(tris, 1), 4))
    xs = np.array([px + 0.5 + a for a, _ in offs])
    ys = np.array([py + 0.5 + b for _, b in offs])
    hits, _ = trace_rays(lay, pixel_rays(scene.camera, w, h, xs, ys), cull_back=True)
    return bool(((hits.prim >= 0) == covered).any())


@pytest.mark.parametrize("name", ["quad", "triangle", "overdraw", "bunny", "teapot", "spot"])
def test_primary_hit_mask_equals_raster_coverage(name):
    w, h = 160, 120
    scene = get_scene(name)
    rt = trace(scene, "imr-baseline", w, h, rays=("primary",), memory=False)
    covered = render(scene, "imr-baseline", w, h).depth < 1.0
    diff = np.argwhere(rt.images["hit"] != covered)
    # every mismatch is a pixel centre within the rasterizer's 1/256 px vertex snap of an edge
    for py, px in diff:
        assert _snap_explains(scene, w, h, px, py, covered[py, px]), (name, px, py)
    assert len(diff) <= 0.002 * w * h
    assert covered.any()


def test_every_layout_gives_the_same_hits_on_every_builtin_scene():
    for name in scene_names():
        scene = get_scene(name)
        tris = Triangles.of_scene(scene)
        rays = camera_rays(scene.camera, 40, 30)
        b1 = build_bvh2(tris, 1)
        w8 = collapse(b1, 8, PRIM_TRIS, PRIM_VERTS)
        lays = [bvh2_layout(build_bvh2(tris)), bvh4_layout(collapse(b1, 4)), bvh8_layout(w8),
                bvh8_layout(w8, obb=True), bvh8_layout(collapse(b1, 8))]
        ah = any_hit_table(scene.draws, tris)          # the alpha-tested scenes' any-hit
        ref, _ = trace_rays(lays[0], rays, cull_back=True, surfaces=ah)
        for lay in lays:
            for dual in ((False, True) if lay.name == "bvh4" else (False,)):
                hits, _ = trace_rays(lay, rays, cull_back=True, stack=8, dual=dual, surfaces=ah)
                assert np.array_equal(hits.prim, ref.prim), (name, lay.name, dual)
                assert np.array_equal(hits.t, ref.t), (name, lay.name, dual)


def test_shadow_first_hit_visits_fewer_nodes_than_closest_hit():
    kw = dict(rays=("shadow",), memory=False)
    first = trace("sponza", "amd-rdna3", 96, 64, **kw)
    closest = trace("sponza", "amd-rdna3", 96, 64, shadow_any_hit=False, **kw)
    assert np.array_equal(first.images["shadow"], closest.images["shadow"])
    assert 0 < first.counters["rt.shadow.nodes.box"] < closest.counters["rt.shadow.nodes.box"]
    assert first.counters["rt.shadow.steps"] < closest.counters["rt.shadow.steps"]
    assert (first.images["shadow"] == 0).mean() > 0.05      # sponza's floor is partly shadowed


def test_passes_count_rays_and_price_bvh_bytes_deterministically():
    a = trace("bunny", "amd-rdna4", 64, 48, ao_samples=2)
    b = trace("bunny", "amd-rdna4", 64, 48, ao_samples=2)
    assert a.counters == b.counters
    for k in a.images:
        assert np.array_equal(a.images[k], b.images[k])
    c = a.counters
    hits = int(a.images["hit"].sum())
    assert c["rt.primary.rays"] == 64 * 48 and c["rt.primary.hits"] == hits
    assert c["rt.ao.rays"] == 2 * hits
    assert c["rt.rays"] == c["rt.primary.rays"] + c["rt.shadow.rays"] + c["rt.ao.rays"]
    assert 0 < c["rt.obb_transforms"] <= c["rt.nodes.box"] + c["rt.nodes.refetch"]   # OBB nodes opened
    for s in ("bvh_node", "bvh_leaf"):
        dram = c[f"mem.dram.read.{s}"]
        assert 0 < dram == sum(c[f"rt.{p}.dram_read.{s}"] for p in ("primary", "shadow", "ao"))
    # the cache serves repeats: DRAM reads stay under the bytes the fetches asked for (lines of
    # 128 B hold one box node or two triangle nodes)
    assert c["mem.dram.read.bvh_node"] < c["rt.bytes.node"]
    rows = {r["pass"]: r for r in a.summary()}
    assert set(rows) == {"primary", "shadow", "ao"}
    assert rows["primary"]["rays"] == 64 * 48
    assert rows["ao"]["bytes"] == pytest.approx((c["rt.ao.bytes.node"] + c["rt.ao.bytes.leaf"]) / c["rt.ao.rays"])
    other = trace("bunny", "amd-rdna4", 64, 48, rays="ao", ao_samples=2, seed=1, memory=False)
    assert not np.array_equal(other.images["ao"], a.images["ao"])


def test_every_builtin_scene_traces_every_pass():
    """Every built-in scene through all three passes (`tilesim report --rt` does this): a pass
    with no rays to trace -- shadows where the last pass drew no depth, as the deferred scene's
    full-screen lighting pass -- counts zeros rather than failing."""
    empty = []
    for name in scene_names():
        r = trace(name, "amd-rdna4", 48, 27, rays="primary,shadow,ao", memory=False)
        assert r.counters["rt.primary.rays"] == 48 * 27
        if r.counters["rt.shadow.rays"] == 0:
            empty.append(name)
            assert r.counters["rt.shadow.steps"] == 0 and r.counters["rt.shadow.bytes.node"] == 0
            assert (r.images["shadow"] == 1.0).all()
    assert "deferred" in empty


def test_bvh4x2_is_rdna4s_fallback_with_the_same_hits():
    dual = trace("teapot", "amd-rdna4", 64, 48, rays=("primary",), mode="bvh4x2")
    plain = trace("teapot", "amd-rdna3", 64, 48, rays=("primary",))
    assert np.array_equal(dual.images["prim"], plain.images["prim"])
    assert dual.counters["rt.dual_steps"] > 0
    assert dual.counters["rt.steps"] < plain.counters["rt.steps"]
    assert dual.counters["rt.nodes.box"] >= plain.counters["rt.nodes.box"]
    with pytest.raises(SceneError):
        trace("teapot", "amd-rdna2", 8, 8, rays="primary", mode="bvh4x2")


def test_rdna4_packs_primitive_nodes_with_the_same_hits():
    # RDNA 4's builder groups up to 4 triangles into a primitive node (rt_prim_tris 4);
    # apple-m5's assumed builder gives each its own: the same hits, fewer leaf fetches grouped
    packed = trace("teapot", "amd-rdna4", 64, 48, rays=("primary",), mode="bvh8")
    single = trace("teapot", "apple-m5", 64, 48, rays=("primary",))
    assert get_preset("amd-rdna4").rt.rt_prim_tris.value == 4 and get_preset("apple-m5").rt.rt_prim_tris.value == 1
    assert np.array_equal(packed.images["prim"], single.images["prim"])
    assert packed.counters["rt.tests.tri"] > single.counters["rt.tests.tri"]
    assert packed.counters["rt.nodes.leaf"] < single.counters["rt.nodes.leaf"]


def test_modes_and_bad_input():
    assert set(MODES) >= {"bvh2", "bvh4", "bvh8", "bvh8-obb", "bvh4x2"}
    with pytest.raises(SceneError):
        trace("teapot", "amd-rdna3", 8, 8, rays="reflections")
    with pytest.raises(SceneError):
        trace("teapot", "amd-rdna3", 8, 8, mode="bvh16")
    with pytest.raises(SceneError):
        trace("teapot", "amd-rdna3", 8, 8, rays="shadow", depth=np.ones((4, 4), np.float32))
    with pytest.raises(SceneError):
        trace("teapot", "amd-rdna3", 0, 8)


def test_combine_darkens_the_raster_image():
    r = render("sponza", "amd-rdna3", 64, 48)
    rt = trace("sponza", "amd-rdna3", 64, 48, rays=("shadow", "ao"), depth=r.depth, memory=False,
               ao_samples=2)
    out = combine(r.color, rt)
    assert out.shape == r.color.shape and (out[..., :3] <= r.color[..., :3]).all()
    assert (out[..., :3] < r.color[..., :3]).any()


def test_rt_params_have_sources_and_labels():
    for name in ("amd-rdna2", "amd-rdna3", "amd-rdna4", "apple-m3", "apple-m5"):
        p = PARAMS[name]
        for key in ("rt_layout", "rt_box_tests_per_clk", "rt_tri_tests_per_clk", "rt_stack_entries",
                    "rt_dual_fallback", "rt_obb", "rt_box_sort"):
            assert getattr(p, key).source and getattr(p, key).label in ("spec", "measured", "derived", "assumed")
        assert p.rt_layout.value in MODES
    assert PARAMS["apple-m3"].rt_layout.label == "assumed"     # Apple's layout is not public
    assert PARAMS["amd-rdna4"].rt_box_tests_per_clk.value == 8
    assert [PARAMS[p].rt_box_sort.value for p in ("amd-rdna2", "amd-rdna3", "apple-m3")] == [
        "closest", "largest-or-midpoint", "closest"]
    assert get_preset("imr-baseline").rt.rt_params_from.value == "amd-rdna3"
    assert get_preset("amd-rdna2").rt.rt_params_from is None


def test_presets_share_what_no_preset_changes_and_it_equals_a_fresh_trace():
    """A second preset's trace of the same frame takes the first's primary image and depth (the
    same arrays: its hits are the same), and everything it reports equals a trace made with
    nothing kept; a frame from elsewhere (another camera) gets its own."""
    import dataclasses

    import pipelines.passes.raytrace as R
    from scenes.library import get_scene

    R._FRAME.clear()
    a = trace("spheres", "amd-rdna3", 64, 48)           # bvh4 layout
    b = trace("spheres", "apple-m3", 64, 48)            # bvh8, a spilling stack
    assert b.images["primary"] is a.images["primary"] and b.images["depth"] is a.images["depth"]
    R._FRAME.clear()
    fresh = trace("spheres", "apple-m3", 64, 48)
    assert fresh.images["primary"] is not b.images["primary"]
    for k in b.images:
        assert np.array_equal(fresh.images[k], b.images[k]), k
    assert dict(fresh.counters) == dict(b.counters)
    sc = get_scene("spheres")
    moved = dataclasses.replace(sc, camera=dataclasses.replace(
        sc.camera, eye=tuple(e + 0.5 for e in sc.camera.eye)))
    c = trace(moved, "apple-m3", 64, 48)
    assert not np.array_equal(c.images["primary"], b.images["primary"])
