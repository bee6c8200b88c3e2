"""Numba kernels of the plane-equation depth codec (depth.py): fit, encode, decode per 8x8 tile.

A tile holds n = 64 * s samples, sample k = (j * 8 + i) * s + q for pixel (i, j) of the tile and
sample q. A plane is three float64 coefficients (z0, dzdx, dzdy) over tile-relative sample
positions in 1/256 px, centred on the tile:

    u = i * 256 + 128 + sample_x[q] - 1024        v = j * 256 + 128 + sample_y[q] - 1024
    z = float32(dzdx * u + dzdy * v + z0)          (float64, in this order: the raster's formula)

A plane claims a sample only if that float32 equals the stored one bit for bit, so decode is
exact by construction whatever the fit did. An ulp here is the float32 spacing on the narrower
side of the sample (2 x half_ulps). The fit (deterministic; the tests' twin follows the same
steps in plain loops):

 0. no three consecutive samples (same sample index) of a row or column on a line within 2^-20
    of their magnitude: RAW without a fit (noise leaves here);
 1. least squares (float64) over every unclaimed sample; if it reproduces all of them, done;
 1b. if it is within 1.5 ulp of all of them (one plane, the float32 rounding off): step 4 on
    them all;
 2. else a seed: the first unclaimed sample p and the first 2x2-pixel window holding p whose
    unclaimed samples a least-squares plane meets within 2 ulp each (windows with p at the top
    left, top right, bottom left, bottom right); none: the constant plane z[p];
 3. growth: refit over the unclaimed samples within 16 ulp x (1 + pixel distance from p), then
    within 4 ulp, then 1.5 ulp, of the current plane;
 3b. look ahead: if samples are left out of that set and this is the last plane allowed, RAW;
    if one plane is left, the least-squares plane of those left must be within 1.5 ulp of
    each, else RAW (a tile of three or more planes leaves before any refinement);
 4. refinement: the samples' float32 rounding intervals are constraints (least squares alone
    misses about half of the raster's one-triangle tiles: their float32 values sit up to 0.5
    ulp off the float64 plane); at most `iters` over-relaxed projections onto them (targets
    nudged 1.9x toward their interval, refit), then
 4b. the minimax (Chebyshev) plane, an exact small LP: if some plane lies within half an ulp
    of every sample of the set (the raster's own plane does), so does this one;
 5. the plane claims every unclaimed sample it reproduces; if not p, the constant plane z[p]
    does; if not even that (-0.0), the tile is RAW.

More than max_planes planes, or a compressed size not smaller than raw: RAW.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from renderer.inlined import inlined

MODE_RAW, MODE_PLANES, MODE_CLEAR = 0, 1, 2
PART, WHOLE, GIVE_UP = 0, 1, -1          # a plane's outcome (_one_plane)
TILE = 8                         # px, one HTILE word per 8x8 tile
RELAX = 1.9                      # over-relaxation of the refinement's projections
MARGIN = 0.05                    # keep targets this fraction of an interval inside it
GROW = (16.0, 4.0, 1.5)          # growth tolerances, ulp (step 3)
SEED_TOL = 2.0                   # ulp, a seed window's planarity (step 2)
COLLINEAR = 2.0 ** -20           # relative, step 0's test of three samples in a row


@inlined(error_model="python")
def same_bits(a, b):
    """float32 equality that tells -0.0 from 0.0 (NaN never reaches the kernels)."""
    return a == b and (a != 0.0 or math.copysign(1.0, a) == math.copysign(1.0, b))


@inlined(error_model="python")
def plane_at(coef, u, v):
    return np.float32(coef[1] * u + coef[2] * v + coef[0])


@njit(cache=True)
def sample_uv(n_samples, sample_x, sample_y):
    """Centred tile-relative positions (1/256 px) of the tile's 64 * s samples, and their pixel
    (ki, kj) in the tile."""
    n = 64 * n_samples
    u = np.empty(n, np.float64)
    v = np.empty(n, np.float64)
    ki = np.empty(n, np.int64)
    kj = np.empty(n, np.int64)
    for k in range(n):
        pix, q = k // n_samples, k % n_samples
        ki[k], kj[k] = pix % TILE, pix // TILE
        u[k] = ki[k] * 256 + 128 + sample_x[q] - 1024
        v[k] = kj[k] * 256 + 128 + sample_y[q] - 1024
    return u, v, ki, kj


@inlined(error_model="python")
def solve_plane(m, ref, su, sv, suu, suv, svv, st, sut, svt, coef):
    """Least squares plane from the sums over m samples of u, v, u^2, uv, v^2, t, ut, vt (t
    taken relative to ref): centred moments, 2x2 solve for the slopes; a collinear set gets
    the slope along the axis with the larger spread only."""
    mu, mv, mt = su / m, sv / m, st / m
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
    coef[0] = (ref + mt) - a * mu - b * mv
    coef[1] = a
    coef[2] = b


@njit(cache=True)
def _moment_sums(u, v, idx, m):
    """Sums of u, v, u^2, uv, v^2 over idx[:m], in that order."""
    su = sv = suu = suv = svv = 0.0
    for r in range(m):
        k = idx[r]
        su += u[k]
        sv += v[k]
        suu += u[k] * u[k]
        suv += u[k] * v[k]
        svv += v[k] * v[k]
    return su, sv, suu, suv, svv


@njit(cache=True)
def tile_geometry(n_samples, sample_x, sample_y):
    """The tile's constants for fit_tile: (u, v, ki, kj, full moments, half-ulp table)."""
    u, v, ki, kj = sample_uv(n_samples, sample_x, sample_y)
    n = u.size
    full = np.array(_moment_sums(u, v, np.arange(n), n))
    pow2 = np.empty(256, np.float64)
    for e in range(256):
        pow2[e] = math.ldexp(1.0, e - 151)          # half-ulp of biased exponent e
    return u, v, ki, kj, full, pow2


