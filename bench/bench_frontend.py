"""Geometry front ends, issue 5's closing figures (a script, not a test):

1. NGG shader culling: the share of primitives culled before the rasterizer on sponza, dragon
   and spheres (the seed says 30-70% in dense scenes, seed 000 L1002), and whether the cull
   paid for itself: in ALU ops (its cost per primitive against the vertex work it saved; the
   break-even cost per primitive is printed, since the 32 ops/prim of amd-rdna2 is assumed
   and RDNA 3 culls in fixed function), in index + vertex DRAM bytes, and in primitives that
   reach the rasterizer; a full-screen layer scene shows it losing.
2. ACMR (vertices shaded per triangle) of the legacy post-transform cache against mesh
   shading on dragon and bunny, with the index buffers as loaded and reordered for locality.
3. Meshlet size: under 32 primitives, 64-128, and near the export budget (seed 000 L1265,
   L1275; Apple's 16 KB, seed 004 L1123). The renderer's meshlets keep submission order (scan
   builder); the clustering builder's columns show what reordering the triangles would reuse.

    python bench/bench_frontend.py [--res 1920x1080]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from pipelines import render  # noqa: E402
from pipelines.presets import get_preset  # noqa: E402
from renderer.frontend import acmr, front_end  # noqa: E402
from renderer.frontend.mesh import export_bytes  # noqa: E402
from renderer.frontend.meshlets import build, meshlets_of  # noqa: E402
from scenes.library import get_scene  # noqa: E402

WAVE = 32     # RDNA wave32: a meshlet's threads are max(vertices, primitives) lanes


def ngg_table(w: int, h: int) -> Table:
    t = Table(title=f"NGG shader culling on amd-rdna2 ({w}x{h}): culled before the rasterizer, "
                    "and whether it paid")
    for col in ("scene", "prims in", "culled", "of which small", "small, bbox filter", "VS ALU legacy", "VS ALU ngg",
                "break-even cull ops/prim", "cull ALU (32/prim)", "ALU net", "idx+vtx MB legacy",
                "idx+vtx MB ngg", "to rasterizer legacy", "to rasterizer ngg"):
        t.add_column(col, justify="right")
    for name in ("sponza", "dragon", "spheres", "overdraw:8:btf"):
        a = render(name, "amd-rdna2", w, h, frontend="legacy").counters
        b = render(name, "amd-rdna2", w, h, frontend="ngg").counters
        culled = sum(b[f"geom.prims_culled.{r}"] for r in ("backface", "zero_area", "frustum", "small"))
        saved = a["geom.vs_alu_ops"] - b["geom.vs_alu_ops"]
        net = b["geom.vs_alu_ops"] + b["geom.cull_alu_ops"] - a["geom.vs_alu_ops"]
        mb = lambda c: (c.dram_bytes(stream="index") + c.dram_bytes(stream="vertex")) / 1e6  # noqa: E731
        t.add_row(name, f"{b['geom.prims_in']:,}", f"{100 * culled / b['geom.prims_in']:.0f}%",
                  f"{100 * b['geom.prims_culled.small'] / b['geom.prims_in']:.0f}%",
                  f"{100 * b['geom.ngg.small_bbox'] / b['geom.prims_in']:.0f}%",
                  f"{a['geom.vs_alu_ops'] / 1e6:.2f}M", f"{b['geom.vs_alu_ops'] / 1e6:.2f}M",
                  f"{saved / b['geom.prims_in']:.1f}", f"{b['geom.cull_alu_ops'] / 1e6:.2f}M",
                  f"{net / 1e6:+.2f}M ({100 * net / max(a['geom.vs_alu_ops'], 1):+.0f}%)",
                  f"{mb(a):.2f}", f"{mb(b):.2f}", f"{a['geom.setup_triangles']:,}",
                  f"{b['geom.setup_triangles']:,}")
    return t


def reordered(scene):
    """The scene with each mesh's triangles in clustered-meshlet order (64 / 126): an asset-time
    reorder for locality that every front end then sees, so images stay identical."""
    import dataclasses

    from scenes.model import Draw, Mesh
    draws = []
    for d in scene.draws:
        m = d.mesh
        order = build(m.positions, m.indices, 64, 126, "cluster").order
        mesh = Mesh(m.name + ".reordered", m.positions, m.indices[order], m.normals, m.uvs)
        draws.append(Draw(mesh, d.material, d.world_from_object, d.state))
    return dataclasses.replace(scene, draws=draws)


def acmr_table(w: int, h: int) -> Table:
    t = Table(title=f"ACMR (vertices shaded per input triangle), {w}x{h}; mesh: 64 vertices / "
                    "126 primitives, cone and frustum culling on")
    for col in ("scene", "index order", "triangles", "legacy PTC 16", "legacy PTC 32",
                "ngg (128/128)", "mesh", "mesh, duplicated vertices", "mesh, meshlets culled",
                "mesh, all shaded"):
        t.add_column(col, justify="right")
    base = get_preset("amd-rdna2").frontend.as_dict()
    for name in ("dragon", "bunny"):
        for label, s in (("as loaded", get_scene(name)), ("clustered", reordered(get_scene(name)))):
            run = lambda f, **kw: front_end(s.draws, s.camera, w, h, 1, {**base, **kw}, f).counters  # noqa: E731
            m = run("mesh")
            ml = meshlets_of(s.draws[0].mesh, 64, 126)
            t.add_row(name, label, f"{m['geom.prims_in']:,}", f"{acmr(run('legacy', ptc_entries=16)):.3f}",
                      f"{acmr(run('legacy', ptc_entries=32)):.3f}", f"{acmr(run('ngg')):.3f}",
                      f"{acmr(m):.3f}", f"{m['geom.mesh.duplicated_vertices']:,}",
                      f"{m['geom.meshlets_culled.cone'] + m['geom.meshlets_culled.frustum']:,} of {m['geom.meshlets']:,}",
                      f"{ml.vertex_counts().sum() / m['geom.prims_in']:.3f}")
    return t


def sweep_table(w: int, h: int) -> Table:
    t = Table(title=f"Meshlet size on dragon ({w}x{h}): reuse, wave32 lane use, amplification "
                    "culling, export bytes against Apple's 16 KB")
    for col in ("max verts / prims", "meshlets", "prims / meshlet", "ACMR", "duplicated",
                "lanes used", "meshlets culled", "prims culled by meshlet", "largest export",
                "16 KB fallback", "cluster: prims / meshlet", "cluster: ACMR (all shaded)",
                "cluster: lanes used"):
        t.add_column(col, justify="right")
    s = get_scene("dragon")
    base = get_preset("apple-m3").frontend.as_dict()
    for mv, mp in ((16, 16), (32, 32), (64, 64), (64, 126), (128, 256), (256, 512), (512, 1024)):
        params = {**base, "meshlet_max_verts": mv, "meshlet_max_prims": mp}
        c = front_end(s.draws, s.camera, w, h, 1, params, "mesh").counters
        ml = meshlets_of(s.draws[0].mesh, mv, mp)
        lanes = _lanes(ml)
        cl = build(s.draws[0].mesh.positions, s.draws[0].mesh.indices, mv, mp, "cluster")
        big = int(export_bytes(ml).max())
        fell = c["geom.fallback.mesh_budget"] > 0
        culled = c["geom.meshlets_culled.cone"] + c["geom.meshlets_culled.frustum"]
        t.add_row(f"{mv} / {mp}", f"{ml.n:,}", f"{ml.prim_counts().mean():.1f}",
                  f"{acmr(c):.3f}" if not fell else "(legacy)",
                  f"{c['geom.mesh.duplicated_vertices']:,}", f"{100 * lanes:.0f}%",
                  f"{100 * culled / max(ml.n, 1):.0f}%" if not fell else "-",
                  f"{100 * c['geom.prims_culled.meshlet'] / c['geom.prims_in']:.0f}%",
                  f"{big:,} B", "yes" if fell else "no", f"{cl.prim_counts().mean():.1f}",
                  f"{cl.vertex_counts().sum() / c['geom.prims_in']:.3f}", f"{100 * _lanes(cl):.0f}%")
    return t


def _lanes(ml) -> float:
    """Share of wave32 lanes a meshlet's threads (max of its vertices and primitives) fill."""
    threads = np.maximum(ml.vertex_counts(), ml.prim_counts())
    return threads.sum() / (np.ceil(threads / WAVE) * WAVE).sum()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--res", default="1920x1080")
    w, h = (int(v) for v in ap.parse_args().res.split("x"))
    con = Console(width=200)
    for table in (ngg_table(w, h), acmr_table(w, h), sweep_table(w, h)):
        con.print(table)


if __name__ == "__main__":
    main()
