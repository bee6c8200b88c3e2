"""Any-hit on non-opaque triangles and the ray flags (issue 28 point 2): an alpha-tested quad
with a checkerboard mask lets exactly the rays through that the mask says, in every layout and
traversal kernel and in the brute-force twin; the counters of it are exact."""
from __future__ import annotations

import numpy as np
import pytest

from renderer.bvh import Triangles, make_rays, trace_rays
from renderer.bvh.anyhit import any_hit_table
from renderer.bvh.traverse import brute_force
from renderer.bvh import traverse_kernels as tk
from renderer.shade import RGBA8_UNIT
from scenes.model import AlphaMode, Draw, Material, MipFilter, Texture, Wrap
from scenes.procedural import quad

from tests.test_bvh import all_layouts

N = 8                 # checkerboard texels a side; the quad spans N x N units, one per texel


def checker() -> np.ndarray:
    """(N, N) bool: the texels whose alpha is 255 (row j, column i: opaque where i + j is even)."""
    j, i = np.mgrid[0:N, 0:N]
    return (i + j) % 2 == 0


def mask_scene(mode=AlphaMode.MASK, textured=True):
    """Draw 0: an N x N quad at z = 0 (uv 0..1 over it, row 0 at the top), alpha-tested (or
    blended) with the checkerboard, clamped, level 0 only; draw 1: an opaque quad behind it at
    z = -1. Returns (draws, Triangles)."""
    rgba = np.full((N, N, 4), 255, np.uint8)
    rgba[..., 3] = np.where(checker(), 255, 0)
    tex = Texture("checker", rgba, Wrap.CLAMP, Wrap.CLAMP, MipFilter.NONE)
    front = Draw(quad(N, N, "mask"), Material("mask", texture=tex if textured else None,
                                              alpha_mode=mode, alpha_cutoff=0.5, double_sided=True),
                 np.diag([1.0, 1.0, 1.0, 1.0]) + np.array([[0, 0, 0, N / 2], [0, 0, 0, N / 2],
                                                          [0, 0, 0, 0], [0, 0, 0, 0]]))
    back = Draw(quad(4 * N, 4 * N, "wall"), Material("wall", double_sided=True),
                np.array([[1, 0, 0, N / 2], [0, 1, 0, N / 2], [0, 0, 1, -1], [0, 0, 0, 1.0]]))
    draws = [front, back]
    return draws, Triangles.of_scene(type("S", (), {"draws": draws, "name": "mask"})())


def texel_rays(z0: float, dz: float):
    """One ray per texel, at a quarter texel right of its centre (off both diagonals of the
    quad, and bilinear weights 3/4 on the texel, 1/4 on its right neighbour), along z.
    Returns rays and the (i, j) texel of each (world y up, texel row j down)."""
    j, i = np.mgrid[0:N, 0:N]
    x = i.ravel() + 0.75
    y = N - (j.ravel() + 0.5)
    o = np.stack([x, y, np.full(x.shape, z0)], axis=1)
    d = np.tile([0.0, 0.0, dz], (len(x), 1))
    return make_rays(o, d), i.ravel(), j.ravel()


def traced(lay, rays, ah, **kw):
    """Every kernel's answer: fast (no records), recorded, and on bvh4 the BVH4x2 steps."""
    out = [trace_rays(lay, rays, surfaces=ah, **kw), trace_rays(lay, rays, surfaces=ah, record=True, **kw)]
    if lay.name == "bvh4":
        out.append(trace_rays(lay, rays, surfaces=ah, dual=True, **kw))
    return [h for h, _ in out]


