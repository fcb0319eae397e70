# SPDX-License-Identifier: BSD-3-Clause
"""`gmb slurm`'s batch script under a real Slurm across two emulated hosts (scripts/emulated-cluster): written in
host 1 (the login node, the engines built or found there), submitted from another directory with
`sbatch -N 2 --wait`, its `gmb run --nodes 1,2` launching Debian's Open MPI and MPICH by srun (pmix, pmi2) into one
store and one report. Skipped, with the reason, without root, namespaces, slurm-wlm and munge, or the libraries."""

import json
import os
import shlex
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from realmpi import DEBIAN, have_debian
from test_emulated_cluster import WHY, Cluster, slurm_unavailable

from gmb.report import tables
from gmb.results.model import Results
from gmb.results.store import open_results

pytestmark = [pytest.mark.skipif(WHY is not None, reason=WHY or ""),
              pytest.mark.skipif(slurm_unavailable() is not None, reason=slurm_unavailable() or ""),
              pytest.mark.skipif(not (have_debian("openmpi") and have_debian("mpich")),
                                 reason="needs cmake, g++ and both Debian MPIs")]

HOSTS = ["gmbj1", "gmbj2"]
CAMPAIGN = """
[campaign]
name = "sbatch"
repetitions = 1
timeout_s = 60
order = "sequential"

[[run]]
benchmarks = ["latency"]
memory = ["host:host"]
sizes = "8"
path = "inter-node"
bind = "none"
options = { iters = 20, warmup = 2 }

[[run]]
benchmarks = ["coll"]
operations = ["allreduce"]
sizes = "1K"
bind = "none"
options = { iters = 20, warmup = 2, mem = "host" }
"""
# nothing hangs: a launch ends at the campaign's timeout_s, the job at its time limit, sbatch --wait before ours
JOB_MINUTES = 4
SBATCH_TIMEOUT_S = JOB_MINUTES * 60 + 60

# Launched by srun in the job: no launcher arguments (an agent's would reach srun).
LIBRARIES = "".join(f"""
[[library]]
name = "{name}"
family = "{family}"
launcher_path = "{DEBIAN[family][1]}"
""" for name, family in (("ompi", "openmpi"), ("mpich", "mpich")))


def tail(path: Path, chars: int = 3000) -> str:
    return f"--- {path}:\n{path.read_text(errors='replace')[-chars:]}" if path.is_file() else f"--- {path}: absent"


def slurm_logs(cluster: Cluster) -> str:
    return "\n".join(tail(p, 1500) for p in sorted((cluster.state / "slurm").glob("*.log")))


def gmb_on_path(bindir: Path) -> Path:
    """A `gmb` command for this tree's harness, as a venv's would be."""
    bindir.mkdir()
    gmb = bindir / "gmb"
    src = Path(__file__).resolve().parents[1] / "src"
    gmb.write_text(f"#!/bin/sh\nPYTHONPATH={shlex.quote(str(src))} exec {shlex.quote(sys.executable)} -m gmb \"$@\"\n")
    gmb.chmod(0o755)
    return bindir


