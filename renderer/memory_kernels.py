"""Numba kernels of the memory model: set-associative LRU caches, write-back, in front of DRAM.

Sequential on purpose: the requests are replayed in the order the architecture's units issue
them, which is what makes DRAM bytes depend on locality. All levels share one line size. A read
miss allocates and fetches from the level below; a write miss allocates without fetching
(byte-masked lines, as GPU L2s keep), and dirty victims are written to the level below.

Producers (an architecture's replay, a clear, a resolve, a flush) write line requests into a
buffer and hand it to `serve`, which runs them through the caches in order. Everything one
request sets off (lookup, LRU victim, write-back chain, fetch from below) happens inside that one
loop, with no helper that takes an array: numba reference-counts an array handed to an inlined
helper (two atomic operations per array per call) wherever control flow defeats its pruning, and
in a loop of millions of requests that cost more than the lookups themselves.

The state is three plain arrays (not a tuple of many; an array taken out of a tuple in a loop is
reference-counted too):
    lines  int64 (all sets, F_N, ways)      every level's sets one after another (a level
                                            starts at its SH_BASE); a set is F_N contiguous
                                            rows of its ways: tags, LRU stamps,
                                            info = (tile + 1) << 19 | size << 8 |
                                            stream << 1 | dirty (size: the op's field)
    shape  int64 (levels, SH_N)             sets, ways, level below (-1 = DRAM, always a later
                                            level), set mask (sets - 1, or -1 if sets is not a
                                            power of two), first set, write-allocate (0: a
                                            write miss passes down, as a read-allocate
                                            last-level cache does), LRU clock (one per
                                            level, so two threads can serve two levels),
                                            held: bit (region & 63) set once a line of the
                                            region is allocated at the level (a flush skips
                                            the levels whose bit is clear, and a write a
                                            read-allocate level cannot hold passes it by
                                            unscanned), packed: the level
                                            holds compressed lines (below)
    meta   int64 (M_N,)                     line bytes, log2 line bytes, packed shares, the
                                            named surfaces' slots by region (memory_requests)
    acc    int64 (A_N, width)               byte and event totals (rows below)
    tile_bytes int64 (n_tiles,)             DRAM bytes charged to each screen tile
A way is invalid iff its tag is 0 (no line's: regions start at 1), and then its stamp is 0; a
valid way's stamp is the clock of its last use (>= 1, unique in its level), so the first way of
least stamp is the first invalid way if there is one, else the least recently used.

Compressed lines: a request may carry the bytes its line moves when it crosses to DRAM
(memory_requests.op_sized: a codec's share of a block, as the unit that wrote it compressed it).
A line keeps the size of the last request that wrote it (or, for a read, that fetched it), a
write-back carries it down, and DRAM moves that many bytes instead of the line; the A_COMP_*
rows keep what those transfers moved and their raw equivalent. On chip, lines count whole. A
level that holds compressed lines (SH_PACKED: an L2 that keeps a DCC block as the ROP wrote it,
RDNA 4's; a system cache under UTC) keeps a packed block (memory_requests.line_share) in the
lines its bytes fill: an empty line (a share of 0 bytes) is not kept there, uncounted, and a
stale copy of it is dropped unwritten (the block it belonged to has shrunk), so such a cache
holds more of a compressed surface. The empty line goes on and crosses to DRAM as 0 bytes,
its raw equivalent counted (what the surface would have moved raw).

Named surfaces: DRAM transfers of a region with a slot (meta[M_SLOTS + region], given by
MemoryModel.region to string-named regions) are also counted by slot in the A_SURF_* rows, as
moved and raw.

Requests (renderer.memory_requests, the buffer producers fill): one row per line: level it
enters at, line, op, tile (-1: none). A write-back is a dirty line leaving the level above (a
flush): it counts no on-chip bytes, hits or misses. A fill is a request a level above has passed
on (serve_levels): it counts hits and misses but not its on-chip bytes again. A read-modify-write
(OP_RMW: a ROP's depth test and write of a line) is the read and then the write, served in one
lookup at its entry level, which must be `fusable`: the write is a hit on the line the read
found or allocated, and only the read's fill goes below.

A lookup scans the whole set, with no early exit, so that it compiles to vector compares. (A
table of the way each line was last found in, tried first, was measured and dropped: below the
ROP caches almost no request repeats a recent line, and a mispredicted hint check cost more than
the scan it skipped -- the lower thread of a DSBR replay served its rows 12% faster without it.)
"""
from __future__ import annotations

