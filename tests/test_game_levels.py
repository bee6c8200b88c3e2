"""The OpenArena levels as built-in scenes (issue 27 points 1 and 5): their draws in the game's
order, their cameras and samplers from the file, what the loader models and refuses, and every
architecture making the same image of each on the same texture format."""
from __future__ import annotations

import json
import struct
import subprocess
import sys

import numpy as np
import pytest

from pipelines.frame import Settings, run
from pipelines.presets import PRESETS
from pipelines.presets.keys import apply_sets
from scenes.library import get_scene, scene_names
from scenes.loaders import load_mesh_file
from scenes.model import AlphaMode, MipFilter, SceneError, Wrap
from tests.test_scenes import TRI, glb

LEVELS = ("pul1duel", "islandctf", "suspended")


def test_levels_are_built_in():
    assert set(LEVELS) <= set(scene_names())


@pytest.mark.parametrize("name,draws,modes", [("pul1duel", 73, (62, 3, 8)), ("islandctf", 19, (15, 1, 3)),
                                              ("suspended", 14, (11, 1, 2))])
def test_draws_in_the_games_order(name, draws, modes):
    scene = get_scene(name)
    order = [int(d.material.alpha_mode) for d in scene.draws]
    assert len(scene.draws) == draws and order == sorted(order)          # opaque, mask, blend
    assert tuple(order.count(int(m)) for m in AlphaMode) == modes
    assert all(d.material.texture is not None for d in scene.draws)
    assert scene.notes == ()


def test_camera_is_the_files_player_camera():
    scene = get_scene("pul1duel")
    assert scene.camera.eye == pytest.approx((-19.5, 16.35, -24.5))
    assert scene.camera.fovy_deg == pytest.approx(73.74, abs=0.01)        # yfov 1.2870 rad
    forward = np.subtract(scene.camera.target, scene.camera.eye)        # looks along +x +z
    assert forward[0] > 0 and forward[2] > 0 and abs(forward[1]) < 1e-6


def test_samplers_come_from_the_file():
    textures = [d.material.texture for d in get_scene("islandctf").draws]
    assert {t.mip for t in textures} == {MipFilter.LINEAR}           # LINEAR_MIPMAP_LINEAR
    assert {(t.wrap_s, t.wrap_t) for t in textures} == {(Wrap.REPEAT, Wrap.REPEAT), (Wrap.CLAMP, Wrap.CLAMP)}


# --- what the loader models, notes and refuses ---------------------------------------------------

def _textured(tmp_path, edit) -> str:
    """A one-triangle textured GLB whose JSON `edit` changes; its path."""
    material = {"name": "m", "pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}
    data = glb(TRI, [[0, 1, 2]], material=material, uvs=[[0, 0], [1, 0], [0, 1]])
    n = struct.unpack_from("<I", data, 12)[0]
    doc = json.loads(data[20:20 + n])
    edit(doc)
    text = json.dumps(doc).encode()
    text += b" " * (-len(text) % 4)
    binary = data[20 + n:]
    path = tmp_path / "t.glb"
    path.write_bytes(struct.pack("<4sII", b"glTF", 2, 20 + len(text) + len(binary))
                     + struct.pack("<II", len(text), 0x4E4F534A) + text + binary)
    return str(path)


def _sampler(**fields):
    def edit(doc):
        doc["samplers"] = [fields]
        doc["textures"][0]["sampler"] = 0
    return edit


def test_sampler_modes_are_modelled(tmp_path):
    t = load_mesh_file(_textured(tmp_path, _sampler(wrapS=33648, wrapT=33071, minFilter=9729))) \
        .draws[0].material.texture
    assert (t.wrap_s, t.wrap_t, t.mip) == (Wrap.MIRROR, Wrap.CLAMP, MipFilter.NONE)
    t = load_mesh_file(_textured(tmp_path, lambda doc: None)).draws[0].material.texture
    assert (t.wrap_s, t.wrap_t, t.mip) == (Wrap.REPEAT, Wrap.REPEAT, MipFilter.NEAREST)


@pytest.mark.parametrize("edit,says", [
    (lambda doc: doc["materials"][0]["pbrMetallicRoughness"]["baseColorTexture"].update(texCoord=1),
     "TEXCOORD_1"),
    (lambda doc: doc["materials"][0]["pbrMetallicRoughness"]["baseColorTexture"].update(
        extensions={"KHR_texture_transform": {"scale": [2, 2]}}), "KHR_texture_transform is not modelled"),
    (_sampler(magFilter=9728), "nearest-texel filtering"),
    (_sampler(minFilter=9984), "nearest-texel filtering"),
])
def test_what_is_not_modelled_is_refused(tmp_path, edit, says):
    with pytest.raises(SceneError, match=says):
        load_mesh_file(_textured(tmp_path, edit))


def test_unmodelled_material_extensions_are_a_note(tmp_path):
    def edit(doc):
        doc["materials"][0]["extensions"] = {"KHR_materials_emissive_strength": {"emissiveStrength": 5},
                                             "KHR_materials_unlit": {}}
    path = _textured(tmp_path, edit)
    scene = load_mesh_file(path)
    assert scene.notes == ("material 'm': KHR_materials_emissive_strength is not modelled (ignored)",)
    out = tmp_path / "o.png"
    quiet = subprocess.run([sys.executable, "-m", "pipelines.commands.cli", "render", path, "--res",
                            "32x32", "-o", str(out)], capture_output=True, text=True)
    loud = subprocess.run([sys.executable, "-m", "pipelines.commands.cli", "render", path, "--res",
                           "32x32", "-o", str(out), "-v"], capture_output=True, text=True)
    assert quiet.returncode == loud.returncode == 0
    assert "KHR_materials_emissive_strength" not in quiet.stderr
    assert "t: material 'm': KHR_materials_emissive_strength is not modelled (ignored)" in loud.stderr


# --- every architecture, one image ---------------------------------------------------------------

@pytest.mark.parametrize("name", LEVELS)
def test_every_architecture_makes_the_same_image(name):
    """On one texture format (bc7: alpha kept) every preset's image is the same, bit for bit."""
    scene = get_scene(name)
    images = {}
    for p in PRESETS.values():
        preset = apply_sets(p, [("tex.format", "bc7"), ("tex.alpha_format", "bc7")])
        f = run(scene, preset, Settings(160, 90))
        images[p.name] = f.image
        assert f.counters["raster.texture_l1_lookups"] > 0
    first = next(iter(images.values()))
    differ = [n for n, img in images.items() if not np.array_equal(img, first)]
    assert not differ, f"{name}: images differ from {next(iter(images))}'s on {differ}"