def test_checkerboard_mask_lets_exactly_its_holes_through():
    draws, tris = mask_scene()
    ah = any_hit_table(draws, tris, RGBA8_UNIT)
    rays, i, j = texel_rays(5.0, -1.0)
    solid = checker()[j, i]
    for lay in all_layouts(tris):
        for hits in traced(lay, rays, ah):
            on_mask = tris.geometry[hits.prim] == 0
            assert (hits.prim >= 0).all()
            assert np.array_equal(on_mask, solid), lay.name
            assert np.allclose(hits.t, np.where(solid, 5.0, 6.0))
            c = hits.counts
            # exactly one any-hit a ray (its one candidate on the mask), ignored where a hole;
            # the filter's 2x2 texels (i..i+1, j..j+1; the second row at weight 0) lie in one
            # 4x4 RGBA8 block (64 B) but where i or j is 3 (two blocks; four at both)
            assert (c[:, tk.C_ANYHIT] == 1).all()
            assert np.array_equal(c[:, tk.C_ANYHIT_IGNORED], (~solid).astype(np.int32))
            assert np.array_equal(c[:, tk.C_TEXEL_BYTES], 64 * np.where(i == 3, 2, 1) * np.where(j == 3, 2, 1))
    lay = all_layouts(tris)[0]
    want_p, want_t = brute_force(lay, rays, surfaces=ah)
    hits = trace_rays(lay, rays, surfaces=ah)[0]
    assert np.array_equal(want_p, hits.prim) and np.array_equal(want_t, hits.t)


def test_shadow_rays_pass_through_the_holes_and_end_at_the_first_hit():
    draws, tris = mask_scene()
    ah = any_hit_table(draws, tris, RGBA8_UNIT)
    rays, i, j = texel_rays(-0.5, -1.0)         # between the two quads: only the wall ahead
    up, _, _ = texel_rays(-0.5, 1.0)            # from the wall's side up through the mask
    up[:, tk.R_TMAX] = 10.0
    solid = checker()[j, i]
    for lay in all_layouts(tris):
        for hits in traced(lay, up, ah, any_hit=True):
            assert np.array_equal(hits.prim >= 0, solid), lay.name
        for hits in traced(lay, rays, ah, any_hit=True):
            assert (tris.geometry[hits.prim] == 1).all()
            assert (hits.counts[:, tk.C_ANYHIT] == 0).all()


def test_ray_flags_force_opaque_and_cull_non_opaque():
    draws, tris = mask_scene()
    ah = any_hit_table(draws, tris, RGBA8_UNIT)
    rays, _, _ = texel_rays(5.0, -1.0)
    for lay in all_layouts(tris):
        for hits in traced(lay, rays, ah, opaque=True):
            assert (tris.geometry[hits.prim] == 0).all()
            assert (hits.counts[:, tk.C_ANYHIT] == 0).all()
        for hits in traced(lay, rays, ah, cull_non_opaque=True):
            assert (tris.geometry[hits.prim] == 1).all()
            assert (hits.counts[:, tk.C_CULLED] >= 1).all() and (hits.counts[:, tk.C_ANYHIT] == 0).all()
    with pytest.raises(ValueError, match="any-hit table"):
        trace_rays(all_layouts(tris)[0], rays)
    assert (trace_rays(all_layouts(tris)[0], rays, opaque=True)[0].prim >= 0).all()


def test_blended_surfaces_stop_primary_rays_and_not_shadow_rays():
    draws, tris = mask_scene(AlphaMode.BLEND)
    ah = any_hit_table(draws, tris, RGBA8_UNIT)
    rays, _, _ = texel_rays(5.0, -1.0)
    for lay in all_layouts(tris):
        for hits in traced(lay, rays, ah):
            assert (tris.geometry[hits.prim] == 0).all()        # the checker's holes too
            assert (hits.counts[:, tk.C_TEXEL_BYTES] == 0).all()
        for hits in traced(lay, rays, ah, any_hit=True, ignore_blend=True):
            assert (tris.geometry[hits.prim] == 1).all()
            assert (hits.counts[:, tk.C_ANYHIT_IGNORED] == 1).all()


def test_untextured_mask_tests_the_base_alpha():
    draws, tris = mask_scene(textured=False)      # base alpha 1 >= 0.5: every ray stops
    ah = any_hit_table(draws, tris, RGBA8_UNIT)
    rays, _, _ = texel_rays(5.0, -1.0)
    for lay in all_layouts(tris):
        hits = trace_rays(lay, rays, surfaces=ah)[0]
        assert (tris.geometry[hits.prim] == 0).all() and (hits.counts[:, tk.C_TEXEL_BYTES] == 0).all()


