"""Two-level BVHs (issue 28 point 1): hits identical to the flattened tree (and to Embree on the
flattened geometry), exact TLAS / BLAS counts on a scene whose structure is known, the TLAS's
and instances' fetches priced apart, and the ray passes' images the same either way."""
from __future__ import annotations

import numpy as np
import pytest

from pipelines.passes.raytrace import camera_rays, rt_entry_level, trace
from pipelines.presets import get_preset
from pipelines.cost.timing import INSTANCE_OPS, alu_ops
from renderer.bvh import Triangles, build_layout, make_rays, trace_rays
from renderer.bvh import traverse_kernels as tk
from renderer.bvh import two_level_kernels as tlk
from renderer.bvh.layouts import LAYOUTS
from renderer.bvh.two_level import (INSTANCE_NODE_BYTES, build_two_level, price_two_level,
                                    trace_two_level, two_level_counters)
from renderer.counters import Counters
from renderer.memory import MemoryModel
from scenes.library import get_scene
from scenes.model import Draw, Mesh, Scene

from tests.test_bvh import random_rays


@pytest.fixture(scope="module")
def spheres():
    return get_scene("spheres")


@pytest.mark.parametrize("name", LAYOUTS)
def test_instanced_spheres_hit_what_the_flat_tree_hits(spheres, name):
    """Camera rays and random rays through the scene: the same triangle (scene ids) and the
    same distance to float32 rounding (the two-level walk meets object-space corners with the
    ray moved into the instance's space; the flat tree world-space corners)."""
    two = build_two_level(spheres.draws, name)
    assert two.n_instances == 200 and len(two.tlas.blas_root) == 1     # one sphere mesh, 200 draws
    tris = Triangles.of_scene(spheres)
    flat = build_layout(tris, name)
    rays = np.concatenate([camera_rays(spheres.camera, 160, 90), random_rays(tris, 4000, 3)])
    for flags in ({}, {"cull_back": True}, {"box_sort": "largest-or-midpoint"}):
        a, _ = trace_rays(flat, rays, **flags)
        b, _, tl = trace_two_level(two, rays, **flags)
        assert np.array_equal(a.prim, b.prim), (name, flags, int((a.prim != b.prim).sum()))
        hit = a.prim >= 0
        assert hit.mean() > 0.3
        assert np.allclose(a.t[hit], b.t[hit], rtol=1e-5)
        assert tl[:, tlk.T_INSTANCES].sum() > 0
    # first hit: the same rays blocked, whatever the order (the driver's largest interval first
    # takes fewer steps)
    a, _ = trace_rays(flat, rays, any_hit=True)
    steps = {}
    for sort in ("closest", "largest-or-midpoint"):
        b, _, tl = trace_two_level(two, rays, any_hit=True, box_sort=sort)
        assert np.array_equal(a.prim >= 0, b.prim >= 0), sort
        steps[sort] = b.counts[:, tk.C_STEPS].sum()
    assert steps["largest-or-midpoint"] != steps["closest"]


def test_first_hit_is_never_farther_than_allowed(spheres):
    """Terminate-on-first-hit returns a hit where closest-hit does, within the same [tmin, tmax],
    never a miss where there is a hit and never past tmax."""
    two = build_two_level(spheres.draws, "bvh4")
    rays = random_rays(Triangles.of_scene(spheres), 3000, 5)
    close, _, _ = trace_two_level(two, rays)
    first, _, _ = trace_two_level(two, rays, any_hit=True)
    assert np.array_equal(close.prim >= 0, first.prim >= 0)
    hit = close.prim >= 0
    assert (first.t[hit] >= close.t[hit]).all() and (first.t[hit] <= rays[hit, tk.R_TMAX]).all()


def test_two_level_agrees_with_embree_on_the_flattened_geometry(spheres):
    embreex = pytest.importorskip("embreex")    # noqa: F841
    from tests.test_raytrace import embree_hits
    tris = Triangles.of_scene(spheres)
    rays = camera_rays(spheres.camera, 192, 108)
    rays[:, 3], rays[:, 7] = 0.0, np.inf
    ours, _, _ = trace_two_level(build_two_level(spheres.draws, "bvh8"), rays)
    prim, t = embree_hits(tris, rays)
    both = (ours.prim >= 0) & (prim >= 0)
    tie = both & (ours.prim != prim) & (np.abs(ours.t - t) <= 1e-5 * np.abs(t))
    agree = ((ours.prim >= 0) == (prim >= 0)) & (~both | (ours.prim == prim) | tie)
    assert agree.mean() >= 0.9999, int((~agree).sum())
    assert both.mean() > 0.3


