"""Kernels compiled ahead on a cold cache (pipelines.commands.precompile): the list of entry points
is current, a worker's compile is what a later process loads, and the plan skips what the cache
holds and starts with the longest module."""
from __future__ import annotations

import base64
import json
import pickle
import subprocess
import sys

import numba
import pytest
from numba.core import types

from pipelines.commands import precompile as pc
from pipelines.presets import PRESETS
from renderer import raster_kernels as rk
from tests.cli_process import HANG_S, child_env

REWRITE = "python -m pipelines.commands.precompile --write"
RECORDED_WITH = json.loads(pc.MANIFEST.read_text()).get("numba") if pc.MANIFEST.is_file() else None
# The list holds numba's pickled types, read only by the numba that wrote them: under another the
# commands compile at first call (precompile.load gives nothing), and these tests have no list.
pytestmark = pytest.mark.skipif(RECORDED_WITH is not None and RECORDED_WITH != numba.__version__,
                                reason=f"{pc.MANIFEST.name} was recorded with numba {RECORDED_WITH}, "
                                       f"this is {numba.__version__}: {REWRITE}")


def test_the_list_names_existing_kernels_and_numba_types_for_every_preset_and_sample_count():
    entries = pc.load()
    assert entries, f"{pc.MANIFEST.name} is missing or from another numba than {numba.__version__}: {REWRITE}"
    assert {(p, n) for e in entries for p, n in e["runs"]} == {(p, n) for p in PRESETS
                                                             for n in pc.RECORD_SAMPLES}
    for e in entries:
        sig = pc.pickle.loads(pc.base64.b64decode(e["sig"]))
        assert isinstance(sig, tuple) and all(isinstance(t, types.Type) for t in sig)
        assert str(sig) == e["types"]
        assert hasattr(pc._dispatcher(e), "compile"), e["module"] + "." + e["kernel"]
        assert e["seconds"] > 0 or e.get("ahead_of") in pc.AHEAD    # (a callee: in its module's)


def test_the_list_is_what_imr_baseline_calls_today():
    """Recorded again now, imr-baseline's entry points at one sample are the listed ones: a kernel
    whose arguments changed without the list being rewritten fails here."""
    out = subprocess.run([sys.executable, "-m", pc.MODULE, "--record-one", "imr-baseline", "1"],
                         env=child_env(), capture_output=True, text=True, timeout=HANG_S, check=True)
    now = {(m, n, text) for m, n, _, text in json.loads(out.stdout.splitlines()[-1])}
    listed = {(e["module"], e["kernel"], e["types"]) for e in pc.load()
              if ["imr-baseline", 1] in e["runs"] and not e.get("ahead_of")}
    assert now == listed, (f"entry points called but not listed: {sorted(now - listed)[:5]}; listed but "
                           f"not called: {sorted(listed - now)[:5]}. {REWRITE}")


SMALL = "renderer.frontend.legacy_kernels"      # a module of entry points that compiles in 1 s
_CHILD = """
import json, sys
from pipelines.commands import precompile as pc
SMALL = sys.argv[2]
entries = [e for e in pc.load() if e["module"] == SMALL]
if sys.argv[1] == "workers":
    assert not any(pc._cached(e) for e in entries)
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context
    with ProcessPoolExecutor(1, mp_context=get_context("spawn")) as pool:
        module, n = pool.submit(pc._compile_group, entries).result()
    print(json.dumps([module, n, len(entries)]))
else:
    cached = all(pc._cached(e) for e in entries)
    # a signature its index does not name: not cached, though the kernel's index is there
    import base64, pickle
    from numba.core import types
    sig = pickle.loads(base64.b64decode(entries[0]["sig"]))
    other = dict(entries[0], sig=base64.b64encode(pickle.dumps(
        tuple(types.float32 for _ in sig))).decode())
    cached = cached and not pc._cached(other)
    again = pc.compiles(entries)
    print(json.dumps([cached, again, [len(g) for g in pc.plan(None) if g[0]["module"] == SMALL]]))
"""


