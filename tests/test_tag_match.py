"""renderer.tag_match.tag_way against the loop it replaced: every way count from 1 to the row's
length, for tags present, absent, and equal to what lies just past the set's ways (the next
ways of the row, or the set's LRU stamps, which its four-way compares read and must mask); and
way_in_row, its form for a flat array of sets (the texture L1's), likewise."""
from __future__ import annotations

import numpy as np
from numba import njit

from renderer.memory_kernels import F_N, F_STAMP, F_TAG
from renderer.tag_match import tag_way, way_in_row


@njit(cache=True)
def _fast(lines, s, n, line):
    return tag_way(lines, s, n, line)


def _slow(lines, s, n, line):
    w = -1
    for k in range(n):
        if lines[s, F_TAG, k] == line:
            w = k
    return w


def test_tag_way_matches_the_loop_over_the_ways():
    assert F_TAG == 0              # tag_way reads a set's first field
    rng = np.random.default_rng(7)
    checked = found = 0
    for row in (1, 3, 4, 5, 6, 8, 16, 24, 63, 64):
        lines = np.zeros((5, F_N, row), np.int64)
        for s in range(5):
            lines[s, F_TAG] = rng.permutation(np.arange(1, 1000))[:row]   # a set's tags differ
            lines[s, F_STAMP] = lines[s, F_TAG] + rng.integers(-3, 4, row)
        for s in range(5):
            for n in range(1, row + 1):
                for line in [0, 5000, *lines[s, F_TAG], *lines[s, F_STAMP]]:
                    want = _slow(lines, s, n, line)
                    assert _fast(lines, s, n, line) == want, (row, s, n, line)
                    checked += 1
                    found += want >= 0
    assert found > 1000 and checked - found > 1000


@njit(cache=True)
def _row(tags, first, n, line):
    return way_in_row(tags, first, n, line)


def test_way_in_row_matches_the_loop_over_the_ways():
    rng = np.random.default_rng(11)
    found = 0
    for n in (4, 8, 12, 16, 32, 64):
        for sets in (1, 3):
            tags = rng.permutation(10 * sets * n)[:sets * n].astype(np.int64)
            for s in range(sets):
                first = s * n
                for line in list(tags[first:first + n]) + [int(tags[(first + n) % tags.size]),
                                                           -1, 10 ** 6]:
                    want = -1
                    for k in range(n):
                        if tags[first + k] == line:
                            want = k
                    assert _row(tags, first, n, line) == want
                    found += want >= 0
    assert found > 200
