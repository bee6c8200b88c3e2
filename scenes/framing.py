"""Framing: the cameras a scene is seen through when its file gives none, or when the user
gives one (--camera): near and far fitted to the scene's bounds as seen from that eye, within
what float32 and D24 depth keep precise. The loaders (scenes.loaders) and the commands use it."""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from .model import Camera, SceneError

FRAME_DIRECTION = (0.35, 0.35, 1.0)  # automatic framing looks from +Z, a little above and right
FRAME_MARGIN = 1.05                  # bounding sphere radius → distance, 5 % border
DEPTH_SLACK = 1.1                    # near/far sit 10 % of the radius outside the bounding sphere
# A given camera's depth range: far/near at most this. Window depth spends its precision near the
# near plane: a step at view depth z is about z^2 / near * 2^-24 in float32 (tilesim's depth) and
# in the GL oracle's D24 test, so at far it is RATIO * far * 6e-8, 0.004 units at far 60.
DEPTH_RANGE_RATIO = 1000.0
DEPTH_RANGE_SLACK = 1.01             # near/far 1 % outside the box's depths: vertex rounding
# Largest |coordinate| accepted, object or world space, and for a --camera: its square (1e36)
# and sums of a few squares stay inside float32's 3.4e38, so lengths and dot products in the
# stages stay finite. Real models stay far below (the Earth's radius in micrometres is 6.4e12).
MAX_COORD = 1e18


def user_camera(text: str, draws=None) -> Camera:
    """A --camera (eye:target:up:fovy) for these draws, near and far fitted (`fit_depth`; no
    draws: only checked); SceneError for text that is no camera or values past MAX_COORD (their
    squares would overflow, and Camera's own checks would warn on the way)."""
    with np.errstate(all="ignore"):
        values = text.replace(":", ",").split(",")
        try:   # checked before Camera.parse, whose own checks would overflow first
            too_far = any(abs(float(v)) > MAX_COORD for v in values)
        except ValueError:
            too_far = False                  # not numbers: Camera.parse says what is expected
        if too_far:
            raise SceneError(f"--camera {text!r}: values must be within +-{MAX_COORD:.0e}")
        camera = Camera.parse(text)
        return camera if draws is None else fit_depth(camera, draws)


def frame_bounds(lo, hi, fovy: float = 60.0, direction=FRAME_DIRECTION) -> Camera:
    """A camera that sees the whole box lo..hi: looking at its centre along -direction, the box's
    bounding sphere filling the vertical field of view, near and far hugging the sphere so that
    far / near stays small (about 3 at 60 degrees) and depth keeps its precision."""
    lo, hi = np.asarray(lo, np.float64), np.asarray(hi, np.float64)
    if lo.shape != (3,) or hi.shape != (3,) or not (np.isfinite(lo).all() and np.isfinite(hi).all()):
        raise SceneError("frame_bounds: bounds must be two finite 3-vectors")
    centre = (lo + hi) / 2.0
    radius = float(np.linalg.norm(hi - lo)) / 2.0
    if radius <= 0.0:
        raise SceneError("frame_bounds: the box has zero size")
    d = np.asarray(direction, np.float64)
    d = d / np.linalg.norm(d)
    dist = FRAME_MARGIN * radius / math.sin(math.radians(fovy) / 2.0)
    near = max(dist - DEPTH_SLACK * radius, 0.01 * dist)
    far = dist + DEPTH_SLACK * radius
    return Camera(floats(centre + d * dist), floats(centre), (0.0, 1.0, 0.0), float(fovy), near, far)


def depth_range(lo, hi, camera: Camera) -> tuple[float, float]:
    """(near, far) for `camera` seeing the box lo..hi: far just past the farthest corner's depth
    along the view direction, near just before the nearest, never behind the eye and never below
    far / DEPTH_RANGE_RATIO (an eye inside the box clips what lies nearer than that). A box
    wholly behind the eye (nothing to see) still gets a valid range: 0 < near < far."""
    lo, hi = np.asarray(lo, np.float64), np.asarray(hi, np.float64)
    if lo.shape != (3,) or hi.shape != (3,) or not (np.isfinite(lo).all() and np.isfinite(hi).all()):
        raise SceneError("depth_range: bounds must be two finite 3-vectors")
    eye = np.asarray(camera.eye, np.float64)
    forward = np.subtract(camera.target, eye)
    corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
    depths = (corners - eye) @ (forward / np.linalg.norm(forward))
    # far's floor when no corner is in front (nothing to see): a RATIO-th of the scene's reach
    # from the eye, or of the eye-target distance for a box that is one point at the eye
    scale = max(float(np.linalg.norm(corners - eye, axis=1).max()), float(np.linalg.norm(forward)))
    far = DEPTH_RANGE_SLACK * max(float(depths.max()), scale / DEPTH_RANGE_RATIO)
    near = max(float(depths.min()) / DEPTH_RANGE_SLACK, far / DEPTH_RANGE_RATIO)
    return near, far


def fit_depth(camera: Camera, draws) -> Camera:
    """`camera` with near and far from `depth_range` over the draws' world bounds: what a
    user-given camera (--camera) renders with, so it sees the scene wherever it stands."""
    near, far = depth_range(*world_bounds(draws), camera)
    return replace(camera, near=near, far=far)


def world_bounds(draws) -> tuple[np.ndarray, np.ndarray]:
    """(lo, hi) of every draw's vertices in world space, float64 (3,) each."""
    lo, hi = np.full(3, np.inf), np.full(3, -np.inf)
    for d in draws:
        m = d.world_from_object
        p = d.mesh.positions.astype(np.float64) @ m[:3, :3].T + m[:3, 3]
        lo, hi = np.minimum(lo, p.min(axis=0)), np.maximum(hi, p.max(axis=0))
    return lo, hi


def floats(v) -> tuple[float, ...]:
    return tuple(float(x) for x in v)
