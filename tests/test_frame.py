"""The frame runner (pipelines.frame.run): one frame graph of render, compute and ray passes, its
per-pass counters adding up to the frame's totals, and the graph's rules."""
from __future__ import annotations

import numpy as np
import pytest

from pipelines import render
from pipelines.frame import Settings, run
from renderer.counters import Counters
from scenes.library import get_scene
from scenes.model import ComputePass, FrameGraph, RayPass, RenderPass, SceneError


def test_render_compute_and_ray_passes_add_up_to_the_frame():
    f = run(get_scene("postchain"), "amd-rdna2", Settings(96, 64, rays=("shadow",)))
    kinds = [p.kind for p in f.passes]
    assert kinds[0] == "render" and "compute" in kinds and kinds[-2:] == ["rays", "display"]
    assert [p.name for p in f.passes if p.kind == "compute"] == \
        [p.name for p in get_scene("postchain").compute]
    total = sum((p.counters for p in f.passes), Counters())
    assert total == f.counters
    assert f.counters.dram_bytes() == sum(p.counters.dram_bytes() for p in f.passes)
    for p in f.passes[:-1]:             # every pass reached the caches with requests of its own
        c = p.counters
        assert c["mem.cache.l2.hits"] + c["mem.cache.l2.misses"] > 0, p.name
    assert f.passes[0].counters.dram_bytes() > 0 and f.passes[-2].counters.dram_bytes() > 0
    # RDNA 2's display scans the chain's final surface out compressed: no GPU work
    shown = f.passes[-1].counters
    assert set(shown) == {"display.scanout.bytes", "display.scanout.raw"}
    assert 0 < shown["display.scanout.bytes"] < shown["display.scanout.raw"] == 96 * 64 * 4
    # the parts are what each pass's own runner counted
    assert f.passes[0].counters == f.raster.counters
    assert sum((p.counters for p in f.passes if p.kind in ("compute", "display")),
               Counters()) == f.post.counters       # the chain counts the present step too
    assert sum((p.counters for p in f.passes if p.kind == "rays"), Counters()) == f.rt.counters
    assert f.counters["rt.shadow.rays"] == f.counters["rt.rays"] > 0
    np.testing.assert_array_equal(f.image, f.post.surfaces["final"])   # what the frame presents


def test_compute_passes_meet_the_frames_caches():
    """At 96x64 every surface of the chain fits in RDNA 2's 4 MB L2: a pass reads what the pass
    before it wrote from L2, not from DRAM, and the chain's writes reach DRAM once, when the frame
    ends (its last pass). Priced on their own, the same passes read and write every surface at
    DRAM."""
    from pipelines.passes.postchain import run_graph
    f = run(get_scene("postchain"), "amd-rdna2", Settings(96, 64))
    compute = {p.name: p.counters for p in f.passes if p.kind == "compute"}
    *middle, last = compute
    for name in middle[1:]:                   # light .. blur_y read only what the chain wrote
        assert compute[name].dram_bytes("read") == 0, name
        assert compute[name]["mem.cache.l2.hits"] > 0, name
    for name in middle:
        assert compute[name].dram_bytes("write") == 0, name
    stored = compute[last].dram_bytes("write")
    raw = sum(f.counters[f"comp.surface.{s}.raw_bytes"] for s in f.post.surfaces)
    assert 0 < stored <= raw + f.counters["mem.dram.write.meta"]
    alone = run_graph(get_scene("postchain").compute, "amd-rdna2",
                      {p.kernel: (lambda s, w=tuple(p.writes): {n: f.post.surfaces[n] for n in w})
                       for p in get_scene("postchain").compute})
    for name in middle:
        assert alone.pass_counters[name].dram_bytes() > 0, name


def test_the_one_function_api_is_run():
    a = render("quad", "apple-m3", 64, 32)
    b = run("quad", "apple-m3", Settings(64, 32))
    assert a.counters == b.counters and np.array_equal(a.color, b.color)
    assert [p.kind for p in a.passes] == ["render", "display"]


def test_graph_orders_ray_passes_and_traces_primary_for_ao():
    g = get_scene("quad").graph(1, ("ao", "shadow"))
    assert [type(p) for p in g.passes] == [RenderPass, RayPass, RayPass, RayPass]
    assert [p.name for p in g.ray_passes] == ["primary", "shadow", "ao"]
    assert g.ray_passes[1].reads == ("depth",) and g.ray_passes[2].reads == ("rt.primary",)
    with pytest.raises(SceneError, match="unknown ray pass 'nope'"):
        get_scene("quad").graph(1, ("nope",))


def test_graph_rejects_passes_out_of_order_and_twice_named():
    rp = get_scene("quad").frame(1)[0]
    cp = ComputePass("blur", "blur_x", ("color",), {"out": "rgba8"})
    with pytest.raises(SceneError, match="render passes, then compute"):
        FrameGraph([RayPass("primary"), rp])
    with pytest.raises(SceneError, match="render passes, then compute"):
        FrameGraph([rp, RayPass("primary"), cp])
    with pytest.raises(SceneError, match="unique"):
        FrameGraph([rp, cp, cp])


def test_bad_settings_are_one_clear_error():
    for s, msg in ((Settings(0, 10), "out of range"), (Settings(10, 10, 2), "samples"),
                   (Settings(10, 10, frontend="nope"), "front end")):
        with pytest.raises(SceneError, match=msg):
            run("quad", "imr-baseline", s)


def test_depth_no_later_pass_reads_is_dont_care_unless_stored():
    """Depth as applications declare it (issue 24): the last pass's depth, read by nothing
    later, ends don't-care and memoryless, so a tiler never stores it and an IMR drops it at the
    end; a depth a later pass reads (the deferred scene's lighting pass) stays stored; and
    --store-depth (Settings.store_depth) keeps every declared store."""
    from scenes.model import StoreAction
    spheres, deferred = get_scene("spheres"), get_scene("deferred")
    (main,) = spheres.graph(1).render_passes
    assert main.depth.store == StoreAction.DONT_CARE and main.depth.memoryless
    gb, _ = deferred.graph(1).render_passes
    assert gb.depth.store == StoreAction.STORE and not gb.depth.memoryless
    (kept,) = spheres.graph(1, store_depth=True).render_passes
    assert kept.depth.store == StoreAction.STORE
    # shadows read the raster's depth: a frame that traces them keeps it
    (traced,) = spheres.graph(1, ("shadow",)).render_passes
    assert traced.depth.store == StoreAction.STORE
    for preset in ("apple-m3", "imr-baseline"):
        dropped = run(spheres, preset, Settings(64, 48))
        stored = run(spheres, preset, Settings(64, 48, store_depth=True))
        assert dropped.counters["mem.dram.write.depth"] == 0
        assert stored.counters["mem.dram.write.depth"] > 0
        assert np.array_equal(dropped.image, stored.image)
