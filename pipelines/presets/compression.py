"""Framebuffer compression of each preset: codec, block parameters, and which stages may read or
write a surface compressed (DESIGN.md §4 "Compression", issue 6): the record
`CompressionParams` and `PARAMS[preset name] = CompressionParams(...)`; pipelines.presets takes
each preset's record from here (NONE for a preset without). Sources are seed-note lines
(seed-notes/<file> Lnn is the line of the note; "seed Lnnnn" inside a note is the original's
line) or peers.md sections.

Keys:
    codec                      "dcc" | "afbc" | "apple" | "ubwc" | "none" (renderer.compression)
    dcc_max_compressed_block   B; a DCC block that compresses past it is stored raw
    ps_reads_compressed        a render pass samples the surface without a decompress pass (taken
                               for an HTILE depth too: assumed, no source separates them)
    cs_reads_compressed        a compute pass reads it (texture/SRV) without a decompress pass
    cs_writes_compressed       a compute pass writes it compressed (image store / UAV)
    merges_partial_writes      partial block writes are merged into one full-block write (no
                               read-modify-write)
    compressed_in_cache        the L2 (a tiler's GPU L2 / system cache) keeps a compressed block
                               in the lines its bytes fill (renderer.memory: packed blocks), so
                               it holds more of a compressed surface; else it holds the block
                               line for line and the bytes shrink only at DRAM. The post chain's
                               coarse cache counts a surface at its compressed size
    transaction_elimination    per-tile CRC; unchanged tiles are not written
    depth_codec                "htile" | "none": depth compressed by plane equations per 8x8 block
                               (renderer.compression.depth) in the raster passes
    display_reads_compressed   the display engine scans the presented surface out as stored
                               (payload + metadata); else the driver decompresses it in place
                               before present (pipelines.passes.present)
Atomics and scattered writes force a decompress on every preset (seed-notes/004_partB.md L72-74).
"""
from __future__ import annotations

from dataclasses import dataclass

from pipelines.presets.params import Param, Record

A = "seed-notes/000_partA.md"
B = "seed-notes/000_partB.md"
A4 = "seed-notes/004_partA.md"
B4 = "seed-notes/004_partB.md"
PEERS = "peers.md"

@dataclass(frozen=True)
class CompressionParams(Record):
    """The keys above; renderer.compression and the post chain read the values (`as_dict()`)."""
    codec: Param
    ps_reads_compressed: Param
    cs_reads_compressed: Param
    cs_writes_compressed: Param
    merges_partial_writes: Param
    compressed_in_cache: Param
    transaction_elimination: Param
    dcc_max_compressed_block: Param = Param(256, "read by the DCC codec only: 256 B, the largest "
                                                 f"DCC block (GFX11.5+, {A} L401), where a part "
                                                 "has no DCC figure", "assumed")
    depth_codec: Param = Param("none", "no source says how this part stores depth: stored raw",
                               "assumed")
    display_reads_compressed: Param = Param(False, "no source says this part's display engine reads "
                                                   "its compressed surfaces: decompressed before "
                                                   "present", "assumed")


_GCN_READ = Param(False, f"GCN DCC flow: a shader read of a DCC surface is decompressed first, {A} L163 (seed L966); "
                         "note: Mesa enables TC-compatible DCC reads from GFX8, so this may overstate GCN 1.2+/GCN 5", "spec")
_GCN_WRITE = Param(False, f"GCN compresses only at the RB write, {A} L163 (seed L966): compute writes go raw after a decompress", "spec")
_RDNA_READ = Param(True, f"RDNA 1 end-to-end DCC: TMU and caches carry compressed data, {A} L164-167 (seed L962-966)", "spec")
_RDNA_WRITE = Param(True, f"shaders and RBs read and write compressed textures and render targets (PS5, RDNA 2), {B} L56 (seed L2044)", "spec")
_RDNA_WRITE_TAKEN = Param(True, f"PS5 (RDNA 2) statement {B} L56 (seed L2044) taken for this generation", "assumed")
_NO_MERGE = Param(False, f"partial-write merging is named only for Apple UTC, {A4} L343, {B4} L46 (seed L889)", "spec")
_NOT_IN_CACHE = Param(False, f"PS5 (RDNA 2): DCC compresses and decompresses at the L2 <-> DRAM boundary, {B} L56 "
                             f"(seed L2056); the Infinity Cache stores decompressed data, {A} L170 (seed L1228)", "spec")
