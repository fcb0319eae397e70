# SPDX-License-Identifier: BSD-3-Clause
"""Bundles: a campaign's launches that can share one engine launch run as the blocks of one `gmb-bench plan`
(docs/records.md), so that MPI, CUDA and NCCL start once for many blocks. Launches share one when they differ in
nothing the launch itself sets: library configuration, environment, rank count and placement, binding, --nic and
repetition (a block marked ``isolate`` never shares). Each repetition of a bundle is a fresh launch with its blocks in
an order of their own (seeded), and repetitions are interleaved: every bundle's first repetition, then every
bundle's second, so that drift falls on every configuration alike.

Each block keeps what a launch of its own has: its launch id, its records file (``raw/<launch id>.jsonl``), its
row in the store with its own status, and a deadline (the engine stops its size sweep there: a share of its timeout).
The engine says each block's end in the bundle's status file as it happens; a block that runs past its timeout is
killed with its launch and recorded "timeout", one whose launch dies is recorded "failed" with what the log says, and
the blocks after it run on in a new launch of the bundle. A resume runs the blocks not finished, a block recorded
"running" (gmb killed inside a bundle) included."""

from __future__ import annotations

import json
import random
import subprocess
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..campaign.plan import Launch
from ..engine.configurations import Configuration
from ..machine import identity, launchers
from ..machine.load import LoadMonitor
from ..results.store import Store
from . import locks
from .execute import (EXIT_STATUS, launch_environment, FINALIZE_GRACE_S, _FINISHED, Stopped, _tail, finish_launch,
                      launch_row, launcher_hostfile, placement, ranks_on_this_host, record_skipped_launch, run_launch,
                      set_aside, start_launch, stop_launch, stop_what_outlived)
from .progress import Progress
from .why_failed import last_error

# The share of a block's timeout after which the engine begins no further size: the block ends with its records
# before the harness would have to kill it.
DEADLINE_SHARE = 0.8


@dataclass
class Bundle:
    bundle_id: str  # "u0003.r2": the third group of launches that share one, its second repetition
    launches: list[Launch]  # its blocks, in the order they run


def _nic(x: Launch) -> str | None:
    return next((x.engine_args[i + 1] for i, a in enumerate(x.engine_args[:-1]) if a == "--nic"), None)


def _writable(x: Launch) -> bool:
    """Whether a launch's arguments fit a plan's line (no tab or line break in them)."""
    return not any(c in a for a in x.engine_args for c in "\t\n\r")


def sharing_key(x: Launch, nodes: int | None, ranks_per_node: int | None) -> tuple:
    """What launches must have in common to share one engine launch, repetition aside; an isolated launch (or one
    whose arguments cannot be written into a plan) shares with its own repetitions only."""
    key = (x.library, tuple(sorted(x.env.items())), x.ranks, x.bind, placement(x, nodes, ranks_per_node), _nic(x))
    return key + ((x.benchmark, tuple(x.engine_args)) if x.isolate or not _writable(x) else ())


def bundles(launches: list[Launch], seed: int | None, nodes: int | None = None, ranks_per_node: int | None = None,
            prefix: str = "u") -> list[Bundle]:
    """The launches as bundles, in the order they run: repetition by repetition, the groups in an order of their own
    each time and each bundle's blocks shuffled (random.Random(seed): the same seed, the same order). ``prefix``
    starts each bundle's name (its plan and status files in raw/ take it)."""
    rng = random.Random(seed)
    groups: dict[tuple, dict[int, list[Launch]]] = {}
    for x in launches:
        groups.setdefault(sharing_key(x, nodes, ranks_per_node), {}).setdefault(x.repetition, []).append(x)
    numbered = [(f"{prefix}{n:04d}", by_rep) for n, by_rep in enumerate(groups.values(), 1)]
    out = []
    for rep in sorted({x.repetition for x in launches}):
        order = [(name, by_rep[rep]) for name, by_rep in numbered if rep in by_rep]
        rng.shuffle(order)
        for name, blocks in order:
            blocks = list(blocks)
            rng.shuffle(blocks)
            out.append(Bundle(f"{name}.r{rep}", blocks))
    return out


