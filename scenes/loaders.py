"""Mesh files → Scene: glTF 2.0 (.glb, .gltf), Wavefront OBJ (+ MTL, map_Kd), PLY.

Consumes a path; produces a `Scene` with one Draw per geometry node (the node's world transform
applied through `Draw.world_from_object`; nodes that instance one geometry share one `Mesh`), the
file's materials reduced to `Material`, and the file's own glTF camera or else one framing
the model (scenes.framing.frame_bounds).

trimesh parses the formats. It also forgives what it should not (a truncated ASCII PLY loads its
first faces, OBJ face index 0 silently aliases another vertex, glTF images that fail to load vanish),
so each format is first checked against its raw data here and the counts trimesh returns are
compared with the counts the file declares. Every failure is one `SceneError` line naming the file.

A model file is untrusted input, so before trimesh sees it: every path it names must stay inside
its folder (scenes.folder; nothing outside is opened or even stat'ed), a glTF's JSON must match the
glTF 2.0 schema and its indices and byte ranges must fit (scenes.gltf_checks), every texture's
header must give a size a GPU accepts and decoding it must fit the caller's memory budget, and
every coordinate must stay where float32 arithmetic keeps it finite (MAX_COORD). Loading runs with
numpy's floating-point warnings off: every value that matters is checked for range afterwards, so
a hostile value ends in the one error line, never in warnings first.

    scene = load_mesh_file("assets/bunny.obj")
    camera = frame_bounds(*world_bounds(scene.draws), fovy=45)               # scenes.framing
    street = fit_depth(Camera.parse("0,1,5:0,0,0:0,1,0:60"), scene.draws)   # any eye, near/far fitted
"""
from __future__ import annotations

import base64
import binascii
import io
import math
import struct
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .folder import ModelFolder, trimesh_resolver
from .framing import MAX_COORD, floats, frame_bounds, world_bounds
from .gltf_checks import element_bytes, parse_gltf_json
from .model import AlphaMode, Camera, Draw, Material, MipFilter, Mesh, Scene, SceneError, Texture, Wrap

FORMATS = (".glb", ".gltf", ".obj", ".ply")

MAX_TEXTURE_SIDE = 16384             # the largest 2D texture Direct3D 11/12 and Vulkan GPUs accept
# Bytes of memory one texel costs while loading: the decoded image (up to 4), its RGBA copy (4),
# the model's copy (4) and the renderer's mip chain (4 x 4/3); measured 13-14 B on 13000^2 PNGs.
TEXEL_LOAD_BYTES = 16

_GLB_MAGIC = b"glTF"
_GLB_JSON = 0x4E4F534A               # chunk type "JSON"
_GLB_BIN = 0x004E4942                # chunk type "BIN\0"
_GLTF_TRIANGLES, _GLTF_FAN = 4, 6    # primitive modes (glTF 2.0 §3.7.2.1)


def load_mesh_file(path, *, allow_outside: bool = False, max_texture_bytes: int | None = None) -> Scene:
    """Read one .glb/.gltf/.obj/.ply file into a Scene; `SceneError` for anything unusable.
    `allow_outside`: the file may name paths outside its own folder (off: refused before they are
    touched). `max_texture_bytes`: refuse a model whose textures would take more memory than this
    to decode (checked from their headers, before any is decoded)."""
    path = Path(path)
    ext = path.suffix.lower()
    if not _is_file(path):
        raise SceneError(f"{path}: no such file")
    if ext not in FORMATS:
        raise SceneError(f"{path}: unknown mesh format {ext or '(none)'!r} (supported: {', '.join(FORMATS)})")
    if path.stat().st_size == 0:
        raise SceneError(f"{path}: empty file")

    folder = ModelFolder(path, allow_outside)
    try:
        with np.errstate(all="ignore"):
            facts = {".glb": _check_gltf, ".gltf": _check_gltf, ".obj": _check_obj, ".ply": _check_ply}[ext](path, folder)
            facts.check_textures(path, max_texture_bytes)
            tm_scene = _trimesh_load(path, facts, folder)
            draws, n_loaded = _draws(tm_scene, path, facts)
            facts.verify(path, n_loaded)
            lo, hi = world_bounds(draws)
            if not (np.isfinite(lo).all() and np.isfinite(hi).all()) or max(-lo.min(), hi.max()) > MAX_COORD:
                raise SceneError(f"node transforms place vertices beyond +-{MAX_COORD:.0e} (or at infinity)")
            camera = facts.camera(draws)
            if camera is None:
                camera = frame_bounds(lo, hi)
    except SceneError as e:
        msg = str(e)
        raise SceneError(msg if msg.startswith(str(path)) else f"{path}: {msg}") from None
    except (KeyError, IndexError, TypeError, ValueError) as e:  # a malformed glTF camera or material
        raise SceneError(f"{path}: malformed file ({type(e).__name__}: {_one_line(e)})") from None
    except OSError as e:     # a file it names (inside its folder) cannot be read: EACCES, EISDIR...
        raise SceneError(f"{path}: cannot read {Path(e.filename or path).name[:80]!r} "
                         f"({e.strerror or type(e).__name__})") from None
    n_triangles = sum(d.mesh.n_triangles for d in draws)
    return Scene(path.stem, f"{path.name}: {n_triangles:,} triangles in {len(draws)} draws", draws, camera,
                 notes=tuple(facts.notes))


