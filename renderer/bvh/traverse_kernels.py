"""BVH traversal's shared parts: the ray and cost layouts, the flags, the slab and triangle
tests, the brute-force twin and the replay of fetch records. The kernels that walk a layout
read it through its own node words: traverse4_kernels.trace_chunk reads bvh2 and bvh4 (BVH4x2
steps included), choosing the decoder by a small layout code (layouts_kernels.L_*) as hardware
picks the node type; traverse8_kernels reads bvh8 (with or without OBB), in kernels of its own so
that its 8-wide box test compiles to vector code; trace_kernels.trace runs them in parallel over
chunks of rays. All make the same decisions in the same order, described here once.

Per ray: a short stack of `stack` entries (RDNA's LDS ring: overwritten when full, seed-notes
000_partB L99); when it runs dry after an overflow, traversal restarts stacklessly through parent
links and the last node visited: climb to the parent, re-test its children, continue with the
first one after the last node in the same (key, slot) order. Children are visited in the order
of a sort key, ties by slot: by default their entry distance (nearest first); the box sort
heuristics of AMD's driver (SORT_*) order by the length or the midpoint of the ray's interval
in the box instead. Every decision depends only on the ray and the node, so that order is the
same each time a node is re-tested, and the restart resumes exactly where the dropped stack
entries would have. Whatever the order, a child and a stack entry are culled by their entry
distance against the closest hit so far.

Closest hit: the least t, ties by the least triangle id, so every layout and the brute-force
loop agree exactly. bvh2 and bvh4 box tests run in float64 on the float32 planes, with the far
distance widened by BOX_EPS so that a triangle inside a box is never culled by rounding. bvh8
reads the layout's decoded copy of its quantized planes (Layout.child_boxes: decoded once when
the layout is built, rounded outward to float32) and tests them in float32, 8 at once, as the
hardware does (box8_kernels, which gives its own margins), or in float64 with BOX_EPS for a ray
box8's ranges do not cover and at rotated nodes.

Every node and triangle fetch can be recorded (chunk by chunk, in ray order) for the memory
model: a record is kind << 30 | index (REC_*).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from renderer import memory_kernels as mk
from renderer.box_sort import SORT_CLOSEST, SORT_LARGEST, SORT_MIDPOINT
from renderer.inlined import inlined
from renderer.shade_kernels import L_TILED, bilinear_channel, bilinear_taps
from renderer.texture_l1 import texel_blocks

REF_BOX, REF_TRI, REF_LEAF = 0, 1, 2          # ref = index << 2 | kind; REF_LEAF: a bvh2 leaf
# Ray flags, as DXR's RAY_FLAG_* (D3D12_RAY_FLAGS; the bits are ours)
FLAG_ANY_HIT = 1      # ACCEPT_FIRST_HIT_AND_END_SEARCH (the first hit accepted ends the ray)
FLAG_CULL_BACK = 2    # CULL_BACK_FACING_TRIANGLES
FLAG_CULL_FRONT = 4   # CULL_FRONT_FACING_TRIANGLES
FLAG_OPAQUE = 8       # FORCE_OPAQUE: every triangle opaque, no any-hit runs
FLAG_CULL_NON_OPAQUE = 16   # CULL_NON_OPAQUE: alpha-tested and blended triangles are not there
FLAG_IGNORE_BLEND = 32      # not DXR's: the application's any-hit ignores blended surfaces for
                            # this ray type (shadow and AO rays: a transparent surface casts no
                            # shadow and occludes no ambient light, as raster engines leave
                            # translucent draws out of their shadow passes)
# builder.TRI_*, kept in the triangle node's flags byte
TRI_CULL_DISABLE, TRI_FRONT_CW, TRI_ALPHA_TEST, TRI_BLEND = 1, 2, 4, 8
TRI_NON_OPAQUE = TRI_ALPHA_TEST | TRI_BLEND
REC_NODE, REC_TRI, REC_PARENT, REC_TEXEL, REC_SPILL, REC_FILL = 0, 1, 2, 3, 4, 5
# the two-level walk's (renderer.bvh.two_level_kernels): a TLAS node, an instance node, a TLAS
# parent link (index: node * 2, or instance * 2 + 1)
REC_TLAS, REC_INSTANCE, REC_TLAS_PARENT = 6, 7, 8
# replay's table kinds: node, leaf, node parent link, triangle parent link, texel chunk, spill,
# fill, TLAS node, instance node, TLAS node parent link, instance parent link
(K_NODE, K_LEAF, K_NODE_PARENT, K_TRI_PARENT, K_TEXEL, K_SPILL, K_FILL, K_TLAS, K_INSTANCE,
 K_TLAS_PARENT, K_INSTANCE_PARENT, K_N) = range(12)
SPILL_SLOTS = 512      # a ray's spill area, entries (spill slot = ray * SPILL_SLOTS + depth)
TEXEL_REC_SHIFT = 6   # a texel record is a byte address in the texture data >> 6 (64 B chunks:
                      # every stored block lies in one, RGBA8's 4x4 fills one)
KEY_MAX = float(np.finfo(np.float32).max)   # a midpoint's ends held to this: never inf - inf
REC_SHIFT = 30
BOX_EPS = 1e-9        # relative; float64 box and triangle distances agree to ~1e-15
# Per-ray counters (columns of cnt)
(C_STEPS, C_BOX_NODES, C_LEAF_NODES, C_BOX_TESTS, C_TRI_TESTS, C_OVERFLOWS, C_RESTARTS,
 C_REFETCH, C_PARENT_READS, C_DUAL, C_OBB, C_CLOCKS, C_ANYHIT, C_ANYHIT_IGNORED, C_TEXEL_BYTES,
 C_CULLED, C_PUSHES, C_POPS, C_SPILLS, C_FILLS, C_N) = range(21)
COUNTER_NAMES = ("steps", "nodes.box", "nodes.leaf", "tests.box", "tests.tri", "stack.overflows",
                 "stack.restarts", "nodes.refetch", "parent_reads", "dual_steps", "obb_transforms",
                 "isect_clocks", "anyhit", "anyhit.ignored", "bytes.texture", "hits.culled",
                 "stack.pushes", "stack.pops", "stack.spills", "stack.fills")
# nodes.box: box nodes fetched while descending; nodes.refetch: fetched again by restarts;
# obb_transforms: box-node openings whose node is rotated (the ray transformed into its frame):
# a subset of nodes.box + nodes.refetch, not a node type of its own.
# isect_clocks: intersection-unit clocks at the preset's rates, ceil(tests / rate) per step (a
# node's box tests, a leaf node's triangle tests): 4 box or 1 triangle test per clock on RDNA 2/3,
# 8 or 2 on RDNA 4 (seed-notes 000_partA l.188, 000_partB l.84)
# anyhit: any-hit invocations (a candidate hit on a non-opaque triangle that would become the
# ray's hit: shader work on every generation, seed-notes 000_partB l.93, 004_partB l.222);
# anyhit.ignored: those whose surface let the ray through (alpha under the cutoff, or a blended
# surface the ray type ignores); bytes.texture: the texel blocks their alpha lookups read, at
# their format's block size, before any cache (as bytes.node, bytes.leaf);
# hits.culled: candidate hits a cull flag removed (where the ray flags are filtered in the
# shader, RDNA 2, each is an intermediate hit returned to it: seed-notes 000_partA l.205)
# stack.pushes / stack.pops: entries written to and read from the traversal stack (a pop that
# finds an entry behind the closest hit reads it too); stack.spills / stack.fills: under the
# spill policy (RayJob.spill_at > 0), entries moved to memory when the on-chip part is full and
# read back from it when the on-chip part has run dry (records REC_SPILL / REC_FILL: a slot of
# the ray's spill area, priced through the caches); the ring policy (spill_at 0, RDNA's)
# overwrites instead: stack.overflows, then restarts
# Ray columns
R_OX, R_OY, R_OZ, R_TMIN, R_DX, R_DY, R_DZ, R_TMAX, R_N = range(9)


class Tree(NamedTuple):
    """A layout as the traversal kernels read it (layouts.Layout.for_traversal)."""
    kind: int                  # layouts_kernels.L_*
    node_f32: np.ndarray       # the box nodes' words as float32 (n_nodes, words)
    node_u32: np.ndarray       # ... the same bytes as uint32
    tri_f32: np.ndarray        # the triangle nodes' words as float32 (n_tris, words)
    tri_u32: np.ndarray        # ... as uint32
    node_parent: np.ndarray    # int32 per box node, -1 at the root (restarts climb these)
    tri_parent: np.ndarray     # int32 per triangle node
    obb_table: np.ndarray      # float64 (N_OBB, 3, 3) the OBB rotations (bvh8)
    child_boxes: np.ndarray    # float32 (n_nodes, 6, 8) bvh8's decoded child planes
    tri_corners: np.ndarray    # float32 (n_tris, 9, 4) bvh8 primitive nodes' corners by lane
    node_head: np.ndarray      # uint32 (n_nodes, 4) bvh8: the node words the fast walk reads
    tri_head: np.ndarray       # uint32 (n_tris, 8) bvh8: a primitive node's first 8 words


class RayJob(NamedTuple):
    """The rays and how they are traced."""
    rays: np.ndarray           # float32 (n, R_N)
    chunk: int                 # rays per parallel work item
    flags: int                 # FLAG_*
    stack: int                 # short-stack entries
    dual: bool                 # BVH4x2 steps (bvh4)
    box_rate: int              # box tests per clock (isect_clocks)
    tri_rate: int              # triangle tests per clock
    spill_at: int              # 0: the stack is a ring of `stack` entries that overwrites and
                               # restarts (RDNA); > 0: this many entries on chip, the rest spill
                               # to memory (the ring then as deep as SPILL_SLOTS)
    sort: int                  # SORT_*: the order a node's children are visited in


class AnyHit(NamedTuple):
    """What the any-hit program of non-opaque triangles reads (pipelines.passes.raytrace makes
    it from the scene's draws and the preset's texture unit): the triangle's corners and uv at
    its corners, its draw's base alpha, cutoff and texture, and the texture table the raster
    samples (renderer.shade.TextureTable). Rows are per non-opaque triangle (slot)."""
    slot: np.ndarray           # int32 (n_tris,) the triangle's row, -1 opaque; (0,) if none is
    v: np.ndarray              # float32 (m, 3, 3) corners (the BVH's)
    uv: np.ndarray             # float32 (m, 3, 2) texture coordinates at the corners
    alpha: np.ndarray          # float32 (m,) base colour alpha (the material's)
    cutoff: np.ndarray         # float32 (m,) alpha cutoff, or -1 for a blended triangle
    texture: np.ndarray        # int32 (m,) texture (TextureTable row), -1 none
    tex_data: np.ndarray       # TextureTable.data, levels, sampler, base, block
    tex_levels: np.ndarray
    tex_sampler: np.ndarray
    tex_base: np.ndarray
    tex_block: np.ndarray

    @staticmethod
    def none() -> "AnyHit":
        """The table of a scene whose triangles are all opaque: empty, read by no kernel (its
        texture arrays typed as renderer.shade.TextureTable's, so that both share one compile)."""
        z = np.zeros
        return AnyHit(z(0, np.int32), z((0, 3, 3), np.float32), z((0, 3, 2), np.float32),
                      z(0, np.float32), z(0, np.float32), z(0, np.int32), z(1, np.uint32),
                      z((1, 1, 5), np.int64), z((1, 3), np.int64), z(1, np.int64), z((1, 5), np.int64))


class Scratch(NamedTuple):
    """A walk's working arrays (traverse4_kernels.walk, traverse8_kernels.walk8), made once per
    chunk (make_scratch) rather than once per walk: a two-level walk enters a BLAS per instance."""
    st_ref: np.ndarray         # int64 (stack,) the short stack's entries: refs
    st_t: np.ndarray           # float64 (stack,) their entry distances
    at: np.ndarray             # float64 (16,) the opened node(s)' children's distances (8 each)
    ak: np.ndarray             # float64 (16,) their sort keys (box_key)
    ar: np.ndarray             # int64 (16,) their refs (walk), or slots kept (walk8)
    na: np.ndarray             # int64 (2,) children per opened node (walk)
    at32: np.ndarray           # float32 (8,) box8's distances (walk8)
    ak32: np.ndarray           # float32 (8,) and keys
    lane_t: np.ndarray         # float64 (4,) tri4's
    lane_det: np.ndarray
    box_clocks: np.ndarray     # int64 (9,) clocks of a step's n box tests (walk8, walk)


@inlined
def make_scratch(stack):
    return Scratch(np.empty(stack, np.int64), np.empty(stack), np.empty(16), np.empty(16),
                   np.empty(16, np.int64), np.zeros(2, np.int64), np.empty(8, np.float32),
                   np.empty(8, np.float32), np.empty(4), np.empty(4), np.empty(9, np.int64))


class TraceOut(NamedTuple):
    """What tracing writes, per ray and per chunk."""
    prim: np.ndarray           # int64 (n,) the closest (or first) hit's triangle, -1: miss
    t: np.ndarray              # float64 (n,) its distance, inf: miss
    costs: np.ndarray          # int32 (n, C_N) per-ray costs
    rec: np.ndarray            # int64 fetch records, chunk c's from c * rec_cap
    rec_cap: int               # records a chunk may write (0: record nothing)
    rec_n: np.ndarray          # int64 (n_chunks,) records each chunk needed


@inlined
def _inv(d):
    """1/d, or 0 for d == 0: the flag _axis reads as "parallel to this slab"."""
    return 1.0 / d if d != 0.0 else 0.0


@inlined
def _axis(l, h, o, i, tn, tf):
    """Clip [tn, tf] by one slab. i = 0 means the ray is parallel to it: inside or out."""
    if i == 0.0:
        if o < l or o > h:
            return np.inf, -np.inf
        return tn, tf
    a, b = (l - o) * i, (h - o) * i
    return max(tn, min(a, b)), min(tf, max(a, b))


@inlined
def _slab(lx, ly, lz, hx, hy, hz, ox, oy, oz, ix, iy, iz, tmin, tmax):
    """Entry distance of the ray into the box, or inf if it misses within [tmin, tmax]."""
    tn, tf = _axis(lx, hx, ox, ix, tmin, np.inf)
    tn, tf = _axis(ly, hy, oy, iy, tn, tf)
    tn, tf = _axis(lz, hz, oz, iz, tn, tf)
    if tn <= min(tf + abs(tf) * BOX_EPS + 1e-300, tmax):
        return tn
    return np.inf


@inlined
def box_key(sort, tn, near, far, lim):
    """A kept child's sort key (SORT_*): its entry distance tn (clamped to the ray's tmin), or
    from the interval [near, far] before clamping: tn - min(far, lim) (largest first; lim the
    closest hit so far, constant for the first-hit rays this order is for) or near + far
    (lowest midpoint), near held above -KEY_MAX and far below KEY_MAX so that an unbounded
    box sorts by its finite end or last, never as NaN (a kept box has near <= its entry <= lim
    and far >= its entry >= tmin: the other sides need no bound)."""
    if sort == SORT_LARGEST:
        return tn - min(far, lim)
    if sort == SORT_MIDPOINT:
        return max(near, -KEY_MAX) + min(far, KEY_MAX)
    return tn


@inlined
def slab_and_key(lx, ly, lz, hx, hy, hz, ox, oy, oz, ix, iy, iz, tmin, tmax, lim, sort):
    """_slab's entry distance (inf: missed) and the box's sort key (inf where missed): the
    entry itself nearest first, else box_key of the interval _axis gives from (-inf, inf),
    whose entry clamped to tmin and exit are _slab's own (max and min round nothing)."""
    if sort == SORT_CLOSEST:
        tn = _slab(lx, ly, lz, hx, hy, hz, ox, oy, oz, ix, iy, iz, tmin, tmax)
        return tn, tn
    near, far = _axis(lx, hx, ox, ix, -np.inf, np.inf)
    near, far = _axis(ly, hy, oy, iy, near, far)
    near, far = _axis(lz, hz, oz, iz, near, far)
    tn = max(tmin, near)
    if tn <= min(far + abs(far) * BOX_EPS + 1e-300, tmax):
        return tn, box_key(sort, tn, near, far, lim)
    return np.inf, np.inf


@inlined
def _culled(det, tflags, flags):
    """Whether a triangle of determinant det (> 0: counter-clockwise) is culled: as a back or
    front face where the ray asks for it and the triangle's draw does not disable culling, or
    as a non-opaque triangle under CULL_NON_OPAQUE (TRI_* in tflags)."""
    if flags & FLAG_CULL_NON_OPAQUE and tflags & TRI_NON_OPAQUE and not flags & FLAG_OPAQUE:
        return True
    if not (flags & (FLAG_CULL_BACK | FLAG_CULL_FRONT)) or tflags & TRI_CULL_DISABLE:
        return False
    back = (det <= 0.0) if not (tflags & TRI_FRONT_CW) else (det >= 0.0)
    return bool(flags & FLAG_CULL_BACK) if back else bool(flags & FLAG_CULL_FRONT)


@inlined
def _tri(ox, oy, oz, dx, dy, dz, tmin, tmax, ax, ay, az, bx, by, bz, cx, cy, cz, tflags, flags):
    """Moeller-Trumbore in float64 on one triangle (scalars only: no array reaches a helper in
    the hot loop). Returns (t in [tmin, tmax] or inf, whether a hit there was culled by the ray's
    flags). The edges of float32 corners are exact in float64. tri4_kernels.tri4 is this test on
    4 triangles at once, bit for bit."""
    e1x, e1y, e1z, e2x, e2y, e2z = bx - ax, by - ay, bz - az, cx - ax, cy - ay, cz - az
    px, py, pz = dy * e2z - dz * e2y, dz * e2x - dx * e2z, dx * e2y - dy * e2x
    det = e1x * px + e1y * py + e1z * pz          # > 0: front face (counter-clockwise)
    if det == 0.0:
        return np.inf, False
    inv = 1.0 / det
    sx, sy, sz = ox - ax, oy - ay, oz - az
    u = (sx * px + sy * py + sz * pz) * inv
    if u < 0.0 or u > 1.0:
        return np.inf, False
    qx, qy, qz = sy * e1z - sz * e1y, sz * e1x - sx * e1z, sx * e1y - sy * e1x
    v = (dx * qx + dy * qy + dz * qz) * inv
    if v < 0.0 or u + v > 1.0:
        return np.inf, False
    t = (e2x * qx + e2y * qy + e2z * qz) * inv
    if t < tmin or t > tmax:
        return np.inf, False
    if _culled(det, tflags, flags):
        return np.inf, True
    return t, False


@njit(cache=True, nogil=True, error_model="numpy")
def any_hit(ah, p, ox, oy, oz, dx, dy, dz, flags, rec, rec0, nrec, rec_cap):
    """The any-hit program of non-opaque triangle p (AnyHit row ah.slot[p]) for a candidate hit
    of ray (o, d): a blended surface is ignored where the ray type says so (FLAG_IGNORE_BLEND)
    and accepted elsewhere; an alpha-tested one is accepted where base alpha x the texture's
    alpha at the hit's uv reaches the cutoff, as the raster's alpha test (level 0, bilinear: a
    ray has no screen derivatives to pick a mip, as DXR's SampleLevel(..., 0) in an any-hit
    shader). Its texel blocks are recorded (REC_TEXEL, each 64 B chunk once) when recording.
    Returns (accepted, texel bytes read, nrec). Called only for candidates, not per step."""
    k = ah.slot[p]
    cutoff = ah.cutoff[k]
    if cutoff < 0.0:
        return not (flags & FLAG_IGNORE_BLEND), 0, nrec
    alpha = np.float64(ah.alpha[k])
    ti = ah.texture[k]
    if ti < 0:
        return alpha >= cutoff, 0, nrec
    # the hit's barycentrics, as _tri finds them
    ax, ay, az = np.float64(ah.v[k, 0, 0]), np.float64(ah.v[k, 0, 1]), np.float64(ah.v[k, 0, 2])
    e1x, e1y, e1z = ah.v[k, 1, 0] - ax, ah.v[k, 1, 1] - ay, ah.v[k, 1, 2] - az
    e2x, e2y, e2z = ah.v[k, 2, 0] - ax, ah.v[k, 2, 1] - ay, ah.v[k, 2, 2] - az
    px, py, pz = dy * e2z - dz * e2y, dz * e2x - dx * e2z, dx * e2y - dy * e2x
    inv = 1.0 / (e1x * px + e1y * py + e1z * pz)
    sx, sy, sz = ox - ax, oy - ay, oz - az
    b1 = (sx * px + sy * py + sz * pz) * inv
    b2 = (dx * (sy * e1z - sz * e1y) + dy * (sz * e1x - sx * e1z) + dz * (sx * e1y - sy * e1x)) * inv
    b0 = 1.0 - b1 - b2
    u = b0 * ah.uv[k, 0, 0] + b1 * ah.uv[k, 1, 0] + b2 * ah.uv[k, 2, 0]
    v = b0 * ah.uv[k, 0, 1] + b1 * ah.uv[k, 1, 1] + b2 * ah.uv[k, 2, 1]
    p00, p10, p01, p11, wx, wy = bilinear_taps(ah.tex_data, ah.tex_levels, ah.tex_sampler, ti, 0,
                                               u, v)
    alpha *= bilinear_channel(p00, p10, p01, p11, wx, wy, 3)
    b00, b10, b01, b11 = texel_blocks(ah.tex_levels, ah.tex_sampler, ah.tex_block, ti, 0, u, v)
    n_bytes = (1 + (b10 >= 0) + (b01 >= 0) + (b11 >= 0)) * ah.tex_block[ti, 2]
    if rec_cap > 0:
        first = ah.tex_base[ti] + ah.tex_levels[ti, 0, L_TILED]
        c0 = (first + b00) >> TEXEL_REC_SHIFT
        c1 = (first + b10) >> TEXEL_REC_SHIFT if b10 >= 0 else c0
        c2 = (first + b01) >> TEXEL_REC_SHIFT if b01 >= 0 else c0
        c3 = (first + b11) >> TEXEL_REC_SHIFT if b11 >= 0 else c0
        for c, new in ((c0, True), (c1, c1 != c0), (c2, c2 != c0 and c2 != c1),
                       (c3, c3 != c0 and c3 != c1 and c3 != c2)):
            if new:
                if nrec < rec_cap:
                    rec[rec0 + nrec] = (REC_TEXEL << REC_SHIFT) | c
                nrec += 1
    return alpha >= cutoff, n_bytes, nrec


@inlined
def pop_nearest(st_ref, st_t, top, size, stack, lim, last, spill_at, on_chip):
    """The short stack's pop (trace_chunk's and trace_chunk8's): entries off the top of the ring
    (`size` of its `stack` slots used, `top` one past the newest) until one no farther than `lim`
    (the closest hit so far). Under the spill policy (spill_at > 0) an entry comes from the
    on-chip part while it holds any (`on_chip` of them), else from memory (a fill). Returns
    (top, size, that entry's node reference or -1 when the stack ran dry, the last reference
    popped: where a restart climbs from, entries popped, on_chip, fills). One exit, and both
    arrays used in the loop alone: inlined, it compiles as the kernels' own loop did
    (bench/kernel_ir.py)."""
    cur = -1
    pops = fills = 0
    while size > 0 and cur < 0:
        top = top - 1 if top > 0 else stack - 1
        size -= 1
        pops += 1
        if on_chip > 0:
            on_chip -= 1
        elif spill_at > 0:
            fills += 1
        e = st_ref[top]
        if st_t[top] <= lim:
            cur = e
        else:
            last = e
    return top, size, cur, last, pops, on_chip, fills


@inlined
def next_after(at, ak, ar, n, last, lim):
    """A restart's step at the node it climbed to (traverse4's walk, the TLAS walk): of the
    node's n children (entry distances at, sort keys ak, refs ar, in slot order), the first
    after `last` in (key, slot) order that is in front of lim, or -1: where the dropped stack
    entries would have led."""
    nsl = first_after(at, ak, n, lim, last_slot(ar, n, last))
    return ar[nsl] if nsl < n else np.int64(-1)


@inlined
def last_slot(ar, n, last):
    """The slot of ref `last` among a node's n children's refs ar, or -1."""
    ks = -1
    for j in range(n):
        if ar[j] == last:
            ks = j
    return ks


@inlined
def first_after(at, ak, n, lim, ks):
    """The slot of the first of a node's n children (entry distances at, keys ak, by slot) after
    slot ks in (key, slot) order that is in front of lim, or n (also when ks < 0: the last node
    is not among them)."""
    if ks < 0:
        return n
    kt = ak[ks]
    nk, nsl = np.inf, n
    for j in range(n):
        t, k = at[j], ak[j]
        if t <= lim and t < np.inf and (k > kt or (k == kt and j > ks)) and (
                k < nk or (k == nk and j < nsl)):
            nk, nsl = k, j
    return nsl


@inlined
def spill_push(on_chip, spill_at):
    """One entry pushed under the spill policy (spill_at > 0; the ring's, 0, leaves on_chip
    alone): (on_chip after it, whether the on-chip part was full, so that its oldest entry
    went to memory)."""
    if spill_at == 0:
        return on_chip, False
    if on_chip == spill_at:
        return on_chip, True
    return on_chip + 1, False


@inlined
def push_spilling(on_chip, spill_at, spills, rec, rec0, nrec, rec_cap, r, size):
    """spill_push for ray r's entry pushed onto a stack of `size` entries: (on_chip, spills,
    nrec) after it, the spill counted and, where records are kept (rec_cap > 0), its record
    written for the slot that went to memory. (rec is used on every path, a record of none
    where none is due: taken on one path only, numba kept its reference count at every push.)"""
    on_chip, spilled = spill_push(on_chip, spill_at)
    nrec = spill_records(rec, rec0, nrec, rec_cap, REC_SPILL, r, size - on_chip,
                         1 if spilled and rec_cap > 0 else 0, 1)
    return on_chip, spills + spilled, nrec


@inlined
def spill_records(rec, rec0, nrec, rec_cap, kind, r, first, n, step):
    """n spill or fill records of ray r (REC_SPILL / REC_FILL), slots first, first + step, ...;
    returns nrec."""
    for k in range(n):
        if nrec < rec_cap:
            rec[rec0 + nrec] = (kind << REC_SHIFT) | (r * SPILL_SLOTS + first + k * step)
        nrec += 1
    return nrec


@inlined
def _write_costs(cnt, r, steps, box_nodes, leaf_nodes, box_tests, tri_tests, overflows, restarts,
                 refetch, parent_reads, duals, obbs, clocks, anyhits, ignored, texel_bytes, culled,
                 pushes, pops, spills, fills):
    """Ray r's row of per-ray costs (C_*)."""
    cnt[r, C_STEPS] = steps
    cnt[r, C_BOX_NODES] = box_nodes
    cnt[r, C_LEAF_NODES] = leaf_nodes
    cnt[r, C_BOX_TESTS] = box_tests
    cnt[r, C_TRI_TESTS] = tri_tests
    cnt[r, C_OVERFLOWS] = overflows
    cnt[r, C_RESTARTS] = restarts
    cnt[r, C_REFETCH] = refetch
    cnt[r, C_PARENT_READS] = parent_reads
    cnt[r, C_DUAL] = duals
    cnt[r, C_OBB] = obbs
    cnt[r, C_CLOCKS] = clocks
    cnt[r, C_ANYHIT] = anyhits
    cnt[r, C_ANYHIT_IGNORED] = ignored
    cnt[r, C_TEXEL_BYTES] = texel_bytes
    cnt[r, C_CULLED] = culled
    cnt[r, C_PUSHES] = pushes
    cnt[r, C_POPS] = pops
    cnt[r, C_SPILLS] = spills
    cnt[r, C_FILLS] = fills


@njit(cache=True)
def brute_force(tri_f32, tri_u32, rays, flags, ah, out_prim, out_t):
    """Every ray against every triangle node, same test, any-hit and tie rule: the slow twin's
    core."""
    no_rec = np.empty(0, np.int64)
    for r in range(rays.shape[0]):
        ox, oy, oz = np.float64(rays[r, R_OX]), np.float64(rays[r, R_OY]), np.float64(rays[r, R_OZ])
        dx, dy, dz = np.float64(rays[r, R_DX]), np.float64(rays[r, R_DY]), np.float64(rays[r, R_DZ])
        tmin, tmax = np.float64(rays[r, R_TMIN]), np.float64(rays[r, R_TMAX])
        best_t, best_p = tmax, np.int64(-1)
        for s in range(tri_f32.shape[0]):
            tflags = tri_u32[s, 13] >> 24
            t, _ = _tri(ox, oy, oz, dx, dy, dz, tmin, tmax, np.float64(tri_f32[s, 0]),
                        np.float64(tri_f32[s, 1]), np.float64(tri_f32[s, 2]), np.float64(tri_f32[s, 3]),
                        np.float64(tri_f32[s, 4]), np.float64(tri_f32[s, 5]), np.float64(tri_f32[s, 6]),
                        np.float64(tri_f32[s, 7]), np.float64(tri_f32[s, 8]), tflags, flags)
            p = np.int64(tri_u32[s, 12])
            if t < best_t or (t == best_t and t < np.inf and p < best_p):
                if tflags & TRI_NON_OPAQUE and not flags & FLAG_OPAQUE:
                    if not any_hit(ah, p, ox, oy, oz, dx, dy, dz, flags, no_rec, 0, 0, 0)[0]:
                        continue
                best_t, best_p = t, p
        out_prim[r] = best_p
        out_t[r] = best_t if best_p >= 0 else np.inf


@njit(cache=True, nogil=True)
def replay(mem, level, fetches, base, stride, size, stream):
    """Fetch records (kind << 30 | index), in order, as line reads entering at cache `level` of
    `mem` (renderer.memory.Serving). A bvh2 node record is its child pair; a parent record
    indexes node (even) or triangle (odd) parent links, a TLAS parent record node (even) or
    instance (odd) ones; a texel record a 64 B chunk of the texture data; a spill (a write) or
    fill record a stack entry's slot. base, stride, size, stream: per table kind (K_*)."""
    (lines, shape, meta), acc, tile_bytes = mem
    rq = np.empty((mk.REQUESTS, mk.R_N), np.int64)
    shift = meta[mk.M_LINE_SHIFT]
    n = 0
    mask = (np.int64(1) << REC_SHIFT) - 1
    for f in range(fetches.shape[0]):
        kind, idx = fetches[f] >> REC_SHIFT, fetches[f] & mask
        if kind == REC_PARENT:
            kind, idx = K_NODE_PARENT + (idx & 1), idx >> 1
        elif kind == REC_TLAS_PARENT:
            kind, idx = K_TLAS_PARENT + (idx & 1), idx >> 1
        elif kind >= REC_TEXEL:              # texel chunk, spill write, fill read, TLAS, instance
            kind += 1
        first = base[kind] + idx * stride[kind]
        op = mk.op_code(kind == K_SPILL, stream[kind])
        for line in range(first >> shift, ((first + size[kind] - 1) >> shift) + 1):
            if n == mk.REQUESTS:
                _serve(lines, shape, meta, acc, tile_bytes, rq, n)
                n = 0
            n = mk.request(rq, n, level, line, op, -1)
    _serve(lines, shape, meta, acc, tile_bytes, rq, n)


@inlined
def _serve(lines, shape, meta, acc, tile_bytes, rq, n):
    """mk.serve in one pass: the ray unit's fetches enter at its L0, where nine in ten hit, and
    the few that reach the far level do not pay for serve's second pass (sponza's three ray
    passes through amd-rdna2 at 1280x720 took 1.035x the time with it, rounds taking turns)."""
    mk.serve_levels(lines, shape, meta, acc, tile_bytes, rq, n, mk.ALL_LEVELS, rq, 0)
