"""The memory model's engine against its slow twin (tests.naive.NaiveCaches)."""
from __future__ import annotations

import numpy as np
import pytest

from renderer import memory_kernels as mk
from renderer.counters import STREAMS
from renderer.memory import CacheConfig, MemoryConfig, MemoryModel
from tests.naive import NaiveCaches

CONFIGS = {
    # an L2 in front of a read-allocate last-level cache, as AMD's Infinity Cache
    "with-llc": MemoryConfig(128, (CacheConfig("rop_color", 62 * 128 * 4, 4),
                                   CacheConfig("rop_depth", 26 * 128 * 6, 6),
                                   CacheConfig("l2", 16 * 128 * 4, 4),
                                   CacheConfig("llc", 64 * 128 * 8, 8, write_allocate=False)),
                             (2, 2, 3, -1)),
    "baseline-like": MemoryConfig.rop_l2(128, CacheConfig("rop_color", 31 * 128 * 2, 2),
                                  CacheConfig("rop_depth", 3 * 128 * 4, 4), CacheConfig("l2", 64 * 128 * 4, 4)),
    "tiny": MemoryConfig.rop_l2(64, CacheConfig("rop_color", 64, 1), CacheConfig("rop_depth", 128, 2),
                         CacheConfig("l2", 64 * 7 * 3, 7)),
    # an L2 that keeps compressed blocks packed (compressed_in_cache), over an Infinity Cache
    "packed-l2": MemoryConfig(128, (CacheConfig("rop_color", 31 * 128 * 2, 2),
                                    CacheConfig("rop_depth", 3 * 128 * 4, 4),
                                    CacheConfig("l2", 16 * 128 * 4, 4, holds_compressed=True),
                                    CacheConfig("llc", 64 * 128 * 8, 8, write_allocate=False)),
                              (2, 2, 3, -1)),
    # levels of 32 ways and more, which look a line up through their hint tables (an RT L0's
    # width), a packed one among them; few sets, so that hints go stale often
    "wide": MemoryConfig(64, (CacheConfig("rop_color", 64 * 32 * 2, 32),
                              CacheConfig("rop_depth", 64 * 64, 64),
                              CacheConfig("l2", 64 * 40 * 4, 40, holds_compressed=True),
                              CacheConfig("llc", 64 * 8 * 16, 8, write_allocate=False)),
                         (2, 2, 3, -1)),
}


def _random_requests(mm, n_tiles, seed, n=20000, first_region=1):
    """n requests at levels 0-2 to lines of two regions, 40% writes, every stream, tiles -1 to
    n_tiles - 1; half of them compressed lines of 0 to a line's bytes."""
    rng = np.random.default_rng(seed)
    regions = rng.integers(first_region, first_region + 2, n)
    lines = (regions << (mk.REGION_SHIFT - mm.state.meta[mk.M_LINE_SHIFT])) + rng.integers(0, 400, n)
    levels = rng.integers(0, 3, n)
    writes = rng.random(n) < 0.4
    streams = rng.integers(0, len(STREAMS), n)
    tiles = rng.integers(-1, n_tiles, n)
    sizes = np.where(rng.random(n) < 0.5, -1, rng.integers(0, mm.config.line_bytes + 1, n))
    rq = np.empty((n, mk.R_N), np.int64)
    for i in range(n):
        op = (mk.op_code(bool(writes[i]), streams[i]) if sizes[i] < 0
              else mk.op_sized(bool(writes[i]), streams[i], sizes[i]))
        mk.request(rq, i, levels[i], lines[i], op, tiles[i])
    return rq


def _producer(mm, rq, chunk, log=None):
    """A pipelined replay's producer for MemoryModel.serve_pipelined: rq in chunks of `chunk`
    rows through mm's levels in `own`, handing the rest on; (start, own) of each call into
    `log`."""
    def produce(start, own, out):
        if log is not None:
            log.append((start, own))
        end = min(start + chunk, len(rq))
        n = mk.serve_levels(*mm.state, mm.acc, mm.tile_bytes, rq[start:end], end - start, own,
                            out, 0)
        return (None if end == len(rq) else end), n
    return produce


