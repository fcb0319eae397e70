# SPDX-License-Identifier: BSD-3-Clause
"""Who is using a results directory, what a dead user left running, and which campaigns share this node.

A results directory is held while a run or a resume uses it by an flock on the directory itself (released by the
kernel when its holder dies, even by kill -9, and not undone by deleting a file in it); ``gmb.lock`` in it, flocked
as well, is a JSON line saying who holds it (pid, host, start) and which launch is running (its process session and
record file). A second user is refused with the holder's pid. The next holder of a directory whose holder died
reads the launch it was running and stops that launch's processes, which would otherwise run beside the rerun and
lower its figures. On a file system that cannot lock a directory (NFS) the lock of ``gmb.lock`` alone holds it: a
holder then stops before its next launch when the file was removed or replaced, since a second gmb could have
taken a new one.

Every campaign also leaves a held file in a directory of this node (``$GMB_NODE_LOCK_DIR``, default
``<tmp>/gmb-campaigns``), so that a campaign started beside another one on the same GPUs and cores is warned, and
one started in a results directory another campaign of this node runs in is refused. Processes of a launch whose
gmb is gone (``leftover_launches``: they name a record file of a results directory no gmb holds) are found from
/proc, so that a campaign started beside them is warned too."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import signal
import socket
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

from ..outputs import OutputError, os_cause

LOCK_NAME = "gmb.lock"


class ResultsBusy(RuntimeError):
    """The results directory is in use by another gmb process."""


class ResultsLockLost(RuntimeError):
    """The lock file of a results directory held without a directory lock was removed or replaced: another gmb may
    now hold the directory."""


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


def _try_lock(fd: int, how: int) -> bool | None:
    """flock ``fd`` without waiting: True when taken, False when another holds it, None when the file system
    cannot lock it (a directory on NFS)."""
    try:
        fcntl.flock(fd, how | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    except OSError as exc:
        if exc.errno in (errno.EBADF, errno.EINVAL, errno.ENOLCK, errno.EOPNOTSUPP):
            return None
        raise


def _lock_exclusively(fd: int) -> bool | None:
    """_try_lock(fd, LOCK_EX), with a look by held() (a shared lock for a moment) waited out."""
    for _ in range(50):
        taken = _try_lock(fd, fcntl.LOCK_EX)
        if taken is not False:
            return taken
        time.sleep(0.01)
    return False


class ResultsLock:
    """The lock of one results directory, held from acquire() to release() (or the holder's death)."""

    def __init__(self, outdir: str | Path, command: str):
        self.outdir = Path(outdir)
        self.path = self.outdir / LOCK_NAME
        self.command = command
        self.fd: int | None = None  # gmb.lock, locked
        self.dir_fd: int | None = None  # the directory, locked (None where the file system cannot lock it)
        self.owner: dict = {}

    def acquire(self) -> dict:
        """Take the lock, or raise ResultsBusy naming the live owner, also where a live campaign of this node names
        the directory (OutputError when the directory cannot be written). Returns what a previous owner that died
        holding it had written (its running launch in ``launch``), or {}."""
        dir_fd = os.open(self.outdir, os.O_RDONLY | os.O_DIRECTORY)
        taken = _lock_exclusively(dir_fd)
        if taken is False:
            os.close(dir_fd)
            raise self._busy(self._recorded_owner())
        if taken is None:  # a file system that cannot lock a directory: gmb.lock's lock alone holds it
            os.close(dir_fd)
            dir_fd = None
        fd = None
        try:
            fd = self._open_file()
            if _lock_exclusively(fd) is False:  # held by a gmb that locks the file only (an older one)
                raise self._busy(_read_json(fd))
            # named by a campaign of this node, whatever lock it holds (a file system whose locks do not reach)
            for other in NodeCampaigns.running_in(self.outdir):
                raise self._busy({**other, "command": "a campaign of this node"})
        except BaseException:
            for opened in (fd, dir_fd):
                if opened is not None:
                    os.close(opened)
            raise
        previous = _read_json(fd)
        self.fd, self.dir_fd = fd, dir_fd
        self.owner = {"pid": os.getpid(), "host": socket.gethostname(), "command": self.command,
                      "started_utc": _now()}
        _write_json(fd, self.owner)
        return previous if previous.get("pid") else {}

    def _open_file(self) -> int:
        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise OutputError(f"cannot write {self.path}: {os_cause(exc)} (a results directory must be writable: it "
                              f"holds the lock, the store and the records); nothing was run") from None

    def _recorded_owner(self) -> dict:
        """What the holder wrote in gmb.lock; where the file is gone, the campaign of this node that runs here."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
            fd = None
        if fd is not None:
            try:
                owner = _read_json(fd)
            finally:
                os.close(fd)
            if owner:
                return owner
        here = NodeCampaigns.running_in(self.outdir)
        return {**here[0], "command": "a campaign of this node"} if here else {}

    def _busy(self, owner: dict) -> ResultsBusy:
        who = _owner_text(owner) if owner else f"its {LOCK_NAME}, which names it, is gone, and no campaign of this " \
                                                f"node names the directory: it may run on another host"
        return ResultsBusy(f"{self.outdir} is in use by another gmb ({who}); running the same launches twice would "
                           f"store each twice and lower both figures: wait for it to end, or stop it (kill "
                           f"{owner.get('pid', 'PID')}) and resume")

    def keep(self):
        """Before a launch: the lock still holds. gmb.lock removed or replaced (by hand) is made again where the
        directory is locked; without a directory lock, ResultsLockLost (a second gmb may hold a new file)."""
        try:
            named = os.stat(self.path)
            same = (named.st_dev, named.st_ino) == (os.fstat(self.fd).st_dev, os.fstat(self.fd).st_ino)
        except FileNotFoundError:
            same = False
        if same:
            return
        if self.dir_fd is None:
            raise ResultsLockLost(f"{self.path} was removed or replaced while this gmb held it, on a file system that "
                                  f"cannot lock the directory itself: another gmb may now run the same launches, so "
                                  f"this one stops before its next launch")
        fd = self._open_file()
        if _lock_exclusively(fd) is False:
            os.close(fd)
            raise ResultsLockLost(f"{self.path} was replaced while this gmb held the directory, and another process "
                                  f"holds the new file; this gmb stops before its next launch")
        os.close(self.fd)
        self.fd = fd
        _write_json(fd, self.owner)

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
        if self.dir_fd is not None:
            os.close(self.dir_fd)
            self.dir_fd = None


def held(outdir: str | Path) -> bool:
    """Whether some process holds the results directory: its directory lock, or its gmb.lock (a gmb that locks the
    file only, an older one, or where the file system cannot lock a directory). Looked at with a shared lock taken
    and dropped at once (ResultsLock.acquire waits such a moment out)."""
    outdir = Path(outdir)
    for path, flags in ((outdir, os.O_RDONLY | os.O_DIRECTORY), (outdir / LOCK_NAME, os.O_RDONLY)):
        try:
            fd = os.open(path, flags)
        except OSError:
            continue
        try:
            if _try_lock(fd, fcntl.LOCK_SH) is False:
                return True
        finally:
            os.close(fd)  # drops a lock taken
    return False


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


def _argv(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [a.decode("utf-8", "replace") for a in raw.split(b"\0")[:-1]]


def _command_line(pid: int) -> str:
    return " ".join(_argv(pid))


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

    @staticmethod
    def running_in(results: str | Path) -> list[dict]:
        """The live campaigns of this node whose results directory is ``results``."""
        wanted = str(Path(results).resolve())
        return [o for o in NodeCampaigns._live_others(_node_dir()) if o.get("results") == wanted]

    @staticmethod
    def _live_others(d: Path) -> list[dict]:
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


def _record_file(argv: list[str]) -> Path | None:
    """The record file a command line names (``--out FILE``), when it lies in a results directory's raw/."""
    for i, arg in enumerate(argv):
        path = argv[i + 1] if arg == "--out" and i + 1 < len(argv) else arg[6:] if arg.startswith("--out=") else None
        if path and Path(path).parent.name == "raw" and (Path(path).parent.parent / "plan.json").is_file():
            return Path(path)
    return None


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
        record = _record_file(_argv(int(entry.name)))
        if record is not None:
            found.setdefault(str(record.parent.parent.resolve()), []).append(int(entry.name))
    return [{"leftover": True, "results": results, "pids": sorted(pids)} for results, pids in sorted(found.items())
            if results not in live_results and not held(results)]
