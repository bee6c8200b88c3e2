"""The bandwidth report: scenes x presets -> one row of measured figures each, written as JSON
(schema in report.schema.json) or CSV here; the terminal tables and Markdown are in report_text,
the HTML page in report_html, the claims in claims.

A row is flat so that CSV, Markdown and the terminal carry the same numbers: DRAM bytes per stream
(exact integers), their total and MB, the ratio to the scene's first preset, GB/s at the chosen
frame rate and its share of the preset's DRAM bandwidth, overdraw, shaded fragments and the tile
fallbacks by reason, and the time and energy model's figures (pipelines.cost: the model's ms and
fps, the limiter per pass, each unit's ms, mJ by source, watts at the model's frame rate and at
--fps). JSON adds every counter, every derived figure, each pass's units with the arithmetic they
came from ("cost") and the presets with sources, and per surface what compression saved
("surfaces": surface_fields).

With --frames N (or a moving camera) each scene x preset is a sequence (pipelines.sequence): its
row is the last frame's, so every column still means one frame in steady state, plus the frame
count, the camera path, the sequence's DRAM bytes and, in JSON, each frame's figures.
"""
from __future__ import annotations

import csv
import io
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from renderer.counters import STREAMS
from renderer.frontend import FRONTENDS

from pipelines.cost import FrameCost, frame_cost
from pipelines.frame import FrameResult, Settings, run
from pipelines.presets import Preset
from pipelines.sequence import SequenceResult, run_sequence

SCHEMA_NAME = "tilesim-report"
SCHEMA_VERSION = 3      # 2: the time and energy model's fields (model_ms ... "cost"); 3: colour
                        # compressed in the raster passes (dram_bytes.color), raw_bytes.<stream>
SCHEMA_PATH = Path(__file__).with_name("report.schema.json")

# The tiler's fallback reasons (pipelines.arch.tbdr): each is a counter tile.fallback.<reason>.
FALLBACK_REASONS = ("tile_shrink", "pass_split", "over_budget")
FALLBACK_SHORT = {"tile_shrink": "shrink", "pass_split": "split", "over_budget": "over budget"}


# What the ray-tracing columns show per pass: name -> (counter, divided by rays?)
RT_METRICS = {"rays": ("rays", False), "steps_per_ray": ("steps", True),
              "nodes_per_ray": ("nodes", True), "box_tests_per_ray": ("box_tests", True),
              "tri_tests_per_ray": ("tests.tri", True), "bytes_per_ray": ("bytes", True),
              "stack_overflows": ("stack.overflows", False), "restarts": ("stack.restarts", False),
              "anyhit": ("anyhit", False), "anyhit_ignored": ("anyhit.ignored", False),
              "texel_bytes_per_ray": ("bytes.texture", True), "culled_hits": ("hits.culled", False),
              "stack_bytes_per_ray": ("stack.onchip_bytes", True), "stack_spills": ("stack.spills", False),
              "dram_bytes_per_ray": ("dram", True), "tlas_steps_per_ray": ("tlas.steps", True),
              "instances_per_ray": ("instances", True)}
RT_CACHES = ("l0", "l1")        # the ray unit's caches: rt.<pass>.<level>_hit_rate where the part has it


