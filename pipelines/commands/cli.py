"""`tilesim`: render, report, view, diff, scenes, presets.

Every error a user can cause (unknown scene or preset, a bad mesh file, a bad resolution or
camera, a frame or textures over the memory budget) is one line on stderr and exit code 2, with
no warnings before it; outputs are checked before any work and written to a temporary file and
renamed, so a failed run never leaves a half-written file.
"""
from __future__ import annotations

import argparse
import dataclasses
import gc
import io
import json
import os
import re
import sys
from pathlib import Path

from pipelines.commands import budget
from pipelines.commands.precompile import precompile
from pipelines.commands.preset_options import add_set_option, presets_from_args, user_lines
from pipelines.commands.output import (UserError, check_output, save_json, save_png,  # noqa: F401
                                       write_atomic)

EXIT_USAGE = 2
# Options whose value may start with a minus (--res -5x5, --camera -1,2,3:...): argparse would
# read such a value as an option of its own ("expected one argument"); main() joins them.
VALUE_OPTIONS = ("--res", "--claims-res", "--camera", "--max-memory")


def _parse_res(text: str) -> tuple[int, int]:
    from pipelines.api import check_resolution
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise UserError(f"--res {text!r}: expected WIDTHxHEIGHT, e.g. 1920x1080") from None
    check_resolution(w, h)
    return w, h


def _load_scene(spec: str, camera: str | None, allow_outside: bool = False,
                max_texture_bytes: int | None = None):
    """A built-in scene or a mesh file; with `camera` (--camera text) seen from there instead,
    near and far fitted to the scene from that eye (the scene's own planes frame its own eye).
    A file may read only inside its own folder unless `allow_outside`; its textures may take at
    most `max_texture_bytes` to decode."""
    from scenes.library import get_scene
    from scenes.framing import user_camera
    from scenes.loaders import load_mesh_file
    is_file = Path(spec).suffix.lower() in (".glb", ".gltf", ".obj", ".ply") or os.sep in spec
    if is_file:
        scene = load_mesh_file(spec, allow_outside=allow_outside, max_texture_bytes=max_texture_bytes)
    else:
        scene = get_scene(spec)
    if camera:
        scene = dataclasses.replace(scene, camera=user_camera(camera, scene.draws))
    return scene


def _check_sequence(args) -> None:
    """--frames within 1..MAX_FRAMES, checked before any work (a bad --camera-path is argparse's)."""
    from pipelines.sequence import MAX_FRAMES
    if not 1 <= args.frames <= MAX_FRAMES:
        raise UserError(f"--frames {args.frames}: must be 1..{MAX_FRAMES}")


def _texture_bytes(scene) -> int:
    """Bytes of the scene's decoded textures (each counted once)."""
    textures = {id(d.material.texture): d.material.texture for d in scene.draws if d.material.texture}
    return sum(t.rgba.nbytes for t in textures.values())


def _budgeted_scene(args, w: int, h: int, rays=()):
    """The scene of a render, refused when its frame and textures would pass the memory budget:
    first the least any frame at this size takes (before loading), then the textures from their
    headers (before decoding), then the frame this scene's graph makes (before rendering)."""
    limit = budget.memory_budget(args.max_memory)
    what = f"rendering {w}x{h} at {args.samples} sample(s)"
    budget.check(budget.least_frame_bytes(w, h, args.samples), limit, what)
    room = None if limit is None else limit - budget.least_frame_bytes(w, h, args.samples)
    scene = _load_scene(args.scene, args.camera, args.allow_outside, room)
    need = budget.frame_bytes(scene, w, h, args.samples, rays) + _texture_bytes(scene)
    budget.check(need, limit, f"rendering {scene.name} at {w}x{h}, {args.samples} sample(s), "
                              "with its textures")
    return scene


