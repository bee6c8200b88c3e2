"""ROP: the render targets (per-sample colour and depth) and the MSAA resolve. The per-fragment
depth test, write and blend are device functions in rop_kernels, inlined into the raster loop."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


def rgba8(color) -> np.ndarray:
    """A float RGBA colour (0..1, e.g. a clear value) as the RGBA8 unorm texel it stores as."""
    return np.round(np.clip(np.asarray(color[:4], np.float64), 0, 1) * 255).astype(np.uint8)


class Framebuffer(NamedTuple):
    color: np.ndarray    # uint8 (h, w, samples, 4) RGBA8 per sample
    depth: np.ndarray    # float32 (h, w, samples) D32F per sample
    shaded: np.ndarray   # uint32 (h, w) fragments shaded per pixel (the overdraw heat map)

    @staticmethod
    def make(width, height, samples, clear_color, clear_depth) -> "Framebuffer":
        color = np.empty((height, width, samples, 4), np.uint8)
        color[:] = rgba8(clear_color)
        depth = np.full((height, width, samples), clear_depth, np.float32)
        return Framebuffer(color, depth, np.zeros((height, width), np.uint32))

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
