"""The built-in scenes: one registry that the CLI, the viewer, the report and the tests all use.

Consumes the procedural meshes (scenes.procedural) and the real models in the `assets` package;
produces `Scene` objects by name. A name may carry parameters after colons, `name[:p1[:p2]]`
(e.g. `overdraw:32:ftb`). Built scenes are cached: treat what `get_scene` returns as read-only.

    from scenes.library import get_scene, scene_names
    scene = get_scene("overdraw:16:shuffled")

Cameras keep far / near at most a few hundred so that window depth keeps its precision (the OpenGL
oracle compares depth to 1e-5).
"""
from __future__ import annotations

import colorsys
import dataclasses
import functools
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Callable

import numpy as np
from PIL import Image

from renderer.transforms import look_at

from .asset_cache import cached_scene
from .framing import frame_bounds, world_bounds
from .loaders import load_mesh_file
from renderer.formats import FORMATS

from .model import (AlphaMode, Attachment, Camera, ComputePass, Draw, Light, LoadAction, Material, Mesh,
                    RenderPass, Scene, SceneError, StoreAction, Texture)
from .procedural import boxes, leaf_mask_texture, particle_texture, quad, uv_sphere

# A plane at distance d in front of a camera with fovy 60 spans ±d·tan 30° = ±0.577·d vertically and
# ±0.577·d·aspect horizontally; a square of side 6·d (±3·d) covers every aspect ratio up to 5.2:1.
FULLSCREEN_SIDE = 6.0


@dataclass(frozen=True)
class Param:
    name: str
    default: object
    parse: Callable[[str], object]  # text after the colon → value; raises SceneError
    help: str


@dataclass(frozen=True)
class SceneEntry:
    name: str
    description: str                # one line
    build: Callable[..., Scene]     # build(*param values) → Scene
    params: tuple[Param, ...] = ()

    @property
    def usage(self) -> str:
        return self.name + "".join(f"[:{p.name}" for p in self.params) + "]" * len(self.params)


def get_scene(spec: str) -> Scene:
    """The scene named by `spec` (`name` or `name:param:...`), built once and cached."""
    name, *args = spec.split(":")
    entry = SCENES.get(name)
    if entry is None:
        raise SceneError(f"unknown scene {name!r} (try: {', '.join(scene_names())})")
    if len(args) > len(entry.params):
        raise SceneError(f"scene {spec!r}: too many parameters (usage: {entry.usage})")
    values = tuple(p.parse(a) if a != "" else p.default
                   for p, a in zip(entry.params, args + [""] * (len(entry.params) - len(args))))
    return _build(name, values)


def scene_names() -> list[str]:
    return list(SCENES)


@functools.lru_cache(maxsize=64)
def _build(name: str, values: tuple) -> Scene:
    entry = SCENES[name]
    scene = entry.build(*values)
    if values != tuple(p.default for p in entry.params):
        scene.name = ":".join([name, *map(str, values)])
    return scene


# --- helpers ------------------------------------------------------------------------------------

def _transform(translate=(0.0, 0.0, 0.0), scale=1.0, rotate: np.ndarray | None = None) -> np.ndarray:
    """world_from_object = T · R · S."""
    m = np.eye(4)
    m[:3, :3] = (np.eye(3) if rotate is None else rotate) * scale
    m[:3, 3] = translate
    return m


def _rot_x(deg: float) -> np.ndarray:
    c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _rot_y(deg: float) -> np.ndarray:
    c, s = np.cos(np.radians(deg)), np.sin(np.radians(deg))
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rotated(scene: Scene, deg_y: float = 30.0, deg_x: float = 20.0) -> Scene:
    """The scene turned about y, then x, camera and light with it: the same picture of geometry
    that is no longer axis-aligned (what oriented bounding boxes are for)."""
    r = np.eye(4)
    r[:3, :3] = _rot_x(deg_x) @ _rot_y(deg_y)
    turn = lambda v: tuple(float(x) for x in r[:3, :3] @ np.asarray(v, np.float64))  # noqa: E731
    cam = scene.camera
    return dataclasses.replace(
        scene, name=f"{scene.name}-rotated",
        draws=[dataclasses.replace(d, world_from_object=r @ d.world_from_object) for d in scene.draws],
        camera=dataclasses.replace(cam, eye=turn(cam.eye), target=turn(cam.target), up=turn(cam.up)),
        light=dataclasses.replace(scene.light, direction=turn(scene.light.direction)))


