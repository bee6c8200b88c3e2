"""TBDR against IMR: the same image, the costs of a tiler (issue 3)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pipelines import render
from pipelines.presets import APPLE_M3, Param, get_preset
from pipelines.presets.keys import apply_sets
from pipelines.arch.tbdr import choose_tile, tile_memory_bytes
from renderer.formats import FORMATS, PARAM_PRIMITIVE, PARAM_VERTEX, TILE_LIST_ENTRY
from scenes.library import get_scene, scene_names
from scenes.model import AlphaMode, Attachment, LoadAction, RenderPass, StoreAction

W, H = 192, 108


def _on_bc7(name: str):
    """The preset with every texture in BC7: presets compared on one format make one image (the
    tilers' own formats, ASTC and ETC2, decode to other texels than the IMR's BC1/BC7)."""
    return apply_sets(get_preset(name), [("tex.format", "bc7"), ("tex.alpha_format", "bc7")])


@pytest.mark.parametrize("samples", [1, 4])
@pytest.mark.parametrize("name", scene_names())
def test_same_image_as_imr(name, samples):
    a = render(name, _on_bc7("imr-baseline"), W, H, samples)
    for tiler in ("apple-m3", "arm-mali", "qcom-adreno"):    # HSR; early Z in 16 px and 256 px bins
        b = render(name, _on_bc7(tiler), W, H, samples)
        assert np.array_equal(a.color, b.color), \
            f"{tiler}: {int((a.color != b.color).any(axis=2).sum())} px differ"
        assert np.array_equal(a.depth, b.depth), tiler


@pytest.mark.parametrize("order", ["ftb", "btf", "shuffled"])
def test_hsr_shades_each_pixel_once_in_any_order(order):
    n = 6
    c = render(get_scene(f"overdraw:{n}:{order}"), "apple-m3", W, H).counters
    assert c["raster.shaded"] == W * H
    imr = render(get_scene(f"overdraw:{n}:{order}"), "imr-baseline", W, H).counters
    assert c["raster.hsr_killed"] == imr["raster.shaded"] - W * H


def _pass(rp_color, rp_depth, samples=4):
    return RenderPass("p", rp_color, rp_depth, [], samples)


def test_tile_memory_arithmetic_and_shrink():
    rp = _pass(Attachment("c", "rgba8"), Attachment("d", "d32f"), samples=4)
    # 32 x 32 px x 4 samples x (4 B colour + 4 B depth, D32F standing for D24S8's 4 bytes)
    assert FORMATS["rgba8"].bytes_per_sample + FORMATS["d32f"].bytes_per_sample == 8
    assert tile_memory_bytes(32, rp) == 32768
    fits = APPLE_M3.with_params(tile_memory_bytes=Param(32768, "test", "assumed"))
    tight = APPLE_M3.with_params(tile_memory_bytes=Param(32767, "test", "assumed"))
    assert choose_tile(fits, rp) == (32, 0)
    assert choose_tile(tight, rp) == (16, 1)
    a = render("spheres", "imr-baseline", W, H, 4)
    b = render("spheres", tight, W, H, 4)
    assert b.counters["tile.fallback.tile_shrink"] == 1
    assert np.array_equal(a.color, b.color)


def _depth_store(scene, store, memoryless=False):
    def passes(s, samples):
        color = Attachment("color", "rgba8", LoadAction.CLEAR, StoreAction.STORE, s.background)
        depth = Attachment("depth", "d32f", LoadAction.CLEAR, store, (1.0,), memoryless)
        return [RenderPass("main", color, depth, list(s.draws), samples)]
    return dataclasses.replace(scene, passes=passes)


def test_memoryless_and_dont_care_depth_add_no_depth_bytes():
    sponza = get_scene("sponza")
    stored = render(_depth_store(sponza, StoreAction.STORE), "apple-m3", W, H).counters
    padded = -(-W // 8) * 8 * (-(-H // 8) * 8)     # surfaces are stored in whole 8x8 blocks
    assert stored["mem.dram.write.depth"] == padded * FORMATS["d32f"].bytes_per_sample
    for scene in (_depth_store(sponza, StoreAction.DONT_CARE),
                  _depth_store(sponza, StoreAction.STORE, memoryless=True)):
        c = render(scene, "apple-m3", W, H).counters
        assert c["mem.dram.write.depth"] == 0 and c["mem.dram.read.depth"] == 0
    # colour is stored once, resolved, whatever the overdraw (compressed: its raw equivalent)
    assert stored["comp.dram.write.color.raw"] == padded * FORMATS["rgba8"].bytes_per_sample
    assert stored["mem.dram.write.color"] == stored["comp.dram.write.color"]


def test_parameter_buffer_bytes():
    """Each transformed vertex once, a record per setup triangle, an entry per tile it overlaps
    (arithmetic over the mesh, binning done apart)."""
    from renderer.binning import bin_triangles
    from renderer.geometry import setup_pass
    scene = get_scene("teapot")
    tris, _ = setup_pass(scene.draws, scene.camera, W, H)
    n_refs = bin_triangles(tris, W, H, tile=32, exact=True).n_refs
    used = np.unique(scene.draws[0].mesh.indices[np.unique(tris.prim)])
    c = render(scene, "apple-m3", W, H).counters
    assert c["tile.param_bytes"] == (len(used) * PARAM_VERTEX.itemsize + tris.n * PARAM_PRIMITIVE.itemsize
                                     + n_refs * TILE_LIST_ENTRY.itemsize)
    assert (PARAM_VERTEX.itemsize, PARAM_PRIMITIVE.itemsize, TILE_LIST_ENTRY.itemsize) == (36, 16, 4)
    assert c["mem.onchip.write.param"] > 0 and c["mem.onchip.read.param"] > 0


def test_parameter_buffer_goes_by_the_line():
    """quad at 64x64, one chunk. Written through write-combining slots: its four vertices in a
    row (36 B each: lines 0 and 1 of the vertex region), its two records (16 B each: one line)
    and each tile's list (4 B entries: one line per tile). Read back per tile: the list's line,
    then per listed triangle its record's line and its vertices' distinct lines."""
    from renderer.binning import bin_triangles
    from renderer.geometry import setup_pass
    scene = get_scene("quad")
    tris, _ = setup_pass(scene.draws, scene.camera, 64, 64)
    bins = bin_triangles(tris, 64, 64, tile=32, exact=True)
    lb = int(APPLE_M3.memory.cache_line_bytes.value)
    indices = scene.draws[0].mesh.indices
    vertex_lines = [{(int(v) * PARAM_VERTEX.itemsize + k) // lb for v in indices[t] for k in (0, 35)}
                    for t in range(len(indices))]
    touched = [i for i in range(bins.n_tiles) if bins.tile_offsets[i + 1] > bins.tile_offsets[i]]
    reads = sum(1 + sum(1 + len(vertex_lines[tris.prim[t]])
                        for t in bins.ref_tri[bins.tile_offsets[i]:bins.tile_offsets[i + 1]])
                for i in touched)
    c = render(scene, "apple-m3", 64, 64).counters
    assert c["mem.onchip.write.param"] == (2 + 1 + len(touched)) * lb
    assert c["mem.onchip.read.param"] == reads * lb


def test_punch_through_costs_hsr():
    """The same foliage made opaque lets HSR remove the leaves behind leaves; alpha-tested it
    cannot, and every leaf draw ends a deferred run."""
    foliage = get_scene("foliage")
    opaque = dataclasses.replace(foliage, draws=[
        dataclasses.replace(d, material=dataclasses.replace(d.material, alpha_mode=AlphaMode.OPAQUE,
                                                            texture=None), state=None)
        for d in foliage.draws])
    masked = render(foliage, "apple-m3", W, H).counters
    solid = render(opaque, "apple-m3", W, H).counters
    assert masked["tile.hsr_flush.punch_through"] > 0 and solid["tile.hsr_flush.punch_through"] == 0
    assert solid["raster.hsr_killed"] > 0
    assert masked["raster.shaded"] > solid["raster.shaded"]


def test_parameter_buffer_overflow_partial_renders():
    """Ten small triangles, all in the top-left 32x32 tile of a 64x64 target, no vertex shared:
    each writes three vertices, a record and a list entry (3 x 36 + 16 + 4 = 128 B); a 384-byte
    buffer holds three, so the tiler renders after every third (3 partial renders), each parking
    and reloading that tile's colour and depth: 32 x 32 px x (4 + 4) B = 8 KiB each way."""
    from scenes.model import Camera, CullMode, Draw, DrawState, Material, Mesh, Scene
    tris = []
    for k in range(10):
        z = -0.05 * k
        tris += [[-0.9, 0.2, z], [-0.2, 0.25, z], [-0.5, 0.9, z]]
    mesh = Mesh("small", np.array(tris, np.float32), np.arange(30, dtype=np.uint32).reshape(10, 3))
    scene = Scene("small", "", [Draw(mesh, Material("m", (0.2, 0.6, 0.9, 1.0), unlit=True),
                                     state=DrawState(cull=CullMode.NONE))],
                  Camera((0, 0, 1), (0, 0, 0), fovy_deg=90.0, near=0.5, far=3.0))
    per_prim = 3 * PARAM_VERTEX.itemsize + PARAM_PRIMITIVE.itemsize + TILE_LIST_ENTRY.itemsize
    assert per_prim == 128
    small = APPLE_M3.with_params(param_buffer_bytes=Param(3 * per_prim, "test", "assumed"))
    c = render(scene, small, 64, 64).counters
    spill = 32 * 32 * (FORMATS["rgba8"].bytes_per_sample + FORMATS["d32f"].bytes_per_sample)
    assert c["tile.partial_renders"] == 3
    assert c["tile.partial_render.store_bytes"] == 3 * spill
    assert c["tile.partial_render.load_bytes"] == 3 * spill
    assert c["tile.hsr_flush.partial_render"] == 3
    roomy = render(scene, "apple-m3", 64, 64)
    assert roomy.counters["tile.partial_renders"] == 0
    assert np.array_equal(render(scene, small, 64, 64).color, roomy.color)
    assert np.array_equal(render(scene, "imr-baseline", 64, 64).color, roomy.color)


