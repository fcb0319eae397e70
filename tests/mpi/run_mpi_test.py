#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Runs one gmb-bench launch and checks it: exit status, an optional stderr pattern, and every
record of the output file against the JSON Schema and against the engine's description of the
benchmark (`gmb-bench list --format json`). Used by ctest (tests/CMakeLists.txt).

  run_mpi_test.py --mpiexec M --np N --exit E --schema S --workdir D [--stderr REGEX] [--stdout REGEX]
                  [--expect-status ok|unsupported|failed] [--expect-point BYTES=STATUS[=REASON_REGEX] ...]
                  [--max-rss-mb MB] [--env-invalid-utf8 NAME] [--expect-sizes B,B,...]
                  [--expect-precision TARGET --max-iterations N] [--expect-interface NAME]
                  [--expect-nic NAME|nearest] -- gmb-bench ARGS...

The literal argument OUT in ARGS is replaced by a fresh records path inside --workdir; the
checker then requires that file to hold a valid context line followed by result lines.
"""
import argparse
import json
import os
import re
import resource
import select
import shutil
import subprocess
import tempfile
import sys
import time


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def validate_records(path, schema_path, expect_status):
    try:
        import jsonschema
    except ImportError:
        fail("python3 module 'jsonschema' is missing (apt-get install python3-jsonschema)")
    with open(schema_path) as f:
        schema = json.load(f)
    validator = jsonschema.Draft202012Validator(schema)
    with open(path, "rb") as f:
        raw = f.read()
    try:
        text = raw.decode("utf-8")  # strict: records are always valid UTF-8
    except UnicodeDecodeError as e:
        fail(f"{path} is not valid UTF-8: {e}")
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        fail(f"{path} is empty")
    records = [json.loads(line) for line in lines]
    for k, record in enumerate(records):
        errors = sorted(validator.iter_errors(record), key=str)
        if errors:
            fail(f"record {k} of {path} does not match the schema: {errors[0].message}")
    if records[0]["type"] != "context":
        fail("first record is not the context line")
    results = records[1:]
    if not results:
        fail("no result records")
    if any(r["type"] != "result" for r in results):
        fail("a record after the first is not a result")
    if expect_status and any(r["status"] != expect_status for r in results):
        bad = next(r for r in results if r["status"] != expect_status)
        fail(f"expected every result to have status {expect_status}, got {bad['status']} ({bad.get('reason', '')})")
    for r in results:
        if r["status"] == "ok" and r.get("validation") == "failed":
            fail(f"validation failed: {r.get('validation_error')}")
    return records


STATISTICS = ("time_us", "bandwidth_GBps", "busbw_GBps", "message_rate_Mps")


def check_description(results, engine):
    """Every result agrees with the engine's description of its benchmark: the statistics objects it
    carries are described metrics, and it names the described headline exactly when it carries it."""
    proc = subprocess.run([engine, "list", "--format", "json"], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        fail(f"{engine} list --format json exited {proc.returncode}: {proc.stderr}")
    description = json.loads(proc.stdout)
    benchmarks = {b["name"]: b for b in description["benchmarks"]}
    for r in results:
        described = benchmarks.get(r["benchmark"])
        if described is None:
            fail(f"benchmark {r['benchmark']} is not in the engine's description")
        undescribed = [s for s in STATISTICS if s in r and s not in described["metrics"]]
        if undescribed:
            fail(f"{r['benchmark']} record carries {undescribed}, not among its described metrics {described['metrics']}")
        headline = described["headline"]
        expected = headline if headline is not None and headline in r else None
        if r.get("headline") != expected:
            fail(f"{r['benchmark']} record's headline is {r.get('headline')!r}, expected {expected!r} "
                 f"(described: {headline!r})")


def check_points(results, expected_points):
    """Each BYTES=STATUS[=REASON_REGEX]: every result of that size has that status (and a matching reason)."""
    for point in expected_points:
        size_text, status, *reason = point.split("=", 2)
        matching = [r for r in results if r["bytes"] == int(size_text)]
        if not matching:
            fail(f"no result record for {size_text} bytes")
        for r in matching:
            if r["status"] != status:
                fail(f"{size_text} bytes: status {r['status']} ({r.get('reason', '')}), expected {status}")
            if reason and not re.search(reason[0], r.get("reason", "")):
                fail(f"{size_text} bytes: reason {r.get('reason', '')!r} does not match /{reason[0]}/")


def check_sizes(records, expected):
    """The sizes measured (the results' bytes, in order) and the context's options.common.sizes are `expected`."""
    sizes = [int(s) for s in expected.split(",")]
    common = records[0]["options"]["common"].get("sizes")
    if common != sizes:
        fail(f"the context's options.common.sizes is {common}, expected {sizes}")
    measured = []
    for r in records[1:]:
        if not measured or measured[-1] != r["bytes"]:
            measured.append(r["bytes"])
    if measured != sizes:
        fail(f"the result records' sizes are {measured}, expected {sizes}")


STOPS = ("converged", "iteration cap", "time cap")


def check_precision(records, target, max_iterations):
    """--precision: every measured result says how its repetitions stopped, within the caps, and the context's
    options say the run was adaptive; without it (target None) no record carries a precision object. Never
    whether a point converged, nor any timing: host timings on a shared CI machine are noise."""
    results = records[1:]
    if target is None:
        carrying = [r["bytes"] for r in results if "precision" in r]
        if carrying:
            fail(f"results of sizes {carrying} carry 'precision' without --precision")
        return
    common = records[0]["options"]["common"]
    if not isinstance(common.get("precision"), dict) or abs(common["precision"]["target"] - target) > 1e-12:
        fail(f"the context's options.common.precision is {common.get('precision')!r}, expected target {target}")
    for r in results:
        if r["status"] != "ok":
            continue
        p = r.get("precision")
        if not isinstance(p, dict):
            fail(f"{r['bytes']} bytes: no precision object")
        if abs(p["target"] - target) > 1e-12 or p["stopped"] not in STOPS or not p["max_seconds"] > 0:
            fail(f"{r['bytes']} bytes: precision {p}")
        if p["stopped"] == "converged" and not (p["achieved"] is not None and p["achieved"] <= target):
            fail(f"{r['bytes']} bytes: converged with achieved {p['achieved']} over the target {target}")
        iterations, batch = r["iterations"], r["batch"]
        if not 0 < iterations <= max_iterations or iterations % batch:
            fail(f"{r['bytes']} bytes: {iterations} iterations in batches of {batch}, cap {max_iterations}")
        samples = r.get("time_us", {}).get("n", iterations // batch)
        if samples * batch != iterations:
            fail(f"{r['bytes']} bytes: {samples} samples of {batch} are not the {iterations} iterations recorded")
        if p["stopped"] == "converged" and samples < 10:
            fail(f"{r['bytes']} bytes: converged on {samples} samples, fewer than the 10 the rule requires")


def statistics_objects(value):
    """Every statistics object (one with a ci95_low) anywhere in a record, nested ones (metrics, compensation) too."""
    if isinstance(value, dict):
        if "ci95_low" in value:
            yield value
        for v in value.values():
            yield from statistics_objects(v)
    elif isinstance(value, list):
        for v in value:
            yield from statistics_objects(v)


def check_intervals(results):
    """Every statistics object has a 95 % interval of its median exactly where one exists (6 samples or more),
    around the median, and none below (nulls and a ci_note); a size whose fixed iterations made fewer than the
    minimum of samples says so consistently in sample_minimum."""
    for r in results:
        for s in statistics_objects(r):
            where = f"{r['benchmark']} {r['bytes']} bytes, n={s['n']}"
            if s["n"] < 6:
                if s["ci95_low"] is not None or s["ci95_high"] is not None or not s.get("ci_note"):
                    fail(f"{where}: an interval {s['ci95_low']}..{s['ci95_high']} below 6 samples, or no ci_note")
            elif s["ci95_low"] is None or not s["ci95_low"] <= s["median"] <= s["ci95_high"] or "ci_note" in s:
                fail(f"{where}: interval {s['ci95_low']}..{s['ci95_high']} around median {s['median']}")
        m = r.get("sample_minimum")
        if m is not None:
            n = r[r["headline"]]["n"] if r.get("headline") in r else m["taken"]
            reached = m["taken"] >= m["minimum"]
            if m["taken"] != n or m["asked"] >= m["minimum"] or reached != (m["stopped"] == "minimum reached"):
                fail(f"{r['benchmark']} {r['bytes']} bytes: sample_minimum {m} with {n} samples")


def check_min_samples(results, minimum):
    """Every measured result's headline statistics rest on at least ``minimum`` samples."""
    for r in results:
        if r["status"] != "ok":
            continue
        if r.get("headline") not in r:
            fail(f"{r['benchmark']} {r['bytes']} bytes: no headline statistics")
        if r[r["headline"]]["n"] < minimum:
            fail(f"{r['benchmark']} {r['bytes']} bytes: {r[r['headline']]['n']} samples, fewer than {minimum}")


def check_interface(context, name):
    for rank in context["ranks"]:
        names = [d["name"] for d in rank["network"]["interfaces"]["devices"]]
        if name not in names:
            fail(f"rank {rank['rank']}'s network interfaces {names} do not include {name}")


def check_nic(context, expected):
    """--nic: every rank recorded its choice: the card named `expected`, or for "nearest" one of its host's
    interfaces that is up and not loopback; the variables it set are in its network facts' device selection, and
    none of them in the context's environment (the launch's, without what --nic set)."""
    for rank in context["ranks"]:
        pinning = rank["network"].get("nic_pinning")
        if not pinning:
            fail(f"rank {rank['rank']} recorded no nic_pinning")
        devices = {d["name"]: d for d in rank["network"]["interfaces"]["devices"]}
        chosen = pinning["chosen"]
        if expected == "nearest":
            nic = devices.get(chosen)
            if nic is None or nic.get("loopback") or nic.get("operstate") == "down":
                fail(f"rank {rank['rank']}: --nic nearest chose {chosen!r}, not an interface up other than loopback")
        elif chosen != expected:
            fail(f"rank {rank['rank']}: chose {chosen!r}, expected {expected!r}")
        if pinning["local_rank"] != rank["local_rank"]:
            fail(f"rank {rank['rank']}: nic_pinning.local_rank {pinning['local_rank']} is not its local rank")
        variables = {name: d["set"] for name, d in pinning["variables"].items() if "set" in d}
        if variables.get("OMPI_MCA_btl_tcp_if_include") != chosen or variables.get("UCX_NET_DEVICES") != chosen:
            fail(f"rank {rank['rank']}: the variables set {variables} do not name {chosen!r}")
        selection = rank["network"]["device_selection"]
        if any(selection.get(name) != value for name, value in variables.items()):
            fail(f"rank {rank['rank']}: device selection {selection} lacks what --nic set ({variables})")
        if set(variables) & set(context["environment"]):
            fail(f"the context's environment holds what --nic set: {sorted(set(variables) & set(context['environment']))}")


def run_with_rank0_reader_leaving(argv, workdir, env, lines, timeout):
    """Runs `argv` (mpiexec -n N gmb-bench ...) with rank 0's stdout a named pipe that this process reads: `lines`
    lines, then it closes it, as `| head -N` would. Rank 0 writes into that pipe itself, with no launcher forwarding
    its lines, so whenever the reader goes (before, between or during the engine's flushes) the outcome is the
    engine's alone: the completed process, its stdout being the lines read."""
    fifo = os.path.join(workdir, "rank0-stdout")
    os.mkfifo(fifo)
    # Rank 0 (Open MPI's or the PMI rank variable) opens the pipe, named in the environment the launcher passes on to
    # the ranks of this host; the other ranks keep the launcher's stdout.
    rank0_to_fifo = ('[ "${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}" = 0 ] && exec "$@" >"$GMB_RANK0_STDOUT"; '
                     'exec "$@"')
    env = dict(os.environ if env is None else env, GMB_RANK0_STDOUT=fifo)
    argv = argv[:3] + ["sh", "-c", rank0_to_fifo, "sh"] + argv[3:]  # mpiexec -n N, then the ranks' command
    # Opened for reading and writing, never blocking: rank 0's open finds a reader, and a launch that dies before
    # rank 0 opens the pipe leaves this reader waiting for the launch, not for a writer.
    reader = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    with tempfile.TemporaryFile(mode="w+") as err, tempfile.TemporaryFile(mode="w+") as forwarded:
        launched = subprocess.Popen(argv, stdout=forwarded, stderr=err, text=True, cwd=workdir, env=env)
        read = b""
        deadline = time.monotonic() + timeout
        while read.count(b"\n") < lines and time.monotonic() < deadline:
            ready, _, _ = select.select([reader], [], [], 0.2)
            if ready:
                read += os.read(reader, 1 << 16)
            elif launched.poll() is not None:
                break
        head = b"".join(read.splitlines(keepends=True)[:lines])
        os.close(reader)
        try:
            launched.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            launched.kill()
            raise
        err.seek(0)
        forwarded.seek(0)
        return subprocess.CompletedProcess(argv, launched.returncode,
                                           head.decode(errors="replace") + forwarded.read(), err.read())


def run_with_reader_gone(argv, workdir, env, timeout):
    """Runs `argv` with its stdout a pipe whose reader has left before the launch: whatever reaches that pipe, the
    engine's lines forwarded by the launcher included, meets a closed pipe. The completed process (no stdout)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        with tempfile.TemporaryFile(mode="w+") as err:
            proc = subprocess.run(argv, stdout=write_end, stderr=err, cwd=workdir, env=env, timeout=timeout)
            err.seek(0)
            return subprocess.CompletedProcess(argv, proc.returncode, "", err.read())
    finally:
        os.close(write_end)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mpiexec", required=True)
    parser.add_argument("--np", type=int, required=True)
    parser.add_argument("--exit", type=int, required=True, dest="expect_exit")
    parser.add_argument("--schema", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--stderr")
    parser.add_argument("--stdout")
    parser.add_argument("--expect-status")
    # A hang, not a slow machine: MPICH's ranks poll without yielding, and 4 of them on 2 cores that other jobs
    # share took a minute for a launch of a few seconds.
    parser.add_argument("--timeout", type=int, default=900)
    parser.add_argument("--expect-point", action="append", default=[],
                        help="BYTES=STATUS[=REASON_REGEX]: the result record(s) of that size have that status (and reason)")
    parser.add_argument("--max-rss-mb", type=int,
                        help="the largest process of the launch (ranks included) stayed under this resident size")
    parser.add_argument("--env-invalid-utf8",
                        help="NAME: launch with the environment variable NAME holding a byte that is not UTF-8; "
                             "the context record must carry it with U+FFFD in its place")
    parser.add_argument("--precreate-out", action="store_true",
                        help="create OUT before the run; it must come out byte-for-byte unchanged")
    parser.add_argument("--expect-precision", type=float,
                        help="TARGET: the run used --precision TARGET; every measured result has a precision object")
    parser.add_argument("--max-iterations", type=int, default=0,
                        help="with --expect-precision: the iteration cap no measured result may exceed")
    parser.add_argument("--expect-sizes",
                        help="B,B,...: the result records' sizes in order, and the context's options.common.sizes")
    parser.add_argument("--expect-interface",
                        help="NAME: every rank's network facts in the context list the network interface NAME")
    parser.add_argument("--expect-nic",
                        help="NAME or nearest: every rank's network facts record the --nic choice (check_nic)")
    parser.add_argument("--stdout-reader-lines", type=int,
                        help="N: rank 0's stdout is read by a reader that stops after N lines and closes it, as "
                             "`| head -N` does")
    parser.add_argument("--stdout-reader-gone", action="store_true",
                        help="the launch's stdout is a pipe whose reader left before the launch")
    parser.add_argument("--min-samples", type=int, default=0,
                        help="every measured result's headline statistics rest on at least this many samples")
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command and args.command[0] == "--" else args.command

    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    out_path = os.path.join(args.workdir, "records.jsonl")
    command = [out_path if a == "OUT" else a for a in command]
    sentinel = "earlier results that must survive\n"
    if args.precreate_out:
        with open(out_path, "w") as f:
            f.write(sentinel)
    argv = [args.mpiexec, "-n", str(args.np)] + command
    print("running:", " ".join(argv))
    env = None
    if args.env_invalid_utf8:
        env = dict(os.environb)
        env[args.env_invalid_utf8.encode()] = b"bad\xffbyte"
    try:
        if args.stdout_reader_lines is not None:
            proc = run_with_rank0_reader_leaving(argv, args.workdir, env, args.stdout_reader_lines, args.timeout)
        elif args.stdout_reader_gone:
            proc = run_with_reader_gone(argv, args.workdir, env, args.timeout)
        else:
            proc = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=args.timeout,
                                  cwd=args.workdir, env=env)
    except subprocess.TimeoutExpired:
        fail(f"timed out after {args.timeout} s (a hang)")
    sys.stdout.write(proc.stdout)
    sys.stdout.write(proc.stderr)
    if args.max_rss_mb:
        # The largest descendant that was waited for: mpiexec and, through it, every rank.
        rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        if rss_mb > args.max_rss_mb:
            fail(f"a process of the launch reached {rss_mb:.0f} MB resident, over {args.max_rss_mb} MB")
        print(f"largest process: {rss_mb:.0f} MB resident")
    if proc.returncode != args.expect_exit:
        fail(f"exit status {proc.returncode}, expected {args.expect_exit}")
    if args.stderr and not re.search(args.stderr, proc.stderr):
        fail(f"stderr does not match /{args.stderr}/")
    if args.stdout and not re.search(args.stdout, proc.stdout):
        fail(f"stdout does not match /{args.stdout}/")
    if args.precreate_out:
        with open(out_path) as f:
            if f.read() != sentinel:
                fail("the existing output file was modified")
    elif "OUT" in args.command:
        if args.expect_exit in (0, 3, 4):
            records = validate_records(out_path, args.schema, args.expect_status)
            check_description(records[1:], command[0])
            check_points(records[1:], args.expect_point)
            check_precision(records, args.expect_precision, args.max_iterations)
            check_intervals(records[1:])
            if args.min_samples:
                check_min_samples(records[1:], args.min_samples)
            if args.expect_sizes:
                check_sizes(records, args.expect_sizes)
            if args.expect_interface:
                check_interface(records[0], args.expect_interface)
            if args.expect_nic:
                check_nic(records[0], args.expect_nic)
            if args.env_invalid_utf8:
                got = records[0]["environment"].get(args.env_invalid_utf8)
                if got != "bad\ufffdbyte":
                    fail(f"context environment {args.env_invalid_utf8} is {got!r}, expected 'bad\\ufffdbyte'")
        elif os.path.exists(out_path) and os.path.getsize(out_path) > 0 and args.expect_exit == 2:
            fail("a usage error still wrote records")
    print("PASS")


if __name__ == "__main__":
    main()
