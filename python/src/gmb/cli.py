"""The `gmb` command line. Exit status: 0 ok, 1 failure (a launch failed, a regression found, a file or store that
could not be written), 2 bad input or a refusal (nothing done), 128+N stopped by signal N (130: SIGINT)."""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import traceback
from dataclasses import replace
from pathlib import Path

from . import __version__
from .outputs import OutputError, disk_full, os_cause, write_new
from .tomlcheck import array_of_tables


class UsageError(Exception):
    """Bad input from the user: message printed, exit status 2."""


def _check_launcher(name: str | None, what: str = "--launcher"):
    from . import launchers

    if name is not None and name not in launchers.REGISTRY:
        raise UsageError(f"{what}: unknown launcher {name!r} (accepted: {', '.join(sorted(launchers.REGISTRY))})")


def _libraries(args, need=True):
    """Found and declared libraries, restricted by --library; ``args.all_library_names`` keeps every name (a
    campaign may name a library that --library leaves out: that is a skip, not an error)."""
    from . import mpilibs

    _check_launcher(getattr(args, "launcher", None))
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
        unknown = [w for w in wanted if w not in names]
        if unknown:
            raise UsageError(f"unknown library {', '.join(unknown)} (found: {', '.join(sorted(names)) or 'none'})")
        libs = [lib for lib in libs if lib.name in wanted]
    if need and not libs:
        raise UsageError("no MPI library found or declared (see `gmb doctor`)")
    for lib in libs:
        if getattr(args, "launcher", None):
            lib.launcher = args.launcher
    return libs


def cmd_libs(args):
    from .mpilibs import cuda_aware_static

    libs = _libraries(args, need=False)
    for lib in libs:
        if lib.cuda_aware is None and lib.transport == "mpi":
            lib.cuda_aware = cuda_aware_static(lib)
    if args.json:
        print(json.dumps([lib.describe() for lib in libs], indent=1))
    else:
        for lib in libs:
            print(f"{lib.name:<24} {lib.family:<10} {lib.version:<10} {lib.prefix:<20} launcher={lib.launcher} "
                  f"({lib.launcher_path}) cxx={lib.cxx} profile={lib.profile or '-'} [{lib.source}] "
                  f"cuda_aware={lib.cuda_aware}" + (f" transport={lib.transport} via={lib.via}"
                                                    if lib.transport != "mpi" else ""))
    return 0


def cmd_doctor(args):
    from . import doctor

    rep = doctor.diagnose(_libraries(args, need=False), run_engine_doctor=not args.no_engine,
                          check_settings=True if args.settings else None)
    print(json.dumps(rep, indent=1, default=str) if args.json else doctor.format_text(rep))
    return 0


def _build_options(args) -> dict:
    return dict(cuda=getattr(args, "cuda", None), cuda_arch=getattr(args, "cuda_arch", None),
                cmake_args=getattr(args, "cmake_arg", None) or None, jobs=getattr(args, "jobs", None))


def cmd_build(args):
    from . import build

    rc = 0
    results = build.build_all(_libraries(args), force=args.force, **_build_options(args))
    for name, result in results.items():
        if isinstance(result, build.BuildError):
            print(f"gmb build: {result}", file=sys.stderr)
            rc = 1
    return rc


def _engines_and_caps(libs, do_build: bool, build_options: dict | None = None):
    """Engines (built when ``do_build``) and their capabilities per library; a library whose engine cannot be
    had, or loads another MPI library than the planned one in the library's environment, is skipped with the
    reason."""
    from . import build, identity, mpilibs

    engines, caps, skipped = {}, {}, []
    for lib in libs:
        if lib.cuda_aware is None and lib.transport == "mpi":
            lib.cuda_aware = mpilibs.cuda_aware_static(lib)
    built = build.build_all([lib for lib in libs if not lib.engine], log=lambda m: print(m, file=sys.stderr),
                            **(build_options or {})) if do_build else {}
    for lib in libs:
        try:
            path = built.get(lib.name) or build.engine_path(lib)
            if isinstance(path, build.BuildError):
                raise path
            if not Path(path).exists():
                raise build.BuildError(f"engine {path} does not exist (run `gmb build`)")
            caps[lib.name] = build.engine_capabilities(path, env=lib.process_env())
            wrong = identity.check_engine(lib, caps[lib.name])
            if wrong:
                raise build.BuildError(f"its engine {path} does not run this library: {wrong}")
            engines[lib.name] = str(Path(path).resolve())
        except build.BuildError as exc:
            skipped.append((lib.name, "all", str(exc)))
    return engines, caps, skipped


