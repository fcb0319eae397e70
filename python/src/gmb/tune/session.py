# SPDX-License-Identifier: BSD-3-Clause
"""A `gmb tune` session: the configurations and their engines (as `gmb run` has them), the races (configuration x
path, races.py), the search run within the budget (search.py, its launches by tuner.py), and the answer (answer.py)
kept in a results directory like a campaign's: its launches and records in store.sqlite, tune.json, the campaign that
reproduces it, the libraries' own tuning files, the report."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from . import answer as answer_mod
from ..results.tune_answer import ANSWER_FILE
from .catalogue import COMMAND_LINE, check_knob_patterns, narrowed, nothing_to_try, offers, path_offers
from .paths import campaign_paths, tune_paths
from .races import DEFAULTS, Arm, Race
from .search import search
from .tuner import FIRST_LAUNCH_GUESS_S, Tuner
from .native import write_native
from ..campaign.results_dir import new_results_dir
from ..engine import configurations as confs_mod
from ..errors import UsageError, did_you_mean
from ..machine import libraries as libraries_mod
from ..machine import families
from ..machine.knobs import PATHS, check_declared, user_knobs
from ..options import SessionOptions, TuneOptions
from ..outputs import OutputError, os_cause, write_new
from ..results import store as store_mod
from ..results.engine_facts import keep_engines
from ..results.model import Results
from ..results.store import STAT_COLUMNS
from ..results.store_file import StoreError
from ..run import setup
from ..run.execute import Stopped, stop_on_signals
from ..run.session import hold, join_node


def tune(opts: TuneOptions) -> int:
    """`gmb tune`; the exit status: 0 searched (whether or not a setting won), 1 nothing could be compared (no race's
    defaults measured) or the search failed (a disk fault), 2 nothing to search or bad input, 128+N stopped by signal
    N; --verify: 0 the answer holds, 1 not."""
    session = SessionOptions(libraries=opts.libraries, build=opts.build, hostfile=opts.hostfile, nodes=opts.nodes,
                             results=opts.results, topology=opts.topology, campaign=opts.campaign)
    if opts.verify:
        from .verify import command
        return command(*opts.verify)
    if opts.topology and not opts.list_knobs:
        raise UsageError("--topology describes another machine: use it with --list (a search measures this one)")
    if not opts.list_knobs:
        setup.check_working_directory()
    libs, all_names = setup.found_libraries(opts.libraries)
    campaign = setup.load_campaign(opts.campaign, all_names)
    topo = setup.machine_topology(session)
    hosts = setup.hosts(session) or 1
    try:
        declared: dict[str, list[str]] = {}
        for name, value in opts.knob:
            declared.setdefault(name, []).append(value)
        extra = user_knobs(check_declared(declared, COMMAND_LINE, families.setting_prefixes()), COMMAND_LINE)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if campaign:
        extra = user_knobs(campaign.knobs, f"the campaign file {opts.campaign}") + extra
    if opts.list_knobs:
        confs, _ = setup.configured(session, libs, topo, do_build=False, run_doctor=False)
        cache: dict = {}
        listed = [(conf, offers(conf, extra, cache)) for conf in confs]
        check_knob_patterns(opts.knobs, [o for _, o in listed])
        for conf, conf_offers in listed:
            conf_offers = narrowed(conf_offers, opts.knobs)
            print("\n".join(answer_mod.offers_text(conf, conf_offers)))
            if conf.description is not None:  # what a search of it costs: one launch per value and path, first
                counts = [(path.name, n) for path in tune_paths(conf, topo, hosts, [])
                          if (n := sum(len(o.values) for o in path_offers(conf_offers, path))) or
                          not path.algorithms_only]
                print(f"  values per path: {', '.join(f'{name} {n}' for name, n in counts)}; the first round "
                      f"takes {sum(n + 1 for _, n in counts)} launches")
        return 0
    with stop_on_signals():
        try:
            return _tune(opts, session, libs, topo, hosts, extra, campaign)
        except Stopped as exc:
            print(f"\ngmb tune: stopped by {exc}", file=sys.stderr)
            return 128 + exc.signum


def _races(confs, topo, hosts: int, extra, wanted: tuple[str, ...], skipped: list, campaign=None,
           only: tuple[str, ...] = ()) -> tuple[list[Race], dict]:
    """One race per configuration and path (the machine's, or the blocks of ``campaign``; those ``wanted`` name by
    path name or kind, all when none), with the defaults and each knob value the configuration offers for the path
    (a race with none says why: Race.untried); and each configuration's offers (after --knobs ``only``)."""
    races, unfiltered, all_offers, cache, seen = [], {}, {}, {}, set()
    for conf in confs_mod.runnable(confs):
        unfiltered[conf.name] = offers(conf, extra, cache)
        all_offers[conf.name] = narrowed(unfiltered[conf.name], only)
        paths = campaign_paths(campaign, conf, skipped) if campaign else tune_paths(conf, topo, hosts, skipped)
        for path in paths:
            if path.algorithms_only and not path_offers(all_offers[conf.name], path):
                continue  # no algorithm of its operation is offered
            named = {w for w in wanted if w in (path.name, path.kind) or path.name.startswith(w + " ")}
            seen |= named | {path.name}
            if wanted and not named:
                continue
            headline = conf.description.benchmark(path.block.benchmarks[0]).headline
            race = Race(conf.name, path.name, path.kind, path.block, headline != "time_us", STAT_COLUMNS[headline],
                        [Arm(DEFAULTS, {})])
            race.arms += [Arm(f"{o.knob.name}={v}", o.knob.setting(v), o.knob.name)
                          for o in path_offers(all_offers[conf.name], path) for v in o.values]
            if len(race.arms) == 1:
                race.untried = nothing_to_try(all_offers[conf.name], path.kind)
            races.append(race)
    check_knob_patterns(only, list(unfiltered.values()))
    unknown = [w for w in wanted if w not in seen]
    if unknown:
        raise UsageError(f"--paths: {', '.join(unknown)} is no path here{did_you_mean(unknown[0], seen)} "
                         f"(paths here: {', '.join(sorted(seen))}; kinds: {', '.join(PATHS)})")
    return races, all_offers


