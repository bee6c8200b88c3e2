"""One sweep cell on a worker: consumes a Cell (pipelines.sweep.spec), renders its frame through
the report's row maker (pipelines.commands.report.frame_row: ray and compute passes included)
and produces one flat row: the cell's identity and swept values, every field of the report's
row, every counter and every derived figure, and the cell's timings. A cell that fails produces
a row with `status` "failed" and its `error`; it never raises.

A worker process keeps the scenes it has loaded (SCENES), so each scene loads once per worker;
the model files of built-in scenes are also kept on disk between processes (scenes.asset_cache).
A worker sets its numba threads once (`numba_threads`) so that the workers of one machine share its
cores instead of each taking all of them.
"""
from __future__ import annotations

import os
import time

SCENES: dict[str, object] = {}          # scene spec -> Scene, this process's
_THREADS: list[int] = []                # the numba thread count this process has set

# Columns that differ run to run (times, where it ran): left out when rows are compared.
TIMING_COLUMNS = ("ms", "load_s", "render_s", "cell_s", "finished_at", "worker")


def numba_threads(n: int | None) -> None:
    """numba.set_num_threads(n) once per process (n at most NUMBA_NUM_THREADS)."""
    if not n or _THREADS == [n]:
        return
    import numba
    n = max(1, min(int(n), numba.config.NUMBA_NUM_THREADS))
    numba.set_num_threads(n)
    _THREADS[:] = [n]


def load_scene(spec: str):
    """The scene `spec` names, once per process (a built-in's model file from the disk cache:
    scenes.asset_cache)."""
    if spec not in SCENES:
        from pipelines.commands.cli import _load_scene
        SCENES[spec] = _load_scene(spec, None)
    return SCENES[spec]


def flat_row(row: dict) -> dict:
    """The report row's flat fields, then every counter and derived figure under its own name
    (a name the row already has keeps the row's value: the same figure)."""
    out = {k: v for k, v in row.items() if not isinstance(v, (dict, list))}
    for k, v in row.get("counters", {}).items():
        out.setdefault(k, v)
    for k, v in row.get("derived", {}).items():
        out.setdefault(k, v)
    return out


def identity(cell, code_version: str) -> dict:
    """The columns that say which cell a row is: resume matches `cell_key`."""
    return {"cell_key": cell.key(code_version), "scene": cell.scene, "preset": cell.preset.name,
            "preset_spec": cell.preset_spec, "preset_hash": cell.preset_hash,
            "width": cell.width, "height": cell.height, "samples": cell.samples, "fps": cell.fps,
            "frontend": cell.frontend or "", "code_version": code_version,
            **dict(cell.swept)}


def run_cell(cell, code_version: str, threads: int | None = None) -> dict:
    """The row of one cell (module docstring)."""
    from pipelines.commands.report import frame_row
    from pipelines.frame import Settings
    t0 = time.perf_counter()
    numba_threads(threads)
    out = identity(cell, code_version)
    load_s = render_s = 0.0
    try:
        scene = load_scene(cell.scene)
        t1 = time.perf_counter()
        load_s = t1 - t0
        settings = Settings(cell.width, cell.height, cell.samples, cell.fps, cell.frontend)
        row, _ = frame_row(scene, cell.preset, settings)
        render_s = time.perf_counter() - t1
        flat = flat_row(row)
        for k in ("scene", "preset", "width", "height", "samples", "fps"):
            flat.pop(k, None)            # the identity's (a file scene's spec, not its name)
        out.update(flat)
        out.update(status="ok", error="")
    except Exception as e:               # recorded, and the sweep goes on
        text = str(e).strip().splitlines()
        out.update(status="failed", error=f"{type(e).__name__}: {text[0] if text else ''}"[:300])
    out.update(load_s=load_s, render_s=render_s, cell_s=time.perf_counter() - t0,
               finished_at=time.time(), worker=f"{os.uname().nodename}:{os.getpid()}")
    return out
