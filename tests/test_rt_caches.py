"""The ray unit's caches (issue 28.4) and ray order (28.5): the RT L0/L1 levels against a slow
dict-LRU twin on recorded fetch streams, what they save against fetches entering at L2, the
preset checks, and sorted secondary rays giving the pixel order's images and counts."""
from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

from pipelines.passes.raytrace import RAY_ORDERS, ao_rays, camera_rays, coherent_order, layout_for, \
    rt_entry_level, trace
from pipelines.presets import Param, PresetError, get_preset
from pipelines.presets.keys import apply_sets
from renderer.bvh import Triangles, price, trace_rays
from renderer.bvh.traverse import PARENT_LINK_BYTES
from renderer.bvh.traverse_kernels import REC_PARENT, REC_SHIFT
from renderer.memory import CacheConfig, MemoryConfig, MemoryModel
from scenes.library import get_scene

W, H = 48, 27


def _stream(scene: str, preset_name: str):
    """A recorded fetch stream of AO rays (incoherent: they use the caches) from primary hits."""
    scene_, preset = get_scene(scene), get_preset(preset_name)
    layout = layout_for(scene_, preset)
    cr = camera_rays(scene_.camera, W, H)
    hits, _ = trace_rays(layout, cr, cull_back=True)
    hit = hits.prim >= 0
    p = cr[hit, 0:3].astype(np.float64) + hits.t[hit, None] * cr[hit, 4:7].astype(np.float64)
    tris = Triangles.of_scene(scene_)
    v = tris.v[hits.prim[hit]].astype(np.float64)
    n = np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0])
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    n *= np.where((n * cr[hit, 4:7]).sum(axis=1, keepdims=True) > 0, -1.0, 1.0)
    diag = float(np.linalg.norm(tris.v.reshape(-1, 3).max(0) - tris.v.reshape(-1, 3).min(0)))
    rays = ao_rays(p, n, 2, 0.1 * diag, 1e-4 * diag, 0)
    _, fetches = trace_rays(layout, rays, any_hit=True, record=True)
    return preset, layout, fetches


def _lines(mm: MemoryModel, layout, fetches) -> list[int]:
    """The line numbers price() asks for, decoded in Python (traverse_kernels.replay's rule)."""
    base = [mm.address(mm.region(("bvh_node", layout.name, id(layout.nodes)))),
            mm.address(mm.region(("bvh_leaf", layout.name, id(layout.tris)))),
            mm.address(mm.region(("bvh_parent", layout.name, id(layout.node_parent)))),
            mm.address(mm.region(("bvh_tri_parent", layout.name, id(layout.tri_parent))))]
    leaf = layout.tris.dtype.itemsize
    stride = [layout.nodes.dtype.itemsize, leaf, PARENT_LINK_BYTES, PARENT_LINK_BYTES]
    size = [layout.fetch_bytes, leaf, PARENT_LINK_BYTES, PARENT_LINK_BYTES]
    shift = mm.config.line_bytes.bit_length() - 1
    out = []
    for f in fetches.tolist():
        kind, idx = f >> REC_SHIFT, f & ((1 << REC_SHIFT) - 1)
        if kind == REC_PARENT:
            kind, idx = REC_PARENT + (idx & 1), idx >> 1
        first = base[kind] + idx * stride[kind]
        out.extend(range(first >> shift, ((first + size[kind] - 1) >> shift) + 1))
    return out


