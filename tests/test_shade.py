"""The shading stage's helpers against the forms they stand in for."""
from __future__ import annotations

import math

import numpy as np
import pytest

from renderer.shade import MAX_LEVELS
from renderer.shade_kernels import (L_HEIGHT, L_WIDTH, MIP_LINEAR, MIP_NEAREST, MIP_NONE, S_MIP,
                                    texture_level, texture_lod)


def _footprints():
    """uv derivatives (dudx, dvdx, dudy, dvdy) whose rho^2 lies on and beside every power of
    two a level can meet (the whole numbers log2 rounds to), and random ones of every size."""
    rng = np.random.default_rng(7)
    out = []
    for k in range(-4, 64):
        centre = 2.0 ** (k / 2)                  # rho^2 = 2^k (or next to it, for odd k)
        for j in range(-40, 41):
            out.append((centre * (1.0 + j * 2.0 ** -52), 0.0, 0.0, 0.0))
        out.append((centre, centre, 0.0, 0.0))
        out.append((0.0, 0.0, centre, -centre * (1 + 2.0 ** -30)))
    for scale in rng.uniform(-6, 34, 4000):
        out.append(tuple(rng.normal(size=4) * 2.0 ** scale))
    out += [(math.inf, 0.0, 0.0, 0.0), (math.nan, 1.0, 0.0, 0.0), (0.0, 0.0, 0.0, 0.0),
            (1.0, 0.0, 0.0, 0.0), (2.0 ** 511, 2.0 ** 511, 0.0, 0.0)]
    return out


@pytest.mark.parametrize("mip", [MIP_LINEAR, MIP_NEAREST, MIP_NONE])
@pytest.mark.parametrize("n_levels, side", [(9, 256), (3, 256), (1, 1), (MAX_LEVELS, 1)])
def test_texture_level_is_texture_lods(mip, n_levels, side):
    """texture_level (the level, and 2 where trilinear reads the level above, without log2
    where it can) gives what texture_lod's level and fraction say, footprint for footprint."""
    levels = np.zeros((1, MAX_LEVELS, 5), np.int64)
    levels[0, 0, L_WIDTH] = levels[0, 0, L_HEIGHT] = side
    n = np.array([n_levels], np.int64)
    sampler = np.zeros((1, 3), np.int64)
    sampler[0, S_MIP] = mip
    fast = 0
    for d in _footprints():
        level, frac = texture_lod(levels, n, sampler, 0, *d)
        assert texture_level(levels, n, sampler, 0, *d) == (level, 2 if frac > 0.0 else 1), d
        fast += frac > 0.0
    assert mip != MIP_LINEAR or n_levels == 1 or fast > 0      # trilinear footprints were met
