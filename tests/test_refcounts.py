"""Kernels called once per triangle and tile keep no atomic reference counts: numba increfs an
array argument at entry and prunes the pair only where every path out of the function is
plain, so a helper that may raise (Python's error model on a division), an array read on one
path only, or a second return leaves an NRT_incref / NRT_decref pair per array in every call
(1-2% of a frame's samples, bench/perf_kernels.py). Each kernel is compiled afresh here,
uncached, with its own options, and its own body's IR counted (bench/kernel_ir.py's figures)."""
from __future__ import annotations

import base64
import pickle
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import njit, typeof

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from kernel_ir import figures  # noqa: E402
from pipelines.commands import precompile  # noqa: E402
from renderer.compression import codecs_kernels  # noqa: E402
from renderer.frontend.ngg_kernels import cover_samples  # noqa: E402
from renderer.rop_sizes import (RULE_Z_GRANULE, RULE_Z_MAX_PLANES, RULE_Z_PLANE_BYTES,  # noqa: E402
                                RULES_N, event_depth_sizes)
from renderer.shade_kernels import shade_uniform  # noqa: E402
from renderer.texture_l1 import texture_walk  # noqa: E402


def _refcounts(kernel, *args, sig=None) -> int:
    """NRT_incref and NRT_decref calls in the body of a fresh compile of kernel, with its own
    options but its cache (and njit's nopython, implied), for the types of args (or the
    signature sig)."""
    options = {k: v for k, v in kernel.targetoptions.items() if k not in ("cache", "nopython")}
    fresh = njit(**options)(kernel.py_func)
    fresh.compile(sig if sig is not None else tuple(typeof(a) for a in args))
    (ir,) = fresh.inspect_llvm().values()
    bodies = figures(ir, kernel.py_func.__name__)
    assert bodies, f"no body of {kernel.py_func.__name__} in its IR"
    return sum(f["incref"] + f["decref"] for f in bodies)


I64 = np.int64


@pytest.mark.parametrize("n_samples", [1, 4])
def test_event_depth_sizes_keeps_no_reference_counts(n_samples):
    rules = np.zeros(RULES_N, I64)
    rules[RULE_Z_MAX_PLANES], rules[RULE_Z_PLANE_BYTES], rules[RULE_Z_GRANULE] = 4, 12, 32
    blocks, sizes = np.zeros(4, I64), np.zeros(4, I64)
    assert _refcounts(event_depth_sizes, blocks, np.ones(4, np.uint64), sizes, 0, 4,
                      np.zeros(16, I64), rules, True, 0, 0, 2, 2, n_samples) == 0
    event_depth_sizes(blocks, np.ones(4, np.uint64), sizes, 0, 4, np.zeros(16, I64), rules,
                      True, 0, 0, 2, 2, n_samples)
    assert (sizes > 0).all()          # (the path through planes_bytes runs)


def test_shade_uniform_keeps_no_reference_counts():
    out = np.zeros(4, np.float32)
    assert _refcounts(shade_uniform, np.ones((2, 4), np.float32), np.zeros(2, np.bool_),
                      np.ones(9), 1, np.float32(0.0), np.float32(0.0), np.float32(1.0), False,
                      out) == 0


def test_texture_walk_keeps_no_reference_counts():
    """(Its types as the tile kernel calls it, from the precompile list: a texture table.)"""
    found = [e for e in precompile.load() if e["kernel"] == "texture_walk"]
    if not found:                    # (a list recorded under another numba: load() gives none)
        pytest.skip("the precompile list holds no texture_walk signature for this numba")
    (entry,) = found
    sig = pickle.loads(base64.b64decode(entry["sig"]))
    assert _refcounts(texture_walk, sig=tuple(sig)) == 0


def test_cover_samples_keeps_no_reference_counts():
    """(The NGG small-primitive cull's test, a triangle an iteration.)"""
    x = np.array([[0, 64, 0]], I64)
    offsets = np.zeros(1, I64)
    flags = np.ones(1, np.bool_)
    assert _refcounts(cover_samples, 0, 1, x, x.copy(), np.zeros((1, 3)), np.zeros(1, I64),
                      flags, 8, 8, offsets, offsets.copy(), flags.copy(), flags.copy()) == 0


@pytest.mark.parametrize("kernel", ["_group_range", "_solid"])
def test_frame_codec_block_kernels_keep_no_reference_counts(kernel):
    """(The AFBC / UBWC block size kernels, a call a block or group.)"""
    fn = getattr(codecs_kernels, kernel)
    img, words, out = np.zeros((8, 8, 4), np.uint8), np.zeros(64, np.uint32), np.zeros(4, I64)
    extra = (out.copy(),) if kernel == "_group_range" else ()
    assert _refcounts(fn, img, words, 0, 0, 4, 4, out, *extra) == 0