def _twin(lines: list[int], levels: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The slow twin: set-associative LRU read caches, one OrderedDict per set; level i misses to
    level i + 1. levels: (sets, ways) top first. Returns (hits, misses) per level."""
    sets = [[OrderedDict() for _ in range(n)] for n, _ in levels]
    counts = [[0, 0] for _ in levels]
    for line in lines:
        for i, (n, ways) in enumerate(levels):
            s = sets[i][line % n]
            if line in s:
                s.move_to_end(line)
                counts[i][0] += 1
                break
            counts[i][1] += 1
            if len(s) == ways:
                s.popitem(last=False)
            s[line] = True
    return [tuple(c) for c in counts]


@pytest.mark.parametrize("preset_name", ["amd-rdna2", "amd-rdna3", "amd-rdna4", "apple-m3"])
def test_rt_caches_match_their_slow_twin(preset_name):
    preset, layout, fetches = _stream("teapot", preset_name)
    mm = MemoryModel(preset.memory_config(), 1)
    level = rt_entry_level(mm, preset)
    price(layout, fetches, mm, level)
    names = ["rt_l0", "rt_l1", "l2"] if preset.rt.rt_l1_bytes is not None else ["rt_l0", "l2"]
    configs = [mm.config.caches[mm.level(n)] for n in names]
    lb = mm.config.line_bytes
    want = _twin(_lines(mm, layout, fetches), [(c.n_sets(lb), c.ways) for c in configs])
    c = mm.counters()
    got = [(c[f"mem.cache.{n}.hits"], c[f"mem.cache.{n}.misses"]) for n in names]
    assert got == want
    assert want[0][0] > 0 and want[0][1] > 0          # the stream exercises hits and misses


@pytest.mark.parametrize("preset_name", ["amd-rdna2", "amd-rdna3", "amd-rdna4", "apple-m3"])
def test_rt_caches_never_add_dram_bytes(preset_name):
    preset, layout, fetches = _stream("teapot", preset_name)
    bare = MemoryModel(preset.memory_config(), 1)
    price(layout, fetches, bare, bare.level("l2"))
    cached = MemoryModel(preset.memory_config(), 1)
    price(layout, fetches, cached, rt_entry_level(cached, preset))
    for s in ("bvh_node", "bvh_leaf"):
        assert cached.dram_bytes("read", s) <= bare.dram_bytes("read", s)
    c, b = cached.counters(), bare.counters()
    assert c["mem.cache.l2.hits"] + c["mem.cache.l2.misses"] < b["mem.cache.l2.hits"] + b["mem.cache.l2.misses"]


def test_added_levels_keep_the_models_own():
    """add_levels keeps every level's index, lines and counts (the raster's figures)."""
    preset = get_preset("amd-rdna3")
    mm = MemoryModel(preset.memory_config(), 1)
    mm.write_linear(mm.level("l2"), mm.region("meta"), 1 << 16, "meta")
    before, lines = mm.counters(), mm.state.lines.copy()
    rt_entry_level(mm, preset)
    after = mm.counters()
    assert {k: v for k, v in after.items() if "rt_l" not in k} == before
    assert after["mem.cache.rt_l0.hits"] == after["mem.cache.rt_l1.misses"] == 0
    assert (mm.state.lines[:len(lines), :, :lines.shape[2]] == lines).all()
    assert [c.name for c in mm.config.caches][-2:] == ["rt_l0", "rt_l1"]
    assert mm.level("l2") == 2
    assert rt_entry_level(mm, preset) == mm.level("rt_l0")     # added once


def test_only_read_only_levels_miss_upward():
    line = 128
    l2, up = CacheConfig("l2", 1 << 16, 4), CacheConfig("up", 4096, 4)
    with pytest.raises(ValueError, match="later level"):
        MemoryConfig(line, (l2, up), (-1, 0))
    MemoryConfig(line, (l2, CacheConfig("up", 4096, 4, read_only=True)), (-1, 0))
    with pytest.raises(ValueError, match="read-only"):   # a writing level into a read-only one
        MemoryConfig(line, (up, CacheConfig("ro", 4096, 4, read_only=True), l2), (1, 2, -1))


@pytest.mark.parametrize("changes, message", [
    ({"rt_l0_bytes": Param(0, "test", "user")}, "positive"),
    ({"rt_l0_bytes": Param(24 * 1024, "test", "user")}, "not a power of two"),
    ({"rt_l1_ways": Param(3, "test", "user")}, "whole number of sets"),
    ({"rt_l1_bytes": None}, "together"),
    ({"rt_l0_bytes": None, "rt_l0_ways": None}, "needs its L0"),
])
def test_bad_rt_caches_are_preset_errors(changes, message):
    preset = get_preset("amd-rdna3").with_params(**changes)
    with pytest.raises(PresetError, match=message):
        trace("triangle", preset, 8, 8, rays="primary")


@pytest.mark.parametrize("sets, message", [
    ([("rt.l0_size", "24KiB")], "not a power of two"),
    ([("rt.l0_size", "0")], "out of range"),
    ([("rt.l1_ways", "0")], "out of range"),
])
def test_bad_rt_cache_keys(sets, message):
    with pytest.raises(PresetError, match=message):
        apply_sets(get_preset("amd-rdna3"), sets)


def test_rdna4_adds_an_l1_with_its_ways():
    with pytest.raises(PresetError, match="together"):
        apply_sets(get_preset("amd-rdna4"), [("rt.l1_size", "256KiB")])
    p = apply_sets(get_preset("amd-rdna4"), [("rt.l1_size", "256KiB"), ("rt.l1_ways", "16")])
    assert [c.name for c in p.rt.caches(128)] == ["rt_l0", "rt_l1"]


def test_coherent_order_is_a_stable_morton_then_octant_sort():
    lo, hi = np.zeros(3), np.ones(3)
    o = np.array([[0.9, 0.9, 0.9], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.5, 0.0, 0.0]])
    d = np.array([[1, 1, 1], [-1, 1, 1], [1, 1, 1], [1, 1, 1.0], [1, 1, 1]])
    rays = np.zeros((5, 8), np.float32)
    rays[:, 0:3], rays[:, 4:7] = o, d
    # cell (0,0,0) first; in it octant 0 (rays 2, 3 in their order) before x<0 (ray 1, octant 4);
    # then (32,0,0) (Morton 2^17), then (57,57,57)
    assert coherent_order(rays, lo, hi).tolist() == [2, 3, 1, 4, 0]


@pytest.fixture(scope="module")
def both_orders():
    depth = trace("teapot", "amd-rdna3", W, H, rays="primary").images["depth"]
    return {o: trace("teapot", "amd-rdna3", W, H, depth=depth, ray_order=o, ao_samples=2)
            for o in RAY_ORDERS}


def test_sorted_rays_give_the_pixel_orders_images_and_counts(both_orders):
    a, b = both_orders["pixel"], both_orders["sorted"]
    assert a.images.keys() == b.images.keys()
    for k in a.images:
        assert np.array_equal(a.images[k], b.images[k]), k
    for k in a.pixel_maps:
        assert np.array_equal(a.pixel_maps[k], b.pixel_maps[k]), k
    for k in a.counters:
        if k.startswith("rt.") and ".cache." not in k and ".dram_read." not in k:
            assert a.counters[k] == b.counters[k], k
    for p in ("primary",):        # primary rays are traced in pixel order either way
        for lv in ("l0", "l1", "l2"):
            assert a.counters[f"rt.{p}.cache.{lv}.hits"] == b.counters[f"rt.{p}.cache.{lv}.hits"]


def test_rt_cache_counters_chain(both_orders):
    """Each level is asked for what the level above missed; bytes are lookups x line."""
    for rt in both_orders.values():
        c = rt.counters
        for p in ("primary", "shadow", "ao"):
            assert c[f"rt.{p}.cache.l1.hits"] + c[f"rt.{p}.cache.l1.misses"] == c[f"rt.{p}.cache.l0.misses"]
            assert c[f"rt.{p}.cache.l2.hits"] + c[f"rt.{p}.cache.l2.misses"] == c[f"rt.{p}.cache.l1.misses"]
            assert c[f"rt.{p}.cache.l0.bytes"] == 128 * (c[f"rt.{p}.cache.l0.hits"] + c[f"rt.{p}.cache.l0.misses"])
            assert c[f"rt.{p}.cache.l0.bytes"] >= c[f"rt.{p}.bytes.node"] + c[f"rt.{p}.bytes.leaf"]
        rows = {r["pass"]: r for r in rt.summary()}
        assert 0 < rows["ao"]["l0_hit_rate"] < 1 and rows["ao"]["order"] == rt.ray_order


def test_unknown_ray_order():
    from scenes.model import SceneError
    with pytest.raises(SceneError, match="ray order"):
        trace("triangle", "amd-rdna3", 8, 8, rays="shadow", ray_order="zigzag")
