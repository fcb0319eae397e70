#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Puts gmb-bench's collective bus bandwidth next to NCCL's own tests (nccl-tests) on the same machine.

    nccl_tests_compare.py --nccl-tests all_reduce=ar.txt --nccl-tests all_gather=ag.txt ...
                          --records coll-nccl.jsonl coll-mpi.jsonl [--min-bytes 64M] [--tolerance 5]

nccl-tests files are the perf binaries' standard output (all_reduce_perf ... > ar.txt); the
out-of-place busbw column is used. gmb records are `gmb-bench coll` JSON Lines; their transport
(nccl or mpi) and rank count say which column a result goes to. Prints a Markdown table per rank
count: size, nccl-tests busbw, gmb NCCL busbw and their ratio, gmb MPI busbw and NCCL/MPI.
Exit status 1 when a gmb NCCL figure at or above --min-bytes differs from nccl-tests by more than
--tolerance percent; 2 on bad input.
"""
import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

# nccl-tests binary name -> gmb operation (same size convention: docs/collectives.md).
OPERATIONS = {"all_reduce": "allreduce", "all_gather": "allgather", "reduce_scatter": "reduce_scatter_block",
              "alltoall": "alltoall", "broadcast": "bcast", "reduce": "reduce", "gather": "gather",
              "scatter": "scatter"}


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    if text and text[-1] in units:
        return int(text[:-1]) * units[text[-1]]
    return int(text)


def read_nccl_tests(path: Path) -> dict[int, float]:
    """size in bytes -> out-of-place busbw (GB/s) from a perf binary's standard output."""
    out = {}
    for line in path.read_text().splitlines():
        fields = line.split()
        if not fields or fields[0].startswith("#") or not fields[0].isdigit() or len(fields) < 8:
            continue
        out[int(fields[0])] = float(fields[7])  # size count type redop root time algbw busbw ...
    if not out:
        raise ValueError(f"{path}: no result lines (is this nccl-tests output?)")
    return out


def read_gmb(paths: list[Path]) -> dict[tuple[str, str, int, int], float]:
    """(transport, operation, ranks, bytes) -> median busbw (GB/s) of ok `coll` results; a point measured in
    several launches (campaign repetitions) gets the median of their medians."""
    out = defaultdict(list)
    for path in paths:
        for line in path.read_text().splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            if r.get("type") != "result" or r.get("benchmark") != "coll" or r.get("status") != "ok":
                continue
            busbw = r.get("busbw_GBps", {}).get("median")
            if busbw is None:
                continue
            out[(r.get("transport", "mpi"), r["operation"], int(r["ranks"]), int(r["bytes"]))].append(busbw)
    return {key: statistics.median(values) for key, values in out.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nccl-tests", action="append", default=[], metavar="NAME[@RANKS]=FILE",
                    help="a perf binary's output, e.g. all_reduce@4=ar4.txt (RANKS defaults to 2)")
    ap.add_argument("--records", nargs="+", type=Path, required=True, help="gmb-bench coll JSON Lines files")
    ap.add_argument("--min-bytes", default="64M", help="sizes checked against --tolerance (default 64M)")
    ap.add_argument("--tolerance", type=float, default=5.0, help="allowed difference in percent (default 5)")
    args = ap.parse_args()
    try:
        min_bytes = parse_size(args.min_bytes)
        reference = {}
        for spec in args.nccl_tests:
            name, sep, file = spec.partition("=")
            name, _, ranks = name.partition("@")
            if not sep or name not in OPERATIONS:
                raise ValueError(f"bad --nccl-tests {spec!r} (expected NAME[@RANKS]=FILE, NAME one of "
                                 f"{', '.join(OPERATIONS)})")
            reference[(OPERATIONS[name], int(ranks or 2))] = read_nccl_tests(Path(file))
        gmb = read_gmb(args.records)
    except (ValueError, OSError, json.JSONDecodeError, KeyError) as e:
        print(f"nccl_tests_compare: error: {e}", file=sys.stderr)
        return 2

    failures, checked = [], 0
    by_ranks = defaultdict(list)
    for (op, ranks), sizes in sorted(reference.items()):
        by_ranks[ranks].append((op, sizes))
    for ranks, ops in sorted(by_ranks.items()):
        print(f"\n### {ranks} ranks (busbw GB/s, medians; nccl-tests: out-of-place)\n")
        print("| operation | size | nccl-tests | gmb NCCL | gmb/nccl-tests | gmb MPI | NCCL/MPI |")
        print("|---|---|---|---|---|---|---|")
        for op, sizes in ops:
            for size, ref in sorted(sizes.items()):
                ours = gmb.get(("nccl", op, ranks, size))
                mpi = gmb.get(("mpi", op, ranks, size))
                ratio = ours / ref if ours is not None and ref > 0 else None
                print(f"| {op} | {size} | {ref:.2f} | {fmt(ours)} | {fmt(ratio, 3)} | {fmt(mpi)} | "
                      f"{fmt(ours / mpi if ours is not None and mpi else None, 1)} |")
                if size < min_bytes:
                    continue
                if ratio is None:  # a size nccl-tests measured and gmb did not (a launch cut short): a failure
                    failures.append(f"{op} {ranks} ranks {size} B: no gmb NCCL figure (nccl-tests {ref:.2f} GB/s)")
                    continue
                checked += 1
                if abs(ratio - 1) * 100 > args.tolerance:
                    failures.append(f"{op} {ranks} ranks {size} B: gmb {ours:.2f} vs nccl-tests {ref:.2f} GB/s")
    if failures:
        print(f"\nOutside {args.tolerance}% at >= {args.min_bytes}:\n  " + "\n  ".join(failures))
        return 1
    if not checked:
        print(f"\nNothing to check: no size >= {args.min_bytes} has both a gmb NCCL and a nccl-tests figure.")
        return 1
    print(f"\n{checked} gmb NCCL figures at >= {args.min_bytes}: all within {args.tolerance}% of nccl-tests.")
    return 0


def fmt(v, digits=2):
    return "-" if v is None else f"{v:.{digits}f}"


if __name__ == "__main__":
    sys.exit(main())
