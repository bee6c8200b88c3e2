"""Heat maps of a result: per-pixel or per-tile values as 'inferno' images at a chosen size, on
a scale that several results can share so that their maps compare."""
from __future__ import annotations

import numpy as np


# name -> the map in a result: per pixel (h, w) or per screen tile (tiles_y, tiles_x)
MAPS = {
    "overdraw": lambda r: r.pixel_maps["overdraw"],   # fragments shaded per pixel
    "dram": lambda r: r.tile_maps["dram_bytes"],       # DRAM bytes per screen tile
    "fallbacks": lambda r: r.tile_maps["fallbacks"],   # tile fallbacks per tile (tilers)
    "compression": lambda r: r.comp_ratio(),             # colour raw : compressed per tile
    "texture": lambda r: r.tile_maps["texture_misses"],  # texture L1 misses (lines asked of L2) per tile
}


def resample(values, width: int, height: int) -> np.ndarray:
    """Nearest-neighbour to (height, width): tiles up to pixels, or pixels down to a thumbnail."""
    v = np.asarray(values, np.float64)
    if v.shape == (height, width):
        return v
    ty = np.minimum(np.arange(height) * v.shape[0] // height, v.shape[0] - 1)
    tx = np.minimum(np.arange(width) * v.shape[1] // width, v.shape[1] - 1)
    return v[ty][:, tx]


def heatmap_rgba(values, width: int, height: int, top: float | None = None) -> np.ndarray:
    """uint8 (height, width, 4); 0 is black and `top` (default: the map's own maximum) is the
    brightest colour."""
    from matplotlib import colormaps
    v = resample(values, width, height)
    top = v.max() if top is None else top
    rgba = colormaps["inferno"](np.clip(v / top, 0, 1) if top > 0 else v, bytes=True)
    return np.ascontiguousarray(rgba)
