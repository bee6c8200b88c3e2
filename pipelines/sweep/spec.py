"""A sweep spec: the TOML file `tilesim sweep` reads, and the cells it expands to.

    scenes = ["sponza", "spheres", "models/ship.glb"]     # built-in names or model files
    presets = ["amd-rdna2", "apple-m3", "my-gpu.toml"]    # names, shipped files or .toml paths
    resolutions = ["640x360", "1280x720"]
    samples = [1, 4]
    fps = 60                                              # optional (GB/s figures)
    frontend = "ngg"                                      # optional: every preset's front end

    [grid]                                   # crossed: every combination
    "l2.size" = ["2MiB", "4MiB", "8MiB"]
    "dram.bandwidth" = { start = "256GB/s", stop = "1TB/s", step = "256GB/s" }   # a range
    "llc.size" = { start = "16MiB", stop = "128MiB", factor = 2 }                # geometric

    [zip]                                    # zipped: the i-th values go together
    "l2.size" = ["2MiB", "4MiB"]
    "l2.ways" = [8, 16]

Consumes the file (paths in it are relative to its folder) and the command's --set pairs;
produces a Sweep: its cells, each one frame (scene x preset with one parameter point x
resolution x samples), every preset built and checked before any work, so a bad spec is one
PresetError / SweepError line. A key a preset lacks (tbdr.tile on a DSBR part) is left out of
that preset's cells; cells that come out the same frame (same scene, preset hash, resolution,
samples) are run once.
"""
from __future__ import annotations

import difflib
import hashlib
import itertools
import os
from dataclasses import dataclass, field
from pathlib import Path

from pipelines.presets.files import is_file_spec, preset_hash, resolve
from pipelines.presets.keys import apply_sets, get_key, keys_for
from pipelines.presets.params import PresetError
from pipelines.toml_input import read_document

FIELDS = ("scenes", "presets", "resolutions", "samples", "fps", "frontend", "grid", "zip", "name")
MODEL_SUFFIXES = (".glb", ".gltf", ".obj", ".ply")
MAX_CELLS = 1_000_000          # a typo in a range (step 1 B over a GiB) stops here
MAX_SPEC_BYTES = 1 << 20


class SweepError(PresetError):
    """A bad sweep spec: one line, exit 2 (the CLI treats it as a PresetError)."""


@dataclass(frozen=True)
class Cell:
    """One frame of the sweep: what a worker needs to render it and what the row records."""
    scene: str                   # a built-in name or a model file's path
    scene_key: str               # the name, or path + digest of the file's bytes
    preset: object               # pipelines.presets.Preset, the point's parameters applied
    preset_spec: str             # what the spec named (the base of the point)
    preset_hash: str
    width: int
    height: int
    samples: int
    fps: float
    frontend: str | None
    swept: tuple                 # ((key, value), ...) of this point (keys the preset has)

    def key(self, code_version: str) -> str:
        """What resume matches: scene, preset hash, resolution, samples (and fps, front end),
        code version."""
        return "|".join((self.scene_key, self.preset_hash, f"{self.width}x{self.height}",
                         str(self.samples), f"{self.fps:g}", self.frontend or "-", code_version))


@dataclass
class Sweep:
    cells: list[Cell]
    keys: list[str]              # swept keys, in spec order (their result columns)
    shape: dict = field(default_factory=dict)     # axis -> its length (for --dry-run)
    name: str = "sweep"


def _bad(path, message: str):
    raise SweepError(f"sweep spec {path}: {message}")


def _list(path, doc, name, default=None):
    v = doc.get(name, default)
    if v is None:
        _bad(path, f"needs {name} (a list)")
    v = v if isinstance(v, list) else [v]
    if not v:
        _bad(path, f"{name} is empty")
    return v


