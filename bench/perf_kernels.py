"""Where a frame's time goes inside the numba kernels: Linux perf samples by compiled function.

    python bench/perf_kernels.py [--scene pul1duel] [--preset imr-baseline] [--res 1280x720]
                                 [--seconds 10] [--annotate sample_texture [--listing f.txt]]
                                 [--rays primary|ao]     # bvh8 traversal as bench/bench_bvh.py's
                                 [--picture]             # the viewer's picture, no costs
                                 [--annotate rasterize_tile --lines]   # by source line
                                 [--refcounts]           # who takes numba's reference counts
                                 [--threads]             # shares by thread and function

perf cannot name numba's machine code (it lives in anonymous memory), so this writes the map
perf reads for JIT code (/tmp/perf-<pid>.map): each kernel loaded from numba's cache brings its
object file, whose symbol table (readelf) gives every compiled function's offset and size (the
kernel, the functions it calls rather than inlines, numba's parfor bodies), and the address the
loader gave the kernel fixes the rest. NRT_incref / NRT_decref are numba's reference counts
(atomic operations): time there is an array reference-counted in a hot path, which
renderer/raster_sections.py's rules for inlined helpers exist to avoid. `--annotate` prints
the hottest instructions of one function (objdump of its object, samples per instruction,
with its relocations: the listing names each call's target, NRT_incref among them).

`--lines` (with --annotate) gives the function's samples by source line instead: the kernels are
compiled with numba's debug information (NUMBA_DEBUGINFO=1, into a cache of their own, so run
it twice: the first run fills that cache) and addr2line reads each sampled instruction's line
and the chain of inlined helpers it sits in from the object file. Printed: by the innermost line
(the helper's own code: a vector filter, a tag compare) and by the line of the annotated
function's own file that the chain starts from (the call of an inlined helper in the kernel).
Debug information leaves LLVM's optimisation as it is, but a few helpers are then called where
they were inlined (numba's min, for one): their share is the debug build's.

`--refcounts` says which compiled functions the samples in NRT_incref and NRT_decref return
to: perf records each sample's first 64 bytes of stack, and since those two are 16-byte leaf
functions that never touch the stack, its top word is the caller's return address. A kernel
listed there increfs its arrays at every call and prunes no pair: a path that may raise (a
helper in Python's error model dividing), an array read on one path only, or a second return
(tests/test_refcounts.py holds the kernels fixed so far).

`--threads` splits the shares by thread (this process's main thread named 'main', the others
by id): a pipelined replay's producer runs on the main thread and its consumer on the memory
model's second thread, so whether the replay is balanced is read from one profile (sponza at
1080p through imr-baseline, 2026-12-07: the producer's replay and serve_levels 15.6% of the
samples, the consumer's serve_levels and serve_handed 15.3%).

Kernels compiled in this process bring no object file: run once to fill the cache first (the
script says so). Needs `perf` (linux-tools), `readelf` and `objdump` (binutils), and a
kernel.perf_event_paranoid that lets a process profile its own child (<= 2)."""
from __future__ import annotations

import argparse
import bisect
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))     # bench_bvh's layouts

if "--lines" in sys.argv:          # (before numba is imported: it reads them once)
    os.environ["NUMBA_DEBUGINFO"] = "1"
    os.environ["NUMBA_CACHE_DIR"] = os.path.join(tempfile.gettempdir(), "tilesim-debuginfo-cache")

import numba.core.codegen as codegen  # noqa: E402

OBJECTS: list = []        # (library, object code) of each kernel loaded from the cache
_set_object = codegen.CPUCodeLibrary._set_compiled_object


def _record(self, value):
    OBJECTS.append((self, value))
    return _set_object(self, value)


codegen.CPUCodeLibrary._set_compiled_object = _record


