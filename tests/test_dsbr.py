"""DSBR (issue 4, first part): the IMR's image, Mesa's bin sizes, batches as the driver cuts them."""
from __future__ import annotations


import numpy as np
import pytest

from pipelines import render
from pipelines.arch.dsbr import bin_size, gfx9_bin_size
from pipelines.presets import AMD_GCN, AMD_RDNA2, AMD_RDNA4, AMD_VEGA, Param
from scenes.library import get_scene, scene_names
from scenes.model import AlphaMode, Camera, CullMode, Draw, DrawState, Material, Mesh, Scene

W, H = 160, 96
NO_BINNING = AMD_RDNA2.with_params(binning=Param(False, "test", "assumed"))


@pytest.mark.parametrize("preset", [AMD_RDNA2, NO_BINNING, AMD_VEGA, AMD_GCN, AMD_RDNA4],
                         ids=["binning", "no-binning", "vega", "gcn", "rdna4"])
@pytest.mark.parametrize("name", scene_names())
def test_same_image_as_imr(name, preset):
    a = render(name, "imr-baseline", W, H)
    b = render(name, preset, W, H)
    assert np.array_equal(a.color, b.color) and np.array_equal(a.depth, b.depth)


@pytest.mark.parametrize("rbs, pipes, bpe, samples, depth, want", [
    # Mesa radeonsi gfx10_get_bin_sizes, worked by hand:
    # colour tags 31 x 1024 B x 16 pipes = 507,904 B / 4 B = 2^16.9 px -> 2^16 = 256 x 256;
    # depth tags 312 x 64 B x 16 = 319,488 B / 5 = 2^15.96 -> 2^15 = 256 x 128 (width rounded up)
    (16, 16, 4, 1, True, (256, 128)),
    # 4x: colour cost 4 B x 2 = 8 -> 2^15; FMASK 44 x 256 x 16 / 4 = 2^15.5 -> not smaller;
    # depth 5 x 4 = 20 -> 2^13.96 -> 2^13 = 128 x 64
    (16, 16, 4, 4, True, (128, 64)),
    # no depth target: the depth bin is 512 x 512, so the colour bin (256 x 256) wins
    (16, 16, 4, 1, False, (256, 256)),
    # 4 RBs on 16 channels: colour (31 x 4 // 16 = 7) x 16,384 / 4 = 2^14.8 -> 128 x 128;
    # depth (312 x 4 // 16 = 78) x 1,024 / 5 = 2^13.96 -> 128 x 64
    (4, 16, 4, 1, True, (128, 64)),
])
def test_bin_sizes_follow_mesa(rbs, pipes, bpe, samples, depth, want):
    assert bin_size(rbs, pipes, bpe, samples, depth=depth, has_depth_target=depth) == want


def test_gfx12_minimum_bin_is_128x128():
    # 16 RBs at 4x: 128 x 64 by the formula, raised to GFX12's 128 x 128 minimum
    assert bin_size(16, 16, 4, 4, depth=True, min_bin=(128, 128)) == (128, 128)
    c = render("quad", AMD_RDNA4, W, H, 4).counters
    assert (c["dsbr.bin_width"], c["dsbr.bin_height"]) == (128, 128)


def _triangles(n, materials):
    """n small triangles in a row, one draw per material (in order)."""
    xs = np.linspace(-0.9, 0.8, n)
    pos = np.array([[[x, -0.1, 0], [x + 0.05, -0.1, 0], [x, 0.1, 0]] for x in xs], np.float32)
    per = n // len(materials)
    draws = []
    for k, m in enumerate(materials):
        chunk = pos[k * per:(k + 1) * per].reshape(-1, 3)
        mesh = Mesh(f"m{k}", chunk, np.arange(len(chunk), dtype=np.uint32).reshape(-1, 3))
        draws.append(Draw(mesh, m, state=DrawState(cull=CullMode.NONE, blend=m.alpha_mode == AlphaMode.BLEND,
                                                   depth_write=m.alpha_mode != AlphaMode.BLEND)))
    return Scene("tris", "", draws, Camera((0, 0, 1.2), (0, 0, 0), near=0.5, far=3.0))


def test_batch_of_64_primitives_breaks_at_63():
    c = render(_triangles(64, [Material("a", unlit=True)]), AMD_RDNA2, W, H).counters
    assert c["dsbr.batches"] == 2
    assert c["dsbr.batch_break.primitive_limit"] == 1


