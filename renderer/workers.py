"""How the engine's threads share the machine.

First, how numba's worker threads wait between parallel loops (the front end's, binning's and the
raster's run on threads of ours, spread below and raster_kernels.run_tiles; numba's still run the
BVH's build and traversal, the TBDR's one-chunk test, the codecs' encoders and the post chain). The
engine runs a thread of its own beside them (the memory model's, pipelines.arch.tbdr's replay
following the raster down the screen), and OpenMP's default is to spin for a while at the end of
every loop before sleeping: a worker spinning at a band's barrier holds a core the replay needs.
Passive waiting sleeps at once: on two cores it saved a tenth of a TBDR frame's CPU time when the
front end's loops were numba's (tbdr spheres at 1080p: 308 -> 255 ms of CPU, measured). It must be
set before the OpenMP runtime loads, at the first parallel kernel, and a host program's own
setting is kept.

Second, how often Python's lock passes between threads that both want it. The memory model's
thread runs Python between its kernels too (the front end's fetch plan, pipelines.arch.imr's clears),
and at CPython's default interval (5 ms) the other thread's few lines between two kernels can
wait that long for it: a DSBR spheres frame at 1080p lost about 4 ms so, between binning and its
batches. At 0.5 ms: 101 -> 96 ms per frame (median of 20, process-alternating runs; sponza and a
TBDR frame within noise). A host program's own interval is kept.

Third, which work is too small to share. A parallel loop wakes sleeping helper threads, and
when the memory model's thread holds the other core (pipelines.arch.imr's clears run beside the
front end) the loop waits until the scheduler gives a worker its share. A front end or binning
of a few thousand triangles is faster on the calling thread alone even on an idle machine
(on_this_thread's figures)."""
from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import lru_cache

import numba

# Below this many triangles a pass's front end and binning run on the calling thread. Measured
# alone on two cores at 1280x720 (ms, one thread / two): front end city (10,242 triangles)
# 0.76 / 0.88, pul1duel (13,982) 1.28 / 1.55, sponza (187,364) 9.6 / 7.0, spheres (304,000)
# 14.3 / 8.4; binning city 0.21 / 0.24, pul1duel 0.35 / 0.44, sponza 3.3 / 2.7. Inside a frame,
# beside the clears, imr-baseline's quad: 10.9 -> 9.8 ms a frame.
SMALL_TRIANGLES = 20_000

GIL_INTERVAL_S = 0.0005      # CPython's default: 0.005


def wait_passively() -> None:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def hand_over_quickly() -> None:
    if sys.getswitchinterval() == 0.005:          # (not a host program's own choice)
        sys.setswitchinterval(GIL_INTERVAL_S)


@contextmanager
def on_this_thread(small: bool):
    """Run the parallel kernels called inside on the calling thread alone when `small` (numba's
    thread count is per thread: others' kernels keep theirs)."""
    if not small:
        yield
        return
    n = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        yield
    finally:
        numba.set_num_threads(n)


@lru_cache(maxsize=None)
def _helper_threads(name: str, n: int) -> ThreadPoolExecutor:
    """n helper threads for the parallel loop `name`, made once for each thread count."""
    return ThreadPoolExecutor(n, thread_name_prefix=f"tilesim-{name}")


def alongside(fn, parts: list[tuple], name: str) -> None:
    """fn(*parts[0]) on this thread and fn(*part) for the other parts on helper threads of the
    loop `name` at once; returns when all are done (raising the first error)."""
    others = [_helper_threads(name, len(parts) - 1).submit(fn, *part) for part in parts[1:]]
    try:
        fn(*parts[0])
    finally:
        for f in others:
            f.result()


def spread(kernel, n: int, *args, grain: int = 1) -> None:
    """kernel(lo, hi, *args) over 0..n-1 in contiguous parts, one a thread, on numba's thread
    count for this thread (NUMBA_NUM_THREADS, set_num_threads, on_this_thread), none shorter
    than `grain`: the calling thread takes the first part and helper threads the others. The
    parallel loop of the front end, binning and the codecs' block sizes, in place of numba's
    prange: a kernel with a prange is compiled twice over, its loop body as a function of its
    own (parfor's gufunc), and the front end's seven and binning's three took 6.5 s of the
    53 s a cold `render triangle` compiles (2026-12-06). An element's output is its own, so the
    result is the same on any number of threads."""
    k = max(1, min(numba.get_num_threads(), n // max(grain, 1)))
    if k == 1:
        kernel(0, n, *args)
        return
    cuts = [n * i // k for i in range(k + 1)]
    alongside(kernel, [(cuts[i], cuts[i + 1], *args) for i in range(k)], "spread")