def rt_fields(c, passes, mode: str, bvh: str = "flat", bvh_bytes: dict | None = None,
              orders: dict | None = None) -> dict:
    """Per ray pass: rays, and per ray the steps, nodes fetched (box + leaf), box and triangle
    tests and bytes fetched before the caches and from DRAM; stack overflows and restarts; the
    hit rate of each of the ray unit's caches the part has (rt.<pass>.l0_hit_rate, l1_hit_rate);
    any-hit invocations (on alpha-tested and blended surfaces), those that let the ray through,
    the texel bytes their alpha lookups read per ray, candidate hits a cull flag removed, the
    stack's on-chip bytes per ray and the entries it spilled to memory; with a two-level BVH
    (bvh), the TLAS's steps and the instances entered per ray (steps count both levels, bytes
    the TLAS and instance nodes too), and what the structure takes (rt.bvh_bytes.blas / tlas /
    instances) against the flattened tree (rt.bvh_bytes.flat); the order each pass visited a
    node's children in (orders: rt.order.<pass>, renderer.box_sort.ORDER_NAMES)."""
    out: dict = {"rt.layout": mode, "rt.bvh": bvh,
                 **{f"rt.bvh_bytes.{k}": v for k, v in (bvh_bytes or {}).items()},
                 **{f"rt.order.{p}": o for p, o in (orders or {}).items()}}
    for p in passes:
        rays = c[f"rt.{p}.rays"]
        for name, (counter, per_ray) in RT_METRICS.items():
            if counter == "nodes":         # box and leaf nodes; TLAS and instance nodes
                v = sum(c[f"rt.{p}.{k}"] for k in ("nodes.box", "nodes.leaf", "tlas.nodes.box", "instances"))
            elif counter == "box_tests":   # the BLASes' (or flat tree's) and the TLAS's
                v = c[f"rt.{p}.tests.box"] + c[f"rt.{p}.tlas.tests.box"]
            elif counter == "bytes":       # BLAS (or flat) nodes and leaves, TLAS and instance nodes
                v = sum(c[f"rt.{p}.bytes.{k}"] for k in ("node", "leaf", "tlas", "instance"))
            elif counter == "dram":        # nodes, leaves, any-hit texels, stack fills, TLAS
                v = sum(c[f"rt.{p}.dram_read.{s}"] for s in ("bvh_node", "bvh_leaf", "texture",
                                                               "rt_stack", "bvh_tlas"))
            else:
                v = c[f"rt.{p}.{counter}"]
            out[f"rt.{p}.{name}"] = v / rays if per_ray and rays else v
        for lv in RT_CACHES:
            looked = c[f"rt.{p}.cache.{lv}.hits"] + c[f"rt.{p}.cache.{lv}.misses"]
            if looked:
                out[f"rt.{p}.{lv}_hit_rate"] = c[f"rt.{p}.cache.{lv}.hits"] / looked
    return out


def tilesim_version() -> str:
    try:
        return metadata.version("tilesim")
    except metadata.PackageNotFoundError:      # run from a checkout that was never installed
        return "0+unknown"


def post_fields(post, preset: Preset, settings: Settings) -> dict:
    """A post chain's compression figures: the flat summary and, under "post", every surface and
    pass (pipelines.passes.postchain.PostResult.by_surface / by_pass)."""
    c = post.counters
    tax = post.tax_at(settings.fps, float(preset.memory.dram_gbps.value))
    raw, comp = c["comp.raw_bytes"], c["comp.compressed_bytes"]
    return {"comp.codec": post.codec, "comp.ratio": raw / comp if comp else 1.0,
            "comp.decompress_events": c["comp.decompress.events"],
            "comp.decompress_bytes": c["comp.decompress.bytes"], "comp.rmw_bytes": c["comp.rmw.bytes"],
            "comp.tax_bytes": c["comp.tax_bytes"], "comp.tax_gbps": tax["tax_gbps"],
            "comp.tax_bw_share": tax["tax_share"],
            "post": {"surfaces": post.by_surface(), "passes": post.by_pass()}}


def make_row(scene, preset: Preset, result, settings: Settings) -> dict:
    """The flat row of one scene x preset from a frame's totals; `rel_first` is filled in by
    run_report."""
    c = result.counters
    dram = c.dram_bytes()
    gbps = dram * settings.fps / 1e9
    peak = float(preset.memory.dram_gbps.value)
    covered, shaded = c["raster.pixels_covered"], c["raster.shaded"]
    return {
        "scene": scene.name, "preset": preset.name, "architecture": preset.architecture,
        "triangles": scene.n_triangles, "width": settings.width, "height": settings.height,
        "samples": settings.samples, "fps": settings.fps, "ms": round(result.seconds * 1e3, 1),
        **{f"dram_bytes.{s}": c.dram_bytes(stream=s) for s in STREAMS},
        **compression_fields(c),
        "dram_bytes": dram, "dram_read_bytes": c.dram_bytes("read"),
        "dram_write_bytes": c.dram_bytes("write"), "dram_mb": dram / 1e6, "rel_first": 1.0,
        "gbps": gbps, "dram_gbps": peak,
        "bw_share": gbps / peak if peak else None,
        "overdraw": shaded / covered if covered else 0.0, "shaded": shaded,
        "pixels_covered": covered,
        **{f"fallbacks.{r}": c[f"tile.fallback.{r}"] for r in FALLBACK_REASONS},
        "partial_renders": c["tile.partial_renders"],
        **geometry_fields(c),
        **texture_fields(c, preset),
        **(cost_fields(frame_cost(result, preset), settings.fps) if hasattr(result, "passes") else {}),
    }


