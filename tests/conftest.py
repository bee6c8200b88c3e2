import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite tests/golden/*.png from the current renderer (on purpose only)")
    parser.addoption("--update-snapshot", action="store_true",
                     help="rewrite tests/golden/snapshot.json (every counter, image and heat map "
                          "digest) from the current code: only in a commit that says which figures "
                          "moved and why")


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: a worker per CPU this process may run on, at most 4. numba compiles in one thread,
    and most tests' Python runs in one: two workers took a cold suite from 754 s to 504 s and a
    warm one from 203 to 139 on two cores. Past 4 mostly memory grows (each worker holds numba,
    LLVM and its files' scenes)."""
    from pipelines.commands.precompile import usable_cpus
    return max(1, min(usable_cpus(), 4))


def pytest_sessionstart(session):
    """On a cold numba cache, every preset's kernels compiled first on every core at once
    (pipelines.commands.precompile), so that the test workers load them rather than each compile
    the raster kernels again (both tile kernels: each test's passes take the one they allow).
    Runs before pytest-xdist starts its workers (its sessionstart is
    trylast), in the controller only."""
    if hasattr(session.config, "workerinput"):
        return
    from pipelines.commands.precompile import precompile
    t0 = time.perf_counter()
    modules = precompile(every_variant=True)
    if modules:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"compiled {modules} kernel modules ahead on a cold numba cache in "
                                f"{time.perf_counter() - t0:.0f} s (pipelines.commands.precompile)")
