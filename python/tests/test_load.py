# SPDX-License-Identifier: BSD-3-Clause
"""A launch that ran beside other work on the cores its ranks need is flagged busy, in the store, the tables and the
answers (load.py)."""

import json
import os
import subprocess
import sys
from pathlib import Path

from test_cli import run_gmb

from gmb.report import answers
from gmb.machine import load
from gmb.report import tables
from gmb.results.model import Results
from gmb.results.points import combine
from gmb.results.store import open_results
from gmb.report import cells


FOUR = load.LaunchCpus(frozenset(range(4)), 4, "CPU affinity")


def test_the_verdict_compares_other_runnable_threads_with_the_free_cores():
    monitor = load.LoadMonitor(ranks_here=2, cpus=FOUR)  # 2 cores free
    monitor.others = [2, 3, 2, 3]  # 2.5 on average: more than the free cores by half a core
    seen = monitor.stop()
    assert seen["busy"] and seen["others_running_mean"] == 2.5 and "2 free" in seen["why"]
    assert (seen["cpus"], seen["cpus_from"]) == (4, "CPU affinity")
    monitor = load.LoadMonitor(ranks_here=2, cpus=FOUR)
    monitor.others = [2, 2, 1, 3]
    assert monitor.stop()["busy"] is False
    assert load.busy_launch(json.dumps(seen)) and not load.busy_launch(None) and not load.busy_launch("not json")


def test_busy_host_is_recorded_and_flagged(fake_setup, tmp_path, capsys):
    c = tmp_path / "c.toml"
    c.write_text('[campaign]\nname = "busy"\nrepetitions = 2\nlibraries = ["fakempi-a"]\n\n[[run]]\n'
                 'benchmarks = ["bw"]\nmemory = ["host:host"]\n')
    # more busy threads than this host has CPUs: whatever else runs, no core is left for the ranks
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range((os.cpu_count() or 1) + 2)]
    try:
        rc = run_gmb("run", c, "--config", fake_setup["config"], "--no-detect", "--results", tmp_path / "res",
                     "--no-build", "--no-progress", "--no-report")
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    out = capsys.readouterr()
    assert rc == 0, out.err
    assert "ran on a busy host (other work kept" in out.err
    (outdir,) = (tmp_path / "res").iterdir()
    st = open_results(outdir)
    loads = [json.loads(x["load"]) for x in st.launches()]
    assert loads and all(x["busy"] and x["samples"] >= 1 and x["cpus"] == os.cpu_count() for x in loads)
    points = combine(Results.load(st).ok("bw"))
    assert points and all(p.busy == 2 for p in points)
    assert any("busy host: 2 of 2 launches" in cells.check_cell(cells.point_flags(p)) for p in points)
    assert any("2 of 2 launches ran on a busy host" in n for n in answers.answers(Results.load(st)).notes)


