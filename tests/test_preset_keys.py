"""Presets from the command line and from files (issue 26): `--set KEY=VALUE` and preset files
change exactly the parameter named, labelled `user`; the counters move the way the parameter
says; every bad input is one line, exit 2, nothing written."""
from __future__ import annotations

import json

import jsonschema
import pytest

from pipelines.commands.report import SCHEMA_PATH
from pipelines.frame import Settings, run
from pipelines.presets import PRESETS, get_preset
from pipelines.presets.files import example_files, load_file, preset_hash, resolve
from pipelines.presets.keys import KEYS, NOT_KEYS, all_keys, apply_sets, parse_set
from pipelines.presets.preset import RECORDS
from renderer.formats import PARAM_PRIMITIVE, PARAM_VERTEX, TILE_LIST_ENTRY
from tests.test_hostile_input import assert_one_line, run_cli


def changed(a, b) -> dict:
    pa, pb = a.all_params(), b.all_params()
    return {k: (pa.get(k), pb.get(k)) for k in pa.keys() | pb.keys() if pa.get(k) != pb.get(k)}


def test_every_record_field_has_one_key():
    keys = all_keys()
    fields = {(r, f) for r, cls in RECORDS.items() for f in cls.names()} - NOT_KEYS
    assert {(k.record, k.field) for k in keys.values()} == fields
    assert len({(k.record, k.field) for k in KEYS}) == len(KEYS)


@pytest.mark.parametrize("preset,text,field,value", [
    ("amd-rdna2", "l2.size=8MiB", "l2_bytes", 8 << 20),
    ("amd-rdna2", "dram.bandwidth=1.5TB/s", "dram_gbps", 1500.0),
    ("amd-rdna2", "dsbr.bin=128x64", "bin_size", "128x64"),
    ("apple-m3", "tbdr.tile=16px", "tile_px", 16),
    ("apple-m3", "tbdr.param_buffer=512KB", "param_buffer_bytes", 512_000),
    ("amd-rdna1", "raster.hiz=off", "hiz", False),
    ("arm-mali", "comp.codec=none", "codec", "none"),
    ("amd-rdna4", "rt.stack=8", "rt_stack_entries", 8),
])
def test_set_changes_exactly_the_named_parameter(preset, text, field, value):
    base = get_preset(preset)
    p = apply_sets(base, [parse_set(text)])
    diff = changed(base, p)
    assert list(diff) == [field], diff
    new = diff[field][1]
    assert new.value == value and new.label == "user" and text.split("=")[0] in new.source
    assert p.name.startswith(preset) and preset_hash(p) != preset_hash(base)


def test_preset_file_changes_exactly_its_keys(tmp_path):
    f = tmp_path / "mine.toml"
    f.write_text('name = "mine"\nbase = "apple-m3"\ndescription = "d"\n[set]\n'
                 'tbdr.tile = 16\n"l2.size" = { value = "4MiB", label = "assumed", source = "a guess" }\n')
    p = load_file(f)
    diff = changed(get_preset("apple-m3"), p)
    assert set(diff) == {"tile_px", "l2_bytes"}
    assert p.tiler.tile_px.label == "user" and "mine.toml" in p.tiler.tile_px.source
    assert p.memory.l2_bytes.label == "assumed" and "a guess" in p.memory.l2_bytes.source
    assert (p.name, p.description) == ("mine", "d")
    # --set on top of a file: one more parameter, labelled user
    q = resolve(str(f), [parse_set("tbdr.hsr=false")])
    assert set(changed(p, q)) == {"hsr"} and q.tiler.hsr.label == "user"


def test_shipped_preset_files_label_every_value():
    files = example_files()
    assert "nvidia-tiled" in files
    for name, path in files.items():
        p = resolve(name)
        assert p.name == name
        for k, v in p.all_params().items():
            assert v.source and v.label in ("spec", "measured", "derived", "assumed", "user"), (name, k)
    nv = resolve("nvidia-tiled")
    base = PRESETS["amd-rdna1"]
    for k, (_, new) in changed(base, nv).items():
        # every value the NVIDIA file sets is sourced there and labelled (none left as "user")
        assert new.label in ("spec", "measured", "derived", "assumed") and "nvidia-tiled.toml" in new.source, k
    assert nv.architecture == "dsbr" and nv.binning.bin_size.value == "64x64"


