"""Numba kernels of the meshlet builder: greedy contiguous meshlets, bounds and normal cones."""
from __future__ import annotations

import numpy as np
from numba import njit

from renderer.inlined import inlined


@inlined(error_model="python")
def _new_vertices(indices, t, stamp, m) -> int:
    """Distinct vertices of triangle t that meshlet m has not taken yet (stamp: the meshlet that
    last took each vertex)."""
    new = 0
    for k in range(3):
        v = indices[t, k]
        dup = False
        for j in range(k):
            dup = dup or indices[t, j] == v
        if stamp[v] != m and not dup:
            new += 1
    return new


@njit(cache=True, nogil=True, error_model="numpy")
def build_greedy(indices, n_verts, max_verts, max_prims, prim_off, vert_off, verts, corner):
    """Cut the triangles (indices (n, 3), in order) into meshlets of at most max_verts distinct
    vertices and max_prims triangles, each a contiguous run of the index buffer, so that the
    primitives keep their submission order (what meshoptimizer's meshopt_buildMeshletsScan does
    for an index buffer already in a good order). Fills prim_off (first triangle of each
    meshlet), vert_off (CSR into verts), verts (mesh vertex ids, in order of first use) and
    corner (n, 3): each corner's index into its meshlet's vertex list. Returns the count."""
    local = np.full(n_verts, -1, np.int64)        # slot of a vertex in the open meshlet
    stamp = np.full(n_verts, -1, np.int64)        # meshlet that last took the vertex
    m, nv, np_, nv_total = 0, 0, 0, 0
    prim_off[0] = 0
    vert_off[0] = 0
    for t in range(indices.shape[0]):
        new = _new_vertices(indices, t, stamp, m)
        if np_ > 0 and (nv + new > max_verts or np_ + 1 > max_prims):
            m += 1
            prim_off[m] = t
            vert_off[m] = nv_total
            nv, np_ = 0, 0
        for k in range(3):
            v = indices[t, k]
            if stamp[v] != m:
                stamp[v] = m
                local[v] = nv
                verts[nv_total] = v
                nv += 1
                nv_total += 1
            corner[t, k] = local[v]
        np_ += 1
    m += 1
    prim_off[m] = indices.shape[0]
    vert_off[m] = nv_total
    return m


@njit(cache=True, nogil=True, error_model="numpy")
def bounds(pos, indices, prim_off, vert_off, verts, center, radius, axis, cutoff):
    """Per meshlet: a bounding sphere (centre of the box, radius to the farthest vertex) and
    the cone of its triangles' unit face normals (counter-clockwise front faces): axis = the
    normalised mean normal, cutoff = the least cosine between the axis and any normal. A cone
    that spans 90 degrees or more gets cutoff = -1 (never culled by cone), as
    meshopt_computeMeshletBounds does; so does a meshlet with a degenerate triangle."""
    for m in range(prim_off.shape[0] - 1):
        lo = np.full(3, np.inf)
        hi = np.full(3, -np.inf)
        for j in range(vert_off[m], vert_off[m + 1]):
            for i in range(3):
                lo[i] = min(lo[i], pos[verts[j], i])
                hi[i] = max(hi[i], pos[verts[j], i])
        for i in range(3):
            center[m, i] = 0.5 * (lo[i] + hi[i])
        r2 = 0.0
        for j in range(vert_off[m], vert_off[m + 1]):
            d2 = 0.0
            for i in range(3):
                d = pos[verts[j], i] - center[m, i]
                d2 += d * d
            r2 = max(r2, d2)
        radius[m] = np.sqrt(r2)
        ax = ay = az = 0.0
        n_good = 0
        for t in range(prim_off[m], prim_off[m + 1]):
            nx, ny, nz = _face_normal(pos, indices, t)
            ln = np.sqrt(nx * nx + ny * ny + nz * nz)
            if ln > 0.0:
                ax += nx / ln
                ay += ny / ln
                az += nz / ln
                n_good += 1
        la = np.sqrt(ax * ax + ay * ay + az * az)
        # A degenerate triangle has no facing: snapped to the pixel grid it may gain an area of
        # either sign, so a meshlet holding one is never culled by cone.
        if n_good < prim_off[m + 1] - prim_off[m] or la == 0.0:
            axis[m, 0], axis[m, 1], axis[m, 2] = 0.0, 0.0, 1.0
            cutoff[m] = -1.0
            continue
        ax, ay, az = ax / la, ay / la, az / la
        axis[m, 0], axis[m, 1], axis[m, 2] = ax, ay, az
        c = 1.0
        for t in range(prim_off[m], prim_off[m + 1]):
            nx, ny, nz = _face_normal(pos, indices, t)
            ln = np.sqrt(nx * nx + ny * ny + nz * nz)
            if ln > 0.0:
                c = min(c, (nx * ax + ny * ay + nz * az) / ln)
        cutoff[m] = c if c > 0.0 else -1.0