def _tune(opts: TuneOptions, session: SessionOptions, libs, topo, hosts: int, extra, campaign) -> int:
    confs, _ = setup.configured(session, libs, topo, do_build=not opts.build.no_build, run_doctor=True)
    skipped: list = list(confs_mod.skipped(confs))
    races, all_offers = _races(confs, topo, hosts, extra, opts.paths, skipped, campaign, opts.knobs)
    if not races:
        raise UsageError(_nothing_to_search(confs, skipped, opts.paths))
    for lib, what, why in skipped:
        print(f"gmb tune: {lib}: {what}: not searched: {why}", file=sys.stderr)
    compared = _compared(races, {c.name: c for c in confs})
    measured = [race for race in races if not race.untried or id(race) in compared]
    if not measured:
        raise UsageError("nothing to try: " + "; ".join(f"{r.configuration}, {r.path}: {r.untried}" for r in races))
    _check_budget(opts.budget, measured)
    outdir = new_results_dir(Path(opts.results), "tune")
    lock = hold(outdir, "gmb tune")
    node = None
    started = time.monotonic()
    try:
        st = store_mod.Store(outdir / "store.sqlite")
        st.set_meta("campaign", "tune")
        st.set_meta("topology", topo.summary())
        for lib, what, why in skipped:
            st.record_skip("tune", lib, what, why)
        keep_engines(outdir, st, confs_mod.descriptions(confs))
        node = join_node(outdir, st)
        print(f"gmb tune: {len(measured)} races, {sum(len(r.arms) for r in measured)} arms; budget "
              f"{opts.budget:g} s; results in {outdir}", file=sys.stderr)
        tuner = Tuner(outdir, st, lock, confs, opts, hosts, started + opts.budget)
        stopped, failure = None, ""
        try:
            search(tuner, measured, compared)
        except Stopped as exc:  # what was measured so far is answered, then the stop goes on
            stopped = exc
        except (OSError, OutputError, StoreError) as exc:  # a disk fault: the answer so far, where the disk allows
            failure = _failure(exc, tuner)
            struck = tuner.owner.get(tuner.current or "", (None, None))[1]
            if struck is not None and struck.key != DEFAULTS and not struck.figures:
                struck.why = "the search failed during its launch"
            not_ended = tuner.end_running_launch(f"gmb tune failed: {failure}")
            failure += f"; {not_ended}" if not_ended else ""
        if stopped or failure:
            try:
                tuner.update_figures(measured)
            except (OSError, OutputError, StoreError) as exc:
                failure += f"; the figures so far cannot be read: {exc}"
        ended = (f"gmb tune was stopped by {stopped}" if stopped else "the search failed" if failure else
                 "the budget ran out" if tuner.cut_short else "the search ended")
        result = answer_mod.answer(races, confs, all_offers, skipped, opts.budget, time.monotonic() - started,
                                   tuner.rounds, len(tuner.owner), tuner.cut_short, ended,
                                   stopped=ended if stopped else failure or None)
        not_kept, native_lines = _keep_answer(outdir, st, result, races, confs)
    finally:
        if node is not None:
            node.leave()
        lock.release()
    print("\n" + "\n".join(answer_mod.answer_text(result) + native_lines) + "\n")
    if not (stopped or failure or result["races_measured"]):
        failure = f"nothing was compared: no race's defaults were measured ({ended}; each race says why)"
    for why in [failure] * bool(failure) + not_kept:
        print(f"gmb tune: error: {why}", file=sys.stderr)
    if (stopped or failure) and not not_kept:
        print(f"gmb tune: the answer so far is in {outdir}", file=sys.stderr)
    if stopped:
        raise stopped
    if failure:
        return 1
    out = outdir / "report.html"
    if not opts.no_report:
        from ..report import html as report
        report.write_report(Results.load(st), out, title="gmb tune")
        print(f"gmb: report {out}")
    if answer_mod.claims(result):
        print(f"gmb tune: measure it again: gmb run --config {outdir / 'tune-libraries.toml'} --no-detect "
              f"{outdir / 'tune.toml'}; then: gmb tune --verify {outdir} RUN_DIR", file=sys.stderr)
    print(str(outdir))
    return 1 if not_kept else 0


