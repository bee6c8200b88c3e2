"""box4 (renderer.bvh.box4_kernels), the bvh4 walk's four-lane box test, against the scalar test
it stands for, traverse_kernels.slab_and_key, bit for bit: distances and keys in every sort
order, on boxes a ray misses, enters, starts inside, touches at an edge or corner, with planes at
infinity, empty slots' garbage, and rays parallel to a slab (1/d held 0)."""
from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from renderer.box_sort import SORT_CLOSEST, SORT_LARGEST, SORT_MIDPOINT
from renderer.bvh.box4_kernels import box4
from renderer.bvh.traverse_kernels import _inv, slab_and_key


@njit(cache=True)
def both(words, node, o, d, tmin, tmax, lim, sort, at, ak, at1, ak1):
    """box4 into at, ak[4:8] (an offset, as the walk's second node) and the scalar test of each
    slot into at1, ak1."""
    ix, iy, iz = _inv(d[0]), _inv(d[1]), _inv(d[2])
    box4(words, node, o[0], o[1], o[2], ix, iy, iz, tmin, tmax, lim, sort, at, ak, 4)
    for j in range(4):
        k = 4 + 6 * j
        at1[j], ak1[j] = slab_and_key(
            np.float64(words[node, k]), np.float64(words[node, k + 1]), np.float64(words[node, k + 2]),
            np.float64(words[node, k + 3]), np.float64(words[node, k + 4]),
            np.float64(words[node, k + 5]), o[0], o[1], o[2], ix, iy, iz, tmin, tmax, lim, sort)


def nodes(rng, n):
    """bvh4 node words: 4 child ids, then 4 boxes of 6 float32 (lo xyz, hi xyz), the rest unused."""
    words = np.zeros((n, 32), np.float32)
    lo = rng.integers(-4, 4, (n, 4, 3)).astype(np.float32) * 0.5
    hi = lo + rng.integers(0, 3, (n, 4, 3)).astype(np.float32) * 0.5       # flat boxes too
    for j in range(4):
        words[:, 4 + 6 * j:7 + 6 * j] = lo[:, j]
        words[:, 7 + 6 * j:10 + 6 * j] = hi[:, j]
    words[::5, 4:7] = -np.inf                         # a slot's planes at infinity
    words[::7, 22:28] = np.nan                         # an empty slot's garbage
    return words


@pytest.mark.parametrize("sort", [SORT_CLOSEST, SORT_LARGEST, SORT_MIDPOINT])
def test_box4_is_the_scalar_test_bit_for_bit(sort):
    rng = np.random.default_rng(sort)
    words = nodes(rng, 64)
    at, ak = np.full(16, 7.0), np.full(16, 7.0)
    at1, ak1 = np.empty(4), np.empty(4)
    checked = kept = 0
    for _ in range(3000):
        node = int(rng.integers(0, 64))
        o = rng.integers(-6, 6, 3) * 0.5 + rng.choice([0.0, 0.25, -0.0], 3)   # on planes, at times
        d = rng.standard_normal(3)
        if rng.random() < 0.6:                        # towards a slot's box, most times
            j = int(rng.integers(0, 4))
            d = (words[node, 4 + 6 * j:7 + 6 * j] + words[node, 7 + 6 * j:10 + 6 * j]) / 2 - o
            d = np.where(np.isfinite(d), d, 1.0)
        d[rng.random(3) < 0.25] = rng.choice([0.0, -0.0])                     # parallel to slabs
        if not d.any():
            d[0] = 1.0
        tmin = float(rng.choice([0.0, -0.0, 0.5]))
        tmax = float(rng.choice([np.inf, 3.0]))
        lim = float(rng.choice([np.inf, 2.0, tmax]))
        both(words, node, o, d, tmin, tmax, lim, sort, at, ak, at1, ak1)
        for j in range(4):
            if np.isnan(words[node, 4 + 6 * j:10 + 6 * j]).any():
                continue                              # an empty slot: the walk skips it
            assert at[4 + j].tobytes() == at1[j].tobytes(), (node, o, d, j)
            assert ak[4 + j].tobytes() == ak1[j].tobytes(), (node, o, d, j)
            checked += 1
            kept += at1[j] < np.inf
    assert (at[:4] == 7.0).all() and (at[8:] == 7.0).all()    # no lane outside its four
    assert checked > 9000 and 500 < kept < checked - 500, (checked, kept)   # both, many times
