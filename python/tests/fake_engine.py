# SPDX-License-Identifier: BSD-3-Clause
"""A stand-in for gmb-bench: same command line, describes itself as the engine does (``list --format json``:
data/engine/host.json, a host-only build, to the gmb.engine/1 contract) and writes schema-valid synthetic records
(synth) for every benchmark it describes, shaped by the benchmark's family and headline.
FAKE_HANG=<benchmark> makes that benchmark hang (timeout tests); FAKE_FAIL=<benchmark> makes it exit 1;
FAKE_DAMAGE=<benchmark>:cut ends its record file in the middle of the last record, <benchmark>:bad-bytes writes a
result whose bytes is "lots".
FAKE_CUDA=1: a CUDA build (every memory kind available); FAKE_NCCL=<version>: built with NCCL, which makes
--transport nccl work as the engine's contract says (device memory only, else status "unsupported" and exit 3;
every result of a benchmark with the NCCL transport gets "transport"; the context's options.benchmark.transport, and
the context's top-level nccl: {available, version} as the engine writes them). FAKE_WITHOUT=<name,...>: an older or
other build that does not list those benchmarks; FAKE_OLD_LIST=1: an engine built before it described itself
(``list`` without schema, families, kind properties, collectives). FAKE_MPI_LIBRARY=<path>: the MPI library object
the engine says it loaded (``mpi.library_object``, ``ranks[].mpi_library``, and ``list``'s ``mpi``); unset: an
engine too old to say. FAKE_MPI3=1: an engine built against an MPI-3 library (``mpi.features`` unavailable, with the
engine's reasons): partitioned points and persistent collectives are "unsupported" with the reason. As the engine, the
context records the environment variables of the prefixes its description lists (environment_prefixes: UCX_, OMPI_,
NCCL_ ...) and the benchmark's
options (options.benchmark); FAKE_HOSTS=<n>: the ranks ran on n hosts (node0, node1, ...); FAKE_WORLD_SIZE=<n>: the
ranks of the launch (the fake launcher sets it from -np for collectives). Settings that change figures, as a library's
knobs do: FAKE_KNOB_EFFECT="NAME=VALUE@F;..." makes a launch whose environment has NAME=VALUE F times faster (F < 1:
slower); FAKE_KNOB_BREAK="NAME=VALUE;..." makes its results fail as wrong data; FAKE_DOCTOR_CRASH="NAME=VALUE;..."
makes the doctor crash (SIGSEGV) with it. FAKE_STEADY=1: every launch of a point gives the same figures.
RMA (family rma) takes --op/--sync/--win; partitioned ones --partitions, part_overlap --ready and --compute-sweep
(and a GPU: unsupported on a host-only build); latency, bw, bibw, mbw and coll take --persistent (the regular form,
then the persistent one). ``plan PLAN --status FILE`` runs a plan's blocks (plan())."""

import json
import os
import sys
import time
import uuid
import zlib
from pathlib import Path

import synth

from gmb.engine.description import EngineDescription

HOST = Path(__file__).parent / "data" / "engine" / "host.json"


def description(cuda: bool = False, nccl: str | None = None, without=(), mpi3: bool = False) -> dict:
    """The fake engine's description: host.json, with ``cuda`` a CUDA build (every memory kind available), with
    ``nccl`` (its version) built with NCCL, ``without`` these benchmarks, with ``mpi3`` built against an MPI-3
    library (no partitioned communication, no persistent collectives)."""
    d = json.loads(HOST.read_text())
    if mpi3:
        for name, feature in d["mpi"]["features"].items():
            feature.update(available=False, reason=synth.MPI3_REASONS[name])
    if cuda:
        for k in d["memory_kinds"]:
            k["available"] = True
            k.pop("reason", None)
        d["features"].update(cuda=True, gpu_usable=True)
        d["features"].pop("gpu_reason", None)
    if nccl:
        d["features"].update(nccl=True, nccl_version=nccl)
        d["features"].pop("nccl_reason", None)
    d["benchmarks"] = [b for b in d["benchmarks"] if b["name"] not in without]
    return d


def describe(cuda: bool = False, nccl: str | None = None, without=(), mpi3: bool = False) -> EngineDescription:
    """description() as the harness reads it."""
    return EngineDescription(description(cuda, nccl, without, mpi3), source="the fake engine")


def capabilities() -> dict:
    without = [w for w in os.environ.get("FAKE_WITHOUT", "").split(",") if w]
    return description(bool(os.environ.get("FAKE_CUDA")), os.environ.get("FAKE_NCCL"), without,
                       bool(os.environ.get("FAKE_MPI3")))