import numpy as np
from numba import njit

# The request buffer and the addressing its producers share (defined there, once).
from .inlined import callee, inlined
from .memory_requests import (ALL_LEVELS, M_FAR, M_LINE_BYTES, M_LINE_SHIFT, M_N,  # noqa: F401
                              M_PACKED, M_SLOTS, OP_FILL, OP_RMW, OP_SIZE_SHIFT, OP_STREAM_SHIFT,
                              OP_WRITE, OP_WRITE_BACK, OP_WSIZE_SHIFT, R_LEVEL, R_LINE, R_N,
                              R_OP, R_TILE, REGION_SHIFT, REQUESTS, RMW_BITS, SIZE_MASK,
                              block_layout, block_tile, op_code, op_sized, request,
                              request_block, request_block_as, request_fetch)
from .prefetch import prefetch
from .tag_match import tag_way

F_TAG, F_STAMP, F_INFO, F_N = range(4)   # fields of a way
# bits of F_INFO: dirty, stream (7 bits), compressed size field (11 bits, as the op's), tile + 1
I_DIRTY, I_STREAM_SHIFT, I_STREAM_MASK, I_SIZE_SHIFT, I_TILE_SHIFT = 1, 1, 127, 8, 19
(SH_SETS, SH_WAYS, SH_NEXT, SH_MASK, SH_BASE, SH_WALLOC, SH_CLOCK, SH_HELD, SH_PACKED, SH_HINT,
 SH_N) = range(11)
# Hints: a level of HINT_MIN_WAYS ways or more keeps, for each set, HINT_SLOTS words saying
# where lines of the set were last found, slot hint_slot(line) holding line << WAY_BITS | way.
# A lookup whose slot names the line, at a way whose tag is the line, has found it (a set's
# valid tags are unique, and no request is for line 0, the invalid ways' tag) without
# comparing every tag; otherwise the tags are compared and the slot rewritten. A stale slot
# (its line since evicted or invalidated) fails the check, so the hints change no count or
# state, only how fast a hit is found. The tables lie in rows of `lines` after every level's
# sets (SH_HINT: the level's first such row; 0 or -1 for none, row 0 being a set's), which
# nothing else reads (a table whose rows a wider model moved reads as stale hints). A ray
# pass's node fetches meet a 32-way RT L0 (90% hits there), where comparing the set's tags had
# been half of serve_levels' time; narrower levels compare few tags, and hints for all of
# them made the state a third larger and raster frames slower.
HINT_MIN_WAYS = 32
HINT_SLOTS = 32                              # a power of two
HINT_HASH = np.uint64(0x9E3779B97F4A7C15)    # Fibonacci hashing: the product's high bits
HINT_SHIFT = np.uint64(64 - 5)               # log2(HINT_SLOTS) of them
# Rows of acc: bytes by stream (columns) for the first four and A_COMP_*, events by level for
# the two between, bytes by named-surface slot for A_SURF_*. A_COMP_*: the DRAM transfers of
# compressed lines, as moved and raw; A_SURF_*: every DRAM transfer of a named surface, so.
(A_DRAM_READ, A_DRAM_WRITE, A_ONCHIP_READ, A_ONCHIP_WRITE, A_HITS, A_MISSES, A_COMP_READ,
 A_COMP_WRITE, A_COMP_RAW_READ, A_COMP_RAW_WRITE, A_SURF_READ, A_SURF_WRITE, A_SURF_RAW_READ,
 A_SURF_RAW_WRITE, A_N) = range(15)
