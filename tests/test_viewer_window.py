"""The viewer's window, headless on an EGL context (issue 9, moderngl-window's headless window):
every mode drawn, panels equal to the renderer's own images pixel for pixel, heat maps that differ
where the counters do, key and mouse events sent through the window's handlers, screenshots saved,
and the CLI's one-line errors."""
from __future__ import annotations

import dataclasses
import json
import math
import time

import numpy as np
import pytest

from pipelines.api import render
from pipelines.presets import get_preset
from scenes.library import get_scene
from tests.cli_process import HANG_S
from viewer import camera as cam_ops
from viewer.modes import MODES, PIXEL, RAY, ray_rgba, colorize, shared_scale


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
    v.wait_full(HANG_S)
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
    viewer.wait_full(HANG_S)
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
    viewer.wait_full(HANG_S)
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
        viewer.wait_full(HANG_S)
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
        viewer.wait_full(HANG_S)
    assert viewer.mode == "fallbacks"
    _press(viewer, "NUMBER_1")


def test_ray_modes_show_the_passes_and_wait_out_camera_moves(viewer):
    viewer.opts.rays = ("primary", "shadow", "ao")
    try:
        _press(viewer, "M")                        # any change brings a new full frame, traced
        viewer.wait_full(HANG_S)
        # the image mode: the raster's colour, not the colour the ray passes darken
        np.testing.assert_array_equal(_panel_pixels(viewer, 0)[..., :3],
                                      viewer.shown.results[0].color[..., :3])
        assert not np.array_equal(viewer.shown.results[0].color, viewer.shown.results[0].image)
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
        end = time.perf_counter() + HANG_S
        while viewer.shown.request.full:
            assert time.perf_counter() < end
            viewer.step()
            time.sleep(0.002)
        assert viewer.mode == RAY + "shadow"
        assert viewer.scale_legend.mode == "image"    # shown meanwhile; the mode is kept
        viewer.wait_full(HANG_S)
        np.testing.assert_array_equal(_panel_pixels(viewer, 0)[..., :3],
                                      ray_rgba(viewer.shown.rays[0]["shadow"])[..., :3])
    finally:
        viewer.opts.rays = ()
        _press(viewer, "R")
        _press(viewer, "M")
        _press(viewer, "NUMBER_1")
        viewer.wait_full(HANG_S)


def test_drag_orbits_renders_reduced_then_full_and_r_resets(viewer):
    home = viewer.home
    viewer.on_mouse_press_event(10, 10, 1)
    viewer.on_mouse_drag_event(40, 10, 30, 0)
    viewer.on_mouse_release_event(40, 10, 1)
    assert viewer.camera != home and viewer.camera.target == home.target
    end = time.perf_counter() + HANG_S
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
    viewer.wait_full(HANG_S)


def test_moving_camera_shows_pictures_at_full_size_and_says_the_costs_are_behind(viewer):
    """In image mode a moving camera's frames are pictures (pipelines.picture) at the panels'
    full size: the image of that camera, pixel for pixel, while the counters and the strips
    are of the newest camera rendered whole, and the footer says how far behind they are."""
    viewer.wait_full(HANG_S)
    viewer.on_mouse_press_event(10, 10, 1)
    end = time.perf_counter() + HANG_S
    try:
        while True:         # a picture comes within the settle time, unless the machine is busy
            viewer.on_mouse_drag_event(40, 10, 2, 0)
            while viewer.shown.request.seq != viewer.seq:
                assert time.perf_counter() < end
                viewer.step()
                time.sleep(0.002)
            if viewer.shown.pictures is not None:
                break
        f = viewer.shown
        assert (f.request.width, f.request.full) == (W, False)
        scene = dataclasses.replace(viewer.scene, camera=viewer.camera)
        for i, p in enumerate(PRESETS):
            want = render(scene, p, W, H).image
            np.testing.assert_array_equal(f.pictures[i], want)
            np.testing.assert_array_equal(_panel_pixels(viewer, i)[..., :3], want[..., :3])
        assert f.results == f.costed.results and f.costed.request.seq < f.request.seq
        assert f.costed.request.scene.camera != viewer.camera
        lag = (f.request.made_at - f.costed.request.made_at) * 1e3
        assert f"costs {lag:.0f} ms behind the picture" in viewer.status()
    finally:
        viewer.on_mouse_release_event(40, 10, 1)
        _press(viewer, "R")
        viewer.wait_full(HANG_S)
    assert "behind" not in viewer.status()


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
    viewer.wait_full(HANG_S)


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
    viewer.wait_full(HANG_S)


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
    viewer.wait_full(HANG_S)


