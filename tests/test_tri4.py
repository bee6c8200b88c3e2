"""tri4, the bvh8 4-lane triangle test, against the scalar test it stands for (_tri_edges), bit for
bit, on random, grazing, degenerate and edge-on cases."""
from __future__ import annotations

import numpy as np
from numba import njit

from renderer.bvh import traverse_kernels as tk
from renderer.bvh.tri4_kernels import tri4


@njit
def lanes(te, o, d, tmin, tmax):
    """tri4 on every node of te for every ray: t (rays, nodes, 4), det, the hit masks."""
    n_r, n_s = o.shape[0], te.shape[0]
    t, det = np.empty((n_r, n_s, 4)), np.empty((n_r, n_s, 4))
    mask = np.empty((n_r, n_s), np.int64)
    for r in range(n_r):
        for s in range(n_s):
            mask[r, s] = tri4(te, s, o[r, 0], o[r, 1], o[r, 2], d[r, 0], d[r, 1], d[r, 2], tmin[r],
                              tmax[r], t[r, s], det[r, s])
    return t, det, mask


@njit
def scalar(te, o, d, tmin, tmax):
    """_tri_edges lane by lane, no culling."""
    n_r, n_s = o.shape[0], te.shape[0]
    t = np.empty((n_r, n_s, 4))
    for r in range(n_r):
        for s in range(n_s):
            for q in range(4):
                t[r, s, q] = tk._tri_edges(o[r, 0], o[r, 1], o[r, 2], d[r, 0], d[r, 1], d[r, 2], tmin[r],
                                           tmax[r], te[s, 0, q], te[s, 1, q], te[s, 2, q], te[s, 3, q],
                                           te[s, 4, q], te[s, 5, q], te[s, 6, q], te[s, 7, q],
                                           te[s, 8, q], 0, 0)
    return t


def edges(v: np.ndarray) -> np.ndarray:
    """float32 (n, 4, 3, 3) corners -> (n, 9, 4) a, b - a, c - a in float64, a lane per
    triangle (Layout.tri_edges)."""
    a = v[:, :, 0].astype(np.float64)
    e = np.concatenate([a, v[:, :, 1] - a, v[:, :, 2] - a], axis=2)
    return np.ascontiguousarray(e.transpose(0, 2, 1))


def check(te, o, d, tmin, tmax):
    t, det, mask = lanes(te, o, d, tmin, tmax)
    want = scalar(te, o, d, tmin, tmax)
    assert np.array_equal(t.view(np.int64), want.view(np.int64)) or np.array_equal(t, want, equal_nan=True)
    bits = (1 << np.arange(4))
    assert np.array_equal(mask, ((t < np.inf) * bits).sum(axis=2))
    return t


def test_random_triangles_and_rays():
    rng = np.random.default_rng(11)
    v = rng.normal(size=(64, 4, 3, 3)).astype(np.float32)
    te = edges(v)
    o = rng.normal(size=(300, 3)) * 3
    d = rng.normal(size=(300, 3))
    t = check(te, o, d, np.zeros(300), np.full(300, np.inf))
    assert (t < np.inf).sum() > 200                        # the hit path ran


def test_edges_vertices_degenerate_and_bounds():
    # a fan around the origin in z = 1 (rays through its shared edges and vertex: u, v, u + v
    # exactly 0 or 1), a zero-area triangle, one edge-on to the rays
    f = np.float32
    fan = np.array([[[0, 0, 1], [1, 0, 1], [0, 1, 1]], [[0, 0, 1], [0, 1, 1], [-1, 0, 1]],
                    [[0, 0, 1], [1, 1, 1], [2, 2, 1]], [[0, 0, 0], [0, 0, 2], [1, 0, 1]]], f)
    te = edges(fan[None])
    pts = np.array([[0, 0], [0.5, 0], [0, 0.5], [0.5, 0.5], [1, 0], [0, 1], [-0.5, 0.25], [0.25, 0],
                    [1e-300, 0], [0.3, 0.3], [0.75, 0.75]])
    o = np.concatenate([pts, np.zeros((len(pts), 1))], axis=1)
    d = np.tile([0.0, 0.0, 1.0], (len(pts), 1))
    for tmin, tmax in ((0.0, np.inf), (1.0, 1.0), (0.0, 1.0), (1.0, 2.0), (1.5, 3.0), (0.0, 0.999)):
        t = check(te, o, d, np.full(len(pts), tmin), np.full(len(pts), tmax))
        if tmin <= 1.0 <= tmax:
            assert (t[:, 0, :2] == 1.0).any() and np.isinf(t[:, 0, 2]).all()
    # rays in the plane of the edge-on triangle (det 0) and grazing ones
    o2 = np.array([[0.2, -1, 1], [0.5, -1, 1 + 1e-12], [0.1, 0.1, -1]])
    d2 = np.array([[0, 1, 0], [0, 1, 0], [1e-20, 0, 1]])
    check(te, o2, d2, np.zeros(3), np.full(3, np.inf))
