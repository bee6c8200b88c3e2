"""Claims from the source documents that tilesim reproduces, each measured on a named scene and
presets at the report's resolution (`tilesim report --claims`, and a section of the HTML).

A claim whose architecture has not landed in tilesim is listed as not yet measured: its figure is
never invented; a claim the model cannot decide at all is listed as not measurable, with the
reason. Where the measurement falls outside the claimed range, the row says so and gives one line
on why (what in the model, or in the claim, explains the gap).

Claims about frame rate, overhead and time are judged with the time model (pipelines.cost: a
bottleneck model over the frame's counters and the preset's sourced rates); each such verdict
names the scenes and the resolution it was measured at, and holds there only.
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from scenes.library import get_scene
from scenes.model import AlphaMode, Scene

from pipelines.api import render
from pipelines.cost import FrameCost, frame_cost
from pipelines.presets import Param, get_preset
from pipelines.frame import Settings
from pipelines.result import Result

# Claims are measured at a typical game resolution whatever the report's own: at small sizes the
# whole framebuffer fits in the caches and every bandwidth claim degenerates.
SETTINGS = Settings(1920, 1080)
SEED0A = "seed 000_partA"
SEED4A = "seed 004_partA"


class Session:
    """Renders shared by several claims are made once."""

    def __init__(self, settings: Settings):
        self.settings = settings
        self._memo: dict = {}

    def render(self, scene: Scene | str, preset) -> Result:
        """Keyed by names: a variant of a scene or preset must carry a name of its own."""
        s = self.settings
        k = tuple(x if isinstance(x, str) else x.name for x in (scene, preset))
        if k not in self._memo:
            self._memo[k] = render(scene, preset, s.width, s.height, s.samples)
        return self._memo[k]


@dataclass(frozen=True)
class Measured:
    value: float          # compared with the claim's range
    text: str             # what a reader sees, with the raw figures behind the value


@dataclass(frozen=True)
class Claim:
    id: str
    claim: str
    source: str
    scene: str
    presets: tuple[str, ...]
    expected: tuple[float, float] | None        # the claimed range of Measured.value
    measure: Callable[[Session], Measured] | None = None     # None: not built in tilesim yet
    why_not: str = ""      # one line on why tilesim disagrees, shown only when it does
    missing: str = ""      # what has not landed, for claims not yet measured
    not_measurable: str = ""   # why the model cannot decide the claim at all


@dataclass(frozen=True)
class ClaimResult:
    claim: Claim
    status: str            # agrees | disagrees | not yet measured | not measurable
    measured: Measured | None
    note: str

    def as_json(self) -> dict:
        c = self.claim
        return {"id": c.id, "claim": c.claim, "source": c.source, "scene": c.scene,
                "presets": list(c.presets), "status": self.status,
                "measured": self.measured.text if self.measured else None,
                "value": self.measured.value if self.measured else None,
                "expected": list(c.expected) if c.expected else None, "note": self.note}


# ---- the measurements ------------------------------------------------------------------------

def _dram_saving(a: Result, b: Result, label_a: str, label_b: str) -> Measured:
    da, db = a.counters.dram_bytes() / 1e6, b.counters.dram_bytes() / 1e6
    saving = 1 - db / da
    change = f"{100 * saving:.0f}% less" if saving >= 0 else f"{-100 * saving:.0f}% more"
    return Measured(saving, f"{change} DRAM: {label_a} {da:.1f} MB, {label_b} {db:.1f} MB per frame")


def tbdr_dram(s: Session) -> Measured:
    return _dram_saving(s.render("sponza", "imr-baseline"), s.render("sponza", "apple-m3"),
                        "imr-baseline", "apple-m3")


def binning_off(preset: str):
    p = get_preset(preset)
    return dataclasses.replace(p.with_params(binning=Param(False, "the claim's reference: binning disabled",
                                                           "assumed")), name=p.name + " (binning off)")


def dsbr_saving(scene: str) -> Callable[[Session], Measured]:
    def measure(s: Session) -> Measured:
        return _dram_saving(s.render(scene, binning_off("amd-rdna2")), s.render(scene, "amd-rdna2"),
                            "binning off", "on")
    return measure


def opaque_variant(scene: Scene) -> Scene:
    """The same geometry with every material made opaque: HSR's reference case."""
    return dataclasses.replace(scene, name=scene.name + "-opaque", draws=[
        dataclasses.replace(d, material=dataclasses.replace(d.material, alpha_mode=AlphaMode.OPAQUE),
                            state=None) for d in scene.draws])


