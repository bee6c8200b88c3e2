"""The preset types: a named GPU (`Preset`) and its parameters (`Param`), each with its source and
label (DESIGN.md §5). The built-in presets are in pipelines.presets; the parameters of each
feature (front end, compression, ray tracing) in its module beside this one."""
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

    def get(self, key: str, default=None):
        """An optional parameter's value (features a preset may not have, e.g. "hiz")."""
        return self.params[key].value if key in self.params else default

    @property
    def memory(self) -> MemoryConfig:
        l2 = CacheConfig("l2", int(self["l2_bytes"]), int(self["l2_ways"]))
        rop_to_dram = not self.get("rb_l2_client", True)
        if self.architecture == "tbdr":       # param cache (TILER_PARAM) in front of the SLC
            return MemoryConfig(int(self["cache_line_bytes"]), (CacheConfig(
                "param", int(self["param_cache_bytes"]), int(self["param_cache_ways"])), l2), (1, -1))
        config = MemoryConfig.rop_l2(
            int(self["cache_line_bytes"]),
            CacheConfig("rop_color", int(self["rop_color_cache_bytes"]), int(self["rop_color_cache_ways"])),
            CacheConfig("rop_depth", int(self["rop_depth_cache_bytes"]), int(self["rop_depth_cache_ways"])),
            l2)
        if rop_to_dram:           # GCN 1.0: the render backends write to memory, not through L2
            config = MemoryConfig(config.line_bytes, config.caches, (-1, -1, -1))
        if "llc_bytes" in self.params:      # Infinity Cache: read-allocate, between L2 and DRAM
            llc = CacheConfig("llc", int(self["llc_bytes"]), int(self["llc_ways"]), write_allocate=False)
            config = MemoryConfig(config.line_bytes, (*config.caches, llc), (2, 2, 3, -1))
        return config

    @property
    def dram_gbps(self) -> float:
        return float(self["dram_gbps"])
