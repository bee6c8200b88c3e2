"""Colour compression inside the raster passes (issue 24): every architecture stores its colour
as its preset's codec does, on the pixels as they leave the chip. Exact bytes from the codecs'
block rules on flat and noisy full-screen quads, the DCC sizes the ROP attaches held to a slow
twin of the rules block by block, and the images unchanged."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from pipelines.frame import Settings, run
from pipelines.presets import get_preset
from renderer.compression import block_sizes, rop_meta_bytes
from renderer.compression.codecs import META_BYTES
from renderer.rop import rgba8
from scenes.library import get_scene
from scenes.model import Material, Texture
from tests.test_compression import naive_block_sizes

W, H = 64, 48             # whole 16x16 superblocks and 8x8 blocks: no padding in the rules
LINE = 128                # every preset below has 128 B lines
# one preset per architecture and codec
CODEC_PRESETS = {"imr-baseline": "none", "amd-gcn": "none", "amd-rdna2": "dcc", "amd-vega": "dcc",
                 "amd-rdna4": "dcc", "apple-m3": "apple", "arm-mali": "afbc",
                 "qcom-adreno": "ubwc"}


def _quad(material: Material):
    scene = get_scene("quad")
    draw = dataclasses.replace(scene.draws[0], material=material)
    return dataclasses.replace(scene, draws=[draw], name="quad-" + material.name)


def _frame(scene, preset: str):
    return run(scene, get_preset(preset), Settings(W, H))


def _render(f):
    """The render passes' counters: what the raster stored, before the display's present (which
    on amd-vega decompresses the colour again: tests/test_present.py)."""
    return f.passes[0].counters


def _meta_lines(n_bytes: int) -> int:
    return -(-n_bytes // LINE) * LINE


@pytest.mark.parametrize("preset", sorted(CODEC_PRESETS))
def test_flat_quad_stores_each_codecs_minimum(preset):
    """One flat grey (not a DCC constant, not the clear colour): DCC 64 B per 8x8 block (one
    sector: the group header alone), AFBC and Apple a solid block in the metadata (no payload),
    UBWC 32 B per 16x4 block; the metadata lines (1 B per block for DCC, 4 AFBC, 2 Apple, 1
    UBWC) once; raw 256 B per block without a codec."""
    f = _frame(_quad(Material("grey", (0.5, 0.5, 0.5, 1.0), unlit=True)), preset)
    codec = CODEC_PRESETS[preset]
    n_blocks = (W // 8) * (H // 8)
    payload = {"none": 256 * n_blocks, "dcc": 64 * n_blocks, "afbc": 0, "apple": 0,
               "ubwc": 32 * (W // 16) * (H // 4)}[codec]
    assert _render(f)["mem.dram.write.color"] == payload
    meta = 0 if codec == "none" else _meta_lines(n_blocks * rop_meta_bytes(codec))
    if get_preset(preset).compression.transaction_elimination.value:   # + its signatures, 4 B a tile
        meta += _meta_lines((W // 16) * (H // 16) * 4)
    assert _render(f)["mem.dram.write.comp_meta"] == meta
    if codec != "none":
        assert _render(f)["comp.dram.write.color.raw"] == 256 * n_blocks
        assert _render(f)["comp.dram.write.color"] == payload
    # the codec itself agrees on the final image
    if codec != "none":
        img = f.raster.color
        assert payload == int((block_sizes(img, codec, 256) - META_BYTES[codec]).sum())


def _noise_texture(seed=0) -> Texture:
    rng = np.random.default_rng(seed)
    return Texture("noise", rng.integers(0, 256, (H, W, 4), dtype=np.uint8) | np.uint8(0))


@pytest.mark.parametrize("preset", sorted(CODEC_PRESETS))
def test_noise_quad_stays_within_raw_and_equals_the_codec(preset):
    """A quad textured with white noise: the colour never costs more than raw (the codec stores
    an incompressible block raw), and it costs exactly what the codec says of the final image
    (one draw: each block written once, as it ends)."""
    f = _frame(_quad(Material("noisy", (1.0, 1.0, 1.0, 1.0), texture=_noise_texture(), unlit=True)),
               preset)
    codec = CODEC_PRESETS[preset]
    n_blocks = (W // 8) * (H // 8)
    got = _render(f)["mem.dram.write.color"]
    assert got <= 256 * n_blocks
    if codec == "none":
        assert got == 256 * n_blocks
        return
    mcb = int(get_preset(preset).compression.dcc_max_compressed_block.value)
    want = naive_block_sizes(f.raster.color, codec, mcb) - META_BYTES[codec]
    assert got == int(want.sum())
    assert got > 256 * n_blocks // 2        # (magnified, filtered) noise compresses little


@pytest.mark.parametrize("preset", ["amd-rdna2", "amd-vega"])
def test_dcc_sizes_follow_the_blocks_as_the_rop_leaves_them(preset):
    """spheres at 96x64: many draws over each block. Every block's last written size (the one
    its lines carry to DRAM when the pass stores it; all of it fits in L2) is the slow twin's
    DCC size of that block in the final image, and the frame's colour bytes are their sum."""
    p = get_preset(preset)
    w, h = 96, 64
    f = run(get_scene("spheres"), p, Settings(w, h))
    mcb = int(p.compression.dcc_max_compressed_block.value)
    img = f.raster.color
    clear = tuple(int(c) for c in rgba8(get_scene("spheres").background))   # fast-cleared
    # payload (less the key); a block no draw touched stays fast-cleared: its key only
    want = naive_block_sizes(img, "dcc", mcb, clear=clear) - 1
    assert _render(f)["mem.dram.write.color"] == int(want.sum())
    assert _render(f)["comp.dram.write.color.raw"] > _render(f)["comp.dram.write.color"]


