# SPDX-License-Identifier: BSD-3-Clause
"""An application's communication profile: the application run with the engine's profiler preloaded
(libgmb-profile.so, src/profile/), each rank's file merged into one profile.json with the path class of every row.

A profile directory holds ``profile.json`` (the merged profile), ``ranks/rank-N.json`` (what each rank wrote),
``output.log`` (the application's output) and ``command.txt``; it is made new and never written over."""

from __future__ import annotations

import functools
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..campaign.results_dir import new_results_dir
from ..engine.configurations import Configuration
from ..machine import launchers
from ..machine.load import LaunchCpus, LoadMonitor
from ..machine.topology import Topology
from ..outputs import write_new
from ..results.profile import RANK_SCHEMA, RECEIVES, SCHEMA, SENDS, ProfileError
from ..run.execute import stop_launch

PROFILER = "libgmb-profile.so"
# Where a launcher's own arguments end and the program starts is the launcher's business; these are the launchers
# whose command line gmb extends with the arguments that hand the profiler to every rank.
LAUNCHER_NAMES = {"mpirun": "mpirun", "mpiexec": None, "orterun": "mpirun", "mpiexec.hydra": "mpiexec",
                  "mpiexec.openmpi": "mpirun", "mpirun.openmpi": "mpirun", "mpiexec.mpich": "mpiexec",
                  "mpirun.mpich": "mpiexec", "srun": "srun"}


def profiler_of(conf: Configuration) -> Path:
    """The profiler built with ``conf``'s engine: beside it (a build tree), or in the installation's lib/."""
    if conf.engine is None:
        raise ProfileError(f"{conf.name} has no engine, so no profiler: {conf.no_engine}")
    engine = Path(conf.engine)
    prefix = engine.parent.parent  # an installation: bin/gmb-bench, lib/ (lib64/, lib/<multiarch>/) libgmb-profile.so
    for candidate in [engine.parent / PROFILER, *sorted(prefix.glob(f"lib*/{PROFILER}")),
                      *sorted(prefix.glob(f"lib/*/{PROFILER}"))]:
        if candidate.is_file():
            return candidate
    raise ProfileError(f"the engine of {conf.name} ({engine}) has no profiler beside it ({PROFILER}: an engine built "
                       f"before gmb profiled applications): rebuild it with `gmb build --force --library {conf.name}`")


@functools.lru_cache(maxsize=None)  # a bare mpiexec is asked its version once
def _launcher_kind(word: str) -> str | None:
    """"mpirun", "mpiexec" or "srun" for a launcher's name, None for anything else; a bare mpiexec is Open MPI's
    where its --version says so, else Hydra's."""
    name = Path(word).name
    if name not in LAUNCHER_NAMES:
        return None
    kind = LAUNCHER_NAMES[name]
    if kind is None:
        exe = shutil.which(word)
        try:
            said = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=20).stdout if exe else ""
        except (OSError, subprocess.TimeoutExpired):
            said = ""
        kind = "mpirun" if "Open MPI" in said or "OpenRTE" in said else "mpiexec"
    return kind


