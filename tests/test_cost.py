"""The time and energy model (pipelines.cost): analytic frames whose unit times are known by hand,
the limiter each names, energy as counts x pJ summed by hand, and every preset's rates and
energies sourced and labelled."""
from __future__ import annotations

import dataclasses

import pytest

from pipelines.cost import frame_cost
from pipelines.cost.energy import energy_terms, frame_energy
from pipelines.cost.timing import FRAGMENT_OPS, frame_time, pass_time
from pipelines.frame import Settings, run
from pipelines.presets import PRESETS, Param, get_preset
from pipelines.presets.energy import EnergyParams
from pipelines.presets.rates import RatesParams
from renderer.counters import Counters
from renderer.frontend import ATTRIBUTE_OPS, POSITION_OPS
from scenes.framing import user_camera
from scenes.library import get_scene

LABELS = ("spec", "measured", "derived", "assumed")
T = "test"


def _p(value):
    return Param(value, T, "assumed")


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_has_every_rate_and_energy_with_a_source_and_a_label(name):
    p = PRESETS[name]
    assert isinstance(p.rates, RatesParams) and isinstance(p.energy, EnergyParams)
    for record, cls in ((p.rates, RatesParams), (p.energy, EnergyParams)):
        for field in cls.names():
            v = getattr(record, field)
            if field == "llc_gbps":          # a last-level cache's bandwidth exactly where there is one
                assert (v is None) == (p.memory.llc_bytes is None), name
                if v is None:
                    continue
            assert isinstance(v, Param) and v.source and v.label in LABELS, (name, field)
            if not isinstance(v.value, str):
                assert v.value >= 0, (name, field)
    for field in ("clock_ghz", "prims_per_clk", "raster_px_per_clk", "rop_color_px_per_clk",
                  "rop_z_samples_per_clk", "alu_lanes", "alu_units", "rt_units", "l2_bytes_per_clk"):
        assert getattr(p.rates, field).value > 0, (name, field)
    # the rates and energies are parameters like any other: listed, and changed by name
    assert "clock_ghz" in p.all_params() and "dram_pj_per_byte" in p.all_params()
    assert p.with_params(clock_ghz=_p(1.0)).rates.clock_ghz.value == 1.0


def test_a_full_screen_quad_takes_w_h_over_n_f_in_the_raster_unit():
    w, h, n, ghz = 64, 48, 2, 0.5
    preset = get_preset("imr-baseline").with_params(raster_px_per_clk=_p(n), clock_ghz=_p(ghz))
    f = run("quad", preset, Settings(w, h))
    assert f.counters["raster.fragments"] == w * h          # the quad covers each pixel once
    t = frame_time(f, preset)
    raster = t.passes[0].unit("raster")
    assert raster.seconds == pytest.approx(w * h / (n * ghz * 1e9), rel=1e-12)
    assert t.passes[0].limiter == "raster"
    assert t.seconds == pytest.approx(w * h / (n * ghz * 1e9), rel=1e-12)
    assert t.fps == pytest.approx(n * ghz * 1e9 / (w * h), rel=1e-12)
    # twice the rate, half the time: the raster unit is what limits
    faster = preset.with_params(raster_px_per_clk=_p(2 * n))
    assert frame_time(f, faster).seconds == pytest.approx(t.seconds / 2, rel=1e-12)


def test_a_vertex_bound_mesh_takes_vertices_x_ops_over_lanes_f_in_the_alu():
    scene = get_scene("teapot")
    # looking away from the mesh: every vertex is shaded, no fragment is
    scene = dataclasses.replace(scene, camera=user_camera("0,0,8:0,0,20:0,1,0:60", scene.draws))
    ghz, lanes = 1.0, 4
    preset = get_preset("imr-baseline").with_params(alu_lanes=_p(lanes), alu_units=_p(1), clock_ghz=_p(ghz))
    f = run(scene, preset, Settings(32, 32))
    c = f.counters
    assert c["raster.fragments"] == 0 and c["geom.vertices_shaded"] > 0
    ops = POSITION_OPS * c["geom.vertices_shaded"] + ATTRIBUTE_OPS * c["geom.vertices_attr_shaded"]
    p = frame_time(f, preset).passes[0]
    assert p.unit("alu").seconds == pytest.approx(ops / (lanes * ghz * 1e9), rel=1e-12)
    assert p.limiter == "alu"