def cmd_render(args) -> None:
    from pipelines.commands.heatmaps import MAPS as HEATMAPS, heatmap_rgba
    from pipelines.frame import Settings, run
    w, h = _parse_res(args.res)
    _check_sequence(args)
    preset, = presets_from_args(args.preset, args.set, allow_all=False)
    heatmaps = []
    for spec in args.heatmap or []:
        kind, _, path = spec.partition("=")
        if kind not in HEATMAPS or not path:
            raise UserError(f"--heatmap {spec!r}: expected KIND=PATH with KIND in {', '.join(HEATMAPS)}")
        heatmaps.append((kind, path))
    passes = _ray_passes(args.rays, "--rays")
    order = _ray_order(args.ray_order)
    out = Path(args.output)
    ray_images = {p: out.with_name(f"{out.stem}.{p}{out.suffix or '.png'}") for p in passes}
    for path in (args.output, args.counters, *(path for _, path in heatmaps), *ray_images.values()):
        if path:
            check_output(path)
    if any(kind == "fallbacks" for kind, _ in heatmaps) and preset.architecture != "tbdr":
        raise UserError(f"--heatmap fallbacks: preset {preset.name} is not a tiler (no tile fallbacks)")
    if any(kind == "compression" for kind, _ in heatmaps) and preset.compression.codec.value == "none":
        raise UserError(f"--heatmap compression: preset {preset.name} has no colour codec")
    scene = _budgeted_scene(args, w, h, passes)
    if args.verbose:
        for note in scene.notes:
            print(f"{scene.name}: {note}", file=sys.stderr)
    settings = Settings(w, h, args.samples, frontend=args.frontend, rays=passes,
                        store_depth=args.store_depth, ray_order=order, bvh=args.bvh)
    precompile([preset], {args.samples}, [scene])    # a cold cache: on every core at once
    seq = None
    if args.frames > 1 or args.camera_path != "static":
        from pipelines.sequence import run_sequence
        seq = run_sequence(scene, preset, settings, args.frames, args.camera_path)
        f = seq.frames[-1]              # the image, maps and figures below are the last frame's
    else:
        f = run(scene, preset, settings)
    save_png(args.output, f.image)
    for p, path in ray_images.items():
        img = f.rt.images[p]
        save_png(path, img if img.ndim == 3 else _grey(img))
    if args.counters:
        save_json(args.counters, {"scene": f.scene, "preset": f.preset, "width": w,
                                  "height": h, "samples": args.samples,
                                  "counters": f.counters.as_json(), "derived": f.derived(),
                                  "passes": {p.name: {"kind": p.kind, "counters": p.counters.as_json()}
                                             for p in f.passes},
                                  **({} if seq is None else {
                                      "frames": [{**row, "counters": fr.counters.as_json()}
                                                 for row, fr in zip(seq.per_frame(), seq.frames)],
                                      "sequence": seq.counters.as_json()})})
    for kind, path in heatmaps:
        save_png(path, heatmap_rgba(HEATMAPS[kind](f), w, h))
    d = f.derived()
    from pipelines.cost import frame_cost
    cost = frame_cost(f, preset)
    print(f"{f.scene} via {f.preset} at {w}x{h}: {f.seconds * 1e3:.0f} ms, "
          f"overdraw {d['overdraw']:.2f}, DRAM {d['dram_mb']:.2f} MB/frame "
          f"({d['gbps_at_fps']:.1f} GB/s at 60 fps); model {cost.time.ms:.4g} ms "
          f"({cost.time.fps:,.0f} fps, {', '.join(f'{n}: {u}' for n, u in cost.time.limiters())}), "
          f"{cost.energy.mj:.4g} mJ ({cost.watts(60.0):.3g} W at 60 fps) -> {args.output}")
    if seq is not None:
        for row in seq.per_frame():
            te = (f", transaction elimination wrote {row['te_tiles_written']:,} of {row['te_tiles']:,} "
                  f"tiles ({row['te_saved_bytes'] / 1e6:.3f} MB kept)") if row["te_tiles"] else ""
            print(f"  frame {row['frame']}: DRAM {row['dram_bytes'] / 1e6:.3f} MB, colour written "
                  f"{row['color_write_bytes'] / 1e6:.3f} MB{te}")
        print(f"  sequence of {len(seq.frames)} ({args.camera_path}): DRAM "
              f"{seq.counters.dram_bytes() / 1e6:.3f} MB")
    if f.rt is not None:
        print(f"rays ({f.rt.mode}): " + "; ".join(
            f"{p} {f.counters[f'rt.{p}.rays']:,} rays, "
            f"{f.rt.per_ray('steps', p):.1f} steps and "
            f"{f.rt.per_ray('bytes.node', p) + f.rt.per_ray('bytes.leaf', p):,.0f} B fetched per ray, "
            f"{f.counters[f'rt.{p}.stack.overflows']:,} stack overflows"
            + (f", {f.counters[f'rt.{p}.anyhit']:,} any-hits ({f.counters[f'rt.{p}.anyhit.ignored']:,} "
               "let the ray through)" if f.counters[f"rt.{p}.anyhit"] else "") for p in passes)
            + f" -> {', '.join(str(x) for x in ray_images.values())}")