def run_bundles(outdir: Path, launches: list[Launch], confs: dict[str, Configuration], store: Store,
                campaign_name: str, seed: int | None, hostfile: str | None = None, progress: bool = True, stream=None,
                nodes: int | None = None, ranks_per_node: int | None = None, stop_library_after: int = 3,
                lock: locks.ResultsLock | None = None, named: str | None = None) -> dict[str, int]:
    """Run the launches not finished yet as bundles (execute.run_launches says what the arguments are); returns how
    many blocks ended with each status. ``named``: the launches are one bundle, made by the caller (bundles()),
    run in their order under that name."""
    raw, logs = outdir / "raw", outdir / "logs"
    raw.mkdir(exist_ok=True)
    logs.mkdir(exist_ok=True)
    recover_ended_blocks(outdir, store, launches, confs, campaign_name)
    finished = store.finished_launches()
    todo = [x for x in launches if x.launch_id not in finished]
    bar = Progress(len(todo), stream) if progress else None
    counts: dict[str, int] = {}
    failures_in_a_row: dict[str, int] = {}
    hostfiles: dict[str, str] = {}
    for bundle in [Bundle(named, todo)] if named else bundles(todo, seed, nodes, ranks_per_node):
        left, attempt = bundle.launches, 1
        while left:
            library, conf = left[0].library, confs[left[0].library]
            if stop_library_after and failures_in_a_row.get(library, 0) >= stop_library_after:
                for x in left:
                    record_skipped_launch(store, x, campaign_name, stop_library_after, bar)
                    counts["skipped"] = counts.get("skipped", 0) + 1
                break
            if conf.description is not None and conf.description.plan:
                name = bundle.bundle_id + (f".{attempt}" if attempt > 1 else "")
                ended = _run_bundle(outdir, name, left, conf, store, campaign_name, hostfile, hostfiles, nodes,
                                    ranks_per_node, lock, bar)
            else:  # an engine without plans: its launches one by one, as without bundles
                ended = [(left[0], run_launch(outdir, left[0], conf, store, campaign_name, hostfile, hostfiles, nodes,
                                              ranks_per_node, lock, bar), 0.0)]
            for x, status, _wall in ended:
                failures_in_a_row[library] = failures_in_a_row.get(library, 0) + 1 \
                    if status in ("failed", "timeout", identity.WRONG_LIBRARY) else 0
                counts[status] = counts.get(status, 0) + 1
            left, attempt = left[len(ended):], attempt + 1
    if bar:
        bar.close()
    return counts


def recover_ended_blocks(outdir: Path, store: Store, launches: list[Launch], confs: dict[str, Configuration],
                         campaign_name: str) -> None:
    """Blocks a gmb killed inside their bundle left "running" although their launch had said they ended (its status
    file): stored from their record files, which are whole, instead of being measured again."""
    planned = {x.launch_id: x for x in launches}
    for row in store.rows("SELECT * FROM launches WHERE status = 'running'"):
        x, argv = planned.get(row["launch_id"]), json.loads(row["argv"] or "[]")
        if x is None or x.library not in confs or "--status" not in argv[:-1] or not row["raw_file"]:
            continue
        said = {s.get("block"): s for s in status_lines(Path(argv[argv.index("--status") + 1]))}
        line = said.get(x.launch_id)
        if line is None:
            continue
        status = EXIT_STATUS.get(line.get("exit_status"), "failed")
        reason = str(line.get("reason") or "")
        kept = {k: row[k] for k in ("argv", "started_utc", "raw_file", "log_file")}
        store.forget_launch(x.launch_id)
        finish_launch(store, {**launch_row(x, campaign_name), **kept}, outdir / row["raw_file"],
                      outdir / row["log_file"], confs[x.library].library, x, status, reason, line.get("exit_status"),
                      float(line.get("wall_s") or 0.0))