def _dram(preset, scene="sponza", res=(320, 180)):
    return run(scene, preset, Settings(*res)).counters.dram_bytes()


@pytest.mark.parametrize("preset", ["amd-rdna1", "apple-m3"])
def test_a_larger_l2_never_raises_dram_bytes(preset):
    sizes = ["128KiB", "256KiB", "512KiB", "1MiB", "2MiB", "4MiB"]
    dram = [_dram(apply_sets(get_preset(preset), [("l2.size", s)])) for s in sizes]
    assert all(b <= a for a, b in zip(dram, dram[1:])), dict(zip(sizes, dram))
    assert dram[-1] < dram[0], dict(zip(sizes, dram))       # and the L2 matters on this frame


@pytest.mark.parametrize("side", [64, 128])
def test_tbdr_tiles_change_parameter_buffer_entries_as_the_arithmetic_says(side):
    """The full-screen quad's two triangles share the anti-diagonal. At tile t, n = side / t
    tiles a side: each of the n*n tiles lists the triangle that covers it, the n tiles the
    diagonal crosses list the other too, and the n - 1 tiles whose corner the diagonal touches
    list it as well (the exact triangle-tile test is closed): n*n + 2n - 1 entries. Vertices
    and primitives do not depend on the tile."""
    fixed = 4 * PARAM_VERTEX.itemsize + 2 * PARAM_PRIMITIVE.itemsize
    for t in (16, 32):
        p = apply_sets(get_preset("apple-m3"), [("tbdr.tile", t)])
        c = run("quad", p, Settings(side, side)).counters
        n = side // t
        assert c["tile.tiles"] == n * n
        assert c["tile.param_bytes"] == fixed + (n * n + 2 * n - 1) * TILE_LIST_ENTRY.itemsize, t


def test_fixed_dsbr_bin_reaches_the_binner():
    p = apply_sets(get_preset("amd-rdna2"), [("dsbr.bin", "128x256")])
    c = run("quad", p, Settings(256, 256)).counters
    assert (c["dsbr.bin_width"], c["dsbr.bin_height"]) == (128, 256)