def test_parameter_cache_budget_breaks_a_batch():
    """Disjoint triangles bring 3 new vertices of 2 attributes each (normal, uv): 6 attribute
    slots per primitive. A budget of 3 groups of 16 holds 8 primitives (48 slots); the ninth
    opens a new batch. The presets' budgets (64 and 341 groups) never bind before 63 primitives:
    63 x 6 = 378 slots = 24 groups."""
    tight = AMD_RDNA2.with_params(max_alloc_count=Param(3, "test", "assumed"))
    c = render(_triangles(24, [Material("a", unlit=True)]), tight, W, H).counters
    assert c["dsbr.batches"] == 3 and c["dsbr.batch_break.alloc_budget"] == 2
    c = render(_triangles(64, [Material("a", unlit=True)]), AMD_RDNA2, W, H).counters
    assert c["dsbr.batch_break.alloc_budget"] == 0


def test_state_change_breaks_a_batch():
    scene = _triangles(20, [Material("a", unlit=True),
                            Material("b", (1, 1, 1, 0.5), alpha_mode=AlphaMode.BLEND, unlit=True)])
    c = render(scene, AMD_RDNA2, W, H).counters
    assert c["dsbr.batches"] == 2 and c["dsbr.batch_break.state_change"] == 1
    assert c["dsbr.batch_break.primitive_limit"] == 0


def test_driver_turns_binning_off_for_alpha_test_with_depth_writes():
    foliage = get_scene("foliage")
    c = render(foliage, AMD_RDNA2, W, H).counters
    masked = sum(d.material.alpha_mode == AlphaMode.MASK for d in foliage.draws)
    assert c["dsbr.fallback.ps_kill_depth_write"] == masked > 0
    assert render(foliage, NO_BINNING, W, H).counters["dsbr.fallback.binning_off"] == len(foliage.draws)


def test_binning_keeps_overdraw_in_the_rop_caches():
    """8 full-screen layers in one batch at 1280x720: colour and depth of a 256x128 bin stay in
    the ROP and L2 caches across the layers, so DRAM sees a fraction of the IMR's traffic."""
    scene = get_scene("overdraw:8:btf")
    on = render(scene, AMD_RDNA2, 1280, 720).counters.dram_bytes()
    off = render(scene, NO_BINNING, 1280, 720).counters.dram_bytes()
    assert on < 0.5 * off


def test_hierarchical_z_rejects_whole_blocks_behind_an_occluder():
    """Layers front to back: the first covers the screen, and every block of every layer behind
    it is rejected by HiZ before a single per-pixel test."""
    one_hidden = render(get_scene("overdraw:2:ftb"), NO_BINNING, W, H).counters["raster.hiz_rejected_blocks"]
    assert one_hidden > 0
    for n in (4, 7):
        c = render(get_scene(f"overdraw:{n}:ftb"), NO_BINNING, W, H).counters
        assert c["raster.fragments"] == W * H            # only the front layer reaches pixels
        assert c["raster.early_z_killed"] == 0
        assert c["raster.shaded"] == W * H
        assert c["raster.hiz_rejected_blocks"] == (n - 1) * one_hidden
        assert c["mem.onchip.read.meta"] > 0           # HTILE words read through the DB cache
    # back to front nothing can be rejected
    assert render(get_scene("overdraw:4:btf"), NO_BINNING, W, H).counters["raster.hiz_rejected_blocks"] == 0


def test_vega_bin_sizes_from_the_gfx9_tables():
    # colour key 4 B -> row [3, 5): 64 x 512; depth key 4 x 5 = 20 -> row [13, 25): 64 x 512;
    # equal areas: the depth bin is taken
    assert gfx9_bin_size(4, 1, True) == (64, 512)
    # 4x: colour key 8 -> [5, 9): 32 x 512; depth key 80 -> [49, 97): 32 x 256 (smaller area)
    assert gfx9_bin_size(4, 4, True) == (32, 256)
    # the preset runs unbinned as Mesa does on a discrete Vega 10; the tables are its what-if
    assert AMD_VEGA.binning.binning.value is False
    assert render("quad", AMD_VEGA, W, H, 4).counters["dsbr.batches_binned"] == 0
    binned = AMD_VEGA.with_params(binning=Param(True, "test: the what-if", "assumed"))
    c = render("quad", binned, W, H, 4).counters
    assert c["dsbr.bin_width"] == 64 and c["dsbr.bin_height"] == 256 and c["dsbr.bin_widened"] == 1


