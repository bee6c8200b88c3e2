"""tilesim run as a user runs it, in a process of its own, and how long a test waits on a run before
it calls it hung."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# s: a hang guard, not a speed check. On an empty numba cache a first run compiles its kernels
# (`tilesim render triangle` alone takes about two minutes on two cores, the ray kernels minutes
# more), and under pytest-xdist another worker compiles beside it on the same cores.
HANG_S = 900


def child_env(**extra) -> dict:
    """This process's environment and `extra`, with the repository importable whether or not it
    is installed."""
    env = dict(os.environ, **extra)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    return env


def tilesim(*args, cwd: Path) -> subprocess.CompletedProcess:
    """`tilesim ARGS...` run in `cwd`."""
    return subprocess.run([sys.executable, "-m", "pipelines.commands.cli", *map(str, args)], cwd=cwd,
                          env=child_env(), capture_output=True, text=True, timeout=HANG_S)