HSR_SCENES = ("pul1duel", "islandctf", "suspended")    # the game levels: judged
HSR_STRESS = "foliage"                                  # every draw alpha-tested: shown beside


def hsr_skip(opaque: bool) -> Callable[[Session], Measured]:
    """Share of the hidden fragments IMR shades that the tiler's HSR does not: (IMR shaded -
    TBDR shaded) / (IMR shaded - covered pixels); the median over the game levels (as submitted,
    opaque, then alpha-tested, then blended; or every material made opaque), foliage beside."""
    def skip(s: Session, name: str) -> float:
        scene = get_scene(name)
        scene = opaque_variant(scene) if opaque else scene
        imr = s.render(scene, "imr-baseline").counters
        tbdr = s.render(scene, "apple-m3").counters
        hidden = imr["raster.shaded"] - tbdr["raster.pixels_covered"]
        return (imr["raster.shaded"] - tbdr["raster.shaded"]) / hidden if hidden > 0 else 0.0

    def measure(s: Session) -> Measured:
        rates = {name: skip(s, name) for name in HSR_SCENES}
        med = float(np.median(list(rates.values())))
        return Measured(med, f"HSR skips a median {100 * med:.0f}% of hidden fragments: "
                             + ", ".join(f"{k} {100 * v:.0f}%" for k, v in rates.items())
                             + f" ({HSR_STRESS}{', made opaque' if opaque else ', every draw alpha-tested'}: "
                               f"{100 * skip(s, HSR_STRESS):.0f}%)")
    return measure


NGG_SCENES = ("sponza", "dragon", "spheres")


def ngg_cull(s: Session) -> Measured:
    """Median over NGG_SCENES of the primitives NGG culls in the shader (back-face, frustum,
    zero-area, no sample covered) / primitives in, on amd-rdna2 with its NGG front end."""
    rates = {}
    for name in NGG_SCENES:
        c = s.render(name, "amd-rdna2").counters
        culled = sum(v for k, v in c.items() if k.startswith("geom.prims_culled."))
        rates[name] = culled / c["geom.prims_in"]
    med = float(np.median(list(rates.values())))
    return Measured(med, f"median {100 * med:.0f}% culled: " + ", ".join(
        f"{k} {100 * v:.0f}%" for k, v in rates.items()))


RT_RES = (640, 360)      # ray counts barely move per-ray averages; a smaller frame keeps --claims quick
BVH_SCENES = ("dragon", "sponza")


def primary_ray_counts(scenes, modes) -> dict:
    """(scene name, mode) -> counters of amd-rdna4 tracing the primary rays of each scene in each
    node layout (each built from the same binned-SAH BVH2), at RT_RES, before the caches."""
    from pipelines.passes.raytrace import trace
    return {(scene.name, mode): trace(scene, "amd-rdna4", *RT_RES, rays=("primary",), mode=mode,
                                      memory=False).counters
            for scene in scenes for mode in modes}


def bvh8_steps(s: Session) -> Measured:
    """1 - BVH8 steps / BVH4 steps per primary ray, over BVH_SCENES' rays together."""
    c = primary_ray_counts([get_scene(n) for n in BVH_SCENES], ("bvh4", "bvh8"))
    steps = {m: sum(c[n, m]["rt.primary.steps"] for n in BVH_SCENES) for m in ("bvh4", "bvh8")}
    per = {k: v["rt.primary.steps"] / v["rt.primary.rays"] for k, v in c.items()}
    v = 1 - steps["bvh8"] / steps["bvh4"]
    return Measured(v, f"{100 * v:.0f}% fewer steps per primary ray: " + ", ".join(
        f"{n} {per[n, 'bvh4']:.2f} -> {per[n, 'bvh8']:.2f}" for n in BVH_SCENES)
        + f" ({RT_RES[0]}x{RT_RES[1]})")


