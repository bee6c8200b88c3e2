"""Counters: one flat record of named int64 counters per frame, merged by addition (DESIGN.md §6),
plus per-tile maps. Derived figures are computed from counters, never counted twice.

Counters are sparse (a zero is not stored), so a registered name that was never added reads 0;
a name that is no counter (a misspelling) raises KeyError. The names are registered here, in
`_GRAMMAR`, one line per family, with the module that writes them; the kernels' own lists
(renderer.raster_kernels.COUNTER_NAMES, renderer.bvh.traverse_kernels.COUNTER_NAMES) are
taken as they are. `is_counter(name)` says whether a name is one."""
from __future__ import annotations

import re
from collections import Counter as _Bag
from functools import lru_cache

import numpy as np

# comp_meta: a framebuffer codec's metadata (DCC keys, HTILE words of a compressed depth, AFBC
# headers, Apple subtile records), apart from meta (fast-clear CMASK/HTILE, hierarchical Z).
STREAMS = ("index", "vertex", "param", "color", "depth", "resolve", "texture", "meta",
           "bvh_node", "bvh_leaf", "compute", "comp_meta", "rt_stack", "bvh_tlas")
RAY_PASSES = ("primary", "shadow", "ao")     # scenes.model.RAY_PASSES (renderer does not import
                                             # scenes; tests/test_counters.py checks they agree)


def _any(*names) -> str:
    return "(?:" + "|".join(re.escape(n) for n in names) + ")"


@lru_cache(maxsize=1)
def _grammar() -> re.Pattern:
    """Every counter name, one alternative per family (made on the first miss: the kernel
    modules are imported then, not when this one is)."""
    from renderer.bvh import traverse_kernels as tk
    from renderer.bvh import two_level_kernels as tlk
    from renderer import raster_kernels as rk
    stream, rw, part = _any(*STREAMS), "(?:read|write)", r"[^.]+"   # part: a pass or surface name
    rt_costs = _any("rays", "hits", "bytes.node", "bytes.leaf", "stack.onchip_bytes", *tk.COUNTER_NAMES,
                    "bytes.tlas", "bytes.instance", *tlk.TLAS_COUNTER_NAMES)
    families = [
        _any(*rk.COUNTER_NAMES),                                        # renderer.raster
        rf"mem\.(?:dram|onchip)\.{rw}\.{stream}",                        # renderer.memory
        rf"comp\.dram\.{rw}\.{stream}(?:\.raw)?",                        # renderer.memory: the
                                                                        # compressed lines' DRAM bytes
        r"mem\.cache\.\w+\.(?:hits|misses)",                             # a cache by its name
        rf"surf\.\S+\.{rw}(?:\.raw)?",                                     # renderer.memory: a named
                                                                        # surface's DRAM bytes
        rf"rop\.fast_clear\.eliminated_blocks\.{stream}",                # pipelines.arch.imr
        r"tile\." + _any("tiles", "memory_bytes", "param_bytes", "partial_renders",   # .tbdr
                        "partial_render.load_bytes", "partial_render.store_bytes",
                        "fallback.tile_shrink", "fallback.pass_split", "fallback.over_budget"),
        r"dsbr\." + _any("bin_width", "bin_height", "bin_widened", "batches", "batches_binned",  # .dsbr
                        "batch_break.primitive_limit", "batch_break.state_change",
                        "batch_break.alloc_budget", "fallback.ps_kill_depth_write",
                        "fallback.binning_off", "fallback.bin_size_zero"),
        r"geom\." + _any("indices", "setup_triangles", "prims_in", "prims_clipped",   # renderer.geometry,
                        "vertices_shaded", "vertices_attr_shaded", "vs_alu_ops",         # .frontend
                        "cull_alu_ops", "cache_hits", "ngg.subgroups", "ngg.small_bbox",
                        "meshlets", "meshlets_culled.cone", "meshlets_culled.frustum",
                        "mesh.vertices_shaded", "mesh.duplicated_vertices", "mesh.export_bytes",
                        "fallback.mesh_budget", "fallback.stream_out",
                        "draws.legacy", "draws.ngg", "draws.mesh",
                        *(f"prims_culled.{r}" for r in ("backface", "zero_area", "frustum",
                                                        "small", "meshlet"))),
        rf"rt\.(?:{_any(*RAY_PASSES)}\.)?{rt_costs}",                    # renderer.bvh.traverse
        rf"rt\.(?:{_any(*RAY_PASSES)}\.)?dram_read\.{stream}",            # pipelines.passes.raytrace
        rf"rt\.(?:{_any(*RAY_PASSES)}\.)?cache\.(?:l0|l1|l2)\.(?:hits|misses|bytes)",   # (its caches)
        r"comp\." + _any("blocks", "raw_bytes", "compressed_bytes", "tax_bytes",      # pipelines.passes
                        "decompress.bytes", "decompress.events", "recompress.events",  # .postchain
                        "rmw.bytes", "cache.hit_bytes"),
        rf"comp\.pass\.{part}\.(?:{rw}|tax|rmw|decompress|cache_hit)_bytes",
        rf"comp\.surface\.{part}\.(?:(?:{rw}|raw|compressed|tax)_bytes|decompress\.events)",
        rf"comp\.stream\.{stream}\.{rw}\.(?:raw|compressed)_bytes",
        r"te\." + _any("tiles", "tiles_written", "saved_bytes"),    # pipelines.passes.postchain
                                                                   # (transaction elimination)
        r"display\.scanout\.(?:bytes|raw)",                          # pipelines.passes.present
    ]
    return re.compile("|".join(f"(?:{f})" for f in families))


