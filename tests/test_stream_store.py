"""renderer.stream_store: a row stored past the caches holds what plain stores would write."""
from __future__ import annotations

import platform

import numpy as np
import pytest
from numba import njit

from renderer.stream_store import stream_fence, stream_row


@njit(cache=True)
def _streamed(values, width):
    out = np.full((values.shape[0], width), -7, np.int32)
    for r in range(values.shape[0]):
        v = values[r]
        stream_row(out, r, (v[0], v[1], v[2], np.int64(v[3]), np.int32(v[4])))
    stream_fence()
    return out


def test_stream_row_writes_the_row_as_int32_and_nothing_else():
    rng = np.random.default_rng(3)
    values = rng.integers(-2**40, 2**40, (37, 5))
    values[:4] = [[0, 1, -1, 2**31 - 1, -2**31]] * 4
    got = _streamed(values, 6)
    want = np.full((37, 6), -7, np.int32)
    want[:, :5] = values.astype(np.int32)              # truncated, as numpy casts
    np.testing.assert_array_equal(got, want)


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="x86 instructions")
def test_stream_row_compiles_to_non_temporal_stores():
    fresh = njit(_streamed.py_func)          # (numba shows no assembly of a cached kernel)
    fresh(np.zeros((1, 5), np.int64), 5)
    asm = fresh.inspect_asm(fresh.signatures[0])
    assert "movnti" in asm and "sfence" in asm
