"""bench/bench_serve.py's working sets are what it says they are: after a warm-up, the first
mostly hits the entry level, the last misses every level."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import bench_serve  # noqa: E402
from pipelines.presets import get_preset  # noqa: E402
from renderer.memory import MemoryModel  # noqa: E402


@pytest.mark.parametrize("preset", ["imr-baseline", "apple-m3"])
def test_working_sets_hit_where_named(preset):
    config = get_preset(preset).memory_config()
    sets = bench_serve.working_sets(config)
    shift = config.line_bytes.bit_length() - 1
    rates = []
    for _, n_lines in (sets[0], sets[-1]):
        mm = MemoryModel(config, 1)
        warm, timed = (bench_serve.rows(50_000, bench_serve.ENTRY, n_lines, shift, seed)
                       for seed in (0, 1))
        bench_serve.ns_a_row(mm, [warm], len(warm))
        before = mm.counters()
        bench_serve.ns_a_row(mm, [timed], 1024)
        after = mm.counters()
        rate = []
        for c in config.caches:
            key = f"mem.cache.{c.name}."
            hits = after[key + "hits"] - before[key + "hits"]
            misses = after[key + "misses"] - before[key + "misses"]
            rate.append(hits / max(hits + misses, 1))
        rates.append(rate)
    assert rates[0][bench_serve.ENTRY] > 0.9
    assert max(rates[1]) < 0.1
