"""The viewer's render worker without a window (issue 9): the latest request wins, refinements
yield to moves, errors are reported, full resolution after the settle time, ray passes traced on
full frames only."""
from __future__ import annotations

import dataclasses
import threading
import time

import numpy as np

from pipelines.api import render
from pipelines.presets import get_preset
from scenes.library import get_scene
from tests.cli_process import HANG_S
from viewer import camera as cam_ops
from viewer import hud
from viewer.modes import PIXEL, RAY, extra_modes, mode_title, ray_rgba
from viewer.schedule import Refiner, Request, Worker


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


def test_worker_moving_panels_render_at_once_in_order():
    """A moving frame's panels render on several threads at once (their waits on the memory
    model overlap) and come back in preset order; a refinement renders them one after another."""
    active, most, threads = [0], [0], set()
    lock = threading.Lock()

    def render_panel(scene, preset, w, h, samples):
        with lock:
            active[0] += 1
            most[0] = max(most[0], active[0])
            threads.add(threading.current_thread().name)
        time.sleep(0.05)
        with lock:
            active[0] -= 1
        return preset

    w = Worker(render_panel)
    try:
        w.submit(Request(1, "a", ("p0", "p1", "p2"), 8, 8, 1, False))
        _wait(w)
        frame = w.poll()
        assert frame.results == ["p0", "p1", "p2"]
        assert most[0] == 3 and len(threads) == 3
        most[0] = 0
        w.submit(Request(2, "a", ("p0", "p1"), 8, 8, 1, True))
        _wait(w)
        assert w.poll().results == ["p0", "p1"] and most[0] == 1
    finally:
        w.close()


def test_worker_moving_panels_match_one_at_a_time():
    """Two real presets rendered at once give the images and counters each gives alone."""
    scene = get_scene("quad")
    presets = (get_preset("imr-baseline"), get_preset("apple-m3"))
    w = Worker()
    try:
        w.submit(Request(1, scene, presets, 96, 64, 1, False))
        _wait(w, HANG_S)
        frame = w.poll()
    finally:
        w.close()
    for preset, got in zip(presets, frame.results):
        alone = render(scene, preset, 96, 64)
        assert np.array_equal(got.color, alone.color)
        assert got.counters == alone.counters

def test_worker_latest_request_wins():
    fake = SlowRender(0.05)
    w = Worker(fake)
    try:
        w.submit(Request(1, "a", ("p",), 8, 8, 1, False))
        assert fake.started.wait(2)
        # arrive while 1 renders: the second lane takes the first it sees (IN_FLIGHT), and of
        # the rest only the last survives
        for seq in range(2, 7):
            w.submit(Request(seq, "a", ("p",), 8, 8, 1, False))
        _wait(w)
        assert len(fake.calls) <= 3 and w.rendered[-1] == 6   # (1 may finish after 6: dropped)
        assert w.rendered == sorted(set(w.rendered))
        frame = w.poll()
        assert frame.request.seq == 6 and w.poll() is None
    finally:
        w.close()


def test_worker_drops_a_moving_frame_finished_after_a_later_one():
    """Two moving frames render at once; the older, finishing last, never reaches the screen."""
    started = threading.Event()

    def render_panel(scene, preset, w, h, samples):
        started.set()
        time.sleep(0.3 if scene == "slow" else 0.02)
        return scene

    w = Worker(render_panel)
    try:
        w.submit(Request(1, "slow", ("p",), 8, 8, 1, False))
        assert started.wait(2)
        w.submit(Request(2, "fast", ("p",), 8, 8, 1, False))
        _wait(w)
        assert w.rendered == [2]
        assert w.poll().results == ["fast"] and w.poll() is None
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


# ---- pictures while the camera moves, the costs behind them ----------------------------------------

class Stage:
    """Stand-ins for render and picture that record their calls; render waits for `gate`."""

    def __init__(self):
        self.renders, self.pictures = [], []
        self.gate = threading.Event()
        self.gate.set()

    def render(self, scene, preset, w, h, samples):
        self.gate.wait(5)
        self.renders.append((scene.camera, preset.name, threading.current_thread().name))
        return ("costs", scene.camera, preset.name)

    def picture(self, scene, preset, w, h, samples):
        self.pictures.append((scene.camera, preset.name))
        return ("picture", scene.camera, preset.name)


def _moved(scene, k):
    return dataclasses.replace(scene, camera=cam_ops.orbit(scene.camera, 4.0 * k, 0))


