"""Counters: one flat record of named int64 counters per frame, merged by addition (DESIGN.md §6),
plus per-tile maps. Derived figures are computed from counters, never counted twice."""
from __future__ import annotations

from collections import Counter as _Bag

import numpy as np

STREAMS = ("index", "vertex", "param", "color", "depth", "resolve", "texture", "meta",
           "bvh_node", "bvh_leaf", "compute")


class Counters(dict):
    """name -> int. `a + b` merges by addition; missing names read as 0."""

    def __missing__(self, key):
        return 0

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
            parts = k.split(".")
            if len(parts) == 4 and parts[:2] == ["mem", "dram"]:
                if (direction in (None, parts[2])) and (stream in (None, parts[3])):
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
