"""Time per pass and per frame: a bottleneck (roofline) model, not a cycle simulation.

Consumes a pass's counters (renderer.counters.Counters, as pipelines.frame.PassResult holds them)
and a preset's rates (pipelines.presets.rates.RatesParams, the RT record's tests per clock and the
memory record's line size and DRAM bandwidth); produces a `PassTime` per pass (each unit's time,
the pass's time, the limiter) and a `FrameTime` (ms, fps). Every unit's time is

    work counted in the pass / (the unit's rate per clock x clock)      or  bytes / bandwidth

and the pass takes as long as its slowest unit: the units are taken to overlap perfectly within
a pass, which is the roofline's assumption and a lower bound on the real time (latency, bubbles
between dependent stages and contention are not modelled). The passes run one after another;
the frame's time is their sum. `UnitTime.inputs` keeps each operand, so `tilesim report
--explain` can print the arithmetic and a reader can redo it by hand.

The units and what they are timed from:

    prim_in    geom.prims_in at prims_per_clk (fixed-function cull) or, where every draw took the
               NGG or mesh path, at ngg_prims_per_clk (culling in the shader, its ALU cost charged
               to `alu` through geom.cull_alu_ops); a frame with any legacy draw is charged the
               fixed rate for all its primitives (the counters do not split primitives by path)
    setup      geom.setup_triangles (primitives that reach the rasterizer) at prims_per_clk
    raster     raster.fragments (pixels with coverage, per triangle) at raster_px_per_clk
    rop_z      raster.samples_covered (every covered sample is depth-tested) at rop_z_samples_per_clk
    rop_color  raster.written (fragments that wrote or blended colour) at rop_color_px_per_clk; a
               fragment counts once whatever its samples (colour compression keeps MSAA writes near
               one per pixel; not modelled further)
    alu        geom.vs_alu_ops + geom.cull_alu_ops + (raster.shaded + raster.helper_lanes) x
               FRAGMENT_OPS + rt.anyhit x ANYHIT_OPS + rt.hits.culled x FLAG_FILTER_OPS where
               the preset filters ray flags in the shader (rt_ray_flags_in_hw false) + rt.instances
               x INSTANCE_OPS where it transforms rays at instances there (rt_instance_xform_in_hw
               false), at
               alu_lanes x alu_units FMA per clock (alu_ops); compute passes' ALU work and the
               ray shaders' own traversal loop are not counted
    texture    raster.texture_l1_lookups x the texture L1's line at tex_bytes_per_clk (what the L1
               delivers to the filters; the filter rate is not timed)
    rt         rt.isect_clocks (the traversal's own intersection-unit clocks at the preset's tests
               per clock, renderer.bvh.traverse) over rt_units
    l2         (mem.cache.l2.hits + misses) x line at l2_bytes_per_clk
    llc        (mem.cache.llc.hits + misses) x line at llc_gbps
    dram       mem.dram.* bytes at preset.memory.dram_gbps

Caches in front of L2 (ROP colour/depth caches, the tiler's parameter cache) and tile memory are
parts of the units that use them, not timed on their own.

Overlap between units of different phases:
- A tiler (TBDR) runs a pass's geometry and tiling (prim_in, setup, vertex ALU, parameter-buffer
  writes) before its tiles' raster. The model overlaps them fully (max), because a tiler overlaps
  one pass's geometry with the previous pass's (or frame's) fragment work in steady state (Apple's
  vertex and fragment queues run concurrently); a single pass with nothing before it would take
  up to geometry + raster, which the model does not charge.
- DSBR (AMD's binning rasterizer) holds each batch until it is binned before its pixels go out:
  the first batch's geometry cannot overlap any raster. The model charges that fill once per
  pass, as `binning_fill` = (the pass's slowest geometry unit's time) / dsbr.batches_binned, on
  top of the slowest unit's time; it is named in the units but is never the limiter.
"""
from __future__ import annotations

from dataclasses import dataclass

from renderer.counters import Counters

