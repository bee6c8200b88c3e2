"""BVH node layouts of real hardware, each a flat numpy structured array whose itemsize is the
byte size of the real node (asserted in tests/test_bvh.py). Consumes a Bvh2 or a Wide tree
(renderer.bvh.builder), produces a Layout that traversal (renderer.bvh.traverse) reads.

    bvh2      32 B node (tinybvh `BVH`: aabbMin, leftFirst, aabbMax, triCount); a step fetches a
              node's two children (adjacent, 64 B); leaves of up to 4 triangles, each a 64 B
              triangle node
    bvh4      128 B box node (Mesa radv `radv_bvh_box32_node`: 4 child ids, 4 fp32 AABBs, flags)
              + 64 B triangle node (radv `radv_bvh_triangle_node`: one triangle) as RDNA 2/3
    bvh8      128 B quantized box node as RDNA 4 (radv `radv_gfx12_box_node`, AMD
              QuantizedBVH8BoxNode: origin, per-axis exponents, an OBB matrix index, internal
              and leaf base indices, 8 children of 12-bit bounds) + 128 B primitive nodes of up
              to 4 triangles whose shared corners are stored once (RDNA 4 packs up to 8 with
              quantized, compressed vertices, RRA 1.8, seed-notes 000_partB l.105; ours keep
              float32 corners, so 4 triangles and 7 corners are what fit): each a child slot
              of the wide tree (collapse's leaf_tris, by default BVH8_PRIM_TRIS)
    bvh8-obb  bvh8 whose nodes may carry a rotation (index into a 104-entry table) shared by
              their children, used where it shrinks the children's surface area by the
              builder's factor (AMD GPURT's OBB_SA_FACTOR_THRESHOLD 1.12, seed-notes 000_partB L117)

Parent links (int32 per node and per triangle node) sit in their own array, as radv keeps them
in front of the BVH; traversal reads them only to restart after a stack overflow.
"""
from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from renderer.allocator import aligned_concatenate, aligned_copy, aligned_empty

from . import layouts_kernels as lk
from .box8_kernels import node_planes
from .builder import TRI_ALPHA_TEST, TRI_BLEND, Bvh2, Wide

BVH2_NODE = np.dtype([("lo", "<f4", 3), ("left_first", "<u4"), ("hi", "<f4", 3), ("count", "<u4")])
TRI_NODE = np.dtype([("v", "<f4", (3, 3)), ("reserved", "<u4", 3), ("triangle_id", "<u4"),
                     ("geometry_id_and_flags", "<u4"), ("reserved2", "<u4"), ("id", "<u4")])
BOX4_NODE = np.dtype([("children", "<u4", 4), ("bounds", "<f4", (4, 6)), ("flags", "<u4"),
                      ("reserved", "<u4", 3)])
PRIM_NODE = np.dtype([("n_tri", "u1"), ("n_vert", "u1"), ("pad", "u1", 2), ("tri_id", "<u4", 4),
                      ("flags", "u1", 4), ("index", "u1", (4, 3)), ("v", "<f4", (7, 3)),
                      ("geometry_id", "<u2", 4)])
PRIM_TRIS, PRIM_VERTS = 4, 7     # what fits 128 B with 4-byte ids: 4 + 16 + 4 + 12 + 7 x 12 + 8
# Triangles a bvh8 builder puts in one primitive node at most, by default (collapse's leaf_tris:
# a BVH2 subtree of up to 4 triangles with 7 corners becomes one primitive node, a child slot,
# where the SAH cost says so; collapse_kernels C_PRIM, C_TRI). Measured on 1920x1080 primary rays
# (bench/bench_bvh.py's, this machine, one process, 5 rounds): against a triangle per node,
# dragon 1.81 box nodes and 0.19 primitive nodes per ray (against 1.90 and 0.29), 19-34% more
# rays/s; sponza 10.59 and 1.57 (against 11.63 and 2.21), 34% more.
BVH8_PRIM_TRIS = 4
BOX8_NODE = np.dtype([("origin", "<f4", 3), ("internal_base", "<u4"), ("leaf_base", "<u4"),
                      ("parent", "<u4"), ("exponents", "u1", 3), ("obb", "u1"),
                      ("n_internal", "u1"), ("n_children", "u1"), ("pad", "u1", 2),
                      ("qbox", "<u2", (8, 6))])
