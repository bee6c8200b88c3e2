"""Texture formats: what a texel block is in each (its texels and bytes), and each level of a
texture encoded by the ecosystem's encoders and decoded back, so that the image is made from the
real compressed blocks and the memory model prices the real block sizes.

    levels = encoded_levels(chain, "bc7")     # [(rgba8 decoded, block bytes), ...] per level

Encoders: etcpak (BC1, BC3, BC7, ETC2 RGB/RGBA; Wolfire/etcpak's fast encoders) and
astc-encoder-py (Arm's astcenc, ASTC LDR at its "fast" preset, which also decodes ASTC: the
reference decoder); BCn and ETC2 decode through texture2ddecoder (tests/test_texture_formats.py
holds it to a BC1 decoder written from the format and to astcenc within one step). A level is padded to whole blocks by repeating its last row and column, encoded,
decoded and cut back. Encoding is done once per level and kept on disk (TEXTURE_CACHE, keyed by
the format, the encoders' versions and the level's texels); decoding runs at every load (a few
milliseconds a level).
"""
from __future__ import annotations

import hashlib
import importlib.metadata
import os
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from .jit_cache import cache_home

ETCPAK = "etcpak (PyPI; Wolfire's etcpak encoders)"
ASTCENC = "astc-encoder-py (PyPI; Arm's astcenc 'fast' preset)"


@dataclass(frozen=True)
class TextureFormat:
    name: str
    block_w: int          # texels a block is wide
    block_h: int
    block_bytes: int
    alpha: bool           # whether the format stores alpha (one without it decodes alpha 255)
    spec: str             # where the block size comes from
    encoder: str


FORMATS = {f.name: f for f in (
    TextureFormat("rgba8", 4, 4, 64, True, "uncompressed RGBA8, addressed in 4x4-texel tiles", "none"),
    TextureFormat("bc1", 4, 4, 8, False, "BC1 (DXT1): 64 bits a 4x4 block (Microsoft D3D block compression)", ETCPAK),
    TextureFormat("bc3", 4, 4, 16, True, "BC3 (DXT5): 128 bits a 4x4 block (Microsoft D3D block compression)", ETCPAK),
    TextureFormat("bc7", 4, 4, 16, True, "BC7: 128 bits a 4x4 block (Microsoft D3D11 BC7 format)", ETCPAK),
    TextureFormat("etc2-rgb", 4, 4, 8, False, "ETC2 RGB8: 64 bits a 4x4 block (Khronos Data Format spec, ETC2)", ETCPAK),
    TextureFormat("etc2-rgba", 4, 4, 16, True, "ETC2 RGBA8 (EAC alpha): 128 bits a 4x4 block (Khronos Data Format spec)", ETCPAK),
    TextureFormat("astc-4x4", 4, 4, 16, True, "ASTC: 128 bits a block, 4x4 texels (Khronos Data Format spec, ASTC)", ASTCENC),
    TextureFormat("astc-6x6", 6, 6, 16, True, "ASTC: 128 bits a block, 6x6 texels (Khronos Data Format spec, ASTC)", ASTCENC),
    TextureFormat("astc-8x8", 8, 8, 16, True, "ASTC: 128 bits a block, 8x8 texels (Khronos Data Format spec, ASTC)", ASTCENC),
)}


# Told listener.encoding(format name, width, height) before a level is encoded (a disk-cache
# miss) and listener.encoded(seconds) after: the commands say so on stderr
# (pipelines.commands.compile_notice), the first run being slower.
ENCODE_LISTENERS: list = []


def texture_cache_dir() -> Path:
    """Where encoded levels are kept: $TILESIM_TEXTURE_CACHE, else beside the kernels' cache."""
    if os.environ.get("TILESIM_TEXTURE_CACHE"):
        return Path(os.environ["TILESIM_TEXTURE_CACHE"])
    return Path(os.environ.get("NUMBA_CACHE_DIR") or cache_home()) / "textures"


@lru_cache(maxsize=1)
def _encoder_versions() -> str:
    return ";".join(f"{p}={importlib.metadata.version(p)}"
                    for p in ("etcpak", "astc-encoder-py", "texture2ddecoder"))


def _pad(rgba: np.ndarray, bw: int, bh: int) -> np.ndarray:
    h, w = rgba.shape[:2]
    return np.pad(rgba, ((0, -h % bh), (0, -w % bw), (0, 0)), mode="edge")


