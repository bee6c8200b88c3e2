"""What a panel shows: the image, or one of the cost maps coloured on one scale shared by all
panels (so the same colour means the same number in every architecture). Pure numpy.

Consumes `pipelines.result.Result`s; produces uint8 (h, w, 4) images the size of the render, row 0
on top, and a `Scale` that the footer draws as the legend.

    scale = shared_scale("overdraw", results)
    rgba = colorize("overdraw", results[0], scale)
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

MODES = ("image", "overdraw", "dram", "fallbacks", "depth")
MODE_TITLES = {
    "image": "image",
    "overdraw": "overdraw: fragments shaded per pixel",
    "dram": "DRAM bytes per pixel, per screen tile",
    "fallbacks": "tile fallbacks by reason",
    "depth": "depth: distance from the eye",
}

PIXEL = "pixel:"      # a mode for any other per-pixel map an architecture returns, e.g. the ray
                      # passes' nodes visited per pixel: "pixel:<name of the map>"


RAY = "ray:"          # a ray pass's own image (FrameResult.rt.images): "ray:primary", "ray:shadow", "ray:ao"


def extra_modes(results, ray_images=()) -> tuple[str, ...]:
    """Modes for the ray passes' images and the per-pixel maps beyond overdraw (the ray passes'
    traversal steps) that every panel carries."""
    if not results:
        return ()
    rays = [k for k in (ray_images[0] if ray_images else {})
            if all(k in imgs for imgs in ray_images)]
    names = [k for k in results[0].pixel_maps if k != "overdraw"
             and all(k in r.pixel_maps for r in results)]
    return tuple(RAY + k for k in rays) + tuple(PIXEL + k for k in names)


def mode_title(mode: str) -> str:
    if mode in MODE_TITLES:
        return MODE_TITLES[mode]
    if mode.startswith(RAY):
        return f"ray pass: {mode[len(RAY):]}"
    name = mode[len(PIXEL):]
    parts = name.split(".")
    if len(parts) == 3 and parts[0] == "rt" and parts[2] == "steps":
        return f"BVH traversal steps per pixel, {parts[1]} rays"
    return f"{name} per pixel"


def ray_rgba(image: np.ndarray) -> np.ndarray:
    """A ray pass's image as opaque RGBA8: colour as it is, a [0, 1] float (shadow, AO) as grey."""
    if image.ndim == 3:
        return np.ascontiguousarray(image)
    g = np.round(np.clip(image, 0.0, 1.0) * 255.0).astype(np.uint8)
    return np.ascontiguousarray(np.dstack([g, g, g, np.full_like(g, 255)]))


# Fallback reasons: a tile map named "fallback.<reason>" per reason where the architecture gives
# one, else the summed "fallbacks" map (pipelines.arch.tbdr sums HSR flushes and spills per tile).
REASON_COLORS = (                     # tab10, without its grey: distinct on the dimmed image
    (31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189),
    (140, 86, 75), (227, 119, 194), (188, 189, 34), (23, 190, 207))
DIM = 0.35                            # the image under the fallback map, grey at 35 %


def _lut() -> np.ndarray:
    from matplotlib import colormaps
    return colormaps["inferno"](np.linspace(0.0, 1.0, 256), bytes=True)


_INFERNO = None


def inferno() -> np.ndarray:
    """uint8 (256, 4): the 'inferno' map, as `tilesim render --heatmap`."""
    global _INFERNO
    if _INFERNO is None:
        _INFERNO = _lut()
    return _INFERNO


@dataclass(frozen=True)
class Scale:
    """The legend of a mode: a gradient lo..hi in `unit`, or named colours (fallback reasons)."""
    mode: str
    lo: float = 0.0
    hi: float = 0.0
    unit: str = ""
    swatches: tuple[tuple[str, tuple[int, int, int]], ...] = field(default=())