def _hue(h: float, s: float = 0.65, v: float = 0.95) -> tuple[float, float, float, float]:
    return (*colorsys.hsv_to_rgb(h % 1.0, s, v), 1.0)


def _asset_scene(file: str) -> Scene:
    """A model file of assets/, loaded once and then read from the disk cache (asset_cache)."""
    with resources.as_file(resources.files("assets") / file) as path:
        return cached_scene(Path(path), load_mesh_file)


def _asset_texture(file: str) -> Texture:
    with (resources.files("assets") / file).open("rb") as f:
        return Texture(file, np.asarray(Image.open(f).convert("RGBA"), np.uint8).copy())


def _model(file: str, name: str, description: str, material: Material, camera: Camera | None = None,
           direction=None) -> Scene:
    """A model from assets/ with every draw given `material`, seen by `camera`, or else framed from
    `direction` (towards the eye), or else as the loader framed it."""
    loaded = _asset_scene(file)
    draws = [Draw(d.mesh, material, d.world_from_object) for d in loaded.draws]
    if camera is None and direction is not None:
        camera = frame_bounds(*world_bounds(draws), direction=direction)
    return Scene(name, description, draws, camera or loaded.camera)


# --- analytic scenes ----------------------------------------------------------------------------

def triangle() -> Scene:
    mesh = Mesh("triangle", np.array([[-1, -1, 0], [1, -1, 0], [0, 1, 0]], np.float32),
                np.array([[0, 1, 2]], np.uint32), normals=np.tile(np.float32([0, 0, 1]), (3, 1)),
                uvs=np.array([[0, 1], [1, 1], [0.5, 0]], np.float32))
    # at distance 3 the view spans y ±1.73: the triangle fills the middle 58 % of the height
    return Scene("triangle", SCENES["triangle"].description,
                 [Draw(mesh, Material("orange", (1.0, 0.45, 0.1, 1.0), unlit=True))],
                 Camera(eye=(0.0, 0.0, 3.0), target=(0.0, 0.0, 0.0), near=1.0, far=10.0))


def fullscreen_quad() -> Scene:
    # the quad is perpendicular to the view axis, so every sample has the same depth
    draw = Draw(quad(FULLSCREEN_SIDE, FULLSCREEN_SIDE, "fullscreen"),
                Material("teal", (0.1, 0.6, 0.65, 1.0), unlit=True), _transform((0, 0, -1)))
    return Scene("quad", SCENES["quad"].description, [draw],
                 Camera(eye=(0.0, 0.0, 0.0), target=(0.0, 0.0, -1.0), near=0.5, far=2.0))


