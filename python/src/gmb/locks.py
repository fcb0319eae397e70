# SPDX-License-Identifier: BSD-3-Clause
"""Who is using a results directory, what a dead user left running, and which campaigns share this node.

A results directory holds ``gmb.lock`` while a run or a resume uses it: an flock (released by the kernel when its
owner dies, even by kill -9) over a JSON line saying who owns it (pid, host, start) and which launch is running
(its process session and record file). A second user is refused with the owner's pid. The next owner of a lock
whose holder died reads the launch it was running and stops that launch's processes, which would otherwise run
beside the rerun and lower its figures.

Every campaign also leaves a held file in a directory of this node (``$GMB_NODE_LOCK_DIR``, default
``<tmp>/gmb-campaigns``), so that a campaign started beside another one on the same GPUs and cores is warned."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import socket
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

LOCK_NAME = "gmb.lock"


class ResultsBusy(RuntimeError):
    """The results directory is in use by another gmb process."""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _read_json(fd: int) -> dict:
    os.lseek(fd, 0, os.SEEK_SET)
    text = b""
    while chunk := os.read(fd, 65536):
        text += chunk
    try:
        data = json.loads(text.decode("utf-8", "replace") or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _write_json(fd: int, data: dict):
    blob = json.dumps(data).encode()
    os.lseek(fd, 0, os.SEEK_SET)
    os.ftruncate(fd, 0)
    os.write(fd, blob)


def _owner_text(owner: dict) -> str:
    launch = owner.get("launch") or {}
    running = f", running launch {launch.get('id')}" if launch.get("id") else ""
    return (f"pid {owner.get('pid', '?')} on host {owner.get('host', '?')}, {owner.get('command', 'gmb')} since "
            f"{owner.get('started_utc', '?')}{running}")


class ResultsLock:
    """The lock of one results directory, held from acquire() to release() (or the holder's death)."""

    def __init__(self, outdir: str | Path, command: str):
        self.outdir = Path(outdir)
        self.path = self.outdir / LOCK_NAME
        self.command = command
        self.fd: int | None = None
        self.owner: dict = {}

    def acquire(self) -> dict:
        """Take the lock, or raise ResultsBusy naming the live owner. Returns what a previous owner that died
        holding it had written (its running launch in ``launch``), or {}."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = _read_json(fd)
            os.close(fd)
            raise ResultsBusy(f"{self.outdir} is in use by another gmb ({_owner_text(owner)}); running the same "
                              f"launches twice would store each twice and lower both figures: wait for it to "
                              f"end, or stop it (kill {owner.get('pid', 'PID')}) and resume") from None
        previous = _read_json(fd)
        self.fd = fd
        self.owner = {"pid": os.getpid(), "host": socket.gethostname(), "command": self.command,
                      "started_utc": _now()}
        _write_json(fd, self.owner)
        return previous if previous.get("pid") else {}

    def running(self, launch_id: str | None, session: int | None = None, record_file: str | None = None):
        """Say which launch runs now (None: none), so that a successor can stop it if this process dies."""
        launch = {"id": launch_id, "session": session, "record_file": record_file} if launch_id else None
        _write_json(self.fd, {**self.owner, "launch": launch})

    def release(self):
        if self.fd is None:
            return
        _write_json(self.fd, {})  # a clean end leaves nothing for a successor to stop
        os.close(self.fd)
        self.fd = None


# --------------------------------------------------------------------------- processes of a launch
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


def _command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
    except OSError:
        return ""


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
    if not any(record_file in _command_line(pid) for pid in members):
        return ""
    pids = stop_session(session)
    return (f"the previous gmb (pid {previous.get('pid')}) died while running launch {launch.get('id')}; stopped "
            f"its {len(pids)} leftover process(es) ({', '.join(map(str, sorted(pids)))}) before running it again")


# --------------------------------------------------------------------------- campaigns on this node
def _node_dir() -> Path:
    return Path(os.environ.get("GMB_NODE_LOCK_DIR") or Path(tempfile.gettempdir()) / "gmb-campaigns")


def _gpus() -> set[str] | None:
    """The GPUs this process may use (CUDA_VISIBLE_DEVICES), None for all of them."""
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    return None if visible is None else {g.strip() for g in visible.split(",") if g.strip()}


class NodeCampaigns:
    """This campaign's entry among the campaigns of this node (advisory: a problem here never stops a run)."""

    def __init__(self, results: str | Path):
        self.results = str(Path(results).resolve())
        self.fd: int | None = None
        self.path: Path | None = None

    def join(self) -> list[dict]:
        """Register this campaign; returns the other live campaigns that share its GPUs (and so its cores)."""
        d = _node_dir()
        try:
            d.mkdir(mode=0o1777, parents=True, exist_ok=True)
            others = self._live_others(d)
            self.path = d / f"{socket.gethostname()}-{os.getpid()}.json"
            self.fd = self._hold(self.path)
            gpus = _gpus()
            _write_json(self.fd, {"pid": os.getpid(), "host": socket.gethostname(), "results": self.results,
                                  "started_utc": _now(), "gpus": None if gpus is None else sorted(gpus)})
        except OSError:
            return []
        mine = _gpus()
        return [o for o in others if mine is None or o.get("gpus") is None or mine & set(o["gpus"])]

    @staticmethod
    def _hold(path: Path) -> int:
        """Create and lock this campaign's entry. Another campaign may be glancing at it (a shared lock for a
        moment) or, seeing it not yet locked, remove it: retry until the locked file is the one under the name."""
        for _ in range(50):
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                if path.exists() and os.stat(path).st_ino == os.fstat(fd).st_ino:
                    return fd
            except BlockingIOError:
                pass
            os.close(fd)
            time.sleep(0.01)
        raise OSError(f"{path}: could not be held")

    def _live_others(self, d: Path) -> list[dict]:
        others = []
        for f in d.glob("*.json"):
            try:
                fd = os.open(f, os.O_RDONLY)
            except OSError:
                continue
            try:
                try:
                    fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                except BlockingIOError:  # held: that campaign is running
                    others.append(_read_json(fd))
                    continue
                try:
                    f.unlink()  # the entry of a campaign that ended without removing it
                except OSError:
                    pass
            finally:
                os.close(fd)
        return others

    def leave(self):
        if self.fd is None:
            return
        try:
            self.path.unlink()
        except OSError:
            pass
        os.close(self.fd)
        self.fd = None


def describe_campaign(other: dict) -> str:
    gpus = "all GPUs" if other.get("gpus") is None else f"GPUs {','.join(other['gpus'])}"
    return (f"pid {other.get('pid', '?')} since {other.get('started_utc', '?')}, {gpus}, results "
            f"{other.get('results', '?')}")
