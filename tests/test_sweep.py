"""`tilesim sweep` (issue 26): the grid a spec expands to; a LocalCluster of 2 worker processes
gives the rows that running the cells one by one in this process gives; a failing cell is
recorded and the sweep goes on; an interrupted sweep resumes without redoing finished cells;
plots. Frames are tiny (64x64): the point is the machinery, not the figures."""
from __future__ import annotations

import pytest

from pipelines.sweep import runner
from pipelines.sweep.cell import TIMING_COLUMNS
from pipelines.sweep.results import Results, read_rows
from pipelines.sweep.spec import load
from tests.test_hostile_input import assert_one_line, run_cli

SPEC = """
scenes = ["quad", "overdraw:3", "bad.obj"]
presets = ["amd-rdna2", "apple-m3"]
resolutions = ["64x64"]
samples = [1]
[grid]
"l2.size" = { start = "1MiB", stop = "4MiB", factor = 2 }
"tbdr.tile" = [16, 32]
"""


@pytest.fixture(autouse=True)
def scene_cache(tmp_path, monkeypatch):
    """Model files' scenes are cached in this test's folder (workers inherit the environment)."""
    monkeypatch.setenv("TILESIM_CACHE_DIR", str(tmp_path / "cache"))
    from pipelines.sweep import cell
    monkeypatch.setattr(cell, "SCENES", {})
    return tmp_path / "cache" / "scenes"


@pytest.fixture
def spec(tmp_path):
    (tmp_path / "bad.obj").write_text("v 0 0 0\nv 1 0 0\nf 1 2 9\n")    # fails to load: recorded
    path = tmp_path / "s.toml"
    path.write_text(SPEC)
    return path


def _rows(path) -> dict:
    return {r["cell_key"]: {k: v for k, v in r.items() if k not in TIMING_COLUMNS}
            for r in read_rows(path)}


def test_grid_size_crossed_zipped_and_ranges(tmp_path):
    path = tmp_path / "g.toml"
    path.write_text('scenes = ["quad", "spheres"]\npresets = ["amd-rdna2", "apple-m3"]\n'
                    'resolutions = ["64x64", "32x32"]\nsamples = [1, 4]\n'
                    '[grid]\n"dram.bandwidth" = { start = "100GB/s", stop = "400GB/s", step = "100GB/s" }\n'
                    '[zip]\n"l2.size" = ["1MiB", "2MiB", "4MiB"]\n"l2.ways" = [4, 8, 16]\n')
    sweep = load(path)
    assert len(sweep.cells) == 2 * 2 * 4 * 3 * 2 * 2
    assert sweep.keys == ["dram.bandwidth", "l2.size", "l2.ways"]
    swept = {dict(c.swept)["dram.bandwidth"] for c in sweep.cells}
    assert swept == {100.0, 200.0, 300.0, 400.0}
    pairs = {(dict(c.swept)["l2.size"], dict(c.swept)["l2.ways"]) for c in sweep.cells}
    assert pairs == {(1 << 20, 4), (2 << 20, 8), (4 << 20, 16)}
    # a key only one preset has: the other's cells collapse (the same frame runs once)
    path.write_text('scenes = ["quad"]\npresets = ["amd-rdna2", "apple-m3"]\n[grid]\n"tbdr.tile" = [16, 32, 64]\n')
    assert len(load(path).cells) == 1 + 3


def test_local_cluster_of_two_gives_the_serial_rows(spec, tmp_path):
    sweep = load(spec)
    serial = runner.run_sweep(sweep, Results(tmp_path / "serial.parquet"), serial=True, progress=False)
    dask = runner.run_sweep(sweep, Results(tmp_path / "dask.parquet"), workers=2, progress=False)
    assert (serial.ran, dask.ran, dask.workers) == (len(sweep.cells), len(sweep.cells), 2)
    a, b = _rows(tmp_path / "serial.parquet"), _rows(tmp_path / "dask.parquet")
    assert a == b
    assert _rows(tmp_path / "dask.csv").keys() == a.keys()
    failed = [r for r in a.values() if r["status"] != "ok"]
    # the bad model's cells: amd-rdna2 x 3 L2 sizes + apple-m3 x 3 L2 sizes x 2 tiles
    assert len(failed) == 3 + 6 and all("bad.obj" in r["scene"] for r in failed)
    assert all(r["error"] for r in failed) and serial.failed == dask.failed == len(failed)
    ok = [r for r in a.values() if r["status"] == "ok"]
    assert all(r["dram_mb"] > 0 and "mem.dram.write.color" in r for r in ok)
    # the workers ran in other processes, each on its share of the cores
    workers = {r["worker"] for r in read_rows(tmp_path / "dask.parquet")}
    assert len(workers) == 2