@pytest.mark.parametrize("seed", range(4))
def test_one_chunk_shortcut_is_the_walk(seed):
    """param_chunks takes a pass that fits the buffer as one chunk without walking it: the same
    chunks and bytes as the walk, in passes of several draws (shared, unused and culled
    vertices, a primitive that names a vertex twice: the walk's count, left to it) around the
    one capacity that just holds them."""
    from pipelines.arch.tbdr_kernels import _param_walk, one_chunk_bytes, param_chunks
    rng = np.random.default_rng(seed)
    n_draws = int(rng.integers(1, 6))
    n_verts = rng.integers(3, 400, n_draws)
    n_prims = rng.integers(0, 5000, n_draws)
    draw_vbase = np.concatenate([[0], np.cumsum(n_verts)]).astype(np.int64)
    prim_off = np.concatenate([[0], np.cumsum(n_prims)]).astype(np.int64)
    corners = []
    for nv, npr in zip(n_verts, n_prims):        # three distinct vertices a primitive
        a, b = rng.integers(0, nv, npr), rng.integers(0, nv - 1, npr)
        c = (b + 1 + rng.integers(0, nv - 2, npr)) % (nv - 1)
        corners.append(np.stack([a, (a + 1 + b) % nv, (a + 1 + c) % nv], 1).reshape(-1))
    indices = np.concatenate(corners).astype(np.int64)
    tris_per = rng.choice([0, 1, 1, 1, 2], int(prim_off[-1]))
    if seed % 2 and tris_per.any():             # a surviving primitive names a vertex twice
        p = int(np.flatnonzero(tris_per)[-1])
        indices[3 * p + 2] = indices[3 * p]
    prim_tri_off = np.concatenate([[0], np.cumsum(tris_per)]).astype(np.int64)
    tri_refs = rng.integers(1, 4, int(prim_tri_off[-1])).astype(np.int64)
    sizes = (36, 16, 4)
    walk = _param_walk(prim_off, indices, draw_vbase, prim_tri_off, tri_refs, sizes, 1 << 40)
    one = one_chunk_bytes(prim_off, indices, draw_vbase, prim_tri_off, tri_refs, sizes)
    twice = (indices[0::3] == indices[1::3]) | (indices[1::3] == indices[2::3]) \
        | (indices[0::3] == indices[2::3])
    assert one == (-1 if seed % 2 else walk[1])
    assert (twice & (tris_per > 0)).any() == bool(seed % 2)
    for capacity in (walk[1] - 1, walk[1], walk[1] + 1, 1 << 40):
        got = param_chunks(prim_off, indices, draw_vbase, prim_tri_off, tri_refs, sizes, capacity)
        want = _param_walk(prim_off, indices, draw_vbase, prim_tri_off, tri_refs, sizes, capacity)
        assert np.array_equal(got[0], want[0]) and got[1] == want[1]


