"""The viewer (issue 9): pure parts (camera moves, layout, colour mapping, keys, scheduling) without
GL, then the window itself headless on an EGL context (moderngl-window's headless window): every
mode drawn, panels equal to the renderer's own images pixel for pixel, heat maps that differ where
the counters do, key and mouse events sent through the window's handlers, screenshots saved."""
from __future__ import annotations

import dataclasses
import json
import math
import threading
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pipelines.api import render
from pipelines.presets import get_preset
from renderer.transforms import clip_from_world
from scenes.library import get_scene
from scenes.model import Camera
from viewer import camera as cam_ops
from viewer import hud
from viewer import layout
from viewer.keys import FLY_KEYS, KEYMAP, SCALES, NamedKeys, key_name, next_scale
from viewer.modes import MODES, PIXEL, RAY, extra_modes, value_at, inferno, mode_title, ray_rgba, colorize, dram_per_pixel, eye_depth, per_pixel, shared_scale, tile_pixels
from viewer.schedule import Refiner, Request, Worker

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


# ---- colour mapping ----------------------------------------------------------------------------

def test_tile_maps_spread_to_pixels_keep_their_totals():
    tp = tile_pixels(70, 100, 32)                 # 3 x 4 tiles, the last row and column cut
    assert tp.shape == (3, 4) and tp.sum() == 70 * 100
    assert tp[2, 3] == (70 - 64) * (100 - 96)
    m = np.arange(12, dtype=np.float64).reshape(3, 4)
    px = per_pixel(m, 70, 100, 32)
    assert px[0, 0] == 0 and px[69, 99] == 11 and px[33, 40] == m[1, 1]


def _results(scene="overdraw:6", presets=("imr-baseline", "apple-m3"), w=96, h=64):
    s = get_scene(scene)
    return s, [render(s, p, w, h) for p in presets]


def test_dram_per_pixel_sums_to_the_tile_bytes():
    _, rs = _results()
    for r in rs:
        assert math.isclose(dram_per_pixel(r).sum(), r.tile_maps["dram_bytes"].sum(), rel_tol=1e-9)


def test_heat_maps_share_one_scale_and_differ_where_counters_differ():
    _, (imr, tbdr) = _results()
    assert imr.counters["raster.shaded"] > tbdr.counters["raster.shaded"]     # 6 layers vs HSR
    scale = shared_scale("overdraw", [imr, tbdr])
    assert scale.hi == max(imr.pixel_maps["overdraw"].max(), tbdr.pixel_maps["overdraw"].max())
    a, b = colorize("overdraw", imr, scale), colorize("overdraw", tbdr, scale)
    assert not np.array_equal(a, b)
    # on the shared scale the hottest pixel is the top of the map in its own panel only
    top = colorize("overdraw", imr, scale)[np.unravel_index(imr.pixel_maps["overdraw"].argmax(), (64, 96))]
    np.testing.assert_array_equal(top, inferno()[255])
    own = shared_scale("overdraw", [tbdr])
    assert not np.array_equal(colorize("overdraw", tbdr, own), b)


def test_eye_depth_inverts_the_projection():
    s, (r, _) = _results("quad", w=32, h=16)
    cam = s.camera
    z = eye_depth(r, cam.near, cam.far)
    covered = r.depth < 1.0
    assert covered.any()
    # the quad's plane: window depth of a point at its distance through the camera's projection
    p = clip_from_world(cam, 32, 16) @ np.array([0.0, 0.0, -float(np.nanmedian(z)), 1.0])
    assert math.isclose((p[2] / p[3]) * 0.5 + 0.5, float(np.median(r.depth[covered])), abs_tol=1e-5)
    assert np.isnan(z[~covered]).all()


def test_every_mode_colours_every_panel():
    s, rs = _results()
    for mode in MODES:
        scale = shared_scale(mode, rs, s.camera.near, s.camera.far)
        for r in rs:
            img = colorize(mode, r, scale, s.camera.near, s.camera.far)
            assert img.shape == (64, 96, 4) and img.dtype == np.uint8
    with pytest.raises(ValueError):
        colorize("nope", rs[0], scale)