@njit(cache=True)
def scratch_arrays(n):
    """One thread's scratch for fit_tile: zd, half, t (n,) float64, work (4, n) float64 (the
    LP's), free, idx, tag, rest (n,) int64."""
    return (np.empty(n), np.empty(n), np.empty(n), np.empty((4, n)), np.empty(n, np.int64),
            np.empty(n, np.int64), np.empty(n, np.int64), np.empty(n, np.int64))


@njit(cache=True)
def fit_plane(u, v, t, idx, m, coef, full):
    """Least squares plane through t[k] for k in idx[:m], one pass (solve_plane). full: the
    moments of the whole tile (idx = 0..n-1), used when m == n instead of summing again."""
    ref = t[idx[0]]
    st = sut = svt = 0.0
    if m == u.size:
        for k in range(m):
            tk = t[k] - ref
            st += tk
            sut += u[k] * tk
            svt += v[k] * tk
        solve_plane(m, ref, full[0], full[1], full[2], full[3], full[4], st, sut, svt, coef)
        return
    su = sv = suu = suv = svv = 0.0
    for r in range(m):
        k = idx[r]
        uk, vk, tk = u[k], v[k], t[k] - ref
        su += uk
        sv += vk
        suu += uk * uk
        suv += uk * vk
        svv += vk * vk
        st += tk
        sut += uk * tk
        svt += vk * tk
    solve_plane(m, ref, su, sv, suu, suv, svv, st, sut, svt, coef)


@njit(cache=True)
def _exact_all(coef, u, v, z, idx, m):
    for r in range(m):
        k = idx[r]
        if not same_bits(plane_at(coef, u[k], v[k]), z[k]):
            return False
    return True


@njit(cache=True)
def _within(coef, u, v, zd, half, idx, m, tol):
    """Every sample of idx[:m] within tol half-ulps of the plane (float64)?"""
    for r in range(m):
        k = idx[r]
        if abs(coef[1] * u[k] + coef[2] * v[k] + coef[0] - zd[k]) > tol * half[k]:
            return False
    return True


@njit(cache=True)
def half_ulps(z, pow2, half):
    """Half the float32 spacing below each |z| (the narrower side of its rounding interval);
    pow2[e] = 2^(e - 151) for the biased exponent e."""
    bits = z.view(np.uint32)
    for k in range(z.size):
        e = np.int64((bits[k] >> 23) & 0xFF)
        e -= e > 1 and (bits[k] & 0x7FFFFF) == 0     # a power of two: the spacing below is half
        half[k] = pow2[max(e, 1)]


