"""Textures per preset (issue 27): the formats a platform's colour textures are stored in, and
the texture L1 (AMD RDNA's L0) they are read through, as the record `TextureParams`;
`PARAMS[preset name]`. renderer.shade.TextureUnit is what the architectures take
(`TextureParams.unit()`).

    tex_format         renderer.texture_formats name for colour textures without alpha
    tex_alpha_format   ... for textures with alpha (a texel below 255): grates, foliage, decals
    tex_l1_bytes       the texture L1 of one shader core (CU, core), bytes
    tex_l1_line_bytes  its line (at most the memory system's line: a miss asks L2 for one line)
    tex_l1_ways        its associativity (LRU)

`tilesim render --texture-format F` sets both formats (`tex.format=F`, labelled user).
"""
from __future__ import annotations

from dataclasses import dataclass

from pipelines.presets.params import Param, PresetError, Record
from renderer.shade import TextureUnit, l1_shape

A = "seed 000, seed-notes/000_partA.md"
B = "seed 000, seed-notes/000_partB.md"
BC_TMU = (f"BC1-3, BC6H and BC7 are decoded in the TMU at full rate ({A} l.171, seed L254); which "
          "format a title picks is its own: BC1 for opaque colour and BC7 for colour with alpha "
          "are the usual desktop choice")
APPLE_ASTC = ("Apple GPUs sample ASTC LDR from A8 on (Apple's Metal feature set tables); ASTC is the "
              "format Apple's tools default to; 4x4, its highest-rate block, chosen")
MALI_ASTC = ("Arm's Mali best-practice guide recommends ASTC for colour textures (every Mali since "
             "the T620 decodes it); 4x4 chosen")
ADRENO_ETC2 = ("ETC2 is OpenGL ES 3.0's and Vulkan-on-Android's mandatory format, the one every "
               "Adreno decodes; RGB8 for opaque colour, RGBA8 (EAC alpha) with alpha")
GCN_L1 = f"GCN vector L1: 16 KB per CU, 4-way, 64 B lines ({A} l.224, seed L481, L489)"
RDNA_L0_SIZE = f"RDNA 1/2 L0: 16 KB per CU ({A} l.235, l.243, seed L942, L1240)"
RDNA_LINE = (f"RDNA's cache lines are 128 B (AMD's RDNA whitepaper; {B} l.242, where the "
             "reviewer corrects seed L1544's 64 B)")
NO_WAYS = "no public figure for the L0's associativity; GCN's L1's 4 ways assumed"
APPLE_L1 = ("Apple publishes no texture cache; seed 004 gives only the core's 2 x 128 KB L1 "
            "(seed-notes/004_partA.md l.152, seed L594), whose share for textures is unknown; a "
            "16 KB, 4-way cache of the memory line assumed, as AMD's per-CU L0")
MOBILE_L1 = ("no public figure for this part's texture L1; 16 KB, 4-way, 64 B lines assumed (a "
             "GCN-like per-core cache)")


@dataclass(frozen=True)
class TextureParams(Record):
    """The keys above."""
    tex_format: Param
    tex_alpha_format: Param
    tex_l1_bytes: Param
    tex_l1_line_bytes: Param
    tex_l1_ways: Param

    def unit(self, line_bytes: int) -> TextureUnit:
        """renderer.shade.TextureUnit; a PresetError for an L1 the model cannot build or whose
        line is longer than the memory system's (`line_bytes`)."""
        unit = TextureUnit(str(self.tex_format.value), str(self.tex_alpha_format.value),
                           int(self.tex_l1_bytes.value), int(self.tex_l1_line_bytes.value),
                           int(self.tex_l1_ways.value))
        try:
            l1_shape(unit)
        except ValueError as e:
            raise PresetError(str(e)) from None
        if unit.l1_line > line_bytes:
            raise PresetError(f"texture L1 line of {unit.l1_line} B is longer than the memory "
                              f"system's {line_bytes} B line")
        return unit


def _formats(opaque: str, alpha: str, source: str) -> dict[str, Param]:
    return {"tex_format": Param(opaque, source, "assumed"),
            "tex_alpha_format": Param(alpha, source, "assumed")}


def _l1(size: int, size_src: str, line: int, line_src: str, ways: int, ways_src: str,
        labels=("spec", "spec", "spec")) -> dict[str, Param]:
    return {"tex_l1_bytes": Param(size, size_src, labels[0]),
            "tex_l1_line_bytes": Param(line, line_src, labels[1]),
            "tex_l1_ways": Param(ways, ways_src, labels[2])}


_AMD_FORMATS = _formats("bc1", "bc7", BC_TMU)
_GCN = _l1(16384, GCN_L1, 64, GCN_L1, 4, GCN_L1)
_RDNA12 = _l1(16384, RDNA_L0_SIZE, 128, RDNA_LINE, 4, NO_WAYS, ("spec", "derived", "assumed"))
_RDNA3_L0 = f"RDNA 3 L0: 32 KB per CU, 32-way ({B} l.145, seed L1544; {A} l.246)"
_RDNA3 = _l1(32768, _RDNA3_L0, 128, RDNA_LINE, 32, _RDNA3_L0, ("spec", "derived", "spec"))
_APPLE = {**_formats("astc-4x4", "astc-4x4", APPLE_ASTC),
          **_l1(16384, APPLE_L1, 128, APPLE_L1, 4, APPLE_L1, ("assumed",) * 3)}
_MOBILE_L1 = _l1(16384, MOBILE_L1, 64, MOBILE_L1, 4, MOBILE_L1, ("assumed",) * 3)

PARAMS: dict[str, TextureParams] = {name: TextureParams(**table) for name, table in {
    "imr-baseline": {**_AMD_FORMATS, **_l1(16384, "an RDNA 1-class L0 (its description): " + RDNA_L0_SIZE,
                                           128, RDNA_LINE, 4, NO_WAYS, ("derived", "derived", "assumed"))},
    "amd-gcn": {**_AMD_FORMATS, **_GCN},
    "amd-vega": {**_AMD_FORMATS, **_GCN},
    "amd-rdna1": {**_AMD_FORMATS, **_RDNA12},
    "amd-rdna2": {**_AMD_FORMATS, **_RDNA12},
    "amd-rdna3": {**_AMD_FORMATS, **_RDNA3},
    "amd-rdna4": {**_AMD_FORMATS, **_l1(32768, "RDNA 4's L0 is not in the notes (seed L1868 names the levels "
                                               "only); RDNA 3's 32 KB assumed", 128, RDNA_LINE, 32,
                                        "RDNA 3's 32 ways assumed", ("assumed", "derived", "assumed"))},
    "apple-a11": _APPLE,
    "apple-m3": _APPLE,
    "apple-m5": _APPLE,
    "arm-mali": {**_formats("astc-4x4", "astc-4x4", MALI_ASTC), **_MOBILE_L1},
    "qcom-adreno": {**_formats("etc2-rgb", "etc2-rgba", ADRENO_ETC2), **_MOBILE_L1},
}.items()}