SURFACE_SLOTS = 128    # named surfaces one model counts apart (slot 0: none)
WAY_BITS = 6
MAX_WAYS = 1 << WAY_BITS   # a way's index fits the low bits of an LRU key (stamp << WAY_BITS | way)
# A level whose state (its sets' rows of `lines`) takes FAR_BYTES or more outgrows the host's
# own caches: an Infinity Cache's 64k sets are 25 MB, and a lookup there waits on host DRAM.
# The model names its largest such level (meta[M_FAR]); serve_levels asks for that level's set
# of the request AHEAD rows on (its tags and stamps) while it serves this one, where that
# request enters the far level or the one above it (a miss there goes on to the far level with
# the same line). bench/bench_replay.py, the lower thread of amd-rdna2's replay at 1080p alone,
# rounds with and without it taking turns in one process (12 each, the rounds' median ratio):
# city 0.82-0.89x the time, sponza 0.95x, pul1duel 0.97x, spheres 1.02x (its rows hit L2: the
# sets asked for are not used), amd-rdna3's city 1.01x (its 19 MB of LLC state sits in the
# host's L3 more often). Asking for the tags alone: city 0.89x, sponza 1.00x; 32 rows ahead:
# city 0.93x, sponza 0.96x; the entry level's set too, or a would-be victim's (its L2 set's
# least recent way, looked up ahead): no measurable gain (city 0.89x and 0.85x against 0.91x
# and 0.86x without them), so neither is asked for. What that missed were the dirty victims the
# level above sends down, whose lines no row names: `serve` now hands everything bound for the
# far level on to a second pass, where every row enters it and is asked for ahead.
FAR_BYTES = 4 << 20
AHEAD = 16
DRAM_BIT = 62          # serve_levels' `own` bit for DRAM


@inlined
def set_of(line, mask, sets, inv_sets):
    """The set (within its level) of `line` at a level of `sets` sets: line & mask where they
    are a power of two (mask = sets - 1, else -1), else line % sets without a 64-bit division
    (the ROP caches have 31 and 39 sets, and their requests are most of a replay's): the float
    quotient (inv_sets = 1 / sets) of a line below 2^52 (MemoryModel.region) is off by at most
    one, corrected."""
    if mask >= 0:
        return line & mask
    r = line - np.int64(line * inv_sets) * sets
    return r + (sets if r < 0 else (-sets if r >= sets else 0))


@inlined
def fusable(shape, lv, n_lines):
    """May a producer send level lv a group of up to n_lines consecutive lines (one surface
    block) as OP_RMW rows (memory_requests.request_block_as with a write): every line read,
    then every line written, served with the same counts, victims and requests below? Where
    the level allocates writes and holds raw lines (so the write hits what the read left), and
    the lines fall in n_lines different sets (so no line of the group is another's victim or
    shares its LRU order: only the stamps' values differ)."""
    return (shape[lv, SH_WALLOC] != 0 and shape[lv, SH_PACKED] == 0
            and shape[lv, SH_SETS] >= n_lines)


@callee
def serve(lines, shape, meta, acc, tile_bytes, rq, n):
    """Runs requests rq[:n] through the caches, in order. Where the model has a far level
    (meta[M_FAR]) over DRAM, in two passes: the levels above it first, handing on what reaches
    the far level or DRAM, and then that, every row of which enters the far level, so that the
    host is asked for each one's set AHEAD rows early (serve_levels): the dirty victims of the
    level above too, whose lines no row of rq names. The counts and states are one pass's
    (serve_levels' hand-on). The pipelined replay's lower thread alone at 1080p through
    amd-rdna2 (bench/bench_replay.py, with and without a far level, 10 rounds taking turns):
    city 0.66x the time (the one pass had been 0.82x), pul1duel 0.62x (1.00x), sponza 0.78x
    (0.95x); whole frames, one pass and two taking turns in one process (9 rounds, median
    ratio): city 0.92x, pul1duel 0.96x, sponza 0.99x, spheres 0.97x; through amd-rdna3 city
    0.91x, sponza 0.90x."""
    far = meta[M_FAR]
    if far < 0 or shape[far, SH_NEXT] != -1:
        serve_levels(lines, shape, meta, acc, tile_bytes, rq, n, ALL_LEVELS, rq, 0)
        return
    lower = (np.int64(1) << far) | (np.int64(1) << DRAM_BIT)
    out = np.empty((n * (shape.shape[0] + 1), R_N), np.int64)
    m = serve_levels(lines, shape, meta, acc, tile_bytes, rq, n, ALL_LEVELS & ~lower, out, 0)
    serve_levels(lines, shape, meta, acc, tile_bytes, out, m, lower, rq, 0)


