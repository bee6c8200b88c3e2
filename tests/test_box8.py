"""bvh8's float32 box test (renderer.bvh.box8_kernels): bit for bit its numpy twin, and never
culling a box that a ray crosses."""
from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from renderer.bvh.box8_kernels import (RANGE, box8, box8_twin, entry_planes, lim32, misses8,
                                       node_planes, planes32, tame)
from renderer.bvh.traverse_kernels import SORT_CLOSEST, SORT_LARGEST, SORT_MIDPOINT


@njit(cache=True)
def _box8_all(boxes, o, d, tmin, lim, masks, at, ak, sort):
    """box8 on every node for one ray, as the kernels call it."""
    i = np.float32(1.0) / d
    nx, ny, nz = entry_planes(i[0], i[1], i[2])
    for node in range(boxes.shape[0]):
        masks[node] = box8(boxes, node, nx, ny, nz, o[0], o[1], o[2], i[0], i[1], i[2], tmin, lim,
                           at[node], ak[node], sort)


def _boxes(rng, n):
    """n nodes of random boxes, some slots empty (+inf planes, as bvh8_layout leaves them),
    some flat, some far away."""
    lo = rng.normal(0, 1, (n, 3, 8))
    hi = lo + rng.exponential(0.5, (n, 3, 8)) * (rng.random((n, 3, 8)) > 0.1)
    scale = np.where(rng.random((n, 1, 1)) < 0.2, 1e4, 1.0)
    lo32, hi32 = planes32(lo * scale, hi * scale)
    b = np.concatenate([lo32, hi32], axis=1)
    b[:, :, 6:] = np.where(rng.random((n, 1, 2)) < 0.5, np.float32(np.inf), b[:, :, 6:])
    return np.ascontiguousarray(b)


def _run(boxes, o, d, tmin, lim, sort=SORT_CLOSEST):
    masks = np.empty(len(boxes), np.uint64)
    at = np.empty((len(boxes), 8), np.float32)
    ak = np.empty((len(boxes), 8), np.float32)
    _box8_all(boxes, np.asarray(o, np.float32), np.asarray(d, np.float32), np.float32(tmin),
              np.float32(lim), masks, at, ak, sort)
    return masks, at, ak


@pytest.mark.parametrize("seed,sort", [(0, SORT_CLOSEST), (1, SORT_CLOSEST), (2, SORT_LARGEST),
                                       (3, SORT_MIDPOINT)])
def test_box8_equals_its_numpy_twin(seed, sort):
    """Masks, entry distances and sort keys bit for bit; the keys are the entry distances
    nearest first, and otherwise order the kept boxes differently somewhere."""
    rng = np.random.default_rng(seed)
    boxes = _boxes(rng, 200)
    kept = reordered = 0
    for _ in range(20):
        o = rng.normal(0, 2, 3)
        d = rng.normal(0, 0.5, 3) - o             # towards the boxes' middle
        tmin, lim = rng.choice([0.0, 0.5]), rng.choice([np.float32(3.4028235e38), 2.0, 0.1])
        masks, at, ak = _run(boxes, o, d, tmin, lim, sort)
        for node in range(len(boxes)):
            m, t, k = box8_twin(boxes, node, o, d, tmin, lim, sort)
            assert int(masks[node]) == m
            assert np.array_equal(at[node].view(np.int32), t.view(np.int32))
            assert np.array_equal(ak[node].view(np.int32), k.view(np.int32))
            live = np.isfinite(t)
            assert not np.isnan(k).any()
            if sort == SORT_CLOSEST:
                assert np.array_equal(k.view(np.int32), t.view(np.int32))
            elif live.sum() > 1:
                reordered += not np.array_equal(np.argsort(t[live], kind="stable"),
                                                np.argsort(k[live], kind="stable"))
        kept += sum(bin(int(m)).count("1") for m in masks)
    assert 100 < kept < 20 * 200 * 8 / 2
    assert sort == SORT_CLOSEST or reordered > 0


def test_box8_keeps_every_box_a_ray_crosses():
    """Rays aimed at box corners, edges and faces, where rounding decides: wherever the float64
    slab test (errors ~1e-16) finds the ray inside the box at some t in [tmin, lim], box8 keeps it."""
    rng = np.random.default_rng(7)
    boxes = _boxes(rng, 100)
    kept = crossed = 0
    for _ in range(300):
        node, j = rng.integers(len(boxes)), rng.integers(6)
        b = boxes[node, :, j].astype(np.float64)
        if not np.isfinite(b).all():
            continue
        # a point on the box's boundary: a corner, an edge or a face, exactly
        p = np.where(rng.random(3) < 0.5, b[:3], b[3:])
        free = rng.random(3) < 0.4
        p = np.where(free, b[:3] + (b[3:] - b[:3]) * rng.random(3), p)
        o = (p + rng.normal(0, 3, 3)).astype(np.float32)
        d = (p - o).astype(np.float32)
        i = 1.0 / d.astype(np.float64)
        a, c = (b[:3] - o) * i, (b[3:] - o) * i
        tn, tf = max(0.0, np.minimum(a, c).max()), np.maximum(a, c).min()
        for lim in (np.float32(3.4028235e38), lim32(tf), lim32(tn)):
            masks, _, _ = _run(boxes[node:node + 1], o, d, 0.0, lim)
            if tn <= tf and tn <= lim:
                crossed += 1
                kept += int(masks[0]) >> j & 1
    assert crossed > 500 and kept == crossed


