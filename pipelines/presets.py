"""Presets: named GPUs. Every parameter carries its source and a label (DESIGN.md §5):
spec (a vendor or driver number), measured, derived (arithmetic on sourced numbers) or assumed.

`tilesim presets` prints them; pipelines.registry maps a preset's architecture to its pipeline.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from renderer.memory import CacheConfig, MemoryConfig

Label = Literal["spec", "measured", "derived", "assumed"]


class PresetError(ValueError):
    pass


@dataclass(frozen=True)
class Param:
    value: float | int | str | bool
    source: str
    label: Label

    def __post_init__(self):
        if self.label not in ("spec", "measured", "derived", "assumed"):
            raise PresetError(f"bad label {self.label!r}")


@dataclass(frozen=True)
class Preset:
    name: str
    architecture: str          # key of pipelines.registry.ARCHITECTURES
    description: str
    params: dict[str, Param] = field(default_factory=dict)

    def __getitem__(self, key: str):
        return self.params[key].value

    @property
    def memory(self) -> MemoryConfig:
        l2 = CacheConfig("l2", int(self["l2_bytes"]), int(self["l2_ways"]))
        if self.architecture == "tbdr":       # param cache (TILER_PARAM) in front of the SLC
            return MemoryConfig(int(self["cache_line_bytes"]), (CacheConfig(
                "param", int(self["param_cache_bytes"]), int(self["param_cache_ways"])), l2), (1, -1))
        return MemoryConfig.rop_l2(
            int(self["cache_line_bytes"]),
            CacheConfig("rop_color", int(self["rop_color_cache_bytes"]), int(self["rop_color_cache_ways"])),
            CacheConfig("rop_depth", int(self["rop_depth_cache_bytes"]), int(self["rop_depth_cache_ways"])),
            l2)

    @property
    def dram_gbps(self) -> float:
        return float(self["dram_gbps"])


MB = 1 << 20
MESA_BINNING = "Mesa radeonsi si_state_binning.c (peers.md §2.7)"

IMR_BASELINE = Preset(
    "imr-baseline", "imr",
    "Generic desktop immediate-mode GPU, RDNA1-class memory system: no Hi-Z, no fast clear, "
    "no compression, no binning",
    {
        "cache_line_bytes": Param(128, "RDNA whitepaper 128 B L2 lines (seed-notes 000_partB.md L145 reviewer note)", "spec"),
        "rop_color_cache_bytes": Param(31 * 1024, f"CcReadTags 31 x CcTagSize 1024 B, one RB pipe: {MESA_BINNING}", "derived"),
        "rop_color_cache_ways": Param(8, "no public figure; 8-way chosen", "assumed"),
        "rop_depth_cache_bytes": Param(312 * 64, f"ZsNumTags 312 x ZsTagSize 64 B, one RB pipe: {MESA_BINNING}", "derived"),
        "rop_depth_cache_ways": Param(4, "no public figure; 4-way chosen", "assumed"),
        "l2_bytes": Param(4 * MB, "RDNA 1 Navi 10 L2 4 MB, seed 000 L958 (seed-notes 000_partA.md table)", "spec"),
        "l2_ways": Param(16, "RDNA L2 16-way per AMD RDNA whitepaper; not in the seeds", "assumed"),
        "dram_gbps": Param(448.0, "256-bit GDDR6 14 Gbps = 448 GB/s (PS5 / RX 5700 XT), seed 000 L2034", "spec"),
    })

SEED4 = "seed 004 (seed-notes/004_partA.md)"
TILER_ASSUMED = {
    "param_cache_bytes": Param(32 * 1024, "no public figure for the tiler's parameter cache; 32 KiB chosen", "assumed"),
    "param_cache_ways": Param(8, "no public figure; 8-way chosen", "assumed"),
    "cache_line_bytes": Param(128, "Apple GPU cache line 128 B is commonly measured; not in the seeds", "assumed"),
    "l2_ways": Param(16, "SLC associativity not published; 16-way chosen", "assumed"),
    "tile_px": Param(32, f"32x32 tiles, {SEED4} L698; Apple's imageblock docs list 32x32, 32x16, 16x16", "spec"),
    "param_buffer_bytes": Param(32 * MB, "no public figure; llvmpipe caps a scene at 36 MiB (peers.md §1.1); 32 MiB chosen", "assumed"),
}

APPLE_A11 = Preset(
    "apple-a11", "tbdr",
    "Apple A11 (first in-house GPU): TBDR with HSR, 32x32 tiles, 32 KiB of tile memory",
    {
        **TILER_ASSUMED,
        "tile_memory_bytes": Param(32 * 1024, "the seed gives 32-64 KiB (L813) and a 32 KB threadgroup/imageblock limit (L279); the low end for the first generation", "assumed"),
        "l2_bytes": Param(4 * MB, "A11 system-level cache 4 MB per die analyses; not in the seeds", "assumed"),
        "dram_gbps": Param(34.1, "64-bit LPDDR4X-4266 = 34.1 GB/s; the seeds give no A11 figure", "assumed"),
    })

APPLE_M3 = Preset(
    "apple-m3", "tbdr",
    "Apple M3: TBDR with HSR, 32x32 tiles, 64 KiB of tile memory, 8 MB SLC, 128-bit LPDDR5",
    {
        **TILER_ASSUMED,
        "tile_memory_bytes": Param(64 * 1024, f"A11+ colour targets up to 512 bits/px x 32x32 = 64 KiB, the high end of the seed's 32-64 KiB ({SEED4} L284, L813)", "derived"),
        "l2_bytes": Param(8 * MB, f"SLC 8 MB measured on an M4 Pro-class part, {SEED4} L596; taken for M3", "measured"),
        "dram_gbps": Param(102.4, f"2 x 51.2 GB/s (64-bit LPDDR5-6400, {SEED4} L869) for M3's 128-bit bus", "derived"),
    })

PRESETS: dict[str, Preset] = {p.name: p for p in (IMR_BASELINE, APPLE_A11, APPLE_M3)}


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise PresetError(f"unknown preset {name!r} (try: {', '.join(PRESETS)})") from None