@callee
def serve_levels(lines, shape, meta, acc, tile_bytes, rq, n, own, out, n_out):
    """Runs requests rq[:n] through the levels in `own` (bit per level; bit DRAM_BIT for DRAM) and
    appends, in order, what reaches any other level to out[n_out:] as requests flagged OP_FILL
    (a fill or write-through from above: it counts hits and misses, not on-chip bytes again) or
    OP_WRITE_BACK (a row whose level is below -1 is a producer's mark for whoever serves out:
    handed on as it is). Serving out afterwards gives the counters and states that serving
    everything at once gives: a level's behaviour depends only on the order of what reaches it,
    and the stamps are per level. Returns the new length of out."""
    lb = meta[M_LINE_BYTES]
    region_shift = REGION_SHIFT - meta[M_LINE_SHIFT]
    words = lines.reshape(-1)             # the hint tables' rows as one run of words
    row_words = lines.shape[1] * lines.shape[2]
    inv_sets = np.empty(shape.shape[0])
    for lv in range(shape.shape[0]):
        inv_sets[lv] = 1.0 / shape[lv, SH_SETS]
    # The level whose state outgrows the host's caches (meta[M_FAR], FAR_BYTES), where this
    # call serves it, and the levels whose requests reach it next (it and the one above):
    # their sets there are asked for AHEAD rows early. Only where the call's first row enters
    # one of those (the lower thread of a pipelined replay, whose rows enter at L2): a ray
    # pass's fetches enter three levels above, and even the test of each row ahead cost its
    # pricing 2-3%.
    far = meta[M_FAR]
    if far >= 0 and (own >> far) & 1 == 0:
        far = -1
    near = np.int64(0)
    if far >= 0:
        for lv in range(shape.shape[0]):
            if lv == far or shape[lv, SH_NEXT] == far:
                near |= np.int64(1) << lv
    # (a row's level & 63: DRAM's -1 and a producer's marks, below it, name no level of near)
    ahead_end = n - AHEAD if n > 0 and (near >> (rq[0, R_LEVEL] & 63)) & 1 else 0
    for i in range(n):
        if i < ahead_end and (near >> (rq[i + AHEAD, R_LEVEL] & 63)) & 1:
            # its tags and stamps (two host lines each); the set as the lookup finds it below
            at = (shape[far, SH_BASE] + set_of(rq[i + AHEAD, R_LINE], shape[far, SH_MASK],
                                               shape[far, SH_SETS], inv_sets[far])) * row_words
            prefetch(words, at)
            prefetch(words, at + 8)
            prefetch(words, at + lines.shape[2])
            prefetch(words, at + lines.shape[2] + 8)
        lv, line, op, tile = rq[i, R_LEVEL], rq[i, R_LINE], rq[i, R_OP], rq[i, R_TILE]
        stream = (op >> OP_STREAM_SHIFT) & I_STREAM_MASK
        size = (op >> OP_SIZE_SHIFT) & SIZE_MASK
        write = (op & OP_WRITE) != 0
        counted = (op & OP_WRITE_BACK) == 0
        if counted and (op & OP_FILL) == 0 and not (size == 1 and lv >= 0 and shape[lv, SH_PACKED]):
            acc[A_ONCHIP_WRITE if write else A_ONCHIP_READ, stream] += lb
        # a read, then a write of the line at the level it enters (OP_RMW): the read below,
        # the write on the way at that level, where the read left the line
        rmw = (op & OP_RMW) != 0
        if rmw and (op & OP_FILL) == 0:
            acc[A_ONCHIP_WRITE, stream] += lb
        below = -2           # a read miss goes on to this level once its victim is written back
        while True:
            if lv < -1 or (own >> (lv if lv >= 0 else DRAM_BIT)) & 1 == 0:   # not ours: hand on
                out[n_out, R_LEVEL], out[n_out, R_LINE], out[n_out, R_TILE] = lv, line, tile
                out[n_out, R_OP] = ((OP_WRITE if write else 0) | (stream << OP_STREAM_SHIFT)
                                    | (OP_FILL if counted else OP_WRITE_BACK)
                                    | (size << OP_SIZE_SHIFT) | ((op & RMW_BITS) if rmw else 0))
                n_out += 1
            elif lv < 0:
                moved = lb if size == 0 else size - 1
                acc[A_DRAM_WRITE if write else A_DRAM_READ, stream] += moved
                if size:
                    acc[A_COMP_WRITE if write else A_COMP_READ, stream] += moved
                    acc[A_COMP_RAW_WRITE if write else A_COMP_RAW_READ, stream] += lb
                if tile >= 0:
                    tile_bytes[tile] += moved
                slot = meta[M_SLOTS + (line >> region_shift)]
                if slot:
                    acc[A_SURF_WRITE if write else A_SURF_READ, slot] += moved
                    acc[A_SURF_RAW_WRITE if write else A_SURF_RAW_READ, slot] += lb
            elif (write and shape[lv, SH_WALLOC] == 0
                  and (shape[lv, SH_HELD] >> ((line >> region_shift) & 63)) & 1 == 0
                  and not (size == 1 and shape[lv, SH_PACKED])):
                # A write a read-allocate level cannot hold, of a region none of whose lines it
                # was ever given (SH_HELD): a miss that allocates nothing, passed down without a
                # look at the set. (An Infinity Cache under a colour surface no pass reads: the
                # L2's write-backs of it looked up 24 MB of tags, a host cache miss each.)
                if counted:
                    acc[A_MISSES, lv] += 1
                lv = shape[lv, SH_NEXT]
                continue
            else:
                s = shape[lv, SH_BASE] + set_of(line, shape[lv, SH_MASK], shape[lv, SH_SETS],
                                                inv_sets[lv])
                ways = shape[lv, SH_WAYS]
                hint_at = np.int64(-1)
                if shape[lv, SH_HINT] > 0:
                    hint_at = ((shape[lv, SH_HINT] * row_words
                                + (s - shape[lv, SH_BASE]) * HINT_SLOTS)
                               + np.int64((np.uint64(line) * HINT_HASH) >> HINT_SHIFT))
                    hint = words[hint_at]
                    w = hint & (MAX_WAYS - 1)
                    if (hint >> WAY_BITS) != line or w >= ways or lines[s, F_TAG, w] != line:
                        w = tag_way(lines, s, ways, line)
                        if w >= 0:
                            words[hint_at] = (line << WAY_BITS) | w
                else:
                    w = tag_way(lines, s, ways, line)      # (F_TAG, the set's first field)
                if size == 1 and shape[lv, SH_PACKED]:      # an empty line of a packed block
                    if w >= 0:
                        lines[s, F_TAG, w] = 0
                        lines[s, F_STAMP, w] = 0
                        lines[s, F_INFO, w] = 0
                    lv = shape[lv, SH_NEXT]
                    continue
                clock = shape[lv, SH_CLOCK] + 1
                shape[lv, SH_CLOCK] = clock
                if w >= 0:                                   # hit
                    lines[s, F_STAMP, w] = clock
                    if counted:
                        acc[A_HITS, lv] += 1
                    if rmw:                                  # and the write: a hit too
                        clock += 1
                        shape[lv, SH_CLOCK] = clock
                        lines[s, F_STAMP, w] = clock
                        acc[A_HITS, lv] += 1
                        lines[s, F_INFO, w] = ((lines[s, F_INFO, w]
                                                & ~np.int64(SIZE_MASK << I_SIZE_SHIFT))
                                               | I_DIRTY | (((op >> OP_WSIZE_SHIFT) & SIZE_MASK)
                                                            << I_SIZE_SHIFT))
                        rmw = False
                    if write:      # the line now holds what this write made of it
                        lines[s, F_INFO, w] = ((lines[s, F_INFO, w]
                                                & ~np.int64(SIZE_MASK << I_SIZE_SHIFT))
                                               | I_DIRTY | (size << I_SIZE_SHIFT))
                else:                                        # miss: replace the LRU way
                    if counted:
                        acc[A_MISSES, lv] += 1
                    if write and shape[lv, SH_WALLOC] == 0:   # read-allocate only: pass down
                        lv = shape[lv, SH_NEXT]
                        continue
                    # LRU way: least (stamp, way) in one vectorised min; stamps are below 2^57
                    key = lines[s, F_STAMP, 0] << WAY_BITS
                    for k in range(1, ways):
                        key = min(key, (lines[s, F_STAMP, k] << WAY_BITS) | k)
                    w = key & (MAX_WAYS - 1)
                    v_line, v_info = lines[s, F_TAG, w], lines[s, F_INFO, w]
                    lines[s, F_TAG, w] = line
                    if hint_at >= 0:
                        words[hint_at] = (line << WAY_BITS) | w
                    lines[s, F_STAMP, w] = clock
                    shape[lv, SH_HELD] |= np.int64(1) << ((line >> region_shift) & 63)
                    lines[s, F_INFO, w] = (((tile + 1) << I_TILE_SHIFT) | (size << I_SIZE_SHIFT)
                                           | (stream << I_STREAM_SHIFT) | (I_DIRTY if write else 0))
                    if rmw:      # the write, a hit on the line just allocated (fusable). (One
                        # block after both branches, the victim's hand-down moved below it,
                        # cost the replay's first thread 3%: written in each branch.)
                        clock += 1
                        shape[lv, SH_CLOCK] = clock
                        lines[s, F_STAMP, w] = clock
                        acc[A_HITS, lv] += 1
                        lines[s, F_INFO, w] = (((tile + 1) << I_TILE_SHIFT) | I_DIRTY
                                               | (((op >> OP_WSIZE_SHIFT) & SIZE_MASK)
                                                  << I_SIZE_SHIFT) | (stream << I_STREAM_SHIFT))
                        rmw = False
                    nxt = shape[lv, SH_NEXT]
                    if not write:
                        below = nxt
                    if v_line > 0 and v_info & I_DIRTY:      # the victim goes down first
                        lv, line, tile = nxt, v_line, (v_info >> I_TILE_SHIFT) - 1
                        stream = (v_info >> I_STREAM_SHIFT) & I_STREAM_MASK
                        size = (v_info >> I_SIZE_SHIFT) & SIZE_MASK
                        write, counted = True, False
                        continue
            if below == -2:
                break
            lv, line, tile = below, rq[i, R_LINE], rq[i, R_TILE]
            stream, write, counted = (op >> OP_STREAM_SHIFT) & I_STREAM_MASK, False, True
            size = (op >> OP_SIZE_SHIFT) & SIZE_MASK
            below = -2
    return n_out


