"""The picture (pipelines.picture) is the image the whole frame presents, bit for bit, on every
scene it draws, through presets of every texture format, at one and four samples."""
import numpy as np
import pytest

from pipelines.frame import Settings, run
from pipelines.picture import drawable, image_key, picture
from pipelines.presets import get_preset
from scenes.library import SCENES, get_scene

# One preset per texture format family: bc1/bc7, ASTC, ETC2.
PRESETS = ("imr-baseline", "apple-m3", "qcom-adreno")
DRAWN = [n for n in SCENES if drawable(get_scene(n))]


def test_scenes_with_passes_of_their_own_are_left_to_the_frame():
    assert {"triangle", "sponza", "pul1duel"} <= set(DRAWN)
    for name in ("deferred", "postchain"):
        assert not drawable(get_scene(name))
        assert picture(get_scene(name), get_preset("imr-baseline"), 64, 36) is None


@pytest.mark.parametrize("samples", (1, 4))
@pytest.mark.parametrize("name", DRAWN)
def test_picture_is_the_frames_image(name, samples):
    scene = get_scene(name)
    for p in PRESETS:
        preset = get_preset(p)
        expect = run(scene, preset, Settings(96, 54, samples)).image
        got = picture(scene, preset, 96, 54, samples)
        assert got.shape == expect.shape and got.dtype == np.uint8
        diff = np.flatnonzero((got != expect).any(axis=-1))
        assert diff.size == 0, f"{name} {p} {samples}x: {diff.size} pixels differ, first {diff[:5]}"


def test_the_key_tells_apart_only_what_changes_the_image():
    m3, imr = get_preset("apple-m3"), get_preset("imr-baseline")
    plain, level = get_scene("sponza"), get_scene("pul1duel")
    assert image_key(plain, m3) == image_key(plain, imr) == ()
    assert image_key(level, m3) != image_key(level, imr)
    a, b = picture(level, m3, 96, 54), picture(level, imr, 96, 54)
    assert not np.array_equal(a, b)      # ASTC and BC texels differ: so must the pictures


def test_the_picture_sets_up_only_triangles_that_can_cover_a_sample():
    """At a viewer's size most of sponza's triangles hold no pixel centre in their bounding box:
    the picture's setup drops them (EMPTY), the frame's keeps every one, which it counts."""
    from renderer.geometry import setup_all
    from renderer.geometry_kernels import EMITTED, EMPTY
    scene = get_scene("sponza")
    (rp,) = scene.frame(1)
    whole = setup_all(rp.draws, scene.camera, 160, 90)
    drawn = setup_all(rp.draws, scene.camera, 160, 90, reach=0)
    assert not (whole.outcome == EMPTY).any()
    dropped = drawn.outcome == EMPTY
    assert dropped.sum() > whole.tris.n // 2
    assert np.array_equal(whole.outcome == EMITTED, (drawn.outcome == EMITTED) | dropped)
    assert drawn.tris.n == whole.tris.n - dropped.sum()


def test_the_picture_draws_textured_frames_visibility_first(monkeypatch):
    """A frame with a textured draw is drawn with the raster's HSR (each pixel shaded once), a
    frame without one straight: the picture's choice of how, which the image does not show."""
    import pipelines.picture as pic
    asked = []
    real = pic.rasterize

    def spy(*args, **kwargs):
        asked.append(kwargs.get("hsr", False))
        return real(*args, **kwargs)

    monkeypatch.setattr(pic, "rasterize", spy)
    for name, hsr in (("pul1duel", True), ("sponza", False), ("triangle", False)):
        asked.clear()
        picture(get_scene(name), get_preset("imr-baseline"), 64, 36)
        assert asked == [hsr], name