@njit(cache=True)
def _refine(z, zd, half, u, v, full, idx, m, t, coef, iters, work):
    """Step 4: over-relaxed projections onto the samples' rounding intervals (each pass checks
    the current plane and accumulates the next one's sums); still not exact after iters: the
    minimax plane (step 4b). Returns whether the plane reproduces every sample of idx[:m]."""
    ref = zd[idx[0]]
    for r in range(m):
        t[idx[r]] = zd[idx[r]]
    su, sv, suu, suv, svv = full[0], full[1], full[2], full[3], full[4]
    if m < u.size:
        su, sv, suu, suv, svv = _moment_sums(u, v, idx, m)
    for it in range(iters):
        exact = True
        st = sut = svt = 0.0
        for r in range(m):
            k = idx[r]
            e = coef[1] * u[k] + coef[2] * v[k] + coef[0]
            exact = exact and same_bits(np.float32(e), z[k])
            h = (1.0 - MARGIN) * half[k]
            t[k] += RELAX * (min(max(e, zd[k] - h), zd[k] + h) - e)
            tk = t[k] - ref
            st += tk
            sut += u[k] * tk
            svt += v[k] * tk
        if exact:
            return True
        solve_plane(m, ref, su, sv, suu, suv, svv, st, sut, svt, coef)
    if _exact_all(coef, u, v, z, idx, m):
        return True
    minimax_plane(u, v, zd, half, idx, m, coef, work)           # step 4b
    return _exact_all(coef, u, v, z, idx, m)


@njit(cache=True)
def minimax_plane(u, v, zd, half, idx, m, coef, work):
    """Step 4b: the plane that minimises max_k |z_k - plane_k| / half_k over idx[:m] (the
    linear Chebyshev fit), by the simplex method on its dual, 4 rows and 2m + 1 columns:

        max sum_k r_k (p_k - q_k)   s.t.  sum_k (p_k - q_k) (1, u_k, v_k) = 0,
                                          sum_k w_k (p_k + q_k) + slack = 1,   p, q, slack >= 0

    whose multipliers at the optimum are the plane's correction and the least max error t. It
    works on residuals r from the current plane, in units of the set's largest half-ulp, u and v
    in tile half-widths, so every number is O(1). work: float64 (4, >= m) scratch. Corrects
    coef in place; returns t in half-ulps (below 1: every sample's float32 is reproduced), inf
    if the set is collinear."""
    H = 0.0
    for j in range(m):
        H = max(H, half[idx[j]])
    rs, us, vs, ws = work[0], work[1], work[2], work[3]
    for j in range(m):
        k = idx[j]
        rs[j] = (zd[k] - (coef[1] * u[k] + coef[2] * v[k] + coef[0])) / H
        us[j] = u[k] * (1.0 / 1024.0)
        vs[j] = v[k] * (1.0 / 1024.0)
        ws[j] = half[k] / H
    binv = np.eye(4)
    basis = np.array([-1, -2, -3, 2 * m])          # artificials (rows 0-2) and the slack
    x = np.array([0.0, 0.0, 0.0, 1.0])
    col = np.empty(4)
    d = np.empty(4)
    pi = np.empty(4)
    for it in range(3 + 8 * m):
        if it < 3:                                  # pivot the artificials out (degenerate)
            row, best, enter = it, 1e-9, -1
            for j in range(m):
                e = (binv[row, 0] + binv[row, 1] * us[j] + binv[row, 2] * vs[j]
                     + binv[row, 3] * ws[j])
                if abs(e) > best:
                    best, enter = abs(e), j
            if enter < 0:
                return np.inf
        else:
            for i in range(4):                      # multipliers pi = c_B B^-1
                pi[i] = 0.0
                for b in range(4):
                    jb = basis[b]
                    if 0 <= jb < 2 * m:
                        pi[i] += (rs[jb] if jb < m else -rs[jb - m]) * binv[b, i]
            enter, best = -1, 1e-12
            for j in range(m):                      # Dantzig: the largest reduced cost
                g = rs[j] - (pi[0] + pi[1] * us[j] + pi[2] * vs[j])
                wk = pi[3] * ws[j]
                if g - wk > best:
                    best, enter = g - wk, j
                if -g - wk > best:
                    best, enter = -g - wk, j + m
            if -pi[3] > best:
                best, enter = -pi[3], 2 * m
            if enter < 0:                           # optimal
                coef[0] += H * pi[0]
                coef[1] += H * pi[1] * (1.0 / 1024.0)
                coef[2] += H * pi[2] * (1.0 / 1024.0)
                return pi[3]
        if enter == 2 * m:
            col[0], col[1], col[2], col[3] = 0.0, 0.0, 0.0, 1.0
        else:
            j = enter % m
            sg = 1.0 if enter < m else -1.0
            col[0], col[1], col[2], col[3] = sg, sg * us[j], sg * vs[j], ws[j]
        for i in range(4):
            d[i] = (binv[i, 0] * col[0] + binv[i, 1] * col[1] + binv[i, 2] * col[2]
                    + binv[i, 3] * col[3])
        if it >= 3:                                 # ratio test
            row, best = -1, np.inf
            for i in range(4):
                if d[i] > 1e-12 and x[i] / d[i] < best:
                    row, best = i, x[i] / d[i]
            if row < 0:
                return np.inf
        theta = x[row] / d[row]
        for i in range(4):
            if i != row:
                x[i] -= theta * d[i]
        x[row] = theta
        p = d[row]
        for c in range(4):
            binv[row, c] /= p
        for i in range(4):
            if i != row:
                f = d[i]
                for c in range(4):
                    binv[i, c] -= f * binv[row, c]
        basis[row] = enter
    return np.inf


