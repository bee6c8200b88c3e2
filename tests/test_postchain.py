"""Post chain: compression state across stage boundaries per preset, the seed's compression-tax
arithmetic on a 4K RGBA16F G-buffer, images unchanged by compression, transaction elimination."""
from __future__ import annotations

import numpy as np
import pytest

from pipelines.api import render
from pipelines.presets.compression import PARAMS
from pipelines.passes.postchain import (LPDDR5_GBPS, PostchainError, chain_kernels, gbuffer, run_graph,
                                        tax_frame, transaction_elimination, two_frame_scene)
from pipelines.presets import Param, get_preset
from renderer.compression import compressed_size, decode, encode
from scenes.library import POST_CHAIN
from scenes.model import ComputePass

W, H = 96, 64
PRESETS = list(PARAMS)


@pytest.fixture(scope="module")
def gbuf():
    g, lit = gbuffer("sponza", W, H)
    return g


@pytest.fixture(scope="module")
def runs(gbuf):
    return {p: run_graph(POST_CHAIN, p, chain_kernels(gbuf)) for p in PRESETS}


def _tax(targets, preset):
    passes, kernels = tax_frame(targets)
    return run_graph(passes, preset, kernels)


def _sizes(r, name):
    data = r.surfaces[name]
    U = data.nbytes
    if r.codec == "none" or data.dtype == np.float32:
        return U, U
    return U, compressed_size(data, r.codec, get_preset(r.preset).compression.dcc_max_compressed_block.value)


def test_deferred_light_from_reconstructed_normals_matches_forward_shading(gbuf):
    """The light pass (albedo x Lambert with normals rebuilt from depth) against the raster's own
    forward-lit colour of the same scene: equal up to normal reconstruction and rounding."""
    from pipelines.passes import postchain_kernels as K
    g, lit = gbuffer("spheres", W, H)
    for gb, color in ((g, lit.color), (gbuf, render("sponza", "imr-baseline", W, H).color)):
        L = gb["light"]
        hdr = K.deferred_light(gb["albedo"], gb["normal"].view(np.float16).astype(np.float32),
                               gb["light_dir"], np.float32(L.color), np.float32(L.ambient), np.float32(1.0))
        covered = gb["position"][..., 3] > 0
        err = np.abs(hdr[..., :3] * 255 - color[..., :3])[covered]
        assert covered.sum() > W * H // 10
        assert np.median(err) < 4.0 and np.percentile(err, 75) < 12.0


def test_params_have_sources_and_labels():
    for preset, params in PARAMS.items():
        assert params.codec.value in ("dcc", "afbc", "apple", "ubwc", "none")
        for key, p in params.items():
            assert isinstance(p, Param) and p.source and p.label in ("spec", "measured", "derived", "assumed")


def test_same_images_on_every_preset_and_codec_round_trips(runs):
    ref = runs["apple-m5"].surfaces
    for p, r in runs.items():
        for name, data in r.surfaces.items():
            assert np.array_equal(data, ref[name]), (p, name)
            if r.codec != "none" and data.dtype != np.float32:
                enc = encode(data, r.codec, PARAMS[p].dcc_max_compressed_block.value)
                assert np.array_equal(decode(enc), data)


def test_bytes_add_up_and_tax_is_u_minus_c_of_each_raw_access(runs):
    for p, r in runs.items():
        c = r.counters
        assert c.dram_bytes() == sum(e["bytes"] for e in r.events)
        expect = 0
        for e in r.events:
            if e["kind"] in ("read", "write") and not e["compressed"]:
                U, Cb = _sizes(r, e["surface"])
                assert e["bytes"] == U
                expect += U - Cb
            elif e["kind"] in ("read", "write"):
                assert e["bytes"] == _sizes(r, e["surface"])[1]
        assert c["comp.tax_bytes"] == expect, p
        assert c["comp.tax_bytes"] == sum(v for k, v in c.items()
                                          if k.startswith("comp.pass.") and k.endswith(".tax_bytes"))


def test_report_rows_and_store_bytes(runs, gbuf):
    from pipelines.presets.compression import store_bytes
    r = runs["amd-vega"]
    rows = {row["surface"]: row for row in r.by_surface()}
    U, Cb = _sizes(r, "normal")
    assert rows["normal"]["raw_bytes"] == U and rows["normal"]["compressed_bytes"] == Cb
    assert rows["normal"]["decompress_events"] == 1
    passes = r.by_pass()
    assert [p["pass"] for p in passes] == ["gbuffer", "light", "ssao", "tonemap", "blur_x", "blur_y", "present"]
    assert sum(p["tax_bytes"] for p in passes) == r.counters["comp.tax_bytes"]
    albedo = gbuf["albedo"]
    assert store_bytes(PARAMS["arm-mali"], albedo) == compressed_size(albedo, "afbc")
    assert store_bytes(PARAMS["amd-vega"], albedo, 32).sum() == compressed_size(albedo, "dcc", 64)
    assert store_bytes(get_preset("imr-baseline").compression, albedo) == albedo.nbytes
    assert store_bytes(get_preset("imr-baseline").compression, albedo, 32).sum() == albedo.nbytes


