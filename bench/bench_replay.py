"""How long an IMR / DSBR frame's memory replay takes, each of its two threads on its own.

    python bench/bench_replay.py [--scene city] [--preset amd-rdna2] [--res 1920x1080]
                                 [--rounds 10]

The replay (pipelines.arch.imr, MemoryModel.serve_pipelined) runs on two threads at once: the
producer replays the raster's events through the ROP caches and hands what misses them on; the
consumer serves that through L2, the caches below and DRAM. A frame's replay takes as long as
the slower of the two, and a frame's time on this machine moves 10-30% from one minute to the
next, so a change to either is hard to see in frames. This renders the frame once as a warm-up,
once more with the consumer's calls recorded (the rows each was handed, copied), and then serves
those recorded rows again, alone on this thread, from the cache state the pass started with:
the consumer's work with nothing beside it, the same rows in the same order every round.
Rounds alternate between the model as it is and the model without its far level (meta[M_FAR]
= -1: no set asked for ahead of time, memory_kernels.FAR_BYTES), so that the prefetch is
judged within one process, round against round: a lookup that waits on host DRAM moves with
the host's other load far more than arithmetic does (whole frames and separate processes
moved 30% within minutes while this was measured). Printed: the rows, and per variant the best
and median round in ms, and the median of the rounds' ratios. (The producer's calls read the
raster's events and the pass's own state and are timed in place: bench/benchmark.py's
"replay" stage.)
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import renderer.memory as memory  # noqa: E402
from renderer.memory_requests import M_FAR  # noqa: E402
from pipelines.api import render  # noqa: E402


def recorded_consumer(scene: str, preset: str, width: int, height: int) -> list:
    """Per pipelined replay of one frame: (the cache lines as the pass began, the consumer's
    calls as (function, arguments) with the rows it was handed copied)."""
    passes = []
    pipelined = memory.MemoryModel.serve_pipelined

    def recording(self, produce, upper, consume=memory.mk.serve, movable=()):
        calls = []

        def consume_recorded(*args):
            args = list(args)
            args[5] = args[5][:args[6]].copy()        # the rows handed on, as they were
            calls.append((consume, args))
            return consume(*args)
        passes.append((self.state.lines.copy(), calls))
        return pipelined(self, produce, upper, consume_recorded, movable)
    memory.MemoryModel.serve_pipelined = recording
    try:
        render(scene, preset, width, height)
    finally:
        memory.MemoryModel.serve_pipelined = pipelined
    return passes


def consumer_s(lines0: np.ndarray, calls: list, meta: np.ndarray) -> float:
    """One round: the recorded calls served in order on copies of the state, with `meta`."""
    if not calls:
        return 0.0
    _, first = calls[0]
    lines, shape = lines0.copy(), first[1].copy()
    acc, tile_bytes = np.zeros_like(first[3]), np.zeros_like(first[4])
    t0 = time.perf_counter()
    for consume, args in calls:
        consume(lines, shape, meta, acc, tile_bytes, args[5], args[6])
    return time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scene", default="city")
    ap.add_argument("--preset", default="amd-rdna2")
    ap.add_argument("--res", default="1920x1080")
    ap.add_argument("--rounds", type=int, default=10)
    a = ap.parse_args(argv)
    width, height = (int(v) for v in a.res.split("x"))
    render(a.scene, a.preset, width, height)              # compile or load, warm the caches
    for k, (lines0, calls) in enumerate(recorded_consumer(a.scene, a.preset, width, height)):
        if not calls:
            continue
        rows = sum(args[6] for _, args in calls)
        meta = calls[0][1][2]
        near = meta.copy()
        near[M_FAR] = -1
        far, none = [], []
        for _ in range(a.rounds):
            far.append(consumer_s(lines0, calls, meta))
            none.append(consumer_s(lines0, calls, near))
        print(f"{a.scene} via {a.preset} at {a.res}, pass {k}: the consumer's {rows:,} rows in "
              f"{len(calls)} calls, alone, {a.rounds} rounds each, taking turns:")
        for name, times in ((f"far level {meta[M_FAR]} asked ahead", far),
                            ("nothing asked ahead", none)):
            print(f"  {name:24s} best {1e3 * min(times):6.2f} ms, median "
                  f"{1e3 * statistics.median(times):6.2f} ms "
                  f"({1e9 * min(times) / rows:.0f} ns a row)")
        print(f"  round by round: {statistics.median(f / n for f, n in zip(far, none)):.3f}x "
              "the time (median)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
