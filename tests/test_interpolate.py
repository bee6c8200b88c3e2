"""quad_attributes4, a quad's perspective-correct normal and uv at its four pixel centres as
vector IR, against the lane-by-lane formula it stands for (numpy, one lane at a time, float64 on
the float32 corners), bit for bit: random triangles and quads, edge functions of the raster's
range, and weights that sum to zero (a helper lane far off its triangle: inf or NaN, as the
scalar division gives)."""
from __future__ import annotations

import numpy as np
from numba import njit

from renderer.geometry_kernels import SUBPIXEL
from renderer.raster_sections import quad_attributes


@njit
def vector(qxy, fedges, inv_w, normals, uvs):
    out = np.empty((qxy.shape[0], 5, 4))
    attr = np.empty((5, 4))
    for k in range(qxy.shape[0]):
        e, w, n, t = fedges[k], inv_w[k], normals[k], uvs[k]
        quad_attributes(attr, qxy[k, 0], qxy[k, 1], (e[0], e[1], e[2], e[3], e[4], e[5], e[6],
                                                     e[7], e[8]), (w[0], w[1], w[2]),
                        (n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7], n[8]),
                        (t[0], t[1], t[2], t[3], t[4], t[5]))
        out[k] = attr
    return out


def by_lane(qxy, fedges, inv_w, normals, uvs):
    """The interpolation as raster_sections wrote it before, lane by lane, in Python floats."""
    out = np.empty((len(qxy), 5, 4))
    with np.errstate(all="ignore"):
        for k, (qx, qy) in enumerate(qxy.tolist()):
            A0, A1, A2, B0, B1, B2, C0, C1, C2 = fedges[k].tolist()
            w0, w1, w2 = inv_w[k].tolist()
            n = normals[k].astype(np.float64).reshape(3, 3)
            t = uvs[k].astype(np.float64).reshape(3, 2)
            for lane in range(4):
                X = float((qx + (lane & 1)) * SUBPIXEL + SUBPIXEL // 2)
                Y = float((qy + (lane >> 1)) * SUBPIXEL + SUBPIXEL // 2)
                l2 = A0 * X + B0 * Y + C0
                l0 = A1 * X + B1 * Y + C1
                l1 = A2 * X + B2 * Y + C2
                p0, p1, p2 = l0 * w0, l1 * w1, l2 * w2
                for c in range(3):
                    out[k, c, lane] = p0 * n[0, c] + p1 * n[1, c] + p2 * n[2, c]
                s = np.float64(1.0) / np.float64(p0 + p1 + p2)
                p0, p1, p2 = p0 * s, p1 * s, p2 * s
                for c in range(2):
                    out[k, 3 + c, lane] = p0 * t[0, c] + p1 * t[1, c] + p2 * t[2, c]
    return out


def cases(rng, n):
    qxy = rng.integers(0, 4096, (n, 2)) & ~1
    fedges = np.concatenate([rng.integers(-(1 << 20), 1 << 20, (n, 6)),
                             rng.integers(-(1 << 40), 1 << 40, (n, 3))], axis=1).astype(np.float64)
    inv_w = rng.uniform(0.01, 10.0, (n, 3))
    normals = rng.normal(size=(n, 9)).astype(np.float32)
    uvs = rng.uniform(-4, 4, (n, 6)).astype(np.float32)
    return qxy, fedges, inv_w, normals, uvs


def test_random_quads():
    args = cases(np.random.default_rng(11), 5000)
    got, want = vector(*args), by_lane(*args)
    assert np.array_equal(got.view(np.int64), want.view(np.int64))


def test_weights_summing_to_zero():
    """Edge functions all zero: the weights' sum is 0, the uv inf or NaN in both forms."""
    qxy, fedges, inv_w, normals, uvs = cases(np.random.default_rng(12), 200)
    fedges[:] = 0.0
    got, want = vector(qxy, fedges, inv_w, normals, uvs), by_lane(qxy, fedges, inv_w, normals, uvs)
    assert np.array_equal(got, want, equal_nan=True)
    assert np.isnan(got[:, 3:]).all()
