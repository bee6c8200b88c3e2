"""The display as a client of compressed surfaces (issue 24, pipelines.passes.present): scan-out
reads the presented colour as stored where the preset's display engine can, and after a counted
decompress where it cannot. Exact bytes on the flat quad of test_compression_frame."""
from __future__ import annotations

import pytest

from pipelines.frame import Settings, run
from pipelines.presets import get_preset
from pipelines.presets.keys import apply_sets
from renderer.compression import rop_meta_bytes
from scenes.library import get_scene
from scenes.model import Material
from tests.test_compression_frame import CODEC_PRESETS, H, W, _quad

N_BLOCKS = (W // 8) * (H // 8)
RAW = W * H * 4
# the flat grey quad's stored payload per codec (test_flat_quad_stores_each_codecs_minimum)
PAYLOAD = {"none": RAW, "dcc": 64 * N_BLOCKS, "afbc": 0, "apple": 0, "ubwc": 32 * (W // 16) * (H // 4)}


def _grey(preset, settings=Settings(W, H)):
    return run(_quad(Material("grey", (0.5, 0.5, 0.5, 1.0), unlit=True)), preset, settings)


def _present(f):
    (p,) = [p for p in f.passes if p.kind == "display"]
    assert f.passes[-1] is p                  # the frame's last step
    return p.counters


@pytest.mark.parametrize("preset", sorted(CODEC_PRESETS))
def test_scanout_reads_the_colour_as_stored_where_the_display_can(preset):
    p = get_preset(preset)
    codec = CODEC_PRESETS[preset]
    c = _present(_grey(p))
    assert c["display.scanout.raw"] == RAW
    if codec == "none":
        assert dict(c) == {"display.scanout.bytes": RAW, "display.scanout.raw": RAW}
    elif p.compression.display_reads_compressed.value:
        assert dict(c) == {"display.scanout.bytes": PAYLOAD[codec] + N_BLOCKS * rop_meta_bytes(codec),
                           "display.scanout.raw": RAW}
    else:                                     # GCN's DCC (amd-vega): decompressed first
        assert preset == "amd-vega"
        assert c["comp.decompress.events"] == 1
        assert c["comp.decompress.bytes"] == PAYLOAD["dcc"] + RAW
        assert c["mem.dram.write.color"] == RAW      # the raw blocks stored for scan-out
        assert c["display.scanout.bytes"] == RAW


def test_a_display_that_cannot_read_dcc_costs_the_frame_a_decompress():
    rdna2 = get_preset("amd-rdna2")
    reads = _grey(rdna2)
    cannot = _grey(apply_sets(rdna2, [("comp.display_reads", "false")]))
    assert reads.passes[0].counters == cannot.passes[0].counters      # the render is the same
    extra = cannot.counters.dram_bytes() - reads.counters.dram_bytes()
    assert extra == _present(cannot).dram_bytes() >= RAW
    assert "comp.decompress.events" not in reads.counters
    assert cannot.counters["comp.decompress.events"] == 1
    assert (reads.image == cannot.image).all()


def test_an_imr_presents_its_4x_colour_resolved_raw():
    c = _present(_grey(get_preset("amd-vega"), Settings(W, H, samples=4)))
    assert dict(c) == {"display.scanout.bytes": RAW, "display.scanout.raw": RAW}


def test_the_chain_presents_its_final_surface():
    """The post chain's last pass writes `final` compressed (a pixel-shader pass): RDNA 2's
    display reads it so, Vega's decompresses it first."""
    w, h = 64, 48
    for preset, decompress in (("amd-rdna2", False), ("amd-vega", True)):
        f = run(get_scene("postchain"), get_preset(preset), Settings(w, h))
        c = _present(f)
        assert c["display.scanout.raw"] == w * h * 4
        assert ("comp.decompress.events" in c) == decompress
        assert (c["display.scanout.bytes"] < w * h * 4) != decompress
