"""The Python API in one function: a frame through a preset (pipelines.frame.run).

    from pipelines import render
    r = render("sponza", "imr-baseline", 1280, 720)
    r.color            # uint8 (720, 1280, 4)
    r.counters["raster.shaded"], r.derived()["dram_mb"]
    render("dragon", "amd-rdna4", 640, 360, rays=("shadow",)).image   # with a ray pass
"""
from __future__ import annotations

from scenes.model import Scene

from pipelines.frame import FrameResult, Settings, check_resolution, run  # noqa: F401
from pipelines.presets import Preset


def render(scene: Scene | str, preset: Preset | str = "imr-baseline", width: int = 1280,
           height: int = 720, samples: int = 1, frontend: str | None = None,
           rays: tuple[str, ...] = (), store_depth: bool = False) -> FrameResult:
    """Render one frame of `scene` through `preset`; returns images, counters and heat maps.
    `frontend` picks the geometry front end (legacy | ngg | mesh); None: the preset's default.
    `rays` adds ray passes (primary, shadow, ao) to the frame. `store_depth` stores depth that
    no later pass reads (default: don't-care, as applications declare it)."""
    return run(scene, preset, Settings(width, height, samples, frontend=frontend, rays=tuple(rays),
                                       store_depth=store_depth))