def _task(proc: Path, pid: int, tid: int, state: str, cpu: int, session: int, argv: tuple[str, ...] = ("x",)):
    """A thread as /proc shows it: /proc/PID/task/TID/stat (state, session, the CPU it last ran on) and the
    process's cmdline."""
    fields = [state, "1", str(pid), str(session)] + ["0"] * 32 + [str(cpu)] + ["0"] * 13
    (proc / str(pid) / "task" / str(tid)).mkdir(parents=True, exist_ok=True)
    (proc / str(pid) / "task" / str(tid) / "stat").write_text(f"{tid} (some name) {' '.join(fields)}\n")
    (proc / str(pid) / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")


def test_only_threads_runnable_on_the_launchs_cpus_count_and_never_the_launchs_own(tmp_path):
    proc = tmp_path / "proc"
    _task(proc, 100, 100, "R", 0, 100)  # another job on CPU 0: counts
    _task(proc, 100, 101, "R", 1, 100)  # and its second thread on CPU 1
    _task(proc, 100, 102, "S", 1, 100)  # sleeping: does not
    _task(proc, 200, 200, "R", 7, 200)  # runnable on a CPU outside the launch's (another job's cpuset)
    _task(proc, 300, 300, "R", 2, 300)  # the launcher's session: the launch's own
    _task(proc, 301, 301, "R", 3, 300)  # a rank it started
    # a rank srun started outside the launcher's session, known by the record file on its command line
    _task(proc, 400, 400, "R", 2, 400, ("gmb-bench", "bw", "--out", "/r/raw/b1.jsonl", "--format", "json"))
    (proc / "self").mkdir()
    monitor = load.LoadMonitor(2, load.LaunchCpus(frozenset(range(4)), 4, "CPU affinity"), marker="/r/raw/b1.jsonl",
                               proc=proc)
    monitor.start()  # before the launcher's session is known: only the record file tells the launch's own
    monitor.session = 300
    monitor._sample()
    assert monitor.others == [4, 2]
    assert load.LoadMonitor(2, load.LaunchCpus(frozenset(range(8)), 8, "x"), proc=proc).running_others() == 6
    assert load.LoadMonitor(2, FOUR, proc=tmp_path / "none").running_others() is None


def test_the_launchs_cpus_are_its_affinity_within_its_cpuset_and_slurm_allocation(tmp_path):
    proc, cg = tmp_path / "proc", tmp_path / "cgroup"
    (proc / "self").mkdir(parents=True)
    everything = lambda: set(range(64))  # noqa: E731
    # cgroup v2: the unified hierarchy's cpuset.cpus.effective
    (proc / "self" / "cgroup").write_text("0::/job_42/step_batch\n")
    (cg / "job_42" / "step_batch").mkdir(parents=True)
    (cg / "job_42" / "step_batch" / "cpuset.cpus.effective").write_text("4-7,12\n")
    cpus = load.LaunchCpus.of_this_process(proc, cg, env={}, affinity=everything)
    assert (cpus.cpus, cpus.capacity, cpus.source) == (frozenset({4, 5, 6, 7, 12}), 5, "cgroup cpuset within CPU affinity")
    # the affinity narrower still (taskset, a binding): it counts
    cpus = load.LaunchCpus.of_this_process(proc, cg, env={}, affinity=lambda: {4, 5})
    assert (cpus.cpus, cpus.capacity, cpus.source) == (frozenset({4, 5}), 2, "CPU affinity")
    # a Slurm allocation of fewer CPUs than the cpuset shows
    cpus = load.LaunchCpus.of_this_process(proc, cg, env={"SLURM_CPUS_ON_NODE": "3"}, affinity=everything)
    assert (cpus.capacity, cpus.source) == (3, "Slurm allocation within cgroup cpuset within CPU affinity")
    # cgroup v1: the cpuset hierarchy
    (proc / "self" / "cgroup").write_text("4:memory:/x\n3:cpuset:/slurm/uid_0/job_7\n")
    (cg / "cpuset" / "slurm" / "uid_0" / "job_7").mkdir(parents=True)
    (cg / "cpuset" / "slurm" / "uid_0" / "job_7" / "cpuset.effective_cpus").write_text("0-1\n")
    cpus = load.LaunchCpus.of_this_process(proc, cg, env={}, affinity=everything)
    assert (cpus.cpus, cpus.capacity) == (frozenset({0, 1}), 2)
    # no cgroup files (not Linux, another layout): the affinity alone
    cpus = load.LaunchCpus.of_this_process(tmp_path / "none", cg, env={}, affinity=lambda: {0, 1, 2})
    assert (cpus.capacity, cpus.source) == (3, "CPU affinity")


def test_slurm_cpus_of_this_node():
    assert load.slurm_cpus_here({"SLURM_CPUS_ON_NODE": "8", "SLURM_JOB_CPUS_PER_NODE": "4"}) == 8
    assert load.slurm_cpus_here({"SLURM_JOB_CPUS_PER_NODE": "4(x2),2", "SLURM_NODEID": "2"}) == 2
    assert load.slurm_cpus_here({"SLURM_JOB_CPUS_PER_NODE": "4(x2),2", "SLURM_NODEID": "1"}) == 4
    assert load.slurm_cpus_here({"SLURM_JOB_CPUS_PER_NODE": "16"}) == 16
    assert load.slurm_cpus_here({}) is None
    assert load.slurm_cpus_here({"SLURM_CPUS_ON_NODE": "many"}) is None
    assert load.parse_cpu_list("0-3,8,10-11\n") == frozenset({0, 1, 2, 3, 8, 10, 11})


def test_a_busy_allocation_is_told_from_a_busy_machine(tmp_path):
    """Four runnable threads of other jobs on a 64-CPU machine, none on the launch's two CPUs: not busy (the whole
    machine's CPUs said so before, and an allocation of 2 CPUs could not tell); two on its CPUs beside its 2 ranks:
    busy."""
    proc = tmp_path / "proc"
    for pid in range(10, 14):
        _task(proc, pid, pid, "R", 20 + pid, pid)
    mine = load.LaunchCpus(frozenset({0, 1}), 2, "cgroup cpuset within CPU affinity")
    monitor = load.LoadMonitor(2, mine, proc=proc)
    monitor.start()
    assert monitor.stop()["busy"] is False
    _task(proc, 20, 20, "R", 0, 20)
    _task(proc, 21, 21, "R", 1, 21)
    monitor = load.LoadMonitor(2, mine, proc=proc)
    monitor.start()
    seen = monitor.stop()
    assert seen["busy"] and "beside 2 rank(s) on 2 CPU(s) (0 free)" in seen["why"]