def old_description(d: dict) -> dict:
    """What an engine built before it described itself printed: names, summaries and rank bounds of its benchmarks,
    its memory kinds without their properties, its features."""
    return {"version": d["version"], "git_revision": d["git_revision"],
            "benchmarks": [{k: b[k] for k in ("name", "summary", "min_ranks", "max_ranks", "even_ranks")}
                           for b in d["benchmarks"]],
            "memory_kinds": [{k: v for k, v in m.items() if k in ("name", "description", "available", "reason")}
                             for m in d["memory_kinds"]],
            "features": d["features"]}


def mpi_identity():
    """The ``mpi`` object of ``list`` (and of the context, less the awareness): version string and library object."""
    path = os.environ.get("FAKE_MPI_LIBRARY")
    out = {"library_version": os.environ.get("FAKE_LIBRARY_VERSION", "Open MPI v9.9.0")}
    if path:
        out["library_object"] = {"loaded": path, "loaded_realpath": path, "linked": path, "linked_realpath": path,
                                 "matches_build": True}
    return out


def world_size() -> int:
    """The ranks the fake launcher was asked for (FAKE_WORLD_SIZE), else 2."""
    return int(os.environ.get("FAKE_WORLD_SIZE", "2"))


def opt(args, name, default=None):
    return args[args.index(name) + 1] if name in args else default


# the options every benchmark shares (options.common) and those other fields of a record name
NOT_BENCHMARK_OPTIONS = {"sizes", "iters", "warmup", "iters-large", "warmup-large", "large-size", "batch", "validate",
                         "precision", "max-seconds", "out", "format", "memory-limit", "fresh-buffers", "nic"}


# the engine's names for some options in its context
CONTEXT_NAMES = {"op": "operation", "win": "window_creation"}


def benchmark_options(args) -> dict:
    """The benchmark's own options given as --NAME VALUE, as the engine's context lists them (NAME with _)."""
    out = {}
    for i, a in enumerate(args[:-1]):
        name = a[2:]
        if a.startswith("--") and name not in NOT_BENCHMARK_OPTIONS and not args[i + 1].startswith("--"):
            value = args[i + 1]
            out[CONTEXT_NAMES.get(name, name.replace("-", "_"))] = int(value) if value.isdigit() else value
    return out


# the calls --persistent measures, by family
PERSISTENT_CALLS = {"pt2pt": "MPI_Send_init/MPI_Recv_init", "multi-pair": "MPI_Send_init/MPI_Recv_init",
                    "collective": "MPI_Allreduce_init"}


def results(run_id, info, args, send, recv, scale, seed, cuda, features):
    """Synthetic results of one launch of the benchmark ``info`` describes (its family and headline); with
    --persistent the regular records, then the persistent form's."""
    regular = _regular_results(run_id, info, args, send, recv, scale, seed, cuda, features)
    if "--persistent" not in args:
        return regular
    if info["family"] == "collective" and not features["persistent_collectives"]["available"]:
        reason = features["persistent_collectives"]["reason"]
        return regular + [{"schema": synth.SCHEMA_ID, "type": "result", "run_id": run_id, "benchmark": info["name"],
                           "status": "unsupported", "reason": reason, "bytes": 0, "operation": op,
                           "variant": "persistent"} for op in sorted({r["operation"] for r in regular})]
    return regular + synth.persistent_results(regular, PERSISTENT_CALLS[info["family"]])


def _path(send, recv):
    return "nvlink" if (send, recv) == ("device", "device") else "host"