def test_msaa_and_scale_keys_rerender(viewer):
    _press(viewer, "M")
    viewer.wait_full(HANG_S)
    assert viewer.shown.request.samples == 4
    _press(viewer, "M")
    _press(viewer, "MINUS")
    viewer.wait_full(HANG_S)
    assert (viewer.shown.request.width, viewer.shown.request.height) == (round(W * 0.75), round(H * 0.75))
    assert viewer.shown.results[0].color.shape[:2] == (round(H * 0.75), round(W * 0.75))
    _press(viewer, "EQUAL")
    viewer.wait_full(HANG_S)
    assert viewer.shown.request.width == W and viewer.shown.request.samples == 1


def test_g_steps_through_front_ends(viewer):
    scene = dataclasses.replace(viewer.scene, camera=viewer.camera)
    try:
        for fe in ("legacy", "ngg", "mesh"):
            _press(viewer, "G")
            viewer.wait_full(HANG_S)
            assert viewer.shown.request.frontend == fe
            for i, p in enumerate(PRESETS):
                assert viewer.shown.results[i].counters == render(scene, p, W, H, frontend=fe).counters
    finally:
        _press(viewer, "G")
    assert viewer.frontend is None
    viewer.wait_full(HANG_S)


def test_n_and_p_switch_scenes(viewer):
    _press(viewer, "N")
    viewer.wait_full(HANG_S)
    assert viewer.scene.name == get_scene("quad").name and viewer.camera == get_scene("quad").camera
    np.testing.assert_array_equal(viewer.shown.results[0].color, render("quad", PRESETS[0], W, H).color)
    _press(viewer, "P")
    viewer.wait_full(HANG_S)
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
    from viewer.cli import PICTURE_HZ as CLI_PICTURE_HZ
    from viewer.schedule import PICTURE_HZ
    assert CLI_MODES == MODES and CLI_PICTURE_HZ == PICTURE_HZ
    assert CLI_FRONTENDS == FRONTENDS == keys.FRONTENDS[1:]


def test_no_display_is_one_line_with_a_suggestion(monkeypatch):
    from pipelines.commands.cli import main
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    import argparse
    from viewer.cli import add_parser
    ap = argparse.ArgumentParser()
    add_parser(ap.add_subparsers())
    args = ap.parse_args(["view", "quad", "--preset", "imr-baseline", "--window", "pyglet"])
    from pipelines.commands.cli import UserError
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
    from pipelines.commands.cli import UserError
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
                      (["view", "quad", "--picture-hz", "-1"], UserError),
                      (["view", "quad", "--picture-hz", "nan"], UserError),
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


def test_cli_screenshot_that_never_came_is_an_error(tmp_path, monkeypatch):
    """A main loop that ends before full resolution (--frames ran out, the window closed): one
    error line, no file, not success."""
    import argparse

    import viewer.app
    from pipelines.commands.cli import UserError
    from viewer.cli import add_parser
    monkeypatch.setattr(viewer.app, "open_viewer", lambda options, window: object())
    monkeypatch.setattr(viewer.app, "run", lambda v, frames, screenshot: False)
    ap = argparse.ArgumentParser()
    add_parser(ap.add_subparsers())
    out = tmp_path / "v.png"
    args = ap.parse_args(["view", "quad", "--preset", "imr-baseline", "--res", "64x48",
                          "--window", "headless", "--frames", "1", "--screenshot", str(out)])
    with pytest.raises(UserError, match="no screenshot saved"):
        args.func(args)
    assert not out.exists()
