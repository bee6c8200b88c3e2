"""Numba kernels of a front end's fetch plan: per input primitive, the lines (index, vertex
position, vertex attributes) and byte ranges (meshlet tables) it reads, in the order it reads
them; and the helper the architectures' memory replays call to issue one primitive's reads.

What reaches the cache is what the fetch units ask for, not one request per item:
- indices: the input assembler streams a draw's index buffer, a line at a time, so each index
  line is requested once, by the first primitive that reads from it;
- vertices: the vertex (or mesh) shader fetches in waves of `wave` lanes, one lane per vertex it
  shades, and a wave's fetch instruction asks for each line its lanes touch once (the texture
  addresser's coalescing: seed 000 L804, seed-notes/000_partA.md l.261, "Wave32 may produce more
  memory transactions than Wave64"). Positions and attributes are separate instructions, each
  with its own waves; a line is requested by the primitive whose vertex first touches it in its
  wave. A mesh shader's waves start afresh at each meshlet (one workgroup each).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from renderer.inlined import inlined
from renderer.memory_requests import request
from renderer.stamped_set import add_new

RECENT = 4   # lines a primitive's issue remembers: requests to them are merged
SLOTS = 512  # per instruction, the stamped set of the lines a wave asked for: at least
             # twice the most lines a wave can touch (two per lane), so probes stay short
MAX_WAVE = SLOTS // 4   # lanes: 128, the widest wave (Adreno's) fits


class Demand(NamedTuple):
    """What each input primitive of a pass reads, before any address: the front end's verdict."""
    prim_off: np.ndarray      # int64 (n_draws + 1,) each draw's first primitive
    local_index: np.ndarray   # int64 (3 n,) each corner's draw-local vertex index
    fetch_index: np.ndarray   # bool (n,) the primitive's three indices are fetched
    fetch_pos: np.ndarray     # bool (3 n,) the corner's position is fetched (a shaded vertex)
    fetch_attr: np.ndarray    # bool (3 n,) ... and its attributes


class MeshletFetch(NamedTuple):
    """The meshlets a pass draws with (empty without), one row each, and where their tables lie."""
    head: np.ndarray          # int64 (n,) p's meshlet row where p is its first primitive, else -1
    alive: np.ndarray         # bool per row: kept by the amplification stage
    vert_off: np.ndarray      # int64 (rows + 1,) its vertices in verts
    verts: np.ndarray         # draw-local vertex indices
    draw: np.ndarray          # per row: its draw
    desc_addr: np.ndarray     # int64 per row: its descriptor's, vertex list's, triangles' bytes
    vlist_addr: np.ndarray
    tri_addr: np.ndarray


class Buffers(NamedTuple):
    """Where the draws' buffers lie and how they are read."""
    index_base: np.ndarray    # int64 per draw: first byte of its index, position, attribute buffer
    pos_base: np.ndarray
    attr_base: np.ndarray
    sizes: tuple              # bytes of an index, position, attribute set, meshlet descriptor,
                              # meshlet vertex-list entry, meshlet triangle
    streams: tuple            # stream ids of (index, vertex) fetches
    line_shift: int           # log2 of the cache line
    wave: int                 # lanes of a vertex fetch wave


class PlanRows(NamedTuple):
    """The fetch plan as build writes it."""
    off: np.ndarray           # int64 (n + 1,) each primitive's entries
    addr: np.ndarray          # int64 entry's first byte
    nbytes: np.ndarray        # int64 its bytes
    stream: np.ndarray        # int64 its stream
    lines: np.ndarray         # int64 (n,) the most lines each primitive's entries span


