"""Slow, obviously right twins of the fast kernels (stumpy's tests/naive.py habit).

naive_coverage: every sample of every pixel against every triangle, Python integers, the
top-left rule written out as D3D states it. raycast_coverage: no edge functions at all — a ray per
pixel centre against the world-space triangle, for clipping checks.
"""
from __future__ import annotations

import numpy as np

from renderer.binning import bin_triangles
from renderer.geometry import SetupTriangles
from renderer.raster import D3D_4X, Framebuffer, RasterView, rasterize
from renderer.shade import RGBA8_UNIT, DrawTable, TextureTable, l1_shape

SUB = 256


def _is_top_left(ax, ay, bx, by) -> bool:
    # Edges of a triangle wound so the interior is on the right of a→b in y-down coordinates.
    dx, dy = bx - ax, by - ay
    top = dy == 0 and dx > 0          # horizontal edge above the interior
    left = dy < 0                     # edge going up the screen, interior to its right
    return top or left


def sample_offsets(samples: int):
    return [(0, 0)] if samples == 1 else [(int(ox) * 16, int(oy) * 16) for ox, oy in D3D_4X]


def naive_coverage(tris: SetupTriangles, width: int, height: int, samples: int = 1) -> np.ndarray:
    """int32 (h, w, samples): index of the last triangle covering each sample, -1 for none;
    and the far plane test on window z, as the fast rasterizer applies it."""
    out = np.full((height, width, samples), -1, np.int32)
    offs = sample_offsets(samples)
    for t in range(tris.n):
        xs = [int(v) for v in tris.x[t]]
        ys = [int(v) for v in tris.y[t]]
        area = (xs[1] - xs[0]) * (ys[2] - ys[0]) - (ys[1] - ys[0]) * (xs[2] - xs[0])
        assert area > 0, "setup triangles have positive area"
        for py in range(height):
            for px in range(width):
                for s, (ox, oy) in enumerate(offs):
                    sx, sy = px * SUB + SUB // 2 + ox, py * SUB + SUB // 2 + oy
                    inside = True
                    e = []
                    for k in range(3):
                        ax, ay, bx, by = xs[k], ys[k], xs[(k + 1) % 3], ys[(k + 1) % 3]
                        ek = (bx - ax) * (sy - ay) - (by - ay) * (sx - ax)
                        e.append(ek)
                        if ek < 0 or (ek == 0 and not _is_top_left(ax, ay, bx, by)):
                            inside = False
                    if not inside:
                        continue
                    a, b, c = tris.zplane[t]
                    z = a * sx + b * sy + c
                    if 0.0 <= z <= 1.0:
                        out[py, px, s] = t
    return out


def setup_from_subpixels(xy: np.ndarray, z=None) -> SetupTriangles:
    """SetupTriangles straight from window positions in 1/256 px (n, 3, 2), wound to positive
    area as the geometry stage does; degenerate ones are dropped like geometry drops them."""
    xy = np.asarray(xy, np.int64).reshape(-1, 3, 2).copy()
    area = ((xy[:, 1, 0] - xy[:, 0, 0]) * (xy[:, 2, 1] - xy[:, 0, 1])
            - (xy[:, 1, 1] - xy[:, 0, 1]) * (xy[:, 2, 0] - xy[:, 0, 0]))
    keep = area != 0
    neg = area < 0
    xy[neg] = xy[neg][:, [0, 2, 1]]
    xy = xy[keep]
    n = len(xy)
    zz = np.full((n, 3), 0.5) if z is None else np.asarray(z, np.float64).reshape(-1, 3)[keep]
    # depth plane through the (here already snapped) vertices: solve [X Y 1] p = z per triangle
    m = np.concatenate([xy.astype(np.float64), np.ones((n, 3, 1))], axis=2)
    zplane = np.linalg.solve(m, zz[..., None])[..., 0] if n else np.zeros((0, 3))
    return SetupTriangles(np.ascontiguousarray(xy[:, :, 0]), np.ascontiguousarray(xy[:, :, 1]),
                          np.ascontiguousarray(zz), np.ones((n, 3)), np.zeros((n, 3, 3), np.float32),
                          np.zeros((n, 3, 2), np.float32), np.zeros(n, np.bool_), zplane,
                          np.arange(n, dtype=np.int32), np.arange(n, dtype=np.int64))


