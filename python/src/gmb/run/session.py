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
from pathlib import Path

from ..campaign import estimate
from ..machine import identity
from ..machine import launchers
from . import locks
from .leftovers import leftover_launches, stop_leftovers
from .node_campaigns import NodeCampaigns, describe_campaign
from ..machine import mpilibs
from ..campaign import checks, spec
from ..results import store
from ..machine import topology
from ..campaign.generated import default_campaign
from ..engine.engines import build_options, doctor_libraries, engines_and_descriptions, resume_engines, with_nccl
from ..errors import UsageError
from .execute import Stopped, run_launches, stop_on_signals
from ..machine.load import busy_launch
from ..campaign.plan import copy_campaign_file, new_results_dir, plan, read_plan, write_plan


def check_launcher(name: str | None, what: str = "--launcher"):
    """UsageError unless ``name`` is a registered launcher (None: none asked for)."""
    if name is not None and name not in launchers.REGISTRY:
        raise UsageError(f"{what}: unknown launcher {name!r} (accepted: {', '.join(sorted(launchers.REGISTRY))})")


def libraries(args, need=True):
    """Found and declared libraries, restricted by --library; ``args.all_library_names`` keeps every name (a
    campaign may name a library that --library leaves out: that is a skip, not an error)."""
    check_launcher(getattr(args, "launcher", None))
    try:
        libs = mpilibs.all_libraries(getattr(args, "config", None), detect_libs=not getattr(args, "no_detect", False))
    except mpilibs.ConfigError as exc:
        raise UsageError(str(exc)) from None
    args.all_library_names = [lib.name for lib in libs]
    if getattr(args, "no_isolation", False):
        for lib in libs:
            lib.isolate_from = []
    wanted = getattr(args, "library", None)
    if wanted:
        names = {lib.name for lib in libs}
        configuration_of = mpilibs.configuration_names(libs)
        unknown = [w for w in wanted if w not in names and w not in configuration_of]
        if unknown:
            raise UsageError(f"unknown library {', '.join(unknown)} (found: {', '.join(sorted(names)) or 'none'})")
        libs = [lib for lib in libs if lib.name in wanted or lib.name in {configuration_of.get(w) for w in wanted}]
    if need and not libs:
        raise UsageError("no MPI library found or declared (see `gmb doctor`)")
    for lib in libs:
        if getattr(args, "launcher", None):
            lib.launcher = args.launcher
    return libs


def _configurations(args, libs, topo):
    """On a GPU node each MPICH found runs with its GPU profile, and a generated campaign measures each pml of an Open
    MPI found with UCX as a configuration of its own (mpilibs.gpu_configurations); --library may name the
    installation (both pml configurations) or one configuration."""
    installation = mpilibs.configuration_names(libs)
    wanted = set(getattr(args, "library", None) or ())
    if args.campaign or not topo.gpus:
        named = sorted(wanted & set(installation))
        if named:
            raise UsageError(f"--library {', '.join(named)}: a pml configuration of a found Open MPI exists in a "
                             f"campaign generated on a GPU node only; name the installation "
                             f"({', '.join(sorted({installation[n] for n in named}))}), or declare the "
                             f"configuration in a libraries file (profile openmpi-ob1 or openmpi-ucx)")
        return [mpilibs.with_gpu_support(lib) for lib in libs] if topo.gpus else libs
    return [c for c in mpilibs.gpu_configurations(libs)
            if not wanted or c.name in wanted or installation.get(c.name, c.name) in wanted]


def _load_campaign(args):
    """The campaign file (None: generated), checked before anything is built or run: values of the wrong type and
    libraries that are neither found nor declared are errors."""
    if not args.campaign:
        return None
    if not Path(args.campaign).is_file():
        raise UsageError(f"{args.campaign}: no such campaign file")
    c = spec.load_campaign(args.campaign)
    try:
        checks.check_library_names(c, getattr(args, "all_library_names", []))
    except spec.CampaignError as exc:
        raise UsageError(f"{args.campaign}: {exc}") from None
    return c