def _doctor_libraries(libs, engines, caps, topo) -> list[dict]:
    """On a machine with GPUs, each MPI library with a CUDA engine gets its engine's doctor (a 2-rank launch that
    proves CUDA awareness and checks device buffers freed and allocated again), and the doctor again without each
    of the library's settings (or, when it is not aware, with its family's GPU settings): which settings its GPU
    support depends on (doctor.settings_that_matter), for the report. A library whose awareness is unknown (no
    declared answer, no ompi_info: e.g. MPICH) is planned as not aware unless this doctor says aware."""
    from . import doctor

    if not topo.gpus:
        return []
    found = []
    for lib in libs:
        if lib.transport != "mpi" or lib.name not in engines:
            continue
        if not caps.get(lib.name, {}).get("features", {}).get("cuda"):
            continue
        engine = Path(engines[lib.name])
        verdict = doctor.engine_doctor(lib, engine, timeout=60)
        settings = doctor.settings_that_matter(lib, engine, timeout=60, baseline=verdict)  # before cuda_aware is refined
        for f in settings["findings"]:
            print(f"gmb: {lib.name}: setting that matters: {f['setting']}: {f['effect']}", file=sys.stderr)
        found.append(settings)
        if lib.cuda_aware is None:
            aware = (verdict.get("gpu_awareness") or {}).get("verdict")
            if aware in ("aware", "not aware"):
                lib.cuda_aware = aware == "aware"
            summary = (verdict.get("gpu_awareness") or {}).get("summary") or verdict.get("error") or ""
            print(f"gmb: {lib.name}: CUDA awareness unknown; the engine's doctor says: {aware or 'no verdict'}"
                  + (f" ({summary})" if summary else "") + ("" if aware in ("aware", "not aware") else
                                                            " (planned as not aware)"), file=sys.stderr)
    return found


def _with_nccl(args, libs, engines, caps, topo):
    """A generated campaign on a GPU machine gets an NCCL library when an engine was built with NCCL."""
    from . import campaign

    if args.campaign:
        return libs
    lib, why = campaign.add_nccl_library(libs, caps, engines, topo)
    print(f"gmb: {why}", file=sys.stderr)
    return libs + [lib] if lib else libs


def _load_campaign(args):
    """The campaign file (None: generated), checked before anything is built or run: values of the wrong type and
    libraries that are neither found nor declared are errors."""
    from . import campaign

    if not args.campaign:
        return None
    if not Path(args.campaign).is_file():
        raise UsageError(f"{args.campaign}: no such campaign file")
    c = campaign.load_campaign(args.campaign)
    try:
        campaign.check_library_names(c, getattr(args, "all_library_names", []))
    except campaign.CampaignError as exc:
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
    hosts = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:  # Open MPI: "host slots=N"; Hydra: "host:N"
            hosts.append(line.split()[0].split(":")[0])
    if not hosts:
        raise UsageError(f"--hostfile {hostfile}: no host in it")
    return len(dict.fromkeys(hosts))


def _campaign(args, libs, caps, topo, loaded=None):
    from . import campaign

    if loaded is not None:
        c = loaded
    else:
        c = campaign.default_campaign(topo, libs, caps, quick=args.quick, hosts=_hosts(args) or 1)
    try:
        campaign.check_benchmark_names(c, caps)
        campaign.check_against_engines(c, caps)
    except campaign.CampaignError as exc:
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
            if not set(b.benchmarks) & campaign.PT2PT:
                b.ranks = [args.nodes * rpn]
    return c


def _topology(args):
    from . import topology

    if getattr(args, "topology", None):
        try:
            return topology.from_json(Path(args.topology).read_text())
        except (OSError, ValueError) as exc:
            raise UsageError(f"--topology {args.topology}: {exc}") from None
    return topology.discover()


