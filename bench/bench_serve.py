"""What one request costs the cache model: memory_kernels.serve on synthetic streams, ns a row.

    python bench/bench_serve.py [--presets imr-baseline,apple-m3,amd-rdna2] [--rows 1048576]

A frame's memory replay (bench/bench_replay.py) mixes hits, misses, write-backs and fills at
every level; this feeds `serve` one kind at a time, so that a change to serve_levels can be
judged by what it does to each: reads of random lines from a working set at a preset's first
level, a set that fits it (every row a hit there), one that fits the level below (a miss and a
fill), and one that fits no level (a miss at every level, a victim written back at those
that allocate). Each round draws rows of its own from the working set (the same rows again
would be a smaller working set: the lines they name), served from the state the rounds before
left, whole in one call and in the producer's buffers of REQUESTS rows (memory_requests); the
best round's time.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

import renderer.memory_kernels as mk  # noqa: E402
from pipelines.presets import get_preset  # noqa: E402
from renderer.memory import MemoryModel  # noqa: E402
from renderer.memory_requests import (  # noqa: E402
    R_LEVEL, R_LINE, R_N, R_OP, R_TILE, REGION_SHIFT, REQUESTS, op_code)

STREAM = 3          # any stream: the counts are by stream, the cost is not
ENTRY = 0           # the level the rows enter: the first, a producer's


def rows(n: int, level: int, n_lines: int, line_shift: int, seed: int = 0) -> np.ndarray:
    """n reads at `level` of lines drawn at random from n_lines consecutive lines of region 1."""
    rng = np.random.default_rng(seed)
    rq = np.empty((n, R_N), np.int64)
    rq[:, R_LEVEL] = level
    rq[:, R_LINE] = (1 << (REGION_SHIFT - line_shift)) + rng.integers(0, n_lines, n)
    rq[:, R_OP] = op_code(False, STREAM)
    rq[:, R_TILE] = -1
    return rq


def working_sets(config) -> list[tuple[str, int]]:
    """(what, lines) of each working set a model is timed on: half its entry level, half the
    level below that, sixteen times its largest level (a sixteenth of its rows hit there)."""
    caps = [c.size_bytes // config.line_bytes for c in config.caches]
    below = config.below[ENTRY]
    sets = [("hits at " + config.caches[ENTRY].name, caps[ENTRY] // 2)]
    if below >= 0:
        sets.append((f"fits {config.caches[below].name}", caps[below] // 2))
    return sets + [("fits no level", 16 * max(caps))]


def ns_a_row(mm: MemoryModel, rounds: list[np.ndarray], chunk: int) -> float:
    """The best round's ns a row, each round's rows served `chunk` rows a call."""
    lines, shape, meta = mm.state
    best = np.inf
    for rq in rounds:
        t = time.perf_counter()
        for i in range(0, len(rq), chunk):
            part = rq[i:i + chunk]
            mk.serve(lines, shape, meta, mm.acc, mm.tile_bytes, part, len(part))
        best = min(best, (time.perf_counter() - t) / len(rq))
    return 1e9 * best


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--presets", default="imr-baseline,apple-m3,amd-rdna2")
    ap.add_argument("--rows", type=int, default=1 << 20)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args(argv)
    print(f"{'preset':14} {'working set':34} {'whole':>8} {'buffers':>8}   (ns a row)")
    for name in a.presets.split(","):
        config = get_preset(name).memory_config()
        for what, n_lines in working_sets(config):
            mm = MemoryModel(config, 1)
            shift = config.line_bytes.bit_length() - 1
            draws = [rows(a.rows, ENTRY, n_lines, shift, seed) for seed in range(2 * a.rounds + 1)]
            ns_a_row(mm, draws[:1], a.rows)       # warm-up: compiles, fills the caches
            whole = ns_a_row(mm, draws[1:a.rounds + 1], a.rows)
            parts = ns_a_row(mm, draws[a.rounds + 1:], REQUESTS)
            print(f"{name:14} {what + f' ({n_lines:,} lines)':34} {whole:8.1f} {parts:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