def _ray_passes(text: str | None, option: str) -> tuple[str, ...]:
    from scenes.model import SceneError, parse_ray_passes
    try:
        return parse_ray_passes(text)
    except SceneError as e:
        raise UserError(f"{option}: {e}") from None


RAY_ORDERS = ("pixel", "sorted")      # pipelines.passes.raytrace.RAY_ORDERS (not imported: numba)
BVH_FORMS = ("auto", "flat", "two-level")   # pipelines.passes.raytrace.BVH_FORMS
BVH_HELP = ("the ray passes' BVH: two-level (a BLAS per mesh, a TLAS over the draws as instances), "
            "flat (one world-space tree), or auto (default: two-level where a mesh is drawn more than once)")


def _ray_order(text: str) -> str:
    if text not in RAY_ORDERS:
        raise UserError(f"--ray-order {text!r}: expected {' or '.join(RAY_ORDERS)}")
    return text


def _grey(values):
    """A float image in [0, 1] (shadow, AO) as opaque grey RGBA8."""
    import numpy as np
    v = np.round(np.clip(values, 0.0, 1.0) * 255.0).astype(np.uint8)
    return np.dstack([v, v, v, np.full_like(v, 255)])


REPORT_FORMATS = ("table", "json", "csv", "md", "html")


FORMAT_OF_SUFFIX = {".json": "json", ".csv": "csv", ".md": "md", ".markdown": "md",
                    ".html": "html", ".htm": "html"}


def _report_format(args) -> str:
    """--format, else the one -o's suffix names, else the terminal table."""
    if args.format:
        return args.format
    return FORMAT_OF_SUFFIX.get(Path(args.output or "").suffix.lower(), "table")


