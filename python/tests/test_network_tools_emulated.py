# SPDX-License-Identifier: BSD-3-Clause
"""The engine's network ceiling between two hosts of the emulated cluster (scripts/emulated-cluster) with the real
engine and Debian's Open MPI, gmb-tcp measuring for real and stand-ins for iperf3 and ucx_perftest on PATH (the
machine has no GPU, so a CUDA-capable ucx_perftest can only be a stand-in): every stream count tried and the best
kept, a tool printing an implausible figure not used (the other tools' and the launch's other figures kept), GPU
buffers measured where the tool says its UCX can allocate them and their failure said, never tried where it cannot.
Skipped, with the reason, without root, namespaces or Debian's Open MPI."""

import json
import os
from pathlib import Path

import pytest
from realmpi import DEBIAN, debian_library, have_debian
from test_emulated_cluster import WHY, Cluster

from gmb.engine import build
from gmb.results.model import Results
from gmb.results.peaks import ceilings
from gmb.results.records import read_records
from gmb.results.store import Store

pytestmark = [pytest.mark.skipif(WHY is not None, reason=WHY or ""),
              pytest.mark.skipif(not have_debian("openmpi"), reason="needs cmake, g++ and Debian's Open MPI")]

M = 1 << 20

# A server that listens on the port it is given until its client connects; a client that connects, then prints what
# the real tool prints. FAKE_UCX says what ucx_perftest does: "cuda" (its UCX can allocate GPU memory, -m cuda
# works), "cuda-fails" (it says so, and -m cuda fails as without a GPU), "host" (a UCX without CUDA).
SERVE_AND_CONNECT = r'''
import os, socket, sys
def serve(port):
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("0.0.0.0", port)); s.listen(1); s.settimeout(60); s.accept(); sys.exit(0)
def connect(address, port):
    socket.create_connection((address, port), timeout=20).close()
def after(option):
    return sys.argv[sys.argv.index(option) + 1]
'''

FAKE_IPERF3 = "#!/usr/bin/env python3\n" + SERVE_AND_CONNECT + r'''
import json
if "--version" in sys.argv:
    print("iperf 3.99 (a stand-in for gmb's tests)"); sys.exit(0)
if "-s" in sys.argv:
    serve(int(after("-p")))
connect(after("-c"), int(after("-p")))
streams, seconds = int(after("-P")), int(after("-t"))
rate = 8e9 * (1 + streams / 4)  # more streams, more bits per second
print(json.dumps({"start": {"test_start": {"num_streams": streams}},
                  "end": {"sum_received": {"seconds": seconds, "bytes": rate / 8 * seconds, "bits_per_second": rate}}}))
'''

FAKE_UCX_PERFTEST = "#!/usr/bin/env python3\n" + SERVE_AND_CONNECT + r'''
mode = os.environ.get("FAKE_UCX", "cuda")
if "-h" in sys.argv:
    print("     -m <send mem type>[,<recv mem type>]\n                    memory type of message for sender and receiver (host)")
    print("                        host - System memory")
    if mode != "host":
        print("                        cuda - NVIDIA GPU memory")
    print("     -n <iters>     number of iterations to run (1000000)"); sys.exit(0)
if "-t" not in sys.argv:
    serve(int(after("-p")))
connect(sys.argv[1], int(after("-p")))
if "-m" not in sys.argv:
    print("Final: 100 1.0 1.0 1.0 1.0 1e300 100")  # host buffers: a figure no link carries
elif mode == "cuda-fails":
    print("[gmbw1:1:0] cuda_alloc.c:80 UCX ERROR cudaMalloc failed: no CUDA-capable device is detected"); sys.exit(1)
else:
    print("Final: 100 1.0 1.0 1.0 1.0 2000.0 100")
'''