def id_tables(n: int) -> tuple[DrawTable, TextureTable]:
    """One unlit draw per triangle whose colour encodes its index (no depth test, no blend),
    so the last writer of each sample can be read back from the image."""
    ids = np.arange(n) + 1
    color = np.stack([ids % 256, (ids // 256) % 256, ids // 65536, np.full(n, 255)], 1) / 255.0
    return (DrawTable(color.astype(np.float32), np.full(n, -1, np.int32), np.zeros(n, np.int8),
                      np.full(n, 0.5, np.float32), np.ones(n, np.bool_), np.zeros(n, np.bool_),
                      np.zeros(n, np.bool_), np.zeros(n, np.bool_)),
            TextureTable(np.zeros(1, np.uint32), np.zeros((1, 16, 5), np.int64), np.ones(1, np.int64),
                         np.zeros(1, np.int64), np.array([[4, 4, 64, 2, 2]], np.int64),
                         np.zeros((1, 3), np.int64), l1_shape(RGBA8_UNIT)))


def fast_coverage(tris: SetupTriangles, width: int, height: int, samples: int = 1):
    """The fast rasterizer's answer in naive_coverage's form, plus its counters."""
    mat, tex = id_tables(tris.n)
    tris = tris._replace(draw=np.arange(tris.n, dtype=np.int32))   # draw i = triangle i
    fb = Framebuffer.make(width, height, samples, (0, 0, 0, 0), 1.0)
    counters, _, _ = rasterize(tris, bin_triangles(tris, width, height), mat, tex, np.zeros(9), fb,
                               RasterView.make(width, height, samples))
    c = fb.color.astype(np.int64)
    ids = c[..., 0] + 256 * c[..., 1] + 65536 * c[..., 2] - 1
    return ids.astype(np.int32), counters, fb


def raycast_coverage(world_tris: np.ndarray, camera, width: int, height: int) -> np.ndarray:
    """bool (h, w): pixel centres whose view ray hits any world-space triangle between the near
    and far planes (Möller–Trumbore, double precision). No clipping, no edge functions."""
    from renderer.transforms import look_at
    view = look_at(camera.eye, camera.target, camera.up)
    f = 1.0 / np.tan(np.radians(camera.fovy_deg) / 2)
    aspect = width / height
    px, py = np.meshgrid(np.arange(width) + 0.5, np.arange(height) + 0.5)
    ndc_x, ndc_y = px / width * 2 - 1, 1 - py / height * 2
    dirs = np.stack([ndc_x * aspect / f, ndc_y / f, -np.ones_like(ndc_x)], -1)   # view space
    hit = np.zeros((height, width), bool)
    for tri in world_tris:
        v = (np.c_[tri, np.ones(3)] @ view.T)[:, :3]
        e1, e2 = v[1] - v[0], v[2] - v[0]
        p = np.cross(dirs, e2)
        det = p @ e1
        with np.errstate(divide="ignore", invalid="ignore"):
            inv = 1.0 / det
            tvec = -v[0]
            u = (p @ tvec) * inv
            q = np.cross(tvec, e1)
            w = (dirs @ q) * inv
            t = (q @ e2) * inv          # view depth along -z (dirs have z = -1)
        hit |= (np.abs(det) > 1e-12) & (u >= 0) & (w >= 0) & (u + w <= 1) \
            & (t >= camera.near) & (t <= camera.far)
    return hit


class NaiveCaches:
    """The memory model written the obvious way: a list of LRU sets (OrderedDicts) per level,
    write-back, read-allocate with fetch from below, write-allocate without fetch. A level that
    holds compressed lines keeps no empty line (size field 1: 0 bytes), dropping a copy; it goes
    on below.
    `slot_of(line)`: the named-surface slot a DRAM transfer of the line is also counted under
    (0: none) in surf_* (moved) and surf_raw_* (a whole line each)."""

    def __init__(self, config, n_streams: int, n_tiles: int, slot_of=lambda line: 0):
        lb = config.line_bytes
        self.lb = lb
        self.packed = [c.holds_compressed for c in config.levels]
        self.slot_of = slot_of
        self.surf_read, self.surf_write = {}, {}
        self.surf_raw_read, self.surf_raw_write = {}, {}
        self.levels = [[__import__("collections").OrderedDict() for _ in range(c.n_sets(lb))]
                       for c in config.levels]
        self.ways = [c.ways for c in config.levels]
        self.write_allocate = [c.write_allocate for c in config.levels]
        self.next = dict(enumerate(config.below))
        z = lambda n: [0] * n                   # noqa: E731
        self.dram_read, self.dram_write = z(n_streams), z(n_streams)
        self.onchip_read, self.onchip_write = z(n_streams), z(n_streams)
        self.hits, self.misses, self.tile_bytes = z(len(config.caches)), z(len(config.caches)), z(n_tiles)
        self.comp_read, self.comp_write = z(n_streams), z(n_streams)
        self.comp_raw_read, self.comp_raw_write = z(n_streams), z(n_streams)

    def _dram(self, write, stream, tile, size=0, line=0):
        """size: the op's compressed-size field (bytes + 1; 0: a whole line)."""
        moved = self.lb if size == 0 else size - 1
        (self.dram_write if write else self.dram_read)[stream] += moved
        if size:
            (self.comp_write if write else self.comp_read)[stream] += moved
            (self.comp_raw_write if write else self.comp_raw_read)[stream] += self.lb
        if tile >= 0:
            self.tile_bytes[tile] += moved
        slot = self.slot_of(line)
        if slot:
            for d, v in (((self.surf_write if write else self.surf_read), moved),
                         ((self.surf_raw_write if write else self.surf_raw_read), self.lb)):
                d[slot] = d.get(slot, 0) + v

    def _passes(self, lv, line, size) -> bool:
        """An empty line at a level that holds compressed lines: not kept there (a copy is
        dropped unwritten); it goes on below."""
        if not (self.packed[lv] and size == 1):
            return False
        self.levels[lv][line % len(self.levels[lv])].pop(line, None)
        return True

    def _install(self, lv, line, dirty, stream, tile, size):
        """Insert as most recent; a dirty LRU victim goes down as a write-back."""
        sets = self.levels[lv]
        s = sets[line % len(sets)]
        victim = None
        if len(s) == self.ways[lv]:
            victim = s.popitem(last=False)
        s[line] = [dirty, stream, tile, size]
        if victim is not None and victim[1][0]:
            self.write_back(self.next[lv], victim[0], *victim[1][1:])

    def write_back(self, lv, line, stream, tile, size=0):
        if lv < 0:
            return self._dram(True, stream, tile, size, line)
        if self._passes(lv, line, size):
            return self.write_back(self.next[lv], line, stream, tile, size)
        s = self.levels[lv][line % len(self.levels[lv])]
        if line in s:
            s.move_to_end(line)
            s[line][0] = True
            s[line][3] = size
        elif self.write_allocate[lv]:
            self._install(lv, line, True, stream, tile, size)
        else:
            self.write_back(self.next[lv], line, stream, tile, size)

    def access(self, lv, line, write, stream, tile, size=0):
        if not (lv >= 0 and self.packed[lv] and size == 1):
            (self.onchip_write if write else self.onchip_read)[stream] += self.lb
        while lv >= 0:
            if self._passes(lv, line, size):
                lv = self.next[lv]
                continue
            s = self.levels[lv][line % len(self.levels[lv])]
            if line in s:
                self.hits[lv] += 1
                s.move_to_end(line)
                s[line][0] = s[line][0] or write
                if write:
                    s[line][3] = size
                return
            self.misses[lv] += 1
            if write and not self.write_allocate[lv]:
                lv = self.next[lv]
                continue
            self._install(lv, line, write, stream, tile, size)
            if write:
                return
            lv = self.next[lv]
        self._dram(write, stream, tile, size, line)     # a read miss, or a write no level kept

    def flush(self, region_of_line, region, store):
        for lv, sets in enumerate(self.levels):
            for s in sets:
                for line in list(s):
                    if region_of_line(line) != region:
                        continue
                    dirty, stream, tile, size = s[line]
                    if store:
                        if dirty:
                            self.write_back(self.next[lv], line, stream, tile, size)
                        s[line][0] = False
                    else:
                        del s[line]


def bbox_misses_samples(x, y, sample_x, sample_y):
    """Slow twin of renderer.frontend.ngg.bbox_misses_samples: every sample position of the
    pixels the box could hold, checked one by one. x, y: int64 (n, 3) subpixels."""
    from renderer.geometry_kernels import SUBPIXEL
    out = np.ones(len(x), np.bool_)
    for t in range(len(x)):
        x0, x1, y0, y1 = int(x[t].min()), int(x[t].max()), int(y[t].min()), int(y[t].max())
        for ox, oy in zip(sample_x, sample_y):
            for px in range(x0 // SUBPIXEL - 1, x1 // SUBPIXEL + 2):
                for py in range(y0 // SUBPIXEL - 1, y1 // SUBPIXEL + 2):
                    sx, sy = px * SUBPIXEL + SUBPIXEL // 2 + ox, py * SUBPIXEL + SUBPIXEL // 2 + oy
                    if x0 <= sx <= x1 and y0 <= sy <= y1:
                        out[t] = False
    return out
