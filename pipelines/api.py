"""The Python API in one function.

    from pipelines import render
    r = render("sponza", "imr-baseline", 1280, 720)
    r.color            # uint8 (720, 1280, 4)
    r.counters["raster.shaded"], r.derived()["dram_mb"]
"""
from __future__ import annotations

import time

from renderer.frontend import FRONTENDS
from scenes.library import get_scene
from scenes.model import Scene, SceneError

from .presets import Preset, get_preset
from .registry import ARCHITECTURES
from .result import Result

MAX_DIM = 16384      # integer edge functions are sized for 16384 x 16384 (DESIGN.md §2)


def check_resolution(width: int, height: int) -> None:
    if not (1 <= width <= MAX_DIM and 1 <= height <= MAX_DIM):
        raise SceneError(f"resolution {width}x{height} out of range: each side must be 1..{MAX_DIM}")


def render(scene: Scene | str, preset: Preset | str = "imr-baseline", width: int = 1280,
           height: int = 720, samples: int = 1, frontend: str | None = None) -> Result:
    """Render one frame of `scene` through `preset`; returns images, counters and heat maps.
    `frontend` picks the geometry front end (legacy | ngg | mesh); None: the preset's default."""
    check_resolution(width, height)
    if samples not in (1, 4):
        raise SceneError(f"samples must be 1 or 4, got {samples}")
    scene = get_scene(scene) if isinstance(scene, str) else scene
    preset = get_preset(preset) if isinstance(preset, str) else preset
    if frontend is not None and frontend not in FRONTENDS:
        raise SceneError(f"unknown front end {frontend!r} (try: {', '.join(FRONTENDS)})")
    kw = {} if frontend is None else {"frontend": frontend}
    t0 = time.perf_counter()
    result = ARCHITECTURES[preset.architecture](scene, preset, width, height, samples, **kw)
    result.seconds = time.perf_counter() - t0
    return result