COPY = "#"           # symbol + COPY + n: another kernel's copy of a function (write_map)
IN_KERNEL = "@"      # parfor symbol + IN_KERNEL + the kernel whose parallel loop it is
NRT_AT: dict[str, int] = {}     # the runtime's NRT_incref and NRT_decref: address (write_map)


def readable(symbol: str) -> str:
    """module.function of a numba symbol (_ZN8renderer13shade_kernels14sample_textureB4v...)."""
    symbol = symbol.split(COPY)[0]
    prefix = "cpython wrapper of " if "_ZN7cpython" in symbol else ""
    if "numba_parfor_gufunc" in symbol:
        kernel = symbol.split(IN_KERNEL)[1] if IN_KERNEL in symbol else "?"
        return (f"parfor body of {kernel}"
                + (" (gufunc wrapper)" if symbol.startswith("__gufunc__") else ""))
    m = re.search(r"_ZN(?:7cpython)?((?:\d+[A-Za-z_]\w*?)+?)(?:B\d|E)", symbol)
    if not m:
        return symbol
    parts, s = [], m.group(1)
    while s:
        n = re.match(r"\d+", s)
        if not n:
            break
        k = int(n.group())
        parts.append(s[n.end():n.end() + k])
        s = s[n.end() + k:]
    return prefix + ".".join(parts)


def functions(obj: bytes) -> list[tuple[int, int, str, bool]]:
    """(offset, size, symbol, global) of every function an object file defines."""
    with tempfile.NamedTemporaryFile(suffix=".o") as f:
        f.write(obj)
        f.flush()
        table = subprocess.run(["readelf", "-sW", f.name], capture_output=True, text=True).stdout
    out = []
    for line in table.splitlines():
        p = line.split()
        if len(p) >= 8 and p[3] == "FUNC" and p[6] != "UND":
            out.append((int(p[1], 16), int(p[2]), p[7], p[4] == "GLOBAL"))
    return out


def write_map(path: Path) -> dict[str, tuple[int, int, bytes, int]]:
    """Write perf's JIT map for the kernels loaded so far; returns symbol -> (address, size,
    object code, offset in it) for --annotate. A function that several kernels carry (each
    kernel's object has its own copy of a callee it does not inline) gets a name per copy, so
    that --annotate reads the copy the samples fell in; a parallel loop's body is named after
    its kernel (numba's names for them say only where in memory they were made)."""
    from numba.core.runtime.nrt import rtsys
    rows, where = [], {}
    for lib, obj in OBJECTS:
        syms = functions(obj)
        base = None
        for off, _, name, is_global in syms:
            if is_global:
                try:
                    base = lib.get_pointer_to_function(name) - off
                    break
                except Exception:      # (a symbol the engine does not export)
                    continue
        if base is None:
            continue
        for off, size, name, _ in syms:
            if name.startswith("NRT_"):
                continue        # the copies the linker did not pick: the runtime's are below
            if "numba_parfor_gufunc" in name:
                name += IN_KERNEL + lib.name.split("<locals>")[0].replace(" ", "_")
            if name in where:
                name += f"{COPY}{len(where)}"
            rows.append((base + off, size, name))
            where[name] = (base + off, size, obj, off)
    for name in ("NRT_incref", "NRT_decref"):
        NRT_AT[name] = rtsys.library.get_pointer_to_function(name)
        rows.append((NRT_AT[name], 16, name))
    rows.sort()
    path.write_text("".join(f"{a:x} {s:x} {n}\n" for a, s, n in rows))
    return where


