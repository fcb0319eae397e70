# SPDX-License-Identifier: BSD-3-Clause
"""A small JSON file held under flock: what a lock file says, read and written in place, and the lock taken
without waiting."""

from __future__ import annotations

import errno
import fcntl
import json
import os
import time
from datetime import datetime, timezone


def now() -> str:
    """The time written into a lock file (UTC, to the second)."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def read_json(fd: int) -> dict:
    """What the file says, {} where it is empty or not a JSON object."""
    os.lseek(fd, 0, os.SEEK_SET)
    text = b""
    while chunk := os.read(fd, 65536):
        text += chunk
    try:
        data = json.loads(text.decode("utf-8", "replace") or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def write_json(fd: int, data: dict):
    """Replace what the file says, in place (the file, and its lock, stay the same)."""
    blob = json.dumps(data).encode()
    os.lseek(fd, 0, os.SEEK_SET)
    os.ftruncate(fd, 0)
    os.write(fd, blob)


def try_lock(fd: int, how: int) -> bool | None:
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


def lock_exclusively(fd: int) -> bool | None:
    """try_lock(fd, LOCK_EX), with a look by held() (a shared lock for a moment) waited out."""
    for _ in range(50):
        taken = try_lock(fd, fcntl.LOCK_EX)
        if taken is not False:
            return taken
        time.sleep(0.01)
    return False
