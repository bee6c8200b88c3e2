"""Ray-tracing parameters per preset (issue 7): the record `RTParams` and `PARAMS[preset name] =
RTParams(...)`; pipelines.presets takes each preset's record from here, and a preset without an
entry traces with RDNA 3's, flagged by `rt_params_from` (`borrowed(name)`).

Keys: rt_layout (renderer.bvh.LAYOUTS name), rt_box_tests_per_clk / rt_tri_tests_per_clk (per
ray accelerator), rt_stack_entries (short traversal stack per ray), rt_dual_fallback (BVH4x2: two
BVH4 nodes per step as the counted fallback of a BVH8 part), rt_obb (oriented box nodes),
rt_ray_flags_in_hw (cull / first-hit flags filtered by the intersection unit), rt_stack_location
(where the stack's on-chip entries live: lds, registers or dedicated), rt_stack_entry_bytes,
rt_stack_overflow (restart: a full ring overwrites its oldest entry and a dry stack restarts
through parent links; spill: the oldest entries go to memory and come back),
rt_instance_xform_in_hw (a two-level BVH's instance transform done by the ray unit, or by the
shader's traversal loop, whose ALU ops the time and energy models charge), rt_prim_tris
(triangles a bvh8 builder groups into one primitive node, at most; absent: the builder's default,
renderer.bvh.layouts.BVH8_PRIM_TRIS); rt_box_sort (the order a box node's children are visited
in: renderer.box_sort.BOX_SORTS, nearest first or the driver's pick by the ray's flags);
rt_l0_bytes / rt_l0_ways and rt_l1_bytes / rt_l1_ways (the
ray unit's caches in front of L2: AMD's node fetches go L0 -> L1 -> L2 -> Infinity Cache -> DRAM
as texture fetches do; absent L1: the part has none), built by `RTParams.caches`.

The model runs one L0 and one L1 over the whole ray stream, in the order the rays are traced:
one CU's L0 and one shader array's L1 as they would see a stream of rays of that locality (the
rays of a real frame are spread over every CU, each with its own L0, so the model's L0 is a
lower bound on the hardware's aggregate capacity and a fair picture of one CU's locality).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from renderer.memory import CacheConfig

from pipelines.presets.params import Param, PresetError, Record

A = "seed 000 (seed-notes/000_partA.md"
B = "seed 000 (seed-notes/000_partB.md"
RADV = "Mesa radv bvh.h node layouts (reference/peers.md §3.1)"
LDS_STACK = (f"the RDNA ISA's LDS ring stack holds 8/16/32/64 DWORDs per thread, {B} l.99, ISA "
             "guide); 16 entries chosen (the middle of the range; Vaidyanathan 2019 finds 5 "
             "close to a full stack, peers.md §3.2)")
RT_PATH = f"the ray accelerator's node fetch goes L0 -> L1 -> L2 -> Infinity Cache -> DRAM, {A} l.191, seed L1154)"
RDNA2_CACHES = f"RDNA 2 L0 / L1: 16 KB per CU / 128 KB per shader array, {A} l.243, seed L1240-1241); {RT_PATH}"
RDNA3_L0 = f"RDNA 3 vector L0: 32 KB per CU, 32-way, {B} l.145, seed L1544; {A} l.246); {RT_PATH}"
RDNA3_L1 = f"RDNA 3 L1: 256 KB per shader array, 16-way, {B} l.147, seed L1548; {A} l.246)"
APPLE_CACHE = ("Apple publishes no cache of the RT unit; seed 004 gives the core's L1 as 2 x 128 KB, "
               "'fast' and 'slow' segments (seed-notes/004_partA.md l.152, seed L594), and the RTU's "
               "throughput limited by on-chip cache capacity (seed-notes/004_partB.md l.250, seed L1234)")
APPLE_LAYOUT = ("Apple's BVH node layout is not public (seed 004 has no node widths: "
                "seed-notes/004_partB.md l.29); assumed")

@dataclass(frozen=True)
class RTParams(Record):
    """The keys above; pipelines.passes.raytrace reads them."""
    rt_layout: Param
    rt_box_tests_per_clk: Param
    rt_tri_tests_per_clk: Param
    rt_stack_entries: Param
    rt_dual_fallback: Param
    rt_obb: Param
    rt_ray_flags_in_hw: Param
    rt_stack_location: Param
    rt_stack_entry_bytes: Param
    rt_stack_overflow: Param
    rt_instance_xform_in_hw: Param
    rt_prim_tris: Param = Param(4, "the BVH builder's default, renderer.bvh.layouts.BVH8_PRIM_TRIS "
                                   "(4 float32 triangles and 7 corners fill a 128 B primitive node)",
                                "derived")
    rt_box_sort: Param = Param("closest", "nearest child first: the box sort xgl writes into the "
                                          "BVH descriptor (icd/api/pipeline_compiler.cpp, Pal::"
                                          "BoxSortHeuristic::ClosestFirst)", "assumed")
    rt_l0_bytes: Param | None = None         # the ray unit's first cache (AMD: the CU's vector L0)
    rt_l0_ways: Param | None = None
    rt_l1_bytes: Param | None = None         # its second (AMD: the shader array's L1); None: none
    rt_l1_ways: Param | None = None
    rt_params_from: Param | None = None      # set where the part traces with another's parameters

    def caches(self, line_bytes: int) -> tuple[CacheConfig, ...]:
        """The ray unit's caches, top first, as read-only levels of renderer.memory (rt_l0, then
        rt_l1 where the part has one); the caller puts them in front of L2. A PresetError for a
        cache the model cannot build: a size without its ways, no whole set of lines, or a number
        of sets that is not a power of two (a cache indexes its sets by address bits)."""
        out = []
        for name, size, ways in (("rt_l0", self.rt_l0_bytes, self.rt_l0_ways),
                                 ("rt_l1", self.rt_l1_bytes, self.rt_l1_ways)):
            if size is None and ways is None:
                if name == "rt_l0":
                    raise PresetError("the ray unit needs its L0 (rt.l0_size, rt.l0_ways)")
                continue
            key = name.replace("_", ".", 1)
            if size is None or ways is None:
                raise PresetError(f"{key}: set {key}_size and {key}_ways together (a cache needs its "
                                  "size and its ways)")
            b, w = int(size.value), int(ways.value)
            if b <= 0 or w <= 0:
                raise PresetError(f"{key}: size {b} B and {w} ways must both be positive")
            sets, rem = divmod(b, line_bytes * w)
            if sets < 1 or rem:
                raise PresetError(f"{key}: {b} B is not a whole number of sets of {w} ways of "
                                  f"{line_bytes} B lines")
            if sets & (sets - 1):
                raise PresetError(f"{key}: {b} B / ({w} ways x {line_bytes} B) = {sets} sets, not a "
                                  "power of two (a cache indexes its sets by address bits)")
            out.append(CacheConfig(name, b, w, read_only=True))
        return tuple(out)


RADV_RT = "Mesa radv radv_rt_common.c"
GPURT = ("AMD GPURT src/shaders/IntersectCommon.hlsl GetBoxSortingHeuristicFromRayFlags, "
         "IntersectNodeBvh4 (the sort keys)")
SORT_RDNA2 = Param("closest", "xgl clamps the driver's box sort to BoxSortingClosest on RtIp 1.1 "
                              "(RDNA 2), icd/settings/settings.cpp; " + GPURT, "spec")
SORT_RDNA34 = Param("largest-or-midpoint",
                    "xgl's default BoxSortingHeuristic is BoxSortingLargestFirstAndClosestMidpoint "
                    "(icd/settings/settings_xgl.json): largest interval first for "
                    "ACCEPT_FIRST_HIT_AND_END_SEARCH rays, lowest midpoint for the rest, kept on "
                    "RtIp 2.0 and later (RDNA 3, 4); " + GPURT, "spec")
XFORM_SHADER = (f"RDNA 2/3's image_bvh_intersect_ray tests box and triangle nodes only: at an instance node "
                f"the shader's traversal loop loads the world-to-object matrix and transforms origin and "
                f"direction itself ({RADV_RT}, radv_build_ray_traversal)")
XFORM_HW = (f"RDNA 4's image_bvh8_intersect_ray returns the ray's origin and direction, transformed at an "
            f"instance node ({RADV_RT}, radv_build_ray_traversal_gfx12 stores them from its result)")
RING = (f"the LDS stack is a ring: full, it overwrites its oldest entries; dry after that, the shader "
        f"restarts stacklessly through parent pointers and the last node visited, {B} l.99, AMD RDNA ISA "
        "guide, DS stack section)")
_RDNA_STACK = {
    "rt_stack_location": Param("lds", f"RDNA 3's DS_BVH_STACK_RTN keeps the stack in LDS (seed-notes/001_003.md "
                                      f"l.116, l.324; {B} l.99); RDNA 2 ran it as an ALU + LDS sequence (001_003.md l.116)", "spec"),
    "rt_stack_entry_bytes": Param(4, f"one DWORD (a node pointer) an entry: 8/16/32/64 DWORDs a thread, {B} l.99)", "derived"),
    "rt_stack_overflow": Param("restart", RING, "spec"),
}
_RDNA23 = {
    "rt_layout": Param("bvh4", f"BVH4: 128 B box32 + 64 B triangle nodes, {B} l.82-83, seed L1772, L1598-1608; {RADV}", "spec"),
    "rt_box_tests_per_clk": Param(4, f"4 ray-box tests per clock per ray accelerator, {A} l.188, seed L1313)", "spec"),
    "rt_tri_tests_per_clk": Param(1, f"1 ray-triangle test per clock per ray accelerator, {A} l.188, seed L1313)", "spec"),
    "rt_stack_entries": Param(16, LDS_STACK, "assumed"),
    "rt_dual_fallback": Param(False, f"BVH4x2 dual mode is RDNA 4 only, {B} l.95, seed L1700)", "spec"),
    "rt_obb": Param(False, f"OBB nodes arrive with RDNA 4, {B} l.111-117, seed L1776-1780)", "spec"),
    "rt_instance_xform_in_hw": Param(False, XFORM_SHADER, "spec"),
    **_RDNA_STACK,
}
_RDNA2_CACHES = {
    "rt_l0_bytes": Param(16 * 1024, RDNA2_CACHES, "spec"),
    "rt_l0_ways": Param(4, "no public figure for the L0's associativity; GCN's vector L1's 4 ways "
                           f"({A} l.224, seed L481) assumed", "assumed"),
    "rt_l1_bytes": Param(128 * 1024, RDNA2_CACHES, "spec"),
    "rt_l1_ways": Param(16, f"RDNA 2's L1 associativity is not given (seed L1241 says only that it "
                            f"improved); RDNA 3's 16 ways ({B} l.147, seed L1548) assumed", "assumed"),
}
_RDNA3_CACHES = {
    "rt_l0_bytes": Param(32 * 1024, RDNA3_L0, "spec"),
    "rt_l0_ways": Param(32, RDNA3_L0, "spec"),
    "rt_l1_bytes": Param(256 * 1024, RDNA3_L1, "spec"),
    "rt_l1_ways": Param(16, RDNA3_L1, "spec"),
}

_TABLES: dict[str, dict[str, Param]] = {
    "amd-rdna2": {**_RDNA23, **_RDNA2_CACHES, "rt_box_sort": SORT_RDNA2,
                  "rt_ray_flags_in_hw": Param(False, f"RDNA 2 filters ray flags in the shader loop, {B} l.94, seed L2020)", "spec")},
    "amd-rdna3": {**_RDNA23, **_RDNA3_CACHES, "rt_box_sort": SORT_RDNA34,
                  "rt_ray_flags_in_hw": Param(True, f"RDNA 3 handles CULL_BACK_FACING / ACCEPT_FIRST_HIT in hardware, {A} l.205, seed L1367-1369)", "spec")},
    "amd-rdna4": {
        "rt_layout": Param("bvh8-obb", f"BVH8 128 B quantized nodes with an OBB index, {B} l.84, l.101-117, seed L1770-1784, L1900-1906; "
                                       f"radv_gfx12_box_node, {RADV}", "spec"),
        "rt_box_tests_per_clk": Param(8, f"8 box tests per clock, {B} l.84, seed L1488, L1774", "spec"),
        "rt_tri_tests_per_clk": Param(2, f"2 triangle tests per clock, {B} l.84, seed L1488", "spec"),
        "rt_stack_entries": Param(16, LDS_STACK, "assumed"),
        "rt_dual_fallback": Param(True, f"IMAGE_BVH_DUAL_INTERSECT_RAY (BVH4x2), a compatibility fallback, {B} l.95, l.107-109, seed L1700, L1782)", "spec"),
        "rt_obb": Param(True, f"104 rotations by a 7-bit index, {B} l.113-117, seed L1778; AMD RRA NUM_OBB_TRANSFORMS", "spec"),
        "rt_ray_flags_in_hw": Param(True, f"as RDNA 3, {A} l.205)", "spec"),
        "rt_instance_xform_in_hw": Param(True, XFORM_HW, "spec"),
        "rt_box_sort": SORT_RDNA34,
        **_RDNA_STACK,
        "rt_stack_location": Param("lds", f"S_WAIT_DSCNT covers RDNA 4's DS_BVH_STACK_* instructions: the stack "
                                          f"lives in LDS, {B} l.96, seed L1846-1849)", "spec"),
        "rt_prim_tris": Param(4, f"RDNA 4 primitive nodes pack several triangles with compressed vertices (up to 8, "
                                 f"RRA 1.8, {B} l.105); 4 float32 triangles and 7 corners are what fit ours (128 B)", "derived"),
        "rt_l0_bytes": Param(32 * 1024, f"RDNA 4's L0 size is not in the notes; RDNA 3's 32 KB ({B} l.145, "
                                        "seed L1544) assumed, as the texture L0", "assumed"),
        "rt_l0_ways": Param(32, f"RDNA 3's 32 ways ({B} l.145, seed L1544) assumed", "assumed"),
        # no rt_l1: RDNA 4 removed the L1, a read/coalescing buffer between L0 and L2 in its
        # place (seed-notes/000_partB.md l.155-156, seed L1859, L1868)
    },
    "apple-m3": {
        "rt_layout": Param("bvh4", APPLE_LAYOUT + ": 4-wide like RDNA 2/3", "assumed"),
        "rt_box_tests_per_clk": Param(4, "not published for Apple's RT unit (seed-notes/004_partB.md l.29); RDNA's 4 taken", "assumed"),
        "rt_tri_tests_per_clk": Param(1, "not published; RDNA's 1 taken", "assumed"),
        "rt_stack_entries": Param(16, "Apple's traversal stack is not published (the 32/16 'BVH traversal levels' of "
                                      "seed 004 L1208/L1214 are instancing depths, seed-notes/004_partB.md l.521); 16 taken", "assumed"),
        "rt_dual_fallback": Param(False, "no dual-node mode is known for Apple", "assumed"),
        "rt_obb": Param(False, "OBB appears only as a leaf-shader test in an Apple patent, seed-notes/004_partB.md l.29, l.257", "assumed"),
        "rt_ray_flags_in_hw": Param(True, "the RTU does traversal and ray-primitive tests in hardware, seed-notes/004_partB.md l.219 (seed L1180)", "spec"),
        "rt_instance_xform_in_hw": Param(False, "the instance transform moved into the RT unit with the "
                                                "third generation (M5: 'hardened instance transform', a ray "
                                                "cache holding the transformed ray, seed-notes/004_partB.md "
                                                "l.254-255, seed L1270-1272); before it, taken to be the shader's", "derived"),
        "rt_stack_location": Param("dedicated", "the RTU runs traversal in hardware (seed-notes/004_partB.md l.219, seed L1180): "
                                                "its stack taken to live in the unit; not published", "assumed"),
        "rt_stack_entry_bytes": Param(4, "not published; RDNA's one DWORD a node pointer taken", "assumed"),
        "rt_stack_overflow": Param("spill", "not published (seed-notes/004_partB.md l.219 says only that the RTU "
                                            "traverses in hardware); a unit that keeps the stack itself taken to "
                                            "spill its oldest entries to memory rather than restart", "assumed"),
        "rt_l0_bytes": Param(128 * 1024, APPLE_CACHE + "; the RTU taken to read through one 128 KB segment", "assumed"),
        "rt_l0_ways": Param(8, APPLE_CACHE + "; 8 ways chosen", "assumed"),
        "rt_box_sort": Param("closest", "Apple's traversal order is not published (seed-notes/"
                                        "004_partB.md l.219 says only that the RTU traverses in "
                                        "hardware); nearest first taken", "assumed"),
        # no rt_l1: nothing is known between the core's L1 and the GPU's L2
    },
}
_TABLES["apple-m5"] = {
    **_TABLES["apple-m3"],
    "rt_layout": Param("bvh8", APPLE_LAYOUT + ": the third-generation RT unit (seed-notes/004_partA.md l.78, "
                                              "seed L125-131, 'up to 45% faster RT') taken as 8-wide", "assumed"),
    "rt_prim_tris": Param(1, APPLE_LAYOUT + ": a triangle per primitive node (RDNA 2/3's one-triangle nodes taken)", "assumed"),
    "rt_instance_xform_in_hw": Param(True, "M5's RT unit transforms the ray at an instance itself ('hardened "
                                           "instance transform', ray cache with transform, seed-notes/004_partB.md "
                                           "l.254-255, seed L1270-1272)", "spec"),
}

PARAMS: dict[str, RTParams] = {name: RTParams.of(t) for name, t in _TABLES.items()}


def borrowed(preset: str) -> RTParams:
    """What a preset without RT parameters traces with: RDNA 3's, said in `rt_params_from`."""
    return replace(PARAMS["amd-rdna3"], rt_params_from=Param(
        "amd-rdna3", f"preset {preset!r} has no RT parameters; RDNA 3's used", "assumed"))
