#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""gmb-bench against the reference program (reference/reference.c): the same operations, sizes, iteration counts and
launch options, and the ratio of their times per (benchmark, memory, size, library configuration).

Both allocate their buffers once and time the same operation, the same way: by default the reference puts a barrier
before every iteration and keeps the slowest rank's time of each (--reference-timing barrier, as OSU's collectives
do), and gmb-bench runs with --batch 1 (each sample one iteration, after a barrier, the slowest rank's); with
--reference-timing loop the reference times all iterations back to back (as nccl-tests does) and gmb-bench
batches on its own (samples of at least 200 us, back to back inside a sample). Both report the median over
samples (docs/validation.md). gmb-bench runs with --validate (campaigns do), which checks extra
iterations outside the timed ones; the reference checks one operation after its timed ones.

Sizes: latency and bw take the message size, bcast, allreduce and reduce_scatter_equal the vector; for alltoall
and allgather the size given here is the block each rank sends to each peer (alltoall) or contributes
(allgather): the reference's convention, OSU's; gmb-bench is given the whole buffer, ranks x block (its convention,
nccl-tests'), so that both move the same bytes. reduce_scatter_equal is MPI_Reduce_scatter with every rank's count
the same (what OSU's osu_reduce_scatter calls; gmb-bench's reduce_scatter has unequal counts and is not compared):
its sizes must be multiples of 4 x ranks bytes. Sizes an operation cannot move as whole elements (per rank) are
left out of its rows.

  reference/crosscheck.py --gmb BUILD/gmb-bench --reference BUILD/gmb-reference --launcher mpirun \\
      [--launcher-args="--mca pml ob1 --mca btl smcuda,self"] [--env UCX_MEMTYPE_CACHE=n] [--config ob1] \\
      [--np 2] [--memory host:host,device:device,pinned:device] \\
      [--benchmarks latency,bw,bcast,allreduce,alltoall (also: allgather, reduce_scatter_equal)] \\
      [--sizes 1:64M] [--iters 100] [--warmup 10] [--window 64] [--launches 1] [--over-launches median|min] \\
      [--bound 0.95:1.05] [--from 64K] [--reference-timing barrier|loop] [--gmb-batch N] \\
      [--json rows.json] [--markdown table.md]

Memory A:B is rank 0's and rank 1's kind for latency and bw; collectives run when A == B (every rank's kind).
spread: how far one tool's launches differ from each other ((max - min) / median, the larger of the two tools'); a
row outside the bound by less than that is "within spread": the machine and library cannot decide it at this bound.
The ratio is judged only with --bound (on a machine quiet enough for it: the GPU runs of docs/validation.md); without
it every row is "ok" when both programs ran, validated and gave a time, so that a busy machine (CI) checks that much.
Exit status: 0 every row ok (with --bound: every row from --from within the bound or the spread), 1 a row outside
both, a failed launch, a missing row or wrong data, 2 bad arguments.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PT2PT = ("latency", "bw")
COLLECTIVES = ("bcast", "allreduce", "alltoall", "allgather", "reduce_scatter_equal")
DEFAULT_BENCHMARKS = "latency,bw,bcast,allreduce,alltoall"
# The reference's name of each, where it differs from gmb-bench's operation.
REFERENCE_NAME = {"reduce_scatter_equal": "reduce_scatter"}
# The operations whose size here is a block (what the block is, for the table): gmb-bench is given ranks x block.
PER_RANK_BLOCK = {"alltoall": "per peer", "allgather": "per rank"}
KINDS = ("host", "pinned", "device")
LETTER = {"host": "H", "pinned": "P", "device": "D"}


def parse_size(text: str) -> int:
    m = re.fullmatch(r"(\d+)([KMG]?)", text.strip().upper())
    if not m:
        raise argparse.ArgumentTypeError(f"bad size {text!r} (accepted: 64, 4K, 1M, 2G)")
    return int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)]


def parse_sizes(text: str) -> list[int]:
    if ":" in text:
        lo, hi = (parse_size(t) for t in text.split(":", 1))
        if lo > hi:
            raise argparse.ArgumentTypeError(f"bad sizes {text!r}: MIN greater than MAX")
        sizes, s = [], lo
        while s <= hi:
            sizes.append(s)
            s = s * 2 if s else 1
        return sizes
    return [parse_size(t) for t in text.split(",")]


def parse_memory(text: str) -> list[tuple[str, str]]:
    pairs = []
    for item in text.split(","):
        parts = item.split(":")
        if len(parts) != 2 or any(p not in KINDS for p in parts):
            raise argparse.ArgumentTypeError(f"bad memory {item!r} (accepted: A:B with A, B in {', '.join(KINDS)})")
        pairs.append((parts[0], parts[1]))
    return pairs


