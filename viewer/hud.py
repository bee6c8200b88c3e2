"""What the viewer writes on screen and into the screenshot's JSON: panel titles, the counter
strip under each panel (with the difference to the first panel), the footer with the colour
scale, the help box. Text is drawn with Pillow into RGBA arrays that the window uploads as
textures. Pure Python + numpy + Pillow, no GL.
"""
from __future__ import annotations

import functools

import numpy as np

from .keys import HELP
from .modes import PIXEL, Scale, inferno, mode_title

ARCH_NAMES = {
    "imr": "IMR: immediate mode",
    "dsbr": "DSBR: immediate mode + draw-stream binning",
    "tbdr": "TBDR: tile-based deferred",
}
MIN_FONT = 8          # px: the smallest text drawn to make a line fit
FPS = 60.0            # the strip's GB/s is DRAM bytes per frame at this frame rate
BG = (24, 26, 30, 255)
FG = (225, 228, 232, 255)
DIM_FG = (150, 155, 162, 255)
BETTER = (120, 200, 120, 255)
WORSE = (235, 120, 100, 255)


@functools.lru_cache(maxsize=8)
def font(size: int):
    from PIL import ImageFont
    for name in ("DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"):
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            pass
    return ImageFont.load_default(size=size)


def title(preset) -> str:
    arch = ARCH_NAMES.get(preset.architecture, preset.architecture)
    if preset.tiler is not None and not preset.tiler.hsr.value:   # Mali, Adreno: no HSR
        arch = "tiler: early Z in draw order"
    return f"{preset.name}  ·  {arch}"


def figures(result) -> dict[str, float]:
    """The strip's numbers for one panel, all computed from the counters (DESIGN.md §6).
    fallbacks: every counted fall off a fast path, whatever its unit: tile.fallback.* (tiles or
    passes), dsbr.fallback.* (draws run unbinned), geom.fallback.* (draws back on legacy)."""
    c = result.counters
    d = c.derived(result.dram_gbps, FPS)
    return {
        "dram_mb": d["dram_mb"],
        "gbps_at_60fps": d["gbps_at_fps"],
        "dram_bw_share": d.get("dram_bw_share", 0.0),
        "overdraw": d["overdraw"],
        "shaded": int(c["raster.shaded"]),
        "fallbacks": int(sum(v for k, v in c.items() if ".fallback." in f".{k}")),
        **({"rt_steps_per_ray": c["rt.steps"] / c["rt.rays"],
            "rt_bvh_bytes_per_ray": sum(c[f"rt.bytes.{k}"] for k in ("node", "leaf", "tlas", "instance"))
                                    / c["rt.rays"],
            "rt_tlas_steps_per_ray": c["rt.tlas.steps"] / c["rt.rays"],
            "rt_anyhit": int(c["rt.anyhit"]), "rt_anyhit_through": int(c["rt.anyhit.ignored"])}
           if c["rt.rays"] else {}),
        **cost_figures(result),
    }


def cost_figures(result) -> dict:
    """The time and energy model's figures (pipelines.cost) for a frame of a built-in preset:
    model ms, the limiter of its slowest pass, mJ; none for a result without passes."""
    from pipelines.cost import frame_cost
    from pipelines.presets import PresetError, get_preset
    if not hasattr(result, "passes"):
        return {}
    try:
        preset = get_preset(result.preset)
    except PresetError:
        return {}
    cost = frame_cost(result, preset)
    slowest = max(cost.time.passes, key=lambda p: p.seconds)
    return {"model_ms": cost.time.ms, "limiter": slowest.limiter, "mj": cost.energy.mj}


def differences(fig: dict, first: dict) -> dict[str, float]:
    """Panel minus first panel, figure by figure (the first panel's own are all zero)."""
    return {k: fig[k] - first[k] for k in fig if k in first and not isinstance(fig[k], str)}


def _pct(new: float, old: float) -> str:
    return f"{(new - old) / old * 100:+.1f}%" if old else "n/a"