def obb_gain(s: Session) -> Measured:
    """Traversal steps per primary ray, BVH8 with axis-aligned boxes over BVH8 with oriented ones,
    minus one, over BVH_SCENES turned 30 degrees about y and 20 about x."""
    from scenes.library import rotated
    scenes = [rotated(get_scene(n)) for n in BVH_SCENES]
    c = primary_ray_counts(scenes, ("bvh8", "bvh8-obb"))
    total = {(m, k): sum(c[sc.name, m][f"rt.primary.{k}"] for sc in scenes)
             for m in ("bvh8", "bvh8-obb") for k in ("steps", "tests.box")}
    v = total["bvh8", "steps"] / total["bvh8-obb", "steps"] - 1
    return Measured(v, f"{100 * v:+.1f}% primary-ray throughput by steps (AABB {total['bvh8', 'steps']:,}, "
                       f"OBB {total['bvh8-obb', 'steps']:,}); box tests {total['bvh8', 'tests.box']:,} -> "
                       f"{total['bvh8-obb', 'tests.box']:,}, rotated {', '.join(BVH_SCENES)}, "
                       f"{RT_RES[0]}x{RT_RES[1]}")


# ---- the time model's claims (pipelines.cost) -------------------------------------------------

def _model(r, preset) -> FrameCost:
    return frame_cost(r, preset)


def _res(s: Session) -> str:
    return f"{s.settings.width}x{s.settings.height}"


DSBR_TIME_SCENES = ("sponza", "spheres", "teapot")        # game-like scenes: the claim's "typical games"
DSBR_STRESS = ("overdraw:32:btf",)                         # shown beside them, not judged


def dsbr_fps(scenes, stress=()) -> Callable[[Session], Measured]:
    """Frame rate with binning on over off (the model's fps), amd-rdna2, per scene; the value is
    the best game-like scene's gain (the claim is 'up to'); the stress scenes are shown only."""
    def measure(s: Session) -> Measured:
        on_p, off_p = get_preset("amd-rdna2"), binning_off("amd-rdna2")
        gains, limit = {}, {}
        for name in (*scenes, *stress):
            on = _model(s.render(name, on_p), on_p).time
            off = _model(s.render(name, off_p), off_p).time
            gains[name] = on.fps / off.fps - 1
            limit[name] = f"{off.passes[0].limiter}->{on.passes[0].limiter}"
        best = max(gains[k] for k in scenes)
        return Measured(best, f"model fps on/off - 1, {_res(s)}: " + ", ".join(
            f"{k} {100 * v:+.2f}% ({limit[k]})" for k, v in gains.items() if k in scenes)
            + "".join(f"; stress case {k} {100 * gains[k]:+.2f}% ({limit[k]}), not judged" for k in stress))
    return measure


def dsbr_low_overdraw_time(s: Session) -> Measured:
    """teapot (one layer): binning on over off in the model's frame time, amd-rdna2."""
    on_p, off_p = get_preset("amd-rdna2"), binning_off("amd-rdna2")
    on = _model(s.render("teapot", on_p), on_p).time
    off = _model(s.render("teapot", off_p), off_p).time
    v = on.fps / off.fps - 1
    fill = on.passes[0].unit("binning_fill")
    return Measured(v, f"teapot {_res(s)}: {off.ms:.4f} ms off, {on.ms:.4f} ms on ({100 * v:+.2f}% fps; "
                       f"limiter {on.passes[0].limiter}, binning fill "
                       f"{(fill.seconds * 1e3 if fill else 0):.5f} ms)")


NGG_TIME_SCENES = ("dragon", "spheres", "sponza")


def legacy_front_end(preset: str):
    p = get_preset(preset)
    return dataclasses.replace(p.with_params(frontend=Param("legacy", "the claim's reference: the fixed "
                                                                      "4 tri/clk front end", "assumed")),
                               name=p.name + " (legacy front end)")


