"""The traversal stack's traffic (issue 28 point 3): pushes, pops, spills and fills counted
exactly on a tree whose shape is known, recorded in order for the memory model, and invariant
where they must be on real scenes."""
from __future__ import annotations

import numpy as np
import pytest

from renderer.bvh import Triangles, build_bvh2, collapse, make_rays, trace_rays
from renderer.bvh.layouts import bvh4_layout, bvh8_layout
from renderer.bvh import traverse_kernels as tk
from renderer.bvh.traverse import cost_counters
from renderer.memory import MemoryModel
from scenes.library import get_scene

from tests.test_bvh import random_rays


def row_of_four():
    """Four small triangles on the z axis at z = 1, 2, 3, 4; with one triangle per leaf the
    BVH4 (and the BVH8 of one-triangle primitive nodes) is a root of four triangle children.
    Returns the two layouts."""
    tri = np.array([[-0.1, -0.1, 0], [0.1, -0.1, 0], [0, 0.1, 0]], np.float32)
    tris = Triangles.of_array(np.stack([tri + np.float32([0, 0, z]) for z in (1, 2, 3, 4)]))
    b = build_bvh2(tris, 1)
    lays = [bvh4_layout(collapse(b, 4)), bvh8_layout(collapse(b, 8))]
    for lay in lays:
        assert len(lay.nodes) == 1        # the root alone: its children are the triangles
    return lays


RAY = make_rays([[0.0, 0.0, 0.0]], [[0.0, 0.0, 1.0]])


@pytest.mark.parametrize("record", [False, True])
def test_known_tree_pushes_and_pops_exactly(record):
    for lay in row_of_four():
        # closest hit: the root keeps all four, pushes the three behind the nearest (far
        # first), hits z = 1, then pops the three and drops them (behind the hit)
        c = trace_rays(lay, RAY, record=record)[0].counts[0]
        assert (c[tk.C_PUSHES], c[tk.C_POPS], c[tk.C_SPILLS], c[tk.C_FILLS]) == (3, 3, 0, 0), lay.name
        # first hit: the same pushes, no pop (the ray ends at z = 1)
        c = trace_rays(lay, RAY, any_hit=True, record=record)[0].counts[0]
        assert (c[tk.C_PUSHES], c[tk.C_POPS]) == (3, 0)
        # one entry on chip, spilling: the second and third pushes spill (slots 0, 1), the
        # first pop is on chip, the next two fill from memory (slots 1, 0)
        hits, rec = trace_rays(lay, RAY, stack=1, spill=True, record=record)
        c = hits.counts[0]
        assert (c[tk.C_PUSHES], c[tk.C_POPS], c[tk.C_SPILLS], c[tk.C_FILLS]) == (3, 3, 2, 2)
        assert hits.prim[0] == 0 and c[tk.C_OVERFLOWS] == 0
        if record:
            kinds = rec >> tk.REC_SHIFT
            slots = rec[kinds >= tk.REC_SPILL] & ((1 << tk.REC_SHIFT) - 1)
            assert list(kinds[kinds >= tk.REC_SPILL]) == [tk.REC_SPILL] * 2 + [tk.REC_FILL] * 2
            assert list(slots) == [0, 1, 1, 0]
        # the ring of one entry instead: two overwritten, a restart through the parent links
        c = trace_rays(lay, RAY, stack=1, record=record)[0].counts[0]
        assert c[tk.C_OVERFLOWS] == 2 and c[tk.C_SPILLS] == 0


def test_on_chip_bytes_and_spills_through_the_caches():
    lay = row_of_four()[0]
    hits, rec = trace_rays(lay, RAY, stack=1, spill=True, record=True)
    assert cost_counters(lay, hits, stack_entry_bytes=8)["rt.stack.onchip_bytes"] == (3 + 3 - 2) * 8
    from pipelines.presets import get_preset
    from renderer.bvh.traverse import price
    mm = MemoryModel(get_preset("apple-m3").memory_config(), 1)
    price(lay, rec, mm, mm.level("l2"), 4)
    c = mm.counters()
    assert c["mem.onchip.write.rt_stack"] > 0 and c["mem.onchip.read.rt_stack"] > 0


def test_spilling_finds_what_an_unbounded_ring_finds():
    """On a real scene: a stack that spills never loses an entry, so its hits, steps and pushes
    are those of a ring too deep to overflow; a closest-hit ray ends with its stack empty, so it
    pops what it pushed and fills what it spilled; nothing spills where the on-chip part is
    deep enough."""
    tris = Triangles.of_scene(get_scene("bunny"))
    rays = random_rays(tris, 2000, 3)
    b = build_bvh2(tris, 1)
    for lay in (bvh4_layout(collapse(b, 4)), bvh8_layout(collapse(b, 8))):
        deep = trace_rays(lay, rays, stack=tk.SPILL_SLOTS - 1)[0]
        assert deep.counts[:, tk.C_OVERFLOWS].sum() == 0
        for k in (1, 2, 4):
            sp = trace_rays(lay, rays, stack=k, spill=True)[0]
            assert np.array_equal(sp.prim, deep.prim) and np.array_equal(sp.t, deep.t)
            for col in (tk.C_STEPS, tk.C_PUSHES, tk.C_POPS):
                assert np.array_equal(sp.counts[:, col], deep.counts[:, col]), (lay.name, k, col)
            assert np.array_equal(sp.counts[:, tk.C_PUSHES], sp.counts[:, tk.C_POPS])
            assert np.array_equal(sp.counts[:, tk.C_SPILLS], sp.counts[:, tk.C_FILLS])
            assert sp.counts[:, tk.C_SPILLS].sum() > 0
        assert trace_rays(lay, rays, stack=64, spill=True)[0].counts[:, tk.C_SPILLS].sum() == 0
    with pytest.raises(ValueError, match="fewer than"):
        trace_rays(lay, rays, stack=tk.SPILL_SLOTS, spill=True)