def test_threads_share_the_rays_and_change_nothing(spheres):
    """The traversal's threads take runs of chunks (trace_kernels.run_length, at most RUN) from a
    shared cursor: every ray is traced once, and what it gives does not depend on the thread or
    the run. The whole batch on one thread and on all must equal the rays traced a hundred at a
    time (one run each), for the flat bvh8 (its fast kernel) and bvh4 and the two-level bvh8."""
    import numba
    from renderer.bvh.trace_kernels import RUN
    from renderer.bvh.traverse import CHUNK
    tris = Triangles.of_scene(spheres)
    rays = np.concatenate([camera_rays(spheres.camera, 160, 90), random_rays(tris, 4000, 7)])
    assert len(rays) > 3 * RUN * CHUNK            # several runs for the cursor to hand out
    flat8, flat4 = build_layout(tris, "bvh8"), build_layout(tris, "bvh4")
    two = build_two_level(spheres.draws, "bvh8")
    tracers = {"bvh8": lambda r: trace_rays(flat8, r)[0], "bvh4": lambda r: trace_rays(flat4, r)[0],
               "two-level": lambda r: trace_two_level(two, r)[0]}
    threads = numba.get_num_threads()
    try:
        for name, trace_of in tracers.items():
            parts = [trace_of(rays[i:i + 100]) for i in range(0, len(rays), 100)]
            want = [np.concatenate([getattr(p, f) for p in parts]) for f in ("prim", "t", "counts")]
            assert (want[0] >= 0).mean() > 0.3
            for k in sorted({1, threads}):
                numba.set_num_threads(k)
                got = trace_of(rays)
                for f, w in zip(("prim", "t", "counts"), want):
                    assert np.array_equal(getattr(got, f), w), (name, k, f)
    finally:
        numba.set_num_threads(threads)


def two_triangles_scene(dx: float) -> Scene:
    """One triangle mesh drawn twice: at z = 1 and, moved by dx in x and scaled 2x, at z = 2,
    both facing a ray from the origin along +z."""
    mesh = Mesh("tri", positions=np.array([[-0.5, -0.5, 0], [0.5, -0.5, 0], [0, 0.5, 0]], np.float32),
                indices=np.array([[0, 1, 2]], np.uint32))
    near, far = np.eye(4), np.diag([2.0, 2.0, 2.0, 1.0])
    near[2, 3] = 1.0
    far[:3, 3] = [dx, 0.0, 2.0]
    base = get_scene("triangle")
    return Scene("two", "one mesh drawn twice", [Draw(mesh, base.draws[0].material, world_from_object=near),
                         Draw(mesh, base.draws[0].material, world_from_object=far)],
                 base.camera, base.light)


RAY = make_rays([[0.0, 0.0, 0.0]], [[0.0, 0.0, 1.0]])


@pytest.mark.parametrize("record", [False, True])
def test_known_scene_counts_exactly(record):
    """bvh4, two instances of a one-triangle BLAS (a box node of one triangle child): the TLAS
    root holds both instances; the ray tests both boxes (2 box tests), enters the near instance
    (one ray transform, one instance node), walks its BLAS (the box node, the triangle: 2 steps),
    hits at t = 1, then pops the far instance's entry (t = 2, behind the hit) and drops it."""
    two = build_two_level(two_triangles_scene(0.0).draws, "bvh4")
    assert len(two.tlas.blas_root) == 1 and two.n_instances == 2 and len(two.tlas.child) == 1
    hits, rec, tl = trace_two_level(two, RAY, record=record)
    assert hits.prim[0] == 0 and hits.t[0] == pytest.approx(1.0)
    assert list(tl[0]) == [1, 1, 2, 1, 0, 0]      # T_STEPS, NODES, TESTS, INSTANCES, REFETCH, PARENT
    c = hits.counts[0]
    assert (c[tk.C_STEPS], c[tk.C_BOX_NODES], c[tk.C_LEAF_NODES], c[tk.C_PUSHES], c[tk.C_POPS]) == (3, 1, 1, 1, 1)
    if record:
        assert list(rec >> tk.REC_SHIFT) == [tk.REC_TLAS, tk.REC_INSTANCE, tk.REC_NODE, tk.REC_TRI]
    # the draws in the other order: the same walk, the hit named by its draw's scene id
    two = build_two_level(two_triangles_scene(0.0).draws[::-1], "bvh4")
    hits, _, tl = trace_two_level(two, RAY)
    assert hits.prim[0] == 1 and tl[0, tlk.T_INSTANCES] == 1
    # counters and bytes
    c = two_level_counters(two, hits, tl)
    assert c["rt.tlas.steps"] == 1 and c["rt.instances"] == 1
    assert c["rt.bytes.tlas"] == two.tlas_node_bytes == 128
    assert c["rt.bytes.instance"] == INSTANCE_NODE_BYTES
    assert c["rt.steps"] == 3 and c["rt.nodes.box"] == 1