def ngg_time(s: Session) -> Measured:
    """Frame time on the legacy front end over NGG, amd-rdna2, dense meshes: the geometry
    front end's share of the frame decides it."""
    ngg_p, legacy_p = get_preset("amd-rdna2"), legacy_front_end("amd-rdna2")
    out = {}
    for name in NGG_TIME_SCENES:
        a = _model(s.render(name, legacy_p), legacy_p).time
        b = _model(s.render(name, ngg_p), ngg_p).time
        out[name] = (a.seconds / b.seconds, a.passes[0].limiter, b.passes[0].limiter)
    med = float(np.median([v[0] for v in out.values()]))
    return Measured(med, f"legacy/NGG frame time, {_res(s)}: " + ", ".join(
        f"{k} {v[0]:.2f}x ({v[1]} -> {v[2]})" for k, v in out.items())
        + f"; NGG at {get_preset('amd-rdna2').rates.ngg_prims_per_clk.value} prims/clk (L745's claim, assumed)")


def raster_rate(px_per_se: int) -> object:
    p = get_preset("amd-rdna2")
    ses = int(p.rates.raster_px_per_clk.value) // 32
    return dataclasses.replace(p.with_params(
        raster_px_per_clk=Param(px_per_se * ses, f"{px_per_se} px/clk per SE (the claim's reference)", "assumed"),
        rop_color_px_per_clk=Param(px_per_se * ses, "ROPs matched to the rasterizer, as RB+ did (seed L1285)",
                                   "assumed")), name=f"amd-rdna2 ({px_per_se} px/clk)")


def raster_gain(scene: str) -> Callable[[Session], Measured]:
    """Frame time at 16 px/clk per SE (and ROPs to match) over 32, on amd-rdna2's counters: the
    counts do not change with the rate, only the time."""
    def measure(s: Session) -> Measured:
        r = s.render(scene, "amd-rdna2")
        slow, fast = (_model(r, raster_rate(n)).time for n in (16, 32))
        v = slow.seconds / fast.seconds
        return Measured(v, f"{scene} {_res(s)}: {slow.ms:.4f} ms at 16, {fast.ms:.4f} ms at 32 px/clk "
                           f"per SE ({v:.2f}x; limiter {slow.passes[0].limiter} -> {fast.passes[0].limiter})")
    return measure


def bvh8_time(s: Session) -> Measured:
    """1 - BVH8 / BVH4 intersection-unit time of primary rays on amd-rdna4's rates (8 box, 2
    triangle tests per clock), over BVH_SCENES: rt.isect_clocks / (units x clock)."""
    key = ("bvh-time",)
    if key not in s._memo:
        s._memo[key] = primary_ray_counts([get_scene(n) for n in BVH_SCENES], ("bvh4", "bvh8"))
    c = s._memo[key]
    r = get_preset("amd-rdna4").rates
    hz = float(r.clock_ghz.value) * 1e9 * int(r.rt_units.value)
    t = {m: sum(c[n, m]["rt.primary.isect_clocks"] for n in BVH_SCENES) / hz for m in ("bvh4", "bvh8")}
    v = 1 - t["bvh8"] / t["bvh4"]
    return Measured(v, f"{100 * v:.0f}% less intersection time: {t['bvh4'] * 1e3:.4f} -> "
                       f"{t['bvh8'] * 1e3:.4f} ms, primary rays of {', '.join(BVH_SCENES)} at "
                       f"{RT_RES[0]}x{RT_RES[1]} (the caches' time not included: traced without them)")


def tbdr_energy(s: Session) -> Measured:
    """1 - TBDR mJ / IMR mJ on sponza, both priced with apple-m3's pJ (pipelines.presets.energy),
    so that only the counts differ: the DRAM bytes, cache traffic, shaded fragments."""
    from pipelines.cost.energy import frame_energy
    tbdr_p = get_preset("apple-m3")
    imr_p = dataclasses.replace(get_preset("imr-baseline"), energy=tbdr_p.energy)
    e_imr = frame_energy(s.render("sponza", "imr-baseline"), imr_p)
    e_tbdr = frame_energy(s.render("sponza", "apple-m3"), tbdr_p)
    v = 1 - e_tbdr.joules / e_imr.joules
    def split(e):
        return ", ".join(f"{k} {v * 1e3:.3f}" for k, v in e.by_source().items())
    return Measured(v, f"sponza {_res(s)} at apple-m3's pJ: imr-baseline {e_imr.mj:.3f} mJ ({split(e_imr)}), "
                       f"apple-m3 {e_tbdr.mj:.3f} mJ ({split(e_tbdr)}): "
                       + (f"{100 * v:.0f}% less" if v >= 0 else f"{-100 * v:.0f}% more"))


