"""`tilesim view`: the CLI face of the viewer. Importing this module imports nothing heavy (no
moderngl, no numba), so pipelines/cli.py can register the subcommand at start-up:

    from viewer.cli import add_parser as add_view_parser
    add_view_parser(sub)                     # sub: build_parser()'s subparsers

The handler raises pipelines.commands.output.UserError (one line, exit 2) for every error a user can meet,
no display and no OpenGL 3.3 included.
"""
from __future__ import annotations

MODES = ("image", "overdraw", "dram", "fallbacks", "depth")     # viewer.modes.MODES, not imported:
                                                                # that pulls numpy in at start-up
FRONTENDS = ("legacy", "ngg", "mesh")     # renderer.frontend.FRONTENDS (tested equal)
PICTURE_HZ = 34.0                         # viewer.schedule.PICTURE_HZ (tested equal)
WINDOWS = ("pyglet", "glfw", "sdl2", "pygame2", "pyside2", "pyqt5", "tk", "headless")


def add_parser(subparsers):
    v = subparsers.add_parser("view", help="interactive window: presets side by side, heat maps, live counters")
    v.add_argument("scene", nargs="?", default="sponza",
                   help="built-in scene (N / P step through them) or a .glb/.gltf/.obj/.ply file")
    v.add_argument("--preset", default="imr-baseline,amd-rdna2,apple-m3",
                   help="comma-separated presets or .toml preset files, 1 to 4, one panel each")
    from pipelines.commands.preset_options import add_set_option     # argparse only
    add_set_option(v)
    v.add_argument("--res", default="640x360", help="one panel's WIDTHxHEIGHT (default 640x360)")
    v.add_argument("--samples", type=int, default=1, choices=(1, 4), help="MSAA at start (M toggles)")
    v.add_argument("--scale", type=float, default=1.0, choices=(0.25, 0.5, 0.75, 1.0),
                   help="resolution scale at start (+ / - change it)")
    v.add_argument("--mode", default="image", choices=MODES, help="what the panels show at start (1..5 switch)")
    v.add_argument("--rays", metavar="PASSES",
                   help="trace ray passes at full resolution too, comma-separated: primary, shadow, ao "
                        "(their images and BVH steps per pixel become modes; Tab reaches them)")
    v.add_argument("--frontend", choices=FRONTENDS, help="geometry front end for every panel "
                   "(default: each preset's; G steps through them)")
    v.add_argument("--threads", type=int, help="numba threads that render (default: every core; "
                   "1 can be faster on a machine busy with other work)")
    v.add_argument("--picture-hz", type=float, default=PICTURE_HZ, metavar="HZ",
                   help=f"pictures a second at most while the camera moves (default {PICTURE_HZ:g}): "
                        "the rest of the machine renders their costs; 0 draws as many as it can")
    v.add_argument("--camera", help="eye:target:up:fovy replacing the scene's camera (near and far "
                   "fitted to the scene from that eye)")
    v.add_argument("--window", default="pyglet", choices=WINDOWS,
                   help="moderngl-window backend (default pyglet; headless renders off screen)")
    v.add_argument("--out-dir", default=".", help="where S saves screenshots (PNG + counters JSON)")
    v.add_argument("--screenshot", metavar="PATH",
                   help="no interaction: wait for full resolution, save PATH (+ .json), exit")
    v.add_argument("--frames", type=int, help="stop after this many frames")
    v.add_argument("--max-memory", metavar="SIZE", help="refuse panels and textures that need more "
                   "(e.g. 8G; default: half the available memory)")
    v.add_argument("--allow-outside", action="store_true", help="let a model file read files outside "
                   "its own folder")
    v.set_defaults(func=cmd_view)
    return v


def options_from_args(args):
    """argparse namespace -> viewer.app.Options (scenes, presets and camera validated)."""
    from pathlib import Path

    from pipelines.api import check_resolution
    from pipelines.commands import budget
    from pipelines.commands.output import UserError
    from pipelines.commands.preset_options import presets_from_args
    from scenes.library import scene_names
    from scenes.framing import user_camera
    from scenes.model import SceneError, parse_ray_passes

    from .app import Options, load_scene
    from .layout import MAX_PANELS
    try:
        w, h = (int(v) for v in args.res.lower().split("x"))
    except ValueError:
        raise UserError(f"--res {args.res!r}: expected WIDTHxHEIGHT, e.g. 640x360") from None
    check_resolution(w, h)
    names = [p for p in args.preset.split(",") if p]
    if not 1 <= len(names) <= MAX_PANELS:
        raise UserError(f"--preset: the viewer shows 1 to {MAX_PANELS} presets, got {len(names)}")
    presets = presets_from_args(args.preset, getattr(args, "set", None), allow_all=False)
    if args.threads is not None and args.threads < 1:
        raise UserError(f"--threads {args.threads}: must be at least 1")
    if not 0.0 <= args.picture_hz <= 1000.0:         # (NaN fails both)
        raise UserError(f"--picture-hz {args.picture_hz:g}: must be 0 to 1000")
    if not Path(args.out_dir).is_dir():
        raise UserError(f"--out-dir {args.out_dir}: no such directory")
    try:
        rays = parse_ray_passes(args.rays)
    except SceneError as e:
        raise UserError(f"--rays: {e}") from None
    # every panel may render at 4 samples (M toggles them): that is what the budget must hold
    limit = budget.memory_budget(args.max_memory)
    what = f"{len(presets)} panel(s) of {w}x{h} at 4 samples"
    budget.check(len(presets) * budget.least_frame_bytes(w, h, 4), limit, what)
    room = None if limit is None else limit - len(presets) * budget.least_frame_bytes(w, h, 4)
    scene = load_scene(args.scene, args.allow_outside, room)   # SceneError now, before any window
    budget.check(len(presets) * budget.frame_bytes(scene, w, h, 4, rays), limit, what)
    builtins = scene_names()
    specs = builtins if args.scene in builtins else [args.scene, *builtins]
    camera = None
    if args.camera:
        camera = user_camera(args.camera, scene.draws)
    return Options(specs, presets, w, h, args.samples, args.scale, specs.index(args.scene), camera,
                   args.out_dir, {args.scene: scene}, args.mode, rays, args.threads, args.frontend,
                   args.picture_hz)


def cmd_view(args) -> None:
    from pipelines.commands.output import UserError, check_output

    from .app import ViewerError, open_viewer, run, screenshot_json
    if args.screenshot:             # before any work, as render's outputs
        check_output(args.screenshot)
        check_output(screenshot_json(args.screenshot))
    options = options_from_args(args)
    from pipelines.commands.precompile import precompile
    # a cold cache: on every core at once, before the window; M toggles 4 samples
    precompile(options.presets, {options.samples, 4})
    try:
        viewer = open_viewer(options, window=args.window)
    except ViewerError as e:
        raise UserError(str(e)) from None
    saved = run(viewer, frames=args.frames, screenshot=args.screenshot)
    if args.screenshot and not saved:
        raise UserError(f"no screenshot saved: the window closed or --frames {args.frames} ran "
                        f"out before every panel reached full resolution (drop --frames)")