def test_entering_an_instance_whose_triangle_is_missed():
    """The near instance moved so that its box (world, scaled) still holds the ray but its
    triangle does not: both instances are entered, the far one's triangle is the hit."""
    scene = two_triangles_scene(0.0)
    # shear the near instance's triangle off the ray inside its own box: move it in x by 0.45,
    # the ray at x = 0 passes its box (x in [-0.05, 0.95]) and misses the triangle's slanted edge
    scene.draws[0].world_from_object[0, 3] = 0.45
    two = build_two_level(scene.draws, "bvh4")
    hits, _, tl = trace_two_level(two, RAY)
    assert hits.prim[0] == 1 and hits.t[0] == pytest.approx(2.0)
    assert tl[0, tlk.T_INSTANCES] == 2
    flat, _ = trace_rays(build_layout(Triangles.of_scene(scene), "bvh4"), RAY)
    assert flat.prim[0] == 1


def test_tlas_and_instance_fetches_priced_apart(spheres):
    """Every TLAS node and instance node the walk fetched reaches the memory model as stream
    bvh_tlas; BLAS nodes and triangles as bvh_node / bvh_leaf; a TLAS record per TLAS step."""
    preset = get_preset("amd-rdna3")
    two = build_two_level(spheres.draws, "bvh4")
    rays = camera_rays(spheres.camera, 64, 36)
    hits, rec, tl = trace_two_level(two, rays, record=True)
    kinds = rec >> tk.REC_SHIFT
    assert (kinds == tk.REC_TLAS).sum() == tl[:, tlk.T_STEPS].sum()
    assert (kinds == tk.REC_INSTANCE).sum() == tl[:, tlk.T_INSTANCES].sum()
    mm = MemoryModel(preset.memory_config(), 1)
    price_two_level(two, rec, mm, rt_entry_level(mm, preset))
    tlas_bytes = mm.dram_bytes("read", "bvh_tlas")
    assert 0 < tlas_bytes
    assert mm.dram_bytes("read", "bvh_node") > 0 and mm.dram_bytes("read", "bvh_leaf") > 0


@pytest.mark.parametrize("preset", ["amd-rdna3", "amd-rdna4", "apple-m3"])
def test_ray_passes_see_the_same_either_way(spheres, preset):
    """The frame's ray passes on instanced spheres: images equal, flat or two-level; the
    two-level one counts TLAS steps and instances, takes far less memory than the flattened
    tree, and where the shader transforms the ray (RDNA 2/3, M3) its ALU ops are charged."""
    flat = trace(spheres, preset, 96, 54, bvh="flat", ao_samples=2)
    two = trace(spheres, preset, 96, 54, bvh="two-level", ao_samples=2)
    assert flat.bvh == "flat" and two.bvh == "two-level"
    for k in ("primary", "shadow", "ao"):
        assert np.array_equal(flat.images[k], two.images[k]), k
    c = two.counters
    assert c["rt.tlas.steps"] > 0 and c["rt.instances"] > 0 and c["rt.dram_read.bvh_tlas"] > 0
    assert c["rt.primary.tlas.steps"] + c["rt.shadow.tlas.steps"] + c["rt.ao.tlas.steps"] == c["rt.tlas.steps"]
    assert "rt.tlas.steps" not in flat.counters
    b = two.bvh_bytes
    assert b["blas"] + b["tlas"] + b["instances"] < b["flat"] / 20
    p = get_preset(preset)
    with_xf, _ = alu_ops(c, p)
    without, _ = alu_ops(Counters({k: v for k, v in c.items() if k != "rt.instances"}), p)
    in_shader = not p.rt.rt_instance_xform_in_hw.value
    assert with_xf - without == (c["rt.instances"] * INSTANCE_OPS if in_shader else 0)
    # auto: spheres draws one mesh 200 times, so it is two-level
    assert trace(spheres, preset, 32, 18, rays="primary", memory=False).bvh == "two-level"


