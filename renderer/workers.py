"""How numba's worker threads wait between parallel loops. The engine runs a thread of its own
beside them (the memory model's, pipelines.tbdr's replay following the raster down the screen),
and OpenMP's default is to spin for a while at the end of every loop before sleeping: a worker
spinning at a band's barrier holds a core the replay needs. Passive waiting sleeps at once: on
two cores it saves a tenth of a TBDR frame's CPU time (tbdr spheres at 1080p: 308 -> 255 ms of
CPU, measured). It must be set before the OpenMP runtime loads, at the first parallel kernel,
and a host program's own setting is kept."""
from __future__ import annotations

import os


def wait_passively() -> None:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