def strip_lines(fig: dict, first: dict | None, first_name: str) -> list[list[tuple[str, tuple]]]:
    """Three lines of (text, colour) runs: the figures, then the difference to the first panel."""
    share = f" ({fig['dram_bw_share'] * 100:.2f}% of peak)" if fig["dram_bw_share"] else ""
    line1 = [(f"DRAM {fig['dram_mb']:.2f} MB/frame   {fig['gbps_at_60fps']:.2f} GB/s at 60 fps{share}", FG)]
    rays = (f"   rays: {fig['rt_steps_per_ray']:.1f} steps, {fig['rt_bvh_bytes_per_ray']:,.0f} B of BVH each"
            if "rt_steps_per_ray" in fig else "")
    if fig.get("rt_tlas_steps_per_ray"):      # a two-level BVH: the TLAS's share of the steps
        rays += f" ({fig['rt_tlas_steps_per_ray']:.1f} TLAS, {fig['rt_steps_per_ray'] - fig['rt_tlas_steps_per_ray']:.1f} BLAS)"
    if fig.get("rt_anyhit"):          # alpha-tested or blended surfaces met (renderer.bvh.anyhit)
        rays += f", {fig['rt_anyhit']:,} any-hits ({fig['rt_anyhit_through']:,} let through)"
    model = (f"   model {fig['model_ms']:.3g} ms ({fig['limiter']}), {fig['mj']:.3g} mJ"
             if "model_ms" in fig else "")
    line2 = [(f"overdraw {fig['overdraw']:.2f}   shaded {fig['shaded']:,}   fallbacks {fig['fallbacks']}{model}{rays}", FG)]
    if first is None:
        return [line1, line2, [("the other panels' differences are to this one", DIM_FG)]]
    line3 = [(f"vs {first_name}: ", DIM_FG)]
    for key, label, fmt in (("dram_mb", "DRAM", None), ("overdraw", "overdraw", "{:+.2f}"),
                            ("shaded", "shaded", "{:+,}"), ("fallbacks", "fallbacks", "{:+d}")):
        delta = fig[key] - first[key]
        text = _pct(fig[key], first[key]) if fmt is None else fmt.format(delta)
        color = DIM_FG if delta == 0 else (BETTER if delta < 0 else WORSE)   # less is cheaper
        line3 += [(f"{label} ", DIM_FG), (text + "   ", color)]
    return [line1, line2, line3]


def _runs(lines):
    return [[(line, FG)] if isinstance(line, str) else line for line in lines]


def fit_size(lines, width: int, size: int = 13, pad: int = 4) -> int:
    """The largest font size up to `size` at which every line fits in `width` (narrow panels get
    a smaller font rather than cut text), never below MIN_FONT."""
    f = font(size)
    widest = max((sum(f.getlength(t) for t, _ in runs) for runs in _runs(lines)), default=0)
    if widest > width - 2 * pad:
        size = max(MIN_FONT, int(size * (width - 2 * pad) / widest))
    return size


def text_image(lines, width: int, height: int, size: int = 13, bg=BG, pad: int = 4) -> np.ndarray:
    """uint8 (height, width, 4): lines of (text, colour) runs (or plain strings) top to bottom,
    at `size` or smaller where a line would not fit."""
    from PIL import Image, ImageDraw
    img = Image.new("RGBA", (max(width, 1), max(height, 1)), bg)
    draw = ImageDraw.Draw(img)
    lines = _runs(lines)
    size = fit_size(lines, width, size, pad)
    f = font(size)
    y = pad
    for line in lines:
        x = pad
        for text, color in line:
            draw.text((x, y), text, font=f, fill=color)
            x += draw.textlength(text, font=f)
        y += size + 4
    return np.asarray(img)


