"""Numba kernels of the lossless framebuffer codecs: sizes, encode, decode over whole surfaces.

All three codecs share one block coder, the "delta group": a rectangle of pixels coded as, per
channel, a width field (4 bits for 8-bit channels, 5 bits for 16-bit ones: the width is 0..bits)
and a base value (the channel's minimum in the group, `bits` bits), then every pixel's delta
from that base (value - base, unsigned) at that channel's width, pixels row-major, channels
RGBA. The width is the smallest that holds the group's range (max - min), so a flat group costs
only its header and a noisy one costs more than raw (and is then stored raw). Bits are packed
LSB first. This is a model of "a base value plus deltas" (AMD's DCC description, peers.md §2.6
gpuopen row); the real bitstreams are not public.

A codec cuts the surface into metadata blocks (one metadata record each) made of delta groups:

    codec  block            groups      payload per block                 metadata
    DCC    256 B (8x8 @4 B, 1 group      bits rounded up to 64 B sectors;  1 B code per block
           8x4 @8 B)                     raw if >= 256 B or > the max
                                         compressed block; fast clear and
                                         constant colours: none
    AFBC   16x16 superblock  16 of 4x4   each sub-block its own byte size  16 B header per
                                         (raw if >= raw or > 63 B, the     superblock; solid
                                         6-bit size field); solid          colour: header only
                                         superblock: none
    Apple  16x16 subtile     4 of 8x8    bits rounded up to a granule;     8 B per subtile;
                                         raw if >= raw; solid RGBA8: none  solid RGBA8 colour
                                                                           in the metadata
    UBWC   256 B (16x4 @4 B, 1 group     bits rounded up to 32 B; raw if   1 B flag per block
           8x4 @8 B)                     >= 256 B
Surfaces whose sides are not multiples of the block are padded by repeating the edge pixels
(the padding is encoded, decode writes only the image).

Layout parameters arrive as one int64 array L (indices L_*), so the kernels read no globals.
Modes per block: MODE_RAW, MODE_COMP, MODE_SOLID (colour held in metadata), MODE_CLEAR (equals
the surface's fast-clear colour, held in a register).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from renderer.block_ranges import rgba4_range, rgba8_range, unpack
from renderer.inlined import inlined

CODEC_DCC, CODEC_AFBC, CODEC_APPLE, CODEC_UBWC = 0, 1, 2, 3
MODE_RAW, MODE_COMP, MODE_SOLID, MODE_CLEAR = 0, 1, 2, 3
(L_CODEC, L_BW, L_BH, L_GW, L_GH, L_GRANULE, L_MAX_BLOCK, L_GROUP_CAP, L_ONE, L_HAS_CLEAR,
 L_SOLID_META, L_N) = range(12)
AFBC_RAW_CODE = 1        # 6-bit sub-block size field: 1 = stored raw, 2..63 = compressed bytes


@inlined(error_model="python")
def _width_bits(bits):
    return 4 if bits == 8 else 5        # a field that holds 0..bits


@inlined(error_model="python")
def bit_length(r):
    """Bits that hold 0..r (r >= 0): the width of a delta."""
    w = 0
    while r > 0:
        w += 1
        r >>= 1
    return w


@inlined
def granular_bytes(nbits, granule, max_block, raw_block):
    """Payload bytes of a block coded in nbits: rounded up to the granule, or raw_block when that
    is no smaller than raw or passes the largest compressed block. In numpy's error model, as
    depth_kernels.planes_bytes (no granule is zero): a raise would keep its callers' arrays'
    reference counts."""
    nbytes = ((nbits + 7) // 8 + granule - 1) // granule * granule
    return raw_block if nbytes >= raw_block or nbytes > max_block else nbytes


@inlined
def _strips_fit(words, W, H, x0, y0, w, h):
    """Whether _strips can take the w x h pixels at (x0, y0): an 8-bit image's words given, w a
    multiple of 4, all inside the image (else a pixel at a time)."""
    return words.shape[0] > 0 and w % 4 == 0 and x0 + w <= W and y0 + h <= H


@inlined
def _strips(words, W, x0, y0, w, h):
    """The RGBA8 range of the w x h pixels at (x0, y0) of an image W pixels wide whose pixels
    are `words` (uint32, row-major), w a multiple of 4, all inside: rgba8_range's eight-pixel
    strips, each row a 32-byte vector (rgba4_range's four-pixel ones where w is not a multiple
    of 8). (lo_r, lo_g, lo_b, lo_a, hi_r, hi_g, hi_b, hi_a)."""
    lo0 = lo1 = lo2 = lo3 = np.int64(255)
    hi0 = hi1 = hi2 = hi3 = np.int64(0)
    for x in range(x0, x0 + w, 8 if w % 8 == 0 else 4):
        rng = (rgba8_range(words, y0 * W + x, W, h, 1, 0) if w % 8 == 0 else
               rgba4_range(words, y0 * W + x, W, h))
        l0, l1, l2, l3, h0, h1, h2, h3 = unpack(rng)
        lo0, lo1, lo2, lo3 = min(lo0, l0), min(lo1, l1), min(lo2, l2), min(lo3, l3)
        hi0, hi1, hi2, hi3 = max(hi0, h0), max(hi1, h1), max(hi2, h2), max(hi3, h3)
    return lo0, lo1, lo2, lo3, hi0, hi1, hi2, hi3


@njit(cache=True)
def _group_range(img, words, x0, y0, gw, gh, mins, widths):
    """Per-channel minimum and delta width of the group at (x0, y0), edge pixels repeated. A
    repeated pixel changes no extreme, so only the pixels inside the image are read, in one
    pass over all four channels (a pass per channel with clamped coordinates measured about
    3x slower). words: an 8-bit image's pixels as uint32 (empty otherwise), for groups a
    multiple of 4 pixels wide inside the image: a row of eight or four pixels as one vector
    (_strips). Into mins and widths; returns a number that means nothing (below)."""
    H, W = img.shape[0], img.shape[1]
    if _strips_fit(words, W, H, x0, y0, gw, gh):
        lo0, lo1, lo2, lo3, hi0, hi1, hi2, hi3 = _strips(words, W, x0, y0, gw, gh)
    else:
        xa, xb = min(x0, W - 1), min(x0 + gw, W)          # columns xa..xb-1, at least one
        ya, yb = min(y0, H - 1), min(y0 + gh, H)
        lo0 = lo1 = lo2 = lo3 = np.int64(1 << 30)
        hi0 = hi1 = hi2 = hi3 = np.int64(-1)
        for y in range(ya, yb):
            for x in range(xa, xb):
                v0, v1 = np.int64(img[y, x, 0]), np.int64(img[y, x, 1])
                v2, v3 = np.int64(img[y, x, 2]), np.int64(img[y, x, 3])
                lo0, hi0 = min(lo0, v0), max(hi0, v0)
                lo1, hi1 = min(lo1, v1), max(hi1, v1)
                lo2, hi2 = min(lo2, v2), max(hi2, v2)
                lo3, hi3 = min(lo3, v3), max(hi3, v3)
    mins[0], mins[1], mins[2], mins[3] = lo0, lo1, lo2, lo3
    widths[0], widths[1] = bit_length(hi0 - lo0), bit_length(hi1 - lo1)
    widths[2], widths[3] = bit_length(hi2 - lo2), bit_length(hi3 - lo3)
    # The sum no caller reads: a last use of both arrays on every path, so that numba prunes
    # their reference counts (raster_sections.py's rules). With the vector path's early return
    # and `words` used there alone, each call, one a group, kept four atomic pairs (0.29-0.44%
    # of arm-mali's and qcom-adreno's frames: bench/perf_kernels.py --refcounts).
    return img.shape[0] + words.shape[0]


@inlined(error_model="python")
def _group_bits(bits, npx, widths):
    return 4 * (_width_bits(bits) + bits) + npx * (widths[0] + widths[1] + widths[2] + widths[3])


@njit(cache=True)
def _put(buf, pos, v, n):
    """Write the low n bits of v at bit position pos (LSB first); returns the next position."""
    while n > 0:
        k = min(8 - (pos & 7), n)
        buf[pos >> 3] |= np.uint8((v & ((1 << k) - 1)) << (pos & 7))
        v >>= k
        pos += k
        n -= k
    return pos


@njit(cache=True)
def _get(buf, pos, n):
    v = np.int64(0)
    s = 0
    while n > 0:
        k = min(8 - (pos & 7), n)
        v |= np.int64((buf[pos >> 3] >> (pos & 7)) & ((1 << k) - 1)) << s
        s += k
        pos += k
        n -= k
    return v


@njit(cache=True)
def _write_group(img, bits, x0, y0, gw, gh, mins, widths, buf, pos):
    H, W = img.shape[0], img.shape[1]
    wb = _width_bits(bits)
    for c in range(4):
        pos = _put(buf, pos, widths[c], wb)
        pos = _put(buf, pos, mins[c], bits)
    for j in range(gh):
        y = min(y0 + j, H - 1)
        for i in range(gw):
            x = min(x0 + i, W - 1)
            for c in range(4):
                if widths[c]:
                    pos = _put(buf, pos, np.int64(img[y, x, c]) - mins[c], widths[c])
    return pos


@njit(cache=True)
def _read_group(buf, pos, bits, x0, y0, gw, gh, out):
    H, W = out.shape[0], out.shape[1]
    wb = _width_bits(bits)
    w0 = _get(buf, pos, wb)
    b0 = _get(buf, pos + wb, bits)
    pos += wb + bits
    w1 = _get(buf, pos, wb)
    b1 = _get(buf, pos + wb, bits)
    pos += wb + bits
    w2 = _get(buf, pos, wb)
    b2 = _get(buf, pos + wb, bits)
    pos += wb + bits
    w3 = _get(buf, pos, wb)
    b3 = _get(buf, pos + wb, bits)
    pos += wb + bits
    for j in range(gh):
        y = y0 + j
        for i in range(gw):
            x = x0 + i
            d0 = _get(buf, pos, w0)
            d1 = _get(buf, pos + w0, w1)
            d2 = _get(buf, pos + w0 + w1, w2)
            d3 = _get(buf, pos + w0 + w1 + w2, w3)
            pos += w0 + w1 + w2 + w3
            if y < H and x < W:
                out[y, x, 0] = b0 + d0
                out[y, x, 1] = b1 + d1
                out[y, x, 2] = b2 + d2
                out[y, x, 3] = b3 + d3
    return pos


@njit(cache=True)
def _write_raw(img, bits, x0, y0, gw, gh, buf, pos):
    """Pixels row-major, channels RGBA, little-endian bytes; pos in bytes."""
    H, W = img.shape[0], img.shape[1]
    nb = bits // 8
    for j in range(gh):
        y = min(y0 + j, H - 1)
        for i in range(gw):
            x = min(x0 + i, W - 1)
            for c in range(4):
                v = np.int64(img[y, x, c])
                for b in range(nb):
                    buf[pos] = np.uint8((v >> (8 * b)) & 255)
                    pos += 1
    return pos


@njit(cache=True)
def _read_raw(buf, pos, bits, x0, y0, gw, gh, out):
    H, W = out.shape[0], out.shape[1]
    nb = bits // 8
    for j in range(gh):
        y = y0 + j
        for i in range(gw):
            x = x0 + i
            for c in range(4):
                v = np.int64(0)
                for b in range(nb):
                    v |= np.int64(buf[pos]) << (8 * b)
                    pos += 1
                if y < H and x < W:
                    out[y, x, c] = v
    return pos


@njit(cache=True)
def _solid(img, words, x0, y0, bw, bh, colour):
    """True if every pixel of the block equals the first; its colour goes to `colour`. words:
    as _group_range's."""
    H, W = img.shape[0], img.shape[1]
    if _strips_fit(words, W, H, x0, y0, bw, bh):
        lo0, lo1, lo2, lo3, hi0, hi1, hi2, hi3 = _strips(words, W, x0, y0, bw, bh)
        colour[0], colour[1], colour[2], colour[3] = lo0, lo1, lo2, lo3
        same = lo0 == hi0 and lo1 == hi1 and lo2 == hi2 and lo3 == hi3
    else:
        for c in range(4):
            colour[c] = img[min(y0, H - 1), min(x0, W - 1), c]
        same = True
        j = 0
        while same and j < bh:                  # to the first pixel that differs
            y = min(y0 + j, H - 1)
            i = 0
            while same and i < bw:
                x = min(x0 + i, W - 1)
                for c in range(4):
                    same = same and img[y, x, c] == colour[c]
                i += 1
            j += 1
    # (its arrays used last on every path, before the answer: see _group_range)
    extents = img.shape[0] + words.shape[0] + colour.shape[0]
    return extents >= 0 and same


