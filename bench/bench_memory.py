"""How fast is the memory model's replay, and does a change to it move any counter?

    python bench/bench_memory.py record TRACE.pkl      # render the scenes, keep the memory calls
    python bench/bench_memory.py check TRACE.pkl       # replay them: every mem.* counter and the
                                                       # per-tile DRAM map must match the record
    python bench/bench_memory.py time TRACE.pkl [--repeats 7] [--only overdraw:32:btf@1920x1080]

`record` renders each case through `imr-baseline` and logs every call the IMR makes into the
memory model (clear, submission-order replay, resolve, flush) with its inputs, and the counters
and DRAM tile map the frame ended with. `check` and `time` run only the memory model on those
inputs, so they compare the memory kernels alone, whatever the raster does meanwhile. Timing is
of `replay_submission_order` only, the median of the repeats, each on a fresh model.
"""
from __future__ import annotations

import argparse
import collections
import pickle
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

import pipelines.imr as imr  # noqa: E402
from pipelines import render  # noqa: E402
from pipelines.presets import get_preset  # noqa: E402
from renderer.memory import MemoryModel, Surface  # noqa: E402

PRESET = "imr-baseline"
SMALL = ["triangle", "quad", "overdraw:32:btf", "overdraw:32:ftb", "spheres", "sponza", "spot",
         "foliage", "particles"]
CASES = ([(s, 640, 360, 1) for s in SMALL] + [("spheres", 640, 360, 4), ("foliage", 640, 360, 4)]
         + [("sponza", 1920, 1080, 1), ("overdraw:32:btf", 1920, 1080, 1)])
CALLS = ("clear_surface", "replay_submission_order", "resolve_surface")


def case_name(case) -> str:
    s, w, h, n = case
    return f"{s}@{w}x{h}" + (f"x{n}" if n > 1 else "")


def _plain(x):
    """Namedtuples become (field names, values) so a trace outlives changes to their classes."""
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return ("__nt__", type(x).__name__, x._fields, tuple(_plain(v) for v in x))
    if isinstance(x, tuple):
        return tuple(_plain(v) for v in x)
    return x


_CLASSES: dict = {}   # one class per (name, fields): a new class would be a new numba type


def _typed(x):
    if isinstance(x, tuple) and x[:1] == ("__nt__",):
        _, name, fields, values = x
        cls = _CLASSES.setdefault((name, fields), collections.namedtuple(name, fields))
        return cls(*(_typed(v) for v in values))
    if isinstance(x, tuple):
        return tuple(_typed(v) for v in x)
    return x


def record_case(case) -> dict:
    scene, w, h, samples = case
    log = []
    originals = {name: getattr(imr, name) for name in CALLS}
    orig_init, orig_flush = MemoryModel.__init__, MemoryModel.flush

    def wrap(name):
        def call(state, acc, tile_bytes, *args):
            log.append((name, _plain(args)))
            return originals[name](state, acc, tile_bytes, *args)
        return call

    def init(self, config, n_tiles):
        log.append(("init", n_tiles))
        orig_init(self, config, n_tiles)

    def flush(self, surface, store):
        log.append(("flush", (tuple(surface), store)))
        orig_flush(self, surface, store)

    for name in CALLS:
        setattr(imr, name, wrap(name))
    MemoryModel.__init__, MemoryModel.flush = init, flush
    try:
        r = render(scene, PRESET, w, h, samples)
    finally:
        for name, f in originals.items():
            setattr(imr, name, f)
        MemoryModel.__init__, MemoryModel.flush = orig_init, orig_flush
    counters = {k: v for k, v in dict(r.counters).items() if k.startswith("mem.")}
    return {"log": log, "counters": counters, "dram_tiles": r.tile_maps["dram_bytes"].copy(),
            "all_counters": dict(r.counters)}


def replay(rec, timer=None):
    """Runs the recorded memory calls on a fresh model; returns (mem.* counters, DRAM per tile)."""
    config = get_preset(PRESET).memory
    mm, spent = None, 0.0
    for name, args in rec["log"]:
        if name == "init":
            mm = MemoryModel(config, args)
        elif name == "flush":
            mm.flush(Surface(*args[0]), args[1])
        else:
            f = getattr(imr, name)
            typed = _typed(args)
            t0 = time.perf_counter()
            f(mm.state, mm.acc, mm.tile_bytes, *typed)
            if name == "replay_submission_order":
                spent += time.perf_counter() - t0
    if timer is not None:
        timer.append(spent)
    return dict(mm.counters()), mm.tile_bytes


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["record", "check", "time"])
    ap.add_argument("trace")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--only", action="append")
    a = ap.parse_args()
    if a.mode == "record":
        traces = {}
        for case in CASES:
            t0 = time.perf_counter()
            traces[case_name(case)] = record_case(case)
            print(f"{case_name(case):32s} recorded in {time.perf_counter() - t0:.1f} s", flush=True)
        with open(a.trace, "wb") as f:
            pickle.dump(traces, f, protocol=pickle.HIGHEST_PROTOCOL)
        return 0
    with open(a.trace, "rb") as f:
        traces = pickle.load(f)
    names = a.only or list(traces)
    bad = 0
    for name in names:
        rec = traces[name]
        if a.mode == "check":
            counters, tiles = replay(rec)
            want = rec["counters"]
            ok = counters == want and np.array_equal(tiles.reshape(rec["dram_tiles"].shape),
                                                     rec["dram_tiles"])
            bad += not ok
            print(f"{name:32s} {'ok' if ok else 'DIFFERENT'}", flush=True)
            if not ok:
                for k in sorted(set(counters) | set(want)):
                    if counters.get(k) != want.get(k):
                        print(f"    {k}: {want.get(k)} -> {counters.get(k)}")
        else:
            replay(rec)                       # warm: compile or load the kernels
            times = []
            for _ in range(a.repeats):
                replay(rec, times)
            print(f"{name:32s} replay {statistics.median(times) * 1e3:8.1f} ms "
                  f"(min {min(times) * 1e3:.1f})", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
