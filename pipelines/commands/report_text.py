"""The bandwidth report for people reading text: per scene a terminal table (rich; colours only on
a terminal) or Markdown with the same cells, the post chain's and the ray passes' own tables, a
sequence's frames, the surfaces that moved compressed, and the claims. The rows come from
pipelines.commands.report."""
from __future__ import annotations

import sys

from rich.console import Console
from rich.table import Table

from renderer.counters import STREAMS

from pipelines.commands.report import FALLBACK_REASONS, FALLBACK_SHORT, moved_compressed
from pipelines.frame import Settings

def streams_used(rows) -> list[str]:
    return [s for s in STREAMS if any(r[f"dram_bytes.{s}"] for r in rows)]


def by_scene(rows) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for r in rows:
        out.setdefault(r["scene"], []).append(r)
    return out


def fallbacks_text(row) -> str:
    parts = [f"{FALLBACK_SHORT[r]} {row[f'fallbacks.{r}']}" for r in FALLBACK_REASONS
             if row[f"fallbacks.{r}"]]
    if row["partial_renders"]:
        parts.append(f"partial renders {row['partial_renders']}")
    return ", ".join(parts) or "-"


def summary_cells(row, streams) -> list[str]:
    """The cells of one preset's line in the terminal and Markdown tables (MB with 3 decimals:
    1 kB resolution, enough to see a stream appear)."""
    share = "-" if row["bw_share"] is None else f"{100 * row['bw_share']:.1f}"
    return [row["preset"], row["architecture"],
            *(f"{row[f'dram_bytes.{s}'] / 1e6:.3f}" for s in streams),
            f"{row['dram_mb']:.3f}", f"{row['rel_first']:.3f}", f"{row['gbps']:.2f}", share,
            ratio_text(row), f"{row['overdraw']:.3f}", f"{row['shaded']:,}", fallbacks_text(row)]


def ratio_text(row) -> str:
    """The colour stream's raw : crossed ratio ('-' where nothing compressed it)."""
    r = row.get("comp_ratio.color")
    if row["raw_bytes.color"] == row["dram_bytes.color"]:
        return "-"
    return "metadata only" if r is None else f"{r:.2f}:1"


def summary_header(streams, fps) -> list[str]:
    return ["preset", "arch", *streams, "DRAM MB", "vs first", f"GB/s@{fps:g}", "% BW",
            "colour comp", "overdraw", "shaded", "fallbacks"]


COST_HEADER_BASE = ["preset", "model ms", "fps", "limiter per pass", "top units (ms, summed over passes)",
                    "mJ", "DRAM mJ", "caches mJ", "ALU mJ", "fixed mJ", "W"]
COST_TITLE = ("time and energy (a bottleneck model: each pass as long as its slowest unit; dynamic "
              "energy = counts x the preset's pJ; `report --explain` shows the arithmetic)")


def cost_header(fps) -> list[str]:
    return [*COST_HEADER_BASE, f"W@{fps:g}"]


def cost_cells(row) -> list[str]:
    """One preset's line of the time and energy table."""
    units = sorted(((k.split(".", 1)[1], v) for k, v in row.items() if k.startswith("unit_ms.")),
                   key=lambda kv: -kv[1])[:3]
    return [row["preset"], f"{row['model_ms']:.4f}", f"{row['model_fps']:,.0f}", row["limiters"],
            ", ".join(f"{k} {v:.4f}" for k, v in units), f"{row['mj']:.4f}",
            *(f"{row[f'mj.{s}']:.4f}" for s in ("dram", "caches", "alu", "fixed")),
            f"{row['watts']:.2f}", f"{row['watts_at_fps']:.3f}"]


def details(rows, settings: Settings) -> str:
    r = rows[0]
    ms = sum(x["ms"] for x in rows)
    return (f"{r['triangles']:,} triangles, {settings.width}x{settings.height}, "
            f"{settings.samples}x, DRAM MB per frame by stream ({ms / 1e3:.1f} s to render)")


def _text_table(title: str, header, lines, left) -> Table:
    """A terminal table: its columns right-aligned but those named in `left`."""
    t = Table(title=title, title_justify="left")
    for col in header:
        t.add_column(col, justify="left" if col in left else "right")
    for line in lines:
        t.add_row(*line)
    return t


