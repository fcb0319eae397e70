# SPDX-License-Identifier: BSD-3-Clause
"""Why a launch failed, read from its log: the engine's last word and the library's first error (an Open MPI help
message in one line), an engine that ran another MPI library than it was built for, an engine that refused its
arguments."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

from ..results import what_ran


def swapped_library(log: Path) -> str:
    """The engine's start-up warning that it runs another MPI library than it was built against (printed before
    MPI_Init, so it survives a crash inside the swapped library), or ""."""
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return ""
    m = re.search(r"gmb-bench: warning: MPI library swapped: ([^\n]*)", text)
    return f"the engine ran another MPI library than it was built for: {m.group(1)}" if m else ""


# A library's own diagnostic among a failed launch's output (UCX "UCX  ERROR", Open MPI "[host:pid] ... error",
# signals, a component that could not be opened or selected, a dependency of the wrong version); the launcher's
# closing banner ("prterun detected that one or more processes exited ...") is not one.
_LIBRARY_ERROR = re.compile(r"\bERROR\b|\berror\b|Segmentation fault|\bSIG(SEGV|BUS|ABRT|ILL|FPE)\b|Killed|"
                            r"No components were able to be opened|cannot be selected|\bincompatible\b|"
                            # a host that cannot be reached or used (launchers' and ssh's words)
                            r"not enough slots|Could not resolve hostname|Name or service not known|"
                            r"ssh: connect to host|Connection refused|Host key verification failed|"
                            r"unable to reliably start|lost communication|unknown host|no such host")
# The engine's own refusal of its arguments (exit 2): "gmb-bench peaks: error: unknown option ..."
_ENGINE_REFUSAL = re.compile(r"gmb-bench[^:\n]*: error:")


def engine_refused(log: Path) -> bool:
    """Whether the engine itself refused its arguments (its exit status 2), as its log says; an exit 2 without this
    came from the launcher or its agent (a host it cannot reach)."""
    return bool(_ENGINE_REFUSAL.search(log.read_text(errors="replace")))

# Open MPI's notes about its help messages, never a cause
_LAUNCHER_NOTE = re.compile(r"orte_base_help_aggregate|more process(es)? ha(s|ve) sent help message")
_LOG_PREFIX = re.compile(r"^(\[[^\]]*\]\s*)+")  # "[1795408113.106396] [vm:15516:0]" time and process stamps


def _log_lines(log: Path) -> list[str]:
    """A launch log's lines that say something (not blank, not the launcher's notes about its help messages)."""
    return [ln.strip() for ln in log.read_text(errors="replace").replace("\0", "").splitlines()
            if ln.strip() and not _LAUNCHER_NOTE.search(ln) and not what_ran.said_what_ran(ln)]


# What happened, in words that say it, preferred to any other error line: a system call's error (errno's words), a
# peer that could not be reached, what the launcher could not make or place
_CAUSE = re.compile(r"Read-only file system|No space left on device|Disk quota exceeded|Permission denied|"
                    r"Cannot allocate memory|Too many open files|No route to host|Network is unreachable|"
                    r"Connection timed out|failed to TCP connect|unable to create|more processes than|"
                    r"not enough slots|parse error in the hostfile|allocated space is too small")
_RULE = re.compile(r"^\s*-{20,}\s*$")  # the rules of dashes around an Open MPI help message
_DETAIL = re.compile(r"^\s+([A-Za-z][\w ()/.-]*?):\s+(\S.*?)\s*$")  # its indented "Key:   value" lines


def _help_message(raw: list[str], i: int) -> str | None:
    """The Open MPI help message (between rules of dashes) that holds line ``i``, in one line: its first paragraph,
    then its "Key: value" details ("A call to mkdir was unable to create the desired directory: Directory: /tmp/x;
    Error: Read-only file system"); None where the line is in none."""
    start = next((j for j in range(i, -1, -1) if _RULE.match(raw[j])), None)
    end = next((j for j in range(i, len(raw)) if _RULE.match(raw[j])), None)
    if start is None or end is None:
        return None
    body = raw[start + 1:end]
    first = " ".join(" ".join(itertools.takewhile(lambda ln: ln.strip(), body)).split())
    details = "; ".join(f"{m[1]}: {m[2]}" for m in map(_DETAIL.match, body) if m)
    return f"{first}{' ' if first.endswith((':', '.')) else ': '}{details}" if first and details else first or None


def first_library_error(log: Path) -> str:
    """What the library or launcher said went wrong, without its stamps ("" for none): the first line that says what
    happened (_CAUSE; the whole help message it is part of), else the first that reads as an error."""
    raw = log.read_text(errors="replace").replace("\0", "").splitlines()
    said = [i for i, ln in enumerate(raw) if ln.strip() and not _LAUNCHER_NOTE.search(ln)
            and not ln.lstrip().startswith(("gmb-bench:", "$ ", "{")) and not what_ran.said_what_ran(ln)]
    cause = next((i for i in said if _CAUSE.search(raw[i])), None)
    if cause is not None:
        return _help_message(raw, cause) or _LOG_PREFIX.sub("", raw[cause].strip())
    return next((_LOG_PREFIX.sub("", raw[i].strip()) for i in said if _LIBRARY_ERROR.search(raw[i])), "")


def last_error(log: Path) -> str:
    """Why a launch did not end well, from its log: the engine's own last word (a "gmb-bench:" line, or the reason
    of its last unsupported/failed record), followed by the first error the library printed, which is usually the
    cause (e.g. "MPI_Waitall failed: MPI_ERR_IN_STATUS" after "UCX ERROR cuMemcpyDtoDAsync ... invalid argument").
    Without either: the last line that is not launcher decoration."""
    lines = _log_lines(log)
    engine = ""
    for ln in reversed(lines):
        if ln.startswith("gmb-bench:"):
            engine = ln
            break
        if ln.startswith("{") and '"reason"' in ln:  # an engine record (--format json): its reason, not the JSON
            try:
                rec = json.loads(ln)
            except ValueError:
                rec = None
            if isinstance(rec, dict) and rec.get("reason") and rec.get("status") != "ok":
                what = " ".join(str(rec[k]) for k in ("benchmark", "operation") if rec.get(k))
                engine = f"{what}: {rec['reason']}" if what else str(rec["reason"])
                break
    cause = first_library_error(log)
    if engine and cause and cause not in engine:
        return f"{engine} [first library error: {cause}]"[:500]
    if engine or cause:
        return (engine or cause)[:500]
    for ln in reversed(lines):
        if not ln.startswith(("$ ", "{")) and not set(ln) <= set("-=*"):
            return ln[:300]
    return ""