def test_alpha_tested_leaves_through_blases():
    """foliage's alpha-tested leaves run their any-hit in their BLAS (object space, the uv at
    the hit): the shadow image is the flat tree's. (How many any-hits run depends on the order
    the candidates are met in, which differs between the trees.)"""
    scene = get_scene("foliage")
    flat = trace(scene, "amd-rdna3", 96, 54, rays="shadow", bvh="flat")
    two = trace(scene, "amd-rdna3", 96, 54, rays="shadow", bvh="two-level")
    assert np.array_equal(flat.images["shadow"], two.images["shadow"])
    for r in (flat, two):
        assert r.counters["rt.shadow.anyhit"] > r.counters["rt.shadow.anyhit.ignored"] > 0


@pytest.mark.parametrize("name", LAYOUTS)
def test_merged_blases_walk_from_their_roots(name):
    """Three meshes' BLASes merged into one layout (every index moved by the parts before it),
    each walked from its own root: the hits are the flat tree's, and every BLAS has some."""
    draws = [get_scene(s).draws[0] for s in ("bunny", "teapot", "quad")]
    two = build_two_level(draws, name)
    assert list(two.tlas.blas_root) == [0, *np.cumsum([len(build_layout(Triangles.of_draws([d]), name).nodes)
                                                       for d in draws[:2]])]
    tris = Triangles.of_draws(draws)
    rays = np.concatenate([random_rays(Triangles.of_draws([d]), 1500, k) for k, d in enumerate(draws)])
    flat, _ = trace_rays(build_layout(tris, name), rays)
    ours, _, _ = trace_two_level(two, rays)
    assert np.array_equal(flat.prim, ours.prim)
    starts = np.cumsum([0] + [d.mesh.n_triangles for d in draws])
    assert all(((ours.prim >= a) & (ours.prim < b)).any() for a, b in zip(starts[:-1], starts[1:]))


def test_report_shows_the_two_levels(tmp_path, capsys):
    """`tilesim report spheres --rt`: the JSON rows say two-level, carry the structure's bytes
    against the flattened tree and the TLAS steps per ray, and validate against the schema; the
    table says how much less the two-level BVH takes."""
    import json

    import jsonschema

    from pipelines.commands import cli
    from pipelines.commands.report import SCHEMA_PATH
    path = tmp_path / "r.json"
    assert cli.main(["report", "spheres", "--rt", "primary", "--preset", "amd-rdna3", "--res",
                     "64x36", "-q", "-o", str(path)]) == 0
    doc = json.loads(path.read_text())
    jsonschema.validate(doc, json.loads(SCHEMA_PATH.read_text()))
    row = doc["rows"][0]
    assert row["rt.bvh"] == "two-level"
    assert row["rt.bvh_bytes.flat"] > 20 * (row["rt.bvh_bytes.blas"] + row["rt.bvh_bytes.tlas"]
                                           + row["rt.bvh_bytes.instances"])
    assert 0 < row["rt.primary.tlas_steps_per_ray"] < row["rt.primary.steps_per_ray"]
    capsys.readouterr()
    assert cli.main(["report", "spheres", "--rt", "primary", "--preset", "amd-rdna3", "--res",
                     "64x36", "-q", "--bvh", "flat"]) == 0
    flat = capsys.readouterr().out
    assert cli.main(["report", "spheres", "--rt", "primary", "--preset", "amd-rdna3", "--res",
                     "64x36", "-q"]) == 0
    two = capsys.readouterr().out
    assert "two-level BVH" in two and "less" in two and "two-level BVH" not in flat


def test_a_flattened_instance_is_one_clear_error():
    """A draw scaled to nothing on an axis has no space to move rays into: two-level says so (a
    SceneError, one line), auto traces the flat tree."""
    from pipelines.passes.raytrace import bvh_form
    from scenes.model import SceneError
    scene = two_triangles_scene(0.0)
    scene.draws[1].world_from_object[2, 2] = 0.0
    with pytest.raises(SceneError, match="singular"):
        build_two_level(scene.draws, "bvh4")
    assert bvh_form(scene) == "flat"
    assert bvh_form(two_triangles_scene(0.0)) == "two-level"