# The 4-byte words of a BOX8_NODE the fast walk reads (Layout.node_head's columns, in this order):
# internal_base, leaf_base, the word whose top byte is obb, the one with n_internal and n_children
NODE_HEAD_WORDS = [BOX8_NODE.fields[f][1] // 4 for f in ("internal_base", "leaf_base", "obb",
                                                            "n_internal")]
NODE_BYTES = {"bvh2": BVH2_NODE.itemsize, "bvh4": BOX4_NODE.itemsize, "bvh8": BOX8_NODE.itemsize,
              "bvh8-obb": BOX8_NODE.itemsize}    # 32, 128, 128, 128
LAYOUTS = tuple(NODE_BYTES)
KIND = {"bvh2": lk.L_BVH2, "bvh4": lk.L_BVH4, "bvh8": lk.L_BVH8, "bvh8-obb": lk.L_BVH8}
BOX32_TYPE, TRIANGLE_TYPE, INVALID = 5, 0, 0xFFFFFFFF     # radv node type tags (peers.md §3.1)
OBB_SA_FACTOR = 1.12
QBITS = 12           # RDNA 4 child bounds: 12 bits per plane (seed-notes 000_partB L105)


class Layout(NamedTuple):
    name: str
    kind: int                 # layouts_kernels.L_*
    nodes: np.ndarray         # structured array of the layout's node dtype; node 0 is the root
    tris: np.ndarray          # leaf nodes: TRI_NODE (n,), or PRIM_NODE for bvh8
    node_parent: np.ndarray   # int32 (n_nodes,) -1 for the root
    tri_parent: np.ndarray    # int32 per leaf node: the box node (bvh2: leaf node) referencing it
    fetch_bytes: int          # bytes a box step fetches: the node (bvh2: its two children)
    seconds: float            # conversion time (builds excluded)
    # bvh8: float32 (n_nodes, 6, 8) each child's box as decode_bvh8 gives it, rounded outward
    # to float32 (box8_kernels.node_planes), planes lo xyz, hi xyz by slot, empty slots +inf: the
    # simulator's decoded copy of the 128 B nodes, so that traversal reads a plane instead of
    # decoding it per test; fetches and bytes stay the node's
    child_boxes: np.ndarray = np.zeros((1, 6, 8), np.float32)
    # bvh8: float32 (n_prims, 9, PRIM_TRIS) each primitive node's triangles' corners a, b, c by
    # axis, a lane per triangle (unused lanes 0: degenerate, never hit): the simulator's decoded
    # copy of the node's corner indices, as child_boxes (tri4 reads 4 lanes at once)
    tri_corners: np.ndarray = np.zeros((1, 9, 4), np.float32)
    # whether a triangle node holds an alpha-tested or blended triangle (its any-hit runs): kept
    # from the build, as reading the flags out of the nodes again took 0.6 ms a trace on dragon
    non_opaque: bool = False
    # bvh8: the words of each node the fast walk reads, apart from the 128-byte nodes so that a
    # node's children's share a cache line or two (traverse8_kernels.trace_chunk8_fast; AO rays
    # on dragon waited on a node's own line at every step): uint32 (n_nodes, 4) NODE_HEAD_WORDS,
    # and uint32 (n_prims, 8) a primitive node's first eight (count, ids, flags). heads() makes
    # them from nodes and tris; whatever changes those makes them again.
    node_head: np.ndarray = np.zeros((1, 4), np.uint32)
    tri_head: np.ndarray = np.zeros((1, 8), np.uint32)

    @property
    def bytes(self) -> int:
        return self.nodes.nbytes + self.tris.nbytes

    def heads(self) -> "Layout":
        """This layout with node_head and tri_head made from its nodes (bvh8 only)."""
        if self.kind != lk.L_BVH8:
            return self
        _, node_u32, _, tri_u32 = self.views()
        head = aligned_empty((len(node_u32), len(NODE_HEAD_WORDS)), node_u32.dtype)
        return self._replace(node_head=np.take(node_u32, NODE_HEAD_WORDS, axis=1, out=head),
                             tri_head=aligned_copy(tri_u32[:, :8]))

    def views(self):
        """(node words float32, node words uint32, tri words float32, tri words uint32): the
        same bytes, as the traversal kernel reads them."""
        nw, tw = self.nodes.dtype.itemsize // 4, self.tris.dtype.itemsize // 4
        return (self.nodes.view(np.float32).reshape(-1, nw), self.nodes.view(np.uint32).reshape(-1, nw),
                self.tris.view(np.float32).reshape(-1, tw), self.tris.view(np.uint32).reshape(-1, tw))


