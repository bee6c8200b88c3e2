"""Per-unit rates per preset (issue 25): the record `RatesParams` and `PARAMS[preset name]`, each
field a Param(value, source, label). The time model (pipelines.cost.timing) divides a pass's
counted work by these rates; nothing below pipelines/ reads them.

Every rate is the whole chip's, per clock of `clock_ghz` (a typical game clock, not the boost
peak), except the two bandwidths that run in clock domains of their own: `llc_gbps` (the Infinity
Cache's, seed 000 L1234) and DRAM (`preset.memory.dram_gbps`, not repeated here). The ray
accelerators' box and triangle tests per clock are `preset.rt.rt_box_tests_per_clk` /
`rt_tri_tests_per_clk` (pipelines.presets.rt), per unit; `rt_units` says how many units.

Where no source gives a figure (Apple's, Arm's and Qualcomm's fixed-function rates are not
published), the figure is labelled `assumed` and its source says so and why that value.
"""
from __future__ import annotations

from dataclasses import dataclass

from pipelines.presets.params import Param, Record

A = "seed 000, seed-notes/000_partA.md"
B = "seed 000, seed-notes/000_partB.md"
N1 = "seed 001, seed-notes/001_003.md"


@dataclass(frozen=True)
class RatesParams(Record):
    """The rates of the units a frame uses (whole chip, per clock unless the name says)."""
    clock_ghz: Param              # typical game clock of the shader core and fixed function
    prims_per_clk: Param          # fixed-function primitive assembly, cull and setup (legacy path)
    ngg_prims_per_clk: Param      # primitives in per clock through the culling shader (NGG / mesh)
    raster_px_per_clk: Param      # scan conversion: fragments (pixels with coverage) per clock
    rop_color_px_per_clk: Param   # colour writes / blends (ROPs), pixels per clock
    rop_z_samples_per_clk: Param  # depth/stencil tests, samples per clock
    tex_bytes_per_clk: Param      # texture L0/L1 delivery (all CUs or cores), bytes per clock
    tex_bilinear_per_clk: Param   # texture filtering, bilinear samples per clock (reported: not timed)
    alu_lanes: Param              # FP32 FMA lanes per clock of one CU / core
    alu_units: Param              # CUs / cores
    rt_units: Param               # ray accelerators (one per CU on RDNA 2+)
    l2_bytes_per_clk: Param       # L2 (a tiler's SLC) bandwidth, bytes per clock
    llc_gbps: Param | None = None  # last-level cache (Infinity Cache) bandwidth, GB/s


def _amd(*, clock, clock_src, clock_label, prims, prims_src, prims_label, ngg, raster, raster_src,
         raster_label, rops, rops_src, rbs, cus, cus_src, cus_label, lanes_src, tex_per_cu, tex_src,
         rt_src, rt_label, channels, llc=None) -> dict[str, Param]:
    return {
        "clock_ghz": Param(clock, clock_src, clock_label),
        "prims_per_clk": Param(prims, prims_src, prims_label),
        "ngg_prims_per_clk": ngg,
        "raster_px_per_clk": Param(raster, raster_src, raster_label),
        "rop_color_px_per_clk": Param(rops, rops_src, "spec"),
        "rop_z_samples_per_clk": Param(16 * rbs, f"16 Z/stencil samples per clock per RB ({A} l.80, "
                                                 f"seed L1283-1285) x {rbs} RBs", "derived"),
        "tex_bytes_per_clk": Param(tex_per_cu * cus, tex_src + f" x {cus} CUs", "derived"),
        "tex_bilinear_per_clk": Param(4 * cus, f"4 texture filter units per CU x {cus} CUs (AMD GCN/RDNA "
                                               "whitepapers; not in the seeds); not timed: the model times "
                                               "the L1's bytes (raster.texture_l1_lookups)", "assumed"),
        "alu_lanes": Param(64, lanes_src, "derived"),
        "alu_units": Param(cus, cus_src, cus_label),
        "rt_units": Param(cus, rt_src, rt_label),
        "l2_bytes_per_clk": Param(64 * channels, f"64 B/clk per L2 channel (CDNA 1's L2 slices, {B} l.203, "
                                                 f"seed L2276; RDNA's per-channel width not in the seeds) x "
                                                 f"{channels} channels", "assumed"),
        **({} if llc is None else {"llc_gbps": llc}),
    }


GCN_LANES = "4 SIMD16 per CU = 64 FP32 FMA lanes per clock (GCN; seed L484 context, AMD GCN whitepaper)"
RDNA_LANES = (f"2 SIMD32 per CU = 64 FP32 FMA lanes per clock ({A} l.281, seed L1139: 64 FP32 ops "
              "per cycle per CU on RDNA 2)")
