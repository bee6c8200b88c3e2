"""The frame runner: one owner for a frame (DESIGN.md §3).

    from pipelines.frame import Settings, run
    f = run(get_scene("postchain"), get_preset("amd-rdna2"), Settings(640, 360, rays=("shadow",)))
    f.image                  # uint8 (h, w, 4): what the frame presents
    f.counters               # the frame's totals: the sum of its passes' counters
    [(p.name, p.kind, p.counters.dram_bytes()) for p in f.passes]

Consumes a scene, a preset and the settings; walks the scene's frame graph (scenes.model
.FrameGraph, `Scene.graph`): the render passes through the preset's architecture (the registry,
pipelines.registry), which runs them as one frame with one memory model; then the compute passes
(pipelines.passes.postchain) on the G-buffer of that render; then the ray passes
(pipelines.passes.raytrace), shadows from the raster's depth, every fetch priced through the
preset's caches. Produces a FrameResult: the per-pass counters, their totals, the images and the
heat maps. `tilesim render`, `report` and `view` and `pipelines.render` call `run` and only format
what it returns.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from renderer.counters import Counters
from renderer.frontend import FRONTENDS
from scenes.library import get_scene
from scenes.model import Scene, SceneError

from pipelines.passes.present import present
from pipelines.presets import Preset, get_preset
from pipelines.registry import ARCHITECTURES
from pipelines.result import Result

MAX_DIM = 16384      # integer edge functions are sized for 16384 x 16384 (DESIGN.md §2)


def check_resolution(width: int, height: int) -> None:
    if not (1 <= width <= MAX_DIM and 1 <= height <= MAX_DIM):
        raise SceneError(f"resolution {width}x{height} out of range: each side must be 1..{MAX_DIM}")


@dataclass(frozen=True)
class Settings:
    width: int = 1280
    height: int = 720
    samples: int = 1
    fps: float = 60.0                    # frame rate the report's GB/s are given at
    frontend: str | None = None          # geometry front end; None: the preset's default
    rays: tuple[str, ...] = ()           # ray passes added to the frame graph (scenes.model.RAY_PASSES)
    store_depth: bool = False            # keep depth stores no later pass reads (Scene.graph)
    ray_order: str = "pixel"             # shadow and AO rays: "pixel" or "sorted" (raytrace.RAY_ORDERS)
    bvh: str = "auto"                    # "auto", "flat" or "two-level" (raytrace.BVH_FORMS)

    def check(self) -> None:
        check_resolution(self.width, self.height)
        if self.samples not in (1, 4):
            raise SceneError(f"samples must be 1 or 4, got {self.samples}")
        if self.frontend is not None and self.frontend not in FRONTENDS:
            raise SceneError(f"unknown front end {self.frontend!r} (try: {', '.join(FRONTENDS)})")
        if self.ray_order not in ("pixel", "sorted"):         # pipelines.passes.raytrace.RAY_ORDERS
            raise SceneError(f"unknown ray order {self.ray_order!r} (try: pixel, sorted)")
        if self.bvh not in ("auto", "flat", "two-level"):       # pipelines.passes.raytrace.BVH_FORMS
            raise SceneError(f"unknown BVH form {self.bvh!r} (try: auto, flat, two-level)")


@dataclass
class PassResult:
    """One node's share of the frame. The architecture runs all render passes as one frame (their
    attachments meet in its caches), so they come as one entry named after them."""
    name: str
    kind: str                            # "render" | "compute" | "rays" | "display"
    counters: Counters


@dataclass
class FrameResult:
    """A frame: per-pass counters and their totals, the raster's images and heat maps, and the
    ray and compute passes' own results. It answers as a raster Result does (color, depth,
    counters, tile_maps, pixel_maps, derived()), so a heat map or the viewer reads either."""
    scene: str
    preset: str
    settings: Settings
    raster: Result                       # the render passes' images, counters and tile maps
    passes: list[PassResult]
    counters: Counters                   # the sum of passes' counters
    rt: object = None                    # pipelines.passes.raytrace.RtResult of the ray passes
    post: object = None                  # pipelines.passes.postchain.PostResult of the compute passes
    dram_gbps: float | None = None
    seconds: float = 0.0
    tile_maps: dict[str, np.ndarray] = field(default_factory=dict)    # the raster's (tiles_y, tiles_x)
    pixel_maps: dict[str, np.ndarray] = field(default_factory=dict)   # raster's and rays' (h, w)
    preset_record: Preset | None = None  # the preset itself (its codec, for comp_ratio)

    width = property(lambda self: self.settings.width)
    height = property(lambda self: self.settings.height)
    samples = property(lambda self: self.settings.samples)
    color = property(lambda self: self.raster.color)
    history = property(lambda self: self.raster.history)   # what the next frame compares with
    depth = property(lambda self: self.raster.depth)
    tile_size = property(lambda self: self.raster.tile_size)

    @property
    def image(self) -> np.ndarray:
        """uint8 (h, w, 4): what the frame presents: the compute chain's final surface, else
        the raster colour darkened by the traced shadow and AO, else the raster colour."""
        if self.post is not None and "final" in self.post.surfaces:
            return self.post.surfaces["final"]
        if self.rt is not None:
            from pipelines.passes.raytrace import combine
            return combine(self.raster.color, self.rt)
        return self.raster.color

    def derived(self) -> dict[str, float]:
        return self.counters.derived(self.dram_gbps, self.settings.fps)

    def comp_ratio(self) -> np.ndarray:
        """The colour's raw : compressed bytes per screen tile (compression_map), made when first
        asked for (a codec pass over the image: no frame pays it unless a map is wanted);
        KeyError on a preset without a codec, as a map an architecture lacks."""
        if "comp_ratio" not in self.tile_maps:
            m = compression_map(self.preset_record, self.raster.color, self.raster.tile_size)
            if m is None:
                raise KeyError("comp_ratio")
            self.tile_maps["comp_ratio"] = m
        return self.tile_maps["comp_ratio"]

    def arrays(self) -> dict[str, np.ndarray]:
        """Every image and map of the frame by a stable name (the behaviour snapshot's)."""
        if self.preset_record is not None and self.preset_record.compression.codec.value != "none":
            self.comp_ratio()
        out = {"image.color": self.raster.color, "image.depth": self.raster.depth,
               **{f"tile.{k}": v for k, v in self.tile_maps.items()},
               **{f"pixel.{k}": v for k, v in self.pixel_maps.items()}}
        if self.rt is not None:
            out.update({f"rt.{k}": v for k, v in self.rt.images.items()})
            out["image.combined"] = self.image
        if self.post is not None:
            out.update({f"post.{k}": v for k, v in self.post.surfaces.items()})
        return out


def compression_map(preset: Preset, color: np.ndarray, tile: int) -> np.ndarray | None:
    """float64 (tiles_y, tiles_x): raw : compressed bytes of the final colour (RGBA8) in each
    screen tile under the preset's codec (payload and metadata, renderer.compression
    .tile_size_map): the heat map of what compression saved where; None without a codec."""
    if preset.compression.codec.value == "none":
        return None
    from pipelines.presets.compression import NONE, store_bytes
    return store_bytes(NONE, color, tile) / np.maximum(store_bytes(preset.compression, color, tile), 1)


def raster(scene: Scene, preset: Preset, settings: Settings, passes=None,
           history: dict | None = None) -> Result:
    """The render passes alone (`passes`, default the scene's), through the preset's
    architecture; `history`, the previous frame's (Result.history), to a tiler that compares
    tiles with it (transaction elimination)."""
    kw = {} if settings.frontend is None else {"frontend": settings.frontend}
    if history is not None and preset.architecture == "tbdr":
        kw["history"] = history
    return ARCHITECTURES[preset.architecture](scene, preset, settings.width, settings.height,
                                              settings.samples, passes=passes, **kw)


def run(scene: Scene | str, preset: Preset | str, settings: Settings = Settings(),
        history: dict | None = None) -> FrameResult:
    """Run one frame of `scene` through `preset` (module docstring); `history`: the previous
    frame's FrameResult.history when the frame is one of a sequence (pipelines.sequence)."""
    settings.check()
    scene = get_scene(scene) if isinstance(scene, str) else scene
    preset = get_preset(preset) if isinstance(preset, str) else preset
    graph = scene.graph(settings.samples, settings.rays, settings.store_depth)
    t0 = time.perf_counter()
    frame = raster(scene, preset, settings, graph.render_passes, history)
    frame.seconds = time.perf_counter() - t0
    names = "+".join(p.name for p in graph.render_passes)
    passes = [PassResult(names, "render", frame.counters)]
    post = rt = None
    if graph.compute_passes:
        from pipelines.passes.postchain import chain_kernels, gbuffer, run_graph
        # The chain's G-buffer is single-sampled: a 4x frame's colour resolves, its depth does not.
        lit = frame if settings.samples == 1 else None
        g, _ = gbuffer(scene, settings.width, settings.height, preset, lit=lit)
        final = "final" if any("final" in p.writes for p in graph.compute_passes) else None
        post = run_graph(graph.compute_passes, preset.name, chain_kernels(g),
                         policy=preset.compression.as_dict(), memory=frame.memory, present=final)
        passes += [PassResult(p.name, "compute", post.pass_counters[p.name])
                   for p in graph.compute_passes]
    if graph.ray_passes:
        from pipelines.passes.raytrace import layout_for, trace
        rays = tuple(p.name for p in graph.ray_passes)
        rt = trace(scene, preset, settings.width, settings.height, rays=rays, depth=frame.depth,
                   layout=layout_for(scene, preset, settings.bvh), memory_model=frame.memory,
                   ray_order=settings.ray_order)
        passes += [PassResult(p, "rays", rt.pass_counters[p]) for p in rays]
    # The display scans out the chain's final surface (counted by the chain, above), else the
    # last render pass's colour as stored (a ray frame's shadows darken it on the host: that
    # combine is not a modelled pass).
    if post is not None and post.display is not None:
        shown = post.display
    else:
        shown = present(frame.memory, preset, graph.render_passes[-1].color, frame.presented,
                        settings.width, settings.height)
    passes.append(PassResult("display", "display", shown))
    frame.memory = None            # the caches' state is the frame's alone: not kept with it
    totals = sum((p.counters for p in passes), Counters())
    maps = {**frame.pixel_maps, **(rt.pixel_maps if rt is not None else {})}
    return FrameResult(scene.name, preset.name, settings, frame, passes, totals, rt, post,
                       float(preset.memory.dram_gbps.value), time.perf_counter() - t0, frame.tile_maps, maps,
                       preset)
