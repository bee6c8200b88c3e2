"""How fast is tilesim against a real (software) GPU driver? Mesa llvmpipe through OpenGL.

    python bench/benchmark.py [--res 1920x1080] [--repeats 3] [--scenes spheres,sponza,...]
                              [--also apple-m3,amd-rdna2,...] [--picture]

Renders spheres, overdraw:32 (back to front and front to back), sponza, the fill-bound quad and
city (few, large triangles: issue 29 point 2 asks them at 1280x720 and 1920x1080) and the three
OpenArena levels (textured: each preset's texture formats and L1; OpenGL gets the same textures as RGBA8,
mipmapped, with each texture's filter and wrap) through tilesim's `imr-baseline` preset (counters
always on) and through OpenGL on llvmpipe with a comparable fragment shader (tests/gl_oracle.py:
Lambert + ambient, base colour × texture, alpha test, blending, colour read back to host memory), and by default through apple-m3 and the DSBR presets amd-rdna2 and amd-rdna3 too.
Both are warmed first (tilesim's first call compiles its numba kernels). The renderers take
turns, a frame each per round, so that the machine's drift moves them alike. Prints median ms per
frame, the median of each round's ratio to llvmpipe, and where tilesim's time goes by stage (wall
time measured by wrapping the stage functions the IMR pipeline calls during the timed frames; the
engine itself is not changed). Every timed frame sets up its geometry afresh, as if the camera
had moved (renderer.geometry.forget_setups); what does not depend on the camera (resident
buffers, the post-transform cache's hits, fetch plans) stays, as it would while the camera moves.

Beside each frame's wall time it takes the process's CPU time (every thread's: llvmpipe's
threads run in this process too) and prints a table of both: the CPU a frame costs against
llvmpipe's is the work ratio, which no overlap of threads can bring a frame's wall-time ratio
below unless it keeps the cores busier than llvmpipe does (cores busy = CPU over wall).

--picture also times the picture alone in the same rounds (pipelines.picture: the same image bit
for bit, with no counter, cache model or memory replay; what the viewer draws while the camera
moves): how far tilesim's raster itself is from llvmpipe, apart from what the cost model adds to
each preset's frame. The picture is drawn its own way whatever the preset (pipelines.picture:
early Z in submission order, or visibility first for a frame with textures), so a TBDR preset's
frame can take less time than the picture on an untextured frame of much overdraw.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

import numba  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

import pipelines.arch.imr as imr  # noqa: E402
from gl_oracle import GLFrame, gl_renderer  # noqa: E402
from pipelines import render  # noqa: E402
from pipelines.picture import picture  # noqa: E402
from pipelines.presets import get_preset  # noqa: E402
from renderer.geometry import forget_setups  # noqa: E402
from renderer.memory import MemoryModel  # noqa: E402
from scenes.library import get_scene  # noqa: E402
from scenes.model import SceneError  # noqa: E402

SCENES = ["spheres", "overdraw:32:btf", "overdraw:32:ftb", "sponza",
          "quad", "city",                                  # fill-bound: few, large triangles
          "pul1duel", "islandctf", "suspended"]     # the game levels: textured, in the game's draws
PRESET = "imr-baseline"
# What pipelines.arch.imr calls per pass, in order, on the frame's own thread; time not inside one of
# these is "other". "replay" is the whole memory replay of the raster's requests: both threads.
STAGES = {name: (imr, name) for name in ("front_end", "bin_triangles", "build_tables",
                                         "rasterize")}
STAGES["replay"] = (MemoryModel, "serve_pipelined")
STAGES["resolve"] = (MemoryModel, "resolve")
# Run on the memory model's second thread while the front end works: timed, not subtracted.
BACKGROUND = {"clears (bg)": (imr, "clear_attachments")}


class StageTimer:
    """Wall time of each stage of the frames rendered inside it: the stage functions pipelines.arch.imr
    calls are wrapped (a few Python calls per pass, so the wrappers cost nothing measurable);
    "other" is a frame's time outside them."""

    def __init__(self):
        self.where = STAGES | BACKGROUND
        self.spent: dict[str, float] = defaultdict(float)
        self.stages: dict[str, list[float]] = defaultdict(list)

    def __enter__(self):
        self.originals = {name: getattr(*at) for name, at in self.where.items()}
        for name, fn in self.originals.items():
            setattr(*self.where[name], self._timed(name, fn))
        return self

    def __exit__(self, *exc):
        for name, fn in self.originals.items():
            setattr(*self.where[name], fn)

    def _timed(self, name, fn):
        def wrapper(*args, **kwargs):
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.spent[name] += time.perf_counter() - t0
        return wrapper

    def frame(self, scene, width, height) -> Timing:
        """One timed tilesim frame of PRESET, its stages recorded."""
        self.spent.clear()
        total = frame_s(scene, PRESET, width, height)
        for name in self.originals:
            self.stages[name].append(self.spent[name])
        self.stages["other"].append(total.wall - sum(self.spent[name] for name in STAGES))
        return total

    def medians_ms(self) -> dict[str, float]:
        return {name: 1000.0 * statistics.median(v) for name, v in self.stages.items()}