@njit(cache=True)
def _one_plane(z, geo, scratch, nf, iters, coef, left):
    """Steps 1-4 for the next plane over the unclaimed samples free[:nf] (tag -1); p = free[0];
    `left` planes allowed after this one. Returns WHOLE if the plane reproduces every one of
    them (steps 1 and 1b), GIVE_UP if step 3b finds the tile raw, else PART."""
    u, v, ki, kj, full, pow2 = geo
    zd, half, t, work, free, idx, tag, rest = scratch
    n_samples = z.size // 64
    p = free[0]
    fit_plane(u, v, zd, free, nf, coef, full)                              # step 1
    if _exact_all(coef, u, v, z, free, nf):
        return WHOLE
    if half[0] < 0.0:
        half_ulps(z, pow2, half)
    if _within(coef, u, v, zd, half, free, nf, 2.0 * GROW[-1]):      # step 1b: one plane, almost
        return WHOLE if _refine(z, zd, half, u, v, full, free, nf, t, coef, iters, work) else PART
    pi, pj = ki[p], kj[p]                                            # step 2
    seeded = False
    for w in range(4):
        i0, j0 = pi - (w & 1), pj - (w >> 1)
        if i0 < 0 or j0 < 0 or i0 + 1 >= TILE or j0 + 1 >= TILE:
            continue
        m = 0
        for jj in range(j0, j0 + 2):
            for ii in range(i0, i0 + 2):
                for q in range(n_samples):
                    k = (jj * TILE + ii) * n_samples + q
                    if tag[k] < 0:
                        idx[m] = k
                        m += 1
        fit_plane(u, v, zd, idx, m, coef, full)
        if _within(coef, u, v, zd, half, idx, m, 2.0 * SEED_TOL):
            seeded = True
            break
    if not seeded:
        coef[0], coef[1], coef[2] = zd[p], 0.0, 0.0
        return PART
    for g in range(len(GROW)):                                       # step 3
        m = 0
        for r in range(nf):
            k = free[r]
            reach = 1.0
            if g == 0:
                reach += max(abs(ki[k] - pi), abs(kj[k] - pj))
            e = abs(coef[1] * u[k] + coef[2] * v[k] + coef[0] - zd[k])
            if k == p or e <= 2.0 * GROW[g] * reach * half[k]:
                idx[m] = k
                m += 1
        fit_plane(u, v, zd, idx, m, coef, full)
    if m < nf:                                                       # step 3b: look ahead
        if left == 0:
            return GIVE_UP
        if left == 1:
            n_rest = 0
            r = 0
            for j in range(nf):                  # rest = free - idx (both ascending)
                if r < m and idx[r] == free[j]:
                    r += 1
                else:
                    rest[n_rest] = free[j]
                    n_rest += 1
            other = work[0, :3]
            fit_plane(u, v, zd, rest, n_rest, other, full)
            if not _within(other, u, v, zd, half, rest, n_rest, 2.0 * GROW[-1]):
                return GIVE_UP
    _refine(z, zd, half, u, v, full, idx, m, t, coef, iters, work)   # step 4
    return PART


