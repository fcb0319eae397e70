# SPDX-License-Identifier: BSD-3-Clause
"""scripts/emulated-cluster: hosts in namespaces on a bridge, the launcher agent with Open MPI and MPICH's Hydra,
the transport between hosts, Slurm across them. Skipped, with the reason, without root or namespaces; the MPI and
Slurm tests also without Debian's Open MPI / MPICH / slurm-wlm and munge. Each cluster has its own state directory,
names and bridge, so that a cluster someone started by hand is left alone."""

import importlib.machinery
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "emulated-cluster"
sys.path.insert(0, str(SCRIPT.parent))
from emulated_cluster.core import missing_requirements  # noqa: E402 (the script's own module)

HELLO = r"""
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int rank, token = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank < 2) {  /* a ping-pong: each rank sends to the other */
        if (rank == 1) MPI_Recv(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(&token, 1, MPI_INT, 1 - rank, 0, MPI_COMM_WORLD);
        if (rank == 0) MPI_Recv(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
"""


def load_script():
    loader = importlib.machinery.SourceFileLoader("emulated_cluster_command", str(SCRIPT))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(loader.name, loader))
    loader.exec_module(module)
    return module


def namespaces_unavailable() -> str | None:
    if os.geteuid() != 0:
        return "needs root (network namespaces, veth pairs, a bridge)"
    if missing := missing_requirements(0):
        return "missing: " + "; ".join(missing)
    p = subprocess.run(["unshare", "--net", "--uts", "--mount", "true"], capture_output=True, text=True)
    return None if p.returncode == 0 else f"namespaces cannot be made here: {p.stderr.strip()}"


WHY = namespaces_unavailable()
NEED_NAMESPACES = pytest.mark.skipif(WHY is not None, reason=WHY or "")