def _regular_results(run_id, info, args, send, recv, scale, seed, cuda, features):
    bench, family, head = info["name"], info["family"], info["headline"]
    sizes = synth.pow2_sizes(1, 64 << 10)
    ops = args[0].split(",") if info["operations"] and args and not args[0].startswith("-") else ["allreduce", "bcast"]
    if family == "rma":
        return synth.rma_results(run_id, bench, sizes, send, recv, _path(send, recv), opt(args, "--op", "put"),
                                 opt(args, "--sync", "flush"), opt(args, "--win", "create"), scale, seed, head)
    if family == "partitioned":
        partitions = [int(p) for p in opt(args, "--partitions", "1,4,16").split(",")]
        if not features["partitioned"]["available"]:
            return [synth.unsupported(run_id, bench, features["partitioned"]["reason"], send, recv)]
        if bench != "part_overlap":
            return synth.partitioned_results(run_id, bench, sizes, send, recv, _path(send, recv), partitions, seed,
                                             head)
        if not cuda:
            return [synth.unsupported(run_id, bench, "needs a GPU runtime: this gmb-bench was built without CUDA",
                                      send, recv)]
        ready = opt(args, "--ready", "both")
        modes = ["after-kernel", "per-block"] if ready == "both" else [ready]
        return synth.part_overlap_results(run_id, sizes[10:], send, recv, _path(send, recv), partitions, modes,
                                          "--compute-sweep" in args, seed)
    if family in ("pt2pt", "multi-pair", "managed"):
        path = _path(send, recv)
        recs = synth.pt2pt_results(run_id, bench, sizes, send, recv, path, scale=scale, seed=seed, headline=head)
        if send.startswith("managed") or recv.startswith("managed"):
            for r in recs:
                r["placement"] = {side: kind.partition(":")[2] if kind.startswith("managed") else "none"
                                  for side, kind in (("send", send), ("recv", recv))}
        return recs
    if family == "collective":
        return synth.coll_results(run_id, ops, sizes[2:], world_size(), scale=scale, memory=opt(args, "--mem", "host"),
                                  seed=seed or 3)  # FAKE_STEADY: the same figures in every launch, as before
    if family == "nbc":
        return [r for op in ops for r in synth.nbc_results(run_id, op, sizes[2:])]
    if family == "peaks":
        return synth.peaks_results(run_id, cuda=cuda)
    if family == "halo":
        return synth.halo_results(run_id, bench, sizes[2:], opt(args, "--mem", "host"), opt(args, "--strategy", "staged-pinned"))
    return []  # doctor: a context only


def _set(listed: str) -> list[str]:
    """The entries of a FAKE_KNOB_* list ("NAME=VALUE[@F];...") whose NAME=VALUE this process's environment has."""
    out = []
    for entry in filter(None, listed.split(";")):
        name, _, value = entry.partition("@")[0].partition("=")
        if os.environ.get(name) == value:
            out.append(entry)
    return out


def plan(argv) -> int:
    """``plan PLAN --status FILE``, as the engine runs it: each block (one a line: ID, deadline, arguments) as a launch
    of its own would run, a status line as each ends. A block that hangs (FAKE_HANG) hangs the launch; one that fails
    (FAKE_FAIL) ends it with exit status 1, as a crash would, the blocks after it not run; FAKE_OLD_LIST: an engine
    without plans."""
    if os.environ.get("FAKE_OLD_LIST"):
        print("gmb-bench: unknown benchmark 'plan'", file=sys.stderr)
        return 2
    plan_file, status = argv[0], opt(argv, "--status")
    if status is None or os.path.exists(status):
        print("gmb-bench plan: error: --status missing or exists", file=sys.stderr)
        return 2
    blocks = [line.rstrip("\n").split("\t") for line in Path(plan_file).read_text().splitlines(keepends=True)
              if line.strip() and not line.startswith("#")]
    with open(status, "x") as said:
        for position, (block, _deadline, *args) in enumerate(blocks, 1):
            t0 = time.monotonic()
            if os.environ.get("FAKE_FAIL") == args[0]:
                print(f"gmb-bench: FATAL on host node0 rank 0: MPI_Send failed (fake, block {block})", file=sys.stderr)
                return 1
            code = main(args)
            said.write(json.dumps({"block": block, "position": position, "benchmark": args[0], "exit_status": code,
                                   "wall_s": time.monotonic() - t0, "deadline_passed": False, "reason": ""}) + "\n")
            said.flush()
    return 0


