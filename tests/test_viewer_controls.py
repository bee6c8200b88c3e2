"""The viewer's controls without a window (issue 9): camera moves (orbit, pan, zoom, fly), the
panel layout, and the key table."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scenes.model import Camera
from viewer import camera as cam_ops
from viewer import layout
from viewer.keys import FLY_KEYS, KEYMAP, SCALES, NamedKeys, key_name, next_scale
from viewer.modes import MODES

CAM = Camera((1.0, 2.0, 5.0), (0.0, 0.5, 0.0), (0.0, 1.0, 0.0), 60.0, 0.5, 20.0)


# ---- camera ------------------------------------------------------------------------------------

def _elevation(c: Camera) -> float:
    off = np.subtract(c.eye, c.target)
    return math.degrees(math.asin(off[1] / np.linalg.norm(off)))


@settings(max_examples=60, deadline=None)
@given(st.floats(-400, 400), st.floats(-100, 100))
def test_orbit_keeps_target_and_distance_and_undoes(dx, dy):
    c = cam_ops.orbit(CAM, dx, dy)
    assert c.target == CAM.target
    assert math.isclose(cam_ops.distance(c), cam_ops.distance(CAM), rel_tol=1e-9)
    back = cam_ops.orbit(c, -dx, -dy)         # inside the elevation clamp: an exact inverse
    np.testing.assert_allclose(back.eye, CAM.eye, atol=1e-9)


def test_orbit_elevation_stops_short_of_the_pole():
    c = cam_ops.orbit(CAM, 0, 10_000)
    assert 88.9 < _elevation(c) <= 89.0 + 1e-9
    c = cam_ops.orbit(CAM, 0, -10_000)
    assert -89.0 - 1e-9 <= _elevation(c) < -88.9
    Camera(c.eye, c.target, c.up)             # still a valid camera (up not parallel to the view)


def test_pan_moves_eye_and_target_together_in_the_view_plane():
    h = 360
    c = cam_ops.pan(CAM, 10, -20, h)
    move = np.subtract(c.eye, CAM.eye)
    np.testing.assert_allclose(np.subtract(c.target, CAM.target), move, atol=1e-12)
    f, r, u = cam_ops.basis(CAM)
    assert abs(np.dot(move, f)) < 1e-12
    per_px = 2 * cam_ops.distance(CAM) * math.tan(math.radians(30)) / h
    np.testing.assert_allclose(move, (-10 * r - 20 * u) * per_px, atol=1e-12)


def test_zoom_scales_distance_and_moves_the_depth_range():
    c = cam_ops.zoom(CAM, 2, min_near=0.01)
    d0, d1 = cam_ops.distance(CAM), cam_ops.distance(c)
    assert math.isclose(d1, d0 * cam_ops.ZOOM_PER_STEP ** 2)
    assert c.target == CAM.target
    assert math.isclose(c.far - CAM.far, d1 - d0) and math.isclose(c.near, max(CAM.near + d1 - d0, 0.01))
    far = cam_ops.zoom(c, -2, min_near=0.01)
    np.testing.assert_allclose(far.eye, CAM.eye, atol=1e-9)


def test_fly_moves_along_the_view():
    c = cam_ops.fly(CAM, 1, 0, 0, 0.5, speed=4.0)
    f, _, _ = cam_ops.basis(CAM)
    np.testing.assert_allclose(np.subtract(c.eye, CAM.eye), 2.0 * f, atol=1e-12)
    np.testing.assert_allclose(np.subtract(c.target, CAM.target), 2.0 * f, atol=1e-12)


# ---- layout ------------------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_layout_shows_each_panel_at_one_to_one_without_overlap(n):
    w, h = 200, 120
    win = layout.window_size(n, w, h)
    lays = layout.panel_layouts(n, *win, aspect=w / h)
    rects = [r for p in lays for r in (p.title, p.image, p.strip)] + [layout.footer(*win)]
    for p in lays:
        assert (p.image.w, p.image.h) == (w, h)
    for i, a in enumerate(rects):
        assert a.x >= 0 and a.y >= 0 and a.x + a.w <= win[0] and a.y + a.h <= win[1]
        for b in rects[i + 1:]:
            assert a.x + a.w <= b.x or b.x + b.w <= a.x or a.y + a.h <= b.y or b.y + b.h <= a.y
    assert layout.panel_at(lays, lays[-1].image.x + 1, lays[-1].image.y + 1) == n - 1
    assert layout.panel_at(lays, 0, 0) is None
    with pytest.raises(ValueError):
        layout.grid(5)


def test_layout_letterboxes_to_the_render_aspect():
    lays = layout.panel_layouts(2, 1000, 900, aspect=16 / 9)
    for p in lays:
        assert abs(p.image.w / p.image.h - 16 / 9) < 0.02


# ---- keys --------------------------------------------------------------------------------------

def test_key_table_and_reverse_lookup():
    class IntKeys:                      # a window library's codes (pyglet and glfw use ints)
        ACTION_PRESS, ACTION_RELEASE = 1, 0
        H, F1, TAB, NUMBER_1, S = 72, 290, 9, 49, 83
        X = "undefined"
    assert key_name(IntKeys, 72) == "H" and key_name(IntKeys, 290) == "F1"
    assert key_name(IntKeys, 12345) is None
    assert KEYMAP["H"] == KEYMAP["F1"] == "help"
    assert [KEYMAP[f"NUMBER_{i + 1}"] for i in range(len(MODES))] == [f"mode:{m}" for m in MODES]
    for name in (*KEYMAP, *FLY_KEYS):
        assert key_name(NamedKeys, name) == name
    assert next_scale(1.0, 1) == 1.0 and next_scale(1.0, -1) == 0.75 and next_scale(0.25, -1) == 0.25
    assert next_scale(0.6, 1) == SCALES[2]
