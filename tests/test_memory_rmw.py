"""OP_RMW rows (a block's read and write at a ROP cache as one row a line) against the reads and
then the writes they stand for: the same counters, tile bytes and cache lines."""
from __future__ import annotations

import numpy as np
import pytest

from renderer import memory_kernels as mk
from renderer.counters import STREAMS
from renderer.memory import MemoryModel
from tests.test_memory import CONFIGS, _random_requests


def _block_groups(mm, seed, n_groups=3000):
    """The same ROP traffic two ways: (plain, fused) request buffers. Each group is a block of
    k consecutive lines at a level fusable for k, some lines read and written (rmw), the others
    only read, raw or at compressed sizes; between groups, random requests at every level."""
    rng = np.random.default_rng(seed)
    shape, lb = mm.state.shape, mm.config.line_bytes
    noise = _random_requests(mm, 5, seed + 100, n=4 * n_groups)
    plain, fused = [], []

    def size_bits(nbytes, shift):
        return 0 if nbytes < 0 else (nbytes + 1) << shift

    for g in range(n_groups):
        for row in noise[4 * g: 4 * g + rng.integers(0, 5)]:
            plain.append(row)
            fused.append(row)
        lv = int(rng.integers(0, 2))
        k = int(rng.integers(1, 5))
        if not mk.fusable(shape, lv, k):
            continue
        first = (int(rng.integers(1, 3)) << (mk.REGION_SHIFT - int(mm.state.meta[mk.M_LINE_SHIFT]))) \
            + int(rng.integers(0, 400))
        stream, tile = int(rng.integers(0, len(STREAMS))), int(rng.integers(-1, 5))
        rmw = rng.random(k) < 0.7
        rsize = np.where(rng.random(k) < 0.5, -1, rng.integers(0, lb + 1, k))
        wsize = np.where(rng.random(k) < 0.5, -1, rng.integers(0, lb + 1, k))
        for j in range(k):
            op = mk.op_code(False, stream) | size_bits(rsize[j], mk.OP_SIZE_SHIFT)
            plain.append((lv, first + j, op, tile))
            if rmw[j]:
                op |= mk.OP_RMW | size_bits(wsize[j], mk.OP_WSIZE_SHIFT)
            fused.append((lv, first + j, op, tile))
        for j in np.flatnonzero(rmw):
            plain.append((lv, first + j, mk.op_code(True, stream)
                          | size_bits(wsize[j], mk.OP_SIZE_SHIFT), tile))
    return np.array(plain, np.int64), np.array(fused, np.int64)


def _assert_same(a, b):
    """Counters, tile bytes and lines equal; LRU stamps equal in their order within each set
    (the fused rows stamp a group's lines in another order across sets, never within one)."""
    assert np.array_equal(a.acc, b.acc) and np.array_equal(a.tile_bytes, b.tile_bytes)
    la, lb_ = a.state.lines, b.state.lines
    assert np.array_equal(la[:, mk.F_TAG], lb_[:, mk.F_TAG])
    assert np.array_equal(la[:, mk.F_INFO], lb_[:, mk.F_INFO])
    assert np.array_equal(np.argsort(la[:, mk.F_STAMP], 1), np.argsort(lb_[:, mk.F_STAMP], 1))
    assert np.array_equal(a.state.shape[:, mk.SH_CLOCK], b.state.shape[:, mk.SH_CLOCK])


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_rmw_rows_serve_as_the_reads_then_writes(name, seed):
    plain_mm, fused_mm = MemoryModel(CONFIGS[name], 5), MemoryModel(CONFIGS[name], 5)
    plain, fused = _block_groups(plain_mm, seed)
    assert (fused[:, mk.R_OP] & mk.OP_RMW).any() and len(fused) < len(plain)
    mk.serve(*plain_mm.state, plain_mm.acc, plain_mm.tile_bytes, plain, len(plain))
    mk.serve(*fused_mm.state, fused_mm.acc, fused_mm.tile_bytes, fused, len(fused))
    _assert_same(plain_mm, fused_mm)


@pytest.mark.parametrize("upper", [(0,), (1,)])
def test_rmw_rows_handed_on_serve_as_the_reads_then_writes(upper):
    """A level on the other thread of a pipelined replay gets the rows as they are."""
    cfg = CONFIGS["with-llc"]
    plain_mm, fused_mm = MemoryModel(cfg, 5), MemoryModel(cfg, 5)
    plain, fused = _block_groups(plain_mm, 5)
    mk.serve(*plain_mm.state, plain_mm.acc, plain_mm.tile_bytes, plain, len(plain))

    def produce(start, own, out, chunk=500):
        end = min(start + chunk, len(fused))
        n = mk.serve_levels(*fused_mm.state, fused_mm.acc, fused_mm.tile_bytes, fused[start:end],
                            end - start, own, out, 0)
        return (None if end == len(fused) else end), n

    fused_mm.serve_pipelined(produce, upper)
    _assert_same(plain_mm, fused_mm)


def test_fusable_only_where_the_write_must_hit_what_the_read_left():
    with_llc, tiny, packed = (MemoryModel(CONFIGS[n], 1).state.shape
                              for n in ("with-llc", "tiny", "packed-l2"))
    assert mk.fusable(with_llc, 0, 4) and mk.fusable(with_llc, 1, 4)
    assert not mk.fusable(with_llc, 3, 1)          # a read-allocate LLC: a write passes down
    assert not mk.fusable(packed, 2, 1)            # a packed L2 drops empty lines
    assert mk.fusable(tiny, 0, 1) and not mk.fusable(tiny, 0, 2)   # one set: lines collide