def compression_fields(c) -> dict:
    """What compression did to the DRAM streams: raw_bytes.<stream>, the bytes the stream would
    have moved raw (what crossed, less the compressed lines' bytes, plus their raw equivalent:
    renderer.memory's comp.dram.* counters), and the colour's raw : crossed ratio (None when no
    colour crossed)."""
    raw = {s: c.dram_bytes(stream=s) + sum(c[f"comp.dram.{d}.{s}.raw"] - c[f"comp.dram.{d}.{s}"]
                                           for d in ("read", "write")) for s in STREAMS}
    color = c.dram_bytes(stream="color")
    return {**{f"raw_bytes.{s}": v for s, v in raw.items()},
            "comp_ratio.color": raw["color"] / color if color else None}


def cost_fields(cost: FrameCost, fps: float) -> dict:
    """The time and energy model's figures (pipelines.cost) as flat fields, and under "cost" each
    pass's units with their inputs (what `report --explain` prints)."""
    slowest = max(cost.time.passes, key=lambda p: p.seconds)
    by_source = cost.energy.by_source()
    return {
        "model_ms": cost.time.ms, "model_fps": cost.time.fps, "limiter": slowest.limiter,
        "limiters": "; ".join(f"{p.name}: {p.limiter}" for p in cost.time.passes),
        **{f"unit_ms.{k}": v * 1e3 for k, v in cost.time.unit_seconds().items()},
        "mj": cost.energy.mj, **{f"mj.{k}": v * 1e3 for k, v in by_source.items()},
        "watts": cost.watts(), "watts_at_fps": cost.watts(fps),
        "cost": {"passes": [
            {"pass": t.name, "kind": t.kind, "ms": t.seconds * 1e3, "limiter": t.limiter,
             "units": [{"unit": u.unit, "ms": u.seconds * 1e3, "work": u.work, "work_unit": u.work_unit,
                        "per_second": u.per_second, "inputs": u.inputs} for u in t.units],
             "mj": e.joules * 1e3, "mj_by_source": {k: v * 1e3 for k, v in e.by_source().items()},
             "energy": [{"source": x.source, "item": x.item, "count": x.count, "pj_each": x.pj_each,
                         "mj": x.joules * 1e3, "inputs": x.inputs} for x in e.terms]}
            for t, e in zip(cost.time.passes, cost.energy.passes)]},
    }


def texture_fields(c, preset: Preset) -> dict:
    """What the texture path moved (renderer.texture_l1): the formats, texels the filters read
    per shaded fragment, and bytes at each level: delivered by the L1 (its lookups x line), asked
    of L2 (its misses x line) and read from DRAM (the texture stream)."""
    t = preset.texture
    line = int(t.tex_l1_line_bytes.value)
    lookups, shaded = c["raster.texture_l1_lookups"], c["raster.shaded"]
    formats = {str(t.tex_format.value), str(t.tex_alpha_format.value)}
    return {"tex.formats": "/".join(sorted(formats)), "tex.texels": c["raster.texels"],
            "tex.texels_per_fragment": c["raster.texels"] / shaded if shaded else 0.0,
            "tex.l1_hit_rate": c["raster.texture_l1_hits"] / lookups if lookups else None,
            "tex.l1_bytes": lookups * line, "tex.l2_bytes": c["raster.texture_l1_misses"] * line,
            "tex.dram_bytes": c.dram_bytes(stream="texture")}


