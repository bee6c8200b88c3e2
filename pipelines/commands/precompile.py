"""A cold cache's kernels compiled on every core at once, before the command calls them (issue 29,
point 1).

numba compiles a kernel at its first call, in the calling process, one at a time: on an empty cache
(a new version, a fresh install) `tilesim render triangle` spent 101 s of its 105 compiling on one
core of two while the other idled. The kernels a preset's frames call from Python (their entry
points: the front end, the binner, the raster, the memory replay...) and the argument types they
are called with are listed in kernels.json beside this file, recorded from frames of every built-in
scene through each preset at 1 and 4 samples (`python -m pipelines.commands.precompile --write`).
On a cold cache, render, report, view and a local sweep first compile the entry points their
presets call in worker processes: a module's entry points in one worker (they share callees:
the tile kernel at 1 and at 4 samples calls the same raster sections), the longest module first.
Each worker writes numba's on-disk cache, and the command then runs as on a warm cache (render
triangle on two cores, bench/bench_cold_start.py, 2026-12-04: 25.8-26.8 s; 38.0-40.5 s while it
also compiled the post chain, which its frame never calls, the raster's tiles ran in a prange and
the clipper's rows were array expressions). The raster module alone takes 24.5 s at one sample
in one of two workers (2026-12-06; 54.8 s that morning, before the kernels' helpers were inlined
by LLVM rather than at numba's IR level, renderer/raster_sections.py, then compiled without the
wrappers of a Python call, renderer/inlined.py, and the tile kernel compiled for its sample count
alone, raster_kernels.tile_kernel), so past two or three cores it bounds the wall time; its
late callees compile ahead in another worker (AHEAD: 21.6 s in its own then, and a cold render
triangle 23.8-24.4 s on two cores, 2026-12-06). A command whose scenes draw nothing textured,
alpha-tested or blended compiles the tile kernel without its quad path, one whose scenes do the
whole one (choose_variant; renderer.raster_kernels.quad_path). A kernel
the list misses (a preset changed with --set, ray passes, a stale list) compiles at its first
call, as before.

    TILESIM_PRECOMPILE=0 tilesim render triangle      # compile lazily, in this process
"""
from __future__ import annotations

import argparse
import base64
import importlib
import json
import os
import pickle
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path

MANIFEST = Path(__file__).with_name("kernels.json")
MODULE = "pipelines.commands.precompile"          # this module, run as a script (-m)
OWN = ("renderer", "pipelines", "scenes", "viewer")
# The resolutions the list is recorded at: the report's and the render's default, and a small one
# in case a path depends on the frame's size (on imr-baseline none does: the same 30 entry points
# either way). The sample counts: the raster's entry point follows them (the tile kernel, its count
# a literal: raster_kernels.tile_kernel), so an entry point is listed with the (preset, samples)
# runs that call it.
RECORD_SIZES = ((1280, 720), (64, 36))
RECORD_SAMPLES = (1, 4)
# Workers at most: the raster module is the longest to compile (kernels.json's module_compile_s,
# both sample counts; 24.5 s at one on 2026-12-06), so past three or four it bounds the wall time
# and more workers only add memory (each holds numba and LLVM, about 0.3-0.5 GB).
MAX_WORKERS = 4
# Modules whose kernels only a frame with compute passes calls (the post chain: a scene's
# `compute`, scenes.model.ComputePass): compiled ahead only when one of the command's scenes has
# them. The post chain's module took 9.5 s of a cold `render triangle`'s ~80 s of compiling on two
# cores, for a frame that never calls it.
POST_MODULES = ("pipelines.passes.postchain_kernels",)
# Callees of a module's entry points compiled ahead in another worker, while the module's own
# worker types its entry point from the top and would reach them last. The tile kernel's worker
# (renderer.raster_kernels, 25 s at one sample) bounds a cold render once the others' modules
# are done in 20 s: typing the tile kernel it reaches its callees from 2.7 s to 15.7 s, the
# texture L1's walk (2.2 s with its helpers) at 12.4 s, the events' flush (0.5 s) at 14.6 and
# their depth sizes (0.5 s) at 15.2 (2026-12-06, one process). Compiled first by the other
# worker, they are in the cache when it gets there. Recorded as the entry points' cold compile
# asks for them (--write's timing of each module on an empty cache: a warm entry point loads with
# its callees in, and compiles none), listed with "ahead_of": the module.
AHEAD = {"renderer.raster_kernels": ("renderer.texture_l1.texture_walk",
                                     "renderer.raster_sections.flush_events",
                                     "renderer.rop_sizes.event_depth_sizes")}


def usable_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:                                   # not Linux
        return os.cpu_count() or 1


