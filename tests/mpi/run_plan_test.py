#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Checks `gmb-bench plan`: several benchmarks in one launch, each block's records as a launch of its own would
write them. Used by ctest (tests/mpi/plan.cmake).

  run_plan_test.py --mpiexec M --schema S --workdir D --case CASE -- gmb-bench

CASE:
  blocks     three blocks (bandwidth, latency, a collective) and one refused (an unknown option) in one launch:
             exit 0; the status file says each block's end in plan order (0, 0, 0, 2); each measured block's file is a
             context and its results, valid against the schema, the context naming the block (plan.block, position,
             the launch's run id, the block's own command line); the refused block wrote no file; each block's sizes
             and record fields are those of the same benchmark launched alone; the blocks share the launch's buffers
             (each later block begins with the memory the launch already held: nothing freed between blocks).
  deadline   a block with a deadline too short for its sizes: the sizes after it are records with status "skipped"
             and the reason, the status line says deadline_passed; the next block runs whole. Then peaks and halo
             blocks with deadlines too short: their last sizes (peaks) and strategies (halo) skipped, said so.
  bad-plans  plans refused before MPI starts, exit 2, the message naming the line, and no file written: a line of
             two fields, a repeated ID, an unknown benchmark, a deadline that is not a number, blocks that ask for
             different --nic, an empty plan, a missing plan file, no --status; and a status file that exists already
             (left as it was).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_mpi_test import fail, validate_records  # noqa: E402


def write_plan(path, blocks):
    """blocks: (id, deadline, [benchmark, args...]) each; written one a line, tab-separated."""
    with open(path, "w") as f:
        f.write("# a plan written by run_plan_test.py\n\n")
        for block_id, deadline, args in blocks:
            f.write("\t".join([block_id, str(deadline), *args]) + "\n")


def launch(mpiexec, engine, workdir, args, timeout=600):
    argv = [mpiexec, "-n", "2", engine, *args]
    print("running:", " ".join(argv))
    proc = subprocess.run(argv, capture_output=True, text=True, errors="replace", cwd=workdir, timeout=timeout)
    sys.stdout.write(proc.stdout[-2000:])
    sys.stdout.write(proc.stderr[-4000:])
    return proc


