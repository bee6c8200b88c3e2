"""What a new user waits for: a tilesim command run with an empty numba cache, wall time and the
kernels it compiled (issue 29, point 1).

    python bench/bench_cold_start.py [--cmd "render triangle -o /tmp/t.png"] [--warm]
                                     [--env NUMBA_OPT=2] [--top 15] [--json out.json]

Runs the command in a child process whose NUMBA_CACHE_DIR is a fresh temporary directory (so
the texture cache and everything else stay as they are), listens there to numba's
"numba:compile" events and prints: the wall time, the kernels compiled and the seconds spent in
each, exclusive of the kernels it compiled on the way (numba compiles a callee when its caller
is typed, inside the caller's event). With --warm the command is run a second time on the same
cache, the figure of every later run. render, report and view compile their presets' kernels
ahead in worker processes (pipelines.commands.precompile), whose compiles the child does not see:
the per-kernel figures then show only what the list missed; `--env TILESIM_PRECOMPILE=0` gives
the compile at first call, kernel by kernel.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child(out: str, argv: list[str]) -> int:
    """Run `tilesim argv` here, recording every compile's name, start and end to `out`."""
    sys.path.insert(0, str(ROOT))
    from numba.core import event

    records: list[list] = []
    stack: list[list] = []

    class Recorder(event.Listener):
        def on_start(self, ev):
            fn = getattr(ev.data.get("dispatcher"), "py_func", None)
            name = f"{fn.__module__}.{fn.__qualname__}" if fn is not None else "?"
            stack.append([name, time.perf_counter(), 0.0])

        def on_end(self, ev):
            name, t0, inner = stack.pop()
            took = time.perf_counter() - t0
            records.append([name, took, took - inner])
            if stack:
                stack[-1][2] += took

    event.register("numba:compile", Recorder())
    from pipelines.commands.cli import console    # what the `tilesim` command runs
    try:
        rc = console(argv)
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else 1
    Path(out).write_text(json.dumps(records))
    return int(rc or 0)


def run(argv: list[str], env: dict, record: Path) -> tuple[float, int, list]:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, __file__, "--child", str(record), "--", *argv],
                          env=env, cwd=ROOT)
    wall = time.perf_counter() - t0
    records = json.loads(record.read_text()) if record.exists() else []
    return wall, proc.returncode, records


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cmd", default="render triangle -o /tmp/tilesim-cold.png")
    ap.add_argument("--warm", action="store_true", help="run again on the filled cache")
    ap.add_argument("--env", action="append", default=[], help="KEY=VALUE for the child")
    ap.add_argument("--top", type=int, default=15)
    ap.add_argument("--json")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("rest", nargs="*", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        return child(a.child, a.rest)

    argv = shlex.split(a.cmd)
    with tempfile.TemporaryDirectory(prefix="tilesim-cold-") as tmp:
        env = dict(os.environ, NUMBA_CACHE_DIR=str(Path(tmp) / "numba"))
        env.update(kv.split("=", 1) for kv in a.env)
        wall, rc, records = run(argv, env, Path(tmp) / "cold.json")
        result = {"cmd": a.cmd, "env": a.env, "cold_s": round(wall, 1), "rc": rc,
                  "kernels": len(records),
                  "compile_s": round(sum(r[2] for r in records), 1)}
        if a.warm:
            warm, rc2, _ = run(argv, env, Path(tmp) / "warm.json")
            result["warm_s"], result["warm_rc"] = round(warm, 2), rc2
    by_name: dict[str, float] = {}
    for name, _, own in records:
        by_name[name] = by_name.get(name, 0.0) + own
    top = sorted(by_name.items(), key=lambda kv: -kv[1])[:a.top]
    result["top"] = [[n, round(s, 1)] for n, s in top]
    print(f"{a.cmd!r} {' '.join(a.env)}: cold {result['cold_s']} s (exit {rc}), "
          f"{result['kernels']} kernels compiled, {result['compile_s']} s compiling"
          + (f"; warm {result['warm_s']} s" if a.warm else ""))
    for name, s in top:
        print(f"  {s:7.1f} s  {name}")
    if a.json:
        Path(a.json).write_text(json.dumps(result, indent=1))
    return rc


if __name__ == "__main__":
    sys.exit(main())