# Fragment shader ALU ops per lane, counted as renderer.frontend counts the vertex shader (one op
# per multiply-add) from renderer.shade_kernels: attribute interpolation of the normal and uv
# (5 attributes x 2) = 10; lambert: normal length 3 + rsqrt 1 + scale 3, N.L 3 + max 1, ambient +
# diffuse per channel 3 x 2 = 17; base colour x texel 4. Helper lanes run the same code.
FRAGMENT_OPS = 10 + 17 + 4
# A ray's any-hit program (renderer.bvh.traverse_kernels.any_hit, less the barycentrics, which
# the intersection unit hands the shader as DXR's intrinsic attributes): b0 = 1 - b1 - b2 2, uv
# at the hit 2 x 3, base alpha x texel alpha 1, the cutoff compare 1. The texel fetch is the
# texture path's (its bytes go through the ray unit's caches), not ALU.
ANYHIT_OPS = 2 + 6 + 1 + 1
# A candidate hit returned to the shader where the ray flags are filtered there (RDNA 2; RDNA 3
# on filters them in the intersection unit and writes nothing back, seed-notes 000_partA l.205):
# the facing from the determinant's sign and the draw's winding 2, the flag test 1.
FLAG_FILTER_OPS = 2 + 1
# A two-level walk's instance transform where the shader does it (rt_instance_xform_in_hw false;
# radv_build_ray_traversal: the world-to-object 3x4 matrix times the origin, 9 multiply-adds and
# 3 adds, times the direction, 9, and the direction's 3 reciprocals)
INSTANCE_OPS = 12 + 9 + 3
GEOMETRY_UNITS = ("prim_in", "setup")


@dataclass(frozen=True)
class UnitTime:
    """One unit's time in a pass: work / rate, with the operands kept for --explain."""
    unit: str
    seconds: float
    work: float              # what the unit did (primitives, fragments, ops, bytes, clocks)
    work_unit: str           # its unit of measure: "prims", "fragments", "ops", "B", ...
    per_second: float        # the unit's rate in work_unit per second
    inputs: str              # the counters and rates it came from, in words


@dataclass(frozen=True)
class PassTime:
    name: str
    kind: str
    units: tuple[UnitTime, ...]
    seconds: float
    limiter: str             # the slowest unit ("idle" for a pass with no counted work)

    def unit(self, name: str) -> UnitTime | None:
        return next((u for u in self.units if u.unit == name), None)


@dataclass(frozen=True)
class FrameTime:
    passes: tuple[PassTime, ...]
    seconds: float

    @property
    def ms(self) -> float:
        return self.seconds * 1e3

    @property
    def fps(self) -> float:
        return 1.0 / self.seconds if self.seconds > 0 else float("inf")

    def unit_seconds(self) -> dict[str, float]:
        """Per unit, its time summed over the passes (the stacked bar's segments); the frame's
        time is not their sum: each pass takes its slowest unit's."""
        out: dict[str, float] = {}
        for p in self.passes:
            for u in p.units:
                out[u.unit] = out.get(u.unit, 0.0) + u.seconds
        return out

    def limiters(self) -> list[tuple[str, str]]:
        return [(p.name, p.limiter) for p in self.passes]


def _unit(name, work, work_unit, per_clk, clock_hz, inputs, rate_words) -> UnitTime:
    per_second = per_clk * clock_hz
    return UnitTime(name, work / per_second, float(work), work_unit, per_second,
                    f"{inputs} / ({rate_words} x {clock_hz / 1e9:g} GHz)")


def _cache_bytes(c: Counters, cache: str, line: int) -> int:
    return (c[f"mem.cache.{cache}.hits"] + c[f"mem.cache.{cache}.misses"]) * line


def alu_ops(c: Counters, preset) -> tuple[int, str]:
    """The ALU ops of a pass's counters and how they were made, in words (alu above)."""
    frag_lanes = c["raster.shaded"] + c["raster.helper_lanes"]
    filtered = 0 if preset.rt is None or preset.rt.rt_ray_flags_in_hw.value else c["rt.hits.culled"]
    moved = 0 if preset.rt is None or preset.rt.rt_instance_xform_in_hw.value else c["rt.instances"]
    ops = (c["geom.vs_alu_ops"] + c["geom.cull_alu_ops"] + frag_lanes * FRAGMENT_OPS
           + c["rt.anyhit"] * ANYHIT_OPS + filtered * FLAG_FILTER_OPS + moved * INSTANCE_OPS)
    words = (f"geom.vs_alu_ops {c['geom.vs_alu_ops']} + geom.cull_alu_ops {c['geom.cull_alu_ops']} + "
             f"(raster.shaded {c['raster.shaded']} + raster.helper_lanes {c['raster.helper_lanes']}) x "
             f"{FRAGMENT_OPS} ops")
    if c["rt.anyhit"]:
        words += f" + rt.anyhit {c['rt.anyhit']} x {ANYHIT_OPS} ops"
    if filtered:
        words += f" + rt.hits.culled {filtered} x {FLAG_FILTER_OPS} ops (ray flags in the shader)"
    if moved:
        words += f" + rt.instances {moved} x {INSTANCE_OPS} ops (instance transforms in the shader)"
    return ops, words


