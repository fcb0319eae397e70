# SPDX-License-Identifier: BSD-3-Clause
"""The `gmb` command line: its arguments parsed (arguments.py), one call per command (each command's body lives with
what it does) and the exit status. Exit status: 0 ok, 1 failure (a launch failed, a regression found, a file or
store that could not be written), 2 bad input or a refusal (nothing done), 128+N stopped by signal N (130: SIGINT)."""

from __future__ import annotations

import os
import signal
import sqlite3
import sys
import traceback
from pathlib import Path

from .arguments import build_options, library_options, parser, session_options, slurm_options, tune_options
from .errors import UsageError
from .outputs import OutputError, disk_full, os_cause
from .run import library_commands, session
from .streams import ReaderMayLeave, open_stream


def cmd_libs(args):
    return library_commands.libs_command(library_options(args), args.json)


def cmd_doctor(args):
    return library_commands.doctor_command(library_options(args), args.json, run_engine_doctor=not args.no_engine,
                                           settings=args.settings)


def cmd_build(args):
    return library_commands.build_command(library_options(args), build_options(args), args.force)


def cmd_plan(args):
    return session.plan_only(session_options(args))


def cmd_run(args):
    return session.run(session_options(args))


def cmd_report(args):
    from .report import commands

    return commands.report_command(args.results, args.output, args.force, args.csv, args.title)


def cmd_tables(args):
    from .report import commands

    return commands.tables_command(args.results, args.csv, args.json)


def cmd_compare(args):
    from .report import commands

    return commands.compare_command(args.a, args.b, args.a_library, args.b_library, args.reference, args.csv)


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
    from .results.ingest import ingest_command

    return ingest_command(Path(args.store), args.files, args.library, args.config, no_detect=args.no_detect,
                          no_check=args.no_check, validate=args.validate)


def main(argv=None) -> int:
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (ReaderMayLeave(open_stream(sys.stdout, 1)),
                              ReaderMayLeave(open_stream(sys.stderr, 2)))
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
    from .results.store_file import StoreError

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
