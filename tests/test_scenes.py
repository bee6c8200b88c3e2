"""Scene library, procedural meshes and file loaders: what builds, what is framed, what is refused."""
from __future__ import annotations

import io
import json
import shutil
import struct
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from renderer.transforms import clip_from_world
from scenes.library import SCENES, get_scene, scene_names
from scenes.framing import frame_bounds, world_bounds
from scenes.loaders import load_mesh_file
from scenes.model import AlphaMode, CullMode, SceneError
from scenes.procedural import leaf_mask_texture, particle_texture, quad, uv_sphere


def asset(name: str) -> Path:
    return Path(str(resources.files("assets") / name))


def ndc(scene, points, width, height):
    """Clip-space → NDC of world-space points under the scene's camera at width x height."""
    p = np.c_[points, np.ones(len(points))] @ clip_from_world(scene.camera, width, height).T
    return p[:, :3] / p[:, 3:]


def world_positions(draw):
    m = draw.world_from_object
    return draw.mesh.positions.astype(np.float64) @ m[:3, :3].T + m[:3, 3]


# --- library ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", scene_names())
def test_every_scene_builds_with_a_tight_camera(name):
    scene = get_scene(name)
    assert scene.n_triangles > 0 and scene.draws
    assert scene.camera.far / scene.camera.near <= 1000
    lo, hi = world_bounds(scene.draws)
    assert np.isfinite(lo).all() and np.isfinite(hi).all()


def test_city_is_boxes_facing_out():
    """The city: 1,024 buildings of 10 triangles (4 sides and a roof) and the ground's 2, each
    triangle wound counter-clockwise seen from outside, its vertex normals its face's."""
    scene = get_scene("city")
    assert scene.n_triangles == 32 * 32 * 10 + 2
    for d in scene.draws[1:]:
        p = d.mesh.positions[d.mesh.indices].astype(np.float64)          # (m, 3 corners, 3)
        face = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
        face /= np.linalg.norm(face, axis=1, keepdims=True)
        assert np.allclose(face, d.mesh.normals[d.mesh.indices[:, 0]], atol=1e-6)
        assert (p[..., 1].min() >= 0.0) and (p[..., 1].max() <= 60.0)    # on the ground, <= 60 m


def test_registry_lists_every_scene():
    assert set(scene_names()) == {"triangle", "quad", "overdraw", "spheres", "city", "sponza", "dragon", "bunny",
                                  "teapot", "spot", "foliage", "deferred", "deferred-tiled", "postchain",
                                  "particles", "pul1duel", "islandctf", "suspended"}
    assert all(e.description and "\n" not in e.description for e in SCENES.values())


def test_unknown_scene_names_the_choices():
    with pytest.raises(SceneError, match=r"unknown scene 'nope' \(try: triangle, quad, overdraw") as e:
        get_scene("nope")
    assert "\n" not in str(e.value)


def test_scenes_are_cached_and_defaults_canonical():
    assert get_scene("dragon") is get_scene("dragon")
    assert get_scene("overdraw") is get_scene("overdraw:8:btf") is get_scene("overdraw::btf")
    assert get_scene("overdraw").name == "overdraw"
    assert get_scene("overdraw:4:ftb").name == "overdraw:4:ftb"


def test_spheres_instances_one_mesh():
    scene = get_scene("spheres")
    assert 200_000 <= scene.n_triangles <= 500_000
    assert len({id(d.mesh) for d in scene.draws}) == 1
    assert len({id(d.material) for d in scene.draws}) >= 4


def layer_depths(scene):
    return [float(d.world_from_object[2, 3]) for d in scene.draws]


def test_overdraw_layers_and_orders():
    btf = get_scene("overdraw")
    assert len(btf.draws) == 8
    assert layer_depths(btf) == sorted(layer_depths(btf))              # most negative z (farthest) first
    ftb = get_scene("overdraw:32:ftb")
    assert len(ftb.draws) == 32 and len(set(layer_depths(ftb))) == 32
    assert layer_depths(ftb) == sorted(layer_depths(ftb), reverse=True)
    shuffled = get_scene("overdraw:16:shuffled")
    z = layer_depths(shuffled)
    assert sorted(z) == sorted(layer_depths(get_scene("overdraw:16:btf")))
    assert z not in (sorted(z), sorted(z, reverse=True))
    assert len({d.material.base_color for d in shuffled.draws}) == 16
    assert get_scene("overdraw::ftb").draws[0].world_from_object[2, 3] == -1.0


