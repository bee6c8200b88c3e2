"""What every architecture's pipeline shares around the stages: the pass's primitives as
submitted, its render targets, and the per-tile heat maps."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from renderer.binning_kernels import BLOCK
from renderer.counters import Counters
from renderer.memo import MeshMemo, mesh_ids
from renderer.rop import Framebuffer, rgba8
from renderer.raster_kernels import RC
from scenes.model import LoadAction, SceneError

from pipelines.arch.compressed import decompress_blocks


class GeometryStreams(NamedTuple):
    """The pass's primitives as submitted: which draw each belongs to and its vertex indices.
    What the front end fetches, and from where, is its FetchPlan (renderer.frontend)."""
    prim_off: np.ndarray     # int64 (n_draws + 1,) first primitive of each draw (pass-global)
    indices: np.ndarray      # int64 (3 * n_prims,) draw-local vertex index of every corner

    @staticmethod
    def of(draws) -> "GeometryStreams":
        """Remembered while the same meshes are drawn (shared: never written to)."""
        def compute():
            counts = [d.mesh.n_triangles for d in draws]
            prim_off = np.zeros(len(draws) + 1, np.int64)
            np.cumsum(counts, out=prim_off[1:])
            idx = np.concatenate([d.mesh.indices.reshape(-1) for d in draws]).astype(np.int64) \
                if draws else np.zeros(0, np.int64)
            return GeometryStreams(prim_off, idx)
        return _STREAMS.get(mesh_ids(draws), (d.mesh for d in draws), compute)

    def prim_draw(self) -> np.ndarray:
        """int64 (n_prims,): the draw of every primitive."""
        return np.repeat(np.arange(len(self.prim_off) - 1, dtype=np.int64), np.diff(self.prim_off))


_STREAMS = MeshMemo(8)


def blocks(width: int, height: int) -> tuple[int, int, int]:
    """8x8 ROP blocks across, down, in all."""
    bx, by = -(-width // BLOCK), -(-height // BLOCK)
    return bx, by, bx * by


def texture_unit(preset):
    """renderer.shade.TextureUnit of the preset: its texture formats and L1."""
    return preset.texture.unit(int(preset.memory.cache_line_bytes.value))


def shaded_counts(width: int, height: int) -> np.ndarray:
    """uint32 (h, w): fragments shaded per pixel over the frame's passes (the overdraw heat map),
    undefined until the first pass's raster zeroes it tile by tile (framebuffer's `first`)."""
    return np.empty((height, width), np.uint32)


def framebuffer(rp, images, view, shaded, first: bool) -> Framebuffer:
    """The pass's attachments: previous contents for LOAD, else the clear value, written by the
    raster into each tile as it takes it up (Framebuffer.clear); `first`: the frame's first
    pass, whose raster also zeroes the shaded counts."""
    h, w, s = view.height, view.width, view.samples

    def get(att, shape, dtype, clear):
        """The attachment's array and what its tiles start from (None: what it holds)."""
        if att.load == LoadAction.LOAD and att.name in images and images[att.name].shape == shape:
            return images[att.name], None
        images[att.name] = np.empty(shape, dtype)
        return images[att.name], clear
    color, color_clear = get(rp.color, (h, w, s, 4), np.uint8, rgba8(rp.color.clear))
    depth, z = (get(rp.depth, (h, w, s), np.float32, rp.depth.clear[0]) if rp.depth is not None
                else (np.empty((h, w, s), np.float32), 1.0))
    return Framebuffer.cleared_in_tiles(color, depth, shaded, color_clear, z, zero_shaded=first)


def tile_maps(per_tile, tile_bytes, tiles_x, tiles_y) -> dict[str, np.ndarray]:
    shape = (tiles_y, tiles_x)
    shaded = per_tile[:, RC.SHADED].reshape(shape)
    covered = per_tile[:, RC.PIXELS_COVERED].reshape(shape)
    return {"overdraw": np.where(covered > 0, shaded / np.maximum(covered, 1), 0.0),
            "shaded": shaded, "dram_bytes": tile_bytes.reshape(shape).copy(),
            "texture_misses": per_tile[:, RC.TEX_MISSES].reshape(shape).copy()}


def read_inputs(rp, mm, attachments: dict, images: dict, fb, width: int, height: int,
                preset=None, stored: dict | None = None) -> Counters:
    """A pass that samples earlier attachments (rp.inputs) reads each once per pixel, through the
    caches from L2 down (stream texture): what the caches still hold of a surface its own pass
    stored is read on chip, the rest from DRAM. A surface stored compressed (`stored`: name ->
    int64 payload bytes per 8x8 block, -1 raw) is read at those sizes where the preset's shaders
    read compressed surfaces (ps_reads_compressed), and otherwise decompressed first: read
    compressed and written back raw in place (comp.decompress.*, as the post chain counts it),
    then read raw. With rp.shows, the pass's colour is that attachment's image (see
    scenes.model.RenderPass). Returns the decompress counters."""
    level = mm.level("l2")
    out = Counters()
    for name in rp.inputs:
        if name not in attachments:
            raise SceneError(f"pass {rp.name!r} reads {name!r}, which no earlier pass wrote")
        att, samples = attachments[name]
        surf = mm.surface(name, att.format, samples)
        sizes = (stored or {}).get(name)
        if sizes is not None and bool(preset.compression.ps_reads_compressed.value):
            mm.read_blocks(level, surf, sizes, "texture")
            continue
        if sizes is not None:
            out = out + decompress_blocks(mm, level, surf, sizes, att, width)
        mm.read_linear(level, surf.region, width * height * surf.bytes_per_pixel, "texture")
    if rp.shows is not None:
        src = images[rp.shows]
        if src.shape != fb.color.shape:
            raise SceneError(f"pass {rp.name!r} shows {rp.shows!r}, whose size or samples differ")
        fb.color[...] = src
    return out

