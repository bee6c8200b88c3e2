"""Transaction elimination (Arm Mali): consumes the colour a frame writes, produces one CRC
signature per tile; a tile whose signature equals the previous frame's is not written to DRAM
(peers.md §2.6: 16x16 tiles, CRC, "up to 99%" on static content; seed-notes 004_partA.md L760:
TE is Arm's, not Apple's). The signatures themselves are memory traffic: each frame writes its
signature buffer and reads the previous one (SIGNATURE bytes per tile)."""
from __future__ import annotations

import numpy as np

from ..workers import spread
from .codecs import CompressionError, as_surface
from .te_kernels import crc_table, tile_crc

TE_TILE = 16                         # px, Mali's transaction-elimination tile (peers.md §2.6)
SIGNATURE = np.dtype(np.uint32)      # one CRC-32 per tile: 4 B
_TABLE = crc_table()


def tile_signatures(surface: np.ndarray, tile: int = TE_TILE) -> np.ndarray:
    """uint32 (tiles_y, tiles_x): CRC-32 of each tile's pixel bytes."""
    img, _ = as_surface(surface)
    if tile < 1:
        raise CompressionError(f"tile size must be positive, got {tile}")
    out = np.zeros((-(-img.shape[0] // tile), -(-img.shape[1] // tile)), np.uint32)
    spread(tile_crc, out.size, img.view(np.uint8), tile, _TABLE, out)
    return out


def tiles_to_write(previous: np.ndarray | None, current: np.ndarray) -> np.ndarray:
    """bool (tiles_y, tiles_x): tiles whose signature changed (all of them with no previous frame)."""
    if previous is None:
        return np.ones(current.shape, bool)
    if previous.shape != current.shape:
        raise CompressionError(f"signature maps differ in shape: {previous.shape} vs {current.shape}")
    return previous != current
