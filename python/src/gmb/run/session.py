# SPDX-License-Identifier: BSD-3-Clause
"""A `gmb run` or `gmb plan` session: the libraries, their engines, the campaign (a file, or generated), the plan;
for a run, the results directory held, the launches run (a resume: the unfinished ones of its plan.json), the
report written. Stopped by a signal, the launch running is ended and marked interrupted and the resume command
printed."""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from . import bundles, locks
from . import setup
from .leftovers import leftover_launches, stop_leftovers
from .node_campaigns import NodeCampaigns
from ..campaign import estimate
from ..campaign.results_dir import (SavedPlan, copy_campaign_file, new_results_dir, read_plan, results_dir_problem,
                                    write_plan)
from ..engine import configurations
from ..engine.engines import build_options, resume_engines
from ..errors import UsageError
from ..machine import identity
from ..machine import mpilibs
from ..machine.load import busy_launch, describe_campaign
from ..campaign.plan import Launch
from ..engine.configurations import Configuration
from ..options import SessionOptions
from ..results import store
from ..results.engine_facts import keep_engines
from .execute import Stopped, run_launches, stop_on_signals


def plan_only(opts: SessionOptions):
    """`gmb plan` (`gmb run --dry-run`): the launches, the skipped points with reasons and the estimate."""
    if opts.resume:
        raise UsageError("--dry-run with --resume: the plan of a results directory is its plan.json")
    planned = setup.prepare(opts, do_build=False, run_doctor=False)
    launches, descriptions = planned.launches, configurations.descriptions(planned.configurations)

    def said(x, indent=""):
        print(f"{indent}{x.launch_id:<60} {' '.join(x.engine_args)}" + (f"  env {x.env}" if x.env else ""))

    if planned.campaign.bundle:  # the engine launches, each with its blocks in the order they run
        groups = bundles.bundles(launches, planned.campaign.seed, setup.hosts_given(opts), opts.ranks_per_node)
        engine_launches = 0
        shared = []
        for b in groups:
            desc = descriptions.get(b.launches[0].library)
            if desc is not None and desc.plan:
                print(f"bundle {b.bundle_id}: one launch, {len(b.launches)} block(s)")
                engine_launches += 1
                shared.append(b.launches)
            else:
                print(f"bundle {b.bundle_id}: {len(b.launches)} launch(es) of their own (the engine has no plans)")
                engine_launches += len(b.launches)
            for x in b.launches:
                said(x, "  ")
        counted = f"{len(launches)} launches as blocks of {engine_launches} engine launches ({len(groups)} bundles)"
    else:
        shared = []
        for x in launches:
            said(x)
        counted = f"{len(launches)} launches"
    for lib, what, why in planned.skipped:
        print(f"skip {lib}: {what}: {why}")
    print(f"{counted}, {len(planned.skipped)} skipped", file=sys.stderr)
    print(f"gmb plan: {estimate.summary(launches, descriptions, shared)}", file=sys.stderr)
    over = estimate.over_timeout(launches, descriptions)
    if over:
        x, t = max(over, key=lambda o: o[1])
        print(f"gmb plan: warning: {len(over)} launches are estimated to take longer than their timeout (longest: "
              f"{x.launch_id}, about {t:.0f} s > {x.timeout_s:g} s)", file=sys.stderr)
    return 0


def run(opts: SessionOptions):
    """`gmb run` (and `--resume`); the exit status: 0 ok, 1 a launch failed, 128+N stopped by signal N."""
    if opts.dry_run:
        return plan_only(opts)
    if opts.topology:
        raise UsageError("--topology plans for another machine: use it with `gmb plan` or --dry-run")
    setup.check_working_directory()
    with stop_on_signals():
        try:
            return _run(opts)
        except Stopped as exc:
            print(f"\ngmb: stopped by {exc}", file=sys.stderr)
            return 128 + exc.signum


