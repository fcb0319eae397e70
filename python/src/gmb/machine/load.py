# SPDX-License-Identifier: BSD-3-Clause
"""How busy this host was while a launch ran: other work on the cores the ranks need lowers every figure (an MPICH
bibw window read 16 ms instead of 31 us beside a compile), and a figure measured so must say so.

The launch's CPUs are those gmb may run on, which its ranks inherit: its CPU affinity (``os.sched_getaffinity``)
within its cgroup's cpuset (``cpuset.cpus.effective``, cgroup v2; ``cpuset.effective_cpus``, v1), and in a Slurm
allocation no more than the allocation's CPUs on this node (``SLURM_CPUS_ON_NODE``, else this node's entry of
``SLURM_JOB_CPUS_PER_NODE``). While a launch runs, its host is sampled a few times a second: the threads runnable on
those CPUs (state R in ``/proc/*/task/*/stat``, by the CPU each last ran on), less the launch's own (its process
session, and under srun, whose ranks are no children of the launcher, every process whose command line names the
launch's record file) and gmb's. A launch is *busy* when, on average over its samples (one taken just before it
starts), that number exceeds the CPUs its ranks leave free (the launch's CPUs - ranks on this host) by half a CPU or
more. Linux only (/proc); elsewhere the load is unknown and no launch is flagged. Only the host gmb runs on is seen:
ranks on other hosts are not. Where Slurm does not confine the job to its CPUs (no cpuset), the allocation's count is
the capacity and every runnable thread of the node's CPUs counts.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Mapping
from pathlib import Path

SAMPLE_INTERVAL_S = 0.25
# how far the mean of other runnable threads may exceed the free CPUs before a launch is busy
BUSY_MARGIN = 0.5


def parse_cpu_list(text: str) -> frozenset[int]:
    """The CPUs of a kernel CPU list ("0-3,8,10-11"); ValueError when it is not one."""
    cpus: set[int] = set()
    for part in filter(None, text.strip().split(",")):
        lo, _, hi = part.partition("-")
        cpus.update(range(int(lo), int(hi or lo) + 1))
    return frozenset(cpus)


def _cgroup_cpuset(proc: Path, cgroup_root: Path) -> frozenset[int] | None:
    """The CPUs this process's cgroup allows (v2: the unified hierarchy's cpuset.cpus.effective; v1: the cpuset
    hierarchy's cpuset.effective_cpus), None when no such file says."""
    try:
        lines = (proc / "self" / "cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        rel = path.lstrip("/")
        if controllers == "":
            candidates = [cgroup_root / rel / "cpuset.cpus.effective", cgroup_root / "unified" / rel / "cpuset.cpus.effective"]
        elif "cpuset" in controllers.split(","):
            candidates = [cgroup_root / "cpuset" / rel / "cpuset.effective_cpus", cgroup_root / "cpuset" / rel / "cpuset.cpus"]
        else:
            continue
        for f in candidates:
            try:
                cpus = parse_cpu_list(f.read_text())
            except (OSError, ValueError):
                continue
            if cpus:
                return cpus
    return None


def slurm_cpus_here(env: Mapping[str, str]) -> int | None:
    """The CPUs of this node a Slurm allocation holds: SLURM_CPUS_ON_NODE, else this node's (SLURM_NODEID's) entry of
    SLURM_JOB_CPUS_PER_NODE ("4(x2),2": 4, 4, 2); None outside an allocation or when they do not say."""
    try:
        if env.get("SLURM_CPUS_ON_NODE"):
            return int(env["SLURM_CPUS_ON_NODE"])
        per_node: list[int] = []
        for part in filter(None, env.get("SLURM_JOB_CPUS_PER_NODE", "").split(",")):
            count, _, times = part.partition("(x")
            per_node += [int(count)] * (int(times.rstrip(")")) if times else 1)
        node = int(env.get("SLURM_NODEID", "0"))
        return per_node[node] if node < len(per_node) else None
    except ValueError:
        return None


class LaunchCpus:
    """The CPUs a launch's ranks on this host may run on (``cpus``) and how many of them it may use (``capacity``:
    fewer where a Slurm allocation says so), with where that comes from (``source``)."""

    def __init__(self, cpus: frozenset[int], capacity: int, source: str):
        self.cpus, self.capacity, self.source = cpus, capacity, source

    @classmethod
    def of_this_process(cls, proc: Path = Path("/proc"), cgroup_root: Path = Path("/sys/fs/cgroup"),
                        env: Mapping[str, str] | None = None,
                        affinity: Callable[[], set[int]] | None = None) -> LaunchCpus:
        """What gmb's own process may use, as its launches' ranks inherit it (the arguments: for tests)."""
        env = os.environ if env is None else env
        try:
            cpus = frozenset((affinity or (lambda: os.sched_getaffinity(0)))())
            sources = ["CPU affinity"]
        except (AttributeError, OSError):
            cpus, sources = frozenset(range(os.cpu_count() or 1)), ["the CPUs of the host"]
        cpuset = _cgroup_cpuset(proc, cgroup_root)
        if cpuset is not None and cpuset & cpus and cpuset & cpus != cpus:
            cpus, sources = cpus & cpuset, sources + ["cgroup cpuset"]
        capacity = len(cpus)
        slurm = slurm_cpus_here(env)
        if slurm and slurm < capacity:
            capacity, sources = slurm, sources + ["Slurm allocation"]
        return cls(cpus, capacity, " within ".join(reversed(sources)) if len(sources) > 1 else sources[0])


class LoadMonitor:
    """Samples the load beside one launch from start() (before it is started) to stop(). ``marker``: the launch's
    record file, on the command line of each of its ranks (srun starts them outside the launcher's session)."""

    def __init__(self, ranks_here: int, cpus: LaunchCpus | None = None, marker: str | None = None,
                 proc: Path = Path("/proc")):
        self.ranks_here = ranks_here
        self.cpus = cpus or LaunchCpus.of_this_process(proc)
        self.marker = marker
        self.proc = proc
        self.session: int | None = None
        self.others: list[int] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _launch_process(self, pid: str, session: int) -> bool:
        """Whether process ``pid`` (of process session ``session``) is the launch's: in its session, or a rank whose
        command line names the launch's record file."""
        if self.session is not None and session == self.session:
            return True
        if not self.marker:
            return False
        try:
            argv = (self.proc / pid / "cmdline").read_bytes().split(b"\0")
        except OSError:
            return False
        return self.marker.encode() in argv

    def running_others(self) -> int | None:
        """Threads runnable on the launch's CPUs that are neither the launch's nor gmb's; None without /proc."""
        try:
            entries = list(self.proc.iterdir())
        except OSError:
            return None
        me, others = str(os.getpid()), 0
        for entry in entries:
            if not entry.name.isdigit() or entry.name == me:
                continue
            runnable = 0
            session = None
            try:
                for task in (entry / "task").iterdir():
                    fields = (task / "stat").read_text()
                    fields = fields[fields.rindex(")") + 2:].split()
                    session = int(fields[3])
                    runnable += fields[0] == "R" and int(fields[36]) in self.cpus.cpus
            except (OSError, ValueError, IndexError):
                continue
            if runnable and not self._launch_process(entry.name, session):
                others += runnable
        return others

    def _sample(self):
        others = self.running_others()
        if others is not None:
            self.others.append(others)

    def start(self):
        """One sample before the launch exists, then every SAMPLE_INTERVAL_S once watch() names its session."""
        self._sample()

    def watch(self, session: int):
        self.session = session
        self._thread = threading.Thread(target=self._run, name="gmb-load", daemon=True)
        self._thread.start()

    def _run(self):
        while not self._stop.wait(SAMPLE_INTERVAL_S):
            self._sample()

    def stop(self) -> dict:
        """What was seen (the launch's ``load``)."""
        self._stop.set()
        if self._thread:
            self._thread.join()
        cpus = self.cpus.capacity
        free = max(0, cpus - self.ranks_here)
        seen = {"cpus": cpus, "cpus_from": self.cpus.source, "ranks_here": self.ranks_here}
        if not self.others:
            return {**seen, "busy": None, "why": "no load could be read on this host (no /proc)"}
        mean = sum(self.others) / len(self.others)
        busy = mean >= free + BUSY_MARGIN
        return {**seen, "samples": len(self.others), "others_running_mean": round(mean, 2),
                "others_running_max": max(self.others), "busy": busy,
                "why": (f"other work kept {mean:.1f} threads runnable on average beside {self.ranks_here} rank(s) on "
                        f"{cpus} CPU(s) ({free} free)") if busy else ""}


def busy_launch(load: str | dict | None) -> bool:
    """Whether a launch's stored ``load`` (JSON or dict) says the host was busy."""
    if isinstance(load, str):
        try:
            load = json.loads(load)
        except ValueError:
            return False
    return bool(isinstance(load, dict) and load.get("busy"))


def describe_campaign(other: dict) -> str:
    """A campaign of this node (NodeCampaigns), or the processes of a launch whose gmb is gone (leftover_launches),
    in a few words."""
    if other.get("leftover"):
        return (f"processes of a launch whose gmb is gone, pids {', '.join(map(str, other['pids']))}, results "
                f"{other.get('results', '?')}")
    gpus = "all GPUs" if other.get("gpus") is None else f"GPUs {','.join(other['gpus'])}"
    return (f"pid {other.get('pid', '?')} since {other.get('started_utc', '?')}, {gpus}, results "
            f"{other.get('results', '?')}")
