"""`tilesim report --frames N --camera-path P`: a sequence per scene x preset, its row the last
frame's plus the sequence's figures; and the per-surface compression records
(report.surface_fields) from renderer.memory's surf.* counters."""
from __future__ import annotations

import csv
import io
import json

import jsonschema
import pytest

from pipelines.commands import cli
from pipelines.commands.report import SCHEMA_PATH, moved_compressed, surface_fields, to_csv
from pipelines.commands.report_text import surface_lines, to_markdown
from pipelines.frame import Settings
from renderer.counters import Counters

ARGS = ["spheres", "--preset", "arm-mali,imr-baseline", "--res", "160x90", "-q"]


def report_json(tmp_path, *args) -> dict:
    path = tmp_path / "r.json"
    assert cli.main(["report", *ARGS, *args, "-o", str(path)]) == 0
    return json.loads(path.read_text())


@pytest.fixture(scope="module")
def seq_doc(tmp_path_factory):
    return report_json(tmp_path_factory.mktemp("frames"), "--frames", "3")


def test_a_sequence_row_carries_each_frame_and_validates(seq_doc):
    jsonschema.validate(seq_doc, json.loads(SCHEMA_PATH.read_text()))
    for row in seq_doc["rows"]:
        frames = row["per_frame"]
        assert row["frames"] == 3 and row["camera_path"] == "static"
        assert [f["frame"] for f in frames] == [0, 1, 2]
        assert row["sequence_dram_bytes"] == sum(f["dram_bytes"] for f in frames)
        assert row["dram_bytes"] == frames[-1]["dram_bytes"]       # the row is the last frame


def test_transaction_elimination_keeps_a_still_frames_colour_on_mali(seq_doc):
    mali, imr = seq_doc["rows"]
    first, *later = mali["per_frame"]
    assert first["te_tiles_written"] == first["te_tiles"] > 0
    for f in later:
        assert f["te_tiles_written"] < f["te_tiles"]
        assert f["color_write_bytes"] < first["color_write_bytes"]
    # an IMR without transaction elimination writes its colour every frame
    written = [f["color_write_bytes"] for f in imr["per_frame"]]
    assert written[0] > 0 and written == [written[0]] * 3
    assert all(f["te_tiles"] == 0 for f in imr["per_frame"])


def test_one_frame_is_todays_report(tmp_path, capsys):
    one = report_json(tmp_path, "--frames", "1")
    for row in one["rows"]:
        assert not {"frames", "camera_path", "sequence_dram_bytes", "per_frame"} & row.keys()
    capsys.readouterr()
    assert cli.main(["report", *ARGS]) == 0
    assert "frames of each sequence" not in capsys.readouterr().out


def test_frames_reach_the_table_markdown_and_csv(seq_doc, capsys):
    capsys.readouterr()
    assert cli.main(["report", *ARGS, "--frames", "2", "--camera-path", "orbit"]) == 0
    out = capsys.readouterr().out
    assert "frames of each sequence" in out and "60/60" in out
    md = to_markdown(seq_doc["rows"], Settings(160, 90))
    assert "| spheres | arm-mali | 2 |" in md and "| spheres | imr-baseline | 2 |" in md
    first = next(csv.DictReader(io.StringIO(to_csv(seq_doc["rows"]))))
    assert {"frames", "camera_path", "sequence_dram_bytes"} <= first.keys()
    assert not {"per_frame", "surfaces", "counters"} & first.keys()     # nested: JSON only
    assert int(first["sequence_dram_bytes"]) == seq_doc["rows"][0]["sequence_dram_bytes"]


def exit_code(argv) -> int:
    """cli.main's exit code, whether it returns it or argparse raises it."""
    try:
        return cli.main(argv)
    except SystemExit as e:
        return e.code


@pytest.mark.parametrize("args", [["--frames", "0"], ["--frames", "241"], ["--frames", "x"],
                                  ["--camera-path", "spin"]])
