"""Numba device functions of the shading stage: the material model of DESIGN.md §2.

base colour factor x texture (bilinear; the nearest mip, both nearest mips blended (trilinear),
or level 0 only; repeat, clamp or mirror per axis: the texture's sampler), alpha test for MASK,
Lambert with one directional light plus ambient. Called per fragment from the raster kernels.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .bilerp_kernels import bilerp_rgba8
from .inlined import inlined

# Columns of TextureTable.levels
L_OFFSET, L_WIDTH, L_HEIGHT, L_TILED, L_BLOCKS_X = 0, 1, 2, 3, 4
TWO_31 = 2147483648.0
# Columns of TextureTable.sampler; their values are scenes.model.Wrap and MipFilter's
S_WRAP_S, S_WRAP_T, S_MIP = 0, 1, 2
WRAP_REPEAT, WRAP_CLAMP, WRAP_MIRROR = 0, 1, 2
MIP_NONE, MIP_NEAREST, MIP_LINEAR = 0, 1, 2


@inlined
def texture_lod(levels, n_levels, sampler, ti, dudx, dvdx, dudy, dvdy):
    """(level, fraction) for the UV footprint of one pixel (quad finite differences, as
    hardware): the nearest level with fraction 0, or for trilinear the level below the LOD and
    how far the LOD is towards the next (0 at the chain's ends)."""
    mip = sampler[ti, S_MIP]
    if mip == MIP_NONE:
        return 0, 0.0
    w = levels[ti, 0, L_WIDTH]
    h = levels[ti, 0, L_HEIGHT]
    rho2 = max((dudx * w) ** 2 + (dvdx * h) ** 2, (dudy * w) ** 2 + (dvdy * h) ** 2)
    if rho2 <= 1.0:
        return 0, 0.0
    top = n_levels[ti] - 1
    if mip == MIP_NEAREST:
        return min(int(0.5 * np.log2(rho2) + 0.5), top), 0.0
    lod = 0.5 * np.log2(rho2)
    if lod >= top:
        return top, 0.0
    level = int(lod)
    return level, lod - level


@inlined
def wrap(i, size):
    """i mod size (repeat) for a whole number i held as a float, exactly and without an integer
    division (64-bit division is the slowest instruction of the sampler): whole numbers below
    2^53 multiply and subtract exactly, and the quotient, if rounding put it one off, is mended."""
    k = i - size * np.floor(i * (1.0 / size))
    if k < 0.0:
        k += size
    elif k >= size:
        k -= size
    return int(k)


@inlined
def repeat(i, size):
    """wrap(i, size), by a mask where size is a power of two (every texture of the built-in
    scenes and most of any game's) and i fits an int32: the same integer, a third of the time."""
    if size & (size - 1) == 0 and -TWO_31 < i < TWO_31:
        return int(i) & (size - 1)
    return wrap(i, size)


@njit(cache=True, nogil=True, error_model="numpy")
def wrap_texel(i, size, mode):
    """Texel index for the whole number i (a float) under a wrap mode. Called, not inlined
    (texel_pair inlines the common repeat mode): the three modes inlined at each of a filter's
    taps were most of sample_texture's and footprint_lines' compile time."""
    if mode == WRAP_REPEAT:
        return repeat(i, size)
    if mode == WRAP_CLAMP:
        return int(min(max(i, 0.0), size - 1.0))
    k = wrap(i, 2 * size)            # mirror: every other period reversed
    return k if k < size else 2 * size - 1 - k


@inlined
def texel_pair(f, size, mode):
    """The texels f and f + 1 along one axis of a bilinear filter (f a whole number held as a
    float) under a wrap mode: repeat inline, f + 1's wrap from f's without a second division;
    the other modes through wrap_texel."""
    if mode == WRAP_REPEAT:
        i0 = repeat(f, size)
        return i0, (i0 + 1 if i0 + 1 < size else 0)
    return wrap_texel(f, size, mode), wrap_texel(f + 1.0, size, mode)


@inlined
def tap_words(off, w, h, wrap_s, wrap_t, u, v):
    """Where the bilinear filter at (u, v) reads in a level of width w and height h whose first
    texel is word `off`: its four texels' word indices and weights, (i00, i10, i01, i11, ax, ay);
    texel centres at half-integers. Scalars only: an inlined helper given an array takes a
    reference count on it at every call, which numba's pruning leaves in where the caller uses
    the array on some paths only (sample_texture's second level: ten atomic operations a
    fragment, 8% of a textured frame's time in perf)."""
    fx = u * w - 0.5
    fy = v * h - 0.5
    x0f = np.floor(fx)
    y0f = np.floor(fy)
    x0, x1 = texel_pair(x0f, w, wrap_s)
    y0, y1 = texel_pair(y0f, h, wrap_t)
    return (off + y0 * w + x0, off + y0 * w + x1, off + y1 * w + x0, off + y1 * w + x1,
            fx - x0f, fy - y0f)


@inlined
def bilinear_taps(data, levels, sampler, ti, level, u, v):
    """The bilinear filter at (u, v) in `level`: its four texels (RGBA8 words, R in the low
    byte: four loads, not sixteen) and weights, (p00, p10, p01, p11, ax, ay)."""
    i00, i10, i01, i11, ax, ay = tap_words(levels[ti, level, L_OFFSET], levels[ti, level, L_WIDTH],
                                           levels[ti, level, L_HEIGHT], sampler[ti, S_WRAP_S],
                                           sampler[ti, S_WRAP_T], u, v)
    return data[i00], data[i10], data[i01], data[i11], ax, ay


@inlined
def bilinear_channel(p00, p10, p01, p11, ax, ay, c):
    """Channel c (0 R .. 3 A) of the filter bilinear_taps gave, in [0, 1]."""
    shift = np.uint32(8 * c)
    t00 = np.float32((p00 >> shift) & np.uint32(255))
    t10 = np.float32((p10 >> shift) & np.uint32(255))
    t01 = np.float32((p01 >> shift) & np.uint32(255))
    t11 = np.float32((p11 >> shift) & np.uint32(255))
    top = t00 + (t10 - t00) * ax
    bot = t01 + (t11 - t01) * ax
    return (top + (bot - top) * ay) * (1.0 / 255.0)


@inlined
def filter_texture(data, levels, sampler, ti, level, frac, u, v):
    """The sampler's filter, (r, g, b, a) in [0, 1]: bilinear in `level`, blended with the next
    level by `frac` when it is not 0 (trilinear; texture_lod gives both). Its arrays are read
    here and nowhere else (tap_words), and it returns scalars: no scratch array to pass.
    Inlined where a texture is sampled per fragment (raster_sections.quad_shade, for the quads
    quad_filter_kernels.quad_filter4, its four-lane form, leaves; a called form, sample_texture,
    was removed with its one caller, shade_uniform's textured predecessor)."""
    wrap_s, wrap_t = sampler[ti, S_WRAP_S], sampler[ti, S_WRAP_T]
    r = g = b = a = 0.0
    for k in range(2 if frac > 0.0 else 1):
        lv = level + k
        i00, i10, i01, i11, ax, ay = tap_words(levels[ti, lv, L_OFFSET], levels[ti, lv, L_WIDTH],
                                               levels[ti, lv, L_HEIGHT], wrap_s, wrap_t, u, v)
        tr, tg, tb, ta = bilerp_rgba8(data, i00, i10, i01, i11, ax, ay)
        if k == 0:
            r, g, b, a = tr, tg, tb, ta
        else:
            r, g, b, a = (r + (tr - r) * frac, g + (tg - g) * frac, b + (tb - b) * frac,
                          a + (ta - a) * frac)
    return r, g, b, a


@inlined
def lambert(r, g, b, nx, ny, nz, back, light):
    """Directional light + ambient on colour (r, g, b) for normal n (not yet unit; flipped for
    back faces). light = the 9 scalars of shade.light_vector, as a tuple: no array goes into an
    inlined helper in the hot loop (numba would reference-count it on every call)."""
    ln = np.sqrt(nx * nx + ny * ny + nz * nz)
    if ln > 0.0:
        inv = 1.0 / ln
        nx, ny, nz = nx * inv, ny * inv, nz * inv
    if back:
        nx, ny, nz = -nx, -ny, -nz
    ndl = max(0.0, nx * light[0] + ny * light[1] + nz * light[2])
    return (r * (light[6] + ndl * light[3]), g * (light[7] + ndl * light[4]),
            b * (light[8] + ndl * light[5]))


@njit(cache=True, nogil=True, error_model="numpy")
def shade_uniform(base_color, unlit, light, d, nx, ny, nz, back, out):
    """The colour of every fragment of an untextured triangle of draw d whose shading inputs are
    the same at every fragment (unlit, or one normal nx, ny, nz at all three vertices: the raster
    evaluates it once a triangle, as a compiler hoists uniform work) into out[0:4] (linear, alpha
    in [0, 1]): the base colour, then Lambert unless unlit. It calls nothing compiled apart, so
    numba's pruning leaves its arrays without reference counts; the textured form it replaced
    called the filter, which kept six atomic increments and decrements at every call (sponza's
    picture at 640x360, bench/perf_kernels.py: NRT_incref and decref 7.7% of its samples then,
    2.5% since). Its light is read on every path, which tests/test_refcounts.py holds it to: read
    on the lit path only, two atomic pairs stayed (with event_depth_sizes', NRT 2.0% of sponza's
    samples at 640x360 through imr-baseline, 1.6% of spheres' at 1080p; 0.1% without both)."""
    r, g, b, a = base_color[d, 0], base_color[d, 1], base_color[d, 2], base_color[d, 3]
    # (the light read on every path, before the branch: an array read on one path only keeps
    # its reference count, raster_sections.py's rules)
    sun = (light[0], light[1], light[2], light[3], light[4], light[5], light[6], light[7],
           light[8])
    if not unlit[d]:
        r, g, b = lambert(r, g, b, nx, ny, nz, back, sun)
    out[0] = r
    out[1] = g
    out[2] = b
    out[3] = a
