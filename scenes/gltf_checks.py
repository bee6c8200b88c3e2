"""glTF 2.0 structure checks. Consumes the glTF JSON text; produces the parsed dict, known to have
the shape the loader and trimesh index into, or a `SceneError` saying where it does not.

Three steps, each covering what the one before cannot say:
1. strict JSON: NaN, Infinity and numbers past float64's range are refused (JSON has none; Python's
   json module accepts them and they would reach the transforms);
2. the Khronos glTF 2.0 JSON schema (the copy trimesh ships, validated with jsonschema): types,
   array lengths (a matrix of 16 numbers, a rotation of 4), enumerations, minimums (count >= 1,
   byteOffset >= 0, byteStride 4..252);
3. what the schema leaves to the validator (the Khronos glTF-Validator's own checks): every index
   within its array, every accessor's bytes inside its buffer view and every view inside its
   buffer, a stride no smaller than its element, index and position accessors of usable types,
   and a node hierarchy that is a forest (glTF 2.0 §3.5.3: no cycles, one parent at most, scene
   roots that are nobody's child), so every node is drawn at most once per scene.

    header = parse_gltf_json(text)     # SceneError("nodes[0].matrix: ... is too short") etc.
"""
from __future__ import annotations

import json
import math
from functools import lru_cache

from .model import SceneError

COMPONENT_BYTES = {5120: 1, 5121: 1, 5122: 2, 5123: 2, 5125: 4, 5126: 4}   # glTF §3.6.2.2
N_COMPONENTS = {"SCALAR": 1, "VEC2": 2, "VEC3": 3, "VEC4": 4, "MAT2": 4, "MAT3": 9, "MAT4": 16}
INDEX_TYPES = (5121, 5123, 5125)      # unsigned byte, short, int (§3.7.2.1)
FLOAT = 5126

# (where an index sits, the array it indexes); '*' is every item of a list or every value of a dict
REFERENCES = (
    ("scene", "scenes"),
    ("scenes.*.nodes.*", "nodes"),
    ("nodes.*.children.*", "nodes"),
    ("nodes.*.mesh", "meshes"),
    ("nodes.*.camera", "cameras"),
    ("nodes.*.skin", "skins"),
    ("skins.*.joints.*", "nodes"),
    ("skins.*.skeleton", "nodes"),
    ("skins.*.inverseBindMatrices", "accessors"),
    ("meshes.*.primitives.*.attributes.*", "accessors"),
    ("meshes.*.primitives.*.indices", "accessors"),
    ("meshes.*.primitives.*.material", "materials"),
    ("meshes.*.primitives.*.targets.*.*", "accessors"),
    ("accessors.*.bufferView", "bufferViews"),
    ("accessors.*.sparse.indices.bufferView", "bufferViews"),
    ("accessors.*.sparse.values.bufferView", "bufferViews"),
    ("bufferViews.*.buffer", "buffers"),
    ("materials.*.pbrMetallicRoughness.baseColorTexture.index", "textures"),
    ("materials.*.pbrMetallicRoughness.metallicRoughnessTexture.index", "textures"),
    ("materials.*.normalTexture.index", "textures"),
    ("materials.*.occlusionTexture.index", "textures"),
    ("materials.*.emissiveTexture.index", "textures"),
    ("textures.*.source", "images"),
    ("textures.*.sampler", "samplers"),
    ("images.*.bufferView", "bufferViews"),
    ("animations.*.channels.*.target.node", "nodes"),
    ("animations.*.samplers.*.input", "accessors"),
    ("animations.*.samplers.*.output", "accessors"),
)


def parse_gltf_json(data: bytes) -> dict:
    """The glTF JSON, checked as the module docstring says."""
    try:
        header = json.loads(data.decode("utf-8"), parse_constant=_no_constant, parse_float=_finite_float)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:   # JSONDecodeError is a ValueError
        raise SceneError(f"malformed glTF JSON ({_one_line(e)})") from None
    asset = header.get("asset") if isinstance(header, dict) else None
    version = asset.get("version") if isinstance(asset, dict) else None
    if not isinstance(version, str) or not version.startswith("2"):
        raise SceneError("not a glTF 2.0 file (asset.version missing or not 2.x)")
    problem = _schema_problem(header)
    if problem:
        raise SceneError(f"malformed glTF: {problem}")
    _check_references(header)
    _check_bytes(header)
    _check_primitives(header)
    _check_forest(header)
    return header


def element_bytes(accessor: dict) -> int:
    """Bytes of one element; matrix columns start on 4-byte boundaries (glTF §3.6.2.4)."""
    size, kind = COMPONENT_BYTES[accessor["componentType"]], accessor["type"]
    if kind.startswith("MAT"):
        rows = int(kind[3])
        return rows * (-(-rows * size // 4) * 4)
    return N_COMPONENTS[kind] * size


# --- 1. JSON ------------------------------------------------------------------------------------

def _no_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:40]} is out of range")
    return value


# --- 2. schema ----------------------------------------------------------------------------------

@lru_cache(maxsize=1)
def _validator():
    import jsonschema
    from trimesh.exchange.gltf import get_schema      # Khronos's glTF 2.0 schema, $refs resolved

    schema = get_schema()
    return jsonschema.validators.validator_for(schema)(schema)


