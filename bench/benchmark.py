"""How fast is tilesim against a real (software) GPU driver? Mesa llvmpipe through OpenGL.

    python bench/benchmark.py [--res 1920x1080] [--repeats 3]

Renders spheres, overdraw:32 (back to front and front to back) and sponza through tilesim's
`imr-baseline` preset (counters always on) and through OpenGL on llvmpipe with a comparable
fragment shader (tests/gl_oracle.py: Lambert + ambient, base colour × texture, colour read back to
host memory). Both are warmed first (tilesim's first call compiles its numba kernels). Prints
median ms per frame, the ratio, and where tilesim's time goes by stage (wall time measured by
wrapping the stage functions the IMR pipeline calls during the timed frames; the engine itself is
not changed). Every timed frame sets up its geometry afresh, as if the camera had moved
(renderer.geometry.forget_setups); what does not depend on the camera (resident buffers, the
post-transform cache's hits, fetch plans) stays, as it would while the camera moves.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import numba  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

import pipelines.imr as imr  # noqa: E402
from gl_oracle import gl_frame_ms, gl_renderer  # noqa: E402
from pipelines import render  # noqa: E402
from renderer.geometry import forget_setups  # noqa: E402
from renderer.memory import MemoryModel  # noqa: E402
from scenes.library import get_scene  # noqa: E402

SCENES = ["spheres", "overdraw:32:btf", "overdraw:32:ftb", "sponza"]
PRESET = "imr-baseline"
# What pipelines.imr calls per pass, in order, on the frame's own thread; time not inside one of
# these is "other". "replay" is the whole memory replay of the raster's requests: both threads.
STAGES = {name: (imr, name) for name in ("front_end", "bin_triangles", "build_tables",
                                         "rasterize")}
STAGES["replay"] = (MemoryModel, "serve_pipelined")
STAGES["resolve_surface"] = (imr, "resolve_surface")
# Run on the memory model's second thread while the front end works: timed, not subtracted.
BACKGROUND = {"clears (bg)": (imr, "clear_attachments"), "framebuffer (bg)": (imr, "framebuffer")}


def tilesim_frames(scene, width, height, repeats) -> tuple[float, dict[str, float]]:
    """Median ms per frame, and the median ms of each stage over the same frames.

    Stages are timed by wrapping the stage functions pipelines.imr calls (a few Python calls per
    pass, so the wrappers cost nothing measurable); "other" is the frame minus the stages."""
    where = STAGES | BACKGROUND
    originals = {name: getattr(*at) for name, at in where.items()}
    spent: dict[str, float] = defaultdict(float)

    def timed(name, fn):
        def wrapper(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name] += time.perf_counter() - t0
        return wrapper

    frames, stages = [], defaultdict(list)
    try:
        for name, fn in originals.items():
            setattr(*where[name], timed(name, fn))
        for _ in range(max(1, repeats)):
            spent.clear()
            forget_setups()
            t0 = time.perf_counter()
            render(scene, PRESET, width, height)
            total = time.perf_counter() - t0
            frames.append(total)
            for name in originals:
                stages[name].append(spent[name])
            stages["other"].append(total - sum(spent[name] for name in STAGES))
    finally:
        for name, fn in originals.items():
            setattr(*where[name], fn)
    return (1000.0 * statistics.median(frames),
            {name: 1000.0 * statistics.median(v) for name, v in stages.items()})


def frame_ms(scene, preset, width, height, repeats) -> float:
    """Median ms per frame of any preset (no stage breakdown)."""
    times = []
    for _ in range(max(1, repeats)):
        forget_setups()
        t0 = time.perf_counter()
        render(scene, preset, width, height)
        times.append(time.perf_counter() - t0)
    return 1000.0 * statistics.median(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--res", default="1920x1080", help="WxH (default 1920x1080)")
    ap.add_argument("--repeats", type=int, default=3, help="timed frames per renderer and scene")
    ap.add_argument("--also", default="apple-m3", help="further presets to time, comma-separated "
                    "('' for none)")
    args = ap.parse_args(argv)
    width, height = (int(v) for v in args.res.lower().split("x"))
    console = Console(width=160)   # a table, not a terminal-width wrap
    console.print(f"numba threads: {numba.get_num_threads()} (NUMBA_NUM_THREADS="
                  f"{numba.config.NUMBA_NUM_THREADS}, {os.cpu_count()} CPUs)")
    console.print(f"GL_RENDERER: {gl_renderer()}")
    console.print(f"resolution {width}x{height}, preset {PRESET}, {args.repeats} timed frames each "
                  f"(median)")

    scenes = {name: get_scene(name) for name in SCENES}
    t0 = time.perf_counter()
    also = [p for p in args.also.split(",") if p]
    for scene in scenes.values():                  # warm-up: numba compile / load from cache
        for preset in [PRESET, *also]:
            render(scene, preset, width, height)
    console.print(f"tilesim warm-up (compile or cache load + one frame of each scene): "
                  f"{time.perf_counter() - t0:.1f} s; numba threading layer: "
                  f"{numba.threading_layer()}")

    table = Table(title=f"tilesim ({PRESET}) vs OpenGL on llvmpipe, {width}x{height}")
    cols = ["scene", "triangles", "tilesim ms/frame", "llvmpipe ms/frame", "tilesim / llvmpipe"]
    for p in also:
        cols += [f"{p} ms/frame", f"{p} / llvmpipe"]
    for col in cols:
        table.add_column(col, justify="left" if col == "scene" else "right")
    breakdowns = {}
    for name, scene in scenes.items():
        ts, breakdowns[name] = tilesim_frames(scene, width, height, args.repeats)
        gl = gl_frame_ms(scene, width, height, args.repeats)   # warms itself with one frame
        row = [name, f"{scene.n_triangles:,}", f"{ts:,.1f}", f"{gl:,.1f}", f"{ts / gl:,.2f}x"]
        for p in also:
            ms = frame_ms(scene, p, width, height, args.repeats)
            row += [f"{ms:,.1f}", f"{ms / gl:,.2f}x"]
        table.add_row(*row)
    console.print(table)

    stages = list(next(iter(breakdowns.values())))
    bd = Table(title="tilesim wall time per stage, ms (median over the timed frames)")
    bd.add_column("scene")
    for s in stages:
        bd.add_column(s, justify="right")
    bd.add_column("total", justify="right")
    for name, b in breakdowns.items():
        bd.add_row(name, *(f"{b[s]:,.1f}" for s in stages), f"{sum(b.values()):,.1f}")
    console.print(bd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
