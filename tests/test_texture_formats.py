"""Texture formats (issue 27 point 2): the blocks come from the ecosystem's encoders, decode as the
encoder's own decoder does (astcenc) or as the format says (BC1: a slow decoder written from the
format's description here), are priced by their real block sizes, and are kept on disk."""
from __future__ import annotations

import numpy as np
import pytest

from renderer import texture_formats as tf
from renderer.texture_formats import FORMATS, decode, encoded_blocks, encoded_level, level_bytes


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILESIM_TEXTURE_CACHE", str(tmp_path / "textures"))


def _image(w: int = 32, h: int = 24, seed: int = 0) -> np.ndarray:
    """Smooth colour ramps with some noise and an alpha ramp: what textures look like to a codec."""
    rng = np.random.default_rng(seed)
    y, x = np.mgrid[0:h, 0:w]
    rgba = np.stack([x * 255 / w, y * 255 / h, (x + y) * 127 / (w + h) + 60, 255 - x * 200 / w], -1)
    rgba += rng.normal(0, 6, rgba.shape)
    return np.clip(rgba, 0, 255).astype(np.uint8)


@pytest.mark.parametrize("name", [n for n in FORMATS if n != "rgba8"])
def test_blocks_have_the_formats_size(name):
    fmt = FORMATS[name]
    img = tf._pad(_image(), fmt.block_w, fmt.block_h)
    h, w = img.shape[:2]
    assert len(encoded_blocks(fmt, img)) == (w // fmt.block_w) * (h // fmt.block_h) * fmt.block_bytes
    assert level_bytes(name, 32, 24) == -(-32 // fmt.block_w) * -(-24 // fmt.block_h) * fmt.block_bytes


@pytest.mark.parametrize("name", ["astc-4x4", "astc-6x6", "astc-8x8"])
def test_astc_decodes_as_astcenc_does(name):
    """ASTC decodes through Arm's astcenc (the reference); texture2ddecoder's decoder agrees
    within one 8-bit step (it rounds the 16-bit interpolation differently)."""
    import texture2ddecoder as t2d
    import astc_encoder as astc
    fmt = FORMATS[name]
    img = tf._pad(_image(48, 48), fmt.block_w, fmt.block_h)
    h, w = img.shape[:2]
    blocks = encoded_blocks(fmt, img)
    config = astc.ASTCConfig(astc.ASTCProfile.LDR, fmt.block_w, fmt.block_h, 1, astc.ASTCQualityPreset.FAST)
    out = astc.ASTCContext(config, 1).decompress(blocks, astc.ASTCImage(astc.ASTCType.U8, w, h, 1),
                                                 astc.ASTCSwizzle.from_str("RGBA"))
    theirs = np.frombuffer(out.data, np.uint8).reshape(h, w, 4)
    assert np.array_equal(decode(fmt, blocks, w, h), theirs)
    other = np.frombuffer(t2d.decode_astc(blocks, w, h, fmt.block_w, fmt.block_h), np.uint8)
    assert np.abs(other.reshape(h, w, 4)[..., [2, 1, 0, 3]].astype(int) - theirs).max() <= 1


def _bc1_slow(blocks: bytes, w: int, h: int) -> np.ndarray:
    """BC1 from its description: two RGB565 endpoints, 2 bits a texel; c0 > c1 gives four
    colours (thirds), else three and transparent black. Integer rounding as the D3D reference
    rasteriser: (2 a + b) / 3 on 8-bit expanded endpoints, rounded down."""
    out = np.zeros((h, w, 4), np.uint8)
    data = np.frombuffer(blocks, np.uint8)
    for b in range((w // 4) * (h // 4)):
        c0, c1, bits = (int.from_bytes(data[b * 8 + k:b * 8 + k + 2], "little") for k in (0, 2, 4))
        bits |= int.from_bytes(data[b * 8 + 6:b * 8 + 8], "little") << 16

        def rgb(c):
            r, g, b_ = (c >> 11) & 31, (c >> 5) & 63, c & 31
            return np.array([(r << 3) | (r >> 2), (g << 2) | (g >> 4), (b_ << 3) | (b_ >> 2), 255])
        e0, e1 = rgb(c0), rgb(c1)
        if c0 > c1:
            palette = [e0, e1, (2 * e0 + e1) // 3, (e0 + 2 * e1) // 3]
        else:
            palette = [e0, e1, (e0 + e1) // 2, np.zeros(4, int)]
        by, bx = divmod(b, w // 4)
        for t in range(16):
            out[by * 4 + t // 4, bx * 4 + t % 4] = palette[(bits >> (2 * t)) & 3]
    return out


def test_bc1_decodes_as_the_format_says():
    """texture2ddecoder against a decoder written from BC1's description, within one step of 8
    bits (decoders round the thirds differently; etcpak's own decoder crashes in 0.9.15)."""
    fmt = FORMATS["bc1"]
    img = _image(32, 32)
    blocks = encoded_blocks(fmt, img)
    ours = decode(fmt, blocks, 32, 32).astype(int)
    slow = _bc1_slow(blocks, 32, 32)
    assert np.abs(ours[..., :3] - slow[..., :3]).max() <= 1
    assert (ours[..., 3] == slow[..., 3]).all()


@pytest.mark.parametrize("name,tolerance", [("bc1", 40), ("bc3", 40), ("bc7", 24), ("etc2-rgb", 40),
                                            ("etc2-rgba", 40), ("astc-4x4", 24), ("astc-6x6", 40),
                                            ("astc-8x8", 48)])
def test_decoded_levels_are_close_to_their_source(name, tolerance):
    """Lossy, within what the formats give on noisy ramps (mean error per channel in 8-bit
    steps); formats without alpha decode alpha 255."""
    img = _image(40, 28)                         # not whole blocks: padded, decoded, cut back
    out = encoded_level(img, name)
    assert out.shape == img.shape and out.dtype == np.uint8
    assert np.abs(out[..., :3].astype(int) - img[..., :3]).mean() < tolerance / 4
    if FORMATS[name].alpha:
        assert np.abs(out[..., 3].astype(int) - img[..., 3]).mean() < tolerance / 4
    else:
        assert (out[..., 3] == 255).all()


def test_rgba8_is_the_image_itself():
    img = _image()
    assert encoded_level(img, "rgba8") is img


def test_encoded_once_then_read_from_disk(monkeypatch, tmp_path):
    img = _image()
    first = encoded_level(img, "bc7")
    assert list((tmp_path / "textures" / "bc7").glob("*.bin"))

    def no_encoder(*_):
        raise AssertionError("encoded again")
    monkeypatch.setattr(tf, "_encode", no_encoder)
    assert np.array_equal(encoded_level(img, "bc7"), first)


def test_a_truncated_cache_file_is_encoded_again(tmp_path):
    img = _image()
    first = encoded_level(img, "bc1")
    path, = (tmp_path / "textures" / "bc1").glob("*.bin")
    path.write_bytes(path.read_bytes()[:10])
    assert np.array_equal(encoded_level(img, "bc1"), first)