@njit(cache=True)
def any_collinear(z, n_samples):
    """Step 0: do three consecutive samples (same sample index) of a row or a column lie on a
    line within 2^-20 of their magnitude (4x the float32 rounding a plane's samples carry)?
    A tile with none is RAW without a fit: noise leaves fast."""
    for j in range(TILE):
        for i in range(TILE):
            for q in range(n_samples):
                k = (j * TILE + i) * n_samples + q
                for d in range(2):
                    step = n_samples if d == 0 else TILE * n_samples
                    if (i if d == 0 else j) + 2 >= TILE:
                        continue
                    a, b, c = np.float64(z[k]), np.float64(z[k + step]), np.float64(z[k + 2 * step])
                    if abs(a - 2.0 * b + c) <= COLLINEAR * max(abs(a), abs(b), abs(c)):
                        return True
    return False


@njit(cache=True)
def fit_tile(z, geo, scratch, max_planes, iters, planes, coef):
    """Planes for one tile's samples z (float32, n): their count (tag[k]: plane of sample k,
    planes[c]: coefficients), or -1 if the tile needs more than max_planes.

    geo: the tile's constants (u, v, ki, kj from sample_uv, full: their moments, pow2: the
    half-ulp table); scratch: (zd, half, t, work, free, idx, tag, rest) per thread
    (scratch_arrays)."""
    u, v, ki, kj, full, pow2 = geo
    zd, half, t, work, free, idx, tag, rest = scratch
    n = z.size
    n_samples = n // 64
    if not any_collinear(z, n_samples):
        return -1
    for k in range(n):
        zd[k] = z[k]
        free[k] = k
        tag[k] = -1
    half[0] = -1.0                       # half-ulps: computed when step 1 first fails
    nf = n
    c = 0
    while nf > 0:
        if c == max_planes:
            return -1
        p = free[0]
        got = _one_plane(z, geo, scratch, nf, iters, coef, max_planes - 1 - c)
        if got == GIVE_UP:
            return -1
        if got == WHOLE:
            planes[c, 0], planes[c, 1], planes[c, 2] = coef[0], coef[1], coef[2]
            for r in range(nf):
                tag[free[r]] = c
            return c + 1
        if not same_bits(plane_at(coef, u[p], v[p]), z[p]):         # step 5
            coef[0], coef[1], coef[2] = zd[p], 0.0, 0.0
            if not same_bits(plane_at(coef, u[p], v[p]), z[p]):
                return -1
        left = 0
        for r in range(nf):
            k = free[r]
            if same_bits(plane_at(coef, u[k], v[k]), z[k]):
                tag[k] = c
            else:
                free[left] = k
                left += 1
        nf = left
        planes[c, 0], planes[c, 1], planes[c, 2] = coef[0], coef[1], coef[2]
        c += 1
    return c


@inlined
def select_bits(n_planes):
    b = 0
    while (1 << b) < n_planes:
        b += 1
    return b


@inlined
def planes_bytes(n_planes, n, plane_bytes, granule):
    """Payload bytes of a tile of n samples in n_planes planes, rounded up to the granule. In
    numpy's error model (no caller passes a zero granule): Python's would raise on it, and that
    path out of rop_sizes.event_depth_sizes, which inlines this, kept four atomic reference
    count pairs in each of its calls, one per triangle and tile (1-2% of a frame's samples)."""
    nbytes = n_planes * plane_bytes + (n * select_bits(n_planes) + 7) // 8
    return (nbytes + granule - 1) // granule * granule


