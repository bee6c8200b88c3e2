"""A given camera's depth range (scenes.framing.depth_range): near and far follow the eye that
--camera names, not the automatic framing's, so a camera anywhere sees the scene; checked as a rule
and on a street-level view of a city of boxes against OpenGL."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from pipelines import render
from pipelines.commands.cli import _load_scene, build_parser, main
from scenes.library import get_scene
from scenes.framing import DEPTH_RANGE_RATIO, depth_range, fit_depth, world_bounds
from scenes.model import Camera

LO, HI = np.array([-1.0, -1.0, -1.0]), np.array([1.0, 1.0, 1.0])
STREET = "0,1.7,2:0,1.7,-60:0,1,0:60"   # eye 1.7 above the ground, inside the city, looking down it


def corner_depths(lo, hi, cam: Camera) -> np.ndarray:
    """Depth of the box's 8 corners along the view direction (view-space -z), float64 (8,)."""
    corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
    f = np.subtract(cam.target, cam.eye)
    return (corners - np.asarray(cam.eye)) @ (f / np.linalg.norm(f))


def assert_valid(near: float, far: float) -> None:
    assert 0.0 < near < far
    assert far / near <= DEPTH_RANGE_RATIO * (1 + 1e-12)


# --- the rule ------------------------------------------------------------------------------------

def test_eye_inside_the_box_keeps_everything_ahead_and_the_ratio():
    cam = Camera((0.0, 0.0, 0.0), (0.0, 0.0, -1.0))
    near, far = depth_range(LO, HI, cam)
    assert_valid(near, far)
    assert far >= corner_depths(LO, HI, cam).max()           # the far wall is in
    assert far < 1.1                                          # and far hugs it
    assert near == pytest.approx(far / DEPTH_RANGE_RATIO)     # nearest box point is behind the eye


def test_eye_outside_the_box_hugs_it():
    cam = Camera((0.0, 0.0, 10.0), (0.0, 0.0, 0.0))
    near, far = depth_range(LO, HI, cam)
    assert_valid(near, far)
    d = corner_depths(LO, HI, cam)
    assert near <= d.min() and d.max() <= far                 # the whole box inside [near, far]
    assert 8.5 < near and far < 11.5                          # no wider than a few per cent


def test_camera_looking_away_gets_a_valid_range():
    for target in ((0.0, 0.0, 20.0), (0.0, 50.0, 11.0)):
        near, far = depth_range(LO, HI, Camera((0.0, 0.0, 10.0), target))
        assert_valid(near, far)


def test_a_box_that_is_one_point_at_the_eye_gets_a_valid_range():
    p = np.array([1.0, 2.0, 3.0])
    assert_valid(*depth_range(p, p, Camera(tuple(p), (1.0, 2.0, 0.0))))


def test_ratio_holds_when_the_box_starts_at_the_eye():
    lo, hi = np.array([-1.0, -1.0, -100.0]), np.array([1.0, 1.0, -1e-4])
    near, far = depth_range(lo, hi, Camera((0.0, 0.0, 0.0), (0.0, 0.0, -1.0)))
    assert_valid(near, far)
    assert far >= 100.0 and near == pytest.approx(far / DEPTH_RANGE_RATIO)


coord = st.floats(-1e3, 1e3)


@settings(max_examples=200, deadline=None)
@given(st.tuples(coord, coord, coord), st.tuples(coord, coord, coord),
       st.tuples(coord, coord, coord), st.tuples(coord, coord, coord))
def test_any_box_and_camera(a, b, eye, target):
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    try:
        cam = Camera(eye, target)
    except ValueError:                                        # eye == target or up along the view
        return
    near, far = depth_range(lo, hi, cam)
    assert_valid(near, far)
    d = corner_depths(lo, hi, cam)
    assert d.max() <= far
    if d.min() >= far / DEPTH_RANGE_RATIO:                    # nothing lies nearer than the bound
        assert near <= d.min()


# --- where it applies ----------------------------------------------------------------------------

