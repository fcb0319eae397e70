# SPDX-License-Identifier: BSD-3-Clause
"""The profiler's CUDA path on records made on a GPU (1 x H100, the lab's Open MPI 5.0.7, pml ob1, 2 ranks on the
GPU, 2026-12-07): the reference program's device-to-device ping-pong, gmb-bench's halo on device memory and its bw on
managed memory. The memory kinds the ranks read from CUDA (device, managed) and the paths merged from them
(same-gpu); the ping-pong priced from the store `gmb run --for-profile` measured there under ob1 and ucx."""

import json
import shutil
from pathlib import Path

import pytest
from conftest import DATA

from gmb.app.profiling import merge
from gmb.cli import main
from gmb.machine.topology import Gpu, Topology

RECORDED = DATA / "h100-app-2026-12-07"
H100 = Topology(gpus=[Gpu(0, "NVIDIA H100 80GB HBM3", pci_bus_id="00000000:00:06.0")], links={},
                numa_nodes={0: "0-15"})


def kinds_and_paths(name: str) -> set[tuple]:
    merged = merge(RECORDED / name / "ranks", H100)
    assert merged["missing_ranks"] == [] and merged["cuda_loaded"]
    return {(r["call"], r["memory"], r["path"], r["peer_memory"]) for r in merged["rows"] if r["peer"] >= 0}


@pytest.mark.parametrize("name, calls, memory", [("prof-ref", ("MPI_Send", "MPI_Recv"), "device"),
                                                 ("prof-halo", ("MPI_Isend", "MPI_Irecv"), "device"),
                                                 ("prof-managed", ("MPI_Isend", "MPI_Irecv"), "managed")])
def test_the_memory_kind_read_from_cuda_and_the_same_gpu_path(name, calls, memory):
    seen = kinds_and_paths(name)
    for call in calls:
        assert (call, memory, "same-gpu", memory) in seen, seen
    assert not any(path == "host" and mem != "host" for _, mem, path, _ in seen)


def test_the_device_ping_pong_is_priced_from_the_gpu_store(tmp_path, capsys):
    """The store of the for-profile campaign (latency on device memory 1 B - 1 MiB, five launches a point for ob1,
    four for ucx before the call's time ran out) prices the reference's 642 ping-pongs of 64 KiB and of 1 MiB per
    rank: ob1 first, 1.48x less communication than ucx. Each one-way time is the latency benchmark's (ob1 about
    150 us on one GPU, the reference's own median 149 us in the profiled run), and each rank waits in its receives
    for every reply: its own sends and its receives, 0.193 s under ob1, are the profile's own 0.1925 s of MPI time
    (the sends alone were half of it). The store was measured before barriers were priced: its 642 barriers per rank
    are left out of the profile here."""
    store = tmp_path / "store.sqlite"
    raw = sorted((RECORDED / "for-profile" / "raw").glob("*.jsonl"))
    for label in ("ompi-ob1", "ompi-ucx"):
        files = [str(f) for f in raw if f".{label}." in f.name]
        assert main(["ingest", str(store), *files, str(RECORDED / "for-profile" / "engines" / f"{label}.json"),
                     "--library", label, "--no-check"]) == 0
    capsys.readouterr()
    profile = tmp_path / "profile"
    shutil.copytree(RECORDED / "prof-ref", profile)
    data = json.loads((profile / "profile.json").read_text())
    data["rows"] = [r for r in data["rows"] if r["call"] != "MPI_Barrier"]
    (profile / "profile.json").write_text(json.dumps(data))
    assert main(["predict", "--json", str(profile), str(store)]) == 0
    out = json.loads(capsys.readouterr().out)
    ranked = [(p["configuration"], p["predicted_s"]) for p in out]
    assert all(p["complete"] for p in out)
    assert [c for c, _ in ranked] == ["ompi-ob1", "ompi-ucx"]
    (ob1, t_ob1), (ucx, t_ucx) = ranked
    assert t_ob1 == pytest.approx(0.193, rel=0.05) and t_ucx / t_ob1 == pytest.approx(1.48, rel=0.05)
    assert out[0]["own_calls_s"] == pytest.approx(0.097, rel=0.05)  # the sends alone, as priced before
    assert out[0]["waits_from"] == "ompi-ob1" and out[0]["received_s"] == pytest.approx(0.096, rel=0.05)


KINDS_APP = RECORDED / "prof-kinds-ob1-untagged"  # kinds-app.c beside it: tag k = 0 pinned, 1 device, 2 host, 3 managed
TAG_OF = {"pinned": 0, "device": 1, "host": 2, "managed": 3}


