"""Rays as the traversal reads them, made in parallel: float32 rows of origin, tmin, direction,
tmax (traverse_kernels R_*), from float64 or float32 origins and directions.

make_rays had done this with numpy array expressions, five passes over the rays and a strided
copy for each column block: 0.27 s for the 8.3 million AO rays of sponza at 1920x1080 (four a
pixel) on this machine, before their arithmetic (pipelines/passes/raytrace_kernels.py). Every
value is the one numpy gave: a float64 rounded to float32 once, as astype does.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from renderer.inlined import inlined

from .traverse_kernels import R_DX, R_DY, R_DZ, R_OX, R_OY, R_OZ, R_TMAX, R_TMIN

BAD_VALUE, BAD_DIRECTION = 1, 2     # fill_rays's verdict: a value not finite, a zero direction


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def fill_rays(o, d, tmin, tmax, rays):
    """rays[i] from origins o[i] and directions d[i] ((n, 3) float64 or float32; where one has
    a single row, that row for every ray) and tmin, tmax (float32 (n,), or (1,) for all).
    Returns BAD_VALUE | BAD_DIRECTION bits for what some ray has (0: all are good)."""
    n = rays.shape[0]
    # row strides: 0 where one row (or value) stands for all
    so, sd = np.int64(o.shape[0] != 1), np.int64(d.shape[0] != 1)
    sl, sh = np.int64(tmin.shape[0] != 1), np.int64(tmax.shape[0] != 1)
    bad = np.zeros(n, np.uint8)
    for i in prange(n):
        ox, oy, oz = np.float32(o[i * so, 0]), np.float32(o[i * so, 1]), np.float32(o[i * so, 2])
        dx, dy, dz = np.float32(d[i * sd, 0]), np.float32(d[i * sd, 1]), np.float32(d[i * sd, 2])
        bad[i] = put_ray(rays, i, ox, oy, oz, tmin[i * sl], dx, dy, dz, tmax[i * sh])
    return verdict_of(bad)


@inlined
def put_ray(rays, r, ox, oy, oz, lo, dx, dy, dz, hi):
    """Row r of rays from its float32 values; returns its BAD_VALUE | BAD_DIRECTION bits."""
    rays[r, R_OX], rays[r, R_OY], rays[r, R_OZ], rays[r, R_TMIN] = ox, oy, oz, lo
    rays[r, R_DX], rays[r, R_DY], rays[r, R_DZ], rays[r, R_TMAX] = dx, dy, dz, hi
    b = 0
    if not (np.isfinite(ox) and np.isfinite(oy) and np.isfinite(oz) and np.isfinite(lo)
            and np.isfinite(dx) and np.isfinite(dy) and np.isfinite(dz)):
        b |= BAD_VALUE
    if dx == 0 and dy == 0 and dz == 0:
        b |= BAD_DIRECTION
    return b


@inlined
def verdict_of(bad):
    """The bits of every ray's verdict together."""
    verdict = 0
    for i in range(len(bad)):
        verdict |= bad[i]
    return verdict