def test_fallback_map_colours_tiles_by_reason():
    s, (_, tbdr) = _results("particles", presets=("imr-baseline", "apple-m3"))
    assert "fallbacks" in tbdr.tile_maps
    scale = shared_scale("fallbacks", [tbdr])
    img = colorize("fallbacks", tbdr, scale)
    hit = per_pixel(tbdr.tile_maps["fallbacks"], 64, 96, tbdr.tile_size) > 0
    assert hit.any()                   # blended particles cut deferred runs short
    swatches = dict(scale.swatches)
    blend = per_pixel(tbdr.tile_maps["fallback.blend"], 64, 96, tbdr.tile_size) > 0
    assert blend.any() and "blend" in swatches
    colours = {tuple(int(v) for v in c) for c in swatches.values()}
    assert {tuple(int(v) for v in p) for p in img[hit][:, :3]} <= colours
    assert (img[~hit][:, 0] == img[~hit][:, 1]).all()          # the rest is the dimmed grey image


def test_value_readout_per_mode():
    s, (r, _) = _results("spheres")
    near, far = s.camera.near, s.camera.far
    y, x = 32, 48
    assert value_at("overdraw", r, {}, x, y, near, far) == str(int(r.pixel_maps["overdraw"][y, x]))
    assert value_at("dram", r, {}, x, y, near, far) == f"{dram_per_pixel(r)[y, x]:.3g} B"
    z = eye_depth(r, near, far)[y, x]
    assert value_at("depth", r, {}, x, y, near, far) == (f"{z:.4g}" if np.isfinite(z) else "-")
    assert value_at("image", r, {}, x, y, near, far) == "#" + "".join(f"{int(c):02x}" for c in r.color[y, x, :3])
    assert value_at(RAY + "ao", r, {"ao": np.full((64, 96), 0.25, np.float32)}, x, y, near, far) == "0.25"
    assert value_at("fallbacks", r, {}, x, y, near, far) == "-"        # IMR: no tile fallbacks


def test_fallback_reasons_each_get_their_colour():
    _, (_, tbdr) = _results("quad", w=64, h=64)          # 2 x 2 tiles of 32 px
    a = np.array([[3, 0], [1, 0]])
    b = np.array([[1, 0], [2, 0]])
    own = {k: v for k, v in tbdr.tile_maps.items() if not k.startswith("fallback.")}
    r = dataclasses.replace(tbdr, tile_maps={**own, "fallback.mask": a, "fallback.spill": b})
    scale = shared_scale("fallbacks", [r])
    colors = dict(scale.swatches)
    assert list(colors) == ["mask", "spill"] and colors["mask"] != colors["spill"]
    img = colorize("fallbacks", r, scale)
    assert tuple(img[5, 5, :3]) == colors["mask"]          # 3 mask > 1 spill
    assert tuple(img[40, 5, :3]) == colors["spill"]        # 2 spill > 1 mask
    assert img[5, 40, 0] == img[5, 40, 1] == img[5, 40, 2]  # no fallback: grey


def test_extra_pixel_maps_become_modes():
    _, rs = _results()
    nodes = [np.full((64, 96), k + 1, np.int64) for k in range(2)]
    rs = [dataclasses.replace(r, pixel_maps={**r.pixel_maps, "rt_nodes": n}) for r, n in zip(rs, nodes)]
    assert extra_modes(rs) == (PIXEL + "rt_nodes",)
    assert extra_modes(rs[:1] + [_results()[1][1]]) == ()      # only maps every panel has
    scale = shared_scale(PIXEL + "rt_nodes", rs)
    assert scale.hi == 2
    np.testing.assert_array_equal(colorize(PIXEL + "rt_nodes", rs[1], scale)[0, 0], inferno()[255])
    np.testing.assert_array_equal(colorize(PIXEL + "rt_nodes", rs[0], scale)[0, 0], inferno()[128])


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


# ---- scheduling --------------------------------------------------------------------------------

class SlowRender:
    """A stand-in for pipelines.api.render that takes `seconds` and records what it was asked."""

    def __init__(self, seconds):
        self.seconds = seconds
        self.calls = []
        self.started = threading.Event()

    def __call__(self, scene, preset, w, h, samples):
        self.calls.append((scene, preset))
        self.started.set()
        time.sleep(self.seconds)
        return (scene, preset, w, h)


