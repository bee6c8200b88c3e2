"""The HTML report: one self-contained file (charts as inline SVG, images as data: URIs, no
script or style from the network), for people.

Per scene: DRAM bytes by stream as stacked bars per preset, overdraw and tile fallbacks; the time
and energy model's figures (time per unit and energy per source as stacked bars per preset, and
their table); what the geometry front ends did, the post chain's compression, the ray passes, a
sequence's frames and the surfaces that moved compressed where the report has them; each
preset's image beside its heat maps (overdraw, DRAM bytes per tile, fallbacks per tile), the maps
of one kind on one colour scale across presets so that they compare. Then the claims and the
presets with the source of every parameter.
"""
from __future__ import annotations

import base64
import html
import io
from dataclasses import dataclass, field

import numpy as np
from PIL import Image

from pipelines.commands.heatmaps import MAPS, heatmap_rgba, resample
from pipelines.commands.report import FALLBACK_REASONS, FALLBACK_SHORT
from pipelines.commands.report_text import (COST_TITLE, GEOMETRY_HEADER, RT_HEADER, by_scene, cost_cells,
                                            cost_header, geometry_cells, post_tables, report_tables,
                                            rt_lines, streams_used, summary_cells, summary_header,
                                            bvh_memory_line)

THUMB_WIDTH = 320        # px: a preset's image and its maps side by side
STREAM_COLOURS = {"index": "#8c564b", "vertex": "#e377c2", "param": "#9467bd", "color": "#d62728",
                  "depth": "#1f77b4", "resolve": "#ff7f0e", "texture": "#2ca02c", "meta": "#7f7f7f",
                  "bvh_node": "#bcbd22", "bvh_leaf": "#dbdb8d", "compute": "#17becf"}


MAP_UNITS = {"overdraw": "fragments per pixel", "dram": "bytes per tile", "fallbacks": "per tile",
             "compression": ": 1, colour raw : compressed per tile",
             "texture": "texture L1 misses per tile"}


@dataclass
class Gallery:
    """Collects, from each result as it is made, a thumbnail of the image and its maps at
    thumbnail size (so a long report does not hold full frames)."""
    images: dict = field(default_factory=dict)      # (scene, preset) -> uint8 (h, w, 4)
    maps: dict = field(default_factory=dict)        # (scene, preset, kind) -> float64 (h, w)

    def __call__(self, scene, preset, result) -> None:
        w = min(THUMB_WIDTH, result.width)
        h = max(1, round(result.height * w / result.width))
        img = Image.fromarray(result.color).resize((w, h), Image.Resampling.BOX)
        self.images[scene.name, preset.name] = np.asarray(img)
        for kind, get in MAPS.items():
            try:
                values = get(result)
            except KeyError:          # an architecture without this map (fallbacks on an IMR)
                continue
            v = np.asarray(values, np.float64)
            if v.shape == (result.height, result.width):    # per pixel: average over the block
                v = np.asarray(Image.fromarray(v.astype(np.float32)).resize((w, h), Image.Resampling.BOX))
            self.maps[scene.name, preset.name, kind] = resample(v, w, h)


def _data_uri(rgba: np.ndarray) -> str:
    buf = io.BytesIO()
    Image.fromarray(rgba).convert("RGB").save(buf, format="WEBP", quality=85, method=4)
    return "data:image/webp;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _svg(fig) -> str:
    import matplotlib.pyplot as plt
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]          # drop the XML prolog and doctype: inline SVG


