"""Lossless framebuffer codecs: consume a surface (RGBA8 uint8 or RGBA16F as raw uint16 bit
patterns, (h, w, 4), row 0 on top), produce an Encoded surface (payload bytes, metadata bytes,
payload bytes per metadata block); decode gives the surface back bit for bit.

    from renderer.compression import encode, decode, compressed_size
    enc = encode(color, "dcc")                # or "afbc", "apple", "ubwc"
    enc.payload, enc.metadata, enc.block_bytes
    assert (decode(enc) == color).all()
    compressed_size(color, "afbc")            # bytes, size-only path (no payload written)

Codec layouts (sources in the layout table of codecs_kernels and in pipelines/compression_params):
DCC: 256 B blocks (Mesa MAX_UNCOMPRESSED_BLOCK_SIZE, seed-notes 000_partA.md L400), sizes in 64 B
sectors (L403, peers.md §4.1), a block compressed past `max_compressed_block` (64/128/256 B by
generation, 000_partA.md L401) is stored raw, 1 B of metadata per block (000_partA.md L404,
unverified there), fast-clear and constant colours (0000/0001/1110/1111, DCC_CONSTANT_ENCODE,
peers.md §4.1) cost metadata only. AFBC: 16x16 superblocks of 16 4x4 sub-blocks, 16 B header per
superblock, 6-bit sub-block size fields, solid-colour superblocks in the header (peers.md §4.2).
Apple: 16 KiB tiles raster-ordered, 16x16 subtiles Morton-ordered inside a tile, 8 B metadata per
subtile (peers.md §4.4); the body coding inside a subtile is not public and is this module's
delta groups (8x8), padded to 16 B. UBWC (Qualcomm): 256 B blocks of 16x4 (4 B) or 8x4 (8 B) px
(freedreno, peers.md §4.3); its coding, size granule (32 B here) and flag bytes (1 B here) are
not public.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..workers import spread
from . import codecs_kernels as K

CODECS = ("dcc", "afbc", "apple", "ubwc")
DCC_BLOCK = 256          # B, uncompressed DCC block (Mesa MAX_UNCOMPRESSED_BLOCK_SIZE, 000_partA.md L400)
DCC_SECTOR = 64          # B, compressed sizes come in 64 B sectors (000_partA.md L403, peers.md §4.1)
DCC_META = 1             # B of DCC metadata per block (000_partA.md L404: "commonly cited", unverified)
AFBC_SUPERBLOCK = 16     # px, 16x16 superblock (peers.md §4.2 AFBC_FORMAT_MOD_BLOCK_SIZE_16x16)
AFBC_SUBBLOCK = 4        # px, 4x4 sub-blocks, 16 per superblock (peers.md §4.2)
AFBC_HEADER = 16         # B per superblock (AFBC_HEADER_BYTES_PER_TILE, peers.md §4.2)
AFBC_SIZE_CAP = 63       # B, largest compressed sub-block a 6-bit size field holds (peers.md §4.2)
APPLE_TILE = 16 * 1024   # B, 16 KiB tiles (peers.md §4.4)
APPLE_SUBTILE = 16       # px, 16x16 compression subtile (peers.md §4.4)
APPLE_META = 8           # B per subtile (peers.md §4.4)
APPLE_GROUP = 8          # px, delta groups inside a subtile: assumed (the body format is not public)
APPLE_GRANULE = 16       # B, subtile payload rounded up to this: assumed
UBWC_BLOCK = 256         # B: 16x4 px at 4 B, 8x4 at 8 B (freedreno fdl6_get_ubwc_blockwidth, peers.md §4.3)
UBWC_GRANULE = 32        # B, compressed sizes in 32 B units: assumed (not public)
UBWC_META = 1            # B of flag buffer per block: assumed (freedreno sizes the flag buffer in blocks)
META_BYTES = {"dcc": DCC_META, "afbc": AFBC_HEADER, "apple": APPLE_META, "ubwc": UBWC_META}


class CompressionError(ValueError):
    pass


class Encoded(NamedTuple):
    codec: str
    shape: tuple            # (h, w)
    bits: int               # 8 (RGBA8) or 16 (RGBA16F bit patterns)
    payload: np.ndarray     # uint8 (n,): compressed and raw block bodies, in layout order
    metadata: np.ndarray    # uint8 (n_blocks * meta bytes,): DCC codes, AFBC headers, Apple records
    block_bytes: np.ndarray  # int64 (nby, nbx): payload bytes of each metadata block (0: metadata only)
    clear: tuple | None     # fast-clear colour (a register, not memory), DCC only
    max_compressed_block: int

    @property
    def raw_bytes(self) -> int:
        return self.shape[0] * self.shape[1] * 4 * (self.bits // 8)

    @property
    def compressed_bytes(self) -> int:
        return int(self.payload.size + self.metadata.size)

    @property
    def ratio(self) -> float:
        return self.raw_bytes / self.compressed_bytes


def as_surface(surface: np.ndarray) -> tuple[np.ndarray, int]:
    """Validate a surface; float16 is viewed as its uint16 bit patterns. Returns (array, bits)."""
    a = np.asarray(surface)
    if a.ndim != 3 or a.shape[2] != 4 or a.shape[0] < 1 or a.shape[1] < 1:
        raise CompressionError(f"a surface is (h, w, 4) RGBA, got shape {a.shape}")
    if a.dtype == np.float16:
        a = a.view(np.uint16)
    if a.dtype == np.uint8:
        return np.ascontiguousarray(a), 8
    if a.dtype == np.uint16:
        return np.ascontiguousarray(a), 16
    raise CompressionError(f"surfaces are uint8 (RGBA8) or uint16/float16 (RGBA16F), got {a.dtype}")


def layout(codec: str, bits: int, max_compressed_block: int = DCC_BLOCK,
           clear=None) -> np.ndarray:
    """The int64 layout array the kernels read (codecs_kernels L_*)."""
    if codec not in CODECS:
        raise CompressionError(f"unknown codec {codec!r} (try: {', '.join(CODECS)})")
    bpp = 4 * bits // 8
    L = np.zeros(K.L_N, np.int64)
    L[K.L_ONE] = 255 if bits == 8 else 0x3C00       # "1" of unorm8 and of half float 1.0
    if codec == "dcc":
        if max_compressed_block not in (64, 128, 256):
            raise CompressionError(f"DCC max compressed block is 64, 128 or 256 B, got {max_compressed_block}")
        px = DCC_BLOCK // bpp                        # 64 px at 4 B, 32 px at 8 B
        bw = 8
        bh = px // bw
        L[[K.L_CODEC, K.L_BW, K.L_BH, K.L_GW, K.L_GH]] = (K.CODEC_DCC, bw, bh, bw, bh)
        L[K.L_GRANULE], L[K.L_MAX_BLOCK] = DCC_SECTOR, max_compressed_block
        L[K.L_HAS_CLEAR] = clear is not None
    elif codec == "afbc":
        L[[K.L_CODEC, K.L_BW, K.L_BH, K.L_GW, K.L_GH]] = (
            K.CODEC_AFBC, AFBC_SUPERBLOCK, AFBC_SUPERBLOCK, AFBC_SUBBLOCK, AFBC_SUBBLOCK)
        L[K.L_GRANULE], L[K.L_GROUP_CAP] = 1, AFBC_SIZE_CAP
    elif codec == "ubwc":
        bw = 16 if bpp <= 4 else 8
        bh = UBWC_BLOCK // bpp // bw
        L[[K.L_CODEC, K.L_BW, K.L_BH, K.L_GW, K.L_GH]] = (K.CODEC_UBWC, bw, bh, bw, bh)
        L[K.L_GRANULE], L[K.L_MAX_BLOCK] = UBWC_GRANULE, UBWC_BLOCK
    else:
        L[[K.L_CODEC, K.L_BW, K.L_BH, K.L_GW, K.L_GH]] = (
            K.CODEC_APPLE, APPLE_SUBTILE, APPLE_SUBTILE, APPLE_GROUP, APPLE_GROUP)
        L[K.L_GRANULE] = APPLE_GRANULE
        L[K.L_MAX_BLOCK] = APPLE_SUBTILE * APPLE_SUBTILE * bpp
        L[K.L_SOLID_META] = bits == 8                # a 4 B colour fits beside the 8 B record's fields
    return L


def _clear_array(clear) -> np.ndarray:
    return np.zeros(4, np.int64) if clear is None else np.asarray(clear, np.int64).reshape(4)


def block_order(codec: str, bits: int, nby: int, nbx: int) -> np.ndarray:
    """Linear block indices (by * nbx + bx) in payload/metadata order. DCC and AFBC: raster
    order. Apple: 16 KiB tiles in raster order, 16x16 subtiles Morton-ordered inside a tile."""
    if codec != "apple":
        return np.arange(nby * nbx, dtype=np.int64)
    tile_px = APPLE_TILE // (4 * bits // 8)          # 4096 px: 64x64 at 4 B, 64x32 at 8 B
    tw = 64
    th = tile_px // tw
    sx, sy = tw // APPLE_SUBTILE, th // APPLE_SUBTILE
    by, bx = np.divmod(np.arange(nby * nbx, dtype=np.int64), nbx)
    lx, ly = bx % sx, by % sy
    morton = np.zeros_like(lx)
    for b in range(3):      # interleave x (even bits) and y (odd bits); at most 4 subtiles a side
        morton |= ((lx >> b) & 1) << (2 * b) | ((ly >> b) & 1) << (2 * b + 1)
    tile = (by // sy) * ((nbx + sx - 1) // sx) + bx // sx
    return np.lexsort((morton, tile))


def block_sizes(surface: np.ndarray, codec: str, max_compressed_block: int = DCC_BLOCK,
                clear=None) -> np.ndarray:
    """Fast size-only path: int64 (nby, nbx), bytes each metadata block moves (payload +
    metadata). Equal to what encode produces, without writing the payload."""
    img, bits = as_surface(surface)
    size, _, _, _ = _block_sizes(img, bits, layout(codec, bits, max_compressed_block, clear), clear)
    return size + META_BYTES[codec]


def _block_sizes(img: np.ndarray, bits: int, L: np.ndarray, clear):
    """K.block_sizes over the whole surface: (size, mode, group, solid) of every block."""
    bw, bh, gw, gh = (int(L[k]) for k in (K.L_BW, K.L_BH, K.L_GW, K.L_GH))
    nby, nbx = -(-img.shape[0] // bh), -(-img.shape[1] // bw)
    size, mode = np.zeros((nby, nbx), np.int64), np.zeros((nby, nbx), np.uint8)
    group = np.zeros((nby, nbx, (bw // gw) * (bh // gh)), np.uint8)
    solid = np.zeros((nby, nbx, 4), np.int64)
    spread(K.block_sizes, nby, img, _words(img, bits), bits, L, _clear_array(clear), size, mode,
           group, solid)
    return size, mode, group, solid


def _words(img: np.ndarray, bits: int) -> np.ndarray:
    """An 8-bit surface's pixels as uint32 words, row-major, for the kernels' vector ranges
    (renderer.block_ranges); empty for a 16-bit or non-contiguous one (a pixel at a time)."""
    if bits == 8 and img.flags.c_contiguous:
        return img.reshape(-1).view(np.uint32)
    return np.zeros(0, np.uint32)


def compressed_size(surface: np.ndarray, codec: str, max_compressed_block: int = DCC_BLOCK,
                    clear=None) -> int:
    """Bytes the compressed surface occupies in transit: payload + metadata (size-only path)."""
    return int(block_sizes(surface, codec, max_compressed_block, clear).sum())


def encode(surface: np.ndarray, codec: str, max_compressed_block: int = DCC_BLOCK,
           clear=None) -> Encoded:
    img, bits = as_surface(surface)
    L = layout(codec, bits, max_compressed_block, clear)
    size, mode, group, solid = _block_sizes(img, bits, L, clear)
    nby, nbx = size.shape
    order = block_order(codec, bits, nby, nbx)
    flat = size.reshape(-1)[order]
    offsets = np.zeros(nby * nbx, np.int64)
    offsets[order] = np.concatenate(([0], np.cumsum(flat)[:-1]))
    payload = np.zeros(int(flat.sum()), np.uint8)
    K.encode_blocks(img, _words(img, bits), bits, L, mode, group, offsets.reshape(nby, nbx),
                    payload)
    metadata = _pack_metadata(codec, bits, L, size, mode, group, solid, offsets, order)
    return Encoded(codec, img.shape[:2], bits, payload, metadata, size,
                   None if clear is None else tuple(int(c) for c in clear), max_compressed_block)


def decode(enc: Encoded) -> np.ndarray:
    """The surface, bit for bit, from payload and metadata alone (plus the clear register)."""
    h, w = enc.shape
    L = layout(enc.codec, enc.bits, enc.max_compressed_block, enc.clear)
    nby, nbx = -(-h // int(L[K.L_BH])), -(-w // int(L[K.L_BW]))
    order = block_order(enc.codec, enc.bits, nby, nbx)
    size, mode, group, colour, offsets = _unpack_metadata(enc, L, nby, nbx, order)
    out = np.zeros((h, w, 4), np.uint8 if enc.bits == 8 else np.uint16)
    K.decode_blocks(enc.payload, enc.bits, L, mode, group, offsets, colour, out)
    return out


# --- metadata as bytes -----------------------------------------------------------------------
# DCC: one code byte per block: n sectors (compressed), block/sector (raw), 0x10 fast clear,
#      0x20 | rgb1 << 1 | a1 constant colour.
# AFBC: 16 B header: uint32 body offset, then 16 x 6-bit sub-block size codes (1 raw, 2..63
#      bytes); a solid superblock has offset 0xFFFFFFFF and its colour as 4 x uint16 in bytes 4-11.
# UBWC: one flag byte per block: size in 32 B units (compressed), 256 / 32 = 8 (raw).
# Apple: 8 B record: mode byte (0 raw, 1 compressed, 2 solid), uint16 size in 16 B granules at
#      bytes 2-3, colour (RGBA8) at bytes 4-7 of a solid subtile.
DCC_CLEAR_CODE, DCC_CONST_CODE = 0x10, 0x20
AFBC_SOLID_OFFSET = 0xFFFFFFFF


def _pack_metadata(codec, bits, L, size, mode, group, solid, offsets, order) -> np.ndarray:
    n = size.size
    m = mode.reshape(-1)[order]
    s = size.reshape(-1)[order]
    col = solid.reshape(n, 4)[order]
    if codec == "dcc":
        code = np.where(m == K.MODE_COMP, s // DCC_SECTOR, DCC_BLOCK // DCC_SECTOR)
        one = L[K.L_ONE]
        const = DCC_CONST_CODE | (col[:, 0] == one) << 1 | (col[:, 3] == one)
        code = np.where(m == K.MODE_SOLID, const, code)
        code = np.where(m == K.MODE_CLEAR, DCC_CLEAR_CODE, code)
        return code.astype(np.uint8)
    if codec == "ubwc":
        return np.where(m == K.MODE_COMP, s // UBWC_GRANULE, UBWC_BLOCK // UBWC_GRANULE).astype(np.uint8)
    if codec == "afbc":
        head = np.zeros((n, AFBC_HEADER), np.uint8)
        off = offsets[order].astype(np.uint32)
        off[m == K.MODE_SOLID] = AFBC_SOLID_OFFSET
        head[:, 0:4] = off.view(np.uint8).reshape(n, 4)
        codes = group.reshape(n, -1)[order]                        # 16 x 6 bits = 96 bits
        head[:, 4:16] = _pack6(codes)
        sol = m == K.MODE_SOLID
        head[sol, 4:12] = col[sol].astype(np.uint16).view(np.uint8).reshape(-1, 8)
        return head.reshape(-1)
    rec = np.zeros((n, APPLE_META), np.uint8)
    rec[:, 0] = np.select([m == K.MODE_RAW, m == K.MODE_COMP, m == K.MODE_SOLID], [0, 1, 2])
    rec[:, 2:4] = (s // APPLE_GRANULE).astype(np.uint16).view(np.uint8).reshape(n, 2)
    sol = m == K.MODE_SOLID
    rec[sol, 4:8] = col[sol].astype(np.uint8)
    return rec.reshape(-1)


_SIX = np.arange(6, dtype=np.uint8)


def _pack6(codes: np.ndarray) -> np.ndarray:
    """(n, 16) codes of 6 bits -> (n, 12) bytes, LSB first."""
    bits = (codes[:, :, None] >> _SIX) & 1
    return np.packbits(bits.reshape(len(codes), -1).astype(np.uint8), axis=1, bitorder="little")


def _unpack6(packed: np.ndarray) -> np.ndarray:
    bits = np.unpackbits(packed, axis=1, bitorder="little").reshape(len(packed), 16, 6)
    return (bits.astype(np.uint8) << _SIX).sum(axis=2).astype(np.uint8)


def _unpack_metadata(enc: Encoded, L, nby, nbx, order):
    n = nby * nbx
    bw, bh = int(L[K.L_BW]), int(L[K.L_BH])
    raw_block = bw * bh * 4 * (enc.bits // 8)
    meta = enc.metadata
    mode = np.zeros(n, np.uint8)
    s = np.zeros(n, np.int64)
    group = np.zeros((n, (bw // int(L[K.L_GW])) * (bh // int(L[K.L_GH]))), np.uint8)
    col = np.zeros((n, 4), np.int64)
    offsets = np.zeros(n, np.int64)
    if enc.codec == "dcc":
        code = meta.astype(np.int64)
        raw_code = DCC_BLOCK // DCC_SECTOR
        mode[:] = np.select([code == DCC_CLEAR_CODE, code >= DCC_CONST_CODE, code == raw_code],
                            [K.MODE_CLEAR, K.MODE_SOLID, K.MODE_RAW], K.MODE_COMP)
        s = np.where(mode == K.MODE_COMP, code * DCC_SECTOR, np.where(mode == K.MODE_RAW, raw_block, 0))
        one = int(L[K.L_ONE])
        rgb = ((code >> 1) & 1) * one
        col[:] = np.stack([rgb, rgb, rgb, (code & 1) * one], 1)
        if enc.clear is not None:
            col[mode == K.MODE_CLEAR] = enc.clear
        offsets = np.concatenate(([0], np.cumsum(s)[:-1]))
    elif enc.codec == "ubwc":
        code = meta.astype(np.int64)
        raw = code == UBWC_BLOCK // UBWC_GRANULE
        mode[:] = np.where(raw, K.MODE_RAW, K.MODE_COMP)
        s = np.where(raw, raw_block, code * UBWC_GRANULE)
        offsets = np.concatenate(([0], np.cumsum(s)[:-1]))
    elif enc.codec == "afbc":
        head = meta.reshape(n, AFBC_HEADER)
        off = head[:, 0:4].copy().view(np.uint32).reshape(n).astype(np.int64)
        group[:] = _unpack6(head[:, 4:16])
        sol = off == AFBC_SOLID_OFFSET
        mode[:] = np.where(sol, K.MODE_SOLID, K.MODE_COMP)
        col[sol] = head[sol, 4:12].copy().view(np.uint16).reshape(-1, 4)
        offsets = np.where(sol, 0, off)
    else:
        rec = meta.reshape(n, APPLE_META)
        mode[:] = np.select([rec[:, 0] == 0, rec[:, 0] == 1], [K.MODE_RAW, K.MODE_COMP], K.MODE_SOLID)
        s = rec[:, 2:4].copy().view(np.uint16).reshape(n).astype(np.int64) * APPLE_GRANULE
        s = np.where(mode == K.MODE_RAW, raw_block, s)
        col[:] = rec[:, 4:8]
        offsets = np.concatenate(([0], np.cumsum(s)[:-1]))
    # metadata is in layout order; the kernels index blocks by (by, bx)
    inv = np.empty(n, np.int64)
    inv[order] = np.arange(n)
    return (s[inv].reshape(nby, nbx), mode[inv].reshape(nby, nbx),
            group[inv].reshape(nby, nbx, -1), col[inv].reshape(nby, nbx, 4),
            offsets[inv].reshape(nby, nbx))


def tile_size_map(surface: np.ndarray, codec: str, tile_px: int,
                  max_compressed_block: int = DCC_BLOCK, clear=None) -> np.ndarray:
    """int64 (tiles_y, tiles_x): compressed bytes (payload + metadata) of the blocks whose
    top-left pixel lies in each tile_px x tile_px screen tile: a tiler's store of that tile, or
    a heat map. Sums to compressed_size."""
    if tile_px < 1:
        raise CompressionError(f"tile size must be positive, got {tile_px}")
    img, bits = as_surface(surface)
    L = layout(codec, bits, max_compressed_block, clear)
    sizes = block_sizes(img, codec, max_compressed_block, clear)
    nby, nbx = sizes.shape
    ty = (np.arange(nby) * int(L[K.L_BH])) // tile_px
    tx = (np.arange(nbx) * int(L[K.L_BW])) // tile_px
    h, w = img.shape[:2]
    out = np.zeros((-(-h // tile_px), -(-w // tile_px)), np.int64)
    np.add.at(out, (ty[:, None], tx[None, :]), sizes)
    return out


ROP_BLOCK = 8       # px: the 8x8 blocks a block-linear surface is laid out in (renderer.memory)


def rop_block_bytes(surface: np.ndarray, codec: str, max_compressed_block: int = DCC_BLOCK,
                    clear=None) -> np.ndarray:
    """What a store of `surface` moves, per 8x8 block of its block-linear layout: int64
    (blocks_y, blocks_x) payload bytes, each codec block's share of the 8x8 blocks it covers
    (whole bytes, remainder to the first; a share on padding past the edge to the first), so
    they sum to the codec's payload. The metadata is rop_meta_bytes per block."""
    img, bits = as_surface(surface)
    L = layout(codec, bits, max_compressed_block, clear)
    payload = block_sizes(img, codec, max_compressed_block, clear) - META_BYTES[codec]
    h, w = img.shape[:2]
    out = np.zeros((-(-h // ROP_BLOCK), -(-w // ROP_BLOCK)), np.int64)
    K.rop_shares(payload, int(L[K.L_BW]), int(L[K.L_BH]), out)
    return out


def rop_meta_bytes(codec: str, bits: int = 8) -> int:
    """The codec's metadata bytes per 8x8 block of a block-linear surface: its record over the
    pixels it covers (DCC 1, AFBC 4, Apple 2, UBWC 1 at 4 B per pixel)."""
    L = layout(codec, bits)
    return META_BYTES[codec] * ROP_BLOCK * ROP_BLOCK // int(L[K.L_BW] * L[K.L_BH])