def geometry_fields(c) -> dict:
    """What the front end did (renderer.frontend): its path per draw, vertices shaded and ACMR,
    primitives in and on to the rasterizer, and the shader ALU ops of vertex work and culling."""
    prims = c["geom.prims_in"]
    culled = sum(v for k, v in c.items() if k.startswith("geom.prims_culled."))
    paths = [name for name in FRONTENDS if c[f"geom.draws.{name}"]]
    return {"geom.frontend": "+".join(paths) or "-", "geom.vertices_shaded": c["geom.vertices_shaded"],
            "geom.acmr": c["geom.vertices_shaded"] / prims if prims else 0.0, "geom.prims_in": prims,
            "geom.prims_to_raster": prims - culled,
            "geom.alu_ops": c["geom.vs_alu_ops"] + c["geom.cull_alu_ops"]}


def frame_row(scene, preset: Preset, settings: Settings, frames: int = 1,
              camera_path: str = "static") -> tuple[dict, FrameResult]:
    """Run one frame of a scene through a preset (pipelines.frame.run: its ray passes and compute
    passes included, their bytes in its DRAM) and make its row. With more than one frame, or a
    moving camera, the frames run as a sequence (pipelines.sequence) and the row is the last
    frame's, in steady state, plus the sequence's figures (sequence_fields)."""
    seq = None
    if frames > 1 or camera_path != "static":
        seq = run_sequence(scene, preset, settings, frames, camera_path)
        f = seq.frames[-1]
    else:
        f = run(scene, preset, settings)
    c, extra = f.counters, {}
    if f.rt is not None:
        borrowed = preset.rt.rt_params_from          # no RT unit of its own
        rays = [p.name for p in f.passes if p.kind == "rays"]
        extra.update(rt_fields(c, rays, f.rt.mode if borrowed is None
                               else f"{f.rt.mode} (as {borrowed.value})", f.rt.bvh, f.rt.bvh_bytes,
                               f.rt.orders))
    if f.post is not None:
        extra.update(post_fields(f.post, preset, settings))
    if seq is not None:
        extra.update(sequence_fields(seq, camera_path))
    row = {**make_row(scene, preset, f, settings), **extra, "surfaces": surface_fields(c),
           "counters": c.as_json(), "derived": c.derived(float(preset.memory.dram_gbps.value), settings.fps)}
    return row, f


def sequence_fields(seq: SequenceResult, camera_path: str) -> dict:
    """A sequence's figures beside its last frame's: the frame count and camera path, the DRAM
    bytes of all its frames, and under "per_frame" each frame's DRAM, colour written and
    transaction elimination (SequenceResult.per_frame)."""
    return {"frames": len(seq.frames), "camera_path": camera_path,
            "sequence_dram_bytes": seq.counters.dram_bytes(), "per_frame": seq.per_frame()}


# A surface's metadata regions (renderer.memory): DCC keys, HTILE, a codec's headers, transaction
# elimination's signatures; their bytes are the surface's cost of being compressed.
META_SUFFIXES = (".dcc", ".htile", ".codec_meta", ".te")
# surf.<region><suffix>, longest first: a region's name may itself contain dots
SURF_SUFFIXES = {".read.raw": "read_raw", ".write.raw": "write_raw", ".read": "read", ".write": "write"}


def surface_fields(c) -> dict[str, dict]:
    """Per surface, from renderer.memory's surf.<region>.{read,write}[.raw] counters: the bytes
    read and written across DRAM (compressed where compressed), "raw" what they would have moved
    raw, "crossed" read + write, "meta" the bytes of its metadata regions (<surface>.dcc, .htile,
    .codec_meta, .te) and "ratio" raw : (crossed + meta), None when nothing crossed. {} when the
    frame counted no surface."""
    regions: dict[str, dict[str, int]] = {}
    for key, v in c.items():
        if not key.startswith("surf."):
            continue
        for suffix, field in SURF_SUFFIXES.items():
            if key.endswith(suffix):
                region = regions.setdefault(key[len("surf."):-len(suffix)], {})
                region[field] = region.get(field, 0) + v
                break
    out: dict[str, dict] = {}
    for name, r in regions.items():
        owner = meta_owner(name)
        s = out.setdefault(owner, {"read": 0, "write": 0, "raw": 0, "crossed": 0, "meta": 0})
        if owner != name:
            s["meta"] += r.get("read", 0) + r.get("write", 0)
        else:
            s["read"], s["write"] = r.get("read", 0), r.get("write", 0)
            s["raw"] = r.get("read_raw", 0) + r.get("write_raw", 0)
            s["crossed"] = s["read"] + s["write"]
    for s in out.values():
        moved = s["crossed"] + s["meta"]
        s["ratio"] = s["raw"] / moved if moved else None
    return out