def test_alpha_modes_agree_with_the_scene_model():
    from renderer.bvh.builder import ALPHA_BLEND, ALPHA_MASK
    assert (ALPHA_MASK, ALPHA_BLEND) == (int(AlphaMode.MASK), int(AlphaMode.BLEND))


def test_cull_front_and_back_faces():
    v = np.array([[[0, 0, 0], [1, 0, 0], [0, 1, 0]]], np.float32)       # counter-clockwise from +z
    tris = Triangles.of_array(np.concatenate([v, v[:, ::-1] + np.float32([0, 0, -1])]))
    rays = make_rays([[0.2, 0.2, 5.0]], [[0, 0, -1.0]])
    for lay in all_layouts(tris):
        assert trace_rays(lay, rays)[0].prim[0] == 0
        assert trace_rays(lay, rays, cull_front=True)[0].prim[0] == 1       # the clockwise one
        hits = trace_rays(lay, rays, cull_back=True)[0]
        assert hits.prim[0] == 0
        assert trace_rays(lay, rays, cull_back=True, cull_front=True)[0].prim[0] == -1


def test_first_hit_is_never_nearer_than_closest_nor_a_different_verdict():
    """On a cloud of alpha-tested quads: terminate-on-first-hit finds a hit exactly where the
    closest-hit search does, never a nearer one, and never more any-hit calls."""
    rng = np.random.default_rng(7)
    draws, _ = mask_scene()
    many = []
    for k in range(40):
        m = np.eye(4)
        m[:3, :3] = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        m[:3, 3] = rng.uniform(-6, 6, 3)
        many.append(Draw(draws[0].mesh, draws[0].material, m * np.array([[0.3], [0.3], [0.3], [1]])))
    tris = Triangles.of_scene(type("S", (), {"draws": many, "name": "cloud"})())
    ah = any_hit_table(many, tris, RGBA8_UNIT)
    o = rng.uniform(-8, 8, (3000, 3))
    rays = make_rays(o, rng.uniform(-2, 2, (3000, 3)) - o)
    want_p, want_t = brute_force(all_layouts(tris)[0], rays, surfaces=ah)
    assert 100 < (want_p >= 0).sum() < 2900
    for lay in all_layouts(tris):
        closest = trace_rays(lay, rays, surfaces=ah)[0]
        assert np.array_equal(closest.prim, want_p) and np.array_equal(closest.t, want_t), lay.name
        first = trace_rays(lay, rays, surfaces=ah, any_hit=True)[0]
        assert np.array_equal(first.prim >= 0, want_p >= 0)
        assert (first.t[want_p >= 0] >= want_t[want_p >= 0]).all()
        assert (first.counts[:, tk.C_ANYHIT] <= closest.counts[:, tk.C_ANYHIT]).all()


def test_foliage_shadows_run_any_hit_in_a_frame_and_the_viewer_says_so():
    """Through pipelines.frame.run (the CLI's and the viewer's path): the leaves' alpha test
    runs for shadow rays, lets some through, and the viewer's strip shows the counts."""
    from pipelines.frame import Settings, run
    from pipelines.presets import get_preset
    from scenes.library import get_scene
    from viewer import hud
    f = run(get_scene("foliage"), get_preset("amd-rdna3"), Settings(64, 48, rays=("shadow",)))
    c = f.counters
    assert 0 < c["rt.shadow.anyhit.ignored"] < c["rt.shadow.anyhit"]
    assert c["rt.shadow.bytes.texture"] > 0 and c["mem.dram.read.texture"] > 0
    fig = hud.figures(f)
    assert (fig["rt_anyhit"], fig["rt_anyhit_through"]) == (c["rt.anyhit"], c["rt.anyhit.ignored"])
    text = "".join(t for line in hud.strip_lines(fig, None, "") for t, _ in line)
    assert f"{c['rt.anyhit']:,} any-hits ({c['rt.anyhit.ignored']:,} let through)" in text
