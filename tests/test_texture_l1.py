"""The texture L1 and the texel blocks a frame fetches (issue 27 points 3 and 5): the cache against
a slow dictionary-LRU twin on footprints the raster's own helper records, a 1:1 textured quad
that fetches every block of level 0 exactly once from DRAM in every format, a minified one that
reads just the level its LOD names, and trilinear reading two."""
from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
import pytest
from numba import njit

from pipelines.frame import Settings, run
from pipelines.presets import get_preset
from pipelines.presets.keys import apply_sets
from renderer import shade_kernels as sk
from renderer.shade import TextureUnit, _texture_table, build_tables
from renderer.texture_formats import FORMATS, level_bytes
from renderer.texture_l1 import footprint_lines, footprint_lines_twin, l1_access
from scenes.model import Camera, Draw, Material, MipFilter, Scene, Texture, Wrap
from scenes.procedural import quad

LINE = 128          # imr-baseline's memory line and texture L1 line


def test_kernel_constants_are_the_models():
    assert (sk.WRAP_REPEAT, sk.WRAP_CLAMP, sk.WRAP_MIRROR) == (Wrap.REPEAT, Wrap.CLAMP, Wrap.MIRROR)
    assert (sk.MIP_NONE, sk.MIP_NEAREST, sk.MIP_LINEAR) == \
        (MipFilter.NONE, MipFilter.NEAREST, MipFilter.LINEAR)


@pytest.mark.parametrize("mode", [Wrap.REPEAT, Wrap.CLAMP, Wrap.MIRROR])
def test_wrap_modes(mode):
    size = 5
    got = [sk.wrap_texel(float(i), size, int(mode)) for i in range(-12, 13)]
    want = {Wrap.REPEAT: [i % size for i in range(-12, 13)],
            Wrap.CLAMP: [min(max(i, 0), size - 1) for i in range(-12, 13)],
            Wrap.MIRROR: [(i % 10) if i % 10 < 5 else 9 - i % 10 for i in range(-12, 13)]}[mode]
    assert got == want


# --- the cache against its twin ------------------------------------------------------------------

@njit(cache=True)
def _record(uv, levels, sampler, base, block, line_shift):
    """The lines footprint_lines gives for each quad of uv (n, 4, 2), in order, as the raster
    looks them up: the footprint recorder."""
    lines = np.empty(32, np.int64)
    lane_attr = np.zeros((4, 5))
    out = np.empty(uv.shape[0] * 16, np.int64)
    n_out = 0
    for q in range(uv.shape[0]):
        for lane in range(4):
            lane_attr[lane, 3] = uv[q, lane, 0]
            lane_attr[lane, 4] = uv[q, lane, 1]
        n = footprint_lines(lane_attr, levels, sampler, base, block, 0, 0, 1, line_shift, lines)
        for k in range(n):
            out[n_out] = lines[k]
            n_out += 1
    return out[:n_out]


@njit(cache=True)
def _fast(stream, sets, ways):
    tags = np.full(sets * ways, -1, np.int64)
    stamps = np.zeros(sets * ways, np.int64)
    hits = np.zeros(stream.shape[0], np.bool_)
    for i in range(stream.shape[0]):
        hits[i] = l1_access(tags, stamps, sets, ways, stream[i], i + 1)
    return hits


def _slow(stream, sets, ways) -> list[bool]:
    """The obvious twin: per set an OrderedDict in use order, the oldest evicted when full."""
    table = [OrderedDict() for _ in range(sets)]
    hits = []
    for line in stream:
        s = table[line % sets]
        hits.append(line in s)
        if line in s:
            s.move_to_end(line)
        else:
            if len(s) == ways:
                s.popitem(last=False)
            s[line] = True
    return hits


def _tables(fmt: str, size: int, wrap: Wrap = Wrap.REPEAT):
    tex = Texture("t", np.zeros((size, size, 4), np.uint8) + 255, wrap, wrap)
    draw = Draw(quad(), Material("m", texture=tex))
    return build_tables([draw], TextureUnit(fmt, fmt, 16384, LINE, 4))[1]


@pytest.mark.parametrize("fmt,sets,ways", [("rgba8", 32, 4), ("bc1", 8, 2), ("astc-6x6", 1, 16),
                                           ("bc7", 64, 1), ("bc1", 4, 32), ("rgba8", 2, 12),
                                           ("bc1", 4, 6)])
def test_l1_matches_a_dictionary_lru_on_recorded_footprints(fmt, sets, ways):
    rng = np.random.default_rng(7)
    # quads wandering over a 256-texel texture: walks (reuse), jumps (misses), wrapping edges
    centre = np.cumsum(rng.normal(0, 2.0 / 256, (4000, 2)), axis=0) + rng.integers(0, 2, (4000, 1)) * \
        rng.random((4000, 2))
    step = rng.uniform(0.2, 1.5, (4000, 1)) / 256
    offsets = np.array([[0, 0], [1, 0], [0, 1], [1, 1]], float)
    uv = centre[:, None, :] + offsets[None] * step[:, :, None]
    t = _tables(fmt, 256, Wrap.REPEAT)
    stream = _record(uv, t.levels, t.sampler, t.base, t.block, int(math.log2(LINE)))
    assert len(stream) > 4000 and len(set(stream.tolist())) > 50
    assert _fast(stream, sets, ways).tolist() == _slow(stream.tolist(), sets, ways)


