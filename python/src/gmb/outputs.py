# SPDX-License-Identifier: BSD-3-Clause
"""Files gmb writes (report, CSV tables, plan, batch scripts): complete or absent, never overwritten.

Each file is written under a temporary name in its own directory, flushed to disk, then given its final name
with a hard link, which fails if that name exists (no overwrite, even against a concurrent writer) and is atomic:
a reader sees the whole file or none. A failed write (full disk, quota, permissions) removes the temporary file
and raises OutputError naming the path and the cause, so nothing truncated is ever left behind."""

from __future__ import annotations

import errno
import os
from pathlib import Path

_CAUSES = {errno.ENOSPC: "no space left on device", errno.EDQUOT: "disk quota exceeded",
           errno.EROFS: "read-only file system", errno.EACCES: "permission denied", errno.EPERM: "not permitted"}


class OutputError(RuntimeError):
    """A file or store could not be written (a runtime failure, exit status 1, not bad input)."""


def os_cause(exc: OSError) -> str:
    """'no space left on device' and the like: the cause a user acts on."""
    return _CAUSES.get(exc.errno, exc.strerror or str(exc))


def disk_full(exc: BaseException) -> bool:
    """An OSError or SQLite error that says the disk (or quota) is full."""
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT)
    return "disk is full" in str(exc) or "disk I/O error" in str(exc)


def check_writable(directory: str | Path, what: str):
    """OutputError unless new files can be made in ``directory`` (where it does not exist yet: in the nearest of
    its parents that does, where it would be made): checked for every output before a command writes any, so
    that none is written when another cannot be. ``what`` names the output ("--csv DIR")."""
    d = Path(directory).absolute()
    while not d.exists() and d != d.parent:
        d = d.parent
    if os.access(d, os.W_OK | os.X_OK):
        return
    cause = "read-only file system" if os.statvfs(d).f_flag & os.ST_RDONLY else "permission denied"
    raise OutputError(f"{what}: cannot write in {d}: {cause}; nothing was written")


def write_new(path: str | Path, content: str | bytes) -> Path:
    """Write ``content`` to ``path``, which must not exist (FileExistsError otherwise; the existing file is left
    as it is). OutputError when the write fails, with nothing left under ``path`` or the temporary name."""
    path = Path(path)
    if path.exists():
        raise FileExistsError(f"{path} exists; not overwriting")
    data = content.encode("utf-8") if isinstance(content, str) else content
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        _publish(tmp, path)
    except FileExistsError:
        _remove(tmp)
        raise FileExistsError(f"{path} exists; not overwriting") from None
    except OSError as exc:
        _remove(tmp)
        raise OutputError(f"cannot write {path}: {os_cause(exc)}; nothing was written there") from None
    return path


def _publish(tmp: Path, path: Path):
    """Give the finished temporary file its final name without replacing an existing one."""
    try:
        os.link(tmp, path)
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
            raise
        # A file system without hard links: rename, after the check (a concurrent writer could still win).
        if path.exists():
            raise FileExistsError(path) from None
        os.rename(tmp, path)
        return
    os.unlink(tmp)


def _remove(path: Path):
    try:
        os.unlink(path)
    except OSError:
        pass
