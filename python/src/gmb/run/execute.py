# SPDX-License-Identifier: BSD-3-Clause
"""Running planned launches: each in a process session of its own, with a timeout, its records checked for the
library that ran and stored; signals stop the launch running and mark it interrupted. Why a failed launch failed is
read from its log (why_failed.py); the progress line is progress.py's."""

from __future__ import annotations

import itertools
import json
import re
import signal
import subprocess
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

from ..machine import identity
from ..machine import launchers
from . import leftovers, locks
from .progress import Progress
from .why_failed import engine_refused, first_library_error, last_error, swapped_library
from ..engine.configurations import Configuration
from ..engine.description import POINT_TO_POINT
from ..machine.load import LoadMonitor
from ..machine.mpilibs import MpiLibrary
from ..campaign.plan import Launch
from ..results import what_ran
from ..results.records import RecordError, read_records
from ..results.run_conditions import settings as record_settings
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


def launch_environment(x: Launch) -> dict[str, str]:
    """The variables a launch's ranks get: its block's, and those that make the libraries say what they chose
    (what_ran.CAPTURE_ENVIRONMENT), unless the block sets them itself."""
    return {**what_ran.CAPTURE_ENVIRONMENT, **x.env}


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
                                hostfile=hostfiles.get(launcher.name), bind=x.bind, env=launch_environment(x),
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
    stays); one whose records cannot make rows (record_checks.row_problem) is "failed" and none are stored either. What
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
        swapped = swapped_library(log)
        if swapped:
            return identity.WRONG_LIBRARY, swapped
    if records is None:
        return ("failed", "engine wrote no record file") if status == "ok" else (status, reason)
    add_what_ran(records, log, lib.family)
    try:
        n = store.ingest(records, library=x.library, repetition=x.repetition, launch_id=x.launch_id)
    except RecordError as exc:  # refused before any of its rows was written
        return "failed", f"records unreadable, none stored: {exc}"
    if n == 0 and status == "ok":
        return "failed", "; ".join(filter(None, ["engine wrote no result records", reason]))
    return status, reason


def add_what_ran(records, log: Path, family: str) -> None:
    """Each result record of a launch given what its libraries said they ran (its ``ran``: what_ran.facts), from the
    launch's log; a record that has one already keeps it."""
    if not log.exists():
        return
    capture = what_ran.read_capture(log.read_text(errors="replace").splitlines())
    contexts = {ctx.get("run_id"): ctx for ctx in records.contexts}
    for res in records.results:
        ctx = contexts.get(res.get("run_id")) or {}
        ran = what_ran.facts(res, record_settings(ctx), family, capture) if "ran" not in res else None
        if ran:
            res["ran"] = ran


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
            said = first_library_error(log)[:300]  # an unreachable host hangs some launchers
            lf.write(f"\ngmb: killed after {timeout_s:g} s (timeout)\n")
            return "timeout", None, f"killed after {timeout_s:g} s" + (f"; the log says: {said}" if said else "")
        except Stopped as exc:
            stop_launch(proc)
            lf.write(f"\ngmb: stopped ({exc}): launch ended\n")
            raise
        stop_what_outlived(proc.pid, lf)
    status = EXIT_STATUS.get(rc, "failed")
    if status == "bad-input" and not engine_refused(log):
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