# --- trimesh ------------------------------------------------------------------------------------

def _trimesh_load(path: Path, facts, folder: ModelFolder):
    import trimesh  # slow to import; only loading files needs it

    # trimesh looks up materials, textures, buffers and images itself: only through the folder
    resolver = trimesh_resolver(folder, uris=path.suffix.lower() in (".glb", ".gltf"))
    source = facts.text_for_trimesh
    try:
        # process=False keeps the file's vertices and faces exactly (no merging, no reordering)
        if source is None:
            scene = trimesh.load(str(path), force="scene", process=False, resolver=resolver)
        else:
            scene = trimesh.load(io.BytesIO(source), file_type=path.suffix[1:].lower(), force="scene",
                                 process=False, resolver=resolver)
    except SceneError:
        raise
    except Exception as e:  # trimesh raises anything from ValueError to IndexError to JSONDecodeError
        raise SceneError(f"{path}: cannot parse {path.suffix[1:].upper()} "
                         f"({type(e).__name__}: {_one_line(e)})") from None
    if resolver.refused:  # our checks saw every name; this is for any trimesh finds by itself
        raise SceneError(resolver.refused[0])
    return scene


def _draws(tm_scene, path: Path, facts) -> tuple[list[Draw], int]:
    """One Draw per geometry node; also the number of triangles trimesh produced."""
    import trimesh

    meshes: dict[tuple[str, bool], Mesh] = {}
    materials: dict[int, Material] = {}
    textures: dict[int, Texture] = {}
    draws, n_loaded, n_points = [], 0, 0
    for node in tm_scene.graph.nodes_geometry:
        transform, geom_name = tm_scene.graph[node]
        g = tm_scene.geometry[geom_name]
        if not isinstance(g, trimesh.Trimesh):
            n_points += isinstance(g, trimesh.PointCloud)
            continue                                   # points and lines are not drawn
        n_loaded += len(g.faces)
        if len(g.faces) == 0:
            continue
        # a mirroring transform turns counter-clockwise faces clockwise; glTF §3.7.4 says to flip
        mirrored = bool(np.linalg.det(transform[:3, :3]) < 0)
        key = (geom_name, mirrored)
        if key not in meshes:
            # An OBJ whose faces pair positions with uvs or normals (v/vt) gets its vertices from
            # trimesh, which makes them by a numpy sort whose ties fall differently with and
            # without AVX-512 (spot.obj: other faces, uvs and so vertex fetches on another CPU):
            # such vertices are put in the order the faces first use them, on every machine.
            made = isinstance(facts, _ObjFacts) and facts.paired
            meshes[key] = _mesh(g, geom_name, mirrored, first_use_order=made)
        tm_mat = getattr(g.visual, "material", None)
        if id(tm_mat) not in materials:
            materials[id(tm_mat)] = facts.material(tm_mat, textures, path)
        mesh, material = meshes[key], materials[id(tm_mat)]
        if material.texture is not None and mesh.uvs is None:
            raise SceneError(f"{path}: material {material.name!r} has a texture but mesh {geom_name!r} has no UVs")
        draws.append(Draw(mesh, material, transform))
    if not draws:
        what = "points but no triangles (a point cloud)" if n_points else "no triangles"
        raise SceneError(f"{path}: {what}")
    # The order a renderer submits a glTF's draws in: opaque, then alpha-tested, then blended
    # (a game's sort), each class in the file's order (glTF itself orders no draws).
    draws.sort(key=lambda d: int(d.material.alpha_mode))
    return draws, n_loaded


