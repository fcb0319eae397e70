# SPDX-License-Identifier: BSD-3-Clause
"""`gmb profile`, `gmb predict` and `gmb app`: an application's communication profiled, priced under each
configuration a store measured, and the application run under each configuration to see whether the prediction
held (docs/application.md)."""

from __future__ import annotations

import json
import random
import re
import shutil
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..campaign.results_dir import new_results_dir
from ..engine import configurations, engines
from ..engine.configurations import Configuration
from ..errors import UsageError
from ..machine import mpilibs, topology
from ..machine.launchers import LaunchSpec
from ..outputs import write_new
from ..results.claim_checks import holm
from ..results.inference import estimate, ratio
from ..run import setup
from ..results.profile import ProfileError, load_profile, totals
from . import predict as predict_mod
from .predict import bin_label
from .predicted import prediction_json, prediction_lines, predictions, store_results
from .profiling import (LAUNCHER_NAMES, check_application, new_profile_dir, no_profile_reason, profile_run,
                        profiler_of, run_application, write_profile)
from .report import (breakdown, busy_text, estimate_text, missed, pair_text, paths_of, predicted_text,
                     write_app_report)


def _configurations(lib_opts, build_opts, want_one: bool, topo) -> list[Configuration]:
    """The libraries named (or found) as configurations with their engines (built unless --no-build), each with its
    GPU support on a machine with GPUs, as gmb run and gmb doctor take them."""
    libs = setup.libraries(lib_opts)
    if topo.gpus:
        libs = [mpilibs.with_gpu_support(lib) for lib in libs]
    if want_one and len(libs) > 1:
        raise UsageError(f"several MPI libraries here ({', '.join(lib.name for lib in libs)}): name the one the "
                         f"application runs with, --library NAME")
    confs = configurations.configurations(libs, do_build=not build_opts.no_build,
                                          build_options=engines.build_options(build_opts))
    for conf in confs:
        if conf.engine is None:
            raise UsageError(f"{conf.name}: no engine, so no profiler: {conf.no_engine}")
    return confs


def _summary(profile: dict) -> list[str]:
    """The profile in a few lines: wall and MPI time, the calls that take the most time, the sizes."""
    ranks = profile["ranks"]
    mpi = predict_mod.rank_mpi_s(profile)
    wall = profile["mpi_wall_s"]
    lines = [f"{ranks} ranks on {len(set(profile['hosts']))} host(s), {profile['mpi_library']}",
             f"MPI_Init to MPI_Finalize: {max(wall.values()):.3f} s (slowest rank); in MPI calls: "
             + ", ".join(f"rank {r} {t:.3f} s" for r, t in sorted(mpi.items())[:8])
             + (" ..." if len(mpi) > 8 else ""),
             "profiler's own bookkeeping: " + ", ".join(f"rank {r} {float(t) * 1e3:.1f} ms" for r, t in
                                                        sorted(profile["profiler_overhead_s"].items())[:8])]
    if profile.get("missing_ranks"):
        lines.append(f"ranks without a profile (ended without MPI_Finalize?): {profile['missing_ranks']}")
    lines.append(f"{'call':<26} {'memory':<8} {'path':<12} {'calls':>9} {'bytes':>12} {'time s':>9}  sizes (calls)")
    for (call, memory, path), (count, nbytes, t, bins) in sorted(totals(profile, by_bin=False).items(),
                                                                 key=lambda kv: -kv[1][2])[:15]:
        sizes = ", ".join(f"{bin_label(b)}: {n}" for b, n in sorted(bins.items())[:4])
        lines.append(f"{call:<26} {memory:<8} {path:<12} {count:>9} {nbytes:>12} {t:>9.4f}  {sizes}"
                     + (" ..." if len(bins) > 4 else ""))
    return lines