def test_a_dram_bound_frame_takes_bytes_over_bandwidth():
    gbps = 0.01
    preset = get_preset("imr-baseline").with_params(dram_gbps=_p(gbps))
    w, h = 64, 48
    f = run("quad", preset, Settings(w, h, store_depth=True))
    # the quad's colour and depth are each stored once (RGBA8, D32F: 4 B a pixel)
    assert f.counters.dram_bytes("write") == w * h * (4 + 4)
    t = frame_time(f, preset)
    assert t.passes[0].limiter == "dram"
    assert t.seconds == pytest.approx(f.counters.dram_bytes() / (gbps * 1e9), rel=1e-12)


def test_fragment_lanes_count_in_the_alu():
    c = Counters({"raster.shaded": 10, "raster.helper_lanes": 6, "geom.vs_alu_ops": 100})
    preset = get_preset("imr-baseline").with_params(alu_lanes=_p(1), alu_units=_p(1), clock_ghz=_p(1.0))
    assert pass_time("p", "render", c, preset).unit("alu").seconds == pytest.approx(
        (100 + 16 * FRAGMENT_OPS) * 1e-9, rel=1e-12)


def test_dsbr_charges_one_batch_of_geometry_before_its_pixels():
    preset = get_preset("amd-rdna2").with_params(prims_per_clk=_p(1), ngg_prims_per_clk=_p(1),
                                                 clock_ghz=_p(1.0))
    c = Counters({"geom.prims_in": 1000, "geom.setup_triangles": 400, "geom.draws.ngg": 1,
                  "dsbr.batches_binned": 10, "raster.fragments": 10})
    p = pass_time("main", "render", c, preset)
    assert p.limiter == "prim_in"
    assert p.unit("binning_fill").seconds == pytest.approx(1000e-9 / 10, rel=1e-12)
    assert p.seconds == pytest.approx(1000e-9 + 100e-9, rel=1e-12)


def test_energy_is_counts_times_picojoules():
    preset = get_preset("amd-rdna2").with_params(
        dram_pj_per_byte=_p(60.0), l2_pj_per_byte=_p(12.0), llc_pj_per_byte=_p(25.0), sram_pj_per_byte=_p(2.0),
        alu_pj_per_op=_p(5.0), prim_pj=_p(100.0), raster_pj_per_fragment=_p(20.0), rop_pj_per_sample=_p(10.0),
        rt_box_pj=_p(50.0), rt_tri_pj=_p(150.0))
    c = Counters({"mem.dram.write.color": 1000, "mem.dram.read.vertex": 24,
                  "mem.cache.l2.hits": 10, "mem.cache.l2.misses": 5, "mem.cache.llc.misses": 5,
                  "mem.cache.rop_color.hits": 3, "raster.texture_l1_lookups": 2,
                  "geom.vs_alu_ops": 440, "raster.shaded": 3, "raster.helper_lanes": 1,
                  "geom.prims_in": 7, "raster.fragments": 9, "raster.samples_covered": 11,
                  "rt.tests.box": 4, "rt.tests.tri": 2})
    by_hand = {
        "dram": 1024 * 60.0,
        "caches": 15 * 128 * 12.0 + 5 * 128 * 25.0 + 3 * 128 * 2.0 + 2 * 128 * 2.0,   # rdna2's 128 B L0 line
        "alu": (440 + 4 * FRAGMENT_OPS) * 5.0,
        "fixed": 7 * 100.0 + 9 * 20.0 + 11 * 10.0 + 4 * 50.0 + 2 * 150.0,
    }
    terms = energy_terms(c, preset)
    got = {s: sum(t.joules for t in terms if t.source == s) for s in by_hand}
    for s, pj in by_hand.items():
        assert got[s] == pytest.approx(pj * 1e-12, rel=1e-12), s


