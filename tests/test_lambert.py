"""lambert4, Lambert on a quad's four lanes as vector IR, against the scalar function it stands
for (shade_kernels.lambert), bit for bit: random normals and colours, front and back faces, and
the edge cases of its branches (a zero normal, left as it is; a normal facing away, n.l
clamped to 0; NaN and infinite normals)."""
from __future__ import annotations

import numpy as np
from numba import njit

from renderer.lambert_kernels import lambert4
from renderer.shade_kernels import lambert


@njit
def vector(colours, normals, back, light):
    out = colours.copy()
    rgba = np.empty((4, 4))
    attr = np.empty((5, 4))
    lt = (light[0], light[1], light[2], light[3], light[4], light[5], light[6], light[7], light[8])
    for k in range(colours.shape[0]):
        rgba[:] = colours[k]
        attr[0:3] = normals[k]
        lambert4(rgba, attr, back[k], lt)
        out[k] = rgba
    return out


@njit
def scalar(colours, normals, back, light):
    out = colours.copy()
    lt = (light[0], light[1], light[2], light[3], light[4], light[5], light[6], light[7], light[8])
    for k in range(colours.shape[0]):
        for lane in range(4):
            r, g, b = lambert(colours[k, 0, lane], colours[k, 1, lane], colours[k, 2, lane],
                              normals[k, 0, lane], normals[k, 1, lane], normals[k, 2, lane],
                              back[k], lt)
            out[k, 0, lane], out[k, 1, lane], out[k, 2, lane] = r, g, b
    return out


def check(colours, normals, back, light):
    got, want = vector(colours, normals, back, light), scalar(colours, normals, back, light)
    assert np.array_equal(got.view(np.int64), want.view(np.int64))
    return got


def light_vector(rng):
    d = rng.normal(size=3)
    return np.concatenate([d / np.linalg.norm(d), rng.uniform(0, 1, 6)])


def test_random_normals():
    rng = np.random.default_rng(21)
    n = 5000
    got = check(rng.uniform(0, 1, (n, 4, 4)), rng.normal(size=(n, 3, 4)) * rng.uniform(0.1, 3),
                rng.random(n) < 0.5, light_vector(rng))
    assert (got[:, 3] <= 1).all()            # alpha left as it was


def test_branch_edges():
    rng = np.random.default_rng(22)
    specials = np.array([0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 1e-300, 1e300])
    n = 3000
    normals = rng.choice(specials, (n, 3, 4))
    check(rng.uniform(0, 1, (n, 4, 4)), normals, rng.random(n) < 0.5, light_vector(rng))
    # a normal facing away from the light: the ambient term alone
    light = np.array([0.0, 0.0, 1.0, 0.5, 0.5, 0.5, 0.25, 0.25, 0.25])
    away = check(np.ones((1, 4, 4)), np.tile([[0.0], [0.0], [-2.0]], (1, 1, 4)),
                 np.array([False]), light)
    assert away[0, :3].tolist() == [[0.25] * 4] * 3
