"""How the engine's threads share the machine.

First, how numba's worker threads wait between parallel loops. The engine runs a thread of its own
beside them (the memory model's, pipelines.arch.tbdr's replay following the raster down the screen), and
OpenMP's default is to spin for a while at the end of every loop before sleeping: a worker spinning
at a band's barrier holds a core the replay needs. Passive waiting sleeps at once: on two cores it
saves a tenth of a TBDR frame's CPU time (tbdr spheres at 1080p: 308 -> 255 ms of CPU, measured).
It must be set before the OpenMP runtime loads, at the first parallel kernel, and a host program's
own setting is kept.

Second, how often Python's lock passes between threads that both want it. The memory model's
thread runs Python between its kernels too (the front end's fetch plan, pipelines.arch.imr's clears),
and at CPython's default interval (5 ms) the other thread's few lines between two kernels can
wait that long for it: a DSBR spheres frame at 1080p lost about 4 ms so, between binning and its
batches. At 0.5 ms: 101 -> 96 ms per frame (median of 20, process-alternating runs; sponza and a
TBDR frame within noise). A host program's own interval is kept."""
from __future__ import annotations

import os
import sys

GIL_INTERVAL_S = 0.0005      # CPython's default: 0.005


def wait_passively() -> None:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def hand_over_quickly() -> None:
    if sys.getswitchinterval() == 0.005:          # (not a host program's own choice)
        sys.setswitchinterval(GIL_INTERVAL_S)