def _wait(worker, timeout=5.0):
    end = time.perf_counter() + timeout
    while not worker.idle():
        assert time.perf_counter() < end
        time.sleep(0.005)


def test_worker_latest_request_wins():
    fake = SlowRender(0.05)
    w = Worker(fake)
    try:
        w.submit(Request(1, "a", ("p",), 8, 8, 1, False))
        assert fake.started.wait(2)
        for seq in range(2, 7):                  # arrive while 1 renders: only the last survives
            w.submit(Request(seq, "a", ("p",), 8, 8, 1, False))
        _wait(w)
        assert w.rendered == [1, 6]
        frame = w.poll()
        assert frame.request.seq == 6 and w.poll() is None
    finally:
        w.close()


def test_worker_abandons_a_request_between_panels():
    fake = SlowRender(0.05)
    w = Worker(fake)
    try:
        w.submit(Request(1, "old", ("p", "q", "r"), 8, 8, 1, True))
        assert fake.started.wait(2)
        w.submit(Request(2, "new", ("p", "q", "r"), 8, 8, 1, True))
        _wait(w)
        assert w.rendered == [2]
        assert [c[0] for c in fake.calls].count("old") == 1       # stopped after its first panel
        assert [r[0] for r in w.poll().results] == ["new"] * 3
    finally:
        w.close()


def test_worker_finishes_moving_frames_under_a_stream_of_requests():
    fake = SlowRender(0.02)
    w = Worker(fake)
    try:
        for seq in range(1, 40):                 # a new move every 5 ms, faster than a frame
            w.submit(Request(seq, "s", ("p", "q"), 8, 8, 1, False))
            time.sleep(0.005)
        _wait(w)
        assert len(w.rendered) >= 3 and w.rendered[-1] == 39
        assert w.rendered == sorted(w.rendered)
    finally:
        w.close()


def test_worker_reports_errors_and_keeps_going():
    def broken(scene, *a):
        if scene == "bad":
            raise ValueError("boom")
        return scene
    w = Worker(broken)
    try:
        w.submit(Request(1, "bad", ("p",), 8, 8, 1, True))
        _wait(w)
        assert w.error() == "ValueError: boom"
        w.submit(Request(2, "good", ("p",), 8, 8, 1, True))
        _wait(w)
        assert w.poll().results == ["good"]
    finally:
        w.close()


def test_refiner_goes_full_after_the_settle_time():
    r = Refiner(settle_s=0.2)
    assert r.want_full(0.0)
    r.changed(10.0)
    assert not r.want_full(10.1) and r.want_full(10.25)


# ---- ray passes ----------------------------------------------------------------------------------

def test_bvh_layouts_are_built_once_per_scene_and_kept_across_camera_moves():
    from viewer import rays
    s = get_scene("spheres")
    moved = dataclasses.replace(s, camera=cam_ops.orbit(s.camera, 50, 0))
    p = get_preset("amd-rdna4")
    assert rays.layout_for(s, p) is rays.layout_for(moved, p)
    assert rays.layout_for(get_scene("quad"), p) is not rays.layout_for(s, p)
    assert rays.layout_name(p) == rays.layout_for(s, p).name


def test_worker_traces_ray_passes_on_full_frames_only():
    from pipelines.raytrace import trace
    s = get_scene("spheres")
    w = Worker()
    try:
        w.submit(Request(1, s, (get_preset("imr-baseline"), get_preset("amd-rdna4")), 48, 32, 1, True,
                         ("primary", "shadow")))
        _wait(w, 60)
        f = w.poll()
        for preset, r, imgs in zip(("imr-baseline", "amd-rdna4"), f.results, f.rays):
            own = render(s, preset, 48, 32)
            rt = trace(s, preset, 48, 32, rays=("primary", "shadow"), depth=own.depth)
            assert set(imgs) == {"primary", "shadow"}
            np.testing.assert_array_equal(imgs["primary"], rt.images["primary"])
            np.testing.assert_array_equal(imgs["shadow"], rt.images["shadow"])
            np.testing.assert_array_equal(r.pixel_maps["rt.shadow.steps"], rt.pixel_maps["rt.shadow.steps"])
            assert r.counters == own.counters + rt.counters          # as `tilesim render --rays`
            fig = hud.figures(r)
            assert fig["rt_steps_per_ray"] == rt.counters["rt.steps"] / rt.counters["rt.rays"]
            assert "steps" in "".join(t for line in hud.strip_lines(fig, None, "") for t, _ in line)
            np.testing.assert_array_equal(r.color, own.color)
        assert extra_modes(f.results, f.rays) == (RAY + "primary", RAY + "shadow",
                                                  PIXEL + "rt.primary.steps", PIXEL + "rt.shadow.steps")
        assert mode_title(PIXEL + "rt.shadow.steps") == "BVH traversal steps per pixel, shadow rays"
        w.submit(Request(2, s, (get_preset("imr-baseline"),), 48, 32, 1, False, ("primary",)))
        _wait(w, 60)
        f = w.poll()
        assert f.rays == [{}] and "rt.primary.steps" not in f.results[0].pixel_maps
        assert "rt_steps_per_ray" not in hud.figures(f.results[0])
    finally:
        w.close()