def print_table(rows, settings: Settings, console: Console | None = None,
                geometry: bool = False, surfaces: bool = False) -> None:
    # A pipe or a log gets the whole table, not one folded to 80 columns, and no colour codes.
    console = console or Console(width=None if sys.stdout.isatty() else 240)
    for scene_rows in by_scene(rows).values():
        streams = streams_used(scene_rows)
        header = summary_header(streams, settings.fps)
        rel = header.index("vs first")
        lines = []
        for r in scene_rows:
            cells = summary_cells(r, streams)
            style = "green" if r["rel_first"] < 0.995 else "red" if r["rel_first"] > 1.005 else ""
            cells[rel] = f"[{style}]{cells[rel]}[/]" if style else cells[rel]
            lines.append(cells)
        scene = scene_rows[0]["scene"]
        console.print(_text_table(f"{scene}: {details(scene_rows, settings)}", header, lines,
                                  ("preset", "arch", "fallbacks")))
        if "model_ms" in scene_rows[0]:
            console.print(_text_table(f"{scene}: {COST_TITLE}", cost_header(settings.fps),
                                      [cost_cells(r) for r in scene_rows],
                                      COST_HEADER_BASE[:1] + COST_HEADER_BASE[3:5]))
        if textured(scene_rows):
            console.print(_text_table(f"{scene}: {TEXTURE_TITLE}", TEXTURE_HEADER,
                                      [texture_cells(r) for r in scene_rows], ("preset", "formats")))
        if geometry:
            console.print(_text_table(f"{scene}: geometry front end", GEOMETRY_HEADER,
                                      [geometry_cells(r) for r in scene_rows], ("preset", "front end")))
        if "post" in scene_rows[0]:
            for title_, header, lines in post_tables(scene_rows, settings):
                console.print(_text_table(f"{scene}: {title_}", header, lines, header[:1]))
        if settings.rays:
            console.print(_text_table(f"{scene}: ray passes, per ray (B: before the caches; "
                                      f"shadow and AO in {settings.ray_order} order)",
                                      RT_HEADER, [line for r in scene_rows
                                                  for line in rt_lines(r, settings.rays)],
                                      ("preset", "layout", "pass")))
            for r in scene_rows:
                if (line := bvh_memory_line(r)) is not None:
                    console.print(line, markup=False, highlight=False)
    for title_, header, lines in report_tables(rows, surfaces):
        console.print(_text_table(title_, header, lines, ("scene", "preset", "surface")))
    if surfaces and not any(moved_compressed(r) for r in rows):
        console.print("surfaces: none moved compressed (no surf.* counter differs from its raw "
                      "bytes, none has metadata)", markup=False, highlight=False)


FRAMES_TITLE = "frames of each sequence (the tables above are its last frame's)"
FRAMES_HEADER = ["scene", "preset", "frame", "DRAM MB", "colour written MB", "TE tiles written/total"]
SURFACES_TITLE = ("surfaces that crossed DRAM (ratio = raw : crossed + metadata; metadata: DCC, "
                  "HTILE, codec headers, TE signatures)")
SURFACES_HEADER = ["scene", "preset", "surface", "raw MB", "crossed MB", "metadata MB", "ratio"]


def report_tables(rows, surfaces: bool = True):
    """(title, header, lines) of the tables across scenes: a sequence's frames where the rows
    are sequences, and with `surfaces` each surface where any moved compressed."""
    if any("per_frame" in r for r in rows):
        yield FRAMES_TITLE, FRAMES_HEADER, frame_lines(rows)
    if surfaces and any(moved_compressed(r) for r in rows):
        yield SURFACES_TITLE, SURFACES_HEADER, surface_lines(rows)


def frame_lines(rows) -> list[list[str]]:
    """One line per frame of each row's sequence; TE '-' where the preset has none."""
    return [[r["scene"], r["preset"], str(f["frame"]), f"{f['dram_bytes'] / 1e6:.3f}",
             f"{f['color_write_bytes'] / 1e6:.3f}",
             f"{f['te_tiles_written']:,}/{f['te_tiles']:,}" if f["te_tiles"] else "-"]
            for r in rows for f in r.get("per_frame", ())]


def surface_lines(rows) -> list[list[str]]:
    """One line per surface of each row (report.surface_fields)."""
    return [[r["scene"], r["preset"], name, f"{s['raw'] / 1e6:.3f}", f"{s['crossed'] / 1e6:.3f}",
             f"{s['meta'] / 1e6:.3f}", "-" if s["ratio"] is None else f"{s['ratio']:.2f}:1"]
            for r in rows for name, s in r.get("surfaces", {}).items()]