def footer_image(width: int, height: int, mode: str, scale: Scale, status: str) -> np.ndarray:
    """The mode, its colour scale (a gradient with its ends, or reason swatches) and the status."""
    from PIL import Image, ImageDraw
    img = Image.new("RGBA", (max(width, 1), max(height, 1)), BG)
    draw = ImageDraw.Draw(img)
    f = font(13)
    y = (height - 13) // 2 - 1
    x = 6
    draw.text((x, y), mode_title(mode), font=f, fill=FG)
    x += draw.textlength(mode_title(mode), font=f) + 12
    if mode in ("overdraw", "dram", "depth") or mode.startswith(PIXEL):
        lo, hi = (f"{scale.lo:.3g}", f"{scale.hi:.3g} {scale.unit}")
        if mode == "depth":          # near is bright
            lo, hi = f"{scale.lo:.3g} (near)", f"{scale.hi:.3g} {scale.unit}"
        draw.text((x, y), lo, font=f, fill=DIM_FG)
        x += draw.textlength(lo, font=f) + 6
        bar_w = 160
        ramp = inferno()[:, :3]
        if mode == "depth":
            ramp = ramp[::-1]
        cols = ramp[np.linspace(0, 255, bar_w).astype(int)]
        bar = np.repeat(cols[None], 12, axis=0).astype(np.uint8)
        img.paste(Image.fromarray(bar, "RGB"), (int(x), (height - 12) // 2))
        x += bar_w + 6
        draw.text((x, y), hi, font=f, fill=DIM_FG)
        x += draw.textlength(hi, font=f) + 12
    elif mode == "fallbacks":
        if not scale.swatches:
            draw.text((x, y), "no tile fallbacks in these panels", font=f, fill=DIM_FG)
            x += draw.textlength("no tile fallbacks in these panels", font=f) + 12
        for reason, rgb in scale.swatches:
            draw.rectangle((x, (height - 12) // 2, x + 12, (height - 12) // 2 + 12), fill=rgb)
            x += 16
            draw.text((x, y), reason, font=f, fill=FG)
            x += draw.textlength(reason, font=f) + 12
    fs = font(fit_size([status], max(width - x, 1), 13, 6))
    sw = draw.textlength(status, font=fs)
    draw.text((max(x, width - sw - 6), y), status, font=fs, fill=DIM_FG)   # cut at the right edge
    return np.asarray(img)


def help_image() -> np.ndarray:
    """The help box (keys.HELP), drawn over the panels while H / F1 is on."""
    from PIL import Image, ImageDraw
    size, key_w, width = 14, 170, 560
    height = (len(HELP) + 1) * (size + 5) + 16
    img = Image.new("RGBA", (width, height), (10, 12, 16, 240))
    draw = ImageDraw.Draw(img)
    f = font(size)
    draw.text((10, 8), "tilesim view: keys and mouse", font=f, fill=FG)
    for i, (keys, what) in enumerate(HELP):
        y = 8 + (i + 1) * (size + 5)
        draw.text((10, y), keys, font=f, fill=(255, 200, 120, 255))
        draw.text((10 + key_w, y), what, font=f, fill=FG)
    return np.asarray(img)


def snapshot(scene_name: str, camera, mode: str, frame, presets) -> dict:
    """The screenshot's JSON: every panel's counters, derived figures and difference to the first."""
    from dataclasses import asdict
    figs = [figures(r) for r in frame.results]
    costed = frame.costed.request
    return {
        "scene": scene_name,
        "camera": asdict(camera),
        # A picture frame's counters are an earlier camera's (the costs follow the picture)
        "costs_camera": asdict(costed.scene.camera if costed is not frame.request else camera),
        "mode": mode,
        "width": frame.request.width,
        "height": frame.request.height,
        "samples": frame.request.samples,
        "full_resolution": frame.request.full,
        "frontend": frame.request.frontend,
        "rays": list(frame.request.rays) if frame.request.full else [],
        "panels": [{
            "preset": p.name,
            "architecture": p.architecture,
            "counters": r.counters.as_json(),
            "derived": r.derived(),
            "figures": f,
            "vs_first": differences(f, figs[0]),
        } for p, r, f in zip(presets, frame.results, figs)],
    }