def meta_owner(region: str) -> str:
    """The surface a region belongs to: `color.dcc` -> `color`; a surface is its own."""
    for suffix in META_SUFFIXES:
        if region.endswith(suffix):
            return region[:-len(suffix)]
    return region


def moved_compressed(row) -> bool:
    """Whether any surface of a row crossed compressed or with metadata."""
    return any(s["raw"] != s["crossed"] or s["meta"] for s in row.get("surfaces", {}).values())


def run_report(scenes, presets, settings: Settings, progress: bool = True,
               on_result: Callable[[object, Preset, FrameResult], None] | None = None,
               frames: int = 1, camera_path: str = "static") -> list[dict]:
    """Render every scene through every preset; rows carry counters and derived figures too.
    `on_result(scene, preset, result)` sees each result before it is dropped (the HTML report
    keeps thumbnails and heat maps from it; of a sequence, its last frame's)."""
    rows = []
    columns = (TextColumn("{task.description:<32}"), BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn())
    show = progress and sys.stderr.isatty()
    with Progress(*columns, transient=True, disable=not show, console=Console(stderr=True)) as bar:
        task = bar.add_task("rendering", total=len(scenes) * len(presets))
        for scene in scenes:
            first = None
            for preset in presets:
                bar.update(task, description=f"{scene.name} / {preset.name}")
                row, r = frame_row(scene, preset, settings, frames, camera_path)
                first = first or row
                row["rel_first"] = row["dram_bytes"] / first["dram_bytes"] if first["dram_bytes"] else 1.0
                if on_result:
                    on_result(scene, preset, r)
                rows.append(row)
                bar.advance(task)
    return rows


def csv_row(row) -> dict:
    """A row as CSV has it: its flat fields, and each surface's bytes flattened to
    surface.<name>.<raw|crossed|meta|ratio> (surface_fields)."""
    flat = {k: v for k, v in row.items() if not isinstance(v, (dict, list))}
    for name, s in row.get("surfaces", {}).items():
        flat.update({f"surface.{name}.{k}": s[k] for k in ("raw", "crossed", "meta", "ratio")})
    return flat


def csv_columns(rows) -> list[str]:
    """Every flat field of any row, in first-seen order (a post-chain or ray-traced scene adds
    its own, a scene its surfaces); other nested detail (dicts, and a sequence's per_frame list)
    stays in JSON."""
    cols = {}
    for r in rows:
        cols.update(dict.fromkeys(csv_row(r)))
    return list(cols)


def to_csv(rows) -> str:
    f = io.StringIO()
    w = csv.DictWriter(f, fieldnames=csv_columns(rows), extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    w.writerows(csv_row(r) for r in rows)
    return f.getvalue()


def preset_json(p: Preset) -> dict:
    return {"name": p.name, "architecture": p.architecture, "description": p.description,
            "params": {k: {"value": v.value, "source": v.source, "label": v.label}
                       for k, v in p.all_params().items()}}


def to_json(rows, presets, settings: Settings, command: list[str], claims=None) -> dict:
    """The JSON document; report.schema.json describes it (version SCHEMA_VERSION)."""
    doc = {"schema": SCHEMA_NAME, "schema_version": SCHEMA_VERSION,
           "tilesim_version": tilesim_version(), "command": command,
           "settings": {"width": settings.width, "height": settings.height,
                        "samples": settings.samples, "fps": settings.fps,
                        "frontend": settings.frontend, "rays": list(settings.rays),
                        "ray_order": settings.ray_order},
           "streams": list(STREAMS), "presets": [preset_json(p) for p in presets], "rows": rows}
    if claims is not None:
        doc["claims"] = [c.as_json() for c in claims]
    return doc