@inlined
def _face_normal(pos, indices, t):
    i0, i1, i2 = indices[t, 0], indices[t, 1], indices[t, 2]
    ux, uy, uz = pos[i1, 0] - pos[i0, 0], pos[i1, 1] - pos[i0, 1], pos[i1, 2] - pos[i0, 2]
    vx, vy, vz = pos[i2, 0] - pos[i0, 0], pos[i2, 1] - pos[i0, 1], pos[i2, 2] - pos[i0, 2]
    return uy * vz - uz * vy, uz * vx - ux * vz, ux * vy - uy * vx


@njit(cache=True, nogil=True, error_model="numpy")
def build_cluster(indices, n_verts, max_verts, max_prims, order, prim_off, vert_off, verts, corner):
    """Meshlets grown by adjacency, as meshoptimizer's meshopt_buildMeshlets does in spirit:
    seed at the first unassigned triangle, then repeatedly add the unassigned triangle that
    shares a vertex with the meshlet and brings the fewest new vertices (lowest index on ties)
    until a bound is reached or none is adjacent. Triangles change order: order[i] is the mesh
    triangle in meshlet slot i; corner is indexed by slot. Returns the meshlet count."""
    n = indices.shape[0]
    adj_off = np.zeros(n_verts + 1, np.int64)
    for t in range(n):
        for k in range(3):
            adj_off[indices[t, k] + 1] += 1
    for v in range(n_verts):
        adj_off[v + 1] += adj_off[v]
    adj = np.empty(adj_off[n_verts], np.int64)
    fill = adj_off[:-1].copy()
    for t in range(n):
        for k in range(3):
            v = indices[t, k]
            adj[fill[v]] = t
            fill[v] += 1
    done = np.zeros(n, np.bool_)
    local = np.full(n_verts, -1, np.int64)
    stamp = np.full(n_verts, -1, np.int64)
    cand = np.empty(3 * max_verts * 64 + 3 * max_prims, np.int64)
    m, slot, nv_total, seed = 0, 0, 0, 0
    prim_off[0] = 0
    vert_off[0] = 0
    while slot < n:
        while done[seed]:
            seed += 1
        nv, np_, n_cand = 0, 0, 0
        t = seed
        while t >= 0:
            done[t] = True
            order[slot] = t
            for k in range(3):
                v = indices[t, k]
                if stamp[v] != m:
                    stamp[v] = m
                    local[v] = nv
                    verts[nv_total] = v
                    nv += 1
                    nv_total += 1
                    for j in range(adj_off[v], adj_off[v + 1]):
                        if not done[adj[j]] and n_cand < cand.shape[0]:
                            cand[n_cand] = adj[j]
                            n_cand += 1
                corner[slot, k] = local[v]
            slot += 1
            np_ += 1
            t = -1
            if np_ >= max_prims:
                break
            best_new = 4
            w = 0
            for i in range(n_cand):       # pick the best candidate, dropping assigned ones
                c = cand[i]
                if done[c]:
                    continue
                cand[w] = c
                w += 1
                new = _new_vertices(indices, c, stamp, m)
                if nv + new <= max_verts and (new < best_new or (new == best_new and c < t)):
                    best_new, t = new, c
            n_cand = w
        m += 1
        prim_off[m] = slot
        vert_off[m] = nv_total
    return m
