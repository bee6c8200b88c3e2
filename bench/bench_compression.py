"""Compression figures for the closing note of issue 6, reproducible:

    python bench/bench_compression.py ratios [--size 1280x720]     # per built-in scene per codec
    python bench/bench_compression.py tax [--size 1280x720] [--scene sponza]   # per preset on the post chain
    python bench/bench_compression.py seed-tax                      # the seed's 4K RGBA16F example
    python bench/bench_compression.py te [--size 1280x720]          # transaction elimination

`ratios` renders every built-in scene once (imr-baseline; the image is the same on every
architecture) and compresses its RGBA8 colour and an RGBA16F HDR version of it (colour / 255 x 2
as half floats) with each codec; ratio = raw / (payload + metadata). DCC is given the scene's
background as its fast-clear colour (the pass clears to it). DCC is shown at each
generation's max compressed block (64 B GFX9, 128 B GFX10-11, 256 B GFX11.5+). The seed's DCC
claim is 2:1 to 8:1 (seed-notes/000_partA.md L161), Arm's AFBC claim "up to 50%" saving, i.e.
2:1 (peers.md §2.6).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from pipelines import render  # noqa: E402
from pipelines.presets.compression import PARAMS  # noqa: E402
from pipelines.passes.postchain import (LPDDR5_GBPS, chain_kernels, gbuffer, run_graph,  # noqa: E402
                                        tax_frame, transaction_elimination, two_frame_scene)
from scenes.library import POST_CHAIN  # noqa: E402
from renderer.compression import block_sizes, compressed_size  # noqa: E402
from renderer.compression import codecs as C  # noqa: E402
from renderer.rop import rgba8  # noqa: E402
from scenes.library import get_scene, scene_names  # noqa: E402

CODECS = [("dcc-64", "dcc", 64), ("dcc-128", "dcc", 128), ("dcc-256", "dcc", 256),
          ("afbc", "afbc", 256), ("apple", "apple", 256), ("ubwc", "ubwc", 256)]


def _size(text: str) -> tuple[int, int]:
    w, h = text.lower().split("x")
    return int(w), int(h)


def _hdr(color: np.ndarray) -> np.ndarray:
    return (color.astype(np.float32) / 255.0 * 2.0).astype(np.float16).view(np.uint16)


def _covered_ratio(img: np.ndarray, covered: np.ndarray, codec: str, max_block: int, clear) -> float:
    """Ratio over the metadata blocks that hold geometry (a pixel with depth < 1), padded raw."""
    L = C.layout(codec, 8 * img.itemsize, max_block, clear)
    bw, bh = int(L[C.K.L_BW]), int(L[C.K.L_BH])
    sizes = block_sizes(img, codec, max_block, clear)
    nby, nbx = sizes.shape
    pad = np.zeros((nby * bh, nbx * bw), bool)
    pad[:covered.shape[0], :covered.shape[1]] = covered
    hit = pad.reshape(nby, bh, nbx, bw).any((1, 3))
    return hit.sum() * bw * bh * 4 * img.itemsize / sizes[hit].sum() if hit.any() else float("nan")


def ratios(width: int, height: int) -> None:
    print(f"compression ratio raw:(payload+metadata), {width}x{height}, colour of imr-baseline; "
          f"'covered': only the blocks that hold geometry")
    head = "".join(f"{n:>9}" for n, _, _ in CODECS)
    print(f"{'scene':<12}{'fmt':<16}{head}")
    for scene in scene_names():
        result = render(scene, "imr-baseline", width, height)
        color = result.color
        covered = result.depth < 1.0
        hdr = _hdr(color)
        # the pass clears to the scene's background: DCC's fast clear knows that colour
        bg = rgba8(get_scene(scene).background)
        for fmt, img, clear in (("rgba8", color, bg), ("rgba16f", hdr, _hdr(bg[None, None])[0, 0])):
            row = "".join(f"{img.nbytes / compressed_size(img, c, m, clear if c == 'dcc' else None):>8.2f}:1"[-9:]
                          for _, c, m in CODECS)
            print(f"{scene:<12}{fmt:<16}{row}")
            row = "".join(f"{_covered_ratio(img, covered, c, m, clear if c == 'dcc' else None):>8.2f}:1"[-9:]
                          for _, c, m in CODECS)
            print(f"{'':<12}{fmt + ' covered':<16}{row}")


def _llc_bytes(preset: str) -> int:
    """The preset's last-level cache (Infinity Cache, else L2/SLC) for the coarse residency model."""
    from pipelines.presets import PRESETS
    p = PRESETS.get(preset)
    if p is None:
        return 0
    return int((p.memory.llc_bytes or p.memory.l2_bytes).value)


