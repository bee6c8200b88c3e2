"""The raster's bit helpers on 64-bit block masks against Python's own integer arithmetic."""
from __future__ import annotations

import numpy as np
from numba import njit

from renderer.block_masks import block_far_1x, block_far_walk, lowest_bit, popcount, quads_of


@njit(cache=False)
def _bits(words, signed):
    out = np.empty((words.shape[0], 3), np.int64)
    for i in range(words.shape[0]):
        w = words[i]
        out[i, 0] = lowest_bit(np.int64(w)) if signed else lowest_bit(w)
        out[i, 1] = popcount(w)
        out[i, 2] = quads_of(w)
    return out


def _quads(w):
    return sum(1 for qy in range(0, 8, 2) for qx in range(0, 8, 2)
               if any(w >> ((qy + dy) * 8 + qx + dx) & 1 for dy in (0, 1) for dx in (0, 1)))


def test_bit_helpers_match_python_on_every_single_bit_and_random_words():
    rng = np.random.default_rng(4)
    words = [0, 1, 2**63, 2**64 - 1, 0x8000000000000001] + [1 << b for b in range(64)]
    words += [int(x) for x in rng.integers(0, 2**63, 200, dtype=np.int64)]
    words += [int(x) & int(y) for x, y in rng.integers(0, 2**63, (100, 2), dtype=np.int64)]
    arr = np.array(words, np.uint64)
    for signed in (False, True):
        got = _bits(arr, signed)
        for w, (low, count, quads) in zip(words, got):
            assert low == ((w & -w).bit_length() - 1 if w else 64), hex(w)
            assert count == bin(w).count("1") and quads == _quads(w), hex(w)


@njit(cache=False)
def _far_both(depth, x0, y0):
    a = block_far_walk(depth, x0, y0, depth.shape[1], depth.shape[0], 1)
    b = block_far_1x(depth, x0, y0)
    return a[0], a[1], b[0], b[1]


def test_block_far_1x_is_the_walk_on_whole_blocks():
    """Farthest depth and how many samples hold it: ties, all equal, zeros of both signs, NaN,
    depths at 1 and in between, and random blocks of a few distinct values."""
    rng = np.random.default_rng(9)
    blocks = [np.full((8, 8), 0.5, np.float32), np.zeros((8, 8), np.float32),
              np.full((8, 8), -0.0, np.float32), np.full((8, 8), np.nan, np.float32)]
    for _ in range(300):
        b = rng.choice(np.array([0.0, -0.0, 0.25, 0.5, 0.75, 1.0, np.nan], np.float32), (8, 8),
                       p=[0.1, 0.05, 0.2, 0.2, 0.2, 0.2, 0.05])
        blocks.append(b if rng.random() < 0.5 else rng.random((8, 8)).astype(np.float32))
    for b in blocks:
        depth = np.full((24, 24, 1), 0.9, np.float32)
        depth[8:16, 16:24, 0] = b
        z, n, z1, n1 = _far_both(depth, 16, 8)
        assert (z, n) == (z1, n1) and np.signbit(z) == np.signbit(z1)
