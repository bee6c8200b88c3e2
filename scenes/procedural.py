"""Procedural meshes and textures for the built-in scenes (scenes.library).

Produces `Mesh` and `Texture` objects in the conventions of scenes.model: counter-clockwise front
faces, unit normals, UVs with v = 0 at the top row of the image (glTF). Everything is deterministic:
the same arguments give bit-identical arrays.

    sphere = uv_sphere(16, 32)          # 2 * 32 * 15 = 960 triangles
    leaf = leaf_mask_texture(128)       # RGBA8, alpha is the leaf silhouette
"""
from __future__ import annotations

import numpy as np

from .model import Mesh, SceneError, Texture


def uv_sphere(n_lat: int, n_lon: int, name: str = "uv_sphere") -> Mesh:
    """Unit sphere centred at the origin: n_lat bands pole to pole, n_lon segments around +Y.

    2 * n_lon * (n_lat - 1) triangles (one triangle per segment in each polar band). The seam and the
    poles have duplicated vertices so that UVs are continuous: u goes round the equator from +Z
    towards +X, v = 0 at the north pole (+Y), v = 1 at the south pole.
    """
    if n_lat < 2 or n_lon < 3:
        raise SceneError(f"uv_sphere: need n_lat >= 2 and n_lon >= 3, got {n_lat}, {n_lon}")
    i, j = np.meshgrid(np.arange(n_lat + 1), np.arange(n_lon + 1), indexing="ij")
    theta = np.pi * i / n_lat                   # polar angle from +Y
    phi = 2.0 * np.pi * j / n_lon
    positions = np.stack([np.sin(theta) * np.sin(phi), np.cos(theta), np.sin(theta) * np.cos(phi)], -1)
    positions = positions.reshape(-1, 3)
    u = j / n_lon
    # a pole vertex serves one triangle; centring its u on that triangle halves the texture shear
    # (the pole copies at j = n_lon serve none and keep u = 1)
    u = np.where(((i == 0) | (i == n_lat)) & (j < n_lon), (j + 0.5) / n_lon, u)
    uvs = np.stack([u, i / n_lat], -1).reshape(-1, 2)

    def vid(a, b):
        return a * (n_lon + 1) + b

    ii, jj = np.meshgrid(np.arange(n_lat), np.arange(n_lon), indexing="ij")
    a, b, c, d = vid(ii, jj), vid(ii + 1, jj), vid(ii + 1, jj + 1), vid(ii, jj + 1)
    # a-b-c and a-c-d are counter-clockwise seen from outside; each polar band keeps the one
    # triangle whose corners are not both on the pole
    upper = np.stack([a, b, c], -1)[:-1].reshape(-1, 3)
    lower = np.stack([a, c, d], -1)[1:].reshape(-1, 3)
    indices = np.concatenate([upper, lower]).astype(np.uint32)
    return Mesh(name, positions.astype(np.float32), indices,
                normals=positions.astype(np.float32), uvs=uvs.astype(np.float32))


def quad(w: float = 1.0, h: float = 1.0, name: str = "quad") -> Mesh:
    """w x h rectangle centred at the origin in the XY plane, facing +Z, two triangles.

    UV (0, 0) is the top-left corner (-w/2, +h/2), so an image appears upright seen from +Z.
    """
    if not (w > 0 and h > 0):
        raise SceneError(f"quad: size must be positive, got {w} x {h}")
    x, y = w / 2.0, h / 2.0
    positions = np.array([[-x, -y, 0], [x, -y, 0], [x, y, 0], [-x, y, 0]], np.float32)
    uvs = np.array([[0, 1], [1, 1], [1, 0], [0, 0]], np.float32)
    normals = np.tile(np.array([0, 0, 1], np.float32), (4, 1))
    indices = np.array([[0, 1, 2], [0, 2, 3]], np.uint32)
    return Mesh(name, positions, indices, normals=normals, uvs=uvs)