def test_images_do_not_change_with_compression():
    """Compression is a cost: the same frame makes the same image with the codec on or off."""
    from pipelines.presets.keys import apply_sets
    for name in ("amd-rdna2", "apple-m3", "arm-mali"):
        p = get_preset(name)
        off = apply_sets(p, [("comp.codec", "none")])
        a, b = run(get_scene("spheres"), p, Settings(96, 64)), run(get_scene("spheres"), off, Settings(96, 64))
        assert np.array_equal(a.image, b.image)
        assert a.counters["mem.dram.write.color"] < b.counters["mem.dram.write.color"]


# --- depth: HTILE plane tracking on AMD --------------------------------------------------------
def _amd_depth(scene, w=W, h=H, preset="amd-rdna2"):
    return run(scene, get_preset(preset), Settings(w, h, store_depth=True))


def test_one_triangle_depth_is_planes_and_the_clear():
    """The triangle scene on amd-rdna2 with depth stored: a block the triangle covers whole is
    one plane (24 B, a 32 B granule), a block it covers in part holds it and the clear value (two
    planes and a select bit per pixel: 48 + 8 -> 64 B), a block it never reaches stays cleared
    (its HTILE word alone): the depth stream is their sum."""
    f = _amd_depth(get_scene("triangle"))
    covered = (f.raster.depth < 1.0).reshape(H // 8, 8, W // 8, 8).sum(axis=(1, 3))
    want = 32 * int((covered == 64).sum()) + 64 * int(((covered > 0) & (covered < 64)).sum())
    assert f.counters["mem.dram.write.depth"] == want
    assert f.counters["comp.dram.write.depth.raw"] == 256 * int((covered > 0).sum())
    assert f.counters["rop.fast_clear.eliminated_blocks.depth"] == 0


def _fan(n: int):
    """n triangles around the screen's centre, each at its own slant: n planes meet there."""
    from scenes.model import Draw, Mesh
    ang = np.linspace(0, 2 * np.pi, n + 1)
    ring = np.stack([np.cos(ang), np.sin(ang), np.zeros(n + 1)], 1) * 2.0
    pos, idx = [], []
    for k in range(n):
        tilt = 0.1 * (k + 1)
        pos += [[0, 0, 0], [*ring[k][:2], tilt], [*ring[k + 1][:2], -tilt]]
        idx.append([3 * k, 3 * k + 1, 3 * k + 2])
    mesh = Mesh("fan", np.asarray(pos, np.float32), np.asarray(idx, np.uint32))
    scene = get_scene("triangle")
    return dataclasses.replace(scene, name=f"fan{n}",
                               draws=[Draw(mesh, dataclasses.replace(scene.draws[0].material,
                                                                     double_sided=True))])


def test_five_planes_meeting_in_a_block_store_it_raw():
    """Five triangles of five slants meeting at the centre: every block two or more of them
    reach holds more planes than HTILE keeps (2, assumed) and goes raw; the twin counts planes
    per block from each triangle's own coverage, in draw order."""
    scene = _fan(5)
    f = _amd_depth(scene)
    tris = scene.draws[0].mesh
    per_tri = []
    for k in range(5):
        one = dataclasses.replace(scene, draws=[dataclasses.replace(
            scene.draws[0], mesh=dataclasses.replace(tris, indices=tris.indices[k:k + 1]))])
        d = run(one, get_preset("amd-rdna2"), Settings(W, H)).raster.depth
        per_tri.append((d < 1.0).reshape(H // 8, 8, W // 8, 8).sum(axis=(1, 3)))
    total, raw_blocks = 0, 0
    for by in range(H // 8):
        for bx in range(W // 8):
            planes = 0                               # cleared
            for cov in per_tri:
                c = cov[by, bx]
                if c == 64:
                    planes = 1
                elif c:
                    planes = min(max(planes, 1) + 1, 3)
            total += {0: 0, 1: 32, 2: 64, 3: 256}[planes]
            raw_blocks += planes == 3
    assert raw_blocks >= 1                            # the centre block at least
    assert f.counters["mem.dram.write.depth"] == total


def test_tilers_store_depth_raw():
    """No source says how Apple, Arm or Qualcomm compress depth: their presets store it raw."""
    for preset in ("apple-m3", "arm-mali", "qcom-adreno"):
        assert get_preset(preset).compression.depth_codec.value == "none"
        c = run(get_scene("triangle"), get_preset(preset), Settings(W, H, store_depth=True)).counters
        assert c["mem.dram.write.depth"] == W * H * 4 and c["comp.dram.write.depth.raw"] == 0


# --- transaction elimination across frames ---------------------------------------------------
def test_a_still_camera_writes_no_colour_tile_twice_on_mali():
    from pipelines.sequence import run_sequence
    seq = run_sequence("spheres", "arm-mali", Settings(W, H), frames=3)
    first, second, third = seq.frames
    n_tiles = (W // 16) * (H // 16)
    assert first.counters["te.tiles"] == n_tiles and first.counters["te.tiles_written"] == n_tiles
    for later in (second, third):
        assert later.counters["te.tiles_written"] == 0
        assert later.counters["te.saved_bytes"] == first.counters["mem.dram.write.color"]
        assert later.counters["mem.dram.write.color"] == 0
        assert np.array_equal(later.image, first.image)
    # each frame writes its signatures (4 B per tile) and reads the last frame's
    assert second.counters["mem.dram.write.comp_meta"] >= first.counters["mem.dram.write.comp_meta"]
    assert seq.counters["te.tiles"] == 3 * n_tiles


def test_a_moving_camera_rewrites_the_tiles_that_changed():
    from pipelines.sequence import run_sequence
    seq = run_sequence("spheres", "arm-mali", Settings(W, H), frames=2, path="orbit")
    a, b = seq.frames
    written = b.counters["te.tiles_written"]
    assert 0 < written <= b.counters["te.tiles"]
    assert not np.array_equal(a.image, b.image)
    # a preset without transaction elimination pays every frame in full
    still = run_sequence("spheres", "apple-m3", Settings(W, H), frames=2)
    assert still.frames[1].counters["mem.dram.write.color"] == still.frames[0].counters["mem.dram.write.color"]
    assert "te.tiles" not in still.frames[1].counters


def test_a_later_pass_reads_a_compressed_surface_as_its_generation_does():
    """The deferred scene's lighting pass samples the G-buffer pass's depth, which AMD stored
    HTILE-compressed. With an L2 too small to keep it (64 KiB), RDNA 1's shaders read it from DRAM
    compressed: fewer bytes than the same frame without a codec; Vega's (the GCN flow:
    ps_reads_compressed false) decompress it in place first: one decompress pass, its compressed
    read and raw write counted, then a raw read."""
    from pipelines.presets.keys import apply_sets
    w, h = 192, 128
    small = [("l2.size", "64KiB")]
    rdna1 = apply_sets(get_preset("amd-rdna1"), small)      # no Infinity Cache in front of DRAM
    raw = apply_sets(rdna1, [("comp.depth", "none"), ("comp.codec", "none")])
    c = run(get_scene("deferred"), rdna1, Settings(w, h)).counters
    u = run(get_scene("deferred"), raw, Settings(w, h)).counters
    assert 0 < c["mem.dram.read.texture"] < u["mem.dram.read.texture"]
    assert c["comp.dram.read.texture.raw"] > c["comp.dram.read.texture"]
    assert "comp.decompress.events" not in c
    vega = _render(run(get_scene("deferred"), apply_sets(get_preset("amd-vega"), small), Settings(w, h)))
    assert vega["comp.decompress.events"] == 1
    n_blocks = (w // 8) * (h // 8)
    assert vega["comp.decompress.bytes"] > n_blocks * 256          # the raw rewrite, and more
    assert vega["comp.dram.read.texture"] == 0                      # the shader reads it raw


def test_an_l2_that_keeps_compressed_lines_holds_only_their_bytes():
    """compressed_in_cache (RDNA 1's end-to-end DCC): the L2 keeps a compressed block in the
    lines its bytes fill. The deferred frame's lighting pass then reads only those lines of the
    G-buffer's HTILE-compressed depth: fewer lines through the L2 than the same part whose L2
    holds every line of a block (the bytes shrinking only at DRAM), the same image."""
    from pipelines.presets.keys import apply_sets
    packed = get_preset("amd-rdna1")
    assert packed.compression.compressed_in_cache.value
    lined = apply_sets(packed, [("comp.in_cache", "false")])
    p = run(get_scene("deferred"), packed, Settings(192, 128))
    q = run(get_scene("deferred"), lined, Settings(192, 128))
    assert 0 < p.counters["mem.onchip.read.texture"] < q.counters["mem.onchip.read.texture"]
    l2 = [f.counters["mem.cache.l2.hits"] + f.counters["mem.cache.l2.misses"] for f in (p, q)]
    assert l2[0] < l2[1]
    assert np.array_equal(p.image, q.image)


@pytest.mark.parametrize("preset", ["apple-m3", "arm-mali", "amd-rdna2"])
def test_a_lighting_pass_stores_the_image_it_shows(preset):
    """The deferred scene's lighting pass shows the G-buffer pass's image (RenderPass.shows):
    its colour is stored compressed as that image compresses, not as the white quad the raster
    drew for it (a DCC constant: no bytes). A tiler stores each block once: exactly the codec's
    bytes of the image; the IMR at least those."""
    from pipelines.arch.compressed import block_sizes
    p = get_preset(preset)
    f = run(get_scene("deferred"), p, Settings(96, 64))
    want = int(block_sizes(p, p.compression.codec.value, f.image).sum())
    got = _render(f)["surf.final.write"]
    assert 0 < want < _render(f)["surf.final.write.raw"]
    assert got == want if p.architecture == "tbdr" else got >= want


def _two_pass(spheres, samples: int):
    """Spheres drawn into an RGBA8 colour `scene` (stored), then a full-screen pass that reads
    it once per pixel and shows it."""
    from scenes.library import _screen_quad
    from scenes.model import Attachment, LoadAction, RenderPass, StoreAction
    color = Attachment("scene", "rgba8", LoadAction.CLEAR, StoreAction.STORE, spheres.background)
    depth = Attachment("depth", "d32f", LoadAction.CLEAR, StoreAction.DONT_CARE, (1.0,))
    final = Attachment("final", "rgba8", LoadAction.DONT_CARE, StoreAction.STORE, spheres.background)
    return [RenderPass("draw", color, depth, list(spheres.draws), samples),
            RenderPass("present", final, None, [_screen_quad(spheres.camera)], samples,
                       inputs=("scene",), shows="scene")]


def test_a_later_pass_reads_what_transaction_elimination_kept_as_it_was_stored():
    """Mali, a still camera: the second frame's first pass writes none of its colour tiles
    (transaction elimination: memory still holds last frame's), and the next pass reads that
    colour as it was stored, AFBC-compressed: nothing of it is in the caches, so exactly the
    codec's bytes of the image come from DRAM (as raw, every line of every 8x8 block)."""
    from pipelines.arch.compressed import block_sizes
    from pipelines.sequence import run_sequence
    scene = dataclasses.replace(get_scene("spheres"), name="two-pass", passes=_two_pass)
    seq = run_sequence(scene, "arm-mali", Settings(96, 64), frames=2)
    first, second = (f.counters for f in seq.frames)
    assert first["surf.scene.write"] > 0 and second["surf.scene.write"] == 0
    image = seq.frames[1].image                   # the present pass shows the colour it read
    want = int(block_sizes(get_preset("arm-mali"), "afbc", image).sum())
    assert 0 < second["surf.scene.read"] == want < second["surf.scene.read.raw"] == 96 * 64 * 4
