"""Memory: every access priced by stream, read or write, through ROP caches and L2 to DRAM.

Consumes line-sized requests (from the architectures' replay of raster events, clears, resolves,
stores, geometry fetch); produces the mem.* counters and a per-tile DRAM byte map. Surfaces are
block-linear (8x8-pixel blocks), textures 4x4-texel blocks, buffers linear; each lives in its own
address region so lines never alias.

    mm = MemoryModel(MemoryConfig.from_preset(preset), n_tiles)
    color = mm.surface("color", "rgba8", samples=1)
    ...  architecture replays requests with memory_kernels.access(mm.state, mm.acc, ...)
    counters = mm.counters()
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from . import memory_kernels as mk
from .counters import STREAMS, Counters
from .formats import FORMATS

STREAM = {name: i for i, name in enumerate(STREAMS)}
ROP_COLOR, ROP_DEPTH, L2 = 0, 1, 2     # cache levels; requests enter at the unit's own level


@dataclass(frozen=True)
class CacheConfig:
    name: str
    size_bytes: int
    ways: int

    def n_sets(self, line_bytes: int) -> int:
        sets = self.size_bytes // (line_bytes * self.ways)
        if sets < 1:
            raise ValueError(f"cache {self.name}: {self.size_bytes} B cannot hold {self.ways} ways of {line_bytes} B")
        return sets


@dataclass(frozen=True)
class MemoryConfig:
    line_bytes: int
    rop_color: CacheConfig
    rop_depth: CacheConfig
    l2: CacheConfig

    @property
    def levels(self) -> tuple[CacheConfig, ...]:
        return (self.rop_color, self.rop_depth, self.l2)


class CacheState(NamedTuple):
    tag: np.ndarray       # int64 (levels, sets, ways) line address, -1 empty
    stamp: np.ndarray     # int64 (levels, sets, ways) last use (LRU)
    dirty: np.ndarray     # bool
    stream: np.ndarray    # int8 stream that allocated the line (DRAM writes are charged to it)
    tile: np.ndarray      # int32 screen tile charged for its DRAM traffic, -1 none
    n_sets: np.ndarray    # int64 (levels,)
    n_ways: np.ndarray    # int64 (levels,)
    next: np.ndarray      # int64 (levels,) level below, -1 = DRAM
    clock: np.ndarray     # int64 (1,)
    line_bytes: int
    line_shift: int


class Accumulators(NamedTuple):
    dram_read: np.ndarray     # int64 (streams,) bytes
    dram_write: np.ndarray
    onchip_read: np.ndarray   # bytes requested of the first cache level by the units
    onchip_write: np.ndarray
    hits: np.ndarray          # int64 (levels,)
    misses: np.ndarray
    tile_bytes: np.ndarray    # int64 (n_tiles,) DRAM bytes charged to each screen tile


class Surface(NamedTuple):
    region: int
    bytes_per_pixel: int      # all samples of one pixel


class MemoryModel:
    def __init__(self, config: MemoryConfig, n_tiles: int):
        lb = config.line_bytes
        if lb & (lb - 1):
            raise ValueError(f"line size must be a power of two, got {lb}")
        levels = config.levels
        sets = [c.n_sets(lb) for c in levels]
        ways = [c.ways for c in levels]
        shape = (len(levels), max(sets), max(ways))
        self.config = config
        self.state = CacheState(
            np.full(shape, -1, np.int64), np.zeros(shape, np.int64), np.zeros(shape, np.bool_),
            np.zeros(shape, np.int8), np.full(shape, -1, np.int32), np.array(sets, np.int64),
            np.array(ways, np.int64), np.array([L2, L2, -1], np.int64), np.zeros(1, np.int64),
            lb, lb.bit_length() - 1)
        ns = len(STREAMS)
        self.acc = Accumulators(*(np.zeros(ns, np.int64) for _ in range(4)),
                                np.zeros(len(levels), np.int64), np.zeros(len(levels), np.int64),
                                np.zeros(n_tiles, np.int64))
        self._regions: dict = {}

    def region(self, key) -> int:
        """A stable region id for a surface name or buffer object."""
        return self._regions.setdefault(key, len(self._regions) + 1)

    def surface(self, name: str, fmt: str, samples: int) -> Surface:
        bpp = FORMATS[fmt].bytes_per_sample * samples
        if self.config.line_bytes % bpp:
            raise ValueError(f"line of {self.config.line_bytes} B does not hold whole {bpp}-B pixels")
        return Surface(self.region(name), bpp)

    def address(self, region: int, offset=0):
        return (region << mk.REGION_SHIFT) + offset

    def flush(self, surface: Surface, store: bool) -> None:
        mk.flush_region(self.state, self.acc, surface.region, not store)

    def counters(self) -> Counters:
        c = Counters()
        for i, s in enumerate(STREAMS):
            for key, arr in (("mem.dram.read.", self.acc.dram_read), ("mem.dram.write.", self.acc.dram_write),
                             ("mem.onchip.read.", self.acc.onchip_read),
                             ("mem.onchip.write.", self.acc.onchip_write)):
                if arr[i]:
                    c[key + s] = int(arr[i])
        for lvl, cfg in enumerate(self.config.levels):
            c[f"mem.cache.{cfg.name}.hits"] = int(self.acc.hits[lvl])
            c[f"mem.cache.{cfg.name}.misses"] = int(self.acc.misses[lvl])
        return c