@pytest.mark.parametrize("spec", ["overdraw:0", "overdraw:x", "overdraw:1025", "overdraw:8:sideways",
                                  "overdraw:8:btf:more", "triangle:3"])
def test_bad_scene_parameters_raise(spec):
    with pytest.raises(SceneError) as e:
        get_scene(spec)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("name", ["quad", "overdraw:8:ftb"])
@pytest.mark.parametrize("width,height", [(1920, 1080), (64, 64), (400, 100), (100, 400)])
def test_fullscreen_layers_cover_the_viewport_at_constant_depth(name, width, height):
    scene = get_scene(name)
    for d in scene.draws:
        p = ndc(scene, world_positions(d), width, height)
        assert p[:, 0].min() < -1 and p[:, 0].max() > 1 and p[:, 1].min() < -1 and p[:, 1].max() > 1
        assert np.ptp(p[:, 2]) < 1e-12 and -1 < p[0, 2] < 1          # in front of the far plane
        assert d.material.alpha_mode == AlphaMode.OPAQUE and d.state.cull == CullMode.BACK
        a, b, c = (p[d.mesh.indices[:, k], :2] for k in range(3))   # counter-clockwise = facing the camera
        assert (((b - a)[:, 0] * (c - a)[:, 1] - (b - a)[:, 1] * (c - a)[:, 0]) > 0).all()


def test_triangle_sits_in_the_middle_of_the_screen():
    scene = get_scene("triangle")
    p = ndc(scene, world_positions(scene.draws[0]), 1280, 720)
    assert np.abs(p[:, :2]).max() < 1 and 0.4 < np.ptp(p[:, 1]) / 2 < 0.9


def test_foliage_is_alpha_tested_and_particles_blend_back_to_front():
    foliage = get_scene("foliage")
    leaves = [d for d in foliage.draws if d.material.alpha_mode == AlphaMode.MASK]
    assert sum(d.mesh.n_triangles for d in leaves) >= 2000
    assert all(d.material.double_sided and d.material.texture is not None for d in leaves)

    scene = get_scene("particles")
    blended = [d for d in scene.draws if d.material.alpha_mode == AlphaMode.BLEND]
    assert 200 <= sum(d.mesh.n_triangles for d in blended) // 2 <= 1000
    first_blend = scene.draws.index(blended[0])
    assert all(d.material.alpha_mode == AlphaMode.OPAQUE for d in scene.draws[:first_blend])
    assert all(not d.state.depth_write and d.state.blend for d in blended)
    forward = np.subtract(scene.camera.target, scene.camera.eye)
    forward /= np.linalg.norm(forward)
    for d in blended:  # each emitter's quads are submitted far to near
        depth = (world_positions(d).reshape(-1, 4, 3).mean(1) - scene.camera.eye) @ forward
        assert (np.diff(depth) <= 1e-9).all()


def test_model_scenes_keep_the_file_geometry():
    assert get_scene("sponza").n_triangles == 187_364
    assert get_scene("sponza").draws[0].material.double_sided
    assert get_scene("dragon").n_triangles == 202_520
    assert get_scene("bunny").n_triangles == 69_451
    assert get_scene("teapot").n_triangles == 6_320
    spot = get_scene("spot")
    assert spot.n_triangles == 5_856 and spot.draws[0].material.texture.rgba.shape[2] == 4


# --- procedural ---------------------------------------------------------------------------------

def test_uv_sphere_is_closed_outward_and_counter_clockwise():
    m = uv_sphere(12, 24)
    assert m.n_triangles == 2 * 24 * 11
    tri = m.positions[m.indices].astype(np.float64)
    n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    assert (np.einsum("ij,ij->i", n, tri.mean(1)) > 0).all()       # outward, no degenerate triangles
    assert np.allclose(np.linalg.norm(m.normals, axis=1), 1, atol=1e-6)
    assert m.uvs.min() >= 0 and m.uvs.max() <= 1
    assert m.uvs[np.argmax(m.positions[:, 1]), 1] == 0                # v = 0 at the north pole


def test_quad_faces_plus_z_with_upright_uvs():
    m = quad(2, 1)
    tri = m.positions[m.indices]
    assert (np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])[:, 2] > 0).all()
    top_left = np.argmin(m.positions[:, 0] - m.positions[:, 1])
    assert tuple(m.uvs[top_left]) == (0, 0)