def entry_points(run) -> list[tuple[str, str, object, str | None]]:
    """(module, name, signature, None) of every project kernel that Python calls during run():
    the signatures numba compiles, or loads from the cache, for a call from Python
    (Dispatcher._compile_for_args) or that Python asks of it by name (Dispatcher.compile, as
    raster_kernels.tile_kernel does for its literal sample count). The kernels they call compile
    inside them, whether the cache is cold or warm, and are no entry points: their signatures (an
    inlined helper's included) are left out, but for those of the callees AHEAD names that the
    entry point's compile asks for (a cold cache's: a cached entry point loads with its callees
    in), listed as (module, name, signature, the entry point's module)."""
    from numba.core.dispatcher import Dispatcher
    found: dict[tuple[str, str, object], str | None] = {}
    originals = {name: getattr(Dispatcher, name) for name in ("_compile_for_args", "compile")}
    inside = threading.local()             # a call under another: a callee's compile

    def record(disp, before):
        module = disp.py_func.__module__
        if module.split(".")[0] in OWN:
            for sig in disp.signatures:
                if sig not in before:
                    found.setdefault((module, disp.py_func.__name__, sig), None)

    def recording(name):
        def call(self, *args, **kws):
            before = set(self.signatures)
            parent = getattr(inside, "module", None)
            if parent is not None:
                if name == "compile" and (f"{self.py_func.__module__}.{self.py_func.__name__}"
                                          in AHEAD.get(parent, ())):
                    # (asked for, compiled now or before: the signature it is called with)
                    found.setdefault((self.py_func.__module__, self.py_func.__name__,
                                      tuple(args[0])), parent)
                return originals[name](self, *args, **kws)
            inside.module = self.py_func.__module__
            try:
                return originals[name](self, *args, **kws)
            finally:
                inside.module = None
                record(self, before)
        return call

    for name in originals:
        setattr(Dispatcher, name, recording(name))
    try:
        run()
    finally:
        for name, fn in originals.items():
            setattr(Dispatcher, name, fn)
    return [(m, n, sig, ahead_of) for (m, n, sig), ahead_of in found.items()]


def _record_one(preset: str, samples: int) -> list[list]:
    """Frames of every built-in scene through `preset` at RECORD_SIZES and `samples`; the entry
    points called."""
    from pipelines.frame import Settings, run
    from scenes.library import get_scene, scene_names

    def frames():
        for name in scene_names():
            scene = get_scene(name)
            for w, h in RECORD_SIZES:
                run(scene, preset, Settings(w, h, samples))
    return [_row(m, n, sig) for m, n, sig, ahead_of in entry_points(frames) if ahead_of is None]


def _row(module: str, name: str, sig) -> list:
    return [module, name, base64.b64encode(pickle.dumps(sig)).decode(), str(sig)]


def _compile_seconds(entries: list[dict]) -> tuple[dict[str, float], list[dict]]:
    """Seconds each module's entry points take to compile on an empty cache, one after another
    in this process (the costs that order the workers' queue), and the callees to compile ahead
    of them (AHEAD) as entries, each with the runs of the entry points that call it."""
    seconds, callees = {}, {}
    for module in sorted({e["module"] for e in entries}):
        t0 = time.perf_counter()
        for e in entries:
            if e["module"] == module:
                for m, n, sig, ahead_of in entry_points(lambda: _compile_entry(e)):
                    if ahead_of is not None:
                        m, n, sig, text = _row(m, n, sig)
                        c = callees.setdefault((m, n, text), {
                            "module": m, "kernel": n, "types": text, "sig": sig, "runs": [],
                            "ahead_of": ahead_of, "for": []})
                        c["runs"] += [r for r in e["runs"] if r not in c["runs"]]
                        c["for"].append([e["kernel"], e["types"]])
        seconds[module] = round(time.perf_counter() - t0, 1)
    return seconds, list(callees.values())