@njit(cache=True, nogil=True)
def block_sizes(by0, by1, img, words, bits, L, clear, size, mode, group, solid):
    """Payload bytes, mode and per-group bytes (AFBC) of every metadata block of block rows
    by0..by1-1 (run in parts on several threads: renderer.workers.spread); nothing written.

    img: uint8 or uint16 (H, W, 4), words: an 8-bit one's pixels as uint32 where it is
    C-contiguous (empty otherwise); bits: 8 or 16; clear: int64 (4,) the fast-clear colour (used
    if L[L_HAS_CLEAR]). Into size int64 (nby, nbx), mode uint8 (nby, nbx), group uint8
    (nby, nbx, n_groups) (AFBC size codes), solid int64 (nby, nbx, 4) (colour of solid blocks),
    all zeroed by the caller.
    """
    W = img.shape[1]
    codec, bw, bh, gw, gh = L[L_CODEC], L[L_BW], L[L_BH], L[L_GW], L[L_GH]
    granule, max_block, group_cap, one = L[L_GRANULE], L[L_MAX_BLOCK], L[L_GROUP_CAP], L[L_ONE]
    nbx = (W + bw - 1) // bw
    gx, gy = bw // gw, bh // gh
    raw_block = bw * bh * 4 * (bits // 8)
    raw_group = gw * gh * 4 * (bits // 8)
    for by in range(by0, by1):
        mins = np.zeros(4, np.int64)
        widths = np.zeros(4, np.int64)
        colour = np.zeros(4, np.int64)
        for bx in range(nbx):
            x0, y0 = bx * bw, by * bh
            if _solid(img, words, x0, y0, bw, bh, colour):
                for c in range(4):
                    solid[by, bx, c] = colour[c]
                if codec == CODEC_DCC:
                    if L[L_HAS_CLEAR] and colour[0] == clear[0] and colour[1] == clear[1] \
                            and colour[2] == clear[2] and colour[3] == clear[3]:
                        mode[by, bx] = MODE_CLEAR
                        continue
                    # DCC constant encoding: 0000, 0001, 1110, 1111 (peers.md §4.1 CONSTANT_ENCODE)
                    rgb0 = colour[0] == 0 and colour[1] == 0 and colour[2] == 0
                    rgb1 = colour[0] == one and colour[1] == one and colour[2] == one
                    if (rgb0 or rgb1) and (colour[3] == 0 or colour[3] == one):
                        mode[by, bx] = MODE_SOLID
                        continue
                elif codec == CODEC_AFBC or (codec == CODEC_APPLE and L[L_SOLID_META]):
                    mode[by, bx] = MODE_SOLID
                    continue
            if codec == CODEC_AFBC:
                total = 0
                for g in range(gx * gy):
                    _group_range(img, words, x0 + (g % gx) * gw, y0 + (g // gx) * gh, gw, gh,
                                 mins, widths)
                    nbytes = (_group_bits(bits, gw * gh, widths) + 7) // 8
                    if nbytes >= raw_group or nbytes > group_cap:
                        group[by, bx, g] = AFBC_RAW_CODE
                        total += raw_group
                    else:
                        group[by, bx, g] = nbytes
                        total += nbytes
                size[by, bx] = total
                mode[by, bx] = MODE_COMP
            else:
                nbits = 0
                for g in range(gx * gy):
                    _group_range(img, words, x0 + (g % gx) * gw, y0 + (g // gx) * gh, gw, gh,
                                 mins, widths)
                    nbits += _group_bits(bits, gw * gh, widths)
                size[by, bx] = granular_bytes(nbits, granule, max_block, raw_block)
                mode[by, bx] = MODE_RAW if size[by, bx] == raw_block else MODE_COMP


@njit(cache=True, parallel=True)
def encode_blocks(img, words, bits, L, mode, group, offsets, payload):
    """Write every block's payload at its byte offset (payload zeroed by the caller)."""
    codec, bw, bh, gw, gh = L[L_CODEC], L[L_BW], L[L_BH], L[L_GW], L[L_GH]
    nby, nbx = mode.shape
    gx, gy = bw // gw, bh // gh
    for by in prange(nby):
        mins = np.zeros(4, np.int64)
        widths = np.zeros(4, np.int64)
        for bx in range(nbx):
            m = mode[by, bx]
            x0, y0 = bx * bw, by * bh
            pos = offsets[by, bx]
            if m == MODE_RAW:
                _write_raw(img, bits, x0, y0, bw, bh, payload, pos)
            elif m == MODE_COMP and codec == CODEC_AFBC:
                for g in range(gx * gy):
                    ox, oy = x0 + (g % gx) * gw, y0 + (g // gx) * gh
                    if group[by, bx, g] == AFBC_RAW_CODE:
                        pos = _write_raw(img, bits, ox, oy, gw, gh, payload, pos)
                    else:
                        _group_range(img, words, ox, oy, gw, gh, mins, widths)
                        _write_group(img, bits, ox, oy, gw, gh, mins, widths, payload, pos * 8)
                        pos += group[by, bx, g]
            elif m == MODE_COMP:
                bpos = pos * 8
                for g in range(gx * gy):
                    ox, oy = x0 + (g % gx) * gw, y0 + (g // gx) * gh
                    _group_range(img, words, ox, oy, gw, gh, mins, widths)
                    bpos = _write_group(img, bits, ox, oy, gw, gh, mins, widths, payload, bpos)


@njit(cache=True, parallel=True)
def decode_blocks(payload, bits, L, mode, group, offsets, colour, out):
    """Inverse of encode_blocks; colour int64 (nby, nbx, 4) holds solid and clear colours."""
    codec, bw, bh, gw, gh = L[L_CODEC], L[L_BW], L[L_BH], L[L_GW], L[L_GH]
    H, W = out.shape[0], out.shape[1]
    nby, nbx = mode.shape
    gx, gy = bw // gw, bh // gh
    for by in prange(nby):
        for bx in range(nbx):
            m = mode[by, bx]
            x0, y0 = bx * bw, by * bh
            pos = offsets[by, bx]
            if m == MODE_RAW:
                _read_raw(payload, pos, bits, x0, y0, bw, bh, out)
            elif m == MODE_SOLID or m == MODE_CLEAR:
                for j in range(min(bh, H - y0)):
                    for i in range(min(bw, W - x0)):
                        for c in range(4):
                            out[y0 + j, x0 + i, c] = colour[by, bx, c]
            elif codec == CODEC_AFBC:
                for g in range(gx * gy):
                    ox, oy = x0 + (g % gx) * gw, y0 + (g // gx) * gh
                    if group[by, bx, g] == AFBC_RAW_CODE:
                        pos = _read_raw(payload, pos, bits, ox, oy, gw, gh, out)
                    else:
                        _read_group(payload, pos * 8, bits, ox, oy, gw, gh, out)
                        pos += group[by, bx, g]
            else:
                bpos = pos * 8
                for g in range(gx * gy):
                    ox, oy = x0 + (g % gx) * gw, y0 + (g // gx) * gh
                    bpos = _read_group(payload, bpos, bits, ox, oy, gw, gh, out)


@njit(cache=True)
def rop_shares(payload, bw, bh, out):
    """Add each codec block's payload (int64 (nby, nbx), blocks of bw x bh px) to the 8x8 blocks
    it covers in out (int64, 8x8 blocks of the surface): nx x ny of them, each an even share in
    whole bytes, the remainder to the first (k-th 8x8 block of the codec block, row-major, gets
    one more byte while k < the remainder); a share on padding past the edge goes to the codec
    block's first 8x8 block. A codec block smaller than 8x8 adds all of it to the 8x8 block
    holding its top-left pixel."""
    nby, nbx = payload.shape
    oy, ox = out.shape
    nx, ny = max(1, bw // 8), max(1, bh // 8)
    for by in range(nby):
        r0 = (by * bh) // 8
        for bx in range(nbx):
            c0 = (bx * bw) // 8
            share, rest = payload[by, bx] // (nx * ny), payload[by, bx] % (nx * ny)
            for j in range(ny):
                for i in range(nx):
                    part = share + (1 if j * nx + i < rest else 0)
                    r, c = r0 + j, c0 + i
                    if r < oy and c < ox:
                        out[r, c] += part
                    else:
                        out[r0, c0] += part
