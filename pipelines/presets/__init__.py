"""Presets: named GPUs. Every parameter carries its source and a label (DESIGN.md §5):
spec (a vendor or driver number), measured, derived (arithmetic on sourced numbers) or assumed.

Each preset holds one typed record per feature (pipelines.presets.preset: raster, binning or
tiler, memory, front end, compression, RT, texture), read one way: `preset.memory.l2_bytes.value`. The
raster and memory parameters are the tables below; the front end's, compression's, ray
tracing's, textures', rates' and energies' are their modules' (frontend, compression, rt,
texture, rates, energy),
merged here once (`_preset`).

`tilesim presets` prints them; pipelines.registry maps a preset's architecture to its pipeline.
"""
from __future__ import annotations

from pipelines.presets import compression, energy, frontend, rates, rt, texture
from pipelines.presets.params import MESA_BINNING, Label, Param, PresetError  # noqa: F401  (the types' home)
from pipelines.presets.preset import Preset

MB = 1 << 20


# ROP caches: Mesa's per-RB tag budgets (CcReadTags 31 x 1 KiB colour, ZsNumTags 312 x 64 B depth,
# MESA_BINNING) times the chip's RBs. Each RB caches only the pixels of its own screen-space
# interleave; the model keeps one cache of the chip's total, which is what a frame's working set
# meets (a pixel never goes to another RB's cache) up to the interleave's imbalance.
ROP_COLOR_PER_RB, ROP_DEPTH_PER_RB = 31 * 1024, 312 * 64


def _rop_caches(rbs: int, rbs_source: str) -> dict[str, Param]:
    why = "the chip's total as one cache (the RBs' screen-space interleave is not modelled)"
    return {
        "rop_color_cache_bytes": Param(ROP_COLOR_PER_RB * rbs, f"CcReadTags 31 x CcTagSize 1024 B per RB, "
                                                               f"{MESA_BINNING}, x {rbs} RBs ({rbs_source}): {why}",
                                       "derived"),
        "rop_color_cache_ways": Param(8, "no public figure; 8-way chosen", "assumed"),
        "rop_depth_cache_bytes": Param(ROP_DEPTH_PER_RB * rbs, f"ZsNumTags 312 x ZsTagSize 64 B per RB, "
                                                               f"{MESA_BINNING}, x {rbs} RBs ({rbs_source}): {why}",
                                       "derived"),
        "rop_depth_cache_ways": Param(4, "no public figure; 4-way chosen", "assumed"),
    }


def _preset(name: str, architecture: str, description: str, params: dict[str, Param]) -> Preset:
    """The one merge: the preset's raster and memory table split into its records by name (a
    name no record has raises), and its feature records from their modules."""
    return Preset.of(name, architecture, description, params,
                     frontend=frontend.PARAMS[name],
                     compression=compression.PARAMS.get(name, compression.NONE),
                     rt=rt.PARAMS[name] if name in rt.PARAMS else rt.borrowed(name),
                     texture=texture.PARAMS[name],
                     rates=rates.PARAMS[name], energy=energy.PARAMS[name])


IMR_BASELINE = _preset(
    "imr-baseline", "imr",
    "Generic desktop immediate-mode GPU, RDNA1-class memory system: no Hi-Z, no fast clear, "
    "no compression, no binning",
    {
        "cache_line_bytes": Param(128, "RDNA whitepaper 128 B L2 lines (seed-notes 000_partB.md L145 reviewer note)", "spec"),
        **_rop_caches(16, "an RDNA 1-class part: Navi 10's 64 ROPs in 16 RBs, AMD RDNA whitepaper"),
        "l2_bytes": Param(4 * MB, "RDNA 1 Navi 10 L2 4 MB, seed 000 L958 (seed-notes 000_partA.md table)", "spec"),
        "l2_ways": Param(16, "RDNA L2 16-way per AMD RDNA whitepaper; not in the seeds", "assumed"),
        "dram_gbps": Param(448.0, "256-bit GDDR6 14 Gbps = 448 GB/s (PS5 / RX 5700 XT), seed 000 L2034", "spec"),
    })