@pytest.fixture(scope="module")
def job(engine_env, tmp_path_factory):
    cluster = Cluster(Path(f"/run/gmb-emulated-cluster-sbatch-{os.getpid()}"), "gmbj")
    cluster("start", "--hosts", "2", "--name", "gmbj", "--bridge", "gmbjbr0", "--subnet", "10.81.0.0/24")
    try:
        up = cluster("slurm", "start", check=False)
        assert up.returncode == 0, up.stderr + slurm_logs(cluster)
        login, submit = tmp_path_factory.mktemp("login"), tmp_path_factory.mktemp("submit")
        (login / "c.toml").write_text(CAMPAIGN)
        (login / "libs.toml").write_text(LIBRARIES)
        bindir = gmb_on_path(login / "bin")
        # written in host 1 from its own directory, with paths relative to it
        build_env = {"GMB_SOURCE": engine_env["source"], "GMB_CACHE": engine_env["cache"],
                     "GMB_ENABLE_CUDA": engine_env["cuda"], "HOME": login / "home"}
        write = cluster.run(HOSTS[0], "sh", "-c", f"cd {shlex.quote(str(login))} && exec env " + shlex.join(
            [*(f"{k}={v}" for k, v in build_env.items()), str(bindir / "gmb"), "slurm", "c.toml", "--config",
             "libs.toml", "--no-detect", "--nodes", "1,2", "--ranks-per-node", "2", "--time", str(JOB_MINUTES),
             "--setup", f"export PATH={shlex.quote(str(bindir))}:$PATH", "-o", "job.sbatch"]),
            check=False, timeout=1800)  # builds the engines when the session has not yet
        outcome = {"write": write, "script": login / "job.sbatch", "submit": submit, "sbatch": None}
        if write.returncode == 0:
            # the environment the job gets holds no gmb variable: the script's exports and setup must do
            sbatch = ["env", "-u", "GMB_CACHE", "-u", "GMB_SOURCE", "-u", "GMB_ENABLE_CUDA", "-u", "PYTHONPATH",
                      "sbatch", "-N", "2", "--wait", "--chdir", str(submit), str(login / "job.sbatch")]
            try:
                outcome["sbatch"] = cluster.run(HOSTS[0], *sbatch, check=False, timeout=SBATCH_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                cluster.run(HOSTS[0], "scancel", "--jobname", "gmb-sbatch", check=False)
                outcome["sbatch"] = f"sbatch --wait still waiting after {SBATCH_TIMEOUT_S} s (job cancelled)"
        outcome["slurm_logs"] = slurm_logs(cluster)
        yield outcome
    finally:
        cluster("stop", check=False)


def what_happened(job) -> str:
    """Everything that says why the job did not do its work."""
    w, s = job["write"], job["sbatch"]
    parts = [f"gmb slurm: exit {w.returncode}\n{w.stdout[-1500:]}{w.stderr[-3000:]}"]
    if isinstance(s, subprocess.CompletedProcess):
        parts.append(f"sbatch -N 2 --wait: exit {s.returncode}\n{s.stdout[-1500:]}{s.stderr[-1500:]}")
    elif s:
        parts.append(s)
    parts += [tail(p) for p in sorted(job["submit"].glob("gmb-*.out"))] or [f"no job output in {job['submit']}"]
    return "\n".join(parts + [job["slurm_logs"]])


def results_dir(job) -> Path:
    found = list((job["submit"] / "results").glob("*/store.sqlite"))
    assert len(found) == 1, what_happened(job)
    return found[0].parent


def test_the_job_runs_to_completion(job):
    assert job["write"].returncode == 0 and job["sbatch"] is not None, what_happened(job)
    statuses = {row[0] for row in sqlite3.connect(results_dir(job) / "store.sqlite").execute("SELECT status FROM launches")}
    # exit 1 only for a launch that hung in MPI_Finalize after measuring (see below)
    assert job["sbatch"].returncode == 0 or statuses == {"ok", "finalize-hang"}, what_happened(job)
    (out,) = list(job["submit"].glob("gmb-*.out"))  # in the directory submitted from
    assert "gmb: job " in out.read_text() and "node counts 1,2: gmb run " in out.read_text()
    assert f"on {HOSTS[0]} in" in job["script"].read_text()  # written on the login node


def test_srun_launched_each_family_on_one_and_two_nodes(job):
    db = sqlite3.connect(results_dir(job) / "store.sqlite")
    launches = db.execute("SELECT library, benchmark, nodes, status, argv FROM launches").fetchall()
    # finalize-hang: Debian's MPICH 4.0.2 over UCX's tcp now and then hangs in MPI_Finalize after measuring
    # (test_multinode_real.py); gmb ends it soon after with its records stored
    assert {row[3] for row in launches} <= {"ok", "finalize-hang"}, (launches, what_happened(job))
    assert {(lib, nodes) for lib, benchmark, nodes, _, _ in launches if benchmark.startswith("coll")} == {
        ("ompi", 1), ("ompi", 2), ("mpich", 1), ("mpich", 2)}
    plugin = {"ompi": "--mpi=pmix", "mpich": "--mpi=pmi2"}
    for lib, _, _, _, argv in launches:
        argv = json.loads(argv)
        assert argv[0] == "srun" and plugin[lib] in argv, argv


def test_the_records_span_both_hosts(job):
    r = Results.load(open_results(results_dir(job)))
    for ctx in r.contexts:
        hosts = [rank["host"] for rank in ctx.record["ranks"]]
        # srun placed the ranks in blocks, host by host: [gmbj1, gmbj2] for a pair, 2 per host for collectives
        assert hosts == sorted(hosts) and set(hosts) <= set(HOSTS), hosts
    latency = [x for x in r.ok() if x.benchmark == "latency"]
    assert {x.library for x in latency} == {"ompi", "mpich"}
    assert {x.path_class for x in latency} == {"inter-node"} and {x.config.hosts for x in latency} == {2}
    two_nodes = [x for x in r.ok("coll") if x.config.hosts == 2]
    assert two_nodes and {x.path_class for x in two_nodes} == {"mixed"}  # 2 ranks on each of the 2 hosts


def test_the_report_holds_the_collectives_over_node_counts(job):
    d = results_dir(job)
    r = Results.load(open_results(d))
    assert sorted({x.config.hosts for x in r.ok("coll")}) == [1, 2]
    (t,) = [t for t in tables.all_tables(r) if t.title.startswith("Collectives over node counts")]
    assert {row[0] for row in t.rows} == {"ompi", "mpich"}
    assert "Collectives over node counts" in (d / "report.html").read_text()
