"""Geometry front-end parameters per preset (issue 5): the record `FrontendParams` and
`PARAMS[preset name] = FrontendParams(...)`, each field a Param(value, source, label); the
presets (pipelines.presets) take their record from here. renderer.frontend reads the values
(`preset.frontend.as_dict()`).

Keys: frontend (the preset's default: legacy | ngg), ptc_entries (FIFO post-transform cache of
the legacy path), ngg_max_verts / ngg_max_prims (an NGG subgroup), cull_alu_ops (ALU ops per
primitive the in-shader cull costs), mesh_shading (the path exists), meshlet_max_verts /
meshlet_max_prims, mesh_output_budget_bytes (on-chip bytes one meshlet's exported vertices and
primitives may take; over it the draw falls back to legacy), mesh_prim_cull (a kept meshlet's
primitives are culled before export as NGG culls, at cull_alu_ops each), fetch_wave (lanes of a
vertex-fetch wave: each wave asks for a vertex line once, renderer.frontend.fetch_kernels).
"""
from __future__ import annotations

from dataclasses import dataclass

from pipelines.presets.params import Param, Record

SEED0 = "seed 000 (seed-notes/000_partA.md"
PTC = f"{SEED0} l.109: FIFO post-transform cache of about 16-32 entries, seed L1265, L1273)"
NGG_SUBGROUP = ("Mesa radv gfx10_get_ngg_info / radeonsi gfx10_ngg_calculate_subgroup_info: "
                "max_esverts_base = 128, max_gsprims_base = 128 per subgroup")
CULL_OPS = ("no public figure: about 32 VALU ops per triangle for Mesa's ac_nir_cull tests "
            "(perspective divide, facing determinant, frustum and small-primitive bbox) chosen; "
            f"the seed only says the cost is real, {SEED0} l.129, seed L1004)")
HW_CULL = ("RDNA 3 culls in a fixed-function unit with no ALU instructions: seed 000 L1616-1618 "
           "(seed-notes/000_partB.md l.42) and seed 001 L47-51 (seed-notes/001_003.md l.140); the claim "
           "is not corroborated by a vendor or driver source, so 0 ops is assumed (RDNA 4 takes RDNA 3's)")
MESHLET_V = Param(64, f"64 vertices / 126 primitives, the common guidance the reviewer gives, "
                      f"{SEED0} l.373); the seed's '85 + 124' is unsourced", "assumed")
MESHLET_P = Param(126, f"{SEED0} l.150 (64-128 primitives common practice) and l.373", "assumed")
LDS_BUDGET = Param(64 * 1024, "one CU's LDS, 64 KB (seed 000 L393, L484; RDNA: 128 KB per WGP = 2 x 64 KB, "
                              "seed-notes/001_003.md l.47, seed 002 L71); that a meshlet's exported vertices and "
                              "primitives must fit it is not in the seeds (L1263 describes the export, not LDS): "
                              "assumed", "assumed")
WAVE64 = Param(64, "GCN runs every shader stage in 64-wide wavefronts: a wave64 vector instruction takes 4 "
                   "cycles on a 16-lane SIMD (seed 000 L407; L51 is TeraScale's)", "spec")
WAVE32_RDNA = Param(32, "RDNA compiles the vertex and geometry stages as wave32 by default for "
                        "PAL: an LLVM AMDGPU codegen test (llc -mtriple=amdgcn--amdpal "
                        "-mcpu=gfx1010, 'Check that VS is wave32'); Mesa's drivers may pick wave64",
                    "derived")
SIMD32_APPLE = Param(32, "Apple GPU SIMD-groups are 32 threads (Metal threadExecutionWidth 32 on "
                         "every Apple GPU family)", "spec")
APPLE_BUDGET = Param(16 * 1024, "mesh output and payload ~16 KB, the on-chip export pool: seed 004 "
                                "L1123, L1125, L1357 (seed-notes/004_partB.md l.191-192, l.411)", "spec")


@dataclass(frozen=True)
class FrontendParams(Record):
    """What renderer.frontend reads (the keys above). The defaults are what a part gets for the
    NGG and mesh paths when a draw asks for them explicitly."""
    frontend: Param
    ptc_entries: Param
    mesh_shading: Param
    fetch_wave: Param
    ngg_max_verts: Param = Param(128, NGG_SUBGROUP, "spec")
    ngg_max_prims: Param = Param(128, NGG_SUBGROUP, "spec")
    cull_alu_ops: Param = Param(32, CULL_OPS, "assumed")
    meshlet_max_verts: Param = MESHLET_V
    meshlet_max_prims: Param = MESHLET_P
    mesh_output_budget_bytes: Param = LDS_BUDGET
    mesh_prim_cull: Param = Param(False, "no per-primitive cull before export unless a source says so", "assumed")