@dataclass(frozen=True)
class HeldRun:
    """A campaign ready to execute: planned (or read back to resume), its results directory made and held."""
    outdir: Path
    store: store.Store
    lock: locks.ResultsLock
    launches: list[Launch]
    configurations: list[Configuration]
    name: str  # the campaign's
    stop_after: int  # stop_library_after
    bundle: bool
    seed: int | None

    def execute(self, opts: SessionOptions) -> dict[str, int]:
        """Run the launches not finished yet, bundled or one by one as the campaign says; how many ended how."""
        runnable = {c.name: c for c in configurations.runnable(self.configurations)}
        common = dict(hostfile=opts.hostfile, progress=not opts.no_progress, nodes=setup.hosts_given(opts),
                      ranks_per_node=opts.ranks_per_node, stop_library_after=self.stop_after, lock=self.lock)
        if self.bundle:
            return bundles.run_bundles(self.outdir, self.launches, runnable, self.store, self.name, self.seed,
                                       **common)
        return run_launches(self.outdir, self.launches, runnable, self.store, self.name, **common)


def _run(opts: SessionOptions):
    """`gmb run`: plan (or read the plan to resume), hold the results directory, run, report. Stopped by a signal,
    the launch running is ended and marked interrupted and the resume command printed."""
    run = _resume_setup(opts) if opts.resume else _fresh_setup(opts)
    if run is None:
        return 1
    outdir, st, lock = run.outdir, run.store, run.lock
    node = join_node(outdir, st)
    print(f"gmb: results in {outdir}", file=sys.stderr)
    try:
        counts = run.execute(opts)
    except Stopped:
        print(f"\ngmb: interrupted; continue with `{resume_command(opts, outdir)}`", file=sys.stderr)
        raise
    except locks.ResultsLockLost as exc:
        print(f"gmb run: error: {exc}; continue, once no other gmb uses {outdir}, with "
              f"`{resume_command(opts, outdir)}`", file=sys.stderr)
        return 1
    finally:
        node.leave()
        lock.release()
    ran = ", ".join(f"{n} {status}" for status, n in sorted(counts.items())) or "none left to run"
    print(f"gmb: launches: {ran}; results in {outdir}", file=sys.stderr)
    busy = [x for x in st.launches() if busy_launch(x["load"])]
    if busy:
        print(f"gmb: warning: {len(busy)} launch(es) ran on a busy host ({json.loads(busy[0]['load'])['why']}, the "
              f"first of them): their figures may be low, and are flagged 'busy host'", file=sys.stderr)
    for r in st.rows("SELECT library, COUNT(*) AS n, MIN(reason) AS reason FROM launches WHERE status = ? "
                     "GROUP BY library", (identity.WRONG_LIBRARY,)):
        print(f"gmb: {r['library']}: {r['n']} launch(es) ran another MPI library; their figures were not stored: "
              f"{r['reason']}", file=sys.stderr)
    from ..report.analysis import answers_and_tables
    from ..report.render_text import answers_text
    from ..results.model import Results

    results = Results.load(st)
    analysis = answers_and_tables(results)  # one analysis: the report and the printout make the same claims
    out = outdir / "report.html"
    if not opts.no_report and not out.exists():  # written before anything is printed: a reader that left (a
        from ..report import html as report  # closed pipe) loses the printout, never the report; matplotlib only for a report

        report.write_report(results, out, title=f"gmb report: {run.name}", analysis=analysis)
    print("\n" + answers_text(analysis[0]) + "\n")
    if not opts.no_report and out.exists():
        print(f"gmb: report {out}")
    print(str(outdir))
    return 0 if not counts or set(counts) <= {"ok", "unsupported"} else 1


def join_node(outdir: Path, st) -> NodeCampaigns:
    """This campaign (a run's, a search's) among the campaigns of this node: the others measuring here and the
    launches a killed gmb left running are warned of and kept in the store's meta concurrent_campaigns. The caller
    leaves (NodeCampaigns.leave) when it ends."""
    node = NodeCampaigns(outdir)
    others = node.join()
    for other in others:
        print(f"gmb: warning: another gmb campaign runs on this node ({describe_campaign(other)}): both "
              f"share its GPUs and cores, and each lowers the other's figures", file=sys.stderr)
    leftovers = leftover_launches({o.get("results") for o in others} | {str(outdir.resolve())})
    for left in leftovers:
        pids = " ".join(map(str, left["pids"]))
        resume = (f", or resume that campaign (gmb run --resume {left['results']}), which stops them first"
                  if (Path(left["results"]) / "plan.json").is_file() else "")
        print(f"gmb: warning: {len(left['pids'])} process(es) of a launch whose gmb is gone still run on this node "
              f"(pids {pids}; results {left['results']}): they share its cores and lower this campaign's figures; "
              f"stop them (kill {pids}){resume}", file=sys.stderr)
    if others or leftovers:
        st.set_meta("concurrent_campaigns", json.dumps(others + leftovers))
    return node