class Timing(NamedTuple):
    wall: float     # seconds
    cpu: float      # the process's CPU seconds, every thread's (llvmpipe's run in it too)


def _timed(fn, *args) -> Timing:
    c0, t0 = time.process_time(), time.perf_counter()
    fn(*args)
    return Timing(time.perf_counter() - t0, time.process_time() - c0)


def frame_s(scene, preset, width, height) -> Timing:
    """One tilesim frame, geometry set up afresh (as if the camera had moved)."""
    forget_setups()
    return _timed(render, scene, preset, width, height)


def picture_s(scene, preset, width, height) -> Timing:
    """One picture alone (no costs), geometry set up afresh."""
    forget_setups()
    return _timed(picture, scene, get_preset(preset), width, height)


def gl_frame_s(frame: GLFrame) -> Timing:
    return _timed(frame.render)


def race(scene, width, height, repeats, also, pictures=False):
    """Seconds per frame of tilesim's PRESET, llvmpipe and each `also` preset (and with
    `pictures` the picture alone, as "picture"), in rounds: each round renders one frame of
    each, back to back, so that the machine's drift (10-20% over minutes) moves all of them
    alike and the ratios of a round compare like with like. Returns the wall times and the CPU
    times by renderer, and PRESET's median ms per stage."""
    frame = GLFrame(scene, width, height)
    times: dict[str, list[float]] = defaultdict(list)
    cpu: dict[str, list[float]] = defaultdict(list)

    def take(name, timing):
        times[name].append(timing.wall)
        cpu[name].append(timing.cpu)
    try:
        frame.render()                     # llvmpipe's JIT of the shader/state variants
        with StageTimer() as stages:
            for _ in range(max(1, repeats)):
                take(PRESET, stages.frame(scene, width, height))
                if pictures:     # (right after the frame it is compared with)
                    take("picture", picture_s(scene, PRESET, width, height))
                take("llvmpipe", gl_frame_s(frame))
                for p in also:
                    take(p, frame_s(scene, p, width, height))
    finally:
        frame.release()
    return times, cpu, stages.medians_ms()


