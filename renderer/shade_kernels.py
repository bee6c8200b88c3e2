"""Numba device functions of the shading stage: the material model of DESIGN.md §2.

base colour factor x texture (bilinear, nearest mip, repeat), alpha test for MASK, Lambert with
one directional light plus ambient. Called per fragment from the raster kernels.
"""
from __future__ import annotations

import numpy as np
from numba import njit

# Columns of TextureTable.levels
L_OFFSET, L_WIDTH, L_HEIGHT, L_TILED = 0, 1, 2, 3
TEX_BLOCK = 4        # textures are stored in 4x4-texel blocks (64 B of RGBA8): the texture L1 line


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def mip_level(levels, n_levels, ti, dudx, dvdx, dudy, dvdy):
    """Nearest mip for the UV footprint of one pixel (quad finite differences, as hardware)."""
    w = levels[ti, 0, L_WIDTH]
    h = levels[ti, 0, L_HEIGHT]
    rho2 = max((dudx * w) ** 2 + (dvdx * h) ** 2, (dudy * w) ** 2 + (dvdy * h) ** 2)
    if rho2 <= 1.0:
        return 0
    lod = int(0.5 * np.log2(rho2) + 0.5)
    return min(lod, n_levels[ti] - 1)


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
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


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def texel_block_address(levels, base, ti, level, u, v):
    """Byte address of the 4x4 block holding the texel under (u, v): what the texture unit asks
    L2 for on an L1 miss."""
    w = levels[ti, level, L_WIDTH]
    h = levels[ti, level, L_HEIGHT]
    tx = wrap(np.floor(u * w), w)
    ty = wrap(np.floor(v * h), h)
    blocks_x = (w + TEX_BLOCK - 1) // TEX_BLOCK
    return base[ti] + levels[ti, level, L_TILED] + \
        ((ty // TEX_BLOCK) * blocks_x + tx // TEX_BLOCK) * (TEX_BLOCK * TEX_BLOCK * 4)


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def _texel(data, off, w, x, y, c):
    return data[off + (y * w + x) * 4 + c]


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
def sample_bilinear(data, levels, ti, level, u, v, out):
    """RGBA in [0, 1] into out[0:4]; texel centres at half-integers, wrap = repeat."""
    off = levels[ti, level, L_OFFSET]
    w = levels[ti, level, L_WIDTH]
    h = levels[ti, level, L_HEIGHT]
    fx = u * w - 0.5
    fy = v * h - 0.5
    x0f = np.floor(fx)
    y0f = np.floor(fy)
    ax = fx - x0f
    ay = fy - y0f
    x0 = wrap(x0f, w)
    y0 = wrap(y0f, h)
    x1 = x0 + 1 if x0 + 1 < w else 0
    y1 = y0 + 1 if y0 + 1 < h else 0
    for c in range(4):
        t00 = _texel(data, off, w, x0, y0, c)
        t10 = _texel(data, off, w, x1, y0, c)
        t01 = _texel(data, off, w, x0, y1, c)
        t11 = _texel(data, off, w, x1, y1, c)
        top = t00 + (t10 - np.float32(t00)) * ax
        bot = t01 + (t11 - np.float32(t01)) * ax
        out[c] = (top + (bot - top) * ay) * (1.0 / 255.0)


@njit(cache=True, nogil=True, inline="always", error_model="numpy")
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
def shade_fragment(base_color, texture, unlit, tex_data, tex_levels, light, d, nx, ny, nz, back,
                   u, v, level, out):
    """Colour of one fragment of draw d into out[0:4] (linear, alpha in [0, 1]): base colour x
    texture, then Lambert unless unlit. The raster's hot loop inlines the same steps on scalars
    it hoisted per triangle; this whole form serves once-per-triangle (uniform) shading."""
    r = base_color[d, 0]
    g = base_color[d, 1]
    b = base_color[d, 2]
    a = base_color[d, 3]
    ti = texture[d]
    if ti >= 0:
        sample_bilinear(tex_data, tex_levels, ti, level, u, v, out)
        r *= out[0]
        g *= out[1]
        b *= out[2]
        a *= out[3]
    if not unlit[d]:
        r, g, b = lambert(r, g, b, nx, ny, nz, back, (light[0], light[1], light[2], light[3],
                                                      light[4], light[5], light[6], light[7],
                                                      light[8]))
    out[0] = r
    out[1] = g
    out[2] = b
    out[3] = a
