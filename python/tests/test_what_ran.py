# SPDX-License-Identifier: BSD-3-Clause
"""What ran behind a figure (results/what_ran.py): UCX's protocol tables (UCX 1.13 on the CPU machine, UCX 1.22 on
an H100 with device memory), Open MPI's collective components, NCCL's tuning lines and the settings that force an
algorithm, read from recorded launch logs; the records of a launch given their ``ran``, the point, the table of what
ran with its switches, a comparison saying whether what ran changed; the capture's variables no setting; its lines
never taken for a launch's error."""

from pathlib import Path

from gmb.report.compare import compare
from gmb.report.compare_words import ran_change
from gmb.report.what_ran_table import curves, switches, what_ran_table
from gmb.results import what_ran
from gmb.results.model import Results
from gmb.results.records import read_records
from gmb.results.run_conditions import settings
from gmb.results.store import Store
from gmb.run.execute import add_what_ran, launch_environment
from gmb.run.why_failed import last_error

DATA = Path(__file__).parent / "data"
H100 = DATA / "h100-what-ran-2026-12-08"
MIB = 1 << 20


def _capture(path: Path) -> what_ran.Capture:
    return what_ran.read_capture(path.read_text(errors="replace").splitlines())


def test_ucx_1_13_tables_give_each_size_its_protocol_and_leave_the_ranks_own_table_out():
    cap = _capture(DATA / "ucx-1.13-proto-info.log")
    # each rank printed the same tables: kept once; the table of a rank's endpoint to itself (self lanes) is no path
    assert len([t for t in cap.ucx if t.operation.startswith("tagged") and not t.variant and not t.loopback]) == 1
    assert what_ran.ucx_protocol(cap.ucx, "host", 8) == "eager short over sysv/memory"
    assert what_ran.ucx_protocol(cap.ucx, "host", 4096) == "eager copy-in copy-out over sysv/memory"
    # blocking sends (fast-completion) switch to rendezvous later than non-blocking ones: both are said
    assert what_ran.ucx_protocol(cap.ucx, "host", 16384) == (
        "plain: rendezvous zero-copy read from remote over cma/memory; "
        "fast-completion: eager copy-in copy-out over sysv/memory (data: fragmented copy-in copy-out over sysv/memory)")
    assert what_ran.ucx_protocol(cap.ucx, "host", 4 * MIB) == (
        "rendezvous zero-copy read from remote over cma/memory (data: fragmented copy-in copy-out over sysv/memory)")
    assert what_ran.ucx_protocol(cap.ucx, "device", 8) is None  # no table of that memory type: nothing said
    assert cap.coll["MPI_COMM_WORLD"] == ("tuned", "libnbc", "basic")


def test_ucx_1_22_on_an_h100_names_cuda_ipc_for_device_memory_and_the_pipeline_into_it():
    cap = _capture(H100 / "logs" / "u0001.r1.log")
    device = what_ran.ucx_protocol(cap.ucx, "device", MIB, "device")
    assert device.startswith("rendezvous zero-copy flushed write to remote over cuda_ipc/cuda")
    # the small device messages go through host fragments (multi) or copy-in copy-out (fast-completion)
    assert "frag host" in what_ran.ucx_protocol(cap.ucx, "device", 4096, "device")
    # pinned -> device: UCX's rendezvous moves the data with cuda_copy up to 4 MiB and pipelines it above
    at_4m = what_ran.ucx_protocol(cap.ucx, "pinned", 4 * MIB, "device")
    above = what_ran.ucx_protocol(cap.ucx, "pinned", 4 * MIB + 1, "device")
    assert "(data: cuda_copy, flushed write to remote, frag cuda over cuda_ipc/cuda)" in at_4m
    assert "(data: pipeline cuda_copy, write to remote, frag cuda over cuda_ipc/cuda)" in above
    # Open MPI 5.0.7's coll/cuda wraps coll/tuned on the world communicator
    assert what_ran.coll_component(cap.coll["MPI_COMM_WORLD"], "allreduce") == "cuda over tuned"
    assert what_ran.coll_component(cap.coll["MPI_COMM_WORLD"], "iallreduce") == "cuda over tuned"


