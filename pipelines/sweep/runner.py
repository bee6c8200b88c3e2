"""Running a sweep's cells: on Dask distributed (a LocalCluster of one worker process per core
by default, or an existing cluster by its scheduler address), or one by one in this process
(`serial`, what the parallel run is checked against).

    summary = run_sweep(sweep, Results("l2.parquet"), workers=2)      # a LocalCluster
    summary = run_sweep(sweep, results, scheduler="tcp://10.0.0.5:8786")
    summary = run_sweep(sweep, results, serial=True)

Consumes a Sweep (pipelines.sweep.spec) and a Results store; skips the cells the store has
finished (same cell key: scene, preset hash, resolution, samples, code version), runs the rest,
journals each row as it arrives and writes the files at the end (on Ctrl-C too). Produces a
Summary: cells run, skipped, failed, wall time, the cells' summed render and load times.

Workers: each Python process renders one cell at a time with numba threads = its machine's
cores / its worker processes (no oversubscription); LocalCluster workers inherit this process's
environment, NUMBA_CACHE_DIR included, so they load the compiled kernels from the one cache.
"""
from __future__ import annotations

import hashlib
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from pipelines.sweep.cell import run_cell

CODE_DIRS = ("renderer", "pipelines", "scenes")      # what a frame's figures depend on
CONNECT_TIMEOUT = "10s"                              # to an existing cluster's scheduler


def code_version() -> str:
    """tilesim's version and a digest of the sources a frame runs (a changed kernel or preset
    is a new version: resume does not reuse its old rows)."""
    from pipelines.commands.report import tilesim_version
    root = Path(__file__).resolve().parents[2]
    h = hashlib.sha256()
    for d in CODE_DIRS:
        for p in sorted((root / d).rglob("*.py")):
            h.update(str(p.relative_to(root)).encode())
            h.update(p.read_bytes())
    return f"{tilesim_version()}+{h.hexdigest()[:12]}"


@dataclass
class Summary:
    total: int
    skipped: int
    ran: int = 0
    failed: int = 0
    wall_s: float = 0.0
    render_s: float = 0.0          # summed over cells: frame_row's time
    cell_s: float = 0.0            # summed over cells: the task's whole time (load + render + row)
    workers: int = 0
    interrupted: bool = False


