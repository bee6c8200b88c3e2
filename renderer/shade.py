"""Shading inputs: consumes a pass's draws, the light and the texture unit (TextureUnit: the
formats textures are stored in, the L1 they are read through); produces DrawTable and
TextureTable, the flat arrays the raster kernels index by draw (material, fixed-function state)
and texture."""
from __future__ import annotations

import weakref
from typing import NamedTuple

import numpy as np
from PIL import Image

from .memo import MeshMemo
from .pow2 import exponent
from .texture_formats import FORMATS, encoded_level, level_bytes

MAX_LEVELS = 16      # mip levels for textures up to 32768², far beyond any asset here


class DrawTable(NamedTuple):
    """One row per draw of the pass."""
    base_color: np.ndarray   # float32 (n, 4) glTF baseColorFactor
    texture: np.ndarray      # int32 (n,) index into TextureTable, -1 for none
    alpha_mode: np.ndarray   # int8 (n,) scenes.model.AlphaMode
    alpha_cutoff: np.ndarray # float32 (n,)
    unlit: np.ndarray        # bool (n,)
    depth_test: np.ndarray   # bool (n,) compare LESS
    depth_write: np.ndarray  # bool (n,)
    blend: np.ndarray        # bool (n,) source-over


class TextureUnit(NamedTuple):
    """How a GPU stores and reads colour textures (pipelines.presets.texture says per preset)."""
    format: str              # renderer.texture_formats name for textures without alpha
    alpha_format: str        # ... for textures with alpha (a texel below 255)
    l1_bytes: int            # the texture L1's capacity
    l1_line: int             # its line, bytes (a power of two)
    l1_ways: int


RGBA8_UNIT = TextureUnit("rgba8", "rgba8", 16384, 64, 4)      # uncompressed, a GCN-like L1


class TextureTable(NamedTuple):
    data: np.ndarray         # uint32 (texels,) every level of every texture, row-major, a texel
                             # an RGBA8 word (R in the low byte) as decoded from its format's blocks
    levels: np.ndarray       # int64 (n_tex, MAX_LEVELS, 5): data offset (texels), width, height, offset
                             # of the level's blocks from the texture's base, blocks in a row
    n_levels: np.ndarray     # int64 (n_tex,)
    base: np.ndarray         # int64 (n_tex,) byte address of the texture in the texture stream
    block: np.ndarray        # int64 (n_tex, 5): its format's block width, height (texels), bytes,
                             # log2 of width and height (-1: not a power of two)
    sampler: np.ndarray      # int64 (n_tex, 3): wrap s, wrap t (scenes.model.Wrap), MipFilter
    l1: np.ndarray           # int64 (3,): the texture L1's sets, ways, log2 line (texture_l1)