def _tools(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in (("iperf3", FAKE_IPERF3), ("ucx_perftest", FAKE_UCX_PERFTEST)):
        (directory / name).write_text(text)
        (directory / name).chmod(0o755)
    return directory


@pytest.fixture(scope="module")
def launch(engine_env, tmp_path_factory):
    """Runs peaks across the two hosts with the stand-ins first on PATH, FAKE_UCX set to a mode, the network measured
    by `tools`; returns (exit status, output, the records file)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GMB_CACHE", str(engine_env["cache"]))
        mp.setenv("GMB_ENABLE_CUDA", engine_env["cuda"])
        engine = build.build(debian_library("openmpi"), root=engine_env["source"], log=print)
    out = tmp_path_factory.mktemp("network-tools")
    stand_ins = _tools(out / "bin")
    cluster = Cluster(Path(f"/run/gmb-emulated-cluster-tools-{os.getpid()}"), "gmbw")
    cluster("start", "--hosts", "2", "--name", "gmbw", "--bridge", "gmbwbr0", "--subnet", "10.86.0.0/24")

    def run(mode: str, tools: str = "gmb-tcp,iperf3,ucx_perftest") -> tuple[int, str, Path]:
        records = out / f"{mode}.jsonl"
        # the launcher by name: Open MPI started by its absolute path puts its own bin directory (/usr/bin) first on
        # the ranks' PATH, before the stand-ins
        p = cluster("run", "gmbw1", "--", Path(DEBIAN["openmpi"][1]).name, "--allow-run-as-root", "--mca", "plm_rsh_agent",
                    cluster.agent, "--host", "gmbw1,gmbw2", "--bind-to", "none", "-np", "2",
                    "-x", f"PATH={stand_ins}:{os.environ['PATH']}", "-x", f"FAKE_UCX={mode}",
                    str(engine), "peaks", "--sizes", "1M", "--samples", "2", "--copies", "1", "--network-seconds", "0.05",
                    "--network-streams", "1,2", "--network-tools", tools, "--out", str(records),
                    check=False, timeout=600)
        return p.returncode, p.stdout + p.stderr, records

    try:
        yield run
    finally:
        cluster("stop", check=False)


def _network(records: Path) -> dict[tuple[str, str], dict]:
    """(operation, tool or status) -> record, of the network's records."""
    out = {}
    for line in records.read_text().splitlines():
        r = json.loads(line)
        if r.get("type") == "result" and str(r.get("operation", "")).startswith("network"):
            out[(r["operation"], r.get("metrics", {}).get("tool") or r["status"])] = r
    return out


def test_streams_are_tried_an_implausible_tool_is_not_used_and_gpu_buffers_are_measured(launch):
    rc, output, records = launch("cuda")
    assert rc == 0, output
    got = _network(records)
    assert set(got) == {("network", "gmb-tcp"), ("network", "iperf3"), ("network-device", "ucx_perftest")}, output
    tcp, iperf = got[("network", "gmb-tcp")], got[("network", "iperf3")]
    # every stream count tried, the best kept, and the record says how many and for how long
    assert set(tcp["metrics"]["streams_tried_GBps"]) == {"1", "2"} and tcp["metrics"]["streams"] in (1, 2)
    assert tcp["metrics"]["seconds_per_run"] > 0 and tcp["metrics"]["messages_per_run"] >= 1
    assert iperf["metrics"]["streams"] == 2 and set(iperf["metrics"]["streams_tried_GBps"]) == {"1", "2"}
    # 2 streams as two iperf3 pairs of one stream each, at once: the receivers' figures summed
    assert iperf["bandwidth_GBps"]["median"] == pytest.approx(2.5)
    assert iperf["metrics"]["seconds_per_run"] == pytest.approx(1) and iperf["metrics"]["tool_version"].startswith("iperf 3.99")
    clients = iperf["metrics"]["command"].split(" & ")
    assert len(clients) == 2 and all(" -P 1 " in c and c.endswith(" -J") for c in clients), clients
    assert len({c.split(" -p ")[1].split()[0] for c in clients}) == 2  # each client its own server's port
    # ucx_perftest printed 1e300 MB/s on host buffers: not used, with what it printed
    for r in (tcp, iperf):
        why = r["metrics"]["tools_not_used"]["ucx_perftest"]
        assert why.startswith("printed an implausible figure (1.04858e+297 GB/s: above 10000 GB/s"), why
        assert "Final: 100 1.0 1.0 1.0 1.0 1e300 100" in why
    # GPU buffers: its own record, the tool told which GPU
    device = got[("network-device", "ucx_perftest")]
    assert device["metrics"]["memory"] == "device" and " -m cuda" in device["metrics"]["command"]
    assert device["metrics"]["tool_environment"]["CUDA_VISIBLE_DEVICES"] == "0"
    # the launch's other figures are kept, and the file is stored whole; the ceiling is the best plausible tool's
    st = Store()
    st.ingest(records, library="ompi")
    r = Results.load(st)
    assert any(x.operation == "host-copy" and x.status == "ok" for x in r.results)
    measured = ceilings(r).measured
    assert measured[("network", "inter-node", M)] == pytest.approx(max(2.5, tcp["bandwidth_GBps"]["median"]))
    assert measured[("network-device", "inter-node", M)] == pytest.approx(2000 * M / 1e9)
    assert read_records(records, validate=True).results  # every record valid against the schema


def test_gpu_buffers_are_not_tried_where_the_ucx_cannot_allocate_them_and_their_failure_is_said(launch):
    rc, output, records = launch("host", "ucx_perftest")
    assert rc == 0, output
    assert not [key for key in _network(records) if key[0] == "network-device"]  # no GPU here, no tool that could
    rc, output, records = launch("cuda-fails", "ucx_perftest")
    assert rc == 0, output
    failed = _network(records)[("network-device", "unsupported")]
    assert failed["reason"].startswith("no tool measured the network with GPU buffers: ucx_perftest: `ucx_perftest ")
    assert "-m cuda` on host gmbw1, rank 0 ended with exit status 1" in failed["reason"]
    assert "cudaMalloc failed" in failed["reason"]
