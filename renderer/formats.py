"""Surface formats (DESIGN.md §2). Every byte count in tilesim comes from these, never a literal."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


class Format(NamedTuple):
    name: str
    texel: np.dtype        # one sample's storage
    bytes_per_sample: int  # = texel.itemsize

    @staticmethod
    def of(name: str, texel) -> "Format":
        texel = np.dtype(texel)
        return Format(name, texel, texel.itemsize)


FORMATS = {
    "rgba8": Format.of("rgba8", (np.uint8, 4)),    # colour, unorm
    "rgba16f": Format.of("rgba16f", (np.uint16, 4)),  # G-buffer / HDR: half floats as their bits
    "d32f": Format.of("d32f", np.float32),         # depth
    # A deferred renderer's G-buffer: four RGBA8 targets (albedo, normal, material, emissive) as
    # one interleaved 16-byte surface: the bytes of the MRTs, not their planar cache layout.
    "gbuffer": Format.of("gbuffer", (np.uint8, 16)),
}

# Geometry streams as an IMR front end fetches them.
INDEX = np.dtype(np.uint32)                                    # 4 B per index
VERTEX = np.dtype([("position", np.float32, 3), ("normal", np.float32, 3),
                   ("uv", np.float32, 2)])                     # 32 B per vertex
TEXEL = FORMATS["rgba8"]                                       # textures are RGBA8

# A tiler's parameter buffer (PowerVR / Apple style): each transformed vertex once (position,
# then the varyings the fragment shader reads), a record per primitive naming its three vertices
# and its state, and a 32-bit entry per tile the primitive touches.
PARAM_VERTEX = np.dtype([("position", np.float32, 4), ("normal", np.float32, 3),
                         ("uv", np.float32, 2)])                   # 36 B
PARAM_PRIMITIVE = np.dtype([("vertices", np.uint32, 3), ("state", np.uint32)])   # 16 B
TILE_LIST_ENTRY = np.dtype(np.uint32)                              # 4 B
