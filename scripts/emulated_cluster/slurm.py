# SPDX-License-Identifier: BSD-3-Clause
"""A real Slurm across the emulated hosts: slurmctld in host 1, one slurmd per host, the machine's munge."""

import os
import shutil
import subprocess
import time
from pathlib import Path

from emulated_cluster.core import HOST_LOCAL, STATE, Refused, cluster, require, run_in, say

SLURM_CLUSTER = "gmbemu"
SLURM_DIR = STATE / "slurm"


def slurm_conf(c: dict) -> str:
    cpus = os.cpu_count() or 1
    first = c["hosts"][0]
    names = ",".join(h["name"] for h in c["hosts"])
    d = SLURM_DIR
    return "\n".join([
        "# written by gmb scripts/emulated-cluster",
        f"ClusterName={SLURM_CLUSTER}",
        f"SlurmctldHost={first['name']}({first['address']})",
        "SlurmUser=root", "SlurmdUser=root",
        "AuthType=auth/munge", "CryptoType=crypto/munge",
        "MpiDefault=none", "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
        "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core", "SlurmdParameters=config_overrides",
        "ReturnToService=2",
        f"StateSaveLocation={d}/ctld", f"SlurmdSpoolDir={d}/spool-%n",
        f"SlurmctldPidFile={d}/slurmctld.pid", f"SlurmdPidFile={d}/slurmd-%n.pid",
        f"SlurmctldLogFile={d}/slurmctld.log", f"SlurmdLogFile={d}/slurmd-%n.log",
        "JobAcctGatherType=jobacct_gather/none", "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/none", "SchedulerType=sched/backfill",
        "InactiveLimit=0", "KillWait=5", "MinJobAge=60", "SlurmctldTimeout=30", "SlurmdTimeout=30",
        *(f"NodeName={h['name']} NodeAddr={h['address']} CPUs={cpus} State=UNKNOWN" for h in c["hosts"]),
        f"PartitionName=emu Nodes={names} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES",
    ]) + "\n"


def slurm_daemons() -> list[tuple[str, int]]:
    """(daemon, pid) of every Slurm daemon of this cluster that runs."""
    found = []
    for pidfile in sorted(SLURM_DIR.glob("*.pid")) if SLURM_DIR.exists() else []:
        try:
            pid = int(pidfile.read_text())
            if Path(f"/proc/{pid}/stat").read_text().split(") ")[-1][0] != "Z":  # an exited daemon is gone
                found.append((pidfile.stem, pid))
        except (ValueError, OSError):  # no pid file (any more), no such process
            pass
    return found


def munge_works() -> bool:
    if not shutil.which("munge"):
        return False
    return subprocess.run("munge -n | unmunge", shell=True, capture_output=True).returncode == 0


def slurm_start(c: dict, timeout: float) -> int:
    require(("nsenter", "slurmctld", "slurmd", "sinfo", "scontrol", "munge", "unmunge"))
    if not munge_works():
        raise Refused("munge does not work here: start munged (scripts/start-local-slurm.sh shows how)")
    SLURM_DIR.mkdir(exist_ok=True)
    (SLURM_DIR / "ctld").mkdir(exist_ok=True)
    conf = SLURM_DIR / "slurm.conf"
    conf.write_text(slurm_conf(c))
    (SLURM_DIR / "mpi.conf").write_text(f"PMIxCliTmpDirBase={HOST_LOCAL}\n")
    running = dict(slurm_daemons())
    first = c["hosts"][0]["name"]
    if "slurmctld" not in running:
        run_in(c, first, ["slurmctld", "-f", str(conf)], check=True)
    for h in c["hosts"]:
        (SLURM_DIR / f"spool-{h['name']}").mkdir(exist_ok=True)
        if f"slurmd-{h['name']}" not in running:
            run_in(c, h["name"], ["slurmd", "-f", str(conf), "-N", h["name"]], check=True)
    deadline = time.monotonic() + timeout
    states = ""
    while time.monotonic() < deadline:
        p = run_in(c, first, ["sinfo", "-h", "-N", "-o", "%N %T"], capture_output=True, text=True)
        states = p.stdout.strip()
        ready = [line for line in states.splitlines() if line.split()[-1].startswith(("idle", "mixed", "alloc"))]
        if len(ready) == len(c["hosts"]):
            say(f"Slurm is up: {states.replace(chr(10), ', ')}")
            command = Path(__file__).resolve().parents[1] / "emulated-cluster"
            print(f"use it from a host: {command} run {first} -- sbatch -N 2 --wrap 'srun -N 2 "
                  f"hostname'  (run sets SLURM_CONF={conf}; set it yourself otherwise)")
            return 0
        time.sleep(1)
    raise Refused(f"Slurm nodes not idle after {timeout:.0f} s (sinfo: {states!r}); logs: {SLURM_DIR}/*.log")


def slurm_stop(quiet: bool = False) -> int:
    daemons = slurm_daemons()
    for _, pid in daemons:
        os.kill(pid, 15)
    for _ in range(50):
        if not slurm_daemons():
            break
        time.sleep(0.2)
    if not quiet:
        say(f"stopped {len(daemons)} Slurm daemons" if daemons else "no Slurm daemon of the cluster runs")
    return 0


def slurm(args):
    if args.action == "start":
        return slurm_start(cluster(), args.timeout)
    return slurm_stop()