def test_tame_rays_and_clamped_planes():
    assert tame(0, 0, 0, 1, -1, 2 ** -60) and not tame(0, 0, 0, 1, 1, 2 ** -61)
    assert not tame(2 ** 61, 0, 0, 1, 1, 1) and not tame(0, 0, 0, 0, 1, 1)
    lo, hi = planes32(np.array([-1e30, 0.1, -RANGE]), np.array([1e30, 0.1, RANGE]))
    assert list(lo[[0, 2]]) == [-np.inf, -RANGE] and list(hi[[0, 2]]) == [np.inf, RANGE]
    assert float(lo[1]) < 0.1 < float(hi[1]) and np.nextafter(lo[1], np.float32(1)) == hi[1]
    # an empty slot is culled even with no hit yet (the limit is float32's largest)
    assert lim32(np.inf) == np.float32(3.4028235e38)


@njit(cache=True)
def _misses8_all(rays, box, out):
    for g in range(len(rays) // 8):
        out[g] = misses8(rays, 8 * g, box[0], box[1], box[2], box[3], box[4], box[5])


def test_misses8_is_box8_across_rays_and_misses_no_box_inside():
    """misses8 on 8 rays at once is box8_twin's test of each on the one box, bit for bit; and a
    ray it says misses a node's union of boxes keeps none of them in box8, rays aimed at the
    union's corners, edges and faces among them (where rounding decides)."""
    rng = np.random.default_rng(11)
    boxes = _boxes(rng, 60)
    missed = entered = 0
    for node in range(len(boxes)):
        b = boxes[node]
        live = np.isfinite(b).all(axis=0)
        union = np.concatenate([b[:3, live].min(axis=1), b[3:, live].max(axis=1)]).astype(np.float32)
        one = np.full((1, 6, 8), np.float32(np.inf))
        one[0, :, 0] = union
        p = np.where(rng.random((64, 3)) < 0.5, union[:3], union[3:])       # on the boundary
        p = np.where(rng.random((64, 3)) < 0.3, p + rng.normal(0, 0.3, (64, 3)), p)
        o = p + rng.normal(0, 3, (64, 3))
        rays = np.zeros((64, 8), np.float32)
        rays[:, 0:3], rays[:, 4:7] = o, p - o
        rays[:, 3] = rng.choice([0.0, 0.5], 64)
        rays[:, 7] = rng.choice([np.inf, 2.0, 0.9], 64)
        out = np.empty(8, np.uint64)
        _misses8_all(rays, union, out)
        for r in range(64):
            lim = lim32(np.float64(rays[r, 7]))
            m, _, _ = box8_twin(one, 0, rays[r, 0:3], rays[r, 4:7], rays[r, 3], lim)
            miss = int(out[r // 8]) >> (r % 8) & 1
            assert miss == 1 - (m & 1), (node, r)
            if miss:
                inner, _, _ = _run(boxes[node:node + 1], rays[r, 0:3], rays[r, 4:7], rays[r, 3],
                                   lim)
                assert inner[0] == 0, (node, r)
            missed += miss
            entered += 1 - miss
    assert missed > 500 and entered > 500


def test_misses8_never_flags_a_ray_that_is_not_tame():
    """A ray outside box8's ranges (a direction component below 2^-60, an origin beyond 2^60)
    or with a NaN is never in misses8's mask, though it misses the box (the fast walk lists it
    for the full kernel); the same rays made tame are."""
    box = np.array([0, 0, 0, 1, 1, 1], np.float32)
    rays = np.zeros((16, 8), np.float32)
    rays[:, 0:3], rays[:, 4:7], rays[:, 7] = (5, 5, 5), (1, 1, 1), np.inf   # all aim away
    bad = {0: (4, 1e-20), 1: (5, -1e-19), 2: (6, 0.0), 3: (0, 2e18), 4: (1, -3e18),
           5: (2, np.nan), 6: (4, np.nan), 7: (7, np.nan)}
    for r, (col, v) in bad.items():
        rays[r, col] = v
    assert not any(tame(*rays[r, 0:3], *rays[r, 4:7]) for r in range(5))      # 5-7: NaN
    out = np.empty(2, np.uint64)
    _misses8_all(rays, box, out)
    assert int(out[0]) & 0x7F == 0                  # rays 0-6: not tame or NaN
    assert int(out[1]) == 0xFF                      # rays 8-15: tame, missing


def test_node_planes_rounds_as_planes32():
    """The layout's kernel gives the rows planes32 gives, masked and transposed as the box test
    reads them: random boxes across float32's range and past RANGE, a third of the slots empty."""
    rng = np.random.default_rng(5)
    k = 300
    scale = 10.0 ** rng.uniform(-30, 25, (k, 8, 3))
    lo = rng.standard_normal((k, 8, 3)) * scale
    hi = lo + rng.uniform(0, 1, (k, 8, 3)) * scale
    valid = rng.uniform(size=(k, 8)) < 0.67
    got = np.empty((k, 6, 8), np.float32)
    node_planes(lo, hi, valid, got)
    want = np.where(valid[..., None], np.concatenate(planes32(lo, hi), axis=2), np.float32(np.inf))
    assert np.array_equal(got, want.transpose(0, 2, 1))
    assert (got == -np.inf).any() and (got == np.inf).any()       # the ranges were reached
