"""`gmb doctor`: what the machine has, what each MPI library can do, what is missing and how to fix it."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import build as build_mod
from . import launchers, mpilibs, topology


def diagnose(libs: list[mpilibs.MpiLibrary], run_engine_doctor: bool = True) -> dict:
    topo = topology.discover()
    report = {"topology": {"source": topo.source, "gpus": [g.__dict__ for g in topo.gpus],
                           "links": {f"{i}-{j}": v for (i, j), v in topo.links.items()},
                           "numa_nodes": topo.numa_nodes, "path_classes": topo.path_classes(),
                           "notes": topo.notes},
              "libraries": [], "missing": []}
    if not libs:
        report["missing"].append("No MPI library found. Install one (apt-get install openmpi-bin libopenmpi-dev, "
                                 "or mpich libmpich-dev), or `pip install mpich` into this venv, or declare one "
                                 "in ~/.config/gmb/libraries.toml.")
    for lib in libs:
        entry = lib.describe()
        if lib.cuda_aware is None and lib.transport == "mpi":  # a declared answer stands
            lib.cuda_aware = mpilibs.cuda_aware_static(lib)
        entry["cuda_aware_static"] = lib.cuda_aware
        if lib.cxx is None:
            report["missing"].append(f"{lib.name}: no mpicxx next to {lib.launcher_path}: install the development "
                                     f"package (libopenmpi-dev / libmpich-dev) to build the engine.")
        engine = build_mod.engine_path(lib)
        entry["engine"] = str(engine) if engine.exists() else None
        if not engine.exists():
            report["missing"].append(f"{lib.name}: engine not built: run `gmb build --library {lib.name}`.")
        elif run_engine_doctor and lib.transport == "mpi":  # an NCCL library's engine is its via library's
            entry["engine_doctor"] = engine_doctor(lib, engine)
            if entry["engine_doctor"].get("crashed"):
                report["missing"].append(f"{lib.name}: not aware: {entry['engine_doctor']['gpu_awareness']['summary']}"
                                         f"; device buffers will only be measured with staged strategies unless "
                                         f"its settings change (e.g. UCX_MEMTYPE_CACHE=n for pml ucx).")
        if topo.gpus and lib.cuda_aware is False and lib.transport == "mpi":
            report["missing"].append(f"{lib.name}: not CUDA-aware (ompi_info says mpi_built_with_cuda_support=false);"
                                     f" device buffers will only be measured with staged strategies.")
        report["libraries"].append(entry)
    if not topo.gpus:
        report["missing"].append("No GPU visible: only host-memory benchmarks can run. On a GPU machine install "
                                 "the NVIDIA driver (nvidia-smi) and optionally `pip install nvidia-ml-py`.")
    if shutil.which("cmake") is None:
        report["missing"].append("cmake not found: install cmake (apt-get install cmake) to build engines.")
    return report


def engine_doctor(lib: mpilibs.MpiLibrary, engine: Path, timeout: float = 120) -> dict:
    """Run `gmb-bench doctor` under the library's launcher with 2 ranks; returns its records or the error. A launch
    that a signal ended (the launcher's exit 128+N, or -N: e.g. 139 when pml ucx with UCX defaults crashes on device
    memory) is a verdict, not a failure of gmb doctor: "not aware", the awareness proof crashed (signal N), with the
    first line of the engine's FATAL message when there is one."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "doctor.jsonl"
        launcher = launchers.get(lib.launcher)
        spec = launchers.LaunchSpec(ranks=2, program=[str(engine), "doctor", "--out", str(out)])
        try:
            p = subprocess.run(launcher.argv(lib, spec), env=launcher.environment(lib, spec), capture_output=True,
                               text=True, errors="replace", timeout=timeout)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return {"error": str(exc)}
        recs = []
        if out.exists():
            for ln in out.read_text(errors="replace").splitlines():
                try:
                    rec = json.loads(ln)
                except ValueError:
                    continue  # a line cut short by the crash
                if isinstance(rec, dict):
                    recs.append(rec)
        signal = _signal_of(p.returncode)
        if signal is not None:
            fatal = _fatal_line((p.stderr or "") + "\n" + (p.stdout or ""))
            summary = f"the awareness proof crashed (signal {signal})" + (f": {fatal}" if fatal else "")
            return {"exit": p.returncode, "crashed": True, "signal": signal,
                    "gpu_awareness": {"verdict": "not aware", "summary": summary},
                    "results": [r for r in recs if r.get("type") == "result"]}
        if not recs:
            return {"error": f"exit {p.returncode}: {(p.stderr or p.stdout).strip()[-300:]}"}
        ctx = next((r for r in recs if r.get("type") == "context"), {})
        return {"exit": p.returncode, "gpu_awareness": (ctx.get("mpi") or {}).get("gpu_awareness"),
                "results": [r for r in recs if r.get("type") == "result"]}


def _signal_of(returncode: int) -> int | None:
    """The signal that ended a launch: -N from subprocess, 128+N from a launcher or shell (mpirun: 139 = SIGSEGV)."""
    if returncode < 0:
        return -returncode
    if 128 < returncode < 128 + 65:
        return returncode - 128
    return None


def _fatal_line(text: str) -> str:
    for ln in text.splitlines():
        if "FATAL" in ln:
            return ln.strip()[:300]
    return ""


def format_text(rep: dict) -> str:
    t = rep["topology"]
    lines = ["== GPUs and links (source: %s)" % t["source"]]
    if t["gpus"]:
        for g in t["gpus"]:
            lines.append(f"  GPU{g['index']}: {g['name']} {g['pci_bus_id']}")
        n = len(t["gpus"])
        lines.append("        " + " ".join(f"GPU{j:<3}" for j in range(n)))
        for i in range(n):
            lines.append(f"  GPU{i:<3} " + " ".join(f"{t['links'].get(f'{i}-{j}', 'X'):<6}" for j in range(n)))
    else:
        lines.append("  no GPU")
    for note in t["notes"]:
        lines.append(f"  note: {note}")
    lines.append("== NUMA")
    for node, cpus in sorted(t["numa_nodes"].items()):
        lines.append(f"  node{node}: cpus {cpus}")
    lines.append("  path classes present: " + ", ".join(t["path_classes"]))
    lines.append("== MPI libraries")
    for lib in rep["libraries"]:
        aware = {True: "CUDA-aware (static)", False: "not CUDA-aware", None: "CUDA awareness unknown"}[
            lib["cuda_aware_static"]] if lib.get("transport", "mpi") == "mpi" else f"NCCL transport via {lib['via']}"
        lines.append(f"  {lib['name']:<22} {lib['family']} {lib['version']} prefix {lib['prefix']} "
                     f"launcher {lib['launcher']} ({lib['launcher_path']}) [{lib['source']}] {aware}")
        if lib.get("engine_doctor"):
            ed = lib["engine_doctor"]
            aw = ed.get("gpu_awareness")
            if isinstance(aw, dict) and aw.get("verdict"):
                text = aw["verdict"] + (f": {aw['summary']}" if aw.get("summary") else "")
            else:
                text = aw or ed.get("error")
            lines.append(f"      engine doctor: {text}")
    lines.append("== Missing / to fix")
    lines += [f"  - {m}" for m in rep["missing"]] or ["  nothing"]
    return "\n".join(lines)