def is_counter(name: str) -> bool:
    """Whether `name` is a counter (registered above), whether or not anything counted it."""
    return isinstance(name, str) and _grammar().fullmatch(name) is not None


class Counters(dict):
    """name -> int. `a + b` merges by addition; a counter never added reads 0, a name that is
    no counter raises KeyError (is_counter)."""

    def __missing__(self, key):
        if is_counter(key):
            return 0
        raise KeyError(f"{key!r} is not a counter name (renderer.counters: the names are "
                       f"registered in _grammar)")

    def add(self, name: str, value) -> None:
        self[name] = self[name] + int(value)

    def __add__(self, other: "Counters") -> "Counters":
        out = Counters(self)
        for k, v in other.items():
            out.add(k, v)
        return out

    def dram_bytes(self, direction: str | None = None, stream: str | None = None) -> int:
        total = 0
        for k, v in self.items():
            if not k.startswith("mem.dram."):      # (most names: no split for them; a report
                continue                            # row asks this some 50 times)
            parts = k.split(".")
            if len(parts) == 4 and (direction in (None, parts[2])) and (stream in (None, parts[3])):
                total += v
        return total

    def derived(self, dram_gbps: float | None = None, fps: float = 60.0) -> dict[str, float]:
        """Overdraw = shaded fragments / covered pixels; MB per frame; GB/s at `fps` and the share
        of the preset's DRAM bandwidth that is."""
        covered = self["raster.pixels_covered"]
        dram = self.dram_bytes()
        out = {
            "overdraw": self["raster.shaded"] / covered if covered else 0.0,
            "dram_mb": dram / 1e6,
            "dram_read_mb": self.dram_bytes("read") / 1e6,
            "dram_write_mb": self.dram_bytes("write") / 1e6,
            "gbps_at_fps": dram * fps / 1e9,
        }
        if dram_gbps:
            out["dram_bw_share"] = out["gbps_at_fps"] / dram_gbps
        for s in STREAMS:
            b = self.dram_bytes(stream=s)
            if b:
                out[f"dram_mb.{s}"] = b / 1e6
        return out

    def as_json(self) -> dict:
        return {k: int(v) for k, v in sorted(self.items())}


def merge(records) -> Counters:
    bag = _Bag()
    for r in records:
        bag.update(r)
    return Counters(bag)


def from_array(names, values: np.ndarray, prefix: str = "") -> Counters:
    """Kernel counters come back as an int64 array indexed by an IntEnum; name them."""
    return Counters({prefix + n: int(v) for n, v in zip(names, values) if v})