def test_a_launch_s_records_get_what_ran_from_its_log_and_the_store_keeps_it(tmp_path):
    store = Store(tmp_path / "store.sqlite")
    for lib, log in (("ompi-ucx", "u0001.r1.log"), ("ompi-ob1", "u0002.r1.log")):
        for raw in sorted((H100 / "raw").glob(f"*.{lib}.*.jsonl")):
            records = read_records(raw)
            add_what_ran(records, H100 / "logs" / log, "openmpi")
            store.ingest(records, library=lib, repetition=1, launch_id=raw.stem)
    results = Results.load(store)
    points = {(p.library, p.benchmark, p.memory, p.bytes): p for p in results.points(results.ok())}
    ucx_dd = points[("ompi-ucx", "latency", "device:device", 65536)]
    assert ucx_dd.ran["ucx"].startswith("rendezvous zero-copy flushed write to remote over cuda_ipc/cuda")
    assert points[("ompi-ob1", "coll", "device", 4 * MIB)].ran == {"coll": "cuda over tuned: fixed decision"}
    assert "ucx" not in points[("ompi-ob1", "bw", "device:device", MIB)].ran  # ob1 moves it: UCX says nothing
    # the table: one row per stretch of sizes, the switch from host fragments to cuda_ipc on the device curve
    table = what_ran_table(results)
    rows = [r for r in table.rows if r[0] == "ompi-ucx" and r[1] == "latency"]
    assert [r[5] for r in rows] == ["8 B - 4K", "64K - 16M"]
    curve = next(c for c in curves(list(points.values())).values() if c[0].library == "ompi-ucx" and c[0].benchmark == "latency"
                 and c[0].memory == "device:device")
    assert [(p.bytes, source) for p, source, _ in switches(curve)] == [(65536, "ucx")]


def test_a_comparison_says_whether_what_ran_changed(tmp_path):
    def store_of(name, ran):
        st = Store(tmp_path / f"{name}.sqlite")
        for rep in (1, 2):
            records = read_records(H100 / "raw" / "b4.ompi-ucx.bw.host_host.na.n2.r1.jsonl")
            for res in records.results:
                res["ran"] = {"ucx": ran(res["bytes"])}
                res["run_id"] = f"{res['run_id']}-{rep}"
            for ctx in records.contexts:
                ctx["run_id"] = f"{ctx['run_id']}-{rep}"
            st.ingest(records, library="ompi-ucx", repetition=rep, launch_id=f"{name}-{rep}")
        return Results.load(st)

    a = store_of("a", lambda size: "eager short" if size < 65536 else "rendezvous")
    b = store_of("b", lambda size: "eager short" if size < MIB else "rendezvous")
    words = {r.bytes: ran_change(r) for r in compare(a, b).rows}
    assert words == {8: "same", 65536: "ucx: rendezvous -> eager short", MIB: "same"}


