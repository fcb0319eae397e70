# SPDX-License-Identifier: BSD-3-Clause
"""gmb across two hosts of the emulated cluster (scripts/emulated-cluster), with the real engine and Debian's Open
MPI and MPICH, launched by hostfile through the cluster's agent: the inter-node pair with the network's own ceiling
(peaks between the hosts: gmb-tcp and every external tool on PATH) and its % in the Answers (gmb-tcp and iperf3 with several streams), a collective on 1 and 2 nodes in one report, and
each rank's network facts in the records. Skipped, with the reason, without root, namespaces or the libraries."""

import json
import os
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from realmpi import DEBIAN, have_debian
from test_emulated_cluster import SCRIPT, WHY, Cluster

from gmb.report import answers, render_text, tables
from gmb.results.model import Results
from gmb.results.points import combine
from gmb.results.store import open_results

pytestmark = [pytest.mark.skipif(WHY is not None, reason=WHY or ""),
              pytest.mark.skipif(not (have_debian("openmpi") and have_debian("mpich")),
                                 reason="needs cmake, g++ and both Debian MPIs")]

CAMPAIGN = """
[campaign]
name = "two-hosts"
repetitions = 2
timeout_s = 240
order = "sequential"

[[run]]
benchmarks = ["peaks"]
ranks = [2]
libraries = ["ompi"]
path = "inter-node"
sizes = "1M"
bind = "none"
options = { samples = 3, copies = 2 }

[[run]]
benchmarks = ["latency", "bw"]
memory = ["host:host"]
sizes = "8,1M"
path = "inter-node"
bind = "none"
options = { iters = 100, warmup = 10, iters-large = 20, warmup-large = 2 }

[[run]]
benchmarks = ["coll"]
operations = ["allreduce"]
sizes = "64K"
nodes = [1, 2]
ranks_per_node = 2
bind = "none"
options = { iters = 50, warmup = 5 }
"""


# an 8-byte latency on host memory, one launch: a block to add to the campaign's header (CAMPAIGN's first lines)
LATENCY_8B = '[[run]]\nbenchmarks = ["latency"]\nmemory = ["host:host"]\nsizes = "8"\nbind = "none"\n'
HEADER = CAMPAIGN.split("[[run]]")[0]


def libraries_file(path: Path, agent: str) -> Path:
    """Debian's two libraries, their launchers reaching the emulated hosts through the cluster's agent."""
    path.write_text(f"""
[[library]]
name = "ompi"
family = "openmpi"
launcher = "mpirun"
launcher_path = "{DEBIAN['openmpi'][1]}"
launcher_args = ["--mca", "plm_rsh_agent", "{agent}"]

[[library]]
name = "mpich"
family = "mpich"
launcher = "mpiexec"
launcher_path = "{DEBIAN['mpich'][1]}"
launcher_args = ["-launcher", "ssh", "-launcher-exec", "{agent}"]
""")
    return path


def gmb_in_a_host(engine_env, home: Path) -> list[str]:
    """The command line of this tree's gmb, with the session's engine sources and cache, run in an emulated host."""
    env = {"GMB_SOURCE": str(engine_env["source"]), "GMB_CACHE": str(engine_env["cache"]),
           "GMB_ENABLE_CUDA": engine_env["cuda"], "HOME": str(home),
           "PYTHONPATH": str(Path(__file__).parents[1] / "src"), "PATH": os.environ["PATH"]}
    return ["env", *(f"{k}={v}" for k, v in env.items()), sys.executable, "-m", "gmb"]


@pytest.fixture(scope="module")
def two_hosts(engine_env, tmp_path_factory):
    cluster = Cluster(Path(f"/run/gmb-emulated-cluster-multinode-{os.getpid()}"), "gmbm")
    cluster("start", "--hosts", "2", "--name", "gmbm", "--bridge", "gmbmbr0", "--subnet", "10.79.0.0/24", "--slots", "2")
    try:
        out = tmp_path_factory.mktemp("two-hosts")
        (out / "c.toml").write_text(CAMPAIGN)
        libs = libraries_file(out / "libs.toml", cluster.agent)
        p = cluster("run", "gmbm1", "--", *gmb_in_a_host(engine_env, out / "home"),
                    "run", str(out / "c.toml"), "--config", str(libs), "--no-detect", "--hostfile",
                    str(cluster.state / "hostfile.openmpi"), "--results", str(out / "results"), "--no-progress",
                    check=False, timeout=1800)  # a hang guard only: each launch ends at the campaign's timeout_s
        (results,) = list((out / "results").iterdir())
        yield {"rc": p.returncode, "log": p.stderr[-4000:], "dir": results,
               "results": Results.load(open_results(results))}
    finally:
        cluster("stop", check=False)


