# SPDX-License-Identifier: BSD-3-Clause
"""What a launch left running: the processes of a launch's session, stopped when its gmb died holding the results
directory (``stop_leftovers``), and those of a launch whose gmb is gone (``leftover_launches``: they name a record
file of a results directory no gmb holds), found from /proc, so that a campaign started beside them is warned too."""

from __future__ import annotations

import os
import signal
import socket
import time
from pathlib import Path

from .locks import held
from ..results.store import is_results_directory


def session_members(session: int) -> list[int]:
    """Processes of this host in process session ``session`` (a launch's launcher and every rank and daemon it
    started, unless they left the session), from /proc."""
    pids = []
    if not Path("/proc/self/stat").exists():  # no procfs (not Linux): the launcher's process group only
        try:
            os.killpg(session, 0)
            return [session]
        except OSError:
            return []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) ": state ppid pgrp session ...
        if len(fields) > 3 and int(fields[3]) == session and fields[0] != "Z":
            pids.append(int(entry.name))
    return pids


def _argv(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [a.decode("utf-8", "replace") for a in raw.split(b"\0")[:-1]]


def command_line(pid: int) -> str:
    return " ".join(_argv(pid))


def record_file_of(pid: int) -> Path | None:
    """The record file a process's command line names (``--out FILE``; a plan's launch: its ``--status FILE``, which
    lies beside its blocks' record files), as an absolute path: a relative one (a campaign run with a relative
    --results) is taken from the process's own working directory, /proc/PID/cwd."""
    argv = _argv(pid)
    for i, arg in enumerate(argv):
        named = next((arg[len(o) + 1:] for o in ("--out", "--status") if arg.startswith(o + "=")), None)
        path = argv[i + 1] if arg in ("--out", "--status") and i + 1 < len(argv) else named
        if path:
            try:
                return (Path(os.readlink(f"/proc/{pid}/cwd")) / path).resolve()
            except OSError:  # gone, or not ours to look at
                return None
    return None


def names_record_file(pid: int, record_file: str | Path) -> bool:
    """Whether a process runs the launch that writes ``record_file`` (its command line names it, relative or not)."""
    return record_file_of(pid) == Path(record_file).resolve()


def stop_session(session: int, grace_s: float = 5.0) -> list[int]:
    """SIGTERM to every process of the session, then SIGKILL to what is left after ``grace_s``; waits until they
    are gone (at most a few seconds more). Returns the pids that were found."""
    found = alive = session_members(session)
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        if not alive:
            break
        for pid in alive:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        try:
            os.killpg(session, sig)  # the launcher's group too: without procfs it is all that can be found
        except OSError:
            pass
        deadline = time.monotonic() + wait_s
        while (alive := session_members(session)) and time.monotonic() < deadline:
            time.sleep(0.1)
    return found


def stop_leftovers(previous: dict) -> str:
    """Stop the launch a dead owner of a results directory left running. Its session is only touched when one of
    its processes names the launch's record file (a reused session id belongs to someone else). Returns what was
    done, for the user ("" when nothing was left)."""
    launch = previous.get("launch") or {}
    session, record_file = launch.get("session"), launch.get("record_file")
    if not (isinstance(session, int) and record_file):
        return ""
    if previous.get("host") != socket.gethostname():
        return (f"warning: the previous gmb (pid {previous.get('pid')}) died on host {previous.get('host')} while "
                f"running launch {launch.get('id')}; its processes there cannot be checked from here: make sure "
                f"they are gone (session {session}), or their load lowers the figures of the rerun")
    members = session_members(session)
    if not any(names_record_file(pid, record_file) for pid in members):
        return ""
    pids = stop_session(session)
    return (f"the previous gmb (pid {previous.get('pid')}) died while running launch {launch.get('id')}; stopped "
            f"its {len(pids)} leftover process(es) ({', '.join(map(str, sorted(pids)))}) before running it again")


def _launch_record_file(pid: int) -> Path | None:
    """The record file a process's command line names, when it lies in a results directory's raw/ (a campaign's or
    a search's)."""
    path = record_file_of(pid)
    return path if path and path.parent.name == "raw" and is_results_directory(path.parent.parent) else None


def leftover_launches(live_results: set[str]) -> list[dict]:
    """Processes of this node that run a launch no gmb runs any more (their gmb was killed, e.g. by kill -9, and
    SIGKILL cannot be passed on): the launcher and ranks whose command line names a record file in a results
    directory (``--out DIR/raw/LAUNCH.jsonl``) that is not among ``live_results`` (resolved paths) and that no gmb
    holds. One entry per results directory: {"leftover": True, "results", "pids"}."""
    found: dict[str, list[int]] = {}
    if not Path("/proc/self/cmdline").exists():
        return []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        record = _launch_record_file(int(entry.name))
        if record is not None:
            found.setdefault(str(record.parent.parent), []).append(int(entry.name))
    return [{"leftover": True, "results": results, "pids": sorted(pids)} for results, pids in sorted(found.items())
            if results not in live_results and not held(results)]