def test_nccl_tuning_lines_of_both_formats():
    lines = ["vm:1:1 [0] NCCL INFO AllReduce: 4194304 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..31}",
             "vm:1:1 [0] NCCL INFO AllReduce: 4194304 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..31}",
             "vm:1:1 [0] NCCL INFO AllGather: 524288 Bytes -> Algo RING proto LL128 channel{Lo..Hi}={0..15} comm 0x5",
             "vm:1:1 [0] NCCL INFO Broadcast: 1024 Bytes -> Algo 0 proto 0 time 12.5"]  # before NCCL 2.19: numbers
    choices = what_ran.nccl_choices(lines)
    assert len(choices) == 3  # said on every call: kept once
    # matched by the record's own NCCL call (its TUNING lines name ncclBroadcast "Broadcast") and by the bytes NCCL
    # counts: a rank's part where the record's S is split into equal blocks (allgather of 8 ranks), else S
    records = {"allreduce": ("ncclAllReduce", "whole", 4 * MIB), "allgather": ("ncclAllGather", "equal-blocks", 4 * MIB),
               "bcast": ("ncclBroadcast", "whole", 1024)}
    said = {op: what_ran.facts({"transport": "nccl", "operation": op, "bytes": size, "ranks": 8, "memory": {},
                                "counts": {"split": split}, "metrics": {"call": call}}, {}, "openmpi",
                               what_ran.Capture(nccl=choices))
            for op, (call, split, size) in records.items()}
    assert said == {"allreduce": {"nccl": "RING/SIMPLE, 32 channels"}, "allgather": {"nccl": "RING/LL128, 16 channels"},
                    "bcast": {"nccl": "TREE/LL"}}
    # a size NCCL said nothing of, or another call, gets nothing: the whole vector of an allreduce is never taken for
    # a rank's part of another size
    assert what_ran.nccl_words(choices, "ncclAllReduce", 4 * MIB // 8) is None
    assert what_ran.nccl_words(choices, "ncclReduce", 4 * MIB) is None


def test_forced_algorithms_are_named_from_the_settings():
    cap = what_ran.Capture(coll={"MPI_COMM_WORLD": ("tuned", "libnbc", "basic")})
    coll = {"operation": "allreduce", "bytes": 8, "memory": {"root": "host"}, "metrics": {"call": "MPI_Allreduce"}}
    forced = {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "OMPI_MCA_coll_tuned_allreduce_algorithm": "4"}
    assert what_ran.facts(coll, forced, "openmpi", cap) == {"coll": "tuned: algorithm 4 (coll_tuned_allreduce_algorithm)"}
    rules = {"OMPI_MCA_coll_tuned_use_dynamic_rules": "1", "OMPI_MCA_coll_tuned_dynamic_rules_filename": "/x/r.conf"}
    assert what_ran.facts(coll, rules, "openmpi", cap) == {"coll": "tuned: the rules of r.conf"}
    # without use_dynamic_rules Open MPI ignores the algorithm variable
    assert what_ran.facts(coll, {"OMPI_MCA_coll_tuned_allreduce_algorithm": "4"}, "openmpi", cap) == {
        "coll": "tuned: fixed decision"}
    mpich = what_ran.Capture()
    assert what_ran.facts(coll, {}, "mpich", mpich) == {"mpich": "auto (MPICH's own selection)"}
    assert what_ran.facts(coll, {"MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM": "recursive_doubling"}, "mpich", mpich) == {
        "mpich": "recursive_doubling (MPIR_CVAR_ALLREDUCE_INTRA_ALGORITHM)"}


def test_the_capture_is_no_setting_and_a_block_may_turn_it_off():
    ctx = {"environment": {"UCX_PROTO_INFO": "y", "OMPI_MCA_coll_base_verbose": "10", "UCX_RNDV_THRESH": "8192"}}
    assert settings(ctx) == {"UCX_RNDV_THRESH": "8192"}

    class Launch:
        env = {"UCX_PROTO_INFO": "n"}
    assert launch_environment(Launch()) == {"OMPI_MCA_coll_base_verbose": "10", "UCX_PROTO_INFO": "n"}


def test_what_a_library_says_it_chose_is_never_taken_for_the_error(tmp_path):
    log = tmp_path / "launch.log"
    lines = (H100 / "logs" / "u0001.r1.log").read_text(errors="replace").splitlines()[:200]
    log.write_text("\n".join([*lines, "[vm:1706] pml_ucx.c:419 Error: UCP worker does not support MPI_THREAD_MULTIPLE",
                              *lines[:40]]) + "\n")
    assert "UCP worker does not support" in last_error(log)
    assert what_ran.said_what_ran("[vm:01658] coll:base:comm_select: selecting tuned, priority 30, Enabled")
    assert what_ran.said_what_ran("[1796.8] [vm:1706 :0]   | 0..92 | eager short | sysv/memory |")
    assert not what_ran.said_what_ran("[vm:1706] pml_ucx.c:419 Error: out of memory")
