"""block_ranges.rgba8_range (a block's channel ranges in 32-byte vectors), rgba4_range (rows of
four pixels) and the raster's edge path (raster_sections.edge_range) against numpy's min and max
over the same pixels."""
import numpy as np
import pytest
from numba import njit

from renderer.block_ranges import edge_range, rgba4_range, rgba8_range, unpack


@njit(cache=True)
def _vector(words, x0, y0, rows, width, n_samples, s):
    return unpack(rgba8_range(words, (y0 * width + x0) * n_samples, width * n_samples, rows,
                              n_samples, s))


@njit(cache=True)
def _four(words, x0, y0, rows, width):
    return unpack(rgba4_range(words, y0 * width + x0, width, rows))


@njit(cache=True)
def _edge(words, x0, y0, nx, rows, width, n_samples, s):
    return unpack(edge_range(words, x0, y0, nx, y0 + rows, width, n_samples, s))


def _want(img, x0, y0, nx, rows, s):
    px = img[y0:y0 + rows, x0:x0 + nx, s].reshape(-1, 4)
    return tuple(int(v) for v in px.min(0)) + tuple(int(v) for v in px.max(0))


@pytest.mark.parametrize("n_samples", [1, 4])
def test_ranges_match_numpy(n_samples):
    rng = np.random.default_rng(n_samples)
    w, h = 64, 40
    # every value, narrow ranges and flat blocks, so that both ends of each byte are met
    for img in (rng.integers(0, 256, (h, w, n_samples, 4)),
                rng.integers(120, 124, (h, w, n_samples, 4)),
                np.full((h, w, n_samples, 4), 255)):
        img = img.astype(np.uint8)
        words = img.reshape(-1).view(np.uint32)
        for _ in range(100):
            x0, y0 = int(rng.integers(0, w // 8)) * 8, int(rng.integers(0, h // 8)) * 8
            rows, nx = int(rng.integers(1, 9)), int(rng.integers(1, 9))
            s = int(rng.integers(0, n_samples))
            assert _vector(words, x0, y0, rows, w, n_samples, s) == _want(img, x0, y0, 8, rows, s)
            assert _edge(words, x0, y0, nx, rows, w, n_samples, s) == _want(img, x0, y0, nx, rows, s)


def test_four_pixel_rows_match_numpy():
    """rgba4_range at every four-pixel column of a one-sample image, 1-8 rows, on random, narrow
    and flat pixels."""
    rng = np.random.default_rng(4)
    w, h = 36, 20
    for img in (rng.integers(0, 256, (h, w, 1, 4)), rng.integers(7, 10, (h, w, 1, 4)),
                np.zeros((h, w, 1, 4))):
        img = img.astype(np.uint8)
        words = img.reshape(-1).view(np.uint32)
        for _ in range(200):
            x0, y0 = int(rng.integers(0, w // 4)) * 4, int(rng.integers(0, h - 8))
            rows = int(rng.integers(1, 9))
            assert _four(words, x0, y0, rows, w) == _want(img, x0, y0, 4, rows, 0)