def test_textures_are_deterministic_masks():
    a, b = leaf_mask_texture(64), leaf_mask_texture(64)
    assert np.array_equal(a.rgba, b.rgba) and a.rgba.shape == (64, 64, 4)
    alpha = a.rgba[..., 3]
    assert alpha[0, 0] == 0 and alpha[32, 32] == 255 and 0.2 < (alpha >= 128).mean() < 0.6
    g = a.rgba[alpha == 255][:, :3].astype(int)
    assert (g[:, 1] > g[:, 0]).mean() > 0.95 and (g[:, 1] > g[:, 2]).mean() > 0.95   # green
    p = particle_texture(32).rgba[..., 3].astype(int)
    assert p[16, 16] > 240 and p[0, 0] == 0 and p[16, 16] > p[16, 24] > p[16, 30]


def test_frame_bounds_sees_the_whole_box():
    lo, hi = np.array([-1.0, 2.0, -3.0]), np.array([4.0, 3.0, 0.5])
    cam = frame_bounds(lo, hi)
    corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
    p = np.c_[corners, np.ones(8)] @ clip_from_world(cam, 100, 100).T
    assert (np.abs(p[:, :3]) < p[:, 3:]).all()                        # inside the frustum, near to far
    assert cam.far / cam.near < 10
    with pytest.raises(SceneError):
        frame_bounds(lo, lo)


# --- loaders: formats ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sponza():
    return load_mesh_file(asset("sponza_lod4.glb"))


@pytest.fixture(scope="module")
def dragon():
    return load_mesh_file(asset("dragon_res2.ply"))


def test_load_glb(sponza):
    assert sponza.n_triangles == 187_364 and len(sponza.draws) == 1
    m = sponza.draws[0].mesh
    assert m.normals is None and m.uvs is None and m.positions.dtype == np.float32
    assert sponza.camera.far / sponza.camera.near < 10                # framed automatically


def test_load_binary_ply(dragon):
    assert dragon.n_triangles == 202_520 and len(dragon.draws[0].mesh.positions) == 100_250


def test_load_obj_with_mtl_texture_and_normals(tmp_path):
    rgba = np.zeros((2, 4, 4), np.uint8)
    rgba[0] = [255, 0, 0, 255]                                        # top row red
    rgba[1] = [0, 0, 255, 255]
    Image.fromarray(rgba).save(tmp_path / "t.png")
    (tmp_path / "m.mtl").write_text("newmtl painted\nKd 0.5 0.25 1\nmap_Kd t.png\n\nnewmtl glass\nKd 0 1 0\nd 0.5\n")
    (tmp_path / "m.obj").write_text(
        "mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\n"
        "vn 0 0 1\nusemtl painted\nf 1/1/1 2/2/1 3/3/1 4/4/1\nusemtl glass\nf 1/1/1 3/3/1 4/4/1\n")
    scene = load_mesh_file(tmp_path / "m.obj")
    assert scene.n_triangles == 3
    by_name = {d.material.name: d for d in scene.draws}
    painted, glass = by_name["painted"], by_name["glass"]
    assert painted.material.base_color == pytest.approx((0.5, 0.25, 1.0, 1.0))
    assert np.array_equal(painted.material.texture.rgba, rgba)
    assert glass.material.alpha_mode == AlphaMode.BLEND and glass.material.base_color[3] == 0.5
    m = painted.mesh
    assert np.allclose(m.normals, [0, 0, 1])
    top = m.positions[:, 1] == 1                                      # OBJ v = 1 at the top → model v = 0
    assert np.allclose(m.uvs[top, 1], 0) and np.allclose(m.uvs[~top, 1], 1)


