"""Energy per pass and per frame: counts x picojoules, split by where the energy went.

Consumes a pass's counters (renderer.counters.Counters) and a preset's energies
(pipelines.presets.energy.EnergyParams) and line size; produces an `EnergyTerm` per (source,
item) with its count and pJ each, summed into a `PassEnergy` and a `FrameEnergy` (mJ, split by
DRAM / caches / ALU / fixed function; watts at a frame rate). Dynamic energy only: static
(leakage) power and the DRAM's background and refresh power are not modelled.

    dram      mem.dram.* bytes x dram_pj_per_byte
    caches    per cache level, (hits + misses) x line bytes x that level's pJ/B: the ROP colour
              and depth caches and the tiler's parameter cache at sram_pj_per_byte, L2 (a tiler's
              SLC) at l2_pj_per_byte, the Infinity Cache at llc_pj_per_byte; the texture L0/L1 as
              raster.texture_l1_lookups x its line at sram_pj_per_byte; a tiler's tile memory as
              (raster.samples_covered x depth bytes + raster.written x colour bytes) at
              sram_pj_per_byte (a depth test reads a sample, a written fragment writes its colour;
              the counters hold no tile-memory byte count of their own)
    alu       the time model's ALU ops (pipelines.cost.timing: vertex, cull and fragment lanes) x
              alu_pj_per_op
    fixed     geom.prims_in x prim_pj, raster.fragments x raster_pj_per_fragment,
              raster.samples_covered x rop_pj_per_sample, (rt.tests.box + rt.tlas.tests.box) x rt_box_pj,
              rt.tests.tri x rt_tri_pj
"""
from __future__ import annotations

from dataclasses import dataclass

from renderer.counters import Counters
from renderer.formats import FORMATS

from pipelines.cost.timing import ANYHIT_OPS, FLAG_FILTER_OPS, FRAGMENT_OPS, INSTANCE_OPS, alu_ops

SOURCES = ("dram", "caches", "alu", "fixed")
PJ = 1e-12


@dataclass(frozen=True)
class EnergyTerm:
    source: str          # one of SOURCES
    item: str            # what was counted, e.g. "l2", "prims_in"
    count: float         # bytes or operations
    pj_each: float
    inputs: str

    @property
    def joules(self) -> float:
        return self.count * self.pj_each * PJ


@dataclass(frozen=True)
class PassEnergy:
    name: str
    terms: tuple[EnergyTerm, ...]

    @property
    def joules(self) -> float:
        return sum(t.joules for t in self.terms)

    def by_source(self) -> dict[str, float]:
        out = dict.fromkeys(SOURCES, 0.0)
        for t in self.terms:
            out[t.source] += t.joules
        return out


@dataclass(frozen=True)
class FrameEnergy:
    passes: tuple[PassEnergy, ...]

    @property
    def joules(self) -> float:
        return sum(p.joules for p in self.passes)

    @property
    def mj(self) -> float:
        return self.joules * 1e3

    def by_source(self) -> dict[str, float]:
        """Joules per source (DRAM, caches, ALU, fixed function), over the passes."""
        out = dict.fromkeys(SOURCES, 0.0)
        for p in self.passes:
            for k, v in p.by_source().items():
                out[k] += v
        return out

    def watts(self, fps: float) -> float:
        """Average power at `fps` frames a second (dynamic energy only)."""
        return self.joules * fps


def energy_terms(c: Counters, preset) -> list[EnergyTerm]:
    """The pass's energy terms (module docstring); terms with no count are left out."""
    if preset.energy is None:
        raise ValueError(f"preset {preset.name!r} has no energies (pipelines.presets.energy)")
    e = preset.energy
    line = int(preset.memory.cache_line_bytes.value)
    out: list[EnergyTerm] = []

    def add(source, item, count, param, inputs):
        if count:
            out.append(EnergyTerm(source, item, float(count), float(param.value), inputs))

    add("dram", "dram", c.dram_bytes(), e.dram_pj_per_byte, f"mem.dram.* B x dram_pj_per_byte ({e.dram_type.value})")
    levels = {"rop_color": e.sram_pj_per_byte, "rop_depth": e.sram_pj_per_byte, "param": e.sram_pj_per_byte,
              "rt_l0": e.sram_pj_per_byte, "rt_l1": e.sram_pj_per_byte,     # the ray unit's (raytrace)
              "l2": e.l2_pj_per_byte, "llc": e.llc_pj_per_byte}
    for cache, pj in levels.items():
        n = c[f"mem.cache.{cache}.hits"] + c[f"mem.cache.{cache}.misses"]
        add("caches", cache, n * line, pj, f"(mem.cache.{cache}.hits + misses) x {line} B")
    tex_line = int(preset.texture.tex_l1_line_bytes.value)
    add("caches", "texture_l1", c["raster.texture_l1_lookups"] * tex_line, e.sram_pj_per_byte,
        f"raster.texture_l1_lookups x {tex_line} B")
    if preset.architecture == "tbdr":
        tile = (c["raster.samples_covered"] * FORMATS["d32f"].bytes_per_sample
                + c["raster.written"] * FORMATS["rgba8"].bytes_per_sample)
        add("caches", "tile_memory", tile, e.sram_pj_per_byte,
            "raster.samples_covered x 4 B depth + raster.written x 4 B colour")
    # the traversal stack's on-chip entries: an SRAM (LDS, or the ray unit's own); held in
    # registers they cost what the ALU's register reads do, counted there
    if preset.rt is not None and preset.rt.rt_stack_location.value != "registers":
        add("caches", "rt_stack", c["rt.stack.onchip_bytes"], e.sram_pj_per_byte,
            f"rt.stack.onchip_bytes ({preset.rt.rt_stack_location.value})")
    ops, _ = alu_ops(c, preset)
    add("alu", "alu", ops, e.alu_pj_per_op, f"vertex + cull + fragment lanes x {FRAGMENT_OPS} ops "
        f"+ any-hits x {ANYHIT_OPS} + hits filtered in the shader x {FLAG_FILTER_OPS} + instance "
        f"transforms in the shader x {INSTANCE_OPS}")
    add("fixed", "prims_in", c["geom.prims_in"], e.prim_pj, "geom.prims_in")
    add("fixed", "raster", c["raster.fragments"], e.raster_pj_per_fragment, "raster.fragments")
    add("fixed", "rop", c["raster.samples_covered"], e.rop_pj_per_sample, "raster.samples_covered")
    add("fixed", "rt_box", c["rt.tests.box"] + c["rt.tlas.tests.box"], e.rt_box_pj,
        "rt.tests.box + rt.tlas.tests.box" if c["rt.tlas.tests.box"] else "rt.tests.box")
    add("fixed", "rt_tri", c["rt.tests.tri"], e.rt_tri_pj, "rt.tests.tri")
    return out


def frame_energy(frame, preset) -> FrameEnergy:
    """The frame's energy: each pass of `frame` (pipelines.frame.FrameResult), in order."""
    return FrameEnergy(tuple(PassEnergy(p.name, tuple(energy_terms(p.counters, preset)))
                             for p in frame.passes))