def _fields(op):
    """(write, stream, size field) of a request's op, for the naive twin."""
    return (bool(op & mk.OP_WRITE), int((op >> mk.OP_STREAM_SHIFT) & mk.I_STREAM_MASK),
            int((op >> mk.OP_SIZE_SHIFT) & mk.SIZE_MASK))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_serve_matches_naive_caches(name, seed):
    cfg = CONFIGS[name]
    n_tiles = 5
    mm = MemoryModel(cfg, n_tiles)
    assert (mm.region("a"), mm.region(("b",))) == (1, 2)    # "a" is a named surface: slot 1
    shift = mk.REGION_SHIFT - int(mm.state.meta[mk.M_LINE_SHIFT])
    naive = NaiveCaches(cfg, len(STREAMS), n_tiles, slot_of=lambda line: int(line >> shift == 1))
    rq = _random_requests(mm, n_tiles, seed)
    for level, line, op, tile in rq:
        write, stream, size = _fields(op)
        naive.access(int(level), int(line), write, stream, int(tile), size)
    mk.serve(*mm.state, mm.acc, mm.tile_bytes, rq, len(rq))
    mm.flush(mm.surface("a", "rgba8", 1)._replace(region=1), store=True)
    naive.flush(lambda line: line >> shift, 1, store=True)
    mm.flush(mm.surface("b", "rgba8", 1)._replace(region=2), store=False)
    naive.flush(lambda line: line >> shift, 2, store=False)
    acc = mm.acc
    assert list(acc[mk.A_DRAM_READ, :len(STREAMS)]) == naive.dram_read
    assert list(acc[mk.A_DRAM_WRITE, :len(STREAMS)]) == naive.dram_write
    assert list(acc[mk.A_ONCHIP_READ, :len(STREAMS)]) == naive.onchip_read
    assert list(acc[mk.A_ONCHIP_WRITE, :len(STREAMS)]) == naive.onchip_write
    for row, want in ((mk.A_COMP_READ, naive.comp_read), (mk.A_COMP_WRITE, naive.comp_write),
                      (mk.A_COMP_RAW_READ, naive.comp_raw_read),
                      (mk.A_COMP_RAW_WRITE, naive.comp_raw_write)):
        assert list(acc[row, :len(STREAMS)]) == want
    assert acc[mk.A_COMP_RAW_WRITE].sum() > acc[mk.A_COMP_WRITE].sum() > 0
    levels = len(cfg.caches)
    assert list(acc[mk.A_HITS, :levels]) == naive.hits and list(acc[mk.A_MISSES, :levels]) == naive.misses
    assert list(mm.tile_bytes) == naive.tile_bytes
    c = mm.counters()
    for d, moved, raw in (("read", naive.surf_read, naive.surf_raw_read),
                          ("write", naive.surf_write, naive.surf_raw_write)):
        assert (c[f"surf.a.{d}"], c[f"surf.a.{d}.raw"]) == (moved[1], raw[1]) and raw[1] > moved[1]
    assert not [k for k in c if k.startswith("surf.") and not k.startswith("surf.a.")]


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_serving_the_far_level_in_a_pass_of_its_own_changes_nothing(name):
    """serve hands what reaches the far level (meta[M_FAR]) on to a second pass, where
    serve_levels asks for each row's set ahead of time. These models are too small for a far
    level (FAR_BYTES), so their last level is named by hand: served so (at once, and pipelined
    behind a producer that keeps the levels above to itself), a model ends with the counters,
    tile bytes and lines of one with none named. Rows enter at every level, the far level and
    DRAM included."""
    cfg = CONFIGS[name]
    plain = MemoryModel(cfg, 5)
    assert plain.state.meta[mk.M_FAR] == -1
    last = len(cfg.caches) - 1
    assert cfg.below[last] == -1
    rq = _random_requests(plain, 5, seed=7)
    rng = np.random.default_rng(3)
    rq[rng.random(len(rq)) < 0.1, mk.R_LEVEL] = last
    rq[rng.random(len(rq)) < 0.02, mk.R_LEVEL] = -1
    mk.serve(*plain.state, plain.acc, plain.tile_bytes, rq, len(rq))

    def far_named():
        mm = MemoryModel(cfg, 5)
        mm.state.meta[mk.M_FAR] = last
        return mm

    whole = far_named()
    mk.serve(*whole.state, whole.acc, whole.tile_bytes, rq, len(rq))
    pipelined = far_named()
    pipelined.serve_pipelined(_producer(pipelined, rq, 900), (0, 1))
    for mm in (whole, pipelined):
        assert np.array_equal(plain.acc, mm.acc) and np.array_equal(plain.tile_bytes,
                                                                    mm.tile_bytes)
        assert np.array_equal(plain.state.lines, mm.state.lines)
        assert np.array_equal(plain.state.shape, mm.state.shape)