# ---------------------------------------------------------------------------------------------------- gmb profile
def profile_command(args, lib_opts, build_opts) -> int:
    argv = list(args.command)
    if not argv:
        raise UsageError("no application to profile: give its command after --, e.g. gmb profile -- mpirun -np 2 "
                         "./app input")
    topo = topology.discover()
    (conf,) = _configurations(lib_opts, build_opts, want_one=True, topo=topo)
    check_application(argv, profiler_of(conf), conf)
    outdir = Path(args.out) if args.out else new_profile_dir(args.results, argv)
    if args.out:
        try:
            outdir.mkdir(parents=True)
        except FileExistsError:
            raise UsageError(f"--out {outdir} exists: a profile directory is made new, never written over") from None
    try:
        run, merged = profile_run(conf, argv, outdir, conf.launcher.environment(conf.library, LaunchSpec(1, [])),
                                  topo)
    except BaseException:
        shutil.rmtree(outdir, ignore_errors=True)  # nothing half-written
        raise
    if not merged:
        shutil.rmtree(outdir, ignore_errors=True)
        raise ProfileError(no_profile_reason(run) + "; nothing written")
    path = write_profile(outdir, merged, run, conf, argv)
    print("\n".join(f"gmb profile: {line}" for line in _summary(load_profile(path))), file=sys.stderr)
    print(f"gmb profile: the application's wall time {run.wall_s:.3f} s; profile in {path}", file=sys.stderr)
    if merged["load"].get("busy"):
        print(f"gmb profile: warning: {merged['load']['why']}: the ranks' waits in this profile are the host's as "
              f"much as the application's, and gmb predict carries them to every configuration; profile again when "
              f"the host is quiet", file=sys.stderr)
    if run.exit_status != 0:
        print(f"gmb profile: the application exited with {run.exit_status} (its profile is kept: every rank wrote "
              f"one)", file=sys.stderr)
        return 1
    return 0


# ---------------------------------------------------------------------------------------------------- gmb predict
def predict_command(args) -> int:
    profile = load_profile(args.profile)
    results = store_results(args.results)
    preds = predictions(profile, results, args.results, args.other_machine)
    if args.json:
        print(json.dumps([prediction_json(p) for p in preds], indent=1))
    else:
        print("\n".join(prediction_lines(preds, profile)))
    return 0


# -------------------------------------------------------------------------------------------------------- gmb app
@dataclass
class Launch:
    configuration: str
    round: int
    exit_status: int
    wall_s: float
    figure: float | None
    mpi_s: float | None  # the slowest rank's time in MPI calls (profiled launches)
    directory: str
    reason: str = ""
    # of a profiled run: where the slowest rank's MPI time went (report.BREAKDOWN), the paths its messages took
    mpi_breakdown_s: dict | None = None
    paths: list[str] | None = None
    load: dict | None = None  # how busy this host was beside the run (machine/load.py)

    @property
    def profiled(self) -> bool:
        return self.paths is not None

    @property
    def busy(self) -> bool:
        return bool(self.load and self.load.get("busy"))


def _figure(output: str, pattern: re.Pattern | None, wall: float) -> float | None:
    if pattern is None:
        return wall
    found = pattern.findall(output)
    if not found:
        return None
    value = found[-1] if isinstance(found[-1], str) else found[-1][0]
    try:
        return float(value)
    except ValueError:
        return None


