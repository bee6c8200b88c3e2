"""Two-level against flat BVH traversal (issue 28 point 1): the same rays through spheres' 200
instances and through its flattened tree, interleaved, best of N, recording fetches as the ray
passes do.

    python bench/bench_two_level.py                      # 640x360 camera rays, bvh4 and bvh8
    python bench/bench_two_level.py --res 1280x720 --threads 1
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numba

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipelines.passes.raytrace import camera_rays  # noqa: E402
from renderer.bvh import Triangles, build_layout, trace_rays  # noqa: E402
from renderer.bvh.two_level import build_two_level, trace_two_level  # noqa: E402
from scenes.library import get_scene  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scene", default="spheres")
    p.add_argument("--res", default="640x360")
    p.add_argument("--layouts", default="bvh4,bvh8")
    p.add_argument("--threads", type=int, default=numba.get_num_threads())
    p.add_argument("--rounds", type=int, default=7)
    a = p.parse_args()
    w, h = (int(x) for x in a.res.split("x"))
    numba.set_num_threads(a.threads)
    scene = get_scene(a.scene)
    rays = camera_rays(scene.camera, w, h)
    print(f"{a.scene}: {len(scene.draws)} draws, {w}x{h} camera rays, {a.threads} thread(s), "
          "fetches recorded, best of", a.rounds)
    for name in a.layouts.split(","):
        two = build_two_level(scene.draws, name)
        flat = build_layout(Triangles.of_scene(scene), name)
        fns = {"flat": lambda: trace_rays(flat, rays, cull_back=True, record=True),
               "two-level": lambda: trace_two_level(two, rays, cull_back=True, record=True)}
        best = {k: float("inf") for k in fns}
        for f in fns.values():        # compiled or loaded before timing
            f()
        for _ in range(a.rounds):
            for k, f in fns.items():
                t0 = time.perf_counter()
                f()
                best[k] = min(best[k], time.perf_counter() - t0)
        size = sum(two.bytes.values())
        print(f"{name}: flat {best['flat'] * 1e3:.1f} ms, two-level {best['two-level'] * 1e3:.1f} ms "
              f"({best['two-level'] / best['flat']:.2f}x); structure {size / 1e6:.3f} MB against "
              f"{flat.bytes / 1e6:.3f} MB flat")


if __name__ == "__main__":
    main()
