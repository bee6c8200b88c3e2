"""A short sequence of frames (issue 24): what only a previous frame can save. Transaction
elimination (Arm Mali) leaves out a tile whose signature equals the last frame's, so a frame's
cost depends on the one before it; everything else in tilesim is a frame alone.

    from pipelines.sequence import run_sequence
    seq = run_sequence("spheres", "arm-mali", Settings(640, 360), frames=3, path="orbit")
    [f.counters["te.tiles_written"] for f in seq.frames]
    seq.counters                       # the sequence: the sum of its frames' counters

Consumes a scene, a preset, settings, a frame count and a camera path; runs the frames in order
through pipelines.frame.run, each handed the previous frame's history. Camera paths: `static`
(the scene's camera every frame) and `orbit` (the eye turns ORBIT_STEP degrees about the up axis
through the target each frame).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from renderer.counters import Counters
from scenes.model import Scene, SceneError

from pipelines.frame import FrameResult, Settings, run
from pipelines.presets import Preset

PATHS = ("static", "orbit")
ORBIT_STEP = 2.0          # degrees per frame: a slow pan, most of the screen moves
MAX_FRAMES = 240


@dataclass
class SequenceResult:
    frames: list[FrameResult]
    counters: Counters        # the sum of the frames' counters

    def per_frame(self) -> list[dict]:
        """Per frame: DRAM bytes, colour bytes written, and transaction elimination's tiles."""
        return [{"frame": i, "dram_bytes": f.counters.dram_bytes(),
                 "color_write_bytes": f.counters["mem.dram.write.color"],
                 "te_tiles": f.counters["te.tiles"], "te_tiles_written": f.counters["te.tiles_written"],
                 "te_saved_bytes": f.counters["te.saved_bytes"]} for i, f in enumerate(self.frames)]


def camera_at(scene: Scene, path: str, frame: int) -> Scene:
    """The scene as frame `frame` of `path` sees it."""
    if path not in PATHS:
        raise SceneError(f"unknown camera path {path!r} (try: {', '.join(PATHS)})")
    if path == "static" or frame == 0:
        return scene
    cam = scene.camera
    eye, target, up = (np.asarray(v, np.float64) for v in (cam.eye, cam.target, cam.up))
    axis = up / np.linalg.norm(up)
    a = np.radians(ORBIT_STEP * frame)
    v = eye - target
    # Rodrigues: v turned by a about the axis
    v = v * np.cos(a) + np.cross(axis, v) * np.sin(a) + axis * np.dot(axis, v) * (1 - np.cos(a))
    return dataclasses.replace(scene, camera=dataclasses.replace(cam, eye=tuple(float(x) for x in target + v)))


def run_sequence(scene: Scene | str, preset: Preset | str, settings: Settings = Settings(),
                 frames: int = 2, path: str = "static") -> SequenceResult:
    """`frames` frames of `scene` along camera `path`, each after the one before (module
    docstring)."""
    from scenes.library import get_scene
    if not 1 <= frames <= MAX_FRAMES:
        raise SceneError(f"frames must be 1..{MAX_FRAMES}, got {frames}")
    scene = get_scene(scene) if isinstance(scene, str) else scene
    out, history = [], None
    for i in range(frames):
        f = run(camera_at(scene, path, i), preset, settings, history)
        history = f.history
        out.append(f)
    return SequenceResult(out, sum((f.counters for f in out), Counters()))