def _hosts(args) -> int | None:
    """How many hosts the launches may use: --nodes, else the hostfile's hosts, else None (unknown)."""
    if getattr(args, "nodes", None):
        return args.nodes
    hostfile = getattr(args, "hostfile", None)
    if not hostfile:
        return None
    try:
        text = Path(hostfile).read_text()
    except OSError as exc:
        raise UsageError(f"--hostfile {hostfile}: {exc.strerror or exc}") from None
    hosts = launchers.hostfile_hosts(text)
    if not hosts:
        raise UsageError(f"--hostfile {hostfile}: no host in it")
    return len(dict.fromkeys(hosts))


def _topology(args):
    """The machine's topology, or the one of --topology (planning for another machine)."""
    if getattr(args, "topology", None):
        try:
            return topology.from_json(Path(args.topology).read_text())
        except (OSError, ValueError) as exc:
            raise UsageError(f"--topology {args.topology}: {exc}") from None
    return topology.discover()


def _campaign(args, libs, descriptions, topo, loaded=None):
    """The campaign to plan (the file's, else generated), checked against the engines, with the command line's
    repetitions, timeout, seed, name and node count applied."""
    if loaded is not None:
        c = loaded
    else:
        c = default_campaign(topo, libs, descriptions, quick=args.quick, hosts=_hosts(args) or 1)
    try:
        checks.check_benchmark_names(c, descriptions)
        checks.check_against_engines(c, descriptions)
    except spec.CampaignError as exc:
        raise UsageError(f"{args.campaign}: {exc}" if args.campaign else str(exc)) from None
    if args.repetitions is not None:
        c.repetitions = args.repetitions
    if args.timeout is not None:
        c.timeout_s = args.timeout
    if args.seed is not None:
        c.seed = args.seed
    if c.seed is None:
        c.seed = int.from_bytes(os.urandom(4), "little")
    if args.name:
        c.name = args.name
    if getattr(args, "nodes", None):
        rpn = args.ranks_per_node or 1
        for b in c.blocks:
            if not any(d.point_to_point(n) for n in b.benchmarks for d in descriptions.values()):
                b.ranks = [args.nodes * rpn]
    return c


def plan_only(args):
    """`gmb plan` (`gmb run --dry-run`): the launches, the skipped points with reasons and the estimate."""
    if getattr(args, "resume", None):
        raise UsageError("--dry-run with --resume: the plan of a results directory is its plan.json")
    if args.campaign and not Path(args.campaign).is_file():
        raise UsageError(f"{args.campaign}: no such campaign file")
    libs = libraries(args)
    loaded = _load_campaign(args)
    topo = _topology(args)
    libs = _configurations(args, libs, topo)
    engines, descriptions, skipped = engines_and_descriptions(libs, do_build=False)
    libs = libs if args.campaign else with_nccl(libs, engines, descriptions, topo)
    runnable = [lib for lib in libs if lib.name in engines]
    c = _campaign(args, runnable, descriptions, topo, loaded)
    launches, sk = plan(c, runnable, descriptions, hosts=_hosts(args))
    for x in launches:
        print(f"{x.launch_id:<60} {' '.join(x.engine_args)}" + (f"  env {x.env}" if x.env else ""))
    for lib, what, why in skipped + sk:
        print(f"skip {lib}: {what}: {why}")
    print(f"{len(launches)} launches, {len(skipped) + len(sk)} skipped", file=sys.stderr)
    print(f"gmb plan: {estimate.summary(launches, descriptions)}", file=sys.stderr)
    over = estimate.over_timeout(launches, descriptions)
    if over:
        x, t = max(over, key=lambda o: o[1])
        print(f"gmb plan: warning: {len(over)} launches are estimated to take longer than their timeout (longest: "
              f"{x.launch_id}, about {t:.0f} s > {x.timeout_s:g} s)", file=sys.stderr)
    return 0


def run(args):
    """`gmb run` (and `--resume`); the exit status: 0 ok, 1 a launch failed, 128+N stopped by signal N."""
    if args.dry_run:
        return plan_only(args)
    if args.topology:
        raise UsageError("--topology plans for another machine: use it with `gmb plan` or --dry-run")
    with stop_on_signals():
        try:
            return _run(args)
        except Stopped as exc:
            print(f"\ngmb: stopped by {exc}", file=sys.stderr)
            return 128 + exc.signum