def _range(path, key_name: str, spec: dict) -> list:
    """{start, stop, step} (arithmetic, stop included) or {start, stop, factor} (geometric),
    start/stop/step in the key's units."""
    key = get_key(key_name)
    extra = set(spec) - {"start", "stop", "step", "factor"}
    if extra or "start" not in spec or "stop" not in spec or (("step" in spec) == ("factor" in spec)):
        _bad(path, f"{key_name}: a range is {{start, stop, step}} or {{start, stop, factor}}")
    start, stop = _number(key, spec["start"]), _number(key, spec["stop"])
    values = []
    if "step" in spec:
        step = _number(key, spec["step"])
        if step <= 0:
            _bad(path, f"{key_name}: step must be positive")
        n = int((stop - start) / step + 1e-9) + 1
        values = [start + i * step for i in range(max(n, 0))]
    else:
        factor = spec["factor"]
        if not isinstance(factor, (int, float)) or isinstance(factor, bool) or factor <= 1:
            _bad(path, f"{key_name}: factor must be a number above 1")
        v = start
        while v <= stop * (1 + 1e-9) and len(values) <= MAX_CELLS:
            values.append(v)
            v *= factor
    if not values or len(values) > MAX_CELLS:
        _bad(path, f"{key_name}: the range gives {len(values)} values")
    return [int(round(v)) if isinstance(start, int) and key.kind != "gbps" else v for v in values]


def _number(key, raw):
    """A range bound or step in the key's units (a step may lie outside the key's range)."""
    from dataclasses import replace
    v = replace(key, lo=None, hi=None).parse(raw)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise SweepError(f"{key.name}: a range needs numbers, got {raw!r}")
    return v


def _axis(path, key_name: str, values) -> list:
    get_key(key_name)
    if isinstance(values, dict):
        return _range(path, key_name, values)
    if not isinstance(values, list) or not values:
        _bad(path, f"{key_name}: expected a list of values or a range table")
    return values


def _flatten(table: dict, prefix: str = "") -> dict:
    out = {}
    for k, v in table.items():
        if isinstance(v, dict) and not ({"start", "stop"} & set(v)):
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def points(path, doc) -> tuple[list[tuple], list[str], dict]:
    """The parameter points: the crossed [grid] axes x the zipped [zip] lists."""
    grid = _flatten(doc.get("grid", {}))
    zipped = _flatten(doc.get("zip", {}))
    both = set(grid) & set(zipped)
    if both:
        _bad(path, f"{sorted(both)[0]} is both in [grid] and [zip]")
    axes = [[(k, v) for v in _axis(path, k, vs)] for k, vs in grid.items()]
    shape = {k: len(a) for k, a in zip(grid, axes)}
    if zipped:
        lists = {k: _axis(path, k, vs) for k, vs in zipped.items()}
        lengths = {len(v) for v in lists.values()}
        if len(lengths) != 1:
            _bad(path, f"[zip] lists differ in length ({', '.join(f'{k}: {len(v)}' for k, v in lists.items())})")
        axes.append([tuple((k, lists[k][i]) for k in lists) for i in range(lengths.pop())])
        shape["zip(" + ",".join(lists) + ")"] = len(axes[-1])
    pts = []
    for combo in itertools.product(*axes):
        flat = []
        for item in combo:
            flat.extend(item if isinstance(item[0], tuple) else [item])
        pts.append(tuple(flat))
    return pts or [()], [*grid, *zipped], shape


def _is_model(spec: str) -> bool:
    return Path(spec).suffix.lower() in MODEL_SUFFIXES or os.sep in spec


def _scene_key(spec: str) -> str:
    """A built-in scene's spec, or a file's path with a digest of its bytes (an edited model is
    a new scene to resume)."""
    if not _is_model(spec):
        return spec
    try:
        digest = hashlib.sha256(Path(spec).read_bytes()).hexdigest()[:12]
    except OSError as e:
        raise SweepError(f"scene {spec}: cannot read it: {e.strerror or e}") from None
    return f"{spec}#{digest}"


def _res(path, text) -> tuple[int, int]:
    from pipelines.frame import check_resolution
    try:
        w, h = (int(v) for v in str(text).lower().split("x"))
    except ValueError:
        _bad(path, f"resolution {text!r}: expected WIDTHxHEIGHT, e.g. 640x360")
    check_resolution(w, h)
    return w, h


