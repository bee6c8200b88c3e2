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


class CompileNotice(event.Listener):
    """Counts compiles (from any thread: numba compiles under one global lock, but the kernels a
    background thread first calls compile there) and reports them to `console`."""

    def __init__(self, console: Console):
        self.console = console
        self.lock = threading.Lock()
        self.started: float | None = None
        self.done = 0
        self.status = None

    def _say_start(self) -> None:
        self.started = time.perf_counter()
        where = numba.config.CACHE_DIR or "numba's cache"
        head = ("tilesim: compiling numba kernels for this version (once: later runs load them "
                f"from {where})")
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
    console = Console(file=file, highlight=False, soft_wrap=True)
    notice, encoding = CompileNotice(console), EncodeNotice(console)
    event.register("numba:compile", notice)
    texture_formats.ENCODE_LISTENERS.append(encoding)
    try:
        yield notice
    finally:
        event.unregister("numba:compile", notice)
        texture_formats.ENCODE_LISTENERS.remove(encoding)
        notice.finish()
        encoding.finish()