def test_footprint_lines_are_the_blocks_under_the_filter():
    """One lane on a block corner touches the four blocks around it; a lane inside a block, one."""
    t = _tables("rgba8", 64)
    line_shift = 6                       # 64 B lines: one 4x4 RGBA8 block each
    at_corner = np.array([[[4 / 64, 4 / 64]] * 4])      # texel (4, 4): the filter reads 3..4
    inside = np.array([[[6.5 / 64, 6.5 / 64]] * 4])
    blocks_x = 16
    got = _record(at_corner, t.levels, t.sampler, t.base, t.block, line_shift).tolist()
    assert sorted(got) == [0, 1, blocks_x, blocks_x + 1]
    assert _record(inside, t.levels, t.sampler, t.base, t.block, line_shift).tolist() == [blocks_x + 1]


def test_a_trilinear_footprint_is_both_levels_in_order_each_line_once():
    """footprint_lines over two levels at once (the raster's trilinear quads) gives level 0's
    lines, then level 1's that level 0 did not have."""
    t = _tables("bc1", 256)
    rng = np.random.default_rng(11)
    lines = np.empty(32, np.int64)
    for _ in range(200):
        lane_attr = np.zeros((4, 5))
        lane_attr[:, 3:5] = rng.random(2) + rng.uniform(0, 3 / 256, (4, 2))
        level = int(rng.integers(0, 6))
        one = []
        for lv in (level, level + 1):
            n = footprint_lines(lane_attr, t.levels, t.sampler, t.base, t.block, 0, lv, 1, 6,
                                lines)
            one += [x for x in lines[:n].tolist() if x not in one]
        n = footprint_lines(lane_attr, t.levels, t.sampler, t.base, t.block, 0, level, 2, 6, lines)
        assert lines[:n].tolist() == one


@pytest.mark.parametrize("fmt", ["rgba8", "bc1", "bc7", "astc-6x6", "astc-8x8"])
@pytest.mark.parametrize("wrap", [Wrap.REPEAT, Wrap.CLAMP, Wrap.MIRROR])
@pytest.mark.parametrize("size", [64, 48])
def test_footprint_lines_equal_their_tap_by_tap_twin(fmt, wrap, size):
    """footprint_lines' shortcut (one or two lines) against the walk of every tap: the same
    lines in the same order, on quads magnified, 1:1 and minified, near and across the
    texture's edges, at every level and two at once (trilinear), in power-of-two and other
    sizes, and with a lane's uv not a number or infinite."""
    t = _tables(fmt, size, wrap)
    rng = np.random.default_rng(size + int(wrap))
    got, want = np.empty(32, np.int64), np.empty(32, np.int64)
    offsets = np.array([[0, 0], [1, 0], [0, 1], [1, 1]], float)
    n_levels = int(t.levels.shape[1])
    shortcut = 0
    for k in range(3000):
        lane_attr = np.zeros((4, 5))
        centre = (rng.uniform(-2.0, 3.0, 2) if k % 3 else      # some quads at the edges
                  rng.integers(-2, 3, 2) + rng.normal(0, 0.01, 2))
        step = 10.0 ** rng.uniform(-3.5, -0.5)
        lane_attr[:, 3:5] = centre + offsets * step + rng.normal(0, step * 0.1, (4, 2))
        if k % 97 == 0:              # a helper lane's uv off its plane: NaN or infinite
            lane_attr[int(rng.integers(0, 4)), 3 + k % 2] = (np.nan, np.inf, -np.inf)[k % 3]
        level = int(rng.integers(0, n_levels))
        n_lv = 1 if level == n_levels - 1 else int(rng.integers(1, 3))
        args = (lane_attr, t.levels, t.sampler, t.base, t.block, 0, level, n_lv, 7)
        n = footprint_lines(*args, got)
        m = footprint_lines_twin(*args, want)
        assert got[:n].tolist() == want[:m].tolist(), (k, lane_attr[:, 3:5], level, n_lv)
        shortcut += m <= 2 * n_lv
    assert shortcut > 600           # the shortcut's cases are common here too


# --- exact texel blocks from DRAM ---------------------------------------------------------------

