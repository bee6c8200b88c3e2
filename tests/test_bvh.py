"""BVH builder, node layouts and traversal against a brute-force twin (renderer.bvh)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from renderer.bvh import Triangles, build_bvh2, collapse, make_rays, trace_rays
from renderer.bvh.builder import SPLIT_AREA, SPLIT_BUDGET, Bvh2
from renderer.bvh.layouts import (BOX4_NODE, BOX8_NODE, BVH2_NODE, OBB_TABLE, PRIM_NODE, PRIM_TRIS, PRIM_VERTS,
                                  TRI_NODE, bvh2_layout, bvh4_layout, bvh8_layout, decode_bvh8)
from renderer.bvh.box8_kernels import planes32
from renderer.bvh.layouts_kernels import N_OBB, NO_OBB
from renderer.box_sort import BOX_SORTS
from renderer.bvh.traverse import brute_force, cost_counters
from renderer.bvh import traverse_kernels as tk
from scenes.library import get_scene
from scenes.model import SceneError


def all_layouts(tris: Triangles):
    b1 = build_bvh2(tris, 1)
    w4, w8 = collapse(b1, 4), collapse(b1, 8, PRIM_TRIS, PRIM_VERTS)
    return [bvh2_layout(build_bvh2(tris)), bvh4_layout(w4), bvh8_layout(w8), bvh8_layout(w8, obb=True),
            bvh8_layout(collapse(b1, 8))]      # a triangle per primitive node


def random_rays(tris: Triangles, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    lo, hi = tris.v.reshape(-1, 3).min(0), tris.v.reshape(-1, 3).max(0)
    ext = np.maximum(hi - lo, 1e-3)
    o = lo - ext + 3 * ext * rng.random((n, 3))
    target = lo + ext * rng.random((n, 3))
    return make_rays(o, target - o)


def check_all(tris: Triangles, rays: np.ndarray, cull_back: bool = False):
    layouts = all_layouts(tris)
    want_p, want_t = brute_force(layouts[0], rays, cull_back)
    for lay in layouts:
        for stack, dual in ((64, False), (4, False), (1, False), (16, True), (2, True)):
            if dual and lay.name != "bvh4":
                continue
            hits, _ = trace_rays(lay, rays, cull_back=cull_back, stack=stack, dual=dual)
            assert np.array_equal(hits.prim, want_p), (lay.name, stack, dual)
            assert np.array_equal(hits.t, want_t), (lay.name, stack, dual)
    return want_p


def test_node_sizes_are_the_hardware_ones():
    # tinybvh BVH node 32 B; radv box32 128 B, triangle 64 B; GFX12 BVH8 128 B (peers.md §3.1)
    assert BVH2_NODE.itemsize == 32
    assert TRI_NODE.itemsize == 64
    assert BOX4_NODE.itemsize == 128
    assert BOX8_NODE.itemsize == 128
    lay = all_layouts(Triangles.of_scene(get_scene("teapot")))
    assert PRIM_NODE.itemsize == 128          # RDNA 4 primitive node (RRA 1.8)
    assert [l.nodes.dtype.itemsize for l in lay] == [32, 128, 128, 128, 128]
    assert [l.tris.dtype.itemsize for l in lay] == [64, 64, 128, 128, 128]


@pytest.mark.parametrize("split", [None, SPLIT_AREA])
def test_sah_tree_is_a_partition_with_nested_boxes(split):
    tris = Triangles.of_scene(get_scene("spot"))
    b = build_bvh2(tris, split=split)
    if split is None:
        assert sorted(b.perm) == list(range(tris.n))
    else:       # every triangle, some in several pieces
        assert len(b.perm) > tris.n and set(b.perm) == set(range(tris.n))
    leaf = b.left < 0
    assert b.count[leaf].sum() == len(b.perm) and b.count[leaf].max() <= 4
    inner = np.flatnonzero(~leaf)
    for side in (0, 1):
        c = b.left[inner] + side
        assert (b.parent[c] == inner).all()
        assert (b.lo[c] >= b.lo[inner]).all() and (b.hi[c] <= b.hi[inner]).all()
    lo, hi = tris.bounds()
    assert (b.pos_lo >= lo[b.perm]).all() and (b.pos_hi <= hi[b.perm]).all()
    for i in np.flatnonzero(leaf):
        p = slice(b.first[i], b.first[i] + b.count[i])
        assert (b.pos_lo[p] >= b.lo[i]).all() and (b.pos_hi[p] <= b.hi[i]).all()


def test_split_pieces_cover_their_triangle():
    """Every point of a split triangle lies in one of its pieces' boxes (a ray that hits the
    triangle there reaches that piece's leaf): 64 points per triangle, corners and edges
    included, on sponza, whose long triangles are cut up to 2^8 times."""
    tris = Triangles.of_scene(get_scene("sponza"))
    b = build_bvh2(tris, 1)
    pieces = np.bincount(b.perm, minlength=tris.n)
    split = np.flatnonzero(pieces > 1)
    assert len(split) > 1000 and pieces.max() > 16
    rng = np.random.default_rng(7)
    w = rng.dirichlet((1.0, 1.0, 1.0), 61)
    w = np.concatenate([np.eye(3), w])                    # the corners, then inside points
    w[3:6] = [[0.5, 0.5, 0.0], [0.0, 0.5, 0.5], [0.5, 0.0, 0.5]]    # edge midpoints
    order = np.argsort(b.perm, kind="stable")
    start = np.concatenate([[0], np.cumsum(pieces)])
    for t in split[::7]:
        pts = w @ tris.v[t].astype(np.float64)           # (64, 3)
        k = order[start[t]:start[t + 1]]
        tol = 1e-12 * np.abs(pts).max()       # the points' own rounding (a flat triangle's
        lo, hi = b.pos_lo[k][None] - tol, b.pos_hi[k][None] + tol     # axis is a plane)
        inside = ((pts[:, None, :] >= lo) & (pts[:, None, :] <= hi)).all(axis=2)
        assert inside.any(axis=1).all(), f"triangle {t}: a point in none of its {len(k)} pieces"


def test_splitting_keeps_to_its_budget_and_its_hits():
    """Triangles that all span the scene would each be cut 2^8 times: the builder raises its
    threshold until the pieces fit SPLIT_BUDGET per triangle, and the tree still finds what
    the brute-force loop finds."""
    rng = np.random.default_rng(3)
    tris = Triangles.of_array(rng.random((500, 3, 3)))
    b = build_bvh2(tris, 1)
    assert tris.n < len(b.perm) <= SPLIT_BUDGET * tris.n and set(b.perm) == set(range(tris.n))
    rays = make_rays(rng.random((2000, 3)), rng.normal(size=(2000, 3)))
    prim, t = brute_force(bvh4_layout(collapse(build_bvh2(tris, 1, split=None), 4)), rays)
    assert (prim >= 0).mean() > 0.5
    for leaf in (1, PRIM_TRIS):
        hits = trace_rays(bvh8_layout(collapse(b, 8, leaf, PRIM_VERTS)), rays)[0]
        assert np.array_equal(hits.prim, prim) and np.array_equal(hits.t, t)


def test_wide_trees_hold_every_triangle_once_and_fill_nodes():
    tris = Triangles.of_scene(get_scene("teapot"))
    b = build_bvh2(tris, 1)
    for width, leaf in ((4, 1), (8, 1), (8, PRIM_TRIS)):
        w = collapse(b, width, leaf, PRIM_VERTS)
        # every triangle; a split one's pieces met in one slot merged, and with a triangle a
        # slot, in one slot per node that holds pieces of it (with primitive nodes it may be in
        # two of a node's: pieces in different subtrees)
        slot = np.cumsum(w.tri_count > 0) - 1             # each position's slot
        assert set(w.tri_order) == set(range(tris.n))
        assert len(set(zip(slot.tolist(), w.tri_order.tolist()))) == len(w.tri_order)
        assert (w.tri_count[w.tri_count > 0] <= leaf).all() and w.tri_count.sum() == len(w.tri_order)
        pairs = set(zip(w.tri_parent.tolist(), w.tri_order.tolist()))
        assert len(pairs) == len(w.tri_order) or leaf > 1
        assert len(w.tri_order) < len(b.perm)         # teapot's pieces met in some nodes
        assert (w.n_child >= 1).all() and (w.n_child <= width).all()
        # a node of one child: a leaf whose pieces were all of one triangle, merged
        one = np.flatnonzero(w.n_child == 1)
        assert (w.n_wide[one] == 0).all() and len(one) < 0.01 * len(w.child)
        # a wide tree has fewer nodes than its binary tree's internal nodes
        assert len(w.child) < (b.left >= 0).sum()


def bvh8_children(lay, w, tris):
    """Full-precision child boxes of every bvh8 node, in its frame: (node, slot, lo, hi)."""
    out = []
    for node in range(len(lay.nodes)):
        nd = lay.nodes[node]
        r = OBB_TABLE[nd["obb"]] if nd["obb"] < N_OBB else np.eye(3)
        for j in range(nd["n_children"]):
            if j < nd["n_internal"]:
                c = nd["internal_base"] + j
                tri = w.tri_order[[s for s in range(len(w.tri_order)) if _under(w, s, c)]] if nd["obb"] < N_OBB else None
                if tri is None:
                    out.append((node, j, w.c_lo[node, j], w.c_hi[node, j]))
                    continue
            else:
                p = lay.tris[nd["leaf_base"] + j - nd["n_internal"]]
                tri = p["tri_id"][:p["n_tri"]]
            v = tris.v[tri].reshape(-1, 3).astype(np.float64) @ r.T
            out.append((node, j, v.min(0), v.max(0)))
    return out


def _under(w, slot, node):
    p = w.tri_parent[slot]
    while p >= 0 and p != node:
        p = w.parent[p]
    return p == node


def test_bvh8_quantized_boxes_are_conservative():
    # unsplit, so that a child's full-precision box is its triangles' (bvh8_children); with
    # splitting, bvh8_layout checks the same against the pieces' boxes itself
    tris = Triangles.of_scene(get_scene("spot"))
    w = collapse(build_bvh2(tris, 1, split=None), 8)
    lay = bvh8_layout(w)
    lo, hi = decode_bvh8(lay.nodes)
    valid = np.arange(8)[None, :] < lay.nodes["n_children"][:, None]
    for node, j, clo, chi in bvh8_children(lay, w, tris):
        assert (lo[node, j] <= clo).all() and (hi[node, j] >= chi).all()
        # and not loose: within one step 2^e <= 2 x node extent / 4094 of each plane
        step = np.ldexp(1.0, lay.nodes["exponents"][node].astype(np.int64) - 127)
        assert (clo - lo[node, j] <= step).all() and (hi[node, j] - chi <= step).all()
    assert valid.sum() == len(bvh8_children(lay, w, tris))
    # traversal reads the layout's decoded copy: the nodes' own planes rounded outward to
    # float32, bit for bit, each within one float32 step of the decode
    b = lay.child_boxes.transpose(0, 2, 1)
    assert b.shape == (len(lay.nodes), 8, 6) and b.dtype == np.float32
    l32, h32 = planes32(lo, hi)
    assert np.array_equal(b[valid].view(np.int32), np.concatenate([l32, h32], axis=2)[valid].view(np.int32))
    assert (b[valid][:, :3] <= lo[valid]).all() and (b[valid][:, 3:] >= hi[valid]).all()
    assert (np.nextafter(b[valid][:, :3], np.float32(np.inf)) > lo[valid]).all()
    assert (np.nextafter(b[valid][:, 3:], np.float32(-np.inf)) < hi[valid]).all()
    assert np.isinf(b[~valid]).all()


def test_obb_boxes_hold_their_triangles_in_the_rotated_frame():
    tris = Triangles.of_scene(get_scene("teapot"))
    w = collapse(build_bvh2(tris, 1, split=None), 8)
    lay = bvh8_layout(w, obb=True)
    rot = lay.nodes["obb"].astype(np.int64)
    assert ((rot < N_OBB) | (rot == NO_OBB)).all()
    assert (rot < N_OBB).any()
    lo, hi = decode_bvh8(lay.nodes)
    for node, j, clo, chi in bvh8_children(lay, w, tris):
        assert (lo[node, j] <= clo).all() and (hi[node, j] >= chi).all()


def test_primitive_nodes_hold_each_triangle_once_with_shared_corners():
    tris = Triangles.of_scene(get_scene("spot"))
    b = build_bvh2(tris, 1)
    w1 = collapse(b, 8)
    single = bvh8_layout(w1).tris           # leaf_tris 1: a triangle per primitive node
    assert (single["n_tri"] == 1).all() and len(single) == len(w1.tri_order)
    w = collapse(b, 8, PRIM_TRIS, PRIM_VERTS)
    lay = bvh8_layout(w)
    p = lay.tris
    assert (p["n_tri"] >= 1).all() and (p["n_tri"] <= 4).all() and (p["n_vert"] <= 7).all()
    assert len(p) == (w.tri_count > 0).sum() == (lay.nodes["n_children"] - lay.nodes["n_internal"]).sum()
    ids = np.concatenate([r["tri_id"][:r["n_tri"]] for r in p])
    assert set(ids) == set(range(tris.n))      # each triangle, split ones in several nodes
    for r in p[:500]:
        assert len(set(r["tri_id"][:r["n_tri"]])) == r["n_tri"]      # a split one's pieces merged
        for q in range(r["n_tri"]):
            assert np.array_equal(r["v"][r["index"][q]], tris.v[r["tri_id"][q]])
    # the SAH takes several triangles a node where a mesh's neighbours share corners, and fewer
    # box nodes than a triangle per slot
    assert p["n_tri"].mean() > 1.5 and len(lay.nodes) < 0.6 * len(w1.child)
    # the decoded copy traversal reads: lane q of node s is triangle q's corners a, b, c
    tc = lay.tri_corners
    assert tc.shape == (len(p), 9, PRIM_TRIS) and tc.dtype == np.float32
    for s in range(0, len(p), 97):
        for q in range(PRIM_TRIS):
            if q < p["n_tri"][s]:
                assert np.array_equal(tc[s, :, q], tris.v[p["tri_id"][s][q]].ravel())
            else:
                assert (tc[s, :, q] == 0).all()
    with pytest.raises(ValueError, match="does not fit"):
        bvh8_layout(collapse(b, 8, 8, 24))


def test_obb_table_is_104_rotations():
    assert OBB_TABLE.shape == (104, 3, 3)
    for r in OBB_TABLE:
        assert np.allclose(r @ r.T, np.eye(3), atol=1e-6) and np.isclose(np.linalg.det(r), 1, atol=1e-6)
    assert len({tuple(np.round(r, 5).ravel()) for r in OBB_TABLE}) == 104


def test_closest_hits_equal_brute_force_on_meshes():
    tris = Triangles.of_scene(get_scene("teapot"))
    p = check_all(tris, random_rays(tris, 600, 1))
    assert (p >= 0).mean() > 0.3
    check_all(tris, random_rays(tris, 300, 2), cull_back=True)


def test_shared_edges_and_degenerate_triangles():
    # a 6x6 grid of quads (every ray near a shared edge or vertex), plus zero-area triangles
    g = np.linspace(0, 1, 7, dtype=np.float32)
    quads = []
    for i in range(6):
        for j in range(6):
            a, b, c, d = (g[i], g[j]), (g[i + 1], g[j]), (g[i + 1], g[j + 1]), (g[i], g[j + 1])
            quads += [[(*a, 0), (*b, 0), (*c, 0)], [(*a, 0), (*c, 0), (*d, 0)]]
    quads += [[(0.5, 0.5, 0.1)] * 3, [(0, 0, 0.2), (1, 1, 0.2), (0.5, 0.5, 0.2)]]
    tris = Triangles.of_array(np.array(quads, np.float32))
    xs = np.repeat(g, 7), np.tile(g, 7)
    o = np.stack([xs[0], xs[1], np.full(49, 1.0, np.float32)], 1)
    rays = np.concatenate([make_rays(o, np.tile([0, 0, -1], (49, 1))), random_rays(tris, 200, 3)])
    p = check_all(tris, rays)
    assert (p[:49] >= 0).sum() >= 36        # edge and vertex rays hit one of the triangles there


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 40), st.integers(0, 2**31))
def test_random_soups_match_brute_force(n, seed):
    rng = np.random.default_rng(seed)
    centres = rng.random((n, 1, 3)) * 4
    v = (centres + rng.normal(size=(n, 3, 3)) * rng.random((n, 1, 1))).astype(np.float32)
    tris = Triangles.of_array(v)
    check_all(tris, random_rays(tris, 60, seed))


def caterpillar(depth: int):
    """A BVH2 of depth+1 one-triangle leaves where node k holds leaf k and node k+1, and node
    k+1's box is always nearer the ray than leaf k: traversal pushes one leaf per level. The ray
    crosses every box and no triangle (it passes outside each triangle's hypotenuse)."""
    D = depth
    z = np.arange(D, -1, -1, dtype=np.float32)                # leaf k at z = D - k
    v = np.array([[(-1, -1, zk), (1, -1, zk), (-1, 1, zk)] for zk in z], np.float32)
    tris = Triangles.of_array(v)
    m = 2 * D + 1
    left, first, count, parent = (np.full(m, -1, np.int64), np.zeros(m, np.int64),
                                  np.zeros(m, np.int64), np.full(m, -1, np.int64))
    lo, hi = np.zeros((m, 3)), np.zeros((m, 3))
    for k in range(D):                       # node k at 2k: children leaf k (2k+1), next (2k+2)
        left[2 * k] = 2 * k + 1
        parent[2 * k + 1] = parent[2 * k + 2] = 2 * k
        first[2 * k + 1], count[2 * k + 1] = k, 1
    first[2 * D], count[2 * D] = D, 1
    for i in range(m - 1, -1, -1):
        if left[i] < 0:
            t = v[first[i]]
            lo[i], hi[i] = t.min(0), t.max(0)
        else:
            lo[i] = np.minimum(lo[left[i]], lo[left[i] + 1])
            hi[i] = np.maximum(hi[left[i]], hi[left[i] + 1])
    b = Bvh2(lo, hi, left, first, count, parent, np.arange(D + 1), *tris.bounds(), tris, 0.0)
    return bvh2_layout(b), make_rays([[0.6, 0.6, -1.0]], [[0, 0, 1]])


@pytest.mark.parametrize("depth,stack", [(20, 16), (20, 4), (20, 1), (12, 12), (12, 16), (33, 8)])
def test_stack_overflows_and_restarts_as_the_arithmetic_says(depth, stack):
    lay, ray = caterpillar(depth)
    hits, _ = trace_rays(lay, ray, stack=stack)
    c = hits.counts[0]
    assert hits.prim[0] == -1
    lost = max(0, depth - stack)              # one push per level, the oldest overwritten
    assert c[tk.C_OVERFLOWS] == lost
    assert c[tk.C_RESTARTS] == lost           # each lost leaf is found again by one climb
    # each restart re-tests the leaf's parent and grandparent; the last climb ends at the root
    assert c[tk.C_REFETCH] == (2 * lost + 1 if lost else 0)
    assert c[tk.C_LEAF_NODES] == depth + 1 and c[tk.C_BOX_NODES] == depth


def test_any_hit_stops_at_the_first_hit_and_visits_less():
    tris = Triangles.of_scene(get_scene("teapot"))
    rays = random_rays(tris, 500, 5)
    for lay in all_layouts(tris):
        closest, _ = trace_rays(lay, rays)
        first, _ = trace_rays(lay, rays, any_hit=True)
        assert np.array_equal(first.prim >= 0, closest.prim >= 0)
        assert first.counts[:, tk.C_STEPS].sum() < closest.counts[:, tk.C_STEPS].sum()


def _slanted(z0: float, z1: float, z_hit: float) -> list:
    """A triangle whose box spans z0..z1 and that the ray x = y = 0 along +z crosses at z_hit:
    its base at z0 from y = -1, its apex at z1 where y reaches 0 at z_hit."""
    apex_y = -1.0 + (z1 - z0) / (z_hit - z0)
    return [(-1.0, -1.0, z0), (1.0, -1.0, z0), (0.0, apex_y, z1)]


@pytest.mark.parametrize("layout", ["bvh2", "bvh4", "bvh8"])
def test_the_box_sort_visits_children_in_the_drivers_order(layout):
    """Two one-triangle children on the ray x = y = 0 (GPURT's keys, IntersectNodeBvh4). A long
    box entered first (z 1..10, its triangle at 1.5) and a short one entered later (2..3, at
    2.5): nearest first opens the long one, whose hit culls the short one (one leaf); lowest
    midpoint (11 against 5) opens the short one first, and then the long one too (two). A
    short box entered first (1..2, at 1.5) and a long one (1.5..20, at 1.99): a first-hit ray
    ends on the short one's triangle nearest first and on the long one's largest interval first
    (1 against 18.5); closest hit, every order finds the short one's. (Not bvh8-obb: its
    rotated boxes give other intervals.)"""
    def layout_of(v):       # (unsplit: a triangle, a leaf)
        tris = Triangles.of_array(np.array(v, np.float32))
        b1 = build_bvh2(tris, 1, split=None)
        return {"bvh2": lambda: bvh2_layout(b1), "bvh4": lambda: bvh4_layout(collapse(b1, 4)),
                "bvh8": lambda: bvh8_layout(collapse(b1, 8))}[layout]()
    ray = make_rays([[0.0, 0.0, 0.0]], [[0.0, 0.0, 1.0]])
    long_first = layout_of([_slanted(1, 10, 1.5), _slanted(2, 3, 2.5)])
    leaves = {}
    for sort in BOX_SORTS:
        hits, _ = trace_rays(long_first, ray, box_sort=sort)
        assert hits.prim[0] == 0 and hits.t[0] == pytest.approx(1.5, rel=1e-6)
        leaves[sort] = hits.counts[0, tk.C_LEAF_NODES]
    assert leaves == {"closest": 1, "midpoint": 2, "largest-or-closest": 1,
                      "largest-or-midpoint": 2}
    short_first = layout_of([_slanted(1, 2, 1.5), _slanted(1.5, 20, 1.99)])
    for sort in BOX_SORTS:
        first, _ = trace_rays(short_first, ray, any_hit=True, box_sort=sort)
        assert first.prim[0] == (1 if sort.startswith("largest") else 0), sort
        closest, _ = trace_rays(short_first, ray, box_sort=sort)
        assert closest.prim[0] == 0, sort


def test_every_box_sort_finds_the_same_hits_and_only_a_bad_one_is_refused():
    """Closest hits and first-hit occlusion are the order's to find faster or slower, never to
    change: every layout, stack and order against nearest first; an unknown order is refused."""
    tris = Triangles.of_scene(get_scene("teapot"))
    rays = random_rays(tris, 800, 9)
    for lay in all_layouts(tris):
        want, _ = trace_rays(lay, rays)
        want_any, _ = trace_rays(lay, rays, any_hit=True)
        steps = {}
        for sort in BOX_SORTS:
            for stack in (16, 2):
                hits, _ = trace_rays(lay, rays, stack=stack, box_sort=sort)
                assert np.array_equal(hits.prim, want.prim), (lay.name, sort)
                assert np.array_equal(hits.t, want.t), (lay.name, sort)
                first, _ = trace_rays(lay, rays, stack=stack, box_sort=sort, any_hit=True)
                assert np.array_equal(first.prim >= 0, want_any.prim >= 0), (lay.name, sort)
            steps[sort] = first.counts[:, tk.C_STEPS].sum()
        assert steps["largest-or-closest"] != steps["closest"], lay.name
    with pytest.raises(ValueError, match="unknown box sort"):
        trace_rays(all_layouts(tris)[0], rays, box_sort="random")


@pytest.mark.parametrize("scene", ["teapot", "spot", "sponza"])
def test_the_common_case_kernel_equals_the_full_one(scene):
    # trace_chunk8_fast (no records, no rotated node) against trace_chunk8 (records on): the
    # same hits and every per-ray cost, with rays it hands back (parallel to an axis, a stack
    # that overflows and restarts, a first hit) among them
    tris = Triangles.of_scene(get_scene(scene))
    rays = random_rays(tris, 1500, 7)
    rays[:100, tk.R_DX] = 0.0                     # parallel to the x planes
    rays[100:150, tk.R_DY:tk.R_DZ + 1] = 0.0      # along x
    rays[150:250, tk.R_DX:tk.R_DZ + 1] *= -1.0    # away from the model: most miss at the root
    b1 = build_bvh2(tris, 1)
    for lay in (bvh8_layout(collapse(b1, 8)), bvh8_layout(collapse(b1, 8, PRIM_TRIS, PRIM_VERTS))):
        assert (lay.nodes["obb"] == NO_OBB).all()    # so that unrecorded traces take the fast kernel
        for kw in (dict(stack=16), dict(stack=2), dict(stack=1, any_hit=True), dict(cull_back=True),
                   dict(stack=2, box_sort="largest-or-midpoint"),
                   dict(stack=1, any_hit=True, box_sort="largest-or-midpoint")):
            fast, _ = trace_rays(lay, rays, **kw)
            full, _ = trace_rays(lay, rays, record=True, **kw)
            assert np.array_equal(fast.prim, full.prim) and np.array_equal(fast.t, full.t), (lay.name, kw)
            assert np.array_equal(fast.counts, full.counts), (lay.name, kw)
            assert (fast.counts[150:250, tk.C_STEPS] == 1).sum() > 50     # the kernel's early exit ran
            if kw.get("stack", 16) <= 2:
                assert full.counts[:, tk.C_RESTARTS].sum() > 0      # the hand-back path ran


@pytest.mark.parametrize("scene", ["teapot", "foliage", "sponza"])
def test_the_bvh4_common_case_kernel_equals_the_walk(scene, monkeypatch):
    # trace_chunk4_fast against the general walk (fast_walks=False): the same hits, per-ray
    # costs and fetch records, under both stack policies (a spilling stack's spill and fill
    # records included), with rays it hands back (a ring that overflows, an any-hit program on
    # foliage's alpha-tested leaves) among them; then with a chunk's record room run
    # out before a ray it hands back (REC_PER_RAY 3: every chunk is traced again with room
    # enough, which takes each chunk's count exact)
    from renderer.bvh import traverse
    from renderer.bvh.anyhit import any_hit_table
    from renderer.shade import RGBA8_UNIT
    draws = get_scene(scene).draws
    tris = Triangles.of_draws(draws)
    rays = random_rays(tris, 1500, 9)
    rays[:100, tk.R_DX] = 0.0                     # parallel to the x planes
    lay = bvh4_layout(collapse(build_bvh2(tris, 1), 4))
    assert traverse.fast_walk(lay, True, False) == traverse.FAST_BVH4
    surfaces = any_hit_table(draws, tris, RGBA8_UNIT) if lay.non_opaque else None
    handed = spilled = 0
    for cap in (traverse.REC_PER_RAY, 3):
        monkeypatch.setattr(traverse, "REC_PER_RAY", cap)
        for kw in (dict(stack=16), dict(stack=3), dict(stack=2, any_hit=True), dict(cull_back=True),
                   dict(stack=3, box_sort="largest-or-midpoint"),
                   dict(any_hit=True, box_sort="largest-or-midpoint"),
                   dict(stack=2, spill=True), dict(stack=1, spill=True, any_hit=True)):
            fast, fast_rec = trace_rays(lay, rays, record=True, surfaces=surfaces, **kw)
            walk, walk_rec = trace_rays(lay, rays, record=True, surfaces=surfaces,
                                        fast_walks=False, **kw)
            assert np.array_equal(fast.prim, walk.prim) and np.array_equal(fast.t, walk.t), kw
            assert np.array_equal(fast.counts, walk.counts), kw
            assert np.array_equal(fast_rec, walk_rec), kw
            handed += walk.counts[:, tk.C_OVERFLOWS].sum() + walk.counts[:, tk.C_ANYHIT].sum()
            spilled += walk.counts[:, tk.C_SPILLS].sum() * kw.get("spill", False)
    assert handed > 0 and spilled > 0             # the hand-back path ran, and the spills'
    if scene == "foliage":
        assert walk.counts[:, tk.C_ANYHIT].sum() > 0


def test_rays_in_any_memory_order_or_precision_trace_alike_and_a_bad_shape_is_refused():
    # the kernels read float32 rows eight at a time (box8_kernels.misses8): trace_rays makes
    # them so, and says what it wants of anything that is not n rows of 8
    tris = Triangles.of_scene(get_scene("teapot"))
    rays = random_rays(tris, 400, 8)
    lay = bvh8_layout(collapse(build_bvh2(tris, 1), 8))
    want, _ = trace_rays(lay, rays)
    assert (want.prim >= 0).sum() > 50
    for other in (rays.astype(np.float64), np.asfortranarray(rays), rays[::-1][::-1]):
        got, _ = trace_rays(lay, other)
        assert np.array_equal(got.prim, want.prim) and np.array_equal(got.counts, want.counts)
    with pytest.raises(ValueError, match=r"\(n, 8\)"):
        trace_rays(lay, rays[:, :6])


def test_recorded_fetches_match_the_counted_ones():
    tris = Triangles.of_scene(get_scene("spot"))
    rays = random_rays(tris, 300, 6)
    for lay in all_layouts(tris):
        hits, rec = trace_rays(lay, rays, stack=2, record=True)
        kinds = np.bincount(rec >> tk.REC_SHIFT, minlength=3)
        tot = hits.counts.sum(0)
        assert kinds[tk.REC_NODE] == tot[tk.C_BOX_NODES] + tot[tk.C_REFETCH]
        assert kinds[tk.REC_TRI] == tot[tk.C_LEAF_NODES]
        assert kinds[tk.REC_PARENT] == tot[tk.C_PARENT_READS]
        c = cost_counters(lay, hits)
        assert c["rt.bytes.leaf"] == lay.tris.dtype.itemsize * tot[tk.C_LEAF_NODES]


def test_bad_input_is_one_clear_error():
    with pytest.raises(SceneError):
        Triangles.of_array(np.zeros((0, 3, 3)))
    with pytest.raises(SceneError):
        Triangles.of_array(np.full((1, 3, 3), np.nan))
    with pytest.raises(ValueError):
        make_rays([[0, 0, 0]], [[np.nan, 0, 1]])
    with pytest.raises(ValueError):
        make_rays([[0, 0, 0]], [[0, 0, 0]])
    lay = all_layouts(Triangles.of_array(np.eye(3, dtype=np.float32)[None]))[2]
    with pytest.raises(ValueError):
        trace_rays(lay, make_rays([[0, 0, 0]], [[0, 0, 1]]), dual=True)


def test_priced_bytes_are_the_distinct_lines_fetched_through_a_cold_cache():
    from renderer.bvh import price
    from renderer.memory import CacheConfig, MemoryConfig, MemoryModel
    tris = Triangles.of_scene(get_scene("teapot"))
    rays = random_rays(tris, 200, 7)
    for lay in all_layouts(tris):
        hits, rec = trace_rays(lay, rays, stack=4, record=True)
        mm = MemoryModel(MemoryConfig(128, (CacheConfig("l2", 64 << 20, 16),), (-1,)), 1)
        price(lay, rec, mm, 0)
        c = mm.counters()
        kind, idx = rec >> tk.REC_SHIFT, rec & ((1 << tk.REC_SHIFT) - 1)
        node = idx[kind == tk.REC_NODE] * lay.nodes.dtype.itemsize
        lines_node = set()
        for a in node:                       # a bvh2 step reads its 64 B child pair
            lines_node.update(range(a // 128, (a + lay.fetch_bytes - 1) // 128 + 1))
        par = idx[kind == tk.REC_PARENT]
        lines_par = {(p & 1, (p >> 1) * 4 // 128) for p in par}
        tri_lines = set(idx[kind == tk.REC_TRI] * lay.tris.dtype.itemsize // 128)
        # a cache far larger than the BVH: each line comes from DRAM once
        assert c["mem.dram.read.bvh_node"] == 128 * (len(lines_node) + len(lines_par))
        assert c["mem.dram.read.bvh_leaf"] == 128 * len(tri_lines)
        assert c["mem.cache.l2.misses"] == len(lines_node) + len(lines_par) + len(tri_lines)


def test_intersection_clocks_follow_the_test_rates():
    tris = Triangles.of_scene(get_scene("teapot"))
    rays = random_rays(tris, 300, 8)
    for lay in all_layouts(tris):
        one, _ = trace_rays(lay, rays, box_rate=1, tri_rate=1)
        c = one.counts
        # one test per clock: a clock per test
        assert (c[:, tk.C_CLOCKS] == c[:, tk.C_BOX_TESTS] + c[:, tk.C_TRI_TESTS]).all()
        fast, _ = trace_rays(lay, rays, box_rate=8, tri_rate=2)
        f = fast.counts
        assert (f[:, tk.C_CLOCKS] >= f[:, tk.C_STEPS]).all() and (f[:, tk.C_CLOCKS] <= c[:, tk.C_CLOCKS]).all()
        if lay.name in ("bvh2", "bvh4"):
            # RDNA 2/3: a node's 2 or 4 boxes, or one triangle, per clock: a clock per step
            rdna, _ = trace_rays(lay, rays, box_rate=4, tri_rate=1)
            assert (rdna.counts[:, tk.C_CLOCKS] == rdna.counts[:, tk.C_STEPS]).all()
        else:
            # RDNA 4: a box step is one clock; a primitive node of k triangles ceil(k / 2)
            assert (f[:, tk.C_CLOCKS] - f[:, tk.C_BOX_NODES] >= (f[:, tk.C_TRI_TESTS] + 1) // 2).all()


def test_the_parallel_build_is_the_serial_build_node_for_node():
    """build_sah grows its top on one thread and the subtrees below on all, then renumbers:
    the tree must be the one depth-first build's, array for array, on one thread or two."""
    import numba
    from renderer.bvh import sah_kernels as sah
    tris = Triangles.of_scene(get_scene("bunny"))
    lo, hi = tris.bounds()
    n = len(lo)
    cap = 4 * n + 2
    tree = (np.empty((cap, 3)), np.empty((cap, 3)), np.full(cap, -1, np.int64), np.zeros(cap, np.int64),
            np.zeros(cap, np.int64), np.full(cap, -1, np.int64))
    tree[4][0] = n
    perm = np.arange(n)
    m, _ = sah._grow(lo, hi, 0.5 * (lo + hi), perm, tree, 0, 1, 1, 1 << 30, np.empty(0, np.int64))
    serial = sah._canonical(tree, m, 2 * n) + (perm,)
    threads = numba.get_num_threads()
    try:
        for k in sorted({1, threads}):
            numba.set_num_threads(k)
            got = sah.build_sah(lo, hi, 1, k)
            for a, b in zip(got, serial):
                assert np.array_equal(a, b), k
    finally:
        numba.set_num_threads(threads)


def test_the_collapse_is_the_same_on_any_number_of_threads():
    """_collapse_costs runs the programme of the tree's top subtrees on all threads, then the
    nodes above them: the wide tree must be the one thread's, array for array (bunny through
    bvh8's primitive nodes and bvh4's one-triangle slots; dragon's larger tree cut into more
    subtrees than threads)."""
    import numba
    from renderer.bvh.layouts import BVH8_PRIM_TRIS
    threads = numba.get_num_threads()
    for name in ("bunny", "dragon"):
        bvh = build_bvh2(Triangles.of_scene(get_scene(name)), 1)
        got = {}
        try:
            for k in sorted({1, threads}):
                numba.set_num_threads(k)
                got[k] = (collapse(bvh, 8, BVH8_PRIM_TRIS, PRIM_VERTS), collapse(bvh, 4))
        finally:
            numba.set_num_threads(threads)
        one = got[1]
        for k, wides in got.items():
            for w, w1 in zip(wides, one):
                for f in ("child", "c_lo", "c_hi", "n_wide", "n_child", "parent", "tri_order",
                          "tri_parent", "tri_count"):
                    assert np.array_equal(getattr(w, f), getattr(w1, f)), (name, k, f)


def test_the_walks_tables_start_cache_lines():
    """bvh8's child boxes (192-byte rows: three lines each only when the table starts one),
    corners and heads, and a merged layout's, are allocated on 64-byte boundaries."""
    from renderer.allocator import LINE, aligned_empty
    from renderer.bvh.layouts import BVH8_PRIM_TRIS, bvh8_layout, merge
    a = aligned_empty((5, 6, 8), np.float32)
    assert a.ctypes.data % LINE == 0 and a.shape == (5, 6, 8) and a.flags.c_contiguous
    bvh = build_bvh2(Triangles.of_scene(get_scene("bunny")), 1)
    lay = bvh8_layout(collapse(bvh, 8, BVH8_PRIM_TRIS, PRIM_VERTS))
    for one in (lay, merge([lay, lay])[0]):
        for t in (one.child_boxes, one.tri_corners, one.node_head, one.tri_head):
            assert t.ctypes.data % LINE == 0 and t.flags.c_contiguous