def boxes(lo: np.ndarray, hi: np.ndarray, name: str = "boxes") -> Mesh:
    """Axis-aligned boxes from corners lo to hi (float (n, 3) each), baked into one mesh: per box
    its four sides and its top (10 triangles, counter-clockwise seen from outside, a normal per
    face); no bottom, as for buildings standing on the ground."""
    lo, hi = np.asarray(lo, np.float64), np.asarray(hi, np.float64)
    if lo.shape != hi.shape or lo.ndim != 2 or lo.shape[1] != 3 or not (hi > lo).all():
        raise SceneError(f"boxes: corners must be (n, 3) with hi > lo, got {lo.shape} and {hi.shape}")
    # Each face: its four corners as (x, y, z) picks of lo (0) or hi (1), counter-clockwise seen
    # along -normal, and its outward normal.
    faces = (((1, 0, 1), (1, 0, 0), (1, 1, 0), (1, 1, 1), (1, 0, 0)),     # +x
             ((0, 0, 0), (0, 0, 1), (0, 1, 1), (0, 1, 0), (-1, 0, 0)),    # -x
             ((0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1), (0, 0, 1)),     # +z
             ((1, 0, 0), (0, 0, 0), (0, 1, 0), (1, 1, 0), (0, 0, -1)),    # -z
             ((0, 1, 1), (1, 1, 1), (1, 1, 0), (0, 1, 0), (0, 1, 0)))     # +y (the roof)
    picks = np.array([f[:4] for f in faces], bool)                 # (5 faces, 4 corners, 3)
    corners = np.where(picks[None], hi[:, None, None], lo[:, None, None])   # (n, 5, 4, 3)
    normals = np.broadcast_to(np.array([f[4] for f in faces], np.float32)[None, :, None],
                              corners.shape)
    quads = np.arange(len(lo) * 5)[:, None] * 4
    indices = (quads[:, None] + np.array([[0, 1, 2], [0, 2, 3]])).reshape(-1, 3)
    return Mesh(name, corners.reshape(-1, 3).astype(np.float32), indices.astype(np.uint32),
                normals=normals.reshape(-1, 3).copy())


def _texel_centres(size: int) -> tuple[np.ndarray, np.ndarray]:
    """(u, v) of every texel centre, each (size, size), row 0 at v near 0."""
    c = (np.arange(size) + 0.5) / size
    return np.meshgrid(c, c, indexing="xy")


def leaf_mask_texture(size: int = 128) -> Texture:
    """A leaf for alpha testing: opaque blade and stem, transparent elsewhere, green with veins.

    The tip points to the top of the image (v = 0), the stem to the bottom. The edge is
    anti-aliased over about one texel, so a 0.5 cutoff gives the silhouette at texel precision and
    the mip chain shrinks it smoothly.
    """
    if size < 8:
        raise SceneError(f"leaf_mask_texture: size must be >= 8, got {size}")
    u, v = _texel_centres(size)
    x = np.abs(u - 0.5)
    tip, base = 0.05, 0.84                       # blade extent along v
    s = np.clip((v - tip) / (base - tip), 0.0, 1.0)  # 0 at the tip, 1 where the stem starts
    half_width = 0.40 * np.sin(np.pi * s ** 1.5)     # widest about 60 % of the way to the stem
    inside_blade = (v >= tip) & (v <= base)
    blade = np.where(inside_blade, (half_width - x) * size, -size)  # signed distance, texels
    stem = np.where((v > base - 0.05) & (v < 0.97), (0.014 - x) * size, -size)
    alpha = np.clip(np.maximum(blade, stem) + 0.5, 0.0, 1.0)

    midrib = np.clip(1.0 - x * size / 1.2, 0.0, 1.0)
    # side veins run from the midrib towards the tip at about 35 degrees
    phase = (s * 7.0 + x * 9.0) % 1.0
    side = np.clip(1.0 - np.abs(phase - 0.5) * 2.0 * size / 10.0, 0.0, 1.0) * (x < half_width * 0.85)
    vein = np.maximum(midrib, 0.6 * side)
    shade = 0.75 + 0.25 * (x / np.maximum(half_width, 1e-6)).clip(0, 1)  # lighter towards the rim
    noise = np.random.default_rng(20240601).uniform(-0.04, 0.04, (size, size))
    dark = np.array([0.16, 0.42, 0.10])
    light = np.array([0.55, 0.75, 0.30])
    rgb = (dark * (shade + noise)[..., None]) * (1 - vein[..., None]) + light * vein[..., None]
    rgba = np.concatenate([rgb, alpha[..., None]], -1)
    return Texture("leaf_mask", np.round(np.clip(rgba, 0, 1) * 255).astype(np.uint8))


def particle_texture(size: int = 64) -> Texture:
    """A soft round blob: white, alpha (1 - r^2)^2 from 1 at the centre to 0 at the rim."""
    if size < 2:
        raise SceneError(f"particle_texture: size must be >= 2, got {size}")
    u, v = _texel_centres(size)
    r2 = ((u - 0.5) ** 2 + (v - 0.5) ** 2) * 4.0
    alpha = np.clip(1.0 - r2, 0.0, 1.0) ** 2
    rgba = np.ones((size, size, 4))
    rgba[..., 3] = alpha
    return Texture("particle", np.round(rgba * 255).astype(np.uint8))
