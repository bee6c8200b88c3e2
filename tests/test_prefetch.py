"""renderer.prefetch.prefetch: a hint that changes nothing, faults nowhere, and reaches the
machine code as a prefetch instruction."""
from __future__ import annotations

import numpy as np
from numba import njit

from renderer.prefetch import prefetch


@njit(nogil=True)
def _sum_ahead(a, ahead):
    """The sum of a, each element asked for `ahead` elements early (past both ends too)."""
    total = 0.0
    for i in range(a.shape[0]):
        prefetch(a, i + ahead)
        prefetch(a, i - ahead)
        total += a[i]
    return total


def test_prefetch_changes_nothing_and_faults_nowhere():
    a = np.arange(100_000, dtype=np.float64)
    for ahead in (0, 8, 1 << 40):          # the last points far outside any mapping
        assert _sum_ahead(a, ahead) == a.sum()


def test_prefetch_is_an_instruction():
    _sum_ahead(np.zeros(4), 1)
    asm = next(iter(_sum_ahead.inspect_asm().values()))
    assert "prefetch" in asm