def source_lines(obj: bytes, hits: collections.Counter, own_file: str, top: int) -> None:
    """The samples `hits` (offset in the object -> count) by source line, through the object's
    debug information: by the innermost line of each instruction's chain of inlined helpers,
    and by the outermost line in `own_file` (the annotated function's module)."""
    with tempfile.NamedTemporaryFile(suffix=".o") as f:
        f.write(obj)
        f.flush()
        out = subprocess.run(["addr2line", "-a", "-i", "-j", ".ltext", "-e", f.name]
                             + [hex(a) for a in sorted(hits)], capture_output=True,
                             text=True).stdout.splitlines()
    chains: dict[int, list[str]] = {}
    for line in out:
        if line.startswith("0x"):
            chain = chains[int(line, 16)] = []
        else:
            chain.append(re.sub(r".*/(renderer|pipelines|scenes|numba)/", r"\1/", line))
    inner, outer = collections.Counter(), collections.Counter()
    for a, n in hits.items():
        chain = chains.get(a) or ["?"]
        inner[chain[0]] += n
        own = [c for c in chain if own_file in c]
        outer[own[-1] if own else chain[-1]] += n
    total = sum(hits.values())
    for title, by in (("by the innermost line", inner),
                      (f"by the line of {own_file} it is inlined from", outer)):
        print(f"  {title}:")
        for line, n in by.most_common(top):
            print(f"    {100 * n / total:5.1f}%  {line}")


def annotate(data: Path, symbol: str, where, top: int, listing: Path | None,
             lines_by_source: bool = False) -> None:
    addr, size, obj, off = where[symbol]
    ips = subprocess.run(["perf", "script", "-i", str(data), "-F", "ip"], capture_output=True,
                         text=True).stdout.split()
    hits = collections.Counter(int(ip, 16) - addr + off for ip in ips
                               if addr <= int(ip, 16) < addr + size)
    with tempfile.NamedTemporaryFile(suffix=".o") as f:
        f.write(obj)
        f.flush()
        dis = subprocess.run(["objdump", "-d", "-r", "--no-show-raw-insn", "-j", ".ltext", f.name,
                              f"--start-address={off}", f"--stop-address={off + size}"],
                             capture_output=True, text=True).stdout
    code = {}
    for line in dis.splitlines():
        a, _, ins = line.partition(":")
        try:
            code[int(a.strip(), 16)] = ins.strip()
        except ValueError:
            pass
    if not hits:
        return                       # a copy no sample fell in (write_map)
    total = sum(hits.values())
    copy = symbol.split(COPY)[1] if COPY in symbol else "0"
    if lines_by_source:
        print(f"\n{readable(symbol)} (copy {copy}): {total} samples")
        source_lines(obj, hits, readable(symbol).rsplit(".", 1)[0].replace(".", "/") + ".py", top)
        return
    print(f"\n{readable(symbol)} (copy {copy}): {total} samples, hottest instructions (offset in "
          "the object)")
    for a, n in hits.most_common(top):
        print(f"  {100 * n / total:5.1f}%  {a:6x}  {code.get(a, '?')[:90]}")
    if listing is not None:          # every instruction in order, for the code around a hot one
        fn = readable(symbol).split(".")[-1]
        out = listing.with_name(f"{listing.stem}.{fn}.{copy}{listing.suffix}")
        out.write_text("".join(f"{100 * hits.get(a, 0) / total:5.1f}%  {a:6x}  {ins}\n"
                               for a, ins in sorted(code.items())))
        print(f"  (every instruction: {out})")


