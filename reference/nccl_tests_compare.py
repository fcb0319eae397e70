#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Puts gmb-bench's collective bus bandwidth next to NCCL's own tests (nccl-tests) on the same machine.

    nccl_tests_compare.py --nccl-tests all_reduce@4=ar4.txt --nccl-tests broadcast@4=bc4.txt ...
                          --records coll-nccl.jsonl coll-mpi.jsonl [--min-bytes 1M] [--tolerance 5]
                          [--offsets rotating|fixed]

nccl-tests files are the perf binaries' JSON (all_reduce_perf ... -J ar.json: nccl-tests 2.17.4 and later) or, for
older builds, their standard output (all_reduce_perf ... > ar.txt); a file starting with "{" is read as JSON. One data
type per file (nccl-tests' -d; the default, float). Like is compared with like:
- in place or not: gmb's NCCL figure is set beside nccl-tests' out-of-place busbw, or its in-place busbw where gmb's
  call is in place (bcast always: MPI_Bcast has one buffer, which gmb hands to ncclBroadcast as both; the others
  where the record says in_place);
- buffers: nccl-tests moves every call to the next offset of its buffers (no call reads what an earlier one left
  in the GPU's cache); gmb does so with `coll --rotate-offsets` (records: buffer_offsets "rotating"). --offsets
  chooses which gmb records are judged (default rotating); the other kind, where present, is shown beside them.
gmb records are `gmb-bench coll` JSON Lines; their transport (nccl or mpi) and rank count say which column a result
goes to. Prints a Markdown table per rank count: size, nccl-tests busbw, gmb NCCL busbw (the slowest rank's time per
call, gmb's figure) and their ratio, gmb's busbw from the mean of the ranks' times (nccl-tests' averaging), gmb MPI
busbw and NCCL/MPI. Exit status 1 when a judged gmb NCCL figure at or above --min-bytes differs from nccl-tests by
more than --tolerance percent (or is missing); 2 on bad input.
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
# gmb operations whose call is in place whatever the options (MPI defines them over one buffer)
IN_PLACE_BY_NATURE = {"bcast"}
# a result line: size count type redop root, then time algbw busbw #wrong out of place, the same in place
SIZE, TYPE, OUT_OF_PLACE_BUSBW, IN_PLACE_BUSBW = 0, 2, 7, 11


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    if text and text[-1] in units:
        return int(text[:-1]) * units[text[-1]]
    return int(text)


def text_results(text: str) -> list[tuple[int, str, float, float | None]]:
    """(size, data type, out-of-place busbw, in-place busbw or None) per result line of a perf binary's output."""
    rows = []
    for line in text.splitlines():
        fields = line.split()
        if not fields or not fields[SIZE].isdigit() or len(fields) <= OUT_OF_PLACE_BUSBW:
            continue
        in_place_busbw = float(fields[IN_PLACE_BUSBW]) if len(fields) > IN_PLACE_BUSBW else None
        rows.append((int(fields[SIZE]), fields[TYPE], float(fields[OUT_OF_PLACE_BUSBW]), in_place_busbw))
    return rows


def json_results(text: str) -> list[tuple[int, str, float | None, float | None]]:
    """The same from a perf binary's -J file (nccl-tests src/util.cu: "results", a list of {"size", "type",
    "out_of_place": {"bus_bw", ...}, "in_place": {...}}; "out_of_place" is null where only in place ran, and an
    undefined figure is the string "nan")."""
    def busbw(column):
        return None if column is None or column["bus_bw"] == "nan" else float(column["bus_bw"])
    return [(int(r["size"]), r["type"], busbw(r.get("out_of_place")), busbw(r.get("in_place")))
            for r in json.loads(text).get("results", [])]


def read_nccl_tests(path: Path) -> dict[bool, dict[int, float]]:
    """{in place: {size in bytes: busbw (GB/s)}} from a perf binary's JSON or standard output."""
    text = path.read_text()
    rows = json_results(text) if text.lstrip().startswith("{") else text_results(text)
    types = sorted({data_type for _, data_type, _, _ in rows})
    if len(types) > 1:
        raise ValueError(f"{path}: results of several data types ({', '.join(types)}); run nccl-tests with one -d")
    out = {False: {}, True: {}}
    for size, _, out_of_place_busbw, in_place_busbw in rows:
        for place, busbw in ((False, out_of_place_busbw), (True, in_place_busbw)):
            if busbw is not None:
                out[place][size] = busbw
    if not out[False]:
        raise ValueError(f"{path}: no result lines (is this nccl-tests output?)")
    return out


def in_place(record: dict) -> bool:
    return record["operation"] in IN_PLACE_BY_NATURE or bool(record.get("in_place"))


def read_gmb(paths: list[Path]) -> dict[tuple, dict[str, float]]:
    """(transport, operation, ranks, bytes, buffer offsets) -> {"busbw": median busbw (GB/s), "mean_busbw": busbw from
    the mean of the ranks' times, "in_place": 0/1} of ok `coll` results; a point measured in several launches
    (campaign repetitions) gets the median of their medians."""
    figures = defaultdict(lambda: defaultdict(list))
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
            key = (r.get("transport", "mpi"), r["operation"], int(r["ranks"]), int(r["bytes"]),
                   r.get("buffer_offsets", "fixed"))
            figures[key]["busbw"].append(busbw)
            figures[key]["in_place"].append(float(in_place(r)))
            metrics = r.get("metrics") or {}
            mean_time = (metrics.get("rank_mean_time_us") or {}).get("median")
            if mean_time:
                # busbw is proportional to 1 / time: the same factor turns the mean time into its busbw
                figures[key]["mean_busbw"].append(busbw * r["time_us"]["median"] / mean_time)
    return {key: {name: statistics.median(values) for name, values in by_name.items()}
            for key, by_name in figures.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--nccl-tests", action="append", default=[], metavar="NAME[@RANKS]=FILE",
                    help="a perf binary's -J JSON or standard output, e.g. all_reduce@4=ar4.json (RANKS defaults to 2)")
    ap.add_argument("--records", nargs="+", type=Path, required=True, help="gmb-bench coll JSON Lines files")
    ap.add_argument("--min-bytes", default="1M", help="sizes checked against --tolerance (default 1M)")
    ap.add_argument("--tolerance", type=float, default=5.0, help="allowed difference in percent (default 5)")
    ap.add_argument("--offsets", choices=("rotating", "fixed"), default="rotating",
                    help="which gmb NCCL records are judged: coll --rotate-offsets (rotating, nccl-tests' protocol; "
                         "default) or every call on the same buffers (fixed)")
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
    except (ValueError, OSError, KeyError, TypeError) as e:
        print(f"nccl_tests_compare: error: {e}", file=sys.stderr)
        return 2

    other = "fixed" if args.offsets == "rotating" else "rotating"
    failures, checked = [], 0
    by_ranks = defaultdict(list)
    for (op, ranks), columns in sorted(reference.items()):
        by_ranks[ranks].append((op, columns))
    for ranks, ops in sorted(by_ranks.items()):
        print(f"\n### {ranks} ranks (busbw GB/s, medians; gmb NCCL: {args.offsets} buffer offsets)\n")
        print(f"| operation | size | nccl-tests | column | gmb NCCL | gmb/nccl-tests | gmb NCCL, rank mean | "
              f"gmb NCCL, {other} offsets | gmb MPI | NCCL/MPI |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for op, columns in ops:
            for size in sorted(columns[False]):
                ours = gmb.get(("nccl", op, ranks, size, args.offsets))
                place = bool(ours["in_place"]) if ours else op in IN_PLACE_BY_NATURE
                ref = columns[place].get(size)
                if ref is None:
                    failures.append(f"{op} {ranks} ranks {size} B: nccl-tests has no in-place figure to compare")
                    continue
                unlike = gmb.get(("nccl", op, ranks, size, other))
                mpi = gmb.get(("mpi", op, ranks, size, "fixed")) or gmb.get(("mpi", op, ranks, size, "rotating"))
                busbw = ours["busbw"] if ours else None
                ratio = busbw / ref if busbw is not None and ref > 0 else None
                print(f"| {op} | {size} | {ref:.2f} | {'in place' if place else 'out of place'} | {fmt(busbw)} | "
                      f"{fmt(ratio, 3)} | {fmt(ours.get('mean_busbw') if ours else None)} | "
                      f"{fmt(unlike['busbw'] if unlike else None)} | {fmt(mpi['busbw'] if mpi else None)} | "
                      f"{fmt(busbw / mpi['busbw'] if busbw is not None and mpi else None, 1)} |")
                if size < min_bytes:
                    continue
                if ratio is None:  # a size nccl-tests measured and gmb did not (a launch cut short): a failure
                    failures.append(f"{op} {ranks} ranks {size} B: no gmb NCCL figure with {args.offsets} offsets "
                                    f"(nccl-tests {ref:.2f} GB/s)")
                    continue
                checked += 1
                if abs(ratio - 1) * 100 > args.tolerance:
                    failures.append(f"{op} {ranks} ranks {size} B: gmb {busbw:.2f} vs nccl-tests {ref:.2f} GB/s")
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
