# SPDX-License-Identifier: BSD-3-Clause
"""How busy this host was while a launch ran: other work on the cores the ranks need lowers every figure (an MPICH
bibw window read 16 ms instead of 31 us beside a compile), and a figure measured so must say so.

While a launch runs, its host is sampled a few times a second: the number of runnable threads (the kernel's
``procs_running``) less those of the launch's own process session and of the sampler. A launch is *busy* when, on
average over its samples (one taken just before it starts), that number exceeds the cores its ranks leave free
(CPUs of the host - ranks on it) by half a core or more. Linux only (/proc); elsewhere the load is unknown and no
launch is flagged. Only the host gmb runs on is seen: ranks on other hosts are not.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

SAMPLE_INTERVAL_S = 0.25
# how far the mean of other runnable threads may exceed the free cores before a launch is busy
BUSY_MARGIN = 0.5


def _procs_running() -> int | None:
    try:
        for line in Path("/proc/stat").read_text().splitlines():
            if line.startswith("procs_running "):
                return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def _running_threads_of_session(session: int) -> int:
    """Runnable threads (state R) of the processes of process session ``session``."""
    running = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            if int(stat[stat.rindex(")") + 2:].split()[3]) != session:
                continue
            for task in (entry / "task").iterdir():
                task_stat = (task / "stat").read_text()
                running += task_stat[task_stat.rindex(")") + 2:].startswith("R")
        except (OSError, ValueError, IndexError):
            continue
    return running


class LoadMonitor:
    """Samples the load beside one launch from start() (before it is started) to stop()."""

    def __init__(self, ranks_here: int, cpus: int | None = None):
        self.ranks_here = ranks_here
        self.cpus = cpus or os.cpu_count() or 1
        self.session: int | None = None
        self.others: list[int] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self):
        running = _procs_running()
        if running is None:
            return
        mine = _running_threads_of_session(self.session) if self.session else 0
        self.others.append(max(0, running - mine - 1))  # the sampler itself runs while it reads

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
        free = max(0, self.cpus - self.ranks_here)
        if not self.others:
            return {"cpus": self.cpus, "ranks_here": self.ranks_here, "busy": None,
                    "why": "no load could be read on this host (no /proc/stat)"}
        mean = sum(self.others) / len(self.others)
        busy = mean >= free + BUSY_MARGIN
        return {"cpus": self.cpus, "ranks_here": self.ranks_here, "samples": len(self.others),
                "others_running_mean": round(mean, 2), "others_running_max": max(self.others), "busy": busy,
                "why": (f"other work kept {mean:.1f} threads runnable on average beside {self.ranks_here} rank(s) on "
                        f"{self.cpus} CPU(s) ({free} free)") if busy else ""}


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
