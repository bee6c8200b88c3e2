"""Reproduce the DSBR claim of issue 4 from measured counters (a script, not a test): AMD's
"about a third less bandwidth" where overdraw is high (seed 000 L739), and binning losing where
overdraw is low.

    python bench/claims_dsbr.py [--res 1920x1080]
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from pipelines import render  # noqa: E402
from pipelines.commands.claims import binning_off  # noqa: E402
from pipelines.presets import AMD_RDNA2  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--res", default="1920x1080")
    w, h = (int(v) for v in ap.parse_args().res.split("x"))
    off = binning_off(AMD_RDNA2.name)
    t = Table(title=f"DRAM MB per frame, amd-rdna2 with binning on and off, {w}x{h}")
    for col in ("scene", "overdraw", "binning off", "binning on", "change", "colour+depth off",
                "colour+depth on", "batches", "bin"):
        t.add_column(col, justify="right")
    for name in ("sponza", "overdraw:8:btf", "overdraw:32:btf", "particles", "quad", "teapot", "spheres"):
        a, b = render(name, off, w, h), render(name, AMD_RDNA2, w, h)
        da, db = a.counters.dram_bytes(), b.counters.dram_bytes()
        cd = lambda c: (c.dram_bytes(stream="color") + c.dram_bytes(stream="depth")) / 1e6  # noqa: E731
        t.add_row(name, f"{a.derived()['overdraw']:.2f}", f"{da / 1e6:.1f}", f"{db / 1e6:.1f}",
                  f"{100 * (db / da - 1):+.0f}%", f"{cd(a.counters):.1f}", f"{cd(b.counters):.1f}",
                  f"{b.counters['dsbr.batches']:,}",
                  f"{b.counters['dsbr.bin_width']}x{b.counters['dsbr.bin_height']}")
    Console().print(t)


if __name__ == "__main__":
    main()
