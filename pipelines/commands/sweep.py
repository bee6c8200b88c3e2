"""`tilesim sweep`: the CLI face of pipelines.sweep. Importing it imports argparse only, so the
CLI registers the subcommand at start-up:

    tilesim sweep SPEC.toml [-o RESULTS.parquet] [--workers N | --scheduler ADDRESS | --serial]
                  [--set KEY=VALUE ...] [--dry-run] [-q]
    tilesim sweep --plot RESULTS.parquet --x KEY --y COLUMN [--by COLUMN] [--z COLUMN]
                  [--where KEY=VALUE ...] -o plot.png|.svg|.pdf|.html

Every bad input (spec, preset, key, value, column) is one line and exit 2, checked before any
cell runs or any file is written (pipelines.commands.cli.main).
"""
from __future__ import annotations

from pathlib import Path


def add_parser(subparsers):
    from pipelines.commands.preset_options import add_set_option
    s = subparsers.add_parser("sweep", help="scenes x presets x parameter grids x resolutions x "
                              "samples on Dask -> Parquet + CSV, one row per frame; or plot them")
    s.add_argument("spec", nargs="?", metavar="SPEC.toml", help="the sweep (README: Sweeps)")
    s.add_argument("-o", "--output", help="results file (default SPEC.parquet beside the spec's name "
                   "in this folder, CSV beside it); with --plot, the plot (.png .svg .pdf .html)")
    s.add_argument("--csv", help="the CSV copy's path (default: the results file's, .csv)")
    s.add_argument("--workers", type=int, help="LocalCluster worker processes (default: one per core)")
    s.add_argument("--scheduler", metavar="ADDRESS", help="run on an existing Dask cluster, e.g. "
                   "tcp://10.0.0.5:8786 (its workers need tilesim and the scene files)")
    s.add_argument("--serial", action="store_true", help="run the cells one by one in this process, "
                   "no Dask")
    s.add_argument("--dry-run", action="store_true", help="print the grid's size and what is left to run")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    add_set_option(s)
    s.add_argument("--plot", metavar="RESULTS", help="plot a results file instead of sweeping")
    s.add_argument("--x", help="--plot: the x column (a swept key, e.g. l2.size)")
    s.add_argument("--y", help="--plot: the y column (e.g. dram_mb), or with --z the heat map's y")
    s.add_argument("--z", help="--plot: a heat map of this column over x and y")
    s.add_argument("--by", help="--plot: a line (or panel) per value of this column, e.g. preset")
    s.add_argument("--where", action="append", metavar="KEY=VALUE", help="--plot: only these rows "
                   "(repeatable), e.g. scene=sponza")
    s.set_defaults(func=cmd_sweep)
    return s


def cmd_sweep(args) -> None:
    from pipelines.commands.output import UserError, check_output
    if args.plot:
        if not (args.x and args.y and args.output):
            raise UserError("sweep --plot: needs --x, --y and -o")
        if args.spec:
            raise UserError("sweep --plot: takes a results file, not a spec")
        check_output(args.output)
        from pipelines.sweep.plot import plot
        print(plot(args.plot, args.x, args.y, args.output, args.by, args.z, args.where))
        return
    if not args.spec:
        raise UserError("sweep: name a SPEC.toml (or --plot RESULTS)")
    if sum(map(bool, (args.workers is not None, args.scheduler, args.serial))) > 1:
        raise UserError("sweep: --workers, --scheduler and --serial exclude each other")
    if args.workers is not None and args.workers < 1:
        raise UserError(f"--workers {args.workers}: at least 1")
    from pipelines.commands.preset_options import parse_sets
    from pipelines.sweep.spec import load
    sweep = load(args.spec, parse_sets(args.set))
    out = Path(args.output or Path(args.spec).with_suffix(".parquet").name)
    if out.suffix.lower() != ".parquet":
        raise UserError(f"-o {out}: the results file is .parquet (a CSV is written beside it)")
    csv_path = Path(args.csv) if args.csv else out.with_suffix(".csv")
    for p in (out, csv_path):
        check_output(p)
    from pipelines.sweep.results import Results
    from pipelines.sweep.runner import code_version, run_sweep
    version = code_version()
    try:
        results = Results(out, csv_path)
    except Exception as e:
        raise UserError(f"{out}: cannot read the earlier results: {str(e).splitlines()[0][:150]}") from None
    done = results.done_keys()
    left = sum(c.key(version) not in done for c in sweep.cells)
    shape = " x ".join(f"{v} {k}" for k, v in sweep.shape.items())
    print(f"{sweep.name}: {len(sweep.cells)} cells ({shape}; the same frame counted once), "
          f"{len(sweep.cells) - left} already in {out}, {left} to run")
    if args.dry_run:
        return
    if left and not args.scheduler:     # a cold cache: compiled once on every core, not per worker
        from pipelines.commands.precompile import precompile
        precompile([c.preset for c in sweep.cells], {c.samples for c in sweep.cells})
    s = run_sweep(sweep, results, workers=args.workers, scheduler=args.scheduler,
                  serial=args.serial, progress=not args.quiet, version=version)
    where = "this process" if args.serial else (args.scheduler or f"a LocalCluster of {s.workers} worker(s)")
    print(f"{'interrupted: ' if s.interrupted else ''}ran {s.ran} cell(s) on {where} in {s.wall_s:.1f} s "
          f"({s.failed} failed, {s.skipped} skipped as done; cells rendered {s.render_s:.1f} s, "
          f"{s.cell_s:.1f} s with loading) -> {out}, {csv_path}")
    if s.interrupted:
        raise KeyboardInterrupt