def app_command(args, lib_opts, build_opts) -> int:
    argv = list(args.command)
    if not argv:
        raise UsageError("no application: give its program and arguments after --, e.g. gmb app --np 2 -- lmp -in "
                         "in.melt (gmb starts it with each library's launcher)")
    if Path(argv[0]).name in LAUNCHER_NAMES:
        raise UsageError(f"give the program, not a launcher ({argv[0]}): gmb app starts it with each configuration's "
                         f"launcher and settings, --np ranks")
    try:
        pattern = re.compile(args.figure) if args.figure else None
    except re.error as exc:
        raise UsageError(f"--figure {args.figure!r}: not a regular expression ({exc})") from None
    if pattern is not None and pattern.groups < 1:
        raise UsageError(f"--figure {args.figure!r}: needs a group around the number, e.g. 'Loop time of ([0-9.]+)'")
    profile = load_profile(args.predict[0]) if args.predict else None
    prediction = predictions(profile, store_results(args.predict[1]), args.predict[1]) if args.predict else None
    topo = topology.discover()
    confs = _configurations(lib_opts, build_opts, want_one=False, topo=topo)
    for conf in confs:  # a program built for another MPI library than a configuration's: refused before any run
        check_application(argv, profiler_of(conf), conf)
    outdir = new_results_dir(args.results, f"app-{Path(argv[0]).name}")
    rng = random.Random(args.seed)
    launches: list[Launch] = []
    with open(outdir / "launches.jsonl", "x") as log:  # each run as it ends: an interrupted gmb app keeps them
        for rnd in range(1, args.launches + 1):
            order = list(confs)
            rng.shuffle(order)  # interleaved, in a new order each round: drift falls on every configuration alike
            for conf in order:
                x = _one_launch(conf, argv, args, outdir, rnd, pattern, topo)
                launches.append(x)
                log.write(json.dumps(x.__dict__) + "\n")
                log.flush()
                print(f"gmb app: {x.configuration} round {rnd}: "
                      + (f"{x.figure:.4g}" + (f", MPI {x.mpi_s:.3f} s" if x.mpi_s is not None else "")
                         if x.figure is not None else f"failed: {x.reason}"), file=sys.stderr)
    summary = verification(launches, [c.name for c in confs], prediction, higher=args.higher_is_better)
    summary.update({"command": argv, "ranks": args.np, "figure": args.figure or "wall time (s)",
                    "created_utc": datetime.now(timezone.utc).isoformat(), "seed": args.seed})
    _explain_misses(summary, launches, profile)
    write_new(outdir / "app.json", json.dumps(summary, indent=1, allow_nan=False))
    print("\n".join(verification_lines(summary)))
    if not args.no_report:
        shown = profile or next((load_profile(x.directory) for x in launches if x.profiled), None)
        write_app_report(outdir, summary, shown, prediction_lines(prediction, shown) if prediction else [])
    print(f"gmb app: results in {outdir}", file=sys.stderr)
    return 1 if any(x.figure is None for x in launches) else 0


def _one_launch(conf: Configuration, argv, args, outdir: Path, rnd: int, pattern, topo) -> Launch:
    spec = LaunchSpec(ranks=args.np, program=argv, hostfile=args.hostfile, ranks_per_node=args.ranks_per_node)
    cmd = conf.launcher.argv(conf.library, spec)
    env = conf.launcher.environment(conf.library, spec)
    where = outdir / "launches" / f"{conf.name}-r{rnd}"
    where.mkdir(parents=True)
    if args.no_profile:
        write_new(where / "command.txt", " ".join(cmd) + "\n")
        run = run_application(cmd, env, where / "output.log", echo=False, timeout=args.timeout)
        profile = None
    else:
        run, profile = profile_run(conf, cmd, where, env, topo, echo=False, timeout=args.timeout)
        if profile:
            write_profile(where, profile, run, conf, cmd)
    figure = _figure(run.output, pattern, run.wall_s) if run.exit_status == 0 else None
    reason = ("" if figure is not None else f"exit status {run.exit_status}: {run.output.strip()[-300:]}"
              if run.exit_status else f"--figure {args.figure!r} not found in its output")
    if profile == {} and not reason:
        reason, figure = no_profile_reason(run), None
    if not profile:
        return Launch(conf.name, rnd, run.exit_status, run.wall_s, figure, None, str(where), reason)
    slowest, mpi = max(predict_mod.rank_mpi_s(profile).items(), key=lambda kv: kv[1])
    return Launch(conf.name, rnd, run.exit_status, run.wall_s, figure, mpi, str(where), reason,
                  breakdown(profile, slowest), sorted(paths_of(profile)), profile.get("load"))


def _explain_misses(summary: dict, launches: list[Launch], predicted_profile: dict | None) -> None:
    """Each configuration's row gets where its measured MPI time went (its profiled runs' slowest rank, averaged:
    report.BREAKDOWN), the paths its runs' messages took and, beside a prediction, why the two differ."""
    for row in summary["configurations"]:
        runs = [x for x in launches if x.configuration == row["configuration"] and x.figure is not None and x.profiled]
        mean = ({k: sum(x.mpi_breakdown_s[k] for x in runs) / len(runs) for k in runs[0].mpi_breakdown_s}
                if runs else None)
        paths = {p for x in runs for p in x.paths}
        row["mpi_breakdown_s"] = mean
        row["paths"] = sorted(paths)
        row["busy_runs"] = sum(x.busy for x in runs)
        pred = row["predicted_s"]
        row["missed"] = missed(row["mpi_s"]["value"] if row["mpi_s"] else None,
                               pred["predicted_s"] if pred and pred["complete"] else None, mean, paths,
                               paths_of(predicted_profile) if predicted_profile else None)
        if row["missed"] and pred and pred.get("waits_from"):
            row["missed"] += busy_text(row["busy_runs"], len(runs), (predicted_profile or {}).get("load"))