def _textured_quad(w: int, h: int, size: tuple[int, int], mip=MipFilter.NEAREST, seed=3) -> Scene:
    """A quad exactly filling a w x h view (unlit), textured with a size[0] x size[1] noise
    image: at w x h = size, texel centres fall on pixel centres (1:1)."""
    t = math.tan(math.radians(30.0))               # fovy 60 at distance 1
    mesh = quad(2 * t * w / h, 2 * t)
    rgba = np.random.default_rng(seed).integers(0, 256, (size[1], size[0], 4), dtype=np.uint8)
    rgba[..., 3] = 255
    material = Material("m", (1, 1, 1, 1), Texture("noise", rgba, mip=mip), unlit=True)
    m = np.eye(4)
    m[2, 3] = -1.0
    return Scene("textured-quad", "", [Draw(mesh, material, m)],
                 Camera((0.0, 0.0, 0.0), (0.0, 0.0, -1.0), fovy_deg=60.0, near=0.5, far=2.0))


def _texture_dram(scene, fmt: str, w: int, h: int):
    preset = apply_sets(get_preset("imr-baseline"), [("tex.format", fmt), ("tex.alpha_format", fmt)])
    c = run(scene, preset, Settings(w, h)).counters
    return c["mem.dram.read.texture"], c


def _lines(start: int, nbytes: int) -> int:
    """Bytes of the whole lines [start, start + nbytes) touches."""
    return (-(-(start + nbytes) // LINE) - start // LINE) * LINE


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_one_to_one_fetches_each_block_of_level_0_once(fmt):
    w, h = 128, 64
    dram, c = _texture_dram(_textured_quad(w, h, (w, h)), fmt, w, h)
    assert dram == _lines(0, level_bytes(fmt, w, h))
    # 4 lanes x 4 texels a quad; the quads the diagonal crosses (qw + qh - gcd of the quad
    # grid's sides) are shaded by both triangles
    qw, qh = w // 2, h // 2
    assert c["raster.texels"] == 16 * c["raster.quads"] == 16 * (qw * qh + qw + qh - math.gcd(qw, qh))
    assert c["raster.texture_l1_misses"] + c["raster.texture_l1_hits"] == c["raster.texture_l1_lookups"]


@pytest.mark.parametrize("fmt", ["rgba8", "bc1", "astc-6x6"])
def test_minified_reads_the_level_the_lod_names(fmt):
    """At half the texture's size the LOD is 1 (rho 2): level 1's blocks, each once."""
    w, h = 128, 64
    dram, _ = _texture_dram(_textured_quad(w, h, (2 * w, 2 * h)), fmt, w, h)
    assert dram == _lines(level_bytes(fmt, 2 * w, 2 * h), level_bytes(fmt, w, h))


def test_trilinear_reads_two_levels():
    """At 0.75 of the texture's size the LOD is log2(4/3): trilinear blends levels 0 and 1, and
    reads both (each block once); nearest-mip reads level 0 only. Texels: 16 a quad and level."""
    w, h = 96, 48
    size = (128, 64)
    near, cn = _texture_dram(_textured_quad(w, h, size, MipFilter.NEAREST), "rgba8", w, h)
    tri, ct = _texture_dram(_textured_quad(w, h, size, MipFilter.LINEAR), "rgba8", w, h)
    l0 = level_bytes("rgba8", *size)
    assert near == _lines(0, l0)
    assert tri == _lines(0, l0 + level_bytes("rgba8", size[0] // 2, size[1] // 2))
    assert ct["raster.texels"] == 2 * cn["raster.texels"] == 32 * cn["raster.quads"]


def test_formats_change_the_image_not_the_coverage():
    w, h = 64, 32
    scene = _textured_quad(w, h, (w, h))
    images = {}
    for fmt in ("rgba8", "bc1", "astc-8x8"):
        preset = apply_sets(get_preset("imr-baseline"), [("tex.format", fmt), ("tex.alpha_format", fmt)])
        images[fmt] = run(scene, preset, Settings(w, h)).image
    assert not np.array_equal(images["rgba8"], images["bc1"])
    assert not np.array_equal(images["bc1"], images["astc-8x8"])


def test_a_set_of_textures_is_laid_out_once_for_each_unit():
    """build_tables keeps the texture table of the textures it has laid out (as a GPU keeps them
    resident): the same textures through the same unit give the same table, equal to one made
    afresh; another unit, or other texture objects, their own."""
    tex = Texture("t", np.arange(16 * 16 * 4, dtype=np.uint8).reshape(16, 16, 4), Wrap.REPEAT,
                  Wrap.REPEAT)
    draws = [Draw(quad(), Material("m", texture=tex))]
    rgba8, bc1 = (TextureUnit(f, f, 16384, LINE, 4) for f in ("rgba8", "bc1"))
    kept = build_tables(draws, rgba8)[1]
    assert build_tables(draws, rgba8)[1] is kept
    for got, want in zip(kept, _texture_table([tex], rgba8)):
        assert np.array_equal(got, want)
    assert build_tables(draws, bc1)[1] is not kept
    twin = Texture("t", tex.rgba.copy(), Wrap.REPEAT, Wrap.REPEAT)
    assert build_tables([Draw(quad(), Material("m", texture=twin))], rgba8)[1] is not kept