SEED4 = "seed 004 (seed-notes/004_partA.md)"
TILER_ASSUMED = {
    "param_cache_bytes": Param(32 * 1024, "no public figure for the tiler's parameter cache; 32 KiB chosen", "assumed"),
    "param_cache_ways": Param(8, "no public figure; 8-way chosen", "assumed"),
    "cache_line_bytes": Param(128, "Apple GPU cache line 128 B is commonly measured; not in the seeds", "assumed"),
    "l2_ways": Param(16, "L2 (or SLC) associativity not published; 16-way chosen", "assumed"),
    "tile_px": Param(32, f"32x32 tiles, {SEED4} L698; Apple's imageblock docs list 32x32, 32x16, 16x16", "spec"),
    "param_buffer_bytes": Param(32 * MB, "no public figure; llvmpipe caps a scene at 36 MiB (peers.md §1.1); 32 MiB chosen", "assumed"),
}

APPLE_A11 = _preset(
    "apple-a11", "tbdr",
    "Apple A11 (first in-house GPU): TBDR with HSR, 32x32 tiles, 32 KiB of tile memory",
    {
        **TILER_ASSUMED,
        "tile_memory_bytes": Param(32 * 1024, "the seed gives 32-64 KiB per tile and a 32 KB threadgroup / explicit imageblock limit (seed 004 L815); the low end for the first generation", "assumed"),
        "l2_bytes": Param(4 * MB, "A11 system-level cache 4 MB per die analyses; not in the seeds", "assumed"),
        "dram_gbps": Param(34.1, "64-bit LPDDR4X-4266 = 34.1 GB/s; the seeds give no A11 figure", "assumed"),
    })

APPLE_M3 = _preset(
    "apple-m3", "tbdr",
    "Apple M3: TBDR with HSR, 32x32 tiles, 64 KiB of tile memory, 2 MB L2, 8 MB SLC, 128-bit LPDDR5",
    {
        **TILER_ASSUMED,
        "tile_memory_bytes": Param(64 * 1024, f"the high end of the seed's 32-64 KiB per tile ({SEED4} L815); 64 KiB = 512 bits/px x 32x32", "derived"),
        "l2_bytes": Param(2 * MB, f"GPU L2 2 MB (4 x 512 KB slices), measured on another chip (the 10-core "
                                  f"M4 Pro-class part of {SEED4} L588, L595), taken for M3", "assumed"),
        "llc_bytes": Param(8 * MB, f"SLC 8 MB in 4 parts, shared with the SoC, measured on the same other chip "
                                   f"({SEED4} L596), taken for M3", "assumed"),
        "llc_ways": Param(16, "SLC associativity not published; 16-way chosen", "assumed"),
        "dram_gbps": Param(102.4, f"2 x 51.2 GB/s (64-bit LPDDR5-6400, {SEED4} L869) for M3's 128-bit bus", "derived"),
    })

APPLE_M5 = _preset(
    "apple-m5", "tbdr",
    "Apple M5 (Apple10 family): TBDR with HSR, 32x32 tiles, 64 KiB of tile memory, 2 MB L2, 8 MB SLC, "
    "153 GB/s LPDDR5X; keeps compression across stages (UTC)",
    {
        **TILER_ASSUMED,
        "tile_memory_bytes": APPLE_M3.tiler.tile_memory_bytes,
        "l2_bytes": Param(2 * MB, f"GPU L2 2 MB, measured on a 10-core part of the M5 generation ({SEED4} "
                                  "L588, L595)", "measured"),
        "llc_bytes": Param(8 * MB, f"SLC 8 MB in 4 parts, shared with the SoC ({SEED4} L596, the same part)",
                           "measured"),
        "llc_ways": APPLE_M3.memory.llc_ways,
        "dram_gbps": Param(153.6, f"M5 unified memory 153 GB/s (Apple M5 press release; {SEED4} L160 "
                                  "reviewer note: base M5 DRAM ~120-153 GB/s)", "spec"),
    })

