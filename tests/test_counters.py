"""Analytic scenes with exact counter values (DESIGN.md §6)."""
from __future__ import annotations

import numpy as np
import pytest

from pipelines import render
from renderer.formats import FORMATS
from scenes.library import get_scene
from scenes.model import Attachment, LoadAction, RenderPass, StoreAction

W, H = 256, 128          # colour + depth = 256 KiB: fits the baseline's 4 MiB L2, so every
                         # DRAM byte below is a compulsory one and the counts are exact
RGBA8 = FORMATS["rgba8"].bytes_per_sample
D32F = FORMATS["d32f"].bytes_per_sample


def test_fullscreen_quad_fragments_and_bytes():
    c = render("quad", "imr-baseline", W, H, store_depth=True).counters
    assert c["raster.fragments"] == W * H
    assert c["raster.shaded"] == W * H
    assert c["raster.written"] == W * H
    assert c["raster.pixels_covered"] == W * H
    # Quads on the diagonal are shaded by both triangles; every lane of a shaded quad either
    # has a fragment or is a helper.
    assert W * H // 4 < c["raster.quads"] <= W * H // 4 + max(W, H) // 2 * 2
    assert c["raster.helper_lanes"] == 4 * c["raster.quads"] - c["raster.fragments"]
    assert c["mem.dram.write.color"] == W * H * RGBA8
    assert c["mem.dram.write.depth"] == W * H * D32F
    assert c["mem.dram.read.color"] == 0 and c["mem.dram.read.depth"] == 0
    assert c["geom.prims_in"] == 2 and c["geom.setup_triangles"] == 2
    # as applications declare it, depth no later pass reads is not stored
    assert render("quad", "imr-baseline", W, H).counters["mem.dram.write.depth"] == 0


def test_fullscreen_quad_msaa_stores_samples_and_resolve():
    c = render("quad", "imr-baseline", W, H, samples=4, store_depth=True).counters
    assert c["raster.samples_covered"] == W * H * 4
    assert c["mem.dram.write.color"] == W * H * RGBA8 * 4
    assert c["mem.dram.write.depth"] == W * H * D32F * 4
    assert c["mem.dram.write.resolve"] == W * H * RGBA8


@pytest.mark.parametrize("n", [1, 4, 9])
def test_layers_front_to_back_shade_once(n):
    c = render(get_scene(f"overdraw:{n}:ftb"), "imr-baseline", W, H).counters
    assert c["raster.fragments"] == n * W * H
    assert c["raster.shaded"] == W * H
    assert c["raster.early_z_killed"] == (n - 1) * W * H


@pytest.mark.parametrize("n", [1, 4, 9])
def test_layers_back_to_front_shade_every_layer(n):
    r = render(get_scene(f"overdraw:{n}:btf"), "imr-baseline", W, H)
    assert r.counters["raster.shaded"] == n * W * H
    assert r.counters["raster.early_z_killed"] == 0
    assert r.derived()["overdraw"] == n
    assert (r.pixel_maps["overdraw"] == n).all()


def test_shuffled_layers_between_the_two_orders():
    n = 8
    shaded = render(get_scene(f"overdraw:{n}:shuffled"), "imr-baseline", W, H).counters["raster.shaded"]
    assert W * H < shaded < n * W * H
    assert shaded % (W * H) == 0       # every layer is full-screen: each is all in or all out


def test_tile_map_accounts_for_surface_and_texture_traffic():
    r = render("spot", "imr-baseline", W, H)
    c = r.counters
    untiled = sum(c.dram_bytes(stream=s) for s in ("index", "vertex"))   # the front end's
    assert int(r.tile_maps["dram_bytes"].sum()) == c.dram_bytes() - untiled
    assert c["mem.dram.read.texture"] > 0


def test_alpha_test_runs_late_z_and_discards():
    c = render("foliage", "imr-baseline", W, H).counters
    assert c["raster.alpha_killed"] > 0
    assert c["raster.shaded"] == c["raster.fragments"] - c["raster.early_z_killed"]
    assert c["raster.written"] == c["raster.shaded"] - c["raster.alpha_killed"] - c["raster.late_z_killed"]


def test_blended_particles_blend_in_order():
    c = render("particles", "imr-baseline", W, H).counters
    assert c["raster.blended"] > 0
    assert c["mem.onchip.read.color"] > 0      # blending reads the destination