RDNA3_LANES = (f"2 SIMD32 per CU = 64 FMA per clock single-issue; VOPD dual issue doubles the peak to 128 "
               f"({B} l.192, seed L1323) but packs only 10-30% of the time ({A} l.284, seed L1342): the "
               "single-issue rate taken")
NO_RT = ("no ray-tracing hardware: the traced passes borrow RDNA 3's tests per clock "
         "(pipelines.presets.rt.borrowed) and one unit per CU is assumed, so they get a time at all")
RA_PER_CU = f"one ray accelerator per CU ({B} l.80 table, seed L1313)"
NGG_17 = Param(17, f"AMD's claimed peak of 17+ primitives per clock through the primitive shader, against "
                   f"4 fixed-function ({A} l.116, seed L745); RDNA's NGG taken at that claim", "assumed")
NGG_NONE = Param(0, "no NGG path on this part: every primitive takes the fixed-function rate", "spec")
TEX_RDNA = (f"RDNA L0 128 B/clk per CU ({A} l.235; the seed, L942-946, says RDNA 1 doubled GCN's L1 "
            "load bandwidth; the B/clk figures are the notes', from AMD's RDNA whitepaper)")
TEX_GCN = f"GCN L1 64 B/clk per CU ({A} l.235, from AMD's RDNA whitepaper; seed L942-946: RDNA doubled it)"