def _first_use(faces: np.ndarray, n: int) -> np.ndarray:
    """The n vertices in the order the faces (in file order) first use them; unused ones last,
    in their own order."""
    flat = faces.reshape(-1)
    first = np.full(n, len(flat), np.int64)
    np.minimum.at(first, flat, np.arange(len(flat)))
    return np.argsort(first, kind="stable")


def _mesh(g, name: str, mirrored: bool, first_use_order: bool = False) -> Mesh:
    vertices = np.asarray(g.vertices, np.float64)
    far = ~(np.abs(vertices) <= MAX_COORD).all(axis=1)     # NaN compares False: caught too
    if far.any():
        i = int(np.flatnonzero(far)[0])
        what = "NaN or infinite" if not np.isfinite(vertices[i]).all() else f"beyond +-{MAX_COORD:.0e}"
        raise SceneError(f"mesh {name!r}: vertex {i} is {what}")
    indices = np.asarray(g.faces)
    if mirrored:
        indices = indices[:, ::-1]
    normals = None
    # trimesh computes normals lazily; only ones present in the cache at load came from the file
    # (trimesh's own glTF exporter tests the same thing)
    if "vertex_normals" in g._cache.cache:
        n = np.asarray(g._cache.cache["vertex_normals"], np.float64)
        length = np.linalg.norm(n, axis=1, keepdims=True)
        # zero normals (degenerate vertices in some exporters) cannot be shaded: fall back to faceted
        ok = n.shape == g.vertices.shape and (length > 0).all() and np.isfinite(length).all()
        normals = n / length if ok else None
    uvs = None
    uv = getattr(g.visual, "uv", None)
    if uv is not None and len(uv) == len(g.vertices):
        uvs = np.array(uv, np.float64)
        uvs[:, 1] = 1.0 - uvs[:, 1]  # trimesh stores v up (OBJ); the model has v down (glTF)
    positions = np.asarray(g.vertices)
    if first_use_order:
        order = _first_use(np.asarray(g.faces), len(positions))
        remap = np.empty(len(order), np.int64)
        remap[order] = np.arange(len(order))
        positions, indices = positions[order], remap[indices]
        normals = normals[order] if normals is not None else None
        uvs = uvs[order] if uvs is not None else None
    return Mesh(name, positions, indices, normals, uvs)


def _texture(image, name: str, textures: dict, sampler: tuple = ()) -> Texture | None:
    """The image as a Texture with `sampler` (Texture's wrap_s, wrap_t, mip; its defaults if
    empty), one per image and sampler."""
    if image is None:
        return None
    key = (id(image), sampler)
    if key not in textures:
        try:   # trimesh opens images lazily: a corrupt or truncated one fails only here
            rgba = np.asarray(image.convert("RGBA"), np.uint8).copy()
        except Exception as e:   # PIL raises OSError, SyntaxError, ValueError, EOFError, struct.error...
            raise SceneError(f"texture of material {name!r} could not be decoded "
                             f"({type(e).__name__}: {_one_line(e)})") from None
        textures[key] = Texture(name, rgba, *sampler)
    return textures[key]


def _image_size(source, what: str) -> tuple[int, int]:
    """(width, height) from an image's header alone (file path or bytes); SceneError for one that
    is no image, larger than a GPU accepts or past PIL's decompression-bomb limit."""
    from PIL import Image

    try:
        with warnings.catch_warnings():
            # PIL warns from MAX_IMAGE_PIXELS and raises from twice that; the limit is checked below
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(source) if isinstance(source, bytes) else source) as im:
                w, h = im.size
    except Image.DecompressionBombError:
        raise SceneError(f"{what} is larger than the decompression-bomb limit "
                         f"({Image.MAX_IMAGE_PIXELS:,} pixels)") from None
    except Exception as e:   # PIL raises UnidentifiedImageError (an OSError), SyntaxError, ValueError...
        raise SceneError(f"{what} could not be decoded ({type(e).__name__}: {_one_line(e)})") from None
    if max(w, h) > MAX_TEXTURE_SIDE:
        raise SceneError(f"{what} is {w}x{h}, larger than GPUs accept ({MAX_TEXTURE_SIDE} a side)")
    if Image.MAX_IMAGE_PIXELS and w * h > Image.MAX_IMAGE_PIXELS:
        raise SceneError(f"{what} is {w}x{h}, over the decompression-bomb limit "
                         f"({Image.MAX_IMAGE_PIXELS:,} pixels)")
    return w, h