def _with_depth_store(scene, store, memoryless=False, color_load=LoadAction.CLEAR):
    def passes(s, samples):
        color = Attachment("color", "rgba8", color_load, StoreAction.STORE, s.background)
        depth = Attachment("depth", "d32f", LoadAction.CLEAR, store, (1.0,), memoryless)
        return [RenderPass("main", color, depth, list(s.draws), samples)]
    import dataclasses
    return dataclasses.replace(scene, passes=passes)


def test_depth_dont_care_and_memoryless_write_no_depth():
    quad = get_scene("quad")
    for scene in (_with_depth_store(quad, StoreAction.DONT_CARE),
                  _with_depth_store(quad, StoreAction.STORE, memoryless=True)):
        c = render(scene, "imr-baseline", W, H).counters
        assert c["mem.dram.write.depth"] == 0
        assert c["mem.dram.write.color"] == W * H * RGBA8


def test_color_load_reads_the_surface_once():
    c = render(_with_depth_store(get_scene("quad"), StoreAction.STORE, color_load=LoadAction.LOAD),
               "imr-baseline", W, H).counters
    assert c["mem.dram.read.color"] == 0      # a full-screen opaque quad never reads colour
    c = render(_with_depth_store(get_scene("particles"), StoreAction.STORE, color_load=LoadAction.LOAD),
               "imr-baseline", W, H).counters
    assert 0 < c["mem.dram.read.color"] <= W * H * RGBA8


def test_bigger_target_than_l2_spills():
    """At 1920x1080 colour + depth (16.6 MB) exceed the 4 MiB L2: the clear is written back
    before the quad overwrites it, so DRAM sees more than the compulsory bytes."""
    w, h = 1920, 1080
    c = render("quad", "imr-baseline", w, h).counters
    assert c["mem.dram.write.color"] > w * h * RGBA8
    assert c["mem.dram.write.depth"] + c["mem.dram.read.depth"] > w * h * D32F


def test_deterministic_counters():
    a = render("spheres", "imr-baseline", 320, 180)
    b = render("spheres", "imr-baseline", 320, 180)
    assert a.counters == b.counters
    assert np.array_equal(a.color, b.color)


# ---- counter names ---------------------------------------------------------------------------

def test_a_misspelt_counter_name_raises_and_an_absent_one_reads_zero():
    from renderer.counters import Counters, is_counter
    c = Counters({"raster.shaded": 5})
    assert c["raster.shaded"] == 5
    assert c["raster.early_z_killed"] == 0                 # a counter nothing counted (sparse)
    assert c["mem.dram.read.bvh_node"] == 0 and c["rt.shadow.nodes.box"] == 0
    for typo in ("raster.shade", "mem.dram.read.colour", "rt.primry.rays", "geom.prims_culled.smal",
                 "tile.fallback.shrink", "dsbr.batch"):
        assert not is_counter(typo)
        with pytest.raises(KeyError, match="not a counter"):
            c[typo]                                                          # noqa: B018
    with pytest.raises(KeyError):
        c.add("raster.shade", 1)                            # nor can one be counted
    assert (c + Counters({"raster.shaded": 1}))["raster.shaded"] == 6


def test_every_counter_a_frame_writes_is_registered():
    """The registry (renderer.counters._grammar) knows every name the architectures, the front
    ends, the post chain and the ray passes write."""
    from pipelines.frame import Settings, run
    from renderer.counters import is_counter
    names = set()
    for scene, preset, settings in (("postchain", "amd-rdna2", Settings(96, 64, rays=("primary", "shadow", "ao"))),
                                    ("foliage", "apple-m3", Settings(96, 64, samples=4)),
                                    ("spheres", "amd-rdna4", Settings(96, 64, frontend="mesh")),
                                    ("sponza", "amd-gcn", Settings(96, 64))):
        f = run(scene, preset, settings)
        names |= set(f.counters)
        for p in f.passes:
            names |= set(p.counters)
    assert names and not [n for n in names if not is_counter(n)]


def test_ray_passes_agree_with_the_scenes():
    from renderer.counters import RAY_PASSES
    from scenes.model import RAY_PASSES as SCENE_RAY_PASSES
    assert RAY_PASSES == SCENE_RAY_PASSES