def refcount_callers(data: Path, where, top: int) -> None:
    """The functions NRT_incref and NRT_decref return to, by their samples (--refcounts): the
    raw dump's bytes of each sample, whose user stack starts with the return address."""
    dump = subprocess.run(["perf", "report", "-D", "-i", str(data)], capture_output=True,
                          text=True).stdout
    spans = sorted((a, a + size, readable(name)) for name, (a, size, _, _) in where.items())
    starts = [lo for lo, _, _ in spans]

    def named(address: int) -> str | None:
        i = bisect.bisect_right(starts, address) - 1
        return spans[i][2] if i >= 0 and address < spans[i][1] else None
    nrt = {name: (lo, lo + 16) for name, lo in NRT_AT.items()}
    callers, raw, total, ip = collections.Counter(), bytearray(), 0, None
    for line in dump.splitlines():
        m = re.match(r"\.\s+([0-9a-f]{4}):\s+((?:[0-9a-f]{2} )+)", line)
        if m:                                  # the record's bytes, before its parsed lines
            raw = bytearray() if m.group(1) == "0000" else raw
            raw += bytes.fromhex(m.group(2).replace(" ", ""))
            continue
        m = re.search(r"PERF_RECORD_SAMPLE\(.*?\): \d+/\d+: 0x([0-9a-f]+)", line)
        if m:
            total += 1
            ip = int(m.group(1), 16)
            continue
        m = re.search(r"ustack: size (\d+), offset 0x([0-9a-f]+)", line)
        if m and ip is not None and any(lo <= ip < hi for lo, hi in nrt.values()):
            at = int(m.group(2), 16) + 8          # past the stack dump's size word
            callers[named(int.from_bytes(raw[at:at + 8], "little")) or "?"] += 1
            ip = None
    n = sum(callers.values())
    print(f"\nNRT_incref and NRT_decref: {n} of {total} samples "
          f"({100 * n / max(total, 1):.1f}%), by the function they return to:")
    for name, k in callers.most_common(top):
        print(f"  {100 * k / max(total, 1):5.2f}%  {name}")