@njit(cache=True, nogil=True, error_model="numpy")
def flush_region(mem, region, invalidate_only, n_lines):
    """End of pass for one surface: STORE writes its dirty lines down to DRAM, level by level
    from the top; DONT_CARE (invalidate_only) drops them without a byte of traffic. A level's
    write-backs are served after its scan: they only reach later levels. n_lines >= 0: the
    region's lines all lie in its first n_lines, so a level of more sets than that scans only
    the sets they map to (in the same order: a surface's DCC keys are 254 lines at 1080p, an
    Infinity Cache 65,536 sets); -1: every set. mem: memory.Serving, as every verb below
    takes it."""
    (lines, shape, meta), acc, tile_bytes = mem
    shift = REGION_SHIFT - meta[M_LINE_SHIFT]
    first = np.int64(region) << shift
    rq = np.empty((REQUESTS, R_N), np.int64)
    for lv in range(shape.shape[0]):          # levels are ordered top (ROP) to bottom
        if (shape[lv, SH_HELD] >> (region & 63)) & 1 == 0:
            continue        # no line of the region was ever allocated here (an Infinity
                            # Cache never holds a colour surface it only had written to it)
        n = 0
        n_sets = shape[lv, SH_SETS]
        # the sets to scan, in order: [0, wrap) and [lo, hi), where the region's lines go
        wrap, lo, hi = np.int64(0), np.int64(0), n_sets
        if 0 <= n_lines < n_sets:
            lo = set_of(first, shape[lv, SH_MASK], n_sets, 1.0 / n_sets)
            hi = min(lo + n_lines, n_sets)
            wrap = lo + n_lines - hi
        for k in range(wrap + hi - lo):
            s = shape[lv, SH_BASE] + (k if k < wrap else lo + k - wrap)
            if n > REQUESTS - MAX_WAYS:       # serving early is safe: write-backs go below
                serve(lines, shape, meta, acc, tile_bytes, rq, n)
                n = 0
            ways = shape[lv, SH_WAYS]
            hit = False                     # a vectorised look first: most sets hold none
            for w in range(ways):
                hit |= (lines[s, F_TAG, w] >> shift) == region
            if not hit:
                continue
            for w in range(ways):
                line, info = lines[s, F_TAG, w], lines[s, F_INFO, w]
                if (line >> shift) != region:     # (an invalid way's tag, 0, is region 0)
                    continue
                if info & I_DIRTY and not invalidate_only:
                    stream = (info >> I_STREAM_SHIFT) & I_STREAM_MASK
                    size = (info >> I_SIZE_SHIFT) & SIZE_MASK
                    n = request(rq, n, shape[lv, SH_NEXT], line,
                                OP_WRITE | OP_WRITE_BACK | (stream << OP_STREAM_SHIFT)
                                | (size << OP_SIZE_SHIFT), (info >> I_TILE_SHIFT) - 1)
                lines[s, F_INFO, w] = info & ~I_DIRTY
                if invalidate_only:
                    lines[s, F_TAG, w] = 0
                    lines[s, F_STAMP, w] = 0     # invalid ways are the oldest
        serve(lines, shape, meta, acc, tile_bytes, rq, n)