def glb(positions, indices, *, material=None, uvs=None, nodes=None, roots=None, cameras=None, mode=None):
    """A minimal GLB: one mesh of one primitive, optional material with an embedded 2x2 PNG."""
    views, accessors, blobs = [], [], []

    def accessor(arr, kind, component):
        views.append({"buffer": 0, "byteOffset": sum(map(len, blobs)), "byteLength": arr.nbytes})
        blobs.append(arr.tobytes() + b"\0" * (-arr.nbytes % 4))
        accessors.append({"bufferView": len(views) - 1, "componentType": component, "count": len(arr),
                          "type": kind, **({"min": arr.min(0).tolist(), "max": arr.max(0).tolist()}
                                           if kind == "VEC3" else {})})
        return len(accessors) - 1

    prim = {"attributes": {"POSITION": accessor(np.asarray(positions, np.float32), "VEC3", 5126)},
            "indices": accessor(np.asarray(indices, np.uint32).ravel(), "SCALAR", 5125)}
    if uvs is not None:
        prim["attributes"]["TEXCOORD_0"] = accessor(np.asarray(uvs, np.float32), "VEC2", 5126)
    if mode is not None:
        prim["mode"] = mode
    doc = {"asset": {"version": "2.0"}, "meshes": [{"name": "m", "primitives": [prim]}],
           "nodes": nodes or [{"mesh": 0}], "scene": 0}
    doc["scenes"] = [{"nodes": roots if roots is not None else list(range(len(doc["nodes"])))}]
    if material is not None:
        png = io.BytesIO()
        Image.fromarray(np.array([[[255, 0, 0, 255], [0, 255, 0, 255]],
                                  [[0, 0, 255, 255], [255, 255, 255, 0]]], np.uint8)).save(png, "PNG")
        raw = np.frombuffer(png.getvalue(), np.uint8)
        views.append({"buffer": 0, "byteOffset": sum(map(len, blobs)), "byteLength": raw.nbytes})
        blobs.append(raw.tobytes() + b"\0" * (-raw.nbytes % 4))
        doc.update(images=[{"bufferView": len(views) - 1, "mimeType": "image/png"}], textures=[{"source": 0}],
                   materials=[material])
        prim["material"] = 0
    if cameras:
        doc["cameras"] = cameras
    binary = b"".join(blobs)
    doc.update(buffers=[{"byteLength": len(binary)}], bufferViews=views, accessors=accessors)
    text = json.dumps(doc).encode()
    text += b" " * (-len(text) % 4)
    return (struct.pack("<4sII", b"glTF", 2, 28 + len(text) + len(binary))
            + struct.pack("<II", len(text), 0x4E4F534A) + text + struct.pack("<II", len(binary), 0x004E4942) + binary)


TRI = [[0, 0, 0], [1, 0, 0], [0, 1, 0]]


def test_load_gltf_material_nodes_and_camera(tmp_path):
    material = {"name": "leafy", "alphaMode": "MASK", "alphaCutoff": 0.3, "doubleSided": True,
                "pbrMetallicRoughness": {"baseColorFactor": [0.3, 0.6, 0.9, 0.7], "baseColorTexture": {"index": 0}},
                "extensions": {"KHR_materials_unlit": {}}}
    nodes = [{"mesh": 0, "translation": [1, 2, 3]},
             {"mesh": 0, "scale": [-1, 1, 1]},                                 # mirrored
             {"children": [3], "translation": [0, 10, 0]}, {"mesh": 0, "scale": [2, 2, 2]},
             {"camera": 0, "translation": [0, 0, 5], "rotation": [0.3826834, 0, 0, 0.9238795]}]
    cameras = [{"type": "perspective", "perspective": {"yfov": 0.8, "znear": 0.5, "zfar": 50}}]
    (tmp_path / "s.glb").write_bytes(glb(TRI, [[0, 1, 2]], material=material, uvs=[[0, 0], [1, 0], [0, 1]],
                                         nodes=nodes, roots=[0, 1, 2, 4], cameras=cameras))
    scene = load_mesh_file(tmp_path / "s.glb")
    assert len(scene.draws) == 3
    mat = scene.draws[0].material
    assert all(d.material is mat for d in scene.draws)
    assert mat.base_color == (0.3, 0.6, 0.9, 0.7)                     # exact, not rounded to 8 bits
    assert (mat.alpha_mode, mat.alpha_cutoff, mat.double_sided, mat.unlit) == (AlphaMode.MASK, 0.3, True, True)
    assert mat.texture.rgba[0, 0].tolist() == [255, 0, 0, 255] and mat.texture.rgba[1, 1, 3] == 0
    assert np.allclose(scene.draws[0].mesh.uvs, [[0, 0], [1, 0], [0, 1]])   # glTF UVs unchanged
    by_offset = {tuple(d.world_from_object[:3, 3]): d for d in scene.draws}
    assert set(by_offset) == {(1, 2, 3), (0, 0, 0), (0, 10, 0)}
    assert by_offset[(0, 10, 0)].world_from_object[0, 0] == 2
    mirrored = by_offset[(0, 0, 0)]
    assert mirrored.mesh.indices.tolist() == [[2, 1, 0]]              # winding flipped back to CCW
    cam = scene.camera
    assert cam.eye == (0, 0, 5) and (cam.near, cam.far) == (0.5, 50)
    assert np.degrees(0.8) == pytest.approx(cam.fovy_deg)
    assert np.allclose(np.subtract(cam.target, cam.eye), [0, np.sqrt(0.5), -np.sqrt(0.5)], atol=1e-6)


