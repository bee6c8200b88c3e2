"""Shading inputs: consumes a pass's draws and the light; produces DrawTable and TextureTable,
the flat arrays the raster kernels index by draw (material, fixed-function state) and texture."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from PIL import Image

from .formats import TEXEL
from .shade_kernels import TEX_BLOCK

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


class TextureTable(NamedTuple):
    data: np.ndarray         # uint8 (total,) every level of every texture, row-major RGBA8
    levels: np.ndarray       # int64 (n_tex, MAX_LEVELS, 4): data offset, width, height, tiled offset
    n_levels: np.ndarray     # int64 (n_tex,)
    base: np.ndarray         # int64 (n_tex,) byte address of the texture in the texture stream


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


def _tiled_bytes(w: int, h: int) -> int:
    """Bytes of one level in 4x4-texel blocks (padded), as the memory model addresses it."""
    return -(-w // TEX_BLOCK) * -(-h // TEX_BLOCK) * TEX_BLOCK * TEX_BLOCK * TEXEL.bytes_per_sample


def build_tables(draws) -> tuple[DrawTable, TextureTable]:
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
    levels = np.zeros((max(1, len(textures)), MAX_LEVELS, 4), np.int64)
    n_levels = np.ones(max(1, len(textures)), np.int64)
    base = np.zeros(max(1, len(textures)), np.int64)
    chunks, offset, address = [], 0, 0
    for ti, t in enumerate(textures):
        chain = mip_chain(t.rgba)
        n_levels[ti] = len(chain)
        base[ti] = address
        tiled = 0
        for li, lvl in enumerate(chain):
            h, w = lvl.shape[:2]
            levels[ti, li] = (offset, w, h, tiled)
            chunks.append(np.ascontiguousarray(lvl).reshape(-1))
            offset += lvl.size
            tiled += _tiled_bytes(w, h)
        address += tiled
    data = np.concatenate(chunks) if chunks else np.zeros(4, np.uint8)
    return table, TextureTable(data, levels, n_levels, base)


def light_vector(light) -> np.ndarray:
    """float64 (9,): unit direction towards the light, light colour, ambient."""
    d = np.asarray(light.direction, np.float64)
    d = d / np.linalg.norm(d)
    return np.concatenate([d, light.color, light.ambient]).astype(np.float64)