def _schema_problem(header: dict) -> str | None:
    from jsonschema.exceptions import best_match

    try:
        error = best_match(_validator().iter_errors(header))
    except RecursionError:
        return "nested too deeply"
    if error is None:
        return None
    message, shown = error.message, repr(error.instance)
    if message.startswith(shown) and len(shown) > 40:   # the offending value can be a whole array
        message = shown[:37] + "..." + message[len(shown):]
    return f"{_where(error.absolute_path)}: {message[:200]}"


def _where(path) -> str:
    text = ""
    for key in path:
        text += f"[{key}]" if isinstance(key, int) else (f".{key}" if text else str(key))
    return text or "the top level"


# --- 3. what the schema cannot say --------------------------------------------------------------

def _items(node, keys: list[str], trail: tuple):
    """(trail, value) at every place the dotted pattern `keys` reaches in `node`."""
    if not keys:
        yield trail, node
        return
    key, rest = keys[0], keys[1:]
    if key == "*":
        pairs = enumerate(node) if isinstance(node, list) else node.items() if isinstance(node, dict) else ()
    else:
        pairs = [(key, node[key])] if isinstance(node, dict) and key in node else []
    for k, v in pairs:
        yield from _items(v, rest, (*trail, k))


def _check_references(header: dict) -> None:
    for pattern, target in REFERENCES:
        n = len(header.get(target, []))
        for trail, value in _items(header, pattern.split("."), ()):
            # the schema's integer accepts 2.0; a list index must be an int
            if type(value) is not int or not 0 <= value < n:
                raise SceneError(f"malformed glTF: {_where(trail)} = {value!r} is not an index into "
                                 f"{target} ({n} entries)")


def _check_bytes(header: dict) -> None:
    buffers, views = header.get("buffers", []), header.get("bufferViews", [])
    for i, view in enumerate(views):
        end = view.get("byteOffset", 0) + view["byteLength"]
        size = buffers[view["buffer"]]["byteLength"]
        if end > size:
            raise SceneError(f"malformed glTF: bufferViews[{i}] ends at byte {end}, past the end of "
                             f"buffers[{view['buffer']}] ({size} bytes)")
    for i, acc in enumerate(header.get("accessors", [])):
        elem = element_bytes(acc)
        if "bufferView" in acc:
            view = views[acc["bufferView"]]
            stride = view.get("byteStride", elem)
            if stride < elem:
                raise SceneError(f"malformed glTF: bufferViews[{acc['bufferView']}].byteStride {stride} is "
                                 f"smaller than accessors[{i}]'s {elem}-byte elements (they would overlap)")
            end = acc.get("byteOffset", 0) + stride * (acc["count"] - 1) + elem
            if end > view["byteLength"]:
                raise SceneError(f"malformed glTF: accessors[{i}] ({acc['count']} elements) needs {end} "
                                 f"bytes of bufferViews[{acc['bufferView']}], which has {view['byteLength']}")
        sparse = acc.get("sparse")
        if sparse:
            for part, size in (("indices", COMPONENT_BYTES[sparse["indices"]["componentType"]]), ("values", elem)):
                ref = sparse[part]
                end = ref.get("byteOffset", 0) + sparse["count"] * size
                if end > views[ref["bufferView"]]["byteLength"]:
                    raise SceneError(f"malformed glTF: accessors[{i}].sparse.{part} runs past the end "
                                     f"of bufferViews[{ref['bufferView']}]")


def _check_primitives(header: dict) -> None:
    accessors = header.get("accessors", [])
    for m, mesh in enumerate(header.get("meshes", [])):
        for p, prim in enumerate(mesh["primitives"]):
            where = f"meshes[{m}].primitives[{p}]"
            if "POSITION" not in prim["attributes"]:
                raise SceneError(f"malformed glTF: {where} has no POSITION attribute")
            pos = accessors[prim["attributes"]["POSITION"]]
            if pos["type"] != "VEC3" or pos["componentType"] != FLOAT:
                raise SceneError(f"malformed glTF: {where}: POSITION must be float VEC3")
            if "indices" in prim:
                idx = accessors[prim["indices"]]
                if idx["type"] != "SCALAR" or idx["componentType"] not in INDEX_TYPES:
                    raise SceneError(f"malformed glTF: {where}: indices must be unsigned SCALAR")


def _check_forest(header: dict) -> None:
    nodes = header.get("nodes", [])
    parent: dict[int, int] = {}
    for i, node in enumerate(nodes):
        for c in node.get("children", []):
            if c == i:
                raise SceneError(f"malformed glTF: nodes[{i}] is its own child (a cycle)")
            if c in parent:
                raise SceneError(f"malformed glTF: nodes[{c}] has two parents, nodes[{parent[c]}] and "
                                 f"nodes[{i}] (glTF nodes form trees)")
            parent[c] = i
    state = [0] * len(nodes)        # 0 not seen, 1 on the current walk up, 2 leads to a root
    for i in range(len(nodes)):
        walk, j = [], i
        while j is not None and state[j] == 0:
            state[j] = 1
            walk.append(j)
            j = parent.get(j)
        if j is not None and state[j] == 1:
            raise SceneError(f"malformed glTF: nodes[{j}] is its own ancestor (a cycle)")
        for k in walk:
            state[k] = 2
    for s, scene in enumerate(header.get("scenes", [])):
        for root in scene.get("nodes", []):
            if root in parent:
                raise SceneError(f"malformed glTF: scenes[{s}] lists nodes[{root}], a child of "
                                 f"nodes[{parent[root]}] (scene nodes must be roots)")


def _one_line(e: Exception) -> str:
    text = str(e).strip().splitlines()
    return (text[0] if text else type(e).__name__)[:200]
