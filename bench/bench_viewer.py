"""Is the viewer interactive? Two 640x360 panels on sponza, the camera orbiting as a mouse drag
would, the window headless (moderngl-window on EGL) and paced at 60 Hz like a vsync'd window.

    python bench/bench_viewer.py [--scene sponza] [--preset imr-baseline,apple-m3] [--res 640x360]
                                 [--move-s 4] [--stops 5] [--json out.json]

Reports, while the camera moves:
- UI frames per second: how often the window redrew (it never waits for a render);
- panel updates per second: how often new renders of the moving camera reached the screen (the
  figure issue 9 asks to stay at or above 10, issue 29 at 30 at full resolution), at what
  resolution, and how old the camera they show was when they appeared;
- the costs: in image mode the moving frames are pictures (pipelines.picture) and the counters
  beside them come from the costs thread (viewer.schedule): how often new costs reached the
  screen, and how far behind the picture's camera theirs was;
- where the CPU went while the camera moved, by thread (Linux: /proc/self/task);
and, after the camera stops, the seconds until every panel shows the final camera at full
resolution (issue 9: within a second), over several stops. Beside them, the renderer's own time
for the same panels with no window: the bound any viewer meets on this machine at its present load.

The headless window keeps its pixels, so it is redrawn only when the picture changes (a new
frame, mode, help, size, footer text; "redrawn" counts those); a real window redraws every frame,
which on a GPU costs well under a millisecond (on llvmpipe under Xvfb, ~4 ms of CPU).
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pipelines.presets import get_preset  # noqa: E402
from viewer.app import Options, open_viewer  # noqa: E402
from viewer.schedule import MOVING_SCALE, PICTURE_HZ  # noqa: E402

UI_HZ = 60.0
DRAG_PX = 4.0          # per UI frame: 240 px/s, a brisk orbit


def paced_step(viewer, next_t: float) -> float:
    viewer.step()
    next_t += 1.0 / UI_HZ
    wait = next_t - time.perf_counter()
    if wait > 0:
        time.sleep(wait)
    else:
        next_t = time.perf_counter()
    return next_t


def thread_seconds() -> dict:
    """CPU seconds so far per thread name (numbered pool threads taken together); {} where
    /proc/self/task is not there. Unnamed threads (numba's, the GL driver's) go by their OS name."""
    import re
    import threading
    names = {str(t.native_id): re.sub(r"_\d+$", "", t.name) for t in threading.enumerate()}
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    out = collections.Counter()
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return {}
    for tid in tids:
        try:
            stat = Path(f"/proc/self/task/{tid}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()         # utime, stime: fields 14, 15
        out[names.get(tid, stat[stat.index("(") + 1:stat.rindex(")")])] += \
            (int(fields[11]) + int(fields[12])) / tick
    return out


def renderer_alone(v, presets, w, h, repeats: int = 3) -> dict:
    """Seconds for one request's panels, rendered with no window running: the bound the viewer
    can reach at best on this machine under its present load."""
    from pipelines.api import render
    from viewer.layout import scaled
    out = {}
    for name, (rw, rh) in (("moving", scaled(w, h, MOVING_SCALE)), ("full", (w, h))):
        for p in presets:
            render(v.scene, p, rw, rh)                    # warm (numba cache load)
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            for p in presets:
                render(v.scene, p, rw, rh)
            times.append(time.perf_counter() - t)
        out[name] = statistics.median(times)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scene", default="sponza")
    ap.add_argument("--preset", default="imr-baseline,apple-m3")
    ap.add_argument("--res", default="640x360")
    ap.add_argument("--move-s", type=float, default=4.0, help="seconds of camera movement per run")
    ap.add_argument("--stops", type=int, default=5, help="move-then-stop runs")
    ap.add_argument("--threads", type=int, help="numba threads rendering (default: every core)")
    ap.add_argument("--picture-hz", type=float, default=PICTURE_HZ,
                    help=f"moving pictures a second at most (default {PICTURE_HZ:g}; 0: unpaced)")
    ap.add_argument("--json")
    a = ap.parse_args()
    w, h = (int(v) for v in a.res.split("x"))
    presets = [get_preset(p) for p in a.preset.split(",")]
    if a.threads:
        import numba
        numba.set_num_threads(a.threads)           # this thread's renders in renderer_alone
    v = open_viewer(Options([a.scene], presets, w, h, threads=a.threads, picture_hz=a.picture_hz),
                    window="headless")
    reference = renderer_alone(v, presets, w, h)
    t0 = time.perf_counter()
    v.wait_full(120.0)                     # numba cache load and first renders
    print(f"{a.scene}, {' + '.join(p.name for p in presets)}, {w}x{h} per panel: "
          f"first full frame after {time.perf_counter() - t0:.2f} s")
    print(f"renderer alone, no window: {len(presets)} panels at {MOVING_SCALE:g}x in "
          f"{reference['moving'] * 1e3:.0f} ms (at most {1 / reference['moving']:.1f} updates/s), "
          f"at full resolution in {reference['full'] * 1e3:.0f} ms; load average {os.getloadavg()[0]:.2f} "
          f"on {os.cpu_count()} CPUs")
    runs = []
    moving_cpu, moving_s = collections.Counter(), 0.0
    for run in range(a.stops):
        v.on_mouse_press_event(0, 0, 1)
        ui_frames = 0
        redraws0 = v.redraws
        updates = []               # (resolution, age of its camera in s) per new frame shown
        costs = []                 # (seq of the costs shown, s their camera was behind the picture's)
        seq_time = {}              # seq -> when the UI asked for it
        last_shown = v.shown
        start = time.perf_counter()
        next_t = start
        gaps = []                  # seconds between the starts of consecutive UI frames
        last = time.perf_counter()
        cpu0 = thread_seconds()
        while time.perf_counter() - start < a.move_s:
            now = time.perf_counter()
            gaps.append(now - last)
            last = now
            v.on_mouse_drag_event(0, 0, DRAG_PX if run % 2 == 0 else -DRAG_PX, 0)
            seq_time[v.seq] = time.perf_counter()
            next_t = paced_step(v, next_t)
            ui_frames += 1
            if v.shown is not last_shown:
                last_shown = v.shown
                r = last_shown.request
                if r.seq in seq_time:
                    updates.append((f"{r.width}x{r.height}", time.perf_counter() - seq_time[r.seq]))
                    c = last_shown.costed.request
                    if not costs or costs[-1][0] != c.seq:
                        costs.append((c.seq, r.made_at - c.made_at))
        moved = time.perf_counter() - start
        moving_cpu.update(thread_seconds())
        moving_cpu.subtract(cpu0)
        moving_s += moved
        v.on_mouse_release_event(0, 0, 1)
        stop = time.perf_counter()
        while not v.is_full():
            next_t = paced_step(v, next_t)
        to_full = time.perf_counter() - stop
        runs.append({
            "ui_fps": ui_frames / moved,
            "redraws_per_s": (v.redraws - redraws0) / moved,
            "ui_longest_frame_s": max(gaps[1:], default=0.0),
            "panel_updates_per_s": len(updates) / moved,
            "moving_resolution": sorted({u[0] for u in updates}),
            "median_age_s": statistics.median(u[1] for u in updates) if updates else None,
            "costs_updates_per_s": max(len(costs) - 1, 0) / moved,     # (the first: from before)
            "median_costs_behind_s": statistics.median(c[1] for c in costs[1:]) if costs[1:] else None,
            "to_full_s": to_full,
            "full_render_s": v.shown.seconds,
        })
        r = runs[-1]
        print(f"run {run + 1}: UI {r['ui_fps']:.1f} fps (longest frame {r['ui_longest_frame_s'] * 1e3:.0f} ms, redrawn {r['redraws_per_s']:.1f}/s), panel updates {r['panel_updates_per_s']:.1f}/s "
              f"at {','.join(r['moving_resolution'])} (camera age {r['median_age_s'] * 1e3:.0f} ms), "
              f"new costs {r['costs_updates_per_s']:.1f}/s"
              + (f" ({r['median_costs_behind_s'] * 1e3:.0f} ms behind the picture), "
                 if r['median_costs_behind_s'] is not None else ", ") +
              f"full resolution {r['to_full_s']:.2f} s after stopping "
              f"(the full render itself {r['full_render_s'] * 1e3:.0f} ms)")
    behind = [r["median_costs_behind_s"] for r in runs if r["median_costs_behind_s"] is not None]
    summary = {
        "scene": a.scene, "presets": [p.name for p in presets], "panel": [w, h], "threads": a.threads,
        "picture_hz": a.picture_hz,
        "ui_fps_min": min(r["ui_fps"] for r in runs),
        "ui_longest_frame_s": max(r["ui_longest_frame_s"] for r in runs),
        "panel_updates_per_s_median": statistics.median(r["panel_updates_per_s"] for r in runs),
        "panel_updates_per_s_min": min(r["panel_updates_per_s"] for r in runs),
        "to_full_s_median": statistics.median(r["to_full_s"] for r in runs),
        "to_full_s_max": max(r["to_full_s"] for r in runs),
        "costs_updates_per_s_median": statistics.median(r["costs_updates_per_s"] for r in runs),
        "costs_behind_s_median": statistics.median(behind) if behind else None,
        "moving_cpu_cores": {k: v / moving_s for k, v in moving_cpu.most_common() if v > 0},
        "renderer_alone_s": reference,
        "load_average": os.getloadavg(),
        "runs": runs,
    }
    print("CPU while moving, cores by thread: " + ", ".join(
        f"{k} {v:.2f}" for k, v in summary["moving_cpu_cores"].items() if v >= 0.005))
    print(f"load average now {os.getloadavg()[0]:.2f}")
    print(f"summary: UI >= {summary['ui_fps_min']:.1f} fps, longest UI frame "
          f"{summary['ui_longest_frame_s'] * 1e3:.0f} ms; panel updates while moving "
          f"median {summary['panel_updates_per_s_median']:.1f}/s (min {summary['panel_updates_per_s_min']:.1f}), "
          f"new costs median {summary['costs_updates_per_s_median']:.1f}/s"
          + (f" ({summary['costs_behind_s_median'] * 1e3:.0f} ms behind)"
             if summary["costs_behind_s_median"] is not None else "") + "; "
          f"full resolution after stopping median {summary['to_full_s_median']:.2f} s "
          f"(max {summary['to_full_s_max']:.2f} s)")
    if a.json:
        Path(a.json).write_text(json.dumps(summary, indent=2) + "\n")
    v.worker.close()
    v.wnd.destroy()
    return 0


if __name__ == "__main__":
    sys.exit(main())