def test_a_workers_compile_is_what_a_later_process_loads(tmp_path):
    """A module's entry points compiled in a spawned worker on an empty cache: a new process finds
    them cached (and a signature never compiled not cached), compiles none of them again, and
    the plan leaves the module out."""
    env = child_env(NUMBA_CACHE_DIR=str(tmp_path))
    run = lambda step: json.loads(subprocess.run(  # noqa: E731
        [sys.executable, "-c", _CHILD, step, SMALL], env=env, capture_output=True, text=True,
        timeout=HANG_S, check=True).stdout.splitlines()[-1])
    module, compiled, n_entries = run("workers")
    assert module == SMALL and n_entries >= 1 and compiled >= n_entries
    cached, compiled_again, planned = run("later")
    assert cached and compiled_again == 0 and planned == []


@pytest.mark.parametrize("lean", [False, True])
def test_the_plan_starts_with_the_longest_module_and_keeps_a_module_together(monkeypatch, lean):
    monkeypatch.setattr(pc, "_cached", lambda e: False)
    monkeypatch.setattr(rk, "LEAN", lean)                 # (choose_variant's choice)
    groups = pc.plan(["imr-baseline"], {1})
    # the tile kernel's module first, then its callees compiled ahead of it in another worker:
    # the lean tile kernel (raster_kernels.quad_path) asks for no texture L1 walk
    assert groups[0][0]["module"] == "renderer.raster_kernels"
    ahead = [name for name in pc.AHEAD[groups[0][0]["module"]]
             if not (lean and name.endswith(".texture_walk"))]
    assert {(e["module"], e["kernel"], e["ahead_of"]) for e in groups[1]} == {
        (*name.rsplit(".", 1), "renderer.raster_kernels") for name in ahead}
    modules = [g for g in groups if not g[0].get("ahead_of")]
    assert len(modules) == len(groups) - 1
    seconds = [g[0]["seconds"] for g in modules]
    assert seconds == sorted(seconds, reverse=True) and len(modules) > 1
    assert all(len({e["module"] for e in g}) == 1 for g in modules)
    assert len({g[0]["module"] for g in modules}) == len(modules)
    assert all(["imr-baseline", 1] in e["runs"] for g in groups for e in g)
    # the tile kernel, called by its compiled signature (raster_kernels.tile_kernel): listed with
    # its sample count a literal: at one sample only the 1x kernel (a 4x frame's runs call both)
    def tile(groups):
        return {pickle.loads(base64.b64decode(e["sig"]))[rk.N_SAMPLES_ARG].literal_value
                for g in groups for e in g if e["kernel"] == "rasterize_tile"}
    assert tile(groups) == {1}
    assert 4 in tile(pc.plan(["imr-baseline"], {4}))


def test_the_post_chain_is_compiled_ahead_only_for_scenes_with_compute_passes(monkeypatch):
    """A frame without compute passes never calls the post chain's kernels: `render triangle`
    leaves them out (9.5 s of a cold render's compiling), `render postchain` takes them."""
    from numba.core.dispatcher import Dispatcher

    from pipelines.frame import Settings, run
    from pipelines.passes import postchain_kernels
    monkeypatch.setattr(pc, "_cached", lambda e: False)
    modules = lambda groups: {g[0]["module"] for g in groups}  # noqa: E731
    assert pc.POST_MODULES == (postchain_kernels.__name__,)
    assert set(pc.POST_MODULES) <= modules(pc.plan(["imr-baseline"], {1}))
    without = modules(pc.plan(["imr-baseline"], {1}, post=False))
    assert not set(pc.POST_MODULES) & without and "renderer.raster_kernels" in without
    called = []
    for name, obj in list(vars(postchain_kernels).items()):
        if isinstance(obj, Dispatcher):
            monkeypatch.setattr(postchain_kernels, name,
                                lambda *a, _f=obj, _n=name, **k: (called.append(_n), _f(*a, **k))[1])
    for scene in ("triangle", "spheres", "postchain"):
        run(scene, "imr-baseline", Settings(64, 36))
        assert bool(called) == (scene == "postchain"), (scene, called)