COMPRESSION_SCENES = ("sponza", "spheres", "dragon", "foliage", "particles")


def crossed_ratios(frames: dict, stream: str) -> dict[str, float]:
    """Scene -> raw : compressed over the lines of `stream` that crossed to DRAM compressed in
    that scene's frame (the memory model's comp.dram.* counters); scenes where none did are
    left out."""
    out = {}
    for name, c in frames.items():
        moved = sum(c[f"comp.dram.{d}.{stream}"] for d in ("read", "write"))
        raw = sum(c[f"comp.dram.{d}.{stream}.raw"] for d in ("read", "write"))
        if raw:
            out[name] = raw / max(moved, 1)
    return out


def _median_text(ratios: dict, what: str, s: Session) -> tuple[float, str]:
    if not ratios:
        return 0.0, f"nothing crossed to DRAM compressed at {_res(s)}"
    med = float(np.median(list(ratios.values())))
    return med, (f"{what} median {med:.2f}:1 ({100 * (1 - 1 / med):.0f}% saved), {_res(s)}: "
                 + ", ".join(f"{k} {v:.2f}:1" for k, v in ratios.items()))


def colour_saving(preset: str) -> Callable[[Session], Measured]:
    """Median over COMPRESSION_SCENES of raw : compressed over the colour that crossed to DRAM
    compressed in `preset`'s own raster passes (the blocks as its ROP or tile store left them)."""
    def measure(s: Session) -> Measured:
        frames = {name: s.render(name, preset).counters for name in COMPRESSION_SCENES}
        codec = get_preset(preset).compression.codec.value
        return Measured(*_median_text(crossed_ratios(frames, "color"),
                                      f"{codec}, as the raster's colour crossed to DRAM:", s))
    return measure


def z_compression(s: Session) -> Measured:
    """Median over COMPRESSION_SCENES of raw : compressed over the depth that crossed to DRAM
    compressed on amd-rdna2 with depth stored (HTILE plane tracking in its raster)."""
    from pipelines.frame import run
    st = s.settings
    frames = {name: run(name, "amd-rdna2", Settings(st.width, st.height, st.samples,
                                                    store_depth=True)).counters
              for name in COMPRESSION_SCENES}
    return Measured(*_median_text(crossed_ratios(frames, "depth"),
                                  "HTILE, as the raster's depth crossed to DRAM (depth stored):", s))


def afbc_saving(s: Session) -> Measured:
    m = colour_saving("arm-mali")(s)
    return Measured(1 - 1 / m.value if m.value else 0.0, m.text)


TAX_RES = (3840, 2160)        # the seed's worked example is a 4K frame


def compression_tax(s: Session) -> Measured:
    """The seed's frame: two RGBA16F render targets of sponza at 4K (the lit HDR colour and the
    normals), four PS<->CS switches, each paying (raw - compressed) on apple-a11's codec, which
    keeps no compression across stages."""
    from renderer.compression import compressed_size

    from pipelines.passes.postchain import gbuffer, run_graph, tax_frame
    g, lit = gbuffer("sponza", *TAX_RES)
    hdr = (lit.color.astype(np.float32) / 255.0 * 2.0).astype(np.float16).view(np.uint16)
    targets = {"hdr": hdr, "normal": g["normal"]}
    raw = sum(t.nbytes for t in targets.values())
    p = get_preset("apple-a11").compression
    comp = sum(compressed_size(t, p.codec.value, p.dcc_max_compressed_block.value) for t in targets.values())
    passes, kernels = tax_frame(targets)
    at = run_graph(passes, "apple-a11", kernels).tax_at()
    return Measured(at["tax_mb"], f"{at['tax_mb']:.0f} MB per frame = {at['tax_gbps']:.1f} GB/s at "
                                  f"60 fps ({100 * at['tax_share']:.0f}% of 51.2 GB/s): raw "
                                  f"{raw / 1e6:.1f} MB, compressed {comp / 1e6:.1f} MB ({raw / comp:.1f}:1), "
                                  f"4 x (raw - compressed)")


