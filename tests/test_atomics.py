"""renderer.atomics.fetch_add: threads that take indices from one cursor take each exactly once."""
from __future__ import annotations

import threading

import numpy as np
from numba import njit

from renderer.atomics import fetch_add


@njit(nogil=True)
def _take(cursor, taken, thread):
    """Mark every index this thread takes with its number; returns how many it took."""
    count = 0
    k = fetch_add(cursor, 1)
    while k < taken.shape[0]:
        taken[k] = thread
        count += 1
        k = fetch_add(cursor, 1)
    return count


def test_each_index_is_taken_once():
    n, threads = 2_000_000, 4
    cursor = np.zeros(1, np.int64)
    taken = np.full(n, -1, np.int64)
    _take(np.zeros(1, np.int64), np.zeros(0, np.int64), 0)       # compile before the race
    counts = [0] * threads

    def worker(t):
        counts[t] = _take(cursor, taken, t)
    pool = [threading.Thread(target=worker, args=(t,)) for t in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert (taken >= 0).all()                       # every index taken...
    assert sum(counts) == n                         # ...by exactly one thread
    assert np.bincount(taken, minlength=threads).tolist() == counts
    assert cursor[0] == n + threads                 # each thread's last take found none left


def test_returns_the_value_before():
    @njit
    def twice(c):
        return fetch_add(c, 5), fetch_add(c, -2)
    c = np.array([7], np.int64)
    assert twice(c) == (7, 12) and c[0] == 10