def test_ray_images_as_rgba():
    g = ray_rgba(np.array([[0.0, 0.5, 1.0]], np.float32))
    np.testing.assert_array_equal(g[0, :, 0], [0, 128, 255])
    assert (g[..., 3] == 255).all() and (g[..., 0] == g[..., 2]).all()
    c = np.zeros((2, 2, 4), np.uint8)
    assert ray_rgba(c) is not None and np.array_equal(ray_rgba(c), c)


# ---- the window, headless on EGL -----------------------------------------------------------------

W, H = 96, 64
PRESETS = ("imr-baseline", "apple-m3")


@pytest.fixture(scope="module")
def viewer(tmp_path_factory):
    try:
        import moderngl
        moderngl.create_standalone_context(backend="egl").release()
    except Exception as exc:
        pytest.skip(f"no OpenGL context through EGL (moderngl): {exc}")
    from viewer.app import Options, open_viewer
    out = tmp_path_factory.mktemp("shots")
    v = open_viewer(Options(["spheres", "quad", "overdraw:6"], [get_preset(p) for p in PRESETS], W, H,
                            out_dir=str(out)), window="headless")
    v.wait_full()
    yield v
    v.worker.close()
    v.wnd.destroy()


def _press(v, name, release=True):
    v.on_key_event(name, v.keys.ACTION_PRESS, None)
    if release:
        v.on_key_event(name, v.keys.ACTION_RELEASE, None)
    v.step()


def _panel_pixels(v, i):
    img = v.read_window()
    r = v.layouts()[i].image
    return img[r.y:r.y + r.h, r.x:r.x + r.w]


def test_starts_with_the_scenes_own_camera(viewer):
    assert viewer.camera is get_scene("spheres").camera
    assert viewer.shown.request.scene.camera == get_scene("spheres").camera


def test_panels_equal_the_renderers_own_images(viewer):
    _press(viewer, "NUMBER_1")
    viewer.wait_full()
    scene = dataclasses.replace(viewer.scene, camera=viewer.camera)
    for i, p in enumerate(PRESETS):
        own = render(scene, p, W, H)
        np.testing.assert_array_equal(viewer.shown.results[i].color, own.color)
        assert viewer.shown.results[i].counters == own.counters
        # what the window shows is that image, pixel for pixel (alpha aside: the window's own)
        np.testing.assert_array_equal(_panel_pixels(viewer, i)[..., :3], own.color[..., :3])


def test_every_mode_draws_and_saves_a_screenshot(viewer, tmp_path):
    seen = []
    for i, mode in enumerate(MODES):
        _press(viewer, f"NUMBER_{i + 1}")
        assert viewer.mode == mode
        s = viewer.shown
        scale = shared_scale(mode, s.results, s.request.scene.camera.near, s.request.scene.camera.far)
        for k, r in enumerate(s.results):
            want = colorize(mode, r, scale, s.request.scene.camera.near, s.request.scene.camera.far)
            np.testing.assert_array_equal(_panel_pixels(viewer, k)[..., :3], want[..., :3])
        seen.append(_panel_pixels(viewer, 0).copy())
        msg = viewer.save_screenshot(str(tmp_path / f"{mode}.png"))
        assert msg.startswith("saved")
        from PIL import Image
        shot = np.asarray(Image.open(tmp_path / f"{mode}.png"))
        assert shot.shape[:2] == (viewer.wnd.size[1], viewer.wnd.size[0])
        doc = json.loads((tmp_path / f"{mode}.json").read_text())
        assert doc["mode"] == mode and [p["preset"] for p in doc["panels"]] == list(PRESETS)
        for p, r in zip(doc["panels"], s.results):
            assert p["counters"] == r.counters.as_json()
        assert doc["panels"][0]["vs_first"]["shaded"] == 0
        assert doc["panels"][1]["vs_first"]["shaded"] == (s.results[1].counters["raster.shaded"]
                                                          - s.results[0].counters["raster.shaded"])
    for a, b in zip(seen, seen[1:]):
        assert not np.array_equal(a, b)          # each mode shows something else
    _press(viewer, "NUMBER_1")