def cmd_plan(args):
    from . import campaign, estimate

    if getattr(args, "resume", None):
        raise UsageError("--dry-run with --resume: the plan of a results directory is its plan.json")
    if args.campaign and not Path(args.campaign).is_file():
        raise UsageError(f"{args.campaign}: no such campaign file")
    libs = _libraries(args)
    loaded = _load_campaign(args)
    engines, caps, skipped = _engines_and_caps(libs, do_build=False)
    topo = _topology(args)
    libs = _with_nccl(args, libs, engines, caps, topo)
    c = _campaign(args, libs, caps, topo, loaded)
    launches, sk = campaign.plan(c, libs, caps, hosts=_hosts(args))
    for x in launches:
        print(f"{x.launch_id:<60} {' '.join(x.engine_args)}" + (f"  env {x.env}" if x.env else ""))
    for lib, what, why in skipped + sk:
        print(f"skip {lib}: {what}: {why}")
    print(f"{len(launches)} launches, {len(skipped) + len(sk)} skipped", file=sys.stderr)
    print(f"gmb plan: {estimate.summary(launches)}", file=sys.stderr)
    over = estimate.over_timeout(launches)
    if over:
        x, t = max(over, key=lambda o: o[1])
        print(f"gmb plan: warning: {len(over)} launches are estimated to take longer than their timeout (longest: "
              f"{x.launch_id}, about {t:.0f} s > {x.timeout_s:g} s)", file=sys.stderr)
    return 0


def _resume_engines(planned: dict[str, str], libs: dict, used: set[str], args) -> dict[str, str]:
    """The engines a resumed campaign runs: the planned ones, and where one is gone (the campaign moved to a fresh
    node, the cache was cleared) the same library's engine built again from this source tree. Every record names
    the engine's source revision, so launches run before and after the rebuild stay told apart."""
    from . import build

    engines = dict(planned)
    gone = sorted({planned[name] for name in used if name in planned and not Path(planned[name]).exists()})
    if not gone:
        return engines
    if args.no_build:
        raise UsageError(f"cannot resume with --no-build: engine(s) {', '.join(gone)} no longer exist; "
                         f"leave out --no-build to build them again")
    for path in gone:
        names = sorted(name for name in used if planned.get(name) == path)
        lib = libs[names[0]]
        result = build.build_all([lib], log=lambda m: print(m, file=sys.stderr), **_build_options(args))[lib.name]
        if isinstance(result, build.BuildError):
            raise UsageError(f"cannot resume: the engine of {', '.join(names)} ({path}) is gone and building it "
                             f"again failed: {result}")
        if not Path(result).exists():  # a declared engine (`engine = ...` in the config) is not built by gmb
            raise UsageError(f"cannot resume: the engine of {', '.join(names)} ({path}) is gone and gmb does not "
                             f"build it (declared in the library's config); restore it or fix `engine`")
        print(f"gmb: engine {path} of {', '.join(names)} was gone: built again at {result}", file=sys.stderr)
        for name in names:
            engines[name] = str(Path(result).resolve())
    return engines


def cmd_run(args):
    from . import campaign

    if args.dry_run:
        return cmd_plan(args)
    if args.topology:
        raise UsageError("--topology plans for another machine: use it with `gmb plan` or --dry-run")
    with campaign.stop_on_signals():
        try:
            return _run(args)
        except campaign.Stopped as exc:
            print(f"\ngmb: stopped by {exc}", file=sys.stderr)
            return 128 + exc.signum