def _until(pred, timeout=5.0):
    end = time.perf_counter() + timeout
    while not pred():
        assert time.perf_counter() < end
        time.sleep(0.005)


def test_picture_frames_draw_each_image_once_and_carry_the_newest_costs():
    """A picture request draws one picture for panels whose images agree (pipelines.picture.
    image_key: the untextured sponza through BC and ASTC presets) and two for a textured level;
    its results are the newest frame rendered whole, which the costs thread then renews with
    the picture's camera, rendered whole on its own thread."""
    st = Stage()
    w = Worker(st.render, picture=st.picture)
    presets = (get_preset("imr-baseline"), get_preset("apple-m3"))
    try:
        for k, (name, images) in enumerate((("sponza", 1), ("pul1duel", 2))):
            scene, s0 = get_scene(name), 10 * k           # (seqs only grow, as the viewer's)
            w.submit(Request(s0 + 1, scene, presets, 64, 36, 1, True))
            _wait(w)
            still = w.poll()
            assert still.costed is still and still.pictures is None
            st.pictures.clear()
            st.gate.clear()                      # hold the costs thread inside its render
            w.submit(Request(s0 + 2, _moved(scene, 1), presets, 64, 36, 1, False, picture=True))
            _wait(w)
            f = w.poll()
            assert len(st.pictures) == images
            assert [p[0] for p in f.pictures] == ["picture"] * 2
            assert all(p[1] == _moved(scene, 1).camera for p in f.pictures)
            assert f.costs is still and f.results == still.results      # the costs: behind
            st.gate.set()
            _until(lambda: w.costed and w.costed[-1] == s0 + 2 and w.costs_idle())
            costed = [r for r in st.renders if r[2] == "tilesim-costs"]
            assert [r[1] for r in costed[-2:]] == ["imr-baseline", "apple-m3"]
            assert costed[-1][0] == _moved(scene, 1).camera
            w.submit(Request(s0 + 3, _moved(scene, 2), presets, 64, 36, 1, False, picture=True))
            _wait(w)
            f = w.poll()
            assert f.costs.request.seq == s0 + 2 and f.results[0][1] == _moved(scene, 1).camera
            w.costed.clear()
    finally:
        w.close()


def test_picture_requests_render_whole_without_costs_for_their_panels():
    """No frame of that size rendered whole yet (or a scene the shared stages do not draw):
    the lane renders the request whole, and nothing is left for the costs thread."""
    st = Stage()
    w = Worker(st.render, picture=lambda *a: None if a[0].name == "postchain" else st.picture(*a))
    presets = (get_preset("imr-baseline"),)
    try:
        scene = get_scene("spheres")
        w.submit(Request(1, scene, presets, 64, 36, 1, False, picture=True))
        _wait(w)
        f = w.poll()
        assert f.pictures is None and f.costed is f and not st.pictures
        w.submit(Request(2, scene, presets, 64, 36, 1, True))
        _wait(w)
        w.poll()
        w.submit(Request(3, scene, presets, 32, 18, 1, False, picture=True))      # another size
        _wait(w)
        assert w.poll().pictures is None and not st.pictures and w.costs_idle()
        post = get_scene("postchain")
        w.submit(Request(4, post, presets, 64, 36, 1, True))
        _wait(w)
        w.poll()
        w.submit(Request(5, _moved(post, 1), presets, 64, 36, 1, False, picture=True))
        _wait(w)
        assert w.poll().pictures is None and w.costs_idle()
    finally:
        w.close()


def test_picture_frames_are_paced_and_full_frames_are_not():
    """While the camera moves, picture frames start at most picture_hz a second, each with the
    newest camera when it starts (what the pictures leave of the machine goes to the costs
    thread); a request at rest starts at once."""
    st = Stage()
    starts = []

    def picture(scene, preset, w, h, samples):
        starts.append(time.perf_counter())
        return st.picture(scene, preset, w, h, samples)
    hz, seconds = 20.0, 0.6
    w = Worker(st.render, picture=picture, picture_hz=hz)
    presets = (get_preset("imr-baseline"),)
    scene = get_scene("spheres")
    try:
        w.submit(Request(1, scene, presets, 64, 36, 1, True))
        _wait(w)
        t0 = time.perf_counter()
        k = 1
        while time.perf_counter() - t0 < seconds:
            k += 1
            w.submit(Request(k, _moved(scene, k), presets, 64, 36, 1, False, picture=True))
            time.sleep(0.002)
        _wait(w)
        # a start late by less than a period lets the next one come that much sooner, no more
        assert 0.5 * hz * seconds <= len(starts) <= hz * seconds + 2
        assert w.poll().pictures[0][1] == _moved(scene, k).camera
        t = time.perf_counter()
        w.submit(Request(k + 1, _moved(scene, k), presets, 64, 36, 1, True))
        _wait(w)
        assert time.perf_counter() - t < 0.5 / hz and w.poll().pictures is None
    finally:
        w.close()