def test_overdraw_heat_map_differs_between_presets(viewer):
    _press(viewer, "NUMBER_2")
    a, b = _panel_pixels(viewer, 0), _panel_pixels(viewer, 1)
    shaded = [r.counters["raster.shaded"] for r in viewer.shown.results]
    assert shaded[0] != shaded[1] and not np.array_equal(a, b)
    _press(viewer, "NUMBER_1")
    # in image mode the two architectures agree (DESIGN.md §4's first invariant)
    np.testing.assert_array_equal(_panel_pixels(viewer, 0), _panel_pixels(viewer, 1))


def test_headless_window_redraws_only_when_the_picture_changes(viewer):
    viewer.wait_full()
    n = viewer.redraws
    for _ in range(5):
        viewer.step()
    assert viewer.redraws == n
    _press(viewer, "NUMBER_2")                 # mode: redrawn once
    assert viewer.redraws == n + 1
    _press(viewer, "NUMBER_1")


def test_footer_reads_out_the_value_under_the_mouse(viewer):
    _press(viewer, "NUMBER_2")
    try:
        lay = viewer.layouts()[1]
        viewer.on_mouse_position_event(lay.image.x + 10, lay.image.y + 20, 0, 0)
        viewer.step()
        want = [str(int(r.pixel_maps["overdraw"][20, 10])) for r in viewer.shown.results]
        assert f"at 10,20: {' | '.join(want)}" in viewer.status()
        viewer.on_mouse_position_event(0, 0, 0, 0)            # off the panels: no readout
        assert "at " not in viewer.status()
    finally:
        viewer.hover = None
        _press(viewer, "NUMBER_1")


def test_help_key_draws_the_help_and_toggles_back(viewer):
    before = viewer.read_window()
    _press(viewer, "H")
    assert viewer.show_help and not np.array_equal(viewer.read_window(), before)
    _press(viewer, "F1")
    assert not viewer.show_help
    np.testing.assert_array_equal(viewer.read_window(), before)


def test_tab_cycles_modes(viewer):
    _press(viewer, "NUMBER_1")
    for mode in (*MODES[1:], MODES[0]):
        _press(viewer, "TAB")
        assert viewer.mode == mode


def test_tab_reaches_extra_per_pixel_maps(viewer):
    real = viewer.worker._render

    def with_nodes(scene, preset, w, h, samples):        # as a ray pass would add its map
        r = real(scene, preset, w, h, samples)
        r.pixel_maps["rt_nodes"] = np.arange(w * h, dtype=np.int64).reshape(h, w) % 7
        return r
    viewer.worker._render = with_nodes
    try:
        _press(viewer, "M")
        viewer.wait_full()
        _press(viewer, "NUMBER_5")
        _press(viewer, "TAB")
        assert viewer.mode == PIXEL + "rt_nodes"
        want = colorize(viewer.mode, viewer.shown.results[0], shared_scale(viewer.mode, viewer.shown.results))
        np.testing.assert_array_equal(_panel_pixels(viewer, 0)[..., :3], want[..., :3])
        _press(viewer, "TAB")
        assert viewer.mode == MODES[0]
    finally:
        viewer.worker._render = real
        _press(viewer, "NUMBER_4")
        _press(viewer, "M")
        viewer.wait_full()
    assert viewer.mode == "fallbacks"
    _press(viewer, "NUMBER_1")