def _run(args):
    """`gmb run`: plan (or read the plan to resume), hold the results directory, run, report. Stopped by a signal,
    the launch running is ended and marked interrupted and the resume command printed."""
    from . import campaign, identity, locks

    run = _resume_setup(args) if args.resume else _fresh_setup(args)
    if run is None:
        return 1
    outdir, st, lock = run["outdir"], run["store"], run["lock"]
    node = locks.NodeCampaigns(outdir)
    others = node.join()
    for other in others:
        print(f"gmb: warning: another gmb campaign runs on this node ({locks.describe_campaign(other)}): both "
              f"share its GPUs and cores, and each lowers the other's figures", file=sys.stderr)
    if others:
        st.set_meta("concurrent_campaigns", json.dumps(others))
    print(f"gmb: results in {outdir}", file=sys.stderr)
    try:
        counts = campaign.run_launches(outdir, run["launches"], run["libs"], run["engines"], st, run["name"],
                                       hostfile=args.hostfile, progress=not args.no_progress, nodes=args.nodes,
                                       ranks_per_node=args.ranks_per_node, stop_library_after=run["stop_after"],
                                       lock=lock)
    except (KeyboardInterrupt, campaign.Stopped) as exc:
        print(f"\ngmb: interrupted; continue with `gmb run --resume {outdir}`", file=sys.stderr)
        if isinstance(exc, campaign.Stopped):
            raise
        return 130
    finally:
        node.leave()
        lock.release()
    print(f"gmb: launches: {counts or 'none left to run'}; results in {outdir}", file=sys.stderr)
    for r in st.rows("SELECT library, COUNT(*) AS n, MIN(reason) AS reason FROM launches WHERE status = ? "
                     "GROUP BY library", (identity.WRONG_LIBRARY,)):
        print(f"gmb: {r['library']}: {r['n']} launch(es) ran another MPI library; their figures were not stored: "
              f"{r['reason']}", file=sys.stderr)
    if not args.no_report:
        from . import report

        out = outdir / "report.html"
        if not out.exists():
            report.write_report(st, out, title=f"gmb report: {run['name']}")
            print(f"gmb: report {out}")
    print(str(outdir))
    return 0 if not counts or set(counts) <= {"ok", "unsupported"} else 1


def _hold(outdir: Path, command: str):
    """The results directory's lock, and the stopping of what a dead previous owner left running."""
    from . import locks

    lock = locks.ResultsLock(outdir, command)
    try:
        previous = lock.acquire()
    except locks.ResultsBusy as exc:
        raise UsageError(str(exc)) from None
    done = locks.stop_leftovers(previous)
    if done:
        print(f"gmb: {done}", file=sys.stderr)
    return lock


def _resume_setup(args) -> dict:
    from . import campaign, store

    if args.campaign:
        raise UsageError(f"--resume {args.resume} takes no campaign file ({args.campaign}): the campaign comes "
                         f"from {args.resume} (its plan.json)")
    given = [opt for opt, v in (("--quick", args.quick), ("--repetitions", args.repetitions),
                                ("--seed", args.seed), ("--name", args.name)) if v not in (None, False)]
    if given:
        raise UsageError(f"--resume {args.resume}: {', '.join(given)} cannot change a campaign already planned "
                         f"(it comes from {args.resume}/plan.json)")
    outdir = Path(args.resume)
    plan = campaign.read_plan(outdir)
    libs_all = {lib.name: lib for lib in _libraries(args)}
    for d in plan["libraries"]:  # NCCL libraries the generated campaign added
        if d["name"] not in libs_all and d.get("transport") == "nccl" and d.get("via") in libs_all:
            from .mpilibs import nccl_library

            libs_all[d["name"]] = nccl_library(libs_all[d["via"]], d["name"])
    missing = [d["name"] for d in plan["libraries"] if d["name"] not in libs_all]
    if missing:
        raise UsageError(f"cannot resume: libraries {', '.join(missing)} no longer found")
    launches = plan["launches"]
    for lib in libs_all.values():
        if lib.name in {x.library for x in launches}:
            _check_launcher(lib.launcher, f"library {lib.name}")
    engines = _resume_engines(plan["engines"], libs_all, {x.library for x in launches}, args)
    lock = _hold(outdir, "gmb run --resume")
    try:
        st = store.Store(outdir / "store.sqlite")
    except BaseException:
        lock.release()
        raise
    return dict(outdir=outdir, store=st, lock=lock, launches=launches, libs=libs_all, engines=engines,
                name=plan["campaign"], stop_after=plan.get("stop_library_after", 3))