def application_executable(argv: list[str]) -> Path | None:
    """The application's program in a launch command: the first word after the launcher's that names an executable
    ELF file (the launcher's own option values are not programs)."""
    for word in argv[1:] if _launcher_kind(argv[0]) else argv:
        found = shutil.which(word) if "/" not in word else (word if os.access(word, os.X_OK) else None)
        if found and Path(found).is_file():
            with open(found, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    return Path(found).resolve()
    return None


def _linked_mpi(path: Path) -> dict[str, str]:
    """The MPI libraries a program or library loads (ldd): soname -> resolved file."""
    try:
        out = subprocess.run(["ldd", str(path)], capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return {}
    found = {}
    for line in out.splitlines():
        name, _, where = line.strip().partition(" => ")
        if name.startswith(("libmpi.so", "libmpich.so", "libmpi_abi.so")):
            found[name] = where.split(" (")[0].strip()
    return found


def check_application(argv: list[str], profiler: Path, conf: Configuration) -> None:
    """ProfileError where the application's program links another MPI library (another soname) than the profiler:
    two MPI libraries in one process do not work."""
    exe = application_executable(argv)
    if exe is None:
        return  # a script or a wrapper: the ranks' profiles say what ran
    app, mine = _linked_mpi(exe), _linked_mpi(profiler)
    if app and mine and not set(app) & set(mine):
        raise ProfileError(f"{exe} links {', '.join(sorted(app))}, the profiler of {conf.name} "
                           f"{', '.join(sorted(mine))}: profile it with the MPI library it was built for "
                           f"(--library; `gmb libs` lists them)")


class RunMonitor(LoadMonitor):
    """The load beside one run of an application: its processes are those of the launcher's session and, as MPICH's
    Hydra starts the ranks under proxies of their own sessions, every process whose environment names the run's
    profile directory (GMB_PROFILE_DIR, which the launcher hands every rank)."""

    def __init__(self, rank_dir: Path, cpus: LaunchCpus | None = None, proc: Path = Path("/proc")):
        super().__init__(ranks_here=0, cpus=cpus, proc=proc)  # how many ranks ran here, the profile says
        self.environment_marker = f"GMB_PROFILE_DIR={rank_dir}".encode()

    def _launch_process(self, pid: str, session: int) -> bool:
        if super()._launch_process(pid, session):
            return True
        try:
            return self.environment_marker in (self.proc / pid / "environ").read_bytes().split(b"\0")
        except OSError:
            return False


@dataclass(frozen=True)
class AppRun:
    """One run of an application: its exit status, wall time (the whole command) and output."""
    argv: list[str]
    exit_status: int
    wall_s: float
    output: str


def with_profiler(argv: list[str], env: dict[str, str], profiler: Path, rank_dir: Path) -> tuple[list, dict]:
    """The command and environment that hand the profiler to every rank: a launcher that starts ranks with its own
    arguments (mpirun's -x, Hydra's -genv) gets them there, on every host, and the launcher itself runs without it;
    any other command (srun, which passes its environment on, or the program itself) gets them in its
    environment."""
    preload = " ".join(filter(None, [str(profiler), env.get("LD_PRELOAD", "")]))
    added = {"LD_PRELOAD": preload, "GMB_PROFILE_DIR": str(rank_dir)}
    kind = _launcher_kind(argv[0])
    if kind in ("mpirun", "mpiexec"):
        return [argv[0], *launchers.get(kind).setting_arguments(added), *argv[1:]], env
    return list(argv), {**env, **added}


def run_application(argv: list[str], env: dict[str, str], log: Path, echo: bool = True,
                    timeout: float | None = None, monitor: LoadMonitor | None = None) -> AppRun:
    """Run ``argv`` with its output into ``log`` (and to this terminal when ``echo``), timed. Past ``timeout``
    seconds its whole process group is killed (a launcher and its ranks) and the run ends with exit status 124,
    its output kept. A ``monitor`` samples the other work on this host while it runs (the caller stops it)."""
    t0 = time.monotonic()
    chunks: list[str] = []
    if monitor is not None:
        monitor.start()
    try:
        with open(log, "x") as out:
            proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    errors="replace", start_new_session=True)
            if monitor is not None:
                monitor.watch(proc.pid)  # its own session: the launcher and the ranks it starts here

            def copy():  # the output as it comes, while the main thread keeps the time
                for line in proc.stdout:
                    chunks.append(line)
                    if echo:
                        sys.stdout.write(line)
                    try:
                        out.write(line)
                        out.flush()
                    except ValueError:  # the log was closed: a process outside the group still writes
                        return

            reader = threading.Thread(target=copy, daemon=True)
            reader.start()
            try:
                rc = proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                stop_launch(proc)
                rc = 124
                chunks.append(f"\ngmb: stopped after {timeout:g} s (--timeout)\n")
            except BaseException:
                stop_launch(proc)
                raise
            reader.join(timeout=10)
    except FileNotFoundError:
        raise ProfileError(f"cannot run {argv[0]!r}: no such program") from None
    except PermissionError:
        raise ProfileError(f"cannot run {argv[0]!r}: not executable") from None
    return AppRun(argv, rc, time.monotonic() - t0, "".join(chunks))


def _read_rank(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ProfileError(f"{path}: not a rank profile ({exc})") from None
    if not isinstance(data, dict) or data.get("schema") != RANK_SCHEMA or not isinstance(data.get("rows"), list):
        raise ProfileError(f"{path}: not a rank profile (schema {RANK_SCHEMA} expected)")
    return data


def path_class(me: dict, peer: dict | None, row: dict, peer_memory: str, topo: Topology) -> str | None:
    """The path a point-to-point row's messages took, as gmb's records name it (src/portable/path.cpp): between
    hosts, host memory on one host, host <-> device, the same GPU, or the link between two GPUs."""
    if peer is None:
        return None
    if me["host"] != peer["host"]:
        return "inter-node"
    gpu = {"device", "managed"}
    mine, theirs = row["memory"] in gpu, peer_memory in gpu
    if not mine and not theirs:
        return "host"
    if mine != theirs:
        return "host-device"
    a = me["devices"].get(str(row["device"]), {}).get("pci_bus_id", "")
    b = next(iter(peer["devices"].values()), {}).get("pci_bus_id", "") if len(peer["devices"]) == 1 else ""
    if not a or not b:
        return "unknown"
    if _bus(a) == _bus(b):
        return "same-gpu"
    index = {_bus(g.pci_bus_id): g.index for g in topo.gpus}
    i, j = index.get(_bus(a)), index.get(_bus(b))
    return topo.link_class(i, j) if i is not None and j is not None else "unknown"


def _bus(pci_bus_id: str) -> str:
    """bus:device.function of a PCI address, whatever the width of its domain (CUDA 0000:, NVML 00000000:)."""
    return ":".join(pci_bus_id.lower().split(":")[-2:])


def _receives(row: dict) -> bool:
    """Whether the row's buffer received messages (MPI_Sendrecv_replace's buffer both sends and receives)."""
    return row["call"] in RECEIVES or row["call"] == "MPI_Sendrecv_replace"


def _peer_memories(rows_of: dict[int, list[dict]], rank: int, row: dict) -> list[tuple[str, float]]:
    """The memory kinds of the other side of a point-to-point row's messages, with the share of the row's messages
    each took: the peer's receiving rows from this rank (for a send) or sending rows to it (for a receive) at this
    size, of the row's tag where the rows name tags (any tag, or a profile without tags, matches every tag). A peer
    that used several kinds at one tag and size shares the row among them by its counts; the row's own kind where
    the peer's rows tell none."""
    other_side = _receives if row["call"] in SENDS else (lambda r: r["call"] in SENDS)
    other = [r for r in rows_of.get(row["peer"], []) if r["peer"] == rank and r["bin"] == row["bin"]
             and r["comm_size"] == 0 and other_side(r)]
    tag = row.get("tag", -1)
    same_tag = [r for r in other if tag < 0 or r.get("tag", -1) in (tag, -1)]
    counts: dict[str, int] = {}
    for r in same_tag or other:
        counts[r["memory"]] = counts.get(r["memory"], 0) + r["count"]
    total = sum(counts.values())
    if not total:
        return [(row["memory"], 1.0)]
    return [(kind, n / total) for kind, n in sorted(counts.items(), key=lambda kv: -kv[1])]


def _shares(row: dict, memories: list[tuple[str, float]]) -> list[tuple[str, dict]]:
    """The row as one row per peer memory kind: its count apportioned by the shares (largest remainder, so the
    counts add up), bytes and times in proportion to the count."""
    if len(memories) == 1:
        return [(memories[0][0], row)]
    exact = [share * row["count"] for _, share in memories]
    counts = [int(x) for x in exact]
    for i in sorted(range(len(exact)), key=lambda i: counts[i] - exact[i])[:row["count"] - sum(counts)]:
        counts[i] += 1
    out = []
    for (kind, _), n in zip(memories, counts):
        if n:
            f = n / row["count"]
            out.append((kind, {**row, "count": n, "bytes": round(row["bytes"] * f), "call_s": row["call_s"] * f,
                               "wait_s": row["wait_s"] * f, "waited": round(row.get("waited", 0) * f),
                               "shared_from": row["count"]}))
    return out


def merge(rank_dir: Path, topo: Topology) -> dict:
    """The ranks' profiles as one: every row with its rank, the peer's memory and the path class."""
    ranks = {}
    for f in sorted(rank_dir.glob("rank-*.json")):
        data = _read_rank(f)
        ranks[data["rank"]] = data
    if not ranks:
        return {}
    world = max(d["world_size"] for d in ranks.values())
    rows_of = {r: d["rows"] for r, d in ranks.items()}
    rows = []
    for r, d in sorted(ranks.items()):
        for whole in d["rows"]:
            point_to_point = whole["peer"] >= 0 and whole["comm_size"] == 0
            memories = _peer_memories(rows_of, r, whole) if point_to_point else [(whole["memory"], 1.0)]
            for peer_memory, row in _shares(whole, memories):
                rows.append({**row, "rank": r, "peer_memory": peer_memory,
                             "path": path_class(d, ranks.get(row["peer"]), row, peer_memory, topo)
                             if point_to_point else None})
    first = ranks[min(ranks)]
    return {"schema": SCHEMA, "ranks": world, "profiled_ranks": sorted(ranks),
            "missing_ranks": sorted(set(range(world)) - set(ranks)),
            "mpi_library": first["mpi_library"], "hosts": first["hosts"],
            "devices": {str(r): d["devices"] for r, d in ranks.items()},
            "cuda_loaded": any(d["cuda_loaded"] for d in ranks.values()),
            "mpi_wall_s": {str(r): d["wall_s"] for r, d in ranks.items()},
            "profiler_overhead_s": {str(r): d["profiler_overhead_s"] for r, d in ranks.items()},
            "rows": rows}


def profile_run(conf: Configuration, argv: list[str], outdir: Path, env: dict[str, str], topo: Topology,
                echo: bool = True, timeout: float | None = None) -> tuple[AppRun, dict]:
    """Run the application profiled into ``outdir`` (made new by the caller, who checked the application against
    the profiler: check_application); its run and merged profile (empty where no rank wrote one), which says how
    busy this host was beside it (``load``: machine/load.py, the ranks on this host as the profile names them)."""
    profiler = profiler_of(conf)
    rank_dir = outdir / "ranks"
    rank_dir.mkdir()
    cmd, run_env = with_profiler(argv, env, profiler, rank_dir)
    write_new(outdir / "command.txt", shlex.join(cmd) + "\n")
    monitor = RunMonitor(rank_dir)
    merged: dict = {}
    try:
        run = run_application(cmd, run_env, outdir / "output.log", echo=echo, timeout=timeout, monitor=monitor)
        merged = merge(rank_dir, topo)
    finally:
        monitor.ranks_here = (merged.get("hosts") or []).count(socket.gethostname())
        load = monitor.stop()
    return run, {**merged, "load": load} if merged else merged


def no_profile_reason(run: AppRun) -> str:
    return (f"no rank wrote a profile (the command exited with {run.exit_status}): the program never called "
            f"MPI_Init and MPI_Finalize through the profiler: not an MPI program, an MPI program linked statically, "
            f"or one that ended without MPI_Finalize")


def write_profile(outdir: Path, merged: dict, run: AppRun, conf: Configuration, argv: list[str]) -> Path:
    """profile.json: the merged profile, the command as given (``argv``) and as run (with the profiler's
    arguments), its exit status and wall time, and the library whose profiler recorded it."""
    data = {**merged, "created_utc": datetime.now(timezone.utc).isoformat(), "command": argv,
            "profiled_command": run.argv,
            "exit_status": run.exit_status, "wall_s": run.wall_s, "library": conf.name,
            "library_description": conf.library.describe()}
    return write_new(outdir / "profile.json", json.dumps(data, indent=1, allow_nan=False))


def new_profile_dir(base: str | Path, argv: list[str]) -> Path:
    exe = application_executable(argv)
    return new_results_dir(base, f"profile-{exe.name if exe else Path(argv[0]).name}")
