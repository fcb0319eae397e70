# SPDX-License-Identifier: BSD-3-Clause
"""A `gmb tune` session: the configurations and their engines (as `gmb run` has them), the races (configuration x
path, search.py), each knob value proven correct by the engine's doctor before it is measured, the selection's rounds
and the confirmation's fresh launches run within the budget, the answer written (answer.py) into a results directory
like a campaign's: its launches and records in store.sqlite, tune.json, the campaign that reproduces it, the report."""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from . import answer as answer_mod
from ..results.tune_answer import ANSWER_FILE
from .catalogue import COMMAND_LINE, check_knob_patterns, narrowed, nothing_to_try, offered, offers
from .paths import ROUND_PRECISION, campaign_paths, round_options, tune_paths
from .search import (CONFIRM_LAUNCHES, DEFAULTS, MAX_CANDIDATES, MIN_LAUNCHES, Arm, ArmFigure, Race, best_gain,
                     confirm_arm, cut_losers, judge_failures, plan_round, select, worst_per_knob)
from .verify import record_identity
from ..campaign.plan import new_results_dir, plan
from ..campaign.spec import Campaign
from ..engine import configurations as confs_mod
from ..engine.doctor import doctor_answer, doctor_verdict, engine_doctor
from ..errors import UsageError, did_you_mean
from ..machine import libraries as libraries_mod
from ..machine import families
from ..machine.knobs import PATHS, check_declared, user_knobs
from ..options import SessionOptions, TuneOptions
from ..outputs import OutputError, os_cause, write_new
from ..results import store as store_mod
from ..results.engine_facts import keep_engines
from ..results.model import Results, combine
from ..results.store import STAT_COLUMNS, StoreError
from ..run import setup
from ..run.bundles import bundles, run_bundles
from ..run.execute import Stopped, stop_on_signals
from ..run.session import hold, join_node

FIRST_LAUNCH_GUESS_S = 5.0  # a launch's wall time until one has been measured
LAUNCH_TIMEOUT_S = 180.0


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
                counts = [(path.name, sum(len(o.values) for o in offered(conf_offers, path.kind)))
                          for path in tune_paths(conf, topo, hosts, [])]
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
            named = {w for w in wanted if w in (path.name, path.kind) or path.name.startswith(w + " ")}
            seen |= named | {path.name}
            if wanted and not named:
                continue
            headline = conf.description.benchmark(path.block.benchmarks[0]).headline
            race = Race(conf.name, path.name, path.kind, path.block, headline != "time_us", STAT_COLUMNS[headline],
                        [Arm(DEFAULTS, {})])
            race.arms += [Arm(f"{o.knob.name}={v}", o.knob.setting(v), o.knob.name)
                          for o in offered(all_offers[conf.name], path.kind) for v in o.values]
            if len(race.arms) == 1:
                race.untried = nothing_to_try(all_offers[conf.name], path.kind)
            races.append(race)
    check_knob_patterns(only, list(unfiltered.values()))
    unknown = [w for w in wanted if w not in seen]
    if unknown:
        raise UsageError(f"--paths: {', '.join(unknown)} is no path here{did_you_mean(unknown[0], seen)} "
                         f"(paths here: {', '.join(sorted(seen))}; kinds: {', '.join(PATHS)})")
    return races, all_offers


