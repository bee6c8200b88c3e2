"""Presets: one typed record of sourced parameters per feature, read one way
(`preset.<record>.<name>.value`); a misspelt name raises, everywhere a name is given."""
from __future__ import annotations

import dataclasses

import pytest

from pipelines.presets import AMD_RDNA2, APPLE_M3, IMR_BASELINE, PRESETS, Param, PresetError, get_preset
from pipelines.presets import compression, frontend, rt
from pipelines.presets.params import MemoryParams, Record, TilerParams
from pipelines.presets.preset import RECORDS, Preset
from renderer.bvh.layouts import BVH8_PRIM_TRIS

LABELS = ("spec", "measured", "derived", "assumed")


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_parameter_has_a_source_and_a_label(name):
    p = PRESETS[name]
    params = p.all_params()
    assert params
    for key, v in params.items():
        assert isinstance(v, Param) and v.source and v.label in LABELS, (name, key)
    # the records an architecture reads, and no other
    assert (p.raster is not None) == (p.architecture in ("imr", "dsbr"))
    assert (p.binning is not None) == (p.architecture == "dsbr")
    assert (p.tiler is not None) == (p.architecture == "tbdr")
    for feature, record in p.records():
        assert isinstance(record, RECORDS[feature])


def test_one_lookup_style_reads_the_param():
    assert APPLE_M3.tiler.tile_px.value == 32 and APPLE_M3.tiler.tile_px.label == "spec"
    assert AMD_RDNA2.memory.llc_bytes.value == 128 << 20
    assert IMR_BASELINE.memory.llc_bytes is None                # no Infinity Cache: no unit
    assert IMR_BASELINE.raster.hiz.value is False and IMR_BASELINE.raster.hiz.source   # sourced default
    assert get_preset("arm-mali").tiler.hsr.value is False and APPLE_M3.tiler.hsr.value is True
    assert AMD_RDNA2.frontend.as_dict()["frontend"] == "ngg"


def test_a_misspelt_parameter_name_raises():
    with pytest.raises(AttributeError):
        APPLE_M3.tiler.tile_pixels                               # noqa: B018
    with pytest.raises(AttributeError):
        AMD_RDNA2.memory.l2_byte                                 # noqa: B018
    with pytest.raises(TypeError):                              # the old flat lookup is gone
        APPLE_M3["tile_px"]                                      # noqa: B018
    with pytest.raises(PresetError, match="tile_pixels"):
        APPLE_M3.with_params(tile_pixels=Param(16, "test", "assumed"))
    with pytest.raises(PresetError, match="binning"):           # not a TBDR parameter
        APPLE_M3.with_params(binning=Param(True, "test", "assumed"))
    with pytest.raises(PresetError, match="l2_byte"):           # a table with a misspelt key
        Preset.of("x", "imr", "", {**dict(IMR_BASELINE.memory.items()), "l2_byte": Param(1, "t", "assumed")},
                  IMR_BASELINE.frontend, IMR_BASELINE.compression, IMR_BASELINE.rt, IMR_BASELINE.texture)
    with pytest.raises(PresetError):
        TilerParams.of({"tile_px": Param(32, "t", "assumed"), "tile_size": Param(32, "t", "assumed")})


def test_with_params_changes_one_record_and_keeps_the_rest():
    small = APPLE_M3.with_params(tile_px=Param(16, "test", "assumed"))
    assert small.tiler.tile_px.value == 16 and small.tiler.tile_memory_bytes == APPLE_M3.tiler.tile_memory_bytes
    assert small.memory is APPLE_M3.memory and APPLE_M3.tiler.tile_px.value == 32
    no_llc = AMD_RDNA2.with_params(llc_bytes=None, llc_ways=None)
    assert no_llc.memory.llc_bytes is None and "llc_bytes" not in no_llc.all_params()
    assert [c.name for c in no_llc.memory.config().caches] == ["rop_color", "rop_depth", "l2"]


def test_memory_configs():
    assert [c.name for c in APPLE_M3.memory.config().caches] == ["param", "l2", "llc"]   # GPU L2, SLC
    assert [c.name for c in get_preset("apple-a11").memory.config().caches] == ["param", "l2"]
    assert [c.name for c in AMD_RDNA2.memory.config().caches] == ["rop_color", "rop_depth", "l2", "llc"]
    assert get_preset("amd-gcn").memory.config().below == (-1, -1, -1)      # RBs beside L2
    assert IMR_BASELINE.memory.config().below != (-1, -1, -1)


def test_feature_tables_are_records_and_merged_once():
    for module, cls in ((frontend, frontend.FrontendParams), (compression, compression.CompressionParams),
                        (rt, rt.RTParams)):
        for name, record in module.PARAMS.items():
            assert isinstance(record, cls) and isinstance(record, Record) and name in PRESETS
    for name, p in PRESETS.items():
        assert p.frontend is frontend.PARAMS[name]
        assert p.compression is compression.PARAMS.get(name, compression.NONE)
        assert (p.rt is rt.PARAMS[name]) if name in rt.PARAMS else p.rt.rt_params_from.value == "amd-rdna3"
    assert get_preset("imr-baseline").compression.codec.value == "none"


def test_defaults_match_the_code_they_stand_for():
    assert rt.RTParams.__dataclass_fields__["rt_prim_tris"].default.value == BVH8_PRIM_TRIS
    from pipelines.arch.dsbr import MIN_BIN
    assert AMD_RDNA2.binning.min_bin_height.value == MIN_BIN[1]
    assert get_preset("amd-rdna4").binning.min_bin_height.value == 128


def test_records_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        APPLE_M3.tiler.tile_px = Param(16, "t", "assumed")
    assert isinstance(APPLE_M3.memory, MemoryParams)


def test_unknown_preset_raises():
    with pytest.raises(PresetError, match="unknown preset"):
        get_preset("apple-m4")
