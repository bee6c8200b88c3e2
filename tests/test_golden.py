"""Golden images of every built-in scene (tests/golden/manifest.json says the tolerances and why).
A scene with a post chain is checked on the chain's final image (the frame's presented image). On failure the rendered image
and a diff image go to tests/golden/failures/."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from pipelines import render
from pipelines.commands.diff import Tolerance, compare
from pipelines.presets import get_preset
from pipelines.presets.keys import apply_sets
from scenes.library import get_scene, scene_names

GOLDEN = Path(__file__).parent / "golden"
MANIFEST = json.loads((GOLDEN / "manifest.json").read_text())
CASES = MANIFEST["cases"]


def _file(case) -> Path:
    return GOLDEN / f"{case['scene'].replace(':', '_')}_{case['samples']}x_{case['format']}.png"


def test_manifest_covers_every_scene():
    listed = {c["scene"].split(":")[0] for c in CASES}
    assert listed == set(scene_names())


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['scene']}-{c['samples']}x-{c['format']}")
def test_golden(case, request):
    w, h = MANIFEST["width"], MANIFEST["height"]
    scene = get_scene(case["scene"])
    preset = apply_sets(get_preset("imr-baseline"), [("tex.format", case["format"]),
                                                     ("tex.alpha_format", case["format"])])
    image = render(scene, preset, w, h, case["samples"]).image   # a post chain's final
    path = _file(case)
    if request.config.getoption("--update-golden"):
        Image.fromarray(image).save(path)
        pytest.skip(f"rewrote {path.name}")
    assert path.exists(), f"no golden image {path.name}: run pytest --update-golden on purpose"
    want = np.asarray(Image.open(path).convert("RGBA"))
    tol = Tolerance(case["max_abs"], case["max_fraction"])
    d = compare(image, want, tol)
    if not d.within:
        out = GOLDEN / "failures"
        out.mkdir(exist_ok=True)
        Image.fromarray(image).save(out / f"{path.stem}_got.png")
        Image.fromarray(d.diff).save(out / f"{path.stem}_diff.png")
        pytest.fail(f"{path.name}: {d.summary(perceptual=True)}; wrote {out / (path.stem + '_got.png')} and _diff.png")
