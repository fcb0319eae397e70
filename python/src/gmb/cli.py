# SPDX-License-Identifier: BSD-3-Clause
"""The `gmb` command line: its arguments, and a call per command. Exit status: 0 ok, 1 failure (a launch failed, a
regression found, a file or store that could not be written), 2 bad input or a refusal (nothing done), 128+N
stopped by signal N (130: SIGINT)."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import sys
import traceback
from dataclasses import replace
from pathlib import Path

from .arguments import build_options, library_options, parser, session_options, slurm_options, tune_options
from .engine import configurations, engines
from .errors import UsageError
from .run import session, setup
from .outputs import OutputError, check_writable, disk_full, os_cause


def cmd_libs(args):
    from .machine.mpilibs import cuda_aware_static

    libs = [replace(lib, cuda_aware=cuda_aware_static(lib)) if lib.cuda_aware is None and lib.transport == "mpi"
            else lib for lib in setup.libraries(library_options(args), need=False)]
    if args.json:
        print(json.dumps([lib.describe() for lib in libs], indent=1))
    else:
        aware = {True: "yes", False: "no", None: "unknown"}  # unknown: not declared; `gmb doctor` proves it
        print(f"{'library':<24} {'family':<10} {'version':<10} {'prefix':<20} {'CUDA-aware':<11} launcher, compiler, "
              "profile, found by")
        for lib in libs:
            print(f"{lib.name:<24} {lib.family:<10} {lib.version:<10} {lib.prefix:<20} "
                  f"{aware[lib.cuda_aware] if lib.transport == 'mpi' else '-':<11} {lib.launcher} "
                  f"({lib.launcher_path}), {lib.cxx}, {lib.profile or '-'}, {lib.source}"
                  + (f"; transport {lib.transport} via {lib.via}" if lib.transport != "mpi" else ""))
    return 0


def cmd_doctor(args):
    from .engine import doctor
    from .machine import topology

    topo = topology.discover()
    rep = doctor.diagnose(setup.diagnosed_configurations(library_options(args), topo), topo,
                          run_engine_doctor=not args.no_engine, check_settings=True if args.settings else None)
    print(json.dumps(rep, indent=1, default=str) if args.json else doctor.format_text(rep))
    return 0


def cmd_build(args):
    """Each library's engine as `gmb run` would take it (configurations.engine_choices): declared, installed
    (GMB_ENGINE, PATH) or built from the sources; which one and why is said for every library."""
    rc = 0
    chosen = configurations.engine_choices(setup.libraries(library_options(args)), do_build=True,
                                           build_options=engines.build_options(build_options(args)),
                                           force=args.force, log=print)
    for name, choice in chosen.items():
        for line in choice.lines(name):
            print(f"gmb build: {line}", file=sys.stderr)
        if choice.error is not None:
            print(f"gmb build: {choice.error}", file=sys.stderr)
            rc = 1
    return rc


def cmd_plan(args):
    return session.plan_only(session_options(args))


def cmd_run(args):
    return session.run(session_options(args))


def _open(path):
    from .results import store

    try:
        return store.open_results(path)
    except (store.StoreError, ValueError) as exc:
        raise UsageError(str(exc)) from None


def _results(st, command: str, said: set | None = None):
    """The results model of an open store, what of it was left out (unreadable or duplicate rows) said on stderr,
    once (``said``: what was said already, of another store or the same one)."""
    from .results.model import Results

    results = Results.load(st)
    said = set() if said is None else said
    for note in results.left_out:
        if note not in said:
            said.add(note)
            print(f"gmb {command}: warning: {note}", file=sys.stderr)
    return results


def _report_path(args) -> Path:
    """Where the report goes: -o, else RESULTS/report.html, or beside a file of records; where that report exists, the
    next free report-N.html (--force: the report is replaced). UsageError where it cannot be written: -o naming a
    file that exists (without --force), a file that is not HTML or a directory that does not exist."""
    results = Path(args.results)
    out = Path(args.output) if args.output else results / "report.html" if results.is_dir() \
        else results.with_suffix(".html")
    if not out.parent.is_dir():
        raise UsageError(f"{out}: the directory {out.parent} does not exist (-o names the report file)")
    check_writable(out.parent, f"the report {out}")
    if not out.exists():
        return out
    if args.force:
        if out.suffix != ".html" or not out.is_file():
            raise UsageError(f"{out}: --force replaces an HTML report only; this is not one (records are never "
                             "overwritten)")
        return out
    if args.output:
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


def cmd_report(args):
    from .report import html as report
    from .report import render_csv, tables

    st = _open(args.results)
    _check_csv_dir(args.csv)  # every output checked before anything is written
    out = _report_path(args)
    results = _results(st, "report")
    title = args.title or f"gmb report: {Path(args.results).name}"
    if out.exists():  # --force: the new report is written beside it, then takes its name
        fresh = report.write_report(results, out.with_name(f".{out.name}.new-{os.getpid()}"), title=title)
        os.replace(fresh, out)
    else:
        report.write_report(results, out, title=title)
    print(out)
    if args.csv:
        for p in render_csv.export_csv(tables.all_tables(results), args.csv):
            print(p)
    return 0


def cmd_tables(args):
    from .report import render_csv, render_text
    from .report.analysis import answers_and_tables

    _check_csv_dir(args.csv)
    results = _results(_open(args.results), "tables")
    found, ts = answers_and_tables(results)
    if args.json:
        from .report.render_json import answers_json
        print(answers_json(found, ts))
    else:
        for t in ts:
            print(render_text.table_text(t) + "\n")
    if args.csv:
        render_csv.export_csv(ts, args.csv)
    return 0


def cmd_compare(args):
    from .report import compare, render_csv, render_text
    from .report.machine_change import machine_change, machine_change_text

    _check_csv_dir(args.csv)
    try:
        tol = compare.load_tolerances(args.reference) if args.reference else None
        said: set = set()
        a, b = (_results(_open(side), "compare", said) for side in (args.a, args.b))
        comparison = compare.compare(a, b, args.a_library, args.b_library)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    rows = comparison.rows
    a_name, b_name = args.a_library or args.a, args.b_library or args.b
    tables = [t for t in (compare.as_table(rows, a_name, b_name) if rows else None,
                          compare.unmatched_table(comparison, a_name, b_name) if comparison.unmatched else None) if t]
    for t in tables:
        print(render_text.table_text(t) + (f"\n{t.note}" if t.note else "") + "\n")
    for line in compare.launch_differences(rows):
        print(f"launched differently: {line}")
    if args.csv and tables:
        render_csv.export_csv(tables, args.csv)
    bad = compare.check(rows, tol) if tol else []
    summary = compare.summary(comparison, a_name, b_name)
    if tol:
        summary.append(f"{len(bad)} tolerance violations ({args.reference})")
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


def cmd_slurm(args):
    from .run import slurm

    return slurm.command(slurm_options(args))


def cmd_tune(args):
    from .tune import session as tune_session

    return tune_session.tune(tune_options(args))


def _after_dashes(args):
    """argparse's REMAINDER keeps the "--" that ends gmb's own options."""
    if args.command[:1] == ["--"]:
        args.command = args.command[1:]
    return args


def cmd_profile(args):
    from .app import commands

    return commands.profile_command(_after_dashes(args), library_options(args), build_options(args))


def cmd_predict(args):
    from .app import commands

    return commands.predict_command(args)


def cmd_app(args):
    from .app import commands

    return commands.app_command(_after_dashes(args), library_options(args), build_options(args))


def cmd_ingest(args):
    """Every file is read (and checked) before anything is stored: a file that cannot be read, or whose records
    name another MPI library than ``--library`` (for a library gmb knows, `gmb libs`: the launch check; for a name it
    does not know: the name's family and version), stores nothing."""
    from .machine import identity
    from .machine import libraries, mpilibs
    from .results import records
    from .results import store

    from .results.engine_facts import read_engine_file

    db = Path(args.store)
    if not db.parent.is_dir():
        what = "is not a directory" if db.parent.exists() else "does not exist"
        raise UsageError(f"{db}: the directory {db.parent} {what} (gmb ingest makes the store file, not the directory "
                         f"it goes in)")
    try:
        engines = [read_engine_file(f) for f in args.files if Path(f).suffix == ".json"]
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    files = [records.read_records(f, validate=args.validate) for f in args.files if Path(f).suffix != ".json"]
    if args.library and not args.no_check:
        try:
            known = {lib.name: lib for lib in libraries.all_libraries(args.config, detect_libs=not args.no_detect)}
        except mpilibs.ConfigError as exc:
            raise UsageError(str(exc)) from None
        lib = known.get(args.library)
        def why_not(ctx):
            return identity.mismatch(lib, ctx) if lib else identity.unknown_name_mismatch(args.library, ctx)

        wrong = list(dict.fromkeys(f"{rf.path}: {why}" for rf in files for why in map(why_not, rf.contexts) if why))
        if wrong and lib is not None:
            raise UsageError(f"records that ran another library than {args.library} (nothing stored):\n  "
                             + "\n  ".join(wrong))
        if wrong:
            raise UsageError(f"{args.library} is not a library gmb found or was declared (gmb libs), and the records "
                             f"say another one (nothing stored):\n  " + "\n  ".join(wrong) + "\n"
                             f"Declare {args.library} in a libraries file (--config FILE, a [[library]] named "
                             f"{args.library!r}) so that its records are checked, or store them under this name "
                             f"anyway with --no-check")
        if lib is None:
            said = sorted({identity.library_label(ctx) for rf in files for ctx in rf.contexts})
            print(f"gmb ingest: note: {args.library} is not a library gmb found or was declared (gmb libs); stored "
                  f"under it, as its records say {', '.join(said) or 'nothing of their library'}", file=sys.stderr)
    for rf in files:
        for note in rf.notes:
            print(f"gmb ingest: note: {note}", file=sys.stderr)
        objects = [identity.library_object(ctx) for ctx in rf.contexts]
        for path in sorted({o.get("loaded_realpath") for o in objects if o.get("matches_build") is False} - {None, ""}):
            print(f"gmb ingest: note: {rf.path}: the engine ran {path}, not the library it was built against; "
                  f"labelled by what ran", file=sys.stderr)
    new = not db.exists()
    try:
        with store.Store(db) as st, st.transaction(f"the records of {', '.join(str(rf.path) for rf in files)}"):
            n = sum(st.ingest(rf, library=args.library) for rf in files)  # all files or none
            for library, description in engines:
                st.record_engine(args.library or library, description.raw)
    except records.RecordError:
        if new:  # refused with nothing stored: no empty store is left in its place
            db.unlink(missing_ok=True)
        raise
    already = sum(len(rf.results) for rf in files) - n
    print(f"{n} result records into {db}" +
          (f"; {already} already there (same run and point), not stored again" if already else ""))
    return 0


class _ReaderMayLeave:
    """stdout or stderr whose reader may go away (`gmb run ... | head -1`, a log viewer closed): what can no longer
    be written is dropped, and the command finishes its work (the campaign, the report) and exits with its own
    status. A closed pipe is not a reason to stop a campaign or lose its report."""

    def __init__(self, stream):
        self._stream = stream
        self._gone = False

    def write(self, text):
        if not self._gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._reader_left()
        return len(text)

    def flush(self):
        if not self._gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._reader_left()

    def _reader_left(self):
        self._gone = True
        try:  # what Python still holds for the stream goes nowhere at exit, instead of raising there
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _open_stream(stream, fd: int):
    """``stream`` (sys.stdout or sys.stderr), or, where gmb was started with that descriptor closed (`>&-`,
    `2>&-`; Python then has None), a stream to /dev/null: what cannot be printed is dropped and the command does its
    work. /dev/null then takes the descriptor too, so that no file gmb opens gets it: a launcher or compiler started
    with it as its output would write into that file."""
    if stream is not None:
        return stream
    try:
        os.fstat(fd)
    except OSError:
        null = os.open(os.devnull, os.O_WRONLY)  # the lowest free descriptor: this one
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
    return open(os.devnull, "w")


def main(argv=None) -> int:
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (_ReaderMayLeave(_open_stream(sys.stdout, 1)),
                              _ReaderMayLeave(_open_stream(sys.stderr, 2)))
    try:
        return _main(argv)
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()  # here, where a reader that left is no error, rather than at exit, where it would be
        sys.stdout, sys.stderr = saved


def _main(argv) -> int:
    args = parser().parse_args(argv)
    from .engine.description import DescriptionError
    from .campaign.spec import CampaignError
    from .results.records import RecordError
    from .results.store import StoreError

    try:
        try:
            return globals()[f"cmd_{args.cmd}"](args)  # each subcommand NAME is cmd_NAME here
        except OSError as exc:  # a full disk is a runtime failure wherever it struck, not bad input
            if disk_full(exc):
                raise OutputError(f"cannot write {exc.filename or 'a file'}: {os_cause(exc)}") from exc
            raise
    except OutputError as exc:
        _debug_traceback()
        print(f"gmb {args.cmd}: error: {exc}", file=sys.stderr)
        return 1
    except (UsageError, CampaignError, DescriptionError, RecordError, StoreError, FileExistsError,
            FileNotFoundError) as exc:
        _debug_traceback()
        print(f"gmb {args.cmd}: error: {exc}", file=sys.stderr)
        return 2
    except (ValueError, TypeError, KeyError, sqlite3.DatabaseError, IsADirectoryError, NotADirectoryError,
            PermissionError) as exc:
        # bad input that reached code without its own check: one line (the traceback with GMB_DEBUG=1)
        _debug_traceback()
        what = str(exc) if isinstance(exc, (ValueError, OSError)) and str(exc) else f"{type(exc).__name__}: {exc}"
        print(f"gmb {args.cmd}: error: {what}{_debug_hint()}", file=sys.stderr)
        return 2
    except OSError as exc:
        # a failure of the system (an I/O error, a read-only file system) where no write site said it: a runtime
        # failure, one line
        _debug_traceback()
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"gmb {args.cmd}: error: {where}{os_cause(exc)}{_debug_hint()}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C outside a run's own signal handling (a build, a report)
        print(f"\ngmb {args.cmd}: interrupted (SIGINT)", file=sys.stderr)
        return 128 + signal.SIGINT


def _debug_hint() -> str:
    return "" if os.environ.get("GMB_DEBUG") == "1" else " (GMB_DEBUG=1 prints the traceback)"


def _debug_traceback():
    if os.environ.get("GMB_DEBUG") == "1":
        traceback.print_exc(file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