def te_static(s: Session) -> Measured:
    """Three frames of a static background with a small sphere that moves once, then stops:
    the share of framebuffer write bytes the static third frame saves."""
    from pipelines.passes.postchain import transaction_elimination, two_frame_scene
    w, h = s.settings.width, s.settings.height
    frames = [s.render(two_frame_scene(i), "imr-baseline").color for i in range(3)]
    counters = transaction_elimination(frames)
    full = frames[0].nbytes
    moved, static = (1 - c.dram_bytes() / full for c in counters[1:])
    c = counters[2]
    return Measured(static, f"static frame: {c['te.tiles_written']} of {c['te.tiles']} tiles written, "
                            f"{100 * static:.2f}% of {full / 1e6:.1f} MB saved (signatures still "
                            f"move); after the sphere moved: {100 * moved:.1f}% saved, {w}x{h}")


CLAIMS: tuple[Claim, ...] = (
    Claim("tbdr-dram", "TBDR cuts external memory bandwidth by 50-80% against IMR",
          f"{SEED4A} L41 (aggregate range, unsourced in the seed)", "sponza",
          ("imr-baseline", "apple-m3"), (0.50, 0.80), tbdr_dram,
          why_not="the IMR reference has ROP caches and a 4 MB L2 that keep much of the colour and "
                  "depth traffic on chip; the saving grows with resolution as they outgrow the L2"),
    Claim("dsbr-third", "DSBR: about 1/3 less memory bandwidth in typical games",
          f"{SEED0A} L739 (AMD; 'depends heavily on scene and driver heuristics')", "sponza",
          ("amd-rdna2",), (0.25, 0.45), dsbr_saving("sponza"),
          why_not="at sponza's overdraw the 4 MB L2 and 128 MB Infinity Cache of amd-rdna2 already "
                  "hold colour and depth, so binning has little DRAM traffic left to save"),
    Claim("dsbr-overdraw", "DSBR cuts DRAM bandwidth where overdraw is high",
          f"{SEED0A} L735-739, L1020", "overdraw:32:btf", ("amd-rdna2",), (1 / 3, 1.0),
          dsbr_saving("overdraw:32:btf"),
          why_not="binning keeps each bin's colour and depth in the ROP caches only when a batch "
                  "holds several layers; here batches break too often"),
    Claim("dsbr-fps", "DSBR: up to +10% frame rate in typical games",
          f"{SEED0A} L739 (AMD's typical-game test data)", ", ".join(DSBR_TIME_SCENES),
          ("amd-rdna2",), (0.0, 0.10), dsbr_fps(DSBR_TIME_SCENES, DSBR_STRESS),
          why_not="in the bottleneck model binning moves only the memory units' time; a frame limited "
                  "by the front end or the raster does not get faster, and the first batch's binning "
                  "fill costs a little on every scene"),
    Claim("dsbr-low-overdraw-time", "DSBR's binning overhead can exceed its benefit where overdraw "
          "is low (in frame time)", f"{SEED0A} L739", "teapot", ("amd-rdna2",), (-1.0, -1e-6),
          dsbr_low_overdraw_time,
          why_not="the model charges binning only its first batch's fill; at this size that is below "
                  "the slowest unit's time"),
    Claim("ngg-front-end", "NGG scales geometry past the fixed front end's 4 triangles per clock on "
          "dense meshes", f"{SEED0A} L745, L996, L1273", ", ".join(NGG_TIME_SCENES),
          ("amd-rdna2",), (1.05, 17 / 4), ngg_time,
          why_not="where the frame is not limited by primitives in (raster, ROP, memory or setup of "
                  "the primitives that survive), the front end's rate does not show in the frame"),
    Claim("raster-32-fill", "16 -> 32 px/clk per rasterizer (with RB+): a fill-bound scene gains about 2x",
          f"{SEED0A} L1281-1285 (seed-notes 000_partA l.83-84)", "overdraw:8:btf", ("amd-rdna2",),
          (1.8, 2.0), raster_gain("overdraw:8:btf"),
          why_not="the frame is limited by another unit (memory or L2) before the raster at 16 px/clk"),
    Claim("raster-32-tiny", "16 -> 32 px/clk: a tiny-triangle scene gains nothing (it is geometry-bound)",
          f"{SEED0A} L1281 (seed-notes 000_partA l.84, l.301)", "dragon", ("amd-rdna2",), (1.0, 1.05),
          raster_gain("dragon"),
          why_not="dragon's triangles cover enough pixels at this resolution that the raster limits "
                  "at 16 px/clk"),
    Claim("bvh8-time", "BVH8 (8 box, 2 triangle tests per clock) against BVH4: 30-40% less time, not "
          "only fewer steps", "seed 000_partB L1902, seed 000 L1488", ", ".join(BVH_SCENES),
          ("amd-rdna4",), (0.30, 0.40), bvh8_time,
          why_not="a BVH8 node's 8 box tests take one clock as a BVH4 node's 4 do, so time follows "
                  "steps; leaf clocks (2 triangles per clock) shift it"),
    Claim("tbdr-energy", "an architecture that moves fewer DRAM bytes and shades fewer hidden fragments "
          "spends less energy per frame", "seed 004 L1048 (seed-notes/004_partB.md l.351)", "sponza",
          ("imr-baseline", "apple-m3"), (0.0, 1.0), tbdr_energy,
          why_not="the tiler's parameter buffer and SLC traffic outweigh what it saves on colour and "
                  "depth at this resolution"),
    Claim("tbdr-sustained-clock", "fewer DRAM bytes let the GPU hold +150-200 MHz more under the same "
          "thermal budget", "seed 004 L1048, L1066 (seed-notes/004_partB.md l.345-349)", "-",
          ("apple-m3",), None,
          not_measurable="the time model runs every preset at a fixed clock; there is no thermal or "
                         "DVFS model to turn energy into a sustained frequency"),
    Claim("ngg-power", "NGG culling costs about 30 W on the 6900 XT against 0.9 W on the 7900 XT",
          "seed 001 (seed-notes/001_003.md)", "-", ("amd-rdna2", "amd-rdna3"), None,
          not_measurable="the energy model charges counted work at sourced pJ (45 nm per-op figures, "
                         "assumed), dynamic energy only: the watts one stage draws on a product (its "
                         "clocks, voltage, leakage) are outside what counts x pJ can give"),
    Claim("dsbr-low-overdraw", "DSBR can lose where overdraw is low (in DRAM bytes)",
          f"{SEED0A} L412, L735-739", "teapot", ("amd-rdna2",), (-1.0, -0.001), dsbr_saving("teapot"),
          not_measurable="the loss the seed means is binning's overhead, a cost in time (L739), which "
                         "bytes alone cannot show: judged in time by dsbr-low-overdraw-time",
          why_not="with one layer of fragments there is nothing for a bin to keep on chip, and the "
                  "bins' order costs the caches no more than submission order here"),
    Claim("hsr-opaque", "HSR skips 85-95% of invisible fragment shading (opaque, 32x32 tiles)",
          f"{SEED4A} L233, L778 (the author's inference)", ", ".join(HSR_SCENES) + ", made opaque",
          ("imr-baseline", "apple-m3"), (0.85, 0.95), hsr_skip(opaque=True),
          why_not="tilesim's HSR resolves visibility exactly per pixel before shading, so it skips "
                  "every hidden opaque fragment; the seed's range is an estimate for hardware"),
    Claim("hsr-punch-through", "with dense punch-through (alpha test) HSR's skip ratio falls to 40-60%",
          f"{SEED4A} L234, L778 (the author's inference)", ", ".join(HSR_SCENES),
          ("imr-baseline", "apple-m3"), (0.40, 0.60), hsr_skip(opaque=False),
          why_not="the levels draw their few alpha-tested and blended surfaces last, after the "
                  "opaque world HSR has already resolved: punch-through cuts short only the runs "
                  "they start, so the skip stays near the opaque case's"),
    Claim("ngg-cull", "NGG shader culling removes 30-70% of input primitives in dense scenes",
          f"{SEED0A} L1002 (AMD public data, workload-dependent)", ", ".join(NGG_SCENES),
          ("amd-rdna2",), (0.30, 0.70), ngg_cull,
          why_not="closed meshes seen from outside lose about half their triangles to back-face "
                  "culling alone, and small triangles add to that"),
    Claim("bvh8-steps", "BVH8 takes 30-40% fewer steps to a leaf than BVH4",
          "seed 000_partB L1902", ", ".join(BVH_SCENES), ("amd-rdna4",), (0.30, 0.40), bvh8_steps,
          why_not="steps here count every node fetched, leaves included, over hits and misses; "
                  "the seed's figure is depth to a leaf"),
    Claim("obb", "oriented bounding boxes: +18.5% primary, +32.4% secondary ray performance",
          "DOBB-BVH, Kern et al. 2025, arXiv 2506.22849 (peers.md §3)",
          f"{', '.join(BVH_SCENES)}, rotated", ("amd-rdna4",), (0.10, 0.30), obb_gain,
          why_not="steps stand in for performance here; the paper times real hardware, where a "
                  "rotated node also costs a transform"),
    Claim("dcc-ratio", "DCC compresses colour about 2:1 to 8:1, depending on colour continuity",
          f"{SEED0A} L503", ", ".join(COMPRESSION_SCENES), ("amd-rdna2",), (2.0, 8.0), colour_saving("amd-rdna2"),
          why_not="the median frame holds more flat background than the seed's typical game"),
    Claim("z-compression", "Z compression cuts depth traffic 2:1 to 4:1, lossless",
          f"{SEED0A} L158 (seed L314)", ", ".join(COMPRESSION_SCENES), ("amd-rdna2",), (2.0, 4.0),
          z_compression,
          why_not="planes are tracked as the ROP writes them (2 per 8x8 block, assumed): dense "
                  "meshes put more triangles in a block than HTILE keeps, and those blocks go raw"),
    Claim("afbc", "AFBC saves up to 50% of system bandwidth", "Arm, peers.md §4 table",
          ", ".join(COMPRESSION_SCENES), ("arm-mali",), (0.0, 0.5), afbc_saving,
          why_not="this is the colour surface alone, where AFBC stores a flat 16x16 superblock as "
                  "its 16-byte header; Arm's figure is for the whole system's traffic"),
    Claim("compression-tax", "4 PS<->CS switches on a 4K RGBA16F G-buffer (128 MB raw, 16 MB "
          "compressed) cost 448 MB per frame, 26.9 GB/s at 60 fps", f"{SEED4A} L346-353 (seed "
          "L863-871)", "sponza G-buffer at 3840x2160", ("apple-a11",), (448 * 0.8, 448 * 1.2),
          compression_tax,
          why_not="tilesim's codecs are lossless (2-6:1 here); the seed's 16 MB assumes ASTC-like 8:1"),
    Claim("transaction-elimination", "transaction elimination saves up to 99% of framebuffer "
          "writes on static content", "Arm, peers.md §4 table", "a static frame after a moving one",
          ("arm-mali",), (0.98, 1.0), te_static,
          why_not="the static frame still writes tiles whose signature changed"),
)


def evaluate(settings: Settings = SETTINGS, claims=CLAIMS, session: Session | None = None) -> list[ClaimResult]:
    session = session or Session(settings)
    out = []
    for c in claims:
        if c.not_measurable:
            out.append(ClaimResult(c, "not measurable", None, c.not_measurable))
            continue
        if c.measure is None:
            out.append(ClaimResult(c, "not yet measured", None, f"needs {c.missing}"))
            continue
        m = c.measure(session)
        lo, hi = c.expected
        ok = lo <= m.value <= hi
        out.append(ClaimResult(c, "agrees" if ok else "disagrees", m, "" if ok else c.why_not))
    return out