def _legacy(entries: int, source: str, label: str = "assumed",
            wave: Param = WAVE64) -> dict[str, Param]:
    return {"frontend": Param("legacy", source, "spec"),
            "ptc_entries": Param(entries, PTC, label),
            "mesh_shading": Param(False, "no mesh shaders on this generation", "spec"),
            "fetch_wave": wave}


def _rdna(mesh: bool, cull_ops: int, cull_source: str, cull_label: str) -> dict[str, Param]:
    out = {"frontend": Param("ngg", f"NGG replaces the legacy VS/GS path on RDNA, {SEED0} l.124, seed L984-996)", "spec"),
           "ptc_entries": Param(16, PTC, "assumed"),
           "fetch_wave": WAVE32_RDNA,
           "ngg_max_verts": Param(128, NGG_SUBGROUP, "spec"),
           "ngg_max_prims": Param(128, NGG_SUBGROUP, "spec"),
           "cull_alu_ops": Param(cull_ops, cull_source, cull_label),
           "mesh_shading": Param(mesh, f"mesh/amplification shaders from RDNA 2 (per-primitive attribute output), {SEED0} l.140, seed L1256-1258)", "spec")}
    if mesh:
        out.update(meshlet_max_verts=MESHLET_V, meshlet_max_prims=MESHLET_P,
                   mesh_output_budget_bytes=LDS_BUDGET,
                   mesh_prim_cull=Param(True, f"RDNA 2 culls small, back-facing and degenerate triangles before export, {SEED0} l.151, seed L1267)", "spec"))
    return out


_TABLES: dict[str, dict[str, Param]] = {
    "imr-baseline": _legacy(32, "generic pre-NGG immediate-mode front end",
                            wave=Param(64, "a generic immediate-mode GPU: GCN's 64-wide waves "
                                           "taken", "assumed")),
    "amd-gcn": _legacy(16, f"GCN has the fixed-function VS path only, {SEED0} l.101, seed L988)"),
    "amd-vega": _legacy(16, f"Vega's primitive shader was never enabled by drivers, {SEED0} l.118-122, seed L749-752)"),
    "amd-rdna1": _rdna(False, 32, CULL_OPS, "assumed"),
    "amd-rdna2": _rdna(True, 32, CULL_OPS, "assumed"),
    "amd-rdna3": _rdna(True, 0, HW_CULL, "assumed"),
    "amd-rdna4": _rdna(True, 0, HW_CULL, "assumed"),
    "apple-a11": _legacy(32, "Apple A11 (GPU family 4) has no mesh shaders; Metal mesh shaders need Apple7+",
                         wave=SIMD32_APPLE),
    "apple-m3": {**_legacy(32, "Apple has no NGG path; mesh shading where a draw asks for it",
                           wave=SIMD32_APPLE),
                 "mesh_shading": Param(True, "Metal mesh shaders (object + mesh stages), seed 004 L1111-1133 (seed-notes/004_partB.md l.182-199)", "spec"),
                 "meshlet_max_verts": MESHLET_V, "meshlet_max_prims": MESHLET_P,
                 "mesh_output_budget_bytes": APPLE_BUDGET},
}
_TABLES["arm-mali"] = _legacy(32, "Mali's fixed vertex path with index-driven vertex shading; no NGG-style "
                                 "culling shader, and mesh shading is not modelled for Mali",
                             wave=Param(16, "Mali Valhall executes warps of 16 threads (Arm Mali-G77 "
                                            "and later)", "spec"))
_TABLES["qcom-adreno"] = _legacy(32, "Adreno's fixed vertex path (VFD, post-transform reuse); no "
                                    "NGG-style culling shader, mesh shading not modelled",
                                wave=Param(64, "Adreno waves are 64 or 128 fibers wide; the "
                                               "narrower chosen", "assumed"))
_TABLES["apple-m5"] = {**_TABLES["apple-m3"], "frontend": Param(
    "legacy", "Apple has no NGG path; mesh shading where a draw asks for it (M5/M6 geometry "
    "front end: seed 004 L1137-1176, seed-notes/004_partB.md l.201-212)", "spec")}
PARAMS: dict[str, FrontendParams] = {name: FrontendParams.of(t) for name, t in _TABLES.items()}
