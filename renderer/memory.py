"""Memory: every access priced by stream, read or write, through ROP caches and L2 to DRAM.

Consumes line-sized requests (from the architectures' replay of raster events, clears, resolves,
stores, geometry fetch); produces the mem.* counters and a per-tile DRAM byte map. Surfaces are
block-linear (8x8-pixel blocks), textures 4x4-texel blocks, buffers linear; each lives in its own
address region so lines never alias.

    mm = MemoryModel(MemoryConfig.from_preset(preset), n_tiles)
    color = mm.surface("color", "rgba8", samples=1)
    mm.clear(ROP_COLOR, color, which_blocks, "color", blocks_x, tile, tiles_x)
    mm.write_linear(L2, mm.region("meta"), n_bytes, "meta")
    ...  a kernel fills a request buffer (renderer.memory_requests) and hands it to
         serve(*serving.caches, serving.totals, serving.tile_bytes, rq, n), this module's
         serve, with serving = mm.serve_args()
    mm.flush(color, store=True)
    counters = mm.counters()

The verbs: level (a cache level's index by name), write_linear / read_linear (a region's first bytes, line by line),
read_blocks (a surface's blocks at the sizes they were stored at), clear (whole
blocks of a surface), resolve (MSAA samples to one), flush (store or drop a surface's dirty
lines), serve_pipelined (a producer kernel's requests on two threads), dram_bytes.
"""
from __future__ import annotations

import sys
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, NamedTuple

import numba
import numpy as np

from . import memory_kernels as mk
from .memory_kernels import fusable, serve, serve_levels  # noqa: F401  (for the replay kernels)
from .memory_requests import MAX_REGIONS      # region ids stay below it: see region()
from .counters import STREAMS, Counters
from .formats import FORMATS

STREAM = {name: i for i, name in enumerate(STREAMS)}
assert len(STREAMS) <= mk.I_STREAM_MASK + 1      # a line's stream is kept in 7 bits
ROP_COLOR, ROP_DEPTH, L2 = 0, 1, 2     # cache levels; requests enter at the unit's own level


@dataclass(frozen=True)
class CacheConfig:
    name: str
    size_bytes: int
    ways: int
    write_allocate: bool = True   # False: read-allocate (AMD's Infinity Cache, seed 000 L1202)
    holds_compressed: bool = False    # keeps a compressed block in the lines its bytes fill
                                      # (memory_kernels: packed blocks)
    read_only: bool = False       # a unit's read-only cache (the ray unit's L0/L1): it never holds
                                  # a dirty line, so it may miss to an earlier level (see MemoryConfig)

    def n_sets(self, line_bytes: int) -> int:
        sets = self.size_bytes // (line_bytes * self.ways)
        if sets < 1:
            raise ValueError(f"cache {self.name}: {self.size_bytes} B cannot hold {self.ways} ways of {line_bytes} B")
        return sets


@dataclass(frozen=True)
class MemoryConfig:
    """Caches top (the units' own) to bottom; each misses to `below[i]`, a later level or DRAM
    (-1). All share one line size. A read-only level (CacheConfig.read_only) may also miss to an
    earlier level, if only read-only levels miss into it: no dirty line ever leaves it, so a
    flush, which writes levels down top to bottom, has nothing of it to order (that is how a
    unit's own caches are appended in front of an L2 that already has an index:
    MemoryModel.add_levels)."""
    line_bytes: int
    caches: tuple[CacheConfig, ...]
    below: tuple[int, ...]

    def __post_init__(self):
        n = len(self.caches)
        if len(self.below) != n or any(
                not (b == -1 or i < b < n or (self.caches[i].read_only and 0 <= b < n and b != i))
                for i, b in enumerate(self.below)):
            raise ValueError(f"cache levels must miss to a later level or DRAM, got {self.below}")
        if any(self.caches[b].read_only and not self.caches[i].read_only
               for i, b in enumerate(self.below) if b >= 0):
            raise ValueError("only a read-only cache may miss into a read-only cache")

    @staticmethod
    def rop_l2(line_bytes: int, rop_color: CacheConfig, rop_depth: CacheConfig,
               l2: CacheConfig) -> "MemoryConfig":
        """An IMR's: ROP colour and depth caches (levels ROP_COLOR, ROP_DEPTH) in front of L2."""
        return MemoryConfig(line_bytes, (rop_color, rop_depth, l2), (L2, L2, -1))

    @property
    def levels(self) -> tuple[CacheConfig, ...]:
        return self.caches