def test_gcn_render_backends_bypass_l2():
    """GCN 1.0's RBs are not L2 clients: the cleared depth the quad tests misses the small ROP
    depth cache and comes back from DRAM, where an L2 client finds it in L2. The frame's depth
    (512 x 256 x 4 B = 512 KiB) outgrows Tahiti's ROP depth caches (8 RBs x 19.5 KiB)."""
    w, h = 512, 256
    assert render("quad", "imr-baseline", w, h).counters["mem.dram.read.depth"] == 0
    assert render("quad", AMD_GCN, w, h).counters["mem.dram.read.depth"] > 0


def test_fast_clear_writes_metadata_not_the_surface():
    """256 x 128 fits in L2, so DRAM sees each colour line once either way; on chip, the fast
    clear skips writing the W x H x 4 bytes of the clear, and the blocks the triangle never
    touched are written out at the store (the eliminate)."""
    from pipelines.presets.keys import apply_sets
    w, h = 256, 128
    raw = apply_sets(NO_BINNING, [("comp.codec", "none")])      # the clear alone, no DCC
    slow = raw.with_params(fast_clear=Param(False, "test", "assumed"))
    a = render("triangle", slow, w, h).counters
    b = render("triangle", raw, w, h).counters
    assert a["mem.dram.write.color"] == b["mem.dram.write.color"] == w * h * 4
    n_blocks = (w // 8) * (h // 8)
    untouched = b["rop.fast_clear.eliminated_blocks.color"]
    assert 0 < untouched < n_blocks
    # on chip: the slow clear wrote every block, the fast one only what the draw and the
    # eliminate leave; metadata: CMASK 4 bits and HTILE 32 bits per block, in 128-B lines
    assert a["mem.onchip.write.color"] - b["mem.onchip.write.color"] >= (n_blocks - untouched) * 8 * 8 * 4 // 2
    cmask_lines, htile_lines = -(-n_blocks * 4 // 8 // 128), -(-n_blocks * 32 // 8 // 128)
    assert b["mem.onchip.write.meta"] - a["mem.onchip.write.meta"] == (cmask_lines + htile_lines) * 128
    # with DCC a block still fast-cleared is its key: no eliminate, and no bytes of its own
    d = render("triangle", NO_BINNING, w, h).counters
    assert d["rop.fast_clear.eliminated_blocks.color"] == 0
    assert d["comp.dram.write.color.raw"] == (n_blocks - untouched) * 8 * 8 * 4
    assert d["mem.dram.write.color"] < d["comp.dram.write.color.raw"]


def test_infinity_cache_sits_between_l2_and_dram():
    """RDNA 2's 128 MB last-level cache sees the L2's read misses (it allocates on reads only),
    and can only take DRAM reads away."""
    c = render("sponza", AMD_RDNA2, 640, 360).counters
    lookups = c["mem.cache.llc.hits"] + c["mem.cache.llc.misses"]
    assert 0 < lookups <= c["mem.cache.l2.misses"]
    no_llc = AMD_RDNA2.with_params(llc_bytes=None, llc_ways=None)
    d = render("sponza", no_llc, 640, 360).counters
    assert "mem.cache.llc.hits" not in d
    assert c.dram_bytes("read") <= d.dram_bytes("read")
    assert c.dram_bytes("write") <= d.dram_bytes("write")   # write misses pass through it


def test_deferred_shading_in_a_batch_shades_the_front_most_fragment():
    """overdraw:N back to front: with deferred shading each batch shades every pixel once; 8
    layers are 16 primitives, one batch: W x H. 40 layers are 80 primitives, two batches (63 +
    17): 2 x W x H, where immediate shading shades N x W x H."""
    deferred = AMD_RDNA2.with_params(batch_deferred_shading=Param(True, "test", "assumed"))
    for n, batches in ((8, 1), (40, 2)):
        scene = get_scene(f"overdraw:{n}:btf")
        c = render(scene, deferred, W, H).counters
        assert c["dsbr.batches"] == batches
        assert c["raster.shaded"] == batches * W * H
        assert render(scene, AMD_RDNA2, W, H).counters["raster.shaded"] == n * W * H
        assert np.array_equal(render(scene, deferred, W, H).color, render(scene, "imr-baseline", W, H).color)