ARM_MALI = _preset(
    "arm-mali", "tbdr",
    "Arm Mali (Valhall-class): a tiler with 16x16 tiles and early Z in submission order (no "
    "deferred HSR), AFBC and transaction elimination, 51.2 GB/s LPDDR5",
    {
        **TILER_ASSUMED,
        "tile_px": Param(16, "Mali GPUs render 16x16-pixel tiles (Arm Mali GPU Best Practices Guide, "
                             "'Tile-based rendering'); seed 004 L65 says Mali's tiles are usually larger "
                             "(unconfirmed) and is not the source", "spec"),
        "hsr": Param(False, f"Mali culls with early Z in draw order, not a deferred HSR ({SEED4} L730-760); "
                            "Arm's forward pixel kill is not modelled, so shading is an upper bound", "assumed"),
        "tile_memory_bytes": Param(16 * 16 * 32, "16x16 px x 256 bits of tile storage per pixel "
                                                  "(Valhall; Arm Mali best practices: 128 bits/px "
                                                  "colour at full rate); not in the seeds", "assumed"),
        "l2_bytes": Param(2 * MB, "Mali-G710 L2 is configurable up to 2 MB (Arm product brief); not in "
                                  "the seeds", "assumed"),
        "dram_gbps": Param(51.2, f"64-bit LPDDR5-6400 = 51.2 GB/s, {SEED4} L869", "derived"),
    })

QCOM_ADRENO = _preset(
    "qcom-adreno", "tbdr",
    "Qualcomm Adreno (6xx-class): GMEM binning in 256x256 bins, LRZ and early Z in draw order (no "
    "deferred HSR), UBWC, 51.2 GB/s LPDDR5",
    {
        **TILER_ASSUMED,
        "tile_memory_bytes": Param(1 * MB, "GMEM 1 MiB (Adreno 6xx class; Mesa freedreno reads it from "
                                           "the kernel as FD_GMEM_SIZE); not in the seeds", "assumed"),
        "tile_px": Param(256, "the largest square bin whose RGBA8 + D32F (8 B/px) fits the 1 MiB GMEM; "
                              "freedreno's calculate_tiles sizes bins to fill GMEM, not always square",
                         "derived"),
        "hsr": Param(False, f"Adreno culls with LRZ and early Z, not a deferred HSR ({SEED4} L744-754); "
                            "LRZ's whole-primitive rejects are early-Z rejects here (the same shading)",
                     "spec"),
        "l2_bytes": Param(1 * MB, "Adreno's UCHE/L2 plus system cache, not in the seeds; 1 MB chosen",
                          "assumed"),
        "dram_gbps": Param(51.2, f"64-bit LPDDR5-6400 = 51.2 GB/s, {SEED4} L869", "derived"),
    })

SEED0 = "seed 000 (seed-notes/000_partA.md, 000_partB.md)"


# Parameter-cache lines per chip: not published; 1024 assumed. AMD's PAL driver sizes a batch's
# parameter-cache allocations (PA_SC_BINNER_CNTL_1.MAX_ALLOC_COUNT, in groups of 16 vertex
# attributes) from it: min(128, lines / (4 x shader engines)) on GFX9, lines / 3 on GFX10+
# (PAL gfx9 SettingsLoader::ValidateSettings, binningMaxAllocCountLegacy).
PC_LINES = 1024
PAL_ALLOC = "PAL binningMaxAllocCountLegacy"


