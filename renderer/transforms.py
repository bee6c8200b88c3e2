"""Camera matrices, OpenGL conventions (DESIGN.md §2): right-handed, camera looks down -Z,
NDC z in [-1, 1], window depth = 0.5 * ndc_z + 0.5. All float64; the raster snaps later."""
from __future__ import annotations

import numpy as np


def look_at(eye, target, up) -> np.ndarray:
    """view_from_world (4, 4)."""
    eye, target, up = (np.asarray(v, np.float64) for v in (eye, target, up))
    f = target - eye
    f /= np.linalg.norm(f)
    s = np.cross(f, up)
    s /= np.linalg.norm(s)
    u = np.cross(s, f)
    m = np.eye(4)
    m[0, :3], m[1, :3], m[2, :3] = s, u, -f
    m[:3, 3] = -m[:3, :3] @ eye
    return m


def perspective(fovy_deg: float, aspect: float, near: float, far: float) -> np.ndarray:
    """clip_from_view (4, 4), as glFrustum/gluPerspective."""
    f = 1.0 / np.tan(np.radians(fovy_deg) / 2.0)
    m = np.zeros((4, 4))
    m[0, 0] = f / aspect
    m[1, 1] = f
    m[2, 2] = (far + near) / (near - far)
    m[2, 3] = 2.0 * far * near / (near - far)
    m[3, 2] = -1.0
    return m


def clip_from_world(camera, width: int, height: int) -> np.ndarray:
    return perspective(camera.fovy_deg, width / height, camera.near, camera.far) @ look_at(
        camera.eye, camera.target, camera.up)