def _charts(rows) -> str:
    """DRAM MB by stream (stacked), overdraw, fallbacks by reason: one row of three charts."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "tilesim", "font.size": 9})
    names = [r["preset"] for r in rows]
    y = np.arange(len(rows))
    fig, axes = plt.subplots(1, 3, figsize=(13, 0.45 * len(rows) + 1.4),
                             gridspec_kw={"width_ratios": [3, 1.2, 1.2]}, sharey=True)
    left = np.zeros(len(rows))
    for s in streams_used(rows):
        mb = np.array([r[f"dram_bytes.{s}"] / 1e6 for r in rows])
        axes[0].barh(y, mb, left=left, color=STREAM_COLOURS.get(s), label=s)
        left += mb
    axes[0].set_xlabel("DRAM MB per frame")
    axes[0].legend(ncol=6, fontsize=8, loc="lower left", bbox_to_anchor=(0, 1), frameon=False)
    axes[0].set_yticks(y, names)
    axes[0].invert_yaxis()
    axes[1].barh(y, [r["overdraw"] for r in rows], color="#555")
    axes[1].set_xlabel("overdraw (shaded / covered)")
    left = np.zeros(len(rows))
    for reason in FALLBACK_REASONS:
        n = np.array([r[f"fallbacks.{reason}"] for r in rows], float)
        axes[2].barh(y, n, left=left, label=FALLBACK_SHORT[reason])
        left += n
    axes[2].set_xlabel("tile fallbacks")
    axes[2].set_xlim(0, max(1.0, left.max() * 1.05))
    axes[2].legend(ncol=3, fontsize=8, loc="lower left", bbox_to_anchor=(0, 1), frameon=False)
    for ax in axes:
        ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig)


ENERGY_COLOURS = {"dram": "#d62728", "caches": "#1f77b4", "alu": "#2ca02c", "fixed": "#7f7f7f"}


def _cost_chart(rows) -> str:
    """Per preset: each unit's time summed over the passes (stacked: the bar is the work each
    unit had, not the frame time, which is each pass's slowest unit) and the frame's energy by
    source (stacked)."""
    import matplotlib.pyplot as plt
    names = [r["preset"] for r in rows]
    y = np.arange(len(rows))
    fig, axes = plt.subplots(1, 2, figsize=(13, 0.45 * len(rows) + 1.6), sharey=True)
    units = list(dict.fromkeys(k.split(".", 1)[1] for r in rows for k in r if k.startswith("unit_ms.")))
    colours = plt.get_cmap("tab20").colors
    left = np.zeros(len(rows))
    for i, u in enumerate(units):
        ms = np.array([r.get(f"unit_ms.{u}", 0.0) for r in rows])
        axes[0].barh(y, ms, left=left, color=colours[i % len(colours)], label=u)
        left += ms
    axes[0].plot([r["model_ms"] for r in rows], y, "k|", markersize=14, label="frame (model)")
    axes[0].set_xlabel("ms per unit, summed over passes (| = the model's frame time)")
    axes[0].legend(ncol=6, fontsize=8, loc="lower left", bbox_to_anchor=(0, 1), frameon=False)
    axes[0].set_yticks(y, names)
    axes[0].invert_yaxis()
    left = np.zeros(len(rows))
    for source, colour in ENERGY_COLOURS.items():
        mj = np.array([r[f"mj.{source}"] for r in rows])
        axes[1].barh(y, mj, left=left, color=colour, label=source)
        left += mj
    axes[1].set_xlabel("mJ per frame by source")
    axes[1].legend(ncol=4, fontsize=8, loc="lower left", bbox_to_anchor=(0, 1), frameon=False)
    for ax in axes:
        ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig)


def _summary_chart(rows) -> str:
    """Every scene's DRAM per preset relative to the scene's first preset."""
    import matplotlib.pyplot as plt
    scenes = by_scene(rows)
    presets = list(dict.fromkeys(r["preset"] for r in rows))
    fig, ax = plt.subplots(figsize=(13, 3.2))
    width = 0.8 / len(presets)
    for i, p in enumerate(presets):
        rel = [next((r["rel_first"] for r in sr if r["preset"] == p), 0.0) for sr in scenes.values()]
        ax.bar(np.arange(len(scenes)) + i * width, rel, width, label=p)
    ax.axhline(1.0, color="#999", lw=0.8)
    ax.set_xticks(np.arange(len(scenes)) + 0.4 - width / 2, list(scenes), rotation=20, ha="right")
    ax.set_ylabel(f"DRAM vs {presets[0]}")
    ax.legend(ncol=min(len(presets), 6), fontsize=8, frameon=False)
    ax.spines[["top", "right"]].set_visible(False)
    return _svg(fig)


def _table(header, rows, cls="") -> str:
    head = "".join(f"<th>{html.escape(str(h))}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>"
                   for r in rows)
    return f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _scene_section(rows, gallery: Gallery, settings) -> str:
    scene = rows[0]["scene"]
    streams = streams_used(rows)
    table = _table(summary_header(streams, settings.fps), [summary_cells(r, streams) for r in rows],
                   "num")
    # one colour scale per map kind across the presets of this scene
    tops = {k: max((v.max() for (s, _, kind), v in gallery.maps.items() if s == scene and kind == k),
                   default=0.0) for k in MAPS}
    figures = []
    for r in rows:
        key = (scene, r["preset"])
        if key not in gallery.images:
            continue
        img = gallery.images[key]
        h, w = img.shape[:2]
        cells = [f'<figure><img src="{_data_uri(img)}" width="{w}" height="{h}" alt="{html.escape(r["preset"])} image">'
                 f"<figcaption>image</figcaption></figure>"]
        for kind in MAPS:
            v = gallery.maps.get((scene, r["preset"], kind))
            if v is None:
                cells.append(f'<figure class="na" style="width:{w}px;height:{h}px">'
                             f"<span>no {kind} map on {html.escape(r['architecture'])}</span></figure>")
                continue
            cells.append(f'<figure><img src="{_data_uri(heatmap_rgba(v, w, h, tops[kind]))}" width="{w}" '
                         f'height="{h}" alt="{kind}"><figcaption>{kind}: black 0, yellow '
                         f'{tops[kind]:,.4g} {MAP_UNITS[kind]}</figcaption></figure>')
        figures.append(f'<h4>{html.escape(r["preset"])}</h4><div class="strip">{"".join(cells)}</div>')
    extra = [("geometry front end", GEOMETRY_HEADER, [geometry_cells(r) for r in rows])]
    cost = ""
    if "model_ms" in rows[0]:
        cost = (f"<h4>{html.escape(COST_TITLE)}</h4>"
                + _table(cost_header(settings.fps), [cost_cells(r) for r in rows], "num")
                + f'<div class="chart">{_cost_chart(rows)}</div>')
    if "post" in rows[0]:
        extra += list(post_tables(rows, settings))
    if settings.rays:
        extra.append(("ray passes, per ray (B/ray: before the caches; hit rates and DRAM B/ray: "
                      "through them)", RT_HEADER,
                      [line for r in rows for line in rt_lines(r, settings.rays)]))
    extra += list(report_tables(rows))          # this scene's frames and surfaces
    tables = "".join(f"<h4>{html.escape(t)}</h4>" + _table(h, lines, "num") for t, h, lines in extra)
    tables += "".join(f"<p>{html.escape(line)}</p>" for r in rows
                      if settings.rays and (line := bvh_memory_line(r)) is not None)
    return (f'<section id="scene-{html.escape(scene)}"><h2>{html.escape(scene)}</h2>'
            f'<p>{rows[0]["triangles"]:,} triangles</p>{table}<div class="chart">{_charts(rows)}</div>'
            f'{cost}{tables}{"".join(figures)}</section>')


def _claims_section(claims) -> str:
    if not claims:
        return ""
    rows = [[c.claim.claim, c.claim.source, c.claim.scene, ", ".join(c.claim.presets), c.status,
             c.measured.text if c.measured else "-", c.note] for c in claims]
    return ('<section id="claims"><h2>Claims</h2><p>Each claim from the source documents, measured '
            "by tilesim at this report's resolution.</p>"
            + _table(["claim", "source", "scene", "presets", "status", "measured", "note"], rows, "claims")
            + "</section>")


def _presets_section(presets) -> str:
    parts = ['<section id="presets"><h2>Presets</h2>']
    for p in presets:
        parts.append(f"<h3>{html.escape(p.name)} <small>[{html.escape(p.architecture)}]</small></h3>"
                     f"<p>{html.escape(p.description)}</p>")
        parts.append(_table(["parameter", "value", "label", "source"],
                            [[k, v.value, v.label, v.source] for k, v in p.all_params().items()], "params"))
    return "".join(parts) + "</section>"


CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1560px}
h1{font-size:22px}h2{border-bottom:1px solid #ccc;margin-top:32px}h4{margin:12px 0 4px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:3px 7px;vertical-align:top}
th{background:#f4f4f4}table.num td{text-align:right}table.num td:nth-child(-n+2){text-align:left}
table.claims td:nth-child(5){font-weight:600}
.strip{display:flex;gap:8px}figure{margin:0}figcaption{font-size:12px;color:#555}
figure.na{display:flex;align-items:center;justify-content:center;background:#f4f4f4;color:#888}
.chart svg{max-width:100%;height:auto}nav a{margin-right:10px}
"""