def post_tables(rows, settings: Settings):
    """(title, header, lines) of a post-chain scene: a summary per preset, then each surface's
    compressed MB and ratio and each pass's DRAM MB and tax, one column per preset."""
    fps = f"{settings.fps:g}"
    yield ("post chain compression per preset (DRAM MB; tax = bytes a compression-keeping design "
           "would not move)",
           ["preset", "codec", "ratio", "decompress events", "decompress MB", "rmw MB", "tax MB",
            f"tax GB/s@{fps}", "% of BW"],
           [[r["preset"], r["comp.codec"], f"{r['comp.ratio']:.2f}:1", f"{r['comp.decompress_events']:,}",
             f"{r['comp.decompress_bytes'] / 1e6:.3f}", f"{r['comp.rmw_bytes'] / 1e6:.3f}",
             f"{r['comp.tax_bytes'] / 1e6:.3f}", f"{r['comp.tax_gbps']:.3f}",
             f"{100 * r['comp.tax_bw_share']:.2f}"] for r in rows])
    presets = [r["preset"] for r in rows]
    surfaces = [s["surface"] for s in rows[0]["post"]["surfaces"]]
    yield ("post chain surfaces: compressed MB (ratio) as last written", ["surface", *presets],
           [[name, *(f"{s['compressed_bytes'] / 1e6:.3f} ({s['ratio']:.2f}:1)" for r in rows
                     for s in r["post"]["surfaces"] if s["surface"] == name)] for name in surfaces])
    passes = [(p["pass"], p["stage"]) for p in rows[0]["post"]["passes"]]
    yield ("post chain passes: DRAM MB read + written (of which tax)", ["pass", *presets],
           [[f"{name} ({stage})", *(f"{(p['read_bytes'] + p['write_bytes']) / 1e6:.3f} ({p['tax_bytes'] / 1e6:.3f})"
                                    for r in rows for p in r["post"]["passes"] if p["pass"] == name)]
            for name, stage in passes])


GEOMETRY_HEADER = ["preset", "front end", "vertices shaded", "ACMR", "primitives in",
                   "to raster", "culled", "index + vertex MB", "shader ALU Mops"]


def geometry_cells(r) -> list[str]:
    prims = r["geom.prims_in"]
    culled = 1 - r["geom.prims_to_raster"] / prims if prims else 0.0
    return [r["preset"], r["geom.frontend"], f"{r['geom.vertices_shaded']:,}", f"{r['geom.acmr']:.3f}",
            f"{prims:,}", f"{r['geom.prims_to_raster']:,}", f"{100 * culled:.1f}%",
            f"{(r['dram_bytes.index'] + r['dram_bytes.vertex']) / 1e6:.3f}", f"{r['geom.alu_ops'] / 1e6:.2f}"]


TEXTURE_TITLE = ("textures: texels read per shaded fragment, the L1's hit rate, MB delivered by "
                 "the L1, asked of L2 (its misses) and read from DRAM")
TEXTURE_HEADER = ["preset", "formats", "texels/fragment", "L1 hit rate", "L1 MB", "L2 MB", "DRAM MB"]


def texture_cells(r) -> list[str]:
    hit = r["tex.l1_hit_rate"]
    return [r["preset"], r["tex.formats"], f"{r['tex.texels_per_fragment']:.1f}",
            "-" if hit is None else f"{100 * hit:.1f}%",
            *(f"{r[k] / 1e6:.3f}" for k in ("tex.l1_bytes", "tex.l2_bytes", "tex.dram_bytes"))]


def textured(rows) -> bool:
    return any(r.get("tex.texels") for r in rows)


RT_HEADER = ["preset", "layout", "pass", "rays", "steps/ray (TLAS)", "nodes/ray", "box tests/ray",
             "tri tests/ray", "B/ray", "L0 hit", "L1 hit", "DRAM B/ray", "overflows", "restarts",
             "any-hits (through)", "texel B/ray", "stack B/ray", "spills"]


def _rate(v) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def bvh_memory_line(row) -> str | None:
    """What a two-level BVH takes against the flattened tree of the same layout, or None (flat)."""
    if row.get("rt.bvh") != "two-level":
        return None
    b = {k: row[f"rt.bvh_bytes.{k}"] for k in ("blas", "tlas", "instances", "flat")}
    total = b["blas"] + b["tlas"] + b["instances"]
    return (f"{row['preset']}: two-level BVH {total / 1e6:.3f} MB (BLASes {b['blas'] / 1e6:.3f}, TLAS "
            f"{b['tlas'] / 1e6:.3f}, instance nodes {b['instances'] / 1e6:.3f}) against the flattened "
            f"tree's {b['flat'] / 1e6:.3f} MB: {100 * (1 - total / b['flat']):.1f}% less")