@pytest.mark.parametrize("store", [True, False])
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_a_flush_told_the_regions_extent_scans_its_sets_alone(name, store):
    """MemoryModel.flush with n_bytes scans only the sets of a level that the region's first
    n_bytes map to (wrapping round a level whose sets are not a power of two), in the same
    order: the model ends as one flushed whole, for regions of 1 to 40 lines (fewer lines than
    some levels have sets, more than others) beside another region's lines."""
    cfg = CONFIGS[name]
    lb = cfg.line_bytes
    for extent in (1, 3, 17, 40):
        models = [MemoryModel(cfg, 5) for _ in range(2)]
        shift = mk.REGION_SHIFT - models[0].state.meta[mk.M_LINE_SHIFT]
        rq = _random_requests(models[0], 5, seed=extent, n=4000)
        # region 2's lines within its first `extent`, region 1's anywhere
        two = (rq[:, mk.R_LINE] >> shift) == 2
        rq[two, mk.R_LINE] = (2 << shift) + rq[two, mk.R_LINE] % extent
        for mm, n_bytes in zip(models, (None, extent * lb - lb // 2)):
            mk.serve(*mm.state, mm.acc, mm.tile_bytes, rq, len(rq))
            mm.flush(2, store=store, n_bytes=n_bytes)
            mm.flush(1, store=store)
        whole, told = models
        assert np.array_equal(whole.acc, told.acc)
        assert np.array_equal(whole.tile_bytes, told.tile_bytes)
        for a, b in zip(whole.state, told.state):
            assert np.array_equal(a, b)


@pytest.mark.parametrize("scene,preset,samples", [("city", "amd-rdna2", 1),
                                                  ("deferred", "amd-rdna3", 1),
                                                  ("spot", "amd-rdna2", 4),
                                                  ("city", "imr-baseline", 4)])
def test_an_imr_frames_flushes_told_their_extents_change_nothing(monkeypatch, scene, preset,
                                                                 samples):
    """The end of an IMR / DSBR pass tells each flush how much of its region the frame's
    passes addressed (the surfaces, their DCC keys and HTILE words): the frame's counters and
    its memory model's lines are those of flushes that scan every set (at 320x180 the surfaces'
    lines are far fewer than an Infinity Cache's sets; deferred has two passes)."""
    import renderer.memory as memory
    from pipelines.api import render

    models = []
    init = memory.MemoryModel.__init__

    def kept(self, *args):
        init(self, *args)
        models.append(self)
    monkeypatch.setattr(memory.MemoryModel, "__init__", kept)
    told = render(scene, preset, 320, 180, samples)
    flush = memory.MemoryModel.flush
    monkeypatch.setattr(memory.MemoryModel, "flush",
                        lambda self, surface, store, tile_bytes=None, n_bytes=None:
                        flush(self, surface, store, tile_bytes))
    whole = render(scene, preset, 320, 180, samples)
    assert told.counters == whole.counters
    assert len(models) == 2
    assert np.array_equal(models[0].state.lines, models[1].state.lines)


def test_the_far_level_is_the_largest_that_outgrows_the_hosts_caches():
    """An Infinity Cache's state (amd-rdna2's 128 MB: 64k sets) is named; an L2 of 2048 sets
    is not, nor any level of a model without such a cache; the ray unit's levels added later
    keep the name."""
    from pipelines.presets import get_preset
    rdna2 = MemoryModel(get_preset("amd-rdna2").memory_config(), 1)
    names = [c.name for c in rdna2.config.caches]
    assert names[rdna2.state.meta[mk.M_FAR]] == "llc"
    assert MemoryModel(get_preset("imr-baseline").memory_config(), 1).state.meta[mk.M_FAR] == -1
    rdna2.add_levels((CacheConfig("rt_l0", 64 * 128 * 32, 32, read_only=True),), (2,))
    assert rdna2.state.meta[mk.M_FAR] == names.index("llc")


@pytest.mark.parametrize("upper", [(0, 1), (1,), (0,)])
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_pipelined_serve_matches_one_thread(name, upper):
    """Serving the upper levels on one thread and handing the rest to another (in chunks, as
    the IMR's replay does) leaves every counter, tile byte and cache line as serving it all."""
    cfg = CONFIGS[name]
    one, two = MemoryModel(cfg, 5), MemoryModel(cfg, 5)
    rq = _random_requests(one, 5, seed=len(upper))
    mk.serve(*one.state, one.acc, one.tile_bytes, rq, len(rq))
    chunk = 1000
    calls = []
    two.serve_pipelined(_producer(two, rq, chunk, calls), upper)
    assert len(calls) == len(rq) // chunk
    assert np.array_equal(one.acc, two.acc) and np.array_equal(one.tile_bytes, two.tile_bytes)
    for a, b in zip(one.state, two.state):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_pipelined_serve_moving_levels_down_matches_one_thread(monkeypatch, name):
    """Upper levels handed down to the second thread between calls (at once, as the policy
    allows at the earliest, and after a few calls) leave every counter, tile byte and cache
    line as one thread serving all."""
    import renderer.memory as memory

    cfg = CONFIGS[name]
    one = MemoryModel(cfg, 5)
    rq = _random_requests(one, 5, seed=7)
    mk.serve(*one.state, one.acc, one.tile_bytes, rq, len(rq))
    monkeypatch.setattr(memory, "MOVE_RATIO", 0.0)         # move whenever the window is full
    for after in (0, 1, 3):
        monkeypatch.setattr(memory, "MOVE_AFTER", after)
        two = MemoryModel(cfg, 5)
        log = []
        two.serve_pipelined(_producer(two, rq, 700, log), (0, 1), movable=(0, 1))
        owns = [own for _, own in log]
        assert owns[0] == 3 and owns[-1] == 0 and len(set(owns)) == 3      # both moved
        assert np.array_equal(one.acc, two.acc) and np.array_equal(one.tile_bytes, two.tile_bytes)
        for a, b in zip(one.state, two.state):
            assert np.array_equal(a, b)


def test_pipelined_serve_refuses_levels_fed_by_others():
    mm = MemoryModel(CONFIGS["with-llc"], 1)
    with pytest.raises(ValueError, match="fed by other levels"):
        mm.serve_pipelined(lambda start, own, out: (None, 0), (2,))


@pytest.mark.parametrize("scene,preset,samples,rows", [("sponza", "imr-baseline", 1, None),
                                                       ("spot", "amd-rdna2", 4, None),
                                                       ("particles", "amd-gcn", 1, None),
                                                       ("sponza", "amd-rdna2", 1, 8),
                                                       ("particles", "amd-rdna3", 1, 8),
                                                       ("particles", "amd-rdna2", 4, 8),
                                                       ("particles", "amd-gcn", 1, 8),
                                                       ("spot", "amd-gcn", 4, 8),
                                                       ("sponza", "imr-baseline", 1, 8),
                                                       ("particles", "amd-gcn", 4, 8)])
def test_pipelined_replay_matches_one_thread(monkeypatch, scene, preset, samples, rows):
    """The IMR's replay on two threads (ROP caches here, L2 and below there, fetches and texel
    blocks handed on as marks) gives every counter and DRAM tile byte of one thread serving all;
    also when the hand-on buffers start too small for one item and must grow, and when the
    colour cache moves to the second thread part way (its requests then handed on as colour
    marks: DCC sizes, blending's fused read and write, a fast-cleared block's first write at
    4x with no DCC, which spot on amd-gcn is)."""
    import renderer.memory as memory
    from pipelines import render

    if rows:          # small buffers, and the ROP colour cache handed down after the first
        monkeypatch.setattr(memory, "HAND_ON_ROWS", rows)
        monkeypatch.setattr(memory, "MOVE_RATIO", 0.0)
        monkeypatch.setattr(memory, "MOVE_AFTER", 1)

    def one_thread(self, produce, upper, consume=None, movable=()):
        start = 0
        while start is not None:
            start, n = produce(start, mk.ALL_LEVELS, np.empty((0, mk.R_N), np.int64))
            assert n == 0

    piped = render(scene, preset, 320, 180, samples)
    monkeypatch.setattr(MemoryModel, "serve_pipelined", one_thread)
    single = render(scene, preset, 320, 180, samples)
    assert dict(piped.counters) == dict(single.counters)
    for name in single.tile_maps:
        assert np.array_equal(piped.tile_maps[name], single.tile_maps[name]), name


def test_mesh_memo_computes_once_for_threads_asking_at_once():
    """The viewer's panels ask for the same setup at the same moment: one computes, the rest
    wait for its value rather than computing their own."""
    import threading
    import time

    from renderer.memo import MeshMemo
    memo, calls = MeshMemo(2), []

    def compute():
        calls.append(1)
        time.sleep(0.05)
        return object()

    got = []
    threads = [threading.Thread(target=lambda: got.append(memo.get("k", (), compute)))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1 and len(got) == 4 and all(g is got[0] for g in got)


def test_set_index_exact_for_the_highest_regions():
    """serve_levels finds a line's set in a cache of non-power-of-two sets by a float64 quotient
    corrected by one (memory_kernels); lines of the last region ids a model hands out (2^16 - 1,
    the largest line numbers) must land in the sets the naive caches' % puts them in."""
    from renderer.memory import MAX_REGIONS
    cfg = CONFIGS["with-llc"]
    mm = MemoryModel(cfg, 5)
    naive = NaiveCaches(cfg, len(STREAMS), 5)
    rq = _random_requests(mm, 5, 3, first_region=MAX_REGIONS - 3)
    for level, line, op, tile in rq:
        write, stream, size = _fields(op)
        naive.access(int(level), int(line), write, stream, int(tile), size)
    mk.serve(*mm.state, mm.acc, mm.tile_bytes, rq, len(rq))
    assert list(mm.acc[mk.A_HITS, :4]) == naive.hits and list(mm.acc[mk.A_MISSES, :4]) == naive.misses
    assert list(mm.acc[mk.A_DRAM_READ, :len(STREAMS)]) == naive.dram_read
    assert list(mm.acc[mk.A_DRAM_WRITE, :len(STREAMS)]) == naive.dram_write


def test_kernel_cache_is_keyed_by_every_source(tmp_path):
    """A kernel inlines helpers and constants of other modules, which numba's own cache check
    (the kernel's file only) misses: the cache directory must change when any source does,
    and every kernel must be cached there."""
    import numba

    from renderer import jit_cache

    assert mk.serve._cache._cache_path.startswith(numba.config.CACHE_DIR)
    assert numba.config.CACHE_DIR.endswith(f"{jit_cache.source_key()}-o{jit_cache.opt_name()}")
    for package in jit_cache.PACKAGES:
        (tmp_path / package).mkdir(parents=True)
        (tmp_path / package / "a_kernels.py").write_text("from numba import njit\nfrom .b import F_N\n")
    (tmp_path / "renderer" / "__init__.py").write_text("")
    (tmp_path / "renderer" / "b.py").write_text("from renderer.c import G\nF_N = 3\n")
    (tmp_path / "renderer" / "c.py").write_text("G = 1\n")
    (tmp_path / "renderer" / "tables.py").write_text('"""from renderer.b import F_N"""\nT = 1\n')
    before = jit_cache.source_key(tmp_path)
    (tmp_path / "renderer" / "b.py").write_text("from renderer.c import G\nF_N = 4\n")
    after = jit_cache.source_key(tmp_path)
    (tmp_path / "renderer" / "c.py").write_text("G = 2\n")          # reached through b
    assert len({before, after, jit_cache.source_key(tmp_path)}) == 3
    # a module no kernel imports (a loader, a table builder) is not a kernel's source
    key = jit_cache.source_key(tmp_path)
    (tmp_path / "renderer" / "tables.py").write_text("T = 2\n")
    assert jit_cache.source_key(tmp_path) == key
    # installed (`pip install .`), the root is site-packages, beside numpy and numba: a third
    # party's module is not the project's source, nor read at every start
    (tmp_path / "numpy").mkdir()
    (tmp_path / "numpy" / "__init__.py").write_text("N = 1\n")
    (tmp_path / "renderer" / "c.py").write_text("import numpy\nfrom numpy import N\nG = 2\n")
    key = jit_cache.source_key(tmp_path)
    (tmp_path / "numpy" / "__init__.py").write_text("N = 2\n")
    assert jit_cache.source_key(tmp_path) == key
    sources = {f.relative_to(jit_cache.ROOT).as_posix() for f in jit_cache.kernel_sources()}
    assert "renderer/texture_l1.py" in sources and "renderer/raster_sections.py" in sources
    assert not any(s.startswith("scenes/") for s in sources)
    assert "renderer/texture_formats.py" not in sources and "pipelines/arch/imr.py" not in sources


def test_kernels_compile_at_the_opt_level_the_environment_names():
    """LLVM's level 2 where NUMBA_OPT is not set (jit_cache.OPT_LEVEL), the environment's where it
    is; a kernel cached at one level is never loaded at another (the cache folder names it)."""
    import subprocess
    import sys

    from tests.cli_process import HANG_S, child_env
    show = ("import os, numba, renderer; "
            "print(int(numba.config.OPT), os.environ['NUMBA_OPT'], numba.config.CACHE_DIR)")
    seen = {}
    for value in (None, "3", "max"):
        env = child_env()
        env.pop("NUMBA_OPT", None)                  # (this process's import of renderer set it)
        if value is not None:
            env["NUMBA_OPT"] = value
        seen[value] = subprocess.run([sys.executable, "-c", show], env=env, capture_output=True,
                                     text=True, timeout=HANG_S, check=True).stdout.split()
    assert seen[None][:2] == ["2", "2"] and seen[None][2].endswith("-o2")
    assert seen["3"][:2] == ["3", "3"] and seen["3"][2].endswith("-o3")
    assert seen["max"][:2] == ["3", "max"] and seen["max"][2].endswith("-omax")


_LATE_IMPORT = """
import numba
import renderer
before = numba.config.CACHE_DIR
numba.njit(lambda x: x + 1)(1)               # a compile: numba reads its environment again
from numba.core.dispatcher import Dispatcher
import renderer.bvh.box8_kernels as late     # a kernel module imported after it
paths = [v._cache._cache_path for v in vars(late).values()
         if isinstance(v, Dispatcher) and hasattr(v._cache, "_cache_path")]
print(before == numba.config.CACHE_DIR, bool(paths) and all(p.startswith(before) for p in paths))
"""


def test_the_cache_folder_outlives_numbas_reading_of_its_environment():
    """jit_cache.use_opt_level sets NUMBA_OPT and has numba read its environment at once: left
    to the first compile, that reading dropped the source-keyed cache folder, and a kernel
    module imported after it cached beside its source."""
    import subprocess
    import sys

    from tests.cli_process import HANG_S, child_env
    env = child_env()
    env.pop("NUMBA_OPT", None)
    out = subprocess.run([sys.executable, "-c", _LATE_IMPORT], env=env, capture_output=True,
                         text=True, timeout=HANG_S, check=True).stdout.split()
    assert out == ["True", "True"]


_WARM_LOAD = """
import json
import sys
import numpy as np
from renderer import geometry_kernels as gk
assert list(gk.running_sum(np.array([2, 3], np.int64))) == [0, 2, 5]
print(json.dumps([m for m in ("pycparser", "numba.np.linalg", "numba.np.polynomial",
                              "numba.misc.cffiimpl") if m in sys.modules]))
"""


def test_a_cached_kernel_loads_without_numbas_compile_registries():
    """jit_cache.load_without_refresh: a process that only loads a cached kernel and calls it
    imports none of what numba's refresh of its target context would (its linalg, polynomial
    and cffi support): the first run fills the cache, the second only loads."""
    import json
    import subprocess
    import sys

    from tests.cli_process import HANG_S, child_env
    run = lambda: subprocess.run([sys.executable, "-c", _WARM_LOAD], env=child_env(),  # noqa: E731
                                 capture_output=True, text=True, timeout=HANG_S, check=True)
    run()
    assert json.loads(run().stdout.splitlines()[-1]) == []


def test_the_source_key_is_remembered_until_a_source_changes(tmp_path):
    """jit_cache.remembered_source_key reads the sources only when one has changed: its size,
    time or inode (a file replaced whole), or the modules under PACKAGES (one added)."""
    import os

    from renderer import jit_cache
    root, base = tmp_path / "src", tmp_path / "cache"
    base.mkdir()
    for package in jit_cache.PACKAGES:
        (root / package).mkdir(parents=True)
        (root / package / "a_kernels.py").write_text("from numba import njit\nfrom .b import F\n")
    (root / "renderer" / "b.py").write_text("F = 3\n")
    key = jit_cache.remembered_source_key(base, root)
    assert key == jit_cache.source_key(root)
    note = next(base.glob("source-key-*.json"))
    text = note.read_text()
    note.write_text(text.replace(key, "remembered"))       # what a second call returns unread
    assert jit_cache.remembered_source_key(base, root) == "remembered"
    b = root / "renderer" / "b.py"
    st = b.stat()
    new = b.with_name("b.new")
    new.write_text("F = 4\n")                               # same size, same time, new inode
    os.utime(new, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(new, b)
    assert jit_cache.remembered_source_key(base, root) == jit_cache.source_key(root) != key
    key = jit_cache.remembered_source_key(base, root)
    (root / "renderer" / "c_kernels.py").write_text("import numba\n")
    assert jit_cache.remembered_source_key(base, root) == jit_cache.source_key(root) != key


def test_cache_state_is_recycled_zeroed_and_only_when_unheld():
    """A model's cache lines go back to the pool when the model is gone (memory._StatePool), the
    next model of the same caches gets them all zero, and lines someone still holds stay theirs."""
    import gc

    from renderer.memory import _STATES
    cfg = CONFIGS["with-llc"]
    _STATES._free.clear()
    first = MemoryModel(cfg, 2)
    lines = first.state.lines
    lines[:] = 7                                   # a used model's state
    held = lines
    del lines
    del first
    gc.collect()
    assert _STATES._free == []                     # `held` still refers to it: not taken back
    second = MemoryModel(cfg, 2)
    assert not np.shares_memory(second.state.lines, held) and (held == 7).all()
    mine = second.state.lines
    mine[:] = 5
    del mine                                       # (before the model: nobody else holds it)
    del second
    gc.collect()
    assert len(_STATES._free) == 1
    third = MemoryModel(cfg, 2)
    assert not third.state.lines.any()             # recycled, zeroed
    assert _STATES._free == []


def test_a_surface_only_written_passes_a_read_allocate_level_as_the_twin_counts_it():
    """A read-allocate level (the Infinity Cache) under a surface that is only ever written takes
    its write-backs as misses without a look at the set (SH_HELD: no line of the region was ever
    allocated there); every counter still matches the naive twin's, for that surface and for one
    read beside it, and the level holds none of the written surface's lines."""
    cfg = CONFIGS["with-llc"]
    mm = MemoryModel(cfg, 1)
    shift = mk.REGION_SHIFT - int(mm.state.meta[mk.M_LINE_SHIFT])
    naive = NaiveCaches(cfg, len(STREAMS), 1)
    rng = np.random.default_rng(7)
    rq = np.empty((6000, mk.R_N), np.int64)
    for i in range(len(rq)):
        # region 1 written at the ROP (its write-backs reach the LLC) and at the LLC itself,
        # region 2 read at L2
        written = i % 3 != 2
        level = (0 if i % 3 == 0 else 3) if written else 2
        line = ((1 if written else 2) << shift) + int(rng.integers(0, 3000))
        mk.request(rq, i, level, line, mk.op_code(written, 0), 0)
        naive.access(level, line, written, 0, 0, 0)
    mk.serve(*mm.state, mm.acc, mm.tile_bytes, rq, len(rq))
    levels = len(cfg.caches)
    assert list(mm.acc[mk.A_HITS, :levels]) == naive.hits
    assert list(mm.acc[mk.A_MISSES, :levels]) == naive.misses and naive.misses[3] > 1000
    assert list(mm.acc[mk.A_DRAM_WRITE, :len(STREAMS)]) == naive.dram_write
    assert list(mm.acc[mk.A_DRAM_READ, :len(STREAMS)]) == naive.dram_read
    lines, shape, _ = mm.state
    llc = lines[shape[3, mk.SH_BASE]:shape[3, mk.SH_BASE] + shape[3, mk.SH_SETS], mk.F_TAG]
    assert not ((llc >> shift) == 1).any() and ((llc >> shift) == 2).any()