def _fresh_setup(args) -> dict | None:
    from . import campaign, store

    if args.campaign and not Path(args.campaign).is_file():
        raise UsageError(f"{args.campaign}: no such campaign file")
    results = Path(args.results)
    if results.exists() and not results.is_dir():
        raise UsageError(f"--results {results}: exists and is not a directory (it is the parent directory of "
                         f"the results directories; choose a directory)")
    libs = _libraries(args)
    loaded = _load_campaign(args)
    hosts = _hosts(args)
    engines, caps, skipped = _engines_and_caps(libs, do_build=not args.no_build, build_options=_build_options(args))
    topo = _topology(args)
    settings = _doctor_libraries(libs, engines, caps, topo)
    libs = _with_nccl(args, libs, engines, caps, topo)
    runnable = [lib for lib in libs if lib.name in engines]
    c = _campaign(args, runnable, caps, topo, loaded)
    launches, sk = campaign.plan(c, runnable, caps, hosts=hosts)
    skipped += sk
    for lib, what, why in skipped:
        print(f"gmb: skipping {lib}: {what}: {why}", file=sys.stderr)
    if not launches:
        print("gmb run: nothing to run", file=sys.stderr)
        return None
    outdir = campaign.new_results_dir(results, c.name)
    lock = _hold(outdir, "gmb run")
    try:
        campaign.write_plan(outdir, c, launches, skipped, libs, engines)
        if args.campaign:
            campaign.copy_campaign_file(Path(args.campaign), outdir)
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


def _open(path):
    from . import store

    try:
        return store.open_results(path)
    except (store.StoreError, ValueError) as exc:
        raise UsageError(str(exc)) from None


def cmd_report(args):
    from . import report, tables

    out = Path(args.output) if args.output else Path(args.results) / "report.html" if Path(args.results).is_dir() \
        else Path(args.results).with_suffix(".html")
    if out.exists():
        raise UsageError(f"{out} exists; not overwriting (choose another name with -o)")
    if args.csv and Path(args.csv).exists() and any(Path(args.csv).glob("*.csv")):
        raise UsageError(f"{args.csv} already holds CSV files; not overwriting")
    st = _open(args.results)
    report.write_report(st, out, title=args.title or f"gmb report: {Path(args.results).name}")
    print(out)
    if args.csv:
        for p in tables.export_csv(tables.all_tables(st), args.csv):
            print(p)
    return 0


def cmd_tables(args):
    from . import compare, tables

    st = _open(args.results)
    ts = tables.all_tables(st)
    for t in ts:
        print(compare.format_text(t) + "\n")
    if args.csv:
        if Path(args.csv).exists() and any(Path(args.csv).glob("*.csv")):
            raise UsageError(f"{args.csv} already holds CSV files; not overwriting")
        tables.export_csv(ts, args.csv)
    return 0


TOLERANCE_KEYS = {"max_regression_pct"}
RULE_KEYS = {"benchmark": str, "memory": str, "operation": str, "min_bytes": int, "max_bytes": int,
             "max_regression_pct": (int, float)}