def rt_lines(row, passes) -> list[list[str]]:
    """One line per ray pass of a row ('-': the part has no such cache), the pass named with the
    order it visited a node's children in; steps/ray counts both levels of a two-level BVH, the
    TLAS's in brackets."""
    two = row.get("rt.bvh") == "two-level"
    return [[row["preset"], row["rt.layout"] + (" two-level" if two else ""),
             p + (f" ({row[f'rt.order.{p}']})" if f"rt.order.{p}" in row else ""),
             f"{row[f'rt.{p}.rays']:,}",
             f"{row[f'rt.{p}.steps_per_ray']:.2f}" + (f" ({row[f'rt.{p}.tlas_steps_per_ray']:.2f})" if two else ""),
             *(f"{row[f'rt.{p}.{m}']:.2f}" for m in ("nodes_per_ray", "box_tests_per_ray",
                                                     "tri_tests_per_ray")),
             f"{row[f'rt.{p}.bytes_per_ray']:,.0f}",
             _rate(row.get(f"rt.{p}.l0_hit_rate")), _rate(row.get(f"rt.{p}.l1_hit_rate")),
             f"{row[f'rt.{p}.dram_bytes_per_ray']:,.1f}", f"{row[f'rt.{p}.stack_overflows']:,}",
             f"{row[f'rt.{p}.restarts']:,}",
             f"{row[f'rt.{p}.anyhit']:,} ({row[f'rt.{p}.anyhit_ignored']:,})",
             f"{row[f'rt.{p}.texel_bytes_per_ray']:,.1f}",
             f"{row[f'rt.{p}.stack_bytes_per_ray']:,.1f}", f"{row[f'rt.{p}.stack_spills']:,}"]
            for p in passes]


CLAIM_HEADER = ["claim", "source", "scene", "status", "measured", "note"]
CLAIM_STYLE = {"agrees": "green", "disagrees": "red", "not yet measured": "dim", "not measurable": "yellow"}


def claim_cells(c) -> list[str]:
    """One claims.ClaimResult as table cells."""
    return [c.claim.claim, c.claim.source, f"{c.claim.scene} ({', '.join(c.claim.presets)})",
            c.status, c.measured.text if c.measured else "-", c.note]


def print_claims(claims, console: Console) -> None:
    t = Table(title="Claims from the source documents, measured", title_justify="left")
    for col in CLAIM_HEADER:
        t.add_column(col, ratio=2 if col in ("claim", "measured", "note") else 1)
    for c in claims:
        cells = claim_cells(c)
        cells[3] = f"[{CLAIM_STYLE[c.status]}]{cells[3]}[/]"
        t.add_row(*cells)
    console.print(t)