def resume_options(opts: SessionOptions) -> list[str]:
    """The options of this `gmb run` that its resume needs to find the same libraries and engines and to place the
    launches the same way (a library declared in a --config file is not found without it)."""
    libs, built = opts.libraries, opts.build
    out = ["--config", str(Path(libs.config).resolve())] if libs.config else []
    out += [word for lib in libs.library for word in ("--library", lib)]
    out += [flag for flag, on in (("--no-detect", libs.no_detect), ("--no-isolation", libs.no_isolation),
                                  ("--no-build", built.no_build), ("--no-report", opts.no_report)) if on]
    if opts.hostfile:
        out += ["--hostfile", str(Path(opts.hostfile).resolve())]
    for flag, value in (("--launcher", libs.launcher), ("--nodes", ",".join(map(str, opts.nodes)) or None),
                        ("--ranks-per-node", opts.ranks_per_node), ("--cuda", built.cuda),
                        ("--cuda-arch", built.cuda_arch)):
        if value is not None:
            out += [flag, str(value)]
    out += [f"--cmake-arg={arg}" for arg in built.cmake_arg]
    return out


def resume_command(opts: SessionOptions, outdir: Path, options: list[str] | None = None) -> str:
    """`gmb run --resume DIR` with the options it needs (``options``, else those of this run), ready to paste."""
    return shlex.join(["gmb", "run", "--resume", str(outdir), *(resume_options(opts) if options is None else
                                                                   options)])


def hold(outdir: Path, command: str):
    """The results directory's lock, and the stopping of what a dead previous owner left running."""
    lock = locks.ResultsLock(outdir, command)
    try:
        previous = lock.acquire()
    except locks.ResultsBusy as exc:
        raise UsageError(str(exc)) from None
    done = stop_leftovers(previous)
    if done:
        print(f"gmb: {done}", file=sys.stderr)
    return lock


def planned_libraries(planned: list[dict], found: list) -> dict:
    """The libraries a plan names (its ``libraries``: describe() of each), found again by name: installations, their
    GPU configurations, and the NCCL libraries a generated campaign added. A found MPICH keeps its name with its GPU
    profile on; the plan's profile says which of the two was planned."""
    profile_of = {d["name"]: d.get("profile") for d in planned}
    libs_all = {}
    for lib in [*found, *mpilibs.gpu_configurations(found)]:
        if lib.name not in libs_all or lib.profile == profile_of.get(lib.name):
            libs_all[lib.name] = lib
    for d in planned:
        if d["name"] not in libs_all and d.get("transport") == "nccl" and d.get("via") in libs_all:
            libs_all[d["name"]] = mpilibs.nccl_library(libs_all[d["via"]], d["name"])
    return libs_all


def _resume_setup(opts: SessionOptions) -> HeldRun:
    """What a resume runs: the plan of the results directory, its libraries and engines, the directory held."""
    if opts.campaign:
        raise UsageError(f"--resume {opts.resume} takes no campaign file ({opts.campaign}): the campaign comes "
                         f"from {opts.resume} (its plan.json)")
    given = [opt for opt, v in (("--quick", opts.quick), ("--repetitions", opts.repetitions),
                                ("--seed", opts.seed), ("--name", opts.name), ("--nic", opts.nic),
                                ("--tuned", opts.tuned))
             if v not in (None, False)]
    if opts.bundle is not None:
        given.append("--bundle" if opts.bundle else "--no-bundle")
    if given:
        raise UsageError(f"--resume {opts.resume}: {', '.join(given)} cannot change a campaign already planned "
                         f"(it comes from {opts.resume}/plan.json)")
    outdir = Path(opts.resume)
    planned = read_plan(outdir)
    _check_store_kept(outdir)
    libs_all = planned_libraries(planned.libraries, setup.libraries(opts.libraries, need=False))
    missing = [d["name"] for d in planned.libraries if d["name"] not in libs_all]
    if missing:
        raise UsageError(f"cannot resume: libraries {', '.join(missing)} not found{_resume_hint(opts, planned)}")
    launches = planned.launches
    for lib in libs_all.values():
        if lib.name in {x.library for x in launches}:
            setup.check_launcher(lib.launcher, f"library {lib.name}")
    engines = resume_engines(planned.engines, libs_all, {x.library for x in launches}, opts.build.no_build,
                             build_options(opts.build))
    lock = hold(outdir, "gmb run --resume")
    try:
        st = store.Store(outdir / "store.sqlite")
    except BaseException:
        lock.release()
        raise
    return HeldRun(outdir, st, lock, launches, configurations.resumed(libs_all, engines), name=planned.campaign,
                   stop_after=planned.stop_library_after, bundle=planned.bundle, seed=planned.seed)