def _progress(total: int, show: bool):
    from rich.console import Console
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn, TimeRemainingColumn)
    return Progress(TextColumn("sweep"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("{task.fields[failed]} failed"),
                    TextColumn("{task.fields[rate]}"), TimeElapsedColumn(),
                    TextColumn("left"), TimeRemainingColumn(),
                    console=Console(stderr=True), disable=not show, transient=False)


def local_cluster(workers: int | None):
    """A LocalCluster: `workers` processes (default: one per core), one task thread each."""
    import logging

    from distributed import LocalCluster
    import dask
    n = workers or os.cpu_count() or 1
    # Hand every cell to a worker up front (no root-task queuing): a worker starts its next cell
    # when one ends instead of waiting a round trip to the scheduler for it.
    dask.config.set({"distributed.scheduler.worker-saturation": float("inf")})
    env = {"NUMBA_NUM_THREADS": str(max(1, (os.cpu_count() or 1) // n))}
    if os.environ.get("NUMBA_CACHE_DIR"):
        env["NUMBA_CACHE_DIR"] = os.environ["NUMBA_CACHE_DIR"]
    return LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None,
                        silence_logs=logging.ERROR, env=env)


def worker_threads(client) -> dict[str, int]:
    """worker address -> numba threads: its machine's cores shared among the worker threads
    the cluster has on that machine (cores reported by each worker)."""
    info = client.scheduler_info()["workers"]
    cores = client.run(os.cpu_count)                  # address -> that machine's cores
    per_host: dict[str, int] = {}
    for addr, w in info.items():
        per_host[w["host"]] = per_host.get(w["host"], 0) + w.get("nthreads", 1)
    return {addr: max(1, (cores.get(addr) or 1) // per_host[w["host"]]) for addr, w in info.items()}


def scene_homes(cells, workers: list[str]) -> dict[str, str]:
    """scene -> the worker its cells go to first: scenes with the most cells first, each to the
    worker with the fewest cells so far. A scene then loads on one worker (sponza takes 2.6 s),
    and the restriction is loose: an idle worker steals cells from a busy one."""
    count: dict[str, int] = {}
    for c in cells:
        count[c.scene] = count.get(c.scene, 0) + 1
    load = dict.fromkeys(workers, 0)
    home = {}
    for scene in sorted(count, key=lambda s: -count[s]):
        w = min(workers, key=lambda a: load[a])
        home[scene] = w
        load[w] += count[scene]
    return home


def _cell_on_worker(cell, version: str, threads: dict, lean: bool):
    """The task: run_cell with this worker's numba thread count and the tile kernel the sweep's
    process chose and compiled ahead (renderer.raster_kernels.LEAN, which a worker process would
    otherwise take at its default: precompile.choose_variant)."""
    from distributed import get_worker

    from renderer import raster_kernels
    raster_kernels.LEAN = lean
    return run_cell(cell, version, threads.get(get_worker().address))


def run_sweep(sweep, results, workers: int | None = None, scheduler: str | None = None,
              serial: bool = False, progress: bool = True, version: str | None = None) -> Summary:
    """Run the cells `results` lacks (module docstring)."""
    version = version or code_version()
    done = results.done_keys()
    todo = [c for c in sweep.cells if c.key(version) not in done]
    summary = Summary(len(sweep.cells), len(sweep.cells) - len(todo))
    t0 = time.perf_counter()
    show = progress and sys.stderr.isatty()

    def take(row, bar, task):
        results.append(row)
        summary.ran += 1
        summary.failed += row["status"] != "ok"
        summary.render_s += row["render_s"]
        summary.cell_s += row["cell_s"]
        rate = summary.ran / max(time.perf_counter() - t0, 1e-9)
        bar.update(task, advance=1, failed=summary.failed, rate=f"{rate:.2f} cells/s")

    try:
        with _progress(len(todo), show) as bar:
            task = bar.add_task("sweep", total=len(todo), failed=0, rate="")
            if serial or not todo:
                summary.workers = 1 if todo else 0
                for c in todo:
                    take(run_cell(c, version), bar, task)
            else:
                _run_dask(todo, version, workers, scheduler, summary, lambda row: take(row, bar, task))
    except KeyboardInterrupt:
        summary.interrupted = True
    finally:
        summary.wall_s = time.perf_counter() - t0
        if summary.ran or results.rows:      # nothing ran and nothing was there: write nothing
            results.write(sweep.keys)
    return summary


def _run_dask(todo, version, workers, scheduler, summary, take) -> None:
    from distributed import Client, as_completed

    from pipelines.sweep.cell import identity
    from pipelines.sweep.spec import SweepError
    from renderer import raster_kernels
    cluster = None if scheduler else local_cluster(workers)
    try:
        try:
            client = Client(scheduler or cluster, timeout=CONNECT_TIMEOUT)
        except (OSError, TimeoutError, ValueError) as e:
            raise SweepError(f"--scheduler {scheduler}: cannot reach it ({str(e).splitlines()[0][:120]})") from None
        with client:
            threads = worker_threads(client)
            summary.workers = len(threads)
            home = scene_homes(todo, sorted(threads))
            lean = raster_kernels.LEAN
            futures = {client.submit(_cell_on_worker, c, version, threads, lean, pure=False,
                                     workers=[home[c.scene]], allow_other_workers=True): c
                       for c in todo}
            try:
                for f in as_completed(futures):
                    try:
                        row = f.result()
                    except Exception as e:       # the worker died (twice): recorded, go on
                        row = {**identity(futures[f], version), "status": "failed",
                               "error": f"{type(e).__name__}: {str(e)[:200]}", "load_s": 0.0,
                               "render_s": 0.0, "cell_s": 0.0, "finished_at": time.time()}
                    take(row)
                    f.release()
            except BaseException:
                client.cancel(list(futures))
                raise
    finally:
        if cluster is not None:
            cluster.close()