_TABLES: dict[str, dict[str, Param]] = {
    "amd-gcn": _amd(
        clock=0.925, clock_src="HD 7970 (Tahiti XT) engine clock 925 MHz (AMD product page); not in the seeds",
        clock_label="spec",
        prims=2, prims_src=f"Tahiti: 2 shader engines, one primitive per clock each ({A} l.70, seed L527, L579)",
        prims_label="derived", ngg=NGG_NONE,
        raster=32, raster_src="2 shader engines x 16 px/clk (the pre-RB+ rasterizer rate, seed L1281) = 32",
        raster_label="derived",
        rops=32, rops_src="Tahiti 32 ROPs (AMD HD 7970 spec); not in the seeds", rbs=8,
        cus=32, cus_src=f"Tahiti: 2 SEs x 16 CUs = 32 ({A} l.70, seed L579)", cus_label="derived",
        lanes_src=GCN_LANES, tex_per_cu=64, tex_src=TEX_GCN, rt_src=NO_RT, rt_label="assumed", channels=12),
    "amd-vega": _amd(
        clock=1.5, clock_src="Vega 64 boost ~1.55 GHz, ~1.5 GHz sustained in games (AMD spec 1546 MHz "
                             "boost); not in the seeds", clock_label="assumed",
        prims=4, prims_src=f"Vega: 4 triangles per clock, bound by its 4 shader engines ({A} l.106, seed L745, L996)",
        prims_label="spec", ngg=NGG_NONE,
        raster=64, raster_src="4 shader engines x 16 px/clk (seed L1281's pre-RDNA 2 rate) = 64", raster_label="derived",
        rops=64, rops_src="Vega 10: 64 ROPs in 16 RBs (AMD Vega whitepaper)", rbs=16,
        cus=64, cus_src="Vega 10: 64 CUs (AMD Vega whitepaper); not in the seeds", cus_label="spec",
        lanes_src=GCN_LANES, tex_per_cu=64, tex_src=TEX_GCN, rt_src=NO_RT, rt_label="assumed", channels=16),
    "amd-rdna1": _amd(
        clock=1.8, clock_src=f"RDNA 1 typical clock ~1.8 GHz ({A} l.280, seed L1139, L1309)", clock_label="spec",
        prims=4, prims_src=f"4 primitives per clock before RDNA 3's 6 ({B} l.28, seed L1630)", prims_label="derived",
        ngg=NGG_17,
        raster=32, raster_src=f"16 px/clk per rasterizer on RDNA 1 ({A} l.83, seed L1281) x 2 shader engines; "
                              f"the seed's rate taken per SE, as its notes advise ({A} l.371)", raster_label="derived",
        rops=64, rops_src=f"Navi 10: 64 ROPs ({A} l.79, seed L1285)", rbs=16,
        cus=40, cus_src=f"Navi 10 = 20 WGP = 40 CU ({A} l.125, seed L996)", cus_label="spec",
        lanes_src=RDNA_LANES, tex_per_cu=128, tex_src=TEX_RDNA, rt_src=NO_RT, rt_label="assumed", channels=16),
    "amd-rdna2": _amd(
        clock=2.25, clock_src=f"RDNA 2 typical clock 2.2-2.5 GHz ({A} l.281, seed L1139, L1309): 2.25", clock_label="derived",
        prims=4, prims_src=f"4 primitives per clock before RDNA 3's 6 ({B} l.28, seed L1630)", prims_label="spec",
        ngg=NGG_17,
        raster=128, raster_src=f"32 px/clk per rasterizer ({A} l.83, seed L1281) x 4 shader engines, the rate "
                               f"taken per SE ({A} l.371: chip-wide 32 does not fit 128 ROPs)", raster_label="derived",
        rops=128, rops_src=f"Navi 21: 16 RB+ x 8 = 128 ROPs ({A} l.79, seed L1285)", rbs=16,
        cus=80, cus_src="Navi 21: 80 CUs (AMD RX 6900 XT spec); not in the seeds", cus_label="spec",
        lanes_src=RDNA_LANES, tex_per_cu=128, tex_src=TEX_RDNA, rt_src=RA_PER_CU, rt_label="spec", channels=16,
        llc=Param(1650.0, f"Infinity Cache ~1.5-1.8 TB/s aggregate ({A} l.240, seed L1208, L1246): the middle",
                  "derived")),
    "amd-rdna3": _amd(
        clock=2.5, clock_src=f"front end ~2.5 GHz, shader ~2.3 GHz ({B} l.192, seed L1658); 62.9 TF over 6144 "
                             f"lanes implies ~2.56 GHz ({N1} l.63)", clock_label="derived",
        prims=6, prims_src=f"RDNA 3 rasterizer 4 -> 6 triangles per clock ({B} l.28, seed L1630)", prims_label="spec",
        ngg=NGG_17,
        raster=192, raster_src=f"6 shader engines x 32 px/clk (seed L1281's RDNA 2 rate per SE); the seed's "
                               f"192 pixels per clock ROP output ({B} l.28, seed L1630)", raster_label="derived",
        rops=192, rops_src=f"192 pixels per clock ROP output ({B} l.28, seed L1630)", rbs=24,
        cus=96, cus_src=f"Navi 31: 48 WGP = 96 CU ({B} l.192, seed L1323)", cus_label="spec",
        lanes_src=RDNA3_LANES, tex_per_cu=128, tex_src=TEX_RDNA, rt_src=RA_PER_CU, rt_label="spec", channels=24,
        llc=Param(3500.0, "Navi 31 Infinity Cache peak ~3.5 TB/s (AMD RDNA 3 launch material: 2.7x RDNA 2's "
                          "effective bandwidth); not in the seeds", "assumed")),
    "amd-rdna4": _amd(
        clock=2.4, clock_src="RX 9070 XT game clock 2.4 GHz (AMD product page); not in the seeds", clock_label="spec",
        prims=4, prims_src="Navi 48: 4 shader engines, one primitive each per clock (as RDNA 2); not in the seeds",
        prims_label="assumed", ngg=NGG_17,
        raster=128, raster_src="4 shader engines x 32 px/clk (seed L1281's rate per SE)", raster_label="derived",
        rops=128, rops_src="Navi 48: 128 ROPs (AMD RX 9070 XT spec)", rbs=16,
        cus=64, cus_src="Navi 48: 64 CUs (AMD RX 9070 XT spec); not in the seeds", cus_label="spec",
        lanes_src=RDNA3_LANES, tex_per_cu=128, tex_src=TEX_RDNA, rt_src=RA_PER_CU, rt_label="spec", channels=16,
        llc=Param(2000.0, "RDNA 4 64 MB Infinity Cache bandwidth not published; ~2 TB/s assumed (between "
                          "RDNA 2's ~1.65 and RDNA 3's ~3.5 TB/s)", "assumed")),
}
_TABLES["imr-baseline"] = {**_TABLES["amd-rdna1"],
                           "ngg_prims_per_clk": Param(0, "the generic baseline has no NGG path", "spec")}

APPLE_UNPUBLISHED = "Apple publishes no fixed-function rates"


