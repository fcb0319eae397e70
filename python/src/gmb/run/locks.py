# SPDX-License-Identifier: BSD-3-Clause
"""Who is using a results directory.

A results directory is held while a run or a resume uses it by an flock on the directory itself (released by the
kernel when its holder dies, even by kill -9, and not undone by deleting a file in it); ``gmb.lock`` in it, flocked
as well, is a JSON line saying who holds it (pid, host, start) and which launch is running (its process session and
record file). A second user is refused with the holder's pid. The next holder of a directory whose holder died
reads the launch it was running and stops that launch's processes (leftovers.py), which would otherwise run beside
the rerun and lower its figures. On a file system that cannot lock a directory (NFS) the lock of ``gmb.lock`` alone
holds it: a holder then stops before its next launch when the file was removed or replaced, since a second gmb
could have taken a new one."""

from __future__ import annotations

import fcntl
import os
import socket
from pathlib import Path

from ..outputs import OutputError, os_cause
from .lock_file import lock_exclusively, now, read_json, try_lock, write_json
from .node_campaigns import NodeCampaigns

LOCK_NAME = "gmb.lock"


class ResultsBusy(RuntimeError):
    """The results directory is in use by another gmb process."""


class ResultsLockLost(RuntimeError):
    """The lock file of a results directory held without a directory lock was removed or replaced: another gmb may
    now hold the directory."""


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
        self.fd: int | None = None  # gmb.lock, locked
        self.dir_fd: int | None = None  # the directory, locked (None where the file system cannot lock it)
        self.owner: dict = {}

    def acquire(self) -> dict:
        """Take the lock, or raise ResultsBusy naming the live owner, also where a live campaign of this node names
        the directory (OutputError when the directory cannot be written). Returns what a previous owner that died
        holding it had written (its running launch in ``launch``), or {}."""
        dir_fd = os.open(self.outdir, os.O_RDONLY | os.O_DIRECTORY)
        taken = lock_exclusively(dir_fd)
        if taken is False:
            os.close(dir_fd)
            raise self._busy(self._recorded_owner())
        if taken is None:  # a file system that cannot lock a directory: gmb.lock's lock alone holds it
            os.close(dir_fd)
            dir_fd = None
        fd = None
        try:
            fd = self._open_file()
            if lock_exclusively(fd) is False:  # held by a gmb that locks the file only (an older one)
                raise self._busy(read_json(fd))
            # named by a campaign of this node, whatever lock it holds (a file system whose locks do not reach)
            for other in NodeCampaigns.running_in(self.outdir):
                raise self._busy({**other, "command": "a campaign of this node"})
        except BaseException:
            for opened in (fd, dir_fd):
                if opened is not None:
                    os.close(opened)
            raise
        previous = read_json(fd)
        self.fd, self.dir_fd = fd, dir_fd
        self.owner = {"pid": os.getpid(), "host": socket.gethostname(), "command": self.command,
                      "started_utc": now()}
        write_json(fd, self.owner)
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
                owner = read_json(fd)
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
        if lock_exclusively(fd) is False:
            os.close(fd)
            raise ResultsLockLost(f"{self.path} was replaced while this gmb held the directory, and another process "
                                  f"holds the new file; this gmb stops before its next launch")
        os.close(self.fd)
        self.fd = fd
        write_json(fd, self.owner)

    def running(self, launch_id: str | None, session: int | None = None, record_file: str | None = None):
        """Say which launch runs now (None: none), so that a successor can stop it if this process dies."""
        launch = {"id": launch_id, "session": session, "record_file": record_file} if launch_id else None
        write_json(self.fd, {**self.owner, "launch": launch})

    def release(self):
        if self.fd is None:
            return
        write_json(self.fd, {})  # a clean end leaves nothing for a successor to stop
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
            if try_lock(fd, fcntl.LOCK_SH) is False:
                return True
        finally:
            os.close(fd)  # drops a lock taken
    return False