def unit_times(c: Counters, preset) -> list[UnitTime]:
    """Each unit's time for one pass's counters `c` (module docstring); units with no work are
    left out."""
    if preset.rates is None:
        raise ValueError(f"preset {preset.name!r} has no rates (pipelines.presets.rates)")
    r = preset.rates
    f = float(r.clock_ghz.value) * 1e9
    line = int(preset.memory.cache_line_bytes.value)
    out: list[UnitTime] = []

    def add(u: UnitTime) -> None:
        if u.work > 0:
            out.append(u)

    ngg_draws = c["geom.draws.ngg"] + c["geom.draws.mesh"]
    ngg = ngg_draws and not c["geom.draws.legacy"] and float(r.ngg_prims_per_clk.value) > 0
    # (unit, the counter it does, its unit of measure, the rate per clock that does it)
    for name, counter, work_unit, rate_name in (
            ("prim_in", "geom.prims_in", "prims", "ngg_prims_per_clk" if ngg else "prims_per_clk"),
            ("setup", "geom.setup_triangles", "prims", "prims_per_clk"),
            ("raster", "raster.fragments", "fragments", "raster_px_per_clk"),
            ("rop_z", "raster.samples_covered", "samples", "rop_z_samples_per_clk"),
            ("rop_color", "raster.written", "fragments", "rop_color_px_per_clk")):
        rate = float(getattr(r, rate_name).value)
        note = " (all draws NGG/mesh)" if rate_name == "ngg_prims_per_clk" else ""
        add(_unit(name, c[counter], work_unit, rate, f, f"{counter} {c[counter]}{note}",
                  f"{rate_name} {rate:g}"))
    lanes = int(r.alu_lanes.value) * int(r.alu_units.value)
    ops, words = alu_ops(c, preset)
    add(_unit("alu", ops, "ops", lanes, f, f"({words})",
              f"{r.alu_lanes.value} lanes x {r.alu_units.value} units"))
    tex_line = int(preset.texture.tex_l1_line_bytes.value)
    tex = c["raster.texture_l1_lookups"] * tex_line
    rate = float(r.tex_bytes_per_clk.value)
    add(_unit("texture", tex, "B", rate, f,
              f"raster.texture_l1_lookups {c['raster.texture_l1_lookups']} x {tex_line} B",
              f"tex_bytes_per_clk {rate:g}"))
    units = int(r.rt_units.value)
    add(_unit("rt", c["rt.isect_clocks"], "clocks", units, f,
              f"rt.isect_clocks {c['rt.isect_clocks']}", f"{units} rt_units"))
    l2 = _cache_bytes(c, "l2", line)
    rate = float(r.l2_bytes_per_clk.value)
    add(_unit("l2", l2, "B", rate, f,
              f"(mem.cache.l2.hits {c['mem.cache.l2.hits']} + misses {c['mem.cache.l2.misses']}) x {line} B",
              f"l2_bytes_per_clk {rate:g}"))
    if r.llc_gbps is not None:
        llc = _cache_bytes(c, "llc", line)
        bw = float(r.llc_gbps.value) * 1e9
        if llc:
            out.append(UnitTime("llc", llc / bw, float(llc), "B", bw,
                                f"(mem.cache.llc.hits {c['mem.cache.llc.hits']} + misses "
                                f"{c['mem.cache.llc.misses']}) x {line} B / llc_gbps {bw / 1e9:g} GB/s"))
    dram = c.dram_bytes()
    bw = float(preset.memory.dram_gbps.value) * 1e9
    if dram:
        out.append(UnitTime("dram", dram / bw, float(dram), "B", bw,
                            f"mem.dram.* {dram} B / dram_gbps {bw / 1e9:g} GB/s"))
    if preset.architecture == "dsbr" and c["dsbr.batches_binned"]:
        geometry = max((u.seconds for u in out if u.unit in GEOMETRY_UNITS), default=0.0)
        if geometry > 0:
            n = c["dsbr.batches_binned"]
            out.append(UnitTime("binning_fill", geometry / n, float(n), "batches", n / geometry,
                                f"slowest geometry unit {geometry * 1e6:.3f} us / dsbr.batches_binned {n}: "
                                "the first batch is binned before any of its pixels go out"))
    return out


def pass_time(name: str, kind: str, c: Counters, preset) -> PassTime:
    units = unit_times(c, preset)
    overlapped = [u for u in units if u.unit != "binning_fill"]
    slowest = max(overlapped, key=lambda u: u.seconds, default=None)
    fill = sum(u.seconds for u in units if u.unit == "binning_fill")
    if slowest is None:
        return PassTime(name, kind, tuple(units), 0.0, "idle")
    return PassTime(name, kind, tuple(units), slowest.seconds + fill, slowest.unit)


def frame_time(frame, preset) -> FrameTime:
    """The frame's time: each pass of `frame` (pipelines.frame.FrameResult) timed, in order."""
    passes = tuple(pass_time(p.name, p.kind, p.counters, preset) for p in frame.passes)
    return FrameTime(passes, sum(p.seconds for p in passes))