def mip_chain(rgba: np.ndarray) -> list[np.ndarray]:
    """Box-filtered levels down to 1x1 (Pillow's BOX resampling)."""
    levels = [rgba]
    img = Image.fromarray(rgba, "RGBA")
    w, h = img.size
    while (w > 1 or h > 1) and len(levels) < MAX_LEVELS:
        w, h = max(1, w // 2), max(1, h // 2)
        img = img.resize((w, h), Image.Resampling.BOX)
        levels.append(np.asarray(img))
    return levels


_DECODED: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()   # Texture -> {format: levels}
_MIPS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()      # Texture -> its mip_chain
# The texture tables of the last texture sets drawn, as a GPU keeps textures resident between
# frames: every level of every texture in one array is a copy of all of them (4.3 ms a frame on
# pul1duel at 1280x720), which only a new set of textures needs.
_TABLES = MeshMemo(4)


def stored_levels(t, name: str) -> list[np.ndarray]:
    """Texture t's mip chain as decoded from format `name`'s blocks (kept while t lives). The
    RGBA chain is filtered once for all formats: a report's presets store a texture in up to
    five (0.5 s of a warm default report went to filtering the same chains again)."""
    by_format = _DECODED.setdefault(t, {})
    if name not in by_format:
        chain = _MIPS.get(t)
        if chain is None:
            chain = _MIPS[t] = mip_chain(t.rgba)
        by_format[name] = [encoded_level(lvl, name) for lvl in chain]
    return by_format[name]


def texture_format(t, unit: TextureUnit) -> str:
    """The format `unit` stores texture t in: its alpha format if any texel is not opaque."""
    return unit.alpha_format if int(t.rgba[..., 3].min()) < 255 else unit.format


def l1_shape(unit: TextureUnit) -> np.ndarray:
    """TextureTable.l1: the L1's sets, ways and log2 line; ValueError for a shape the cache
    model cannot index (renderer.texture_l1 takes a set by a mask)."""
    line, ways = unit.l1_line, unit.l1_ways
    sets = unit.l1_bytes // (line * ways)
    if line & (line - 1) or sets < 1 or sets & (sets - 1) or sets * line * ways != unit.l1_bytes:
        raise ValueError(f"texture L1 of {unit.l1_bytes} B in {ways} ways of {line} B lines: "
                         f"its sets and line must be whole powers of two")
    return np.array([sets, ways, line.bit_length() - 1], np.int64)


def build_tables(draws, unit: TextureUnit = RGBA8_UNIT) -> tuple[DrawTable, TextureTable]:
    """The draws' materials and state, and their textures as `unit` stores them (shared with
    every pass that draws the same textures: callers must not write to it)."""
    textures, tex_index = [], {}
    for d in draws:
        t = d.material.texture
        if t is not None and id(t) not in tex_index:
            tex_index[id(t)] = len(textures)
            textures.append(t)
    n = len(draws)
    table = DrawTable(
        base_color=np.array([d.material.base_color for d in draws], np.float32).reshape(n, 4),
        texture=np.array([tex_index.get(id(d.material.texture), -1) if d.material.texture is not None
                          else -1 for d in draws], np.int32),
        alpha_mode=np.array([int(d.material.alpha_mode) for d in draws], np.int8),
        alpha_cutoff=np.array([d.material.alpha_cutoff for d in draws], np.float32),
        unlit=np.array([d.material.unlit for d in draws], np.bool_),
        depth_test=np.array([d.state.depth_test for d in draws], np.bool_),
        depth_write=np.array([d.state.depth_write for d in draws], np.bool_),
        blend=np.array([d.state.blend for d in draws], np.bool_),
    )
    key = (tuple(id(t) for t in textures), unit)
    return table, _TABLES.get(key, textures, lambda: _texture_table(textures, unit))


def _texture_table(textures: list, unit: TextureUnit) -> TextureTable:
    levels = np.zeros((max(1, len(textures)), MAX_LEVELS, 5), np.int64)
    n_levels = np.ones(max(1, len(textures)), np.int64)
    base = np.zeros(max(1, len(textures)), np.int64)
    block = np.tile(np.array([4, 4, 64, 2, 2], np.int64), (max(1, len(textures)), 1))
    sampler = np.zeros((max(1, len(textures)), 3), np.int64)
    names = tuple(texture_format(t, unit) for t in textures)
    chunks, offset, address = [], 0, 0
    for ti, (t, name) in enumerate(zip(textures, names)):
        fmt = FORMATS[name]
        chain = stored_levels(t, name)
        n_levels[ti] = len(chain)
        base[ti] = address
        block[ti] = (fmt.block_w, fmt.block_h, fmt.block_bytes, exponent(fmt.block_w), exponent(fmt.block_h))
        sampler[ti] = (int(t.wrap_s), int(t.wrap_t), int(t.mip))
        stored = 0
        for li, lvl in enumerate(chain):
            h, w = lvl.shape[:2]
            levels[ti, li] = (offset, w, h, stored, -(-w // fmt.block_w))
            chunks.append(lvl.reshape(-1))
            offset += lvl.size // 4
            stored += level_bytes(name, w, h)
        address += stored
    data = (np.concatenate(chunks) if chunks else np.zeros(4, np.uint8)).view("<u4")
    return TextureTable(data, levels, n_levels, base, block, sampler, l1_shape(unit))


def light_vector(light) -> np.ndarray:
    """float64 (9,): unit direction towards the light, light colour, ambient."""
    d = np.asarray(light.direction, np.float64)
    d = d / np.linalg.norm(d)
    return np.concatenate([d, light.color, light.ambient]).astype(np.float64)
