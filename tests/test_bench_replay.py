"""bench/bench_replay.py records the lower replay thread's calls and serves them again alone:
the rows served again leave the counters the frame's own lower thread counted."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_replay  # noqa: E402


def test_the_recorded_rows_served_again_count_what_the_frame_counted():
    passes = bench_replay.recorded_consumer("quad", "amd-rdna2", 96, 64)
    assert passes and all(calls for _, calls in passes)
    lines0, calls = passes[0]
    _, first = calls[0]
    # the frame's lower thread counted into its own totals (first[3]); served again from the
    # pass's first state, on a fresh total, the same rows count the same
    counted = first[3].copy()
    again = np.zeros_like(counted)
    lines, shape = lines0.copy(), first[1].copy()
    for consume, args in calls:
        consume(lines, shape, args[2], again, np.zeros_like(args[4]), args[5], args[6])
    assert again.any() and np.array_equal(again, counted)
    assert bench_replay.consumer_s(lines0, calls, first[2]) > 0.0
