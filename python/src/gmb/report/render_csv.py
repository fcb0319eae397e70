# SPDX-License-Identifier: BSD-3-Clause
"""Tables as CSV files: one file per table, named after its title."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from ..outputs import write_new
from .cells import Table


def table_csv(t: Table) -> str:
    text = io.StringIO(newline="")
    w = csv.writer(text)
    w.writerow(t.columns)
    w.writerows(t.rows)
    return text.getvalue()


def export_csv(tables: list[Table], outdir: str | Path) -> list[Path]:
    """One CSV per table, each complete or absent (outputs.write_new); refuses to overwrite."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    written = []
    for t in tables:
        name = "".join(c if c.isalnum() else "_" for c in t.title.lower()).strip("_")
        while "__" in name:
            name = name.replace("__", "_")
        path = outdir / f"{name}.csv"
        if path.exists():
            raise FileExistsError(f"{path} exists; not overwriting")
        write_new(path, table_csv(t))
        written.append(path)
    return written