def _amd(name: str, description: str, l2_mb: int, l2_source: str, gbps: float, gbps_source: str,
         rbs: int, rbs_source: str, channels: int, channels_source: str,
         llc: tuple[int, str] | None = None, **extra: Param) -> Preset:
    """An RDNA part: the baseline's line, ROP caches for its own RBs, its own L2, DRAM, RBs and channels, and
    binning on (Mesa radeonsi enables DPBB on GFX10+)."""
    return _preset(name, "dsbr", description, {
        **{k: IMR_BASELINE.all_params()[k] for k in ("cache_line_bytes", "l2_ways")},
        **_rop_caches(rbs, rbs_source),
        "l2_bytes": Param(l2_mb * MB, l2_source, "spec"),
        "dram_gbps": Param(gbps, gbps_source, "spec"),
        # a count worked out from other published figures says "(derived)" in its source
        "num_rbs": Param(rbs, rbs_source, "derived" if "(derived" in rbs_source else "spec"),
        "num_l2_channels": Param(channels, channels_source,
                                 "derived" if "(derived" in channels_source else "spec"),
        "binning": Param(True, f"DPBB allowed on GFX10+, {MESA_BINNING}", "spec"),
        "hiz": Param(True, f"HTILE hierarchical Z on every GCN/RDNA part, {SEED0} L503 and L311-315", "spec"),
        "fast_clear": Param(True, f"fast colour/Z clear through CMASK/HTILE, {SEED0} L315", "spec"),
        "max_alloc_count": Param(PC_LINES // 3, f"{PAL_ALLOC} = parameter-cache lines / 3 on GFX10+, "
                                               f"with {PC_LINES} lines assumed", "assumed"),
        **({} if llc is None else {
            "llc_bytes": Param(llc[0] * MB, llc[1], "spec"),
            "llc_ways": Param(16, "Infinity Cache associativity not published; 16-way chosen", "assumed"),
        }),
        **extra,
    })


AMD_RDNA1 = _amd("amd-rdna1", "AMD RDNA 1 (Navi 10): IMR + draw-stream binning, 4 MB L2, 448 GB/s",
                 4, f"Navi 10 L2 4 MB, {SEED0} L958", 448.0, f"256-bit GDDR6 14 Gbps, {SEED0} L2034",
                 16, "Navi 10: 64 ROPs in 16 RBs of 4 (AMD RDNA whitepaper)", 16,
                 "Navi 10: 16 L2 channels, one per 16-bit GDDR6 half-channel pair (AMD RDNA whitepaper)")
AMD_RDNA2 = _amd("amd-rdna2", "AMD RDNA 2 (Navi 21): IMR + draw-stream binning, 4 MB L2, 128 MB "
                 "Infinity Cache, 512 GB/s",
                 4, f"Navi 21 L2 4 MB, {SEED0} L1240-1242", 512.0, f"RDNA 2 512 GB/s, {SEED0} partB L267",
                 16, f"16 RB+ partitions = 128 ROPs, {SEED0} L1283", 16,
                 "Navi 21: 16 L2 channels (AMD RDNA 2 whitepaper)",
                 llc=(128, f"RDNA 2 Infinity Cache 128 MB, {SEED0} partB L267"))
AMD_RDNA3 = _amd("amd-rdna3", "AMD RDNA 3 (Navi 31): IMR + draw-stream binning, 6 MB L2, 96 MB "
                 "Infinity Cache, 960 GB/s",
                 6, f"RDNA 3 L2 4 MB -> 6 MB, {SEED0} L1552", 960.0, f"RDNA 3 960 GB/s, {SEED0} partB L267",
                 24, "Navi 31: 192 ROPs in RB+ units of 8 = 24 (derived from AMD's 192 ROPs)", 24,
                 "Navi 31: 24 L2 slices of 256 KB in 6 MB (derived)",
                 llc=(96, f"96 MB = 6 MCDs x 16 MB, {SEED0} L1558"))