def test_policies_differ_as_the_notes_say(runs):
    gcn, rdna2, m5, a11, mali = (runs[p].counters for p in
                                 ("amd-vega", "amd-rdna2", "apple-m5", "apple-a11", "arm-mali"))
    # GCN: the two compressed G-buffer colour targets are decompressed in place before the
    # light pass reads them; compute writes go raw, so the present pass pays raw reads.
    assert gcn["comp.decompress.events"] == 2
    U_a, C_a = _sizes(runs["amd-vega"], "albedo")
    U_n, C_n = _sizes(runs["amd-vega"], "normal")
    assert gcn["comp.decompress.bytes"] == C_a + U_a + C_n + U_n
    assert gcn["comp.tax_bytes"] > 0
    # RDNA reads and writes compressed end to end: no decompress, no tax; but blur_x's 64x1
    # workgroups write each 8x8 DCC block in 8 pieces: 8 reads + 7 extra writes of the block.
    assert rdna2["comp.decompress.events"] == 0 and rdna2["comp.tax_bytes"] == 0
    assert rdna2["comp.rmw.bytes"] == 15 * _sizes(runs["amd-rdna2"], "blur_tmp")[1]
    # UTC keeps compression through every boundary and merges the partial writes
    assert m5["comp.tax_bytes"] == 0 and m5["comp.decompress.events"] == 0 and m5["comp.rmw.bytes"] == 0
    assert m5.dram_bytes() < min(gcn.dram_bytes(), a11.dram_bytes(), mali.dram_bytes())
    # A11: compression lost at the PS->CS boundary; Mali: AFBC dropped on compute writes only
    assert a11["comp.decompress.events"] == 2 and a11["comp.tax_bytes"] > 0
    assert mali["comp.decompress.events"] == 0 and mali["comp.tax_bytes"] > 0
    # Adreno: UBWC sampled compressed, lost at a compute (UAV) write, like AFBC
    adreno = runs["qcom-adreno"].counters
    assert adreno["comp.decompress.events"] == 0 and adreno["comp.tax_bytes"] > 0


def test_scattered_writes_force_decompress_even_on_utc():
    img = np.full((32, 32, 4), 9, np.uint8)
    img[::3] = 200
    passes = [ComputePass("draw", "draw", (), {"rt": "rgba8"}, stage="ps"),
              ComputePass("atomics", "atomics", ("rt",), {"rt": "rgba8"}, scattered=True)]
    r = run_graph(passes, "apple-m5", {"draw": lambda s: {"rt": img}, "atomics": lambda s: {"rt": s["rt"]}})
    U, Cb = img.nbytes, compressed_size(img, "apple")
    assert r.counters["comp.decompress.events"] == 1
    assert r.counters["comp.decompress.bytes"] == U + Cb
    assert r.counters["comp.tax_bytes"] == 2 * (U - Cb)        # the read and the write paid raw


def test_cache_keeps_compressed_surfaces_on_rdna4_only(gbuf):
    """A cache between C and U: RDNA 4 keeps the compressed surface resident and its read costs
    no DRAM; RDNA 3's cache holds it decompressed, it does not fit, the read goes to DRAM."""
    img = gbuf["albedo"]
    U, Cb = img.nbytes, compressed_size(img, "dcc", 128)
    assert Cb < U // 2
    passes = [ComputePass("draw", "draw", (), {"rt": "rgba8"}, stage="ps"),
              ComputePass("read", "read", ("rt",), {})]
    kernels = {"draw": lambda s: {"rt": img}, "read": lambda s: {}}
    cache = (Cb + U) // 2
    r4 = run_graph(passes, "amd-rdna4", kernels, cache_bytes=cache)
    r3 = run_graph(passes, "amd-rdna3", kernels, cache_bytes=cache)
    assert r4.counters["comp.cache.hit_bytes"] == compressed_size(img, "dcc", 256)
    assert r4.counters.dram_bytes("read") == 0
    assert r3.counters["comp.cache.hit_bytes"] == 0 and r3.counters.dram_bytes("read") == Cb
    big = run_graph(passes, "amd-rdna3", kernels, cache_bytes=2 * U)
    assert big.counters.dram_bytes("read") == 0                 # fits raw too


def test_bad_graph_is_one_clear_error():
    with pytest.raises(PostchainError, match="before any pass wrote"):
        run_graph([ComputePass("x", "x", ("nothing",), {})], "apple-m5", {"x": lambda s: {}})
    with pytest.raises(PostchainError, match="stage"):
        run_graph([ComputePass("x", "x", (), {}, stage="vs")], "apple-m5", {"x": lambda s: {}})
    with pytest.raises(PostchainError, match="no kernel"):
        run_graph([ComputePass("x", "y", (), {})], "apple-m5", {"x": lambda s: {}})