def test_the_costs_thread_gives_way_to_the_camera_at_rest():
    """Once the camera stops, the refinement renders it whole: the costs thread drops its
    frame between panels instead of finishing an older camera's."""
    st = Stage()
    w = Worker(st.render, picture=st.picture)
    presets = (get_preset("imr-baseline"), get_preset("apple-m3"), get_preset("amd-rdna2"))
    scene = get_scene("spheres")
    try:
        w.submit(Request(1, scene, presets, 64, 36, 1, True))
        _wait(w)
        st.gate.clear()
        w.submit(Request(2, _moved(scene, 1), presets, 64, 36, 1, False, picture=True))
        _wait(w)
        _until(lambda: not w.costs_idle())
        w.submit(Request(2, _moved(scene, 1), presets, 64, 36, 1, True))      # at rest
        st.gate.set()
        _until(lambda: w.idle() and w.costs_idle())
        costed = [r for r in st.renders if r[2] == "tilesim-costs"]
        assert len(costed) == 1 and w.costed == []
        assert w.poll().costed.request.full
    finally:
        w.close()


def test_refiner_goes_full_after_the_settle_time():
    r = Refiner(settle_s=0.2)
    assert r.want_full(0.0)
    r.changed(10.0)
    assert not r.want_full(10.1) and r.want_full(10.25)


# ---- ray passes ----------------------------------------------------------------------------------

def test_bvh_layouts_are_built_once_per_scene_and_kept_across_camera_moves():
    from pipelines.passes.raytrace import layout_for, layout_name
    s = get_scene("spheres")
    moved = dataclasses.replace(s, camera=cam_ops.orbit(s.camera, 50, 0))
    p = get_preset("amd-rdna4")
    assert layout_for(s, p) is layout_for(moved, p)
    assert layout_for(get_scene("quad"), p) is not layout_for(s, p)
    assert layout_name(p) == layout_for(s, p).name


def test_worker_traces_ray_passes_on_full_frames_only():
    from pipelines.passes.raytrace import trace
    s = get_scene("spheres")
    w = Worker()
    try:
        w.submit(Request(1, s, (get_preset("imr-baseline"), get_preset("amd-rdna4")), 48, 32, 1, True,
                         ("primary", "shadow")))
        _wait(w, HANG_S)
        f = w.poll()
        for preset, r, imgs in zip(("imr-baseline", "amd-rdna4"), f.results, f.rays):
            own = render(s, preset, 48, 32, rays=("primary", "shadow"))    # as `tilesim render --rays`
            rt = trace(s, preset, 48, 32, rays=("primary", "shadow"), depth=own.depth)
            assert set(imgs) == {"primary", "shadow"}
            np.testing.assert_array_equal(imgs["primary"], rt.images["primary"])
            np.testing.assert_array_equal(imgs["shadow"], rt.images["shadow"])
            np.testing.assert_array_equal(r.pixel_maps["rt.shadow.steps"], rt.pixel_maps["rt.shadow.steps"])
            assert r.counters == own.counters
            for k in ("rt.rays", "rt.steps", "rt.primary.hits", "rt.shadow.tests.box"):
                assert r.counters[k] == rt.counters[k] > 0        # traversal: not the caches' state
            fig = hud.figures(r)
            assert fig["rt_steps_per_ray"] == rt.counters["rt.steps"] / rt.counters["rt.rays"]
            assert "steps" in "".join(t for line in hud.strip_lines(fig, None, "") for t, _ in line)
            np.testing.assert_array_equal(r.color, own.color)
        assert extra_modes(f.results, f.rays) == (RAY + "primary", RAY + "shadow",
                                                  PIXEL + "rt.primary.steps", PIXEL + "rt.shadow.steps")
        assert mode_title(PIXEL + "rt.shadow.steps") == "BVH traversal steps per pixel, shadow rays"
        w.submit(Request(2, s, (get_preset("imr-baseline"),), 48, 32, 1, False, ("primary",)))
        _wait(w, HANG_S)
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