AMD_RDNA4 = _amd("amd-rdna4", "AMD RDNA 4 (Navi 48): IMR + draw-stream binning, 8 MB L2, 64 MB "
                 "Infinity Cache, 640 GB/s",
                 8, f"RDNA 4 L2 8 MB, {SEED0} partB L1859", 640.0, f"256-bit GDDR6 20 Gbps = 640 GB/s, {SEED0} partB L1874-1876",
                 16, "Navi 48: 128 ROPs in RB+ units of 8 = 16 (derived)", 16,
                 "Navi 48: 16 L2 slices of 512 KB in 8 MB (derived)",
                 llc=(64, f"RDNA 4 Infinity Cache 64 MB on die, {SEED0} partB L1874"),
                 min_bin_height=Param(128, f"GFX12's minimum bin is 128x128, {MESA_BINNING}", "spec"))

AMD_GCN = _preset(
    "amd-gcn", "imr", "AMD GCN 1.0 (Tahiti): IMR with hierarchical Z, render backends beside L2 "
    "(not its clients), 768 KB L2, 288 GB/s; no binning",
    {
        **{k: IMR_BASELINE.all_params()[k] for k in ("cache_line_bytes", "l2_ways")},
        **_rop_caches(8, "Tahiti: 32 ROPs in 8 RBs of 4, AMD HD 7970 spec"),
        "l2_bytes": Param(768 * 1024, f"Tahiti L2 768 KB (6 MCs x 128 KB), {SEED0} L499", "spec"),
        "dram_gbps": Param(288.0, f"384-bit GDDR5 ~288 GB/s, {SEED0} L511", "spec"),
        "rb_l2_client": Param(False, f"GCN 1.0/1.1: the RB talks to the memory controller beside L2, {SEED0} L485-499", "spec"),
        "hiz": Param(True, f"HTILE hierarchical Z, {SEED0} L503", "spec"),
        "fast_clear": Param(True, f"fast colour/Z clear through CMASK/HTILE, {SEED0} L315", "spec"),
    })

AMD_VEGA = _amd("amd-vega", "AMD Vega 10 (GCN 5): IMR + draw-stream binning with GFX9's bin tables, "
                "RBs as L2 clients, 4 MB L2, ~483 GB/s",
                4, f"Vega 10 L2 4 MB, {SEED0} L725", 483.0, f"2 HBM2 stacks ~483 GB/s, {SEED0} L713",
                16, "Vega 10: 64 ROPs in 16 RBs, 4 per shader engine (AMD Vega whitepaper)", 16,
                "Vega 10: 16 L2 channels (AMD Vega whitepaper)",
                bin_table=Param("gfx9", f"GFX9 bin sizes by table (4 RB/SE, 4 SE), {MESA_BINNING}", "spec"),
                max_alloc_count=Param(min(128, PC_LINES // (4 * 4)), f"{PAL_ALLOC} = min(128, lines / "
                                      f"(4 x 4 shader engines)) on GFX9, with {PC_LINES} lines assumed", "assumed"),
                rb_l2_client=Param(True, f"Vega: the RB is a full L2 client, {SEED0} L721-725", "spec"),
                # What the driver does, not what the silicon can: Vega 10 has DSBR, but Mesa leaves it off
                # on discrete GFX9 parts; seed 000 L745-752 on Vega's unused features agrees in spirit.
                binning=Param(False, "Mesa radeonsi si_pipe.c: dpbb_allowed = gfx_level >= GFX10 || (GFX9 && "
                                     "!has_dedicated_vram), 'Only enable primitive binning on gfx9 APUs by "
                                     "default': a discrete Vega 10 (dedicated HBM2) renders unbinned; the "
                                     "GFX9 bin tables stay for a what-if (binning=True)", "spec"))

PRESETS: dict[str, Preset] = {p.name: p for p in (IMR_BASELINE, APPLE_A11, APPLE_M3, APPLE_M5, ARM_MALI, QCOM_ADRENO, AMD_GCN,
                                                  AMD_VEGA, AMD_RDNA1, AMD_RDNA2, AMD_RDNA3,
                                                  AMD_RDNA4)}


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise PresetError(f"unknown preset {name!r} (try: {', '.join(PRESETS)})") from None