def test_fallback_map_counts_flushes_and_spills():
    r = render("particles", "apple-m3", W, H)
    c = r.counters
    assert int(r.tile_maps["fallbacks"].sum()) == (c["tile.hsr_flush.punch_through"]
                                                   + c["tile.hsr_flush.blend"]
                                                   + c["tile.hsr_flush.partial_render"])
    assert c["tile.hsr_flush.blend"] > 0


def test_pass_split_when_even_the_smallest_tile_does_not_fit():
    """16 x 16 px x 4 samples x (4 + 4) B = 8 KiB; a budget one byte smaller splits the pass:
    depth first (parked), then colour with it reloaded, the geometry binned twice."""
    rp = _pass(Attachment("c", "rgba8"), Attachment("d", "d32f"), samples=4)
    assert tile_memory_bytes(16, rp) == 8192
    tiny = APPLE_M3.with_params(tile_memory_bytes=Param(8191, "test", "assumed"))
    a = render("bunny", "apple-m3", W, H, 4)
    b = render("bunny", tiny, W, H, 4)
    assert np.array_equal(a.color, b.color)
    assert b.counters["tile.fallback.pass_split"] == 1 and b.counters["tile.fallback.tile_shrink"] == 1
    assert a.counters["tile.fallback.pass_split"] == 0
    # against the same 16x16 tiles unsplit: the parameter buffer is written once per half, and
    # depth is parked and reloaded
    small = APPLE_M3.with_params(tile_px=Param(16, "test", "assumed"))
    c = render("bunny", small, W, H, 4)
    assert b.counters["mem.onchip.write.param"] == 2 * c.counters["mem.onchip.write.param"]
    assert b.counters["mem.onchip.read.depth"] > c.counters["mem.onchip.read.depth"]


