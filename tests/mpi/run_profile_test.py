#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""libgmb-profile preloaded into profile_app (3 ranks): each rank's profile holds exactly the rows its calls make
(call, peer in MPI_COMM_WORLD, communicator size, size bin, message tag) with their counts, bytes and waits, on host memory, and
its header (rank, world size, hosts, library); the profiler writes no file over one that exists."""

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

# (call, peer, comm_size, bin, tag) -> (count, bytes, waited) per rank; collectives' tag is -1
COMMON = {("MPI_Allreduce", -1, 3, 2, -1): (7, 28, 0), ("MPI_Bcast", -1, 3, 9, -1): (2, 2000, 0)}
EXPECTED = {
    0: {("MPI_Send", 1, 0, 9, 7): (5, 4000, 0),
        **{("MPI_Isend", 1, 0, 12, 8 + i): (1, 4096, 1) for i in range(3)},
        ("MPI_Sendrecv", 1, 0, 4, 3): (1, 16, 0), ("MPI_Sendrecv (receive)", 2, 0, 4, 3): (1, 16, 0),
        ("MPI_Allgather", -1, 2, 4, -1): (1, 16, 0), ("MPI_Recv", 2, 0, 4, 5): (1, 24, 0)},
    1: {("MPI_Recv", 0, 0, 9, 7): (5, 4000, 0),
        **{("MPI_Irecv", 0, 0, 12, 8 + i): (1, 4096, 1) for i in range(3)},
        ("MPI_Sendrecv", 2, 0, 4, 3): (1, 16, 0), ("MPI_Sendrecv (receive)", 0, 0, 4, 3): (1, 16, 0)},
    2: {("MPI_Sendrecv", 0, 0, 4, 3): (1, 16, 0), ("MPI_Sendrecv (receive)", 1, 0, 4, 3): (1, 16, 0),
        ("MPI_Allgather", -1, 2, 4, -1): (1, 16, 0), ("MPI_Send", 0, 0, 4, 5): (1, 24, 0)},
}


def run(args, outdir: Path) -> subprocess.CompletedProcess:
    cmd = [args.mpiexec, "-n", "3", "env", f"LD_PRELOAD={args.profiler}", f"GMB_PROFILE_DIR={outdir}", *args.program]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--profiler", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("program", nargs="+")
    args = ap.parse_args()
    args.program = [w for w in args.program if w != "--"]
    work = Path(args.workdir)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    p = run(args, work)
    problems = [] if p.returncode == 0 else [f"exit {p.returncode}: {p.stderr[-2000:]}"]
    for rank, expected in EXPECTED.items():
        f = work / f"rank-{rank}.json"
        if not f.is_file():
            problems.append(f"rank {rank}: no profile {f}")
            continue
        data = json.loads(f.read_text())
        header = (data["schema"], data["rank"], data["world_size"], len(data["hosts"]))
        if header != ("gmb.profile.rank.v1", rank, 3, 3):
            problems.append(f"rank {rank}: header {data['schema']}, rank {data['rank']}, world {data['world_size']}")
        if not data["mpi_library"] or "\x00" in data["mpi_library"]:
            problems.append(f"rank {rank}: library {data['mpi_library']!r}")
        got = {}
        for row in data["rows"]:
            if row["memory"] != "host" or row["device"] != -1:
                problems.append(f"rank {rank}: {row['call']} on {row['memory']} memory (host expected)")
            got[(row["call"], row["peer"], row["comm_size"], row["bin"], row["tag"])] = (row["count"], row["bytes"], row["waited"])
        want = {**COMMON, **expected}
        if got != want:
            problems.append(f"rank {rank}: rows differ\n  missing or other: "
                            f"{sorted(set(want.items()) - set(got.items()))}\n  unexpected: "
                            f"{sorted(set(got.items()) - set(want.items()))}")
    # a second run into the same directory: every rank refuses to write over its profile, and says so
    before = {f.name: f.read_bytes() for f in work.glob("rank-*.json")}
    p2 = run(args, work)
    if "cannot create" not in p2.stderr or {f.name: f.read_bytes() for f in work.glob("rank-*.json")} != before:
        problems.append(f"a second run wrote over the profiles or did not say so: {p2.stderr[-1000:]}")
    for line in problems:
        print(f"FAIL: {line}")
    print("ok" if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
