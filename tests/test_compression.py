"""Framebuffer codecs: bit-exact round trips (hypothesis), the size-only path against a slow
Python twin, hand-worked block sizes, solid colour -> metadata only, noise -> raw, real renders,
and transaction elimination's signatures against zlib."""
from __future__ import annotations

import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from renderer.compression import (CODECS, CompressionError, block_sizes, compressed_size, decode,
                                  encode, tile_signatures, tile_size_map, tiles_to_write)
from renderer.compression import codecs as C


# --- slow twin: block sizes as the layout table in codecs_kernels states them -----------------
def _group_bits(g: np.ndarray, bits: int) -> int:
    widths = [int(g[..., c].max() - g[..., c].min()).bit_length() for c in range(4)]
    return 4 * ((4 if bits == 8 else 5) + bits) + g.shape[0] * g.shape[1] * sum(widths)


def naive_block_sizes(img: np.ndarray, codec: str, max_block: int = 256, clear=None) -> np.ndarray:
    bits = 8 * img.dtype.itemsize
    bpp = 4 * img.dtype.itemsize
    one = 255 if bits == 8 else 0x3C00
    if codec == "dcc":
        bw, bh, gw, gh = 8, 256 // bpp // 8, 8, 256 // bpp // 8
    elif codec == "afbc":
        bw, bh, gw, gh = 16, 16, 4, 4
    elif codec == "ubwc":
        bw = 16 if bpp == 4 else 8
        bh = gh = 256 // bpp // bw
        gw = bw
    else:
        bw, bh, gw, gh = 16, 16, 8, 8
    h, w = img.shape[:2]
    nby, nbx = -(-h // bh), -(-w // bw)
    ys = np.minimum(np.arange(nby * bh), h - 1)
    xs = np.minimum(np.arange(nbx * bw), w - 1)
    pad = img[ys][:, xs].astype(np.int64)          # edge pixels repeated
    meta = {"dcc": 1, "afbc": 16, "apple": 8, "ubwc": 1}[codec]
    out = np.zeros((nby, nbx), np.int64)
    for by in range(nby):
        for bx in range(nbx):
            b = pad[by * bh:(by + 1) * bh, bx * bw:(bx + 1) * bw]
            solid = (b == b[0, 0]).all()
            col = tuple(int(v) for v in b[0, 0])
            groups = [b[j:j + gh, i:i + gw] for j in range(0, bh, gh) for i in range(0, bw, gw)]
            raw = b.size * bits // 8
            if codec == "dcc":
                const = (col[:3] in ((0, 0, 0), (one, one, one))) and col[3] in (0, one)
                if solid and (const or (clear is not None and col == tuple(clear))):
                    size = 0
                else:
                    n = -(-_group_bits(b, bits) // 8)
                    n = -(-n // 64) * 64
                    size = raw if (n >= raw or n > max_block) else n
            elif codec == "afbc":
                if solid:
                    size = 0
                else:
                    size = 0
                    for g in groups:
                        n = -(-_group_bits(g, bits) // 8)
                        graw = g.size * bits // 8
                        size += graw if (n >= graw or n > 63) else n
            elif codec == "ubwc":
                n = -(-_group_bits(b, bits) // 8)
                n = -(-n // 32) * 32
                size = raw if n >= raw else n
            else:
                if solid and bits == 8:
                    size = 0
                else:
                    n = -(-sum(_group_bits(g, bits) for g in groups) // 8)
                    n = -(-n // 16) * 16
                    size = raw if n >= raw else n
            out[by, bx] = size + meta
    return out


def _gradient(h, w, dtype, kx=1, ky=1):
    y, x = np.mgrid[0:h, 0:w]
    top = np.iinfo(dtype).max
    return np.stack([(x * kx) % (top + 1), (y * ky) % (top + 1), (x + y) % (top + 1),
                     np.full_like(x, top)], -1).astype(dtype)


surfaces = st.sampled_from([np.uint8, np.uint16]).flatmap(
    lambda dt: hnp.arrays(dt, st.tuples(st.integers(1, 40), st.integers(1, 40), st.just(4)),
                          elements=st.integers(0, np.iinfo(dt).max)))


def _smooth(draw_shape, dtype, seed, levels):
    """Low-entropy images: a few colours in blocks plus a gradient, so compressed paths run."""
    h, w = draw_shape
    rng = np.random.default_rng(seed)
    base = rng.integers(0, levels, (h // 4 + 1, w // 4 + 1, 4)).repeat(4, 0).repeat(4, 1)[:h, :w]
    return (base + _gradient(h, w, np.uint8, 1, 1) % 4).astype(dtype)


# --- round trips ------------------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(surfaces, st.sampled_from(CODECS))
def test_round_trip_random(img, codec):
    enc = encode(img, codec)
    assert np.array_equal(decode(enc), img)
    assert enc.compressed_bytes == compressed_size(img, codec)
    assert np.array_equal(enc.block_bytes + C.META_BYTES[codec], block_sizes(img, codec))
    L = C.layout(codec, 8 * img.itemsize)
    raw_block = int(L[C.K.L_BW] * L[C.K.L_BH]) * 4 * img.itemsize
    assert (enc.block_bytes <= raw_block).all()              # never more than raw + metadata


@settings(max_examples=25, deadline=None)
@given(st.tuples(st.integers(1, 48), st.integers(1, 48)), st.sampled_from([np.uint8, np.uint16]),
       st.integers(0, 2**31), st.sampled_from([1, 3, 40]), st.sampled_from(CODECS),
       st.sampled_from([64, 128, 256]))
def test_round_trip_smooth_and_sizes_match_twin(shape, dtype, seed, levels, codec, max_block):
    img = _smooth(shape, dtype, seed, levels)
    enc = encode(img, codec, max_compressed_block=max_block)
    assert np.array_equal(decode(enc), img)
    assert np.array_equal(block_sizes(img, codec, max_block), naive_block_sizes(img, codec, max_block))


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_round_trip_gradients_and_solid(codec, dtype):
    for img in (_gradient(45, 70, dtype), _gradient(33, 17, dtype, 37, 91),
                np.full((19, 50, 4), 7, dtype), np.zeros((1, 1, 4), dtype)):
        enc = encode(img, codec)
        assert np.array_equal(decode(enc), img)
        assert np.array_equal(block_sizes(img, codec), naive_block_sizes(img, codec))


def test_dcc_fast_clear_round_trip():
    img = np.full((24, 40, 4), [12, 34, 56, 255], np.uint8)
    img[8:16, 8:16] = [200, 1, 2, 3]
    enc = encode(img, "dcc", clear=(12, 34, 56, 255))
    assert np.array_equal(decode(enc), img)
    assert enc.payload.size == 64                       # one constant block: one sector
    assert enc.metadata.size == 3 * 5
    assert np.array_equal(block_sizes(img, "dcc", clear=(12, 34, 56, 255)),
                          naive_block_sizes(img, "dcc", clear=(12, 34, 56, 255)))


@pytest.fixture(scope="module")
def renders():
    from pipelines.api import render
    return [render(s, "imr-baseline", 80, 48).color for s in ("spheres", "sponza", "particles")]


@pytest.mark.parametrize("codec", CODECS)
def test_round_trip_real_renders(renders, codec):
    for color in renders:
        hdr = (color.astype(np.float32) / 255.0 * 4.0).astype(np.float16)   # an HDR stand-in
        for img in (color, hdr.view(np.uint16)):
            enc = encode(img, codec)
            assert np.array_equal(decode(enc), img)
            assert enc.compressed_bytes < enc.raw_bytes        # real frames do compress
            assert np.array_equal(block_sizes(img, codec), naive_block_sizes(img, codec))
    assert np.array_equal(decode(encode(hdr, codec)), hdr.view(np.uint16))   # float16 accepted


def test_images_unchanged_by_compression_on_every_scene_and_preset():
    """Every built-in scene's colour (and its RGBA16F HDR version) through every preset's codec
    configuration decodes to the same bits; the fast-clear path gets the scene's background."""
    from pipelines.api import render
    from pipelines.presets.compression import PARAMS
    from renderer.rop import rgba8
    from scenes.library import get_scene, scene_names
    configs = sorted({(p.codec.value, p.dcc_max_compressed_block.value) for p in PARAMS.values()
                      if p.codec.value != "none"})          # amd-gcn (GCN 1.0) has no DCC
    assert {c for c, _ in configs} == set(CODECS)
    for scene in scene_names():
        color = render(scene, "imr-baseline", 64, 40).color
        hdr = (color.astype(np.float32) / 255.0 * 2.0).astype(np.float16).view(np.uint16)
        clear = rgba8(get_scene(scene).background)
        for codec, max_block in configs:
            for img, cl in ((color, clear), (hdr, None)):
                enc = encode(img, codec, max_block, cl if codec == "dcc" else None)
                assert np.array_equal(decode(enc), img), (scene, codec, max_block)


# --- solid colour is metadata, noise is raw ---------------------------------------------------
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_solid_colour_costs_metadata_only(dtype):
    img = np.full((64, 128, 4), [3, 140, 77, 200], dtype)
    afbc = encode(img, "afbc")
    assert afbc.payload.size == 0 and afbc.metadata.size == (64 // 16) * (128 // 16) * 16
    dcc = encode(img, "dcc", clear=(3, 140, 77, 200))
    assert dcc.payload.size == 0 and dcc.metadata.size == 64 * 128 * 4 * img.itemsize // 256
    black = np.zeros_like(img)
    black[..., 3] = 255 if dtype == np.uint8 else 0x3C00                # DCC constant 0001
    assert encode(black, "dcc").payload.size == 0
    ubwc = encode(img, "ubwc")          # no constant mode is documented: one 32 B unit per block
    assert ubwc.payload.size == 32 * (64 * 128 * 4 * img.itemsize // 256)
    apple = encode(img, "apple")
    if dtype == np.uint8:
        assert apple.payload.size == 0 and apple.metadata.size == 4 * 8 * 8
    else:   # an 8 B colour does not fit beside the 8 B record's fields: 4 header-only groups
        assert apple.payload.size == 4 * 8 * 48


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("dtype", [np.uint8, np.uint16])
def test_noise_stored_raw_never_more_than_raw_plus_metadata(codec, dtype):
    rng = np.random.default_rng(1)
    img = rng.integers(0, np.iinfo(dtype).max + 1, (64, 64, 4)).astype(dtype)
    enc = encode(img, codec)
    assert enc.payload.size == img.nbytes
    n_blocks = enc.block_bytes.size
    assert enc.compressed_bytes == img.nbytes + n_blocks * C.META_BYTES[codec]
    assert np.array_equal(decode(enc), img)


# --- sizes worked out by hand -----------------------------------------------------------------
def test_hand_worked_dcc_blocks():
    b = np.zeros((8, 8, 4), np.uint8)
    b[..., 0] = np.arange(8)[None, :]       # R = x: range 7 -> 3-bit deltas
    b[..., 3] = 200
    # header 4 x (4-bit width + 8-bit base) = 48 bits; 64 px x 3 bits = 192 -> 240 bits = 30 B
    # -> one 64 B sector; + 1 B metadata
    assert compressed_size(b, "dcc") == 64 + 1
    b[..., 1] = np.arange(64).reshape(8, 8) * 4     # G range 252 -> 8 bits: 48 + 64*(3+8) = 752 bits
    assert compressed_size(b, "dcc") == 128 + 1      # 94 B -> two sectors
    assert compressed_size(b, "dcc", max_compressed_block=64) == 256 + 1   # too big for GFX9: raw
    h = np.zeros((4, 8, 4), np.uint16)              # RGBA16F: 8x4 px = 256 B
    h[...] = 0x3C00
    h[..., 0] += np.arange(8, dtype=np.uint16)[None, :]
    # 4 x (5 + 16) = 84 bits + 32 px x 3 bits = 180 bits = 23 B -> 64 B
    assert compressed_size(h, "dcc") == 64 + 1


def test_hand_worked_afbc_and_apple_blocks():
    s = np.zeros((16, 16, 4), np.uint8)
    s[..., 3] = 255
    s[..., 0] = (np.arange(16) % 4)[None, :]        # every 4x4 sub-block: R range 3 -> 2 bits
    # sub-block: 48 + 16 x 2 = 80 bits = 10 B; 16 of them + the 16 B header
    assert compressed_size(s, "afbc") == 16 * 10 + 16
    s[..., 0] = np.arange(16)[None, :]              # Apple 8x8 groups: R range 7 -> 3 bits
    # group: 48 + 64 x 3 = 240 bits; 4 groups = 960 bits = 120 B -> 128 B (16 B granule) + 8 B
    assert compressed_size(s, "apple") == 128 + 8
    # AFBC: sub-blocks at x 0-3, 4-7 ... have range 3 again -> still 2 bits each
    assert compressed_size(s, "afbc") == 16 * 10 + 16


def test_hand_worked_ubwc_blocks():
    b = np.zeros((4, 16, 4), np.uint8)             # 16x4 px = 256 B at RGBA8
    b[..., 0] = np.arange(16)[None, :] % 8         # R range 7: 3 bits
    # 48 + 64 x 3 = 240 bits = 30 B -> one 32 B unit + 1 B flag
    assert compressed_size(b, "ubwc") == 32 + 1
    h = np.zeros((4, 8, 4), np.uint16)             # 8x4 px = 256 B at RGBA16F; flat: 84 bits = 11 B
    assert compressed_size(h, "ubwc") == 32 + 1


def test_tile_size_map_sums_to_total():
    img = _gradient(40, 70, np.uint8, 5, 3)
    for codec in CODECS:
        m = tile_size_map(img, codec, 32)
        assert m.shape == (2, 3) and m.sum() == compressed_size(img, codec)


def test_bad_input_is_one_clear_error():
    with pytest.raises(CompressionError, match="shape"):
        encode(np.zeros((4, 4, 3), np.uint8), "dcc")
    with pytest.raises(CompressionError, match="float32"):
        encode(np.zeros((4, 4, 4), np.float32), "dcc")
    with pytest.raises(CompressionError, match="unknown codec"):
        compressed_size(np.zeros((4, 4, 4), np.uint8), "astc")
    with pytest.raises(CompressionError, match="64, 128 or 256"):
        compressed_size(np.zeros((4, 4, 4), np.uint8), "dcc", max_compressed_block=96)


# --- transaction elimination ------------------------------------------------------------------
def test_tile_signatures_are_zlib_crc32():
    img = _gradient(37, 50, np.uint8, 7, 3)
    sig = tile_signatures(img, 16)
    assert sig.shape == (3, 4)
    for ty in range(3):
        for tx in range(4):
            tile = np.ascontiguousarray(img[ty * 16:ty * 16 + 16, tx * 16:tx * 16 + 16])
            assert sig[ty, tx] == zlib.crc32(tile.tobytes())
    other = img.copy()
    other[20, 40, 1] ^= 1
    changed = tiles_to_write(sig, tile_signatures(other, 16))
    assert changed.sum() == 1 and changed[1, 2]
    assert tiles_to_write(None, sig).all()