def test_imageblock_and_threadgroup_memory_count_against_the_budget():
    rp = _pass(Attachment("c", "rgba8"), Attachment("d", "d32f"), samples=1)
    assert tile_memory_bytes(32, rp) == 32 * 32 * 8
    rp.imageblock_bytes, rp.threadgroup_bytes = 16, 4096
    assert tile_memory_bytes(32, rp) == 32 * 32 * (8 + 16) + 4096
    budget = APPLE_M3.with_params(tile_memory_bytes=Param(32 * 32 * 24, "test", "assumed"))
    assert choose_tile(budget, rp) == (16, 1)          # the threadgroup bytes tip it over


def test_deferred_two_passes_against_the_tilers_way():
    """Two passes store the G-buffer (16 B) and depth (4 B) and the lighting pass's colour (4 B);
    the tiler's way keeps the G-buffer in the imageblock and depth memoryless and stores only
    the colour. Stores cover whole 8x8 blocks (108 rows -> 112). Both show the forward image."""
    w, h8 = W, -(-H // 8) * 8
    two = render("deferred", "apple-m3", W, H).counters
    one = render("deferred-tiled", "apple-m3", W, H).counters
    # the G-buffer's 16 B texels go raw (the raster keeps RGBA8 only); the final colour goes
    # through Apple's codec, 4 B a pixel raw
    assert two["mem.dram.write.color"] == w * h8 * 16 + two["comp.dram.write.color"]
    assert two["comp.dram.write.color.raw"] == w * h8 * 4
    assert two["mem.dram.write.depth"] == w * h8 * 4
    assert one["comp.dram.write.color.raw"] == w * h8 * 4 and one["mem.dram.write.depth"] == 0
    assert one["mem.dram.write.color"] == one["comp.dram.write.color"] < w * h8 * 4
    assert one["tile.fallback.tile_shrink"] == 0          # 32 x 32 x (4 + 4 + 16) B fits 64 KiB
    # the lighting pass shades every pixel once more; its reads of the G-buffer and depth go
    # through the caches (the texture stream) where the SLC does not hold them
    assert two["raster.shaded"] == one["raster.shaded"] + W * H
    forward = render("spheres", "apple-m3", W, H).color
    assert np.array_equal(render("deferred", "apple-m3", W, H).color, forward)


def test_deferred_reads_the_gbuffer_from_dram_when_it_does_not_fit():
    """At 1280x720 the G-buffer and depth (18.4 MB) outgrow the 8 MB SLC: the lighting pass
    reads most of them from DRAM."""
    c = render("deferred", "apple-m3", 1280, 720).counters
    assert c["mem.dram.read.texture"] > 0.5 * 1280 * 720 * (16 + 4)
