"""Plots of a sweep's results (matplotlib, Agg): a line per `by` value of y against x, or with
`z` a heat map of z over x and y, one panel per `by` value.

    tilesim sweep --plot l2.parquet --x l2.size --y dram_mb --by preset -o l2.png
    tilesim sweep --plot l2.parquet --x l2.size --y dram.bandwidth --z gbps --by scene -o heat.png

Consumes a results file (pipelines.sweep.results: Parquet or CSV) and column names (a swept key,
a counter, a report field or a derived figure); rows that share x (and y) within a line or panel
are averaged (say which with --where, e.g. --where scene=sponza). Produces a PNG, SVG or PDF, or
an HTML page with the PNG and the plotted numbers. A column that does not exist is a SweepError
naming the nearest one.
"""
from __future__ import annotations

import base64
import difflib
import html
import io
from pathlib import Path

from pipelines.commands.output import write_atomic
from pipelines.sweep.results import read_rows
from pipelines.sweep.spec import SweepError

MAX_PANELS = 12
FORMATS = (".png", ".svg", ".pdf", ".html")


def _column(rows, name: str, what: str) -> None:
    cols = list(dict.fromkeys(k for r in rows for k in r))
    if name not in cols:
        near = difflib.get_close_matches(name, cols, n=1, cutoff=0.4)
        raise SweepError(f"--{what} {name}: no such column" + (f" (did you mean {near[0]}?)" if near else ""))


def _num(v):
    if v is None or v == "":
        return None
    if isinstance(v, bool):
        return float(v)
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _label(name: str, value) -> str:
    from pipelines.presets.keys import all_keys, format_value
    key = all_keys().get(name)
    if key is not None and value is not None:
        try:
            return format_value(key, int(value) if key.kind in ("bytes", "px", "int") else value)
        except (TypeError, ValueError):
            pass
    return f"{value:g}" if isinstance(value, float) else str(value)


def select(rows, where) -> list[dict]:
    """Rows whose every --where KEY=VALUE matches (compared as text) and that rendered."""
    out = [r for r in rows if r.get("status", "ok") == "ok"]
    for cond in where or ():
        k, eq, v = cond.partition("=")
        if not eq:
            raise SweepError(f"--where {cond!r}: expected KEY=VALUE")
        _column(rows, k, "where")
        out = [r for r in out if str(r.get(k)) == v or _num(r.get(k)) == _num(v) is not None]
    if not out:
        raise SweepError("no rows to plot (none finished, or --where left none)")
    return out


def lines(rows, x: str, y: str, by: str | None) -> dict[str, list[tuple[float, float]]]:
    """by value -> [(x, mean y)] sorted by x: what the line plot draws."""
    groups: dict[str, dict[float, list[float]]] = {}
    for r in rows:
        xv, yv = _num(r.get(x)), _num(r.get(y))
        if xv is None or yv is None:
            continue
        groups.setdefault(str(r.get(by)) if by else y, {}).setdefault(xv, []).append(yv)
    if not groups:
        raise SweepError(f"no numeric values of {x} and {y} in the same rows")
    return {g: sorted((xv, sum(v) / len(v)) for xv, v in pts.items()) for g, pts in groups.items()}


def grids(rows, x: str, y: str, z: str, by: str | None):
    """by value -> (xs, ys, z[ys][xs] means, None where no cell): the heat maps."""
    out = {}
    panels: dict[str, list[dict]] = {}
    for r in rows:
        panels.setdefault(str(r.get(by)) if by else z, []).append(r)
    for name, rs in panels.items():
        cells: dict[tuple, list[float]] = {}
        for r in rs:
            xv, yv, zv = _num(r.get(x)), _num(r.get(y)), _num(r.get(z))
            if None not in (xv, yv, zv):
                cells.setdefault((xv, yv), []).append(zv)
        if cells:
            xs = sorted({k[0] for k in cells})
            ys = sorted({k[1] for k in cells})
            grid = [[(sum(cells[(a, b)]) / len(cells[(a, b)])) if (a, b) in cells else None
                     for a in xs] for b in ys]
            out[name] = (xs, ys, grid)
    if not out:
        raise SweepError(f"no numeric values of {x}, {y} and {z} in the same rows")
    return out