# The same RDNA 2 line taken for the parts it does not name (GCN, Vega, RDNA 1, RDNA 3): assumed.
_NOT_IN_CACHE_TAKEN = Param(False, f"not stated for this part; RDNA 2's Infinity Cache stores decompressed data "
                                   f"({A} L170, seed L1228) taken", "assumed")
_RDNA_DISPLAY = Param(True, f"RDNA 1 end-to-end DCC: the display engine consumes the compressed framebuffer directly, "
                            f"{A} L165-167 (seed L962-966); DCN's displayable DCC, peers.md §4.1 (drm_fourcc.h DCC_RETILE)", "spec")
_GCN_DISPLAY = Param(False, f"display reads of DCC start with RDNA 1 ({A} L167, L174: display_reads_compressed RDNA1+); "
                            f"GCN compresses at the RB write only, {A} L163 (seed L966)", "derived")
_NO_TE = Param(False, f"transaction elimination is Arm Mali's, {A4} L209 (seed L760)", "spec")


_HTILE = Param("htile", f"Z compression 2:1-4:1, lossless, from TeraScale on ({A} L158, seed L314); GCN 1.0/1.1 "
                        f"already compressed depth ({A} L160, seed L503); HTILE is the base of Hi-Z ({A} L59). "
                        "Planes per tile and their encoding are not public: renderer.compression.depth's", "spec")


def _dcc(max_block: int, max_source: str, label: str, read: Param, write: Param,
         in_cache: Param = _NOT_IN_CACHE_TAKEN, codec_source: str | None = None,
         display: Param = _RDNA_DISPLAY) -> dict[str, Param]:
    return {
        "depth_codec": _HTILE,
        "codec": Param("dcc", codec_source, "assumed") if codec_source else Param(
            "dcc", f"DCC from GCN 1.2 (Tonga) on, {A} L160; 256 B blocks, 64 B sectors, {A} L400-403, {PEERS} §4.1", "spec"),
        "dcc_max_compressed_block": Param(max_block, max_source, label),
        "ps_reads_compressed": read,
        "cs_reads_compressed": read,
        "cs_writes_compressed": write,
        "merges_partial_writes": _NO_MERGE,
        "compressed_in_cache": in_cache,
        "transaction_elimination": _NO_TE,
        "display_reads_compressed": display,
    }


# Asahi Linux's DCP driver (drivers/gpu/drm/apple/plane.c) hands the display coprocessor a
# DRM_FORMAT_MOD_APPLE_GPU_TILED_COMPRESSED framebuffer as is (has_comp); drm_fourcc.h: body plus
# 8 B of metadata per 16x16 subtile, the layout the codec models. Written for M1/M2.
_APPLE_DISPLAY = Param(True, "the display coprocessor scans out Apple's compressed GPU-tiled layout: Asahi Linux "
                             "DCP driver (plane.c has_comp for DRM_FORMAT_MOD_APPLE_GPU_TILED_COMPRESSED, M1/M2)",
                       "derived")

_APPLE_LEGACY = {
    "ps_reads_compressed": Param(False, f"before the M4 generation compression is kept on the graphics path only, not the compute/texture path, {B4} L68 (seed L1569)", "spec"),
    "cs_reads_compressed": Param(False, f"as above, {B4} L68 (seed L1569); a CS binding converts to linear, {B4} L40 (seed L879)", "spec"),
    "cs_writes_compressed": Param(False, f"no ShaderWrite before UTC, {B4} L45 (seed L887), L68 (seed L1569)", "spec"),
    "merges_partial_writes": _NO_MERGE,
    "compressed_in_cache": Param(False, "not stated for Apple parts before UTC", "assumed"),
    "transaction_elimination": _NO_TE,
    "display_reads_compressed": _APPLE_DISPLAY,
}

