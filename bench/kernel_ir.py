"""What the hot kernels compile to: instruction and reference-count figures of their LLVM IR.

    python bench/kernel_ir.py            # about 3 minutes: it compiles in a cache of its own

rasterize_tile (its per-block, per-quad and per-pixel sections), the memory replays and the BVH
chunk kernels are written with inlined helpers, under the rules renderer/raster_sections.py gives
(arrays one by one, one exit, every array used on every path, no call that is not inlined).
Timing a change to them on a shared 2-core machine moves by 10-20% from run to run; their
optimised IR does not. This prints, per kernel, the instruction
count and the NRT_incref / NRT_decref calls (atomic operations: each one left in a per-block
or per-ray path costs time): run it before and after a change and compare. It renders the quad
scene and traces a two-triangle BVH once, in a fresh numba cache (numba keeps the IR only of
kernels it compiled in this process)."""
from __future__ import annotations

import os
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

if __name__ == "__main__" and "NUMBA_CACHE_DIR" not in os.environ:
    os.environ["NUMBA_CACHE_DIR"] = tempfile.mkdtemp(prefix="tilesim-ir-")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def figures(ir: str, kernel: str) -> list[Counter]:
    """Instruction, NRT_incref and NRT_decref counts of each compiled `kernel` in a module's IR."""
    out = []
    for fn in re.split(r"\ndefine ", ir)[1:]:
        name = re.search(r"@([\w$.]+)\(", fn).group(1)
        if not re.search(rf"\d{kernel}B\d", name) or name.startswith(("_ZN7cpython", "cfunc.")):
            continue
        code = [ln.strip() for ln in fn.splitlines()[1:]]
        code = [ln for ln in code if ln and not ln.endswith(":") and not ln.startswith(";")
                and "preds =" not in ln and ln != "}"]
        out.append(Counter(instructions=len(code), incref=sum("@NRT_incref" in ln for ln in code),
                           decref=sum("@NRT_decref" in ln for ln in code)))
    return out


def report_ir(label: str, ir: str, kernel: str) -> None:
    for f in figures(ir, kernel):
        print(f"{label:24s} {f['instructions']:5d} instructions, {f['incref']:3d} NRT_incref, "
              f"{f['decref']:3d} NRT_decref")


def report(label: str, dispatcher, kernel: str) -> None:
    for ir in dispatcher.inspect_llvm().values():
        report_ir(label, ir, kernel)


def main() -> None:
    from pipelines.frame import Settings, run
    from renderer import raster_kernels as rk
    from renderer.bvh import traverse4_kernels as t4, traverse8_kernels as t8
    from renderer.bvh.traverse import warm_up
    for samples in (1, 4):
        run("quad", "imr-baseline", Settings(64, 64, samples=samples))
    for sig, ir in rk.rasterize_tile.inspect_llvm().items():      # one per sample count
        report_ir(f"rasterize_tile {sig[rk.N_SAMPLES_ARG].literal_value}x", ir, "rasterize_tile")
    # the memory replays: their producers' helpers take the request buffer (see
    # memory_requests.request_block_as) and serve_levels runs every request
    from pipelines.arch import imr_kernels, tbdr_kernels
    from renderer import memory_kernels
    run("quad", "amd-rdna2", Settings(64, 64))
    run("quad", "apple-m3", Settings(64, 64))
    report("imr replay", imr_kernels.replay, "replay")
    report("tiler_geometry", tbdr_kernels.tiler_geometry, "tiler_geometry")
    report("tiler_tiles", tbdr_kernels.tiler_tiles, "tiler_tiles")
    report("serve_levels", memory_kernels.serve_levels, "serve_levels")
    warm_up()
    report("trace_chunk", t4.trace_chunk, "trace_chunk")
    report("trace_chunk4_fast", t4.trace_chunk4_fast, "trace_chunk4_fast")
    report("trace_chunk8", t8.trace_chunk8, "trace_chunk8")


if __name__ == "__main__":
    main()
