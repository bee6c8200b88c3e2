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
        return MemoryConfig(
            line_bytes=int(self["cache_line_bytes"]),
            rop_color=CacheConfig("rop_color", int(self["rop_color_cache_bytes"]), int(self["rop_color_cache_ways"])),
            rop_depth=CacheConfig("rop_depth", int(self["rop_depth_cache_bytes"]), int(self["rop_depth_cache_ways"])),
            l2=CacheConfig("l2", int(self["l2_bytes"]), int(self["l2_ways"])))

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

PRESETS: dict[str, Preset] = {p.name: p for p in (IMR_BASELINE,)}


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise PresetError(f"unknown preset {name!r} (try: {', '.join(PRESETS)})") from None