# --- loaders: failures --------------------------------------------------------------------------

def refused(path, match):
    with pytest.raises(SceneError, match=match) as e:
        load_mesh_file(path)
    msg = str(e.value)
    assert "\n" not in msg and Path(path).name in msg
    return msg


def test_missing_file_and_unknown_format(tmp_path):
    refused(tmp_path / "nothing.glb", "no such file")
    (tmp_path / "model.stl").write_bytes(b"solid x\nendsolid x\n")
    refused(tmp_path / "model.stl", "unknown mesh format '.stl'")


@pytest.mark.parametrize("name", ["empty.obj", "empty.ply", "empty.glb"])
def test_empty_file(tmp_path, name):
    (tmp_path / name).write_bytes(b"")
    refused(tmp_path / name, "empty file")


def test_truncated_binary_ply(tmp_path):
    data = asset("dragon_res2.ply").read_bytes()
    for cut in (len(data) // 2, len(data) - 5, 400):
        (tmp_path / "dragon.ply").write_bytes(data[:cut])
        refused(tmp_path / "dragon.ply", "PLY")


def test_truncated_ascii_ply(tmp_path):
    header = "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\n" \
             "element face 2\nproperty list uchar int vertex_indices\nend_header\n"
    body = "0 0 0\n1 0 0\n1 1 0\n0 1 0\n3 0 1 2\n3 0 2 3\n"
    (tmp_path / "q.ply").write_text(header + body)
    assert load_mesh_file(tmp_path / "q.ply").n_triangles == 2
    (tmp_path / "q.ply").write_text(header + body[:-8])
    refused(tmp_path / "q.ply", "truncated")


def test_ply_point_cloud(tmp_path):
    (tmp_path / "points.ply").write_text("ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\n"
                                         "property float y\nproperty float z\nend_header\n0 0 0\n1 0 0\n0 1 0\n")
    refused(tmp_path / "points.ply", "no triangles")


def test_ply_index_out_of_range(tmp_path):
    (tmp_path / "bad.ply").write_text("ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
                                      "property float z\nelement face 1\nproperty list uchar int vertex_indices\n"
                                      "end_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 5\n")
    refused(tmp_path / "bad.ply", "out of range")


def test_truncated_glb(tmp_path, sponza):
    data = asset("sponza_lod4.glb").read_bytes()
    for cut in (len(data) // 2, len(data) - 1, 60):
        (tmp_path / "sponza.glb").write_bytes(data[:cut])
        refused(tmp_path / "sponza.glb", "truncated|malformed")


def test_malformed_glb(tmp_path):
    (tmp_path / "junk.glb").write_bytes(b"not a glb file at all, just text")
    refused(tmp_path / "junk.glb", "not a GLB")
    (tmp_path / "nan.glb").write_bytes(glb([[0, 0, 0], [np.nan, 0, 0], [0, 1, 0]], [[0, 1, 2]]))
    refused(tmp_path / "nan.glb", "NaN")
    (tmp_path / "oor.glb").write_bytes(glb(TRI, [[0, 1, 7]]))
    refused(tmp_path / "oor.glb", "out of range")
    (tmp_path / "points.glb").write_bytes(glb(TRI, [[0, 1, 2]], mode=0))
    refused(tmp_path / "points.glb", "no triangles")


@pytest.mark.parametrize("text,match", [
    ("v 0 0 0\nv nan 0 0\nv 0 1 0\nf 1 2 3\n", "NaN"),
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nv inf 5 5\nf 1 2 3\n", "NaN or infinite"),       # unreferenced, still bad
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 2 9\n", "out of range"),
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1/1 2/2 3/3\nf 1/1 2/2 4/3\nvt 0 0\nvt 1 0\nvt 0 1\n", "out of range"),
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n", "out of range"),                     # OBJ counts from 1
    ("v 0 0 0\nv 1 0 0\nv 0 1 0\nf -1 -2 -4\n", "out of range"),
    ("v 0 0 0\nv 1 x 0\nv 0 1 0\nf 1 2 3\n", "malformed vertex"),
    ("v 0 0 0\nv 1 0 0\nl 1 2\n", "no triangles"),
    ("this is not\nan obj file\n", "no triangles"),
    ("mtllib missing.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n", "missing.mtl"),
])
def test_bad_obj(tmp_path, text, match):
    (tmp_path / "bad.obj").write_text(text)
    refused(tmp_path / "bad.obj", match)


def test_obj_missing_texture(tmp_path):
    (tmp_path / "m.mtl").write_text("newmtl a\nmap_Kd gone.png\n")
    (tmp_path / "m.obj").write_text("mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl a\nf 1 2 3\n")
    with pytest.raises(SceneError, match="gone.png"):
        load_mesh_file(tmp_path / "m.obj")


def test_obj_assets_load(tmp_path):
    bunny = load_mesh_file(asset("bunny.obj"))
    assert bunny.n_triangles == 69_451 and bunny.draws[0].mesh.normals is None
    # a copy elsewhere loads the same (no dependence on the package path)
    shutil.copy(asset("teapot.obj"), tmp_path / "teapot.obj")
    assert load_mesh_file(tmp_path / "teapot.obj").n_triangles == 6_320


def test_gltf_with_missing_or_short_buffer(tmp_path):
    data = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32).tobytes() + np.arange(3, dtype=np.uint32).tobytes()
    doc = {"asset": {"version": "2.0"}, "buffers": [{"uri": "x.bin", "byteLength": len(data)}],
           "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 36},
                           {"buffer": 0, "byteOffset": 36, "byteLength": 12}],
           "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                          "min": [0, 0, 0], "max": [1, 1, 0]},
                         {"bufferView": 1, "componentType": 5125, "count": 3, "type": "SCALAR"}],
           "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
           "nodes": [{"mesh": 0}], "scenes": [{"nodes": [0]}], "scene": 0}
    (tmp_path / "x.gltf").write_text(json.dumps(doc))
    refused(tmp_path / "x.gltf", "'x.bin' not found")
    (tmp_path / "x.bin").write_bytes(data[:30])
    refused(tmp_path / "x.gltf", "truncated")
    (tmp_path / "x.bin").write_bytes(data)
    assert load_mesh_file(tmp_path / "x.gltf").n_triangles == 1


