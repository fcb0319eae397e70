#!/usr/bin/env python3
"""Does gmb-bench add measurable cost? Runs, in one launch sequence and alternating, a minimal
hand-written MPI ping-pong/bandwidth program (bench/reference.c) and gmb-bench on host memory,
and prints the ratio of medians per size: the median over launches of each tool's per-launch value,
where that value is total time / iterations for both (gmb's mean sample time), so that the two are
the same estimator.

Targets: latency gmb/reference <= 1.03 at every size 1 B..4 KiB; bw gmb/reference >= 0.98 at
every size 1 MiB..64 MiB.

  bench/overhead.py --build BUILD_DIR --mpiexec mpiexec.openmpi [--launches 5] [--np-args ...]
BUILD_DIR must hold gmb-bench and gmb-reference (built by CMake with the engine).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def run(cmd, env):
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if proc.returncode != 0:
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr}")
    return proc.stdout


def reference(args, env, mode, lo, hi, iters, warmup):
    out = run(args.launch + [os.path.join(args.build, "gmb-reference"), mode, str(lo), str(hi), str(iters), str(warmup)], env)
    return {int(a): float(b) for a, b in (line.split() for line in out.splitlines() if line.strip())}


def gmb(args, env, bench, lo, hi, iters, warmup, tmp, k):
    path = os.path.join(tmp, f"{bench}-{k}.jsonl")
    run(args.launch + [os.path.join(args.build, "gmb-bench"), bench, "--sizes", f"{lo}:{hi}", "--iters", str(iters),
                       "--warmup", str(warmup), "--iters-large", str(iters), "--warmup-large", str(warmup),
                       "--out", path, "--format", "json"], env)
    values = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r["type"] == "result":
                # The same estimator as the reference (total time / iterations): gmb's mean
                # sample time. Its median would flatter gmb by dropping the slow tail.
                mean_us = r["time_us"]["mean"]
                values[r["bytes"]] = mean_us if bench == "latency" else r["bytes"] * r["window"] / (mean_us * 1e-6) / 1e9
    return values


def compare(args, env, tmp, mode, lo, hi, iters, warmup):
    ref_runs, gmb_runs = [], []
    for k in range(args.launches):
        ref_runs.append(reference(args, env, mode, lo, hi, iters, warmup))
        gmb_runs.append(gmb(args, env, mode, lo, hi, iters, warmup, tmp, k))
    rows = []
    for size in sorted(ref_runs[0]):
        r = statistics.median(run[size] for run in ref_runs)
        g = statistics.median(run[size] for run in gmb_runs)
        rows.append((size, r, g, g / r))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", required=True)
    parser.add_argument("--mpiexec", default="mpiexec")
    parser.add_argument("--launches", type=int, default=5)
    parser.add_argument("--extra", default="", help="extra launcher arguments, e.g. '--bind-to core'")
    parser.add_argument("--only", choices=["latency", "bw"], help="run one of the two comparisons")
    args = parser.parse_args()
    args.launch = [args.mpiexec, "-n", "2"] + args.extra.split()
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        print(f"# {args.launches} alternating launches of each; value = median over launches")
        print(f"{'benchmark':9} {'size':>9} {'reference':>11} {'gmb-bench':>11} {'ratio':>7}  target")
        latency_rows = [] if args.only == "bw" else compare(args, env, tmp, "latency", 1, 4096, 20000, 2000)
        bw_rows = [] if args.only == "latency" else compare(args, env, tmp, "bw", 1 << 20, 64 << 20, 20, 3)
        for size, r, g, ratio in latency_rows:
            good = ratio <= 1.03
            ok &= good
            print(f"{'latency':9} {size:>9} {r:>9.3f}us {g:>9.3f}us {ratio:>7.3f}  <= 1.03 {'ok' if good else 'MISSED'}")
        for size, r, g, ratio in bw_rows:
            good = ratio >= 0.98
            ok &= good
            print(f"{'bw':9} {size:>9} {r:>8.3f}GB/s {g:>8.3f}GB/s {ratio:>7.3f}  >= 0.98 {'ok' if good else 'MISSED'}")
    print("all targets met" if ok else "some targets missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
