"""The `tilesim` command line as a user runs it: a subprocess, exit codes, stderr, files on disk.

Every input error a user can cause must be exit code 2 and exactly one stderr line
`tilesim: error: ...` naming the problem, never a traceback, and must leave no output file (and no
temporary file) behind. Each subprocess imports numba and loads the cached kernels (about a
second); the bad-input cases fail before anything is rendered.
"""
from __future__ import annotations

import csv
import json
import os
import subprocess
from pathlib import Path

import pytest
from PIL import Image

from pipelines.presets import PRESETS
from scenes.library import scene_names
from tests.cli_process import REPO, tilesim

ASSETS = REPO / "assets"
LABELS = {"spec", "measured", "derived", "assumed"}
QUAD_OBJ = "v -1 -1 0\nv 1 -1 0\nv 1 1 0\nv -1 1 0\nf 1 2 3 4\n"   # counter-clockwise seen from +Z
TRIANGLE_OBJ = "v -1 -1 0\nv 1 -1 0\nv 0 1 0\n"


def assert_user_error(proc: subprocess.CompletedProcess, keyword: str) -> None:
    report = f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}"
    assert "Traceback" not in proc.stderr + proc.stdout, report
    assert proc.returncode == 2, report
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].strip(), report
    assert lines[0].startswith("tilesim: error:"), report
    assert keyword.lower() in lines[0].lower(), f"{keyword!r} not named\n{report}"


# --- bad input: one line, exit 2, nothing written ------------------------------------------------

def _write(tmp: Path, name: str, data: str | bytes) -> Path:
    path = tmp / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return path