def to_markdown(rows, settings: Settings, claims=None, geometry: bool = False) -> str:
    out = [f"# tilesim report\n\n{settings.width}x{settings.height}, {settings.samples} sample(s) "
           f"per pixel, GB/s at {settings.fps:g} fps; DRAM in MB (10^6 bytes) per frame.\n"] if rows \
        else ["# tilesim claims\n"]
    for scene_rows in by_scene(rows).values():
        streams = streams_used(scene_rows)
        header = summary_header(streams, settings.fps)
        out.append(f"## {scene_rows[0]['scene']}\n\n{details(scene_rows, settings)}\n")
        out.append("| " + " | ".join(header) + " |")
        out.append("|" + "|".join("---" if h in ("preset", "arch", "fallbacks") else "---:"
                                  for h in header) + "|")
        out.extend("| " + " | ".join(summary_cells(r, streams)) + " |" for r in scene_rows)
        out.append("")
        if "model_ms" in scene_rows[0]:
            header = cost_header(settings.fps)
            out += [f"{COST_TITLE[0].upper()}{COST_TITLE[1:]}:\n", "| " + " | ".join(header) + " |",
                    "|---|---:|---:|---|---|" + "---:|" * (len(header) - 5)]
            out.extend("| " + " | ".join(cost_cells(r)) + " |" for r in scene_rows)
            out.append("")
        if textured(scene_rows):
            out += [f"{TEXTURE_TITLE[0].upper()}{TEXTURE_TITLE[1:]}:\n", "| " + " | ".join(TEXTURE_HEADER) + " |",
                    "|---|---|" + "---:|" * (len(TEXTURE_HEADER) - 2)]
            out.extend("| " + " | ".join(texture_cells(r)) + " |" for r in scene_rows)
            out.append("")
        if geometry:
            out += ["Geometry front end:\n", "| " + " | ".join(GEOMETRY_HEADER) + " |",
                    "|---|---|" + "---:|" * (len(GEOMETRY_HEADER) - 2)]
            out.extend("| " + " | ".join(geometry_cells(r)) + " |" for r in scene_rows)
            out.append("")
        if "post" in scene_rows[0]:
            for title_, header, lines in post_tables(scene_rows, settings):
                out += [f"{title_[0].upper()}{title_[1:]}:\n", "| " + " | ".join(header) + " |",
                        "|---|" + "---:|" * (len(header) - 1)]
                out.extend("| " + " | ".join(line) + " |" for line in lines)
                out.append("")
        if settings.rays:
            out += ["Ray passes, per ray (B/ray before the caches; hit rates and DRAM B/ray through "
                    "them):\n", "| " + " | ".join(RT_HEADER) + " |",
                    "|---|---|---|" + "---:|" * (len(RT_HEADER) - 3)]
            out.extend("| " + " | ".join(line) + " |" for r in scene_rows
                       for line in rt_lines(r, settings.rays))
            out.append("")
            out.extend(f"{line}\n" for r in scene_rows if (line := bvh_memory_line(r)) is not None)
    for title_, header, lines in report_tables(rows):
        out += [f"## {title_[0].upper()}{title_[1:]}\n", "| " + " | ".join(header) + " |",
                "|---|---|---|" + "---:|" * (len(header) - 3)]
        out.extend("| " + " | ".join(line) + " |" for line in lines)
        out.append("")
    if claims:
        out += ["## Claims from the source documents, measured (at --claims-res, default 1920x1080)\n", "| " + " | ".join(CLAIM_HEADER) + " |",
                "|" + "---|" * len(CLAIM_HEADER)]
        out.extend("| " + " | ".join(x.replace("|", "\\|") for x in claim_cells(c)) + " |"
                   for c in claims)
        out.append("")
    return "\n".join(out)


def explain_text(frame, preset, fps: float) -> str:
    """`tilesim report --explain`: per pass, each unit's time and what it was computed from, the
    limiter, then the energy terms, so that each figure can be checked by hand."""
    from pipelines.cost import frame_cost
    cost = frame_cost(frame, preset)
    s = frame.settings
    r = preset.rates
    out = [f"{frame.scene} via {preset.name} at {s.width}x{s.height}, {s.samples}x: bottleneck model "
           f"(each pass as long as its slowest unit; DSBR adds one batch's binning fill), "
           f"clock {r.clock_ghz.value} GHz ({r.clock_ghz.label}: {r.clock_ghz.source})", ""]
    for t, e in zip(cost.time.passes, cost.energy.passes):
        out.append(f"pass {t.name} ({t.kind}): {t.seconds * 1e3:.6f} ms, limiter {t.limiter}")
        for u in sorted(t.units, key=lambda u: -u.seconds):
            mark = "*" if u.unit == t.limiter else " "
            out.append(f" {mark} {u.unit:<12} {u.seconds * 1e3:12.6f} ms = {u.inputs}")
        out.append(f"   energy {e.joules * 1e3:.6f} mJ:")
        for x in e.terms:
            out.append(f"     {x.source:<7} {x.item:<12} {x.joules * 1e3:12.6f} mJ = {x.count:,.0f} x "
                       f"{x.pj_each:g} pJ ({x.inputs})")
        out.append("")
    by = cost.energy.by_source()
    out.append(f"frame: {cost.time.ms:.6f} ms = {' + '.join(f'{t.seconds * 1e3:.6f}' for t in cost.time.passes)} "
               f"(passes in order), {cost.time.fps:,.1f} fps; {cost.energy.mj:.6f} mJ "
               f"({', '.join(f'{k} {v * 1e3:.6f}' for k, v in by.items())}); "
               f"{cost.watts():.3f} W at the model's {cost.time.fps:,.1f} fps, {cost.watts(fps):.3f} W at {fps:g} fps")
    out.append("rates and energies: `tilesim presets -v` lists each with its source and label")
    return "\n".join(out) + "\n"
