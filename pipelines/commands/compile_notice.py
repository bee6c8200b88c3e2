"""Says so while numba compiles tilesim's kernels: the first run of a version (or after an edit
of the kernels' sources, renderer.jit_cache) spends a minute or more compiling before anything
is drawn, and a silent terminal for that long looks like a hang.

    with compiling_notice(sys.stderr):
        run_the_command()

Listens to numba's "numba:compile" events, which fire for a kernel that is compiled, not for
one loaded from the on-disk cache: a warm run prints nothing. On a terminal a live line counts
the kernels compiled so far, the one compiling now and the time taken; otherwise one line when
compiling starts and one when the command ends.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager

import numba
from numba.core import event
from rich.console import Console


# The notice of the command running (compiling_notice), for the compiles it does not see as events:
# those pipelines.commands.precompile runs in worker processes.
ACTIVE: "CompileNotice | None" = None


class CompileNotice(event.Listener):
    """Counts compiles (from any thread: numba compiles under one global lock, but the kernels a
    background thread first calls compile there) and reports them to `console`."""

    def __init__(self, console: Console):
        self.console = console
        self.lock = threading.Lock()
        self.started: float | None = None
        self.done = 0
        self.status = None
        self.workers = 1

    def _say_start(self, how: str = "") -> None:
        self.started = time.perf_counter()
        where = numba.config.CACHE_DIR or "numba's cache"
        head = (f"tilesim: compiling numba kernels for this version{how} (once: later runs load "
                f"them from {where})")
        if self.console.is_terminal:
            self.console.print(head)
            self.status = self.console.status("compiling kernels")
            self.status.start()
        else:
            self.console.print(head + " ...")

    def on_start(self, ev) -> None:
        with self.lock:
            if self.started is None:
                self._say_start()
            if self.status is not None:
                fn = getattr(ev.data.get("dispatcher"), "py_func", None)
                name = f"{fn.__module__}.{fn.__qualname__}" if fn is not None else "a kernel"
                self.status.update(f"compiling kernels: {self.done} done, now {name} "
                                   f"({time.perf_counter() - self.started:.0f} s)")

    def on_end(self, ev) -> None:
        with self.lock:
            self.done += 1

    def ahead(self, entries: int, workers: int) -> None:
        """pipelines.commands.precompile starts: `entries` kernels' compiles on `workers`
        processes, whose compile events this process does not see."""
        with self.lock:
            if self.started is None:
                self._say_start(f", {entries} entry points on {workers} processes")
            self.workers = workers

    def ahead_done(self, k: int, groups: int, module: str, kernels: int) -> None:
        """A worker finished the k-th of `groups` modules, `kernels` compiles with its callees."""
        with self.lock:
            self.done += kernels
            if self.status is not None:
                self.status.update(f"compiling kernels on {self.workers} processes: {k} of {groups} "
                                   f"modules done, last {module} "
                                   f"({time.perf_counter() - self.started:.0f} s)")

    def finish(self) -> None:
        with self.lock:
            if self.started is None:
                return
            if self.status is not None:
                self.status.stop()
            self.console.print(f"tilesim: compiled {self.done} kernel{'s' * (self.done != 1)} in "
                               f"{time.perf_counter() - self.started:.0f} s")
            self.started = None


class EncodeNotice:
    """Says once per format when textures are encoded (renderer.texture_formats: the first use
    of a format on a machine), and at the end how many levels took how long to encode."""

    def __init__(self, console: Console):
        self.console = console
        self.formats: set[str] = set()
        self.levels = 0
        self.seconds = 0.0

    def encoding(self, fmt: str, width: int, height: int) -> None:
        from renderer.texture_formats import texture_cache_dir
        if fmt not in self.formats:
            self.formats.add(fmt)
            self.console.print(f"tilesim: encoding textures as {fmt} (once: later runs read them "
                               f"from {texture_cache_dir()})")

    def encoded(self, seconds: float) -> None:
        self.levels += 1
        self.seconds += seconds

    def finish(self) -> None:
        if self.levels:
            self.console.print(f"tilesim: encoded {self.levels} texture level"
                               f"{'s' * (self.levels != 1)} in {self.seconds:.1f} s")


@contextmanager
def compiling_notice(file):
    """Within it, compiling kernels and encoding textures are reported on `file` (a stream:
    stderr)."""
    from renderer import texture_formats
    global ACTIVE
    console = Console(file=file, highlight=False, soft_wrap=True)
    notice, encoding = CompileNotice(console), EncodeNotice(console)
    event.register("numba:compile", notice)
    texture_formats.ENCODE_LISTENERS.append(encoding)
    ACTIVE = notice
    try:
        yield notice
    finally:
        ACTIVE = None
        event.unregister("numba:compile", notice)
        texture_formats.ENCODE_LISTENERS.remove(encoding)
        notice.finish()
        encoding.finish()