def test_ray_modes_show_the_passes_and_wait_out_camera_moves(viewer):
    viewer.opts.rays = ("primary", "shadow", "ao")
    try:
        _press(viewer, "M")                        # any change brings a new full frame, traced
        viewer.wait_full(120)
        modes = viewer.modes()
        assert modes[len(MODES):] == (RAY + "primary", RAY + "shadow", RAY + "ao", PIXEL + "rt.primary.steps",
                                      PIXEL + "rt.shadow.steps", PIXEL + "rt.ao.steps")
        _press(viewer, "NUMBER_5")
        for mode in modes[len(MODES):]:
            _press(viewer, "TAB")
            assert viewer.mode == mode
            s = viewer.shown
            for k in range(len(PRESETS)):
                if mode.startswith(RAY):
                    want = ray_rgba(s.rays[k][mode[len(RAY):]])
                else:
                    want = colorize(mode, s.results[k], shared_scale(mode, s.results))
                np.testing.assert_array_equal(_panel_pixels(viewer, k)[..., :3], want[..., :3])
        _press(viewer, "NUMBER_1")
        for _ in range(len(MODES) + 1):            # image .. depth, ray:primary, ray:shadow
            _press(viewer, "TAB")
        assert viewer.mode == RAY + "shadow"
        viewer.on_mouse_scroll_event(0, 1)         # moving frames have no rays: the image meanwhile
        end = time.perf_counter() + 30
        while viewer.shown.request.full:
            assert time.perf_counter() < end
            viewer.step()
            time.sleep(0.002)
        assert viewer.mode == RAY + "shadow"
        assert viewer.scale_legend.mode == "image"    # shown meanwhile; the mode is kept
        viewer.wait_full(120)
        np.testing.assert_array_equal(_panel_pixels(viewer, 0)[..., :3],
                                      ray_rgba(viewer.shown.rays[0]["shadow"])[..., :3])
    finally:
        viewer.opts.rays = ()
        _press(viewer, "R")
        _press(viewer, "M")
        _press(viewer, "NUMBER_1")
        viewer.wait_full()


def test_drag_orbits_renders_reduced_then_full_and_r_resets(viewer):
    home = viewer.home
    viewer.on_mouse_press_event(10, 10, 1)
    viewer.on_mouse_drag_event(40, 10, 30, 0)
    viewer.on_mouse_release_event(40, 10, 1)
    assert viewer.camera != home and viewer.camera.target == home.target
    end = time.perf_counter() + 30
    sizes = set()
    while not viewer.is_full():
        assert time.perf_counter() < end
        viewer.step()
        if viewer.shown.request.seq == viewer.seq:
            sizes.add((viewer.shown.request.width, viewer.shown.request.full))
        time.sleep(0.002)
    assert (W, True) in sizes
    scene = dataclasses.replace(viewer.scene, camera=viewer.camera)
    np.testing.assert_array_equal(viewer.shown.results[1].color, render(scene, PRESETS[1], W, H).color)
    _press(viewer, "R")
    assert viewer.camera == home
    viewer.wait_full()


def test_wheel_zooms_and_right_drag_pans(viewer):
    d0 = cam_ops.distance(viewer.camera)
    viewer.on_mouse_scroll_event(0, 1)
    assert math.isclose(cam_ops.distance(viewer.camera), d0 * cam_ops.ZOOM_PER_STEP)
    t0 = viewer.camera.target
    viewer.on_mouse_press_event(10, 10, 2)
    viewer.on_mouse_drag_event(15, 10, 5, 0)
    viewer.on_mouse_release_event(15, 10, 2)
    assert viewer.camera.target != t0
    t1 = viewer.camera.target
    viewer.wnd.modifiers.shift = True                   # shift + left drag pans too
    try:
        viewer.on_mouse_press_event(10, 10, 1)
        viewer.on_mouse_drag_event(10, 15, 0, 5)
        viewer.on_mouse_release_event(10, 15, 1)
    finally:
        viewer.wnd.modifiers.shift = False
    assert viewer.camera.target != t1
    _press(viewer, "R")
    viewer.wait_full()


def test_held_w_flies_forward(viewer):
    e0 = np.array(viewer.camera.eye)
    viewer.on_key_event("W", viewer.keys.ACTION_PRESS, None)
    for _ in range(3):
        time.sleep(0.02)
        viewer.step()
    viewer.on_key_event("W", viewer.keys.ACTION_RELEASE, None)
    f, _, _ = cam_ops.basis(viewer.home)
    moved = np.array(viewer.camera.eye) - e0
    assert np.dot(moved, f) > 0 and np.linalg.norm(np.cross(moved, f)) < 1e-9
    _press(viewer, "R")
    viewer.wait_full()