@njit(cache=True, parallel=True)
def fit_tiles(depth, sample_x, sample_y, has_clear, clear, max_planes, iters, plane_bytes,
              granule):
    """Every tile's payload bytes, mode, plane count, planes and per-sample plane tags.

    depth: float32 (H, W, s), H and W multiples of 8 (padded by the caller). Returns size int64
    (ty, tx), mode uint8 (ty, tx), n_planes uint8 (ty, tx), planes float64 (ty, tx, max_planes,
    3) (z0, dzdx, dzdy), tag uint8 (ty, tx, 64 * s)."""
    H, W, S = depth.shape
    nty, ntx = H // TILE, W // TILE
    n = 64 * S
    raw = n * 4
    geo = tile_geometry(S, sample_x, sample_y)
    size = np.zeros((nty, ntx), np.int64)
    mode = np.zeros((nty, ntx), np.uint8)
    n_planes = np.zeros((nty, ntx), np.uint8)
    planes = np.zeros((nty, ntx, max_planes, 3), np.float64)
    tags = np.zeros((nty, ntx, n), np.uint8)
    for ty in prange(nty):
        z = np.empty(n, np.float32)
        scratch = scratch_arrays(n)
        tag = scratch[6]
        coef = np.zeros(3, np.float64)
        for tx in range(ntx):
            cleared = has_clear
            k = 0
            for j in range(TILE):
                for i in range(TILE):
                    for q in range(S):
                        z[k] = depth[ty * TILE + j, tx * TILE + i, q]
                        k += 1
            for k in range(n):
                if not (cleared and same_bits(z[k], clear)):
                    cleared = False
                    break
            if cleared:
                mode[ty, tx] = MODE_CLEAR
                continue
            c = fit_tile(z, geo, scratch, max_planes, iters, planes[ty, tx], coef)
            if c > 0 and planes_bytes(c, n, plane_bytes, granule) < raw:
                mode[ty, tx] = MODE_PLANES
                n_planes[ty, tx] = c
                size[ty, tx] = planes_bytes(c, n, plane_bytes, granule)
                for k in range(n):
                    tags[ty, tx, k] = tag[k]
            else:
                size[ty, tx] = raw
    return size, mode, n_planes, planes, tags


@njit(cache=True, parallel=True)
def encode_tiles(depth, mode, n_planes, planes, tags, offsets, plane_bytes, payload):
    """Write every tile's payload at its byte offset (payload zeroed by the caller): RAW: the
    64 * s float32 samples, sample order k; PLANES: n_planes x (z0, dzdx, dzdy) float64, then
    select_bits(n_planes) per sample, sample order, LSB first."""
    H, W, S = depth.shape
    nty, ntx = mode.shape
    n = 64 * S
    for ty in prange(nty):
        for tx in range(ntx):
            pos = offsets[ty, tx]
            if mode[ty, tx] == MODE_RAW:
                out = payload[pos:pos + 4 * n].view(np.float32)
                for k in range(n):
                    pix, q = k // S, k % S
                    out[k] = depth[ty * TILE + pix // TILE, tx * TILE + pix % TILE, q]
            elif mode[ty, tx] == MODE_PLANES:
                c = n_planes[ty, tx]
                coefs = payload[pos:pos + plane_bytes * c].view(np.float64)
                for p in range(c):
                    for m in range(3):
                        coefs[3 * p + m] = planes[ty, tx, p, m]
                sb = select_bits(c)
                bit = (pos + plane_bytes * c) * 8
                for k in range(n):
                    for b in range(sb):
                        if (tags[ty, tx, k] >> b) & 1:
                            payload[bit >> 3] |= np.uint8(1 << (bit & 7))
                        bit += 1


@njit(cache=True, parallel=True)
def decode_tiles(payload, mode, n_planes, offsets, plane_bytes, sample_x, sample_y, clear, out):
    """Inverse of encode_tiles into out float32 (H, W, s) (H, W multiples of 8)."""
    H, W, S = out.shape
    nty, ntx = mode.shape
    n = 64 * S
    u, v, _, _ = sample_uv(S, sample_x, sample_y)
    for ty in prange(nty):
        coef = np.zeros(3, np.float64)
        for tx in range(ntx):
            pos = offsets[ty, tx]
            m = mode[ty, tx]
            c = n_planes[ty, tx]
            sb = select_bits(c)
            for k in range(n):
                pix, q = k // S, k % S
                y, x = ty * TILE + pix // TILE, tx * TILE + pix % TILE
                if m == MODE_CLEAR:
                    out[y, x, q] = clear
                elif m == MODE_RAW:
                    out[y, x, q] = payload[pos + 4 * k:pos + 4 * k + 4].view(np.float32)[0]
                else:
                    sel = 0
                    bit = (pos + plane_bytes * c) * 8 + k * sb
                    for b in range(sb):
                        sel |= ((payload[(bit + b) >> 3] >> ((bit + b) & 7)) & 1) << b
                    at = pos + plane_bytes * sel
                    coefs = payload[at:at + plane_bytes].view(np.float64)
                    coef[0], coef[1], coef[2] = coefs[0], coefs[1], coefs[2]
                    out[y, x, q] = plane_at(coef, u[k], v[k])
