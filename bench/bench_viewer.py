"""Is the viewer interactive? Two 640x360 panels on sponza, the camera orbiting as a mouse drag
would, the window headless (moderngl-window on EGL) and paced at 60 Hz like a vsync'd window.

    python bench/bench_viewer.py [--scene sponza] [--preset imr-baseline,apple-m3] [--res 640x360]
                                 [--move-s 4] [--stops 5] [--json out.json]

Reports, while the camera moves:
- UI frames per second: how often the window redrew (it never waits for a render);
- panel updates per second: how often new renders of the moving camera reached the screen (the
  figure issue 9 asks to stay at or above 10), at what resolution, and how old the camera they
  show was when they appeared;
and, after the camera stops, the seconds until every panel shows the final camera at full
resolution (issue 9: within a second), over several stops. Beside them, the renderer's own time
for the same panels with no window: the bound any viewer meets on this machine at its present load.

The headless window keeps its pixels, so it is redrawn only when the picture changes (a new
frame, mode, help, size, footer text; "redrawn" counts those); a real window redraws every frame,
which on a GPU costs well under a millisecond (on llvmpipe under Xvfb, ~4 ms of CPU).
"""
from __future__ import annotations

import argparse
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
from viewer.schedule import MOVING_SCALE  # noqa: E402

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
    ap.add_argument("--json")
    a = ap.parse_args()
    w, h = (int(v) for v in a.res.split("x"))
    presets = [get_preset(p) for p in a.preset.split(",")]
    if a.threads:
        import numba
        numba.set_num_threads(a.threads)           # this thread's renders in renderer_alone
    v = open_viewer(Options([a.scene], presets, w, h, threads=a.threads), window="headless")
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
    for run in range(a.stops):
        v.on_mouse_press_event(0, 0, 1)
        ui_frames = 0
        redraws0 = v.redraws
        updates = []               # (resolution, age of its camera in s) per new frame shown
        seq_time = {}              # seq -> when the UI asked for it
        last_shown = v.shown
        start = time.perf_counter()
        next_t = start
        gaps = []                  # seconds between the starts of consecutive UI frames
        last = time.perf_counter()
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
        moved = time.perf_counter() - start
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
            "to_full_s": to_full,
            "full_render_s": v.shown.seconds,
        })
        r = runs[-1]
        print(f"run {run + 1}: UI {r['ui_fps']:.1f} fps (longest frame {r['ui_longest_frame_s'] * 1e3:.0f} ms, redrawn {r['redraws_per_s']:.1f}/s), panel updates {r['panel_updates_per_s']:.1f}/s "
              f"at {','.join(r['moving_resolution'])} (camera age {r['median_age_s'] * 1e3:.0f} ms), "
              f"full resolution {r['to_full_s']:.2f} s after stopping "
              f"(the full render itself {r['full_render_s'] * 1e3:.0f} ms)")
    summary = {
        "scene": a.scene, "presets": [p.name for p in presets], "panel": [w, h], "threads": a.threads,
        "ui_fps_min": min(r["ui_fps"] for r in runs),
        "ui_longest_frame_s": max(r["ui_longest_frame_s"] for r in runs),
        "panel_updates_per_s_median": statistics.median(r["panel_updates_per_s"] for r in runs),
        "panel_updates_per_s_min": min(r["panel_updates_per_s"] for r in runs),
        "to_full_s_median": statistics.median(r["to_full_s"] for r in runs),
        "to_full_s_max": max(r["to_full_s"] for r in runs),
        "renderer_alone_s": reference,
        "load_average": os.getloadavg(),
        "runs": runs,
    }
    print(f"load average now {os.getloadavg()[0]:.2f}")
    print(f"summary: UI >= {summary['ui_fps_min']:.1f} fps, longest UI frame "
          f"{summary['ui_longest_frame_s'] * 1e3:.0f} ms; panel updates while moving "
          f"median {summary['panel_updates_per_s_median']:.1f}/s (min {summary['panel_updates_per_s_min']:.1f}); "
          f"full resolution after stopping median {summary['to_full_s_median']:.2f} s "
          f"(max {summary['to_full_s_max']:.2f} s)")
    if a.json:
        Path(a.json).write_text(json.dumps(summary, indent=2) + "\n")
    v.worker.close()
    v.wnd.destroy()
    return 0


if __name__ == "__main__":
    sys.exit(main())
