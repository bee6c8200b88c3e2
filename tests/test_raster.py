"""The fast rasterizer against its slow twin, watertightness, determinism."""
from __future__ import annotations

import base64
import pickle

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from renderer.binning import bin_triangles
from renderer.geometry import setup_pass
from renderer.raster import Framebuffer, RasterView, rasterize
from renderer.raster_sections import hiz_clear, hiz_init
from renderer.rop import rgba8
from renderer.shade import build_tables, light_vector
from scenes.library import get_scene
from scenes.model import Camera, CullMode, Draw, DrawState, Material, Mesh, Scene
from tests.naive import fast_coverage, naive_coverage, raycast_coverage, setup_from_subpixels

S = 256  # subpixels per pixel

CASES = {
    # shared edges: a quad split on its diagonal, and a fan around an interior vertex
    "shared_diagonal": [[(10 * S, 5 * S), (60 * S, 5 * S), (60 * S, 40 * S)],
                        [(10 * S, 5 * S), (60 * S, 40 * S), (10 * S, 40 * S)]],
    "fan": [[(40 * S + 37, 20 * S + 91), (x, y), (x2, y2)]
            for (x, y), (x2, y2) in zip(
                [(5 * S, 2 * S), (75 * S, 3 * S), (70 * S, 45 * S), (8 * S, 44 * S)],
                [(75 * S, 3 * S), (70 * S, 45 * S), (8 * S, 44 * S), (5 * S, 2 * S)])],
    # edges exactly through pixel centres: the top-left rule decides every one of them
    "on_centres": [[(2 * S + 128, 2 * S + 128), (30 * S + 128, 2 * S + 128), (2 * S + 128, 30 * S + 128)],
                   [(30 * S + 128, 2 * S + 128), (30 * S + 128, 30 * S + 128), (2 * S + 128, 30 * S + 128)]],
    "sliver": [[(1 * S, 1 * S), (79 * S, 47 * S + 3), (79 * S, 47 * S + 40)],
               [(3 * S, 45 * S), (77 * S, 44 * S + 200), (4 * S, 45 * S + 10)]],
    "degenerate": [[(5 * S, 5 * S), (20 * S, 20 * S), (35 * S, 35 * S)],       # collinear
                   [(7 * S, 9 * S), (7 * S, 9 * S), (30 * S, 3 * S)],          # repeated vertex
                   [(10 * S + 1, 10 * S + 1), (10 * S + 2, 10 * S + 1), (10 * S + 1, 10 * S + 3)]],  # tiny
    "off_screen": [[(-500 * S, -20 * S), (200 * S, -30 * S), (-100 * S, 300 * S)],  # covers all
                   [(100 * S, 10 * S), (180 * S, 20 * S), (120 * S, 60 * S)],        # beyond the right
                   [(-40 * S, 20 * S), (5 * S, 22 * S), (-30 * S, 40 * S)]],         # straddles the left
    "multi_tile": [[(3 * S, 3 * S), (140 * S, 10 * S), (60 * S, 69 * S)],
                   [(70 * S, 2 * S), (149 * S, 60 * S), (100 * S, 68 * S)]],
}
SIZES = {"multi_tile": (150, 70), "off_screen": (80, 48)}


@pytest.mark.parametrize("samples", [1, 4])
@pytest.mark.parametrize("case", sorted(CASES))
def test_fast_matches_naive(case, samples):
    w, h = SIZES.get(case, (80, 48))
    tris = setup_from_subpixels(np.array(CASES[case]))
    want = naive_coverage(tris, w, h, samples)
    got, counters, fb = fast_coverage(tris, w, h, samples)
    mismatch = np.argwhere(got != want)
    assert len(mismatch) == 0, f"{len(mismatch)} samples differ, first (y, x, s): {mismatch[:5].tolist()}"
    # Fragments: one per (triangle, pixel) with any covered sample.
    n_frag = sum(int((naive_coverage(tris._replace(**{k: v[t:t + 1] for k, v in tris._asdict().items()}),
                                     w, h, samples) >= 0).any(axis=2).sum()) for t in range(tris.n)) \
        if case in ("shared_diagonal", "sliver", "degenerate") else None
    if n_frag is not None:
        assert counters["raster.fragments"] == n_frag
        assert int(fb.shaded.sum()) == n_frag
    assert counters["raster.samples_covered"] >= int((want >= 0).sum())


