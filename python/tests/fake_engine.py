"""A stand-in for gmb-bench: same command line, writes schema-valid synthetic records (gmb.synth).
FAKE_HANG=<benchmark> makes that benchmark hang (timeout tests); FAKE_FAIL=<benchmark> makes it exit 1."""

import json
import os
import sys
import time
import uuid

from gmb import synth

LIST = {"benchmarks": [{"name": "latency", "summary": "ping-pong", "min_ranks": 2},
                       {"name": "bw", "summary": "windowed bw", "min_ranks": 2},
                       {"name": "bibw", "summary": "bidirectional bw", "min_ranks": 2},
                       {"name": "coll", "summary": "collectives", "min_ranks": 2},
                       {"name": "peaks", "summary": "ceilings", "min_ranks": 1}],
        "memory_kinds": [{"name": "host", "available": True, "reason": ""},
                         {"name": "pinned", "available": False, "reason": "built without CUDA"},
                         {"name": "device", "available": False, "reason": "built without CUDA"}],
        "features": {"cuda": False}}


def opt(args, name, default=None):
    return args[args.index(name) + 1] if name in args else default


def main(argv):
    if argv[:1] == ["list"]:
        print(json.dumps(LIST))
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
    run_id = uuid.uuid4().hex
    scale = float(os.environ.get("FAKE_SCALE", "1.0"))
    lib = os.environ.get("FAKE_LIBRARY_VERSION", "Open MPI v9.9.0")
    recs = [synth.context(run_id, bench, lib, argv=["gmb-bench", *argv])]
    sizes = synth.pow2_sizes(1, 64 << 10)
    if bench in ("latency", "bw", "bibw"):
        recs += synth.pt2pt_results(run_id, bench, sizes, opt(args, "--send", "host"), opt(args, "--recv", "host"),
                                    "host", scale=scale, seed=hash(out) % 1000)
    elif bench == "coll":
        recs += synth.coll_results(run_id, ["allreduce", "bcast"], sizes[2:], 2, scale=scale)
    elif bench == "peaks":
        recs += synth.peaks_results(run_id, cuda=False)
    synth.write_jsonl(out, recs)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
