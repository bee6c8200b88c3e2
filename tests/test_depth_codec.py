"""Depth codec (HTILE-style plane equations): bit-exact round trips (hypothesis), the size-only
path against a slow Python twin, and hand-worked tiles: one triangle's plane, two triangles'
edge, five triangles meeting (raw), a cleared tile (HTILE word only), bad input."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from renderer.compression import (CompressionError, decode_depth, depth_compressed_size,
                                  depth_tile_sizes, encode_depth)
from renderer.compression import depth as D
from renderer.compression import depth_kernels as K

WORD = 4                                 # B, one HTILE word per 8x8 tile
SUB = 256                                # 1/256 px, the raster's subpixel grid


# --- raster-like depth: the raster's own formula, float32(dzdx*X + dzdy*Y + zc) (raster_sections)
def sample_grid(h, w, s):
    """X, Y (h, w, s) of every sample in 1/256 px, as the raster computes them."""
    xy = D._sample_xy(s, None)
    y, x = np.mgrid[0:h, 0:w]
    X = (x * SUB + SUB // 2)[..., None] + xy[:, 0]
    Y = (y * SUB + SUB // 2)[..., None] + xy[:, 1]
    return X.astype(np.float64), Y.astype(np.float64)


def plane_depth(h, w, s, dzdx, dzdy, zc, x0=0, y0=0):
    """float32 depth of one triangle's plane over an (h, w) window whose top left pixel is
    (x0, y0) on the screen (s = 1: (h, w))."""
    X, Y = sample_grid(h, w, s)
    z = (dzdx * (X + x0 * SUB) + dzdy * (Y + y0 * SUB) + zc).astype(np.float32)
    return z[..., 0] if s == 1 else z


def random_plane(rng, h=8, w=8):
    """A triangle's plane: depth 0.05..0.95 at the window's centre, slopes of a surface seen at
    an angle (up to ~1e-3 depth per pixel)."""
    dzdx, dzdy = rng.normal(0, 1e-3, 2) / SUB
    x0, y0 = (int(v) for v in rng.integers(0, 1900, 2))
    zc = rng.uniform(0.05, 0.95) - dzdx * (x0 + w / 2) * SUB - dzdy * (y0 + h / 2) * SUB
    return dzdx, dzdy, zc, x0, y0


def triangles(h, w, s, n, seed, clear=1.0):
    """n triangles (half-plane regions, nearest wins) over a cleared surface."""
    rng = np.random.default_rng(seed)
    X, Y = sample_grid(h, w, s)
    z = np.full((h, w, s), clear, np.float32)
    for _ in range(n):
        dzdx, dzdy, zc, _, _ = random_plane(rng, h, w)
        zc += rng.uniform(-0.03, 0.03)
        ax, ay = rng.normal(size=2)
        cx, cy = rng.uniform(0, w * SUB), rng.uniform(0, h * SUB)
        inside = (X - cx) * ax + (Y - cy) * ay < 0
        zz = (dzdx * X + dzdy * Y + zc).astype(np.float32)
        z = np.where(inside & (zz < z), zz, z)
    return z[..., 0] if s == 1 else z


def bits(a):
    return np.asarray(a, np.float32).view(np.uint32)


def planes_bytes(n_planes, samples):
    """The codec's rule: 24 B per plane + ceil(log2 planes) bits per sample, 32 B granule."""
    sel = int(np.ceil(np.log2(n_planes))) if n_planes > 1 else 0
    return -(-(24 * n_planes + 64 * samples * sel // 8) // 32) * 32


# --- slow twin: the layout table and fit steps of depth.py / depth_kernels in plain loops ------
def _f32(x):
    return np.float32(x)


def _same(a, b):
    return _f32(a).view(np.uint32) == _f32(b).view(np.uint32)


def _half_ulp(z):
    z = np.float32(z)
    with np.errstate(over="ignore"):                                   # FLT_MAX: above is inf
        above = float(np.nextafter(z, np.float32(np.inf))) - float(z)
    below = float(z) - float(np.nextafter(z, np.float32(-np.inf)))
    return min(below, above) / 2


def _lsq(u, v, t, idx):
    ref = t[idx[0]]
    su = sv = suu = suv = svv = st_ = sut = svt = 0.0
    for k in idx:
        tk = t[k] - ref
        su += u[k]
        sv += v[k]
        suu += u[k] * u[k]
        suv += u[k] * v[k]
        svv += v[k] * v[k]
        st_ += tk
        sut += u[k] * tk
        svt += v[k] * tk
    return _solve(len(idx), ref, su, sv, suu, suv, svv, st_, sut, svt)


def _solve(m, ref, su, sv, suu, suv, svv, st_, sut, svt):
    mu, mv, mt = su / m, sv / m, st_ / m
    cuu, cuv, cvv = suu - su * mu, suv - su * mv, svv - sv * mv
    cut, cvt = sut - su * mt, svt - sv * mt
    det = cuu * cvv - cuv * cuv
    a = b = 0.0
    if cuu > 0.0 and cvv > 0.0 and det > 1e-9 * cuu * cvv:
        a = (cut * cvv - cvt * cuv) / det
        b = (cvt * cuu - cut * cuv) / det
    elif cuu >= cvv and cuu > 0.0:
        a = cut / cuu
    elif cvv > 0.0:
        b = cvt / cvv
    return ((ref + mt) - a * mu - b * mv, a, b)


def _at(c, u, v, k):
    return c[1] * u[k] + c[2] * v[k] + c[0]


def _refine(z, zd, half, u, v, idx, c, iters):
    t = list(zd)
    ref = zd[idx[0]]
    su = sv = suu = suv = svv = 0.0
    for k in idx:
        su += u[k]
        sv += v[k]
        suu += u[k] * u[k]
        suv += u[k] * v[k]
        svv += v[k] * v[k]
    for _ in range(iters):
        exact = True
        st_ = sut = svt = 0.0
        for k in idx:
            e = _at(c, u, v, k)
            exact = exact and _same(e, z[k])
            h = (1.0 - K.MARGIN) * half[k]
            t[k] += K.RELAX * (min(max(e, zd[k] - h), zd[k] + h) - e)
            tk = t[k] - ref
            st_ += tk
            sut += u[k] * tk
            svt += v[k] * tk
        if exact:
            return c
        c = _solve(len(idx), ref, su, sv, suu, suv, svv, st_, sut, svt)
    if not all(_same(_at(c, u, v, k), z[k]) for k in idx):            # step 4b: an LP, the
        coef = np.array(c)                                             # kernel's (tested below
        K.minimax_plane(np.array(u), np.array(v), np.array(zd), np.array(half),   # on scipy)
                        np.array(idx, np.int64), len(idx), coef, np.empty((4, len(u))))
        c = tuple(coef)
    return c


def _collinear(z, s):
    for j in range(8):
        for i in range(8):
            for q in range(s):
                k = (j * 8 + i) * s + q
                for step, pos in ((s, i), (8 * s, j)):
                    if pos + 2 < 8:
                        a, b, c = float(z[k]), float(z[k + step]), float(z[k + 2 * step])
                        if abs(a - 2.0 * b + c) <= K.COLLINEAR * max(abs(a), abs(b), abs(c)):
                            return True
    return False


def _one_plane(z, zd, half, u, v, free, claimed, s, iters, left):
    """Returns (plane, 'whole' if it reproduces every unclaimed sample by steps 1 or 1b, 'raw'
    if step 3b gives up, else 'part')."""
    p = free[0]
    c = _lsq(u, v, zd, free)                                           # step 1
    if all(_same(_at(c, u, v, k), z[k]) for k in free):
        return c, "whole"
    if all(abs(_at(c, u, v, k) - zd[k]) <= 2.0 * K.GROW[-1] * half[k] for k in free):
        c = _refine(z, zd, half, u, v, free, c, iters)                # step 1b
        return c, "whole" if all(_same(_at(c, u, v, k), z[k]) for k in free) else "part"
    pi, pj = (p // s) % 8, (p // s) // 8
    for w in range(4):                                                 # step 2
        i0, j0 = pi - (w & 1), pj - (w >> 1)
        if not (0 <= i0 < 7 and 0 <= j0 < 7):
            continue
        idx = [(jj * 8 + ii) * s + q for jj in (j0, j0 + 1) for ii in (i0, i0 + 1)
               for q in range(s) if not claimed[(jj * 8 + ii) * s + q]]
        c = _lsq(u, v, zd, idx)
        if all(abs(_at(c, u, v, k) - zd[k]) <= 2.0 * K.SEED_TOL * half[k] for k in idx):
            break
    else:
        return (zd[p], 0.0, 0.0), "part"
    for g, tol in enumerate(K.GROW):                                   # step 3
        idx = []
        for k in free:
            reach = 1.0 + (max(abs((k // s) % 8 - pi), abs((k // s) // 8 - pj)) if g == 0 else 0)
            if k == p or abs(_at(c, u, v, k) - zd[k]) <= 2.0 * tol * reach * half[k]:
                idx.append(k)
        c = _lsq(u, v, zd, idx)
    rest = [k for k in free if k not in idx]                           # step 3b
    if rest and left == 0:
        return c, "raw"
    if rest and left == 1:
        o = _lsq(u, v, zd, rest)
        if not all(abs(_at(o, u, v, k) - zd[k]) <= 2.0 * K.GROW[-1] * half[k] for k in rest):
            return c, "raw"
    return _refine(z, zd, half, u, v, idx, c, iters), "part"          # step 4


def twin_tile_planes(z, s, u, v, max_planes, iters=D.FIT_ITERS):
    """Plane count of one tile's samples z (float32 list, sample order), or -1: raw."""
    if not _collinear(z, s):                                           # step 0
        return -1
    zd = [float(x) for x in z]
    half = [_half_ulp(x) for x in z]
    free = list(range(len(z)))
    claimed = [False] * len(z)
    n_planes = 0
    while free:
        if n_planes == max_planes:
            return -1
        p = free[0]
        c, got = _one_plane(z, zd, half, u, v, free, claimed, s, iters,
                            max_planes - 1 - n_planes)
        if got == "raw":
            return -1
        if got == "whole":
            return n_planes + 1
        if not _same(_at(c, u, v, p), z[p]):                          # step 5
            c = (zd[p], 0.0, 0.0)
            if not _same(_at(c, u, v, p), z[p]):
                return -1
        for k in free:
            claimed[k] = bool(_same(_at(c, u, v, k), z[k]))
        free = [k for k in free if not claimed[k]]
        n_planes += 1
    return n_planes


def naive_depth_tile_sizes(depth, clear=None, max_planes=D.MAX_PLANES):
    d = np.asarray(depth, np.float32)
    d = d[..., None] if d.ndim == 2 else d
    h, w, s = d.shape
    xy = D._sample_xy(s, None)
    u = [float((k // s) % 8 * 256 + 128 + xy[k % s, 0] - 1024) for k in range(64 * s)]
    v = [float((k // s) // 8 * 256 + 128 + xy[k % s, 1] - 1024) for k in range(64 * s)]
    nty, ntx = -(-h // 8), -(-w // 8)
    ys = np.minimum(np.arange(nty * 8), h - 1)
    xs = np.minimum(np.arange(ntx * 8), w - 1)
    pad = d[ys][:, xs]                                                 # edge samples repeated
    raw = 64 * s * 4
    out = np.zeros((nty, ntx), np.int64)
    for ty in range(nty):
        for tx in range(ntx):
            z = list(pad[ty * 8:ty * 8 + 8, tx * 8:tx * 8 + 8].reshape(-1))
            if clear is not None and all(_same(x, clear) for x in z):
                out[ty, tx] = WORD
                continue
            c = twin_tile_planes(z, s, u, v, max_planes)
            size = planes_bytes(c, s) if c > 0 else raw
            out[ty, tx] = (size if size < raw else raw) + WORD
    return out


def test_minimax_plane_is_scipy_linprog_optimum():
    """Step 4b's simplex against scipy's LP: the same least max error (in half-ulps)."""
    linprog = pytest.importorskip("scipy.optimize").linprog
    rng = np.random.default_rng(5)
    for s in (1, 4):
        xy = D._sample_xy(s, None)
        u, v, _, _ = K.sample_uv(s, xy[:, 0].copy(), xy[:, 1].copy())
        n = u.size
        for m in (n, 20):
            idx = np.sort(rng.choice(n, m, replace=False)).astype(np.int64)
            plane = rng.uniform(0.3, 0.7) + 1e-9 * rng.normal() * u + 1e-9 * rng.normal() * v
            zd = (plane + rng.normal(0, 3e-8, n)).astype(np.float32).astype(np.float64)
            half = rng.uniform(1, 2, n) * 3e-8
            coef = np.zeros(3)
            K.fit_plane(u, v, zd, idx, m, coef, np.array(K._moment_sums(u, v, np.arange(n), n)))
            t = K.minimax_plane(u, v, zd, half, idx, m, coef, np.empty((4, n)))
            err = np.abs(zd - (coef[1] * u + coef[2] * v + coef[0]))[idx] / half[idx]
            A = np.c_[np.ones(m), u[idx], v[idx]] / half[idx, None]
            b = zd[idx] / half[idx]
            ref = linprog([0, 0, 0, 1], A_ub=np.r_[np.c_[A, -np.ones(m)], np.c_[-A, -np.ones(m)]],
                          b_ub=np.r_[b, -b], bounds=[(None, None)] * 4, method="highs").x[3]
            assert t == pytest.approx(ref, rel=1e-6) and err.max() == pytest.approx(t, rel=1e-6)


# --- round trips ------------------------------------------------------------------------------
def _surface(kind, h, w, s, seed):
    rng = np.random.default_rng(seed)
    shape = (h, w) if s == 1 else (h, w, s)
    if kind == "random":
        return rng.random(shape, dtype=np.float32)
    if kind == "planes":
        return triangles(h, w, s, int(rng.integers(1, 6)), seed)
    z = triangles(h, w, s, 3, seed)                                   # mix: triangles, noise, clear
    noise = rng.random(shape, dtype=np.float32)
    mask = rng.random((h, w)) < 0.1
    z[mask] = noise[mask]
    z[: h // 3] = 1.0
    return z


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(["random", "planes", "mix"]), st.integers(1, 40), st.integers(1, 40),
       st.sampled_from([1, 4]), st.integers(0, 2**31), st.sampled_from([None, 1.0]),
       st.integers(1, 4))
def test_round_trip_bit_exact(kind, h, w, s, seed, clear, max_planes):
    depth = _surface(kind, h, w, s, seed)
    enc = encode_depth(depth, clear=clear, max_planes=max_planes)
    out = decode_depth(enc)
    assert out.shape == depth.shape and out.dtype == np.float32
    assert np.array_equal(bits(out), bits(depth))
    sizes = depth_tile_sizes(depth, clear=clear, max_planes=max_planes)
    assert np.array_equal(enc.tile_bytes + WORD, sizes)
    assert enc.compressed_bytes == depth_compressed_size(depth, clear, max_planes) == sizes.sum()
    assert (enc.tile_bytes <= 64 * s * 4).all()                       # never more than raw + word


def test_round_trip_special_values():
    z = np.zeros((8, 16), np.float32)
    z[:, 8:] = -0.0                                                    # -0.0 is no plane's output
    z[3, 3] = np.float32(2.0 ** -140)                                 # a denormal
    z[5, 5] = np.finfo(np.float32).max
    enc = encode_depth(z)
    assert np.array_equal(bits(decode_depth(enc)), bits(z))
    assert np.array_equal(depth_tile_sizes(z), naive_depth_tile_sizes(z))


# --- the size-only path against the twin ------------------------------------------------------
@pytest.mark.parametrize("s", [1, 4])
@pytest.mark.parametrize("kind,seed", [("random", 1), ("planes", 2), ("planes", 3), ("mix", 4)])
def test_tile_sizes_match_twin(kind, seed, s):
    depth = _surface(kind, 21, 27, s, seed)
    for clear in (None, 1.0):
        assert np.array_equal(depth_tile_sizes(depth, clear), naive_depth_tile_sizes(depth, clear))


def test_tile_sizes_match_twin_raster_like():
    depth = triangles(40, 48, 1, 12, seed=7)
    depth[:, :8] = 1.0                                                # a cleared column of tiles
    sizes = depth_tile_sizes(depth, 1.0)
    assert np.array_equal(sizes, naive_depth_tile_sizes(depth, 1.0))
    assert np.array_equal(depth_tile_sizes(depth, 1.0, max_planes=4),
                          naive_depth_tile_sizes(depth, 1.0, max_planes=4))
    assert set(np.unique(sizes)) >= {WORD, 32 + WORD, 64 + WORD}      # clear, 1 and 2 planes


# --- hand-worked tiles ------------------------------------------------------------------------
@pytest.mark.parametrize("s", [1, 4])
def test_one_triangle_plane_compresses(s):
    """A tile one triangle covers: 24 B of coefficients + 0 select bits -> one 32 B granule."""
    rng = np.random.default_rng(11)
    for _ in range(40):
        dzdx, dzdy, zc, x0, y0 = random_plane(rng)
        z = plane_depth(8, 8, s, dzdx, dzdy, zc, x0, y0)
        enc = encode_depth(z)
        assert enc.mode[0, 0] == K.MODE_PLANES
        assert enc.compressed_bytes == 24 + 8 + WORD == 36               # 24 B -> 32 B granule
        assert int(enc.metadata.view("<u4")[0]) == 1                    # HTILE code: one plane
        assert np.array_equal(bits(decode_depth(enc)), bits(z))


@pytest.mark.parametrize("s", [1, 4])
def test_two_triangles_edge_one_select_bit(s):
    """Two triangles meeting on a diagonal edge: 2 x 24 B + 1 select bit per sample."""
    rng = np.random.default_rng(12)
    X, Y = sample_grid(8, 8, s)
    for _ in range(20):
        a = plane_depth(8, 8, s, *random_plane(rng))
        b = plane_depth(8, 8, s, *random_plane(rng))
        a, b = (a[..., None], b[..., None]) if s == 1 else (a, b)
        z = np.where(X + 0.6 * Y < 8 * SUB * 0.9, a, b)
        z = z[..., 0] if s == 1 else z
        enc = encode_depth(z)
        # s = 1: 48 B + 64 bits = 56 B -> 64 B; s = 4: 48 B + 256 bits = 80 B -> 96 B
        assert enc.tile_bytes[0, 0] == {1: 64, 4: 96}[s] == planes_bytes(2, s)
        assert enc.compressed_bytes == enc.tile_bytes[0, 0] + WORD
        assert int(enc.metadata.view("<u4")[0]) == 2
        assert np.array_equal(bits(decode_depth(enc)), bits(z))


def five_triangles():
    """Five triangles meeting at one point inside the tile: five wedges, five planes."""
    rng = np.random.default_rng(13)
    X, Y = sample_grid(8, 8, 1)
    ang = np.arctan2(Y[..., 0] - 3.3 * SUB, X[..., 0] - 4.1 * SUB)
    wedge = ((ang + np.pi) / (2 * np.pi) * 5).astype(int) % 5
    planes = [plane_depth(8, 8, 1, *random_plane(rng)) for _ in range(5)]
    return np.choose(wedge, planes).astype(np.float32), wedge


def test_five_triangles_stored_raw():
    z, wedge = five_triangles()
    assert len(np.unique(wedge)) == 5
    enc = encode_depth(z)
    assert enc.mode[0, 0] == K.MODE_RAW
    assert enc.compressed_bytes == 64 * 4 + WORD == 260                 # raw 8x8 d32f + word
    assert int(enc.metadata.view("<u4")[0]) == D.ZMASK_RAW
    assert np.array_equal(enc.payload.view(np.float32), z.reshape(-1))  # raw: the samples
    assert np.array_equal(bits(decode_depth(enc)), bits(z))
    # allowed five planes it compresses: 5 x 24 B + 3 bits x 64 = 144 B -> 160 B
    enc5 = encode_depth(z, max_planes=5)
    assert enc5.compressed_bytes == planes_bytes(5, 1) + WORD == 164
    assert np.array_equal(bits(decode_depth(enc5)), bits(z))


def test_cleared_tile_costs_its_htile_word_only():
    z = np.ones((16, 24), np.float32)
    z[8:, 8:16] = plane_depth(8, 8, 1, *random_plane(np.random.default_rng(14)))
    enc = encode_depth(z, clear=1.0)
    assert enc.payload.size == 32 and enc.metadata.size == 6 * WORD     # one plane tile
    assert np.array_equal(depth_tile_sizes(z, clear=1.0),
                          [[4, 4, 4], [4, 36, 4]])
    assert np.array_equal(bits(decode_depth(enc)), bits(z))
    # without the clear register a flat tile is a plane (slopes 0): 32 B + word
    assert depth_compressed_size(np.ones((8, 8), np.float32)) == 36
    # 4 samples: a cleared tile is still just its word
    assert depth_compressed_size(np.ones((8, 8, 4), np.float32), clear=1.0) == WORD


def test_odd_sizes_pad_by_repeating_edges():
    z = plane_depth(13, 10, 1, 1e-6, -2e-6, 0.5)
    enc = encode_depth(z)
    assert enc.tile_bytes.shape == (2, 2)
    assert np.array_equal(bits(decode_depth(enc)), bits(z))
    assert np.array_equal(depth_tile_sizes(z), naive_depth_tile_sizes(z))


# --- bad input --------------------------------------------------------------------------------
def test_bad_input_is_one_clear_error():
    with pytest.raises(CompressionError, match="float32"):
        encode_depth(np.zeros((8, 8), np.float64))
    with pytest.raises(CompressionError, match="shape"):
        encode_depth(np.zeros((2, 8, 8, 1), np.float32))
    with pytest.raises(CompressionError, match="non-empty"):
        depth_tile_sizes(np.zeros((0, 8), np.float32))
    nan = np.zeros((8, 8), np.float32)
    nan[2, 3] = np.nan
    with pytest.raises(CompressionError, match="NaN"):
        depth_compressed_size(nan)
    with pytest.raises(CompressionError, match="max_planes"):
        encode_depth(np.zeros((8, 8), np.float32), max_planes=0)
    with pytest.raises(CompressionError, match="sample_xy"):
        encode_depth(np.zeros((8, 8, 3), np.float32))
    with pytest.raises(CompressionError, match="clear"):
        encode_depth(np.zeros((8, 8), np.float32), clear=float("nan"))


def test_default_sample_positions_are_the_rasters():
    from renderer.raster import RasterView
    for s in (1, 4):
        view = RasterView.make(8, 8, s)
        assert np.array_equal(D._sample_xy(s, None), np.stack([view.sample_x, view.sample_y], 1))


def test_real_renders_round_trip_compress_and_match_twin():
    """The rasterizer's own depth (Result.depth: 1 sample; the 4x tests above build theirs with
    the raster's formula): bit-exact, smaller than raw, the twin's sizes on a crop."""
    from pipelines.api import render
    for scene in ("spheres", "sponza"):
        depth = render(scene, "imr-baseline", 256, 192).depth
        enc = encode_depth(depth, 1.0)
        assert np.array_equal(bits(decode_depth(enc)), bits(depth))
        assert enc.compressed_bytes < enc.raw_bytes
        assert (enc.mode == K.MODE_PLANES).sum() > 0
        crop = np.ascontiguousarray(depth[64:128, 96:160])
        assert np.array_equal(depth_tile_sizes(crop, 1.0), naive_depth_tile_sizes(crop, 1.0))