def _tiling(seed: int, w: int, h: int, nx: int, ny: int) -> np.ndarray:
    """A jittered grid of nx x ny cells over exactly [0, w] x [0, h] (subpixels), each cell cut on
    a random diagonal: triangles that tile the rectangle with shared edges."""
    rng = np.random.default_rng(seed)
    gx = np.linspace(0, w * S, nx + 1)
    gy = np.linspace(0, h * S, ny + 1)
    X, Y = np.meshgrid(gx, gy)
    jitter = rng.uniform(-0.24, 0.24, X.shape + (2,))   # < 1/4 cell: cells stay convex
    jitter = jitter * [w * S / nx, h * S / ny]
    jitter[[0, -1], :, 1] = 0      # border vertices stay on the border
    jitter[:, [0, -1], 0] = 0
    P = np.rint(np.stack([X, Y], -1) + jitter).astype(np.int64)
    tris = []
    for j in range(ny):
        for i in range(nx):
            a, b, c, d = P[j, i], P[j, i + 1], P[j + 1, i + 1], P[j + 1, i]
            tris += [[a, b, c], [a, c, d]] if rng.random() < 0.5 else [[a, b, d], [b, c, d]]
    tris = np.array(tris)
    area = ((tris[:, 1, 0] - tris[:, 0, 0]) * (tris[:, 2, 1] - tris[:, 0, 1])
            - (tris[:, 1, 1] - tris[:, 0, 1]) * (tris[:, 2, 0] - tris[:, 0, 0]))
    assert (area > 0).all(), "the generator made a folded cell"
    return tris


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31), nx=st.integers(1, 9), ny=st.integers(1, 7),
       samples=st.sampled_from([1, 4]))
def test_tiling_covers_every_sample_once(seed, nx, ny, samples):
    w, h = 96, 72
    tris = setup_from_subpixels(_tiling(seed, w, h, nx, ny))
    got, counters, _ = fast_coverage(tris, w, h, samples)
    assert (got >= 0).all(), f"{int((got < 0).sum())} samples uncovered (a crack)"
    assert counters["raster.samples_covered"] == w * h * samples, "a sample covered twice"


def _near_crossing_scene() -> tuple[Scene, np.ndarray]:
    # Triangles reaching behind the camera (w < 0) and one lying across the near plane.
    tris = np.array([
        [[-2.0, -1.0, -3.0], [2.0, -1.0, -3.0], [0.0, -1.0, 4.0]],      # floor running behind the eye
        [[-1.5, 0.2, 1.0], [1.0, 1.5, -6.0], [-0.5, 0.8, -0.05]],     # crosses near at a slant
        [[0.5, -0.5, -0.2], [3.0, 0.5, -4.0], [0.8, 1.0, 0.3]],
    ], np.float32)
    mesh = Mesh("near", tris.reshape(-1, 3), np.arange(9, dtype=np.uint32).reshape(3, 3))
    draw = Draw(mesh, Material("m"), state=DrawState(cull=CullMode.NONE, depth_test=False))
    cam = Camera((0, 0, 0), (0, 0, -1), near=0.1, far=20.0)
    return Scene("near", "", [draw], cam), tris


def test_near_plane_crossing_triangles():
    scene, world = _near_crossing_scene()
    w, h = 64, 48
    tris, c = setup_pass(scene.draws, scene.camera, w, h)
    assert c["geom.prims_clipped"] == 3
    got, _, _ = fast_coverage(tris, w, h, 1)
    assert (got == naive_coverage(tris, w, h, 1)).all()
    # Clipping lost nothing and added nothing: compare with ray casting, away from edges (the
    # two differ only by where an edge through a pixel centre rounds).
    covered = (got >= 0)[..., 0]
    rays = raycast_coverage(world, scene.camera, w, h)
    differ = covered != rays
    assert differ.mean() < 0.01, f"{differ.sum()} of {differ.size} pixels differ from ray casting"
    assert covered.sum() > 0.2 * covered.size


