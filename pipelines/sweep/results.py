"""A sweep's results on disk: one row per cell in a Parquet file (pyarrow) and a CSV beside it,
and a journal that makes an interrupted sweep resumable.

    store = Results("out/l2.parquet")       # also out/l2.csv and out/l2.parquet.journal
    done = store.done_keys()                # cell keys already finished (status ok)
    store.append(row)                       # one line of JSON, flushed: survives a kill
    store.write()                           # Parquet + CSV, atomically; the journal goes

Consumes rows (pipelines.sweep.cell.run_cell) and the results a previous run left (its Parquet
and its journal); produces the files. Rows of earlier runs are kept, so a results file grows
as the spec grows; a cell's latest row wins.
"""
from __future__ import annotations

import csv
import json
import os
from pathlib import Path

from pipelines.commands.output import write_all

# Columns first in the files, in this order; the rest follow in first-seen order.
LEAD = ("cell_key", "status", "error", "scene", "preset", "preset_spec", "preset_hash", "width",
        "height", "samples", "fps", "frontend", "code_version")


class Results:
    def __init__(self, path: str | Path, csv_path: str | Path | None = None):
        self.path = Path(path)
        self.csv_path = Path(csv_path) if csv_path else self.path.with_suffix(".csv")
        self.journal = self.path.with_name(self.path.name + ".journal")
        self.rows: dict[str, dict] = {}          # cell_key -> row
        self.order: list[str] = []               # swept keys (columns right after LEAD)
        self._load()
        self._fh = None

    def _load(self) -> None:
        if self.path.exists():
            import pyarrow.parquet as pq
            for row in pq.read_table(self.path).to_pylist():
                self.rows[row["cell_key"]] = {k: v for k, v in row.items() if v is not None}
        if self.journal.exists():
            with open(self.journal, encoding="utf-8") as f:
                for line in f:
                    try:
                        row = json.loads(line)
                    except json.JSONDecodeError:      # the last line of a killed run
                        continue
                    self.rows[row["cell_key"]] = row

    def done_keys(self) -> set[str]:
        return {k for k, r in self.rows.items() if r.get("status") == "ok"}

    def append(self, row: dict) -> None:
        """Keep `row` and journal it (one JSON line, flushed to the OS)."""
        self.rows[row["cell_key"]] = row
        if self._fh is None:
            self._fh = open(self.journal, "a", encoding="utf-8")
        self._fh.write(json.dumps(row, default=str) + "\n")
        self._fh.flush()

    def columns(self, swept=()) -> list[str]:
        cols = dict.fromkeys(LEAD)
        cols.update(dict.fromkeys(swept))
        for r in self.rows.values():
            cols.update(dict.fromkeys(r))
        return list(cols)

    def table(self, swept=()):
        """The rows as a pyarrow Table: one column per field, null where a row lacks it (a
        scene without ray passes has no rt.* figures)."""
        import pyarrow as pa
        cols = self.columns(swept)
        rows = list(self.rows.values())
        data = {}
        for c in cols:
            values = [r.get(c) for r in rows]
            try:
                data[c] = pa.array(values)
            except (pa.ArrowInvalid, pa.ArrowTypeError):      # mixed types: kept as text
                data[c] = pa.array([None if v is None else str(v) for v in values])
        return pa.table(data)

    def write(self, swept=()) -> None:
        """Parquet and CSV, each written to a temporary file and renamed; then the journal,
        whose rows they now hold, is removed."""
        import pyarrow.parquet as pq
        table = self.table(swept)
        cols = table.column_names

        def write_csv(tmp):
            with open(tmp, "w", newline="", encoding="utf-8") as f:
                w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore", lineterminator="\n")
                w.writeheader()
                w.writerows(self.rows.values())
        write_all([(self.path, lambda tmp: pq.write_table(table, tmp)), (self.csv_path, write_csv)])
        self.close()
        if self.journal.exists():
            os.unlink(self.journal)

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


def read_rows(path: str | Path) -> list[dict]:
    """The rows of a results file (Parquet or CSV)."""
    path = Path(path)
    if path.suffix.lower() == ".csv":
        with open(path, newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f))
    import pyarrow.parquet as pq
    return pq.read_table(path).to_pylist()
