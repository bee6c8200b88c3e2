"""The rays' setup kernels against their slow twins, the numpy expressions they replaced, bit for
bit: make_rays (renderer.bvh.rays_kernels.fill_rays), the AO rays, the hits' normals and the
coherent order (pipelines.passes.raytrace_kernels), the fetch records' compaction
(trace_kernels)."""
from __future__ import annotations

import numpy as np
import pytest

from pipelines.passes.raytrace import GRID_BITS, _normals, ao_rays, camera_rays, coherent_order
from renderer.bvh import Triangles, build_layout, make_rays, trace_rays
from renderer.bvh.traverse import gather_records
from scenes.library import get_scene


def same_bits(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def make_rays_twin(origins, directions, tmin=0.0, tmax=np.inf):
    o = np.asarray(origins, np.float32).reshape(-1, 3)
    d = np.asarray(directions, np.float32).reshape(-1, 3)
    if o.shape != d.shape:
        raise ValueError(f"origins {o.shape} and directions {d.shape} differ")
    rays = np.empty((len(o), 8), np.float32)
    rays[:, 0:3], rays[:, 4:7] = o, d
    rays[:, 3] = np.asarray(tmin, np.float32)
    rays[:, 7] = np.asarray(tmax, np.float32)
    if not np.isfinite(rays[:, :7]).all():
        raise ValueError("ray origins, directions and tmin must be finite")
    if (~d.any(axis=1)).any():
        raise ValueError("a ray direction is zero")
    return rays


def hash_twin(key):
    z = key.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    z = z ^ (z >> np.uint64(31))
    return (z >> np.uint64(11)).astype(np.float64) / float(1 << 53)


def ao_rays_twin(p, n, samples, radius, eps, seed):
    m = len(p)
    key = (np.uint64(seed) << np.uint64(40)) + np.arange(m, dtype=np.uint64)[:, None] * np.uint64(2 * samples) \
        + np.arange(samples, dtype=np.uint64)[None, :] * np.uint64(2)
    r1, r2 = hash_twin(key), hash_twin(key + np.uint64(1))
    phi, rad = 2.0 * np.pi * r1, np.sqrt(r2)
    local = np.stack([rad * np.cos(phi), rad * np.sin(phi), np.sqrt(1.0 - r2)], axis=-1)
    helper = np.where(np.abs(n[:, :1]) > 0.9, [[0.0, 1.0, 0.0]], [[1.0, 0.0, 0.0]])
    t1 = np.cross(n, helper)
    t1 /= np.linalg.norm(t1, axis=1, keepdims=True)
    t2 = np.cross(n, t1)
    d = local[..., :1] * t1[:, None] + local[..., 1:2] * t2[:, None] + local[..., 2:] * n[:, None]
    o = np.repeat(p + n * eps, samples, axis=0)
    return make_rays_twin(o, d.reshape(-1, 3), 0.0, radius)


def normals_twin(tris, prim, rays):
    out = np.zeros((len(prim), 3))
    hit = prim >= 0
    v = tris.v[prim[hit]].astype(np.float64)
    n = np.cross(v[:, 1] - v[:, 0], v[:, 2] - v[:, 0])
    n /= np.maximum(np.linalg.norm(n, axis=1, keepdims=True), 1e-300)
    d = rays[hit, 4:7].astype(np.float64)
    n *= np.where((n * d).sum(axis=1, keepdims=True) > 0, -1.0, 1.0)
    out[hit] = n
    return out


def coherent_order_twin(rays, lo, hi):
    cells = 1 << GRID_BITS
    side = max(float(np.max(hi - lo)), 1e-30)
    c = np.floor((rays[:, 0:3].astype(np.float64) - lo) * (cells / side))
    c = np.clip(c, 0, cells - 1).astype(np.uint64)
    code = np.zeros(len(rays), np.uint64)
    for bit in range(GRID_BITS):
        for axis in range(3):
            code |= ((c[:, axis] >> np.uint64(bit)) & np.uint64(1)) << np.uint64(3 * bit + 2 - axis)
    d = rays[:, 4:7]
    octant = ((d[:, 0] < 0).astype(np.uint64) << np.uint64(2)) \
        | ((d[:, 1] < 0).astype(np.uint64) << np.uint64(1)) | (d[:, 2] < 0).astype(np.uint64)
    return np.argsort((code << np.uint64(3)) | octant, kind="stable")


RNG = np.random.default_rng(7)
N = 5000
CASES = {
    "float64 rows": (RNG.standard_normal((N, 3)), RNG.standard_normal((N, 3)), 0.0, np.inf),
    "one origin, float32 directions": (np.broadcast_to(np.array([1.0, 2.0, 3.0]), (N, 3)),
                                       RNG.standard_normal((N, 3)).astype(np.float32), 0.5, 10.0),
    "one direction, a tmin a ray": (RNG.standard_normal((N, 3)) * 1e3,
                                    np.broadcast_to(np.array([0.3, -0.2, 0.9]), (N, 3)),
                                    RNG.random(N), np.inf),
    "lists": ([[0.2, 0.2, -1]], [[0, 0, 1]], 0.0, np.inf),
    "integers, a tmax a ray": (RNG.integers(-5, 5, (50, 3)), RNG.integers(1, 5, (50, 3)), 0,
                               RNG.random(50) * 7),
    "none": (np.zeros((0, 3)), np.zeros((0, 3)), 0.0, 1.0),
    "beyond float32": (np.array([[1e39, 0.1, 1e-50]]), np.array([[1.0, 1e-46, 3.0]]), 1e-30, 1e39),
}


@pytest.mark.filterwarnings("ignore:overflow encountered in cast")
@pytest.mark.parametrize("case", list(CASES))
def test_make_rays_matches_numpy(case):
    o, d, lo, hi = CASES[case]
    try:
        want = make_rays_twin(o, d, lo, hi)
    except ValueError as e:
        with pytest.raises(ValueError, match=str(e)):
            make_rays(o, d, lo, hi)
        return
    assert same_bits(make_rays(o, d, lo, hi), want)


@pytest.mark.parametrize("o, d, message", [
    ([[0, 0, 0]], [[np.nan, 0, 1]], "must be finite"),
    ([[np.inf, 0, 0]], [[0, 0, 1]], "must be finite"),
    ([[0, 0, 0]], [[0, 0, 0]], "direction is zero"),
    ([[0, 0, 0]], [[1e-60, 0, 0]], "direction is zero"),        # zero once in float32
    ([[0, 0, 0], [1, 1, 1]], [[0, 0, 1]], "differ"),
])
def test_make_rays_refuses_what_numpy_did(o, d, message):
    with pytest.raises(ValueError, match=message):
        make_rays_twin(o, d)
    with pytest.raises(ValueError, match=message):
        make_rays(o, d)


def test_make_rays_refuses_a_range_of_the_wrong_length():
    with pytest.raises(ValueError, match="one value or one per ray"):
        make_rays(np.zeros((3, 3)), np.ones((3, 3)), np.zeros(2))


@pytest.fixture(scope="module")
def sponza_hits():
    scene = get_scene("sponza")
    tris = Triangles.of_scene(scene)
    rays = camera_rays(scene.camera, 320, 180)
    hits, _ = trace_rays(build_layout(tris, "bvh8"), rays)
    return tris, rays, hits


def test_normals_match_numpy(sponza_hits):
    tris, rays, hits = sponza_hits
    assert (hits.prim >= 0).any() and (hits.prim < 0).any()
    assert same_bits(_normals(tris, hits, rays), normals_twin(tris, hits.prim, rays))


@pytest.mark.parametrize("samples, seed", [(1, 0), (4, 3)])
def test_ao_rays_match_numpy(sponza_hits, samples, seed):
    tris, rays, hits = sponza_hits
    hit = hits.prim >= 0
    p = rays[hit, 0:3].astype(np.float64) + hits.t[hit, None] * rays[hit, 4:7].astype(np.float64)
    n = _normals(tris, hits, rays)[hit]
    n[::7] = [1.0, 0.0, 0.0]           # normals along x: the other helper axis
    got = ao_rays(p, n, samples, 2.5, 1e-3, seed)
    assert same_bits(got, ao_rays_twin(p, n, samples, 2.5, 1e-3, seed))


def test_coherent_order_matches_numpy(sponza_hits):
    tris, rays, hits = sponza_hits
    hit = hits.prim >= 0
    p = rays[hit, 0:3].astype(np.float64) + hits.t[hit, None] * rays[hit, 4:7].astype(np.float64)
    ao = ao_rays(p, _normals(tris, hits, rays)[hit], 4, 2.5, 1e-3, 0)
    lo, hi = tris.v.reshape(-1, 3).min(0), tris.v.reshape(-1, 3).max(0)
    rng = np.random.default_rng(5)         # origins outside the grid, directions with -0
    d = rng.standard_normal((3000, 3))
    d[::3, 1] = -0.0
    stray = make_rays(rng.uniform(-3, 3, (3000, 3)) * (hi - lo) + lo, d)
    for r in (rays, ao, stray):
        assert same_bits(coherent_order(r, lo, hi), coherent_order_twin(r, lo, hi))


def test_ao_rays_refuse_a_normal_that_is_not_finite():
    with pytest.raises(ValueError, match="must be finite"):
        ao_rays(np.zeros((2, 3)), np.array([[0.0, 0.0, 1.0], [np.nan, 0.0, 0.0]]), 2, 1.0, 1e-3, 0)


def test_compacted_records_are_the_chunks_joined():
    cap, rng = 16, np.random.default_rng(3)
    rec_n = rng.integers(0, cap + 1, 40)
    rec = rng.integers(0, 1 << 40, 40 * cap)
    want = np.concatenate([rec[c * cap:c * cap + rec_n[c]] for c in range(40)])
    assert same_bits(gather_records(rec, rec_n, cap, 40 * 128, None), want)


def test_folded_costs_are_the_column_sums_and_the_steps():
    from renderer.bvh.trace_kernels import fold_costs
    rng = np.random.default_rng(11)
    for n in (0, 1, 63, 5000):
        counts = rng.integers(0, 1 << 30, (n, 21)).astype(np.int32)
        tot, steps = np.full(21, 5, np.int64), np.empty(n, np.int32)
        fold_costs(counts, tot, steps, 0)
        assert (tot == 5 + counts.sum(axis=0, dtype=np.int64)).all()
        assert same_bits(steps, counts[:, 0])