def test_held_s_flies_back_without_a_screenshot(viewer):
    from viewer.app import S_HOLD_S
    shots = viewer.last_screenshot
    e0 = np.array(viewer.camera.eye)
    viewer.on_key_event("S", viewer.keys.ACTION_PRESS, None)
    end = time.perf_counter() + S_HOLD_S + 0.1
    while time.perf_counter() < end:
        viewer.step()
        time.sleep(0.01)
    viewer.on_key_event("S", viewer.keys.ACTION_RELEASE, None)
    viewer.step()
    f, _, _ = cam_ops.basis(viewer.home)
    assert np.dot(np.array(viewer.camera.eye) - e0, f) < 0
    assert viewer.last_screenshot == shots
    _press(viewer, "R")
    viewer.wait_full()


def test_msaa_and_scale_keys_rerender(viewer):
    _press(viewer, "M")
    viewer.wait_full()
    assert viewer.shown.request.samples == 4
    _press(viewer, "M")
    _press(viewer, "MINUS")
    viewer.wait_full()
    assert (viewer.shown.request.width, viewer.shown.request.height) == (round(W * 0.75), round(H * 0.75))
    assert viewer.shown.results[0].color.shape[:2] == (round(H * 0.75), round(W * 0.75))
    _press(viewer, "EQUAL")
    viewer.wait_full()
    assert viewer.shown.request.width == W and viewer.shown.request.samples == 1


def test_g_steps_through_front_ends(viewer):
    scene = dataclasses.replace(viewer.scene, camera=viewer.camera)
    try:
        for fe in ("legacy", "ngg", "mesh"):
            _press(viewer, "G")
            viewer.wait_full()
            assert viewer.shown.request.frontend == fe
            for i, p in enumerate(PRESETS):
                assert viewer.shown.results[i].counters == render(scene, p, W, H, frontend=fe).counters
    finally:
        _press(viewer, "G")
    assert viewer.frontend is None
    viewer.wait_full()


def test_n_and_p_switch_scenes(viewer):
    _press(viewer, "N")
    viewer.wait_full()
    assert viewer.scene.name == get_scene("quad").name and viewer.camera == get_scene("quad").camera
    np.testing.assert_array_equal(viewer.shown.results[0].color, render("quad", PRESETS[0], W, H).color)
    _press(viewer, "P")
    viewer.wait_full()
    assert viewer.scene is get_scene("spheres")