def test_builtin_scene_keeps_its_camera_without_camera_and_fits_with_one():
    assert _load_scene("triangle", None).camera == get_scene("triangle").camera
    scene = _load_scene("triangle", "0,0,30:0,0,0:0,1,0:60")
    near, far = depth_range(*world_bounds(scene.draws), scene.camera)
    assert (scene.camera.near, scene.camera.far) == (near, far)
    assert scene.camera.near > 20.0                           # the triangle's own 0.1.. planes are gone


def test_viewer_camera_fits_the_depth_range(tmp_path):
    from viewer.cli import options_from_args
    obj = tmp_path / "city.obj"
    obj.write_text(city_obj())
    args = build_parser().parse_args(["view", str(obj), "--camera", STREET, "--out-dir", str(tmp_path)])
    opts = options_from_args(args)
    assert opts.camera == fit_depth(Camera.parse(STREET), opts.loaded[str(obj)].draws)


# --- a city of boxes seen from inside, against OpenGL --------------------------------------------

def _box(lo, hi) -> tuple[list, list]:
    """8 corners and 6 quads, counter-clockwise seen from outside (0-based indices)."""
    (x0, y0, z0), (x1, y1, z1) = lo, hi
    v = [(x0, y0, z0), (x1, y0, z0), (x1, y1, z0), (x0, y1, z0),
         (x0, y0, z1), (x1, y0, z1), (x1, y1, z1), (x0, y1, z1)]
    f = [(0, 3, 2, 1), (4, 5, 6, 7), (0, 1, 5, 4), (3, 7, 6, 2), (0, 4, 7, 3), (1, 2, 6, 5)]
    return v, f


def city_obj() -> str:
    """A ground 40 x 64 units and two rows of 4 x 4 boxes each side of a street, 8 blocks 7.5 units
    apart: 64 units deep in z, from +4 to -60, 3 to 11 units tall."""
    verts, faces = [], []

    def add(v, f):
        faces.extend(tuple(len(verts) + i + 1 for i in q) for q in f)    # OBJ counts from 1
        verts.extend(v)
    add([(-20, 0, 4), (20, 0, 4), (20, 0, -60), (-20, 0, -60)], [(0, 1, 2, 3)])   # faces +y
    for i in range(8):
        z = -7.5 * i
        for x in (-12, -6, 6, 12):
            add(*_box((x - 2, 0, z - 5), (x + 2, 3 + (7 * i + 3 * x) % 9, z - 1)))
    return ("".join(f"v {x} {y} {z}\n" for x, y, z in verts)
            + "".join("f " + " ".join(map(str, q)) + "\n" for q in faces))


W, H = 320, 180
MIN_COVERAGE_AGREEMENT = 0.999     # fraction of all pixels, as tests/test_gl_oracle.py
MIN_COVERED = 0.30                 # the old framing's planes (near 38, far 122) left a 6 % strip


def test_city_from_the_street_matches_opengl(tmp_path):
    try:
        from gl_oracle import context, render_gl
    except ImportError:            # collected as the package `tests`
        from tests.gl_oracle import context, render_gl
    try:
        context()
    except Exception as exc:       # no EGL / no GL driver on this machine
        pytest.skip(f"no OpenGL context through EGL (moderngl): {exc}")
    obj, png = tmp_path / "city.obj", tmp_path / "city.png"
    obj.write_text(city_obj())
    assert main(["render", str(obj), "--camera", STREET, "--res", f"{W}x{H}", "-o", str(png)]) == 0

    scene = _load_scene(str(obj), STREET)         # what the command rendered
    lo, hi = world_bounds(scene.draws)
    assert np.all(lo <= scene.camera.eye) and np.all(scene.camera.eye <= hi)   # eye inside the city
    result = render(scene, "imr-baseline", W, H)
    with Image.open(png) as im:
        np.testing.assert_array_equal(np.asarray(im.convert("RGBA")), result.color)
    covered = result.pixel_maps["overdraw"] > 0
    gl_covered, _ = render_gl(scene, W, H)
    agreement = 1.0 - float((covered != gl_covered).mean())
    assert agreement >= MIN_COVERAGE_AGREEMENT, f"coverage agrees on {100 * agreement:.3f}% of pixels"
    assert covered.mean() > MIN_COVERED, f"covers {100 * covered.mean():.1f}% of pixels: clipped"
