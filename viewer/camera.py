"""Camera moves for the viewer: pure functions from one `scenes.model.Camera` to the next.

The state is the scene's own Camera (eye, target, up, fovy, near, far), so the first frame is
rendered with exactly the scene's camera and `reset` is just the scene's camera again. Every move
builds a new Camera (frozen dataclass) that the renderer takes through
`dataclasses.replace(scene, camera=...)`.

    cam = orbit(scene.camera, dx=40, dy=0)        # drag 40 px to the right: turn about `up`
    cam = zoom(cam, steps=1)                       # one wheel notch closer to the target
"""
from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from scenes.model import Camera

RADIANS_PER_PIXEL = 0.005      # orbit: a 628 px drag turns half a circle
MAX_ELEVATION = math.radians(89.0)   # orbit stops short of the pole so `up` never aligns with the view
ZOOM_PER_STEP = 0.85           # one wheel notch multiplies the eye-target distance by this
FLY_FRACTION = 0.5             # fly speed: half the scene camera's eye-target distance per second


def _unit(v) -> np.ndarray:
    v = np.asarray(v, np.float64)
    return v / np.linalg.norm(v)


def basis(cam: Camera) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(forward, right, true_up): orthonormal, forward from eye to target, right-handed."""
    f = _unit(np.subtract(cam.target, cam.eye))
    r = _unit(np.cross(f, cam.up))
    return f, r, np.cross(r, f)


def distance(cam: Camera) -> float:
    return float(np.linalg.norm(np.subtract(cam.target, cam.eye)))


def _tuple(v) -> tuple[float, float, float]:
    return tuple(float(x) for x in v)


def orbit(cam: Camera, dx: float, dy: float) -> Camera:
    """Turn the eye about the target: dx pixels about the `up` axis, dy pixels in elevation
    (dragging down raises the eye so the scene seems to tilt with the mouse), clamped below
    the poles."""
    up = _unit(cam.up)
    off = np.subtract(cam.eye, cam.target)
    d = np.linalg.norm(off)
    elev = math.asin(float(np.clip(np.dot(off / d, up), -1.0, 1.0)))
    flat = off - np.dot(off, up) * up               # the offset's part in the plane normal to up
    f0 = _unit(flat)
    r0 = np.cross(up, f0)
    yaw = -dx * RADIANS_PER_PIXEL
    new_elev = float(np.clip(elev + dy * RADIANS_PER_PIXEL, -MAX_ELEVATION, MAX_ELEVATION))
    horiz = math.cos(yaw) * f0 + math.sin(yaw) * r0
    new_off = d * (math.cos(new_elev) * horiz + math.sin(new_elev) * up)
    return replace(cam, eye=_tuple(np.add(cam.target, new_off)))


def pan(cam: Camera, dx: float, dy: float, viewport_height: int) -> Camera:
    """Slide eye and target in the view plane so the target point follows the cursor: at the
    target's distance one pixel spans 2·d·tan(fovy/2)/height world units."""
    _, r, u = basis(cam)
    per_px = 2.0 * distance(cam) * math.tan(math.radians(cam.fovy_deg) / 2) / max(viewport_height, 1)
    move = (-dx * r + dy * u) * per_px
    return replace(cam, eye=_tuple(np.add(cam.eye, move)), target=_tuple(np.add(cam.target, move)))


def zoom(cam: Camera, steps: float, min_near: float) -> Camera:
    """Move the eye towards the target (steps > 0) or away; near and far move with the eye so the
    depth range keeps framing the target (the library's cameras keep far/near tight for depth
    precision), near never below `min_near`."""
    d = distance(cam)
    new_d = d * ZOOM_PER_STEP ** steps
    new_d = max(new_d, 1e-6 * max(d, 1.0))
    f, _, _ = basis(cam)
    eye = np.subtract(cam.target, f * new_d)
    delta = new_d - d
    near = max(cam.near + delta, min_near)
    far = max(cam.far + delta, near * 1.01)
    return replace(cam, eye=_tuple(eye), near=near, far=far)


def fly(cam: Camera, forward: float, right: float, upward: float, seconds: float,
        speed: float) -> Camera:
    """Move eye and target together: `forward`, `right`, `upward` in {-1, 0, 1} (held keys),
    `speed` world units per second."""
    f, r, u = basis(cam)
    move = (forward * f + right * r + upward * u) * speed * seconds
    return replace(cam, eye=_tuple(np.add(cam.eye, move)), target=_tuple(np.add(cam.target, move)))


def fly_speed(home: Camera) -> float:
    """World units per second for `fly`, from the scene's own camera (scenes span 0.3 to 40 units)."""
    return FLY_FRACTION * distance(home)
