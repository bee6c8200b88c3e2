"""A frame's picture without its costs: the image every architecture makes (DESIGN.md: all
architectures produce the same image, only the costs differ), drawn by the shared stages alone:
a setup that drops the triangles covering no sample, binning, and a raster that records no events
and runs no texture L1 (renderer.raster.Raster's `costs`); no front end's bookkeeping, no memory
model, no replay. The viewer shows it while the camera moves and lets the costs follow
(viewer.schedule).

How it is drawn is the picture's own choice, since every way gives the same image: a frame with
a textured draw is drawn as a TBDR tile draws it, visibility first and then each pixel shaded
once (the raster's `hsr`), because a textured fragment costs several times an untextured one
(trilinear filtering), so shading only the visible ones repays the visibility pass; a frame
without textures is drawn straight, early Z in submission order. Measured on two cores
(2026-12-04), straight -> HSR: at 1920x1080 pul1duel 174 -> 111 ms, islandctf 67 -> 58,
suspended 105 -> 92, but sponza 62 -> 76, spheres 74 -> 87, city 42 -> 46 (which keep the
straight way); at 1280x720 pul1duel 76 -> 53, islandctf and suspended within the machine's
noise (29 -> 27-31, 47 -> 42-47); at 640x360 pul1duel 32 -> 21-29, the others within noise.

Besides the scene, its camera and the size, the picture depends on the samples and, where the
scene draws textures, on the preset's texture formats (a block-compressed texel is not the
source texel): `image_key`. A frame the shared stages alone do not draw (a scene with render
passes of its own, or compute passes) has no picture here: `picture` returns None and the caller
runs the frame whole.

    img = picture(scene, preset, 640, 360)        # uint8 (360, 640, 4), or None
"""
from __future__ import annotations

import numpy as np

from renderer.binning import bin_triangles
from renderer.geometry import setup_all
from renderer.raster import RasterView, rasterize
from renderer.shade import build_tables, light_vector

from pipelines.arch.shared import framebuffer, shaded_counts, texture_unit


def _textured(draws) -> bool:
    return any(d.material.texture is not None for d in draws)


def image_key(scene, preset) -> tuple:
    """What of `preset` decides the image of `scene`: presets with equal keys make the same
    picture of it (the texture formats, if a draw samples a texture; else nothing)."""
    if not _textured(scene.draws):
        return ()
    return (str(preset.texture.tex_format.value), str(preset.texture.tex_alpha_format.value))


def drawable(scene) -> bool:
    """Whether the shared stages alone draw the frame: the one pass a scene without passes of
    its own gets (Scene.frame), and no compute passes after it."""
    return scene.passes is None and not scene.compute


def picture(scene, preset, width: int, height: int, samples: int = 1) -> np.ndarray | None:
    """uint8 (height, width, 4): the image `scene` presents through `preset` (run(...).image, bit
    for bit), or None when the frame is not `drawable`."""
    if not drawable(scene):
        return None
    (rp,) = scene.frame(samples)
    view = RasterView.make(width, height, samples)
    fb = framebuffer(rp, {}, view, shaded_counts(width, height), first=True)
    # Whole triangles with no sample in their bounding box are dropped at setup: they draw
    # nothing (a frame keeps them: they cost fetch, setup and binning).
    reach = int(max(np.abs(view.sample_x).max(), np.abs(view.sample_y).max()))
    tris = setup_all(rp.draws, scene.camera, width, height, reach).tris
    mat, tex = build_tables(rp.draws, texture_unit(preset))
    rasterize(tris, bin_triangles(tris, width, height), mat, tex, light_vector(scene.light), fb, view,
              hsr=_textured(rp.draws), costs=False)
    return fb.resolve()