@dataclass(kw_only=True)
class _Facts:
    """What a format's raw check learnt, and how the format maps onto the model."""
    texture_sizes: dict = field(default_factory=dict)  # a texture's description → (width, height)
    text_for_trimesh: bytes | None = None              # the file as trimesh reads it; None: as is
    # glTF accessors without a buffer view are zeros that trimesh allocates (count x element
    # bytes each), a few bytes of JSON for any size: counted against the budget with the textures
    zero_bytes: int = 0
    notes: list = field(default_factory=list)          # what was read but is not modelled

    def check_textures(self, path: Path, max_bytes: int | None) -> None:
        """Refuse textures (and zero-filled accessors) that would take more than `max_bytes` to
        decode, before any is."""
        need = TEXEL_LOAD_BYTES * sum(w * h for w, h in self.texture_sizes.values()) + 2 * self.zero_bytes
        if max_bytes is None or need <= max_bytes:
            return
        budget = f"over the memory budget of {max_bytes / 2**30:.1f} GiB (--max-memory)"
        if not self.texture_sizes:
            raise SceneError(f"{path}: accessors without buffer views need about {need / 2**30:.1f} GiB "
                             f"of zeros, {budget}")
        (w, h), n = max(self.texture_sizes.values(), key=lambda s: s[0] * s[1]), len(self.texture_sizes)
        raise SceneError(f"{path}: {n} texture(s), the largest {w}x{h}, need about {need / 2**30:.1f} GiB "
                         f"to load, {budget}")

    def verify(self, path: Path, n_loaded: int) -> None:
        """Raise if trimesh returned fewer triangles than the file holds."""

    def material(self, tm_mat, textures: dict, path: Path) -> Material:
        return Material("default")

    def camera(self, draws) -> Camera | None:
        return None


# --- glTF ---------------------------------------------------------------------------------------

# glTF sampler enums (the OpenGL constants); a file without a minFilter gets MipFilter.NEAREST
GL_NEAREST, GL_REPEAT = 9728, 10497
WRAPS = {GL_REPEAT: Wrap.REPEAT, 33071: Wrap.CLAMP, 33648: Wrap.MIRROR}
MIN_FILTERS = {9729: MipFilter.NONE, 9985: MipFilter.NEAREST, 9987: MipFilter.LINEAR}
NEAREST_MIN_FILTERS = (9728, 9984, 9986)   # NEAREST, NEAREST_MIPMAP_NEAREST, NEAREST_MIPMAP_LINEAR