def test_resized_window_relays_out_and_screenshots_whole(viewer, tmp_path):
    size = viewer.wnd.size
    try:
        viewer.wnd.size = (size[0] + 100, size[1] + 60)
        viewer.step()
        img = viewer.read_window()
        assert img.shape[:2] == (size[1] + 60, size[0] + 100)
        lay = viewer.layouts()[1]
        assert lay.image.w > W and abs(lay.image.w / lay.image.h - W / H) < 0.05
        clear = np.round(np.array(viewer.clear_color[:3]) * 255)
        right = img[lay.image.y + lay.image.h // 2, lay.image.x + lay.image.w - 2, :3]
        assert np.abs(right - clear).max() > 2         # drawn up to the new right edge
    finally:
        viewer.wnd.size = size
        viewer.step()


def test_s_tap_saves_window_and_counters(viewer):
    out = viewer.opts.out_dir
    _press(viewer, "S")
    viewer.step()
    png, js = viewer.last_screenshot
    assert png.startswith(out) and viewer.message == f"saved {png}"
    doc = json.loads(open(js).read())
    assert doc["scene"] == "spheres" and len(doc["panels"]) == 2
    assert doc["panels"][1]["figures"]["overdraw"] == pytest.approx(viewer.shown.results[1].derived()["overdraw"])


def test_cli_modes_and_front_ends_match_the_renderers():
    from renderer.frontend import FRONTENDS
    from viewer import keys
    from viewer.cli import FRONTENDS as CLI_FRONTENDS
    from viewer.cli import MODES as CLI_MODES
    assert CLI_MODES == MODES
    assert CLI_FRONTENDS == FRONTENDS == keys.FRONTENDS[1:]


def test_no_display_is_one_line_with_a_suggestion(monkeypatch):
    from pipelines.cli import main
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    import argparse
    from viewer.cli import add_parser
    ap = argparse.ArgumentParser()
    add_parser(ap.add_subparsers())
    args = ap.parse_args(["view", "quad", "--preset", "imr-baseline", "--window", "pyglet"])
    from pipelines.cli import UserError
    with pytest.raises(UserError) as e:
        args.func(args)
    msg = str(e.value)
    assert "\n" not in msg and "tilesim render" in msg and "tilesim report" in msg
    del main


def test_window_failures_are_one_line(monkeypatch):
    pytest.importorskip("moderngl_window")
    import moderngl_window as mglw
    from viewer.app import Options, ViewerError, open_viewer

    class Broken:
        def __init__(self, **kw):
            raise RuntimeError("glXCreateContext failed\nwith details on a second line")

    class OldGL:
        def __init__(self, **kw):
            self.ctx = type("Ctx", (), {"version_code": 310, "info": {"GL_VERSION": "3.1 Mesa"}})()
            self.destroyed = False

        def destroy(self):
            OldGL.destroyed = True
    opts = Options(["quad"], [get_preset("imr-baseline")], 32, 32)
    for cls, words in ((Broken, "glXCreateContext failed"), (OldGL, "OpenGL 3.3 is needed, this display offers 3.1 Mesa")):
        monkeypatch.setattr(mglw, "get_local_window_cls", lambda name, cls=cls: cls)
        monkeypatch.setenv("DISPLAY", ":99")
        with pytest.raises(ViewerError) as e:
            open_viewer(opts, window="pyglet")
        msg = str(e.value)
        assert words in msg and "\n" not in msg and "tilesim render" in msg
    assert OldGL.destroyed
    with pytest.raises(ViewerError):
        open_viewer(Options(["quad"], [get_preset("imr-baseline")] * 5), window="headless")


def test_cli_rejects_bad_input_before_opening_a_window():
    import argparse
    from pipelines.cli import UserError
    from pipelines.presets import PresetError
    from scenes.model import SceneError
    from viewer.cli import add_parser
    ap = argparse.ArgumentParser()
    add_parser(ap.add_subparsers())
    for argv, err in ((["view", "quad", "--preset", "a,b,c,d,e"], UserError),
                      (["view", "quad", "--preset", "nope"], PresetError),
                      (["view", "nope"], SceneError),
                      (["view", "quad", "--res", "12"], UserError),
                      (["view", "quad", "--out-dir", "/no/such/dir"], UserError),
                      (["view", "quad", "--threads", "0"], UserError),
                      (["view", "quad", "--rays", "primary,nope"], UserError)):
        args = ap.parse_args(argv)
        with pytest.raises(err):
            args.func(args)


def test_cli_screenshot_headless(tmp_path, viewer):
    import argparse
    from viewer.cli import add_parser
    ap = argparse.ArgumentParser()
    add_parser(ap.add_subparsers())
    out = tmp_path / "v.png"
    args = ap.parse_args(["view", "quad", "--preset", "imr-baseline,amd-rdna2", "--res", "64x48",
                          "--window", "headless", "--mode", "depth", "--screenshot", str(out)])
    args.func(args)
    doc = json.loads((tmp_path / "v.json").read_text())
    assert [p["preset"] for p in doc["panels"]] == ["imr-baseline", "amd-rdna2"] and doc["full_resolution"]
    assert doc["mode"] == "depth" and (tmp_path / "v.png").stat().st_size > 0
    mesh = tmp_path / "tri.obj"                         # a file on the command line
    mesh.write_text("v -1 -1 0\nv 1 -1 0\nv 0 1 0\nf 1 2 3\n")
    args = ap.parse_args(["view", str(mesh), "--preset", "apple-m3", "--res", "48x32",
                          "--window", "headless", "--screenshot", str(tmp_path / "f.png")])
    args.func(args)
    doc = json.loads((tmp_path / "f.json").read_text())
    assert doc["scene"] == str(mesh) and doc["panels"][0]["counters"]["raster.shaded"] > 0
