"""Colour as the preset's codec stores it (issue 24): per 8x8 block of the block-linear surface,
the compressed payload bytes a store or a later load moves (renderer.compression.rop_block_bytes),
and where the codec's metadata lives. The replays attach these sizes to the lines they request
(renderer.memory_requests.request_block_as), so DRAM moves the compressed bytes.

The raster keeps RGBA8 values only: an attachment of another format (a G-buffer's 16 B texels,
which a lighting pass shows rather than keeps) moves raw."""
from __future__ import annotations

import numpy as np

from renderer.binning import RASTER_TILE
from renderer.compression import rop_block_bytes, tile_signatures
from renderer.compression.te import TE_TILE
from renderer.counters import Counters
from renderer.rop import resolve

NO_SIZES = np.zeros(0, np.int64)     # a surface that moves raw


def codec_for(preset, att) -> str | None:
    """The codec that stores `att` on this preset, None where it moves raw."""
    codec = preset.compression.codec.value
    return None if codec == "none" or att is None or att.format != "rgba8" else codec


def depth_codec_for(preset, att) -> str | None:
    """The depth codec that stores `att` on this preset ("htile"), None where it moves raw."""
    codec = preset.compression.depth_codec.value
    return None if codec == "none" or att is None or att.format != "d32f" else codec


def decompress_blocks(mm, level: int, surf, sizes: np.ndarray, att, width: int) -> Counters:
    """A decompress pass over a stored compressed surface: every block read at its stored size
    and written back raw (stream of the surface: colour or depth), counted as the post chain
    counts one (comp.decompress.events, .bytes: compressed read + raw written)."""
    stream = "depth" if att.format == "d32f" else "color"
    n, raw_block = sizes.shape[0], 64 * surf.bytes_per_pixel
    mm.read_blocks(level, surf, sizes, stream)
    mm.clear(level, surf, np.ones(n, np.bool_), stream, -(-width // 8), RASTER_TILE,
             -(-width // RASTER_TILE))
    comp = stored_payload(sizes, surf.bytes_per_pixel)
    return Counters({"comp.decompress.events": 1, "comp.decompress.bytes": comp + n * raw_block})


def stored_payload(sizes: np.ndarray, bytes_per_pixel: int) -> int:
    """The payload bytes of a surface stored at `sizes` (per 8x8 block; -1: a raw block)."""
    return int(np.where(sizes >= 0, sizes, 64 * bytes_per_pixel).sum())


def block_sizes(preset, codec: str, color: np.ndarray, clear=None) -> np.ndarray:
    """int64 per 8x8 block (flat, row-major): the payload bytes `color` ((h, w, 4), or a
    (h, w, samples, 4) target, resolved as a tiler stores it) stores as under `codec`."""
    mcb = int(preset.compression.dcc_max_compressed_block.value)
    img = color if color.ndim == 3 else resolve(color)
    return rop_block_bytes(img, codec, mcb, clear).reshape(-1)


class BandSizes:
    """The store sizes of a tiler's colour, filled in band by band as the raster finishes tile
    rows (a tile is stored once its pixels are final). `sizes`: what each block is stored as in
    memory (a later pass reads it so); `store`: what the tile store writes, which the replay
    reads. With transaction elimination (`previous`: the last frame's signature map, or None for
    a first frame) each 16x16 tile's CRC is taken as its pixels are final, and the blocks of a
    tile whose CRC equals last frame's get -1 in `store`: not written, memory already holds them
    (renderer.compression.te). Without it the two are one array."""

    def __init__(self, preset, codec: str | None, color: np.ndarray, tile: int, tiles_x: int,
                 te: bool = False, previous: np.ndarray | None = None):
        self.preset, self.codec, self.color, self.tile, self.tiles_x = preset, codec, color, tile, tiles_x
        h, w = color.shape[:2]
        self.blocks_x = -(-w // 8)
        self.sizes = np.zeros(-(-h // 8) * self.blocks_x, np.int64)
        self.store = self.sizes.copy() if te else self.sizes
        self.done = 0                   # pixel rows whose sizes are in
        self.te, self.previous = te, previous
        self.signatures = np.zeros((-(-h // TE_TILE), -(-w // TE_TILE)), np.uint32) if te else None
        self.kept = 0                   # TE tiles not written, and the bytes they would have moved
        self.saved = 0

    def fill(self, tiles_done: int) -> None:
        """Sizes for every tile row of the first `tiles_done` tiles (bands end at whole rows)."""
        h = self.color.shape[0]
        y1 = min(h, (tiles_done // self.tiles_x) * self.tile)
        if y1 <= self.done:
            return
        rows = resolve(self.color[self.done:y1])
        if self.codec is None:          # raw, but sized so that TE can leave blocks out
            part = np.full(-(-rows.shape[0] // 8) * self.blocks_x, 8 * 8 * 4, np.int64)
        else:
            part = block_sizes(self.preset, self.codec, rows)
        first = (self.done // 8) * self.blocks_x
        self.sizes[first:first + part.shape[0]] = part
        if self.te:                      # bands end on whole 16-px rows (tiles are 16 px or more)
            sig = tile_signatures(rows)
            t0 = self.done // TE_TILE
            self.signatures[t0:t0 + sig.shape[0]] = sig
            if self.previous is not None and self.previous.shape == self.signatures.shape:
                same = sig == self.previous[t0:t0 + sig.shape[0]]
                per_block = np.repeat(np.repeat(same, 2, axis=0), 2, axis=1)
                per_block = per_block[:-(-rows.shape[0] // 8), :self.blocks_x].reshape(-1)
                self.kept += int(same.sum())
                self.saved += int(part[per_block].sum())
                part = np.where(per_block, -1, part)
            self.store[first:first + part.shape[0]] = part
        self.done = y1