_TABLES: dict[str, dict[str, Param]] = {
    "amd-gcn": {**_dcc(64, f"no DCC on GCN 1.0; GFX9's 64 B would apply from GCN 1.2, {A} L401", "assumed",
                       _GCN_READ, _GCN_WRITE, display=_GCN_DISPLAY),
                "codec": Param("none", f"the preset is GCN 1.0 (Tahiti), which predates DCC (DCC enters with GCN 1.2, "
                                       f"Tonga, {A} L160): colour is stored raw", "spec")},
    "amd-vega": _dcc(64, f"MAX_COMPRESSED_BLOCK_SIZE 64 B on GFX9, Mesa ac_surface, {A} L401", "spec", _GCN_READ, _GCN_WRITE,
                     display=_GCN_DISPLAY),
    "amd-rdna1": _dcc(128, f"128 B on GFX10-11, {A} L401", "spec", _RDNA_READ, _RDNA_WRITE_TAKEN,
                      in_cache=Param(True, f"RDNA 1 end-to-end DCC: RB, TMU and the cache path carry compressed "
                                           f"data, decompressed just before the ALU, {A} L164-167 (seed L962-966)", "spec")),
    "amd-rdna2": _dcc(128, f"128 B on GFX10-11, {A} L401", "spec", _RDNA_READ, _RDNA_WRITE, in_cache=_NOT_IN_CACHE),
    "amd-rdna3": _dcc(128, f"128 B on GFX10-11, {A} L401", "spec", _RDNA_READ, _RDNA_WRITE_TAKEN),
    "amd-rdna4": _dcc(256, f"256 B on GFX11.5+, {A} L401", "spec", _RDNA_READ, _RDNA_WRITE_TAKEN,
                      in_cache=Param(True, f"RDNA 4 caches hold compressed colour/depth, decompression deferred, {B} L58 (seed L1855, L1876)", "spec")),
    "apple-a11": {
        "codec": Param("apple", f"Apple lossless framebuffer compression: 16 KiB tiles, 8 B per 16x16 subtile, {PEERS} §4.4; "
                                "the issue asks A11 to have it (Apple's feature tables list lossless compression from A12: not in the notes)", "assumed"),
        **_APPLE_LEGACY,
    },
    "apple-m3": {
        "codec": Param("apple", f"Apple lossless framebuffer compression, {PEERS} §4.4", "spec"),
        **_APPLE_LEGACY,
    },
    "apple-m5": {
        "codec": Param("apple", f"UTC on the Apple layout: 16 KiB tiles, 8 B per 16x16 subtile, {PEERS} §4.4; UTC in M5, {A4} L78 (seed L125-131)", "spec"),
        "ps_reads_compressed": Param(True, f"UTC keeps compression across pixel/compute/texture views, {A4} L327 (seed L833-837)", "spec"),
        "cs_reads_compressed": Param(True, f"CS reads decompress on the fly, metadata kept across PS->CS, {B4} L44 (seed L885)", "spec"),
        "cs_writes_compressed": Param(True, f"ShaderWrite: shaders write compressed surfaces directly, {B4} L45 (seed L887)", "spec"),
        "merges_partial_writes": Param(True, f"partial writes merged into full-block writes, {B4} L46 (seed L889)", "spec"),
        "compressed_in_cache": Param(True, f"SLC + UTC: hand-off needs no decompress or write-back, {A4} L83 (seed L133-139)", "derived"),
        "transaction_elimination": _NO_TE,
        "display_reads_compressed": Param(True, f"{_APPLE_DISPLAY.source}; taken for M5", "assumed"),
    },
    "arm-mali": {
        "codec": Param("afbc", f"AFBC 16x16 superblocks of 4x4 sub-blocks, 16 B headers, solid colour, {PEERS} §4.2", "spec"),
        "ps_reads_compressed": Param(True, f"AFBC textures are sampled compressed, random access to 4x4 blocks, {PEERS} §2.6 (Arm AFBC row)", "spec"),
        "cs_reads_compressed": Param(True, f"only a UAV binding is named as converting to linear, {B4} L40 (seed L879)", "assumed"),
        "cs_writes_compressed": Param(False, f"a CS UAV binding converts AFBC to linear and loses the metadata, {B4} L40 (seed L879)", "spec"),
        "merges_partial_writes": _NO_MERGE,
        "compressed_in_cache": Param(False, "not stated for Mali", "assumed"),
        "transaction_elimination": Param(True, f"per-tile CRC, unchanged 16x16 tiles not written, {PEERS} §2.6, {A4} L209 (seed L760)", "spec"),
        "display_reads_compressed": Param(True, f"AFBC is a DRM format modifier for buffers shared with display "
                                                f"processors (drm_fourcc.h AFBC_FORMAT_MOD_*, {PEERS} §4.2); \"up to 50%\" "
                                                f"system bandwidth, {PEERS} §2.6", "derived"),
    },
    "qcom-adreno": {
        "codec": Param("ubwc", f"UBWC 256 B blocks, 16x4 at 4 B and 8x4 at 8 B (freedreno fdl6_get_ubwc_blockwidth, {PEERS} §4.3); "
                               "coding, 32 B size units and 1 B flags per block assumed", "spec"),
        "ps_reads_compressed": Param(True, "UBWC textures are sampled compressed (freedreno flag buffer on texture descriptors, "
                                           f"{PEERS} §4.3 A6XX_TEX_CONST_10_FLAG_BUFFER)", "spec"),
        "cs_reads_compressed": Param(True, "as for sampling", "assumed"),
        "cs_writes_compressed": Param(False, f"UBWC loses state at a UAV binding, {B4} L383 (seed L879)", "spec"),
        "merges_partial_writes": _NO_MERGE,
        "compressed_in_cache": Param(False, "not stated for Adreno", "assumed"),
        "transaction_elimination": _NO_TE,
        "display_reads_compressed": Param(True, "UBWC is the layout of DRM_FORMAT_MOD_QCOM_COMPRESSED (drm_fourcc.h), "
                                                "which the MSM display (DPU) scans out", "derived"),
    },
}
PARAMS: dict[str, CompressionParams] = {name: CompressionParams.of(t) for name, t in _TABLES.items()}

