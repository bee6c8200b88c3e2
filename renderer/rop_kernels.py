"""Numba device functions of the ROP: depth test, depth write, colour write and source-over
blend, per sample. Inlined into the raster kernels, which call them per fragment."""
from __future__ import annotations

import numpy as np

from renderer.inlined import inlined


@inlined
def quantize(v):
    """[0, 1] float to RGBA8 unorm, round to nearest."""
    return np.uint8(min(max(v, 0.0), 1.0) * 255.0 + 0.5)


@inlined
def depth_test(depth, at, mask, frag_z, lane, n_samples):
    """The samples of mask whose depth is LESS than the stored one (DESIGN.md §2). depth: the
    target flat (a depth a sample), `at` the pixel's first sample (unsigned: no index to wrap)."""
    passed = mask
    for s in range(n_samples):
        if (mask >> s) & 1 and not frag_z[lane, s] < depth[at + np.uint64(s)]:
            passed &= ~(1 << s)
    return passed


@inlined
def rgba8_word(r, g, b, a):
    """RGBA8 unorm bytes as the colour target's uint32 words hold them (little-endian)."""
    return (np.uint32(r) | (np.uint32(g) << np.uint32(8)) | (np.uint32(b) << np.uint32(16))
            | (np.uint32(a) << np.uint32(24)))


@inlined
def write_samples(words, depth, at, mask, frag_z, lane, n_samples, r, g, b, a, depth_write,
                  blend):
    """Write one shaded fragment (r, g, b, a) to the samples of mask: depth if enabled, colour
    opaque (alpha 1) or source-over on the stored colour, each sample quantized to RGBA8. The
    targets flat, as depth_test's: a word a sample (a 4-byte pixel written as one store)."""
    rgba = (r, g, b, a)
    opaque = rgba8_word(quantize(r), quantize(g), quantize(b), 255)
    for s in range(n_samples):
        if not (mask >> s) & 1:
            continue
        i = at + np.uint64(s)
        if depth_write:
            depth[i] = frag_z[lane, s]
        if blend:
            dst = words[i]
            out = np.uint32(0)
            for c in range(3):
                d = ((dst >> np.uint32(8 * c)) & np.uint32(0xFF)) * (1.0 / 255.0)
                out |= np.uint32(quantize(rgba[c] * a + d * (1.0 - a))) << np.uint32(8 * c)
            dst_a = (dst >> np.uint32(24)) * (1.0 / 255.0)
            words[i] = out | (np.uint32(quantize(a + dst_a * (1.0 - a))) << np.uint32(24))
        else:
            words[i] = opaque
