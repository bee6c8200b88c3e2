"""The window: a moderngl-window `WindowConfig` that uploads each panel's CPU framebuffer to a
texture and draws textured quads (panels, titles, counter strips, footer, help). Everything it
decides comes from the pure modules beside it (camera, layout, modes, keys, schedule, hud); this
file only wires events to them and draws.

    viewer = open_viewer(Options(["sponza"], presets, 640, 360), window="headless")
    viewer.wait_full()          # step frames until every panel shows full resolution
    viewer.save_screenshot("shot.png")
"""
from __future__ import annotations

import dataclasses
import functools
import os
import time
import weakref
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from pipelines.picture import drawable

from . import camera as cam_ops
from . import hud, layout
from .keys import FLY_KEYS, FRONTENDS, KEYMAP, ORBIT_STEP_PX, NamedKeys, key_name, next_scale
from .modes import MODES, RAY, colorize, extra_modes, hex_rgb, ray_rgba, shared_scale, value_at
from .schedule import MOVING_SCALE, PICTURE_HZ, Refiner, Request, Worker

S_HOLD_S = 0.25       # S held longer than this flies backwards; a shorter tap saves a screenshot
SUGGEST = "`tilesim render` and `tilesim report` work without a display"


class ViewerError(Exception):
    """The viewer cannot start (no display, no OpenGL 3.3): one line, with what works instead."""


@dataclass
class Options:
    scenes: list                # scene specs (built-in names or files) that N / P step through
    presets: list               # pipelines.presets.Preset, 1 to 4
    width: int = 640            # one panel's full render resolution
    height: int = 360
    samples: int = 1
    scale: float = 1.0         # resolution scale (+ / -)
    scene_index: int = 0
    camera: object = None       # scenes.model.Camera replacing the first scene's own
    out_dir: str = "."          # screenshots go here
    loaded: dict = field(default_factory=dict)   # spec -> Scene, for scenes already loaded
    mode: str = "image"         # modes.MODES
    rays: tuple = ()            # ray passes traced at full resolution (pipelines.passes.raytrace.PASSES)
    threads: int | None = None  # numba threads rendering (None: numba's default, every core)
    frontend: str | None = None # geometry front end for every panel (None: each preset's own)
    picture_hz: float = PICTURE_HZ   # moving pictures a second at most (0: unpaced; schedule.py)


def screenshot_json(path: str) -> str:
    """The counters JSON written beside a screenshot."""
    return str(Path(path).with_suffix(".json"))


def load_scene(spec: str, allow_outside: bool = False, max_texture_bytes: int | None = None):
    """A built-in scene by name or a mesh file by path (the CLI's rule: a mesh extension or a
    path separator means a file; it reads inside its own folder unless `allow_outside`, and its
    textures take at most `max_texture_bytes`)."""
    from scenes.library import get_scene
    from scenes.loaders import load_mesh_file
    is_file = Path(spec).suffix.lower() in (".glb", ".gltf", ".obj", ".ply") or os.sep in spec
    if is_file:
        return load_mesh_file(spec, allow_outside=allow_outside, max_texture_bytes=max_texture_bytes)
    return get_scene(spec)


_VS = """
#version 330
uniform vec4 rect;          // x0, y0 (top-left, NDC), width, height (NDC units)
in vec2 in_pos;             // unit square, (0, 0) at the top-left
out vec2 uv;
void main() {
    gl_Position = vec4(rect.x + in_pos.x * rect.z, rect.y - in_pos.y * rect.w, 0.0, 1.0);
    uv = in_pos;            // texture row 0 is the image's top row
}
"""
_FS = """
#version 330
uniform sampler2D image;
in vec2 uv;
out vec4 color;
void main() { color = texture(image, uv); }
"""