def plan_text(blocks: list[Launch], outs: dict[str, Path]) -> str:
    """The plan file of a bundle's launch: one block a line (ID, deadline, arguments with its --out)."""
    lines = ["# gmb bundle: one block a line: launch id, deadline in seconds, the engine's arguments (tab-separated)"]
    for x in blocks:
        args = [*x.engine_args, "--out", str(outs[x.launch_id]), "--format", "json"]
        lines.append("\t".join([x.launch_id, f"{x.timeout_s * DEADLINE_SHARE:g}", *args]))
    return "\n".join(lines) + "\n"


def _run_bundle(outdir: Path, name: str, blocks: list[Launch], conf: Configuration, store: Store, campaign_name: str,
                hostfile: str | None, hostfiles: dict[str, str], nodes: int | None, ranks_per_node: int | None,
                lock: locks.ResultsLock | None, bar: Progress | None) -> list[tuple[Launch, str, float]]:
    """One launch of a bundle's blocks (the first of them on): returns (block, status, wall seconds) of each block it
    accounted for, in order, at least the first. Stopped (gmb told to stop): the blocks that ended are stored, the
    others marked interrupted, and the exception goes on."""
    raw, logs = outdir / "raw", outdir / "logs"
    plan_path, status_path, log = raw / f"{name}.plan", raw / f"{name}.status.jsonl", logs / f"{name}.log"
    outs = {x.launch_id: raw / f"{x.launch_id}.jsonl" for x in blocks}
    for path in (plan_path, status_path, log, *outs.values()):
        set_aside(path)
    plan_path.write_text(plan_text(blocks, outs))
    first, lib = blocks[0], conf.library
    launcher = conf.launcher
    if hostfile and launcher.name not in hostfiles:
        hostfiles[launcher.name] = launcher_hostfile(outdir, hostfile, launcher)
    spec = launchers.LaunchSpec(ranks=first.ranks, program=[conf.engine, "plan", str(plan_path), "--status",
                                                            str(status_path)],
                                hostfile=hostfiles.get(launcher.name), bind=first.bind, env=launch_environment(first),
                                **dict(zip(("nodes", "ranks_per_node"), placement(first, nodes, ranks_per_node))))
    argv = launcher.argv(lib, spec)
    env = {**launcher.environment(lib, spec), "GMB_ANNOUNCE_FINISH": "1"}
    started_utc = datetime.now(timezone.utc).isoformat()
    rows = {x.launch_id: dict(launch_row(x, campaign_name), argv=argv, started_utc=started_utc,
                              raw_file=str(outs[x.launch_id].relative_to(outdir)), log_file=str(log.relative_to(outdir)))
            for x in blocks}
    if lock:
        lock.keep()
    for x in blocks:
        store.forget_launch(x.launch_id)
        store.record_launch(**rows[x.launch_id], status="running")
    if bar:
        bar.update(current=f"{name} ({len(blocks)} blocks)")
    monitor = LoadMonitor(ranks_on_this_host(first, *placement(first, nodes, ranks_per_node)), marker=str(status_path))
    monitor.start()

    def started(pid: int):
        monitor.watch(pid)
        if lock:
            lock.running(name, session=pid, record_file=str(status_path.resolve()))

    t0 = time.monotonic()
    try:
        outcome, rc = _execute_plan(argv, env, log, blocks, status_path, started)
    except Stopped as exc:
        ended = _store_ended(store, rows, blocks, outs, log, lib, status_lines(status_path), "", None, monitor.stop(),
                             bar)
        for x in blocks[len(ended):]:
            store.record_launch(**rows[x.launch_id], status="interrupted", reason=f"gmb was stopped ({exc})")
        raise
    finally:
        if lock:
            lock.running(None)
    load = monitor.stop()
    said = status_lines(status_path)
    ended = _store_ended(store, rows, blocks, outs, log, lib, said, outcome, rc, load, bar)
    if len(ended) < len(blocks):  # the block running when the launch ended: killed at its timeout, or died with it
        x = blocks[len(ended)]
        since = t0 + sum(w for _x, _s, w in ended)
        wall = time.monotonic() - since
        if outcome == "timeout":
            status, reason = "timeout", f"killed after {x.timeout_s:g} s in this block (timeout)"
        else:
            status, reason = "failed", last_error(log) or f"the launch ended (exit status {rc}) in this block"
        status = finish_launch(store, rows[x.launch_id], outs[x.launch_id], log, lib, x, status, reason, rc, wall,
                               load, bar)
        ended.append((x, status, wall))
    return ended