def _check_store_kept(outdir: Path):
    """UsageError when the store of a results directory whose launches wrote records is gone: it alone says which
    launches finished, so a resume without it would measure every one again and set their records aside."""
    db = outdir / "store.sqlite"
    if db.exists() or not any((outdir / "raw").glob("*.jsonl")):
        return
    raise UsageError(f"cannot resume {outdir}: its store {db} is gone, and with it which launches finished (a resume "
                     f"would measure them all again and set their record files aside); nothing was run. Restore "
                     f"{db.name} from a copy and resume, or run the campaign anew; its records stay readable: "
                     f"gmb report {outdir / 'raw'}")


def _resume_hint(opts: SessionOptions, planned: SavedPlan) -> str:
    """What to add to a resume that does not find the planned libraries: the options the campaign was run with
    (plan.json keeps them), else the libraries file they may be declared in."""
    run_with = planned.resume_options
    if run_with and run_with != resume_options(opts):
        return (f"; the campaign was run with {shlex.join(run_with)}: resume it with "
                f"`{resume_command(opts, Path(opts.resume), run_with)}`")
    if not opts.libraries.config:
        return "; libraries declared in a libraries file are found with it: add --config FILE (see `gmb libs`)"
    return " (see `gmb libs`)"


def _fresh_setup(opts: SessionOptions) -> HeldRun | None:
    """What a new run runs: engines built, campaign planned, results directory made and held (None: nothing to
    run)."""
    setup.check_campaign_file(opts.campaign)
    results = Path(opts.results)
    if os.path.exists(results) and not os.path.isdir(results):  # os.path's: a name too long is no error here
        raise UsageError(f"--results {results}: exists and is not a directory (it is the parent directory of "
                         f"the results directories; choose a directory)")
    planned = setup.prepare(opts, do_build=not opts.build.no_build, run_doctor=True)
    c, launches, skipped, confs = planned.campaign, planned.launches, planned.skipped, planned.configurations
    for lib, what, why in skipped:
        print(f"gmb: skipping {lib}: {what}: {why}", file=sys.stderr)
    if not launches:
        print("gmb run: nothing to run", file=sys.stderr)
        return None
    too_long = results_dir_problem(results, c.name, [x.launch_id for x in launches])
    if too_long:
        raise UsageError(f"--results {results}: too long a path for the results directory: {too_long}; nothing was "
                         f"created (choose a shorter --results)")
    outdir = new_results_dir(results, c.name)
    lock = hold(outdir, "gmb run")
    try:
        write_plan(outdir, c, launches, skipped, configurations.libraries(confs), configurations.engines(confs),
                   resume_options(opts))
        if opts.campaign:
            copy_campaign_file(Path(opts.campaign), outdir)
        st = store.Store(outdir / "store.sqlite")
        st.set_meta("campaign", c.name)
        st.set_meta("topology", planned.topology.summary())
        st.set_meta("settings_that_matter", json.dumps(planned.settings_that_matter))
        for lib, what, why in skipped:
            st.record_skip(c.name, lib, what, why)
        keep_engines(outdir, st, configurations.descriptions(confs))
    except BaseException:
        lock.release()
        raise
    return HeldRun(outdir, st, lock, launches, confs, name=c.name, stop_after=c.stop_library_after, bundle=c.bundle,
                   seed=c.seed)