def parse_bound(text: str) -> tuple[float, float]:
    try:
        lo, hi = (float(t) for t in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"bad bound {text!r} (accepted: LOW:HIGH, e.g. 0.95:1.05)") from None
    if not 0 < lo <= 1 <= hi:
        raise argparse.ArgumentTypeError(f"bad bound {text!r}: need 0 < LOW <= 1 <= HIGH")
    return lo, hi


class LaunchFailed(RuntimeError):
    pass


def run(argv: list[str], env: dict[str, str], timeout: float) -> str:
    try:
        # errors="replace": a library's warning text is not always valid UTF-8 (seen: Open MPI's registration box)
        p = subprocess.run(argv, capture_output=True, text=True, errors="replace", env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise LaunchFailed(f"timed out after {timeout:.0f} s: {shlex.join(argv)}") from None
    if p.returncode != 0:
        tail = "\n".join((p.stderr or p.stdout).strip().splitlines()[-8:])
        raise LaunchFailed(f"exit {p.returncode}: {shlex.join(argv)}\n{tail}")
    return p.stdout


def gmb_case(args, bench: str, memory: tuple[str, str], sizes: list[int], tmp: Path, tag: str) -> dict[int, dict]:
    """{size: {"us": median time, "ok": validated}} from one gmb-bench launch (sizes in this script's convention)."""
    counts = ["--iters", str(args.iters), "--warmup", str(args.warmup), "--iters-large", str(args.iters),
              "--warmup-large", str(args.warmup)] + (["--batch", str(args.gmb_batch)] if args.gmb_batch else [])
    if bench in PT2PT:
        engine_sizes = {s: s for s in sizes}
        what = [bench, "--send", memory[0], "--recv", memory[1]] + (["--window", str(args.window)] if bench == "bw" else [])
    else:
        engine_sizes = {s * args.np if bench in PER_RANK_BLOCK else s: s for s in sizes}
        what = ["coll", bench, "--mem", memory[0]]
    out = tmp / f"gmb-{tag}.jsonl"
    sizes_arg = ",".join(str(s) for s in engine_sizes)
    run(args.launch + [args.gmb] + what + ["--sizes", sizes_arg, "--out", str(out), "--format", "json"] + counts
        + ([] if args.no_validate else ["--validate"]), args.env, args.timeout)
    values = {}
    for line in out.read_text().splitlines():
        r = json.loads(line)
        if r.get("type") != "result":
            continue
        size = engine_sizes[r["bytes"]]
        if r.get("status") != "ok":
            values[size] = {"us": None, "ok": False, "note": r.get("reason") or r.get("validation_error", "")}
        else:
            values[size] = {"us": r["time_us"]["median"], "ok": r.get("validation") != "failed",
                            "note": r.get("validation_error", "")}
    return values


def reference_case(args, bench: str, memory: tuple[str, str], sizes: list[int]) -> dict[int, dict]:
    timing = ["--loop"] if args.reference_timing == "loop" else []
    out = run(args.launch + [args.reference, *timing, REFERENCE_NAME.get(bench, bench), memory[0], memory[1],
                             str(args.iters), str(args.warmup), str(args.window)] + [str(s) for s in sizes],
              args.env, args.timeout)
    values = {}
    for line in out.splitlines():
        # at the end of a line: a library's message without a newline can come first on stdout (seen: Open MPI's)
        m = re.search(r"(\d+) ([\d.]+) ([\d.]+) (ok|wrong-data)$", line)
        if m:
            values[int(m.group(1))] = {"us": float(m.group(2)), "ok": m.group(4) == "ok",
                                       "note": "" if m.group(4) == "ok" else "the reference received wrong data"}
    return values


def movable(bench: str, size: int, ranks: int) -> bool:
    """Whether both programs move `size` (this script's convention) as whole elements: collectives need data, the
    float reductions whole floats, reduce_scatter_equal whole floats per rank."""
    if bench in PT2PT:
        return True
    unit = {"allreduce": 4, "reduce_scatter_equal": 4 * ranks}.get(bench, 1)
    return size > 0 and size % unit == 0


def cases(args):
    for memory in args.memory:
        for bench in args.benchmarks:
            if bench in COLLECTIVES and memory[0] != memory[1]:
                continue
            sizes = [s for s in args.sizes if movable(bench, s, args.np)]
            if sizes:
                yield bench, memory, sizes


def over_launches(runs: list[dict[int, dict]], size: int) -> tuple[list[float], bool, str]:
    """One tool's per-launch figures for `size` (each launch's median time), whether every launch was right, and
    their notes."""
    got = [r[size] for r in runs if size in r]
    notes = "; ".join(sorted({g["note"] for g in got if g["note"]}))
    return [g["us"] for g in got if g["us"] is not None], bool(got) and all(g["ok"] for g in got), notes


def spread_of(values: list[float]) -> float:
    """Launch-to-launch spread: (max - min) / median; 0 for fewer than two launches."""
    return (max(values) - min(values)) / statistics.median(values) if len(values) > 1 else 0.0


def bandwidth(bench: str, size: int, us: float | None, args) -> float | None:
    if not us:
        return None
    moved = size * args.window if bench == "bw" else size * args.np if bench in PER_RANK_BLOCK else size
    return moved / (us * 1e-6) / 1e9 if bench != "latency" else None


def compare(args) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for bench, memory, sizes in cases(args):
            gmb_runs, ref_runs, failure = [], [], ""
            for k in range(args.launches):  # alternating, so that a drifting machine affects both alike
                try:
                    gmb_runs.append(gmb_case(args, bench, memory, sizes, Path(tmp), f"{bench}-{memory[0]}-{memory[1]}-{k}"))
                    ref_runs.append(reference_case(args, bench, memory, sizes))
                except LaunchFailed as exc:
                    failure = str(exc)
                    print(f"launch failed: {exc}", file=sys.stderr)
                    break
            for size in sizes:
                g_all, g_ok, g_note = over_launches(gmb_runs, size)
                r_all, r_ok, r_note = over_launches(ref_runs, size)
                g = args.statistic(g_all) if g_all else None
                r = args.statistic(r_all) if r_all else None
                ratio = g / r if g and r else None
                spread = max(spread_of(g_all), spread_of(r_all))
                within = args.bound is not None and ratio is not None and args.bound[0] <= ratio <= args.bound[1]
                # Outside the bound, but by less than one tool's own launches differ from each other: the
                # comparison cannot be decided at this bound on this machine and library.
                noisy = ratio is not None and abs(ratio - 1) <= spread
                if failure or not (g_ok and r_ok) or ratio is None:
                    verdict = "failed"
                elif args.bound is None:
                    verdict = "ok"  # no time judged: both ran, validated and gave a time
                elif size < args.compare_from:
                    verdict = "-"
                else:
                    verdict = "ok" if within else "within spread" if noisy else "OUTSIDE"
                rows.append({"config": args.config, "benchmark": bench, "memory": f"{LETTER[memory[0]]}-{LETTER[memory[1]]}"
                             if bench in PT2PT else LETTER[memory[0]], "size": size,
                             "size_note": f"{PER_RANK_BLOCK[bench]} (gmb: {size * args.np} total)"
                             if bench in PER_RANK_BLOCK else "",
                             "gmb_us": g, "reference_us": r, "ratio": ratio, "spread": spread,
                             "gmb_launches_us": g_all, "reference_launches_us": r_all,
                             "fastest_ratio": min(g_all) / min(r_all) if g_all and r_all else None,
                             "gmb_GBps": bandwidth(bench, size, g, args), "reference_GBps": bandwidth(bench, size, r, args),
                             "verdict": verdict, "note": "; ".join(n for n in (g_note, r_note, failure.splitlines()[0]
                                                                                if failure else "") if n)})
    return rows


def human(size: int) -> str:
    for unit, shift in (("G", 30), ("M", 20), ("K", 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f"{size >> shift}{unit}"
    return str(size)


def fmt(v, digits=2) -> str:
    return "-" if v is None else f"{v:.{digits}f}"


def markdown(rows: list[dict]) -> str:
    lines = ["| config | benchmark | memory | size | gmb µs | reference µs | ratio | spread | fastest-launch ratio | "
             "gmb GB/s | verdict |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        size = human(r["size"]) + (f" {PER_RANK_BLOCK[r['benchmark']]}" if r["size_note"] else "")
        spread = f"{100 * r['spread']:.0f}%" if r["spread"] else "-"
        lines.append(f"| {r['config']} | {r['benchmark']} | {r['memory']} | {size} | {fmt(r['gmb_us'])} | "
                     f"{fmt(r['reference_us'])} | {fmt(r['ratio'], 3)} | {spread} | {fmt(r['fastest_ratio'], 3)} | "
                     f"{fmt(r['gmb_GBps'])} | {r['verdict']}" + (f" ({r['note']})" if r["note"] else "") + " |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gmb", required=True, help="the gmb-bench executable")
    p.add_argument("--reference", required=True, help="the gmb-reference executable (built with the engine)")
    p.add_argument("--launcher", default="mpiexec", help="mpirun, mpiexec or srun (given -n NP)")
    p.add_argument("--launcher-args", default="", help="options for every launch, e.g. '--mca pml ucx'")
    p.add_argument("--env", action="append", default=[], metavar="NAME=VALUE", help="set for every launch")
    p.add_argument("--config", default="default", help="the library configuration's name, for the table")
    p.add_argument("--np", type=int, default=2, help="ranks (latency and bw use 2)")
    p.add_argument("--memory", type=parse_memory, default=[("host", "host")])
    p.add_argument("--benchmarks", default=DEFAULT_BENCHMARKS,
                   help=f"a comma-separated list of {', '.join(PT2PT + COLLECTIVES)} (default {DEFAULT_BENCHMARKS})")
    p.add_argument("--sizes", type=parse_sizes, default=parse_sizes("1:64M"))
    p.add_argument("--iters", type=int, default=100)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--window", type=int, default=64)
    p.add_argument("--launches", type=int, default=1, help="launches of each, alternating")
    p.add_argument("--over-launches", choices=("median", "min"), default="median",
                   help="which launch's figure each tool gets: the median, or the fastest (a shared, noisy machine, "
                        "where disturbances only add time)")
    p.add_argument("--bound", type=parse_bound, default=None,
                   help="accepted gmb / reference time ratio, e.g. 0.95:1.05 (default: none, no row is judged by its "
                        "times: a busy machine's ratios are noise)")
    p.add_argument("--from", dest="compare_from", type=parse_size, default=parse_size("64K"),
                   help="smallest size held to --bound (smaller ones are shown)")
    p.add_argument("--reference-timing", choices=("barrier", "loop"), default="barrier",
                   help="the reference times each iteration after a barrier (default), or all of them back to back")
    p.add_argument("--gmb-batch", type=int, default=None,
                   help="gmb-bench's --batch: iterations per sample, each sample after a barrier; 0: gmb-bench's "
                        "automatic batching, as campaigns run it (default: 1 with --reference-timing barrier, as the "
                        "reference times, else 0)")
    p.add_argument("--timeout", type=float, default=600, help="seconds per launch")
    p.add_argument("--no-validate", action="store_true", help="run gmb-bench without --validate")
    p.add_argument("--json", type=Path, help="write the rows as JSON (never overwrites)")
    p.add_argument("--markdown", type=Path, help="write the table as Markdown (never overwrites)")
    args = p.parse_args(argv)
    args.statistic = {"median": statistics.median, "min": min}[args.over_launches]
    if args.gmb_batch is None:
        args.gmb_batch = 1 if args.reference_timing == "barrier" else 0
    elif args.gmb_batch < 0:
        p.error("--gmb-batch must be 0 (automatic) or more")
    args.benchmarks = [b for b in args.benchmarks.split(",") if b]
    unknown = [b for b in args.benchmarks if b not in PT2PT + COLLECTIVES]
    if unknown:
        p.error(f"unknown benchmark {', '.join(unknown)} (accepted: {', '.join(PT2PT + COLLECTIVES)})")
    if any(b in PT2PT for b in args.benchmarks) and args.np != 2:
        p.error("latency and bw run on 2 ranks: use --np 2, or list collectives only")
    for name, value in (("--iters", args.iters), ("--window", args.window), ("--launches", args.launches),
                        ("--np", args.np)):
        if value < 1:
            p.error(f"{name} must be at least 1")
    for path in (args.gmb, args.reference):
        if not os.access(path, os.X_OK):
            p.error(f"{path}: not an executable")
    for target in (args.json, args.markdown):
        if target and target.exists():
            p.error(f"{target} exists; this script never overwrites")
    env = dict(os.environ)
    for item in args.env:
        name, eq, value = item.partition("=")
        if not eq or not name:
            p.error(f"--env {item!r}: expected NAME=VALUE")
        env[name] = value
    args.env = env
    args.launch = [args.launcher, "-n", str(args.np)] + shlex.split(args.launcher_args)

    rows = compare(args)
    print(f"# {args.config}: gmb-bench / reference ({args.reference_timing} timing), median time per iteration; "
          f"{args.launches} launch(es) each, the {args.over_launches} launch compared; "
          + (f"bound {args.bound[0]}..{args.bound[1]} from {human(args.compare_from)}" if args.bound
             else "no bound: every row must run and validate, its times are not judged"))
    print(markdown(rows), end="")
    if args.json:
        with open(args.json, "x") as f:
            json.dump(rows, f, indent=1)
    if args.markdown:
        with open(args.markdown, "x") as f:
            f.write(markdown(rows))
    bad = [r for r in rows if r["verdict"] in ("OUTSIDE", "failed")]
    noisy = [r for r in rows if r["verdict"] == "within spread"]
    print(f"{len(rows) - len(bad) - len(noisy)} of {len(rows)} rows ok"
          + (f"; {len(noisy)} outside the bound but within the launch-to-launch spread" if noisy else "")
          + (f"; {len(bad)} outside the bound or failed" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