@pytest.mark.parametrize("preset, samples", [("imr-baseline", 1), ("apple-m3", 1), ("amd-rdna2", 4)])
def test_identical_with_one_and_two_threads(preset, samples):
    """raster_kernels.run_tiles lets each thread take the next tile not yet taken (a tiler's,
    band by band), so which thread draws a tile changes from run to run: the frame is the same
    on one thread."""
    from pipelines import render
    n = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        a = render("spot", preset, 160, 120, samples)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        b = render("spot", preset, 160, 120, samples)
    finally:
        numba.set_num_threads(n)
    assert (a.color == b.color).all() and (a.depth == b.depth).all()
    assert a.counters == b.counters
    assert all((a.tile_maps[k] == b.tile_maps[k]).all() for k in a.tile_maps)


@pytest.mark.parametrize("samples", [1, 4])
@pytest.mark.parametrize("preset", ["imr-baseline", "amd-rdna2", "apple-m3"])
@pytest.mark.parametrize("scene", ["overdraw:8:ftb", "overdraw:8:shuffled", "sponza", "foliage",
                                   "particles", "deferred"])
def test_depth_bound_skip_changes_nothing(monkeypatch, scene, preset, samples):
    """raster.Z_SKIP (whole 8x8 blocks known to fail the depth test are not visited) is a
    speed-up only: every counter, per-tile map and pixel is what visiting them gives."""
    import renderer.raster as raster
    from pipelines import render

    results = []
    for skip in (False, True):
        monkeypatch.setattr(raster, "Z_SKIP", skip)
        results.append(render(scene, preset, 192, 108, samples))
    off, on = results
    assert dict(on.counters) == dict(off.counters)
    assert np.array_equal(on.color, off.color) and np.array_equal(on.depth, off.depth)
    for name in off.tile_maps:
        assert np.array_equal(on.tile_maps[name], off.tile_maps[name]), name


@pytest.mark.parametrize("samples", [1, 4])
@pytest.mark.parametrize("z", [0.75, 1.0, 0.0, -0.0, -1.0, float("nan")])
def test_hiz_of_a_cleared_tile_is_what_reading_it_finds(z, samples):
    """hiz_clear (a tile clear_tile has just written) counts what hiz_init reads back from the
    target: interior and edge tiles of a 150x70 target, every clear depth block_far can meet."""
    width, height, tile = 150, 70, 64
    depth = np.full((height, width, samples), z, np.float32)
    nbx = tile // 8
    for tx0, ty0 in [(0, 0), (128, 0), (64, 64), (128, 64)]:
        got = np.empty(nbx * nbx, np.float32), np.empty(nbx * nbx, np.int64)
        want = np.empty(nbx * nbx, np.float32), np.empty(nbx * nbx, np.int64)
        hiz_clear(*got, np.float32(z), tx0, ty0, nbx, width, height, samples)
        hiz_init(*want, depth, tx0, ty0, nbx, width, height, samples)
        assert np.array_equal(got[1], want[1])
        assert got[0].tobytes() == want[0].tobytes()       # bit for bit: +0.0, not -0.0


@pytest.mark.parametrize("samples", [1, 4])
def test_tiles_start_from_the_clear_the_framebuffer_asks_for(samples):
    """A target handed out uncleared (np.empty, Framebuffer.cleared_in_tiles) holds, once the
    raster has run, what one cleared up front (Framebuffer.make) holds, with or without HiZ, at
    the edge tiles too; then its clear is spent."""
    width, height = 150, 70
    scene = get_scene("spot")
    draws = scene.frame(samples)[0].draws
    tris = setup_pass(draws, scene.camera, width, height)[0]
    view = RasterView.make(width, height, samples)
    mat, tex = build_tables(draws)
    clear = (0.1, 0.2, 0.3, 1.0)
    for hiz in (False, True):
        want = Framebuffer.make(width, height, samples, clear, 0.9)
        got = Framebuffer.cleared_in_tiles(
            np.empty_like(want.color), np.empty_like(want.depth),
            np.empty_like(want.shaded), rgba8(clear), 0.9, zero_shaded=True)
        for fb in (want, got):
            rasterize(tris, bin_triangles(tris, width, height), mat, tex,
                      light_vector(scene.light), fb, view, hiz=hiz)
        assert np.array_equal(got.color, want.color) and np.array_equal(got.shaded, want.shaded)
        assert np.array_equal(got.depth, want.depth) and not got.clear.any()
        assert 0 < np.count_nonzero(got.shaded) < width * height    # drawn, not everywhere