class CacheState(NamedTuple):
    """See memory_kernels: lines (levels, sets, F_N, ways), shape (levels, SH_N), meta (M_N,)."""
    lines: np.ndarray
    shape: np.ndarray
    meta: np.ndarray


class Serving(NamedTuple):
    """What a kernel that serves its own request buffers writes to (MemoryModel.serve_args):
    it hands them to serve(*caches, totals, tile_bytes, rq, n)."""
    caches: CacheState
    totals: np.ndarray       # int64 (A_N, ...) the model's running byte, hit and miss counts
    tile_bytes: np.ndarray   # int64 per screen tile: DRAM bytes, for the heat map


class Surface(NamedTuple):
    region: int
    bytes_per_pixel: int      # all samples of one pixel


# The second thread of a pipelined replay (MemoryModel.serve_pipelined); its kernels drop the GIL.
# One per rendering thread: the viewer renders its panels at once, and each panel's memory work
# must not queue behind another's.
_SECOND = threading.local()


def _second_thread() -> ThreadPoolExecutor:
    ex = getattr(_SECOND, "executor", None)
    if ex is None:
        # Its work overlaps the first thread's parallel kernels: a parallel kernel of its own
        # runs on it alone (numba's thread count is per calling thread), not as a second team
        # fighting the first for the same cores.
        ex = _SECOND.executor = ThreadPoolExecutor(1, thread_name_prefix="tilesim-memory",
                                                   initializer=numba.set_num_threads, initargs=(1,))
    return ex


HAND_ON_ROWS = 1 << 15     # requests per hand-on buffer: 1 MiB
# A pipelined replay hands a movable level down to the second thread once the producer has run
# MOVE_RATIO times as long as the consumer over MOVE_AFTER hand-ons. Measured on spheres at
# 1080p through imr-baseline: the producer took 36.9 ms beside the consumer's 14.3 with the ROP
# colour cache on the producer, 27.8 beside 17.1 without it; on city (fill-bound: every ROP line
# misses to L2) 16.0 beside 11.9, and 13.1 beside 14.5: balanced there, so it stays. Judged from
# the first hand-off on at twice (the first's consumer starts on cold caches, which a ratio of
# 1.5 took for an imbalance on city: 1.7 ms beside 1.0), the move comes two hand-offs sooner on
# a dense frame, whose first ones the producer ran 4-5 times as long as the consumer (spheres
# through amd-rdna2, 10 frames of each taking turns: the replay 40.3 -> 38.3 ms, median; sponza
# 44.7 -> 43.6, dragon 20.2 -> 19.4, city, the quad, pul1duel and imr-baseline within noise).
MOVE_AFTER = 1
MOVE_RATIO = 2.0


class _StatePool:
    """The cache lines (CacheState.lines) of models gone, by shape, for the next model of the
    same caches to zero and take. An Infinity Cache's lines are 26 MB, and glibc gives an
    allocation that size recycled heap or fresh pages from the kernel depending on what the
    process freed before (its mmap threshold moves with every free); fresh pages fault one at a
    time as the replay and the end-of-pass flushes (which read every set) touch them: 6443
    faults a frame on amd-rdna2 (the quad at 1080p, 40-52 ms against 29-35 recycled) in one
    order of presets, none in another. Recycled, the array is zeroed in place and never faults.
    An array goes back only when nothing but its model held it (its reference count), and the
    pool keeps at most MAX_BYTES, the newest."""

    MAX_BYTES = 96 << 20

    def __init__(self):
        self._lock = threading.Lock()
        self._free: list[np.ndarray] = []

    def take(self, shape: tuple) -> np.ndarray:
        """An all-zero int64 array of `shape`: a recycled one where there is one."""
        with self._lock:
            for k, lines in enumerate(self._free):
                if lines.shape == shape:
                    del self._free[k]
                    break
            else:
                return np.zeros(shape, np.int64)
        lines.fill(0)
        return lines

    def give(self, holder: list) -> None:
        """A model's finaliser: its state (holder[0], the Future of a CacheState) comes back if
        nothing else refers to its lines."""
        state = holder[0]
        if not state.done() or state.cancelled() or state.exception() is not None:
            return
        lines = state.result().lines
        holder.clear()
        # the CacheState, this name and getrefcount's argument: nobody else's
        if sys.getrefcount(lines) > 3:
            return
        with self._lock:
            self._free.append(lines)
            while sum(a.nbytes for a in self._free) > self.MAX_BYTES:
                self._free.pop(0)


