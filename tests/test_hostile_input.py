"""Hostile input (issue 30): malformed, truncated, oversized and path-escaping models, images and
options must end in one `tilesim: error:` line and exit 2 — no traceback, no warning before it,
no file written, and nothing outside the model's folder opened or even stat'ed.

The fuzz families run in-process (the loaders, and `cli.main` for the commands) under
hypothesis with a fixed seed: FUZZ_EXAMPLES cases each (a few hundred in all; set the
environment variable TILESIM_FUZZ_EXAMPLES to run more). A few representative cases go through
a real subprocess, as a user runs it (each costs a numba start-up, 2-3 s).
"""
from __future__ import annotations

import io
import json
import os
import re
import struct
import subprocess
import sys
import threading
import warnings
import zlib
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PIL import Image

from pipelines.commands import cli
from scenes.loaders import load_mesh_file
from scenes.model import SceneError
from tests.cli_process import child_env, tilesim

FUZZ_EXAMPLES = int(os.environ.get("TILESIM_FUZZ_EXAMPLES", "100"))
FUZZ = settings(max_examples=FUZZ_EXAMPLES, derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))
TRI = "v 0 0 0\nv 1 0 0\nv 0 1 0\n"
UV = "vt 0 0\nvt 1 0\nvt 0 1\n"


# --- the watch on the canary folder -------------------------------------------------------------

class Canary:
    """A folder beside the model's that no load may touch: os.stat, os.lstat and every open
    (Python's audit event, which builtins.open, os.open and PIL's opens raise) are watched."""

    def __init__(self, root: Path):
        self.root = root
        self.root.mkdir(exist_ok=True)
        (root / "secret.mtl").write_text("newmtl LEAKED\nmap_Kd LEAKED.png\n")
        (root / "secret.bin").write_bytes(b"\0" * 64)
        png = io.BytesIO()
        Image.fromarray(np.zeros((2, 2, 4), np.uint8)).save(png, "PNG")
        (root / "secret.png").write_bytes(png.getvalue())
        self.real = os.path.realpath(root)
        self.touched: list[str] = []

    def hit(self, path) -> None:
        try:
            p = os.fsdecode(path) if not isinstance(path, int) else ""
        except TypeError:
            return
        if p and (p.startswith(str(self.root)) or os.path.abspath(p).startswith(self.real)):
            self.touched.append(p)


_WATCHING: list[Canary] = []
_LOCAL = threading.local()


def _audit(event, args):
    if _WATCHING and event == "open" and not getattr(_LOCAL, "busy", False):
        _LOCAL.busy = True
        try:
            _WATCHING[-1].hit(args[0])
        finally:
            _LOCAL.busy = False


sys.addaudithook(_audit)


@contextmanager
def watched(canary: Canary, monkeypatch):
    stat, lstat = os.stat, os.lstat

    def watch(real):
        def f(path, *a, **kw):
            canary.hit(path)
            return real(path, *a, **kw)
        return f
    monkeypatch.setattr(os, "stat", watch(stat))
    monkeypatch.setattr(os, "lstat", watch(lstat))
    _WATCHING.append(canary)
    try:
        yield canary
    finally:
        _WATCHING.pop()
        monkeypatch.setattr(os, "stat", stat)
        monkeypatch.setattr(os, "lstat", lstat)


@pytest.fixture
def folders(tmp_path_factory):
    base = tmp_path_factory.mktemp("hostile")
    model = base / "model"
    model.mkdir()
    canary = Canary(base / "canary")
    os.symlink(canary.root, model / "escape")               # a link inside pointing outside
    os.symlink(canary.root / "secret.mtl", model / "linked.mtl")
    return model, canary


