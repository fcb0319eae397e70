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


def nccl_tests_json(sizes_busbw: dict[int, tuple[float, float]], data_types: tuple[str, ...] = ("float",)) -> str:
    """A perf binary's -J file as nccl-tests 2.19.6 writes it (src/util.cu: one line, no spaces, doubles as "%lf",
    booleans as the strings "true"/"false", the root as "%6i"): broadcast_perf on 4 ranks."""
    results = ",".join(
        f'{{"size":{size},"count":{size // 4},"type":"{data_type}","redop":"none","root":"     0",'
        f'"out_of_place":{{"time":10.000000,"alg_bw":{oop:f},"bus_bw":{oop:f},"nwrong":0.000000}},'
        f'"in_place":{{"time":10.000000,"alg_bw":{ip:f},"bus_bw":{ip:f},"nwrong":0.000000}},'
        f'"actual_iterations":20,"experiment_name":""}}'
        for data_type in data_types for size, (oop, ip) in sorted(sizes_busbw.items()))
    devices = ",".join(f'{{"rank":{r},"group":0,"pid":{100 + r},"hostname":"node1","device":{r},'
                       f'"device_hex":"0000:1b:00","device_info":"NVIDIA H200"}}' for r in range(4))
    return ('{"version":3,"start_time":"2026-11-26 23:00:00","args":["./build/broadcast_perf","-b","1M","-e","16M",'
            '"-f","2","-g","1","-J","bc.json"],"env":["PATH=/usr/bin"],"nccl_version":22803,'
            '"config":{"nthreads":1,"ngpus":1,"minimum_bytes":1048576,"maximum_bytes":16777216,"step_factor":2,'
            '"warmup_iters":1,"iterations":20,"aggregated_iterations":1,"validation":1,"graph":0,'
            '"blocking_collectives":"false","per_iter_timing":"false","per_iter_skip":0,"parallel_init":"false",'
            f'"devices":[{devices}]}},"results":[{results}],"out_of_bounds":{{"count":0,"okay":"true"}},'
            '"average_bus_bandwidth":{"bandwidth":150.000000,"okay":"unchecked"},"errors":[],'
            '"end_time":"2026-11-26 23:00:05"}')


def gmb_records(tmp_path, name, op, busbw_by_size, offsets, ranks=4):
    results = synth.coll_results("run-" + name, [op], sorted(busbw_by_size), ranks=ranks, memory="device")
    for r in results:
        r["transport"] = "nccl"
        r["buffer_offsets"] = offsets
        scale = busbw_by_size[r["bytes"]] / r["busbw_GBps"]["median"]
        r["busbw_GBps"]["median"] *= scale
        r["time_us"]["median"] /= scale
        r["metrics"] = {"rank_mean_time_us": {"median": r["time_us"]["median"] * 0.98}}
    return synth.write_jsonl(tmp_path / f"{name}.jsonl", [synth.context("run-" + name, "coll", world_size=ranks),
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


def test_nccl_tests_json_is_read_like_its_text_output(tmp_path):
    mib = 1 << 20
    figures = {mib: (100.0, 200.0), 16 * mib: (250.0, 300.0)}
    records = gmb_records(tmp_path, "rot", "bcast", {mib: 198.0, 16 * mib: 301.0}, "rotating")
    tables = []
    for name, text in (("bc.json", nccl_tests_json(figures)), ("bc.txt", nccl_tests_output(figures))):
        (tmp_path / name).write_text(text)
        out = run("--nccl-tests", f"broadcast@4={tmp_path / name}", "--records", records)
        assert out.returncode == 0, out.stdout + out.stderr
        tables.append(out.stdout)
    assert f"| bcast | {mib} | 200.00 | in place | 198.00 | 0.990 |" in tables[0]
    assert tables[0] == tables[1]


def test_nccl_tests_json_of_several_data_types_or_no_results_exits_2(tmp_path):
    records = gmb_records(tmp_path, "x", "bcast", {1 << 20: 1.0}, "rotating")
    (tmp_path / "mixed.json").write_text(nccl_tests_json({1 << 20: (1.0, 1.0)}, ("half", "float")))
    out = run("--nccl-tests", f"broadcast@4={tmp_path / 'mixed.json'}", "--records", records)
    assert out.returncode == 2 and "several data types (float, half)" in out.stderr
    (tmp_path / "cut.json").write_text(nccl_tests_json({}))
    out = run("--nccl-tests", f"broadcast@4={tmp_path / 'cut.json'}", "--records", records)
    assert out.returncode == 2 and "no result lines" in out.stderr


def test_real_nccl_tests_json_and_text_give_one_table(tmp_path):
    """nccl-tests 2.19.6 on 2 x H200 with -J: its JSON file and its standard output, read alike."""
    data = HERE / "data" / "nccl-tests-h200-x2"
    mib = 1 << 20
    for op, nt_name, column in (("allreduce", "all_reduce", "out of place"), ("bcast", "broadcast", "in place")):
        records = gmb_records(tmp_path, op, op, {(4 * mib) << k: 200.0 for k in range(7)}, "rotating", 2)
        tables = [run("--nccl-tests", f"{nt_name}@2={data / f'{nt_name}.{kind}'}", "--records", records,
                      "--min-bytes", "4M", "--tolerance", "100") for kind in ("json", "txt")]
        assert [t.returncode for t in tables] == [0, 0], tables[0].stderr + tables[1].stderr
        assert tables[0].stdout == tables[1].stdout
        assert f"| {op} | {16 * mib} | " in tables[0].stdout and column in tables[0].stdout