@functools.lru_cache(maxsize=None)
def _viewer_class():
    """Built on first use so that importing viewer.app does not import moderngl-window."""
    import moderngl
    from moderngl_window import WindowConfig

    class Viewer(WindowConfig):
        gl_version = (3, 3)
        title = "tilesim view"
        resizable = True
        vsync = True
        clear_color = (0.05, 0.055, 0.065, 1.0)

        def __init__(self, options: Options, **kwargs):
            super().__init__(**kwargs)
            self.opts = options
            keys = self.wnd.keys
            self.keys = NamedKeys if getattr(keys, "H", "undefined") == "undefined" else keys
            self.prog = self.ctx.program(vertex_shader=_VS, fragment_shader=_FS)
            quad = np.array([0, 0, 1, 0, 0, 1, 1, 1], np.float32)
            self.vbo = self.ctx.buffer(quad.tobytes())
            self.vao = self.ctx.vertex_array(self.prog, [(self.vbo, "2f", "in_pos")])
            self.textures: dict[str, object] = {}
            self.panel_tex: list[str] = []     # per panel, the key of the texture it shows
            self.content: dict[str, object] = {}
            self.worker = Worker(threads=options.threads, picture_hz=options.picture_hz)
            self.refiner = Refiner()
            self.mode = options.mode
            self.show_help = False
            self.samples = options.samples
            self.scale = options.scale
            self.frontend = options.frontend
            self.seq = 0
            self.submitted = None        # (seq, full) of the last request
            self.shown = None            # schedule.Frame on screen
            self.shown_mode = None
            self.message = ""
            self.held: dict[str, float] = {}     # fly key name -> time pressed
            self.buttons: set[int] = set()
            self.frames = 0
            self.redraws = 0
            self.hover = None            # window position of the mouse, for the footer's readout
            self.drawn = None            # what the framebuffer shows (see on_render)
            self.screenshot_request: str | None = None
            self.last_screenshot: tuple[str, str] | None = None
            self._set_scene(options.scene_index, options.camera)

        # ---- state changes ----------------------------------------------------------------
        def _set_scene(self, index: int, camera=None) -> None:
            specs = self.opts.scenes
            index %= len(specs)
            spec = specs[index]
            scene = self.opts.loaded.get(spec) or load_scene(spec)
            self.opts.loaded[spec] = scene
            self.scene_index = index
            self.scene = scene
            self.home = camera or scene.camera
            self.camera = self.home
            self.min_near = self.home.near / 20.0
            self.fly_speed = cam_ops.fly_speed(self.home)
            self._changed(moving=False)

        def _changed(self, moving: bool) -> None:
            """What the panels must show changed; a camera move also marks it as moving."""
            self.seq += 1
            if moving:
                self.refiner.changed(time.perf_counter())

        def _move(self, cam) -> None:
            self.camera = cam
            self._changed(moving=True)

        def act(self, action: str) -> None:
            """Apply one entry of keys.KEYMAP."""
            kind, _, arg = action.partition(":")
            if kind == "help":
                self.show_help = not self.show_help
            elif kind == "mode":
                modes = self.modes()
                if arg == "next":
                    arg = modes[(modes.index(self.mode) + 1) % len(modes)] if self.mode in modes else MODES[0]
                self.mode = arg
            elif kind == "reset":
                self._move(self.home)
            elif kind == "scene":
                from scenes.model import SceneError
                step = 1 if arg == "next" else -1
                try:
                    self._set_scene(self.scene_index + step)
                except SceneError as e:         # a file that no longer loads: say so, stay
                    self.message = str(e)
            elif kind == "msaa":
                self.samples = 4 if self.samples == 1 else 1
                self._changed(moving=False)
            elif kind == "frontend":
                self.frontend = FRONTENDS[(FRONTENDS.index(self.frontend) + 1) % len(FRONTENDS)]
                self._changed(moving=False)
            elif kind == "scale":
                self.scale = next_scale(self.scale, 1 if arg == "up" else -1)
                self._changed(moving=False)
            elif kind == "screenshot":
                self.screenshot_request = self._screenshot_path()
            elif kind == "orbit":
                dx, dy = {"left": (-1, 0), "right": (1, 0), "up": (0, -1), "down": (0, 1)}[arg]
                self._move(cam_ops.orbit(self.camera, dx * ORBIT_STEP_PX, dy * ORBIT_STEP_PX))
            else:
                raise ValueError(f"unknown action {action!r}")

        def _screenshot_path(self) -> str:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            base = Path(self.opts.out_dir) / f"tilesim-view-{stamp}"
            n = 0
            path = base.with_suffix(".png")
            while path.exists():
                n += 1
                path = Path(f"{base}-{n}.png")
            return str(path)

        # ---- events -------------------------------------------------------------------------
        def on_key_event(self, key, action, modifiers):
            name = key_name(self.keys, key)
            if name is None:
                return
            now = time.perf_counter()
            if action == self.keys.ACTION_PRESS:
                if name in FLY_KEYS:
                    self.held[name] = now
                if name in KEYMAP and name not in FLY_KEYS:     # S: decided on release
                    self.act(KEYMAP[name])
            elif action == self.keys.ACTION_RELEASE:
                pressed = self.held.pop(name, None)
                if name == "S" and pressed is not None and now - pressed < S_HOLD_S:
                    self.act("screenshot")

        def on_mouse_position_event(self, x, y, dx, dy):
            self.hover = (x, y)

        def readout(self) -> str:
            """The shown mode's value under the mouse in every panel, first panel first."""
            s = self.shown
            if self.hover is None or s is None:
                return ""
            lays = self.layouts()
            i = layout.panel_at(lays, *self.hover)
            if i is None:
                return ""
            rect, r = lays[i].image, s.results[0]
            x = min(int((self.hover[0] - rect.x) * r.width / rect.w), r.width - 1)
            y = min(int((self.hover[1] - rect.y) * r.height / rect.h), r.height - 1)
            mode = self.mode if self.mode in self.modes() else MODES[0]
            cam = s.request.scene.camera
            if mode == "image":        # this camera's picture, where the costs are an older one's
                values = [hex_rgb(img[y, x]) for img in s.images()]
            else:
                values = [value_at(mode, res, imgs, x, y, cam.near, cam.far)
                          for res, imgs in zip(s.results, s.rays or [{}] * len(s.results))]
            return f"at {x},{y}: " + " | ".join(values)

        def on_mouse_press_event(self, x, y, button):
            self.buttons.add(button)

        def on_mouse_release_event(self, x, y, button):
            self.buttons.discard(button)

        def on_mouse_drag_event(self, x, y, dx, dy):
            if not dx and not dy:
                return
            if 2 in self.buttons or 3 in self.buttons or self.wnd.modifiers.shift:   # right, middle: pan
                h = self.layouts()[0].image.h
                self._move(cam_ops.pan(self.camera, dx, dy, h))
            elif 1 in self.buttons:
                self._move(cam_ops.orbit(self.camera, dx, dy))

        def on_mouse_scroll_event(self, x_offset, y_offset):
            if y_offset:
                self._move(cam_ops.zoom(self.camera, y_offset, self.min_near))

        def on_close(self):
            self.worker.close()

        # ---- frame --------------------------------------------------------------------------
        def layouts(self):
            w, h = self.wnd.size
            return layout.panel_layouts(len(self.opts.presets), w, h, self.opts.width / self.opts.height)

        def _fly(self, now: float, dt: float) -> None:
            f = r = u = 0
            for name, since in self.held.items():
                if name == "S" and now - since < S_HOLD_S:
                    continue
                df, dr, du = FLY_KEYS[name]
                f, r, u = f + df, r + dr, u + du
            if (f or r or u) and dt > 0:
                self._move(cam_ops.fly(self.camera, f, r, u, min(dt, 0.1), self.fly_speed))

        def _request(self, now: float) -> None:
            full = self.refiner.want_full(now)
            if self.submitted == (self.seq, full):
                return
            if self.submitted is not None and self.submitted[0] == self.seq and self.submitted[1]:
                return                 # full already asked for this state
            # While the camera moves, the image mode shows pictures at full resolution and lets
            # the costs follow (schedule.Worker); a cost map is rendered whole, at reduced size.
            picture = not full and self.mode == "image" and drawable(self.scene)
            scale = self.scale * (1.0 if full or picture else MOVING_SCALE)
            w, h = layout.scaled(self.opts.width, self.opts.height, scale)
            scene = dataclasses.replace(self.scene, camera=self.camera)
            self.worker.submit(Request(self.seq, scene, tuple(self.opts.presets), w, h,
                                       self.samples, full, tuple(self.opts.rays), self.frontend,
                                       picture))
            self.submitted = (self.seq, full)

        def modes(self) -> tuple[str, ...]:
            """The five modes, then the ray passes' images and per-pixel maps the panels carry."""
            s = self.shown
            return MODES + (extra_modes(s.results, s.rays) if s is not None else ())

        def is_full(self) -> bool:
            """Every panel shows the current state at full resolution."""
            s = self.shown
            return s is not None and s.request.seq == self.seq and s.request.full

        def on_render(self, t: float, dt: float):
            now = time.perf_counter()
            self._fly(now, dt)
            self._request(now)
            frame = self.worker.poll()
            if frame is not None:
                self.shown = frame
                self.shown_mode = None
            err = self.worker.error()
            if err:
                self.message = err
            # The picture depends on these alone (a camera move shows once its frame arrives). A
            # headless window's framebuffer keeps its pixels, so it is redrawn only when they
            # change; a real window's back buffer is undefined after a swap, so it always is.
            picture = (self.shown.done_at if self.shown else None, self.mode, self.show_help,
                       tuple(self.wnd.size), self.status())
            if picture != self.drawn or self.wnd.name != "headless":
                self._draw()
                self.drawn = picture
                self.redraws += 1
            self.frames += 1
            if self.screenshot_request:
                path, self.screenshot_request = self.screenshot_request, None
                self.message = self.save_screenshot(path)

        def _texture(self, key: str, rgba: np.ndarray, smooth: bool = False):
            h, w = rgba.shape[:2]
            tex = self.textures.get(key)
            if tex is None or tex.size != (w, h):
                if tex is not None:
                    tex.release()
                tex = self.ctx.texture((w, h), 4, data=np.ascontiguousarray(rgba).tobytes())
                self.textures[key] = tex
            else:
                tex.write(np.ascontiguousarray(rgba).tobytes())
            f = moderngl.LINEAR if smooth else moderngl.NEAREST
            tex.filter = (f, f)
            return tex

        def _cached(self, key: str, content, make, smooth: bool = False):
            """The texture `key`, rebuilt by make() only when `content` changed."""
            if self.content.get(key) != content or key not in self.textures:
                self._texture(key, make(), smooth)
                self.content[key] = content
            return self.textures[key]

        def _quad(self, tex, rect) -> None:
            w, h = self.wnd.size
            self.prog["rect"].value = (2 * rect.x / w - 1, 1 - 2 * rect.y / h, 2 * rect.w / w, 2 * rect.h / h)
            tex.use(0)
            self.vao.render(moderngl.TRIANGLE_STRIP)

        def panel_images(self) -> list[np.ndarray]:
            """The pictures the panels show now (mode applied, one scale), as uint8 RGBA."""
            rs = self.shown.results
            # A ray or per-pixel mode with no data in this frame (the camera moves: no rays) shows
            # the image meanwhile and comes back with the next full frame.
            mode = self.mode if self.mode in self.modes() else MODES[0]
            near, far = self.shown.request.scene.camera.near, self.shown.request.scene.camera.far
            scale = shared_scale(mode, rs, near, far)
            self.scale_legend = scale
            if mode.startswith(RAY):
                return [ray_rgba(imgs[mode[len(RAY):]]) for imgs in self.shown.rays]
            if mode == "image":      # (a shared picture stays one array: _draw uploads it once)
                return [np.ascontiguousarray(img) for img in self.shown.images()]
            return [colorize(mode, r, scale, near, far) for r in rs]

        def _draw(self) -> None:
            ctx = self.ctx
            ctx.disable(moderngl.DEPTH_TEST)
            ctx.disable(moderngl.BLEND)
            ctx.viewport = (0, 0, *self._buffer_size())
            ctx.clear(*self.clear_color)
            win_w, win_h = self.wnd.size
            lays = self.layouts()
            frame = self.shown
            if frame is not None and self.shown_mode != self.mode:
                # Panels showing the same picture (one drawn for every architecture) share its
                # texture: one upload.
                first: dict[int, int] = {}
                self.panel_tex = []
                for i, img in enumerate(self.panel_images()):
                    k = first.setdefault(id(img), i)
                    if k == i:
                        self._texture(f"panel{i}", img, smooth=frame.request.full is False)
                    self.panel_tex.append(f"panel{k}")
                self.shown_mode = self.mode
            # The strips show the costs: redrawn when they change, not with every picture.
            if frame is not None and self.content.get("figures") != (frame.costed.done_at, lays[0].strip.w):
                figs = [hud.figures(r) for r in frame.results]          # once per new costs
                self.strips = [hud.strip_lines(f, figs[0] if i else None, self.opts.presets[0].name)
                               for i, f in enumerate(figs)]
                # one font size for every strip, so that they line up
                self.strip_size = min(hud.fit_size(lines, lays[0].strip.w) for lines in self.strips)
                self.content["figures"] = (frame.costed.done_at, lays[0].strip.w)
            strips, strip_size = getattr(self, "strips", None), getattr(self, "strip_size", 13)
            title_size = min(hud.fit_size([hud.title(p)], lays[0].title.w, 15) for p in self.opts.presets)
            for i, (p, lay) in enumerate(zip(self.opts.presets, lays)):
                self._quad(self._cached(f"title{i}", (hud.title(p), lay.title.w),
                                        lambda: hud.text_image([hud.title(p)], lay.title.w, lay.title.h,
                                                               title_size)),
                           lay.title)
                if frame is not None:
                    tex = self.textures[self.panel_tex[i]]
                    tex.filter = ((moderngl.LINEAR,) * 2 if tex.size[0] < lay.image.w
                                  else (moderngl.NEAREST,) * 2)
                    self._quad(tex, lay.image)
                    self._quad(self._cached(f"strip{i}", (frame.costed.done_at, lay.strip.w),
                                            lambda: hud.text_image(strips[i], lay.strip.w, lay.strip.h,
                                                                   strip_size)),
                               lay.strip)
            foot = layout.footer(win_w, win_h)
            status = self.status()
            legend = getattr(self, "scale_legend", None) or shared_scale("image", [])
            self._quad(self._cached("footer", (status, legend, foot.w),         # the mode shown
                                    lambda: hud.footer_image(foot.w, foot.h, legend.mode, legend, status)),
                       foot)
            if self.show_help:
                img = self._cached("help", "help", hud.help_image, smooth=True)
                k = min(1.0, (win_w - 8) / img.size[0], (win_h - 8) / img.size[1])   # fit small windows
                w, h = max(1, int(img.size[0] * k)), max(1, int(img.size[1] * k))
                img.filter = (moderngl.LINEAR, moderngl.LINEAR)
                ctx.enable(moderngl.BLEND)
                ctx.blend_func = moderngl.SRC_ALPHA, moderngl.ONE_MINUS_SRC_ALPHA
                self._quad(img, layout.Rect((win_w - w) // 2, max((win_h - h) // 2, 0), w, h))
                ctx.disable(moderngl.BLEND)

        def status(self) -> str:
            """The footer's right side, most wanted first (a narrow window cuts the end): the
            value under the mouse, a message, then the scene and render state."""
            parts = [p for p in (self.readout(), self.message) if p]
            parts.append(self.opts.scenes[self.scene_index])
            s = self.shown
            if s is None:
                parts.append("rendering…")
            else:
                r = s.request
                state = "" if r.full and r.seq == self.seq else " (moving)" if not r.full else " (refining)"
                parts.append(f"{r.width}x{r.height}{state}")
                parts.append(f"{s.seconds * 1e3:.0f} ms")
                c = s.costed.request
                if c.seq != r.seq:      # a picture frame: its figures are an earlier camera's
                    parts.append(f"costs {(r.made_at - c.made_at) * 1e3:.0f} ms behind the picture")
            parts.append(f"MSAA {self.samples}x")
            if self.frontend:
                parts.append(f"front end {self.frontend}")
            parts.append(f"scale {self.scale:g}")
            parts.append("H: help")
            return "  ·  ".join(parts)

        # ---- output -------------------------------------------------------------------------
        def _buffer_size(self) -> tuple[int, int]:
            # A real window's framebuffer object keeps the size it was created with (pyglet), its
            # buffer_size follows resizes; the headless window is the other way round.
            return self.wnd.fbo.size if self.wnd.name == "headless" else self.wnd.buffer_size

        def read_window(self) -> np.ndarray:
            """uint8 (h, w, 4) of the window's framebuffer, row 0 on top."""
            w, h = self._buffer_size()
            data = self.wnd.fbo.read(viewport=(0, 0, w, h), components=4, alignment=1)
            return np.frombuffer(data, np.uint8).reshape(h, w, 4)[::-1].copy()

        def save_screenshot(self, path: str) -> str:
            """Write the window as PNG and every panel's counters as JSON beside it; the message
            for the HUD, a write error included (a key press must not end the viewer)."""
            from pipelines.commands.output import UserError
            try:
                return self.write_screenshot(path)
            except UserError as e:
                return str(e)

        def write_screenshot(self, path: str) -> str:
            """save_screenshot's writing; UserError when either file cannot be written, and then
            neither is (pipelines.commands.output.write_all)."""
            from pipelines.commands.output import json_writer, png_writer, write_all
            if self.shown is None:
                return "nothing rendered yet"
            json_path = screenshot_json(path)
            write_all([(path, png_writer(self.read_window())),
                       (json_path, json_writer(hud.snapshot(self.opts.scenes[self.scene_index], self.camera,
                                                            self.mode, self.shown, self.opts.presets)))])
            self.last_screenshot = (path, json_path)
            return f"saved {path}"

        # ---- driving the loop (tests, benchmark, scripted screenshots) -------------------------
        def step(self) -> None:
            """One frame, as moderngl-window's own loop does it."""
            t, dt = self.timer.next_frame()
            self.wnd.use()
            self.wnd.render(t, dt)
            if not self.wnd.is_closing:
                self.wnd.swap_buffers()

        def wait_full(self, timeout: float = 60.0) -> None:
            """Step frames until the panels show the current state at full resolution."""
            end = time.perf_counter() + timeout
            while not self.is_full():
                if time.perf_counter() > end:
                    raise TimeoutError("the viewer did not reach full resolution in time")
                self.step()
                time.sleep(0.002)
            self.step()                # draw once more with the new frame's textures in place

    return Viewer


def open_viewer(options: Options, window: str = "pyglet", visible: bool = True):
    """Create the window and the viewer in it; ViewerError (one line) when that is impossible."""
    if not 1 <= len(options.presets) <= layout.MAX_PANELS:
        raise ViewerError(f"the viewer shows 1 to {layout.MAX_PANELS} presets, got {len(options.presets)}")
    try:
        import moderngl_window as mglw
        from moderngl_window.timers.clock import Timer
    except ImportError as e:
        raise ViewerError(f"moderngl-window is not installed ({e}); pip install moderngl-window, "
                          f"or note that {SUGGEST}") from None
    Viewer = _viewer_class()
    size = layout.window_size(len(options.presets), options.width, options.height)
    headless = window == "headless"
    try:
        window_cls = mglw.get_local_window_cls(window)
        wnd = window_cls(title=Viewer.title, size=size, resizable=not headless, visible=visible,
                         gl_version=Viewer.gl_version, vsync=Viewer.vsync and not headless,
                         samples=0, cursor=True, backend="egl" if headless else None)
    except Exception as e:           # no display, no GL 3.3, missing window library: one line
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        if not headless and not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
            reason = "no display (DISPLAY is not set)"
        raise ViewerError(f"cannot open a window: {reason}; {SUGGEST}") from None
    if wnd.ctx.version_code < 330:
        version = wnd.ctx.info.get("GL_VERSION", wnd.ctx.version_code)
        wnd.destroy()
        raise ViewerError(f"OpenGL 3.3 is needed, this display offers {version}; {SUGGEST}")
    mglw.activate_context(window=wnd)
    timer = Timer()
    viewer = Viewer(options, ctx=wnd.ctx, wnd=wnd, timer=timer)
    wnd._config = weakref.ref(viewer)
    wnd.swap_buffers()
    wnd.set_default_viewport()
    timer.start()
    return viewer


def run(viewer, frames: int | None = None, screenshot: str | None = None) -> bool:
    """The main loop until the window closes (or `frames` frames; with `screenshot`, until the
    panels reach full resolution, then save it and stop). Returns whether `screenshot` was saved
    (False when the window closed or the frames ran out first)."""
    wnd = viewer.wnd
    try:
        while not wnd.is_closing:
            viewer.step()
            if screenshot and viewer.is_full() and viewer.shown_mode == viewer.mode:
                viewer.step()
                print(viewer.write_screenshot(screenshot))     # a write error: UserError, exit 2
                return True
            if frames is not None and viewer.frames >= frames:
                break
        return False
    finally:
        viewer.worker.close()
        wnd.destroy()
