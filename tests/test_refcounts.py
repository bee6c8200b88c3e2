"""Kernels called once per triangle and tile keep no atomic reference counts: numba increfs an
array argument at entry and prunes the pair only where every path out of the function is
plain, so a helper that may raise (Python's error model on a division) or an array read on one
path only leaves an NRT_incref / NRT_decref pair per array in every call (1-2% of a frame's
samples, bench/perf_kernels.py). Each kernel is compiled afresh here, uncached, and its own
body's IR searched for the calls."""
from __future__ import annotations

import re

import numpy as np
import pytest
from numba import njit

from renderer.rop_sizes import (RULE_Z_GRANULE, RULE_Z_MAX_PLANES, RULE_Z_PLANE_BYTES, RULES_N,
                                event_depth_sizes)
from renderer.shade_kernels import shade_uniform


def _refcounts(kernel, *args) -> int:
    """NRT_incref and NRT_decref calls in the body of a fresh compile of kernel for args."""
    fresh = njit(nogil=True, error_model="numpy")(kernel.py_func)
    fresh(*args)
    name = kernel.py_func.__name__
    (ir,) = fresh.inspect_llvm().values()
    bodies = [b for b in re.split(r"\ndefine ", ir)[1:]
              if name in b.split("\n")[0] and "cpython" not in b.split("\n")[0]
              and "cfunc" not in b.split("\n")[0]]
    assert bodies, f"no body of {name} in its IR"
    return sum(b.count("@NRT_incref(") + b.count("@NRT_decref(") for b in bodies)


I64 = np.int64


@pytest.mark.parametrize("n_samples", [1, 4])
def test_event_depth_sizes_keeps_no_reference_counts(n_samples):
    rules = np.zeros(RULES_N, I64)
    rules[RULE_Z_MAX_PLANES], rules[RULE_Z_PLANE_BYTES], rules[RULE_Z_GRANULE] = 4, 12, 32
    blocks, sizes = np.zeros(4, I64), np.zeros(4, I64)
    assert _refcounts(event_depth_sizes, blocks, np.ones(4, np.uint64), sizes, 0, 4,
                      np.zeros(16, I64), rules, True, 0, 0, 2, 2, n_samples) == 0
    assert (sizes > 0).all()          # (the path through planes_bytes ran)


def test_shade_uniform_keeps_no_reference_counts():
    out = np.zeros(4, np.float32)
    assert _refcounts(shade_uniform, np.ones((2, 4), np.float32), np.zeros(2, np.bool_),
                      np.ones(9), 1, np.float32(0.0), np.float32(0.0), np.float32(1.0), False,
                      out) == 0