def main(argv):
    if argv[:1] == ["plan"]:
        return plan(argv[1:])
    if argv[:1] == ["list"]:
        caps = capabilities()
        if os.environ.get("FAKE_MPI_LIBRARY"):
            caps["mpi"].update(mpi_identity())
        print(json.dumps(old_description(caps) if os.environ.get("FAKE_OLD_LIST") else caps))
        return 0
    bench, args = argv[0], argv[1:]
    if os.environ.get("FAKE_HANG") == bench:
        time.sleep(3600)
    if os.environ.get("FAKE_FAIL") == bench:
        print("gmb-bench: MPI_Send failed (fake)", file=sys.stderr)
        return 1
    caps = capabilities()
    info = next((b for b in caps["benchmarks"] if b["name"] == bench), None)
    if info is None:
        print(f"gmb-bench: unknown benchmark '{bench}'", file=sys.stderr)
        return 2
    out = opt(args, "--out")
    if out is None or os.path.exists(out):
        print("gmb-bench: --out missing or exists", file=sys.stderr)
        return 2
    transport = opt(args, "--transport", "mpi")
    if transport not in ("mpi", "nccl"):
        print(f"gmb-bench: --transport: bad value '{transport}'", file=sys.stderr)
        return 2
    run_id = uuid.uuid4().hex
    if bench == "doctor" and _set(os.environ.get("FAKE_DOCTOR_CRASH", "")):
        print("gmb-bench: FATAL: signal 11 (fake)", file=sys.stderr)
        return 139
    scale = float(os.environ.get("FAKE_SCALE", "1.0")) * (0.1 if transport == "nccl" else 1.0)
    for setting in _set(os.environ.get("FAKE_KNOB_EFFECT", "")):
        scale /= float(setting.partition("@")[2])
    lib = os.environ.get("FAKE_LIBRARY_VERSION", "Open MPI v9.9.0")
    cuda = caps["features"]["cuda"]
    ctx = synth.context(run_id, bench, lib, argv=["gmb-bench", *argv], cuda=cuda, world_size=world_size())
    ctx["tool"]["build"]["nccl"] = caps["features"]["nccl"]
    if os.environ.get("FAKE_MPI_LIBRARY"):
        ctx["mpi"]["library_object"] = mpi_identity()["library_object"]
        for r in ctx["ranks"]:
            r["mpi_library"] = os.environ["FAKE_MPI_LIBRARY"]
    # the engine's layout: benchmark options under options.benchmark, the NCCL run-time version at top level
    windowed = {"window": 64} if bench in ("bw", "bibw", "mbw") else {}  # the engine's default window
    ctx["options"] = {"common": dict(ctx["options"]), "benchmark": {**windowed, **benchmark_options(args),
                                                                   "send": opt(args, "--send", "host"),
                                                                   "recv": opt(args, "--recv", "host")}}
    ctx["options"]["common"]["nic"] = opt(args, "--nic", "none")
    # what the engine records of its environment: the variables of the prefixes its description lists
    prefixes = tuple(caps["environment_prefixes"])
    ctx["environment"] = {k: v for k, v in sorted(os.environ.items()) if k.startswith(prefixes)}
    hosts = int(os.environ.get("FAKE_HOSTS", "1"))
    for r in ctx["ranks"]:
        r["host"] = f"node{r['rank'] % hosts}"
    with_transport = "nccl" in info["transports"]
    if with_transport:
        ctx["options"]["benchmark"]["transport"] = transport
    ctx["nccl"] = ({"available": True, "version": caps["features"]["nccl_version"]} if caps["features"]["nccl"]
                   else {"available": False, "reason": "built without NCCL"})
    recs = [ctx]
    send, recv = opt(args, "--send", "host"), opt(args, "--recv", "host")
    unsupported = None
    if transport == "nccl":
        if not caps["features"]["nccl"]:
            unsupported = "built without NCCL"
        elif not with_transport:
            unsupported = f"{bench} has no NCCL transport"
        elif not info["operations"] and (send, recv) != ("device", "device"):
            unsupported = "NCCL moves device memory only: use --send device --recv device"
        elif info["operations"] and opt(args, "--mem", "host") != "device":
            unsupported = "NCCL moves device memory only: use --mem device"
    if unsupported:
        recs.append(synth.unsupported(run_id, bench, unsupported, send, recv))
    else:
        # a launch's noise follows from its file's name (the campaign's block, settings and repetition), the same
        # in every test run: the figures vary between launches as a machine's do, and a test's verdict never does
        seed = 0 if os.environ.get("FAKE_STEADY") else zlib.crc32(os.path.basename(out).encode())
        recs += results(run_id, info, args, send, recv, scale, seed, cuda, caps["mpi"]["features"])
        if _set(os.environ.get("FAKE_KNOB_BREAK", "")):
            for rec in recs[1:]:
                rec.update(status="failed", reason="validation failed: the received data differ from what was sent")
    for rec in recs[1:]:
        if with_transport:
            rec["transport"] = transport
        if info["headline"] in rec and "headline" not in rec:
            rec["headline"] = info["headline"]
        if info["operations"] and transport == "nccl" and rec["status"] == "ok":
            rec["metrics"] = {"call": "nccl" + rec["operation"].title().replace("_", "")}
    damage = os.environ.get("FAKE_DAMAGE", "")
    if damage == f"{bench}:bad-bytes":
        recs[1]["bytes"] = "lots"
    synth.write_jsonl(out, recs)
    if damage == f"{bench}:cut":  # stopped while writing its last record: the file ends in the middle of it
        size = os.path.getsize(out)
        with open(out, "r+") as f:
            f.truncate(size - len(json.dumps(recs[-1])) // 2 - 1)
    # the engine's exit status: 3 when nothing it was asked could run here
    return 3 if unsupported or (len(recs) > 1 and all(r["status"] == "unsupported" for r in recs[1:])) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
