import os
import sys
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
    so on a cold cache two workers halve the compile wall time; past 4 the files' compiles repeat
    each other (every worker builds the raster kernels) and only memory grows."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:                                   # not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, 4))