def refused_cleanly(path: Path, **kw) -> str | None:
    """Load `path`: fine, or one SceneError line; never another exception, never a warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            load_mesh_file(path, **kw)
        except SceneError as e:
            msg = str(e)
            assert "\n" not in msg and msg.startswith(str(path)), msg
            assert "LEAKED" not in msg, msg                     # nothing read outside shows
            return msg
    return None


# --- fuzz: glTF JSON shapes ---------------------------------------------------------------------

def gltf_doc() -> dict:
    return {"asset": {"version": "2.0"}, "buffers": [{"uri": "x.bin", "byteLength": 48}],
            "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 36},
                            {"buffer": 0, "byteOffset": 36, "byteLength": 12}],
            "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                           "min": [0, 0, 0], "max": [1, 1, 0]},
                          {"bufferView": 1, "componentType": 5125, "count": 3, "type": "SCALAR"}],
            "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1}]}],
            "nodes": [{"mesh": 0, "children": [1]}, {"camera": 0, "translation": [0, 0, 3]}],
            "cameras": [{"type": "perspective", "perspective": {"yfov": 1.0, "znear": 0.1}}],
            "scenes": [{"nodes": [0]}], "scene": 0}


def write_bin(folder: Path) -> None:
    (folder / "x.bin").write_bytes(np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], np.float32).tobytes()
                                   + np.arange(3, dtype=np.uint32).tobytes())


def paths_in(doc, trail=()):
    yield trail
    items = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    for k, v in items:
        yield from paths_in(v, (*trail, k))


PATHS = [p for p in paths_in(gltf_doc()) if p]
NUMBERS = st.one_of(st.integers(-2**40, 2**40), st.sampled_from([0, -1, -3, 1e39, 1e300, -0.0, 2.5, 1e-300]))
ESCAPES = st.sampled_from(["../canary/secret.bin", "%2e%2e/canary/secret.bin", "escape/secret.bin",
                           "file:///etc/shadow", "/etc/passwd", "..%2Fcanary%2Fsecret.png",
                           "escape/../escape/secret.png", "http://example.com/x.bin"])
JSON = st.recursive(st.one_of(st.none(), st.booleans(), NUMBERS, st.text(max_size=6), ESCAPES),
                    lambda kids: st.one_of(st.lists(kids, max_size=4),
                                           st.dictionaries(st.sampled_from(["uri", "nodes", "mesh", "a"]),
                                                           kids, max_size=3)),
                    max_leaves=8)


def set_at(doc, path, value):
    for k in path[:-1]:
        doc = doc[k]
    doc[path[-1]] = value


@FUZZ
@given(edits=st.lists(st.tuples(st.sampled_from(PATHS), JSON), min_size=1, max_size=3))
def test_fuzz_gltf_shapes(folders, monkeypatch, edits):
    model, canary = folders
    write_bin(model)
    doc = gltf_doc()
    for path, value in edits:
        try:
            set_at(doc, path, value)
        except (KeyError, IndexError, TypeError):
            pass                                        # an earlier edit removed the place
    (model / "f.gltf").write_text(json.dumps(doc))
    with watched(canary, monkeypatch):
        refused_cleanly(model / "f.gltf")
    assert canary.touched == []


# --- fuzz: OBJ lines, MTL paths, PLY headers, truncations ---------------------------------------

OBJ_LINE = st.one_of(
    st.builds(lambda ws, xs: f"{ws}v {' '.join(map(str, xs))}", st.sampled_from(["", " ", "\t"]),
              st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True), NUMBERS), max_size=4)),
    st.builds(lambda ws, ix: f"{ws}f {' '.join(ix)}", st.sampled_from(["", " ", "\t  "]),
              st.lists(st.sampled_from(["1", "2", "3", "0", "-1", "-9", "1/1", "2//1", "x", "3/1/1", "99"]),
                       max_size=5)),
    st.builds(lambda p: f"mtllib {p}", st.sampled_from(["../canary/secret.mtl", "/etc/passwd", "linked.mtl",
                                                          "escape/secret.mtl", "m.mtl", "%2e%2e/x.mtl"])),
    st.sampled_from(["usemtl a", "# comment", "vt 0 0", "vn 0 0 1", "o thing", "", "s off"]),
)
MTL_TEXTURE = st.sampled_from(["../canary/secret.png", "escape/secret.png", "/etc/passwd", "ok.png",
                               "bad.png", "bomb.png", "trunc.png", "missing.png"])


def png_with_header(w: int, h: int) -> bytes:
    """A PNG whose IHDR claims w x h but whose data is empty: a decompression bomb's header."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b""))


