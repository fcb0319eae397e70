"""A stand-in for gmb-bench: same command line, writes schema-valid synthetic records (gmb.synth).
FAKE_HANG=<benchmark> makes that benchmark hang (timeout tests); FAKE_FAIL=<benchmark> makes it exit 1.
FAKE_CUDA=1: a CUDA build (device and pinned memory available); FAKE_NCCL=<version>: built with NCCL, which
makes --transport nccl work as the engine's contract says (device memory only, else status "unsupported" and
exit 3; every result gets "transport"; the context's options.benchmark.transport, and the context's
top-level nccl: {available, version} as the engine writes them). FAKE_MPI_LIBRARY=<path>: the MPI library object the
engine says it loaded (``mpi.library_object``, ``ranks[].mpi_library``, and ``list``'s ``mpi``); unset: an engine
too old to say."""

import json
import os
import sys
import time
import uuid

import synth

LIST = {"benchmarks": [{"name": "latency", "summary": "ping-pong", "min_ranks": 2, "max_ranks": 2},
                       {"name": "bw", "summary": "windowed bw", "min_ranks": 2, "max_ranks": 2},
                       {"name": "bibw", "summary": "bidirectional bw", "min_ranks": 2, "max_ranks": 2},
                       {"name": "coll", "summary": "collectives", "min_ranks": 2},
                       {"name": "peaks", "summary": "ceilings", "min_ranks": 1}],
        "memory_kinds": [{"name": "host", "available": True, "reason": ""},
                         {"name": "pinned", "available": False, "reason": "built without CUDA"},
                         {"name": "device", "available": False, "reason": "built without CUDA"}],
        "features": {"cuda": False}}


NCCL_OPS = {"bcast", "reduce", "allreduce", "allgather", "allgatherv", "gather", "gatherv", "scatter", "scatterv",
            "alltoall", "alltoallv", "reduce_scatter_block"}


def capabilities():
    caps = json.loads(json.dumps(LIST))
    if os.environ.get("FAKE_CUDA"):
        for k in caps["memory_kinds"]:
            k.update(available=True, reason="")
        caps["features"]["cuda"] = True
    if os.environ.get("FAKE_NCCL"):
        caps["features"].update(nccl=True, nccl_version=os.environ["FAKE_NCCL"])
    else:
        caps["features"]["nccl"] = False
    return caps


def mpi_identity():
    """The ``mpi`` object of ``list`` (and of the context, less the awareness): version string and library object."""
    path = os.environ.get("FAKE_MPI_LIBRARY")
    out = {"library_version": os.environ.get("FAKE_LIBRARY_VERSION", "Open MPI v9.9.0")}
    if path:
        out["library_object"] = {"loaded": path, "loaded_realpath": path, "linked": path, "linked_realpath": path,
                                 "matches_build": True}
    return out


def opt(args, name, default=None):
    return args[args.index(name) + 1] if name in args else default


def main(argv):
    if argv[:1] == ["list"]:
        caps = capabilities()
        if os.environ.get("FAKE_MPI_LIBRARY"):
            caps["mpi"] = mpi_identity()
        print(json.dumps(caps))
        return 0
    bench, args = argv[0], argv[1:]
    if os.environ.get("FAKE_HANG") == bench:
        time.sleep(3600)
    if os.environ.get("FAKE_FAIL") == bench:
        print("gmb-bench: MPI_Send failed (fake)", file=sys.stderr)
        return 1
    out = opt(args, "--out")
    if out is None or os.path.exists(out):
        print("gmb-bench: --out missing or exists", file=sys.stderr)
        return 2
    transport = opt(args, "--transport", "mpi")
    if transport not in ("mpi", "nccl"):
        print(f"gmb-bench: --transport: bad value '{transport}'", file=sys.stderr)
        return 2
    caps = capabilities()
    run_id = uuid.uuid4().hex
    scale = float(os.environ.get("FAKE_SCALE", "1.0")) * (0.1 if transport == "nccl" else 1.0)
    lib = os.environ.get("FAKE_LIBRARY_VERSION", "Open MPI v9.9.0")
    cuda = caps["features"]["cuda"]
    ctx = synth.context(run_id, bench, lib, argv=["gmb-bench", *argv], cuda=cuda)
    ctx["tool"]["build"]["nccl"] = caps["features"]["nccl"]
    if os.environ.get("FAKE_MPI_LIBRARY"):
        ctx["mpi"]["library_object"] = mpi_identity()["library_object"]
        for r in ctx["ranks"]:
            r["mpi_library"] = os.environ["FAKE_MPI_LIBRARY"]
    # the engine's layout: benchmark options under options.benchmark, the NCCL run-time version at top level
    ctx["options"] = {"common": dict(ctx["options"]), "benchmark": {"send": opt(args, "--send", "host"),
                                                                   "recv": opt(args, "--recv", "host")}}
    if bench in ("latency", "bw", "bibw", "coll"):
        ctx["options"]["benchmark"]["transport"] = transport
    ctx["nccl"] = ({"available": True, "version": caps["features"]["nccl_version"]} if caps["features"]["nccl"]
                   else {"available": False, "reason": "built without NCCL"})
    recs = [ctx]
    sizes = synth.pow2_sizes(1, 64 << 10)
    send, recv = opt(args, "--send", "host"), opt(args, "--recv", "host")
    ops = args[0].split(",") if bench == "coll" and args and not args[0].startswith("-") else ["allreduce", "bcast"]
    unsupported = None
    if transport == "nccl":
        if not caps["features"]["nccl"]:
            unsupported = "built without NCCL"
        elif bench in ("latency", "bw", "bibw") and (send, recv) != ("device", "device"):
            unsupported = "NCCL moves device memory only: use --send device --recv device"
        elif bench == "coll" and opt(args, "--mem", "host") != "device":
            unsupported = "NCCL moves device memory only: use --mem device"
        elif bench not in ("latency", "bw", "bibw", "coll"):
            unsupported = f"{bench} has no NCCL transport"
    if unsupported:
        rec = synth.unsupported(run_id, bench, unsupported, send, recv)
        recs.append(rec)
    elif bench in ("latency", "bw", "bibw"):
        path = "nvlink" if (send, recv) == ("device", "device") else "host"
        recs += synth.pt2pt_results(run_id, bench, sizes, send, recv, path, scale=scale, seed=hash(out) % 1000)
    elif bench == "coll":
        recs += synth.coll_results(run_id, ops, sizes[2:], 2, scale=scale, memory=opt(args, "--mem", "host"))
    elif bench == "peaks":
        recs += synth.peaks_results(run_id, cuda=cuda)
    for rec in recs[1:]:
        if bench in ("latency", "bw", "bibw", "coll"):
            rec["transport"] = transport
        if bench == "coll" and transport == "nccl" and rec["status"] == "ok":
            rec["metrics"] = {"call": "nccl" + rec["operation"].title().replace("_", "")}
    synth.write_jsonl(out, recs)
    return 3 if unsupported else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