def _tiler(*, clock, clock_src, clock_label, cores, cores_src, cores_label, lanes, lanes_src, lanes_label,
           prims, px_per_core, tex_per_core, l2_per_clk, vendor) -> dict[str, Param]:
    return {
        "clock_ghz": Param(clock, clock_src, clock_label),
        "prims_per_clk": Param(prims, f"{vendor}: a tiler's primitive rate; {prims} per clock assumed", "assumed"),
        "ngg_prims_per_clk": Param(0, "no NGG-style culling shader: mesh draws take the fixed-function rate",
                                   "assumed"),
        "raster_px_per_clk": Param(px_per_core * cores, f"{vendor}: {px_per_core} px/clk per core assumed "
                                                        f"x {cores} cores", "assumed"),
        "rop_color_px_per_clk": Param(px_per_core * cores, f"{vendor}: as the raster rate, {px_per_core} px/clk "
                                                           f"per core x {cores} cores", "assumed"),
        "rop_z_samples_per_clk": Param(4 * px_per_core * cores, f"{vendor}: 4 depth samples per pixel per clock "
                                                                f"(the AMD RB ratio) assumed", "assumed"),
        "tex_bytes_per_clk": Param(tex_per_core * cores, f"{vendor}: {tex_per_core} B/clk texture L1 per core "
                                                         f"assumed x {cores} cores", "assumed"),
        "tex_bilinear_per_clk": Param(4 * cores, f"{vendor}: 4 bilinear samples per clock per core assumed; not "
                                                 "timed: the model times the L1's bytes", "assumed"),
        "alu_lanes": Param(lanes, lanes_src, lanes_label),
        "alu_units": Param(cores, cores_src, cores_label),
        "rt_units": Param(cores, f"{vendor}: one RT unit per core assumed (absent units borrow one so the "
                                 "traced passes get a time)", "assumed"),
        "l2_bytes_per_clk": Param(l2_per_clk, f"{vendor}: L2 (or system-level cache) bandwidth not published; "
                                              f"{l2_per_clk} B/clk assumed", "assumed"),
    }


_TABLES["apple-m3"] = _tiler(
    clock=1.4, clock_src="M3 Max GPU peak ~1.4 GHz (seed 004 L1066); taken for M3", clock_label="assumed",
    cores=10, cores_src="M3: 10-core GPU (Apple M3 spec); not in the seeds", cores_label="spec",
    lanes=128, lanes_src="128 FP32 FMA per core per clock, measured on a 10-core M4 Pro-class part "
                         "(seed 004 L608); taken for M3", lanes_label="measured",
    prims=4, px_per_core=8, tex_per_core=64, l2_per_clk=256, vendor=APPLE_UNPUBLISHED)
_TABLES["apple-m3"]["llc_gbps"] = Param(400.0, "SLC bandwidth not published; ~4x the 102 GB/s DRAM assumed "
                                              "(an on-die SRAM feeding the GPU and the SoC)", "assumed")
_TABLES["apple-m5"] = {**_TABLES["apple-m3"],
                       "llc_gbps": Param(600.0, "SLC bandwidth not published; ~4x the 153 GB/s DRAM assumed",
                                         "assumed"),
                       "clock_ghz": Param(1.62, "GPU clock 1.62 GHz, measured on the 10-core part (seed 004 "
                                                "L588, L1325)", "measured"),
                       "alu_lanes": Param(128, "128 FP32 FMA per core per clock: 3.9 TFLOPS measured / 10 "
                                               "cores / 1.62 GHz (seed 004 L608)", "measured"),
                       "alu_units": Param(10, "10-core part (seed 004 L588, L1325)", "measured")}
_TABLES["apple-a11"] = _tiler(
    clock=1.066, clock_src="A11 GPU clock ~1.07 GHz (third-party die analyses); not in the seeds",
    clock_label="assumed", cores=3, cores_src="A11: three-core GPU (Apple A11 spec)", cores_label="spec",
    lanes=64, lanes_src="A11 lanes per core not published; 64 FP32 FMA per clock assumed (half of M-class)",
    lanes_label="assumed", prims=2, px_per_core=8, tex_per_core=64, l2_per_clk=128, vendor=APPLE_UNPUBLISHED)
_TABLES["arm-mali"] = _tiler(
    clock=0.85, clock_src="Mali-G710 MC10 at 850 MHz (Dimensity 9000-class phones); not in the seeds",
    clock_label="assumed", cores=10, cores_src="Mali-G710 MC10: 10 cores (a common configuration)",
    cores_label="assumed", lanes=64, lanes_src="Valhall core: 2 execution engines x 32 FP32 FMA lanes "
                                               "assumed (Arm publishes the structure, not a count here)",
    lanes_label="assumed", prims=1, px_per_core=2, tex_per_core=64, l2_per_clk=128,
    vendor="Arm publishes no chip-level fixed-function rates here")
_TABLES["qcom-adreno"] = _tiler(
    clock=0.587, clock_src="Adreno 650 at 587 MHz (Snapdragon 865); not in the seeds", clock_label="assumed",
    cores=2, cores_src="Adreno 650: 2 shader processors (third-party analyses)", cores_label="assumed",
    lanes=256, lanes_src="512 FP32 ALU lanes over 2 SPs (third-party analyses of Adreno 650)",
    lanes_label="assumed", prims=2, px_per_core=12, tex_per_core=128, l2_per_clk=128,
    vendor="Qualcomm publishes no fixed-function rates")

PARAMS: dict[str, RatesParams] = {name: RatesParams.of(t) for name, t in _TABLES.items()}
