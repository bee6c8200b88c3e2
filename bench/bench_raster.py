"""The raster kernel alone: CPU seconds of the tile kernel per frame, best of N, per scene.

    NUMBA_NUM_THREADS=1 python bench/bench_raster.py [--scenes pul1duel,islandctf] [--frames 7]
                                                     [--res 1280x720] [--preset imr-baseline]

For A/B runs against another commit: check it out beside this one (`git worktree add /tmp/base
<rev>`) and run each tree's copy in turn, several times (the machine moves 20-40% from run to
run; interleaving makes the drift hit both alike). CPU time, not wall time: preemption by other
load does not count. With one numba thread, the calling thread's (the tiler's replay thread,
which follows the raster down the screen, is not counted); with more, the process's. Every timed
frame sets up its geometry afresh, as bench/benchmark.py does."""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numba  # noqa: E402

import renderer.raster as raster  # noqa: E402
from pipelines import render  # noqa: E402
from renderer.geometry import forget_setups  # noqa: E402
from scenes.library import get_scene  # noqa: E402


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenes", default="pul1duel,islandctf")
    ap.add_argument("--frames", type=int, default=7)
    ap.add_argument("--res", default="1280x720")
    ap.add_argument("--preset", default="imr-baseline")
    a = ap.parse_args(argv)
    width, height = (int(v) for v in a.res.lower().split("x"))
    spent: list[float] = []
    tile_kernel = raster.rk.tile_kernel

    # One numba thread runs the tiles on the calling thread: that thread's CPU time is the
    # raster's alone. The process's would also count the tiler's replay thread, which follows
    # the raster down the screen band by band (pipelines.arch.tbdr) while the kernel runs.
    clock = time.thread_time if numba.get_num_threads() == 1 else time.process_time

    def timed_kernel(*args):
        run = tile_kernel(*args)

        def timed(*args):
            t0 = clock()
            try:
                return run(*args)
            finally:
                spent.append(clock() - t0)
        return timed

    raster.rk.tile_kernel = timed_kernel
    out = []
    for name in a.scenes.split(","):
        scene = get_scene(name)
        render(scene, a.preset, width, height)              # compile or load the kernels
        best = float("inf")
        for _ in range(a.frames):
            spent.clear()
            forget_setups()
            render(scene, a.preset, width, height)
            best = min(best, sum(spent))
        out.append(f"{name} {1000 * best:.1f} ms")
    print(f"{Path(__file__).resolve().parents[1]}: raster CPU time, best of {a.frames}, "
          f"{width}x{height}, {a.preset}: " + ", ".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