def test_seed_tax_example_4k_rgba16f_gbuffer():
    """seed-notes/004_partA.md L346-356: a 3840x2160 RGBA16F G-buffer of 2 MRTs, four PS<->CS
    switches each losing compression: tax = 4 x (U - C), here C measured on this frame's data."""
    g, lit = gbuffer("sponza", 3840, 2160)
    hdr = (lit.color.astype(np.float32) / 255.0 * 2.0).astype(np.float16).view(np.uint16)
    targets = {"hdr": hdr, "normal": g["normal"]}
    U = sum(t.nbytes for t in targets.values())
    assert U == 3840 * 2160 * 8 * 2                            # 132.7 MB, the seed's "128 MB"
    for preset in ("amd-vega", "apple-a11"):
        p = get_preset(preset).compression
        Cb = sum(compressed_size(t, p.codec.value, p.dcc_max_compressed_block.value) for t in targets.values())
        r = _tax(targets, preset)
        assert r.counters["comp.tax_bytes"] == 4 * (U - Cb)
        assert 0 < Cb < U
        at = r.tax_at()
        assert at["budget_gbps"] == LPDDR5_GBPS == 51.2
        assert at["tax_gbps"] == pytest.approx(4 * (U - Cb) * 60 / 1e9)
        print(f"\n{preset}: U {U / 1e6:.1f} MB, C {Cb / 1e6:.1f} MB ({U / Cb:.2f}:1), tax "
              f"{at['tax_mb']:.0f} MB/frame = {at['tax_gbps']:.1f} GB/s at 60 fps = "
              f"{100 * at['tax_share']:.0f}% of {LPDDR5_GBPS} GB/s LPDDR5")
    r = _tax(targets, "apple-m5")
    assert r.counters["comp.tax_bytes"] == 0


def test_transaction_elimination_writes_only_changed_tiles():
    frames = [render(two_frame_scene(i), "imr-baseline", 160, 96).color for i in range(3)]
    te = transaction_elimination(frames)
    tiles = (96 // 16) * (160 // 16)
    assert te[0]["te.tiles_written"] == tiles                  # no previous frame
    # slow twin: a tile is written iff one of its pixels changed
    diff = (frames[1] != frames[0]).any(-1).reshape(6, 16, 10, 16).any((1, 3))
    assert 0 < diff.sum() < tiles // 4
    assert te[1]["te.tiles_written"] == diff.sum()
    assert te[1]["mem.dram.write.color"] == diff.sum() * 16 * 16 * 4
    # a static frame writes no colour at all: only its signatures (4 B per tile) move
    assert te[2]["te.tiles_written"] == 0 and te[2]["mem.dram.write.color"] == 0
    full = 160 * 96 * 4
    saving = 1 - te[2].dram_bytes() / full
    assert saving == pytest.approx(1 - 2 * 4 * tiles / full) and saving > 0.99   # Arm: "up to 99%"


def test_presets_share_the_gbuffer_which_equals_a_fresh_one():
    """A frame through another preset with the same texture formats takes the G-buffer the first
    made (the same arrays); made afresh it is the same, and its albedo is the unlit scene's frame
    colour. Presets that store a textured scene's textures in other formats get their own."""
    import pipelines.passes.postchain as P
    from pipelines.frame import Settings, raster
    from scenes.library import get_scene

    P._GBUFFERS.clear()
    g1, lit1 = gbuffer("sponza", W, H, "imr-baseline")
    g2, lit2 = gbuffer("sponza", W, H, "amd-rdna2")
    assert g2 is g1 and lit2 is not lit1
    P._GBUFFERS.clear()
    g3, _ = gbuffer("sponza", W, H, "apple-m3")
    assert g3 is not g1
    for k in ("albedo", "normal", "depth", "position", "light_dir"):
        assert np.array_equal(g3[k], g1[k]), k
    unlit = raster(P._unlit(get_scene("sponza")), get_preset("amd-rdna2"), Settings(W, H))
    assert np.array_equal(g1["albedo"], unlit.color)
    a, _ = gbuffer("pul1duel", W, H, "amd-rdna2")       # BC7 / BC1
    b, _ = gbuffer("pul1duel", W, H, "apple-m3")        # ASTC
    assert b is not a and not np.array_equal(a["albedo"], b["albedo"])
    assert np.array_equal(b["albedo"], raster(P._unlit(get_scene("pul1duel")),
                                              get_preset("apple-m3"), Settings(W, H)).color)


def test_chain_results_are_kept_for_the_same_input_arrays_only(gbuf):
    """Two presets' chains over one G-buffer share each kernel's result; a kernel given other
    arrays (equal or not) computes again, and gets what a fresh kernel gets."""
    k1, k2 = chain_kernels(gbuf), chain_kernels(gbuf)
    s = k1["gbuffer"]({})
    hdr = k1["light"](s)["hdr"]
    assert k2["light"](dict(s))["hdr"] is hdr
    other = {**s, "albedo": s["albedo"].copy()}
    again = k1["light"](other)["hdr"]
    assert again is not hdr and np.array_equal(again, hdr)
    dark = {**s, "albedo": np.zeros_like(s["albedo"])}
    assert not np.array_equal(k2["light"](dark)["hdr"], hdr)