def tile_pixels(height: int, width: int, tile: int) -> np.ndarray:
    """float64 (tiles_y, tiles_x): pixels each screen tile covers (edge tiles are cut)."""
    ty = -(-height // tile)
    tx = -(-width // tile)
    rows = np.minimum(tile, height - np.arange(ty) * tile)
    cols = np.minimum(tile, width - np.arange(tx) * tile)
    return np.outer(rows, cols).astype(np.float64)


def per_pixel(tile_map: np.ndarray, height: int, width: int, tile: int) -> np.ndarray:
    """A per-tile map spread to the pixels (nearest: every pixel of a tile gets its value)."""
    ty = np.minimum(np.arange(height) // tile, tile_map.shape[0] - 1)
    tx = np.minimum(np.arange(width) // tile, tile_map.shape[1] - 1)
    return tile_map[ty][:, tx]


def dram_per_pixel(result) -> np.ndarray:
    """float64 (h, w): DRAM bytes of the pixel's tile / pixels in that tile. Presets differ in
    tile size (64 px IMR/DSBR, 32 px Apple), so bytes per tile would not compare; per pixel does."""
    t = result.tile_size
    m = result.tile_maps["dram_bytes"] / tile_pixels(result.height, result.width, t)
    return per_pixel(m, result.height, result.width, t)


def eye_depth(result, near: float, far: float) -> np.ndarray:
    """float64 (h, w): distance along the view axis from window depth (OpenGL: z_ndc = 2d - 1);
    NaN where nothing was drawn (depth 1.0)."""
    d = result.depth.astype(np.float64)
    z_ndc = 2.0 * d - 1.0
    z = 2.0 * near * far / (far + near - z_ndc * (far - near))
    return np.where(result.depth < 1.0, z, np.nan)


def fallback_maps(result) -> dict[str, np.ndarray]:
    """reason -> per-tile count; empty for architectures with no tile fallbacks."""
    per_reason = {k.split(".", 1)[1]: v for k, v in result.tile_maps.items() if k.startswith("fallback.")}
    if per_reason:
        return per_reason
    if "fallbacks" in result.tile_maps:
        return {"HSR flush or spill": result.tile_maps["fallbacks"]}
    return {}


def shared_scale(mode: str, results, near: float = 0.1, far: float = 100.0) -> Scale:
    """One scale for all panels: 0..the largest value any panel has (depth: nearest..farthest)."""
    if mode == "overdraw":
        hi = max((float(r.pixel_maps["overdraw"].max()) for r in results), default=0.0)
        return Scale(mode, 0.0, hi, "fragments/pixel")
    if mode == "dram":
        hi = max((float(dram_per_pixel(r).max()) for r in results), default=0.0)
        return Scale(mode, 0.0, hi, "B/pixel")
    if mode.startswith(PIXEL):
        name = mode[len(PIXEL):]
        hi = max((float(r.pixel_maps[name].max()) for r in results), default=0.0)
        return Scale(mode, 0.0, hi, "")
    if mode == "depth":
        zs = [eye_depth(r, near, far) for r in results]
        zs = [z[np.isfinite(z)] for z in zs]
        zs = [z for z in zs if z.size]
        if not zs:
            return Scale(mode, near, far, "units")
        return Scale(mode, float(min(z.min() for z in zs)), float(max(z.max() for z in zs)), "units")
    if mode == "fallbacks":
        reasons = []
        for r in results:
            for k in fallback_maps(r):
                if k not in reasons:
                    reasons.append(k)
        return Scale(mode, swatches=tuple((k, REASON_COLORS[i % len(REASON_COLORS)])
                                          for i, k in enumerate(reasons)))
    return Scale(mode)


def _ramp(v: np.ndarray, lo: float, hi: float) -> np.ndarray:
    t = (v - lo) / (hi - lo) if hi > lo else np.zeros_like(v)
    idx = np.clip(np.nan_to_num(t, nan=0.0) * 255.0 + 0.5, 0, 255).astype(np.intp)
    return inferno()[idx]


def colorize(mode: str, result, scale: Scale, near: float = 0.1, far: float = 100.0) -> np.ndarray:
    """uint8 (h, w, 4), opaque: the panel's picture in `mode` on `scale`."""
    if mode == "image":
        return np.ascontiguousarray(result.color)
    if mode == "overdraw":
        return _ramp(result.pixel_maps["overdraw"].astype(np.float64), scale.lo, scale.hi)
    if mode == "dram":
        return _ramp(dram_per_pixel(result), scale.lo, scale.hi)
    if mode.startswith(PIXEL):
        return _ramp(result.pixel_maps[mode[len(PIXEL):]].astype(np.float64), scale.lo, scale.hi)
    if mode == "depth":
        z = eye_depth(result, near, far)
        # near is bright: invert the ramp; nothing drawn is black
        rgba = _ramp(scale.hi - z + scale.lo, scale.lo, scale.hi)
        rgba[~np.isfinite(z)] = (0, 0, 0, 255)
        return rgba
    if mode == "fallbacks":
        grey = result.color[..., :3].astype(np.float64).mean(axis=2) * DIM
        out = np.repeat(grey[..., None], 3, axis=2)
        colors = dict(scale.swatches)
        best = np.zeros((result.height, result.width))
        for reason, m in fallback_maps(result).items():
            px = per_pixel(m.astype(np.float64), result.height, result.width, result.tile_size)
            hit = px > best               # a tile takes the colour of its most frequent reason
            best = np.maximum(best, px)
            out[hit] = colors.get(reason, (255, 255, 255))
        rgba = np.empty((result.height, result.width, 4), np.uint8)
        rgba[..., :3] = np.round(out)
        rgba[..., 3] = 255
        return rgba
    raise ValueError(f"unknown mode {mode!r} (modes: {', '.join(MODES)})")


def value_at(mode: str, result, ray_images: dict, x: int, y: int, near: float, far: float) -> str:
    """What `mode` shows at render pixel (x, y), as text for the footer's readout."""
    if mode == "overdraw":
        return f"{int(result.pixel_maps['overdraw'][y, x])}"
    if mode == "dram":
        return f"{dram_per_pixel(result)[y, x]:.3g} B"
    if mode == "depth":
        z = eye_depth(result, near, far)[y, x]
        return f"{z:.4g}" if np.isfinite(z) else "-"
    if mode == "fallbacks":
        t = result.tile_size
        hits = [f"{k} {int(m[min(y // t, m.shape[0] - 1), min(x // t, m.shape[1] - 1)])}"
                for k, m in fallback_maps(result).items()]
        return ", ".join(hits) or "-"
    if mode.startswith(PIXEL):
        return f"{result.pixel_maps[mode[len(PIXEL):]][y, x]:.4g}"
    if mode.startswith(RAY):
        v = ray_images[mode[len(RAY):]][y, x]
        return f"{float(v):.3g}" if np.ndim(v) == 0 else hex_rgb(v)
    return hex_rgb(result.color[y, x])


def hex_rgb(rgba) -> str:
    """A pixel's colour as the footer reads it out: #rrggbb."""
    return "#" + "".join(f"{int(c):02x}" for c in rgba[:3])