def _run(args):
    """`gmb run`: plan (or read the plan to resume), hold the results directory, run, report. Stopped by a signal,
    the launch running is ended and marked interrupted and the resume command printed."""
    run = _resume_setup(args) if args.resume else _fresh_setup(args)
    if run is None:
        return 1
    outdir, st, lock = run["outdir"], run["store"], run["lock"]
    node = NodeCampaigns(outdir)
    others = node.join()
    for other in others:
        print(f"gmb: warning: another gmb campaign runs on this node ({describe_campaign(other)}): both "
              f"share its GPUs and cores, and each lowers the other's figures", file=sys.stderr)
    leftovers = leftover_launches({o.get("results") for o in others} | {str(outdir.resolve())})
    for left in leftovers:
        pids = " ".join(map(str, left["pids"]))
        print(f"gmb: warning: {len(left['pids'])} process(es) of a launch whose gmb is gone still run on this node "
              f"(pids {pids}; results {left['results']}): they share its cores and lower this campaign's figures; "
              f"stop them (kill {pids}), or resume that campaign (gmb run --resume {left['results']}), which "
              f"stops them first", file=sys.stderr)
    if others or leftovers:
        st.set_meta("concurrent_campaigns", json.dumps(others + leftovers))
    print(f"gmb: results in {outdir}", file=sys.stderr)
    try:
        counts = run_launches(outdir, run["launches"], run["libs"], run["engines"], st, run["name"],
                              hostfile=args.hostfile, progress=not args.no_progress, nodes=args.nodes,
                              ranks_per_node=args.ranks_per_node, stop_library_after=run["stop_after"], lock=lock)
    except Stopped:
        print(f"\ngmb: interrupted; continue with `{resume_command(args, outdir)}`", file=sys.stderr)
        raise
    except locks.ResultsLockLost as exc:
        print(f"gmb run: error: {exc}; continue, once no other gmb uses {outdir}, with "
              f"`{resume_command(args, outdir)}`", file=sys.stderr)
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
    from ..report.answers import answers
    from ..report.render_text import answers_text
    from ..results.model import Results

    results = Results.load(st)
    out = outdir / "report.html"
    if not args.no_report and not out.exists():  # written before anything is printed: a reader that left (a
        from ..report import html as report  # closed pipe) loses the printout, never the report; matplotlib only for a report

        report.write_report(results, out, title=f"gmb report: {run['name']}")
    print("\n" + answers_text(answers(results)) + "\n")
    if not args.no_report and out.exists():
        print(f"gmb: report {out}")
    print(str(outdir))
    return 0 if not counts or set(counts) <= {"ok", "unsupported"} else 1


def resume_options(args) -> list[str]:
    """The options of this `gmb run` that its resume needs to find the same libraries and engines and to place the
    launches the same way (a library declared in a --config file is not found without it)."""
    opts = ["--config", str(Path(args.config).resolve())] if args.config else []
    opts += [word for lib in args.library or () for word in ("--library", lib)]
    opts += [f"--{flag.replace('_', '-')}" for flag in ("no_detect", "no_isolation", "no_build", "no_report")
             if getattr(args, flag, False)]
    if args.hostfile:
        opts += ["--hostfile", str(Path(args.hostfile).resolve())]
    for key in ("launcher", "nodes", "ranks_per_node", "cuda", "cuda_arch"):
        if getattr(args, key, None) is not None:
            opts += [f"--{key.replace('_', '-')}", str(getattr(args, key))]
    opts += [f"--cmake-arg={arg}" for arg in args.cmake_arg or ()]
    return opts


def resume_command(args, outdir: Path, options: list[str] | None = None) -> str:
    """`gmb run --resume DIR` with the options it needs (``options``, else those of this run), ready to paste."""
    return shlex.join(["gmb", "run", "--resume", str(outdir), *(resume_options(args) if options is None else
                                                                   options)])


def _hold(outdir: Path, command: str):
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


