"""ROP: the render targets (per-sample colour and depth) and the MSAA resolve. The per-fragment
depth test, write and blend are device functions in rop_kernels, inlined into the raster loop."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


def rgba8(color) -> np.ndarray:
    """A float RGBA colour (0..1, e.g. a clear value) as the RGBA8 unorm texel it stores as."""
    return np.round(np.clip(np.asarray(color[:4], np.float64), 0, 1) * 255).astype(np.uint8)


# Framebuffer.clear, float64 (CLEAR_N,): whether the raster starts each tile from the clear
# colour (CLEAR_WORD: its RGBA8 texel as one little-endian word), from the clear depth (CLEAR_Z)
# and from zero shaded counts, rather than from what the arrays hold.
CLEAR_COLOR, CLEAR_WORD, CLEAR_DEPTH, CLEAR_Z, CLEAR_SHADED, CLEAR_N = range(6)


class Framebuffer(NamedTuple):
    color: np.ndarray    # uint8 (h, w, samples, 4) RGBA8 per sample
    depth: np.ndarray    # float32 (h, w, samples) D32F per sample
    shaded: np.ndarray   # uint32 (h, w) fragments shaded per pixel (the overdraw heat map)
    # float64 (CLEAR_N,): what the raster writes into each tile as it takes the tile up, before
    # drawing it (the arrays' pixels are undefined until then): a clear made tile by tile, in
    # cache, instead of a pass over the whole target (24 MB at 1080p) that the raster then writes
    # again and that the frame's own thread waited for. The raster sets it to zero once it has
    # drawn every tile (renderer.raster.Raster.result); all zero, the arrays hold the pass's start.
    clear: np.ndarray

    @staticmethod
    def make(width, height, samples, clear_color, clear_depth) -> "Framebuffer":
        """A target of that size, cleared now (its tiles start from what it holds)."""
        color = np.empty((height, width, samples, 4), np.uint8)
        color[:] = rgba8(clear_color)
        depth = np.full((height, width, samples), clear_depth, np.float32)
        return Framebuffer(color, depth, np.zeros((height, width), np.uint32),
                           np.zeros(CLEAR_N, np.float64))

    @staticmethod
    def cleared_in_tiles(color: np.ndarray, depth: np.ndarray, shaded: np.ndarray,
                         clear_color=None, clear_depth=None, zero_shaded=False) -> "Framebuffer":
        """A target whose tiles the raster starts from the clear colour (an RGBA8 texel, or None:
        from `color` as it is), the clear depth (None: from `depth`) and, with zero_shaded, zero
        counts: the arrays may be np.empty's."""
        clear = np.zeros(CLEAR_N, np.float64)
        if clear_color is not None:
            clear[CLEAR_COLOR] = 1.0
            clear[CLEAR_WORD] = float(np.frombuffer(np.asarray(clear_color, np.uint8).tobytes(),
                                                    np.uint32)[0])
        if clear_depth is not None:
            clear[CLEAR_DEPTH], clear[CLEAR_Z] = 1.0, float(np.float32(clear_depth))
        clear[CLEAR_SHADED] = float(zero_shaded)
        return Framebuffer(color, depth, shaded, clear)

    def nearest_depth(self) -> np.ndarray:
        """float32 (h, w): the nearest sample's depth (the target itself at 1x)."""
        return self.depth[:, :, 0] if self.depth.shape[2] == 1 else self.depth.min(axis=2)

    def resolve(self) -> np.ndarray:
        """uint8 (h, w, 4): the average of the samples, rounded (MSAA resolve)."""
        return resolve(self.color)


def resolve(color: np.ndarray) -> np.ndarray:
    """uint8 (h, w, 4) of a (h, w, samples, 4) RGBA8 target: the average of the samples, rounded
    (MSAA resolve); one sample: the target itself, no copy."""
    if color.shape[2] == 1:
        return color[:, :, 0]
    return ((color.astype(np.uint32).sum(axis=2) + color.shape[2] // 2)
            // color.shape[2]).astype(np.uint8)
