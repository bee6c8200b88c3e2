"""Present: the display engine scans out the frame's image, the last client of its surfaces.

The presented surface is the compute chain's "final" where the frame has one (the chain counts
this step itself: postchain.run_graph(present=...)), else the last render pass's colour as the
architecture stored it (a 4x frame on an IMR: its resolved copy, which the resolve writes raw).
Where the preset's display engine reads the surface as it was stored
(compression.display_reads_compressed: RDNA's display engine, Apple's display coprocessor,
AFBC and UBWC display processors), scan-out moves its payload and metadata. Where it cannot
(GCN's DCC), the driver first decompresses the surface in place, through the frame's caches, as
it does for a later pass that cannot read it compressed (pipelines.arch.compressed
.decompress_blocks), and scan-out reads it raw.

Scan-out is the display engine's traffic, once per refresh, not the GPU's: it is reported apart
(display.scanout.bytes as read, display.scanout.raw the surface's raw bytes) and is in no
mem.dram.* total. The decompress is GPU work of the frame and is in them.
"""
from __future__ import annotations

import numpy as np

from renderer.compression.codecs import rop_meta_bytes
from renderer.counters import Counters
from renderer.formats import FORMATS
from renderer.memory import MemoryModel

from pipelines.arch.compressed import codec_for, decompress_blocks, stored_payload


def scanout_counters(read: int, raw: int) -> Counters:
    """What the display engine reads of the presented surface per refresh, and its raw size."""
    return Counters({"display.scanout.bytes": int(read), "display.scanout.raw": int(raw)})


def present(mm: MemoryModel, preset, att, sizes: np.ndarray | None, width: int,
            height: int) -> Counters:
    """Scan out attachment `att` (the last render pass's colour) of a frame whose caches are
    `mm`; `sizes`: its payload bytes per 8x8 block as stored (-1: a raw block), None where it
    was stored raw. Returns the step's counters: the decompress's cache traffic and
    comp.decompress.* where there is one, and display.scanout.*."""
    bpp = FORMATS[att.format].bytes_per_sample
    raw = width * height * bpp
    codec = codec_for(preset, att)
    if sizes is None or codec is None:
        return scanout_counters(raw, raw)
    if preset.compression.display_reads_compressed.value:
        return scanout_counters(stored_payload(sizes, bpp) + sizes.shape[0] * rop_meta_bytes(codec), raw)
    before = mm.counters()
    surf = mm.surface(att.name, att.format, 1)
    out = decompress_blocks(mm, mm.level("l2"), surf, sizes, att, width)
    mm.flush(surf, store=True)
    for k, v in mm.counters().items():
        if v != before.get(k, 0):
            out.add(k, v - before.get(k, 0))
    return out + scanout_counters(raw, raw)