def with_tags(tmp_path: Path) -> Path:
    """The recorded kinds-app ranks as the profiler now writes them, with each row's tag: rank 0 sends and receives
    at tag k in buffer k; rank 1 receives and sends back at tag k in device memory (k 0, 1), host (2), managed (3),
    its device rows split into the two tags they hold."""
    out = tmp_path / "ranks"
    out.mkdir()
    for f in sorted((KINDS_APP / "ranks").glob("rank-*.json")):
        data = json.loads(f.read_text())
        rows = []
        for row in data["rows"]:
            if data["rank"] == 1 and row["memory"] == "device":
                half = {**row, "count": row["count"] // 2, "bytes": row["bytes"] // 2, "call_s": row["call_s"] / 2}
                rows += [{**half, "tag": 0}, {**half, "tag": 1}]
            else:
                rows.append({**row, "tag": TAG_OF[row["memory"]]})
        data["rows"] = rows
        (out / f.name).write_text(json.dumps(data))
    return out


def test_a_pinned_to_device_send_is_named_host_device_when_its_peer_receives_one_size_in_several_kinds(tmp_path):
    """kinds-app's rank 1 receives 64 KiB and 1 MiB messages from rank 0 into device, host and managed memory: the
    receive that matches a send is the one of its tag, so the pinned -> device messages take the host-device path
    and the device -> device ones the same GPU (the profiler used to take the sender's own kind for the peer's
    where the peer's rows held several, and named the pinned sends `host`)."""
    merged = merge(with_tags(tmp_path), H100)
    seen = {(r["rank"], r["call"], r["memory"], r["peer_memory"], r["path"]) for r in merged["rows"] if r["peer"] >= 0}
    assert (0, "MPI_Send", "pinned", "device", "host-device") in seen
    assert (1, "MPI_Send", "device", "pinned", "host-device") in seen
    assert (0, "MPI_Send", "device", "device", "same-gpu") in seen
    assert (0, "MPI_Send", "host", "host", "host") in seen
    assert (0, "MPI_Send", "managed", "managed", "same-gpu") in seen
    assert not any(rank == 0 and mem == "pinned" and path == "host" for rank, _, mem, _, path in seen)


def test_without_tags_a_send_is_shared_among_the_kinds_its_peer_received_in(tmp_path):
    """A profile written before rows carried tags (the one recorded on the H100): the pinned sends are shared among
    the kinds rank 1 received 64 KiB messages from rank 0 in, by its counts (device 200, host 100, managed 100), the
    counts adding up to the row's; no share is named by the sender's own kind alone."""
    merged = merge(KINDS_APP / "ranks", H100)
    pinned = [r for r in merged["rows"] if r["rank"] == 0 and r["call"] == "MPI_Send" and r["memory"] == "pinned"
              and r["bin"] == 16]
    assert {r["peer_memory"]: r["count"] for r in pinned} == {"device": 50, "host": 25, "managed": 25}
    assert sum(r["bytes"] for r in pinned) == 100 * 65536 and all(r["shared_from"] == 100 for r in pinned)
    assert {r["path"] for r in pinned} == {"host-device", "host"}


def test_a_sendrecv_is_matched_with_the_receive_side_of_its_peers_sendrecv(tmp_path):
    """Two ranks exchanging with MPI_Sendrecv: rank 0 sends from device memory into rank 1's host buffer and rank 1
    sends from host memory into rank 0's device buffer. The send row (MPI_Sendrecv) is matched with the peer's
    receive row (MPI_Sendrecv (receive)), not with the peer's own send: both directions are host-device."""
    ranks = tmp_path / "ranks"
    ranks.mkdir()
    recorded = json.loads((KINDS_APP / "ranks" / "rank-0.json").read_text())
    for rank, memory in ((0, "device"), (1, "host")):
        row = {"peer": 1 - rank, "comm_size": 0, "comm_hosts": 0, "memory": memory, "device": 0 if rank == 0 else -1,
               "bin": 16, "tag": 7, "count": 10, "bytes": 655360, "min_bytes": 65536, "max_bytes": 65536,
               "call_s": 0.001, "wait_s": 0, "waited": 0}
        data = {**recorded, "rank": rank, "devices": recorded["devices"] if rank == 0 else {},
                "rows": [{**row, "call": "MPI_Sendrecv"}, {**row, "call": "MPI_Sendrecv (receive)", "call_s": 0}]}
        (ranks / f"rank-{rank}.json").write_text(json.dumps(data))
    merged = merge(ranks, H100)
    seen = {(r["rank"], r["call"], r["memory"], r["peer_memory"], r["path"]) for r in merged["rows"]}
    assert (0, "MPI_Sendrecv", "device", "host", "host-device") in seen, seen
    assert (1, "MPI_Sendrecv", "host", "device", "host-device") in seen, seen
    assert (0, "MPI_Sendrecv (receive)", "device", "host", "host-device") in seen, seen
