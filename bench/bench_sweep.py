"""Sweep speed (issue 26): the same cells (presets x scenes at 640x360 by default) run
  (a) one by one in one process (numba on every core): the baseline, a plain loop over
      pipelines.commands.report.frame_row, no sweep machinery;
  (b) by `tilesim sweep --workers N` on a LocalCluster (N processes, numba threads = cores / N).
Each runs in a fresh process, so both pay interpreter start and numba's cache loads once per
process. Prints wall times, their ratio, and the sweep's per-cell overhead:
  in-task   scene lookup + row building: sum(cell_s - render_s) / sum(render_s)
  gaps      a worker idle between its cells (scheduling, results back): sum / sum(render_s)
  per cell  in-task + gaps: what the sweep adds to each cell's render
  whole     everything that is not rendering while the workers hold cells (scheduling, results
            coming back, journal writes, the tail where one worker idles):
            (N x busy span - sum(render_s)) / sum(render_s), busy span from the first cell's start
            to the last cell's end as the rows record them
and writes the figures as JSON (-o).

    python bench/bench_sweep.py                       # 12 presets x 14 scenes, 640x360, 2 workers
    python bench/bench_sweep.py --scenes quad,spheres --presets amd-rdna2,apple-m3 --res 320x180
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def spec_text(scenes, presets, res) -> str:
    q = lambda xs: "[" + ", ".join(f'"{x}"' for x in xs) + "]"     # noqa: E731
    return f"scenes = {q(scenes)}\npresets = {q(presets)}\nresolutions = [\"{res}\"]\nsamples = [1]\n"


def baseline(spec: str, out: str) -> None:
    """The cells one by one in this process (run as a child): writes per-cell render times."""
    from pipelines.commands.report import frame_row
    from pipelines.frame import Settings
    from pipelines.sweep.cell import load_scene
    from pipelines.sweep.spec import load
    t0 = time.perf_counter()
    times = []
    for c in load(spec).cells:
        t = time.perf_counter()
        frame_row(load_scene(c.scene), c.preset, Settings(c.width, c.height, c.samples, c.fps))
        times.append(time.perf_counter() - t)
    Path(out).write_text(json.dumps({"cells": len(times), "render_s": sum(times),
                                     "wall_in_process_s": time.perf_counter() - t0}))


def env() -> dict:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), e.get("PYTHONPATH")]))
    return e


def main() -> None:
    from pipelines.presets import PRESETS
    from scenes.library import scene_names
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scenes", default=",".join(scene_names()))
    ap.add_argument("--presets", default=",".join(PRESETS))
    ap.add_argument("--res", default="640x360")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("-o", "--output", help="write the figures here as JSON")
    ap.add_argument("--baseline-child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.baseline_child:
        return baseline(*args.baseline_child)
    tmp = Path(tempfile.mkdtemp(prefix="bench_sweep."))
    spec = tmp / "bench.toml"
    spec.write_text(spec_text(args.scenes.split(","), args.presets.split(","), args.res))

    subprocess.run([sys.executable, __file__, "--baseline-child", str(spec), str(tmp / "warm.json")],
                   check=True, env=env())    # fills the scene cache and the OS file cache for both
    t = time.perf_counter()
    subprocess.run([sys.executable, __file__, "--baseline-child", str(spec), str(tmp / "base.json")],
                   check=True, env=env())
    base_wall = time.perf_counter() - t
    base = json.loads((tmp / "base.json").read_text())

    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pipelines.commands.cli", "sweep", str(spec), "-q",
                    "--workers", str(args.workers), "-o", str(tmp / "sweep.parquet")],
                   check=True, env=env(), cwd=tmp)
    sweep_wall = time.perf_counter() - t
    from pipelines.sweep.results import read_rows
    rows = read_rows(tmp / "sweep.parquet")
    render = sum(r["render_s"] for r in rows)
    cell = sum(r["cell_s"] for r in rows)
    span = max(r["finished_at"] for r in rows) - min(r["finished_at"] - r["cell_s"] for r in rows)
    n = len(rows)
    # between one cell's end and the next one's start on the same worker: scheduling, the row
    # going back, the next cell arriving (the driver's journal write overlaps the next cell)
    gaps = 0.0
    by_worker: dict[str, list] = {}
    for r in rows:
        by_worker.setdefault(r["worker"], []).append((r["finished_at"] - r["cell_s"], r["finished_at"]))
    for spans in by_worker.values():
        spans.sort()
        gaps += sum(max(0.0, b[0] - a[1]) for a, b in zip(spans, spans[1:]))
    figures = {
        "cells": n, "res": args.res, "workers": args.workers, "cores": os.cpu_count(),
        "failed": sum(r["status"] != "ok" for r in rows),
        "one_process_wall_s": round(base_wall, 2),
        "one_process_render_s": round(base["render_s"], 2),
        "sweep_wall_s": round(sweep_wall, 2),
        "ratio_sweep_to_one_process": round(sweep_wall / base_wall, 3),
        "sweep_render_s_summed": round(render, 2),
        "mean_cell_render_ms_one_process": round(1e3 * base["render_s"] / base["cells"], 1),
        "mean_cell_render_ms_in_sweep": round(1e3 * render / n, 1),
        "overhead_in_task_scene_load_and_row": round((cell - render) / render, 4),
        "overhead_scheduling_and_results": round(gaps / render, 4),
        "overhead_per_cell": round(((cell - render) + gaps) / render, 4),
        "overhead_whole": round((args.workers * span - render) / render, 4),
        "sweep_startup_and_shutdown_s": round(sweep_wall - span, 2),
    }
    print(json.dumps(figures, indent=1))
    if args.output:
        Path(args.output).write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