def test_both_libraries_ran_across_the_two_hosts(two_hosts):
    r = two_hosts["results"]
    # Debian's MPICH 4.0.2 (ch4:ucx, UCX 1.13) now and then hangs in MPI_Finalize across the emulated hosts once
    # every rank has finished (one rank spins in UCX's tcp progress while the others wait in the PMI barrier):
    # gmb ends such a launch soon after, as finalize-hang, with its records stored.
    statuses = {x.status for x in r.launches}
    assert two_hosts["rc"] == 0 or statuses <= {"ok", "unsupported", "finalize-hang"}, two_hosts["log"]
    pairs = [x for x in r.ok() if x.benchmark in ("latency", "bw")]
    assert {x.library for x in pairs} == {"ompi", "mpich"}
    assert {x.path_class for x in pairs} == {"inter-node"} and {x.config.hosts for x in pairs} == {2}
    # each library's hostfile in its own form
    assert (two_hosts["dir"] / "hostfile.mpirun").read_text().startswith("gmbm1 slots=")
    assert (two_hosts["dir"] / "hostfile.mpiexec").read_text().startswith("gmbm1:")


def test_the_network_ceiling_is_measured_between_the_hosts_and_bounds_the_pair(two_hosts):
    r = two_hosts["results"]
    network = [x for x in r.ok("peaks") if x.operation == "network"]
    assert {x.path_class for x in network} == {"inter-node"}
    assert all("gmbm1" in json.dumps(x.metrics) and "gmbm2" in json.dumps(x.metrics) for x in network)
    a = answers.answers(r)
    (pair,) = [p for p in a.paths if p.path_class == "inter-node"]
    assert pair.ceiling == "network" and all(f.pct_of_ceiling for f in pair.figures)
    assert "ceiling network, host buffers (" in render_text.answers_text(a)


def test_each_network_tool_that_both_hosts_can_run_measured_and_the_others_say_why_not(two_hosts):
    network = [x for x in two_hosts["results"].ok("peaks") if x.operation == "network"]
    tools = {x.metrics["tool"] for x in network}
    expected = {"gmb-tcp"} | {t for t in ("iperf3", "ucx_perftest", "fi_pingpong") if shutil.which(t)}
    assert tools == expected
    for x in network:
        # which device, which command and, for external tools, the tool's version
        assert x.metrics["sender_device"] and x.metrics["receiver_device"]
        if x.metrics["tool"] != "gmb-tcp":
            assert x.metrics["command"].split()[0] == x.metrics["tool"] and x.metrics["tool_version"]
        # no machine here has an RDMA device: ib_write_bw says why it did not measure
        assert "ib_write_bw" in x.metrics["tools_not_used"]
        assert ("no RDMA (verbs) device" in x.metrics["tools_not_used"]["ib_write_bw"]
                or "not on PATH" in x.metrics["tools_not_used"]["ib_write_bw"])
    if "ucx_perftest" in tools:
        (ucx, *_) = [x for x in network if x.metrics["tool"] == "ucx_perftest"]
        assert ucx.metrics["tool_environment"] == {"UCX_TLS": "^sm,cuda_ipc"}  # the network transports only
    for x in network:  # the stream tools tried several streams at once and kept the best
        if x.metrics["tool"] in ("gmb-tcp", "iperf3"):
            assert set(x.metrics["streams_tried_GBps"]) == {"1", "2", "4"}, x.metrics
            assert x.metrics["streams"] in (1, 2, 4) and x.metrics["seconds_per_run"] > 0
    # every tool the engine knows is in the table: measured, or not used with the reason (those of CI's optional
    # packages that are not installed: "not on PATH")
    not_used = {tool: why for x in network for tool, why in x.metrics["tools_not_used"].items()}
    assert all("not on PATH" in not_used[t] for t in ("ucx_perftest", "fi_pingpong", "ib_write_bw", "iperf3")
               if not shutil.which(t))
    (t,) = [t for t in tables.all_tables(two_hosts["results"]) if t.title.startswith("Network ceiling")]
    assert {row[1] for row in t.rows} == tools | set(not_used) and "ib_write_bw" in not_used


def test_a_collective_on_one_and_two_nodes_is_one_report(two_hosts):
    r = two_hosts["results"]
    assert sorted({x.config.hosts for x in r.ok("coll")}) == [1, 2]
    (t,) = [t for t in tables.all_tables(r) if t.title.startswith("Collectives over node counts")]
    assert {row[0] for row in t.rows} == {"ompi", "mpich"}
    assert "Collectives over node counts" in (two_hosts["dir"] / "report.html").read_text()