@dataclass
class _GltfFacts(_Facts):
    json: dict
    n_triangles: int  # TRIANGLES-mode triangles over the scene's node instances (strips uncounted)

    def verify(self, path: Path, n_loaded: int) -> None:
        if n_loaded < self.n_triangles:
            raise SceneError(f"{path}: trimesh loaded {n_loaded} of the {self.n_triangles} triangles "
                             "the file declares (broken primitive or unsupported encoding)")

    def material(self, tm_mat, textures: dict, path: Path) -> Material:
        from trimesh.visual.material import PBRMaterial

        if not isinstance(tm_mat, PBRMaterial):
            return Material("default")
        name = tm_mat.name or "material"
        source = self._json_material(tm_mat.name)
        pbr = (source or {}).get("pbrMetallicRoughness", {})
        if source is not None and "baseColorFactor" in pbr:
            base = tuple(float(c) for c in pbr["baseColorFactor"])  # trimesh rounds it to uint8
        elif tm_mat.baseColorFactor is not None:
            base = tuple(float(c) / 255.0 for c in tm_mat.baseColorFactor)
        else:
            base = (1.0, 1.0, 1.0, 1.0)  # glTF default factor
        if source is not None and "baseColorTexture" in pbr and tm_mat.baseColorTexture is None:
            raise SceneError(f"{path}: base colour texture of material {name!r} could not be loaded")
        unlit = source is not None and "KHR_materials_unlit" in source.get("extensions", {})
        for ext in sorted((source or {}).get("extensions", {})):
            if ext != "KHR_materials_unlit":
                self.note(f"material {name!r}: {ext} is not modelled (ignored)")
        cutoff = tm_mat.alphaCutoff
        sampler = self._sampler(pbr.get("baseColorTexture"), name) if source is not None else ()
        return Material(name, base, _texture(tm_mat.baseColorTexture, name, textures, sampler),
                        AlphaMode[tm_mat.alphaMode or "OPAQUE"],
                        0.5 if cutoff is None else float(cutoff), bool(tm_mat.doubleSided), unlit)

    def note(self, line: str) -> None:
        if line not in self.notes:
            self.notes.append(line)

    def _sampler(self, info, name: str) -> tuple:
        """(wrap_s, wrap_t, mip) of a material's base colour texture; SceneError for what the
        sampler cannot do (another UV set, a texture transform, nearest filtering)."""
        if not info:
            return ()
        if info.get("texCoord", 0) != 0:
            raise SceneError(f"material {name!r}: its base colour texture reads UV set "
                             f"{info['texCoord']} (TEXCOORD_{info['texCoord']}); only TEXCOORD_0 is modelled")
        if "KHR_texture_transform" in info.get("extensions", {}):
            raise SceneError(f"material {name!r}: KHR_texture_transform is not modelled")
        texture = self.json["textures"][info["index"]]
        sampler = self.json.get("samplers", [])[texture["sampler"]] if "sampler" in texture else {}
        mag, min_ = sampler.get("magFilter"), sampler.get("minFilter")
        if mag == GL_NEAREST or min_ in NEAREST_MIN_FILTERS:
            raise SceneError(f"material {name!r}: nearest-texel filtering (sampler magFilter {mag}, "
                             f"minFilter {min_}) is not modelled; the sampler filters bilinearly")
        return (WRAPS[sampler.get("wrapS", GL_REPEAT)], WRAPS[sampler.get("wrapT", GL_REPEAT)],
                MIN_FILTERS.get(min_, MipFilter.NEAREST))

    def _json_material(self, name):
        """The file's material dict for trimesh's material, matched by name when the name is unique
        (trimesh keeps no material index)."""
        found = [m for m in self.json.get("materials", []) if name is not None and m.get("name") == name]
        return found[0] if len(found) == 1 else None

    def camera(self, draws) -> Camera | None:
        """The first perspective camera in the scene graph, in world space; None if there is none."""
        cameras = self.json.get("cameras", [])
        for node, m in self._nodes():
            cam = cameras[node["camera"]] if "camera" in node else {}
            if cam.get("type") == "perspective":
                break
        else:
            return None
        p = cam["perspective"]
        eye = m[:3, 3]
        forward = m[:3, :3] @ np.array([0.0, 0.0, -1.0])  # glTF cameras look down their local -Z
        up = m[:3, :3] @ np.array([0.0, 1.0, 0.0])
        length = np.linalg.norm(forward)
        if not (0.0 < length < np.inf) or not np.isfinite(m).all() or np.abs(eye).max() > MAX_COORD:
            raise SceneError("the camera node's transform is degenerate (zero scale) or out of range")
        forward /= length
        near = float(p["znear"])
        far = p.get("zfar")
        if far is None:  # infinite projection in the file; ours needs a far plane: the farthest corner
            lo, hi = world_bounds(draws)
            corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
            far = max(float(np.linalg.norm(corners - eye, axis=1).max()) * 1.01, 2.0 * near)
        return Camera(floats(eye), floats(eye + forward), floats(up), math.degrees(float(p["yfov"])),
                      near, float(far))

    def _nodes(self):
        """(node, world_from_node) for every node reachable from the default scene, depth first."""
        nodes = self.json.get("nodes", [])
        scenes = self.json.get("scenes", [])
        if not scenes:
            return
        stack = [(i, np.eye(4)) for i in reversed(scenes[self.json.get("scene", 0)].get("nodes", []))]
        seen = set()
        while stack:
            i, parent = stack.pop()
            if i in seen:  # a cyclic file; trimesh refuses those too
                continue
            seen.add(i)
            m = parent @ _node_matrix(nodes[i])
            yield nodes[i], m
            stack.extend((c, m) for c in reversed(nodes[i].get("children", [])))


def _node_matrix(node: dict) -> np.ndarray:
    if "matrix" in node:
        return np.array(node["matrix"], np.float64).reshape(4, 4).T  # column-major in the file
    x, y, z, w = node.get("rotation", (0.0, 0.0, 0.0, 1.0))
    r = np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                  [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                  [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])
    m = np.eye(4)
    m[:3, :3] = r * np.asarray(node.get("scale", (1.0, 1.0, 1.0)), np.float64)  # T * R * S
    m[:3, 3] = node.get("translation", (0.0, 0.0, 0.0))
    return m


