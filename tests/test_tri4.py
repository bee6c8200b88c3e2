"""tri4, the bvh8 4-lane triangle test, against the scalar test it stands for (_tri), bit for bit,
on random, grazing, degenerate and edge-on cases."""
from __future__ import annotations

import numpy as np
from numba import njit

from renderer.bvh import traverse_kernels as tk
from renderer.bvh.tri4_kernels import tri4


@njit
def lanes(tc, o, d, tmin, tmax):
    """tri4 on every node of tc for every ray: t (rays, nodes, 4), det, the hit masks."""
    n_r, n_s = o.shape[0], tc.shape[0]
    t, det = np.empty((n_r, n_s, 4)), np.empty((n_r, n_s, 4))
    mask = np.empty((n_r, n_s), np.int64)
    for r in range(n_r):
        for s in range(n_s):
            mask[r, s] = tri4(tc, s, o[r, 0], o[r, 1], o[r, 2], d[r, 0], d[r, 1], d[r, 2], tmin[r],
                              tmax[r], t[r, s], det[r, s])
    return t, det, mask


@njit
def scalar(tc, o, d, tmin, tmax):
    """_tri lane by lane, no culling."""
    n_r, n_s = o.shape[0], tc.shape[0]
    t = np.empty((n_r, n_s, 4))
    for r in range(n_r):
        for s in range(n_s):
            for q in range(4):
                c = tc[s, :, q].astype(np.float64)
                t[r, s, q] = tk._tri(o[r, 0], o[r, 1], o[r, 2], d[r, 0], d[r, 1], d[r, 2], tmin[r], tmax[r],
                                     c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], 0, 0)[0]
    return t


def corners(v: np.ndarray) -> np.ndarray:
    """float32 (n, 4, 3, 3) corners -> (n, 9, 4): a, b, c by axis, a lane per triangle
    (Layout.tri_corners)."""
    return np.ascontiguousarray(v.reshape(len(v), 4, 9).transpose(0, 2, 1))


def check(tc, o, d, tmin, tmax):
    t, det, mask = lanes(tc, o, d, tmin, tmax)
    want = scalar(tc, o, d, tmin, tmax)
    assert np.array_equal(t.view(np.int64), want.view(np.int64)) or np.array_equal(t, want, equal_nan=True)
    bits = (1 << np.arange(4))
    assert np.array_equal(mask, ((t < np.inf) * bits).sum(axis=2))
    return t


def test_random_triangles_and_rays():
    rng = np.random.default_rng(11)
    v = rng.normal(size=(64, 4, 3, 3)).astype(np.float32)
    tc = corners(v)
    o = rng.normal(size=(300, 3)) * 3
    d = rng.normal(size=(300, 3))
    t = check(tc, o, d, np.zeros(300), np.full(300, np.inf))
    assert (t < np.inf).sum() > 200                        # the hit path ran


def test_edges_vertices_degenerate_and_bounds():
    # a fan around the origin in z = 1 (rays through its shared edges and vertex: u, v, u + v
    # exactly 0 or 1), a zero-area triangle, one edge-on to the rays
    f = np.float32
    fan = np.array([[[0, 0, 1], [1, 0, 1], [0, 1, 1]], [[0, 0, 1], [0, 1, 1], [-1, 0, 1]],
                    [[0, 0, 1], [1, 1, 1], [2, 2, 1]], [[0, 0, 0], [0, 0, 2], [1, 0, 1]]], f)
    tc = corners(fan[None])
    pts = np.array([[0, 0], [0.5, 0], [0, 0.5], [0.5, 0.5], [1, 0], [0, 1], [-0.5, 0.25], [0.25, 0],
                    [1e-300, 0], [0.3, 0.3], [0.75, 0.75]])
    o = np.concatenate([pts, np.zeros((len(pts), 1))], axis=1)
    d = np.tile([0.0, 0.0, 1.0], (len(pts), 1))
    for tmin, tmax in ((0.0, np.inf), (1.0, 1.0), (0.0, 1.0), (1.0, 2.0), (1.5, 3.0), (0.0, 0.999)):
        t = check(tc, o, d, np.full(len(pts), tmin), np.full(len(pts), tmax))
        if tmin <= 1.0 <= tmax:
            assert (t[:, 0, :2] == 1.0).any() and np.isinf(t[:, 0, 2]).all()
    # rays in the plane of the edge-on triangle (det 0) and grazing ones
    o2 = np.array([[0.2, -1, 1], [0.5, -1, 1 + 1e-12], [0.1, 0.1, -1]])
    d2 = np.array([[0, 1, 0], [0, 1, 0], [1e-20, 0, 1]])
    check(tc, o2, d2, np.zeros(3), np.full(3, np.inf))