def verification(launches: list[Launch], names: list[str], prediction, higher: bool) -> dict:
    """Each configuration's measured figure and MPI time (geometric mean of its launches, 95 % interval), the
    measured ranking with every pair tested (paired by round, Holm over the pairs), and the prediction beside it."""
    per = {n: [x for x in launches if x.configuration == n and x.figure is not None and x.figure > 0] for n in names}
    rows = []
    for n in names:
        ok = per[n]
        fig = estimate([x.figure for x in ok]) if ok else None
        mpis = [x.mpi_s for x in ok if x.mpi_s and x.mpi_s > 0]
        mpi = estimate(mpis) if mpis else None
        pred = next((p for p in prediction or [] if p.configuration == n), None)
        rows.append({"configuration": n, "launches": len(ok), "failed": sum(1 for x in launches if x.configuration
                                                                              == n and x.figure is None),
                     "figure": _est(fig), "mpi_s": _est(mpi),
                     "predicted_s": prediction_json(pred) if pred and pred.own_us else None})
    measured = [r for r in rows if r["figure"]]
    measured.sort(key=lambda r: r["figure"]["value"], reverse=higher)
    pairs, pvalues = [], []
    for i, a in enumerate(measured):
        for b in measured[i + 1:]:
            xa = {x.round: x.figure for x in per[a["configuration"]]}
            xb = {x.round: x.figure for x in per[b["configuration"]]}
            better, worse = (xa, xb) if higher else (xb, xa)  # the ratio is how many times better the one ahead is
            r = ratio(list(better.values()), list(worse.values()), rounds_a=list(better), rounds_b=list(worse))
            pairs.append({"ahead": a["configuration"], "behind": b["configuration"], "ratio": r.value,
                          "low": r.low, "high": r.high, "p": r.p})
            pvalues.append(1.0 if r.p is None else r.p)
    for pair, proven in zip(pairs, holm(pvalues) if pvalues else []):
        pair["proven"] = bool(proven)
    by_name = {r["configuration"]: r for r in rows}
    for pair in pairs:
        a, b = by_name[pair["ahead"]], by_name[pair["behind"]]
        pa, pb = a["predicted_s"], b["predicted_s"]
        if pa and pb and pa["complete"] and pb["complete"]:
            pair["predicted_ahead"] = pa["predicted_s"] <= pb["predicted_s"]
            # what the one behind spends more: predicted communication, measured MPI time and figure (a time)
            pair["predicted_difference_s"] = pb["predicted_s"] - pa["predicted_s"]
            pair["measured_mpi_difference_s"] = (b["mpi_s"]["value"] - a["mpi_s"]["value"]
                                                 if a["mpi_s"] and b["mpi_s"] else None)
            pair["measured_figure_difference"] = None if higher else b["figure"]["value"] - a["figure"]["value"]
    return {"configurations": rows, "ranking": [r["configuration"] for r in measured], "pairs": pairs,
            "higher_is_better": higher}


def _est(e) -> dict | None:
    if e is None:
        return None
    return {"value": e.value, "low": e.low, "high": e.high, "launches": e.launches}


def verification_lines(summary: dict) -> list[str]:
    lines = [f"measured ({summary['figure']}, {'higher' if summary['higher_is_better'] else 'lower'} is better), "
             f"MPI time of the slowest rank, and predicted communication:"]
    for r in summary["configurations"]:
        lines.append(f"  {r['configuration']}: {estimate_text(r['figure'])}; MPI {estimate_text(r['mpi_s'], ' s')}; "
                     f"predicted {predicted_text(r['predicted_s'])}"
                     + (f"; {r['failed']} launch(es) failed" if r["failed"] else "")
                     + (f"; {r['busy_runs']} run(s) on a busy host" if r.get("busy_runs") else ""))
        if r.get("missed"):
            lines.append(f"    {r['missed']}")
    return lines + [f"  {pair_text(p)}" for p in summary["pairs"]]