def _check_gltf(path: Path, folder: ModelFolder) -> _GltfFacts:
    """Parse and check the JSON ourselves (scenes.gltf_checks; trimesh's checks and error messages
    are thin), every buffer's bytes present, every image's header."""
    data = path.read_bytes()
    bin_chunk = None  # GLB: the embedded BIN chunk, which buffer 0 may use
    if path.suffix.lower() == ".glb":
        if len(data) < 20 or data[:4] != _GLB_MAGIC:
            raise SceneError(f"{path}: not a GLB file (no 'glTF' header)")
        version, length = struct.unpack_from("<II", data, 4)
        if version != 2:
            raise SceneError(f"{path}: GLB version {version} (only glTF 2.0 is supported)")
        if len(data) < length:
            raise SceneError(f"{path}: truncated GLB ({len(data)} of {length} bytes)")
        chunk_length, chunk_type = struct.unpack_from("<II", data, 12)
        if chunk_type != _GLB_JSON or 20 + chunk_length > length:
            raise SceneError(f"{path}: malformed GLB (first chunk is not a complete JSON chunk)")
        offset = 20 + chunk_length
        while offset < length:  # the remaining chunks (BIN) must be complete too
            if offset + 8 > length:
                raise SceneError(f"{path}: malformed GLB (chunk header past the end)")
            n, kind = struct.unpack_from("<II", data, offset)
            if offset + 8 + n > length:
                raise SceneError(f"{path}: truncated GLB (chunk at byte {offset} runs past the end)")
            if kind == _GLB_BIN and bin_chunk is None:
                bin_chunk = data[offset + 8:offset + 8 + n]
            offset += 8 + n
        data = data[20:20 + chunk_length]
    try:
        header = parse_gltf_json(data)
    except SceneError as e:
        raise SceneError(f"{path}: {e}") from None
    unsupported = set(header.get("extensionsRequired", [])) - {"KHR_materials_unlit"}
    if unsupported:
        raise SceneError(f"{path}: requires unsupported glTF extensions: {', '.join(sorted(unsupported))}")
    facts = _GltfFacts(header, 0)

    buffers: dict[int, bytes | Path] = {}      # what each buffer's bytes are read from
    for i, buf in enumerate(header.get("buffers", [])):
        uri = buf.get("uri")
        if uri is None:
            source, available, what = bin_chunk, len(bin_chunk or b""), "embedded BIN chunk"
        elif uri.startswith("data:"):
            source = _data_uri(uri, f"buffers[{i}]")
            available, what = len(source), f"data URI of buffers[{i}]"
        else:
            source = folder.resolve_uri(uri, "buffer file")     # before anything touches it
            if not _is_file(source):
                raise SceneError(f"{path}: buffer file {uri!r} not found")
            available, what = source.stat().st_size, f"buffer file {uri!r}"
        if available < buf["byteLength"]:
            raise SceneError(f"{path}: truncated {what} ({available} of {buf['byteLength']} bytes)")
        buffers[i] = source
    views = header.get("bufferViews", [])
    for i, image in enumerate(header.get("images", [])):
        what = f"image {i}"
        if "uri" in image:
            uri = image["uri"]
            if uri.startswith("data:"):
                source = _data_uri(uri, f"images[{i}]")
            else:
                source = folder.resolve_uri(uri, "image")
                if not _is_file(source):
                    raise SceneError(f"{path}: image {uri!r} not found")
                what = f"image {uri!r}"
        elif "bufferView" in image:
            view = views[image["bufferView"]]
            blob = buffers[view["buffer"]]
            start = view.get("byteOffset", 0)
            if isinstance(blob, Path):
                with open(blob, "rb") as f:
                    f.seek(start)
                    source = f.read(view["byteLength"])
            else:
                source = blob[start:start + view["byteLength"]]
        else:
            continue
        facts.texture_sizes[what] = _image_size(source, what)

    accessors, meshes = header.get("accessors", []), header.get("meshes", [])
    facts.zero_bytes = sum(a["count"] * element_bytes(a) for a in accessors if "bufferView" not in a)
    for node, _ in facts._nodes():
        if "mesh" not in node or "camera" in node:
            continue
        for p in meshes[node["mesh"]]["primitives"]:
            mode = p.get("mode", _GLTF_TRIANGLES)
            if mode == _GLTF_FAN:
                raise SceneError(f"{path}: triangle fans are not supported")
            if mode == _GLTF_TRIANGLES:
                acc = p["indices"] if "indices" in p else p["attributes"]["POSITION"]
                facts.n_triangles += accessors[acc]["count"] // 3
    return facts


