# SPDX-License-Identifier: BSD-3-Clause
"""reference/nccl_tests_compare.py: gmb's NCCL figures set beside nccl-tests' like with like (in-place column for an
in-place call, rotating buffer offsets), judged within a tolerance from --min-bytes up."""

import subprocess
import sys

import synth
from conftest import HERE

SCRIPT = HERE.parent.parent / "reference" / "nccl_tests_compare.py"


def nccl_tests_output(sizes_busbw: dict[int, tuple[float, float]]) -> str:
    """A perf binary's standard output: per size, out-of-place then in-place busbw (time and algbw made up)."""
    lines = ["# nccl-tests", "#       size         count      type   redop    root     time   algbw   busbw #wrong"]
    for size, (oop, ip) in sorted(sizes_busbw.items()):
        lines.append(f"  {size:>12} {size // 4:>12}     float     sum      -1    10.0  {oop:6.2f}  {oop:6.2f}      0"
                     f"    10.0  {ip:6.2f}  {ip:6.2f}      0")
    return "\n".join(lines + ["# Avg bus bandwidth    : 1.0", ""])


def gmb_records(tmp_path, name, op, busbw_by_size, offsets):
    results = synth.coll_results("run-" + name, [op], sorted(busbw_by_size), ranks=4, memory="device")
    for r in results:
        r["transport"] = "nccl"
        r["buffer_offsets"] = offsets
        scale = busbw_by_size[r["bytes"]] / r["busbw_GBps"]["median"]
        r["busbw_GBps"]["median"] *= scale
        r["time_us"]["median"] /= scale
        r["metrics"] = {"rank_mean_time_us": {"median": r["time_us"]["median"] * 0.98}}
    return synth.write_jsonl(tmp_path / f"{name}.jsonl", [synth.context("run-" + name, "coll", world_size=4),
                                                           *results])


def run(*args):
    return subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], capture_output=True, text=True)


def test_bcast_is_compared_with_the_in_place_column_and_rotating_records_are_judged(tmp_path):
    mib = 1 << 20
    nt = tmp_path / "bc.txt"
    nt.write_text(nccl_tests_output({mib: (100.0, 200.0), 16 * mib: (250.0, 300.0)}))
    rotating = gmb_records(tmp_path, "rot", "bcast", {mib: 198.0, 16 * mib: 301.0}, "rotating")
    fixed = gmb_records(tmp_path, "fix", "bcast", {mib: 240.0, 16 * mib: 305.0}, "fixed")
    out = run("--nccl-tests", f"broadcast@4={nt}", "--records", rotating, fixed)
    assert out.returncode == 0, out.stdout + out.stderr
    row = next(line for line in out.stdout.splitlines() if line.startswith(f"| bcast | {mib} "))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[2:6] == ["200.00", "in place", "198.00", "0.990"]
    assert cells[7] == "240.00"  # the fixed-offset figure shown beside it, not judged
    assert "2 gmb NCCL figures at >= 1M: all within 5.0% of nccl-tests" in out.stdout


def test_a_figure_outside_the_tolerance_or_missing_fails(tmp_path):
    mib = 1 << 20
    nt = tmp_path / "ar.txt"
    nt.write_text(nccl_tests_output({mib: (100.0, 100.0), 4 * mib: (200.0, 200.0)}))
    records = gmb_records(tmp_path, "ar", "allreduce", {mib: 120.0}, "rotating")
    out = run("--nccl-tests", f"all_reduce@4={nt}", "--records", records)
    assert out.returncode == 1
    assert f"allreduce 4 ranks {mib} B: gmb 120.00 vs nccl-tests 100.00 GB/s" in out.stdout
    assert f"allreduce 4 ranks {4 * mib} B: no gmb NCCL figure with rotating offsets" in out.stdout
    fixed_only = run("--nccl-tests", f"all_reduce@4={nt}", "--records", records, "--offsets", "fixed")
    assert fixed_only.returncode == 1 and "no gmb NCCL figure with fixed offsets" in fixed_only.stdout


def test_bad_input_exits_2(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n")
    records = gmb_records(tmp_path, "x", "allreduce", {1 << 20: 1.0}, "rotating")
    out = run("--nccl-tests", f"all_reduce@4={empty}", "--records", records)
    assert out.returncode == 2 and "no result lines" in out.stderr
    out = run("--nccl-tests", f"allreduce@4={empty}", "--records", records)
    assert out.returncode == 2 and "expected NAME[@RANKS]=FILE" in out.stderr
