"""Numba kernels of the post-processing chain's passes (pipelines.passes.postchain): one pure function
per pass over whole surfaces, parallel over rows, each row written by one iteration only.

View space is OpenGL's (camera looks down -Z, y up); window row 0 is the top row, pixel centres
at +0.5 (DESIGN.md §2). Colours are linear floats in [0, 1] x intensity for HDR, unorm bytes for
LDR surfaces.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True, parallel=True)
def view_positions(depth, view_from_clip):
    """float32 (h, w, 4): view-space position of each pixel's nearest surface (w = 1), w = 0 where
    the depth is the clear value 1.0. view_from_clip: float64 (4, 4), the inverse projection."""
    H, W = depth.shape
    M = view_from_clip
    out = np.zeros((H, W, 4), np.float32)
    for y in prange(H):
        for x in range(W):
            d = depth[y, x]
            if d >= 1.0:
                continue
            nx = (x + 0.5) / W * 2.0 - 1.0
            ny = 1.0 - (y + 0.5) / H * 2.0
            nz = 2.0 * d - 1.0
            vx = M[0, 0] * nx + M[0, 1] * ny + M[0, 2] * nz + M[0, 3]
            vy = M[1, 0] * nx + M[1, 1] * ny + M[1, 2] * nz + M[1, 3]
            vz = M[2, 0] * nx + M[2, 1] * ny + M[2, 2] * nz + M[2, 3]
            vw = M[3, 0] * nx + M[3, 1] * ny + M[3, 2] * nz + M[3, 3]
            out[y, x, 0] = vx / vw
            out[y, x, 1] = vy / vw
            out[y, x, 2] = vz / vw
            out[y, x, 3] = 1.0
    return out


@njit(cache=True, parallel=True)
def normals_from_positions(pos):
    """float32 (h, w, 4): unit view-space normal (xyz, w = 1) from the cross product of position
    differences; of the two neighbours on each axis the one nearer in depth is used, so normals
    do not bend across silhouettes. w = 0 (and xyz 0) where there is no surface."""
    H, W = pos.shape[0], pos.shape[1]
    out = np.zeros((H, W, 4), np.float32)
    for y in prange(H):
        for x in range(W):
            if pos[y, x, 3] == 0.0:
                continue
            z = pos[y, x, 2]
            # horizontal difference: right neighbour minus this, or this minus left
            best = 1e30
            dx0, dx1, dx2 = 0.0, 0.0, 0.0
            if x + 1 < W and pos[y, x + 1, 3] != 0.0 and abs(pos[y, x + 1, 2] - z) < best:
                best = abs(pos[y, x + 1, 2] - z)
                dx0, dx1, dx2 = pos[y, x + 1, 0] - pos[y, x, 0], pos[y, x + 1, 1] - pos[y, x, 1], pos[y, x + 1, 2] - z
            if x > 0 and pos[y, x - 1, 3] != 0.0 and abs(pos[y, x - 1, 2] - z) < best:
                dx0, dx1, dx2 = pos[y, x, 0] - pos[y, x - 1, 0], pos[y, x, 1] - pos[y, x - 1, 1], z - pos[y, x - 1, 2]
            # vertical difference taken downwards on screen (towards -y in view space)
            best = 1e30
            dy0, dy1, dy2 = 0.0, 0.0, 0.0
            if y + 1 < H and pos[y + 1, x, 3] != 0.0 and abs(pos[y + 1, x, 2] - z) < best:
                best = abs(pos[y + 1, x, 2] - z)
                dy0, dy1, dy2 = pos[y + 1, x, 0] - pos[y, x, 0], pos[y + 1, x, 1] - pos[y, x, 1], pos[y + 1, x, 2] - z
            if y > 0 and pos[y - 1, x, 3] != 0.0 and abs(pos[y - 1, x, 2] - z) < best:
                dy0, dy1, dy2 = pos[y, x, 0] - pos[y - 1, x, 0], pos[y, x, 1] - pos[y - 1, x, 1], z - pos[y - 1, x, 2]
            # n = dPdy x dPdx: for a surface facing the camera, right x down points to -z, so swap
            n0 = dy1 * dx2 - dy2 * dx1
            n1 = dy2 * dx0 - dy0 * dx2
            n2 = dy0 * dx1 - dy1 * dx0
            length = np.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
            if length > 0.0:
                out[y, x, 0] = n0 / length
                out[y, x, 1] = n1 / length
                out[y, x, 2] = n2 / length
            else:
                out[y, x, 2] = 1.0
            out[y, x, 3] = 1.0
    return out


@njit(cache=True, parallel=True)
def deferred_light(albedo, normal, light_dir, light_color, ambient, intensity):
    """float32 (h, w, 4) HDR: albedo x (ambient + light x max(0, n.l)) x intensity, Lambert as the
    raster's shading (DESIGN.md §2); pixels without a surface keep their albedo (the clear colour)
    x intensity. light_dir: view-space unit vector towards the light."""
    H, W = albedo.shape[0], albedo.shape[1]
    out = np.zeros((H, W, 4), np.float32)
    for y in prange(H):
        for x in range(W):
            if normal[y, x, 3] == 0.0:
                k0, k1, k2 = 1.0, 1.0, 1.0
            else:
                ndl = normal[y, x, 0] * light_dir[0] + normal[y, x, 1] * light_dir[1] + normal[y, x, 2] * light_dir[2]
                ndl = max(ndl, 0.0)
                k0 = ambient[0] + light_color[0] * ndl
                k1 = ambient[1] + light_color[1] * ndl
                k2 = ambient[2] + light_color[2] * ndl
            out[y, x, 0] = albedo[y, x, 0] / 255.0 * k0 * intensity
            out[y, x, 1] = albedo[y, x, 1] / 255.0 * k1 * intensity
            out[y, x, 2] = albedo[y, x, 2] / 255.0 * k2 * intensity
            out[y, x, 3] = albedo[y, x, 3] / 255.0
    return out


@njit(cache=True, parallel=True)
def ssao(pos, normal, radius_px, world_radius):
    """uint8 (h, w, 4): ambient occlusion from depth alone (grey, alpha 255). For each pixel, 8
    neighbours on a ring of radius_px (and 8 at half that) are tested: a neighbour occludes if it
    lies above the pixel's tangent plane (along its normal) within world_radius; AO = 1 - the
    fraction that occlude, with a linear fall-off by distance."""
    H, W = pos.shape[0], pos.shape[1]
    # The 16 sample offsets, the same for every pixel: made once here, not 16 cosines and sines
    # a pixel (those were 250 ms of a 1280x720 frame on two cores).
    off_x = np.empty(16, np.int64)
    off_y = np.empty(16, np.int64)
    for ring in range(2):
        r = radius_px if ring == 0 else max(1, radius_px // 2)
        for k in range(8):
            # the 8 compass directions, rotated by half a step on the inner ring
            a = (k + 0.5 * ring) * (np.pi / 4.0)
            off_x[ring * 8 + k] = int(round(r * np.cos(a)))
            off_y[ring * 8 + k] = int(round(r * np.sin(a)))
    out = np.zeros((H, W, 4), np.uint8)
    for y in prange(H):
        for x in range(W):
            out[y, x, 3] = 255
            if pos[y, x, 3] == 0.0:
                out[y, x, 0] = 255
                out[y, x, 1] = 255
                out[y, x, 2] = 255
                continue
            px, py, pz = pos[y, x, 0], pos[y, x, 1], pos[y, x, 2]
            nx, ny, nz = normal[y, x, 0], normal[y, x, 1], normal[y, x, 2]
            occ = 0.0
            for j in range(16):
                sx = min(max(x + off_x[j], 0), W - 1)
                sy = min(max(y + off_y[j], 0), H - 1)
                if pos[sy, sx, 3] == 0.0:
                    continue
                dx, dy, dz = pos[sy, sx, 0] - px, pos[sy, sx, 1] - py, pos[sy, sx, 2] - pz
                dist = np.sqrt(dx * dx + dy * dy + dz * dz)
                if dist <= 1e-6 or dist > world_radius:
                    continue
                h = (dx * nx + dy * ny + dz * nz) / dist
                if h > 0.1:
                    occ += h * (1.0 - dist / world_radius)
            ao = 1.0 - occ / 16.0
            v = np.uint8(min(max(ao, 0.0), 1.0) * 255.0 + 0.5)
            out[y, x, 0] = v
            out[y, x, 1] = v
            out[y, x, 2] = v
    return out


@njit(cache=True, parallel=True)
def tonemap(hdr, ao):
    """uint8 (h, w, 4): Reinhard c / (1 + c) of HDR x AO, rounded; alpha 255."""
    H, W = hdr.shape[0], hdr.shape[1]
    out = np.zeros((H, W, 4), np.uint8)
    for y in prange(H):
        for x in range(W):
            a = ao[y, x, 0] / 255.0
            for c in range(3):
                v = max(hdr[y, x, c], 0.0) * a
                v = v / (1.0 + v)
                out[y, x, c] = np.uint8(min(v * 255.0 + 0.5, 255.0))
            out[y, x, 3] = 255
    return out


@njit(cache=True, parallel=True)
def blur_rows(src):
    """uint8: 5-tap binomial [1 4 6 4 1] / 16 along x, edges clamped, rounded (integer exact)."""
    H, W = src.shape[0], src.shape[1]
    out = np.zeros_like(src)
    for y in prange(H):
        for x in range(W):
            for c in range(4):
                s = (np.int32(src[y, max(x - 2, 0), c]) + 4 * np.int32(src[y, max(x - 1, 0), c])
                     + 6 * np.int32(src[y, x, c]) + 4 * np.int32(src[y, min(x + 1, W - 1), c])
                     + np.int32(src[y, min(x + 2, W - 1), c]))
                out[y, x, c] = (s + 8) >> 4
    return out


@njit(cache=True, parallel=True)
def blur_cols(src):
    """uint8: the same filter along y."""
    H, W = src.shape[0], src.shape[1]
    out = np.zeros_like(src)
    for y in prange(H):
        y0, y1, y3, y4 = max(y - 2, 0), max(y - 1, 0), min(y + 1, H - 1), min(y + 2, H - 1)
        for x in range(W):
            for c in range(4):
                s = (np.int32(src[y0, x, c]) + 4 * np.int32(src[y1, x, c]) + 6 * np.int32(src[y, x, c])
                     + 4 * np.int32(src[y3, x, c]) + np.int32(src[y4, x, c]))
                out[y, x, c] = (s + 8) >> 4
    return out


@njit(cache=True, parallel=True)
def composite(sharp, soft):
    """uint8: (sharp + soft + 1) / 2 per channel, a soft-focus composite of the two."""
    H, W = sharp.shape[0], sharp.shape[1]
    out = np.zeros_like(sharp)
    for y in prange(H):
        for x in range(W):
            for c in range(4):
                out[y, x, c] = (np.int32(sharp[y, x, c]) + np.int32(soft[y, x, c]) + 1) >> 1
    return out
