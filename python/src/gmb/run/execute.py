# SPDX-License-Identifier: BSD-3-Clause
"""Running planned launches: each in a process session of its own, with a timeout, its records checked for the
library that ran and stored; signals stop the launch running and mark it interrupted; a failed launch's log says
why (the engine's last word and the library's first error); a progress line on stderr."""

from __future__ import annotations

import itertools
import json
import re
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from ..machine import identity
from ..machine import launchers
from . import leftovers, locks
from ..engine.configurations import Configuration
from ..engine.description import POINT_TO_POINT
from ..machine.load import LoadMonitor
from ..machine.mpilibs import MpiLibrary
from ..campaign.plan import Launch
from ..results.records import RecordError, read_records
from ..outputs import write_new
from ..results.store import Store

EXIT_STATUS = {0: "ok", 1: "failed", 2: "bad-input", 3: "unsupported", 4: "validation-failed"}


def placement(x: Launch, nodes: int | None, ranks_per_node: int | None) -> tuple[int | None, int | None]:
    """(nodes, ranks per node) given to the launcher for one launch. Path "inter-node": one rank per node (on
    ``min(nodes, ranks)`` nodes under srun; mpirun/mpiexec with a hostfile: ppr 1 / -ppn 1). With several nodes,
    a point-to-point launch meant for a path inside a node (host, nvlink, same-gpu, ...) stays on one node, and one
    with no planned path gets one rank per node; a launch planned for a node count (a block over node counts) runs
    on that many nodes, its ranks spread evenly; everything else runs on all nodes, ``ranks_per_node`` each."""
    if x.nodes:
        return x.nodes, -(-x.ranks // x.nodes)
    if x.planned_path == "inter-node":
        return (min(nodes, x.ranks) if nodes else None), 1
    if nodes and nodes > 1 and x.family in POINT_TO_POINT:
        return (1, None) if x.planned_path else (min(nodes, x.ranks), 1)
    return nodes, ranks_per_node


def ranks_on_this_host(x: Launch, nodes: int | None, ranks_per_node: int | None) -> int:
    """How many of a launch's ranks run on the host gmb runs on (the ones whose cores its load is compared with):
    all of them on one node, else a node's share."""
    if not nodes or nodes <= 1:
        return x.ranks
    return min(x.ranks, ranks_per_node or -(-x.ranks // nodes))


def launcher_hostfile(outdir: Path, hostfile: str, launcher: launchers.Launcher) -> str:
    """The hostfile in the launcher's own form (Open MPI's "host slots=N", Hydra's "host:N"), kept in the results
    directory as hostfile.<launcher> (a resume given another hostfile: hostfile.<launcher>.2, ...): one --hostfile
    serves libraries of either family."""
    text = launcher.hostfile(launchers.hostfile_entries(Path(hostfile).read_text()))
    for n in itertools.count(1):
        path = outdir / (f"hostfile.{launcher.name}" + (f".{n}" if n > 1 else ""))
        if not path.exists():
            write_new(path, text)
        if path.read_text() == text:
            return str(path)


def run_launches(outdir: Path, launches: list[Launch], confs: dict[str, Configuration], store: Store,
                 campaign_name: str, hostfile: str | None = None, progress: bool = True, stream=None,
                 nodes: int | None = None, ranks_per_node: int | None = None, stop_library_after: int = 3,
                 lock: locks.ResultsLock | None = None) -> dict[str, int]:
    """Run the launches not finished yet, each by its library configuration (``confs``: library name -> one with an
    engine; its launcher starts the engine). After ``stop_library_after`` failed or timed-out launches of one library
    in a row (0: never), its remaining launches are recorded as "skipped" with the reason, not run. ``lock`` (the
    results directory's) is told which launch runs, for a successor should this process die, and is checked to still
    hold before each launch (locks.ResultsLockLost otherwise). A launch running when gmb is stopped (Stopped) is
    ended and marked "interrupted", and the exception goes on."""
    raw, logs = outdir / "raw", outdir / "logs"
    raw.mkdir(exist_ok=True)
    logs.mkdir(exist_ok=True)
    finished = store.finished_launches()
    todo = [x for x in launches if x.launch_id not in finished]
    bar = Progress(len(todo), stream) if progress else None
    counts: dict[str, int] = {}
    failures_in_a_row: dict[str, int] = {}
    hostfiles: dict[str, str] = {}  # launcher name -> the hostfile in its form, written once
    for x in todo:
        if stop_library_after and failures_in_a_row.get(x.library, 0) >= stop_library_after:
            record_skipped_launch(store, x, campaign_name, stop_library_after, bar)
            counts["skipped"] = counts.get("skipped", 0) + 1
            continue
        status = run_launch(outdir, x, confs[x.library], store, campaign_name, hostfile, hostfiles, nodes,
                            ranks_per_node, lock, bar)
        failures_in_a_row[x.library] = failures_in_a_row.get(x.library, 0) + 1 \
            if status in ("failed", "timeout", identity.WRONG_LIBRARY) else 0
        counts[status] = counts.get(status, 0) + 1
    if bar:
        bar.close()
    return counts


def launch_row(x: Launch, campaign_name: str) -> dict:
    """What the store's launches table keeps of a planned launch before it runs."""
    return dict(launch_id=x.launch_id, campaign=campaign_name, library=x.library, benchmark=x.benchmark,
                repetition=x.repetition, memory=x.memory, strategy=x.strategy, ranks=x.ranks,
                planned_path=x.planned_path, nodes=x.nodes, scaling=x.scaling)


def record_skipped_launch(store: Store, x: Launch, campaign_name: str, stop_library_after: int, bar) -> None:
    """A launch not run because its library's last launches failed."""
    why = f"not run: the library's last {stop_library_after} launches failed"
    store.record_launch(**launch_row(x, campaign_name), status="skipped", reason=why)
    if bar:
        bar.update("skipped", x.launch_id, reason=why)


def run_launch(outdir: Path, x: Launch, conf: Configuration, store: Store, campaign_name: str, hostfile: str | None,
               hostfiles: dict[str, str], nodes: int | None, ranks_per_node: int | None,
               lock: locks.ResultsLock | None, bar) -> str:
    """Run one launch by its library configuration and store what it wrote; returns its status (run_launches)."""
    raw, logs = outdir / "raw", outdir / "logs"
    lib = conf.library
    if lock:
        lock.keep()
    out = raw / f"{x.launch_id}.jsonl"
    log = logs / f"{x.launch_id}.log"
    set_aside(out)
    set_aside(log)
    launcher = conf.launcher
    if hostfile and launcher.name not in hostfiles:
        hostfiles[launcher.name] = launcher_hostfile(outdir, hostfile, launcher)
    spec = launchers.LaunchSpec(ranks=x.ranks, program=[conf.engine, *x.engine_args, "--out", str(out),
                                                        "--format", "json"],
                                hostfile=hostfiles.get(launcher.name), bind=x.bind, env=x.env,
                                **dict(zip(("nodes", "ranks_per_node"), placement(x, nodes, ranks_per_node))))
    argv = launcher.argv(lib, spec)
    # the engine's rank 0 (started on this host by mpirun, or given the environment by srun and Hydra) then says
    # when every rank has finished, so that a hang in MPI_Finalize is told from one in the measurement
    env = {**launcher.environment(lib, spec), "GMB_ANNOUNCE_FINISH": "1"}
    started = datetime.now(timezone.utc).isoformat()
    row = dict(launch_row(x, campaign_name), argv=argv, started_utc=started, raw_file=str(out.relative_to(outdir)),
               log_file=str(log.relative_to(outdir)))
    store.forget_launch(x.launch_id)
    store.record_launch(**row, status="running")
    if bar:
        bar.update(current=x.launch_id)
    monitor = LoadMonitor(ranks_on_this_host(x, *placement(x, nodes, ranks_per_node)), marker=str(out))
    monitor.start()

    def started(pid: int):
        monitor.watch(pid)
        if lock:
            lock.running(x.launch_id, session=pid, record_file=str(out.resolve()))

    t0 = time.monotonic()
    try:
        status, rc, reason = _execute(argv, env, log, x.timeout_s, started=started)
    except Stopped as exc:
        store.record_launch(**row, status="interrupted", wall_s=round(time.monotonic() - t0, 3),
                            reason=f"gmb was stopped ({exc})", load=json.dumps(monitor.stop()))
        raise
    finally:
        if lock:
            lock.running(None)
    return finish_launch(store, row, out, log, lib, x, status, reason, rc, time.monotonic() - t0, monitor.stop(), bar)


def finish_launch(store: Store, row: dict, out: Path, log: Path, lib: MpiLibrary, x: Launch, status: str, reason: str,
                  rc: int | None, wall: float, load: dict | None = None, bar=None) -> str:
    """A launch that ended (or a block of a bundle's launch): what it wrote stored with its row, together (figures and
    "finished" go together), and said on the progress line; returns its status (store_records may change it)."""
    with store.transaction(f"the records of launch {x.launch_id}"):
        status, reason = store_records(store, out, log, lib, x, status, reason)
        store.record_launch(**row, status=status, rc=rc, reason=reason, wall_s=round(wall, 3),
                            load=None if load is None else json.dumps(load))
    if bar:
        bar.update(status, x.launch_id, wall_s=wall, reason=reason if status != "ok" else "",
                   busy=f"busy host: {load['why']}" if load and load.get("busy") else "")
    return status


def set_aside(path: Path):
    """Keep an interrupted launch's partial output under a new name (nothing is overwritten)."""
    if not path.exists():
        return
    n = 1
    while (path.with_name(f"{path.name}.interrupted-{n}")).exists():
        n += 1
    path.rename(path.with_name(f"{path.name}.interrupted-{n}"))


def store_records(store: Store, out: Path, log: Path, lib: MpiLibrary, x: Launch, status: str, reason: str
                   ) -> tuple[str, str]:
    """Store what a launch wrote, after checking that it ran the planned library: a launch whose records name
    another MPI library (identity.mismatch) is "wrong-library" and none of its figures are stored (its raw file
    stays); one whose records cannot make rows (records.row_problem) is "failed" and none are stored either. What
    reading the records noted (an incomplete last record dropped, results that measured nothing) is added to the
    launch's reason and log. Returns the launch's (status, reason)."""
    records = None
    if out.exists():
        try:
            records = read_records(out)
        except Exception as exc:  # a broken record file is a failed launch, not a crashed campaign
            return "failed", f"records unreadable, none stored: {exc}"
        wrong = next((why for why in (identity.mismatch(lib, ctx) for ctx in records.contexts) if why), None)
        if wrong:
            return identity.WRONG_LIBRARY, f"{wrong}; its figures were not stored (raw file kept)"
        if records.notes:
            with open(log, "a") as lf:
                lf.write("".join(f"gmb: {note}\n" for note in records.notes))
            reason = "; ".join(filter(None, [reason, *records.notes]))
    if status != "ok" and not (records and records.contexts):  # died before saying what it ran
        swapped = _swapped_library(log)
        if swapped:
            return identity.WRONG_LIBRARY, swapped
    if records is None:
        return ("failed", "engine wrote no record file") if status == "ok" else (status, reason)
    try:
        n = store.ingest(records, library=x.library, repetition=x.repetition, launch_id=x.launch_id)
    except RecordError as exc:  # refused before any of its rows was written
        return "failed", f"records unreadable, none stored: {exc}"
    if n == 0 and status == "ok":
        return "failed", "; ".join(filter(None, ["engine wrote no result records", reason]))
    return status, reason


class Stopped(Exception):
    """gmb was told to stop (SIGTERM, SIGHUP, SIGINT) by a user, a batch system or `timeout`."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


@contextmanager
def stop_on_signals():
    """SIGTERM, SIGHUP and SIGINT raise Stopped wherever gmb is, so that the launch running is stopped with
    everything it started and marked interrupted; signals that follow while it stops are ignored, so the stopping
    itself is not cut short. Each is handled even where gmb started with it ignored: a shell starts a script's
    background job (`gmb run ... &`) with SIGINT ignored, and `kill -INT` must still stop it."""
    def stop(signum, frame):
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)
        raise Stopped(signum)

    before = {sig: signal.getsignal(sig) for sig in STOP_SIGNALS}
    for sig in STOP_SIGNALS:
        signal.signal(sig, stop)
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def start_launch(argv, env, lf) -> tuple[subprocess.Popen | None, str]:
    """(the launch started in a process session of its own, its output into the log ``lf`` under its command line,
    ""), or (None, why it could not start), said in the log too."""
    lf.write("$ " + " ".join(argv) + "\n")
    lf.flush()
    try:
        return subprocess.Popen(argv, stdout=lf, stderr=subprocess.STDOUT, env=env, start_new_session=True), ""
    except OSError as exc:
        lf.write(f"gmb: cannot start: {exc}\n")
        return None, f"cannot start {argv[0]}: {exc}"


def _execute(argv, env, log: Path, timeout_s: float, started=lambda pid: None) -> tuple[str, int | None, str]:
    """Run one launch in a session of its own (``started`` is told its id: the launcher's pid), wait for it at most
    ``timeout_s``; a timeout or gmb being stopped ends every process of the session."""
    with open(log, "x") as lf:
        proc, cannot = start_launch(argv, env, lf)
        if proc is None:
            return "failed", None, cannot
        try:
            started(proc.pid)
            rc, intended = _wait(proc, log, timeout_s)
            if rc is None:  # measured to the end, then hung in MPI_Finalize
                stop_launch(proc)
                lf.write(f"\ngmb: MPI_Finalize did not return within {FINALIZE_GRACE_S:g} s: launch ended\n")
                return ("finalize-hang", intended, f"MPI_Finalize did not return within {FINALIZE_GRACE_S:g} s after "
                        f"every rank had finished measuring (the engine meant exit status {intended}; its records "
                        "are complete): ended by gmb; a fault of the library or its launcher")
        except subprocess.TimeoutExpired:
            stop_launch(proc)
            lf.flush()
            said = _first_library_error(log)[:300]  # an unreachable host hangs some launchers
            lf.write(f"\ngmb: killed after {timeout_s:g} s (timeout)\n")
            return "timeout", None, f"killed after {timeout_s:g} s" + (f"; the log says: {said}" if said else "")
        except Stopped as exc:
            stop_launch(proc)
            lf.write(f"\ngmb: stopped ({exc}): launch ended\n")
            raise
        stop_what_outlived(proc.pid, lf)
    status = EXIT_STATUS.get(rc, "failed")
    if status == "bad-input" and not _ENGINE_REFUSAL.search(log.read_text(errors="replace")):
        status = "failed"  # exit 2 from the launcher or its agent (a host it cannot reach), not the engine's refusal
    reason = "" if rc == 0 else last_error(log) or f"exit status {rc}"
    return status, rc, reason


def stop_what_outlived(session: int, lf) -> None:
    """A launcher that died (killed, crashed) may leave ranks running; they would share the next launch's cores:
    stopped, and said in the launch's log ``lf``."""
    outlived = leftovers.stop_session(session)
    if outlived:
        lf.write(f"\ngmb: {len(outlived)} process(es) of the launch outlived its launcher (pids "
                 f"{', '.join(map(str, sorted(outlived)))}): stopped\n")


# How long a launch may stay in MPI_Finalize once the engine said every rank had finished
FINALIZE_GRACE_S = 30.0
_FINISHED = re.compile(rb"gmb-bench: finished \(exit status (\d+)\); MPI_Finalize next")


def _wait(proc: subprocess.Popen, log: Path, timeout_s: float) -> tuple[int | None, int | None]:
    """(exit status, None) when the launch ends; (None, the engine's intended exit status) when it is still running
    FINALIZE_GRACE_S after the engine's "finished" line (a hang in MPI_Finalize); TimeoutExpired at timeout_s."""
    deadline, finished_at, intended = time.monotonic() + timeout_s, None, None
    while True:
        try:
            return proc.wait(timeout=min(1.0, max(deadline - time.monotonic(), 0.01))), None
        except subprocess.TimeoutExpired:
            now = time.monotonic()
            if finished_at is None:
                m = _FINISHED.search(_tail(log))
                if m:
                    finished_at, intended = now, int(m.group(1))
            elif now - finished_at > FINALIZE_GRACE_S:
                return None, intended
            if now >= deadline:
                raise


def _tail(log: Path, nbytes: int = 65536) -> bytes:
    """The end of a launch log (the engine's "finished" line is among its last words)."""
    with open(log, "rb") as f:
        f.seek(max(f.seek(0, 2) - nbytes, 0))
        return f.read()


def stop_launch(proc: subprocess.Popen):
    """End the launcher and everything it started: every process of its session, even those that left its
    process group or outlived the launcher."""
    leftovers.stop_session(proc.pid)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def _swapped_library(log: Path) -> str:
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
# Open MPI's notes about its help messages, never a cause
_LAUNCHER_NOTE = re.compile(r"orte_base_help_aggregate|more process(es)? ha(s|ve) sent help message")
_LOG_PREFIX = re.compile(r"^(\[[^\]]*\]\s*)+")  # "[1795408113.106396] [vm:15516:0]" time and process stamps


def _log_lines(log: Path) -> list[str]:
    """A launch log's lines that say something (not blank, not the launcher's notes about its help messages)."""
    return [ln.strip() for ln in log.read_text(errors="replace").replace("\0", "").splitlines()
            if ln.strip() and not _LAUNCHER_NOTE.search(ln)]


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


def _first_library_error(log: Path) -> str:
    """What the library or launcher said went wrong, without its stamps ("" for none): the first line that says what
    happened (_CAUSE; the whole help message it is part of), else the first that reads as an error."""
    raw = log.read_text(errors="replace").replace("\0", "").splitlines()
    said = [i for i, ln in enumerate(raw) if ln.strip() and not _LAUNCHER_NOTE.search(ln)
            and not ln.lstrip().startswith(("gmb-bench:", "$ ", "{"))]
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
    cause = _first_library_error(log)
    if engine and cause and cause not in engine:
        return f"{engine} [first library error: {cause}]"[:500]
    if engine or cause:
        return (engine or cause)[:500]
    for ln in reversed(lines):
        if not ln.startswith(("$ ", "{")) and not set(ln) <= set("-=*"):
            return ln[:300]
    return ""


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