@njit(cache=True, nogil=True, error_model="numpy")
def clear_surface(mem, lv, region, bpp, which, stream, blocks_x, tile, tiles_x):
    """Write every line of the blocks in `which` (bool per 8x8 block) once: a clear without
    fast-clear metadata (all blocks), or a fast-clear eliminate (the blocks still cleared).
    DRAM bytes go to the screen tile (of `tile` px, tiles_x across) of each block."""
    (lines, shape, meta), acc, tile_bytes = mem
    full = ~np.uint64(0)
    op = op_code(True, stream)
    layout = block_layout(meta, region, bpp)
    rq = np.empty((REQUESTS, R_N), np.int64)
    n = 0
    for b in range(which.shape[0]):
        if not which[b]:
            continue
        if n > REQUESTS - layout[3]:
            serve(lines, shape, meta, acc, tile_bytes, rq, n)
            n = 0
        n = request_block(rq, n, meta, lv, layout, b, full, op,
                          block_tile(b, blocks_x, tile, tiles_x))
    serve(lines, shape, meta, acc, tile_bytes, rq, n)


@njit(cache=True, nogil=True, error_model="numpy")
def read_blocks(mem, lv, region, bpp, sizes, stream):
    """Read every 8x8 block of a surface once, each at the size it was stored at (sizes[b] >= 0:
    its compressed payload, memory_requests.request_block_as; -1: raw, every line)."""
    (lines, shape, meta), acc, tile_bytes = mem
    op = op_code(False, stream)
    layout = block_layout(meta, region, bpp)
    rq = np.empty((REQUESTS, R_N), np.int64)
    n = 0
    for b in range(sizes.shape[0]):
        if n > REQUESTS - layout[3]:
            serve(lines, shape, meta, acc, tile_bytes, rq, n)
            n = 0
        n = request_block_as(rq, n, meta, lv, layout, b, ~np.uint64(0), op, -1, sizes[b])
    serve(lines, shape, meta, acc, tile_bytes, rq, n)


