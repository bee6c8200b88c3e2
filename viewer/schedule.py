"""Rendering off the UI thread: a worker thread with a one-slot, latest-request-wins queue, and the
policy that picks reduced or full resolution.

The UI submits a `Request` whenever what it wants to see changes (every frame while the camera
moves); the worker renders the newest request it holds, so the screen follows the camera rather
than a backlog. While the camera moves, two frames render at once (IN_FLIGHT), each with its
panels at once, each panel on its own thread; a frame that finishes after a later one is dropped.
A full-resolution refinement goes panel after panel and is dropped between panels as soon as a
newer request arrives. The numba kernels drop the GIL, so the UI thread keeps running beside them.

A moving request may ask for pictures only (`picture`): the lanes then draw each distinct image
once (pipelines.picture: every architecture makes the same image) and the frame carries the
costs of the newest camera whose panels were rendered whole (`Frame.costs`). Those come from a
costs thread that renders the latest picture's camera whole whenever it is free, one thread at
the lowest priority: it takes what the pictures leave of the machine, and the screen says how
far behind the picture its costs are.

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
COSTS_NICE = 19         # the costs thread's: behind the pictures, which it must not slow
# ... and on Linux its scheduling policy, SCHED_IDLE: the CPU time nothing else wants. At nice 19
# alone the scheduler still gave it 0.27 of a core beside the pictures while each picture lane
# waited runnable 0.24 of its time (bench_viewer, /proc/self/task/*/schedstat, 2026-12-06)
# Picture frames started a second at most while the camera moves: the 30 a second issue 29 asks
# for, with room for frames dropped on a busy machine. Unpaced, the two lanes drew a picture
# for every UI frame they could (40 a second shown, 1.5 cores) and left the costs thread 0.13
# of a core: 1.0 cost frames a second, 0.85-1.0 s behind the picture. Paced, what the pictures
# leave goes to the costs (bench/bench_viewer.py --stops 3, sponza, imr-baseline + apple-m3 at
# 640x360, 2 cores, 2026-12-07, rates taking turns: at 32, 31.2-31.7 pictures a second shown
# (30.0 in one stop of a slower hour), 4.2-5.2 cost frames, 234-267 ms behind; at 34, 32.2-33.1
# pictures, 4.0-4.5 cost frames, 250-266 ms behind).
PICTURE_HZ = 34.0
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
    picture: bool = False    # moving: the pictures now, the costs when the costs thread has them
    made_at: float = field(default_factory=time.perf_counter)    # when the UI asked for it

    def same_costs(self, other: "Request") -> bool:
        """Whether `other`'s costs answer for this request's panels but for the camera."""
        return (other.scene.name, other.presets, other.width, other.height, other.samples,
                other.frontend) == (self.scene.name, self.presets, self.width, self.height,
                                    self.samples, self.frontend)


@dataclass
class Frame:
    request: Request
    results: list            # pipelines.result.Result per panel
    seconds: float           # wall time of all panels
    rays: list = field(default_factory=list)   # per panel: ray pass name -> image ({} untraced)
    done_at: float = field(default_factory=time.perf_counter)
    pictures: list | None = None   # per panel: the image of this request's camera, where `results`
                                   # are another's (a picture frame's); None: the results' images
    costs: "Frame | None" = None   # the frame rendered whole whose results these are (None: this)

    @property
    def costed(self) -> "Frame":
        """The frame whose camera the results (counters, maps) are of."""
        return self if self.costs is None else self.costs

    def images(self) -> list:
        """Per panel, the raster's image of this frame's camera (the image mode's picture)."""
        return self.pictures if self.pictures is not None else [r.color for r in self.results]


class Worker:
    """Background threads (IN_FLIGHT lanes) rendering the latest request; a frame finished after
    one that came later is dropped. `render` is pipelines.api.render and `picture`
    pipelines.picture.picture (injected so the scheduling can be tested with stand-ins)."""

    def __init__(self, render=None, threads: int | None = None, picture=None,
                 picture_hz: float | None = PICTURE_HZ):
        if render is None:
            from pipelines.api import render
        if picture is None:
            from pipelines.picture import picture
        self._render = render
        self._picture = picture
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
        self._full_seq = -1               # seq of the newest full request submitted
        self._picture_period = 1.0 / picture_hz if picture_hz else 0.0
        self._next_picture = 0.0          # perf_counter() before which no picture frame starts
        # The newest frame rendered whole (the costs pictures carry), and the newest picture
        # request, which the costs thread is to render whole.
        self._costs: Frame | None = None
        self._costs_wanted: Request | None = None
        self.rendered: list[int] = []     # seqs fully rendered and shown, for tests and benchmarks
        self.costed: list[int] = []       # seqs the costs thread rendered whole
        self._panels = ThreadPoolExecutor(IN_FLIGHT * (MAX_PANELS - 1),
                                          thread_name_prefix="tilesim-panel",
                                          initializer=self._render_thread)
        self._lanes = [threading.Thread(target=self._run, args=(lane,), daemon=True,
                                        name=f"tilesim-render-{lane}") for lane in range(IN_FLIGHT)]
        self._lanes.append(threading.Thread(target=self._run_costs, daemon=True, name="tilesim-costs"))
        for t in self._lanes:
            t.start()

    def _render_thread(self, nice: int = RENDER_NICE, threads: int | None = None,
                       idle: bool = False) -> None:
        """Set up the calling thread to render: its niceness (Linux keeps it per thread, and
        threads it starts inherit it; elsewhere nothing), with `idle` the SCHED_IDLE policy
        where there is one, and numba's thread count, which is per calling thread too
        (default: the worker's)."""
        tid = threading.get_native_id()
        try:
            os.setpriority(os.PRIO_PROCESS, tid, nice)
            if idle:
                os.sched_setscheduler(tid, os.SCHED_IDLE, os.sched_param(0))
        except (AttributeError, OSError):
            pass
        threads = threads or self._threads
        if threads:
            import numba
            numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))

    def submit(self, request: Request) -> None:
        with self._cv:
            self._pending = request          # latest wins: an unstarted older request is dropped
            self._submitted += 1
            if request.full:
                self._full_seq = max(self._full_seq, request.seq)
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
        """No request waits or renders (the costs thread aside: it follows pictures, see costs_idle)."""
        with self._cv:
            return self._pending is None and self._busy == 0

    def costs_idle(self) -> bool:
        """The costs thread has nothing it still wants to render."""
        with self._cv:
            return self._costs_wanted is None

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
                while not self._closed:
                    req = self._pending
                    if req is None or (lane > 0 and req.full):
                        self._cv.wait()
                        continue
                    early = self._next_picture - time.perf_counter() if req.picture else 0.0
                    if early <= 0.0:
                        break
                    self._cv.wait(early)       # (the newest request is taken when it is due)
                if self._closed:
                    return
                req, self._pending = self._pending, None
                if req.picture:
                    # a start late by less than a period keeps the cadence (the next is due a
                    # period after this one was); after a longer wait it starts again from now
                    now, due = time.perf_counter(), self._next_picture
                    self._next_picture = (due if now - due < self._picture_period else now) + \
                        self._picture_period
                ticket = self._taken = self._submitted
                self._busy += 1
            frame = None
            try:
                frame = (self._pictures(req) if req.picture else None) or self._whole(
                    req, at_once=not req.full, dropped=lambda: req.full and self._newer(ticket))
            except Exception as e:               # shown in the footer; the viewer keeps running
                with self._cv:
                    self._error = f"{type(e).__name__}: {e}"
            with self._cv:
                if frame is not None and ticket > self._shown:
                    self._done = frame
                    self._shown = ticket
                    self.rendered.append(req.seq)
                if frame is not None and frame.pictures is None:
                    self._newest_costs(frame)
                self._busy -= 1

    def _whole(self, req: Request, at_once: bool, dropped) -> Frame | None:
        """req's panels rendered whole, `at_once` on the panel threads or else one after another
        on this thread; None when dropped() says so after a panel."""
        t0 = time.perf_counter()
        results, rays = [], []
        kw = {"frontend": req.frontend} if req.frontend else {}
        # A moving frame renders its panels at once: at reduced resolution each panel spends
        # much of its time waiting on its memory model's thread, which the other panels' work
        # fills. A refinement goes panel by panel, to yield between them (a steady stream of
        # moves drops no moving frame, or it would show none).
        ahead = [] if not at_once else [
            self._panels.submit(self._render, req.scene, preset, req.width, req.height,
                                req.samples, **kw)
            for preset in req.presets[1:]]
        for k, preset in enumerate(req.presets):
            if k == 0 or not at_once:
                traced = {"rays": req.rays} if req.full and req.rays else {}
                r = self._render(req.scene, preset, req.width, req.height, req.samples, **kw,
                                 **traced)
            else:
                r = ahead[k - 1].result()
            rt = getattr(r, "rt", None)
            rays.append({} if rt is None else {p: rt.images[p] for p in req.rays if p in rt.images})
            results.append(r)
            if dropped():
                return None
        return Frame(req, results, time.perf_counter() - t0, rays)

    def _pictures(self, req: Request) -> Frame | None:
        """req's pictures, each distinct image drawn once (pipelines.picture.image_key), with the
        newest costs that answer for its panels (Request.same_costs) and a wish for the costs
        thread. None, for the lane to render whole, without such costs or where the frame
        has no picture (pipelines.picture.drawable)."""
        from pipelines.picture import image_key
        with self._cv:
            costs = self._costs
        if costs is None or not req.same_costs(costs.request):
            return None
        t0 = time.perf_counter()
        keys = [image_key(req.scene, p) for p in req.presets]
        first = {}                               # key -> the first panel with it
        for k, key in enumerate(keys):
            first.setdefault(key, req.presets[k])

        def draw(preset):
            return self._one_thread(self._picture, req.scene, preset, req.width, req.height,
                                    req.samples)
        presets = list(first.values())
        ahead = [self._panels.submit(draw, p) for p in presets[1:]]
        drawn = [draw(presets[0])] + [f.result() for f in ahead]
        if any(img is None for img in drawn):
            return None
        by_key = dict(zip(first, drawn))
        with self._cv:
            if self._costs_wanted is None or self._costs_wanted.seq < req.seq:
                self._costs_wanted = req
                self._cv.notify_all()
        return Frame(req, costs.results, time.perf_counter() - t0, [{} for _ in req.presets],
                     pictures=[by_key[key] for key in keys], costs=costs)

    @staticmethod
    def _one_thread(fn, *args):
        """fn(*args) on numba's one thread (this thread's count, restored after)."""
        import numba
        n = numba.get_num_threads()
        numba.set_num_threads(1)
        try:
            return fn(*args)
        finally:
            numba.set_num_threads(n)

    def _newest_costs(self, frame: Frame) -> None:
        """Keep `frame` (rendered whole) as the costs pictures carry, if no later one is kept.
        Called with the lock held."""
        if self._costs is None or frame.request.seq >= self._costs.request.seq:
            self._costs = frame

    def _run_costs(self) -> None:
        """The costs thread: the newest picture request rendered whole, panel after panel, on one
        thread at COSTS_NICE and SCHED_IDLE; dropped between panels once the camera stops (the refinement
        renders that camera whole) or the scene changes."""
        self._render_thread(COSTS_NICE, 1, idle=True)
        while True:
            with self._cv:
                while not self._closed and self._costs_wanted is None:
                    self._cv.wait()
                if self._closed:
                    return
                req = self._costs_wanted
            frame = None
            try:
                frame = self._whole(req, at_once=False, dropped=lambda: self._at_rest(req))
            except Exception as e:
                with self._cv:
                    self._error = f"{type(e).__name__}: {e}"
            with self._cv:
                if frame is not None:
                    self._newest_costs(frame)
                    self.costed.append(req.seq)
                if self._costs_wanted is req:
                    self._costs_wanted = None

    def _at_rest(self, req: Request) -> bool:
        """Whether the worker closed or the camera of `req` (or a later one) is asked for at rest."""
        with self._cv:
            return self._closed or self._full_seq >= req.seq


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