@njit(cache=True, nogil=True, error_model="numpy")
def build(demand, meshlets, buffers, write, out):
    """Count (write False: fills out.off[1:] with entries per primitive and out.lines[p] with the
    most lines they span) or write (at out.off) the fetch plan of `demand` (Demand) over
    `meshlets` (MeshletFetch) at `buffers` (Buffers). A primitive p with meshlets.head[p] >= 0
    is the first of its meshlet (the descriptor is read there, and when the meshlet is alive its
    lists and vertices). Index and vertex entries are whole lines; meshlet tables are the byte
    ranges they occupy."""
    prim_off, local_index, fetch_index, fetch_pos, fetch_attr = demand
    head, alive, m_vert_off, m_verts, m_draw, desc_addr, vlist_addr, tri_addr = meshlets
    index_base, pos_base, attr_base = buffers.index_base, buffers.pos_base, buffers.attr_base
    index_b, pos_b, attr_b, desc_b, vlist_b, tri_b = buffers.sizes
    s_index, s_vertex = buffers.streams
    line_shift, wave = buffers.line_shift, buffers.wave
    off, addr, nbytes, stream, lines = out
    lb = 1 << line_shift
    keys = np.zeros((2, SLOTS), np.int64)        # per instruction (positions, attributes)
    gens = np.zeros((2, SLOTS), np.int64)
    gen = np.zeros(2, np.int64)                  # the current wave of each instruction
    lanes = np.zeros(2, np.int64)                # lanes it has filled
    for d in range(prim_off.shape[0] - 1):
        last_index = -1                          # the index line the assembler holds
        gen += 1                                 # a draw starts new waves
        lanes[:] = 0
        for p in range(prim_off[d], prim_off[d + 1]):
            e = off[p] if write else 0
            span = 0
            h = head[p]
            if h >= 0:                           # a meshlet's workgroup: new waves
                gen += 1
                lanes[:] = 0
            for kind in range(5):
                # kind 0: three indices; 1: vertex positions; 2: vertex attributes;
                # 3: meshlet tables; 4: meshlet vertices
                n_items = 3 if kind < 3 else 0
                if kind == 3 and h >= 0:
                    n_items = 3 if alive[h] else 1
                if kind == 4 and h >= 0 and alive[h]:
                    n_items = 2 * (m_vert_off[h + 1] - m_vert_off[h])
                for i in range(n_items):
                    a, b, s = -1, 0, s_index
                    if kind == 0:
                        if fetch_index[p]:
                            a, b = index_base[d] + ((p - prim_off[d]) * 3 + i) * index_b, index_b
                    elif kind == 1:
                        if fetch_pos[p * 3 + i]:
                            a, b, s = pos_base[d] + local_index[p * 3 + i] * pos_b, pos_b, s_vertex
                    elif kind == 2:
                        if fetch_attr[p * 3 + i]:
                            a, b, s = attr_base[d] + local_index[p * 3 + i] * attr_b, attr_b, s_vertex
                    elif kind == 3:
                        nv = m_vert_off[h + 1] - m_vert_off[h]
                        if i == 0:
                            a, b = desc_addr[h], desc_b
                        elif i == 1:
                            a, b = vlist_addr[h], nv * vlist_b
                        else:
                            a, b = tri_addr[h], (prim_off_meshlet_tris(head, p, prim_off[d + 1])) * tri_b
                    else:
                        v = m_verts[m_vert_off[h] + i // 2]
                        dm = m_draw[h]
                        if i % 2 == 0:
                            a, b, s = pos_base[dm] + v * pos_b, pos_b, s_vertex
                        else:
                            a, b, s = attr_base[dm] + v * attr_b, attr_b, s_vertex
                    if a < 0 or b <= 0:
                        continue
                    if kind == 3:                # tables: the range as it lies
                        span += ((a + b - 1) >> line_shift) - (a >> line_shift) + 1
                        if write:
                            addr[e], nbytes[e], stream[e] = a, b, s
                        e += 1
                        continue
                    g = 0                        # the vertex instruction: positions or attributes
                    if kind == 2 or (kind == 4 and i % 2 == 1):
                        g = 1
                    if kind != 0:                # one more lane of g's wave
                        if lanes[g] == wave:
                            gen[g] += 1
                            lanes[g] = 0
                        lanes[g] += 1
                    for line in range(a >> line_shift, ((a + b - 1) >> line_shift) + 1):
                        if kind == 0:
                            if line == last_index:
                                continue
                            last_index = line
                        elif not add_new(keys, gens, g, gen[g], line):
                            continue
                        span += 1
                        if write:
                            addr[e], nbytes[e], stream[e] = line << line_shift, lb, s
                        e += 1
            if not write:
                off[p + 1] = e
                lines[p] = span


@inlined
def prim_off_meshlet_tris(head, p, p_end):
    """Triangles of the meshlet that starts at primitive p: up to the next head or the draw's end."""
    q = p + 1
    while q < p_end and head[q] < 0:
        q += 1
    return q - p


@inlined
def issue(rq, n, lv, shift, off, addr, nbytes, op, p):
    """Request primitive p's planned ranges at level lv, one request per line not among the
    last RECENT lines it requested (a meshlet's tables may share lines). Returns the new count."""
    r0 = r1 = r2 = r3 = -1
    for e in range(off[p], off[p + 1]):
        first = addr[e]
        for line in range(first >> shift, ((first + nbytes[e] - 1) >> shift) + 1):
            if line != r0 and line != r1 and line != r2 and line != r3:
                n = request(rq, n, lv, line, op[e], -1)
                r3, r2, r1, r0 = r2, r1, r0, line
    return n
