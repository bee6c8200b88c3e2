"""bilerp_rgba8, the bilinear filter's four channels as vector IR, against the scalar filter it
stands for (shade_kernels.bilinear_channel) and numpy's, bit for bit: random words and weights,
and the extremes (bytes 0 and 255, weights 0, 1 and just below 1)."""
from __future__ import annotations

import numpy as np
from numba import njit

from renderer.bilerp_kernels import bilerp_rgba8
from renderer.shade_kernels import bilinear_channel


@njit
def vector(data, idx, w):
    out = np.empty((idx.shape[0], 4))
    for k in range(idx.shape[0]):
        out[k, 0], out[k, 1], out[k, 2], out[k, 3] = bilerp_rgba8(
            data, idx[k, 0], idx[k, 1], idx[k, 2], idx[k, 3], w[k, 0], w[k, 1])
    return out


@njit
def scalar(data, idx, w):
    out = np.empty((idx.shape[0], 4))
    for k in range(idx.shape[0]):
        p00, p10, p01, p11 = data[idx[k, 0]], data[idx[k, 1]], data[idx[k, 2]], data[idx[k, 3]]
        for c in range(4):
            out[k, c] = bilinear_channel(p00, p10, p01, p11, w[k, 0], w[k, 1], c)
    return out


def by_numpy(data, idx, w):
    """The filter as written in DESIGN.md: lerp the rows by ax, then the columns by ay, / 255."""
    t = data[idx].view(np.uint8).reshape(len(idx), 4, 4).astype(np.float64)   # (k, tap, channel)
    ax, ay = w[:, :1], w[:, 1:]
    top = t[:, 0] + (t[:, 1] - t[:, 0]) * ax
    bot = t[:, 2] + (t[:, 3] - t[:, 2]) * ax
    return (top + (bot - top) * ay) * (1.0 / 255.0)


def check(data, idx, w):
    got = vector(data, idx, w)
    assert np.array_equal(got.view(np.int64), scalar(data, idx, w).view(np.int64))
    assert np.array_equal(got.view(np.int64), by_numpy(data, idx, w).view(np.int64))
    return got


def test_random_words_and_weights():
    rng = np.random.default_rng(5)
    data = rng.integers(0, 1 << 32, 1024, dtype=np.uint64).astype(np.uint32)
    idx = rng.integers(0, len(data), (20000, 4))
    check(data, idx, rng.random((20000, 2)))


def test_extremes():
    data = np.array([0, 0xFFFFFFFF, 0x000000FF, 0xFF000000, 0x00FF00FF, 0x80808080, 0x7F7F7F7F, 1],
                    np.uint32)
    rng = np.random.default_rng(6)
    idx = rng.integers(0, len(data), (4000, 4))
    w = rng.choice([0.0, 1.0, 0.5, 5e-324, np.nextafter(1.0, 0.0)], (4000, 2))
    got = check(data, idx, w)
    assert got.min() == 0.0 and got.max() == 1.0
    # R is the word's low byte: a word of 0x000000FF everywhere is red
    one = check(data, np.full((1, 4), 2), np.array([[0.3, 0.7]]))
    assert one.tolist() == [[1.0, 0.0, 0.0, 0.0]]