def _data_uri(uri: str, what: str) -> bytes:
    """The bytes of a base64 data: URI (the only kind glTF writers use)."""
    index = uri.find("base64,")           # where trimesh looks too
    if index < 0:
        raise SceneError(f"{what}: data URI is not base64")
    try:
        return base64.b64decode(uri[index + 7:])
    except (binascii.Error, ValueError) as e:
        raise SceneError(f"{what}: data URI is not valid base64 ({_one_line(e)})") from None


# --- OBJ ----------------------------------------------------------------------------------------

@dataclass
class _ObjFacts(_Facts):
    n_triangles: int                                        # polygons fanned: sum of (corners - 2)
    paired: bool = False                                    # faces name v/vt or v//vn corners
    mtl_textures: dict[str, Path] = field(default_factory=dict)  # material name → map_Kd file
    has_materials: bool = False                             # any mtllib; else trimesh's are defaults

    def verify(self, path: Path, n_loaded: int) -> None:
        if n_loaded != self.n_triangles:
            raise SceneError(f"{path}: trimesh loaded {n_loaded} triangles, the faces make {self.n_triangles}")

    def material(self, tm_mat, textures: dict, path: Path) -> Material:
        from trimesh.visual.material import SimpleMaterial

        if not self.has_materials or not isinstance(tm_mat, SimpleMaterial):
            return Material("default")
        name = tm_mat.name or "material"
        kw = tm_mat.kwargs or {}
        kd = kw.get("kd")
        rgb = [float(c) for c in kd][:3] if kd is not None else [c / 255.0 for c in tm_mat.diffuse[:3]]
        if "d" in kw:
            alpha = float(np.ravel(kw["d"])[0])
        elif "tr" in kw:
            alpha = 1.0 - float(np.ravel(kw["tr"])[0])
        else:
            alpha = 1.0
        if name in self.mtl_textures and tm_mat.image is None:
            raise SceneError(f"{path}: texture {self.mtl_textures[name].name!r} of material {name!r} "
                             "could not be decoded")
        texture = _texture(tm_mat.image, name, textures) if name in self.mtl_textures else None
        return Material(name, (*rgb, alpha), texture, AlphaMode.BLEND if alpha < 1.0 else AlphaMode.OPAQUE)


