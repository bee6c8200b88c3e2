"""quad_filter4 (a quad's four texture filters as vector IR) against the scalar shading lane by
lane: the same colour bit for bit in every lane (the base colour times the filter where the
lane is shaded, the base colour where not), over random uv (magnified, minified, far off the
texture and out of repeat's range, NaN), levels and trilinear fractions; False, with nothing
written, exactly where a shaded lane's texel lies out of repeat's range."""
from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from renderer.quad_filter_kernels import TWO_31, quad_filter4
from renderer.shade_kernels import L_HEIGHT, L_OFFSET, L_WIDTH, filter_texture


@njit(cache=True)
def _both(data, levels, sampler, attr, live, level, frac):
    """quad_filter4's colours and verdict, and the scalar shading's colours lane by lane."""
    base = (0.75, 0.3, 1.0, 0.625)
    vec = np.full((4, 4), -1.0)
    top = level + 1 if frac > 0.0 else level
    ok = quad_filter4(data, attr, vec, live,
                      (levels[0, level, L_OFFSET], levels[0, level, L_WIDTH],
                       levels[0, level, L_HEIGHT]),
                      (levels[0, top, L_OFFSET], levels[0, top, L_WIDTH],
                       levels[0, top, L_HEIGHT]), frac, base)
    ref = np.zeros((4, 4))
    for lane in range(4):
        r, g, b, a = base
        if (live >> lane) & 1:
            tr, tg, tb, ta = filter_texture(data, levels, sampler, 0, level, frac, attr[3, lane],
                                            attr[4, lane])
            r, g, b, a = r * tr, g * tg, b * tb, a * ta
        ref[0, lane], ref[1, lane], ref[2, lane], ref[3, lane] = r, g, b, a
    return ok, vec, ref


def _texture(rng, w, h, n_levels):
    levels = np.zeros((1, 16, 5), np.int64)
    first = 0
    for k in range(n_levels):
        levels[0, k, :3] = (first, max(1, w >> k), max(1, h >> k))
        first += max(1, w >> k) * max(1, h >> k)
    data = rng.integers(0, 2 ** 32, first, dtype=np.uint64).astype(np.uint32)
    return data, levels, np.zeros((1, 3), np.int64)        # repeat, repeat


@pytest.mark.parametrize("w,h", [(1, 1), (8, 2), (64, 64), (256, 32), (1024, 1024)])
def test_quad_filter4_is_the_scalar_filter_bit_for_bit(w, h):
    rng = np.random.default_rng(w * 7 + h)
    n_levels = max(w, h).bit_length()
    data, levels, sampler = _texture(rng, w, h, n_levels)
    spread = [1e-3, 0.05, 1.0, 40.0, 1e6, 3e9 / max(w, h)]
    n_ok = n_bad = 0
    for trial in range(3000):
        attr = np.zeros((5, 4))
        centre = rng.uniform(-3, 3, 2)
        s = spread[trial % len(spread)]
        attr[3] = centre[0] + rng.normal(0, s, 4)
        attr[4] = centre[1] + rng.normal(0, s, 4)
        if trial % 97 == 0:
            attr[3, rng.integers(4)] = np.nan
        live = int(rng.integers(1, 16))
        level = int(rng.integers(n_levels))
        frac = float(rng.uniform(0, 1)) if trial % 2 and level + 1 < n_levels else 0.0
        ok, vec, ref = _both(data, levels, sampler, attr, live, level, frac)
        lanes = [k for k in range(4) if (live >> k) & 1]
        in_range = all(-TWO_31 < np.floor(attr[3 + a, k] * levels[0, lv, 1 + a] - 0.5) < TWO_31
                       for k in lanes for a in (0, 1)
                       for lv in ((level, level + 1) if frac > 0 else (level,)))
        assert ok == in_range
        if ok:
            n_ok += 1
            assert vec.tobytes() == ref.tobytes()
        else:
            n_bad += 1
            assert (vec == -1.0).all()
    assert n_ok > 2000 and n_bad > 50