def test_the_records_name_each_ranks_network(two_hosts):
    contexts = [c.record for c in two_hosts["results"].contexts if c.record.get("benchmark") == "bw"]
    hosts = {}
    for ctx in contexts:
        for rank in ctx["ranks"]:
            names = {i["name"]: i for i in rank["network"]["interfaces"]["devices"]}
            hosts[rank["host"]] = names
    assert set(hosts) == {"gmbm1", "gmbm2"}
    # each host's eth0 at its bridge address, and its own interfaces only (each emulated host has its own sysfs,
    # mounted in its network namespace: not the machine's bridge and veths)
    assert hosts["gmbm1"]["eth0"]["ipv4"] == ["10.79.0.2"] and hosts["gmbm2"]["eth0"]["ipv4"] == ["10.79.0.3"]
    assert set(hosts["gmbm1"]) == set(hosts["gmbm2"]) == {"lo", "eth0"}


def test_a_host_that_does_not_exist_is_named_and_nothing_hangs(engine_env, tmp_path):
    """A hostfile naming a host the agent cannot reach: the launch ends (failed, or killed at the campaign's
    timeout) with the agent's words naming the host."""
    cluster = Cluster(Path(f"/run/gmb-emulated-cluster-badhost-{os.getpid()}"), "gmbq")
    cluster("start", "--hosts", "2", "--name", "gmbq", "--bridge", "gmbqbr0", "--subnet", "10.80.0.0/24")
    try:
        (tmp_path / "hosts").write_text("gmbq1 slots=1\ngmbq9 slots=1\n")
        (tmp_path / "c.toml").write_text(HEADER.replace("timeout_s = 240", "timeout_s = 30") + LATENCY_8B
                                         + 'path = "inter-node"\n')
        cluster("run", "gmbq1", "--", *gmb_in_a_host(engine_env, tmp_path / "home"),
                "run", str(tmp_path / "c.toml"), "--config", str(libraries_file(tmp_path / "libs.toml", cluster.agent)),
                "--no-detect", "--hostfile", str(tmp_path / "hosts"), "--results", str(tmp_path / "results"),
                "--no-progress", "--no-report", check=False, timeout=1800)  # a hang guard only (engines may build)
        (results,) = list((tmp_path / "results").iterdir())
        launches = Results.load(open_results(results)).launches
        assert {x.library for x in launches} == {"ompi", "mpich"}
        assert all(x.status != "ok" and "gmbq9" in (x.reason or "") for x in launches), \
            [(x.library, x.status, x.reason) for x in launches]
    finally:
        cluster("stop", check=False)


def test_gmb_runs_across_the_hosts_as_start_prints_it(engine_env, tmp_path):
    """`start` prints the `gmb run` across its hosts (its hostfile, and a libraries file whose launchers reach the
    hosts through the agent). Run as printed (a tiny campaign for --quick, Open MPI only), it measures a pair between
    the hosts and one on a host (the default slots hold a one-host pair), named by their hosts only."""
    cluster = Cluster(Path(f"/run/gmb-emulated-cluster-printed-{os.getpid()}"), "gmbp")
    started = cluster("start", "--hosts", "2", "--name", "gmbp", "--bridge", "gmbpbr0", "--subnet", "10.84.0.0/24")
    try:
        (line,) = [x for x in started.stdout.splitlines() if x.startswith("gmb:")]
        host, command = line.split(" run ", 1)[1].split(" -- ", 1)
        command = shlex.split(command.split("   (")[0])
        assert host == "gmbp1" and command[:3] == ["gmb", "run", "--quick"]
        libraries = tomllib.loads((cluster.state / "libraries.toml").read_text())["library"]
        (ompi,) = [lib["name"] for lib in libraries if lib["launcher_path"] == DEBIAN["openmpi"][1]]
        (tmp_path / "c.toml").write_text(HEADER.replace("repetitions = 2", "repetitions = 1") + LATENCY_8B
                                         + 'path = "inter-node"\n\n' + LATENCY_8B)
        p = cluster("run", host, "--", *gmb_in_a_host(engine_env, tmp_path / "home"), "run", str(tmp_path / "c.toml"),
                    *command[3:], "--library", ompi, "--results", str(tmp_path / "results"), "--no-progress",
                    "--no-report", check=False, timeout=1800)  # a hang guard only (engines may build)
        assert p.returncode == 0, p.stderr[-3000:]
        (results,) = list((tmp_path / "results").iterdir())
        r = Results.load(open_results(results))
        assert sorted(x.config.hosts for x in r.ok("latency")) == [1, 2]
        assert {p.configuration for p in combine(r.ok())} == {f"{ompi} [1 host]", f"{ompi} [2 hosts]"}
    finally:
        stopped = cluster("stop", check=False)
    assert "stopped the emulated cluster gmbp (hosts gmbp1, gmbp2; bridge gmbpbr0)" in stopped.stderr


def test_the_cluster_script_is_the_repositorys():
    assert SCRIPT.is_file() and subprocess.run([str(SCRIPT), "--help"], capture_output=True).returncode == 0