def status_lines(path: Path) -> list[dict]:
    """The blocks a plan's launch said had ended, in order (a line cut short by the launch's end is not one)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return []
    out = []
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n"):
            break
        try:
            out.append(json.loads(line))
        except ValueError:
            break
    return out


def _store_ended(store: Store, rows: dict, blocks: list[Launch], outs: dict[str, Path], log: Path, lib, said: list,
                 outcome: str, rc: int | None, load: dict, bar: Progress | None) -> list[tuple[Launch, str, float]]:
    """Store the blocks the status file says ended (each with the status its own launch would have had; all of them
    "finalize-hang" when the launch then hung in MPI_Finalize)."""
    ended = []
    for x, line in zip(blocks, said):
        if line.get("block") != x.launch_id:
            break  # not this plan's order: what follows cannot be attributed
        status = EXIT_STATUS.get(line.get("exit_status"), "failed")
        reason = str(line.get("reason") or "")
        if status != "ok" and not reason:
            reason = f"exit status {line.get('exit_status')}"
        if outcome == "finalize-hang":
            status, reason = "finalize-hang", ("every block measured to its end, then the launch did not return from "
                                               f"MPI_Finalize within {FINALIZE_GRACE_S:g} s: ended by gmb; a fault of "
                                               "the library or its launcher")
        wall = float(line.get("wall_s") or 0.0)
        status = finish_launch(store, rows[x.launch_id], outs[x.launch_id], log, lib, x, status, reason,
                               line.get("exit_status"), wall, load, bar)
        ended.append((x, status, wall))
    return ended


def _execute_plan(argv, env, log: Path, blocks: list[Launch], status_path: Path, started) -> tuple[str, int | None]:
    """Run a bundle's launch in a session of its own and watch it: each block may take its own timeout_s from the
    end of the one before (the status file says when that was). Returns (outcome, exit status): "exited", "timeout"
    (a block ran past its timeout: the launch was ended), "finalize-hang", or "cannot-start"."""
    with open(log, "x") as lf:
        proc, _cannot = start_launch(argv, env, lf)
        if proc is None:
            return "cannot-start", None
        try:
            started(proc.pid)
            seen, block_start, finished_at = 0, time.monotonic(), None
            while True:
                try:
                    rc = proc.wait(timeout=0.5)
                    break
                except subprocess.TimeoutExpired:
                    pass
                now = time.monotonic()
                ended = len(status_lines(status_path))
                if ended != seen:
                    seen, block_start = ended, now
                if seen < len(blocks) and now - block_start > blocks[seen].timeout_s:
                    stop_launch(proc)
                    lf.write(f"\ngmb: block {blocks[seen].launch_id} ran past {blocks[seen].timeout_s:g} s: launch "
                             f"ended (timeout)\n")
                    return "timeout", None
                if finished_at is None and _FINISHED.search(_tail(log)):
                    finished_at = now
                if finished_at is not None and now - finished_at > FINALIZE_GRACE_S:
                    stop_launch(proc)
                    lf.write(f"\ngmb: MPI_Finalize did not return within {FINALIZE_GRACE_S:g} s: launch ended\n")
                    return "finalize-hang", None
        except Stopped as exc:
            stop_launch(proc)
            lf.write(f"\ngmb: stopped ({exc}): launch ended\n")
            raise
        stop_what_outlived(proc.pid, lf)
    return "exited", rc