def test_user_label_in_presets_listing_report_and_json(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    rc, out, err = run_cli(capsys, "presets", "amd-rdna2", "-v", "--set", "l2.size=8MiB")
    assert rc == 0, err
    line = next(ln for ln in out.splitlines() if "l2_bytes" in ln)
    assert "user" in line and "--set l2.size=8MiB" in line
    rc, out, err = run_cli(capsys, "report", "quad", "--res", "32x32", "--preset", "amd-rdna2",
                           "--set", "l2.size=8MiB", "-q")
    assert rc == 0 and "l2.size = 8MiB (user: --set l2.size=8MiB)" in out, out + err
    rc, out, err = run_cli(capsys, "report", "quad", "--res", "32x32", "--preset", "amd-rdna2",
                           "--set", "l2.size=8MiB", "-q", "-o", "r.json")
    assert rc == 0, err
    doc = json.loads((tmp_path / "r.json").read_text())
    jsonschema.validate(doc, json.loads(SCHEMA_PATH.read_text()))
    assert doc["presets"][0]["params"]["l2_bytes"] == {"value": 8 << 20, "source": "--set l2.size=8MiB",
                                                       "label": "user"}
    assert doc["rows"][0]["preset"] == "amd-rdna2[l2.size=8MiB]"


def test_presets_keys_lists_every_key(capsys):
    rc, out, _ = run_cli(capsys, "presets", "--keys")
    assert rc == 0
    listed = {ln.split()[0] for ln in out.splitlines()[1:]}
    assert listed == set(all_keys())
    assert any(ln.startswith("l2.size") and "B" in ln and "16KiB..1GiB" in ln for ln in out.splitlines())


BAD_FILES = {
    "broken.toml": "name = \"x\"\nbase = [",
    "nobase.toml": "name = \"x\"\nbase = \"amd-rdna9\"\n",
    "badkey.toml": "name = \"x\"\nbase = \"amd-rdna2\"\n[set]\nl2.sise = \"8MiB\"\n",
    "badfield.toml": "name = \"x\"\nbase = \"amd-rdna2\"\nsett = 1\n",
    "nolabel.toml": "name = \"x\"\nbase = \"amd-rdna2\"\n[set]\n\"l2.size\" = { value = \"8MiB\", label = \"spec\" }\n",
    "sweep.toml": "scenes = [\"quad\"]\npresets = [\"amd-rdna2\"]\n[grid]\n\"l2.size\" = [\"8MiB\", \"8GB/s\"]\n",
    "sweep2.toml": "scenes = [\"quad\"]\npresets = [\"amd-rdna2\"]\n[grid]\n\"tbdr.tile\" = [16]\n",
    "sweep3.toml": "scenes = [\"quad\"]\npresets = [\"amd-rdna2\"]\n[zip]\n\"l2.size\" = [\"8MiB\"]\n\"l2.ways\" = [8, 16]\n",
}


@pytest.mark.parametrize("argv,match", [
    (["render", "quad", "--set", "l2.sise=8MiB"], "did you mean l2.size?"),
    (["render", "quad", "--set", "l2.size=8GB/s"], "l2.size=8GB/s: expected"),
    (["render", "quad", "--set", "dram.bandwidth=fast"], "expected a bandwidth"),
    (["render", "quad", "--set", "l2.size=1KiB"], "out of range"),
    (["render", "quad", "--set", "l2.ways=0"], "out of range"),
    (["render", "quad", "--set", "dsbr.bin=100x100", "--preset", "amd-rdna2"], "dsbr.bin=100x100: out of range"),
    (["render", "quad", "--set", "l2.size"], "expected KEY=VALUE"),
    (["render", "quad", "--set", "tbdr.tile=16", "--preset", "amd-rdna2"], "has no such parameter"),
    (["render", "quad", "--set", "rop.color.ways=64", "--set", "rop.color.size=4KiB"], "cannot hold"),
    (["render", "quad", "--preset", "broken.toml"], "not valid TOML"),
    (["render", "quad", "--preset", "missing.toml"], "no such file"),
    (["render", "quad", "--preset", "nobase.toml"], "unknown preset 'amd-rdna9'"),
    (["render", "quad", "--preset", "badkey.toml"], "did you mean l2.size?"),
    (["render", "quad", "--preset", "badfield.toml"], "did you mean set?"),
    (["render", "quad", "--preset", "nolabel.toml"], "needs its source"),
    (["render", "quad", "--preset", "amd-rdan2"], "did you mean amd-rdna2?"),
    (["report", "quad", "--preset", "amd-rdna2,broken.toml"], "not valid TOML"),
    (["view", "quad", "--set", "l2.sise=1MiB"], "did you mean l2.size?"),
    (["presets", "--set", "l2.size=huge"], "l2.size=huge"),
    (["sweep", "sweep.toml"], "l2.size=8GB/s"),
    (["sweep", "sweep2.toml"], "none of the presets has this parameter"),
    (["sweep", "sweep3.toml"], "[zip] lists differ in length"),
    (["sweep", "broken.toml"], "not valid TOML"),
    (["sweep", "sweep.toml", "--set", "l2.sise=1MiB"], "did you mean l2.size?"),
])
def test_bad_preset_input_is_one_line_exit_2_nothing_written(tmp_path, capsys, monkeypatch, argv, match):
    for name, text in BAD_FILES.items():
        (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    out = [] if argv[0] in ("presets", "view", "sweep") else ["-o", "out.png"]
    if argv[0] == "report":
        out = ["-o", "out.json"]
    assert_one_line(*run_cli(capsys, *argv, *out), match)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(BAD_FILES)
