# SPDX-License-Identifier: BSD-3-Clause
"""`gmb report`, `gmb tables` and `gmb compare`: a result set (or two) read, and what it says written: the HTML
report, the tables (text, JSON, CSV), the comparison of two sets and its regression check. Every output is checked
before anything is written."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..errors import UsageError
from ..outputs import check_writable
from ..results.model import Results
from ..results.store import open_results
from ..results.store_file import StoreError
from . import compare, compare_words, html, render_csv, render_text, tolerances
from .analysis import answers_and_tables
from .machine_change import machine_change, machine_change_text
from .render_json import answers_json


def _open(path):
    try:
        return open_results(path)
    except (StoreError, ValueError) as exc:
        raise UsageError(str(exc)) from None


def _results(st, command: str, said: set | None = None):
    """The results model of an open store, what of it was left out (unreadable or duplicate rows) said on stderr,
    once (``said``: what was said already, of another store or the same one)."""
    results = Results.load(st)
    said = set() if said is None else said
    for note in results.left_out:
        if note not in said:
            said.add(note)
            print(f"gmb {command}: warning: {note}", file=sys.stderr)
    return results


def _report_path(results_path: str, output: str | None, force: bool) -> Path:
    """Where the report goes: -o, else RESULTS/report.html, or beside a file of records; where that report exists, the
    next free report-N.html (--force: the report is replaced). UsageError where it cannot be written: -o naming a
    file that exists (without --force), a file that is not HTML or a directory that does not exist."""
    results = Path(results_path)
    out = Path(output) if output else results / "report.html" if results.is_dir() else results.with_suffix(".html")
    if not out.parent.is_dir():
        raise UsageError(f"{out}: the directory {out.parent} does not exist (-o names the report file)")
    check_writable(out.parent, f"the report {out}")
    if not out.exists():
        return out
    if force:
        if out.suffix != ".html" or not out.is_file():
            raise UsageError(f"{out}: --force replaces an HTML report only; this is not one (records are never "
                             "overwritten)")
        return out
    if output:
        raise UsageError(f"{out} exists; not overwriting (choose another name with -o, or --force to replace it)")
    n = 2
    while (fresh := out.with_name(f"{out.stem}-{n}{out.suffix}")).exists():
        n += 1
    print(f"gmb report: {out.name} exists; writing {fresh.name} (--force replaces {out.name})", file=sys.stderr)
    return fresh


def _check_csv_dir(path: str | None):
    """UsageError unless --csv names a directory to write new CSV files into: absent (it is made), or a directory
    without CSV files (none is overwritten); OutputError where it cannot be written."""
    if not path:
        return
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise UsageError(f"--csv {p}: exists and is not a directory (--csv names the directory the CSV files go into)")
    if p.is_dir() and any(p.glob("*.csv")):
        raise UsageError(f"--csv {p}: already holds CSV files; not overwriting (choose another directory)")
    check_writable(p, f"--csv {p}")


def report_command(results_path: str, output: str | None, force: bool, csv: str | None, title: str | None) -> int:
    """`gmb report`: the HTML report of a result set, and with ``csv`` its tables as CSV too: the report's own
    tables, from its one analysis."""
    st = _open(results_path)
    _check_csv_dir(csv)  # every output checked before anything is written
    out = _report_path(results_path, output, force)
    results = _results(st, "report")
    title = title or f"gmb report: {Path(results_path).name}"
    analysis = answers_and_tables(results)
    if out.exists():  # --force: the new report is written beside it, then takes its name
        fresh = html.write_report(results, out.with_name(f".{out.name}.new-{os.getpid()}"), title=title,
                                  analysis=analysis)
        os.replace(fresh, out)
    else:
        html.write_report(results, out, title=title, analysis=analysis)
    print(out)
    if csv:
        for p in render_csv.export_csv(analysis[1], csv):
            print(p)
    return 0


def tables_command(results_path: str, csv: str | None, as_json: bool) -> int:
    """`gmb tables`: the tables as text (``as_json``: the answers and the tables as one JSON document), and with
    ``csv`` as CSV files too."""
    _check_csv_dir(csv)
    results = _results(_open(results_path), "tables")
    found, ts = answers_and_tables(results)
    if as_json:
        print(answers_json(found, ts))
    else:
        for t in ts:
            print(render_text.table_text(t) + "\n")
    if csv:
        render_csv.export_csv(ts, csv)
    return 0


def compare_command(a_path: str, b_path: str, a_library: str | None, b_library: str | None, reference: str | None,
            csv: str | None) -> int:
    """`gmb compare`: B against A point by point, the tables on stdout and the summary on stderr. 0 without a
    tolerance violated (``reference``), 1 with one, 2 where nothing could be compared or checked."""
    _check_csv_dir(csv)
    try:
        tol = tolerances.load_tolerances(reference) if reference else None
        said: set = set()
        a, b = (_results(_open(side), "compare", said) for side in (a_path, b_path))
        comparison = compare.compare(a, b, a_library, b_library)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    rows = comparison.rows
    a_name, b_name = a_library or a_path, b_library or b_path
    made = [t for t in (compare_words.as_table(rows, a_name, b_name) if rows else None,
                        compare_words.unmatched_table(comparison, a_name, b_name) if comparison.unmatched else None)
            if t]
    for t in made:
        print(render_text.table_text(t) + (f"\n{t.note}" if t.note else "") + "\n")
    for line in compare.launch_differences(rows):
        print(f"launched differently: {line}")
    if csv and made:
        render_csv.export_csv(made, csv)
    bad = tolerances.check(rows, tol) if tol else []
    summary = compare_words.summary(comparison, a_name, b_name)
    if tol:
        summary.append(f"{len(bad)} tolerance violations ({reference})")
    changed = machine_change(a, b)
    if changed:
        summary.append(machine_change_text(changed))
    print("\n".join(summary), file=sys.stderr)
    if not rows:  # nothing compared is not a regression (exit 1): the inputs share no point
        print("gmb compare: no point is present in both result sets (same benchmark, operation, memory, strategy, "
              "ranks, size and configuration: options, hosts; within one library also settings and binding): "
              "nothing to compare", file=sys.stderr)
        return 2
    if tol and not any(r.judged for r in rows):
        print("gmb compare: no point could be checked against the tolerances: no point has a verdict (a side "
              "measured in one launch, on a busy host, or without an interval: see the verdict column)",
              file=sys.stderr)
        return 2
    return 1 if bad else 0
