"""The ray passes' per-ray arithmetic, in parallel over rays: the AO rays' random numbers and
directions, the hits' geometric normals, the sort keys of the coherent order and the sort.

These were numpy array expressions, a dozen passes over arrays of every pixel's rays: at
1920x1080, 8.3 million AO rays of sponza (four a hit pixel) took 3.9 s to make and the normals
0.7 s a call, against 9.5 s for all three passes' traversal (`tilesim report sponza --preset
amd-rdna3 --rt --res 1920x1080`, cProfile). Each value is the one numpy gave, operation for
operation in its order (numpy's sum over three values is (a + b) + c; its float64 cosine and sine
are the C library's, as numba's are: the same on all 8 million azimuths above), so the rays,
images and counters stay bit for bit the same.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from renderer.bvh.rays_kernels import put_ray, verdict_of
from renderer.bvh.traverse_kernels import R_DX, R_DY, R_DZ, R_OX
from renderer.inlined import inlined

TWO_PI = 2.0 * np.pi
RADIX_BITS = 11            # stable_order's digit
RADIX_MASK = np.uint64((1 << RADIX_BITS) - 1)
UNIT = float(1 << 53)       # a 53-bit integer over this: a float64 in [0, 1)


@inlined
def hash_uniform(key):
    """splitmix64 of a uint64 key -> float64 in [0, 1): deterministic per key, any thread count."""
    z = key + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return np.float64(z >> np.uint64(11)) / UNIT


@inlined
def cross3(a0, a1, a2, b0, b1, b2):
    """a x b, each component as numpy's cross computes it (one product less the other)."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def ao_rays(p, n, base, eps, radius, rays):
    """The AO rays (raytrace.ao_rays) of points p with unit normals n (float64 (m, 3)) into
    rays (float32 (m * samples, 8)), sample k of point i in row i * samples + k: from p + eps n,
    tmin 0, tmax radius (float32), in direction rad cos phi t1 + rad sin phi t2 + sqrt(1 - r2) n
    (cosine-weighted), where phi = 2 pi r1, rad = sqrt(r2), r1 and r2 the hashes of its key
    (base + 2 (i samples + k), base = seed << 40) and of the key + 1, and t1, t2, n a frame
    (t1 = n x helper, normalised, the helper the axis least along n; t2 = n x t1). Returns
    rays_kernels.BAD_VALUE | BAD_DIRECTION as fill_rays does."""
    m = p.shape[0]
    samples = rays.shape[0] // max(m, 1)
    bad = np.zeros(m, np.uint8)
    for i in prange(m):
        n0, n1, n2 = n[i, 0], n[i, 1], n[i, 2]
        h0, h1, h2 = 1.0, 0.0, 0.0
        if abs(n0) > 0.9:
            h0, h1 = 0.0, 1.0
        a0, a1, a2 = cross3(n0, n1, n2, h0, h1, h2)
        norm = np.sqrt((a0 * a0 + a1 * a1) + a2 * a2)
        a0, a1, a2 = a0 / norm, a1 / norm, a2 / norm
        b0, b1, b2 = cross3(n0, n1, n2, a0, a1, a2)
        ox = np.float32(p[i, 0] + n0 * eps)
        oy = np.float32(p[i, 1] + n1 * eps)
        oz = np.float32(p[i, 2] + n2 * eps)
        b = 0
        for k in range(samples):
            key = base + np.uint64(i) * np.uint64(2 * samples) + np.uint64(k) * np.uint64(2)
            phi, r2 = TWO_PI * hash_uniform(key), hash_uniform(key + np.uint64(1))
            rad = np.sqrt(r2)
            l0, l1, l2 = rad * np.cos(phi), rad * np.sin(phi), np.sqrt(1.0 - r2)
            dx = np.float32((l0 * a0 + l1 * b0) + l2 * n0)
            dy = np.float32((l0 * a1 + l1 * b1) + l2 * n1)
            dz = np.float32((l0 * a2 + l1 * b2) + l2 * n2)
            b |= put_ray(rays, i * samples + k, ox, oy, oz, np.float32(0.0), dx, dy, dz, radius)
        bad[i] = b
    return verdict_of(bad)


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def hit_normals(v, prim, rays, out):
    """out[i]: the unit geometric normal of triangle prim[i] (v: float32 (t, 3, 3) corners),
    (v1 - v0) x (v2 - v0) in float64, turned to face ray i (float32 rays, make_rays's rows);
    0 where prim[i] < 0 (a miss)."""
    for i in prange(len(prim)):
        t = prim[i]
        if t < 0:
            out[i, 0], out[i, 1], out[i, 2] = 0.0, 0.0, 0.0
            continue
        x0, y0, z0 = np.float64(v[t, 0, 0]), np.float64(v[t, 0, 1]), np.float64(v[t, 0, 2])
        e0, e1, e2 = np.float64(v[t, 1, 0]) - x0, np.float64(v[t, 1, 1]) - y0, np.float64(v[t, 1, 2]) - z0
        f0, f1, f2 = np.float64(v[t, 2, 0]) - x0, np.float64(v[t, 2, 1]) - y0, np.float64(v[t, 2, 2]) - z0
        c0, c1, c2 = cross3(e0, e1, e2, f0, f1, f2)
        norm = np.maximum(np.sqrt((c0 * c0 + c1 * c1) + c2 * c2), 1e-300)   # (NaN stays)
        c0, c1, c2 = c0 / norm, c1 / norm, c2 / norm
        facing = (c0 * np.float64(rays[i, R_DX]) + c1 * np.float64(rays[i, R_DY])) \
            + c2 * np.float64(rays[i, R_DZ])
        s = -1.0 if facing > 0 else 1.0
        out[i, 0], out[i, 1], out[i, 2] = c0 * s, c1 * s, c2 * s


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def coherent_keys(rays, lo, scale, cells, keys):
    """raytrace.coherent_order's key of each ray: the Morton code of its origin's cell (a grid of
    `cells` a side from lo, scale cells a unit; bits z y x from bit 0 up), then its direction's
    octant (x y z signs, x highest), in keys (uint64 (n,))."""
    for i in prange(rays.shape[0]):
        code = np.uint64(0)
        for axis in range(3):
            c = np.floor((np.float64(rays[i, R_OX + axis]) - lo[axis]) * scale)
            c = min(max(c, 0.0), cells - 1.0)
            u = np.uint64(c)
            bit = 0
            while u:
                code |= (u & np.uint64(1)) << np.uint64(3 * bit + 2 - axis)
                u >>= np.uint64(1)
                bit += 1
        octant = (np.uint64(rays[i, R_DX] < 0) << np.uint64(2)) \
            | (np.uint64(rays[i, R_DY] < 0) << np.uint64(1)) | np.uint64(rays[i, R_DZ] < 0)
        keys[i] = (code << np.uint64(3)) | octant


@njit(cache=True, nogil=True, error_model="numpy")
def stable_order(keys, bits):
    """np.argsort(keys, kind="stable") for keys below 2^bits: a least-significant-digit radix
    sort, 11 bits a pass (each pass stable, so the whole is), int64 (n,) indices."""
    n = len(keys)
    order, spare = np.arange(n), np.empty(n, np.int64)
    for shift in range(0, bits, RADIX_BITS):
        count = np.zeros((1 << RADIX_BITS) + 1, np.int64)     # a digit's count: any order's
        for i in range(n):
            count[((keys[i] >> np.uint64(shift)) & RADIX_MASK) + 1] += 1
        for b in range(1 << RADIX_BITS):
            count[b + 1] += count[b]
        for i in range(n):
            r = order[i]
            b = (keys[r] >> np.uint64(shift)) & RADIX_MASK
            spare[count[b]] = r
            count[b] += 1
        order, spare = spare, order
    return order
