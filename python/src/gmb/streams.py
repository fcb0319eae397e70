# SPDX-License-Identifier: BSD-3-Clause
"""gmb's stdout and stderr as a command may find them: a reader that goes away (a closed pipe) or a descriptor closed
when gmb started. Neither stops a command's work; what cannot be printed is dropped."""

from __future__ import annotations

import os


class ReaderMayLeave:
    """stdout or stderr whose reader may go away (`gmb run ... | head -1`, a log viewer closed): what can no longer
    be written is dropped, and the command finishes its work (the campaign, the report) and exits with its own
    status. A closed pipe is not a reason to stop a campaign or lose its report."""

    def __init__(self, stream):
        self._stream = stream
        self._gone = False

    def write(self, text):
        if not self._gone:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._reader_left()
        return len(text)

    def flush(self):
        if not self._gone:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._reader_left()

    def _reader_left(self):
        self._gone = True
        try:  # what Python still holds for the stream goes nowhere at exit, instead of raising there
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass

    def __getattr__(self, name):
        return getattr(self._stream, name)


def open_stream(stream, fd: int):
    """``stream`` (sys.stdout or sys.stderr), or, where gmb was started with that descriptor closed (`>&-`,
    `2>&-`; Python then has None), a stream to /dev/null: what cannot be printed is dropped and the command does its
    work. /dev/null then takes the descriptor too, so that no file gmb opens gets it: a launcher or compiler started
    with it as its output would write into that file."""
    if stream is not None:
        return stream
    try:
        os.fstat(fd)
    except OSError:
        null = os.open(os.devnull, os.O_WRONLY)  # the lowest free descriptor: this one
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
    return open(os.devnull, "w")
