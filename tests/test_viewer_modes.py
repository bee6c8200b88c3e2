"""The viewer's modes without a window (issue 9): heat maps and depth coloured on one scale
shared by the panels, per-reason fallback colours, per-pixel readouts, extra per-pixel maps."""
from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from pipelines.api import render
from renderer.transforms import clip_from_world
from scenes.library import get_scene
from viewer.modes import (MODES, PIXEL, RAY, colorize, dram_per_pixel, extra_modes, eye_depth, inferno,
                          per_pixel, shared_scale, tile_pixels, value_at)


# ---- colour mapping ----------------------------------------------------------------------------

def test_tile_maps_spread_to_pixels_keep_their_totals():
    tp = tile_pixels(70, 100, 32)                 # 3 x 4 tiles, the last row and column cut
    assert tp.shape == (3, 4) and tp.sum() == 70 * 100
    assert tp[2, 3] == (70 - 64) * (100 - 96)
    m = np.arange(12, dtype=np.float64).reshape(3, 4)
    px = per_pixel(m, 70, 100, 32)
    assert px[0, 0] == 0 and px[69, 99] == 11 and px[33, 40] == m[1, 1]


def _results(scene="overdraw:6", presets=("imr-baseline", "apple-m3"), w=96, h=64):
    s = get_scene(scene)
    return s, [render(s, p, w, h) for p in presets]


def test_dram_per_pixel_sums_to_the_tile_bytes():
    _, rs = _results()
    for r in rs:
        assert math.isclose(dram_per_pixel(r).sum(), r.tile_maps["dram_bytes"].sum(), rel_tol=1e-9)


def test_heat_maps_share_one_scale_and_differ_where_counters_differ():
    _, (imr, tbdr) = _results()
    assert imr.counters["raster.shaded"] > tbdr.counters["raster.shaded"]     # 6 layers vs HSR
    scale = shared_scale("overdraw", [imr, tbdr])
    assert scale.hi == max(imr.pixel_maps["overdraw"].max(), tbdr.pixel_maps["overdraw"].max())
    a, b = colorize("overdraw", imr, scale), colorize("overdraw", tbdr, scale)
    assert not np.array_equal(a, b)
    # on the shared scale the hottest pixel is the top of the map in its own panel only
    top = colorize("overdraw", imr, scale)[np.unravel_index(imr.pixel_maps["overdraw"].argmax(), (64, 96))]
    np.testing.assert_array_equal(top, inferno()[255])
    own = shared_scale("overdraw", [tbdr])
    assert not np.array_equal(colorize("overdraw", tbdr, own), b)


def test_eye_depth_inverts_the_projection():
    s, (r, _) = _results("quad", w=32, h=16)
    cam = s.camera
    z = eye_depth(r, cam.near, cam.far)
    covered = r.depth < 1.0
    assert covered.any()
    # the quad's plane: window depth of a point at its distance through the camera's projection
    p = clip_from_world(cam, 32, 16) @ np.array([0.0, 0.0, -float(np.nanmedian(z)), 1.0])
    assert math.isclose((p[2] / p[3]) * 0.5 + 0.5, float(np.median(r.depth[covered])), abs_tol=1e-5)
    assert np.isnan(z[~covered]).all()


def test_every_mode_colours_every_panel():
    s, rs = _results()
    for mode in MODES:
        scale = shared_scale(mode, rs, s.camera.near, s.camera.far)
        for r in rs:
            img = colorize(mode, r, scale, s.camera.near, s.camera.far)
            assert img.shape == (64, 96, 4) and img.dtype == np.uint8
    with pytest.raises(ValueError):
        colorize("nope", rs[0], scale)


def test_fallback_map_colours_tiles_by_reason():
    s, (_, tbdr) = _results("particles", presets=("imr-baseline", "apple-m3"))
    assert "fallbacks" in tbdr.tile_maps
    scale = shared_scale("fallbacks", [tbdr])
    img = colorize("fallbacks", tbdr, scale)
    hit = per_pixel(tbdr.tile_maps["fallbacks"], 64, 96, tbdr.tile_size) > 0
    assert hit.any()                   # blended particles cut deferred runs short
    swatches = dict(scale.swatches)
    blend = per_pixel(tbdr.tile_maps["fallback.blend"], 64, 96, tbdr.tile_size) > 0
    assert blend.any() and "blend" in swatches
    colours = {tuple(int(v) for v in c) for c in swatches.values()}
    assert {tuple(int(v) for v in p) for p in img[hit][:, :3]} <= colours
    assert (img[~hit][:, 0] == img[~hit][:, 1]).all()          # the rest is the dimmed grey image


def test_value_readout_per_mode():
    s, (r, _) = _results("spheres")
    near, far = s.camera.near, s.camera.far
    y, x = 32, 48
    assert value_at("overdraw", r, {}, x, y, near, far) == str(int(r.pixel_maps["overdraw"][y, x]))
    assert value_at("dram", r, {}, x, y, near, far) == f"{dram_per_pixel(r)[y, x]:.3g} B"
    z = eye_depth(r, near, far)[y, x]
    assert value_at("depth", r, {}, x, y, near, far) == (f"{z:.4g}" if np.isfinite(z) else "-")
    assert value_at("image", r, {}, x, y, near, far) == "#" + "".join(f"{int(c):02x}" for c in r.color[y, x, :3])
    assert value_at(RAY + "ao", r, {"ao": np.full((64, 96), 0.25, np.float32)}, x, y, near, far) == "0.25"
    assert value_at("fallbacks", r, {}, x, y, near, far) == "-"        # IMR: no tile fallbacks


def test_fallback_reasons_each_get_their_colour():
    _, (_, tbdr) = _results("quad", w=64, h=64)          # 2 x 2 tiles of 32 px
    a = np.array([[3, 0], [1, 0]])
    b = np.array([[1, 0], [2, 0]])
    own = {k: v for k, v in tbdr.tile_maps.items() if not k.startswith("fallback.")}
    r = dataclasses.replace(tbdr, tile_maps={**own, "fallback.mask": a, "fallback.spill": b})
    scale = shared_scale("fallbacks", [r])
    colors = dict(scale.swatches)
    assert list(colors) == ["mask", "spill"] and colors["mask"] != colors["spill"]
    img = colorize("fallbacks", r, scale)
    assert tuple(img[5, 5, :3]) == colors["mask"]          # 3 mask > 1 spill
    assert tuple(img[40, 5, :3]) == colors["spill"]        # 2 spill > 1 mask
    assert img[5, 40, 0] == img[5, 40, 1] == img[5, 40, 2]  # no fallback: grey


def test_extra_pixel_maps_become_modes():
    _, rs = _results()
    nodes = [np.full((64, 96), k + 1, np.int64) for k in range(2)]
    rs = [dataclasses.replace(r, pixel_maps={**r.pixel_maps, "rt_nodes": n}) for r, n in zip(rs, nodes)]
    assert extra_modes(rs) == (PIXEL + "rt_nodes",)
    assert extra_modes(rs[:1] + [_results()[1][1]]) == ()      # only maps every panel has
    scale = shared_scale(PIXEL + "rt_nodes", rs)
    assert scale.hi == 2
    np.testing.assert_array_equal(colorize(PIXEL + "rt_nodes", rs[1], scale)[0, 0], inferno()[255])
    np.testing.assert_array_equal(colorize(PIXEL + "rt_nodes", rs[0], scale)[0, 0], inferno()[128])
