"""Numba kernel of the mesh-shading front end's amplification (task / object) stage: whole
meshlets culled against the frustum and by normal cone before any vertex work."""
from __future__ import annotations

import numpy as np
from numba import njit

CONE_MARGIN = 2.0 * np.pi / 180.0   # rad; the cone test keeps 2 degrees of slack so that a
                                    # meshlet it culls holds no triangle the snapped setup could
                                    # see edge-on with the other winding
KEPT, CULLED_FRUSTUM, CULLED_CONE = 0, 1, 2


@njit(cache=True, nogil=True, error_model="numpy")
def amplify(m0, m1, center, radius, axis, cutoff, m_first, m_draw, world_m, cone_ok, eye, planes,
            verdict):
    """Per (draw, meshlet) m of m0..m1-1 (run in parts on several threads:
    renderer.workers.spread): its object-space sphere and cone through the draw's world matrix
    (a similarity when cone_ok[d]: scale = the first column's length), then KEPT, CULLED_FRUSTUM
    (the sphere wholly outside one of the 6 world-space frustum planes (a, b, c, d) with unit
    normals pointing inside) or CULLED_CONE (every triangle back-facing from every point of the
    sphere: angle(axis, centre - eye) + asin(r / |centre - eye|) + acos(cutoff) < 90 degrees
    less CONE_MARGIN). m_first[m]: the mesh's meshlet of this instance; m_draw[m] its draw."""
    for m in range(m0, m1):
        d, k = m_draw[m], m_first[m]
        c = np.empty(3)
        for i in range(3):
            c[i] = (world_m[d, i, 0] * center[k, 0] + world_m[d, i, 1] * center[k, 1]
                    + world_m[d, i, 2] * center[k, 2] + world_m[d, i, 3])
        s = 0.0
        for i in range(3):
            s = max(s, np.sqrt(world_m[d, 0, i] ** 2 + world_m[d, 1, i] ** 2 + world_m[d, 2, i] ** 2))
        r = radius[k] * s * (1.0 + 1e-9) + 1e-9
        out = False
        for p in range(6):
            dist = planes[p, 0] * c[0] + planes[p, 1] * c[1] + planes[p, 2] * c[2] + planes[p, 3]
            out = out or dist < -r
        if out:
            verdict[m] = CULLED_FRUSTUM
            continue
        verdict[m] = KEPT
        if not cone_ok[d] or cutoff[k] <= 0.0:
            continue
        ax = np.empty(3)
        la = 0.0
        for i in range(3):
            ax[i] = world_m[d, i, 0] * axis[k, 0] + world_m[d, i, 1] * axis[k, 1] + world_m[d, i, 2] * axis[k, 2]
            la += ax[i] * ax[i]
        la = np.sqrt(la)
        dx, dy, dz = c[0] - eye[0], c[1] - eye[1], c[2] - eye[2]
        ld = np.sqrt(dx * dx + dy * dy + dz * dz)
        if la == 0.0 or ld <= r:
            continue
        cos_t = (ax[0] * dx + ax[1] * dy + ax[2] * dz) / (la * ld)
        theta = np.arccos(min(1.0, max(-1.0, cos_t)))
        beta = np.arcsin(min(1.0, r / ld))
        alpha = np.arccos(min(1.0, cutoff[k]))
        if theta + beta + alpha < 0.5 * np.pi - CONE_MARGIN:
            verdict[m] = CULLED_CONE
