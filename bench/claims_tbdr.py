"""Reproduce the TBDR claims of issue 3 from measured counters (a script, not a test):

  1. TBDR vs IMR DRAM bytes per frame (seed 004 L41: 50-80% less; Antochi et al. 2004: 1.96x less)
  2. a tile-size sweep (16, 32, 64 px): parameter-buffer bytes against tile count
  3. punch-through's cost to HSR (seed 004 L233-234: HSR skips 85-95% of hidden opaque work,
     40-60% with dense punch-through)

    python bench/claims_tbdr.py [--res 1920x1080]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from pipelines import render  # noqa: E402
from pipelines.commands.claims import opaque_variant  # noqa: E402
from pipelines.presets import APPLE_M3, Param  # noqa: E402
from scenes.library import get_scene  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--res", default="1920x1080")
    w, h = (int(v) for v in ap.parse_args().res.split("x"))
    con = Console()

    t = Table(title=f"1. DRAM MB per frame, IMR vs TBDR, {w}x{h}")
    for col in ("scene", "imr-baseline", "apple-m3", "of which param", "saving", "IMR/TBDR",
                "IMR shaded", "TBDR shaded"):
        t.add_column(col, justify="right")
    for name in ("sponza", "dragon", "spheres", "overdraw:8:btf", "overdraw:32:btf"):
        a, b = render(name, "imr-baseline", w, h), render(name, "apple-m3", w, h)
        da, db = a.counters.dram_bytes() / 1e6, b.counters.dram_bytes() / 1e6
        t.add_row(name, f"{da:.1f}", f"{db:.1f}", f"{b.counters.dram_bytes(stream='param') / 1e6:.1f}",
                  f"{100 * (1 - db / da):.0f}%", f"{da / db:.2f}x", f"{a.counters['raster.shaded']:,}",
                  f"{b.counters['raster.shaded']:,}")
    con.print(t)

    t = Table(title=f"2. Tile-size sweep on sponza, {w}x{h} (apple-m3 memory system)")
    for col in ("tile", "tiles", "param buffer MB", "param lines written, MB", "param MB from DRAM", "DRAM MB"):
        t.add_column(col, justify="right")
    for size in (16, 32, 64):
        p = APPLE_M3.with_params(tile_px=Param(size, "sweep", "assumed"),
                                 tile_memory_bytes=Param(1 << 20, "sweep", "assumed"))
        c = render("sponza", p, w, h).counters
        t.add_row(str(size), f"{c['tile.tiles']:,}", f"{c['tile.param_bytes'] / 1e6:.1f}",
                  f"{c['mem.onchip.write.param'] / 1e6:.1f}", f"{c['mem.dram.read.param'] / 1e6:.1f}",
                  f"{c.dram_bytes() / 1e6:.1f}")
    con.print(t)

    t = Table(title=f"3. Punch-through and HSR, foliage, {w}x{h}")
    for col in ("variant", "IMR shaded", "TBDR shaded", "HSR skipped", "skip ratio", "flushes"):
        t.add_column(col, justify="right")
    foliage = get_scene("foliage")
    for label, scene in (("alpha-tested (MASK)", foliage), ("same geometry opaque", opaque_variant(foliage))):
        imr = render(scene, "imr-baseline", w, h).counters
        c = render(scene, "apple-m3", w, h).counters
        hidden = imr["raster.shaded"] - c["raster.pixels_covered"]
        skipped = imr["raster.shaded"] - c["raster.shaded"]
        t.add_row(label, f"{imr['raster.shaded']:,}", f"{c['raster.shaded']:,}", f"{skipped:,}",
                  f"{100 * skipped / hidden:.0f}%" if hidden > 0 else "-",
                  f"{c['tile.hsr_flush.punch_through']:,}")
    con.print(t)
    con.print("skip ratio = shading IMR did that TBDR skipped / shading beyond one fragment per covered pixel")


if __name__ == "__main__":
    main()
