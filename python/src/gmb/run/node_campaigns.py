# SPDX-License-Identifier: BSD-3-Clause
"""The campaigns of this node: every campaign leaves a held file in a directory of this node
(``$GMB_NODE_LOCK_DIR``, default ``<tmp>/gmb-campaigns``), so that a campaign started beside another one on the
same GPUs and cores is warned, and one started in a results directory another campaign of this node runs in is
refused."""

from __future__ import annotations

import fcntl
import os
import socket
import tempfile
import time
from pathlib import Path

from .lock_file import now, read_json, write_json


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
            write_json(self.fd, {"pid": os.getpid(), "host": socket.gethostname(), "results": self.results,
                                  "started_utc": now(), "gpus": None if gpus is None else sorted(gpus)})
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
                    others.append(read_json(fd))
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