def test_a_bad_sequence_is_one_line_and_exit_2(args, capsys):
    capsys.readouterr()
    assert exit_code(["report", *ARGS, *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tilesim: error:") and args[0] in err


# --- per-surface compression records ----------------------------------------------------------
def test_surfaces_group_regions_with_their_metadata():
    c = Counters({
        "surf.color.write": 300, "surf.color.write.raw": 1200,         # compressed 4:1
        "surf.color.read": 100, "surf.color.read.raw": 400,
        "surf.color.dcc.write": 20, "surf.color.dcc.read": 5,          # its DCC keys
        "surf.color.te.write": 8,                                      # and TE signatures
        "surf.depth.write": 640, "surf.depth.write.raw": 640,          # raw
        "surf.gbuffer.albedo.write": 50, "surf.gbuffer.albedo.write.raw": 200,
        "surf.gbuffer.albedo.dcc.write": 10,
        "surf.gbuffer.albedo.read.raw": 0,                             # a zero adds nothing
        "surf.textures.read": 64, "surf.textures.read.raw": 64,
        "surf.color.spill.write": 32, "surf.color.spill.write.raw": 32,   # a surface of its own
        "mem.dram.write.color": 400,                                   # not a surface counter
    })
    s = surface_fields(c)
    assert set(s) == {"color", "depth", "gbuffer.albedo", "textures", "color.spill"}
    assert s["color"] == {"read": 100, "write": 300, "raw": 1600, "crossed": 400, "meta": 33,
                          "ratio": 1600 / 433}
    assert s["depth"] == {"read": 0, "write": 640, "raw": 640, "crossed": 640, "meta": 0, "ratio": 1.0}
    assert s["gbuffer.albedo"] == {"read": 0, "write": 50, "raw": 200, "crossed": 50, "meta": 10,
                                   "ratio": 200 / 60}
    assert s["color.spill"]["meta"] == 0 and s["textures"]["ratio"] == 1.0


def test_metadata_alone_is_its_surfaces_cost():
    """A frame that transaction elimination kept whole writes no colour, only signatures: the
    colour surface is there, all of what it moved metadata."""
    s = surface_fields(Counters({"surf.color.te.write": 16, "surf.color.te.read": 16}))
    assert s == {"color": {"read": 0, "write": 0, "raw": 0, "crossed": 0, "meta": 32, "ratio": 0.0}}


def test_no_surface_counters_no_surfaces():
    assert surface_fields(Counters()) == {}
    assert surface_fields(Counters({"mem.dram.write.color": 4096, "te.tiles": 60})) == {}


def test_a_compressed_surface_is_a_line_of_the_surface_table(seq_doc):
    """Markdown shows the table where a surface moved compressed (the default terminal only
    under --surfaces)."""
    s = surface_fields(Counters({"surf.color.write": 3_000_000, "surf.color.write.raw": 12_000_000,
                                 "surf.color.dcc.write": 1_000_000,
                                 "surf.depth.write": 640_000, "surf.depth.write.raw": 640_000}))
    row = {"scene": "spheres", "preset": "amd-rdna2", "surfaces": s}
    assert moved_compressed(row) and not moved_compressed({**row, "surfaces": {"depth": s["depth"]}})
    assert surface_lines([row]) == [["spheres", "amd-rdna2", "color", "12.000", "3.000", "1.000", "3.00:1"],
                                    ["spheres", "amd-rdna2", "depth", "0.640", "0.640", "0.000", "1.00:1"]]
    md = to_markdown([{**seq_doc["rows"][0], **row}], Settings(160, 90))
    assert "| spheres | amd-rdna2 | color | 12.000 | 3.000 | 1.000 | 3.00:1 |" in md
    raw_only = [r for r in seq_doc["rows"] if r["preset"] == "imr-baseline"]      # no codec
    assert raw_only and "Surfaces that crossed DRAM" not in to_markdown(raw_only, Settings(160, 90))
    mali = [r for r in seq_doc["rows"] if r["preset"] == "arm-mali"]    # AFBC, TE's signatures
    assert mali[0]["surfaces"]["color"]["meta"] > 0
    assert "Surfaces that crossed DRAM" in to_markdown(mali, Settings(160, 90))


def test_the_html_page_has_each_frame(seq_doc):
    from pipelines.commands.report_html import Gallery, build_html
    page = build_html(seq_doc["rows"], [], Settings(160, 90), Gallery(), None, ["tilesim"], "0")
    assert "frames of each sequence" in page
    frames = page[page.index("frames of each sequence"):]
    frames = frames[:frames.index("</table>")]
    assert frames.count("<td>spheres</td><td>arm-mali</td>") == 3


def test_csv_flattens_each_surface(tmp_path):
    """CSV has each surface's bytes as flat columns: spheres' one colour surface is the colour
    stream (its DCC keys the metadata)."""
    path = tmp_path / "r.json"
    assert cli.main(["report", "spheres", "--preset", "amd-rdna2", "--res", "160x90", "-o",
                     str(path)]) == 0
    (row,) = csv.DictReader(io.StringIO(to_csv(json.loads(path.read_text())["rows"])))
    assert int(row["surface.color.crossed"]) == int(row["dram_bytes.color"]) > 0
    assert int(row["surface.color.raw"]) == int(row["raw_bytes.color"])
    assert int(row["surface.color.meta"]) > 0
