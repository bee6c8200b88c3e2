"""The bandwidth report: scenes x presets -> rows of counters and derived figures, printed as a
terminal table, or written as JSON / CSV for tools."""
from __future__ import annotations

import csv
import sys

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from renderer.counters import STREAMS

from .api import render


def run_report(scenes, presets, width, height, samples=1, progress=True) -> list[dict]:
    rows = []
    with Progress(transient=True, disable=not progress) as bar:
        task = bar.add_task("rendering", total=len(scenes) * len(presets))
        for scene in scenes:
            for preset in presets:
                bar.update(task, description=f"{scene.name} / {preset.name}")
                r = render(scene, preset, width, height, samples)
                d = r.derived()
                rows.append({
                    "scene": scene.name, "preset": preset.name, "triangles": scene.n_triangles,
                    "width": width, "height": height, "samples": samples,
                    "ms": round(r.seconds * 1e3, 1), "overdraw": d["overdraw"],
                    "dram_mb": d["dram_mb"], "dram_read_mb": d["dram_read_mb"],
                    "dram_write_mb": d["dram_write_mb"],
                    **{f"dram_mb.{s}": d.get(f"dram_mb.{s}", 0.0) for s in STREAMS},
                    "gbps_at_60fps": d["gbps_at_fps"], "dram_bw_share": d.get("dram_bw_share", 0.0),
                    "counters": r.counters.as_json(),
                })
                bar.advance(task)
    return rows


def _streams_used(rows) -> list[str]:
    return [s for s in STREAMS if any(r[f"dram_mb.{s}"] for r in rows)]


def print_table(rows, width, height, console: Console | None = None) -> None:
    streams = _streams_used(rows)
    t = Table(title=f"DRAM per frame at {width}x{height} (MB)", title_justify="left")
    for col in ("scene", "preset", "tris", "overdraw", *streams, "DRAM MB", "GB/s@60", "% BW", "ms"):
        t.add_column(col, justify="left" if col in ("scene", "preset") else "right")
    for r in rows:
        t.add_row(r["scene"], r["preset"], f"{r['triangles']:,}", f"{r['overdraw']:.2f}",
                  *(f"{r[f'dram_mb.{s}']:.2f}" for s in streams), f"{r['dram_mb']:.2f}",
                  f"{r['gbps_at_60fps']:.1f}", f"{100 * r['dram_bw_share']:.1f}", f"{r['ms']:.0f}")
    # A pipe or a log gets the whole table, not one folded to 80 columns.
    (console or Console(width=None if sys.stdout.isatty() else 200)).print(t)


def to_csv(rows, path) -> None:
    cols = [k for k in rows[0] if k != "counters"] if rows else []
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
