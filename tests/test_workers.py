"""The engine's parallel loops and its helpers' compiles: renderer.workers.spread hands every
index to exactly one part, contiguous, the calling thread the first; the traversal's runs of
chunks (bvh.trace_kernels.next_run) tile the chunks and shrink towards the end; renderer.inlined
compiles a callee for its arguments' plain types, and for the literal ones where it needs them."""
from __future__ import annotations

import threading

import numba
import numpy as np
import pytest
from numba import njit, types

from renderer.inlined import callee, inlined
from renderer.workers import on_this_thread, spread


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("n, grain", [(0, 1), (1, 1), (3, 1), (7, 1), (4096, 1024), (10_001, 1),
                                      (1000, 1024)])
def test_spread_covers_every_index_once_in_contiguous_parts(threads, n, grain):
    if threads > numba.config.NUMBA_NUM_THREADS:
        pytest.skip("one numba thread")
    parts, lock = [], threading.Lock()
    seen = np.zeros(n, np.int64)

    def kernel(lo, hi, out):
        with lock:
            parts.append((lo, hi, threading.get_ident()))
        out[lo:hi] += 1

    with on_this_thread(threads == 1):
        spread(kernel, n, seen, grain=grain)
    assert (seen == 1).all()
    parts.sort()
    assert parts[0][0] == 0 and parts[-1][1] == n
    assert all(a[1] == b[0] for a, b in zip(parts, parts[1:]))
    want = max(1, min(threads, n // grain))
    assert len(parts) == want
    assert parts[0][2] == threading.get_ident()           # the first part: the calling thread
    assert all(hi - lo >= min(grain, n) for lo, hi, _ in parts)


@inlined
def _add(a, b):
    return a + b


@callee
def _scaled(x, k):
    return x * k


@njit(cache=False)
def _counting(n):
    c = 0                              # Literal[int](0) on type inference's first pass
    for i in range(n):
        c = _add(c, 1)
    return _scaled(c, 2) + _add(c, 0)  # a literal argument at the fixpoint too


def test_a_callee_compiles_for_plain_types_only():
    assert _counting(5) == 15
    for helper in (_add, _scaled):
        assert helper.signatures, helper
        assert all(not isinstance(t, types.Literal) for sig in helper.signatures for t in sig)
    assert len(_add.signatures) == 1 and len(_scaled.signatures) == 1


@inlined
def _pick(t, k):
    return t[k]                        # a heterogeneous tuple: k must be a literal


@njit(cache=False)
def _picking():
    t = (1, 2.5)
    return _pick(t, 0) + _pick(t, 1)


def test_a_callee_that_needs_a_literal_is_compiled_for_it():
    assert _picking() == 3.5
    assert {sig[1].literal_value for sig in _pick.signatures} == {0, 1}


@pytest.mark.parametrize("n_chunks, n_threads", [(1, 1), (5, 2), (100, 2), (1562, 2), (16078, 4)])
def test_traversal_runs_cover_the_chunks_and_shrink_towards_the_end(n_chunks, n_threads):
    """trace_kernels.next_run, taken in turn by n_threads (as the cursor hands them out): the
    runs tile 0..n_chunks-1, none longer than run_length's, none longer than the chunks left
    over GUIDE * n_threads (or one), so the last runs are single chunks; then none is left."""
    from renderer.bvh.trace_kernels import GUIDE, next_run, run_length
    run = run_length(n_chunks, n_threads)
    cursor = np.zeros(1, np.int64)
    runs = []
    while True:
        left = n_chunks - cursor[0]
        c0, c1 = next_run(cursor, run, n_chunks, n_threads)
        if c0 >= n_chunks:
            break
        assert 1 <= c1 - c0 <= max(1, min(run, left // (GUIDE * n_threads)))
        runs.append((c0, c1))
    assert runs[0][0] == 0 and runs[-1][1] == n_chunks
    assert all(a[1] == b[0] for a, b in zip(runs, runs[1:]))
    assert runs[-1][1] - runs[-1][0] == 1
    assert [b - a for a, b in runs] == sorted((b - a for a, b in runs), reverse=True)
