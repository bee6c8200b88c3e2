"""`tilesim`: render, report, diff, scenes, presets.

Every error a user can cause (unknown scene or preset, a bad mesh file, a bad resolution or
camera) is one line on stderr and exit code 2; outputs are written to a temporary file and
renamed, so a failed run never leaves a half-written file.
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
from pathlib import Path

EXIT_USAGE = 2


class UserError(Exception):
    """An error caused by the input; printed as one line."""


def _parse_res(text: str) -> tuple[int, int]:
    from .api import check_resolution
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise UserError(f"--res {text!r}: expected WIDTHxHEIGHT, e.g. 1920x1080") from None
    check_resolution(w, h)
    return w, h


def _load_scene(spec: str, camera: str | None):
    from scenes.library import get_scene
    from scenes.loaders import load_mesh_file
    from scenes.model import Camera
    is_file = Path(spec).suffix.lower() in (".glb", ".gltf", ".obj", ".ply") or os.sep in spec
    scene = load_mesh_file(spec) if is_file else get_scene(spec)
    if camera:
        cam = Camera.parse(camera, scene.camera.near, scene.camera.far)
        scene = dataclasses.replace(scene, camera=cam)
    return scene


def check_output(path) -> Path:
    """Raise UserError unless `path` can be created: called for every output before any work, so a
    bad output path fails in a second and never after other outputs were written."""
    path = Path(path)
    if not path.name or path.is_dir():
        raise UserError(f"cannot write {path}: is a directory")
    if not path.parent.is_dir():
        raise UserError(f"cannot write {path}: directory {path.parent} does not exist")
    return path


def write_atomic(path: str | Path, write) -> None:
    """write(tmp_path) then rename over path: readers never see a partial file."""
    path = check_output(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    except OSError as e:
        raise UserError(f"cannot write {path}: {e.strerror or e}") from None
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise UserError(f"cannot write {path}: {e.strerror or e}") from None
        raise


def save_png(path, rgba) -> None:
    from PIL import Image
    write_atomic(path, lambda tmp: Image.fromarray(rgba).save(tmp, format="PNG"))


def save_json(path, obj) -> None:
    def write(tmp):
        with open(tmp, "w") as f:
            json.dump(obj, f, indent=2)
            f.write("\n")
    write_atomic(path, write)


def heatmap_rgba(values, width: int, height: int):
    """A per-pixel or per-tile map as an 'inferno' image at the render's size (0 = black)."""
    import numpy as np
    from matplotlib import colormaps
    v = np.asarray(values, np.float64)
    if v.shape != (height, width):          # per tile: nearest-neighbour up to pixels
        ty = np.minimum(np.arange(height) * v.shape[0] // height, v.shape[0] - 1)
        tx = np.minimum(np.arange(width) * v.shape[1] // width, v.shape[1] - 1)
        v = v[ty][:, tx]
    top = v.max()
    rgba = colormaps["inferno"](v / top if top > 0 else v, bytes=True)
    return np.ascontiguousarray(rgba)


HEATMAPS = {
    "overdraw": lambda r: r.pixel_maps["overdraw"],   # fragments shaded per pixel
    "dram": lambda r: r.tile_maps["dram_bytes"],       # DRAM bytes per screen tile
    "fallbacks": lambda r: r.tile_maps["fallbacks"],   # tile fallbacks per tile (tilers)
}


def cmd_render(args) -> None:
    from .api import render
    from .presets import get_preset
    w, h = _parse_res(args.res)
    heatmaps = []
    for spec in args.heatmap or []:
        kind, _, path = spec.partition("=")
        if kind not in HEATMAPS or not path:
            raise UserError(f"--heatmap {spec!r}: expected KIND=PATH with KIND in {', '.join(HEATMAPS)}")
        heatmaps.append((kind, path))
    for out in (args.output, args.counters, *(path for _, path in heatmaps)):
        if out:
            check_output(out)
    preset = get_preset(args.preset)
    if any(kind == "fallbacks" for kind, _ in heatmaps) and preset.architecture != "tbdr":
        raise UserError(f"--heatmap fallbacks: preset {preset.name} is not a tiler (no tile fallbacks)")
    scene = _load_scene(args.scene, args.camera)
    result = render(scene, preset, w, h, args.samples)
    save_png(args.output, result.color)
    if args.counters:
        save_json(args.counters, {"scene": result.scene, "preset": result.preset, "width": w,
                                  "height": h, "samples": args.samples,
                                  "counters": result.counters.as_json(), "derived": result.derived()})
    for kind, path in heatmaps:
        save_png(path, heatmap_rgba(HEATMAPS[kind](result), w, h))
    d = result.derived()
    print(f"{result.scene} via {result.preset} at {w}x{h}: {result.seconds * 1e3:.0f} ms, "
          f"overdraw {d['overdraw']:.2f}, DRAM {d['dram_mb']:.2f} MB/frame "
          f"({d['gbps_at_fps']:.1f} GB/s at 60 fps) -> {args.output}")


def cmd_report(args) -> None:
    from scenes.library import get_scene, scene_names

    from .presets import get_preset
    from .report import run_report, to_csv, print_table
    w, h = _parse_res(args.res)
    for out in (args.json, args.csv):
        if out:
            check_output(out)
    presets = [get_preset(p) for p in args.preset.split(",")]
    names = args.scenes.split(",") if args.scenes else scene_names()
    scenes = [get_scene(n) for n in names]
    rows = run_report(scenes, presets, w, h, args.samples, progress=not args.quiet)
    print_table(rows, w, h)
    if args.json:
        save_json(args.json, rows)
    if args.csv:
        write_atomic(args.csv, lambda tmp: to_csv(rows, tmp))


def cmd_scenes(args) -> None:
    from scenes.library import SCENES
    for e in SCENES.values():
        params = "".join(f":{p.name}" for p in e.params)
        print(f"{e.name + params:<28} {e.description}")


def cmd_presets(args) -> None:
    from .presets import PRESETS
    for p in PRESETS.values():
        print(f"{p.name}  [{p.architecture}]  {p.description}")
        if args.verbose:
            for k, v in p.params.items():
                print(f"    {k:<24} {v.value!s:<12} {v.label:<8} {v.source}")


class _Parser(argparse.ArgumentParser):
    def error(self, message):          # one line, exit 2 (argparse would add a usage block)
        where = self.prog.partition(" ")[2]         # "render" in a subcommand's parser
        self.exit(EXIT_USAGE, f"tilesim: error: {where + ': ' if where else ''}{message}\n")


def cmd_diff(args) -> None:
    import numpy as np
    from PIL import Image

    from .diff import Tolerance, compare

    def load(path):
        try:
            return np.asarray(Image.open(path).convert("RGBA"))
        except (OSError, ValueError) as e:
            raise UserError(f"cannot read image {path}: {e}") from None
    try:
        d = compare(load(args.a), load(args.b), Tolerance(args.max_abs, args.max_fraction))
    except ValueError as e:
        raise UserError(str(e)) from None
    if args.output:
        save_png(args.output, d.diff)
    print(d.summary())
    if not d.within(Tolerance(args.max_abs, args.max_fraction)):
        raise SystemExit(1)


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="tilesim", description="Render a scene through GPU "
                                 "architectures and count what the frame costs.")
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Parser)
    r = sub.add_parser("render", help="one scene, one preset -> PNG (+ counters, heat maps)")
    r.add_argument("scene", help="built-in scene (see `tilesim scenes`) or a .glb/.gltf/.obj/.ply file")
    r.add_argument("--preset", default="imr-baseline")
    r.add_argument("--res", default="1280x720", help="WIDTHxHEIGHT (default 1280x720)")
    r.add_argument("--samples", type=int, default=1, choices=(1, 4))
    r.add_argument("--camera", help="eye:target:up:fovy, e.g. 0,1,5:0,0,0:0,1,0:60 (write --camera=-1,... when it starts with a minus)")
    r.add_argument("-o", "--output", default="out.png")
    r.add_argument("--counters", help="write the counters as JSON here")
    r.add_argument("--heatmap", action="append", metavar="KIND=PATH",
                   help=f"write a heat map PNG; KIND: {', '.join(HEATMAPS)} (repeatable)")
    r.set_defaults(func=cmd_render)
    p = sub.add_parser("report", help="scenes x presets -> bandwidth table")
    p.add_argument("--preset", default="imr-baseline", help="comma-separated presets")
    p.add_argument("--scenes", help="comma-separated scenes (default: all built-in)")
    p.add_argument("--res", default="1280x720")
    p.add_argument("--samples", type=int, default=1, choices=(1, 4))
    p.add_argument("--json", help="write the rows as JSON here")
    p.add_argument("--csv", help="write the rows as CSV here")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_report)
    d = sub.add_parser("diff", help="compare two images: metrics and a diff image; exit 1 if they differ")
    d.add_argument("a")
    d.add_argument("b")
    d.add_argument("-o", "--output", help="write the diff image here")
    d.add_argument("--max-abs", type=int, default=0, help="channel difference allowed per pixel")
    d.add_argument("--max-fraction", type=float, default=0.0, help="fraction of pixels allowed over it")
    d.set_defaults(func=cmd_diff)
    s = sub.add_parser("scenes", help="list the built-in scenes")
    s.set_defaults(func=cmd_scenes)
    s = sub.add_parser("presets", help="list the presets")
    s.add_argument("-v", "--verbose", action="store_true", help="every parameter with its source")
    s.set_defaults(func=cmd_presets)
    return ap


def main(argv=None) -> int:
    from scenes.model import SceneError

    from .presets import PresetError
    args = build_parser().parse_args(argv)
    try:
        args.func(args)
    except (UserError, SceneError, PresetError) as e:
        print(f"tilesim: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("tilesim: interrupted", file=sys.stderr)
        return 130
    return 0


if __name__ == "__main__":
    sys.exit(main())