def cmd_report(args) -> None:
    from rich.console import Console
    from scenes.library import scene_names
    from scenes.framing import user_camera

    from pipelines.commands import report, report_text
    from pipelines.commands.claims import evaluate
    from pipelines.frame import Settings
    w, h = _parse_res(args.res)
    if not (0 < args.fps < float("inf")):
        raise UserError(f"--fps {args.fps:g}: must be a positive number")
    if args.explain:
        return _explain(args, w, h)
    _check_sequence(args)
    claims_w, claims_h = _parse_res(args.claims_res)
    if args.camera:
        user_camera(args.camera)        # a bad --camera fails even when no scene is named
    fmt = _report_format(args)
    out = args.output or ("report.html" if fmt == "html" else None)
    if out:
        check_output(out)
    presets = presets_from_args(args.preset, args.set)
    if not presets:
        raise UserError("--preset: name at least one preset, or all")
    scene_specs = args.scenes or ([] if args.claims and fmt != "html" else scene_names())
    rays = _ray_passes(args.rt, "--rt")
    order = _ray_order(args.ray_order)
    # the scenes are rendered one at a time but all held at once: their textures add up, the
    # largest frame is what rendering adds
    limit = budget.memory_budget(args.max_memory)
    what = f"rendering {w}x{h} at {args.samples} sample(s)"
    budget.check(budget.least_frame_bytes(w, h, args.samples), limit, what)
    scenes, held = [], 0
    for spec in scene_specs:
        room = None if limit is None else limit - budget.least_frame_bytes(w, h, args.samples) - held
        scenes.append(_load_scene(spec, args.camera, args.allow_outside, room))
        held += _texture_bytes(scenes[-1])
    if scenes:
        frame = max(budget.frame_bytes(s, w, h, args.samples, rays) for s in scenes)
        budget.check(frame + held, limit, f"rendering {len(scenes)} scene(s) at {w}x{h}, "
                                          f"{args.samples} sample(s), with their textures")
    settings = Settings(w, h, args.samples, args.fps, args.frontend, rays, args.store_depth, order,
                        args.bvh)
    geometry = args.geometry or args.frontend is not None
    command = ["tilesim", *(sys.argv[1:] if args.argv is None else args.argv)]

    gallery = None
    if fmt == "html":
        from pipelines.commands.report_html import Gallery
        gallery = Gallery()
    # (the claims render frames of scenes of their own, post chain included)
    precompile(presets, {args.samples}, None if args.claims or fmt == "html" else scenes)
    rows = report.run_report(scenes, presets, settings, progress=not args.quiet, on_result=gallery,
                             frames=args.frames, camera_path=args.camera_path)
    claims = None
    if args.claims or fmt == "html":
        claims = evaluate(Settings(claims_w, claims_h, args.samples, args.fps))

    if fmt == "table":
        console = Console(width=None if sys.stdout.isatty() and not out else 240,
                          file=io.StringIO() if out else None)
        report_text.print_table(rows, settings, console, geometry, args.surfaces)
        for line in user_lines(presets):
            console.print(line, markup=False, highlight=False)
        if claims:
            report_text.print_claims(claims, console)
        if out:
            text = console.file.getvalue()
            write_atomic(out, lambda tmp: Path(tmp).write_text(text))
        return
    if fmt == "html":
        from pipelines.commands.report_html import build_html
        text = build_html(rows, presets, settings, gallery, claims, command, report.tilesim_version())
    elif fmt == "json":
        text = json.dumps(report.to_json(rows, presets, settings, command, claims), indent=1) + "\n"
    elif fmt == "csv":
        text = report.to_csv(rows)
    else:
        text = report_text.to_markdown(rows, settings, claims, geometry)
        changed = user_lines(presets)
        if changed:
            text += "\nParameters set by the user:\n\n" + "".join(f"- {line}\n" for line in changed)
    if out:
        write_atomic(out, lambda tmp: Path(tmp).write_text(text))
        print(f"wrote {out} ({len(text.encode()) / 1e6:.1f} MB): {len(scenes)} scene(s) x "
              f"{len(presets)} preset(s){', claims' if claims else ''}")
    else:
        sys.stdout.write(text)


def _explain(args, w: int, h: int) -> None:
    """report --explain SCENE --preset P: one frame's time and energy, unit by unit, with the
    arithmetic (report_text.explain_text)."""
    from pipelines.commands import report_text
    from pipelines.frame import Settings, run
    from pipelines.presets import get_preset
    names = [n for spec in args.preset.split(",") if (n := spec.strip())]
    if len(names) != 1 or names == ["all"]:
        raise UserError("--explain: name one preset with --preset")
    preset = get_preset(names[0])
    out = args.output
    if out:
        check_output(out)
    rays = _ray_passes(args.rt, "--rt")
    order = _ray_order(args.ray_order)
    args.scene = args.explain
    scene = _budgeted_scene(args, w, h, rays)
    f = run(scene, preset, Settings(w, h, args.samples, args.fps, args.frontend, rays, args.store_depth,
                                    order, args.bvh))
    text = report_text.explain_text(f, preset, args.fps)
    if out:
        write_atomic(out, lambda tmp: Path(tmp).write_text(text))
    else:
        sys.stdout.write(text)


def cmd_scenes(args) -> None:
    from scenes.library import SCENES
    for e in SCENES.values():
        params = "".join(f":{p.name}" for p in e.params)
        print(f"{e.name + params:<28} {e.description}")


def cmd_presets(args) -> None:
    from pipelines.presets import PRESETS
    from pipelines.presets.files import EXAMPLES, example_files
    if args.keys:
        from pipelines.presets.keys import print_keys
        print_keys(presets_from_args(",".join(args.names) or "all", args.set))
        return
    presets = presets_from_args(",".join(args.names) if args.names else "all", args.set)
    for p in presets:
        print(f"{p.name}  [{p.architecture}]  {p.description}")
        if args.verbose:
            for k, v in p.all_params().items():
                print(f"    {k:<24} {v.value!s:<12} {v.label:<8} {v.source}")
    if not args.names and not args.verbose:      # -v: `tilesim presets nvidia-tiled -v` for a file's
        print(f"preset files ({EXAMPLES}; --preset NAME or --preset PATH.toml):")
        for name, path in example_files().items():
            print(f"{name}  [file]  {presets_from_args(name, [])[0].description}")