def _resume_setup(args) -> dict:
    """What a resume runs: the plan of the results directory, its libraries and engines, the directory held."""
    if args.campaign:
        raise UsageError(f"--resume {args.resume} takes no campaign file ({args.campaign}): the campaign comes "
                         f"from {args.resume} (its plan.json)")
    given = [opt for opt, v in (("--quick", args.quick), ("--repetitions", args.repetitions),
                                ("--seed", args.seed), ("--name", args.name)) if v not in (None, False)]
    if given:
        raise UsageError(f"--resume {args.resume}: {', '.join(given)} cannot change a campaign already planned "
                         f"(it comes from {args.resume}/plan.json)")
    outdir = Path(args.resume)
    planned = read_plan(outdir)
    libs_all = planned_libraries(planned["libraries"], libraries(args, need=False))
    missing = [d["name"] for d in planned["libraries"] if d["name"] not in libs_all]
    if missing:
        raise UsageError(f"cannot resume: libraries {', '.join(missing)} not found{_resume_hint(args, planned)}")
    launches = planned["launches"]
    for lib in libs_all.values():
        if lib.name in {x.library for x in launches}:
            check_launcher(lib.launcher, f"library {lib.name}")
    engines = resume_engines(planned["engines"], libs_all, {x.library for x in launches}, args.no_build,
                             build_options(args))
    lock = _hold(outdir, "gmb run --resume")
    try:
        st = store.Store(outdir / "store.sqlite")
    except BaseException:
        lock.release()
        raise
    return dict(outdir=outdir, store=st, lock=lock, launches=launches, libs=libs_all, engines=engines,
                name=planned["campaign"], stop_after=planned.get("stop_library_after", 3))


def _resume_hint(args, planned: dict) -> str:
    """What to add to a resume that does not find the planned libraries: the options the campaign was run with
    (plan.json keeps them), or, from a plan written before it did, the libraries file they may be declared in."""
    run_with = planned.get("resume_options")
    if run_with and run_with != resume_options(args):
        return (f"; the campaign was run with {shlex.join(run_with)}: resume it with "
                f"`{resume_command(args, Path(args.resume), run_with)}`")
    if not args.config:
        return "; libraries declared in a libraries file are found with it: add --config FILE (see `gmb libs`)"
    return " (see `gmb libs`)"


def _fresh_setup(args) -> dict | None:
    """What a new run runs: engines built, campaign planned, results directory made and held (None: nothing to
    run)."""
    if args.campaign and not Path(args.campaign).is_file():
        raise UsageError(f"{args.campaign}: no such campaign file")
    results = Path(args.results)
    if results.exists() and not results.is_dir():
        raise UsageError(f"--results {results}: exists and is not a directory (it is the parent directory of "
                         f"the results directories; choose a directory)")
    libs = libraries(args)
    loaded = _load_campaign(args)
    hosts = _hosts(args)
    topo = _topology(args)
    libs = _configurations(args, libs, topo)
    engines, descriptions, skipped = engines_and_descriptions(libs, do_build=not args.no_build,
                                                              build_options=build_options(args))
    settings = doctor_libraries(libs, engines, descriptions, topo)
    libs = libs if args.campaign else with_nccl(libs, engines, descriptions, topo)
    runnable = [lib for lib in libs if lib.name in engines]
    c = _campaign(args, runnable, descriptions, topo, loaded)
    launches, sk = plan(c, runnable, descriptions, hosts=hosts)
    skipped += sk
    for lib, what, why in skipped:
        print(f"gmb: skipping {lib}: {what}: {why}", file=sys.stderr)
    if not launches:
        print("gmb run: nothing to run", file=sys.stderr)
        return None
    outdir = new_results_dir(results, c.name)
    lock = _hold(outdir, "gmb run")
    try:
        write_plan(outdir, c, launches, skipped, libs, engines, resume_options(args))
        if args.campaign:
            copy_campaign_file(Path(args.campaign), outdir)
        st = store.Store(outdir / "store.sqlite")
        st.set_meta("campaign", c.name)
        st.set_meta("topology", topo.summary())
        st.set_meta("settings_that_matter", json.dumps(settings))
        for lib, what, why in skipped:
            st.record_skip(c.name, lib, what, why)
    except BaseException:
        lock.release()
        raise
    return dict(outdir=outdir, store=st, lock=lock, launches=launches, libs={lib.name: lib for lib in libs},
                engines=engines, name=c.name, stop_after=c.stop_library_after)
