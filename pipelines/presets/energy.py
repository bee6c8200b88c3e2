"""Energy per operation and per byte per preset (issue 25): the record `EnergyParams` and
`PARAMS[preset name]`, each field a Param(value, source, label) in picojoules. The energy model
(pipelines.cost.energy) multiplies a pass's counts by these; nothing below pipelines/ reads them.

The sources: DRAM energy per bit by memory type (the interface and core together, as published
for whole devices); on-chip SRAM and ALU energy from Horowitz, "Computing's energy problem",
ISSCC 2014 (45 nm: 8 KB SRAM 10 pJ, 32 KB 20 pJ, 1 MB 100 pJ per 64-bit access; FP32 add 0.9 pJ,
multiply 3.7 pJ). A 45 nm figure on a 5-7 nm part overstates the on-chip share; every on-chip
figure is labelled `assumed` for that reason, and the DRAM figures are labelled `assumed` because
they are published device averages, not this part's measurement. Fixed-function energies have no
public source at all: they are expressed as the FP32 operations the unit's datapath performs x
the FMA energy, and labelled `assumed`.
"""
from __future__ import annotations

from dataclasses import dataclass

from pipelines.presets.params import Param, Record

HOROWITZ = "Horowitz, ISSCC 2014 'Computing's energy problem', 45 nm"
BITS = 8


@dataclass(frozen=True)
class EnergyParams(Record):
    """pJ per byte at each memory level, per ALU op, per fixed-function operation."""
    dram_type: Param
    dram_pj_per_byte: Param
    llc_pj_per_byte: Param            # Infinity Cache / SLC-class large SRAM (+ fabric)
    l2_pj_per_byte: Param             # MB-class SRAM
    sram_pj_per_byte: Param           # KB-class SRAM: ROP caches, tile memory, parameter cache, texture L0
    alu_pj_per_op: Param              # one FP32 FMA
    prim_pj: Param                    # one primitive assembled, culled or set up (fixed function)
    raster_pj_per_fragment: Param     # one fragment scan-converted (edge tests, coverage, interpolation setup)
    rop_pj_per_sample: Param          # one depth test + colour write / blend of a sample
    rt_box_pj: Param                  # one ray-box test
    rt_tri_pj: Param                  # one ray-triangle test


FMA_PJ = 0.9 + 3.7                   # FP32 add + multiply, Horowitz 45 nm
DRAM = {   # type: (pJ per bit, source)
    "GDDR5": (14.0, "GDDR5 ~14 pJ/bit (O'Connor et al., 'Fine-Grained DRAM', MICRO 2017, its comparison of "
                    "GPU DRAMs; figure as commonly cited, not checked against the paper's table here)"),
    "GDDR6": (7.5, "GDDR6 ~7.5 pJ/bit (the figure commonly cited from vendor material, between GDDR5's ~14 "
                   "and HBM2's ~3.9, O'Connor et al. MICRO 2017; not checked against a datasheet here)"),
    "HBM2": (3.9, "HBM2 ~3.9 pJ/bit (O'Connor et al., 'Fine-Grained DRAM', MICRO 2017; as commonly "
                  "cited, not checked against the paper's table here)"),
    "LPDDR4X": (5.0, "LPDDR4X ~5 pJ/bit (a commonly cited mobile DRAM figure; no datasheet here)"),
    "LPDDR5": (4.0, "LPDDR5 ~4 pJ/bit (commonly cited; JEDEC LPDDR5 lowers I/O voltage to 0.5 V from "
                    "LPDDR4X's 0.6 V; no datasheet here)"),
    "LPDDR5X": (3.5, "LPDDR5X ~3.5 pJ/bit (commonly cited; no datasheet here)"),
}


def _record(dram: str, llc: bool) -> EnergyParams:
    pj_bit, source = DRAM[dram]
    return EnergyParams(
        dram_type=Param(dram, "the part's memory type (its preset's DRAM bandwidth source)", "spec"),
        dram_pj_per_byte=Param(pj_bit * BITS, f"{source} x 8 bits", "assumed"),
        llc_pj_per_byte=Param(2 * 100 / 8, f"twice the 1 MB SRAM's 12.5 pJ/B ({HOROWITZ}: 100 pJ per 64-bit "
                                           f"access) for a {'memory-side cache across the fabric' if llc else 'system cache across the SoC fabric'}",
                              "assumed"),
        l2_pj_per_byte=Param(100 / 8, f"1 MB SRAM, 100 pJ per 64-bit access ({HOROWITZ}) / 8 B", "assumed"),
        sram_pj_per_byte=Param(20 / 8, f"32 KB SRAM, 20 pJ per 64-bit access ({HOROWITZ}) / 8 B", "assumed"),
        alu_pj_per_op=Param(FMA_PJ, f"FP32 add 0.9 + multiply 3.7 pJ ({HOROWITZ}), not scaled to the part's node",
                            "assumed"),
        prim_pj=Param(30 * FMA_PJ, "no public figure: ~30 FP32 ops per primitive (3 edge equations, "
                                   "facing determinant, bounding box) x the FMA energy", "assumed"),
        raster_pj_per_fragment=Param(4 * FMA_PJ, "no public figure: ~4 ops per fragment (3 edge values "
                                                  "stepped, depth interpolated) x the FMA energy", "assumed"),
        rop_pj_per_sample=Param(4 * FMA_PJ, "no public figure: ~4 ops per sample (depth compare, 3-4 "
                                             "channel blend or write) x the FMA energy", "assumed"),
        rt_box_pj=Param(12 * FMA_PJ, "no public figure: 6 slab FMAs + 6 min/max per ray-box test x the "
                                      "FMA energy", "assumed"),
        rt_tri_pj=Param(30 * FMA_PJ, "no public figure: ~30 ops per watertight ray-triangle test x the FMA "
                                      "energy", "assumed"),
    )


PARAMS: dict[str, EnergyParams] = {
    "imr-baseline": _record("GDDR6", False),
    "amd-gcn": _record("GDDR5", False),
    "amd-vega": _record("HBM2", False),
    "amd-rdna1": _record("GDDR6", False),
    "amd-rdna2": _record("GDDR6", True),
    "amd-rdna3": _record("GDDR6", True),
    "amd-rdna4": _record("GDDR6", True),
    "apple-a11": _record("LPDDR4X", False),
    "apple-m3": _record("LPDDR5", False),
    "apple-m5": _record("LPDDR5X", False),
    "arm-mali": _record("LPDDR5", False),
    "qcom-adreno": _record("LPDDR5", False),
}