_STATES = _StatePool()


def _hint_rows(shape: np.ndarray, first: int, ways: int) -> int:
    """Give each level of `shape` (rows of a model's shape, SH_HINT set in place) with
    HINT_MIN_WAYS ways or more its hint table (memory_kernels: HINT_SLOTS words a set), in rows
    of `lines` from row `first` on, rows of ways words a field; returns the rows they take."""
    shape[:, mk.SH_HINT] = -1
    rows = 0
    for level in shape:
        if level[mk.SH_WAYS] >= mk.HINT_MIN_WAYS:
            level[mk.SH_HINT] = first + rows
            rows += -(-int(level[mk.SH_SETS]) * mk.HINT_SLOTS // (mk.F_N * ways))
    return rows


def _far_level(shape: np.ndarray, ways: int) -> int:
    """The level of `shape` (a model's, its rows `ways` wide) with the most sets among those
    whose state takes memory_kernels.FAR_BYTES or more, or -1: the one serve_levels asks the
    host for ahead of time (meta[M_FAR])."""
    big = [lv for lv, level in enumerate(shape)
           if int(level[mk.SH_SETS]) * mk.F_N * ways * 8 >= mk.FAR_BYTES]
    return max(big, key=lambda lv: shape[lv, mk.SH_SETS], default=-1)


class MemoryModel:
    def __init__(self, config: MemoryConfig, n_tiles: int):
        lb = config.line_bytes
        if lb & (lb - 1) or lb < 16:
            raise ValueError(f"line size must be a power of two of at least 16 B, got {lb}")
        levels = config.levels
        sets = [c.n_sets(lb) for c in levels]
        ways = [c.ways for c in levels]
        for c in levels:
            if not 1 <= c.ways <= mk.MAX_WAYS:
                raise ValueError(f"cache {c.name}: {c.ways} ways; the model handles 1 to "
                                 f"{mk.MAX_WAYS}")
        shape = np.zeros((len(levels), mk.SH_N), np.int64)
        shape[:, mk.SH_SETS], shape[:, mk.SH_WAYS] = sets, ways
        shape[:, mk.SH_BASE] = np.concatenate([[0], np.cumsum(sets)[:-1]])
        shape[:, mk.SH_WALLOC] = [c.write_allocate for c in levels]
        shape[:, mk.SH_NEXT] = config.below     # always a later level or DRAM: a flush relies on it
        hint_rows = _hint_rows(shape, sum(sets), max(ways))
        shape[:, mk.SH_MASK] = [n - 1 if n & (n - 1) == 0 else -1 for n in sets]
        shape[:, mk.SH_PACKED] = [c.holds_compressed for c in levels]
        # Made here, not with the lines: region() fills in the named surfaces' slots.
        self._meta = meta = np.zeros(mk.M_N, np.int64)
        meta[mk.M_LINE_BYTES], meta[mk.M_LINE_SHIFT] = lb, lb.bit_length() - 1
        meta[mk.M_PACKED] = any(c.holds_compressed for c in levels)
        meta[mk.M_FAR] = _far_level(shape, max(ways))
        self.config = config
        self.acc = np.zeros((mk.A_N, max(len(STREAMS), len(levels), mk.SURFACE_SLOTS)), np.int64)
        self.tile_bytes = np.zeros(n_tiles, np.int64)
        self._regions: dict = {}
        self._slots: dict[str, int] = {}     # named region -> its slot (A_SURF_* columns)
        self._second = _second_thread()
        # All zero is all invalid (tag 0 is no line's: regions start at 1). An Infinity Cache's
        # state is 26 MB, whose zeroing (a memset, ~2.5 ms; _StatePool) runs on the second
        # thread while this one sets up geometry, which touches no cache.
        self._state = self._second.submit(
            lambda: CacheState(_STATES.take((sum(sets) + hint_rows, mk.F_N, max(ways))), shape,
                               meta))
        self._held = [self._state]          # what goes back to _STATES when the model is gone
        weakref.finalize(self, _STATES.give, self._held)

    def add_levels(self, caches: tuple[CacheConfig, ...], below: tuple[int, ...]) -> None:
        """Append read-only cache levels (indices from len(config.caches) on, each missing to
        `below[i]`, any level's index or -1), keeping every existing level's index, lines and
        counts: a unit's own caches put in front of a model that has already served other units
        (the ray unit's L0/L1 in front of the L2 a frame's raster passes left)."""
        if not all(c.read_only for c in caches):
            raise ValueError("only read-only levels can be added to a model in use")
        old = self.config
        config = MemoryConfig(old.line_bytes, (*old.caches, *caches), (*old.below, *below))
        lb = config.line_bytes
        sets = [c.n_sets(lb) for c in caches]
        for c in caches:
            if not 1 <= c.ways <= mk.MAX_WAYS:
                raise ValueError(f"cache {c.name}: {c.ways} ways; the model handles 1 to {mk.MAX_WAYS}")
        lines0, shape0, meta = self.state
        n_sets0 = lines0.shape[0]
        ways = max(lines0.shape[2], *(c.ways for c in caches))
        shape = np.zeros((len(config.caches), mk.SH_N), np.int64)
        shape[:len(shape0)] = shape0
        new = slice(len(shape0), None)
        shape[new, mk.SH_SETS], shape[new, mk.SH_WAYS] = sets, [c.ways for c in caches]
        shape[new, mk.SH_BASE] = n_sets0 + np.concatenate([[0], np.cumsum(sets)[:-1]])
        # (the rows before n_sets0, the old levels' hint tables among them, keep their places;
        # rows only grow wider, so a table still fits the rows it was given)
        hint_rows = _hint_rows(shape[new], n_sets0 + sum(sets), ways)
        lines = np.zeros((n_sets0 + sum(sets) + hint_rows, mk.F_N, ways), np.int64)  # invalid
        lines[:n_sets0, :, :lines0.shape[2]] = lines0
        shape[new, mk.SH_WALLOC] = [c.write_allocate for c in caches]
        shape[new, mk.SH_NEXT] = below
        shape[new, mk.SH_MASK] = [n - 1 if n & (n - 1) == 0 else -1 for n in sets]
        shape[new, mk.SH_PACKED] = [c.holds_compressed for c in caches]
        meta[mk.M_FAR] = _far_level(shape, ways)
        width = max(self.acc.shape[1], len(config.caches))
        if width > self.acc.shape[1]:
            acc = np.zeros((mk.A_N, width), np.int64)
            acc[:, :self.acc.shape[1]] = self.acc
            self.acc = acc
        self.config = config
        state = CacheState(lines, shape, meta)
        self._state = self._second.submit(lambda: state)
        self._held[:] = [self._state]

    @property
    def state(self) -> CacheState:
        """The caches' arrays (memory_kernels): lines, shape, meta."""
        return self._state.result()

    def region(self, key) -> int:
        """A stable region id for a surface name or buffer object. Ids stay below 2^16, so that
        line numbers stay below 2^52 (serve_levels divides them in float64, exactly). A region
        named by a string (a surface, or its metadata: "color", "color.dcc") has its DRAM bytes
        counted apart too (counters: surf.<name>.*)."""
        if key in self._regions:
            return self._regions[key]
        if len(self._regions) + 1 >= MAX_REGIONS:
            raise ValueError(f"more than {MAX_REGIONS - 1} memory regions in one model")
        region = self._regions[key] = len(self._regions) + 1
        if isinstance(key, str):
            if len(self._slots) + 1 >= mk.SURFACE_SLOTS:
                raise ValueError(f"more than {mk.SURFACE_SLOTS - 1} named surfaces in one model")
            slot = self._slots[key] = len(self._slots) + 1
            self._meta[mk.M_SLOTS + region] = slot
        return region

    def level(self, name: str) -> int:
        """The index of the cache level called `name` (a CacheConfig's), where requests to it enter."""
        names = [c.name for c in self.config.caches]
        if name not in names:
            raise ValueError(f"no cache level {name!r} (the model has {', '.join(names)})")
        return names.index(name)

    def surface(self, name: str, fmt: str, samples: int) -> Surface:
        bpp = FORMATS[fmt].bytes_per_sample * samples
        if self.config.line_bytes % bpp:
            raise ValueError(f"line of {self.config.line_bytes} B does not hold whole {bpp}-B pixels")
        return Surface(self.region(name), bpp)

    def address(self, region: int, offset=0):
        return (region << mk.REGION_SHIFT) + offset

    def flush(self, surface: Surface | int, store: bool, tile_bytes: np.ndarray | None = None,
              n_bytes: int | None = None) -> None:
        """End of pass for a surface (or a bare region): store writes its dirty lines down to
        DRAM, else they are dropped. DRAM bytes go to `tile_bytes` (default the model's map).
        n_bytes: where the caller knows that every byte of the region ever asked for lies in its
        first n_bytes (a surface's metadata), which spares a scan of every set of a large cache."""
        region = surface.region if isinstance(surface, Surface) else int(surface)
        n_lines = -1 if n_bytes is None else -(-int(n_bytes) // self.config.line_bytes)
        mk.flush_region(self.serve_args(tile_bytes), region, not store, n_lines)

    def write_linear(self, level: int, region: int, n_bytes: int, stream: str, write: bool = True) -> None:
        """Write (or read) the first n_bytes of a region, line by line, entering at `level`:
        metadata such as a fast clear's, or a whole surface a pass samples once per pixel."""
        mk.write_linear(self.serve_args(), level, region, n_bytes, STREAM[stream], write)

    def read_linear(self, level: int, region: int, n_bytes: int, stream: str) -> None:
        self.write_linear(level, region, n_bytes, stream, False)

    def read_blocks(self, level: int, surface: Surface, sizes: np.ndarray, stream: str) -> None:
        """Read every 8x8 block of a surface once, at the size each was stored at (int64 per
        block: its compressed payload; -1: raw): a later pass reading a compressed surface."""
        mk.read_blocks(self.serve_args(), level, surface.region, surface.bytes_per_pixel,
                       np.ascontiguousarray(sizes, np.int64), STREAM[stream])

    def clear(self, level: int, surface: Surface, which: np.ndarray, stream: str, blocks_x: int,
              tile: int, tiles_x: int) -> None:
        """Write every line of the 8x8 blocks in `which` (bool per block) once: a clear without
        fast-clear metadata, or a fast-clear eliminate; DRAM bytes by screen tile of `tile` px."""
        mk.clear_surface(self.serve_args(), level, surface.region, surface.bytes_per_pixel, which,
                         STREAM[stream], blocks_x, tile, tiles_x)

    def resolve(self, level: int, src: Surface, dst: Surface, n_blocks: int, blocks_x: int,
                tile: int, tiles_x: int) -> None:
        """MSAA resolve: read every sample line of src (stream color), write dst (resolve)."""
        mk.resolve_surface(self.serve_args(), level, src, dst, n_blocks, STREAM["color"],
                           STREAM["resolve"], blocks_x, tile, tiles_x)

    def serve_args(self, tile_bytes: np.ndarray | None = None) -> Serving:
        """What a producer kernel that serves its own request buffers takes (renderer.
        memory_requests); DRAM bytes go to `tile_bytes` (default the model's per-tile map)."""
        return Serving(self.state, self.acc, self.tile_bytes if tile_bytes is None else tile_bytes)

    def dram_bytes(self, direction: str, stream: str) -> int:
        """Bytes this model has moved to or from DRAM for a stream so far."""
        row = mk.A_DRAM_READ if direction == "read" else mk.A_DRAM_WRITE
        return int(self.acc[row, STREAM[stream]])

    def background(self, fn: Callable, *args):
        """Run fn(*args) on the model's second thread (the one serve_pipelined's lower levels
        use, so it finishes before they start); returns its Future. The caller waits for it
        before touching the caches itself."""
        return self._second.submit(fn, *args)

    def serve_pipelined(self, produce: Callable, upper: tuple[int, ...],
                        consume: Callable = mk.serve, movable: tuple[int, ...] = ()) -> None:
        """Serve a producer's requests on two threads at once: `produce(start, own, out)` (a kernel
        that issues requests from work item `start`, serves the levels in the bit mask `own`
        itself with memory_kernels.serve_levels, hands what reaches the other levels on to
        `out` and returns (next item or None when done, rows of out)) runs on this thread while
        the other serves what the previous call handed on, with `consume` (serve's arguments:
        the state, counters, tile bytes, rows and their count). A call that hands nothing on
        and is not done says the next item does not fit: it gets buffers twice the size. The
        `upper` levels must be fed by nothing but the producer (no level misses into them), so
        that they and the rest see the order they would see if one thread served all; the
        counters are the same either way.

        `movable` (of `upper`, in order): levels handed down to the other thread, one at a
        time, while the producer runs longer than the consumer (MOVE_RATIO). A level moves
        between two calls and only down: what the producer served of it is done by then, and
        the consumer reaches the level's first request after all it was handed before, so it
        still sees every request in order; it takes the level's clock and held regions on."""
        if any(b in upper for b in self.config.below):
            raise ValueError(f"levels {upper} are fed by other levels: they cannot be served first")
        if not set(movable) <= set(upper):
            raise ValueError(f"movable levels {movable} must be upper levels {upper}")
        own = sum(1 << lv for lv in upper)
        lines, shape, meta = self.state
        # The lower thread counts into its own totals and keeps its own clocks: sharing a cache
        # line of counters with the upper thread would cost more than the lookups.
        lower_shape, lower_acc = shape.copy(), np.zeros_like(self.acc)
        buffers = [np.empty((HAND_ON_ROWS, mk.R_N), np.int64) for _ in range(2)]

        def timed(*args):
            t = time.perf_counter()
            consume(*args)
            return time.perf_counter() - t
        produced, consumed, since = [], [], 0      # seconds per call; the window's first call
        start, lower, which = 0, None, 0
        while start is not None:
            t = time.perf_counter()
            start, n = produce(start, own, buffers[which])
            if n == 0 and start is not None:     # the next item does not fit: larger buffers
                buffers = [np.empty((2 * len(buffers[0]), mk.R_N), np.int64) for _ in range(2)]
                continue
            produced.append(time.perf_counter() - t)
            if lower is not None:
                consumed.append(lower.result())
            lower = self._second.submit(timed, lines, lower_shape, meta, lower_acc,
                                        self.tile_bytes, buffers[which], n)
            which ^= 1
            if movable and len(consumed) - since >= MOVE_AFTER and (
                    sum(produced[since:len(consumed)]) > MOVE_RATIO * sum(consumed[since:])):
                lv, movable = movable[0], movable[1:]
                own &= ~(1 << lv)
                lower_shape[lv, mk.SH_CLOCK] = shape[lv, mk.SH_CLOCK]
                lower_shape[lv, mk.SH_HELD] = shape[lv, mk.SH_HELD]
                since = len(produced)            # judged again on calls without it
        if lower is not None:
            lower.result()
        self.acc += lower_acc
        below = [lv for lv in range(len(shape)) if not (own >> lv) & 1]
        shape[below, mk.SH_CLOCK] = lower_shape[below, mk.SH_CLOCK]
        shape[below, mk.SH_HELD] |= lower_shape[below, mk.SH_HELD]

    def counters(self) -> Counters:
        c = Counters()
        for i, s in enumerate(STREAMS):
            for key, row in (("mem.dram.read.", mk.A_DRAM_READ), ("mem.dram.write.", mk.A_DRAM_WRITE),
                             ("mem.onchip.read.", mk.A_ONCHIP_READ),
                             ("mem.onchip.write.", mk.A_ONCHIP_WRITE)):
                if self.acc[row, i]:
                    c[key + s] = int(self.acc[row, i])
            for d, moved, raw in (("read", mk.A_COMP_READ, mk.A_COMP_RAW_READ),
                                  ("write", mk.A_COMP_WRITE, mk.A_COMP_RAW_WRITE)):
                if self.acc[raw, i]:          # lines that crossed compressed: moved, raw
                    c[f"comp.dram.{d}.{s}"] = int(self.acc[moved, i])
                    c[f"comp.dram.{d}.{s}.raw"] = int(self.acc[raw, i])
        for name, slot in self._slots.items():       # per named surface: moved, raw
            for d, moved, raw in (("read", mk.A_SURF_READ, mk.A_SURF_RAW_READ),
                                  ("write", mk.A_SURF_WRITE, mk.A_SURF_RAW_WRITE)):
                if self.acc[raw, slot]:
                    c[f"surf.{name}.{d}"] = int(self.acc[moved, slot])
                    c[f"surf.{name}.{d}.raw"] = int(self.acc[raw, slot])
        for lvl, cfg in enumerate(self.config.levels):
            c[f"mem.cache.{cfg.name}.hits"] = int(self.acc[mk.A_HITS, lvl])
            c[f"mem.cache.{cfg.name}.misses"] = int(self.acc[mk.A_MISSES, lvl])
        return c