def write_manifest(presets: list[str]) -> None:
    """Record the entry points of every preset at every RECORD_SAMPLES, each run in a process of
    its own (a process lists every signature it has called, whichever run called it), then time
    each module's compile in a process with an empty cache."""
    found: dict[tuple[str, str, str], dict] = {}
    for preset in presets:
        for samples in RECORD_SAMPLES:
            out = subprocess.run([sys.executable, "-m", MODULE, "--record-one", preset,
                                  str(samples)], capture_output=True, text=True, check=True).stdout
            # One entry per signature, told by its text: the pickle of one signature differs
            # from process to process (numba numbers its types as it makes them)
            for m, n, sig, text in json.loads(out.splitlines()[-1]):
                e = found.setdefault((m, n, text), {"module": m, "kernel": n, "types": text,
                                                   "sig": sig, "runs": []})
                e["runs"].append([preset, samples])
        print(f"{preset}: {len(found)} entry points so far", file=sys.stderr)
    entries = sorted(found.values(), key=lambda e: (e["module"], e["kernel"], e["types"]))
    with tempfile.TemporaryDirectory() as cold:
        out = subprocess.run([sys.executable, "-m", MODULE, "--time-compiles"],
                             input=json.dumps(entries), capture_output=True, text=True, check=True,
                             env=dict(os.environ, NUMBA_CACHE_DIR=cold)).stdout
    seconds, callees = json.loads(out.splitlines()[-1])
    entries += sorted(callees, key=lambda e: (e["module"], e["kernel"], e["types"]))
    import numba
    MANIFEST.write_text(json.dumps({
        "numba": numba.__version__,
        "recorded_at": [f"{w}x{h}" for w, h in RECORD_SIZES],
        "samples": list(RECORD_SAMPLES),
        "module_compile_s": seconds,
        "entries": entries}, indent=1) + "\n")


def load() -> list[dict]:
    """The recorded entry points; none when the list is missing, unreadable or from another numba
    (its argument types are numba's pickled types)."""
    import numba
    try:
        data = json.loads(MANIFEST.read_text())
    except (OSError, ValueError):
        return []
    if data.get("numba") != numba.__version__:
        return []
    seconds = data.get("module_compile_s", {})
    return [dict(e, seconds=seconds.get(e["module"], 0.0)) for e in data.get("entries", [])]


def _dispatcher(entry: dict):
    return getattr(importlib.import_module(entry["module"]), entry["kernel"])


def _compile_entry(entry: dict) -> None:
    _dispatcher(entry).compile(pickle.loads(base64.b64decode(entry["sig"])))


def _cached(entry: dict) -> bool:
    """Whether numba's cache holds the entry's signature: its kernel's index names it (one
    kernel's index holds all its signatures: the tile kernel's at each sample count and in
    each variant, choose_variant's, of which one may be there and another not)."""
    try:
        disp = _dispatcher(entry)
        getattr(disp, "ready_cache", lambda: None)()      # an inlined helper's: made lazily
        index = disp._cache._cache_file
        if not os.path.exists(index._index_path):
            return False
        sig = pickle.loads(base64.b64decode(entry["sig"]))
        return any(key[0] == sig for key in index._load_index())
    except Exception:                         # numba's internals moved, or the list is stale
        return True                           # (then nothing is compiled ahead)


def compiles(entries: list[dict]) -> int:
    """Compile `entries` here (numba writes each to the cache); the kernels compiled, callees
    included (0 for entries loaded from the cache). An entry that no longer compiles (a stale
    list) is left to compile, or fail, where the command calls it."""
    from numba.core import event
    with event.install_recorder("numba:compile") as recorded:
        for entry in entries:
            try:
                _compile_entry(entry)
            except Exception:
                pass
    return sum(ev.is_start for _, ev in recorded.buffer)


def _callees_of(module: str) -> str:
    """The name of the group of callees compiled ahead of `module` (AHEAD)."""
    return f"callees of {module}"


def _group_name(entries: list[dict]) -> str:
    """A group's module, or the callees' compiled ahead of one (AHEAD)."""
    ahead_of = entries[0].get("ahead_of")
    return _callees_of(ahead_of) if ahead_of else entries[0]["module"]


def _compile_group(entries: list[dict]) -> tuple[str, int]:
    """In a worker: compile a group's entry points; its name and the kernels compiled."""
    return _group_name(entries), compiles(entries)


def lean_scene(scene) -> bool:
    """Whether every draw of `scene`'s render passes stays on the raster's plain path at one
    sample: untextured, opaque, not blended (renderer.raster_kernels.plain_draws)."""
    from renderer.raster_kernels import plain_draws
    draws = [d for rp in scene.frame(1) for d in rp.draws]
    return plain_draws([d.material.texture is not None for d in draws],
                       [int(d.material.alpha_mode) for d in draws],
                       [d.state.blend for d in draws])


def choose_variant(scenes) -> None:
    """The tile kernel the command's passes take (renderer.raster_kernels.LEAN): the one
    without its quad path where every scene of the command does without it, else the whole one
    for every pass, so that a command compiles one tile kernel, not both. Scenes not known
    (None: the viewer, a sweep, a report's claims) may be any: the whole one."""
    from renderer import raster_kernels
    raster_kernels.LEAN = scenes is not None and all(lean_scene(s) for s in scenes)


def _variant_called(entry: dict) -> bool:
    """Whether the command calls this entry: a tile kernel's only in the variant
    choose_variant chose (at four samples every pass takes the whole one)."""
    if entry["kernel"] != "rasterize_tile" or entry["module"] != "renderer.raster_kernels":
        return True
    from numba.core import types

    from renderer import raster_kernels as rk
    sig = pickle.loads(base64.b64decode(entry["sig"]))
    if isinstance(sig[rk.QUADS_ARG], types.NoneType):
        return rk.LEAN
    return not rk.LEAN or sig[rk.N_SAMPLES_ARG].literal_value != 1