def _encode(fmt: TextureFormat, rgba: np.ndarray) -> bytes:
    """rgba: uint8 (h, w, 4), whole blocks."""
    h, w = rgba.shape[:2]
    data = np.ascontiguousarray(rgba).tobytes()
    if fmt.encoder == ETCPAK:
        import etcpak
        encode = {"bc1": etcpak.compress_bc1, "bc3": etcpak.compress_bc3, "bc7": etcpak.compress_bc7,
                  "etc2-rgb": etcpak.compress_etc2_rgb, "etc2-rgba": etcpak.compress_etc2_rgba}
        return encode[fmt.name](data, w, h)
    import astc_encoder as astc
    return _astc_context(fmt).compress(astc.ASTCImage(astc.ASTCType.U8, w, h, 1, data),
                                       astc.ASTCSwizzle.from_str("RGBA"))


@lru_cache(maxsize=None)
def _astc_context(fmt: TextureFormat):
    import astc_encoder as astc
    config = astc.ASTCConfig(astc.ASTCProfile.LDR, fmt.block_w, fmt.block_h, 1,
                             astc.ASTCQualityPreset.FAST)
    return astc.ASTCContext(config, 1)      # one thread: the same blocks on every machine


def decode(fmt: TextureFormat, blocks: bytes, w: int, h: int) -> np.ndarray:
    """uint8 (h, w, 4) RGBA from whole blocks of w x h texels (texture2ddecoder gives BGRA)."""
    if fmt.encoder == ASTCENC:
        import astc_encoder as astc
        out = _astc_context(fmt).decompress(blocks, astc.ASTCImage(astc.ASTCType.U8, w, h, 1),
                                            astc.ASTCSwizzle.from_str("RGBA"))
        return np.frombuffer(out.data, np.uint8).reshape(h, w, 4)
    import texture2ddecoder as t2d
    bgra = {"bc1": t2d.decode_bc1, "bc3": t2d.decode_bc3, "bc7": t2d.decode_bc7,
            "etc2-rgb": t2d.decode_etc2, "etc2-rgba": t2d.decode_etc2a8}[fmt.name](blocks, w, h)
    return np.frombuffer(bgra, np.uint8).reshape(h, w, 4)[..., [2, 1, 0, 3]]


def encoded_blocks(fmt: TextureFormat, padded: np.ndarray) -> bytes:
    """The level's blocks, from the disk cache or the encoder (then kept)."""
    h, w = padded.shape[:2]
    key = hashlib.sha1(f"{fmt.name};{_encoder_versions()};{w}x{h};".encode()
                       + padded.tobytes()).hexdigest()
    path = texture_cache_dir() / fmt.name / f"{key}.bin"
    expected = (w // fmt.block_w) * (h // fmt.block_h) * fmt.block_bytes
    try:
        blocks = path.read_bytes()
        if len(blocks) == expected:
            return blocks
    except OSError:
        pass
    for listener in ENCODE_LISTENERS:
        listener.encoding(fmt.name, w, h)
    started = time.perf_counter()
    blocks = _encode(fmt, padded)
    for listener in ENCODE_LISTENERS:
        listener.encoded(time.perf_counter() - started)
    if len(blocks) != expected:
        raise RuntimeError(f"{fmt.encoder} gave {len(blocks)} bytes for a {w}x{h} {fmt.name} "
                           f"level, not {expected}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(blocks)
        tmp.replace(path)
    except OSError:
        pass            # an unwritable cache: encode again next time
    return blocks


def encoded_level(rgba: np.ndarray, name: str) -> np.ndarray:
    """The level as the GPU sees it in format `name`: encoded, decoded, cut to its size."""
    fmt = FORMATS[name]
    if fmt.encoder == "none":
        return rgba
    h, w = rgba.shape[:2]
    padded = _pad(rgba, fmt.block_w, fmt.block_h)
    ph, pw = padded.shape[:2]
    return np.ascontiguousarray(decode(fmt, encoded_blocks(fmt, padded), pw, ph)[:h, :w])


def level_bytes(name: str, w: int, h: int) -> int:
    """Bytes of a w x h level in whole blocks of format `name`."""
    fmt = FORMATS[name]
    return -(-w // fmt.block_w) * -(-h // fmt.block_h) * fmt.block_bytes