def write_images(folder: Path) -> None:
    png = io.BytesIO()
    Image.fromarray(np.full((8, 8, 4), 200, np.uint8)).save(png, "PNG")
    (folder / "ok.png").write_bytes(png.getvalue())
    (folder / "trunc.png").write_bytes(png.getvalue()[:len(png.getvalue()) // 2])
    (folder / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x07" * 40)
    (folder / "bomb.png").write_bytes(png_with_header(100_000, 100_000))


@FUZZ
@given(lines=st.lists(OBJ_LINE, max_size=12), texture=MTL_TEXTURE, cut=st.integers(0, 400),
       do_cut=st.booleans())
def test_fuzz_obj(folders, monkeypatch, lines, texture, cut, do_cut):
    model, canary = folders
    write_images(model)
    (model / "m.mtl").write_text(f"newmtl a\nKd 1 1 1\nmap_Kd {texture}\n")
    text = TRI + UV + "usemtl a\n" + "\n".join(lines) + "\nf 1/1 2/2 3/3\n"
    (model / "f.obj").write_text(text[:cut] if do_cut else text)
    with watched(canary, monkeypatch):
        refused_cleanly(model / "f.obj")
    assert canary.touched == []


PLY_PROPS = "property float x\nproperty float y\nproperty float z\n"


@FUZZ
@given(n_v=st.integers(-2, 2**40), n_f=st.integers(-2, 9), fmt=st.sampled_from(["ascii", "binary_little_endian",
                                                                                 "utf16", "nonsense"]),
       value=st.one_of(st.floats(allow_nan=True, allow_infinity=True), NUMBERS), cut=st.integers(0, 300))
def test_fuzz_ply(folders, n_v, n_f, fmt, value, cut):
    model, _ = folders
    head = (f"ply\nformat {fmt} 1.0\nelement vertex {n_v}\n{PLY_PROPS}"
            f"element face {n_f}\nproperty list uchar int vertex_indices\nend_header\n")
    with np.errstate(all="ignore"):           # 1e39 as float32 is inf: on purpose
        body = f"0 0 0\n1 0 {value}\n0 1 0\n3 0 1 2\n" if fmt != "binary_little_endian" else (
            np.array([[0, 0, 0], [1, 0, value], [0, 1, 0]], np.float64).astype("<f4").tobytes().decode("latin-1")
            + "\x03" + np.array([0, 1, 2], "<i4").tobytes().decode("latin-1"))
    data = (head + body).encode("latin-1")
    (model / "f.ply").write_bytes(data[:cut] if cut < len(data) else data)
    refused_cleanly(model / "f.ply")


@FUZZ
@given(offset=st.integers(0, 10_000), flips=st.lists(st.integers(0, 255), min_size=1, max_size=8),
       truncate=st.booleans())
def test_fuzz_corrupt_textures(folders, offset, flips, truncate):
    """A PNG texture with bytes changed or cut, through OBJ map_Kd and glTF images."""
    model, _ = folders
    png = io.BytesIO()
    Image.fromarray(np.arange(32 * 32 * 4, dtype=np.uint8).reshape(32, 32, 4)).save(png, "PNG")
    data = bytearray(png.getvalue())
    at = offset % len(data)
    if truncate:
        data = data[:at]
    else:
        for i, b in enumerate(flips):
            data[(at + i) % len(data)] = b
    (model / "t.png").write_bytes(bytes(data))
    (model / "m.mtl").write_text("newmtl a\nmap_Kd t.png\n")
    (model / "f.obj").write_text("mtllib m.mtl\n" + TRI + UV + "usemtl a\nf 1/1 2/2 3/3\n")
    refused_cleanly(model / "f.obj")
    write_bin(model)
    doc = gltf_doc()
    doc.update(images=[{"uri": "t.png"}], textures=[{"source": 0}],
               materials=[{"pbrMetallicRoughness": {"baseColorTexture": {"index": 0}}}])
    doc["meshes"][0]["primitives"][0]["material"] = 0
    (model / "f.gltf").write_text(json.dumps(doc))
    refused_cleanly(model / "f.gltf")


# --- the path forms, one by one -----------------------------------------------------------------

@pytest.mark.parametrize("form", ["../canary/secret.mtl", "%2e%2e/canary/secret.mtl", "linked.mtl",
                                  "escape/secret.mtl", "escape/../../canary/secret.mtl", "ABS"])
def test_mtllib_outside_is_refused_untouched(folders, monkeypatch, form):
    model, canary = folders
    form = str(canary.root / "secret.mtl") if form == "ABS" else form
    (model / "f.obj").write_text(f"mtllib {form}\n{TRI}f 1 2 3\n")
    with watched(canary, monkeypatch):
        msg = refused_cleanly(model / "f.obj")
    assert canary.touched == []
    if "%2e" not in form:   # OBJ names are plain paths: '%2e%2e' is a folder of that name, missing
        assert msg.endswith("leaves the model's folder (--allow-outside permits it)"), msg
    if "%" not in form and not form.startswith("escape/.."):   # allowed: read, its texture shows
        with pytest.raises(SceneError, match="LEAKED.png"):
            load_mesh_file(model / "f.obj", allow_outside=True)


@pytest.mark.parametrize("uri", ["../canary/secret.bin", "%2e%2e/canary/secret.bin", "escape/secret.bin",
                                 "file://CANARY/secret.bin", "CANARY/secret.bin", "escape%2Fsecret.bin"])
def test_gltf_uris_outside_are_refused_untouched(folders, monkeypatch, uri):
    model, canary = folders
    uri = uri.replace("CANARY", str(canary.root))
    write_bin(model)
    for key in ("buffers", "images"):
        doc = gltf_doc()
        if key == "buffers":
            doc["buffers"][0]["uri"] = uri
        else:
            doc["images"] = [{"uri": uri}]
        (model / "f.gltf").write_text(json.dumps(doc))
        with watched(canary, monkeypatch):
            msg = refused_cleanly(model / "f.gltf")
        assert canary.touched == [] and "leaves the model's folder" in msg, msg


def test_links_inside_the_folder_are_followed(folders):
    model, _ = folders
    (model / "real.obj").write_text(TRI + "f 1 2 3\n")
    (model / "sub").mkdir()
    os.symlink("../real.obj", model / "sub" / "alias.obj")
    (model / "m.mtl").write_text("newmtl a\n")
    os.symlink("m.mtl", model / "inner.mtl")
    (model / "f.obj").write_text("mtllib inner.mtl\n" + TRI + "usemtl a\nf 1 2 3\n")
    assert load_mesh_file(model / "f.obj").n_triangles == 1


# --- the issue's cases, named -------------------------------------------------------------------

@pytest.mark.parametrize("edit,match", [
    (lambda d: d.update(asset="2.0"), "not a glTF 2.0"),
    (lambda d: d.update(extensionsRequired=5), "extensionsRequired"),
    (lambda d: d.update(buffers={"a": 1}), "buffers"),
    (lambda d: d["buffers"][0].update(uri=5), r"buffers\[0\].uri"),
    (lambda d: d.update(nodes=["abc"]), r"nodes\[0\]"),
    (lambda d: d.update(scenes=[[0]]), r"scenes\[0\]"),
    (lambda d: d["meshes"][0].update(primitives=[7]), "primitives"),
    (lambda d: d["nodes"][0].update(matrix=[1] * 15), "matrix"),
    (lambda d: d["nodes"][0].update(rotation=[0, 0, 1]), "rotation"),
    (lambda d: d["nodes"][0].update(scale=["a", "b", "c"]), "scale"),
    (lambda d: d["accessors"][1].update(count=-3), "count"),
    (lambda d: d["bufferViews"][1].update(byteOffset=-48), "byteOffset"),
    (lambda d: d["bufferViews"][0].update(byteStride=4), "byteStride"),
    (lambda d: d["nodes"][1].update(children=[0]), "cycle"),
    (lambda d: d["nodes"][0].update(children=[0]), "its own child"),
    (lambda d: d["nodes"][0].update(scale=[1e300, 1e300, 1e300]), "beyond"),
    (lambda d: d["nodes"][1].update(scale=[0, 0, 0]), "camera node"),
])
def test_gltf_issue_cases(folders, edit, match):
    model, _ = folders
    write_bin(model)
    doc = gltf_doc()
    edit(doc)
    (model / "f.gltf").write_text(json.dumps(doc))
    msg = refused_cleanly(model / "f.gltf")
    assert msg and re.search(match, msg), msg


def test_gltf_nan_and_infinity_are_not_json(folders):
    model, _ = folders
    write_bin(model)
    for bad in ("NaN", "Infinity", "1e999"):
        (model / "f.gltf").write_text(json.dumps(gltf_doc()).replace('"translation": [0, 0, 3]',
                                                                    f'"translation": [{bad}, 0, 3]'))
        assert "not a JSON number" in refused_cleanly(model / "f.gltf") or "out of range" in \
            refused_cleanly(model / "f.gltf")


@pytest.mark.parametrize("text,match", [
    (TRI + " f 0 1 2\n", "face index 0"),                       # indented: parsed, then refused
    (TRI + "f 1 2 3\nf 1 2 3", "ends inside this face line"),   # cut in the last face
    (TRI + "f 1/1/1 2/2/2 3/3\n", "different forms"),
    ("v 1e39 0 0\n" + TRI + "f 1 2 3\n", "beyond"),
    ("v 1e308 0 0\n" + TRI + "f 1 2 3\n", "beyond"),
])
def test_obj_issue_cases(folders, text, match):
    model, _ = folders
    (model / "f.obj").write_text(text)
    with pytest.raises(SceneError, match=match):
        load_mesh_file(model / "f.obj")


def test_obj_indented_lines_load(folders):
    model, _ = folders
    (model / "f.obj").write_text("  v 0 0 0\n\tv 1 0 0\n v 0 1 0\n   f 1 2 3\n")
    assert load_mesh_file(model / "f.obj").n_triangles == 1


@pytest.mark.parametrize("data", [("v 0 0 0\n" * 3 + "f 1 2 3\n").encode("utf-16"), bytes(range(256)) * 4])
def test_obj_not_text(folders, data):
    model, _ = folders
    (model / "f.obj").write_bytes(data)
    assert "not a text file" in refused_cleanly(model / "f.obj")


def test_texture_bombs_and_sizes(folders):
    model, _ = folders
    obj = "mtllib m.mtl\n" + TRI + UV + "usemtl a\nf 1/1 2/2 3/3\n"
    (model / "f.obj").write_text(obj)
    for w, h, match in ((100_000, 100_000, "decompression-bomb"), (20_000, 100, "16384 a side"),
                        (13_000, 13_000, "decompression-bomb")):
        (model / "t.png").write_bytes(png_with_header(w, h))
        (model / "m.mtl").write_text("newmtl a\nmap_Kd t.png\n")
        assert match in refused_cleanly(model / "f.obj")
    # under every limit but over the budget: refused from the header, before decoding
    (model / "t.png").write_bytes(png_with_header(8000, 8000))
    msg = refused_cleanly(model / "f.obj", max_texture_bytes=256 << 20)
    assert "memory budget" in msg


def test_zero_filled_accessor_bomb(folders):
    """An accessor without a buffer view is zeros trimesh would allocate: 96 GiB from 200 bytes."""
    model, _ = folders
    doc = {"asset": {"version": "2.0"}, "accessors": [{"componentType": 5126, "count": 2**33, "type": "VEC3"}],
           "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}], "nodes": [{"mesh": 0}],
           "scenes": [{"nodes": [0]}]}
    (model / "f.gltf").write_text(json.dumps(doc))
    assert "memory budget" in refused_cleanly(model / "f.gltf", max_texture_bytes=1 << 30)


# --- the commands in-process (cli.main): exit 2, one line, nothing written -----------------------

def run_cli(capsys, *argv) -> tuple[int, str, str]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rc = cli.main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


def assert_one_line(rc, out, err, match=""):
    assert rc == 2, (rc, out, err)
    assert err.startswith("tilesim: error: ") and err.count("\n") == 1, err
    assert "Traceback" not in out + err and "Warning" not in err
    assert match in err, err


@pytest.mark.parametrize("argv,match", [
    (["render", "quad", "--res", "-5x5"], "resolution -5x5"),
    (["render", "quad", "--res", "64x64", "--camera=1e308,0,0:0,0,0:0,1,0:60"], "--camera"),
    (["render", "quad", "--res", "64x64", "--camera", "-1e300,0,0:0,0,0:0,1,0:60"], "--camera"),
    (["render", "quad", "--res", "16384x16384", "--samples", "4"], "over the budget"),
    (["render", "quad", "--res", "4096x4096", "--max-memory", "64M"], "over the budget"),
    (["render", "quad", "--max-memory", "lots"], "--max-memory"),
    (["report", "quad", "--res", "8192x8192", "--max-memory", "100M", "--preset", "imr-baseline"], "budget"),
    (["render", "quad", "--res", "64x64", "-o", "/proc/s.png"], "cannot write"),
])
def test_cli_refuses(tmp_path, capsys, monkeypatch, argv, match):
    monkeypatch.chdir(tmp_path)
    assert_one_line(*run_cli(capsys, *argv, *([] if "-o" in argv else ["-o", "out.png"])), match)
    assert list(tmp_path.iterdir()) == []


def test_view_screenshot_checked_before_work(tmp_path, capsys, monkeypatch):
    """As render's outputs: checked before the scene loads or a window opens, one line, exit 2."""
    monkeypatch.chdir(tmp_path)
    assert_one_line(*run_cli(capsys, "view", "quad", "--screenshot", "/proc/s.png"), "cannot write /proc/s.png")
    (tmp_path / "s.json").mkdir()               # the JSON beside it cannot be written
    assert_one_line(*run_cli(capsys, "view", "quad", "--screenshot", "s.png"), "s.json: is a directory")
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]


def test_cli_outputs_onto_special_files(tmp_path, capsys):
    fifo = tmp_path / "fifo.png"
    os.mkfifo(fifo)
    assert_one_line(*run_cli(capsys, "render", "quad", "--res", "8x8", "-o", fifo), "FIFO")
    assert fifo.is_fifo()
    assert_one_line(*run_cli(capsys, "render", "quad", "--res", "8x8", "--counters", fifo, "-o",
                             tmp_path / "o.png"), "FIFO")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo.png"]


def test_diff_hostile_images(tmp_path, capsys):
    png = io.BytesIO()
    Image.fromarray(np.zeros((4, 4, 4), np.uint8)).save(png, "PNG")
    (tmp_path / "ok.png").write_bytes(png.getvalue())
    (tmp_path / "bomb.png").write_bytes(png_with_header(100_000, 100_000))
    (tmp_path / "big.png").write_bytes(png_with_header(10_000, 10_000))
    (tmp_path / "cut.png").write_bytes(png.getvalue()[:40])
    (tmp_path / "junk.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x01" * 30)
    for other, match in (("bomb.png", "decompression-bomb"), ("big.png", "decompression-bomb"),
                         ("cut.png", "cannot read image"), ("junk.png", "cannot read image")):
        assert_one_line(*run_cli(capsys, "diff", tmp_path / "ok.png", tmp_path / other,
                                 "-o", tmp_path / "d.png"), match)
    assert not (tmp_path / "d.png").exists()


def test_model_options_reach_the_loader(tmp_path, capsys, monkeypatch):
    """--allow-outside lets a model read beside its folder; without it the CLI refuses."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "m.mtl").write_text("newmtl a\nKd 1 0 0\n")
    (tmp_path / "model").mkdir()
    (tmp_path / "model" / "f.obj").write_text("mtllib ../lib/m.mtl\n" + TRI + "usemtl a\nf 1 2 3\n")
    monkeypatch.chdir(tmp_path)
    assert_one_line(*run_cli(capsys, "render", "model/f.obj", "--res", "8x8", "-o", "o.png"),
                    "leaves the model's folder")
    assert not (tmp_path / "o.png").exists()
    rc, out, err = run_cli(capsys, "render", "model/f.obj", "--res", "8x8", "-o", "o.png", "--allow-outside")
    assert rc == 0 and (tmp_path / "o.png").is_file(), err


# --- a representative few as a user runs them: a subprocess ---------------------------------------

def test_subprocess_representatives(folders):
    model, _ = folders
    write_bin(model)
    doc = gltf_doc()
    doc["nodes"][0]["matrix"] = ["a"] * 16
    (model / "shape.gltf").write_text(json.dumps(doc))
    (model / "escape.obj").write_text(f"mtllib escape/secret.mtl\n{TRI}f 1 2 3\n")
    for args, match in ((["render", model / "shape.gltf", "--res", "64x64"], "nodes[0].matrix"),
                        (["render", model / "escape.obj", "--res", "64x64"], "leaves the model's folder"),
                        (["render", "quad", "--res=-5x5"], "resolution -5x5")):
        proc = tilesim(*args, "-o", model / "out.png", cwd=model)
        err = proc.stderr
        assert proc.returncode == 2 and err.startswith("tilesim: error: ") and err.count("\n") == 1, err
        assert match in err and "Warning" not in err and proc.stdout == ""
        assert not (model / "out.png").exists()


def test_memory_budget_refuses_before_allocating(tmp_path, capsys):
    """16384 x 16384 at 4 samples (about 40 GiB) under a 1 GiB budget: refused while the
    process has allocated almost nothing (tracemalloc sees numpy's buffers too), and a child
    process doing the same stays the size of an idle one."""
    import tracemalloc
    tracemalloc.start()
    try:
        rc, out, err = run_cli(capsys, "render", "quad", "--res", "16384x16384", "--samples", "4",
                               "--max-memory", "1G", "-o", tmp_path / "o.png")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert_one_line(rc, out, err, "over the budget of 1.0 GiB")
    assert peak < 64 << 20, peak
    env = child_env()
    # The child reports its own peak from /proc/self/status (VmHWM: this program's, from its
    # exec on): getrusage's ru_maxrss keeps the forking parent's size, pytest's, across exec.
    peak_at_exit = ("import atexit, runpy, sys\n"
                    "atexit.register(lambda: sys.stderr.write(next(l for l in open('/proc/self/status')"
                    " if l.startswith('VmHWM'))))\n"
                    "runpy.run_module('pipelines.commands.cli', run_name='__main__')\n")
    child = subprocess.run([sys.executable, "-c", peak_at_exit, "render", "quad", "--res", "16384x16384",
                            "--samples", "4", "-o", tmp_path / "o.png"],
                           cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    assert child.returncode == 2, child.stderr
    assert "over the budget" in child.stderr
    hwm_kib = int(child.stderr.split("VmHWM:")[1].split()[0])
    assert hwm_kib < 1_000_000, child.stderr      # KiB: under 1 GB, where the frame needs 40 GiB
    assert not (tmp_path / "o.png").exists()