def _non_opaque(tris) -> bool:
    return bool((tris.flags & (TRI_ALPHA_TEST | TRI_BLEND)).any())


def tri_nodes(tris, order: np.ndarray) -> np.ndarray:
    out = np.zeros(len(order), TRI_NODE)
    out["v"] = tris.v[order]
    out["triangle_id"] = order
    out["geometry_id_and_flags"] = (tris.geometry[order].astype(np.uint32) & 0xFFFFFF) | \
        (tris.flags[order] << 24)
    out["id"] = np.arange(len(order))
    return out


def bvh2_layout(bvh: Bvh2) -> Layout:
    t0 = time.perf_counter()
    nodes = np.zeros(len(bvh.left), BVH2_NODE)
    nodes["lo"], nodes["hi"] = bvh.lo, bvh.hi
    leaf = bvh.left < 0
    nodes["left_first"] = np.where(leaf, bvh.first, bvh.left)
    nodes["count"] = np.where(leaf, bvh.count, 0)
    tri_parent = np.empty(len(bvh.perm), np.int32)
    for i in np.flatnonzero(leaf):
        tri_parent[bvh.first[i]:bvh.first[i] + bvh.count[i]] = i
    return Layout("bvh2", lk.L_BVH2, nodes, tri_nodes(bvh.tris, bvh.perm), bvh.parent.astype(np.int32),
                  tri_parent, 2 * BVH2_NODE.itemsize, time.perf_counter() - t0,
                  non_opaque=_non_opaque(bvh.tris))


def bvh4_layout(w: Wide) -> Layout:
    if w.width != 4:
        raise ValueError(f"bvh4 needs a 4-wide tree, got {w.width}")
    if (w.tri_count > 1).any():
        raise ValueError("bvh4's triangle nodes hold one triangle: collapse with leaf_tris=1")
    t0 = time.perf_counter()
    nodes = np.zeros(len(w.child), BOX4_NODE)
    c = w.child
    kids = np.where(c >= 0, (c << 3) | BOX32_TYPE, ((-c - 1) << 3) | TRIANGLE_TYPE)
    nodes["children"] = np.where(c > -(1 << 40), kids, INVALID).astype(np.uint32)
    nodes["bounds"][..., :3], nodes["bounds"][..., 3:] = w.c_lo, w.c_hi
    return Layout("bvh4", lk.L_BVH4, nodes, tri_nodes(w.tris, w.tri_order), w.parent.astype(np.int32),
                  w.tri_parent.astype(np.int32), BOX4_NODE.itemsize, time.perf_counter() - t0,
                  non_opaque=_non_opaque(w.tris))


def obb_table() -> np.ndarray:
    """float64 (104, 3, 3) rotations (rows: the frame's axes in world space), each entry a
    float32 value so build and traversal use the same matrix. The count and the 7-bit index
    follow AMD (NUM_OBB_TRANSFORMS = 104, seed-notes 000_partB L117); AMD's matrices (9 six-bit
    codes into 26 floats) are not reproduced: ours are 13 axes (3 coordinate, 6 face-diagonal,
    4 body-diagonal) x 8 angles."""
    axes = [(1, 0, 0), (0, 1, 0), (0, 0, 1), (1, 1, 0), (1, -1, 0), (1, 0, 1), (1, 0, -1),
            (0, 1, 1), (0, 1, -1), (1, 1, 1), (1, 1, -1), (1, -1, 1), (-1, 1, 1)]
    out = []
    for i, a in enumerate(axes):
        a = np.array(a, np.float64) / np.linalg.norm(a)
        step = np.pi / 18 if i < 3 else np.pi / 9     # a box is 90-degree symmetric about its own axes
        for k in range(1, 9):
            th = k * step
            K = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
            r = np.eye(3) + np.sin(th) * K + (1 - np.cos(th)) * K @ K      # Rodrigues
            out.append(r.T)            # rows = rotated frame axes
    t = np.array(out).astype(np.float32).astype(np.float64)
    assert t.shape == (lk.N_OBB, 3, 3)
    return t


OBB_TABLE = obb_table()