def test_textured_material_without_uvs(tmp_path):
    Image.fromarray(np.full((2, 2, 4), 255, np.uint8)).save(tmp_path / "t.png")
    (tmp_path / "m.mtl").write_text("newmtl a\nmap_Kd t.png\n")
    (tmp_path / "m.obj").write_text("mtllib m.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nusemtl a\nf 1 2 3\n")
    refused(tmp_path / "m.obj", "no UVs")


_MESH_DIGEST = """
import hashlib, sys
from importlib import resources
from scenes.loaders import load_mesh_file
with resources.as_file(resources.files("assets") / sys.argv[1]) as path:
    draws = load_mesh_file(path).draws
h = hashlib.blake2b(digest_size=8)
for d in draws:
    for a in (d.mesh.positions, d.mesh.indices, d.mesh.uvs, d.mesh.normals):
        h.update(b"-" if a is None else a.tobytes())
print(h.hexdigest())
"""


@pytest.mark.parametrize("model", ["spot.obj", "teapot.obj"])
def test_obj_loads_the_same_on_every_cpu(model):
    """trimesh makes the vertices of an OBJ whose faces pair v with vt through a numpy sort
    whose ties fall differently with AVX-512 and without; the loader orders them by first use,
    so a model is the same mesh, vertex for vertex, on any CPU. Where this CPU has AVX-512, a
    second interpreter runs with numpy's AVX-512 kernels off (NPY_DISABLE_CPU_FEATURES)."""
    import subprocess
    import sys

    from numpy._core._multiarray_umath import __cpu_features__ as features

    from tests.cli_process import child_env
    env = child_env()
    avx512 = " ".join(f for f, on in features.items() if on and ("AVX512" in f or f == "X86_V4"))
    if not avx512:
        pytest.skip("no AVX-512 on this CPU: nothing to compare")
    got = [subprocess.run([sys.executable, "-c", _MESH_DIGEST, model], env=dict(env, **extra),
                          capture_output=True, text=True, check=True).stdout.strip()
           for extra in ({}, {"NPY_DISABLE_CPU_FEATURES": avx512})]
    assert got[0] == got[1], f"{model} loads as another mesh without AVX-512: {got}"