def _check_tolerances(tol: dict, path) -> None:
    """The reference file of `gmb compare`: [default] max_regression_pct and [[rule]] entries, values of the
    right type (a tolerance is a number of percent)."""
    def number(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    unknown = set(tol) - {"default", "rule"}
    if unknown:
        raise UsageError(f"{path}: unknown keys {sorted(unknown)} (accepted: [default], [[rule]])")
    default = tol.get("default", {})
    if not isinstance(default, dict):
        raise UsageError(f"{path}: default must be a [default] table")
    if set(default) - TOLERANCE_KEYS:
        raise UsageError(f"{path}: [default]: unknown keys {sorted(set(default) - TOLERANCE_KEYS)} "
                         f"(accepted: max_regression_pct)")
    if "max_regression_pct" in default and not number(default["max_regression_pct"]):
        raise UsageError(f"{path}: [default] max_regression_pct must be a number of percent "
                         f"(got {default['max_regression_pct']!r})")
    rules = array_of_tables(tol, "rule", path, UsageError)
    for i, r in enumerate(rules):
        unknown = set(r) - set(RULE_KEYS)
        if unknown:
            raise UsageError(f"{path}: [[rule]] #{i + 1}: unknown keys {sorted(unknown)} "
                             f"(accepted: {', '.join(RULE_KEYS)})")
        for k, v in r.items():
            ok = number(v) if k == "max_regression_pct" else (isinstance(v, RULE_KEYS[k]) and
                                                              not isinstance(v, bool))
            if not ok:
                want = "a number of percent" if k == "max_regression_pct" else \
                    "an integer" if RULE_KEYS[k] is int else "a string"
                raise UsageError(f"{path}: [[rule]] #{i + 1}: {k} must be {want} (got {v!r})")


def cmd_compare(args):
    from . import compare, tables

    a, b = _open(args.a), _open(args.b)
    try:
        tol = compare.load_tolerances(args.reference) if args.reference else None
        if tol is not None:
            _check_tolerances(tol, args.reference)
        rows = compare.compare(a, b, args.a_library, args.b_library)
    except (ValueError, OSError) as exc:
        raise UsageError(str(exc)) from None
    if not rows:  # nothing compared is not a regression (exit 1): the inputs share no point
        print("gmb compare: no point is present in both result sets (same benchmark, operation, memory, strategy, "
              "ranks and size): nothing to compare", file=sys.stderr)
        return 2
    bad = compare.check(rows, tol) if tol else []
    t = compare.as_table(rows, args.a_library or args.a, args.b_library or args.b)
    print(compare.format_text(t))
    if args.csv:
        tables.export_csv([t], args.csv)
    sig = sum(r.significant for r in rows)
    print(f"\n{len(rows)} points compared, {sig} significant differences" +
          (f", {len(bad)} tolerance violations" if tol else ""), file=sys.stderr)
    return 1 if bad else 0


def cmd_slurm(args):
    from . import campaign, slurm

    c = campaign.load_campaign(args.campaign)
    out = Path(args.output)
    if out.exists():
        raise UsageError(f"{out} exists; not overwriting")
    nodes = []
    for n in args.nodes.split(","):
        if not n.strip().isdigit() or int(n) < 1:
            raise UsageError(f"--nodes {args.nodes}: node counts must be integers >= 1, comma-separated "
                             f"(e.g. 1,2,4,8); got {n.strip()!r}")
        nodes.append(int(n))
    text = slurm.batch_script(args.campaign, c, nodes, args.ranks_per_node, args.gpus_per_node, args.time,
                              args.partition, args.account)
    write_new(out, text)
    print(out)
    return 0


def cmd_ingest(args):
    """Every file is read (and checked) before anything is stored: a file that cannot be read, or whose records
    name another MPI library than ``--library`` (when gmb knows that library: `gmb libs`), stores nothing."""
    from . import identity, mpilibs, records, store

    files = [records.read_records(f, validate=args.validate) for f in args.files]
    if args.library:
        known = {}
        if not args.no_check:
            try:
                known = {lib.name: lib for lib in mpilibs.all_libraries(args.config, detect_libs=not args.no_detect)}
            except mpilibs.ConfigError as exc:
                raise UsageError(str(exc)) from None
        lib = known.get(args.library)
        wrong = [f"{rf.path}: {why}" for rf in files for why in
                 (identity.mismatch(lib, ctx) for ctx in rf.contexts) if why] if lib else []
        if wrong:
            raise UsageError(f"records that ran another library than {args.library} (nothing stored):\n  "
                             + "\n  ".join(wrong))
        if lib is None and not args.no_check:
            said = sorted({records.library_label(ctx) for rf in files for ctx in rf.contexts} - {args.library})
            print(f"gmb ingest: warning: {args.library} is not a library gmb found or was declared (gmb libs): its "
                  f"records cannot be checked" + (f"; they say {', '.join(said)}" if said else ""), file=sys.stderr)
    for rf in files:
        objects = [identity.library_object(ctx) for ctx in rf.contexts]
        for path in sorted({o.get("loaded_realpath") for o in objects if o.get("matches_build") is False} - {None, ""}):
            print(f"gmb ingest: note: {rf.path}: the engine ran {path}, not the library it was built against; "
                  f"labelled by what ran", file=sys.stderr)
    db = Path(args.store)
    st = store.Store(db)
    with st.transaction(f"the records of {', '.join(str(rf.path) for rf in files)}"):  # all files or none
        n = sum(st.ingest(rf, library=args.library) for rf in files)
    already = sum(len(rf.results) for rf in files) - n
    print(f"{n} result records into {db}" +
          (f"; {already} already there (same run and point), not stored again" if already else ""))
    return 0


def _checked(convert, ok, what: str):
    """An argparse type: the text converted (int, float) and kept where ``ok``; else "must be WHAT (got TEXT)"."""
    def parse(text: str):
        try:
            value = convert(text)
        except ValueError:
            value = None
        if value is None or not ok(value):
            raise argparse.ArgumentTypeError(f"must be {what} (got {text!r})")
        return value
    return parse


_positive_int = _checked(int, lambda v: v >= 1, "an integer >= 1")
_nonnegative_int = _checked(int, lambda v: v >= 0, "an integer >= 0")
_positive_seconds = _checked(float, lambda v: 0 < v < float("inf"), "a number of seconds > 0")  # NaN is not


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gmb", description="GPU-aware MPI benchmark harness (drives gmb-bench)")
    p.add_argument("--version", action="version", version=f"gmb {__version__}")
    sub = p.add_subparsers(dest="cmd", required=True)

    def libopts(sp):
        sp.add_argument("--config", help="libraries TOML (default: $GMB_CONFIG, ~/.config/gmb/libraries.toml, "
                                         "./gmb.toml)")
        sp.add_argument("--library", action="append", help="restrict to this library (repeatable)")
        sp.add_argument("--no-detect", action="store_true", help="only declared libraries")
        sp.add_argument("--no-isolation", action="store_true",
                        help="keep other MPI installations' directories in PATH and LD_LIBRARY_PATH (diagnosis: "
                             "every launch is still checked for the library it ran)")

    def buildopts(sp):
        sp.add_argument("--cmake-arg", action="append", metavar="ARG",
                        help="one more CMake argument for the engine builds, e.g. -DGMB_ENABLE_NCCL=ON (repeatable; "
                             "after the library's cmake_args)")
        sp.add_argument("--jobs", "-j", type=_positive_int,
                        help="parallel compile jobs per engine build (default: all CPUs)")

    sp = sub.add_parser("libs", help="list MPI libraries found and declared")
    libopts(sp)
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(fn=cmd_libs)

    sp = sub.add_parser("doctor", help="GPUs, links, NUMA, MPI libraries, CUDA awareness, what is missing")
    libopts(sp)
    sp.add_argument("--json", action="store_true")
    sp.add_argument("--no-engine", action="store_true", help="do not run the engine's doctor")
    sp.add_argument("--settings", action="store_true",
                    help="find the settings each library's GPU support depends on (the engine's doctor without each "
                         "of them; default: when GPUs are present)")
    sp.set_defaults(fn=cmd_doctor)

    sp = sub.add_parser("build", help="build one engine per MPI library (cached)")
    libopts(sp)
    sp.add_argument("--force", action="store_true")
    sp.add_argument("--cuda", choices=["AUTO", "ON", "OFF"], help="build the CUDA module (default: "
                                                                   "$GMB_ENABLE_CUDA, else AUTO)")
    sp.add_argument("--cuda-arch", help="CMAKE_CUDA_ARCHITECTURES, e.g. 90")
    buildopts(sp)
    sp.set_defaults(fn=cmd_build)

    for name, fn, hlp in (("run", cmd_run, "run a campaign (default: generated from the machine)"),
                          ("plan", cmd_plan, "show the launches a campaign would make (dry run)")):
        sp = sub.add_parser(name, help=hlp)
        libopts(sp)
        sp.add_argument("campaign", nargs="?", help="campaign TOML (omit for the generated default)")
        sp.add_argument("--quick", action="store_true", help="small generated campaign")
        sp.add_argument("--repetitions", type=_positive_int)
        sp.add_argument("--timeout", type=_positive_seconds, help="seconds per launch")
        sp.add_argument("--seed", type=int)
        sp.add_argument("--name")
        sp.add_argument("--launcher", help="override the launcher of every library (mpirun, mpiexec, srun)")
        sp.add_argument("--nodes", type=_positive_int, help="nodes of the allocation (srun)")
        sp.add_argument("--ranks-per-node", type=_positive_int)
        sp.add_argument("--topology", metavar="JSON", help="plan for this topology instead of the machine's "
                                                           "(a file like `gmb doctor --json`'s topology)")
        sp.set_defaults(fn=fn)
        if name == "run":
            sp.add_argument("--results", default="results", help="parent directory of results (default results/)")
            sp.add_argument("--resume", metavar="RESULTS_DIR", help="continue an interrupted campaign")
            sp.add_argument("--hostfile")
            sp.add_argument("--no-build", action="store_true", help="use existing engines only")
            sp.add_argument("--no-progress", action="store_true")
            sp.add_argument("--no-report", action="store_true")
            sp.add_argument("--dry-run", action="store_true", help="only show the plan (as `gmb plan`)")
            sp.add_argument("--cuda", choices=["AUTO", "ON", "OFF"], help="engine builds: the CUDA module "
                                                                           "(default: $GMB_ENABLE_CUDA, else AUTO)")
            sp.add_argument("--cuda-arch", help="engine builds: CMAKE_CUDA_ARCHITECTURES, e.g. 90")
            buildopts(sp)

    sp = sub.add_parser("report", help="one self-contained HTML report from a results directory")
    sp.add_argument("results", help="results directory, store.sqlite, or JSONL file/directory")
    sp.add_argument("-o", "--output", help="HTML file (default RESULTS/report.html); never overwritten")
    sp.add_argument("--csv", metavar="DIR", help="also write every table as CSV into DIR")
    sp.add_argument("--title")
    sp.set_defaults(fn=cmd_report)

    sp = sub.add_parser("tables", help="print the tables (and optionally export CSV)")
    sp.add_argument("results")
    sp.add_argument("--csv", metavar="DIR")
    sp.set_defaults(fn=cmd_tables)

    sp = sub.add_parser("compare", help="ratio of medians B/A per point, with CIs; regression check")
    sp.add_argument("a")
    sp.add_argument("b")
    sp.add_argument("--a-library")
    sp.add_argument("--b-library")
    sp.add_argument("--reference", help="tolerances TOML; exit 1 when violated")
    sp.add_argument("--csv", metavar="DIR")
    sp.set_defaults(fn=cmd_compare)

    sp = sub.add_parser("slurm", help="write a Slurm batch script for a campaign (node-count sweep)")
    sp.add_argument("campaign")
    sp.add_argument("-o", "--output", default="gmb.sbatch")
    sp.add_argument("--nodes", default="1", help="comma-separated node counts, e.g. 1,2,4,8")
    sp.add_argument("--ranks-per-node", type=_positive_int, default=1)
    sp.add_argument("--gpus-per-node", type=_nonnegative_int, default=0)
    sp.add_argument("--time", default="01:00:00")
    sp.add_argument("--partition")
    sp.add_argument("--account")
    sp.set_defaults(fn=cmd_slurm)

    sp = sub.add_parser("ingest", help="add JSONL record files to a store")
    sp.add_argument("store", help="store.sqlite (created if absent)")
    sp.add_argument("files", nargs="+")
    sp.add_argument("--library", help="library label (default: from the context's version string); when gmb knows "
                                      "the library (gmb libs), records that ran another one are refused")
    sp.add_argument("--config", help="libraries TOML, as for gmb libs")
    sp.add_argument("--no-detect", action="store_true", help="only declared libraries")
    sp.add_argument("--no-check", action="store_true", help="store under --library without checking the records")
    sp.add_argument("--validate", action="store_true", help="check every line against schema/record.v1.json")
    sp.set_defaults(fn=cmd_ingest)
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    from .campaign import CampaignError
    from .records import RecordError
    from .store import StoreError

    try:
        try:
            return args.fn(args)
        except OSError as exc:  # a full disk is a runtime failure wherever it struck, not bad input
            if disk_full(exc):
                raise OutputError(f"cannot write {exc.filename or 'a file'}: {os_cause(exc)}") from exc
            raise
    except OutputError as exc:
        _debug_traceback()
        print(f"gmb {args.cmd}: error: {exc}", file=sys.stderr)
        return 1
    except (UsageError, CampaignError, RecordError, StoreError, FileExistsError, FileNotFoundError) as exc:
        _debug_traceback()
        print(f"gmb {args.cmd}: error: {exc}", file=sys.stderr)
        return 2
    except (ValueError, TypeError, KeyError, sqlite3.DatabaseError, IsADirectoryError, NotADirectoryError,
            PermissionError) as exc:
        # bad input that reached code without its own check: one line (the traceback with GMB_DEBUG=1)
        _debug_traceback()
        what = str(exc) if isinstance(exc, (ValueError, OSError)) and str(exc) else f"{type(exc).__name__}: {exc}"
        hint = "" if os.environ.get("GMB_DEBUG") == "1" else " (GMB_DEBUG=1 prints the traceback)"
        print(f"gmb {args.cmd}: error: {what}{hint}", file=sys.stderr)
        return 2


def _debug_traceback():
    if os.environ.get("GMB_DEBUG") == "1":
        traceback.print_exc(file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
