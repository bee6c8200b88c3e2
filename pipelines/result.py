"""Result of rendering one frame through one preset: images, counters, heat maps."""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from renderer.counters import Counters


@dataclass
class Result:
    scene: str
    preset: str
    width: int
    height: int
    samples: int
    color: np.ndarray          # uint8 (h, w, 4) resolved colour of the last pass, row 0 on top
    depth: np.ndarray          # float32 (h, w) window depth, nearest sample; 1.0 where uncovered
    counters: Counters
    tile_maps: dict[str, np.ndarray] = field(default_factory=dict)   # (tiles_y, tiles_x) each
    pixel_maps: dict[str, np.ndarray] = field(default_factory=dict)  # (h, w) each
    tile_size: int = 0
    dram_gbps: float | None = None
    seconds: float = 0.0
    memory: object = None      # renderer.memory.MemoryModel the frame's passes met: the ray
                               # passes after it go through the same caches (pipelines.frame)
    history: dict = field(default_factory=dict)   # what the next frame of a sequence compares
                               # with: transaction elimination's tile signatures by attachment
    presented: np.ndarray | None = None   # the last pass's colour as stored for the display:
                               # payload bytes per 8x8 block (-1 raw), None: stored raw

    def derived(self) -> dict[str, float]:
        return self.counters.derived(self.dram_gbps)