class Cluster:
    def __init__(self, state: Path, prefix: str):
        self.state, self.prefix = state, prefix
        self.hosts = [f"{prefix}1", f"{prefix}2"]
        self.agent = str(state / "agent")

    def __call__(self, *args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
        env = dict(os.environ, GMB_EMULATED_CLUSTER_DIR=str(self.state))
        p = subprocess.run([str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=timeout)
        assert not check or p.returncode == 0, p.stderr + p.stdout
        return p

    def start(self):
        return self("start", "--hosts", "2", "--name", self.prefix, "--bridge", f"{self.prefix}br0",
                    "--subnet", "10.78.0.0/24")

    def run(self, host: str, *command: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
        return self("run", host, "--", *command, check=check, timeout=timeout)


@pytest.fixture(scope="module")
def cluster():
    c = Cluster(Path(f"/run/gmb-emulated-cluster-test-{os.getpid()}"), "gmbt")
    c.start()
    yield c
    c("stop", check=False)


def compiled(tmp_path: Path, compiler: str) -> str:
    if not shutil.which(compiler):
        pytest.skip(f"{compiler} not found (Debian's MPI development package)")
    (tmp_path / "hello.c").write_text(HELLO)
    program = tmp_path / f"hello-{compiler}"
    subprocess.run([compiler, "-o", str(program), str(tmp_path / "hello.c")], check=True)
    return str(program)


def test_agent_skips_ssh_options():
    split = load_script().agent_split
    assert split(["-x", "gmbh2", "orted", "-mca", "x"]) == ("gmbh2", "orted -mca x")
    assert split(["-o", "StrictHostKeyChecking=no", "-p", "22", "root@gmbh2", "echo", "a b"]) == ("gmbh2", "echo a b")


def test_refuses_without_root_or_tools():
    missing = missing_requirements(1000, tools=("unshare", "no-such-tool-here"))
    assert any("root" in m for m in missing) and any("no-such-tool-here" in m for m in missing)
    assert missing_requirements(0, tools=("sh",)) == []


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("runuser"), reason="needs root and runuser")
def test_start_as_a_user_is_refused(tmp_path):
    p = subprocess.run(["runuser", "-u", "nobody", "--", str(SCRIPT), "start", "--hosts", "2"],
                       capture_output=True, text=True, env=dict(os.environ, GMB_EMULATED_CLUSTER_DIR=str(tmp_path)))
    assert p.returncode == 2 and "root" in p.stderr


@NEED_NAMESPACES
def test_hosts_have_their_own_name_boot_id_and_addresses(cluster):
    one, two = cluster.hosts
    assert [cluster.run(h, "hostname").stdout.strip() for h in cluster.hosts] == cluster.hosts
    boot_id = "/proc/sys/kernel/random/boot_id"
    assert cluster.run(one, "cat", boot_id).stdout != cluster.run(two, "cat", boot_id).stdout
    resolved = cluster.run(two, "getent", "hosts", one).stdout.split()
    assert resolved[0] == "10.78.0.2"  # the bridge address, never a loopback one
    assert cluster.run(one, "sh", "-c", "exit 7", check=False).returncode == 7


@NEED_NAMESPACES
def test_start_twice_is_fine(cluster):
    assert "already runs" in cluster.start().stderr


@NEED_NAMESPACES
def test_open_mpi_through_the_agent_uses_tcp(cluster, tmp_path):
    if not shutil.which("mpirun") or "Open MPI" not in subprocess.run(["mpirun", "--version"], capture_output=True,
                                                                      text=True).stdout:
        pytest.skip("Debian's Open MPI (mpirun) not found")
    one, two = cluster.hosts
    mpirun = ["mpirun", "--allow-run-as-root", "--mca", "plm_rsh_agent", cluster.agent, "--host", f"{one},{two}",
              "-np", "2", "--bind-to", "none"]
    assert sorted(cluster.run(one, *mpirun, "hostname").stdout.split()) == cluster.hosts
    hello = compiled(tmp_path, "mpicc.openmpi")
    p = cluster.run(one, *mpirun, "--mca", "pml", "ob1", "--mca", "btl_base_verbose", "100", hello)
    out = p.stdout + p.stderr
    uses = re.findall(r"\[(\S+?):\d+\] mca: bml: Using (\w+) btl for send to \S+ on node (\S+)", out)
    between = [btl for printer, btl, node in uses if printer != node]
    assert sorted(between) == ["tcp", "tcp"], out  # each rank to the other host: TCP, never vader (shared memory)


@NEED_NAMESPACES
def test_mpich_hydra_through_the_agent_uses_tcp(cluster, tmp_path):
    if not shutil.which("mpiexec.mpich"):
        pytest.skip("Debian's MPICH (mpiexec.mpich) not found")
    one, two = cluster.hosts
    hydra = ["mpiexec.mpich", "-launcher", "ssh", "-launcher-exec", cluster.agent, "-hosts", f"{one},{two}", "-n", "2"]
    assert sorted(cluster.run(one, *hydra, "hostname").stdout.split()) == cluster.hosts
    hello = compiled(tmp_path, "mpicc.mpich")
    p = cluster.run(one, *hydra, "-genv", "UCX_LOG_LEVEL", "info", hello)
    out = p.stdout + p.stderr
    endpoints = [line.split("ep_cfg")[1] for line in out.splitlines() if "ep_cfg" in line]
    to_the_other_host = [e for e in endpoints if "self/" not in e]
    assert len(to_the_other_host) == 2, out  # one endpoint from each rank
    assert all("tcp/eth0" in e and "memory" not in e for e in to_the_other_host), out  # never shared memory


@NEED_NAMESPACES
def test_netcheck_measures_tcp_between_two_hosts(cluster):
    out = cluster("netcheck", *cluster.hosts, "--iterations", "200", "--stream-bytes", str(8 << 20)).stdout
    result = json.loads(out.splitlines()[-1])
    assert result["stream_bytes"] == 8 << 20 and result["latency_8B_us"] > 0 and result["stream_GBps"] > 0


@NEED_NAMESPACES
def test_stop_removes_everything():
    c = Cluster(Path(f"/run/gmb-emulated-cluster-stop-{os.getpid()}"), "gmbs")
    try:
        c.start()
        assert c("status").returncode == 0
    finally:
        c("stop")
    assert not c.state.exists()
    assert subprocess.run(["ip", "link", "show", "gmbsbr0"], capture_output=True).returncode != 0
    assert str(c.state) not in Path("/proc/self/mountinfo").read_text()
    assert c("stop").returncode == 0  # twice is fine


def slurm_unavailable() -> str | None:
    tools = ["slurmctld", "slurmd", "sbatch", "srun", "munge", "unmunge"]
    if missing := [t for t in tools if not shutil.which(t)]:
        return f"{', '.join(missing)} not found (apt-get install slurm-wlm munge)"
    if subprocess.run("munge -n | unmunge", shell=True, capture_output=True).returncode != 0:
        return "munge does not work (munged not running: scripts/start-local-slurm.sh starts it)"
    return None


@NEED_NAMESPACES
@pytest.mark.skipif(slurm_unavailable() is not None, reason=slurm_unavailable() or "")
def test_slurm_runs_a_job_on_two_emulated_hosts(cluster, tmp_path):
    cluster("slurm", "start")
    try:
        out = tmp_path / "job.out"
        cluster.run(cluster.hosts[0], "sbatch", "-N", "2", "--wait", "-o", str(out), "--wrap", "srun -N 2 hostname")
        assert sorted(out.read_text().split()) == cluster.hosts
        if shutil.which("mpicc.openmpi"):  # Slurm's PMIx across hosts: each host keeps its own scratch directory
            hello = compiled(tmp_path, "mpicc.openmpi")
            cluster.run(cluster.hosts[0], "srun", "-N", "2", "-n", "2", "--mpi=pmix", hello)
    finally:
        cluster("slurm", "stop")


@NEED_NAMESPACES
def test_gpu_sharing_needs_gpus_per_host(tmp_path):
    cluster = Cluster(tmp_path / "state", "gmbg")
    p = cluster("start", "--hosts", "2", "--name", "gmbg", "--gpus", "2", check=False)
    assert p.returncode == 2 and "--gpus 2: give the machine's GPU count" in p.stderr
