"""Numba device functions of the ROP: depth test, depth write, colour write and source-over
blend, per sample. Inlined into the raster kernels, which call them per fragment."""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def quantize(v):
    """[0, 1] float to RGBA8 unorm, round to nearest."""
    return np.uint8(min(max(v, 0.0), 1.0) * 255.0 + 0.5)


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def depth_test(depth, ly, lx, mask, frag_z, lane, n_samples):
    """The samples of mask whose depth is LESS than the stored one (DESIGN.md §2)."""
    passed = mask
    for s in range(n_samples):
        if (mask >> s) & 1 and not frag_z[lane, s] < depth[ly, lx, s]:
            passed &= ~(1 << s)
    return passed


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def write_samples(color, depth, ly, lx, mask, frag_z, lane, n_samples, r, g, b, a, depth_write,
                  blend):
    """Write one shaded fragment (r, g, b, a) to the samples of mask: depth if enabled, colour
    opaque (alpha 1) or source-over on the stored colour, each sample quantized to RGBA8."""
    rgba = (r, g, b, a)
    q0, q1, q2 = quantize(r), quantize(g), quantize(b)
    for s in range(n_samples):
        if not (mask >> s) & 1:
            continue
        if depth_write:
            depth[ly, lx, s] = frag_z[lane, s]
        if blend:
            for c in range(3):
                dst = color[ly, lx, s, c] * (1.0 / 255.0)
                color[ly, lx, s, c] = quantize(rgba[c] * a + dst * (1.0 - a))
            dst_a = color[ly, lx, s, 3] * (1.0 / 255.0)
            color[ly, lx, s, 3] = quantize(a + dst_a * (1.0 - a))
        else:
            color[ly, lx, s, 0] = q0
            color[ly, lx, s, 1] = q1
            color[ly, lx, s, 2] = q2
            color[ly, lx, s, 3] = 255