def _check_obj(path: Path, folder: ModelFolder) -> _ObjFacts:
    """Scan the OBJ text: finite vertices, face indices in range and not 0, triangle count, MTL."""
    raw = path.read_bytes()
    try:
        if b"\0" in raw:      # UTF-16 and binary files have NULs; no text file does
            raise UnicodeDecodeError("utf-8", raw, raw.index(b"\0"), raw.index(b"\0") + 1, "NUL byte")
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise SceneError(f"{path}: not a text file (byte {e.start} is not UTF-8 text); OBJ is text") from None
    lines = text.splitlines()
    # OBJ allows blanks before a statement; trimesh's reader drops such lines, so it gets them
    # stripped (only then: an untouched file reaches trimesh byte for byte)
    indented = any(line[:1] in (" ", "\t") and line.strip() for line in lines)
    n_v = n_tri = max_ref = 0
    paired = False
    libraries = []
    for line_no, full in enumerate(lines, 1):
        line = full.lstrip()
        key = line[:2]
        if key in ("v ", "v\t"):
            parts = line.split()
            try:
                xyz = [float(p) for p in parts[1:4]]
            except ValueError:
                xyz = []
            if len(xyz) != 3:
                raise SceneError(f"{path}:{line_no}: malformed vertex {line.strip()[:40]!r}")
            if not all(map(math.isfinite, xyz)):
                raise SceneError(f"{path}:{line_no}: vertex {n_v + 1} is NaN or infinite")
            if max(map(abs, xyz)) > MAX_COORD:
                raise SceneError(f"{path}:{line_no}: vertex {n_v + 1} is beyond +-{MAX_COORD:.0e}")
            n_v += 1
        elif key in ("f ", "f\t"):
            corners = line.split()[1:]
            if len(corners) < 3:
                raise SceneError(f"{path}:{line_no}: face with fewer than 3 vertices")
            if line_no == len(lines) and not text.endswith(("\n", "\r")):
                # writers end every line; a file that stops inside a face line was cut, and the
                # cut face can read as a whole smaller one ('f 1 2 34' → 'f 1 2 3')
                raise SceneError(f"{path}:{line_no}: the file ends inside this face line (no line "
                                 "break after it): truncated?")
            n_tri += len(corners) - 2
            paired = paired or "/" in line
            forms = set()
            for c in corners:
                fields = c.split("/")
                forms.add(tuple(bool(f) for f in fields))
                try:
                    i = int(fields[0])
                except ValueError:
                    raise SceneError(f"{path}:{line_no}: malformed face {line.strip()[:40]!r}") from None
                if i == 0 or -i > n_v:  # 1-based; negative counts back from the last vertex so far
                    raise SceneError(f"{path}:{line_no}: face index {i} out of range "
                                     f"({n_v} vertices so far, indices start at 1)")
                max_ref = max(max_ref, i)
            if len(forms) > 1:     # v, v/vt, v//vn, v/vt/vn: one form per face; a cut corner is another
                raise SceneError(f"{path}:{line_no}: malformed face {line.strip()[:40]!r} (corners of "
                                 "different forms)")
        elif line.startswith("mtllib"):
            libraries.append(line[6:].strip())
    if max_ref > n_v:
        raise SceneError(f"{path}: face index {max_ref} out of range for {n_v} vertices")
    facts = _ObjFacts(n_tri, paired=paired, has_materials=bool(libraries))
    if indented:
        facts.text_for_trimesh = "\n".join(line.lstrip() for line in lines).encode("utf-8") + b"\n"
    for lib in libraries:
        mtl = folder.resolve(lib, "material library")   # before anything touches it
        if not _is_file(mtl):
            raise SceneError(f"{path}: material library {lib!r} not found")
        current = None
        for line in mtl.read_text(encoding="utf-8", errors="replace").splitlines():
            parts = line.split()
            if len(parts) >= 2 and parts[0] == "newmtl":
                current = parts[1]
            elif len(parts) >= 2 and parts[0].lower() == "map_kd" and current is not None:
                # options such as -s u v come before the file name
                image = folder.resolve(parts[-1], "texture", base=mtl.parent)
                if not _is_file(image):
                    raise SceneError(f"{path}: texture {parts[-1]!r} of material {current!r} not found")
                facts.mtl_textures[current] = image
                facts.texture_sizes[f"texture {parts[-1]!r}"] = _image_size(image, f"texture {parts[-1]!r}")
    return facts


# --- PLY ----------------------------------------------------------------------------------------

@dataclass
class _PlyFacts(_Facts):
    counts: dict          # element name → count declared in the header

    def verify(self, path: Path, n_loaded: int) -> None:
        n_faces = self.counts.get("face", 0)
        # polygons are fanned into more triangles, never fewer; fewer means faces were lost
        if n_loaded < n_faces:
            raise SceneError(f"{path}: truncated or malformed PLY: {n_loaded} triangles loaded, "
                             f"header declares {n_faces} faces")


def _check_ply(path: Path, folder: ModelFolder) -> _PlyFacts:
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    end = head.find(b"end_header")
    if not head.startswith(b"ply") or end < 0:
        raise SceneError(f"{path}: not a PLY file (no 'ply' ... 'end_header' header)")
    encoding, counts = None, {}
    for line in head[:end].decode("ascii", errors="replace").splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "format":
            encoding = parts[1]
        elif len(parts) == 3 and parts[0] == "element":
            try:
                counts[parts[1]] = int(parts[2])
            except ValueError:
                raise SceneError(f"{path}: malformed PLY header line {line!r}") from None
    if encoding not in ("ascii", "binary_little_endian", "binary_big_endian"):
        raise SceneError(f"{path}: unknown PLY format {encoding!r}")
    if encoding == "ascii":
        body = path.read_bytes()[end:].split(b"\n", 1)[1] if b"\n" in head[end:] else b""
        n_lines = sum(1 for ln in body.splitlines() if ln.strip())
        # every writer puts one element per line; fewer lines means a cut file (trimesh reads on)
        if n_lines < sum(counts.values()):
            raise SceneError(f"{path}: truncated PLY: {n_lines} data lines, header declares "
                             f"{sum(counts.values())} elements")
    # binary bodies: trimesh checks the exact byte length and raises on a cut file
    return _PlyFacts(counts)


def _is_file(path: Path) -> bool:
    """Path.is_file, False also for a name the system refuses (too long, a NUL in it)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


def _one_line(e: Exception) -> str:
    text = str(e).strip().splitlines()
    msg = text[0] if text else type(e).__name__
    return msg[:200]
