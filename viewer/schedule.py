"""Rendering off the UI thread: a worker thread with a one-slot, latest-request-wins queue, and the
policy that picks reduced or full resolution.

The UI submits a `Request` whenever what it wants to see changes (every frame while the camera
moves); the worker renders the newest request it holds, so the screen follows the camera rather
than a backlog. While the camera moves, two frames render at once (IN_FLIGHT), each with its
panels at once, each panel on its own thread; a frame that finishes after a later one is dropped.
A full-resolution refinement goes panel after panel and is dropped between panels as soon as a
newer request arrives. The numba kernels drop the GIL, so the UI thread keeps running beside them.

    worker = Worker()
    worker.submit(Request(seq, scene, presets, 320, 180, 1, full=False))
    frame = worker.poll()          # newest finished Frame, or None
"""
from __future__ import annotations

import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from .layout import MAX_PANELS

MOVING_SCALE = 0.5      # while the camera moves, render at half the panel's resolution per side
# Moving frames rendered at once: a frame's last panel often runs alone, waiting on its memory
# model's thread, and the next frame's work fills the other core. A refinement is rendered by
# the first lane only.
IN_FLIGHT = 2
# The render threads' niceness: the UI thread (light, but due every 16 ms) then gets a core
# whenever it wakes, however many render threads are runnable. Threads inherit it, numba's
# OpenMP workers and the memory models' threads included.
RENDER_NICE = 5
SETTLE_S = 0.15         # the camera counts as stopped this long after its last change


@dataclass(frozen=True)
class Request:
    seq: int                 # increases with every change of what the UI wants
    scene: object            # scenes.model.Scene, camera included
    presets: tuple           # pipelines.presets.Preset, one per panel
    width: int
    height: int
    samples: int
    full: bool               # full resolution (camera at rest) or reduced (camera moving)
    rays: tuple = ()         # ray passes (pipelines.passes.raytrace.PASSES) traced on full requests
    frontend: str | None = None   # geometry front end (legacy | ngg | mesh); None: each preset's


@dataclass
class Frame:
    request: Request
    results: list            # pipelines.result.Result per panel
    seconds: float           # wall time of all panels
    rays: list = field(default_factory=list)   # per panel: ray pass name -> image ({} untraced)
    done_at: float = field(default_factory=time.perf_counter)


class Worker:
    """Background threads (IN_FLIGHT lanes) rendering the latest request; a frame finished after
    one that came later is dropped. `render` is pipelines.api.render (injected so the
    scheduling can be tested with a stand-in)."""

    def __init__(self, render=None, threads: int | None = None):
        if render is None:
            from pipelines.api import render
        self._render = render
        self._threads = threads  # numba threads for this worker (numba's count is per thread)
        self._cv = threading.Condition()
        self._pending: Request | None = None
        self._done: Frame | None = None
        self._error: str | None = None
        self._closed = False
        self._busy = 0                    # lanes rendering
        # Requests in the order they came (a refinement keeps its move's seq): how many were
        # submitted, the newest a lane has started, the newest handed on as a frame.
        self._submitted = self._taken = self._shown = 0
        self.rendered: list[int] = []     # seqs fully rendered and shown, for tests and benchmarks
        self._panels = ThreadPoolExecutor(IN_FLIGHT * (MAX_PANELS - 1),
                                          thread_name_prefix="tilesim-panel",
                                          initializer=self._render_thread)
        self._lanes = [threading.Thread(target=self._run, args=(lane,), daemon=True,
                                        name=f"tilesim-render-{lane}") for lane in range(IN_FLIGHT)]
        for t in self._lanes:
            t.start()

    def _render_thread(self) -> None:
        """Set up the calling thread to render: RENDER_NICE (Linux keeps niceness per thread;
        elsewhere nothing), and numba's thread count, which is per calling thread too."""
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), RENDER_NICE)
        except (AttributeError, OSError):
            pass
        if self._threads:
            import numba
            numba.set_num_threads(min(self._threads, numba.config.NUMBA_NUM_THREADS))

    def submit(self, request: Request) -> None:
        with self._cv:
            self._pending = request          # latest wins: an unstarted older request is dropped
            self._submitted += 1
            self._cv.notify_all()            # (a lane that takes only moving frames may wake)

    def poll(self) -> Frame | None:
        """The newest finished frame since the last poll, or None."""
        with self._cv:
            frame, self._done = self._done, None
            return frame

    def error(self) -> str | None:
        with self._cv:
            err, self._error = self._error, None
            return err

    def idle(self) -> bool:
        with self._cv:
            return self._pending is None and self._busy == 0

    def close(self) -> None:
        with self._cv:
            self._closed = True
            self._cv.notify_all()
        for t in self._lanes:
            t.join(timeout=5.0)
        self._panels.shutdown(wait=False)

    def _newer(self, ticket: int) -> bool:
        """Whether a request that came after this one is waiting or being rendered."""
        with self._cv:
            return self._pending is not None or self._closed or self._taken > ticket

    def _run(self, lane: int) -> None:
        self._render_thread()
        while True:
            with self._cv:
                while not self._closed and (self._pending is None
                                            or (lane > 0 and self._pending.full)):
                    self._cv.wait()
                if self._closed:
                    return
                req, self._pending = self._pending, None
                ticket = self._taken = self._submitted
                self._busy += 1
            t0 = time.perf_counter()
            results, rays = [], []
            try:
                kw = {"frontend": req.frontend} if req.frontend else {}
                # A moving frame renders its panels at once: at reduced resolution each panel
                # spends much of its time waiting on its memory model's thread, which the other
                # panels' work fills. A refinement goes panel by panel, to yield between them.
                ahead = [] if req.full else [
                    self._panels.submit(self._render, req.scene, preset, req.width, req.height,
                                        req.samples, **kw)
                    for preset in req.presets[1:]]
                for k, preset in enumerate(req.presets):
                    if k == 0 or req.full:
                        traced = {"rays": req.rays} if req.full and req.rays else {}
                        r = self._render(req.scene, preset, req.width, req.height, req.samples,
                                         **kw, **traced)
                    else:
                        r = ahead[k - 1].result()
                    rt = getattr(r, "rt", None)
                    rays.append({} if rt is None else
                                {p: rt.images[p] for p in req.rays if p in rt.images})
                    results.append(r)
                    # A refinement yields to a new move; a moving frame finishes, or a steady
                    # stream of moves would abandon every frame and show none.
                    if req.full and self._newer(ticket):
                        break
            except Exception as e:               # shown in the footer; the viewer keeps running
                with self._cv:
                    self._error = f"{type(e).__name__}: {e}"
                    self._busy -= 1
                continue
            with self._cv:
                if len(results) == len(req.presets) and ticket > self._shown:
                    self._done = Frame(req, results, time.perf_counter() - t0, rays)
                    self._shown = ticket
                    self.rendered.append(req.seq)
                self._busy -= 1


class Refiner:
    """Reduced resolution while the camera moves, full once it has been still for SETTLE_S.

    `changed(now)` on every camera move; `want(now)` says whether the next request is full."""

    def __init__(self, settle_s: float = SETTLE_S):
        self.settle_s = settle_s
        self.last_change = -1e9

    def changed(self, now: float) -> None:
        self.last_change = now

    def moving(self, now: float) -> bool:
        return now - self.last_change < self.settle_s

    def want_full(self, now: float) -> bool:
        return not self.moving(now)