def test_a_frame_s_energy_and_watts():
    preset = get_preset("apple-m3")
    f = run("quad", preset, Settings(64, 48))
    e = frame_energy(f, preset)
    dram = f.counters.dram_bytes() * float(preset.energy.dram_pj_per_byte.value) * 1e-12
    assert e.by_source()["dram"] == pytest.approx(dram, rel=1e-12)
    # a tiler's tile memory: a depth sample read per covered sample, a colour written per fragment
    tile = [t for t in energy_terms(f.counters, preset) if t.item == "tile_memory"][0]
    assert tile.count == f.counters["raster.samples_covered"] * 4 + f.counters["raster.written"] * 4
    assert e.joules == pytest.approx(sum(e.by_source().values()), rel=1e-12)
    cost = frame_cost(f, preset)
    assert cost.watts(30.0) == pytest.approx(e.joules * 30.0, rel=1e-12)
    assert cost.watts() == pytest.approx(e.joules * cost.time.fps, rel=1e-12)


def test_report_rows_explain_and_render_carry_the_model(capsys, tmp_path):
    import json

    from pipelines.commands import cli
    from pipelines.commands.report import frame_row
    preset = get_preset("amd-rdna2")
    row, f = frame_row(get_scene("quad"), preset, Settings(64, 48, fps=30.0))
    cost = frame_cost(f, preset)
    assert row["model_ms"] == cost.time.ms and row["limiter"] == cost.time.passes[0].limiter
    assert row["mj"] == pytest.approx(sum(row[f"mj.{s}"] for s in ("dram", "caches", "alu", "fixed")), rel=1e-12)
    assert row["watts_at_fps"] == pytest.approx(cost.energy.joules * 30.0, rel=1e-12)
    assert row["cost"]["passes"][0]["units"][0]["inputs"]
    # --explain prints each unit's operands: the raster line reads its counter and rate
    assert cli.main(["report", "--explain", "quad", "--preset", "amd-rdna2", "--res", "64x48"]) == 0
    text = capsys.readouterr().out
    assert f"raster.fragments {64 * 48} / (raster_px_per_clk 128 x 2.25 GHz)" in text
    assert f"frame: {cost.time.ms:.6f} ms" in text
    assert cli.main(["report", "--explain", "quad", "--preset", "all"]) == 2      # one preset only
    capsys.readouterr()
    out = tmp_path / "q.png"
    assert cli.main(["render", "quad", "--preset", "amd-rdna2", "--res", "64x48", "-o", str(out)]) == 0
    line = capsys.readouterr().out
    assert f"model {cost.time.ms:.4g} ms" in line and f"main: {cost.time.passes[0].limiter}" in line
    # the viewer's strip shows the same figures
    from viewer import hud
    fig = hud.figures(f)
    assert fig["model_ms"] == cost.time.ms and fig["limiter"] == cost.time.passes[0].limiter
    assert "model" in "".join(t for line in hud.strip_lines(fig, None, "") for t, _ in line)
    json.dumps(hud.differences(fig, fig))


def test_ray_shader_work_is_alu_time():
    """Any-hit programs run ANYHIT_OPS each on every generation; candidate hits culled by the ray
    flags cost FLAG_FILTER_OPS each only where the flags are filtered in the shader (RDNA 2)."""
    from pipelines.cost.timing import ANYHIT_OPS, FLAG_FILTER_OPS
    c = Counters({"rt.anyhit": 1000, "rt.hits.culled": 500, "rt.isect_clocks": 1})
    for name, filtered in (("amd-rdna2", 500), ("amd-rdna3", 0)):
        preset = get_preset(name).with_params(clock_ghz=_p(1.0), alu_lanes=_p(1), alu_units=_p(1))
        p = pass_time("shadow", "rays", c, preset)
        assert p.unit("alu").work == 1000 * ANYHIT_OPS + filtered * FLAG_FILTER_OPS, name
        assert p.unit("alu").seconds == pytest.approx(p.unit("alu").work * 1e-9, rel=1e-12)


def test_the_stack_s_on_chip_bytes_cost_sram_energy_unless_in_registers():
    c = Counters({"rt.stack.onchip_bytes": 1000})
    preset = get_preset("amd-rdna3")
    pj = float(preset.energy.sram_pj_per_byte.value)
    [term] = [t for t in energy_terms(c, preset) if t.item == "rt_stack"]
    assert term.joules == pytest.approx(1000 * pj * 1e-12, rel=1e-12) and term.source == "caches"
    regs = preset.with_params(rt_stack_location=Param("registers", "test", "user"))
    assert not [t for t in energy_terms(c, regs) if t.item == "rt_stack"]