def plan(preset_names: list[str] | None, samples=None, post: bool = True,
         every_variant: bool = False) -> list[list[dict]]:
    """The entry points to compile ahead for these presets (None: every preset's) at these sample
    counts (None: every count recorded), not yet in the cache, by module, longest first, each
    followed by the callees compiled ahead of it (AHEAD), if it compiles; the post chain's
    (POST_MODULES) only with `post`; the tile kernel's in the variant the command takes
    (choose_variant), or both with `every_variant`."""
    groups: dict[str, list[dict]] = {}
    wanted = [e for e in load()
              if (post or e["module"] not in POST_MODULES)
              and (every_variant or _variant_called(e))
              and any((preset_names is None or p in preset_names)
                      and (samples is None or n in samples) for p, n in e["runs"])]
    # A callee compiled ahead is wanted where an entry point wanted asks for it ("for": the lean
    # tile kernel asks for no texture_walk)
    asking = {(e["kernel"], e["types"]) for e in wanted}
    for e in wanted:
        if "for" in e and not any(tuple(k) in asking for k in e["for"]):
            continue
        if not _cached(e):
            groups.setdefault(_group_name([e]), []).append(e)
    ordered = []
    for g in sorted((g for g in groups.values() if not g[0].get("ahead_of")),
                    key=lambda g: -g[0]["seconds"]):
        ordered.append(g)
        callees = groups.get(_callees_of(g[0]["module"]))
        if callees:
            ordered.append(callees)
    return ordered


def precompile(presets=None, samples=None, scenes=None, every_variant: bool = False) -> int:
    """Compile ahead, on every core, the kernels `presets` (None: every preset) will call at
    `samples` (a collection of sample counts; None: every count) for `scenes` (None: any; the
    post chain's kernels only where one has compute passes), when the cache lacks them (a warm
    cache: nothing happens), having chosen the tile kernel they take (choose_variant); with
    `every_variant` both tile kernels, the choice left as it is (the tests: each of their
    passes takes what it allows). Says what it does on the command's compile notice. Returns the
    number of modules compiled."""
    if not every_variant:
        choose_variant(scenes)
    if os.environ.get("TILESIM_PRECOMPILE", "1") == "0":
        return 0
    import numba

    import renderer                           # noqa: F401  (points numba at the source-keyed cache)
    from pipelines.commands import compile_notice
    from pipelines.presets import PRESETS
    if not (numba.config.CACHE_DIR and os.access(numba.config.CACHE_DIR, os.W_OK)):
        return 0        # workers could not leave their kernels anywhere this process finds them
    names = None if presets is None else [p.name for p in presets]
    post = scenes is None or any(scene.compute for scene in scenes)
    groups = plan(names if names is not None and all(n in PRESETS for n in names) else None,
                  samples, post, every_variant)
    workers = min(usable_cpus(), len(groups), MAX_WORKERS)
    if workers < 2:                           # one core: compiling at first call costs the same
        return 0
    notice = compile_notice.ACTIVE
    if notice is not None:
        notice.ahead(sum(len(g) for g in groups), workers)
    done = 0
    pool = ProcessPoolExecutor(workers, mp_context=get_context("spawn"))
    try:
        jobs = [pool.submit(_compile_group, g) for g in groups]
        for job in as_completed(jobs):
            module, n = job.result()
            done += 1
            if notice is not None:
                notice.ahead_done(done, len(groups), module, n)
    except (BrokenProcessPool, OSError):
        pass        # a worker killed (out of memory, say): what it left compiles at first call
    except BaseException:
        # Ctrl-C: a worker inside LLVM sees it only when its module is done (20 s and more);
        # numba writes a cache file whole or not at all, so stopping it now loses nothing.
        for process in list((pool._processes or {}).values()):
            process.terminate()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return done


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog=f"python -m {MODULE}",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help=f"record every preset's entry points and "
                    f"each module's compile time into {MANIFEST.name}")
    ap.add_argument("--record-one", nargs=2, metavar=("PRESET", "SAMPLES"), help=argparse.SUPPRESS)
    ap.add_argument("--time-compiles", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.record_one:
        print(json.dumps(_record_one(args.record_one[0], int(args.record_one[1]))))
    elif args.time_compiles:
        print(json.dumps(_compile_seconds(json.loads(sys.stdin.read()))))
    elif args.write:
        from pipelines.presets import PRESETS
        write_manifest(list(PRESETS))
    else:
        ap.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
