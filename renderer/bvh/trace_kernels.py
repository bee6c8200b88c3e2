"""The parallel loop of traversal: chunks of rays handed to the kernel of their layout."""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from renderer.atomics import fetch_add
from renderer.inlined import inlined

from .layouts_kernels import L_BVH8
from .traverse_kernels import make_scratch
from .traverse4_kernels import trace_chunk, trace_chunk4_fast
from .traverse8_kernels import trace_chunk8, trace_chunk8_fast

# Which chunk kernel traces a batch (trace's `fast`): the general walk of the layout, bvh8's
# fast walk (nothing recorded, no rotated node) or bvh4's (traverse4_kernels.trace_chunk4_fast)
WALK, FAST_BVH8, FAST_BVH4 = 0, 1, 2
RUN = 32              # chunks a thread takes from the shared cursor at a time (4096 rays), at most
RUNS_PER_THREAD = 8   # runs a thread gets at least, where the batch is too small for runs of RUN
GUIDE = 2             # a run is at most 1 / (GUIDE * threads) of the chunks left


@njit(cache=True, nogil=True, error_model="numpy")
def run_length(n_chunks, n_threads):
    """Chunks a thread takes from the cursor at a time: RUN, fewer for a batch too small to
    give each of n_threads RUNS_PER_THREAD runs of RUN (the last run's thread would finish
    alone: 10,000 rays in runs of RUN are three runs on two threads)."""
    return max(1, min(RUN, n_chunks // (RUNS_PER_THREAD * n_threads)))


@inlined
def next_run(cursor, run, n_chunks, n_threads):
    """The next run of chunks a thread takes from the shared cursor, c0..c1-1 (c0 >= n_chunks:
    none left): at most `run` (run_length's) and at most the chunks left over GUIDE * n_threads
    (trace's docstring says why)."""
    take = max(1, min(run, (n_chunks - cursor[0]) // (GUIDE * n_threads)))
    c0 = fetch_add(cursor, take)
    return c0, min(c0 + take, n_chunks)


@njit(cache=True, nogil=True, error_model="numpy")
def _trace_chunks(tree, job, ah, out, c0, c1, fast, redo):
    """Chunks c0..c1-1 of the rays; each one's record count into out.rec_n[c]. The chunk
    kernels take the structs and open them once per call: compiled, that is the code they had
    taking the 20 arrays one by one (bench/kernel_ir.py: the same instruction and reference
    counts). They share the stack pop (traverse_kernels.pop_nearest); the restart climb reads
    one of two parent arrays and writes the fetch record only when recording, which as an
    inlined helper keeps its arrays reference-counted (the rules in
    renderer/raster_sections.py), so it stays in each kernel. (A first attempt at both, with
    helpers that returned early, measured 15-40% slower in bench/bench_bvh.py.)

    bvh8's fast kernel, which records nothing, takes the chunks' rays in one call: a call opens
    the structs (a reference count on each of their arrays) and makes its working arrays,
    some 0.3 us, which 128 rays that all miss the model (12 ns each) felt."""
    rec_cap, rec_n = out.rec_cap, out.rec_n
    n = job.rays.shape[0]
    if fast == FAST_BVH8:
        n_redo = trace_chunk8_fast(tree, job, ah, out, c0 * job.chunk, min(n, c1 * job.chunk), redo)
        for k in range(n_redo):
            trace_chunk8(tree, job, ah, out, redo[k], redo[k] + 1, 0, 0)
        return
    for c in range(c0, c1):
        r0 = c * job.chunk
        r1 = min(n, r0 + job.chunk)
        if fast == FAST_BVH4:
            rec_n[c] = trace_chunk4_fast(tree, job, ah, out, r0, r1, c * rec_cap, rec_cap, 0,
                                         make_scratch(job.stack))
        elif tree.kind == L_BVH8:
            rec_n[c] = trace_chunk8(tree, job, ah, out, r0, r1, c * rec_cap, rec_cap)
        else:
            rec_n[c] = trace_chunk(tree, job, ah, out, r0, r1, c * rec_cap, rec_cap, 0)


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def trace(tree, job, ah, out, n_threads, fast):
    """All rays of `job` (RayJob) through `tree` (Tree) into `out` (TraceOut), non-opaque
    triangles through their any-hit program (`ah`, AnyHit), parallel over
    chunks of job.chunk rays; chunk c records into out.rec[c * out.rec_cap:]. fast: the chunk
    kernel (WALK, FAST_BVH8, FAST_BVH4: traverse.fast_walk says which). (The structs
    are opened in _trace_chunks, not here: a parallel loop that writes arrays taken out of a
    struct before it is compiled wrong by numba 0.68, which swaps them.)

    The cost of rays varies across an image (sky, then geometry), and so does a thread's speed
    (another process on its core): each thread takes the next run of chunks from a shared
    cursor (renderer.atomics) until none is left, so none waits for another's fixed share. The
    runs shrink towards the end (OpenMP's guided schedule, next_run), so that the threads
    finish within about a chunk of each other rather than a run (dragon's 200k AO rays on two
    threads had been 49 runs of 4096 rays, 1.1 ms each, of a 27 ms trace: 2-4% faster, A/B).
    What a ray gives does not depend on the thread that traced it, nor on the runs."""
    chunk = job.chunk
    n_chunks = (job.rays.shape[0] + chunk - 1) // chunk
    run = run_length(n_chunks, n_threads)
    cursor = np.zeros(1, np.int64)
    for w in prange(n_threads):
        redo = np.empty(run * chunk if fast == FAST_BVH8 else 0, np.int64)
        while True:
            c0, c1 = next_run(cursor, run, n_chunks, n_threads)
            if c0 >= n_chunks:
                break
            _trace_chunks(tree, job, ah, out, c0, c1, fast, redo)


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def compact_records(rec, rec_n, cap, first, out):
    """The chunks' fetch records one after another into out: chunk c's rec_n[c] (at most cap)
    from rec[c * cap] to out[first[c]] (first: their running sum). A pass's batch of 2048
    chunks had been 2048 slices joined by np.concatenate: 0.6 s of a 1080p sponza frame's
    three passes."""
    for c in prange(len(rec_n)):
        src, dst = c * cap, first[c]
        for k in range(rec_n[c]):
            out[dst + k] = rec[src + k]


FOLD_PARTS = 64       # fold_costs's row blocks: partial sums, then their sum


@njit(cache=True, nogil=True, parallel=True, error_model="numpy")
def fold_costs(counts, tot, steps, step_col):
    """The per-ray costs (int32 (n, C_N)) summed into tot (int64 (C_N,), added to) and their
    column step_col copied to steps (int32 (n,)): what a pass keeps of a batch's rows
    (pipelines.passes.raytrace._run), in one pass over them on every thread, where numpy's
    sum over the rows and the column's copy took 0.35 and 0.13 s of a 1080p frame's three
    passes."""
    n, c = counts.shape
    part = np.zeros((FOLD_PARTS, c), np.int64)
    per = (n + FOLD_PARTS - 1) // FOLD_PARTS
    for b in prange(FOLD_PARTS):
        for r in range(b * per, min(n, (b + 1) * per)):
            for k in range(c):
                part[b, k] += counts[r, k]
            steps[r] = counts[r, step_col]
    for b in range(FOLD_PARTS):
        for k in range(c):
            tot[k] += part[b, k]