def _check_budget(budget: float, measured: list[Race]) -> None:
    """UsageError where ``budget`` cannot measure even the defaults of every race once, saying what would."""
    if budget < FIRST_LAUNCH_GUESS_S * len(measured):
        raise UsageError(f"--budget {budget:g}: too little to measure even the defaults of the {len(measured)} "
                         f"race(s) once (a launch takes about {FIRST_LAUNCH_GUESS_S:g} s until one is measured): give "
                         f"--budget {FIRST_LAUNCH_GUESS_S * len(measured):g} or more (the first round takes about "
                         f"{FIRST_LAUNCH_GUESS_S * sum(len(r.arms) for r in measured):g} s)")


def _nothing_to_search(confs, skipped: list, paths: tuple[str, ...]) -> str:
    """Why no race could be made: no configuration has an engine (each says why), or none has a path here."""
    if not confs_mod.runnable(confs):
        return "nothing to search: " + "; ".join(f"{c.name}: {c.no_engine}" for c in confs)
    return ("nothing to search: no configuration has a path here" +
            (f" among --paths {', '.join(paths)}" if paths else "") +
            (" (" + "; ".join(f"{lib}: {what}: {why}" for lib, what, why in skipped) + ")" if skipped else ""))


def _failure(exc: BaseException, tuner: Tuner) -> str:
    """A disk fault that stopped the search, in a line: the path, the cause, and the launch it struck."""
    what = f"{exc.filename}: {os_cause(exc)}" if isinstance(exc, OSError) and exc.filename else \
        os_cause(exc) if isinstance(exc, OSError) else str(exc)
    return f"launch {tuner.current}: {what}" if tuner.current and f"launch {tuner.current}" not in what else what


def _keep_answer(outdir: Path, st, result: dict, races: list[Race], confs) -> tuple[list[str], list[str]]:
    """The answer in the store (for the report) and in tune.json, the campaign that measures it again, the
    libraries as the search ran them and the libraries' own tuning files (native), each where the disk allows;
    what could not be written, and the lines that name the native files."""
    writes = (lambda: st.set_meta("tune", json.dumps(result, allow_nan=False)),
              lambda: write_new(outdir / ANSWER_FILE, json.dumps(result, indent=1, allow_nan=False)),
              lambda: write_new(outdir / "tune.toml", answer_mod.reproducing_campaign(result, races).to_toml()),
              lambda: write_new(outdir / "tune-libraries.toml",
                                libraries_mod.to_toml(confs_mod.libraries(confs_mod.runnable(confs)))))
    not_kept = []
    for write in writes:
        try:
            write()
        except (OutputError, StoreError, OSError) as exc:
            not_kept.append(str(exc))
    native_lines, native_errors = write_native(outdir, result, races,
                                               {c.name: c for c in confs_mod.runnable(confs)}, st)
    return not_kept + native_errors, native_lines


def _compared(races: list[Race], confs: dict) -> set[int]:
    """The races whose defaults are compared with another configuration (``confs``: by name) of the same
    installation on the same path (Open MPI's pml ob1 and ucx): they are measured MIN_LAUNCHES times even when no
    knob races."""
    groups: dict[tuple[str, str], list[Race]] = {}
    for race in races:
        groups.setdefault((confs[race.configuration].library.identity, race.path), []).append(race)
    return {id(race) for group in groups.values() if len(group) > 1 for race in group}