def bvh8_layout(w: Wide, obb: bool = False) -> Layout:
    """Each triangle slot of the wide tree is one primitive node (collapse's leaf_tris chose how
    many triangles share one, at most PRIM_TRIS with PRIM_VERTS corners)."""
    if w.width != 8:
        raise ValueError(f"bvh8 needs an 8-wide tree, got {w.width}")
    t0 = time.perf_counter()
    k = len(w.child)
    rot = np.full(k, lk.NO_OBB, np.int64)
    c_lo, c_hi = w.c_lo.copy(), w.c_hi.copy()
    if obb:
        lk.choose_obb(w.child, w.n_child, w.parent, w.tri_order, w.tri_count, w.tris.v, OBB_TABLE,
                      OBB_SA_FACTOR, rot, c_lo, c_hi)
    (p_first, p_n, p_v, p_nv, p_idx, node_first, node_n, too_big) = lk.pack_prims(
        w.child, w.n_wide, w.n_child, w.tri_order, w.tri_count, w.tris.v, PRIM_TRIS, PRIM_VERTS)
    if too_big >= 0:
        raise ValueError(f"a triangle slot of {w.tri_count[too_big]} triangles does not fit a primitive "
                         f"node ({PRIM_TRIS} triangles, {PRIM_VERTS} corners): collapse with "
                         f"leaf_tris <= {PRIM_TRIS}, leaf_corners <= {PRIM_VERTS}")
    n_child = w.n_child
    j = np.arange(8)[None, :]
    valid = j < n_child[:, None]
    origin, e, ql, qh, lo_dec, hi_dec = quantize(c_lo, c_hi, valid)
    nodes = np.zeros(k, BOX8_NODE)
    nodes["origin"] = origin
    nodes["internal_base"] = np.where(w.n_wide > 0, w.child[:, 0], 0)
    nodes["leaf_base"] = node_first
    nodes["parent"] = np.where(w.parent >= 0, w.parent, INVALID).astype(np.uint32)
    nodes["exponents"] = e + 127
    nodes["obb"] = rot
    nodes["n_internal"], nodes["n_children"] = w.n_wide, n_child
    nodes["qbox"][..., :3], nodes["qbox"][..., 3:] = ql, qh
    # the encoding relies on the wide children being contiguous (collapse_kernels.collapse)
    assert np.all(np.where(j < w.n_wide[:, None], w.child == nodes["internal_base"][:, None] + j, True))
    prims = np.zeros(len(p_first), PRIM_NODE)
    prims["n_tri"], prims["n_vert"] = p_n, p_nv
    ids = [np.empty((len(prims), PRIM_TRIS), np.int64) for _ in range(3)]
    lk.prim_ids(p_first, p_n, w.tri_order, w.tris.flags, w.tris.geometry, *ids)
    prims["tri_id"], prims["flags"], prims["geometry_id"] = ids
    prims["index"], prims["v"] = p_idx, p_v
    tri_parent = np.repeat(np.arange(k), node_n).astype(np.int32)
    # the planes as decode_bvh8 gives them (lo_dec, hi_dec are that decode of the stored qbox),
    # rounded outward to the float32 the box test reads
    child_boxes = aligned_empty((k, 6, 8), np.float32)      # a node's rows in three lines
    node_planes(lo_dec, hi_dec, valid, child_boxes)
    tri_corners = aligned_empty((len(prims), 9, PRIM_TRIS), np.float32)      # lanes by triangle
    lk.lane_corners(np.ascontiguousarray(p_v, np.float32), p_idx, p_n, tri_corners)
    return Layout("bvh8-obb" if obb else "bvh8", lk.L_BVH8, nodes, prims, w.parent.astype(np.int32),
                  tri_parent, BOX8_NODE.itemsize, time.perf_counter() - t0, child_boxes, tri_corners,
                  _non_opaque(w.tris)).heads()