def _half_of(tmp: Path, asset: str, name: str) -> Path:
    data = (ASSETS / asset).read_bytes()
    return _write(tmp, name, data[:len(data) // 2])


def _render(scene, *extra):
    return ["render", scene, "--res", "32x24", *extra]


# id -> (make(tmp_path) -> argv, keyword the message must contain)
BAD_INPUTS = {
    "unknown-scene": (lambda t: _render("no-such-scene"), "unknown scene"),
    "unknown-preset": (lambda t: _render("triangle", "--preset", "no-such-gpu"), "unknown preset"),
    "res-abc": (lambda t: ["render", "triangle", "--res", "abc"], "--res"),
    "res-0x100": (lambda t: ["render", "triangle", "--res", "0x100"], "out of range"),
    "res-100x0": (lambda t: ["render", "triangle", "--res", "100x0"], "out of range"),
    "res-20000x20000": (lambda t: ["render", "triangle", "--res", "20000x20000"], "out of range"),
    "res-negative": (lambda t: ["render", "triangle", "--res=-5x10"], "out of range"),
    # as typed with a space: a resolution, not an option argparse would miss a value for (issue 30)
    "res-negative-spaced": (lambda t: ["render", "triangle", "--res", "-5x10"], "resolution -5x10 out of range"),
    "camera-malformed": (lambda t: _render("triangle", "--camera", "1,2:3"), "--camera"),
    "camera-eye-is-target": (lambda t: _render("triangle", "--camera", "0,0,0:0,0,0:0,1,0:60"), "eye equals target"),
    "empty-obj": (lambda t: _render(_write(t, "empty.obj", "")), "empty"),
    "empty-ply": (lambda t: _render(_write(t, "empty.ply", "")), "empty"),
    "truncated-ply": (lambda t: _render(_half_of(t, "dragon_res2.ply", "cut.ply")), "PLY"),
    "truncated-glb": (lambda t: _render(_half_of(t, "sponza_lod4.glb", "cut.glb")), "truncated"),
    "obj-nan-vertex": (lambda t: _render(_write(t, "nan.obj", "v nan 0 0\nv 1 -1 0\nv 0 1 0\nf 1 2 3\n")), "NaN"),
    "obj-inf-vertex": (lambda t: _render(_write(t, "inf.obj", TRIANGLE_OBJ + "v 0 -inf 0\nf 1 2 3\n")), "infinite"),
    "obj-face-out-of-range": (lambda t: _render(_write(t, "oor.obj", TRIANGLE_OBJ + "f 1 2 4\n")), "out of range"),
    "obj-no-faces": (lambda t: _render(_write(t, "points.obj", TRIANGLE_OBJ)), "no triangles"),
    "missing-file": (lambda t: _render(t / "missing.obj"), "no such file"),
    "extension-stl": (lambda t: _render(_write(t, "mesh.stl", "solid m\nendsolid m\n")), "unknown mesh format"),
    "extension-txt": (lambda t: _render(_write(t, "mesh.txt", QUAD_OBJ)), "unknown mesh format"),
    "heatmap-unknown-kind": (lambda t: _render("triangle", "--heatmap", f"bogus={t / 'h.png'}"), "--heatmap"),
    "heatmap-no-path": (lambda t: _render("triangle", "--heatmap", "overdraw"), "--heatmap"),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_is_one_line_exit_2_and_writes_nothing(case, tmp_path):
    make, keyword = BAD_INPUTS[case]
    argv = make(tmp_path)
    before = set(os.listdir(tmp_path))
    proc = tilesim(*argv, "-o", tmp_path / "out.png", "--counters", tmp_path / "c.json", cwd=tmp_path)
    assert_user_error(proc, keyword)
    assert not (tmp_path / "out.png").exists()
    assert not (tmp_path / "c.json").exists()
    assert set(os.listdir(tmp_path)) == before      # no temporary file left either


OUTPUTS = {  # one of the render's outputs in a directory that does not exist, or onto a directory
    "png-missing-dir": ["-o", "{missing}/out.png", "--counters", "c.json"],
    "counters-missing-dir": ["-o", "out.png", "--counters", "{missing}/c.json"],
    "heatmap-missing-dir": ["-o", "out.png", "--counters", "c.json", "--heatmap", "overdraw={missing}/od.png"],
    "png-is-a-directory": ["-o", "{dir}", "--counters", "c.json"],
}


@pytest.mark.parametrize("case", list(OUTPUTS))
def test_unwritable_output_is_one_line_exit_2_and_writes_nothing(case, tmp_path):
    (tmp_path / "adir").mkdir()
    before = set(os.listdir(tmp_path))
    args = [a.format(missing=tmp_path / "missing", dir=tmp_path / "adir") for a in OUTPUTS[case]]
    args = [str(tmp_path / a) if a in ("out.png", "c.json") else a for a in args]
    proc = tilesim("render", "triangle", "--res", "32x24", *args, cwd=tmp_path)
    assert_user_error(proc, "cannot write")
    assert set(os.listdir(tmp_path)) == before      # not the outputs that could be written either
    assert os.listdir(tmp_path / "adir") == []


def test_report_unwritable_output_writes_nothing(tmp_path):
    before = set(os.listdir(tmp_path))
    proc = tilesim("report", "triangle", "--preset", "imr-baseline", "--res", "16x16", "-q", "-o",
                   tmp_path / "missing" / "r.csv", cwd=tmp_path)
    assert_user_error(proc, "cannot write")
    assert set(os.listdir(tmp_path)) == before


@pytest.mark.parametrize("argv, keyword", [
    (["report", "triangle", "no-such-scene", "--res", "16x16", "-q"], "unknown scene"),
    (["report", "triangle", "--preset", "imr-baseline,no-such-gpu", "--res", "16x16", "-q"], "unknown preset"),
    (["report", "triangle", "--res", "16x0", "-q"], "out of range"),
    (["report", "triangle", "--preset", ",", "-q"], "name at least one preset"),
    (["report", "triangle", "--fps", "0", "-q"], "--fps"),
    (["report", "triangle", "--format", "pdf", "-q"], "invalid choice"),
    (["report", "missing.obj", "--res", "16x16", "-q"], "no such file"),
    (["report", "triangle", "--camera", "1,2:3", "--res", "16x16", "-q"], "--camera"),
    (["report", "--claims", "--camera", "0,0,0:0,0,0:0,1,0:60", "-q"], "eye equals target"),
    (["report", "triangle", "--rt", "--ray-order", "zigzag", "--res", "16x16", "-q"], "--ray-order"),
    (["report", "triangle", "--rt", "--bvh", "three-level", "--res", "16x16", "-q"], "--bvh"),
], ids=["scene", "preset", "res", "no-preset", "fps", "format", "missing-file", "camera",
        "camera-no-scene", "ray-order", "bvh"])
def test_report_bad_input(argv, keyword, tmp_path):
    proc = tilesim(*argv, "-o", tmp_path / "r.json", cwd=tmp_path)
    assert_user_error(proc, keyword)
    assert os.listdir(tmp_path) == []


# --- good paths ----------------------------------------------------------------------------------

def test_scenes_lists_every_built_in_scene(tmp_path):
    proc = tilesim("scenes", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    listed = [line.split()[0].split(":")[0] for line in proc.stdout.splitlines() if line.strip()]
    assert listed == scene_names()


def test_presets_lists_the_baseline(tmp_path):
    proc = tilesim("presets", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "imr-baseline" in [line.split()[0] for line in proc.stdout.splitlines() if line.strip()]


def test_presets_verbose_labels_every_parameter(tmp_path):
    proc = tilesim("presets", "-v", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    shown: dict[str, dict[str, str]] = {}
    preset = None
    for line in proc.stdout.splitlines():
        if not line.strip():
            continue
        if not line.startswith(" "):
            preset = line.split()[0]
            shown[preset] = {}
            continue
        key, value, label, *source = line.split()
        assert label in LABELS, line
        assert source, f"no source: {line}"
        shown[preset][key] = label
    assert set(shown) == set(PRESETS)
    for name, p in PRESETS.items():
        assert shown[name] == {k: v.label for k, v in p.all_params().items()}


def test_render_triangle_writes_png_counters_and_heatmaps(tmp_path):
    w, h = 64, 48
    proc = tilesim("render", "triangle", "--res", f"{w}x{h}", "-o", "out.png", "--counters", "c.json",
                   "--heatmap", "overdraw=od.png", "--heatmap", "dram=dram.png", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert sorted(os.listdir(tmp_path)) == ["c.json", "dram.png", "od.png", "out.png"]
    for name in ("out.png", "od.png", "dram.png"):
        with Image.open(tmp_path / name) as im:
            im.verify()
        with Image.open(tmp_path / name) as im:
            assert im.format == "PNG" and im.size == (w, h), name
    data = json.loads((tmp_path / "c.json").read_text())
    assert (data["scene"], data["preset"], data["width"], data["height"]) == ("triangle", "imr-baseline", w, h)
    counters = data["counters"]
    assert counters["raster.shaded"] > 0
    # the colour surface (RGBA8) is cleared on chip and stored once at the end of the frame
    assert counters["mem.dram.write.color"] == w * h * 4
    with Image.open(tmp_path / "out.png") as im:
        rgba = im.convert("RGBA")
        assert rgba.getpixel((w // 2, h // 2)) != rgba.getpixel((0, 0))   # the triangle is there


def test_render_obj_file_with_camera(tmp_path):
    obj = _write(tmp_path, "quad.obj", QUAD_OBJ)
    proc = tilesim("render", obj, "--camera", "0,0,3:0,0,0:0,1,0:60", "--res", "32x24", "-o", "out.png",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    with Image.open(tmp_path / "out.png") as im:
        assert im.size == (32, 24)
        rgba = im.convert("RGBA")
        # at distance 3 with fovy 60 the 2 x 2 quad covers the middle, not the corners
        assert rgba.getpixel((16, 12)) != rgba.getpixel((0, 0))


def test_report_takes_mesh_files_and_a_camera(tmp_path):
    obj = _write(tmp_path, "quad.obj", QUAD_OBJ)
    proc = tilesim("report", obj, "--preset", "imr-baseline", "--camera", "0,0,3:0,0,0:0,1,0:60",
                   "--res", "32x24", "--format", "csv", "-q", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    rows = list(csv.DictReader(proc.stdout.splitlines()))
    assert [(r["scene"], r["preset"]) for r in rows] == [("quad", "imr-baseline")]
    assert int(rows[0]["shaded"]) > 0           # the quad is in view, not clipped away
