"""Where a textured frame's time goes: one game level through a preset at 1920x1080, as loaded
(the file's trilinear samplers), with nearest-mip samplers, untextured, and with the textures
but every format RGBA8, the best of N frames each (geometry set up afresh every frame).

    python bench/bench_texture.py [SCENE] [--preset imr-baseline] [--res 1920x1080] [--repeats 5]

Each variant changes the scene, not the engine: the differences between the rows are what
sampling, trilinear's second level and the formats cost the raster (the texture L1's footprint
is taken in every textured row).
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pipelines import render  # noqa: E402
from pipelines.presets import get_preset  # noqa: E402
from pipelines.presets.keys import apply_sets  # noqa: E402
from renderer.geometry import forget_setups  # noqa: E402
from scenes.library import get_scene  # noqa: E402
from scenes.model import MipFilter  # noqa: E402


def best_ms(scene, preset, w, h, repeats) -> tuple[float, dict]:
    render(scene, preset, w, h)                       # compile or load, decode textures
    times = []
    for _ in range(repeats):
        forget_setups()
        t0 = time.perf_counter()
        r = render(scene, preset, w, h)
        times.append(time.perf_counter() - t0)
    return 1e3 * min(times), r.counters


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scene", nargs="?", default="pul1duel")
    ap.add_argument("--preset", default="imr-baseline")
    ap.add_argument("--res", default="1920x1080")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    w, h = (int(v) for v in args.res.lower().split("x"))
    scene = get_scene(args.scene)
    preset = get_preset(args.preset)

    def materials(fn):
        return dataclasses.replace(scene, draws=[dataclasses.replace(d, material=fn(d.material))
                                                 for d in scene.draws])
    nearest = materials(lambda m: m if m.texture is None else dataclasses.replace(
        m, texture=dataclasses.replace(m.texture, mip=MipFilter.NEAREST)))
    untextured = materials(lambda m: dataclasses.replace(m, texture=None))
    rgba8 = apply_sets(preset, [("tex.format", "rgba8"), ("tex.alpha_format", "rgba8")])
    print(f"{args.scene} through {args.preset} at {w}x{h}, best of {args.repeats} frames")
    for label, sc, p in (("as loaded", scene, preset), ("nearest-mip", nearest, preset),
                         ("untextured", untextured, preset), ("all rgba8", scene, rgba8)):
        ms, c = best_ms(sc, p, w, h, args.repeats)
        print(f"  {label:12s} {ms:8.1f} ms   shaded {c['raster.shaded']:>10,}   texels "
              f"{c['raster.texels']:>11,}   L1 lookups {c['raster.texture_l1_lookups']:>10,}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