def quantize(c_lo: np.ndarray, c_hi: np.ndarray, valid: np.ndarray):
    """RDNA 4's child boxes: float64 (k, 8, 3) c_lo, c_hi of the slots `valid` (k, 8) as QBITS-bit
    steps of 2^e (per node and axis) from a float32 origin below them. Returns (origin float32
    (k, 3), e int64 (k, 3), ql, qh (k, 8, 3) the steps, lo_dec, hi_dec (k, 8, 3) the decoded
    planes, which hold the boxes: decoding is exact in float64)."""
    k = len(c_lo)
    c_lo, c_hi = np.ascontiguousarray(c_lo, np.float64), np.ascontiguousarray(c_hi, np.float64)
    valid = np.ascontiguousarray(valid, np.bool_)
    big, top = np.empty((k, 3)), np.empty((k, 3))
    lk.child_bounds(c_lo, c_hi, valid, big, top)         # node box (in its frame)
    origin = big.astype(np.float32)
    origin = np.where(origin > big, np.nextafter(origin, -np.inf, dtype=np.float32), origin)
    o64 = origin.astype(np.float64)
    ext = np.maximum(top - o64, 1e-30)
    e = np.ceil(np.log2(ext / ((1 << QBITS) - 2))).astype(np.int64)    # a step of 2^e covers ext
    e = np.clip(e, -126, 127)
    # the steps: each plane's distance from the origin in steps of 2^e, rounded outward, a step
    # more where the subtraction's rounding (a plane at 1e-17 from an origin of -1 differs from
    # it by 1.0) leaves the decoded plane inside the box; the decoded planes (exact in float64)
    ql, qh, lo_dec, hi_dec = (np.empty((k, 8, 3)) for _ in range(4))
    bad = lk.quantize_slots(c_lo, c_hi, valid, o64, np.ldexp(1.0, e), float((1 << QBITS) - 1), ql,
                            qh, lo_dec, hi_dec)
    # conservative: the decoded box holds the full-precision one
    if bad:
        raise AssertionError(f"bvh8 quantization not conservative at {bad} planes")
    return origin, e, ql, qh, lo_dec, hi_dec


def decode_bvh8(nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float64 (k, 8, 3) lo, hi of every child as traversal decodes them (in the node's frame)."""
    s = np.ldexp(1.0, nodes["exponents"].astype(np.int64) - 127)[:, None, :]
    o = nodes["origin"].astype(np.float64)[:, None, :]
    q = nodes["qbox"].astype(np.float64)
    return o + q[..., :3] * s, o + q[..., 3:] * s


def merge(layouts) -> tuple[Layout, np.ndarray]:
    """Layouts of one kind as one: nodes and triangle nodes concatenated, every index moved by
    the nodes (triangle nodes) before its layout's, each root's parent still none. Returns the
    layout and each part's root node, int64 (a two-level BVH's BLASes, walked from their roots:
    renderer.bvh.two_level)."""
    first = layouts[0]
    if any(lay.name != first.name for lay in layouts):
        raise ValueError("merge takes layouts of one kind")
    node_off = np.cumsum([0] + [len(lay.nodes) for lay in layouts])
    tri_off = np.cumsum([0] + [len(lay.tris) for lay in layouts])
    nodes, parents, tri_parents = [], [], []
    for lay, no, to in zip(layouts, node_off, tri_off):
        n = lay.nodes.copy()
        if first.kind == lk.L_BVH2:
            leaf = n["count"] > 0
            n["left_first"] += np.where(leaf, to, no).astype(np.uint32)
        elif first.kind == lk.L_BVH4:
            c = n["children"]
            box = (c & 7) == BOX32_TYPE
            moved = ((c >> 3) + np.where(box, no, to).astype(np.uint32)) << 3 | (c & 7)
            n["children"] = np.where(c == INVALID, c, moved)
        else:
            n["internal_base"] += np.uint32(no)
            n["leaf_base"] += np.uint32(to)
            n["parent"] = np.where(n["parent"] == INVALID, n["parent"], n["parent"] + np.uint32(no))
        nodes.append(n)
        parents.append(np.where(lay.node_parent >= 0, lay.node_parent + no, -1).astype(np.int32))
        tri_parents.append((lay.tri_parent + no).astype(np.int32))
    cat = np.concatenate
    wide8 = first.kind == lk.L_BVH8     # the decoded copies the bvh8 walk reads
    return (first._replace(nodes=cat(nodes), tris=cat([lay.tris for lay in layouts]),
                           node_parent=cat(parents), tri_parent=cat(tri_parents),
                           seconds=sum(lay.seconds for lay in layouts),
                           child_boxes=aligned_concatenate([lay.child_boxes for lay in layouts])
                           if wide8 else first.child_boxes,
                           tri_corners=aligned_concatenate([lay.tri_corners for lay in layouts])
                           if wide8 else first.tri_corners,
                           non_opaque=any(lay.non_opaque for lay in layouts)).heads(),
            node_off[:-1].astype(np.int64))