def load(path: str | Path, sets=()) -> Sweep:
    """The sweep `path` describes, --set pairs `sets` applied to every preset first."""
    path = Path(path)
    doc = read_document(path, "sweep spec", MAX_SPEC_BYTES, FIELDS, SweepError)
    here = path.parent

    def local(spec: str) -> str:
        return str(here / spec) if is_file_spec(spec) and not os.path.isabs(spec) else spec

    scenes = [str(here / s) if _is_model(str(s)) and not os.path.isabs(str(s)) else str(s)
              for s in _list(path, doc, "scenes")]
    for s in scenes:
        if _scene_key(s) == s:
            _check_scene_name(s)
    presets = [(str(p), resolve(local(str(p)), sets)) for p in _list(path, doc, "presets")]
    resolutions = [_res(path, r) for r in _list(path, doc, "resolutions", ["640x360"])]
    samples = _list(path, doc, "samples", [1])
    if any(s not in (1, 4) or isinstance(s, bool) for s in samples):
        _bad(path, "samples are 1 or 4")
    fps = doc.get("fps", 60.0)
    if isinstance(fps, bool) or not isinstance(fps, (int, float)) or not 0 < fps < float("inf"):
        _bad(path, "fps is a positive number")
    frontend = doc.get("frontend")
    if frontend is not None and frontend not in ("legacy", "ngg", "mesh"):
        _bad(path, f"frontend {frontend!r}: one of legacy, ngg, mesh")
    pts, keys, shape = points(path, doc)
    n = len(scenes) * len(presets) * len(pts) * len(resolutions) * len(samples)
    if n > MAX_CELLS:
        _bad(path, f"{n:,} cells (at most {MAX_CELLS:,})")
    for k in keys:
        if not any(k in keys_for(p) for _, p in presets):
            _bad(path, f"{k}: none of the presets has this parameter")
    scene_keys = {s: _scene_key(s) for s in scenes}
    cells, seen = [], set()
    built: dict = {}
    for (spec, base), point in itertools.product(presets, pts):
        have = keys_for(base)
        mine = tuple((k, v) for k, v in point if k in have)
        if (spec, mine) not in built:
            p = apply_sets(base, list(mine), source=f"sweep {path.name}") if mine else base
            built[(spec, mine)] = (p, preset_hash(p),
                                   tuple((k, get_key(k).parse(v)) for k, v in mine))
    for scene, (spec, base), point, (w, h), s in itertools.product(
            scenes, presets, pts, resolutions, samples):
        have = keys_for(base)
        mine = tuple((k, v) for k, v in point if k in have)
        p, digest, swept = built[(spec, mine)]
        cell = Cell(scene, scene_keys[scene], p, spec, digest, w, h, s, float(fps), frontend, swept)
        ident = cell.key("")
        if ident not in seen:
            seen.add(ident)
            cells.append(cell)
    shape = {"scenes": len(scenes), "presets": len(presets), **shape,
             "resolutions": len(resolutions), "samples": len(samples)}
    return Sweep(cells, keys, shape, str(doc.get("name") or path.stem))


def _check_scene_name(spec: str) -> None:
    """A built-in scene's name and parameters, checked without building it (SceneError)."""
    from scenes.library import SCENES, scene_names
    from scenes.model import SceneError
    name, *args = spec.split(":")
    entry = SCENES.get(name)
    if entry is None:
        near = difflib.get_close_matches(name, scene_names(), n=1)
        raise SceneError(f"unknown scene {name!r} ({'did you mean ' + near[0] + '? ' if near else ''}"
                         f"try: {', '.join(scene_names())}, or a model file)")
    if len(args) > len(entry.params):
        raise SceneError(f"scene {spec!r}: too many parameters (usage: {entry.usage})")
    for p, a in zip(entry.params, args):
        if a:
            p.parse(a)