def _layers(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if not 1 <= n <= 1024:
        raise SceneError(f"overdraw: layers must be an integer from 1 to 1024, got {text!r}")
    return n


def _order(text: str) -> str:
    if text not in OVERDRAW_ORDERS:
        raise SceneError(f"overdraw: order must be one of {', '.join(OVERDRAW_ORDERS)}, got {text!r}")
    return text


OVERDRAW_ORDERS = ("btf", "ftb", "shuffled")  # back to front, front to back, fixed random permutation


def overdraw(layers: int = 8, order: str = "btf") -> Scene:
    """`layers` opaque full-screen quads, layer k (0 nearest) at z = -(1 + k/layers), each its own
    colour, submitted in `order`: every pixel is covered `layers` times and layer 0 is visible."""
    mesh = quad(FULLSCREEN_SIDE, FULLSCREEN_SIDE, "fullscreen")
    z = -(1.0 + np.arange(layers) / layers)
    ks = {"btf": np.arange(layers)[::-1], "ftb": np.arange(layers),
          "shuffled": np.random.default_rng(1234).permutation(layers)}[order]
    draws = [Draw(mesh, Material(f"layer{k}", _hue(k / layers), unlit=True),
                  _transform((0, 0, z[k]), scale=-z[k]))  # scaled with distance: same screen extent
             for k in ks]
    return Scene("overdraw", f"{layers} opaque full-screen layers, {order}", draws,
                 Camera(eye=(0.0, 0.0, 0.0), target=(0.0, 0.0, -1.0), near=0.5, far=4.0))


# --- content scenes -----------------------------------------------------------------------------

def spheres() -> Scene:
    """200 instances of one 1520-triangle sphere (304,000 triangles) filling a frustum, 6 colours."""
    mesh = uv_sphere(20, 40, "sphere")
    palette = [Material(f"sphere{i}", _hue(i / 6, 0.55, 0.9)) for i in range(6)]
    rng = np.random.default_rng(7)
    n = 200
    depth = rng.uniform(8.0, 34.0, n)
    radius = rng.uniform(0.6, 1.6, n)
    half_h = depth * np.tan(np.radians(30)) * 0.85   # keep centres inside a 16:9 view
    x = rng.uniform(-1.0, 1.0, n) * half_h * 16 / 9
    y = rng.uniform(-1.0, 1.0, n) * half_h
    draws = [Draw(mesh, palette[i % 6], _transform((x[i], y[i], -depth[i]), radius[i])) for i in range(n)]
    return Scene("spheres", SCENES["spheres"].description, draws,
                 Camera(eye=(0.0, 0.0, 0.0), target=(0.0, 0.0, -1.0), near=4.0, far=40.0))


CITY_BLOCKS = 32          # a 32 x 32 grid of buildings: 10,240 triangles, and the ground's 2
CITY_PITCH = 12.0         # m from one building's centre to the next (street and building)


def city() -> Scene:
    """A procedural city of boxes: few, large triangles (the fill-bound frame: bench/benchmark.py).
    Buildings of 6-9.5 m footprint and 4-60 m height on a 12 m grid, baked into one mesh per
    facade colour (6 draws, as a game batches static geometry), on a ground plane, seen from
    above a street at the city's edge: the blocks near the camera fill most of the screen and
    those behind them are drawn over again (overdraw 2.5 at 1280x720)."""
    rng = np.random.default_rng(11)
    n = CITY_BLOCKS * CITY_BLOCKS
    i, j = np.divmod(np.arange(n), CITY_BLOCKS)
    centre = np.stack([i * CITY_PITCH, np.zeros(n), j * CITY_PITCH], axis=1)
    half = rng.uniform(3.0, 4.75, (n, 2))
    height = np.clip(rng.lognormal(np.log(14.0), 0.6, n), 4.0, 60.0)
    lo = centre - np.stack([half[:, 0], np.zeros(n), half[:, 1]], axis=1)
    hi = centre + np.stack([half[:, 0], height, half[:, 1]], axis=1)
    colour = rng.integers(0, 6, n)
    draws = [Draw(boxes(lo[colour == k], hi[colour == k], f"buildings{k}"),
                  Material(f"facade{k}", _hue(0.08 + k / 6, 0.25, 0.85))) for k in range(6)]
    side = CITY_BLOCKS * CITY_PITCH + 40.0
    middle = (CITY_BLOCKS - 1) * CITY_PITCH / 2
    draws.insert(0, Draw(quad(side, side, "ground"), Material("asphalt", (0.28, 0.28, 0.3, 1.0)),
                         _transform((middle, 0.0, middle), rotate=_rot_x(-90))))
    # 22 m above a street, 11 m out of the city's sunny (+z) edge (the last row's facades reach
    # z = 377 m at most), looking down the street and a little across it into the middle
    street = middle + CITY_PITCH / 2
    camera = Camera(eye=(street, 22.0, side / 2 + middle - 10.0), target=(street - 30.0, 0.0, middle),
                    near=1.0, far=600.0)
    return Scene("city", SCENES["city"].description, draws, camera)


def sponza() -> Scene:
    # the decimated model's winding is mixed (about half of the floor faces down): no culling
    material = Material("stone", (0.72, 0.70, 0.66, 1.0), double_sided=True)
    # eye at standing height in the west gallery, looking east down the courtyard (the long axis
    # is X: court x ≈ -8..9, z ≈ -3..4; galleries to x ≈ ±11, z ≈ ±6; floor y ≈ 0)
    # the nearest surface is the floor 1.6 below the eye; the farthest corner of the model is 36 away
    camera = Camera(eye=(-10.0, 1.6, 0.0), target=(10.0, 3.0, 0.0), near=0.25, far=40.0)
    return _model("sponza_lod4.glb", "sponza", SCENES["sponza"].description, material, camera)


def _screen_quad(camera: Camera) -> Draw:
    """A full-screen quad for `camera`: a lighting pass's one draw (unlit, no depth)."""
    d = 2.0 * camera.near                       # inside the frustum; side 4d covers fovy <= 90
    view_from_object = _transform((0.0, 0.0, -d), 4.0 * d)
    world = np.linalg.inv(look_at(camera.eye, camera.target, camera.up)) @ view_from_object
    return Draw(quad(1.0, 1.0, "screen"),
                Material("lighting", (1.0, 1.0, 1.0, 1.0), unlit=True, double_sided=True), world)


def _deferred_passes(scene: Scene, samples: int) -> list[RenderPass]:
    """A G-buffer pass (four RGBA8 targets and depth, stored), then a full-screen lighting pass
    that reads them once per pixel and stores the final colour."""
    gbuffer = Attachment("gbuffer", "gbuffer", LoadAction.CLEAR, StoreAction.STORE, scene.background)
    depth = Attachment("depth", "d32f", LoadAction.CLEAR, StoreAction.STORE, (1.0,))
    final = Attachment("final", "rgba8", LoadAction.DONT_CARE, StoreAction.STORE, scene.background)
    return [RenderPass("gbuffer", gbuffer, depth, list(scene.draws), samples),
            RenderPass("lighting", final, None, [_screen_quad(scene.camera)], samples,
                       inputs=("gbuffer", "depth"), shows="gbuffer")]


def _tiled_deferred_passes(scene: Scene, samples: int) -> list[RenderPass]:
    """The same done the tiler's way: the G-buffer in the imageblock (16 B per pixel on chip),
    lit in the same pass; depth memoryless; only the final colour is stored."""
    final = Attachment("final", "rgba8", LoadAction.CLEAR, StoreAction.STORE, scene.background)
    depth = Attachment("depth", "d32f", LoadAction.CLEAR, StoreAction.DONT_CARE, (1.0,), memoryless=True)
    return [RenderPass("deferred", final, depth, list(scene.draws), samples,
                       imageblock_bytes=FORMATS["gbuffer"].bytes_per_sample)]


def deferred() -> Scene:
    return dataclasses.replace(spheres(), name="deferred", description=SCENES["deferred"].description,
                               passes=_deferred_passes)


def deferred_tiled() -> Scene:
    return dataclasses.replace(spheres(), name="deferred-tiled",
                               description=SCENES["deferred-tiled"].description,
                               passes=_tiled_deferred_passes)


# The post chain (pipelines.passes.postchain says how each pass is computed and priced): the G-buffer as
# its render pass wrote it, deferred light, SSAO, tone map, a separable 5-tap blur (a row pass in
# 64x1 workgroups, a column pass in 8x8) and a full-screen present that composites LDR and blur.
POST_CHAIN = (
    ComputePass("gbuffer", "gbuffer", (), {"albedo": "rgba8", "normal": "rgba16f", "depth": "d32f"},
                stage="ps"),
    ComputePass("light", "light", ("albedo", "normal", "depth"), {"hdr": "rgba16f"}),
    ComputePass("ssao", "ssao", ("depth", "normal"), {"ao": "rgba8"}),
    ComputePass("tonemap", "tonemap", ("hdr", "ao"), {"ldr": "rgba8"}),
    ComputePass("blur_x", "blur_x", ("ldr",), {"blur_tmp": "rgba8"}, workgroup=(64, 1)),
    ComputePass("blur_y", "blur_y", ("blur_tmp",), {"blur": "rgba8"}, workgroup=(8, 8)),
    ComputePass("present", "present", ("ldr", "blur"), {"final": "rgba8"}, stage="ps"),
)


def postchain() -> Scene:
    return dataclasses.replace(sponza(), name="postchain", description=SCENES["postchain"].description,
                               compute=POST_CHAIN)


def dragon() -> Scene:
    return _model("dragon_res2.ply", "dragon", SCENES["dragon"].description,
                  Material("jade", (0.30, 0.62, 0.45, 1.0)))


def bunny() -> Scene:
    return _model("bunny.obj", "bunny", SCENES["bunny"].description, Material("clay", (0.85, 0.76, 0.66, 1.0)))


def teapot() -> Scene:
    return _model("teapot.obj", "teapot", SCENES["teapot"].description,
                  Material("glaze", (0.72, 0.25, 0.18, 1.0)))


def spot() -> Scene:
    return _model("spot.obj", "spot", SCENES["spot"].description,
                  Material("spot", (1.0, 1.0, 1.0, 1.0), _asset_texture("spot_texture.png")),
                  direction=(0.8, 0.35, -1.0))  # Spot faces -Z: a three-quarter view of its head


def foliage() -> Scene:
    """A ground plane and 24 plants of 140 alpha-tested leaves each (3,360 quads)."""
    rng = np.random.default_rng(11)
    ground = Draw(quad(40.0, 40.0, "ground"), Material("soil", (0.36, 0.30, 0.22, 1.0)),
                  _transform(rotate=_rot_x(-90)))   # +Z normal turned to +Y
    leaf = leaf_mask_texture(128)
    tints = [Material(f"leaf{i}", c, leaf, AlphaMode.MASK, 0.5, double_sided=True)
             for i, c in enumerate([(1.0, 1.0, 1.0, 1.0), (0.85, 1.0, 0.7, 1.0), (1.0, 0.9, 0.6, 1.0)])]
    corners = np.array([[-0.5, -0.5, 0], [0.5, -0.5, 0], [0.5, 0.5, 0], [-0.5, 0.5, 0]])
    uv = np.array([[0, 1], [1, 1], [1, 0], [0, 0]], np.float32)
    draws = [ground]
    n_plants, n_leaves = 24, 140
    for p in range(n_plants):
        # a jittered 6 x 4 grid over x -6..6, z -9..3: rows overlap in depth from the camera
        centre = np.array([-5.0 + 2.0 * (p % 6) + rng.uniform(-0.7, 0.7), 0.0,
                           -7.5 + 3.0 * (p // 6) + rng.uniform(-1.0, 1.0)])
        height = rng.uniform(1.0, 2.2)
        yaw = rng.uniform(0, 360, n_leaves)
        pitch = rng.uniform(-60, 60, n_leaves)
        size = rng.uniform(0.3, 0.55, n_leaves)
        offset = rng.normal(0, 0.45, (n_leaves, 3)) * [1.0, 0.0, 1.0]
        offset[:, 1] = rng.uniform(0.15, height, n_leaves)
        rot = np.stack([_rot_y(a) @ _rot_x(b) for a, b in zip(yaw, pitch)])         # (n, 3, 3)
        local = corners[None] * np.stack([size * 0.7, size, size], -1)[:, None]   # leaves 0.7:1
        positions = np.einsum("nij,nkj->nki", rot, local) + (centre + offset)[:, None]
        normals = np.repeat(rot[:, :, 2][:, None], 4, axis=1)
        indices = (np.arange(n_leaves)[:, None, None] * 4 + np.array([[0, 1, 2], [0, 2, 3]])).reshape(-1, 3)
        mesh = Mesh(f"plant{p}", positions.reshape(-1, 3), indices, normals.reshape(-1, 3),
                    np.tile(uv, (n_leaves, 1)))
        draws.append(Draw(mesh, tints[p % len(tints)]))
    return Scene("foliage", SCENES["foliage"].description, draws,
                 Camera(eye=(0.0, 1.8, 7.5), target=(0.0, 0.8, -3.0), near=0.5, far=40.0))


# The files carry no lightmaps (the converter's README): a light from above and a strong ambient
# stand in for the levels' baked light, as the converter's previews do with N.L.
LEVEL_LIGHT = Light(direction=(0.3, 0.9, 0.35), color=(0.55, 0.55, 0.55), ambient=(0.5, 0.5, 0.5))


def _game_level(file: str, name: str) -> Scene:
    """An OpenArena level as its file has it: its draws (one per Q3 shader, opaque, then
    alpha-tested, then blended), its textures and samplers, seen from its player camera."""
    loaded = _asset_scene(file)
    # The file's camera, its near plane moved out to far / 1000 (0.1 m in the files, 0.18-0.8 m
    # here; the converter chose views with no wall nearer than 1.5 m): the float depth buffer
    # then resolves the far walls as the other built-in scenes' do.
    cam = loaded.camera
    camera = dataclasses.replace(cam, near=max(cam.near, cam.far / 1000))
    return dataclasses.replace(loaded, name=name, description=SCENES[name].description,
                               light=LEVEL_LIGHT, camera=camera)


def pul1duel() -> Scene:
    return _game_level("pul1duel-oa.glb", "pul1duel")


def islandctf() -> Scene:
    return _game_level("islandctf.glb", "islandctf")


def suspended() -> Scene:
    return _game_level("suspended.glb", "suspended")


def particles() -> Scene:
    """Opaque wall, floor and two spheres; then three emitters of soft blended billboards (1,000
    in all), each emitter one draw, emitters and particles within them sorted back to front."""
    camera = Camera(eye=(0.0, 1.5, 8.0), target=(0.0, 1.2, 0.0), near=0.5, far=40.0)
    view = look_at(camera.eye, camera.target, camera.up)
    right, up, back = view[0, :3], view[1, :3], view[2, :3]   # camera basis in world space
    sphere = uv_sphere(16, 32, "sphere")
    draws = [
        Draw(quad(30.0, 16.0, "wall"), Material("wall", (0.32, 0.36, 0.45, 1.0)), _transform((0, 6, -6))),
        Draw(quad(30.0, 20.0, "floor"), Material("floor", (0.45, 0.42, 0.38, 1.0)), _transform(rotate=_rot_x(-90))),
        Draw(sphere, Material("red", (0.75, 0.2, 0.15, 1.0)), _transform((-1.5, 0.8, -1.0), 0.8)),
        Draw(sphere, Material("blue", (0.2, 0.35, 0.8, 1.0)), _transform((1.8, 0.6, 0.5), 0.6)),
    ]
    rng = np.random.default_rng(3)
    texture = particle_texture(64)
    emitters = [  # name, colour (alpha = opacity), count, origin, spread (x, y, z), size range
        ("smoke", (0.55, 0.55, 0.58, 0.35), 500, (-1.5, 0.5, -1.0), (0.6, 3.0, 0.6), (0.5, 1.2)),
        ("fire", (1.0, 0.55, 0.15, 0.6), 300, (1.8, 0.3, 0.5), (0.4, 1.5, 0.4), (0.2, 0.6)),
        ("mist", (0.6, 0.75, 1.0, 0.25), 200, (0.0, 0.2, 2.0), (4.0, 0.3, 2.0), (0.6, 1.4)),
    ]
    batches = []
    for name, colour, n, origin, spread, (s0, s1) in emitters:
        centre = np.asarray(origin) + rng.normal(0, 1, (n, 3)) * np.asarray(spread) * [1, 0, 1]
        centre[:, 1] = origin[1] + rng.uniform(0, spread[1], n)
        size = rng.uniform(s0, s1, n)
        view_depth = (centre - np.asarray(camera.eye)) @ -back     # distance along the view axis
        order = np.argsort(-view_depth, kind="stable")             # far first
        centre, size = centre[order], size[order]
        c = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * 0.5
        positions = centre[:, None] + size[:, None, None] * (c[:, 0, None] * right + c[:, 1, None] * up)
        indices = (np.arange(n)[:, None, None] * 4 + np.array([[0, 1, 2], [0, 2, 3]])).reshape(-1, 3)
        mesh = Mesh(name, positions.reshape(-1, 3), indices, np.tile(back, (4 * n, 1)),
                    np.tile(np.array([[0, 1], [1, 1], [1, 0], [0, 0]], np.float32), (n, 1)))
        material = Material(name, colour, texture, AlphaMode.BLEND, double_sided=True, unlit=True)
        batches.append((float(view_depth.mean()), Draw(mesh, material)))
    draws += [d for _, d in sorted(batches, key=lambda b: -b[0])]
    return Scene("particles", SCENES["particles"].description, draws, camera)


SCENES: dict[str, SceneEntry] = {e.name: e for e in [
    SceneEntry("triangle", "one unlit triangle in the middle of the screen", triangle),
    SceneEntry("quad", "one unlit opaque quad covering the whole screen at constant depth", fullscreen_quad),
    SceneEntry("overdraw", "N opaque full-screen layers at distinct depths, in a chosen order", overdraw,
               (Param("layers", 8, _layers, "number of layers, 1..1024"),
                Param("order", "btf", _order, "btf (back to front), ftb or shuffled"))),
    SceneEntry("spheres", "304k triangles: 200 instanced spheres overlapping in depth, 6 materials", spheres),
    SceneEntry("city", "a procedural city of boxes: 1,024 buildings in 6 draws (10k large triangles) "
               "over a ground plane, seen from above a street", city),
    SceneEntry("sponza", "Sponza atrium (187k triangles, decimated), double-sided, looking down the court", sponza),
    SceneEntry("dragon", "Stanford dragon, 203k triangles", dragon),
    SceneEntry("bunny", "Stanford bunny, 69k triangles", bunny),
    SceneEntry("teapot", "Utah teapot, 6.3k triangles", teapot),
    SceneEntry("spot", "Keenan Crane's Spot cow with its texture, 5.9k triangles", spot),
    SceneEntry("foliage", "3,360 alpha-tested leaf quads (MASK) in 24 plants over a ground plane", foliage),
    SceneEntry("deferred", "spheres, deferred: a G-buffer pass (4 RGBA8 targets + depth, stored), "
               "then a full-screen lighting pass that reads them", deferred),
    SceneEntry("deferred-tiled", "spheres, deferred the tiler's way: G-buffer in the imageblock, lit "
               "in the same pass, only the final colour stored (an IMR has no imageblock: it pays "
               "forward shading's bytes)", deferred_tiled),
    SceneEntry("postchain", "sponza, then a G-buffer and compute passes (light, SSAO, tone map, "
               "separable blur, present): per-surface compression and its tax", postchain),
    SceneEntry("particles", "1,000 blended soft particles in 3 emitters over opaque objects, back to front", particles),
    SceneEntry("pul1duel", "OpenArena level 'Five Steps Ahead' (14k triangles, 73 draws: 62 opaque, 3 "
               "alpha-tested, 8 blended; 62 textures), from a player's spawn", pul1duel),
    SceneEntry("islandctf", "OpenArena level islandctf (14k triangles, 19 draws: 15 opaque, 1 alpha-tested "
               "palm, 3 blended; 14 textures), across the beach", islandctf),
    SceneEntry("suspended", "OpenArena level 'Suspended Satellite' (25k triangles, 14 draws: 11 opaque, 1 "
               "alpha-tested grate over large areas, 2 blended), from a player's spawn", suspended),
]}