@pytest.mark.parametrize("lean", [False, True])
def test_a_worker_takes_the_tile_kernel_the_sweep_compiled_ahead(spec, lean, monkeypatch):
    """A sweep compiles one tile kernel ahead in its own process (precompile.choose_variant);
    a worker process would take the lean one at its default, so each task carries the choice."""
    import distributed

    from renderer import raster_kernels
    monkeypatch.setattr(raster_kernels, "LEAN", not lean)
    monkeypatch.setattr(distributed, "get_worker", lambda: type("W", (), {"address": "w"})())
    quad = next(c for c in load(spec).cells if c.scene == "quad")
    row = runner._cell_on_worker(quad, "v", {}, lean)
    assert raster_kernels.LEAN is lean and row["status"] == "ok", row.get("error")


def test_an_interrupted_sweep_resumes_without_redoing_cells(spec, tmp_path, monkeypatch):
    sweep = load(spec)
    out = tmp_path / "r.parquet"
    calls = []
    real = runner.run_cell

    def interrupted(cell, version, threads=None):
        if len(calls) == 4:
            raise KeyboardInterrupt             # Ctrl-C during the fifth cell
        calls.append(cell)
        return real(cell, version, threads)
    monkeypatch.setattr(runner, "run_cell", interrupted)
    first = runner.run_sweep(sweep, Results(out), serial=True, progress=False)
    assert first.interrupted and first.ran == 4
    before = {r["cell_key"]: r["finished_at"] for r in read_rows(out)}
    assert len(before) == 4 and not out.with_name("r.parquet.journal").exists()

    calls.clear()
    monkeypatch.setattr(runner, "run_cell", lambda c, v, t=None: calls.append(c) or real(c, v, t))
    second = runner.run_sweep(sweep, Results(out), serial=True, progress=False)
    keys = [c.key(runner.code_version()) for c in calls]
    # failed cells are tried again; finished ones are not
    finished = {k for k, r in _rows(out).items() if k in before and r["status"] == "ok"}
    assert not finished & set(keys) and second.skipped == len(finished) > 0
    after = {r["cell_key"]: r["finished_at"] for r in read_rows(out)}
    assert len(after) == len(sweep.cells)
    assert all(after[k] == before[k] for k in finished)


def test_a_killed_sweep_resumes_from_its_journal(spec, tmp_path):
    sweep = load(spec)
    out = tmp_path / "k.parquet"
    store = Results(out)
    version = runner.code_version()
    from pipelines.sweep.cell import run_cell
    ok = next(c for c in sweep.cells if c.scene == "quad")
    store.append(run_cell(ok, version))            # a run killed after one cell: journal only
    store.close()
    with open(store.journal, "a") as f:
        f.write('{"cell_key": "half a li')        # the line the kill cut
    s = runner.run_sweep(sweep, Results(out), serial=True, progress=False, version=version)
    assert s.skipped == 1 and s.ran == len(sweep.cells) - 1


def test_dry_run_and_plots(spec, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, out, err = run_cli(capsys, "sweep", str(spec), "--dry-run")
    n = len(load(spec).cells)
    assert rc == 0 and f"{n} cells" in out and f"{n} to run" in out and not (tmp_path / "s.parquet").exists()
    rc, out, err = run_cli(capsys, "sweep", str(spec), "--serial", "-q")
    assert rc == 0, err
    assert (tmp_path / "s.parquet").is_file() and (tmp_path / "s.csv").is_file()
    rc, out, err = run_cli(capsys, "sweep", str(spec), "--dry-run")
    assert f"{n - 9} already in" in out        # the bad scene's 9 cells failed: left to run
    rc, out, err = run_cli(capsys, "sweep", "--plot", "s.parquet", "--x", "l2.size", "--y",
                           "dram_mb", "--by", "preset", "-o", "line.png")
    assert rc == 0 and (tmp_path / "line.png").read_bytes()[:4] == b"\x89PNG", err
    rc, out, err = run_cli(capsys, "sweep", "--plot", "s.parquet", "--x", "l2.size", "--y",
                           "tbdr.tile", "--z", "tile.param_bytes", "--by", "scene", "-o", "heat.html")
    assert rc == 0 and "data:image/png;base64" in (tmp_path / "heat.html").read_text(), err
    assert_one_line(*run_cli(capsys, "sweep", "--plot", "s.parquet", "--x", "l2.sise", "--y",
                             "dram_mb", "-o", "x.png"), "did you mean l2.size?")
    assert not (tmp_path / "x.png").exists()


def test_an_unreachable_scheduler_is_one_line_and_writes_nothing(spec, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(runner, "CONNECT_TIMEOUT", "1s")
    before = sorted(p.name for p in tmp_path.iterdir())
    assert_one_line(*run_cli(capsys, "sweep", str(spec), "-q", "--scheduler", "tcp://127.0.0.1:9"),
                    "cannot reach it")
    assert sorted(p.name for p in tmp_path.iterdir()) == before