def status_lines(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def shape(records):
    """What a block's records hold, independent of the figures: each result's size, status and fields."""
    return [(r["bytes"], r["status"], sorted(r)) for r in records[1:]]


def case_blocks(mpiexec, engine, schema, workdir):
    measured = {
        "bw": ["bw", "--sizes", "1:4K", "--iters", "50", "--warmup", "2"],
        "lat": ["latency", "--sizes", "8,1K", "--iters", "50", "--warmup", "2"],
        "coll": ["coll", "allreduce", "--sizes", "4,64", "--iters", "20", "--warmup", "2"],
    }
    plan = [("bw", 0, [*measured["bw"], "--out", "bw.jsonl", "--format", "json"]),
            ("lat", 0, [*measured["lat"], "--out", "lat.jsonl"]),
            ("refused", 0, ["bw", "--no-such-option", "--out", "refused.jsonl"]),
            ("coll", 0, [*measured["coll"], "--out", "coll.jsonl"])]
    write_plan(os.path.join(workdir, "plan.tsv"), plan)
    proc = launch(mpiexec, engine, workdir, ["plan", "plan.tsv", "--status", "status.jsonl"])
    if proc.returncode != 0:
        fail(f"plan exited {proc.returncode}, expected 0 (every block ended)")
    status = status_lines(os.path.join(workdir, "status.jsonl"))
    said = [(s["block"], s["position"], s["exit_status"]) for s in status]
    if said != [("bw", 1, 0), ("lat", 2, 0), ("refused", 3, 2), ("coll", 4, 0)]:
        fail(f"status lines {said}, expected each block once, in plan order, with its exit status")
    if "--no-such-option" not in status[2]["reason"]:
        fail(f"the refused block's reason does not name its option: {status[2]['reason']!r}")
    if os.path.exists(os.path.join(workdir, "refused.jsonl")):
        fail("the refused block wrote a records file")
    launch_ids = set()
    for position, (block_id, _deadline, args) in enumerate(plan, 1):
        if block_id == "refused":
            continue
        records = validate_records(os.path.join(workdir, f"{block_id}.jsonl"), schema, "ok")
        context = records[0]
        p = context.get("plan") or fail(f"{block_id}: the context has no plan object")
        if (p["block"], p["position"], p["blocks"]) != (block_id, position, len(plan)):
            fail(f"{block_id}: the context's plan object {p} does not name the block")
        launch_ids.add(p["launch_run_id"])
        if context["command_line"][1:] != args:
            fail(f"{block_id}: the context's command line {context['command_line'][1:]} is not the block's {args}")
        # the same benchmark alone, in a launch of its own: the same sizes and record fields
        alone = os.path.join(workdir, f"{block_id}-alone.jsonl")
        proc = launch(mpiexec, engine, workdir, [*measured[block_id], "--out", alone])
        if proc.returncode != 0:
            fail(f"{block_id} alone exited {proc.returncode}")
        alone_records = validate_records(alone, schema, "ok")
        if shape(records) != shape(alone_records):
            fail(f"{block_id}: its records in the plan differ from a launch of its own: {shape(records)} vs "
                 f"{shape(alone_records)}")
    if len(launch_ids) != 1:
        fail(f"the blocks name {len(launch_ids)} launches, expected the one that ran them")
    held = [validate_records(os.path.join(workdir, f"{b}.jsonl"), schema, "ok")[0]["plan"]["buffers_held_bytes"]
            for b in ("bw", "lat", "coll")]
    # bw's 4 KiB buffers stay with the launch: the blocks after it begin with at least that much held
    if not held[1] >= held[0] + 2 * 4096 or not held[2] >= held[1]:
        fail(f"memory held as each block began {held}: a block's buffers were given back before the next block")


def case_deadline(mpiexec, engine, schema, workdir):
    sizes = "1:4M"
    plan = [("slow", 0.2, ["latency", "--sizes", sizes, "--iters", "3000", "--warmup", "10", "--out", "slow.jsonl"]),
            ("next", 0, ["latency", "--sizes", "8", "--iters", "20", "--out", "next.jsonl"])]
    write_plan(os.path.join(workdir, "plan.tsv"), plan)
    proc = launch(mpiexec, engine, workdir, ["plan", "plan.tsv", "--status", "status.jsonl"])
    if proc.returncode != 0:
        fail(f"plan exited {proc.returncode}, expected 0")
    slow, nxt = status_lines(os.path.join(workdir, "status.jsonl"))
    if not slow["deadline_passed"] or "deadline" not in slow["reason"] or nxt["deadline_passed"]:
        fail(f"status lines do not say which block passed its deadline: {slow}, {nxt}")
    records = validate_records(os.path.join(workdir, "slow.jsonl"), schema, None)
    statuses = [r["status"] for r in records[1:]]
    if len(statuses) != 23 or "skipped" not in statuses:
        fail(f"expected 23 sizes, the last ones skipped, got {statuses}")
    first_skipped = statuses.index("skipped")
    if set(statuses[first_skipped:]) != {"skipped"}:
        fail(f"a size was measured after the deadline: {statuses}")
    if not all("deadline" in r["reason"] for r in records[1 + first_skipped:]):
        fail("a skipped size does not say why")
    validate_records(os.path.join(workdir, "next.jsonl"), schema, "ok")
    # benchmarks that are no size sweep stop at their own steps: peaks before a size, halo before a strategy
    plan = [("peaks", 0.01, ["peaks", "--sizes", "64K,1M,4M,16M,64M", "--out", "peaks.jsonl"]),
            ("halo", 0.01, ["halo", "--strategy", "all", "--out", "halo.jsonl"]),
            ("after", 0, ["latency", "--sizes", "8", "--iters", "20", "--out", "after.jsonl"])]
    write_plan(os.path.join(workdir, "plan2.tsv"), plan)
    proc = launch(mpiexec, engine, workdir, ["plan", "plan2.tsv", "--status", "status2.jsonl"])
    if proc.returncode != 0:
        fail(f"plan exited {proc.returncode}, expected 0")
    said = status_lines(os.path.join(workdir, "status2.jsonl"))
    if [(s["block"], s["deadline_passed"], s["exit_status"]) for s in said] != [("peaks", True, 0), ("halo", True, 0),
                                                                             ("after", False, 0)]:
        fail(f"status lines {said}: peaks and halo should say their deadline passed, exit 0, and the next block run")
    for block, step in (("peaks", "bytes"), ("halo", "strategy")):
        records = validate_records(os.path.join(workdir, f"{block}.jsonl"), schema, None)[1:]
        statuses = [r["status"] for r in records]
        if not statuses or statuses[-1] != "skipped" or "skipped" in statuses and \
                set(statuses[statuses.index("skipped"):]) != {"skipped"}:
            fail(f"{block}: expected its last {step}s skipped and nothing measured after one: {statuses}")
        if not all("deadline" in r["reason"] for r in records if r["status"] == "skipped"):
            fail(f"{block}: a skipped record does not say why")
    validate_records(os.path.join(workdir, "after.jsonl"), schema, "ok")


def case_bad_plans(mpiexec, engine, schema, workdir):
    lines = {
        "found 2 fields": "A\t0\n",
        "used twice": "A\t0\tlatency\t--sizes\t8\nA\t0\tbw\n",
        "unknown benchmark 'latenc'": "A\t0\tlatenc\n",
        "is not a number of seconds": "A\tsoon\tlatency\n",
        "differs from the first block's": "A\t0\tlatency\t--nic\tnone\nB\t0\tlatency\t--nic\tlo\n",
        "holds no block": "# nothing\n",
    }
    for n, (said, text) in enumerate(lines.items()):
        with open(os.path.join(workdir, f"bad{n}.tsv"), "w") as f:
            f.write(text)
        proc = launch(mpiexec, engine, workdir, ["plan", f"bad{n}.tsv", "--status", f"status{n}.jsonl"])
        if proc.returncode != 2 or said not in proc.stderr:
            fail(f"plan '{said}': exit {proc.returncode}, expected 2 with a message saying '{said}'")
        if said != "holds no block" and "line" not in proc.stderr:
            fail(f"plan '{said}': the message does not name the line")
        if os.path.exists(os.path.join(workdir, f"status{n}.jsonl")):
            fail(f"plan '{said}': a status file was written")
    proc = launch(mpiexec, engine, workdir, ["plan", "no-such-plan.tsv", "--status", "status-missing.jsonl"])
    if proc.returncode != 2 or "cannot read the plan" not in proc.stderr:
        fail(f"a missing plan file: exit {proc.returncode}, expected 2 saying it cannot be read")
    write_plan(os.path.join(workdir, "good.tsv"), [("A", 0, ["latency", "--sizes", "8", "--out", "a.jsonl"])])
    proc = launch(mpiexec, engine, workdir, ["plan", "good.tsv"])
    if proc.returncode != 2 or "needs --status" not in proc.stderr:
        fail(f"a plan without --status: exit {proc.returncode}, expected 2 saying it needs --status")
    with open(os.path.join(workdir, "taken.jsonl"), "w") as f:
        f.write("earlier status\n")
    proc = launch(mpiexec, engine, workdir, ["plan", "good.tsv", "--status", "taken.jsonl"])
    if proc.returncode != 2 or "never overwritten" not in proc.stderr:
        fail(f"an existing status file: exit {proc.returncode}, expected 2 saying it is never overwritten")
    with open(os.path.join(workdir, "taken.jsonl")) as f:
        if f.read() != "earlier status\n":
            fail("the existing status file was changed")
    if os.path.exists(os.path.join(workdir, "a.jsonl")):
        fail("a block ran although the status file could not be made")


CASES = {"blocks": case_blocks, "deadline": case_deadline, "bad-plans": case_bad_plans}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--schema", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--case", required=True, choices=sorted(CASES))
    parser.add_argument("engine", nargs="+")
    args = parser.parse_args()
    engine = args.engine[-1]
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    CASES[args.case](args.mpiexec, engine, args.schema, args.workdir)
    print("ok")


if __name__ == "__main__":
    main()