def ratio(times: dict[str, list[float]], name: str) -> float:
    """Median over the rounds of name's frame time over llvmpipe's in the same round."""
    return statistics.median(a / b for a, b in zip(times[name], times["llvmpipe"]))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--res", default="1920x1080", help="WxH (default 1920x1080)")
    ap.add_argument("--repeats", type=int, default=3, help="rounds (a timed frame of each "
                    "renderer) per scene")
    ap.add_argument("--scenes", default=",".join(SCENES),
                    help=f"built-in scenes, comma-separated (default {','.join(SCENES)}; "
                    "e.g. quad,teapot,foliage for frames of few, large triangles)")
    ap.add_argument("--also", default="apple-m3,amd-rdna2,amd-rdna3",
                    help="further presets to time, comma-separated "
                    "('' for none)")
    ap.add_argument("--picture", action="store_true",
                    help="also time the picture alone: no counters, cache model or memory "
                         "replay")
    args = ap.parse_args(argv)
    try:
        width, height = (int(v) for v in args.res.lower().split("x"))
    except ValueError:
        ap.error(f"--res {args.res}: expected WxH, e.g. 1280x720")     # one line, exit 2
    try:
        scenes = {name: get_scene(name) for name in args.scenes.split(",") if name}
    except SceneError as e:
        ap.error(str(e))
    console = Console(width=160)   # a table, not a terminal-width wrap
    console.print(f"numba threads: {numba.get_num_threads()} (NUMBA_NUM_THREADS="
                  f"{numba.config.NUMBA_NUM_THREADS}, {os.cpu_count()} CPUs)")
    console.print(f"GL_RENDERER: {gl_renderer()}")
    console.print(f"resolution {width}x{height}, preset {PRESET}, {args.repeats} rounds of one "
                  f"frame per renderer, back to back; ms: median frame; ratio: median over the "
                  f"rounds of the frame over llvmpipe's in the same round")

    t0 = time.perf_counter()
    also = [p for p in args.also.split(",") if p]
    for scene in scenes.values():                  # warm-up: numba compile / load from cache
        for preset in [PRESET, *also]:
            render(scene, preset, width, height)
        if args.picture:                           # (the picture's kernels are its own)
            picture_s(scene, PRESET, width, height)
    console.print(f"tilesim warm-up (compile or cache load + one frame of each scene): "
                  f"{time.perf_counter() - t0:.1f} s; numba threading layer: "
                  f"{numba.threading_layer()}")

    table = Table(title=f"tilesim ({PRESET}) vs OpenGL on llvmpipe, {width}x{height}")
    cols = ["scene", "triangles", "tilesim ms/frame", "llvmpipe ms/frame", "tilesim / llvmpipe"]
    for p in also:
        cols += [f"{p} ms/frame", f"{p} / llvmpipe"]
    for col in cols:
        table.add_column(col, justify="left" if col == "scene" else "right")
    breakdowns, rounds, cpus = {}, {}, {}
    for name, scene in scenes.items():
        times, cpus[name], breakdowns[name] = race(scene, width, height, args.repeats, also,
                                                   args.picture)
        ms = {k: 1000.0 * statistics.median(v) for k, v in times.items()}
        row = [name, f"{scene.n_triangles:,}", f"{ms[PRESET]:,.1f}", f"{ms['llvmpipe']:,.1f}",
               f"{ratio(times, PRESET):,.2f}x"]
        for p in also:
            row += [f"{ms[p]:,.1f}", f"{ratio(times, p):,.2f}x"]
        table.add_row(*row)
        rounds[name] = (ms, times)
    console.print(table)
    if args.picture:
        pt = Table(title="the picture alone (no counters, cache model or memory replay): ms, its "
                   "ratio to llvmpipe, and each preset's frame over the picture")
        for col in ("scene", "picture ms", "picture / llvmpipe", *(f"{p} / picture" for p in
                                                                  [PRESET, *also])):
            pt.add_column(col, justify="left" if col == "scene" else "right")
        for name, (ms, times) in rounds.items():
            over = (statistics.median(a / b for a, b in zip(times[p], times["picture"]))
                    for p in [PRESET, *also])
            pt.add_row(name, f"{ms['picture']:,.1f}", f"{ratio(times, 'picture'):,.2f}x",
                       *(f"{v:,.2f}x" for v in over))
        console.print(pt)

    ct = Table(title="CPU per frame, every thread (median ms); work: the rounds' median of its CPU "
               "over llvmpipe's; cores busy: CPU over wall")
    for col in ("scene", "renderer", "CPU ms", "work / llvmpipe", "cores busy", "wall / llvmpipe"):
        ct.add_column(col, justify="left" if col in ("scene", "renderer") else "right")
    for name, cpu in cpus.items():
        walls = rounds[name][1]
        for p in ("llvmpipe", PRESET, *also):
            busy = statistics.median(c / w for c, w in zip(cpu[p], walls[p]))
            own = p == "llvmpipe"
            ct.add_row(name if own else "", p, f"{1000.0 * statistics.median(cpu[p]):,.1f}",
                       "" if own else f"{ratio(cpu, p):,.2f}x", f"{busy:.2f}",
                       "" if own else f"{ratio(walls, p):,.2f}x")
    console.print(ct)

    stages = list(next(iter(breakdowns.values())))
    bd = Table(title="tilesim wall time per stage, ms (median over the timed frames)")
    bd.add_column("scene")
    for s in stages:
        bd.add_column(s, justify="right")
    bd.add_column("total (this thread)", justify="right")
    for name, b in breakdowns.items():
        bd.add_row(name, *(f"{b[s]:,.1f}" for s in stages),
                   f"{sum(v for s, v in b.items() if s not in BACKGROUND):,.1f}")
    console.print(bd)
    return 0


if __name__ == "__main__":
    sys.exit(main())