_NONE = "the generic baseline has no framebuffer compression (its description)"
NONE = CompressionParams(Param("none", _NONE, "assumed"), *(Param(False, _NONE, "assumed"),) * 6,
                         display_reads_compressed=Param(False, _NONE, "assumed"))


def store_bytes(compression: CompressionParams, surface, tile_px: int | None = None, clear=None):
    """Bytes a colour store of `surface` (RGBA8 uint8 or RGBA16F bit patterns, (h, w, 4)) moves
    under a preset's codec (`preset.compression`): an int, or with tile_px an int64 (tiles_y,
    tiles_x) map of the compressed bytes each screen tile stores
    (renderer.compression.tile_size_map). Raw bytes for presets without a codec. `clear`: the
    pass's fast-clear colour (DCC only)."""
    import numpy as np

    from renderer.compression import as_surface, compressed_size, tile_size_map
    codec = compression.codec.value
    img, _ = as_surface(surface)
    if codec == "none":
        if tile_px is None:
            return int(img.nbytes)
        h, w = img.shape[:2]      # pixels per tile: rows in its band x columns in its band
        per_row, per_col = np.bincount(np.arange(h) // tile_px), np.bincount(np.arange(w) // tile_px)
        return np.outer(per_row, per_col).astype(np.int64) * (img.shape[2] * img.itemsize)
    clear = clear if codec == "dcc" else None
    mcb = int(compression.dcc_max_compressed_block.value)
    if tile_px is None:
        return compressed_size(img, codec, mcb, clear)
    return tile_size_map(img, codec, tile_px, mcb, clear)