def plot(results: str, x: str, y: str, output: str, by: str | None = None, z: str | None = None,
         where=()) -> str:
    """Draw and write the plot; returns a one-line summary."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    suffix = Path(output).suffix.lower()
    if suffix not in FORMATS:
        raise SweepError(f"-o {output}: the plot is written as {', '.join(FORMATS)}")
    try:
        rows = read_rows(results)
    except FileNotFoundError:
        raise SweepError(f"--plot {results}: no such file") from None
    except Exception as e:
        raise SweepError(f"--plot {results}: cannot read it as Parquet or CSV: {str(e).splitlines()[0][:150]}") from None
    if not rows:
        raise SweepError(f"--plot {results}: no rows")
    for name, what in ((x, "x"), (y, "y"), (by, "by"), (z, "z")):
        if name:
            _column(rows, name, what)
    rows = select(rows, where)
    if z is None:
        data = lines(rows, x, y, by)
        if len(data) > 40:
            raise SweepError(f"--by {by}: {len(data)} lines; narrow it with --where")
        fig, ax = plt.subplots(figsize=(8, 5), dpi=110)
        for name, pts in data.items():
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
        xs = sorted({p[0] for pts in data.values() for p in pts})
        if xs and xs[0] > 0 and xs[-1] / xs[0] >= 8:
            ax.set_xscale("log", base=2)
        ax.set_xticks(xs if len(xs) <= 16 else xs[::max(1, len(xs) // 8)])
        ax.set_xticklabels([_label(x, v) for v in ax.get_xticks()], rotation=30, ha="right")
        ax.minorticks_off()
        ax.set_xlabel(x)
        ax.set_ylabel(y)
        ax.grid(alpha=0.3)
        if by:
            ax.legend(title=by, fontsize=8)
        table = [(name, _label(x, a), f"{b:.6g}") for name, pts in data.items() for a, b in pts]
        what = f"{len(data)} line(s) of {y} against {x}"
    else:
        data = grids(rows, x, y, z, by)
        if len(data) > MAX_PANELS:
            raise SweepError(f"--by {by}: {len(data)} panels (at most {MAX_PANELS}); narrow it with --where")
        n = len(data)
        cols = min(n, 3)
        fig, axes = plt.subplots(-(-n // cols), cols, figsize=(4.5 * cols, 3.8 * -(-n // cols)),
                                 dpi=110, squeeze=False)
        for ax in axes.flat[n:]:
            ax.axis("off")
        import numpy as np
        table = []
        for ax, (name, (xs, ys, grid)) in zip(axes.flat, data.items()):
            arr = np.array([[np.nan if v is None else v for v in row] for row in grid])
            im = ax.imshow(arr, origin="lower", aspect="auto", cmap="viridis")
            ax.set_xticks(range(len(xs)), [_label(x, v) for v in xs], rotation=30, ha="right", fontsize=7)
            ax.set_yticks(range(len(ys)), [_label(y, v) for v in ys], fontsize=7)
            ax.set_xlabel(x)
            ax.set_ylabel(y)
            ax.set_title(name, fontsize=9)
            fig.colorbar(im, ax=ax, label=z)
            table += [(name, f"{_label(x, a)}, {_label(y, b)}", f"{grid[j][i]:.6g}")
                      for j, b in enumerate(ys) for i, a in enumerate(xs) if grid[j][i] is not None]
        what = f"{n} heat map(s) of {z} over {x} x {y}"
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png" if suffix == ".html" else suffix[1:])
    plt.close(fig)
    if suffix == ".html":
        page = _html(results, what, buf.getvalue(), table, (by or "", x if z is None else f"{x}, {y}", z or y))
        write_atomic(output, lambda tmp: Path(tmp).write_text(page, encoding="utf-8"))
    else:
        write_atomic(output, lambda tmp: Path(tmp).write_bytes(buf.getvalue()))
    return f"wrote {output}: {what} from {len(rows)} row(s)"


def _html(results, what, png: bytes, table, header) -> str:
    rows = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in r) + "</tr>" for r in table)
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    return (f"<!doctype html><meta charset=utf-8><title>tilesim sweep: {html.escape(what)}</title>"
            f"<style>body{{font:14px sans-serif;margin:2em}}td,th{{padding:2px 8px;text-align:right}}"
            f"</style><h1>{html.escape(what)}</h1><p>from {html.escape(str(results))}</p>"
            f"<img alt='plot' src='data:image/png;base64,{base64.b64encode(png).decode()}'>"
            f"<table><tr>{head}</tr>{rows}</table>")
