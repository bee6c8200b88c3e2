"""Traversal of the bvh2 and bvh4 layouts (traverse_kernels describes the rules)."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..inlined import inlined
from ..prefetch import prefetch
from .box4_kernels import box4
from .layouts_kernels import L_BVH2
from .traverse_kernels import (BOX_EPS, FLAG_ANY_HIT, FLAG_OPAQUE, R_DX, R_DY, R_DZ, R_OX, R_OY, R_OZ,
                               R_TMAX, R_TMIN, REC_NODE, REC_PARENT, REC_SHIFT, REC_TRI, REF_BOX,
                               REF_LEAF, REF_TRI, REC_FILL, TRI_NON_OPAQUE, _inv,
                               _tri, _write_costs, any_hit, make_scratch, next_after, pop_nearest,
                               push_spilling, slab_and_key, spill_records)


@njit(cache=True, nogil=True, error_model="numpy")
def trace_chunk(tree, job, ah, out, r0, r1, rec0, rec_cap, root_node):
    """Traces rays r0..r1-1 of `job` (RayJob) through `tree` (Tree: a bvh2 or bvh4 layout)
    from box node `root_node` (a BLAS's root in a two-level walk's merged layout) into `out`
    (TraceOut), non-opaque triangles through `ah` (AnyHit); records fetches into
    out.rec[rec0:rec0 + rec_cap] when rec_cap > 0. Returns the number of records the chunk
    needed."""
    return walk(tree, job, ah, out, r0, r1, rec0, rec_cap, root_node, make_scratch(job.stack))


@inlined
def walk(tree, job, ah, out, r0, r1, rec0, rec_cap, root_node, sc):
    """trace_chunk from box node `root_node` (a BLAS's root in a two-level walk's merged
    layout), with the working arrays `sc` (Scratch).

    One loop per ray; each pass through it either tests a triangle node (or a bvh2 leaf), or
    opens one box node (two in BVH4x2 steps) -- descending from the stack, or re-testing a
    parent while climbing after an overflow. The node decoders are written out here, once,
    with no helper taking an array (numba would reference-count it on every call)."""
    # The structs opened once per chunk (their arrays' reference counts are per call, not per
    # ray or step).
    layout, node_f32, node_u32, tri_f32, tri_u32 = (tree.kind, tree.node_f32, tree.node_u32,
                                                    tree.tri_f32, tree.tri_u32)
    node_parent, tri_parent = tree.node_parent, tree.tri_parent
    rays, flags, stack, dual, box_rate = job.rays, job.flags, job.stack, job.dual, job.box_rate
    spill_at, sort = job.spill_at, job.sort
    out_prim, out_t, costs, rec = out.prim, out.t, out.costs, out.rec
    st_ref, st_t = sc.st_ref, sc.st_t
    at, ak, ar, na = sc.at, sc.ak, sc.ar, sc.na     # the opened node(s)' children: 8 slots each
    box_clocks = sc.box_clocks          # a step's clocks by its box tests: a table, not a
    for n in range(9):                  # 64-bit division every step
        box_clocks[n] = (n + box_rate - 1) // box_rate
    nrec = 0
    root = (np.int64(root_node) << 2) | REF_BOX
    if layout == L_BVH2 and node_u32[root_node, 7] > 0:
        root = (np.int64(root_node) << 2) | REF_LEAF
    for r in range(r0, r1):
        ox, oy, oz = np.float64(rays[r, R_OX]), np.float64(rays[r, R_OY]), np.float64(rays[r, R_OZ])
        dx, dy, dz = np.float64(rays[r, R_DX]), np.float64(rays[r, R_DY]), np.float64(rays[r, R_DZ])
        tmin, tmax = np.float64(rays[r, R_TMIN]), np.float64(rays[r, R_TMAX])
        ix, iy, iz = _inv(dx), _inv(dy), _inv(dz)
        best_t = tmax
        best_p = np.int64(-1)
        cur, last = np.int64(root), np.int64(-1)
        size, top, over = 0, 0, False      # entries, ring position of the next push, lost any
        steps = box_nodes = leaf_nodes = box_tests = tri_tests = 0
        overflows = restarts = refetch = parent_reads = duals = clocks = 0
        anyhits = ignored = texels = culled = 0
        pushes = pops = spills = fills = on_chip = 0
        done = False
        while not done:
            lim = best_t * (1.0 + BOX_EPS)
            climbing = False
            if cur >= 0 and (cur & 3) != REF_BOX:           # triangle node(s)
                i = cur >> 2
                s0, s1 = i, i + 1
                if (cur & 3) == REF_LEAF:
                    s0 = np.int64(node_u32[i, 3])
                    s1 = s0 + np.int64(node_u32[i, 7])
                for s in range(s0, s1):          # one triangle per 64 B triangle node
                    steps += 1
                    leaf_nodes += 1
                    tri_tests += 1
                    clocks += 1                   # one test: one clock at any rate
                    if rec_cap > 0:
                        if nrec < rec_cap:
                            rec[rec0 + nrec] = (REC_TRI << REC_SHIFT) | s
                        nrec += 1
                    tflags = tri_u32[s, 13] >> 24
                    t, cut = _tri(ox, oy, oz, dx, dy, dz, tmin, tmax, np.float64(tri_f32[s, 0]),
                                  np.float64(tri_f32[s, 1]), np.float64(tri_f32[s, 2]),
                                  np.float64(tri_f32[s, 3]), np.float64(tri_f32[s, 4]),
                                  np.float64(tri_f32[s, 5]), np.float64(tri_f32[s, 6]),
                                  np.float64(tri_f32[s, 7]), np.float64(tri_f32[s, 8]),
                                  tflags, flags)
                    culled += cut
                    p = np.int64(tri_u32[s, 12])
                    if t < np.inf and (t < best_t or (t == best_t and p < best_p)):
                        if tflags & TRI_NON_OPAQUE and not flags & FLAG_OPAQUE:
                            ok, n_bytes, nrec = any_hit(ah, p, ox, oy, oz, dx, dy, dz, flags, rec,
                                                       rec0, nrec, rec_cap)
                            anyhits += 1
                            texels += n_bytes
                            if not ok:
                                ignored += 1
                                continue
                        best_t, best_p = t, p
                        if flags & FLAG_ANY_HIT:
                            done = True
                            break
                last = cur
                cur = -1
                continue
            if cur >= 0:
                node = cur >> 2
            else:
                # pop the nearest entry still in front of the closest hit
                in_memory = size - on_chip
                top, size, cur, last, n_pop, on_chip, n_fill = pop_nearest(
                    st_ref, st_t, top, size, stack, lim, last, spill_at, on_chip)
                pops += n_pop
                fills += n_fill
                if rec_cap > 0 and n_fill > 0:
                    nrec = spill_records(rec, rec0, nrec, rec_cap, REC_FILL, r, in_memory - 1,
                                         n_fill, -1)
                if cur >= 0:
                    continue
                if not over:
                    break
                # stack dry after an overflow: climb from the last node visited
                kind = last & 3
                node = np.int64(tri_parent[last >> 2] if kind == REF_TRI else node_parent[last >> 2])
                parent_reads += 1
                if rec_cap > 0:
                    if nrec < rec_cap:
                        rec[rec0 + nrec] = (REC_PARENT << REC_SHIFT) | (
                            (last >> 2) * 2 + (1 if kind == REF_TRI else 0))
                    nrec += 1
                if node < 0:
                    break
                climbing = True
                refetch += 1
            # BVH4x2: a second box node from the stack top in the same step
            second = np.int64(-1)
            if dual and not climbing and size > 0:
                tp = top - 1 if top > 0 else stack - 1
                e = st_ref[tp]
                if (e & 3) == REF_BOX and st_t[tp] <= lim:
                    top = tp
                    size -= 1
                    second = e >> 2
                    duals += 1
                    pops += 1
                    if on_chip > 0:
                        on_chip -= 1
                    elif spill_at > 0:
                        fills += 1
                        if rec_cap > 0:
                            nrec = spill_records(rec, rec0, nrec, rec_cap, REC_FILL, r, size, 1, 1)
            steps += 1
            for q in range(2 if second >= 0 else 1):
                i = node if q == 0 else second
                if not climbing:
                    box_nodes += 1
                if rec_cap > 0:
                    if nrec < rec_cap:
                        rec[rec0 + nrec] = (REC_NODE << REC_SHIFT) | (
                            node_u32[i, 3] if layout == L_BVH2 else i)
                    nrec += 1
                b = 8 * q
                if layout == L_BVH2:          # the node's two children, adjacent 32 B nodes
                    l = np.int64(node_u32[i, 3])
                    for j in range(2):
                        c = l + j
                        at[b + j], ak[b + j] = slab_and_key(
                            node_f32[c, 0], node_f32[c, 1], node_f32[c, 2], node_f32[c, 4],
                            node_f32[c, 5], node_f32[c, 6], ox, oy, oz, ix, iy, iz, tmin, tmax,
                            lim, sort)
                        ar[b + j] = (c << 2) | (REF_LEAF if node_u32[c, 7] > 0 else REF_BOX)
                    n = 2
                else:                         # bvh4, radv box32: 4 child ids, 4 AABBs
                    # all four slots tested at once (box4_kernels), the used ones packed
                    box4(node_f32, i, ox, oy, oz, ix, iy, iz, tmin, tmax, lim, sort, at, ak, b)
                    n = 0
                    for j in range(4):
                        w = node_u32[i, j]
                        if w == 0xFFFFFFFF:
                            continue
                        at[b + n], ak[b + n] = at[b + j], ak[b + j]
                        ar[b + n] = (np.int64(w >> 3) << 2) | (REF_BOX if (w & 7) == 5 else REF_TRI)
                        n += 1
                box_tests += n
                na[q] = n
            clocks += box_clocks[na[0] + (na[1] if second >= 0 else 0)]
            if climbing:
                # continue with the first child after `last` in (key, slot) order
                n = na[0]
                nxt = next_after(at, ak, ar, n, last, lim)
                if nxt >= 0:
                    cur = nxt
                    restarts += 1
                else:
                    last = (node << 2) | REF_BOX
                continue
            # keep the children in front of the closest hit, in key order (ties by slot)
            m0 = m1 = 0
            for q in range(2 if second >= 0 else 1):
                b = 8 * q
                m = 0
                for j in range(na[q]):
                    t = at[b + j]
                    if t <= lim and t < np.inf:
                        at[b + m], ak[b + m], ar[b + m] = t, ak[b + j], ar[b + j]
                        m += 1
                for x in range(1, m):     # insertion sort by key, stable
                    t, k, rf = at[b + x], ak[b + x], ar[b + x]
                    y = x - 1
                    while y >= 0 and ak[b + y] > k:
                        at[b + y + 1], ak[b + y + 1], ar[b + y + 1] = (at[b + y], ak[b + y],
                                                                       ar[b + y])
                        y -= 1
                    at[b + y + 1], ak[b + y + 1], ar[b + y + 1] = t, k, rf
                if q == 0:
                    m0 = m
                else:
                    m1 = m
            # push the second node's hits, then the first's but its nearest, far first (slots
            # 8 + j, then j)
            n1 = max(m1 - (0 if m0 > 0 else 1), 0)       # the second's (all but its nearest
            for x in range(n1 + max(m0 - 1, 0)):          # when the first kept none)
                k = 8 + m1 - 1 - x if x < n1 else m0 - 1 - (x - n1)
                st_ref[top], st_t[top] = ar[k], at[k]
                top = top + 1 if top + 1 < stack else 0
                pushes += 1
                on_chip, spills, nrec = push_spilling(on_chip, spill_at, spills, rec, rec0, nrec,
                                                      rec_cap, r, size)
                if size == stack:
                    overflows += 1
                    over = True
                else:
                    size += 1
            if m0 > 0:
                cur = ar[0]
            elif m1 > 0:
                cur = ar[8]
            else:
                last = ((second if second >= 0 else node) << 2) | REF_BOX
                cur = -1
        out_prim[r] = best_p
        out_t[r] = best_t if best_p >= 0 else np.inf
        _write_costs(costs, r, steps, box_nodes, leaf_nodes, box_tests, tri_tests, overflows, restarts,
                     refetch, parent_reads, duals, 0, clocks, anyhits, ignored, texels, culled,
                     pushes, pops, spills, fills)
    return nrec


@njit(cache=True, nogil=True, error_model="numpy")
def trace_chunk4_fast(tree, job, ah, out, r0, r1, rec0, rec_cap, root_node, sc):
    """trace_chunk for the bvh4 layout's common case, from box node `root_node` with the
    working arrays `sc` (Scratch, for job.stack entries; a two-level walk's BLASes share one): one box node a step (no BVH4x2), no
    overflow of the stack's ring, no candidate hit on a non-opaque triangle. The
    same decisions in the same order, so the same hits, counters and fetch records
    (tests/test_bvh.py holds the two equal); a ray that needs one of those is traced again from
    its start by trace_chunk's walk, its records so far dropped. Returns the records the chunk
    needed, as trace_chunk.

    What it leaves out is what made the general walk's step cost a box node 32 ns on sponza's
    camera rays where bvh8's fast walk takes 15: a BVH4x2 pair's loops, the restart's climb
    and its last-visited bookkeeping, each a branch or a value kept in a register at every
    step."""
    node_f32, node_u32, tri_f32, tri_u32 = tree.node_f32, tree.node_u32, tree.tri_f32, tree.tri_u32
    rays, flags, stack, box_rate, sort = job.rays, job.flags, job.stack, job.box_rate, job.sort
    spill_at = job.spill_at
    out_prim, out_t, costs, rec = out.prim, out.t, out.costs, out.rec
    st_ref, st_t, at, ak, ar = sc.st_ref, sc.st_t, sc.at, sc.ak, sc.ar
    box_clocks = sc.box_clocks
    flat_tri = tri_f32.reshape(-1)          # (a triangle node's 64 B, one host line)
    for n in range(9):
        box_clocks[n] = (n + box_rate - 1) // box_rate
    nrec = 0
    for r in range(r0, r1):
        n0 = nrec
        ox, oy, oz = np.float64(rays[r, R_OX]), np.float64(rays[r, R_OY]), np.float64(rays[r, R_OZ])
        dx, dy, dz = np.float64(rays[r, R_DX]), np.float64(rays[r, R_DY]), np.float64(rays[r, R_DZ])
        tmin, tmax = np.float64(rays[r, R_TMIN]), np.float64(rays[r, R_TMAX])
        ix, iy, iz = _inv(dx), _inv(dy), _inv(dz)
        best_t = tmax
        best_p = np.int64(-1)
        cur = (np.int64(root_node) << 2) | REF_BOX
        size, top, on_chip = 0, 0, 0
        steps = box_nodes = leaf_nodes = box_tests = tri_tests = clocks = culled = 0
        pushes = pops = spills = fills = 0
        bail = False
        while True:
            lim = best_t * (1.0 + BOX_EPS)
            if cur < 0:
                in_memory = size - on_chip
                top, size, cur, _, n_pop, on_chip, n_fill = pop_nearest(
                    st_ref, st_t, top, size, stack, lim, cur, spill_at, on_chip)
                pops += n_pop
                fills += n_fill
                if rec_cap > 0 and n_fill > 0:
                    nrec = spill_records(rec, rec0, nrec, rec_cap, REC_FILL, r, in_memory - 1,
                                         n_fill, -1)
                if cur < 0:
                    break
                continue
            if (cur & 3) == REF_TRI:                  # one triangle per 64 B triangle node
                s = cur >> 2
                steps += 1
                leaf_nodes += 1
                tri_tests += 1
                clocks += 1
                if rec_cap > 0:
                    if nrec < rec_cap:
                        rec[rec0 + nrec] = (REC_TRI << REC_SHIFT) | s
                    nrec += 1
                tflags = tri_u32[s, 13] >> 24
                t, cut = _tri(ox, oy, oz, dx, dy, dz, tmin, tmax, np.float64(tri_f32[s, 0]),
                              np.float64(tri_f32[s, 1]), np.float64(tri_f32[s, 2]),
                              np.float64(tri_f32[s, 3]), np.float64(tri_f32[s, 4]),
                              np.float64(tri_f32[s, 5]), np.float64(tri_f32[s, 6]),
                              np.float64(tri_f32[s, 7]), np.float64(tri_f32[s, 8]), tflags, flags)
                culled += cut
                p = np.int64(tri_u32[s, 12])
                cur = -1
                if t < np.inf and (t < best_t or (t == best_t and p < best_p)):
                    if tflags & TRI_NON_OPAQUE and not flags & FLAG_OPAQUE:
                        bail = True               # its any-hit program: the walk's
                        break
                    best_t, best_p = t, p
                    if flags & FLAG_ANY_HIT:
                        break
                continue
            i = cur >> 2
            steps += 1
            box_nodes += 1
            if rec_cap > 0:
                if nrec < rec_cap:
                    rec[rec0 + nrec] = (REC_NODE << REC_SHIFT) | i
                nrec += 1
            box4(node_f32, i, ox, oy, oz, ix, iy, iz, tmin, tmax, lim, sort, at, ak, 0)
            # the used slots counted, those in front of the closest hit packed in slot order
            n = m = 0
            for j in range(4):
                w = node_u32[i, j]
                if w == 0xFFFFFFFF:
                    continue
                n += 1
                t = at[j]
                if not (t <= lim and t < np.inf):
                    continue
                at[m], ak[m] = t, ak[j]
                ar[m] = (np.int64(w >> 3) << 2) | (REF_BOX if (w & 7) == 5 else REF_TRI)
                if flags & FLAG_ANY_HIT and (w & 7) != 5:
                    # a first-hit ray's kept triangle, asked of the host's caches now (as
                    # trace_chunk8_fast does): bench_bvh's AO rays through the bvh4 layout,
                    # rounds with and without it taking turns in one process, dragon 0.97x the
                    # time, sponza 0.98x; closest-hit rays 0.99-1.00x, left without it
                    prefetch(flat_tri, np.int64(w >> 3) * tri_f32.shape[1])
                m += 1
            box_tests += n
            clocks += box_clocks[n]
            for x in range(1, m):         # insertion sort by key, stable
                t, k, rf = at[x], ak[x], ar[x]
                y = x - 1
                while y >= 0 and ak[y] > k:
                    at[y + 1], ak[y + 1], ar[y + 1] = at[y], ak[y], ar[y]
                    y -= 1
                at[y + 1], ak[y + 1], ar[y + 1] = t, k, rf
            # all but the nearest pushed, far first; a full ring would overwrite: the walk's
            if size + m - 1 > stack:
                bail = True
                break
            for x in range(m - 1, 0, -1):
                st_ref[top], st_t[top] = ar[x], at[x]
                top = top + 1 if top + 1 < stack else 0
                on_chip, spills, nrec = push_spilling(on_chip, spill_at, spills, rec, rec0, nrec,
                                                      rec_cap, r, size)
                size += 1
            pushes += max(m - 1, 0)
            cur = ar[0] if m > 0 else np.int64(-1)
        if bail:
            # from the start, by the walk, where this ray's records begin (past the room: the
            # chunk is traced again with room enough, so the walk only needs to count)
            room = rec_cap - n0
            if rec_cap > 0 and room <= 0:
                nrec = n0 + trace_chunk(tree, job, ah, out, r, r + 1, rec0, 1, root_node)
            else:
                nrec = n0 + trace_chunk(tree, job, ah, out, r, r + 1, rec0 + n0, room,
                                        root_node)
            continue
        out_prim[r] = best_p
        out_t[r] = best_t if best_p >= 0 else np.inf
        _write_costs(costs, r, steps, box_nodes, leaf_nodes, box_tests, tri_tests, 0, 0, 0, 0, 0,
                     0, clocks, 0, 0, 0, culled, pushes, pops, spills, fills)
    return nrec
