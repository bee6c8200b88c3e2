"""Lossless depth codec modelled on AMD's HTILE-based Z compression: consumes a d32f depth
surface (float32 (h, w), or (h, w, s) with s samples per pixel, row 0 on top), produces an
EncodedDepth (payload bytes, one HTILE word per 8x8 tile, payload bytes per tile); decode gives
the surface back bit for bit.

    from renderer.compression import encode_depth, decode_depth, depth_compressed_size
    enc = encode_depth(depth, clear=1.0)         # clear: the fast-clear value (a register)
    assert (decode_depth(enc).view(np.uint32) == depth.view(np.uint32)).all()
    depth_compressed_size(depth, clear=1.0)      # bytes, size-only path (no payload written)

Each 8x8 tile (all its samples) is one of:

    mode    when                          payload                               source
    CLEAR   every sample's bits equal     none                                  fast Z clear,
            the clear value                                                     O(tiles): seed L315
    PLANES  at most max_planes planes     planes x 24 B (z0, dzdx, dzdy as     Z compression,
            reproduce every sample's      float64), then ceil(log2 planes)      lossless 2:1-4:1:
            float32 bits                  select bits per sample (sample        seed L314; layout,
                                          order, LSB first), rounded up to      24 B, 32 B: assumed
                                          32 B; only if smaller than raw
    RAW     otherwise                     64 x s x 4 B float32, sample order    d32f

    metadata: one 4 B HTILE word per 8x8 tile, as the repo already models AMD's HTILE
    (pipelines/arch/imr_kernels HTILE_BYTES, imr.py HTILE_BITS; the seed notes, 000_partA.md
    L52-59, L158, L294, name HTILE, Hi-Z, Z compression and fast clear (seed L309-317, L503),
    not its size). Its
    low 4 bits (a ZMASK-like code, assumed): 0 clear, 1..14 the plane count, 15 raw; the other
    28 bits are 0 here (AMD keeps Hi-Z min/max there). The payload of tile t starts after those
    of tiles 0..t-1 (raster order), so the words alone give every offset.

Assumed (AMD does not publish them): MAX_PLANES = 2 for d32f, planes as three float64
coefficients (24 B: float32 coefficients cannot reproduce a float64-evaluated plane exactly),
the 32 B granule. A plane is evaluated at the sample's position in 1/256 px relative to the
tile centre, float32(dzdx * u + dzdy * v + z0): the raster's own formula (raster_sections), so
a tile one triangle covers is one plane; the sample positions are registers like the clear
value (D3D standard 4x by default, as raster.RasterView; Vulkan's VK_EXT_sample_locations
asks for them at depth layout transitions, as a plane-compressed depth needs them). How the
planes are fitted: depth_kernels' docstring. Surfaces whose sides are not multiples of 8 are
padded by repeating the edge samples (the padding is encoded, decode writes only the surface).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import depth_kernels as K
from .codecs import CompressionError

TILE = K.TILE            # px, one HTILE word per 8x8 tile (AMD HTILE as imr_kernels models it)
HTILE = np.dtype("<u4")  # the HTILE word, 32 bits (pipelines/arch/imr_kernels HTILE_BYTES = 4)
PLANE = np.dtype([("z0", "<f8"), ("dzdx", "<f8"), ("dzdy", "<f8")])   # 24 B: assumed
GRANULE = 32             # B, a PLANES tile's payload is rounded up to this: assumed
MAX_PLANES = 2           # planes per d32f tile: assumed (not public)
FIT_ITERS = 8            # projections per plane before the minimax fit (depth_kernels step 4)
ZMASK_RAW = 15           # HTILE low 4 bits: 0 clear, 1..14 planes, 15 raw (assumed)
D3D_4X = np.array([(-2, -6), (6, -2), (-6, 2), (2, 6)], np.int64) * 16   # 1/256 px (raster.D3D_4X)


class EncodedDepth(NamedTuple):
    shape: tuple             # (h, w)
    samples: int             # s
    payload: np.ndarray      # uint8 (n,): tile bodies, raster order of tiles
    metadata: np.ndarray     # uint8 (tiles * 4,): HTILE words, little-endian
    tile_bytes: np.ndarray   # int64 (tiles_y, tiles_x): payload bytes of each tile (0: clear)
    mode: np.ndarray         # uint8 (tiles_y, tiles_x): depth_kernels MODE_RAW/PLANES/CLEAR
    clear: float | None      # fast-clear depth (a register, not memory)
    sample_xy: np.ndarray    # int64 (s, 2): sample offsets from the pixel centre, 1/256 px
    max_planes: int

    @property
    def raw_bytes(self) -> int:
        return self.shape[0] * self.shape[1] * self.samples * 4

    @property
    def compressed_bytes(self) -> int:
        return int(self.payload.size + self.metadata.size)

    @property
    def ratio(self) -> float:
        return self.raw_bytes / self.compressed_bytes


def as_depth(depth: np.ndarray) -> np.ndarray:
    """Validate a d32f surface: float32 (h, w, s), finite. (h, w) is one sample."""
    a = np.asarray(depth)
    if a.dtype != np.float32:
        raise CompressionError(f"a depth surface is float32 (d32f), got {a.dtype}")
    if a.ndim == 2:
        a = a[:, :, None]
    if a.ndim != 3 or a.size == 0:
        raise CompressionError("a depth surface is (h, w) or (h, w, samples), non-empty, "
                               f"got shape {np.shape(depth)}")
    if not np.isfinite(a).all():
        raise CompressionError("depth samples must be finite (NaN or inf found)")
    return np.ascontiguousarray(a)


def _padded(a: np.ndarray) -> np.ndarray:
    h, w = a.shape[:2]
    ph, pw = -h % TILE, -w % TILE
    return a if ph == pw == 0 else np.pad(a, ((0, ph), (0, pw), (0, 0)), mode="edge")


def _sample_xy(samples: int, sample_xy) -> np.ndarray:
    if sample_xy is None:
        if samples == 1:
            return np.zeros((1, 2), np.int64)
        if samples == 4:
            return D3D_4X.copy()
        raise CompressionError(f"no default sample positions for {samples} samples: pass sample_xy")
    xy = np.asarray(sample_xy, np.int64)
    if xy.shape != (samples, 2) or (np.abs(xy) > 128).any():
        raise CompressionError(f"sample_xy is ({samples}, 2) offsets within the pixel "
                               f"(1/256 px), got {xy.tolist()}")
    return np.ascontiguousarray(xy)


def _args(samples, clear, max_planes, sample_xy):
    if not 1 <= int(max_planes) < ZMASK_RAW:
        raise CompressionError(f"max_planes is 1..{ZMASK_RAW - 1} (a 4-bit HTILE code), "
                               f"got {max_planes}")
    if clear is not None and not np.isfinite(clear):
        raise CompressionError(f"the clear value must be finite, got {clear}")
    return _sample_xy(samples, sample_xy), np.float32(0.0 if clear is None else clear)


def _fit(depth, clear, max_planes, sample_xy):
    a = as_depth(depth)
    xy, cl = _args(a.shape[2], clear, max_planes, sample_xy)
    fit = K.fit_tiles(_padded(a), xy[:, 0].copy(), xy[:, 1].copy(), clear is not None, cl,
                      int(max_planes), FIT_ITERS, PLANE.itemsize, GRANULE)
    return a, xy, fit


def depth_tile_sizes(depth: np.ndarray, clear=None, max_planes: int = MAX_PLANES,
                     sample_xy=None) -> np.ndarray:
    """Fast size-only path: int64 (tiles_y, tiles_x), bytes each tile moves (payload + HTILE
    word). Equal to what encode_depth produces, without writing the payload."""
    _, _, (size, _, _, _, _) = _fit(depth, clear, max_planes, sample_xy)
    return size + HTILE.itemsize


def depth_compressed_size(depth: np.ndarray, clear=None, max_planes: int = MAX_PLANES,
                          sample_xy=None) -> int:
    """Bytes the compressed depth surface occupies: payload + HTILE words (size-only path)."""
    return int(depth_tile_sizes(depth, clear, max_planes, sample_xy).sum())


def encode_depth(depth: np.ndarray, clear=None, max_planes: int = MAX_PLANES,
                 sample_xy=None) -> EncodedDepth:
    a, xy, (size, mode, n_planes, planes, tags) = _fit(depth, clear, max_planes, sample_xy)
    flat = size.reshape(-1)
    offsets = np.concatenate(([0], np.cumsum(flat)[:-1])).reshape(size.shape)
    payload = np.zeros(int(flat.sum()), np.uint8)
    K.encode_tiles(_padded(a), mode, n_planes, planes, tags, offsets, PLANE.itemsize, payload)
    code = np.where(mode == K.MODE_CLEAR, 0, np.where(mode == K.MODE_RAW, ZMASK_RAW, n_planes))
    metadata = code.reshape(-1).astype(HTILE).view(np.uint8)
    return EncodedDepth(a.shape[:2], a.shape[2], payload, metadata, size, mode,
                        None if clear is None else float(np.float32(clear)), xy, int(max_planes))


def decode_depth(enc: EncodedDepth) -> np.ndarray:
    """The surface, bit for bit, from payload and HTILE words alone (plus the clear value and
    sample positions, registers). (h, w) for one sample, else (h, w, s)."""
    h, w = enc.shape
    s = enc.samples
    nty, ntx = -(-h // TILE), -(-w // TILE)
    code = enc.metadata.view(HTILE).reshape(nty, ntx).astype(np.int64) & 0xF
    mode = np.where(code == 0, K.MODE_CLEAR,
                    np.where(code == ZMASK_RAW, K.MODE_RAW, K.MODE_PLANES)).astype(np.uint8)
    n_planes = np.where(mode == K.MODE_PLANES, code, 0).astype(np.uint8)
    n = 64 * s
    size = np.where(mode == K.MODE_RAW, 4 * n, 0)
    for c in np.unique(n_planes[mode == K.MODE_PLANES]):
        size = np.where(n_planes == c, K.planes_bytes(int(c), n, PLANE.itemsize, GRANULE), size)
    flat = size.reshape(-1).astype(np.int64)
    offsets = np.concatenate(([0], np.cumsum(flat)[:-1])).reshape(nty, ntx)
    out = np.zeros((nty * TILE, ntx * TILE, s), np.float32)
    xy = enc.sample_xy
    K.decode_tiles(enc.payload, mode, n_planes, offsets, PLANE.itemsize, xy[:, 0].copy(),
                   xy[:, 1].copy(), np.float32(0.0 if enc.clear is None else enc.clear), out)
    out = out[:h, :w]
    return np.ascontiguousarray(out[:, :, 0] if s == 1 else out)