def workload(a, width: int, height: int):
    """The function to run over and over while perf samples, and what it is."""
    from scenes.library import get_scene
    scene = get_scene(a.scene)
    from renderer.geometry import forget_setups
    if a.picture:
        from pipelines.picture import picture
        from pipelines.presets import get_preset
        preset = get_preset(a.preset)

        def drawn():
            forget_setups()               # the camera moved
            picture(scene, preset, width, height)
        return drawn, f"{a.scene}'s picture (pipelines.picture) via {a.preset} at {width}x{height}"
    if a.rays is None:
        from pipelines import render

        def frame():
            forget_setups()               # as bench/benchmark.py: the camera moved
            render(scene, a.preset, width, height)
        return frame, f"{a.scene} via {a.preset} at {width}x{height}"
    import numpy as np

    from bench_bvh import BOX_SORT, ao_race_rays, layouts
    from pipelines.passes.raytrace import camera_rays
    from renderer.bvh import Triangles, trace_rays
    tris = Triangles.of_scene(scene)
    bvh8 = layouts(tris)[0]["bvh8"]
    rays = camera_rays(scene.camera, width, height)
    rays[:, 3], rays[:, 7] = 0.0, np.inf
    if a.rays == "ao":
        rays = ao_race_rays(tris, rays, trace_rays(bvh8, rays)[0])
    any_hit = a.rays == "ao"
    return (lambda: trace_rays(bvh8, rays, any_hit=any_hit, box_sort=BOX_SORT),
            f"{a.scene}: {len(rays):,} {a.rays} rays through bvh8 ({width}x{height}, box sort "
            f"{BOX_SORT})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scene", default="pul1duel")
    ap.add_argument("--preset", default="imr-baseline")
    ap.add_argument("--res", default="1280x720")
    ap.add_argument("--seconds", type=float, default=10.0, help="how long to sample")
    ap.add_argument("--frequency", type=int, default=999, help="samples per second")
    ap.add_argument("--top", type=int, default=20, help="functions (and instructions) shown")
    ap.add_argument("--annotate", default=None, help="a function name (or part of one)")
    ap.add_argument("--listing", type=Path, default=None,
                    help="with --annotate: also write each annotated copy's whole listing, every "
                         "instruction with its share, here (the function's name and the copy's "
                         "number before the suffix)")
    ap.add_argument("--rays", choices=("primary", "ao"), default=None,
                    help="profile the bvh8 traversal of the scene's primary rays, or of one AO "
                         "ray a hit pixel (bench/bench_bvh.py's race), instead of frames")
    ap.add_argument("--lines", action="store_true",
                    help="with --annotate: the function's samples by source line (compiles the "
                         "kernels with debug information into a cache of their own: run twice)")
    ap.add_argument("--refcounts", action="store_true",
                    help="also say which functions NRT_incref and NRT_decref return to (the "
                         "kernels that take atomic reference counts at every call)")
    ap.add_argument("--threads", action="store_true",
                    help="shares by thread and function: which thread runs what (a pipelined "
                         "replay's producer, this process's main thread, against its consumer)")
    ap.add_argument("--picture", action="store_true",
                    help="profile the picture alone (pipelines.picture: no costs), as the viewer "
                         "draws it while the camera moves")
    a = ap.parse_args(argv)
    if a.lines and not a.annotate:
        print("perf_kernels: --lines goes with --annotate FUNCTION", file=sys.stderr)
        return 2
    for tool in ("perf", "readelf", "objdump") + (("addr2line",) if a.lines else ()):
        if shutil.which(tool) is None:
            print(f"perf_kernels: needs '{tool}' on the PATH", file=sys.stderr)
            return 2
    width, height = (int(v) for v in a.res.lower().split("x"))
    work, what = workload(a, width, height)
    work()                                          # loads (or compiles) the kernels
    if not OBJECTS:
        print("perf_kernels: the kernels were compiled in this run, which leaves no object file "
              "to name them by; run again (they load from the cache now)", file=sys.stderr)
        return 2
    perf_map = Path(f"/tmp/perf-{os.getpid()}.map")
    where = write_map(perf_map)
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "perf.data"
        stack = ["--call-graph", "dwarf,64"] if a.refcounts else []    # (the return address)
        rec = subprocess.Popen(["perf", "record", "-F", str(a.frequency), *stack, "-p",
                                str(os.getpid()), "-o", str(data), "--", "sleep", str(a.seconds)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        frames, t0 = 0, time.perf_counter()
        while rec.poll() is None:
            work()
            frames += 1
        err = rec.stderr.read()
        if rec.returncode != 0 or not data.exists():
            print(f"perf_kernels: perf record failed: {err.strip().splitlines()[-1:]}",
                  file=sys.stderr)
            return 2
        ms = 1000 * (time.perf_counter() - t0) / max(frames, 1)
        # (perf's "pid" key is the thread: its id and name)
        report = subprocess.run(["perf", "report", "-i", str(data), "--no-children", "--sort",
                                 "pid,symbol" if a.threads else "symbol", "--stdio"],
                                capture_output=True, text=True).stdout
        print(f"{what}: {frames} runs, {ms:.1f} ms each "
              f"(numba threads {__import__('numba').get_num_threads()}); share of samples:")
        shares = collections.Counter()       # by function: its copies' samples together
        threads = collections.Counter()      # --threads: each thread's share
        for line in report.splitlines():
            m = re.match(r"\s*([\d.]+)%\s+(?:(\d+):\S*\s+)?\[\.\]\s+(\S+)", line)
            if m:
                share, tid = float(m.group(1)), m.group(2)
                thread = ""
                if tid is not None:
                    thread = "main " if int(tid) == os.getpid() else f"{tid} "
                    threads[thread] += share
                shares[thread + readable(m.group(3))] += share
        if threads:
            print("  by thread (this process's main thread: 'main'): " + ", ".join(
                f"{t.strip()} {share:.1f}%" for t, share in threads.most_common()))
        for name, share in shares.most_common(a.top):
            print(f"  {share:5.1f}%  {name}")
        if a.refcounts:
            refcount_callers(data, where, a.top)
        if a.annotate:
            names = [n for n in where if a.annotate in readable(n) and "cpython" not in n]
            if not names:
                print(f"perf_kernels: no compiled function matches '{a.annotate}'", file=sys.stderr)
                return 2
            for name in names:
                annotate(data, name, where, a.top, a.listing, a.lines)
    perf_map.unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
