# SPDX-License-Identifier: BSD-3-Clause
"""The progress line of a campaign's launches on stderr: what runs, what ended, how long is left."""

from __future__ import annotations

import sys
import time


class Progress:
    """What runs and what ended, on stderr. On a terminal: one live line (redrawn in place) and a line of its own
    for every launch that did not end ok. Elsewhere (a batch job's log, a pipe): one plain line per ended launch,
    no carriage returns, so a log reads top to bottom."""

    def __init__(self, total: int, stream=None, live: bool | None = None):
        self.total, self.done, self.t0 = total, 0, time.monotonic()
        self.stream = stream or sys.stderr
        self.live = _is_terminal(self.stream) if live is None else live
        self.counts: dict[str, int] = {}
        self._width = 0  # of the live line last drawn, to blank it before a line of its own

    def update(self, status: str | None = None, current: str = "", wall_s: float | None = None, reason: str = "",
               busy: str = ""):
        if status:
            self.done += 1
            self.counts[status] = self.counts.get(status, 0) + 1
        el = time.monotonic() - self.t0
        eta = _hms(el / self.done * (self.total - self.done)) if self.done else "?"
        counts = " ".join(f"{k}={v}" for k, v in sorted(self.counts.items()))
        where = f"{self.done}/{self.total} elapsed {_hms(el)} ETA {eta}"
        if not self.live:
            if status:
                took = f" {wall_s:.1f} s" if wall_s is not None else ""
                self._line(f"gmb: [{where}] {status:<11} {current}{took}" + (f": {reason}" if reason else "")
                           + (f" ({busy})" if busy else ""))
            return
        if status and status != "ok":
            self._line(f"gmb: {status}: {current}" + (f": {reason}" if reason else ""))
        if busy:
            self._line(f"gmb: {current}: {busy}: its figures may be low")
        fill = int(24 * self.done / max(1, self.total))
        text = f"[{'#' * fill}{'.' * (24 - fill)}] {where} {counts} {current[:40]}"
        self.stream.write("\r" + text.ljust(self._width))
        self._width = len(text)
        self.stream.flush()

    def _line(self, text: str):
        if self.live and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self._width = 0
        self.stream.write(text[:300] + "\n")
        self.stream.flush()

    def close(self):
        if self.live and self._width:
            self.stream.write("\n")
        counts = ", ".join(f"{v} {k}" for k, v in sorted(self.counts.items())) or "none"
        self.stream.write(f"gmb: {self.done} launches in {_hms(time.monotonic() - self.t0)}: {counts}\n")
        self.stream.flush()


def _is_terminal(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _hms(s: float) -> str:
    s = int(s)
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"