def tax(width: int, height: int, scene: str) -> None:
    t0 = time.perf_counter()
    g, _ = gbuffer(scene, width, height)
    print(f"post chain on {scene} {width}x{height} (G-buffer + light, ssao, tonemap, blur_x, blur_y "
          f"+ present); MB per frame, GB/s at 60 fps")
    print(f"{'preset':<13}{'codec':<7}{'DRAM MB':>9}{'tax MB':>8}{'decomp MB':>10}{'rmw MB':>8}"
          f"{'tax GB/s':>9}{'boundary GB/s':>14}{'LLC MB':>8}{'DRAM MB w/ LLC':>16}")
    for preset in PARAMS:
        passes, kernels = POST_CHAIN, chain_kernels(g)
        r = run_graph(passes, preset, kernels)
        c, at = r.counters, r.tax_at()
        llc = _llc_bytes(preset)
        cached = run_graph(passes, preset, kernels, cache_bytes=llc).counters.dram_bytes() if llc else None
        print(f"{preset:<13}{r.codec:<7}{c.dram_bytes() / 1e6:>9.2f}{c['comp.tax_bytes'] / 1e6:>8.2f}"
              f"{c['comp.decompress.bytes'] / 1e6:>10.2f}{c['comp.rmw.bytes'] / 1e6:>8.2f}"
              f"{at['tax_gbps']:>9.2f}{at['boundary_gbps']:>14.2f}"
              + (f"{llc / 2**20:>8.0f}{cached / 1e6:>16.2f}" if llc else f"{'-':>8}{'-':>16}"))
    print(f"({time.perf_counter() - t0:.1f} s)")


def seed_tax() -> None:
    g, lit = gbuffer("sponza", 3840, 2160)
    hdr = _hdr(lit.color)
    targets = {"hdr": hdr, "normal": g["normal"]}
    U = sum(t.nbytes for t in targets.values())
    print(f"seed example: sponza 3840x2160, 2 RGBA16F MRTs (hdr, normal) = {U / 1e6:.1f} MB raw, "
          f"4 PS<->CS switches; seed: 128 MB raw, 16 MB compressed, 448 MB/frame, 26.9 GB/s, ~52% of 51.2 GB/s")
    for preset in PARAMS:
        p = PARAMS[preset]
        if p.codec.value == "none":
            continue
        C = sum(compressed_size(t, p.codec.value, p.dcc_max_compressed_block.value) for t in targets.values())
        passes, kernels = tax_frame(targets)
        r = run_graph(passes, preset, kernels)
        at = r.tax_at()
        print(f"{preset:<13}{p['codec']:<6} C {C / 1e6:6.1f} MB ({U / C:4.2f}:1)  tax "
              f"{at['tax_mb']:6.1f} MB/frame = {at['tax_gbps']:5.2f} GB/s at 60 fps = "
              f"{100 * at['tax_share']:3.0f}% of {LPDDR5_GBPS} GB/s; decompress passes "
              f"{r.counters['comp.decompress.bytes'] / 1e6:.1f} MB")


def te(width: int, height: int) -> None:
    frames = [render(two_frame_scene(i), "imr-baseline", width, height).color for i in range(3)]
    full = width * height * 4
    for i, c in enumerate(transaction_elimination(frames)):
        what = ("first frame", "sphere moved", "static frame")[i]
        print(f"frame {i} ({what}): tiles written {c['te.tiles_written']}/{c['te.tiles']}, DRAM "
              f"{c.dram_bytes() / 1e3:.1f} kB of {full / 1e3:.1f} kB: saving "
              f"{100 * (1 - c.dram_bytes() / full):.2f}%")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=["ratios", "tax", "seed-tax", "te"])
    ap.add_argument("--size", default="1280x720")
    ap.add_argument("--scene", default="sponza")
    a = ap.parse_args()
    w, h = _size(a.size)
    if a.what == "ratios":
        ratios(w, h)
    elif a.what == "tax":
        tax(w, h, a.scene)
    elif a.what == "seed-tax":
        seed_tax()
    else:
        te(w, h)


if __name__ == "__main__":
    main()
