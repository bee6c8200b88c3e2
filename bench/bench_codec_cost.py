"""What compression costs the simulator: the same frame through one preset with its codecs on
and off (comp.codec / comp.depth = none), in one process, frames alternating so that the
machine's drift moves both alike. Prints each variant's frame and raster times (ms, sorted).

    python bench/bench_codec_cost.py [scene] [preset] [--res 1920x1080] [--rounds 4]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pipelines.arch.imr as imr  # noqa: E402
from pipelines.frame import Settings, run  # noqa: E402
from pipelines.presets import get_preset  # noqa: E402
from pipelines.presets.keys import apply_sets  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scene", nargs="?", default="spheres")
    ap.add_argument("preset", nargs="?", default="amd-rdna2")
    ap.add_argument("--res", default="1920x1080")
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()
    w, h = (int(x) for x in args.res.split("x"))
    p = get_preset(args.preset)
    variants = {"codecs on": p, "codecs off": apply_sets(p, [("comp.codec", "none"),
                                                             ("comp.depth", "none")])}
    frame = {k: [] for k in variants}
    raster = {k: [] for k in variants}
    current = [None]
    rasterize = imr.rasterize

    def timed(*a, **k):          # the IMR and DSBR raster (a tiler's runs inside its render)
        t = time.perf_counter()
        out = rasterize(*a, **k)
        raster[current[0]].append(time.perf_counter() - t)
        return out
    imr.rasterize = timed
    for k, v in variants.items():           # warm: compile or load the kernels
        current[0] = k
        run(args.scene, v, Settings(w, h))
        raster[k].clear()
    for _ in range(args.rounds):
        for k, v in variants.items():
            current[0] = k
            t = time.perf_counter()
            run(args.scene, v, Settings(w, h))
            frame[k].append(time.perf_counter() - t)
    for k in variants:
        ms = sorted(round(x * 1e3) for x in frame[k])
        rs = sorted(round(x * 1e3) for x in raster[k])
        print(f"{args.scene} {args.preset} {k}: frame ms {ms}" + (f", raster ms {rs}" if rs else ""))


if __name__ == "__main__":
    main()