# Counts what loaded, for the screenshot test: every <img> decoded and every chart present.
SCRIPT = """
window.addEventListener('load', () => {
  const imgs = Array.from(document.images);
  const ok = imgs.filter(i => i.complete && i.naturalWidth > 0).length;
  document.body.dataset.images = ok + '/' + imgs.length;
  document.body.dataset.charts = document.querySelectorAll('.chart svg').length;
});
"""


def build_html(rows, presets, settings, gallery: Gallery, claims, command: list[str], version: str) -> str:
    scenes = by_scene(rows)
    nav = " ".join(f'<a href="#scene-{html.escape(s)}">{html.escape(s)}</a>' for s in scenes)
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
            f"<title>tilesim report</title><style>{CSS}</style></head><body>"
            f"<h1>tilesim report</h1><p>{settings.width}x{settings.height}, {settings.samples} "
            f"sample(s) per pixel, GB/s at {settings.fps:g} fps. tilesim {html.escape(version)}: "
            f"<code>{html.escape(' '.join(command))}</code></p><nav>{nav} <a href=\"#claims\">claims</a> "
            f'<a href="#presets">presets</a></nav>'
            f'<div class="chart">{_summary_chart(rows)}</div>'
            + "".join(_scene_section(r, gallery, settings) for r in scenes.values())
            + _claims_section(claims) + _presets_section(presets)
            + f"<script>{SCRIPT}</script></body></html>")
