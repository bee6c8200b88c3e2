"""The parameter types (DESIGN.md §5): a parameter (`Param`: value, source, label), the base of
the typed records (`Record`), and the records of the raster and memory features, whose tables are
the built-in presets' (pipelines.presets). The front end, compression and RT records live beside
their tables (pipelines.presets.frontend, .compression, .rt); `Preset` (pipelines.presets.preset)
holds one of each. This module imports no table, so that every table can import it."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Iterator, Literal

from renderer.memory import CacheConfig, MemoryConfig

Label = Literal["spec", "measured", "derived", "assumed", "user"]   # user: --set or a preset file
LABELS = ("spec", "measured", "derived", "assumed", "user")
MESA_BINNING = "Mesa radeonsi si_state_binning.c (peers.md §2.7)"
SEED0 = "seed 000 (seed-notes/000_partA.md, 000_partB.md)"
SEED4 = "seed 004 (seed-notes/004_partA.md)"


class PresetError(ValueError):
    pass


@dataclass(frozen=True)
class Param:
    value: float | int | str | bool
    source: str
    label: Label

    def __post_init__(self):
        if self.label not in LABELS:
            raise PresetError(f"bad label {self.label!r}")


@dataclass(frozen=True)
class Record:
    """A feature's parameters, one `Param` per field; None where the part lacks the unit."""

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    def items(self) -> Iterator[tuple[str, Param]]:
        """(name, Param) of every parameter the part has, in field order."""
        for name in self.names():
            p = getattr(self, name)
            if p is not None:
                yield name, p

    def as_dict(self) -> dict[str, float | int | str | bool]:
        """name -> value, for code below pipelines/ that takes plain values (renderer.frontend,
        the post chain's policy)."""
        return {name: p.value for name, p in self.items()}

    @classmethod
    def of(cls, params: dict[str, Param]):
        """The record from a flat name -> Param table; a name that is no field raises."""
        unknown = set(params) - set(cls.names())
        if unknown:
            raise PresetError(f"{cls.__name__} has no parameter {', '.join(sorted(unknown))} "
                              f"(its names: {', '.join(cls.names())})")
        return cls(**params)


@dataclass(frozen=True)
class RasterParams(Record):
    """What the immediate-mode raster (pipelines.arch.imr, which DSBR runs on) reads."""
    hiz: Param = Param(False, "no hierarchical Z unless the part's sources give it one (the "
                              "generic baseline has none)", "assumed")
    fast_clear: Param = Param(False, "no fast clear unless the part's sources give it one (the "
                                     "generic baseline has none)", "assumed")


@dataclass(frozen=True)
class BinningParams(Record):
    """What draw-stream binning (pipelines.arch.dsbr) reads."""
    num_rbs: Param
    num_l2_channels: Param
    binning: Param
    max_alloc_count: Param
    bin_table: Param = Param("gfx10", f"GFX10+ bin sizes from the RBs' on-chip tag budgets "
                                      f"(gfx10_get_bin_sizes), {MESA_BINNING}", "spec")
    min_bin_height: Param = Param(64, f"GFX10-11's minimum bin is 128x64, {MESA_BINNING}", "spec")
    batch_deferred_shading: Param = Param(False, "AMD's DSBR shades a batch in submission order; "
                                                 "deferred shading within a batch is a what-if "
                                                 "(pipelines.arch.dsbr)", "assumed")
    bin_size: Param | None = None      # "WxH" px: a fixed bin (tilesim --set dsbr.bin); None:
                                       # from bin_table and the RBs' tag budgets


@dataclass(frozen=True)
class TilerParams(Record):
    """What the tile-based deferred renderer (pipelines.arch.tbdr) reads."""
    tile_px: Param
    tile_memory_bytes: Param
    param_buffer_bytes: Param
    hsr: Param = Param(True, f"Apple's TBDR removes hidden surfaces before shading, the deferred "
                             f"HSR the Mali and Adreno presets lack ({SEED4} L730-760)", "spec")


# The default of MemoryParams.rb_l2_client for a part with ROP caches (pipelines.presets.preset).
RB_L2_CLIENT = Param(True, f"the render backends write through L2, as on every part here but GCN "
                           f"1.0/1.1 ({SEED0} L485-499, L721-725)", "assumed")


@dataclass(frozen=True)
class MemoryParams(Record):
    """The memory system (renderer.memory): the line, the caches a part has (None: not there),
    DRAM bandwidth."""
    cache_line_bytes: Param
    l2_bytes: Param
    l2_ways: Param
    dram_gbps: Param
    rop_color_cache_bytes: Param | None = None     # IMR and DSBR: the ROP caches in front of L2
    rop_color_cache_ways: Param | None = None
    rop_depth_cache_bytes: Param | None = None
    rop_depth_cache_ways: Param | None = None
    param_cache_bytes: Param | None = None         # TBDR: the tiler's parameter cache
    param_cache_ways: Param | None = None
    llc_bytes: Param | None = None                 # last level, between L2 and DRAM: AMD's Infinity
                                                   # Cache (read-allocate) or a tiler's SLC
    llc_ways: Param | None = None
    rb_l2_client: Param | None = None              # IMR and DSBR: the ROPs are L2 clients

    def config(self, compressed_in_cache: bool = False) -> MemoryConfig:
        """The caches; `compressed_in_cache` (the preset's compression key): the L2 (a tiler's
        GPU L2 / system cache) keeps compressed blocks in the lines their bytes fill."""
        line = int(self.cache_line_bytes.value)
        l2 = CacheConfig("l2", int(self.l2_bytes.value), int(self.l2_ways.value),
                         holds_compressed=compressed_in_cache)
        if self.param_cache_bytes is not None:      # param cache (TILER_PARAM) in front of L2 (or the SLC)
            param = CacheConfig("param", int(self.param_cache_bytes.value), int(self.param_cache_ways.value))
            if self.llc_bytes is None:              # one level stands for the GPU's L2 and the SLC
                return MemoryConfig(line, (param, l2), (1, -1))
            # the GPU's L2 in front of the SoC's system-level cache, which every write also fills
            slc = CacheConfig("llc", int(self.llc_bytes.value), int(self.llc_ways.value))
            return MemoryConfig(line, (param, l2, slc), (1, 2, -1))
        config = MemoryConfig.rop_l2(
            line,
            CacheConfig("rop_color", int(self.rop_color_cache_bytes.value), int(self.rop_color_cache_ways.value)),
            CacheConfig("rop_depth", int(self.rop_depth_cache_bytes.value), int(self.rop_depth_cache_ways.value)),
            l2)
        if not self.rb_l2_client.value:     # GCN 1.0: the render backends write to memory, not through L2
            config = MemoryConfig(config.line_bytes, config.caches, (-1, -1, -1))
        if self.llc_bytes is not None:      # Infinity Cache: read-allocate, between L2 and DRAM
            llc = CacheConfig("llc", int(self.llc_bytes.value), int(self.llc_ways.value), write_allocate=False)
            config = MemoryConfig(config.line_bytes, (*config.caches, llc), (2, 2, 3, -1))
        return config