class _Parser(argparse.ArgumentParser):
    def error(self, message):          # one line, exit 2 (argparse would add a usage block)
        where = self.prog.partition(" ")[2]         # "render" in a subcommand's parser
        self.exit(EXIT_USAGE, f"tilesim: error: {where + ': ' if where else ''}{message}\n")


DIFF_PIXEL_BYTES = 160      # per pixel of the larger image: 2 x 4 (RGBA8) + 8 (int16) + 24
                            # (float64 RGB squares) + 4 (diff) + masks, and FLIP's float32 copies


def _one_line(e: Exception) -> str:
    text = str(e).strip().splitlines()
    return (text[0] if text else type(e).__name__)[:200]


def cmd_diff(args) -> None:
    import warnings

    import numpy as np
    from PIL import Image

    from pipelines.commands.diff import Tolerance, compare

    def size(path):
        """From the header alone: nothing is decoded before both sizes are known to fit."""
        try:
            with warnings.catch_warnings():
                # PIL warns past MAX_IMAGE_PIXELS and raises past twice that; checked below
                warnings.simplefilter("ignore", Image.DecompressionBombWarning)
                with Image.open(path) as im:
                    w, h = im.size
        except Image.DecompressionBombError:
            raise UserError(f"cannot read image {path}: larger than the decompression-bomb limit "
                            f"({Image.MAX_IMAGE_PIXELS:,} pixels)") from None
        except Exception as e:      # PIL: OSError, SyntaxError, ValueError...; one line each
            raise UserError(f"cannot read image {path}: {_one_line(e)}") from None
        if Image.MAX_IMAGE_PIXELS and w * h > Image.MAX_IMAGE_PIXELS:
            raise UserError(f"cannot read image {path}: {w}x{h} is over the decompression-bomb limit "
                            f"({Image.MAX_IMAGE_PIXELS:,} pixels)")
        return w * h

    def load(path):
        try:
            with Image.open(path) as im:
                return np.asarray(im.convert("RGBA"))
        except Exception as e:      # a truncated or corrupt image fails only when decoded
            raise UserError(f"cannot read image {path}: {_one_line(e)}") from None
    if args.tolerance < 0 or not 0 <= args.max_fraction <= 1:
        raise UserError("--tolerance must be >= 0 and --max-fraction within 0..1")
    if args.output:
        check_output(args.output)
    pixels = max(size(args.a), size(args.b))
    # both images, their int16 difference, its float64 squares, the diff image, FLIP's floats
    budget.check(DIFF_PIXEL_BYTES * pixels, budget.memory_budget(args.max_memory), "comparing these images")
    try:
        d = compare(load(args.a), load(args.b), Tolerance(args.tolerance, args.max_fraction))
    except ValueError as e:
        raise UserError(str(e)) from None
    if args.output:
        save_png(args.output, d.diff)
    print(f"{'match' if d.within else 'DIFFER'}: {d.summary(perceptual=not args.no_flip)}")
    if not d.within:
        raise SystemExit(1)


def _add_input_options(p) -> None:
    p.add_argument("--store-depth", action="store_true", help="store depth at the end of a pass even "
                   "when no later pass reads it (default: don't-care, memoryless on tilers, as an "
                   "application declares a depth buffer it is done with)")
    p.add_argument("--max-memory", metavar="SIZE", help="refuse a frame and textures that need more "
                   "(e.g. 8G, 512M; default: half the available memory)")
    p.add_argument("--allow-outside", action="store_true", help="let a model file read files outside "
                   "its own folder (its material libraries, textures, buffers)")


def _add_sequence_options(p, frames_help: str) -> None:
    from pipelines.sequence import PATHS
    p.add_argument("--frames", type=int, default=1, metavar="N", help=frames_help)
    p.add_argument("--camera-path", default="static", choices=PATHS,
                   help="the camera over --frames: still, or turning 2 degrees a frame about the target")


def _join_values(argv: list[str]) -> list[str]:
    """['--res', '-5x5'] -> ['--res=-5x5'] (VALUE_OPTIONS' values that begin with a minus)."""
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a in VALUE_OPTIONS and i + 1 < len(argv) and re.match(r"-[\d.]", argv[i + 1]):
            out.append(f"{a}={argv[i + 1]}")
            i += 2
            continue
        out.append(a)
        i += 1
    return out