@njit(cache=True, nogil=True, error_model="numpy")
def write_linear(mem, lv, region, n_bytes, stream, write=True):
    """Write (or read) n_bytes at the start of a region, line by line: metadata such as a fast
    clear's, or a whole surface a full-screen pass samples once per pixel."""
    (lines, shape, meta), acc, tile_bytes = mem
    rq = np.empty((REQUESTS, R_N), np.int64)
    n = 0
    first = region << REGION_SHIFT
    for line in range(first >> meta[M_LINE_SHIFT], ((first + n_bytes - 1) >> meta[M_LINE_SHIFT]) + 1):
        if n == REQUESTS:
            serve(lines, shape, meta, acc, tile_bytes, rq, n)
            n = 0
        n = request(rq, n, lv, line, op_code(write, stream), -1)
    serve(lines, shape, meta, acc, tile_bytes, rq, n)


@njit(cache=True, nogil=True, error_model="numpy")
def resolve_surface(mem, lv, src, dst, n_blocks, color_stream, resolve_stream, blocks_x, tile,
                    tiles_x):
    """MSAA resolve: read every sample line of src, write the single-sample dst.
    src, dst: (region, bytes per pixel)."""
    (lines, shape, meta), acc, tile_bytes = mem
    full = ~np.uint64(0)
    read, write = op_code(False, color_stream), op_code(True, resolve_stream)
    src_blocks, dst_blocks = block_layout(meta, src[0], src[1]), block_layout(meta, dst[0], dst[1])
    rq = np.empty((REQUESTS, R_N), np.int64)
    n = 0
    for b in range(n_blocks):
        if n > REQUESTS - src_blocks[3] - dst_blocks[3]:
            serve(lines, shape, meta, acc, tile_bytes, rq, n)
            n = 0
        t = block_tile(b, blocks_x, tile, tiles_x)
        n = request_block(rq, n, meta, lv, src_blocks, b, full, read, t)
        n = request_block(rq, n, meta, lv, dst_blocks, b, full, write, t)
    serve(lines, shape, meta, acc, tile_bytes, rq, n)