class Tuner:
    """Runs the races' launches into one results directory, within the deadline."""

    def __init__(self, outdir: Path, st, lock, confs, opts: TuneOptions, hosts: int, deadline: float):
        self.outdir, self.st, self.lock, self.opts, self.hosts = outdir, st, lock, opts, hosts
        self.confs = {c.name: c for c in confs_mod.runnable(confs)}
        self.deadline = deadline
        self.owner: dict[str, tuple[Race, Arm]] = {}  # launch id -> its race and arm
        self.confirming: set[str] = set()  # the launch ids of confirmation launches (no part in any selection)
        self.round_seconds = 0.0  # spent in rounds
        self.launched = 0
        self.rounds = 0  # rounds run
        self.doctor: dict[tuple[str, str], str | None] = {}  # (configuration, settings) -> why broken (None: fine)
        self.doctor_defaults: dict[str, dict] = {}  # configuration -> its doctor's answer with the defaults
        self.rng = random.Random(opts.seed)
        self.cut_short = False
        self.running: list[str] = []  # the launches of the engine launch running (still set where running it failed)

    def left(self) -> float:
        return self.deadline - time.monotonic()

    @property
    def current(self) -> str | None:
        """The first launch of the engine launch running, the one a failure is said of."""
        return self.running[0] if self.running else None

    def launch_estimate(self) -> float:
        """Seconds a launch (a block of a bundle) takes, the doctor's proofs and the bookkeeping between launches
        included."""
        return self.round_seconds / self.launched if self.launched else FIRST_LAUNCH_GUESS_S

    def prove(self, race: Race, arm: Arm) -> bool:
        """The engine's doctor with the arm's settings answers as with the defaults: its validated exchange proves
        the library CUDA-aware (or not) alike, and nothing crashes or fails to start. NCCL's knobs are proven by the
        validated measurement itself (the doctor's exchange is MPI's). False (the arm broken, why said)
        otherwise."""
        conf = self.confs[race.configuration]
        if not arm.settings or conf.library.transport == "nccl":
            return True
        key = (conf.name, json.dumps(arm.settings, sort_keys=True))
        if key not in self.doctor:
            self.doctor[key] = self._doctor_differs(conf, arm.settings)
        if self.doctor[key]:
            arm.state, arm.why = "broken", self.doctor[key]
            return False
        return True

    def _doctor_differs(self, conf, settings: dict[str, str]) -> str | None:
        """Why the doctor's answer with ``settings`` is not its answer with the defaults (None: it is)."""
        quick = "--awareness-only" in (conf.description.accepted_options("doctor") or {})
        if conf.name not in self.doctor_defaults:
            self.doctor_defaults[conf.name] = engine_doctor(conf.library, Path(conf.engine), 60, quick)
        base = self.doctor_defaults[conf.name]
        lib = replace(conf.library, env={**conf.library.env, **settings})
        said = engine_doctor(lib, Path(conf.engine), 60, quick)
        if (doctor_verdict(said), said.get("crashed", False)) == (doctor_verdict(base), base.get("crashed", False)):
            return None
        return f"the engine's doctor says {doctor_answer(said)} (with the defaults: {doctor_answer(base)})"

    def run_round(self, round_number: int, work: list[tuple[Race, Arm]], confirming: bool = False) -> None:
        """One launch of each (race, arm), in random order, each arm proven correct first; stops at the deadline.
        ``confirming``: the launches confirm selected values (at the finest precision), and no selection uses them."""
        self.rounds += 1
        started, before = time.monotonic(), len(self.owner)
        try:
            self._run_round(round_number, work, confirming)
        finally:
            self.round_seconds += time.monotonic() - started
            self.launched += len(self.owner) - before

    def _run_round(self, round_number: int, work: list[tuple[Race, Arm]], confirming: bool) -> None:
        work = [(race, arm) for race, arm in work if arm.state == "broken" or self.prove(race, arm)]
        work = [(race, arm) for race, arm in work if arm.state != "broken"]
        precision = len(ROUND_PRECISION) - 1 if confirming else round_number
        blocks = [replace(round_options(race.block, precision), env={**race.block.env, **arm.settings})
                  for race, arm in work]
        campaign = Campaign(f"tune-round{round_number + 1}", blocks, repetitions=1, order="random",
                            seed=self.rng.randrange(1 << 30), timeout_s=LAUNCH_TIMEOUT_S)
        libs = [c.library for c in self.confs.values()]
        launches, skipped = plan(campaign, libs, {n: c.description for n, c in self.confs.items()},
                                 hosts=self.hosts)
        for lib, what, why in skipped:  # a plan refusal breaks the arm of its block (e.g. an outranked setting)
            if what.startswith("block "):
                race, arm = work[int(what.split()[1]) - 1]
                arm.state, arm.why = "broken", why
        owners = {}
        for x in launches:
            race, arm = work[int(x.launch_id.split(".")[0][1:]) - 1]
            if arm.state != "broken":
                x = replace(x, launch_id=f"t{round_number + 1}.{x.launch_id}")
                owners[x.launch_id] = (x, race, arm)
        # one engine launch measures every path of one set of settings: the launches of a configuration whose
        # settings are the same share it (run/bundles.py), each still a launch of its race and arm
        nodes = self.hosts if self.opts.nodes else None
        for bundle in bundles([x for x, _, _ in owners.values()], self.rng.randrange(1 << 30), nodes, None,
                              prefix=f"t{round_number + 1}.u"):
            fit = max(0, int(self.left() // self.launch_estimate()))
            if fit < len(bundle.launches):
                self.cut_short = True
            blocks = bundle.launches[:fit]
            if not blocks:
                return
            for x in blocks:
                self.owner[x.launch_id] = owners[x.launch_id][1:]
                if confirming:
                    self.confirming.add(x.launch_id)
            self.running = [x.launch_id for x in blocks]
            run_bundles(self.outdir, blocks, self.confs, self.st, "tune", seed=None, hostfile=self.opts.hostfile,
                        progress=False, nodes=nodes, stop_library_after=0, lock=self.lock, named=bundle.bundle_id)
            for x in blocks:
                self._judge_launch(x.launch_id, *owners[x.launch_id][1:])
            self.running = []
            if self.cut_short:
                return

    def _judge_launch(self, launch_id: str, race: Race, arm: Arm) -> None:
        """A launch that did not end ok (or unsupported): a note on its race (the defaults) or its arm failed."""
        (row,) = self.st.rows("SELECT status, reason FROM launches WHERE launch_id = ?", (launch_id,))
        if row["status"] not in ("ok", "unsupported"):
            self.check_writable(launch_id)
            said = f"{row['status']}: {row['reason'] or 'no reason given'}"
            if arm.key == DEFAULTS:
                race.note = f"a launch with the defaults {said}"
            else:  # broken, or no verdict where the defaults fail as well (search.judge_failures)
                arm.state, arm.why = "failed", f"its launch {said}"

    def check_writable(self, launch_id: str) -> None:
        """After a failed launch: its record and log directories still take a byte. OutputError naming the directory
        and the launch otherwise: a disk fault fails the search, it is no verdict on the launch's settings."""
        for d in (self.outdir / "raw", self.outdir / "logs"):
            try:
                with tempfile.TemporaryFile(dir=d) as probe:
                    probe.write(b"\0")
                    probe.flush()
                    os.fsync(probe.fileno())
            except OSError as exc:
                raise OutputError(f"{d}: cannot be written ({os_cause(exc)}): launch {launch_id} failed for it, "
                                  "not for its settings") from None

    def end_running_launch(self, why: str) -> str:
        """The launch the search was running when it failed, no longer "running" in the store: "failed", with
        ``why``. Returns what could not be done ("" when done, or when no launch was running)."""
        try:
            for launch_id in self.running:
                for row in self.st.rows("SELECT * FROM launches WHERE launch_id = ? AND status = 'running'",
                                        (launch_id,)):
                    self.st.record_launch(**{**row, "status": "failed", "reason": why})
        except (OutputError, StoreError, OSError) as exc:
            return f"the store still says launch {launch_id} runs: {exc}"
        return ""

    def update_figures(self, races: list[Race]) -> None:
        """Each arm's figure per size from its launches so far, and from its confirmation launches alone with its
        confirmation; an arm with a failed result (wrong data) is broken."""
        results = Results.load(self.st)
        by_arm: dict[int, list] = {}
        fresh: dict[int, list] = {}
        for r in results.results:
            owner = self.owner.get(r.launch_id or "")
            if owner is None:
                continue
            race, arm = owner
            if r.status == "failed" and arm.state != "broken":
                arm.state, arm.why = "broken", f"{r.bytes} B: {r.reason or 'failed'}"
            if r.status == "ok":
                by_arm.setdefault(id(arm), []).append(r)
                if r.launch_id in self.confirming:
                    fresh.setdefault(id(arm), []).append(r)
                if arm.key == DEFAULTS and race.identity is None:
                    race.identity = {"point": record_identity(r, race.metric), "settings": r.config.settings}
        for race in races:
            for arm in race.arms:
                points = combine(by_arm.get(id(arm), []), metric=race.metric)
                arm.figures = {p.bytes: ArmFigure(p.median, p.low, p.high, p.reps, tuple(p.values), p.noise)
                               for p in points}
                points = combine(fresh.get(id(arm), []), metric=race.metric)
                arm.fresh_figures = {p.bytes: ArmFigure(p.median, p.low, p.high, p.reps, tuple(p.values), p.noise)
                                     for p in points}
                arm.fresh = {p.bytes: {x.launch_id: x.median for x in p.launches} for p in points}
            for arm in race.arms[1:]:
                if arm.fresh:
                    confirm_arm(race, arm)
            judge_failures(race)


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
    if opts.budget < FIRST_LAUNCH_GUESS_S * len(measured):
        raise UsageError(f"--budget {opts.budget:g}: too little to measure even the defaults of the {len(measured)} "
                         f"race(s) once (a launch takes about {FIRST_LAUNCH_GUESS_S:g} s until one is measured): give "
                         f"--budget {FIRST_LAUNCH_GUESS_S * len(measured):g} or more (the first round takes about "
                         f"{FIRST_LAUNCH_GUESS_S * sum(len(r.arms) for r in measured):g} s)")
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
            _search(tuner, measured, compared)
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
        not_kept = _keep_answer(outdir, st, result, races, confs)
    finally:
        if node is not None:
            node.leave()
        lock.release()
    print("\n" + "\n".join(answer_mod.answer_text(result)) + "\n")
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


def _keep_answer(outdir: Path, st, result: dict, races: list[Race], confs) -> list[str]:
    """The answer in the store (for the report) and in tune.json, the campaign that measures it again and the
    libraries as the search ran them, each where the disk allows; what could not be written."""
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
    return not_kept


def _search(tuner: Tuner, races: list[Race], compared: set[int]) -> int:
    """Selection, then confirmation. Selection: first every knob value once beside the defaults; those no better
    anywhere are cut. Then, until the leaders have MIN_LAUNCHES launches, the better half of each race (plan_round),
    as many as the time left allows spread over the rounds to go, the confirmation's share kept (_reserve, at most
    half of what is left). The values
    still ahead are selected (search.select, with the best of two knobs or more together). Confirmation: fresh
    launches of each selected value and of its race's defaults, interleaved (_confirm); then, while time is left, each
    knob's worst value the same way, so that "worse" is proven too. Returns the rounds run. ``compared``: the races
    whose defaults are set beside another configuration's (_compared)."""
    first = sum(len(race.arms) for race in races) * tuner.launch_estimate()
    if first > 0.5 * tuner.left():
        print(f"gmb tune: warning: the first round alone takes about {first:.0f} s of the {max(tuner.left(), 0):.0f} "
              f"s budget: little is left to select and confirm a gain (a larger --budget, fewer --paths or --knobs)",
              file=sys.stderr)
    tuner.run_round(0, [(race, arm) for race in races for arm in race.arms])
    tuner.update_figures(races)
    for race in races:
        cut_losers(race)
    _say_round(0, races, tuner)
    number = 1
    while number < MIN_LAUNCHES and not tuner.cut_short:
        # the confirmation's share kept aside: what it may need, at most half of what is left
        spare = 0.9 * tuner.left() - min(_reserve(races) * tuner.launch_estimate(), 0.5 * tuner.left())
        affordable = int(max(0.0, spare) / tuner.launch_estimate() / (MIN_LAUNCHES - number))
        work = plan_round(races, number, affordable, compared)
        if not work:
            break
        tuner.run_round(number, work)
        tuner.update_figures(races)
        for race in races:
            cut_losers(race)
        _say_round(number, races, tuner)
        number += 1
    selected = [(race, arm) for race in races if not race.note for arm in select(race)]
    number = _confirm(tuner, races, number, selected)
    return _confirm(tuner, races, number, [(race, arm) for race in races if not race.note
                                           for arm in worst_per_knob(race)])


def _reserve(races: list[Race]) -> int:
    """The launches the confirmation will need, at most: per race still racing, CONFIRM_LAUNCHES launches of its
    defaults and of each value it may select (MAX_CANDIDATES, and their combination)."""
    need = 0
    for race in races:
        racing = len([a for a in race.racing() if a.key != DEFAULTS])
        if racing and not race.note:
            need += CONFIRM_LAUNCHES * (1 + min(racing, MAX_CANDIDATES) + (racing > 1))
    return need


def _confirm(tuner: Tuner, races: list[Race], number: int, arms: list[tuple[Race, Arm]]) -> int:
    """Fresh launches of ``arms`` (race, arm) and of their races' defaults: CONFIRM_LAUNCHES rounds, each launching
    every one once in random order (the values and their defaults interleaved). Taken the most promising first, as
    many as the time left allows for all their launches; the others say why they were not confirmed. Returns the
    next round's number."""
    arms = sorted(((race, arm) for race, arm in arms if arm.state != "broken"),
                  key=lambda ra: best_gain(*ra)[0], reverse=True)
    fits = tuner.left() / tuner.launch_estimate()
    chosen: list[tuple[Race, Arm]] = []
    with_defaults: dict[int, Race] = {}
    left_out = False  # a value the time left cannot confirm: the budget ran out, once those that fit are confirmed
    for race, arm in arms:
        cost = CONFIRM_LAUNCHES * (len(chosen) + len(with_defaults) + 1 + (id(race) not in with_defaults))
        if tuner.cut_short or cost > fits:
            arm.why = arm.why or "the budget ran out before its confirmation"
            left_out = True
            continue
        chosen.append((race, arm))
        with_defaults[id(race)] = race
    for _ in range(CONFIRM_LAUNCHES if chosen else 0):
        if tuner.cut_short:
            break
        tuner.run_round(number, [(race, race.defaults) for race in with_defaults.values()] + chosen, confirming=True)
        tuner.update_figures(races)
        number += 1
    tuner.cut_short = tuner.cut_short or left_out
    for race, arm in chosen:
        if arm.confirmation is None and arm.state != "broken":
            arm.why = arm.why or "the budget ran out before its confirmation launches"
    _say_confirmed(chosen, tuner)
    return number


def _compared(races: list[Race], confs: dict) -> set[int]:
    """The races whose defaults are compared with another configuration (``confs``: by name) of the same
    installation on the same path (Open MPI's pml ob1 and ucx): they are measured MIN_LAUNCHES times even when no
    knob races."""
    groups: dict[tuple[str, str], list[Race]] = {}
    for race in races:
        groups.setdefault((confs[race.configuration].library.identity, race.path), []).append(race)
    return {id(race) for group in groups.values() if len(group) > 1 for race in group}


def _say_confirmed(chosen: list[tuple[Race, Arm]], tuner: Tuner) -> None:
    if chosen:
        better = sum(bool(arm.confirmation and arm.confirmation.recommended) for _, arm in chosen)
        worse = sum(bool(arm.confirmation and any(arm.confirmation.worse)) for _, arm in chosen)
        print(f"gmb tune: confirmation of {len(chosen)} value(s) on fresh launches: {better} proven better, {worse} "
              f"proven worse somewhere; {len(tuner.owner)} launches, {max(0.0, tuner.left()):.0f} s left",
              file=sys.stderr)


def _say_round(number: int, races: list[Race], tuner: Tuner) -> None:
    racing = sum(len(r.racing()) - 1 for r in races)
    broken = sum(a.state == "broken" for r in races for a in r.arms)
    print(f"gmb tune: round {number + 1}: {racing} knob value(s) still racing, {broken} broken; "
          f"{len(tuner.owner)} launches, {max(0.0, tuner.left()):.0f} s left", file=sys.stderr)
