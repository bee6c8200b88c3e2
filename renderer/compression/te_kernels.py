"""Numba kernel of transaction elimination: a CRC-32 signature per screen tile of the colour
written (Arm: "16x16 px tiles, CRC signature", peers.md §2.6). The polynomial Arm uses is not
public; this is CRC-32/ISO-HDLC (zlib's), so a test can check it against zlib.crc32."""
from __future__ import annotations

import numpy as np
from numba import njit


def crc_table() -> np.ndarray:
    t = np.zeros(256, np.uint32)
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0xEDB88320 if c & 1 else c >> 1
        t[i] = c
    return t


@njit(cache=True, nogil=True)
def tile_crc(t0, t1, img_bytes, tile, table, out):
    """img_bytes: uint8 (h, w, bpp) surface bytes; into out, uint32 (tiles_y, tiles_x), the CRC
    of each tile t0..t1-1 (row-major; run in parts on several threads: renderer.workers.spread)
    of its bytes taken row by row within the tile (edge tiles: only the pixels inside)."""
    H, W, B = img_bytes.shape
    tx_n = out.shape[1]
    for t in range(t0, t1):
        ty, tx = t // tx_n, t % tx_n
        c = np.uint32(0xFFFFFFFF)
        for y in range(ty * tile, min(H, ty * tile + tile)):
            for x in range(tx * tile, min(W, tx * tile + tile)):
                for b in range(B):
                    c = table[(c ^ img_bytes[y, x, b]) & 0xFF] ^ (c >> np.uint32(8))
        out[ty, tx] = c ^ np.uint32(0xFFFFFFFF)