def build_parser() -> argparse.ArgumentParser:
    from renderer.frontend import FRONTENDS

    from pipelines.commands.heatmaps import MAPS as HEATMAPS
    ap = _Parser(prog="tilesim", description="Render a scene through GPU "
                                 "architectures and count what the frame costs.")
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_Parser)
    r = sub.add_parser("render", help="one scene, one preset -> PNG (+ counters, heat maps)")
    r.add_argument("scene", help="built-in scene (see `tilesim scenes`) or a .glb/.gltf/.obj/.ply file")
    r.add_argument("--preset", default="imr-baseline", help="a preset (see `tilesim presets`), "
                   "a shipped preset file's name, or a .toml preset file")
    r.add_argument("--res", default="1280x720", help="WIDTHxHEIGHT (default 1280x720)")
    r.add_argument("--samples", type=int, default=1, choices=(1, 4))
    r.add_argument("--camera", help="eye:target:up:fovy, e.g. 0,1,5:0,0,0:0,1,0:60, near and far "
                   "fitted to the scene from that eye (write --camera=-1,... when it starts with a minus)")
    r.add_argument("-o", "--output", default="out.png")
    r.add_argument("--counters", help="write the counters as JSON here")
    r.add_argument("--frontend", choices=FRONTENDS, help="geometry front end (default: the preset's)")
    r.add_argument("--rays", metavar="PASSES", help="ray passes to trace too, comma-separated: primary, "
                   "shadow, ao; -o gets the raster image darkened by shadow and AO, OUT.<pass>.png each pass")
    r.add_argument("--ray-order", default="pixel", metavar="ORDER",
                   help="shadow and AO rays traced in pixel order (default) or sorted by origin cell "
                        "and direction octant; the images are the same, the caches' figures differ")
    r.add_argument("--bvh", default="auto", choices=BVH_FORMS, help=BVH_HELP)
    _add_sequence_options(r, "render N frames in a row (1-240); the last is written, each is "
                             "reported: what a previous frame saves (transaction elimination on Mali)")
    r.add_argument("--heatmap", action="append", metavar="KIND=PATH",
                   help=f"write a heat map PNG; KIND: {', '.join(HEATMAPS)} (repeatable)")
    r.add_argument("-v", "--verbose", action="store_true",
                   help="say what the scene's file holds that is not modelled (ignored extensions)")
    add_set_option(r)
    _add_input_options(r)
    r.set_defaults(func=cmd_render)
    p = sub.add_parser("report", help="scenes x presets -> the bandwidth report (table, JSON, CSV, "
                                      "Markdown or HTML)")
    p.add_argument("scenes", nargs="*", metavar="SCENE",
                   help="built-in scenes (see `tilesim scenes`) or .glb/.gltf/.obj/.ply files "
                        "(default: every built-in scene)")
    p.add_argument("--camera", help="eye:target:up:fovy for every scene, as render's")
    p.add_argument("--preset", default="all", help="comma-separated presets or .toml preset files, "
                   "or all (default)")
    p.add_argument("--res", default="1280x720")
    p.add_argument("--samples", type=int, default=1, choices=(1, 4))
    p.add_argument("--fps", type=float, default=60.0, help="frame rate for GB/s (default 60)")
    p.add_argument("--frontend", choices=FRONTENDS, help="geometry front end (default: each preset's); "
                   "shows the front-end table")
    p.add_argument("--geometry", action="store_true", help="per scene, what each front end did: vertices "
                   "shaded, ACMR, primitives on to the rasterizer, index/vertex bytes, shader ALU ops")
    p.add_argument("--rt", nargs="?", const="primary,shadow,ao", metavar="PASSES",
                   help="trace ray passes too (default primary,shadow,ao): per ray steps, nodes, "
                        "tests, bytes, stack overflows; their BVH bytes join the DRAM total")
    p.add_argument("--ray-order", default="pixel", metavar="ORDER",
                   help="--rt's shadow and AO rays traced in pixel order (default) or sorted by origin "
                        "cell and direction octant: what sorting does to the ray unit's cache hit "
                        "rates and DRAM bytes per ray")
    p.add_argument("--bvh", default="auto", choices=BVH_FORMS, help=BVH_HELP)
    p.add_argument("--format", choices=REPORT_FORMATS,
                   help="default: from -o's suffix, else table")
    p.add_argument("-o", "--output", help="write here instead of the terminal (html: report.html)")
    p.add_argument("--claims", action="store_true",
                   help="the claims from the source documents, measured (only them unless scenes "
                        "are named)")
    p.add_argument("--claims-res", default="1920x1080",
                   help="resolution the claims are measured at (default 1920x1080: at small sizes "
                        "the framebuffer fits the caches)")
    _add_sequence_options(p, "render each scene x preset as N frames in a row (1-240), each handed "
                             "the last one's history: the columns are the last frame's (steady "
                             "state), with the sequence's DRAM and a per-frame table beside them")
    p.add_argument("--surfaces", action="store_true", help="per surface: raw, crossed and metadata "
                   "MB and the ratio, where a surface moved compressed (Markdown and HTML show it "
                   "always, JSON has it per row under surfaces)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    add_set_option(p)
    p.add_argument("--explain", metavar="SCENE", help="one scene through one --preset: per pass, each "
                   "unit's time and energy and the counters and rates they came from")
    _add_input_options(p)
    p.set_defaults(func=cmd_report)
    d = sub.add_parser("diff", help="compare two images: metrics and a diff image; exit 1 if they "
                                    "differ beyond the tolerance")
    d.add_argument("a")
    d.add_argument("b")
    d.add_argument("-o", "--output", help="write the diff image here (red: difference x16, green: "
                                          "over tolerance)")
    d.add_argument("--tolerance", "--max-abs", type=int, default=0, metavar="T",
                   help="channel difference (8-bit units) a pixel may have and still match (default 0)")
    d.add_argument("--max-fraction", type=float, default=0.0,
                   help="share of pixels allowed over the tolerance (default 0)")
    d.add_argument("--no-flip", action="store_true", help="skip the perceptual FLIP metric (about "
                                                          "a second per megapixel)")
    d.add_argument("--max-memory", metavar="SIZE", help="refuse images that need more (e.g. 4G; "
                   "default: half the available memory)")
    d.set_defaults(func=cmd_diff)
    from viewer.cli import add_parser as add_view_parser     # imports nothing heavy
    add_view_parser(sub)
    s = sub.add_parser("scenes", help="list the built-in scenes")
    s.set_defaults(func=cmd_scenes)
    s = sub.add_parser("presets", help="list the presets (and the preset files shipped)")
    s.add_argument("names", nargs="*", metavar="PRESET", help="only these (names or .toml files)")
    s.add_argument("-v", "--verbose", action="store_true", help="every parameter with its source")
    s.add_argument("--keys", action="store_true", help="every key --set takes: type, unit, range, "
                   "and the built-in value of each preset named (default: all)")
    add_set_option(s)
    s.set_defaults(func=cmd_presets)
    from pipelines.commands.sweep import add_parser as add_sweep_parser    # imports nothing heavy
    add_sweep_parser(sub)
    return ap


def main(argv=None) -> int:
    from scenes.model import SceneError

    from pipelines.presets import PresetError
    from pipelines.commands.compile_notice import compiling_notice
    args = build_parser().parse_args(_join_values(sys.argv[1:] if argv is None else list(argv)))
    args.argv = argv
    try:
        with compiling_notice(sys.stderr):
            args.func(args)
    except (UserError, SceneError, PresetError) as e:
        print(f"tilesim: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("tilesim: interrupted", file=sys.stderr)
        return 130
    return 0


def console(argv=None) -> int:
    """The `tilesim` command: main() in a process of its own. numba's typing registries and
    loaded kernels are a few hundred thousand objects that live as long as the process; moved to
    the collector's permanent generation (gc.freeze), no full collection scans them again, and
    above all not the several that Python's exit runs: 0.3 s of a 1.7 s warm `tilesim render
    triangle` (a perf profile of the exit: gc_collect_main). Not done in main(), which tests call
    in a process that goes on."""
    gc.freeze()                                   # what the imports made
    try:
        return main(argv)
    finally:
        gc.freeze()                               # and what the command made


if __name__ == "__main__":
    sys.exit(console())