def test_type_key_tells_apart_what_numba_types_apart():
    """raster_kernels.type_key caches the tile kernel's signature: values with one key must have
    one numba type (and here, each type its own key): arrays of every layout, writeability,
    dtype and rank, scalars, and named tuples of them."""
    from collections import namedtuple

    from renderer.raster_kernels import type_key
    Pair = namedtuple("Pair", "a b")
    Other = namedtuple("Other", "a b")
    base = np.zeros((4, 6), np.float64)
    frozen = base.copy()
    frozen.setflags(write=False)
    values = [base, base.T, base[:, ::2], base[0], base[:, 0], frozen, base.astype(np.float32),
              np.zeros(4, np.int64), np.zeros((2, 2, 2), np.uint8), np.zeros(1, np.int64)[0],
              np.zeros((1, 1)), np.zeros((1, 5)), 3, 2 ** 63 - 1, 2 ** 63, True, 1.5, np.float32(1),
              Pair(base, 3), Pair(base.T, 3), Pair(base, True), Other(base, 3), (base, 3)]
    for x in values:
        for y in values:
            same_key = type_key(x) == type_key(y)
            assert same_key == (numba.typeof(x) == numba.typeof(y)), (x, y)


@pytest.mark.parametrize("preset", ["imr-baseline", "amd-rdna2", "apple-m3"])
@pytest.mark.parametrize("scene", ["triangle", "overdraw:8:shuffled", "sponza", "city", "deferred",
                                   "spot", "foliage", "particles"])
def test_the_tile_kernel_without_its_quad_path_changes_nothing(monkeypatch, scene, preset):
    """A pass of opaque, untextured, unblended draws at one sample takes the tile kernel numba
    compiled without its quad path (raster_kernels.quad_path gives None): every counter, per-tile
    map and pixel is what the whole kernel gives. A textured (spot), alpha-tested (foliage) or
    blended (particles) pass takes the whole kernel either way."""
    import renderer.raster_kernels as rk
    from pipelines import render

    quad_path, given = rk.quad_path, []          # what each pass's tile kernel is given
    monkeypatch.setattr(rk, "quad_path", lambda *a: given.append(quad_path(*a)) or given[-1])
    results = []
    for lean in (False, True):
        monkeypatch.setattr(rk, "LEAN", lean)
        given.clear()
        results.append(render(scene, preset, 192, 108))
        plain = scene not in ("spot", "foliage", "particles")
        assert given and set(given) == {None if lean and plain else True}
    whole, lean = results
    assert dict(lean.counters) == dict(whole.counters)
    assert np.array_equal(lean.color, whole.color) and np.array_equal(lean.depth, whole.depth)
    for name in whole.tile_maps:
        assert np.array_equal(lean.tile_maps[name], whole.tile_maps[name]), name


@pytest.mark.parametrize("scene, lean", [("sponza", True), ("spheres", True), ("deferred", True),
                                         ("spot", False), ("foliage", False),
                                         ("particles", False), ("pul1duel", False)])
def test_a_command_takes_the_lean_tile_kernel_where_every_scene_allows_it(monkeypatch, scene,
                                                                          lean):
    """pipelines.commands.precompile.choose_variant: the lean kernel for a command whose scenes
    draw nothing textured, alpha-tested or blended; the whole one otherwise, or where the
    scenes are not known; and the plan then lists the tile kernels of that variant alone."""
    import renderer.raster_kernels as rk
    from numba.core import types
    from pipelines.commands import precompile as pc

    monkeypatch.setattr(rk, "LEAN", rk.LEAN)
    pc.choose_variant([get_scene(scene)])
    assert rk.LEAN is lean
    pc.choose_variant([get_scene("triangle"), get_scene(scene)])
    assert rk.LEAN is lean
    pc.choose_variant(None)
    assert rk.LEAN is False
    rk.LEAN = lean
    tile_entries = [e for e in pc.load() if e["kernel"] == "rasterize_tile"]
    if not tile_entries:
        pytest.skip("the precompile list holds no tile kernel for this numba")
    for e in tile_entries:
        sig = pickle.loads(base64.b64decode(e["sig"]))
        without = isinstance(sig[rk.QUADS_ARG], types.NoneType)
        one_sample = sig[rk.N_SAMPLES_ARG].literal_value == 1
        # (at four samples every pass takes the whole kernel)
        assert pc._variant_called(e) == (without or not one_sample if lean else not without)
